//! # Pieces shared by the kept-leadership algorithms
//!
//! [`bully`](super::bully), [`repaired_ring`](super::repaired_ring),
//! [`zookeeper`](super::zookeeper) and [`chubby`](super::chubby) each keep
//! their own state machine, but they sit on the same kind of node: a member
//! of a complete network that knows the id behind every port
//! ([`NodeContext::port_info`]), keeps a timer it must be able to cancel, and
//! refuses a message no correct node sends. Those parts are written once
//! here, so a fix to one (say, how a stale timer is told apart) reaches all
//! four. What they announce is shared already: [`super::Reports`].

use std::ops::Deref;

use super::{AlgoError, Effect, Msg, NodeContext, Outbox, Port, Rule, TimerId};

/// The id behind each port, in port order.
///
/// It derefs to the slice of ids, so `peers[p]`, `peers.get(p)` and
/// `peers.len()` read as on the slice it replaces.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Peers(Box<[u64]>);

impl Peers {
    /// The peers of the node `c` describes (from [`NodeContext::port_info`]).
    pub fn new(c: &NodeContext) -> Peers {
        Peers(c.port_info.iter().map(|p| p.neighbour).collect())
    }

    /// The id of the node a message on `port` came from; a port this node
    /// does not have is [`AlgoError::BadPort`] (checked before the message
    /// touches any state).
    pub fn sender(&self, port: Port) -> Result<u64, AlgoError> {
        self.0.get(port as usize).copied().ok_or(AlgoError::BadPort { port })
    }

    /// Send `msg` on every port, in port order.
    pub fn broadcast(&self, msg: Msg, out: &mut Outbox) {
        for port in 0..self.0.len() as Port {
            out.send(port, msg);
        }
    }

    /// The ports whose node beats `id` under `rule`, in port order.
    pub fn better(&self, rule: Rule, id: u64) -> Box<[Port]> {
        (0..self.0.len() as Port).filter(|&p| rule.beats(self.0[p as usize], id)).collect()
    }

    /// The best id under `rule` among the ports `admit` admits (a leaving
    /// leader's successor: the best node it believes alive), if any.
    pub fn best_where(&self, rule: Rule, admit: impl Fn(Port) -> bool) -> Option<u64> {
        (0..self.0.len() as Port)
            .filter(|&p| admit(p))
            .map(|p| self.0[p as usize])
            .reduce(|a, b| if rule.beats(b, a) { b } else { a })
    }

    /// A majority, ⌊n/2⌋ + 1, of the membership: `n` nodes, or this node and
    /// its peers if a context claims fewer (a quorum must still intersect
    /// every other one among the nodes that really answer).
    pub fn majority(&self, n: u32) -> usize {
        (n as usize).max(self.0.len() + 1) / 2 + 1
    }
}

impl Deref for Peers {
    type Target = [u64];

    fn deref(&self) -> &[u64] {
        &self.0
    }
}

/// A timer the algorithm tracks, so that it can cancel it and ignore a
/// firing the driver queued before it was replaced or cancelled. It holds
/// at most one pending id: the one timer of bully or ZooKeeper, or one
/// timer of several that a node keeps apart (Chubby's back-off).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct OneTimer(Option<TimerId>);

impl OneTimer {
    /// Set `timer`, cancelling the pending one first (whichever it is):
    /// for a node whose timers replace each other.
    pub fn replace(&mut self, timer: TimerId, after_ms: u64, out: &mut Outbox) {
        self.stop(out);
        self.set(timer, after_ms, out);
    }

    /// Set `timer` without cancelling anything: for a node that only ever
    /// sets this one id here, whose new [`Effect::SetTimer`] replaces a
    /// pending one in the driver.
    pub fn set(&mut self, timer: TimerId, after_ms: u64, out: &mut Outbox) {
        self.0 = Some(timer);
        out.push(Effect::SetTimer { timer, after_ms });
    }

    /// Cancel the pending timer, if any.
    pub fn stop(&mut self, out: &mut Outbox) {
        if let Some(timer) = self.0.take() {
            out.push(Effect::CancelTimer { timer });
        }
    }

    /// `timer` fired: is it the one pending? If so it is pending no more;
    /// if not, it was replaced or cancelled after the driver queued it, and
    /// the caller ignores it.
    pub fn fired(&mut self, timer: TimerId) -> bool {
        let pending = self.0 == Some(timer);
        if pending {
            self.0 = None;
        }
        pending
    }
}

/// Mark a node as leaving ([`Input::Leave`](super::Input::Leave)):
/// `true` the first time, `false` once it is (a second leave hands nothing over).
pub fn start_leaving(leaving: &mut bool) -> bool {
    !std::mem::replace(leaving, true)
}

/// The error for `msg` from node `from`, which node `id` in state `state`
/// cannot get from a correct sender (a bully election from a better node, a
/// claim to lead made for somebody else, ...).
pub fn invalid(algorithm: &str, msg: Msg, from: u64, id: u64, state: &str) -> AlgoError {
    AlgoError::Invalid(format!("{algorithm}: {msg:?} from {from} cannot reach node {id} ({state})"))
}

/// Helpers for the kept algorithms' unit tests: a node built over given
/// peers, and the effects they expect most.
#[cfg(test)]
pub(crate) mod testing {
    use crate::algo::harness::Feed;
    use crate::algo::{Algorithm, Decision, Effect, Leadership, Msg, NodeContext, Outbox, Port, PortInfo, Role, Rule};
    use crate::topology::{IdOrder, Topology};

    /// Node 3 of {1..5}, its ports leading to 5, 1, 4 and 2 (its better
    /// nodes, 5 and 4, on ports 0 and 2).
    pub(crate) const PEERS_OF_3: [u64; 4] = [5, 1, 4, 2];

    /// What `build` makes of node `id` (rule max) of `peers.len() + 1`
    /// nodes, whose ports lead to `peers` in port order.
    pub(crate) fn node<A>(id: u64, peers: &[u64], build: impl FnOnce(&NodeContext) -> A) -> A {
        let info: Vec<PortInfo> = peers.iter().map(|&p| PortInfo { neighbour: p, ..Default::default() }).collect();
        build(&NodeContext {
            id,
            rule: Rule::Max,
            n: peers.len() as u32 + 1,
            ports: peers.len() as u32,
            port_info: &info,
            ..Default::default()
        })
    }

    /// The complete network of `n` nodes, ids in a random order seeded by
    /// `n`, and every position (to start them all).
    pub(crate) fn complete(n: u32) -> (Topology, Vec<u64>, Vec<u32>) {
        let ids = IdOrder::Random(u64::from(n)).arrange(n).unwrap();
        (Topology::complete(n).unwrap(), ids, (0..n).collect())
    }

    /// `node` after [`Input::Start`](crate::algo::Input::Start), and the outbox holding what it did.
    pub(crate) fn started<A: Algorithm>(mut node: A) -> (A, Outbox) {
        let mut out = Outbox::default();
        node.on_start(&mut out);
        (node, out)
    }

    /// `msg` sent on `port`.
    pub(crate) fn send(port: Port, msg: Msg) -> Effect {
        Effect::Send { port, msg }
    }

    /// The belief `(term, leader)` announced.
    pub(crate) fn lead(term: u64, leader: Option<u64>) -> Effect {
        Effect::Lead(Leadership { term, leader })
    }

    /// The first decision: `leader` leads, this node has `role`.
    pub(crate) fn decide(role: Role, leader: u64) -> Effect {
        Effect::Decide(Decision { role, leader })
    }
}
