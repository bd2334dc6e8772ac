//! Faults: what the controller injects and every driver applies in its
//! transport layer, so the simulator and the live runtime fail alike.
//!
//! A [`Fault`] names nodes by overlay position. A [`FaultPlan`] is a list of
//! faults, each switched on at a time (virtual time units in the simulator,
//! milliseconds live) and carrying the seed of its random choices, so a run
//! replays exactly. [`validate`] checks a fault against the size of the
//! overlay and names the field at fault, as the controller's API reports it.
//!
//! # Precedence: later faults win
//!
//! Faults take effect in time order (`at`; faults of one time in plan order)
//! and a later fault overrides an earlier one where they overlap:
//!
//! * **Link faults.** A message from `a` to `b` meets the *latest* link fault
//!   whose selector matches it (`from` is `None` or `a`, `to` is `None` or
//!   `b`), and only that one: faults are not combined. A later fault on the
//!   same selector therefore replaces the earlier one, and a fault with the
//!   default [`LinkFault`] (no drop, delay, duplicate or reorder) clears the
//!   links it selects: `Link { from: None, to: None, fault: LinkFault::default() }`
//!   clears every link fault.
//! * **Partitions.** A partition replaces the previous one; a partition with
//!   one group holding every node heals the network.
//! * **Crashes.** `Crash` of a node that is down and `Recover` of a node that
//!   is up do nothing (the simulator logs them).
//!
//! # Seeds
//!
//! Each scheduled fault draws its random choices (drop, jitter, duplicate,
//! reorder, in that order, per message it applies to) from its own generator
//! seeded with its `seed`. Adding a fault therefore changes neither the
//! scheduler's choices nor another fault's; a probability of 0 or 1 draws
//! nothing.

use std::collections::HashSet;

/// What goes wrong on the links a [`Fault::Link`] selects.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LinkFault {
    /// Probability in [0, 1] that a message is lost.
    pub drop: f64,
    /// Fixed extra delay of every message.
    pub delay_ms: u64,
    /// Extra delay drawn uniformly from `0..=jitter_ms` per message.
    pub jitter_ms: u64,
    /// Probability in [0, 1] that a message is delivered twice.
    pub duplicate: f64,
    /// Probability in [0, 1] that a message may overtake earlier ones on its
    /// link (FIFO order is kept otherwise).
    pub reorder: f64,
}

/// One fault.
#[derive(Clone, Debug, PartialEq)]
pub enum Fault {
    /// The node stops handling messages and timers; messages to it are lost
    /// (those it sent before still arrive); its pending timers are void.
    Crash {
        /// Position of the node.
        node: u32,
    },
    /// Whoever leads at the time the fault fires crashes: the live node whose
    /// latest kept leadership names itself (the highest term if several), or
    /// else a live node that decided to lead a one-shot election. Nothing
    /// happens when no node leads.
    CrashLeader,
    /// A crashed node comes back with fresh state (a new incarnation, built
    /// from its original context and woken as an initiator).
    Recover {
        /// Position of the node.
        node: u32,
    },
    /// Messages sent on the links from `from` to `to` (`None` = every node)
    /// from `at` on; the latest matching link fault wins (see the module docs).
    Link {
        /// Sending position, or every node.
        from: Option<u32>,
        /// Receiving position, or every node.
        to: Option<u32>,
        /// What happens to them.
        fault: LinkFault,
    },
    /// Messages sent between different groups are lost; a node in no group
    /// forms a group of its own. Replaces the previous partition; one group
    /// of every node heals it.
    Partition {
        /// Disjoint groups of positions.
        groups: Vec<Vec<u32>>,
    },
}

/// A fault switched on at `at` (virtual time units in the simulator,
/// milliseconds after the election's start live), with its own seed.
#[derive(Clone, Debug, PartialEq)]
pub struct Scheduled {
    /// When it takes effect.
    pub at: u64,
    /// The seed of its random choices (drop, jitter, duplicate, reorder).
    pub seed: u64,
    /// The fault.
    pub fault: Fault,
}

/// The faults of one run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FaultPlan {
    /// In any order; applied by time.
    pub faults: Vec<Scheduled>,
}

/// A fault refused, naming the request field at fault (as the API reports it).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {reason}")]
pub struct FaultError {
    /// The field, e.g. `link.drop` or `partition.groups`.
    pub field: &'static str,
    /// What is wrong.
    pub reason: String,
}

fn bad(field: &'static str, reason: impl Into<String>) -> FaultError {
    FaultError { field, reason: reason.into() }
}

fn probability(field: &'static str, p: f64) -> Result<(), FaultError> {
    if !(0.0..=1.0).contains(&p) {
        return Err(bad(field, format!("{p} is not a probability in [0, 1]")));
    }
    Ok(())
}

fn position(field: &'static str, p: u32, n: u32) -> Result<(), FaultError> {
    if p >= n {
        return Err(bad(field, format!("node {p} is not a position of this overlay (0..{n})")));
    }
    Ok(())
}

/// Check `fault` against an overlay of `n` positions.
pub fn validate(fault: &Fault, n: u32) -> Result<(), FaultError> {
    match fault {
        Fault::Crash { node } => position("crash.node", *node, n),
        Fault::CrashLeader => Ok(()),
        Fault::Recover { node } => position("recover.node", *node, n),
        Fault::Link { from, to, fault } => {
            if let Some(f) = from {
                position("link.from", *f, n)?;
            }
            if let Some(t) = to {
                position("link.to", *t, n)?;
            }
            if from.is_some() && from == to {
                return Err(bad("link.to", "a link joins two different nodes"));
            }
            probability("link.drop", fault.drop)?;
            probability("link.duplicate", fault.duplicate)?;
            probability("link.reorder", fault.reorder)?;
            Ok(())
        }
        Fault::Partition { groups } => {
            if groups.is_empty() {
                return Err(bad("partition.groups", "give at least one group"));
            }
            let mut seen = HashSet::new();
            for g in groups {
                if g.is_empty() {
                    return Err(bad("partition.groups", "a group is empty"));
                }
                for &p in g {
                    position("partition.groups", p, n)?;
                    if !seen.insert(p) {
                        return Err(bad("partition.groups", format!("node {p} is named twice")));
                    }
                }
            }
            Ok(())
        }
    }
}

impl FaultPlan {
    /// Check every fault against an overlay of `n` positions.
    pub fn validate(&self, n: u32) -> Result<(), FaultError> {
        self.faults.iter().try_for_each(|s| validate(&s.fault, n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Faults naming unknown nodes, probabilities outside [0, 1], a link from a node to itself, and partitions
    /// with an empty group or a node named twice are refused naming the field; good faults pass.
    #[test]
    fn validation_names_the_field() {
        let field = |f: Fault| validate(&f, 4).unwrap_err().field;
        assert_eq!(field(Fault::Crash { node: 4 }), "crash.node");
        assert_eq!(field(Fault::Recover { node: 9 }), "recover.node");
        let link = |from, to, fault| Fault::Link { from, to, fault };
        assert_eq!(field(link(Some(5), None, LinkFault::default())), "link.from");
        assert_eq!(field(link(None, Some(4), LinkFault::default())), "link.to");
        assert_eq!(field(link(Some(1), Some(1), LinkFault::default())), "link.to");
        assert_eq!(field(link(None, None, LinkFault { drop: 1.5, ..LinkFault::default() })), "link.drop");
        assert_eq!(field(link(None, None, LinkFault { duplicate: -0.1, ..LinkFault::default() })), "link.duplicate");
        assert_eq!(field(link(None, None, LinkFault { reorder: f64::NAN, ..LinkFault::default() })), "link.reorder");
        assert_eq!(field(Fault::Partition { groups: vec![] }), "partition.groups");
        assert_eq!(field(Fault::Partition { groups: vec![vec![0], vec![]] }), "partition.groups");
        let twice = validate(&Fault::Partition { groups: vec![vec![0, 1], vec![1, 2]] }, 4).unwrap_err();
        assert!(twice.reason.contains("node 1 is named twice"), "{twice}");
        assert!(validate(&Fault::Partition { groups: vec![vec![0, 1], vec![2]] }, 4).is_ok());
        assert!(
            validate(&link(Some(0), None, LinkFault { drop: 1.0, delay_ms: 5, ..LinkFault::default() }), 4).is_ok()
        );
        assert!(validate(&Fault::CrashLeader, 4).is_ok());
    }
}
