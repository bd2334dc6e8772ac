//! # UniStages (Dolev-Klawe-Rodeh 1982 / Peterson 1982)
//!
//! * Source: D. Dolev, M. Klawe, M. Rodeh, "An O(n log n) unidirectional
//!   distributed algorithm for extrema finding in a circle" (1982); G. L.
//!   Peterson, "An O(n log n) unidirectional algorithm for the circular
//!   extrema problem" (1982); Santoro ch. 3, "Unidirectional
//!   version".
//! * Network: unidirectional ring (sends right; also runs on the oriented
//!   bidirectional ring), **FIFO links**.
//! * Winner: the maximum (Peterson), or the minimum when mirrored.
//! * Messages: at most 2n⌊log n⌋ election + n to detect the end + n
//!   notification = 2n⌊log n⌋ + 2n. While a ≥ 2 nodes are active a phase
//!   costs 2n (both messages of each active node travel to the next active
//!   node) and at most ⌊a/2⌋ stay active (the survivors adopt values that are
//!   local maxima of the cyclic sequence of active values, and two neighbours
//!   cannot both be one), so at most ⌊log n⌋ such phases; then the last
//!   active node's value goes round (n) and the notification too (n).
//!
//! Bidirectional Stages simulated on one direction: an active node holds a
//! *value* (first its own id). In phase p it sends its value (step 2p − 1),
//! receives its active predecessor's value v1 and forwards it (step 2p),
//! then receives the value v2 of the active node two back. It has then seen
//! what the node holding v1 would have seen in Stages (its two neighbours'
//! values, shifted one active node along), so it stays active, adopting v1,
//! if v1 beats both its own value and v2, and becomes a relay otherwise. A
//! relay forwards everything. The active node whose own value comes back as
//! its first message is the last: the value it holds is the extremum.
//!
//! Corrections to Santoro's slides and the literature: the node that ends up
//! holding the winning value is in general *not* its owner (ids 1, 2: node 1
//! ends up holding 2). Declaring the holder leader elects the wrong node (and
//! the invariant `leader_is_extremum` fails). Here the holder sends the
//! notification round carrying the winning value; the node whose own id it is
//! declares itself leader, every other node (the holder included, unless it
//! owns the value) a follower. Encoding:
//! `Msg::Election { id: value, stage: step }`, the step's parity telling the
//! first message of a phase from the second.

use super::oneshot::{self, Ending, OneShotNode};
use crate::spec::{
    AlgorithmSpec, Arrangement, Assumptions, Candidates, Extras, ORIENTED_RINGS, Provision, ascending, bit_reversal,
    floor_log2, mirror,
};
use super::{AlgoError, Msg, NodeContext, Outbox, Port, RIGHT, Rule, other};
use crate::machine;

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "uni-stages",
    title: "UniStages (Dolev-Klawe-Rodeh / Peterson)",
    source: "D. Dolev, M. Klawe, M. Rodeh, An O(n log n) unidirectional distributed algorithm for extrema finding \
             in a circle, J. Algorithms 3(3), 1982; G. L. Peterson, An O(n log n) unidirectional algorithm for the \
             circular extrema problem, ACM TOPLAS 4(4), 1982; N. Santoro, Design and Analysis of Distributed \
             Algorithms, Wiley 2007, ch. 3 (Stages, unidirectional version)",
    description: "Stages simulated on a unidirectional ring: each active node sends its value and \
                  forwards its predecessor's, and keeps the predecessor's value if it is a local \
                  extremum; the last holder announces the winning value and its owner leads.",
    topologies: ORIENTED_RINGS,
    assumptions: Assumptions { bidirectional: false, oriented: true, fifo: true },
    rule: Rule::Max,
    candidates: Candidates::All,
    bound_formula: "2n*floor(log2 n) + 2n",
    bound: &|n, _| 2 * n * floor_log2(n) + 2 * n,
    timer_events: |_| 0,
    heap_bytes_per_position: 300,
    kept: None,
    live_provision: Provision::Nodes,
    machine: machine!(UniStages::new),
    extras: Extras {
        schedule_independent: true,
        worst_case: Some(Arrangement {
            description: "bit-reversal order: for n = 2^p exactly half the active nodes stay active each phase (2n log n + 2n messages)",
            ids: |n, r| mirror(bit_reversal(n), n, r),
        }),
        best_case: Some(Arrangement {
            description: "ids increasing in the sending direction: one node stays active after the first phase (4n messages, the least possible)",
            ids: |n, r| mirror(ascending(n), n, r),
        }),
        ..Extras::NONE
    },
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum State {
    Asleep,
    /// Active, waiting for the first message of `phase`.
    First,
    /// Active, got `v1`; waiting for the second message.
    Second {
        v1: u64,
    },
    Relay,
    /// Holds the winning value; its notification is going round.
    Announcing,
    Done,
}

/// One node of UniStages.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct UniStages {
    id: u64,
    rule: Rule,
    state: State,
    phase: u32,
    value: u64,
    end: Ending,
}

impl UniStages {
    /// A sleeping node.
    pub fn new(c: &NodeContext) -> Self {
        UniStages { id: c.id, rule: c.rule, state: State::Asleep, phase: 0, value: c.id, end: Ending::default() }
    }

    fn next_phase(&mut self, out: &mut Outbox) {
        self.phase = self.phase.saturating_add(1);
        self.state = State::First;
        out.send(RIGHT, Msg::Election { id: self.value, stage: self.phase.saturating_mul(2) - 1, hops: 0 });
    }
}

impl OneShotNode for UniStages {
    const NAME: &'static str = SPEC.name;

    fn status(&self) -> &'static str {
        match self.state {
            State::Asleep => "asleep",
            State::First | State::Second { .. } => "active",
            State::Relay => "relay",
            State::Announcing => "announcing",
            State::Done => self.end.role_name(),
        }
    }

    fn start(&mut self, _woken_by: Option<Port>, out: &mut Outbox) {
        self.next_phase(out);
    }

    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        match msg {
            Msg::Election { id: v, stage, .. } => match self.state {
                State::First | State::Second { .. } => {
                    let want = if self.state == State::First {
                        self.phase.saturating_mul(2) - 1
                    } else {
                        self.phase.saturating_mul(2)
                    };
                    if stage != want {
                        return Err(AlgoError::Invalid(format!(
                            "step {stage} reached an active node expecting step {want} (links not FIFO?)"
                        )));
                    }
                    match self.state {
                        State::First if v == self.value => {
                            // The last active node: announce the value it holds.
                            self.state = State::Announcing;
                            self.end.announce(self.id, v, RIGHT, out);
                        }
                        State::First => {
                            self.state = State::Second { v1: v };
                            out.send(RIGHT, Msg::Election { id: v, stage: self.phase.saturating_mul(2), hops: 0 });
                        }
                        State::Second { v1 } => {
                            if self.rule.beats(v1, self.value) && self.rule.beats(v1, v) {
                                self.value = v1;
                                self.next_phase(out);
                            } else {
                                self.state = State::Relay;
                            }
                        }
                        _ => unreachable!("matched above"),
                    }
                }
                State::Relay => out.send(other(port), msg),
                // Woken by the OneShotNode before it is handed an election message.
                State::Asleep => return Err(oneshot::misplaced(self.id, msg, self.state)),
                State::Announcing | State::Done => {
                    return Err(AlgoError::Invalid(format!("value {v} arrived after the election ended")));
                }
            },
            Msg::Notify { leader } => match self.state {
                State::Announcing => self.state = State::Done,
                State::Relay => {
                    self.state = State::Done;
                    self.end.announce(self.id, leader, other(port), out);
                }
                _ => return Err(AlgoError::Invalid(format!("notification reached {} in {:?}", self.id, self.state))),
            },
            _ => return Err(Self::unexpected(msg)),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::Decision;
    use crate::algo::catalogue;
    use crate::algo::harness::{Probe, election as el, ring_context, send};
    use crate::algo::{LEFT, Role};
    use crate::sim::{self, SimConfig};
    use crate::topology::{Topology, TopologyKind};

    fn started(id: u64) -> Probe<UniStages> {
        Probe::started(UniStages::new(&ring_context(id, Rule::Max)))
    }

    /// An active node forwards its predecessor's value, then adopts it if it
    /// beats both its own value and the one two back, starting the next phase.
    #[test]
    fn adopts_a_local_maximum() {
        started(3).on(LEFT, el(7, 1), &[send(RIGHT, el(7, 2))]).on(LEFT, el(5, 2), &[send(RIGHT, el(7, 3))]);
    }

    /// A predecessor value beaten by the one two back makes the node a relay.
    #[test]
    fn becomes_relay_otherwise() {
        started(3).on(LEFT, el(7, 1), &[send(RIGHT, el(7, 2))]).on(LEFT, el(9, 2), &[]).in_state("relay");
    }

    /// Regression (the guide's warning): on ids 1, 2 the node with id 1 ends
    /// up holding 2; it must announce 2, not lead. The owner of 2 leads.
    #[test]
    fn the_owner_of_the_winning_value_leads_not_its_holder() {
        let spec = catalogue::find("uni-stages").unwrap();
        let ring = Topology::ring(TopologyKind::RingUni, 2, 0).unwrap();
        let r = sim::run(spec, &ring, &[1, 2], &[0, 1], Rule::Max, &SimConfig::default());
        assert!(r.verdict.violations.is_empty(), "{:?}", r.verdict.violations);
        assert_eq!(r.verdict.leader, Some(1), "position 1 owns id 2");
        assert_eq!(r.decisions[0], Some(Decision { role: Role::Follower, leader: 2 }));
    }
}
