//! # Ring with participant flags (Chang-Roberts as taught by Coulouris et al.)
//!
//! * Source: E. Chang, R. Roberts, "An improved algorithm for decentralized
//!   extrema-finding in circular configurations of processes", CACM 22(5),
//!   1979, in the form of G. Coulouris et al., *Distributed Systems: Concepts
//!   and Design*, ch. 15 (ring-based election with participant flags and an
//!   `elected` message). Ring election with multiple initiators (suppress
//!   lower-id election messages) ranked by an attribute is the same
//!   algorithm with the attribute as the id.
//! * Network: unidirectional ring (sends to the right; also runs on the
//!   oriented bidirectional ring), no FIFO. Not on unoriented rings: with
//!   local rights disagreeing, a replaced id and its replacement travel
//!   opposite ways and one initiator can cost more than 3n − 1 (ids 1, 2, 3,
//!   node 1 initiating: 9 messages on one labelling).
//! * Winner: the maximum (Chang-Roberts), or the minimum when mirrored.
//! * Messages, one initiator: election ≤ 2n − 1 (the initiator's message
//!   reaches the maximum after at most n − 1 links, each better node on the way
//!   replacing it by its own id, then the maximum's id goes round) plus n
//!   `elected` messages: 3n − 1 in the worst case (the initiator just right of
//!   the maximum) and 2n in the best (the maximum initiates), Coulouris et
//!   al.'s figures. Any number of initiators: an id sent by its owner travels
//!   until it reaches a node with a better *own* id, so the id of rank r
//!   crosses at most n − r + 1 links: at most n(n+1)/2 + n, AsFar's bound
//!   (attained by ids decreasing in the sending direction, all initiating).
//!
//! Every node starts non-participant. An initiator marks itself participant
//! and sends its id. On an election message with id: better than its own →
//! forward it and mark participant; worse and not participant → send its own
//! id instead and mark participant; worse and participant → swallow it; its
//! own → it is the leader, and it sends the `elected` message
//! ([`Msg::Notify`]) round the ring; every other node records the leader and
//! forwards it, the leader swallows it.
//!
//! Corrections to a common lecture-notes wording: "if part., stop forwarding"
//! applies only to ids worse than the node's own. Read as a third rule for any
//! id, it swallows the winner: with ids 1, 2 and only the node with id 1
//! initiating, node 2 replaces 1 by 2, and the participant node 1 stops it, so
//! nobody is ever elected (regression test
//! `participant_still_forwards_better_ids`). Its "`if = myid`" is
//! "`id = myid`". Its "mark as non-part" (to allow a later election) is not
//! needed for one election and omitted.

use super::oneshot::{Ending, OneShotNode, Wake};
use crate::spec::{
    AlgorithmSpec, Arrangement, Assumptions, Candidates, Extras, ORIENTED_RINGS, Provision, ascending, descending,
    mirror,
};
use super::{AlgoError, Msg, NodeContext, Outbox, Port, RIGHT, Rule, other};
use crate::machine;

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "participant-ring",
    title: "Ring with participant flags (Chang-Roberts)",
    source: "E. Chang, R. Roberts, An improved algorithm for decentralized extrema-finding in circular \
             configurations of processes, CACM 22(5), 1979; G. Coulouris, J. Dollimore, T. Kindberg, G. Blair, \
             Distributed Systems: Concepts and Design, Addison-Wesley 2012, ch. 15 (ring-based election with \
             participant flags)",
    description: "Initiators send their id right; a better id is forwarded, a worse one replaced by \
                  the node's own if it is not yet a participant and swallowed if it is; the id \
                  that comes back elects its owner, whose `elected` message goes round once.",
    topologies: ORIENTED_RINGS,
    assumptions: Assumptions { bidirectional: false, oriented: true, fifo: false },
    rule: Rule::Max,
    candidates: Candidates::All,
    bound_formula: "3n-1 if k = 1, else n(n+1)/2 + n",
    bound: &|n, k| if k == 1 { 3 * n - 1 } else { n * (n + 1) / 2 + n },
    timer_events: |_| 0,
    heap_bytes_per_position: 300,
    kept: None,
    live_provision: Provision::Nodes,
    machine: machine!(ParticipantRing::new),
    extras: Extras {
        schedule_independent: true,
        worst_case: Some(Arrangement {
            description: "ids decreasing in the sending direction, all initiating: id of rank r crosses n - r + 1 links (n(n+1)/2 + n)",
            ids: |n, r| mirror(descending(n), n, r),
        }),
        best_case: Some(Arrangement {
            description: "ids increasing in the sending direction: every id but the winner stops after one link (3n - 1 with all initiating)",
            ids: |n, r| mirror(ascending(n), n, r),
        }),
        ..Extras::NONE
    },
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum State {
    NonParticipant,
    Participant,
    /// Decided (what, `end` says): nothing is left to do but stop the
    /// notification or, where they can still come, swallow stray ids.
    Done,
}

/// One node of the participant-flag ring.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ParticipantRing {
    id: u64,
    rule: Rule,
    state: State,
    end: Ending,
}

impl ParticipantRing {
    /// A non-participant node.
    pub fn new(c: &NodeContext) -> Self {
        ParticipantRing { id: c.id, rule: c.rule, state: State::NonParticipant, end: Ending::default() }
    }

    fn own(&self) -> Msg {
        Msg::Election { id: self.id, stage: 0, hops: 0 }
    }
}

impl OneShotNode for ParticipantRing {
    const NAME: &'static str = SPEC.name;
    const WAKE: Wake = Wake::InStep;

    fn status(&self) -> &'static str {
        match self.state {
            State::NonParticipant => "non-participant",
            State::Participant => "participant",
            State::Done => self.end.role_name(),
        }
    }

    fn asleep(&self) -> bool {
        self.state == State::NonParticipant
    }

    fn start(&mut self, _woken_by: Option<Port>, out: &mut Outbox) {
        self.state = State::Participant;
        out.send(RIGHT, self.own());
    }

    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        match msg {
            Msg::Election { id, .. } => match self.state {
                State::NonParticipant | State::Participant if id == self.id => {
                    self.state = State::Done;
                    self.end.elect(id, out);
                }
                State::NonParticipant | State::Participant if self.rule.beats(id, self.id) => {
                    self.state = State::Participant;
                    out.send(other(port), msg);
                }
                State::NonParticipant => {
                    self.state = State::Participant;
                    out.send(RIGHT, self.own());
                }
                // A worse id at a participant stops here.
                State::Participant => {}
                // Worse ids still in flight when the election ended are swallowed.
                State::Done => {}
            },
            Msg::Notify { leader } => {
                self.state = State::Done;
                self.end.notified(port, leader, out);
            }
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
    use crate::algo::harness::{Probe, election, ring, send};
    use crate::sim::{self, SimConfig};
    use crate::topology::{Topology, TopologyKind};

    fn el(id: u64) -> Msg {
        election(id, 0)
    }

    /// The fix to the lecture-notes wording: a participant still forwards an id
    /// better than its own (the literal "if participant, stop forwarding" would
    /// swallow the winner).
    #[test]
    fn participant_still_forwards_better_ids() {
        Probe::started(ring(ParticipantRing::new, 1, Rule::Max)).on(LEFT, el(2), &[send(RIGHT, el(2))]);
        // And on the 2-ring of that case, node 2 is elected and both agree.
        let spec = catalogue::find("participant-ring").unwrap();
        let ring = Topology::ring(TopologyKind::RingUni, 2, 0).unwrap();
        let r = sim::run(spec, &ring, &[1, 2], &[0], Rule::Max, &SimConfig::default());
        assert!(r.verdict.violations.is_empty(), "{:?}", r.verdict.violations);
        assert_eq!(r.verdict.leader, Some(1));
    }

    /// A non-participant replaces a worse id by its own; a participant swallows it.
    #[test]
    fn worse_ids_replaced_then_swallowed() {
        Probe::new(ring(ParticipantRing::new, 5, Rule::Max)).on(LEFT, el(3), &[send(RIGHT, el(5))]).on(
            LEFT,
            el(4),
            &[],
        );
    }

    /// Coulouris et al.'s figures with one initiator: 2n when the maximum
    /// initiates, 3n − 1 when the initiator is the maximum's right neighbour
    /// (ascending ids, position 0 initiating); every other initiator lies in
    /// between.
    #[test]
    fn one_initiator_best_2n_worst_3n_minus_1() {
        let spec = catalogue::find("participant-ring").unwrap();
        for n in [2u32, 3, 5, 8, 64] {
            let ring = Topology::ring(TopologyKind::RingUni, n, 0).unwrap();
            let ids = crate::spec::ascending(n);
            let n64 = n as u64;
            let cost = |p: u32| {
                let r = sim::run(spec, &ring, &ids, &[p], Rule::Max, &SimConfig::default());
                assert!(r.verdict.violations.is_empty(), "{:?}", r.verdict.violations);
                r.counters.messages
            };
            assert_eq!(cost(n - 1), 2 * n64, "n = {n}: the maximum initiates");
            assert_eq!(cost(0), 3 * n64 - 1, "n = {n}: the maximum's right neighbour initiates");
            for p in 0..n {
                // Initiator p is n - 1 - p links before the maximum.
                assert_eq!(cost(p), 2 * n64 + (n64 - 1 - p as u64), "n = {n}, initiator {p}");
            }
        }
    }
}
