//! # All the Way (Le Lann 1977)
//!
//! * Source: G. Le Lann, "Distributed systems: towards a formal approach"
//!   (1977); N. Santoro, *Design and Analysis of Distributed Algorithms*,
//!   Wiley 2007, ch. 3, "All the way".
//! * Network: ring, unidirectional or bidirectional, local orientation only;
//!   no FIFO needed (the hop counter tells n).
//! * Winner: the minimum (Santoro), or the maximum when mirrored.
//! * Messages: exactly n² (every id crosses every link); no notification is
//!   needed because every node sees every id. Ideal time: about 2n.
//!
//! Every node (initiators first, the others when a message wakes them) sends
//! its id to its right with hop counter 1; every node forwards every foreign
//! id to the port opposite the one it came on, adding one to the counter, and
//! remembers the best id seen. When its own id returns, the counter is n.
//!
//! Correction to Santoro's pseudo-code: its `CHECK` compares
//! `count = ringsize`, but `count` counts the *foreign* ids a node has seen,
//! which is `n - 1` at the end, so a literal transcription never terminates. A
//! node decides when it knows n and has seen `n - 1` foreign ids.

use super::oneshot::{AwakeStatus, Ending, OneShotNode};
use crate::spec::{AlgorithmSpec, Assumptions, Candidates, Extras, Provision, RINGS};
use super::{AlgoError, Msg, NodeContext, Outbox, Port, RIGHT, Rule, other};
use crate::machine;

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "all-the-way",
    title: "All the Way (Le Lann)",
    source: "G. Le Lann, Distributed systems: towards a formal approach, IFIP Congress 1977; N. Santoro, Design and \
             Analysis of Distributed Algorithms, Wiley 2007, ch. 3",
    description: "Every id travels the whole ring; each node sees every id, learns n from the hop \
                  counter of its own returning id, and decides once it has seen n ids. No \
                  notification round is needed.",
    topologies: RINGS,
    assumptions: Assumptions { bidirectional: false, oriented: false, fifo: false },
    rule: Rule::Min,
    candidates: Candidates::All,
    bound_formula: "n^2",
    bound: &|n, _| n * n,
    timer_events: |_| 0,
    heap_bytes_per_position: 376,
    kept: None,
    live_provision: Provision::Nodes,
    machine: machine!(AllTheWay::new),
    extras: Extras {
        exact: Some(|n, _| n * n),
        schedule_independent: true,
        ..Extras::NONE
    },
};

/// One node of All the Way.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AllTheWay {
    id: u64,
    rule: Rule,
    state: AwakeStatus,
    best: u64,
    /// Foreign ids seen.
    seen: u32,
    /// Ring size, once the own id came back.
    ring_size: Option<u32>,
    end: Ending,
}

impl AllTheWay {
    /// A sleeping node.
    pub fn new(c: &NodeContext) -> Self {
        AllTheWay {
            id: c.id,
            rule: c.rule,
            state: AwakeStatus::Asleep,
            best: c.id,
            seen: 0,
            ring_size: None,
            end: Ending::default(),
        }
    }

    fn check(&mut self, out: &mut Outbox) {
        if let Some(n) = self.ring_size
            && self.seen.saturating_add(1) == n
        {
            self.state = AwakeStatus::Done;
            self.end.decide_for(self.id, self.best, out);
        }
    }
}

impl OneShotNode for AllTheWay {
    const NAME: &'static str = SPEC.name;

    fn status(&self) -> &'static str {
        self.state.name(&self.end)
    }

    fn start(&mut self, _woken_by: Option<Port>, out: &mut Outbox) {
        self.state = AwakeStatus::Awake;
        out.send(RIGHT, Msg::Election { id: self.id, stage: 0, hops: 1 });
    }

    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        let Msg::Election { id, hops, .. } = msg else {
            return Err(Self::unexpected(msg));
        };
        if self.state == AwakeStatus::Done {
            return Err(AlgoError::Invalid(format!(
                "id {id} arrived after this node saw all {:?} ids",
                self.ring_size
            )));
        }
        if id == self.id {
            if self.ring_size.is_some() || hops < 1 {
                return Err(AlgoError::Invalid(format!("own id {id} came back twice or with hop count {hops}")));
            }
            self.ring_size = Some(hops);
        } else {
            out.send(other(port), Msg::Election { id, stage: 0, hops: hops.saturating_add(1) });
            self.best = self.rule.best(self.best, id);
            self.seen = self.seen.saturating_add(1);
        }
        self.check(out);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::harness::{Probe, decide, ring, send};
    use crate::algo::{LEFT, Role};

    fn el(id: u64, hops: u32) -> Msg {
        Msg::Election { id, stage: 0, hops }
    }

    /// A node woken by a message first sends its own id, then forwards the foreign one.
    #[test]
    fn wake_by_message_sends_own_then_forwards() {
        Probe::new(ring(AllTheWay::new, 5, Rule::Min)).on(
            LEFT,
            el(2, 1),
            &[send(RIGHT, el(5, 1)), send(RIGHT, el(2, 2))],
        );
    }

    /// Decision waits for both n (own id back) and n-1 foreign ids, in either order.
    #[test]
    fn decides_after_n_minus_one_foreign_ids_and_own_return() {
        let p = Probe::started(ring(AllTheWay::new, 5, Rule::Min)).on(LEFT, el(5, 3), &[]).on(
            LEFT,
            el(9, 1),
            &[send(RIGHT, el(9, 2))],
        );
        assert_eq!(p.node.end.decision(), None);
        p.on(LEFT, el(2, 2), &[send(RIGHT, el(2, 3)), decide(Role::Follower, 2)]);
    }

    /// Foreign message kinds are refused, not panicked on.
    #[test]
    fn rejects_other_kinds() {
        Probe::new(ring(AllTheWay::new, 1, Rule::Min)).refuses(LEFT, Msg::Notify { leader: 1 });
    }
}
