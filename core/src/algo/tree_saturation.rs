//! # Tree election by saturation (Elect_min)
//!
//! * Source: N. Santoro, *Design and Analysis of Distributed Algorithms*,
//!   Wiley 2007, ch. 2-3: the saturation technique and "Election in the Tree".
//! * Network: a tree, bidirectional FIFO links; a node knows its degree
//!   (its number of ports), not n.
//! * Winner: the minimum (Santoro), or the maximum when mirrored.
//! * Messages: exactly 3n + k* − 4, where k* is the number of nodes that
//!   wake spontaneously: n + k* − 2 wake-ups, n saturation messages, n − 2
//!   notifications; independent of the ids and of the tree's shape.
//!
//! Wake-up: an initiator sends `Wakeup` to all its neighbours; a node woken by
//! a `Wakeup` forwards it to all the others. Saturation: a node sends
//! `Saturate` (the best id of its subtree) to its last neighbour once it has
//! heard `Saturate` from all the others (a leaf at once); that neighbour is its
//! parent. Exactly two neighbouring nodes receive `Saturate` from their parent
//! too: they are saturated and both know the best id of the whole tree. Each
//! sends a notification with that id to its other neighbours, and every node
//! forwards it away from its parent. The node holding the best id leads.
//!
//! Correction to Santoro's slides: the slide has the saturated nodes exchange a
//! further `Election` message and compare their own ids, which elects the
//! better of the two *saturated* nodes, not the tree's minimum; the minimum
//! must travel with the saturation messages (Santoro's text does this) so
//! the saturated nodes know it, and no extra exchange is needed.

use super::oneshot::{self, Ending, OneShotNode, Wake};
use crate::spec::{AlgorithmSpec, Assumptions, Candidates, Extras, Provision, TREES};
use super::{AlgoError, Msg, NodeContext, Outbox, Port, Rule};
use crate::machine;

/// This algorithm's catalogue entry.
pub const SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "tree-saturation",
    title: "Tree election by saturation (Elect_min)",
    source: "N. Santoro, Design and Analysis of Distributed Algorithms, Wiley 2007, \
             ch. 2-3 (saturation; election in trees)",
    description: "Wake-up flood, then saturation: each node reports its subtree's best id to its last \
                  neighbour; the two saturated nodes know the winner and notify the tree.",
    topologies: TREES,
    assumptions: Assumptions { bidirectional: true, oriented: false, fifo: true },
    rule: Rule::Min,
    candidates: Candidates::All,
    bound_formula: "3n + k - 4",
    bound: &|n, k| 3 * n + k - 4,
    timer_events: |_| 0,
    heap_bytes_per_position: 398,
    kept: None,
    live_provision: Provision::Nodes,
    machine: machine!(TreeSaturation::new),
    extras: Extras {
        exact: Some(|n, k| 3 * n + k - 4),
        schedule_independent: true,
        ..Extras::NONE
    },
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum State {
    Asleep,
    /// Waiting for saturation messages from all but one neighbour.
    Active,
    /// Sent its saturation message to `parent`; waiting for the outcome.
    Processing {
        parent: Port,
    },
    Done,
}

/// Santoro's saturation, the part Elect_min (this file) and Elect_root
/// share: which neighbours have sent their saturation message, and the one
/// left, the node's parent, once all the others have.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Saturation {
    /// Ports a saturation message arrived on.
    heard: Vec<bool>,
    count: u32,
}

impl Saturation {
    /// Nothing heard yet on any of `degree` ports.
    pub(super) fn new(degree: u32) -> Self {
        Saturation { heard: vec![false; degree as usize], count: 0 }
    }

    /// The node's number of neighbours.
    pub(super) fn degree(&self) -> u32 {
        self.heard.len() as u32
    }

    /// A saturation message arrived on `port`; a second one there is refused.
    pub(super) fn hear(&mut self, port: Port) -> Result<(), AlgoError> {
        let heard = &mut self.heard[port as usize];
        if *heard {
            return Err(AlgoError::Invalid(format!("second saturation message on port {port}")));
        }
        *heard = true;
        self.count += 1;
        Ok(())
    }

    /// The parent, the one neighbour not heard from, once every other one
    /// has been (a leaf's only neighbour at once); `None` before.
    pub(super) fn parent(&self) -> Option<Port> {
        (self.count + 1 == self.degree()).then(|| self.heard.iter().position(|h| !h).unwrap_or(0) as Port)
    }
}

/// One node of tree saturation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TreeSaturation {
    id: u64,
    rule: Rule,
    state: State,
    best: u64,
    saturation: Saturation,
    end: Ending,
}

impl TreeSaturation {
    /// A sleeping node.
    pub fn new(c: &NodeContext) -> Self {
        TreeSaturation {
            id: c.id,
            rule: c.rule,
            state: State::Asleep,
            best: c.id,
            saturation: Saturation::new(c.ports),
            end: Ending::default(),
        }
    }

    /// Once all neighbours but one have reported, report to that one.
    fn maybe_send_up(&mut self, out: &mut Outbox) {
        if self.state == State::Active
            && let Some(parent) = self.saturation.parent()
        {
            out.send(parent, Msg::Saturate { id: self.best });
            self.state = State::Processing { parent };
        }
    }

    fn decide(&mut self, leader: u64, skip: Port, out: &mut Outbox) {
        self.end.decide_for(self.id, leader, out);
        self.state = State::Done;
        oneshot::send_all_but(self.ports(), Some(skip), Msg::Notify { leader }, out);
    }
}

impl OneShotNode for TreeSaturation {
    const NAME: &'static str = SPEC.name;
    const WAKE: Wake = Wake::OnWakeup;

    fn ports(&self) -> u32 {
        self.saturation.degree()
    }

    fn status(&self) -> &'static str {
        match self.state {
            State::Asleep => "asleep",
            State::Active => "active",
            State::Processing { .. } => "processing",
            State::Done => self.end.role_name(),
        }
    }

    /// Flood the wake-up to every neighbour but the one it came from.
    fn start(&mut self, woken_by: Option<Port>, out: &mut Outbox) {
        oneshot::send_all_but(self.ports(), woken_by, Msg::Wakeup, out);
        self.state = State::Active;
        self.maybe_send_up(out);
    }

    fn receive(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        match (msg, self.state) {
            (Msg::Saturate { id }, State::Active) => {
                self.saturation.hear(port)?;
                self.best = self.rule.best(self.best, id);
                self.maybe_send_up(out);
            }
            (Msg::Saturate { id }, State::Processing { parent }) if port == parent => {
                // Saturated: this node and its parent both know the whole tree.
                let best = self.rule.best(self.best, id);
                self.decide(best, parent, out);
            }
            (Msg::Notify { leader }, State::Processing { parent }) if port == parent => {
                self.decide(leader, parent, out)
            }
            (Msg::Saturate { .. } | Msg::Notify { .. }, state) => {
                return Err(AlgoError::Invalid(format!("{msg:?} on port {port} in state {state:?}")));
            }
            _ => return Err(Self::unexpected(msg)),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::Role;
    use crate::algo::harness::{Probe, decide, send};

    fn node(id: u64, ports: u32) -> TreeSaturation {
        TreeSaturation::new(&NodeContext { id, rule: Rule::Min, n: 5, coin: 0, ports, ..Default::default() })
    }

    /// A leaf woken by its neighbour's wake-up reports its id to that neighbour at once.
    #[test]
    fn woken_leaf_saturates_up() {
        Probe::new(node(4, 1)).on(0, Msg::Wakeup, &[send(0, Msg::Saturate { id: 4 })]);
    }

    /// An inner node forwards the wake-up, then reports the best id once all but one neighbour reported.
    #[test]
    fn inner_node_reports_to_the_last_neighbour() {
        Probe::new(node(5, 3))
            .start(&[send(0, Msg::Wakeup), send(1, Msg::Wakeup), send(2, Msg::Wakeup)])
            .on(2, Msg::Saturate { id: 7 }, &[])
            .on(0, Msg::Saturate { id: 2 }, &[send(1, Msg::Saturate { id: 2 })]);
    }

    /// A saturated node decides and notifies every neighbour but its partner; the minimum's holder leads.
    #[test]
    fn saturated_node_decides_and_notifies() {
        Probe::new(node(1, 2))
            .start(&[send(0, Msg::Wakeup), send(1, Msg::Wakeup)])
            .on(0, Msg::Saturate { id: 3 }, &[send(1, Msg::Saturate { id: 1 })])
            .on(1, Msg::Saturate { id: 2 }, &[decide(Role::Leader, 1), send(0, Msg::Notify { leader: 1 })]);
    }

    /// Messages that cannot happen on a FIFO tree are refused, not ignored.
    #[test]
    fn impossible_messages_are_errors() {
        let mut a = Probe::new(node(1, 2));
        a.refuses(0, Msg::Notify { leader: 1 });
        a.refuses(5, Msg::Wakeup);
        a.refuses(0, Msg::Probe { id: 1, stage: 1, limit: 1 });
    }
}
