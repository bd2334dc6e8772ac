//! An algorithm's timers, named in one table ([`timers!`](crate::timers)):
//! their ids, what each waits for in words, and a compile-time check that
//! none takes a slot of the failure detector's.
//!
//! A node has [`TIMER_SLOTS`] timers; an
//! algorithm names its own `0..`[`ALGORITHM_TIMERS`], and the slots from
//! there up are the heartbeat failure detector's
//! ([`detector`](crate::algo::detector) wraps the kept leaderships that
//! need one, bully, ZooKeeper-style and the repaired ring, and its clock
//! would be silently replaced by an algorithm's timer on the same id; an
//! algorithm that never runs under it says so with `without detector;`).

use super::TimerId;

/// Timers a node may have: ids `0..TIMER_SLOTS`, an algorithm's own below
/// [`ALGORITHM_TIMERS`] and the failure detector's above. Setting a timer
/// replaces the pending one of the same id; the node shell refuses an id
/// beyond the slots ([`Misstep::NoSuchTimer`](crate::shell::Misstep::NoSuchTimer)).
pub const TIMER_SLOTS: usize = 8;

/// Timer ids an algorithm may use: `0..ALGORITHM_TIMERS`. The slots above
/// are the failure detector's
/// ([`RESERVED_TIMER`](crate::algo::detector::RESERVED_TIMER) and
/// [`HEARTBEAT_TIMER`](crate::algo::detector::HEARTBEAT_TIMER)).
pub const ALGORITHM_TIMERS: TimerId = 6;

/// One row of a timer table: `count` timers from `first` (one, or a run of
/// them that a node cycles through), and what they wait for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimerRow {
    /// The first id.
    pub first: TimerId,
    /// How many ids from `first` (at least one).
    pub count: TimerId,
    /// What the timers wait for, in a word or two ("answer", "renewal").
    pub name: &'static str,
}

/// An algorithm's timer table, as [`timers!`](crate::timers) declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timers(pub &'static [TimerRow]);

impl Timers {
    /// No timers (a one-shot algorithm).
    pub const NONE: Timers = Timers(&[]);

    /// What timer `timer` waits for, in words; `None` for an id the table
    /// does not name (for [`Algorithm::timer_name`](super::Algorithm::timer_name)).
    pub const fn name(self, timer: TimerId) -> Option<&'static str> {
        let mut i = 0;
        while i < self.0.len() {
            let row = self.0[i];
            if timer >= row.first && timer - row.first < row.count {
                return Some(row.name);
            }
            i += 1;
        }
        None
    }

    /// Panics unless every row has a timer, stays below `limit` and
    /// overlaps no other row. Evaluated in a `const` item by
    /// [`timers!`](crate::timers), so a table that breaks it does not
    /// compile. The limit is [`ALGORITHM_TIMERS`] for an algorithm the
    /// failure detector may wrap, or all of a node's
    /// [`TIMER_SLOTS`] for one that never runs
    /// under it (`timers! { without detector; .. }`).
    pub const fn check(self, limit: TimerId) {
        let mut i = 0;
        while i < self.0.len() {
            let row = self.0[i];
            assert!(row.count > 0, "a timer row names at least one timer");
            assert!(
                row.first < limit && row.count <= limit - row.first,
                "a timer takes a slot of the failure detector's, or one beyond the node's"
            );
            let mut j = 0;
            while j < i {
                let seen = self.0[j];
                assert!(
                    row.first >= seen.first + seen.count || seen.first >= row.first + row.count,
                    "two timer rows share an id"
                );
                j += 1;
            }
            i += 1;
        }
    }
}

/// Declares an algorithm's timers from one table: a `pub const` per timer
/// (its [`TimerId`]), `TIMERS` (the [`Timers`] table, whose
/// [`Timers::name`] answers
/// [`Algorithm::timer_name`](crate::protocol::Algorithm::timer_name)), and a
/// compile-time [`Timers::check`] that no timer takes a slot of the failure
/// detector's. A row `NAME = id => "words";` is one timer; `NAME = id, count
/// => "words";` is a run of `count` timers from `id`, which the node cycles
/// through. An algorithm that never runs under the detector (it sends its
/// own heartbeats, as Raft's `AppendEntries`) opens its table with
/// `without detector;` and may use every one of a node's
/// [`TIMER_SLOTS`].
///
/// ```
/// ringleader_core::timers! {
///     /// Timer: the answer to an election is late.
///     ANSWER_TIMER = 0 => "answer";
///     /// Timers: the deadlines of the last three rounds.
///     DEADLINE_TIMER = 3, 3 => "round deadline";
/// }
/// assert_eq!((ANSWER_TIMER, DEADLINE_TIMER), (0, 3));
/// assert_eq!(TIMERS.name(5), Some("round deadline"));
/// assert_eq!(TIMERS.name(1), None);
/// ```
///
/// A table that takes the failure detector's slot 6 does not compile (the
/// example above with a third row):
///
/// ```compile_fail
/// ringleader_core::timers! {
///     /// Timer: the answer to an election is late.
///     ANSWER_TIMER = 0 => "answer";
///     /// Timers: the deadlines of the last three rounds.
///     DEADLINE_TIMER = 3, 3 => "round deadline";
///     /// Timer: on the detector's reserved slot.
///     CLASH_TIMER = 6 => "clash";
/// }
/// ```
///
/// Nor does a run that reaches into the detector's slots, or two rows that
/// share an id:
///
/// ```compile_fail
/// ringleader_core::timers! {
///     /// Timers: four rounds from 3, the last two on the detector's slots.
///     DEADLINE_TIMER = 3, 4 => "round deadline";
/// }
/// ```
///
/// ```compile_fail
/// ringleader_core::timers! {
///     /// Timer: the answer to an election is late.
///     ANSWER_TIMER = 1 => "answer";
///     /// Timers: two rounds from 0, the second on the answer's id.
///     DEADLINE_TIMER = 0, 2 => "round deadline";
/// }
/// ```
///
/// The same run is fine in a table `without detector` (all eight slots), but
/// not one beyond the node's slots:
///
/// ```
/// ringleader_core::timers! {
///     without detector;
///     /// Timers: four rounds from 3.
///     DEADLINE_TIMER = 4, 4 => "round deadline";
/// }
/// assert_eq!(TIMERS.name(7), Some("round deadline"));
/// ```
///
/// ```compile_fail
/// ringleader_core::timers! {
///     without detector;
///     /// Timers: five rounds from 4, the last beyond the node's eight slots.
///     DEADLINE_TIMER = 4, 5 => "round deadline";
/// }
/// ```
#[macro_export]
macro_rules! timers {
    (without detector; $($rows:tt)*) => {
        $crate::timers!(@table ($crate::protocol::TIMER_SLOTS as $crate::protocol::TimerId) $($rows)*);
    };
    (@table ($limit:expr) $(
        $(#[$meta:meta])*
        $name:ident = $first:literal $(, $count:expr)? => $words:literal;
    )*) => {
        $(
            $(#[$meta])*
            pub const $name: $crate::protocol::TimerId = $first;
        )*
        /// This algorithm's timers: their ids and what each waits for.
        pub const TIMERS: $crate::protocol::Timers = $crate::protocol::Timers(&[$(
            $crate::protocol::TimerRow {
                first: $name,
                count: $crate::timers!(@count $($count)?),
                name: $words,
            },
        )*]);
        const _: () = TIMERS.check($limit);
    };
    (@count) => { 1 };
    (@count $count:expr) => { $count as $crate::protocol::TimerId };
    ($($rows:tt)*) => {
        $crate::timers!(@table ($crate::protocol::ALGORITHM_TIMERS) $($rows)*);
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table names each of its ids, a run every id of it, and nothing
    /// else; a table within the algorithm's slots passes the check.
    #[test]
    fn names_the_ids_of_each_row() {
        const T: Timers = Timers(&[
            TimerRow { first: 0, count: 1, name: "election" },
            TimerRow { first: 2, count: 3, name: "round" },
        ]);
        T.check(ALGORITHM_TIMERS);
        let names: Vec<_> = (0..8).map(|t| T.name(t)).collect();
        assert_eq!(names, [Some("election"), None, Some("round"), Some("round"), Some("round"), None, None, None]);
        assert_eq!(Timers::NONE.name(0), None);
    }

    /// A row on the failure detector's slot 6 is refused (at compile time
    /// in a `timers!` table; here the same check run at run time).
    #[test]
    #[should_panic(expected = "failure detector")]
    fn refuses_the_detectors_slots() {
        Timers(&[TimerRow { first: ALGORITHM_TIMERS, count: 1, name: "clash" }]).check(ALGORITHM_TIMERS);
    }

    /// Two rows that share an id are refused.
    #[test]
    #[should_panic(expected = "share an id")]
    fn refuses_overlapping_rows() {
        Timers(&[TimerRow { first: 0, count: 3, name: "a" }, TimerRow { first: 2, count: 1, name: "b" }])
            .check(ALGORITHM_TIMERS);
    }
}
