//! Drive one node's state machine as the runtime would, without a network:
//! for property tests and fuzz targets that feed it hostile input.
//!
//! [`node`] builds position 0 of an algorithm's default topology the way the
//! drivers build it; [`Feeder`] hands it messages on its ports through the
//! node [`Shell`] and fires only the timers it has set, checking that no step's output runs away and that
//! the messages it holds for later stay within [`MAX_HELD`].
//!
//! [`ring_context`], [`started`] and [`election`] are what the ring
//! algorithms' unit tests build their nodes and messages with, and [`Feed`]
//! is how unit tests hand a bare state machine one input of each kind.

use super::detector::DetectorConfig;
use super::{
    AlgoError, Algorithm, Effect, Input, MAX_HELD, Msg, NodeContext, Outbox, Port, PortInfo, Role, Rule, Stable,
    StoreReply, TimerId,
};
use crate::shell::{Misstep, Output, Outputs, Shell};
use crate::spec::AlgorithmSpec;
use crate::topology::Topology;

/// One method per [`Input`], for unit tests that feed a bare state machine
/// by hand: each builds its input and calls [`Algorithm::step`], the only
/// entry point (so a test exercises exactly what the drivers call). Every
/// input but a message is always taken, so those methods return nothing;
/// [`Feed::on_leave`] answers whether the node handed something over (it
/// pushed [`Effect::HandingOver`]).
pub trait Feed: Algorithm {
    /// [`Input::Start`].
    fn on_start(&mut self, out: &mut Outbox) {
        taken(self.step(Input::Start, out));
    }

    /// [`Input::Message`]: the node may refuse it.
    fn on_message(&mut self, port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
        self.step(Input::Message { port, msg }, out)
    }

    /// [`Input::Timer`].
    fn on_timer(&mut self, timer: TimerId, out: &mut Outbox) {
        taken(self.step(Input::Timer(timer), out));
    }

    /// [`Input::Suspect`].
    fn on_suspect(&mut self, port: Port, suspected: bool, out: &mut Outbox) {
        taken(self.step(Input::Suspect { port, suspected }, out));
    }

    /// [`Input::Heartbeat`].
    fn on_heartbeat(&mut self, port: Port, term: u64, leading: bool, out: &mut Outbox) {
        taken(self.step(Input::Heartbeat { port, term, leading }, out));
    }

    /// [`Input::Leave`]: did the node hand something over?
    fn on_leave(&mut self, suspected: &[bool], out: &mut Outbox) -> bool {
        let from = out.effects().len();
        taken(self.step(Input::Leave { suspected }, out));
        out.effects()[from..].contains(&Effect::HandingOver)
    }

    /// [`Input::StoreReply`].
    fn on_store_reply(&mut self, reply: StoreReply, out: &mut Outbox) {
        taken(self.step(Input::StoreReply(reply), out));
    }

    /// [`Input::Restore`], whose effects (none, from any algorithm here) are dropped.
    fn on_restore(&mut self, stable: Stable) {
        taken(self.step(Input::Restore(stable), &mut Outbox::default()));
    }
}

impl<A: Algorithm + ?Sized> Feed for A {}

/// Only a message can be refused: any other input refused is a bug.
#[track_caller]
fn taken(result: Result<(), AlgoError>) {
    if let Err(e) = result {
        panic!("an input other than a message was refused: {e}");
    }
}

/// Position 0 (id 1 of ids 1..=n) of `spec`'s default topology on `n` nodes,
/// one-shot or kept; `None` when the topology or the kept mode does not exist.
pub fn node(spec: &AlgorithmSpec, n: u32, kept: bool) -> Option<(Box<dyn Algorithm>, u32)> {
    node_under(spec, n, kept, Rule::Max)
}

/// [`node`] under `rule`: under [`Rule::Min`] position 0 holds the best id
/// (1) instead of the worst, which takes other paths (a bully node with
/// nobody above it leads at once).
pub fn node_under(spec: &AlgorithmSpec, n: u32, kept: bool, rule: Rule) -> Option<(Box<dyn Algorithm>, u32)> {
    let topology = Topology::build(spec.default_topology(), n, 7).ok()?;
    let ids: Vec<u64> = (1..=u64::from(n)).collect();
    let info: Vec<PortInfo> =
        topology.ports(0).iter().map(|l| PortInfo { neighbour: ids[l.peer as usize], label: l.label }).collect();
    let ctx = NodeContext::new(ids[0], rule, n, 42, &info);
    let algo = match (kept, spec.kept.map(|k| k.build)) {
        (false, _) => (spec.machine.build)(&ctx),
        (true, Some(build)) => build(&ctx, DetectorConfig::LOOPBACK),
        (true, None) => return None,
    };
    Some((algo, info.len() as u32))
}

/// Every message kind of the kept leaderships with term `term`, as the
/// neighbour `from` sends it to node `to` (so it passes the checks that a
/// sender names itself), a ring collection with `count`, and the flags
/// (`leading`, `ok`, `granted`) both ways: what a forger or a fuzzer tries.
pub fn kept_messages(term: u64, from: u64, to: u64, count: u32) -> Vec<Msg> {
    let x = term;
    let mut all = vec![
        Msg::BullyElection { term: x },
        Msg::Answer { term: x },
        Msg::Coordinator { leader: from, term: x },
        Msg::RingCollect { term: x, initiator: from, best: from, count },
        Msg::NewLeader { term: x, leader: from },
        Msg::Commit { term: x, leader: from },
        Msg::VoteRequest { term: x, candidate: from },
        Msg::LeaseRenew { term: x, leader: from },
        Msg::Handover { term: x, successor: to },
        Msg::Handover { term: x, successor: from },
        Msg::AppendEntries { term: x, leader: from, round: 1 },
        Msg::TimeoutNow { term: x },
    ];
    for f in [false, true] {
        all.extend([
            Msg::Heartbeat { term: x, leading: f, watching: f },
            Msg::Ack { term: x, leader: to, ok: f },
            Msg::Vote { term: x, candidate: to, granted: f },
            Msg::LeaseAck { term: x, granted: f },
            Msg::RaftVoteRequest {
                term: x,
                candidate: from,
                last_log_term: 0,
                last_log_index: 0,
                pre_vote: f,
                transfer: f,
            },
            Msg::RaftVote { term: x, granted: f, pre_vote: f },
            Msg::AppendAck { term: x, success: f, round: 1, last_log_term: 0, last_log_index: 0 },
        ]);
    }
    all
}

/// Feeds a state machine, through the [`Shell`] every driver uses, and
/// keeps track of its timers.
#[derive(Debug)]
pub struct Feeder {
    node: Shell<Box<dyn Algorithm>>,
    ports: u32,
    out: Outputs,
    /// The timers set and not yet fired, with their generations, in the order first set.
    timers: Vec<(TimerId, u64)>,
    bound: usize,
}

impl Feeder {
    /// A feeder of `algo`, which has `ports` ports.
    pub fn new(algo: Box<dyn Algorithm>, ports: u32) -> Feeder {
        Feeder {
            node: Shell::new(algo),
            ports,
            out: Outputs::default(),
            timers: Vec::new(),
            bound: 8 * ports as usize + 32,
        }
    }

    /// Wake the node.
    pub fn start(&mut self) {
        self.node.start(&mut self.out);
        self.settle();
    }

    /// A message on port `port % ports` (nothing on a portless node). The
    /// algorithm may refuse it (`Err`), as a node rejects an envelope; it may not panic.
    pub fn message(&mut self, port: usize, msg: Msg) -> Result<(), AlgoError> {
        if self.ports == 0 {
            return Ok(());
        }
        let result = self.node.message((port % self.ports as usize) as u32, msg, &mut self.out);
        self.settle();
        result
    }

    /// How many messages the node holds for later.
    pub fn held(&self) -> usize {
        self.node.held()
    }

    /// Fire the `i % count`-th of the timers the node has set and not cancelled (nothing if none).
    pub fn timer(&mut self, i: usize) {
        let node = &self.node;
        self.timers.retain(|&(t, g)| node.timer_due(t, g));
        if !self.timers.is_empty() {
            let (t, g) = self.timers.remove(i % self.timers.len());
            self.node.timer(t, g, &mut self.out);
            self.settle();
        }
    }

    /// Check the step's output and what the node holds are bounded, then note its timers.
    fn settle(&mut self) {
        let n = self.out.effect_count();
        assert!(n <= self.bound, "{n} effects in one step (bound {}): {:?}", self.bound, self.out.as_slice());
        let held = self.node.held();
        assert!(held <= MAX_HELD, "{held} messages held (at most {MAX_HELD}): {:?}", self.node.algorithm());
        for o in self.out.drain() {
            match o {
                Output::SetTimer { timer, generation, .. } => match self.timers.iter_mut().find(|(t, _)| *t == timer) {
                    Some(slot) => slot.1 = generation,
                    None => self.timers.push((timer, generation)),
                },
                // A forged message may well make a node decide again; an unknown timer is a bug.
                Output::Misstep(m @ Misstep::NoSuchTimer { .. }) => panic!("{m}"),
                _ => {}
            }
        }
    }
}

/// The context a unit test gives a ring node: id `id` under `rule`, two
/// ports, coin 0, no port information and n = 8 (the ring algorithms look at
/// neither n nor their neighbours' ids).
pub fn ring_context(id: u64, rule: Rule) -> NodeContext<'static> {
    NodeContext { id, rule, n: 8, coin: 0, ports: 2, port_info: &[], options: Default::default() }
}

/// The node `new` builds with id `id` on a ring of 8 electing under `rule`
/// ([`ring_context`]): `ring(Stages::new, 5, Rule::Max)`.
pub fn ring<A>(new: impl FnOnce(&NodeContext) -> A, id: u64, rule: Rule) -> A {
    new(&ring_context(id, rule))
}

/// `node` woken as an initiator, and an outbox without what it sent on
/// waking (the usual start of a unit test, which looks at what follows).
pub fn started<A: Algorithm>(mut node: A) -> (A, Outbox) {
    let mut out = Outbox::default();
    node.on_start(&mut out);
    out.clear();
    (node, out)
}

/// One node under a unit test, fed one input at a time, each input
/// asserting the exact effects it gives (as openraft's engine tests compare
/// the exact command list): `Probe::started(node(5)).on(LEFT, m, &[send(RIGHT, m)])`.
#[derive(Debug)]
pub struct Probe<A> {
    /// The node, for checks of its own fields.
    pub node: A,
    out: Outbox,
}

impl<A: Algorithm> Probe<A> {
    /// `node`, not started.
    pub fn new(node: A) -> Self {
        Probe { node, out: Outbox::default() }
    }

    /// `node` woken as an initiator, what it sent on waking set aside (see
    /// [`started`]).
    pub fn started(node: A) -> Self {
        let (node, out) = started(node);
        Probe { node, out }
    }

    /// Start it; exactly `expect` follows.
    #[track_caller]
    pub fn start(mut self, expect: &[Effect]) -> Self {
        self.out.clear();
        self.node.on_start(&mut self.out);
        assert_eq!(self.out.effects(), expect, "after a start");
        self
    }

    /// `msg` on `port` is taken, and exactly `expect` follows.
    #[track_caller]
    pub fn on(mut self, port: Port, msg: Msg, expect: &[Effect]) -> Self {
        self.out.clear();
        if let Err(e) = self.node.on_message(port, msg, &mut self.out) {
            panic!("{msg:?} on port {port} refused: {e}");
        }
        assert_eq!(self.out.effects(), expect, "after {msg:?} on port {port}");
        self
    }

    /// `msg` on `port` is refused; the error.
    #[track_caller]
    pub fn refuses(&mut self, port: Port, msg: Msg) -> AlgoError {
        self.out.clear();
        match self.node.on_message(port, msg, &mut self.out) {
            Ok(()) => panic!("{msg:?} on port {port} taken, with {:?}", self.out.effects()),
            Err(e) => e,
        }
    }

    /// Its state is named `name`.
    #[track_caller]
    pub fn in_state(self, name: &str) -> Self {
        assert_eq!(self.node.state(), name);
        self
    }
}

/// The effect of sending `msg` on `port`.
pub fn send(port: Port, msg: Msg) -> Effect {
    Effect::Send { port, msg }
}

/// The effect of deciding `role` for `leader`.
pub fn decide(role: Role, leader: u64) -> Effect {
    Effect::Decide(super::Decision { role, leader })
}

/// The election message carrying `id` at `stage`, without a hop count: the
/// id message of most ring algorithms.
pub fn election(id: u64, stage: u32) -> Msg {
    Msg::Election { id, stage, hops: 0 }
}

/// The case sweeps the algorithms' exhaustive tests share.
#[cfg(test)]
pub(crate) mod sweeps;

#[cfg(test)]
mod tests {
    use super::*;

    /// A started node has woken (an AsFar node is awake) and the outbox it
    /// comes with is empty, though waking sent its id.
    #[test]
    fn started_wakes_and_clears() {
        let ctx = ring_context(7, Rule::Min);
        assert_eq!((ctx.id, ctx.rule, ctx.ports, ctx.coin, ctx.port_info.len()), (7, Rule::Min, 2, 0, 0));
        let (node, out) = started(crate::algo::as_far::AsFar::new(&ctx));
        assert_eq!(node.state(), "awake");
        assert!(out.effects().is_empty());
        assert_eq!(election(4, 2), Msg::Election { id: 4, stage: 2, hops: 0 });
    }
}
