//! # FloodMax (Lynch)
//!
//! * Source: N. Lynch, *Distributed Algorithms*, Morgan Kaufmann 1996,
//!   §4.1.1 (FloodMax, leader election in a general synchronous network).
//! * Network: any connected graph with bidirectional links (GRAPH, TREE,
//!   MESH, bidirectional rings), no orientation, no FIFO; n known (Lynch
//!   assumes an upper bound on the diameter known to all: here n − 1, the
//!   largest a connected graph of n nodes can have, since the drivers give a
//!   node n but not the overlay's diameter). Complete networks are left out:
//!   their diameter is 1, and flooding n − 1 rounds over their n(n − 1)/2
//!   links would cost n³ messages for nothing.
//! * Winner: the maximum (Lynch), or the minimum when mirrored.
//! * Messages: **exactly (n − 1)·2m** on a graph of m links, on every
//!   schedule: each node sends its best id on each of its links once a round
//!   for n − 1 rounds, and the degrees sum to 2m. No notification: every
//!   node knows the winner when the rounds end.
//! * Time: n − 1 rounds.
//!
//! ## Rounds driven by the messages
//!
//! Every node sends on every link in every round, so a node needs no clock
//! to find the round boundaries: it enters round r + 1 when it has every
//! neighbour's round-r message (`Election {id: best, stage: r}`), and after
//! round n − 1's messages from every neighbour it decides: leader if the best
//! id it has seen is its own, else follower of that id. Under synchrony this
//! is Lynch's round structure exactly; on any other schedule it is the same
//! computation, so the result and the count do not depend on the schedule. A
//! neighbour is never more than one round ahead (it needs this node's round-r
//! message to send its round r + 1), so a node keeps only the last round
//! heard per link. A node woken by a message starts its round 1 then.
//!
//! Why it is correct: by induction on r, the id a node sends in round r is
//! at least the best id within distance r − 1, so after the round-(n − 1)
//! messages a node has seen the best id within distance n − 1, which is
//! every node. Ids arriving "early" (a neighbour's next round) are folded in
//! at once; they only make a node's best better sooner.

use super::oneshot::Ending;
use super::{AlgoError, Msg, NodeContext, Outbox, Port, Rule};
use crate::machine;
use crate::spec::{AlgorithmSpec, Assumptions, Candidates, Extras, Provision};
use crate::topology::TopologyKind;

use super::oneshot::{OneShotNode, Wake};

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "flood-max",
    title: "FloodMax (synchronous, general network)",
    source: "N. A. Lynch, Distributed Algorithms, Morgan Kaufmann 1996, 4.1.1 (FloodMax)",
    description: "Every node sends the best id it has seen to all its neighbours once a round, for n - 1 \
                  rounds (a bound on the diameter every node knows), then leads if that id is its own. \
                  Rounds are driven by the messages (a node enters round r + 1 with every neighbour's \
                  round-r message), so the count is exactly (n - 1) * 2m on every schedule.",
    topologies: &[
        TopologyKind::Graph,
        TopologyKind::Tree,
        TopologyKind::Mesh,
        TopologyKind::RingBi,
        TopologyKind::RingBiUnoriented,
    ],
    assumptions: Assumptions { bidirectional: true, oriented: false, fifo: false },
    rule: Rule::Max,
    candidates: Candidates::All,
    bound_formula: "(n-1) * 2m (m = links of the overlay)",
    bound: &|n, _| n.saturating_sub(1) * 2 * n.max(n * n.saturating_sub(1) / 2),
    timer_events: |_| 0,
    heap_bytes_per_position: 668,
    kept: None,
    live_provision: Provision::Nodes,
    machine: machine!(FloodMax::new),
    extras: Extras {
        bound_on: Some(|n, m, _| n.saturating_sub(1) * 2 * m),
        schedule_independent: true,
        ..Extras::NONE
    },
};

/// One node of FloodMax.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FloodMax {
    id: u64,
    rule: Rule,
    /// Rounds to run: n − 1 (at least 1).
    rounds: u32,
    /// The round whose messages it has sent (0: asleep).
    round: u32,
    best: u64,
    /// Per port, the latest round heard from that neighbour and how many
    /// of its messages arrived (links need not be FIFO: its round r + 1 may
    /// overtake its round r, and carries at least as good an id).
    heard: Vec<(u32, u32)>,
    end: Ending,
}

impl FloodMax {
    /// A sleeping node.
    pub fn new(c: &NodeContext) -> Self {
        FloodMax {
            id: c.id,
            rule: c.rule,
            rounds: c.n.saturating_sub(1).max(1),
            round: 0,
            best: c.id,
            heard: vec![(0, 0); c.ports as usize],
            end: Ending::default(),
        }
    }

    fn send_round(&self, out: &mut Outbox) {
        for p in 0..self.heard.len() as Port {
            out.send(p, Msg::Election { id: self.best, stage: self.round, hops: 0 });
        }
    }

    /// Enter every round whose predecessor every neighbour has completed; decide after the last.
    fn advance(&mut self, out: &mut Outbox) {
        while !self.end.decided() && self.heard.iter().all(|&(latest, _)| latest >= self.round) {
            if self.round == self.rounds {
                self.end.decide_for(self.id, self.best, out);
            } else {
                self.round += 1;
                self.send_round(out);
            }
        }
    }
}

impl OneShotNode for FloodMax {
    const NAME: &'static str = SPEC.name;
    const WAKE: Wake = Wake::OnElection;

    fn ports(&self) -> u32 {
        self.heard.len() as u32
    }

    fn status(&self) -> &'static str {
        match self.end.decision() {
            _ if self.round == 0 => "asleep",
            None => "flooding",
            Some(_) => self.end.role_name(),
        }
    }

    fn start(&mut self, _woken_by: Option<Port>, out: &mut Outbox) {
        self.round = 1;
        self.send_round(out);
    }

    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        let Msg::Election { id, stage, .. } = msg else { return Err(Self::unexpected(msg)) };
        let (latest, count) = &mut self.heard[port as usize];
        if stage == 0 || stage > self.round + 1 || stage > self.rounds || *count >= self.rounds {
            return Err(AlgoError::Invalid(format!(
                "round {stage} from port {port} (its message {} of {}) at a node in round {}",
                *count + 1,
                self.rounds,
                self.round
            )));
        }
        *latest = (*latest).max(stage);
        *count += 1;
        self.best = self.rule.best(self.best, id);
        self.advance(out);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::Role;
    use crate::algo::harness::{Probe, decide, send};
    use crate::sim::{self, SimConfig};
    use crate::topology::Topology;

    fn node(id: u64, n: u32, ports: u32) -> FloodMax {
        FloodMax::new(&NodeContext { id, rule: Rule::Max, n, coin: 0, ports, ..Default::default() })
    }

    fn el(id: u64, stage: u32) -> Msg {
        Msg::Election { id, stage, hops: 0 }
    }

    /// On a path of 3 (n - 1 = 2 rounds) the middle node sends round 1 at once, round 2 when both neighbours'
    /// round 1 is in (with the better id heard), and decides after both round-2 messages.
    #[test]
    fn rounds_advance_on_every_neighbours_message() {
        Probe::new(node(5, 3, 2))
            .start(&[send(0, el(5, 1)), send(1, el(5, 1))])
            .on(0, el(7, 1), &[])
            .on(1, el(2, 1), &[send(0, el(7, 2)), send(1, el(7, 2))])
            .on(1, el(7, 2), &[])
            .on(0, el(9, 2), &[decide(Role::Follower, 9)])
            .in_state("follower");
    }

    /// A neighbour one round ahead is folded in at once; two rounds ahead, round 0, more messages than rounds or
    /// a round beyond n - 1 is refused.
    #[test]
    fn out_of_round_messages_are_refused() {
        let mut p = Probe::new(node(5, 4, 2)).start(&[send(0, el(5, 1)), send(1, el(5, 1))]);
        p = p.on(0, el(3, 1), &[]).on(0, el(8, 2), &[]);
        p.refuses(0, el(8, 3));
        p.refuses(0, el(8, 0));
        p = p.on(1, el(1, 1), &[send(0, el(8, 2)), send(1, el(8, 2))]).on(0, el(8, 3), &[]);
        p.refuses(0, el(8, 3));
        let mut q = Probe::new(node(5, 2, 1)).start(&[send(0, el(5, 1))]);
        q.refuses(0, el(1, 2));
    }

    /// A node woken by a round-1 message sends its own round 1 and takes the message.
    #[test]
    fn woken_node_joins_at_round_one() {
        Probe::new(node(4, 2, 1)).on(0, el(3, 1), &[send(0, el(4, 1)), decide(Role::Leader, 4)]);
    }

    /// On every connected graph the tests can enumerate at small n (every GRAPH, TREE and MESH the seed
    /// draws, both ring kinds), every arrangement of ids, both rules and every schedule: exactly (n - 1) * 2m
    /// messages and the extremum leads.
    #[test]
    fn exactly_n_minus_1_times_2m_on_every_small_graph() {
        for n in 2..=6u32 {
            for ids in crate::spec::ring_arrangements(n) {
                for &kind in SPEC.topologies {
                    for seed in 0..3u64 {
                        let Ok(topo) = Topology::build(kind, n, seed) else { continue };
                        let m = (0..n).map(|p| topo.ports(p).len() as u64).sum::<u64>() / 2;
                        for rule in [Rule::Max, Rule::Min] {
                            for cfg in [
                                SimConfig { seed, ..SimConfig::default() },
                                SimConfig { seed, fifo: false, max_delay: 64, ..SimConfig::default() },
                                SimConfig { seed, stagger: true, ..SimConfig::default() },
                            ] {
                                let r = sim::run(&SPEC, &topo, &ids, &[0], rule, &cfg);
                                assert!(
                                    r.verdict.violations.is_empty(),
                                    "{ids:?} {kind:?}: {:?}",
                                    r.verdict.violations
                                );
                                assert_eq!(
                                    r.counters.messages,
                                    u64::from(n - 1) * 2 * m,
                                    "{ids:?} {kind:?} seed {seed}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}
