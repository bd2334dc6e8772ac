//! # UniAlternate (Alternate on a unidirectional ring)
//!
//! * Source: Santoro ch. 3, "Unidirectional version" and the
//!   unidirectional table (UniAlternate, 1.44 n log n + O(n)); the same
//!   simulation technique as UniStages (Dolev-Klawe-Rodeh, Peterson 1982).
//! * Network: unidirectional ring (sends right; also runs on the oriented
//!   bidirectional ring), **FIFO links**.
//! * Winner: the maximum, or the minimum when mirrored.
//! * Messages: exactly as many as Alternate on the same ids: n per step,
//!   at most n·T(n) election + n notification, T(n) = max{k : G_k ≤ n},
//!   G = 1, 2, 3, 5, 8, ...
//!
//! Every active node holds a value (first its own id) and, at every step,
//! sends it right and receives its active predecessor's value v. At odd
//! steps it stays active, keeping its value, if its value beats v (Alternate:
//! a candidate compares with its left neighbour). At even steps Alternate
//! compares each candidate with its *right* neighbour, which a unidirectional
//! ring cannot do; the comparison of v with the node's own value is made by
//! the node receiving it instead, and v survives (the node stays active,
//! carrying v) if v beats the node's value. The surviving values are those of
//! Alternate, carried one active node along. The active node whose own value
//! comes back is the last; it announces the value, and the owner of that id
//! declares itself leader.
//!
//! Corrections to Santoro's slides: as for UniStages, the node left holding the
//! winning value need not own it, so the holder announces the value instead
//! of declaring itself leader.

use super::alternate;
use super::oneshot::{self, Ending, OneShotNode};
use crate::spec::{
    AlgorithmSpec, Arrangement, Assumptions, Candidates, Extras, ORIENTED_RINGS, Provision, descending, mirror,
};
use super::{AlgoError, Msg, NodeContext, Outbox, Port, RIGHT, Rule, other};
use crate::machine;

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "uni-alternate",
    title: "UniAlternate",
    source: "N. Santoro, Design and Analysis of Distributed Algorithms, Wiley 2007, ch. 3 \
             (Alternate, unidirectional version; UniAlternate in the table of unidirectional election algorithms)",
    description: "Alternate simulated on a unidirectional ring: at odd steps a node keeps its value \
                  if it beats its predecessor's, at even steps it takes over its predecessor's value \
                  if that beats its own; the last holder announces the value and its owner leads.",
    topologies: ORIENTED_RINGS,
    assumptions: Assumptions { bidirectional: false, oriented: true, fifo: true },
    rule: Rule::Max,
    candidates: Candidates::All,
    bound_formula: "n*T(n) + n, T(n) = max{k : G_k <= n}, G = 1, 2, 3, 5, 8, ...",
    bound: &|n, _| n * alternate::max_steps(n) + n,
    timer_events: |_| 0,
    heap_bytes_per_position: 254,
    kept: None,
    live_provision: Provision::Nodes,
    machine: machine!(UniAlternate::new),
    extras: Extras {
        schedule_independent: true,
        worst_case: Some(Arrangement {
            description: "Fibonacci construction: each step keeps exactly G_(k-1) of G_k candidates (A_(k+1) = A_k reversed plus a smallest id after each descent), so T(n) steps: n*T(n) + n, the bound, for every n",
            ids: |n, r| mirror(alternate::worst_case_ids(n), n, r),
        }),
        best_case: Some(Arrangement {
            description: "ids decreasing in the step-1 direction (DESCENDING for max): only the extremum survives step 1, 3n messages, the least possible",
            ids: |n, r| mirror(descending(n), n, r),
        }),
        ..Extras::NONE
    },
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum State {
    Asleep,
    Active,
    Relay,
    Announcing,
    Done,
}

/// One node of UniAlternate.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct UniAlternate {
    id: u64,
    rule: Rule,
    state: State,
    step: u32,
    value: u64,
    end: Ending,
}

impl UniAlternate {
    /// A sleeping node.
    pub fn new(c: &NodeContext) -> Self {
        UniAlternate { id: c.id, rule: c.rule, state: State::Asleep, step: 0, value: c.id, end: Ending::default() }
    }

    fn next_step(&mut self, out: &mut Outbox) {
        self.step = self.step.saturating_add(1);
        self.state = State::Active;
        out.send(RIGHT, Msg::Election { id: self.value, stage: self.step, hops: 0 });
    }
}

impl OneShotNode for UniAlternate {
    const NAME: &'static str = SPEC.name;

    fn status(&self) -> &'static str {
        match self.state {
            State::Asleep => "asleep",
            State::Active => "active",
            State::Relay => "relay",
            State::Announcing => "announcing",
            State::Done => self.end.role_name(),
        }
    }

    fn start(&mut self, _woken_by: Option<Port>, out: &mut Outbox) {
        self.next_step(out);
    }

    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        match (msg, self.state) {
            (Msg::Election { id: v, stage, .. }, State::Active) => {
                if stage != self.step {
                    return Err(AlgoError::Invalid(format!(
                        "step {stage} reached an active node at step {} (links not FIFO?)",
                        self.step
                    )));
                }
                if v == self.value {
                    self.state = State::Announcing;
                    self.end.announce(self.id, v, RIGHT, out);
                } else if self.step % 2 == 1 {
                    if self.rule.beats(self.value, v) { self.next_step(out) } else { self.state = State::Relay }
                } else if self.rule.beats(v, self.value) {
                    self.value = v;
                    self.next_step(out);
                } else {
                    self.state = State::Relay;
                }
            }
            (Msg::Election { .. }, State::Relay) => out.send(other(port), msg),
            (Msg::Notify { .. }, State::Announcing) => self.state = State::Done,
            (Msg::Notify { leader }, State::Relay) => {
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
    use crate::topology::{IdOrder, Topology, TopologyKind};

    /// Odd steps keep the node's own value if it beats the predecessor's;
    /// even steps adopt the predecessor's value if it beats the node's.
    #[test]
    fn odd_steps_keep_own_even_steps_adopt() {
        Probe::started(UniAlternate::new(&ring_context(5, Rule::Max)))
            .on(LEFT, el(3, 1), &[send(RIGHT, el(5, 2))])
            .on(LEFT, el(8, 2), &[send(RIGHT, el(8, 3))]) // carries 8 now
            .on(LEFT, el(9, 3), &[])
            .in_state("relay");
    }

    /// It simulates Alternate exactly: on every arrangement of up to 7 ids
    /// (all initiating) it sends as many messages as Alternate on the
    /// oriented bidirectional ring, and the owner of the extremum leads.
    #[test]
    fn counts_equal_alternate() {
        let uni = catalogue::find("uni-alternate").unwrap();
        let bi = catalogue::find("alternate").unwrap();
        for n in 2..=7u32 {
            let all: Vec<u32> = (0..n).collect();
            let uring = Topology::ring(TopologyKind::RingUni, n, 0).unwrap();
            let bring = Topology::ring(TopologyKind::RingBi, n, 0).unwrap();
            for seed in 0..40 {
                let ids = IdOrder::Random(seed).arrange(n).unwrap();
                for rule in [Rule::Max, Rule::Min] {
                    let u = sim::run(uni, &uring, &ids, &all, rule, &SimConfig::default());
                    let b = sim::run(bi, &bring, &ids, &all, rule, &SimConfig::default());
                    assert!(u.verdict.violations.is_empty(), "{ids:?}: {:?}", u.verdict.violations);
                    assert_eq!(u.counters.messages, b.counters.messages, "{ids:?} {rule:?}");
                }
            }
        }
    }
}
