//! # MinMax (unidirectional; Higham-Przytycka's basic scheme)
//!
//! * Source: Santoro ch. 3, table "Election in Unidirectional
//!   Links" (MinMax, 1.44 n log n + O(n)); L. Higham, T. Przytycka, "A
//!   simple, efficient algorithm for maximum finding on rings" (1996), the
//!   basic algorithm before early promotion.
//! * Network: unidirectional ring (sends right; also runs on the oriented
//!   bidirectional ring), **FIFO links**.
//! * Winner: the maximum, or the minimum when mirrored. The envelope that
//!   survives MinMax is in general neither (ids 1, 2, 3: it is 2), so the node
//!   that detects the end sends one collecting round to find the extremum.
//! * Messages: at most n·T(n) + n election (envelopes, then the collecting
//!   round) + n notification, with T(n) = max{k : G_k ≤ n}, G = 1, 2, 3, 5,
//!   8, ... (≈ 1.44 log n rounds, each costing at most n).
//!
//! Envelopes carry an id and a round. Every node sends an envelope with its
//! own id in round 1 and remembers the last envelope it sent. An envelope
//! reaching a node whose last envelope has a smaller round is relayed (and
//! becomes that node's last). Reaching a node whose last envelope has the
//! same round, it is compared with it: in odd rounds it is dropped if its id
//! is larger, in even rounds if smaller; otherwise it is promoted to the next
//! round and sent on. An envelope that comes back to the node that last sent
//! it, in the same round, is the only one left.
//!
//! Why the bound: an envelope of round r travels from the node that promoted
//! it to the one that promoted the next envelope of round r ahead of it
//! (disjoint stretches: at most n links per round), and survives iff its id
//! is smaller (odd r) or larger (even r) than that envelope's. Let c_r be the
//! envelopes of round r. Each envelope x surviving rounds r and r + 1 had, in
//! round r, an immediate successor s(x) that was dropped: else s(x) is x's
//! successor in round r + 1 too, and x would have to beat it one way in round
//! r and the other way in round r + 1. Distinct x have distinct s(x), so
//! c_r ≥ c_(r+1) + c_(r+2); the last round has one envelope and the one
//! before at least two, so n = c_1 ≥ G_T as for Alternate.
//!
//! Corrections: none (Santoro's slides name MinMax without pseudo-code).
//! The collecting round (an `Election` with stage 0 carrying the best id
//! seen) and the notification carrying the winner, whose owner declares
//! itself leader, are Ringleader's additions so the extremum leads.

use std::fmt;
use std::hash::Hash;
use std::marker::PhantomData;

use super::alternate;
use super::bi_min_max;
use super::oneshot::{self, COLLECT, Ending, OneShotNode};
use crate::spec::{
    AlgorithmSpec, Arrangement, Assumptions, Candidates, Extras, ORIENTED_RINGS, Provision, descending, reversed,
};
use super::{AlgoError, Msg, NodeContext, Outbox, Port, RIGHT, Rule, other};
use crate::machine;

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "min-max",
    title: "MinMax (unidirectional)",
    source: "N. Santoro, Design and Analysis of Distributed Algorithms, Wiley 2007, ch. 3, table of unidirectional \
             election algorithms (MinMax); L. Higham, T. Przytycka, A simple, efficient algorithm for maximum \
             finding on rings, Information Processing Letters 58(6), 1996 (basic algorithm)",
    description: "Envelopes travel right; meeting the last envelope a node sent in the same round, \
                  the larger is dropped in odd rounds and the smaller in even rounds, the other \
                  promoted; the envelope that returns ends the election, and a collecting round \
                  finds the extremum, whose owner leads.",
    topologies: ORIENTED_RINGS,
    assumptions: Assumptions { bidirectional: false, oriented: true, fifo: true },
    rule: Rule::Max,
    candidates: Candidates::All,
    bound_formula: "n*T(n) + 2n, T(n) = max{k : G_k <= n}, G = 1, 2, 3, 5, 8, ...",
    bound: &|n, _| n * alternate::max_steps(n) + 2 * n,
    timer_events: |_| 0,
    heap_bytes_per_position: 262,
    kept: None,
    live_provision: Provision::Nodes,
    machine: machine!(MinMax::new),
    extras: Extras {
        schedule_independent: true,
        worst_case: Some(Arrangement {
            description: "Fibonacci construction, BiMinMax's read backwards (MinMax compares each envelope with its successor, BiMinMax each candidate with its predecessor): T(n) rounds, n*T(n) + 2n, the bound, for every n; the same for both rules (the rounds' rules do not depend on it)",
            ids: |n, _| reversed(bi_min_max::worst_case_ids(n)),
        }),
        best_case: Some(Arrangement {
            description: "DESCENDING (either rule): only envelope 1 survives round 1 and goes round in round 2: 4n messages, the least possible",
            ids: |n, _| descending(n),
        }),
        ..Extras::NONE
    },
};

/// Where a node of MinMax or MinMax+ stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum State {
    Asleep,
    /// Taking part: `last` is the last envelope sent.
    Running,
    /// Detected the end; the collecting round is out.
    Collecting,
    /// Sent the notification; waiting for it to come back.
    Announcing,
    Done,
}

/// The rule for envelopes a [`MinMaxNode`] follows: MinMax's ([`Basic`]),
/// or MinMax+'s, which counts each envelope's hops and promotes envelopes
/// early ([`super::min_max_plus`] declares it, so that this file names
/// nothing of that one's).
pub trait Rounds: Clone + fmt::Debug + PartialEq + Eq + Hash + Send + Sync + 'static {
    /// The algorithm's catalogue name, in the errors it reports.
    const NAME: &'static str;
    /// Envelopes carry the links they crossed this round (MinMax sends 0).
    const COUNTS_HOPS: bool;

    /// Envelope (`id`, `round`) of the node's round or a later one arrived,
    /// having crossed `hops` links this round.
    fn envelope(node: &mut MinMaxNode<Self>, id: u64, round: u32, hops: u32, out: &mut Outbox)
    -> Result<(), AlgoError>;
}

/// MinMax's rule: odd rounds keep the smaller envelope, even rounds the larger.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Basic;

impl Rounds for Basic {
    const NAME: &'static str = SPEC.name;
    const COUNTS_HOPS: bool = false;

    #[inline]
    fn envelope(node: &mut MinMaxNode<Self>, id: u64, round: u32, _hops: u32, out: &mut Outbox) -> Result<(), AlgoError> {
        node.basic_envelope(id, round, out)
    }
}

/// One node of MinMax, or of MinMax+ (see [`Rounds`]): the same rounds,
/// collecting round and notification.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MinMaxNode<R: Rounds> {
    pub(super) id: u64,
    pub(super) rule: Rule,
    pub(super) state: State,
    /// (id, round) of the last envelope sent.
    pub(super) last: (u64, u32),
    pub(super) end: Ending,
    rounds: PhantomData<R>,
}

/// One node of MinMax.
pub type MinMax = MinMaxNode<Basic>;

impl MinMax {
    /// A sleeping node.
    pub fn new(c: &NodeContext) -> Self {
        MinMaxNode::sleeping(c)
    }
}

impl<R: Rounds> MinMaxNode<R> {
    /// A sleeping node.
    pub(super) fn sleeping(c: &NodeContext) -> Self {
        MinMaxNode {
            id: c.id,
            rule: c.rule,
            state: State::Asleep,
            last: (c.id, 0),
            end: Ending::default(),
            rounds: PhantomData,
        }
    }

    /// Send envelope (id, round) on, having crossed `hops` links this round
    /// so far (MinMax+ counts them; MinMax sends 0).
    pub(super) fn send_envelope(&mut self, id: u64, round: u32, hops: u32, out: &mut Outbox) -> Result<(), AlgoError> {
        let hops = if R::COUNTS_HOPS { super::plus_one(Self::NAME, "hops", hops)? } else { 0 };
        self.last = (id, round);
        out.send(RIGHT, Msg::Election { id, stage: round, hops });
        Ok(())
    }

    /// The node's own envelope is back: the only one left, so the
    /// collecting round starts here.
    pub(super) fn collect(&mut self, out: &mut Outbox) {
        self.state = State::Collecting;
        oneshot::collect(self.id, out);
    }

    /// MinMax's rule for an envelope of the node's round or a later one.
    fn basic_envelope(&mut self, id: u64, round: u32, out: &mut Outbox) -> Result<(), AlgoError> {
        let lid = self.last.0;
        if round > self.last.1 {
            self.send_envelope(id, round, 0, out)
        } else if id == lid {
            // Back where it was last sent: the only envelope left.
            self.collect(out);
            Ok(())
        } else {
            let dropped = if round % 2 == 1 { id > lid } else { id < lid };
            if dropped { Ok(()) } else { self.send_envelope(id, super::plus_one(SPEC.name, "stage", round)?, 0, out) }
        }
    }

    fn envelope(&mut self, id: u64, round: u32, hops: u32, out: &mut Outbox) -> Result<(), AlgoError> {
        let lround = self.last.1;
        if round < lround {
            return Err(AlgoError::Invalid(format!(
                "envelope {id} of round {round} reached a node past round {lround} (links not FIFO?)"
            )));
        }
        R::envelope(self, id, round, hops, out)
    }
}

impl<R: Rounds> OneShotNode for MinMaxNode<R> {
    const NAME: &'static str = R::NAME;

    fn status(&self) -> &'static str {
        match self.state {
            State::Asleep => "asleep",
            State::Running => "running",
            State::Collecting => "collecting",
            State::Announcing => "announcing",
            State::Done => self.end.role_name(),
        }
    }

    fn start(&mut self, _woken_by: Option<Port>, out: &mut Outbox) {
        self.state = State::Running;
        // Cannot fail: hops 0.
        let _ = self.send_envelope(self.id, 1, 0, out);
    }

    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        match (msg, self.state) {
            (Msg::Election { id, stage: COLLECT, .. }, State::Collecting) => {
                self.state = State::Announcing;
                self.end.announce(self.id, id, RIGHT, out);
            }
            (Msg::Election { id, stage: COLLECT, .. }, State::Running) => {
                oneshot::collect_on(self.rule, self.id, id, other(port), out);
            }
            (Msg::Election { id, stage, hops }, State::Running) => self.envelope(id, stage, hops, out)?,
            (Msg::Notify { .. }, State::Announcing) => self.state = State::Done,
            (Msg::Notify { leader }, State::Running) => {
                self.state = State::Done;
                self.end.announce(self.id, leader, other(port), out);
            }
            (Msg::Election { .. } | Msg::Notify { .. }, state) => return Err(oneshot::misplaced(self.id, msg, state)),
            _ => return Err(Self::unexpected(msg)),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::LEFT;
    use crate::algo::catalogue;
    use crate::algo::harness::{Probe, election as el, ring_context, send};
    use crate::sim::{self, SimConfig};
    use crate::topology::{Topology, TopologyKind};

    /// Odd rounds keep the smaller envelope, even rounds the larger; a kept
    /// envelope is promoted, one of a later round is relayed as it is.
    #[test]
    fn odd_rounds_keep_min_even_rounds_keep_max() {
        Probe::started(MinMax::new(&ring_context(5, Rule::Max)))
            .on(LEFT, el(7, 1), &[]) // 7 > 5 dropped in round 1
            .on(LEFT, el(3, 1), &[send(RIGHT, el(3, 2))])
            .on(LEFT, el(2, 2), &[]) // 2 < 3 dropped in round 2
            .on(LEFT, el(9, 4), &[send(RIGHT, el(9, 4))]); // relayed, not promoted
    }

    /// On ids 1, 2, 3 the surviving envelope is 2, neither extremum; the
    /// collecting round still makes the maximum's owner the leader.
    #[test]
    fn surviving_envelope_is_not_the_extremum_yet_the_extremum_leads() {
        let spec = catalogue::find("min-max").unwrap();
        let ring = Topology::ring(TopologyKind::RingUni, 3, 0).unwrap();
        for rule in [Rule::Max, Rule::Min] {
            let r = sim::run(spec, &ring, &[1, 2, 3], &[0, 1, 2], rule, &SimConfig::default());
            assert!(r.verdict.violations.is_empty(), "{:?}", r.verdict.violations);
            assert_eq!(r.verdict.leader, Some(if rule == Rule::Max { 2 } else { 0 }));
            // Rounds 1..3 cost 3 each, then the collecting round and the notification.
            assert_eq!((r.counters.election_messages, r.counters.notification_messages), (12, 3));
        }
    }
}
