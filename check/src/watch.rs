//! # Properties of schedules, not of states
//!
//! The checker's properties ([`crate::KEPT_PROPERTIES`]) read one state at a
//! time. Some questions are about what a schedule did: was a leader whom
//! every node followed deposed after a partition healed? Did two nodes
//! believe they lead for longer than 200 ms? [`watch`] explores the same
//! model breadth-first, carrying beside each state a small value of the
//! caller's, a *watch*: an automaton that reads the schedule move by move
//! (the steps each move took and the state it reached) and says whether to
//! go on, that this schedule can no longer break the property (it is then
//! explored no further), or that it breaks it. The first broken schedule
//! found is a shortest one in moves, as with [`crate::check`], rebuilt step
//! by step as a [`Counterexample`], which
//! `ringleader_core::schedule::replay` replays.
//!
//! A state is told apart with its watch and with the ticks its partition has
//! left to heal, not with the clock since the last fault (only the
//! convergence property reads it); there is no subsumption and no
//! depth-first search. Of [`Limits`] it reads `fifo`, `reduce`,
//! `max_states`, `max_depth` and `timeout`.
//!
//! ```
//! use ringleader_check::{Election, Faults, Limits, Verdict, watch};
//! use ringleader_core::algo::{catalogue, detector::DetectorConfig};
//! use ringleader_core::topology::Topology;
//! let spec = catalogue::find("bully").unwrap();
//! let topology = Topology::build(spec.default_topology(), 3, 7).unwrap();
//! let e = Election::kept(spec, topology, vec![1, 2, 3], DetectorConfig::LOOPBACK, Faults::NONE);
//! // "Nobody leads term 2": broken by the first schedule in which someone does.
//! let w = watch(e, Limits { fifo: false, ..Limits::default() }, "nobody leads term 2", (), |_, _, s| {
//!     let term_2 = s.observation().led.iter().any(|&(term, _)| term == 2);
//!     if term_2 { Verdict::Broken } else { Verdict::Go(()) }
//! });
//! assert!(w.holds(), "without faults 3 leads term 1 for good");
//! ```

use std::collections::VecDeque;
use std::hash::{BuildHasher, Hash};
use std::time::{Duration, Instant};

use crate::{Counterexample, Election, ElectionModel, Limits, Replay, Seen, Step, System, schedule};

/// What a watch makes of a schedule so far ([`watch`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict<W> {
    /// Go on, the watch now in this state.
    Go(W),
    /// This schedule can no longer break the property: explore no further.
    Clear,
    /// The property is broken here.
    Broken,
}

/// What a [`watch`] found.
#[derive(Clone, Debug)]
pub struct Watched {
    /// Distinct states (with their watch) reached.
    pub states: usize,
    /// The longest schedule explored, in moves.
    pub depth: usize,
    /// No limit cut the search short: every state was explored, or the
    /// search stopped at the first broken schedule.
    pub complete: bool,
    /// The limit that cut it short: "states", "depth" or "time".
    pub limit: Option<&'static str>,
    /// The first schedule that breaks the property (a shortest, in moves).
    pub counterexample: Option<Counterexample>,
    /// How many moves that schedule takes.
    pub moves: usize,
    /// How long the search took.
    pub elapsed: Duration,
}

impl Watched {
    /// No schedule breaks the property, and every state was explored.
    pub fn holds(&self) -> bool {
        self.complete && self.counterexample.is_none()
    }
}

/// Explore `election` breadth-first within `limits`, carrying a watch from
/// `start`: `see(watch, steps, state)` judges the initial state (no steps),
/// then each move from the watch before it, the steps the move took and the
/// state it reached. Stops at the first state judged [`Verdict::Broken`],
/// whose schedule is reported as breaking `property`.
pub fn watch<W: Clone + Eq + Hash>(
    election: Election,
    limits: Limits,
    property: &'static str,
    start: W,
    mut see: impl FnMut(&W, &[Step], &System) -> Verdict<W>,
) -> Watched {
    let started = Instant::now();
    let model = ElectionModel::new(election, limits.fifo).with_reduction(limits.reduce);
    let hasher = foldhash::quality::FixedState::with_seed(0x3a7c_4e11);
    let key = |s: &System, w: &W| hasher.hash_one((s, s.timing().1, w));
    let mut out = Watched {
        states: 1,
        depth: 0,
        complete: true,
        limit: None,
        counterexample: None,
        moves: 0,
        elapsed: Duration::ZERO,
    };
    let init = model.initial();
    let first = match see(&start, &[], &init) {
        Verdict::Go(w) => w,
        Verdict::Clear => {
            out.elapsed = started.elapsed();
            return out;
        }
        Verdict::Broken => {
            out.counterexample = Some(model.replay(property, &[]));
            out.elapsed = started.elapsed();
            return out;
        }
    };
    let mut seen = Seen::new();
    seen.insert(key(&init, &first), 0, false);
    // Each state queued, by number: its parent's number and the index of the move that led to it.
    let mut log: Vec<(u32, u32)> = vec![(u32::MAX, u32::MAX)];
    let mut queue = VecDeque::from([(init, first, 0u32, 0usize)]);
    let mut successors = Vec::new();
    while let Some((s, w, id, d)) = queue.pop_front() {
        out.depth = out.depth.max(d);
        let limited = [
            (limits.max_states > 0 && seen.len() >= limits.max_states, "states"),
            (limits.max_depth > 0 && d >= limits.max_depth, "depth"),
            (limits.timeout.is_some_and(|t| started.elapsed() >= t), "time"),
        ]
        .into_iter()
        .find_map(|(hit, what)| hit.then_some(what));
        if let Some(what) = limited {
            out.complete = false;
            out.limit.get_or_insert(what);
            if what == "depth" {
                continue;
            }
            break;
        }
        model.successors(&s, &mut successors);
        for (i, (mv, next)) in successors.drain(..).enumerate() {
            let w = match see(&w, &model.expand(&s, mv), &next) {
                Verdict::Go(w) => w,
                Verdict::Clear => continue,
                Verdict::Broken => {
                    let mut indices = schedule(&log, id);
                    indices.push(i as u32);
                    out.moves = indices.len();
                    out.counterexample = Some(model.replay(property, &indices));
                    out.states = seen.len();
                    out.elapsed = started.elapsed();
                    return out;
                }
            };
            if seen.insert(key(&next, &w), 0, false) {
                queue.push_back((next, w, log.len() as u32, d + 1));
                log.push((id, i as u32));
            }
        }
    }
    out.states = seen.len();
    out.elapsed = started.elapsed();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Faults, check};
    use ringleader_core::algo::detector::DetectorConfig;
    use ringleader_core::topology::Topology;

    fn bully(faults: Faults) -> Election {
        let spec = ringleader_core::algo::catalogue::find("bully").unwrap();
        let topology = Topology::build(spec.default_topology(), 3, 7).unwrap();
        let e = Election::kept(spec, topology, vec![1, 2, 3], DetectorConfig::LOOPBACK, faults);
        Election { delay_ms: 10, ..e }
    }

    /// "At most one leader per term" as a watch: two (term, leader) pairs of one term among those
    /// announced. On kept bully with a crash and a lost message (10 ms messages) it is broken by a
    /// schedule as long as the checker's own shortest, ending in the same two leaders of term 2; no
    /// schedule of one move fewer breaks it (the search to that depth holds where it went), and
    /// without faults it holds on every schedule.
    #[test]
    fn a_state_property_as_a_watch_finds_the_checkers_shortest_schedule() {
        let two_of_a_term = |_: &(), _: &[Step], s: &System| {
            let led = s.observation().led;
            if led.windows(2).any(|w| w[0].0 == w[1].0) { Verdict::Broken } else { Verdict::Go(()) }
        };
        let limits = Limits { fifo: false, ..Limits::default() };
        let faults = Faults { crashes: 1, losses: 1, ..Faults::NONE };
        let w = watch(bully(faults), limits, "at most one leader per term", (), two_of_a_term);
        let c = w.counterexample.as_ref().expect("broken");
        let r = check(bully(faults), Limits { subsume: false, ..limits });
        let theirs = r.counterexamples.iter().find(|c| c.property == "at most one leader per term").unwrap();
        assert_eq!((c.steps.len(), &c.beliefs), (theirs.steps.len(), &theirs.beliefs), "{c:?}");
        eprintln!("{} steps, {} moves; {} states, {:?}", c.steps.len(), w.moves, w.states, w.elapsed);
        let shorter = watch(bully(faults), Limits { max_depth: w.moves - 1, ..limits }, "", (), two_of_a_term);
        assert!(shorter.counterexample.is_none() && shorter.limit == Some("depth"), "{shorter:?}");
        assert!(watch(bully(Faults::NONE), limits, "", (), two_of_a_term).holds());
    }

    /// A watch that clears a schedule ends its exploration there: a watch that clears every state
    /// once a node has started explores only the initial state and its successors.
    #[test]
    fn a_cleared_schedule_is_explored_no_further() {
        let limits = Limits { fifo: false, ..Limits::default() };
        let w =
            watch(
                bully(Faults::NONE),
                limits,
                "",
                (),
                |_, steps, _| {
                    if steps.is_empty() { Verdict::Go(()) } else { Verdict::Clear }
                },
            );
        assert!(w.holds() && w.states == 1 && w.depth == 0, "{w:?}");
    }
}
