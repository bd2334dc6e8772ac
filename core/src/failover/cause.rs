//! Why a kept leadership's leader was lost: one [`Cause`] per failover, LIVE
//! and SIMULATED alike, shown (records, pages, the API's `Failover.cause`) in
//! the words of its [`Display`](std::fmt::Display).

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use crate::spec::Lease;

/// The cause of a failover.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cause {
    /// An injected crash fault.
    CrashFault,
    /// The node's event stream to the controller broke (LIVE).
    Unreachable,
    /// An injected partition cut the leader off from every majority.
    Partition,
    /// A planned stop; the leader hands its leadership over if it can.
    Handover,
    /// A higher term deposed the leader (a node that rejoined with a higher
    /// term, or an election it did not win): it names another leader, or
    /// none in a term above the one it led.
    Deposed,
    /// The leader stepped down (it names no leader now), and holds no lease
    /// to say why.
    SteppedDown,
    /// SIMULATED: the leader was paused (it took no step) while the others
    /// moved on. (LIVE, a paused node leaves the controller's pulse
    /// unanswered: [`Cause::Unreachable`].)
    Paused,
    /// The leader gave up a lease it could not renew, in its algorithm's own
    /// words ([`Lease::lost`]).
    LeaseLost(&'static str),
}

impl Cause {
    /// The cause of a leader that names no leader any more: its lease lost,
    /// in its algorithm's words, if it holds one, else [`Cause::SteppedDown`].
    pub fn stepped_down(lease: Option<Lease>) -> Cause {
        lease.map_or(Cause::SteppedDown, |l| Cause::LeaseLost(l.lost))
    }

    /// Its words.
    pub fn text(self) -> &'static str {
        match self {
            Cause::CrashFault => "crash fault",
            Cause::Unreachable => "node unreachable (its event stream broke)",
            Cause::Partition => "partition (cut off from every majority)",
            Cause::Handover => "planned stop (the leader hands over if it can)",
            Cause::Deposed => "deposed by a higher term",
            Cause::SteppedDown => "the leader stepped down",
            Cause::Paused => "paused (the leader took no step)",
            Cause::LeaseLost(words) => words,
        }
    }

    /// The cause `text` words ([`Cause::text`]); words of no other cause are
    /// a lease's ([`Cause::LeaseLost`]), kept once for the process's life.
    pub fn from_text(text: &str) -> Cause {
        const FIXED: [Cause; 7] = [
            Cause::CrashFault,
            Cause::Unreachable,
            Cause::Partition,
            Cause::Handover,
            Cause::Deposed,
            Cause::SteppedDown,
            Cause::Paused,
        ];
        if let Some(c) = FIXED.into_iter().find(|c| c.text() == text) {
            return c;
        }
        static WORDS: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
        let mut words = WORDS.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&known) = words.get(text) {
            return Cause::LeaseLost(known);
        }
        let leaked: &'static str = Box::leak(text.to_string().into_boxed_str());
        words.insert(leaked);
        Cause::LeaseLost(leaked)
    }
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.text())
    }
}

/// Stored as its words.
impl serde::Serialize for Cause {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.text())
    }
}

/// Read back from its words ([`Cause::from_text`]).
impl<'de> serde::Deserialize<'de> for Cause {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(d)?;
        Ok(Cause::from_text(&text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every cause reads back from its words, a lease's too; the words are today's, which the
    /// records, pages and e2e tests show.
    #[test]
    fn causes_read_back_from_their_words() {
        let all = [
            Cause::CrashFault,
            Cause::Unreachable,
            Cause::Partition,
            Cause::Handover,
            Cause::Deposed,
            Cause::SteppedDown,
            Cause::Paused,
            Cause::LeaseLost("lease ended"),
        ];
        for c in all {
            assert_eq!(Cause::from_text(&c.to_string()), c);
        }
        assert_eq!(Cause::CrashFault.to_string(), "crash fault");
        assert_eq!(Cause::Partition.to_string(), "partition (cut off from every majority)");
        assert_eq!(Cause::stepped_down(None), Cause::SteppedDown);
        assert_eq!(Cause::stepped_down(Some(Lease { lost: "lease ended" })).to_string(), "lease ended");
    }
}
