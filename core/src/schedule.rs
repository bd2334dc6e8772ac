//! # Schedules: one run, step by step, replayed exactly
//!
//! A [`Step`] is one thing that happens in a run: a node wakes, a message is
//! delivered, a timer fires, an operation reaches the election's store or
//! its answer comes back, time passes, or a fault strikes. A list of them
//! is a *schedule*, what the exhaustive checker (`ringleader-check`) reports
//! as a counterexample. [`replay`] runs a schedule on the algorithm's own
//! state machines inside the node [`Shell`], on its own
//! bookkeeping of links and timers (apart from the checker's), and judges
//! the end with the simulator's invariants ([`crate::invariants`]): so a
//! counterexample is confirmed by a second driver, and a step the schedule
//! names but the run cannot take (a message not in flight, a timer not
//! pending) is an error, not a silent skip.
//!
//! Semantics (the checker's): a message goes on the link of its sender's
//! port when sent, unless its receiver is crashed or across the partition
//! (then it is lost); a crash loses what is in flight to the node and
//! keeps only its persisted record; a recovery starts a new incarnation
//! with that record; a partition loses what is in flight across it.
//! [`Step::Tick`] only moves the clock: a timer fires when the schedule
//! says so. The election's store (for an algorithm that keeps a record in
//! one, [`crate::protocol::store`]) is the simulator's: one linearizable
//! [`MemStore`], beyond partitions; an operation goes on its way when put
//! out, takes effect when the schedule says it reaches the store, and its
//! answer goes back on its way to the incarnation that asked (lost if that
//! one crashed meanwhile); an operation or an answer may be lost on the
//! way ([`Step::StoreLost`]).

use std::collections::BTreeMap;

use crate::algo::detector::DetectorConfig;
use crate::algo::{Algorithm, Decision, Leadership, Msg, NodeContext, Port, PortInfo, Rule, TimerId};
use crate::invariants;
use crate::protocol::store::{LeaseRecord, MemStore, StoreOp, StoreReply};
use crate::shell::{Output, Outputs, Shell};
use crate::spec::AlgorithmSpec;
use crate::topology::Topology;

/// One step of a schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// The initiator at this position wakes.
    Start(u32),
    /// The message `msg`, sent by position `from` on its port `port`, is
    /// delivered (to the neighbour behind that port).
    Deliver {
        /// Sending position.
        from: u32,
        /// The sender's port.
        port: Port,
        /// The message.
        msg: Msg,
    },
    /// A timer of the node at position `node` fires.
    Fire {
        /// The position.
        node: u32,
        /// The timer.
        timer: TimerId,
    },
    /// Time passes: this many ticks (of the longest message delay).
    Tick(u32),
    /// The node at this position crashes.
    Crash(u32),
    /// The crashed node at this position recovers as a new incarnation.
    Recover(u32),
    /// A message in flight is lost.
    Lose {
        /// Sending position.
        from: u32,
        /// The sender's port.
        port: Port,
        /// The message.
        msg: Msg,
    },
    /// A message in flight is duplicated.
    Duplicate {
        /// Sending position.
        from: u32,
        /// The sender's port.
        port: Port,
        /// The message.
        msg: Msg,
    },
    /// The nodes whose bits are set are cut off from the others.
    Partition(u32),
    /// The partition heals.
    Heal,
    /// What travels between the node at `node` and the election's store
    /// arrives: its operation reaches the store, which applies it at once
    /// and sends its answer back, or the store's answer reaches the node.
    Store {
        /// The position whose operation or answer it is.
        node: u32,
        /// The operation or the answer.
        item: StoreItem,
    },
    /// An operation of the node at `node` on its way to the store, or the
    /// store's answer on its way back to it, is lost (within the budget of
    /// lost messages).
    StoreLost {
        /// The position whose operation or answer it is.
        node: u32,
        /// The operation or the answer.
        item: StoreItem,
    },
}

/// What travels between a node and the election's store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StoreItem {
    /// An operation on its way to the store.
    Op(StoreOp),
    /// The store's answer on its way back.
    Answer(StoreReply),
}

impl StoreItem {
    /// The item in words, naming the node whose item it is `who`, and the
    /// operation by its tag: "id 2's renewal of the lease (op 3, if still
    /// revision 3)", "the store's answer to id 2's op 3 (written: revision
    /// 4, held by id 2)".
    pub fn in_words(&self, who: &str) -> String {
        let holder = |r: &LeaseRecord| match r.holder {
            0 => "released".to_string(),
            h => format!("held by id {h}"),
        };
        match *self {
            StoreItem::Op(StoreOp::Get { seq }) => format!("{who}'s read of the lease (op {seq})"),
            StoreItem::Op(StoreOp::Put { seq, expect, record, acquire }) => {
                let what = match (record.holder, acquire) {
                    (0, _) => "release".to_string(),
                    (_, true) => format!("take-over (id {}, transitions {})", record.holder, record.transitions),
                    (_, false) => "renewal".to_string(),
                };
                let on = if expect == 0 { "if none yet".to_string() } else { format!("if still revision {expect}") };
                format!("{who}'s {what} of the lease (op {seq}, {on})")
            }
            StoreItem::Answer(StoreReply::Failed { seq }) => format!("the store's failure answer to {who}'s op {seq}"),
            StoreItem::Answer(StoreReply::Done { seq, written, revision, record }) => {
                let now = match record {
                    Some(r) => format!("revision {revision}, {}", holder(&r)),
                    None => "no record".to_string(),
                };
                let done = if written { "written: " } else { "" };
                format!("the store's answer to {who}'s op {seq} ({done}{now})")
            }
        }
    }
}

impl Step {
    /// The step in words, naming nodes by their ids (`ids` in position
    /// order, on `topo`): "id 3 crashes", "id 1's election to id 2 is
    /// lost", "id 2 receives election (id 1, stage 1) from id 1".
    pub fn describe(&self, ids: &[u64], topo: &Topology) -> String {
        let id = |p: u32| ids.get(p as usize).map_or_else(|| format!("position {p}"), |id| format!("id {id}"));
        let to = |from: u32, port: Port| topo.ports(from).get(port as usize).map_or(u32::MAX, |l| l.peer);
        let what = Msg::in_words;
        match *self {
            Step::Start(p) => format!("{} wakes up and starts", id(p)),
            Step::Deliver { from, port, msg } => {
                format!("{} receives {} from {}", id(to(from, port)), what(&msg), id(from))
            }
            Step::Fire { node, timer } if crate::algo::detector::is_reserved(timer) => {
                format!("{}'s failure-detector timer fires", id(node))
            }
            Step::Fire { node, timer } => format!("{}'s timer {timer} fires", id(node)),
            Step::Tick(1) => "time passes (one longest message delay)".to_string(),
            Step::Tick(k) => format!("time passes ({k} longest message delays)"),
            Step::Crash(p) => format!("{} crashes", id(p)),
            Step::Recover(p) => format!("{} recovers (a new incarnation)", id(p)),
            Step::Lose { from, port, msg } => {
                format!("{}'s {} to {} is lost", id(from), what(&msg), id(to(from, port)))
            }
            Step::Duplicate { from, port, msg } => {
                format!("{}'s {} to {} is duplicated", id(from), what(&msg), id(to(from, port)))
            }
            Step::Partition(side) => {
                let cut: Vec<String> = (0..topo.len()).filter(|p| side >> p & 1 == 1).map(id).collect();
                format!("{} cut off from the others", cut.join(", "))
            }
            Step::Heal => "the partition heals".to_string(),
            Step::Store { node, item: item @ StoreItem::Op(_) } => {
                format!("{} reaches the store", item.in_words(&id(node)))
            }
            Step::Store { node, item: item @ StoreItem::Answer(_) } => {
                format!("{} reaches {}", item.in_words(&id(node)), id(node))
            }
            Step::StoreLost { node, item } => format!("{} is lost", item.in_words(&id(node))),
        }
    }

    /// Is this step a fault (or the end of one: a recovery, a heal)?
    pub fn is_fault(&self) -> bool {
        matches!(
            self,
            Step::Crash(_)
                | Step::Recover(_)
                | Step::Lose { .. }
                | Step::Duplicate { .. }
                | Step::Partition(_)
                | Step::Heal
                | Step::StoreLost { .. }
        )
    }
}

/// How a replayed schedule ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replayed {
    /// Each position's first decision.
    pub decisions: Vec<Option<Decision>>,
    /// Each position's last belief (`None` for a crashed node).
    pub beliefs: Vec<Option<Leadership>>,
    /// Every belief announced, in order: (position, belief).
    pub timeline: Vec<(u32, Leadership)>,
    /// Messages sent.
    pub sent: u64,
    /// Messages, store operations and store answers still in flight at the end.
    pub in_flight: usize,
    /// What the simulator's invariants say about the end: two leaders (of
    /// a one-shot election, or at once of a leased leadership), two leaders
    /// of one term, decided nodes that disagree, a node that erred.
    pub violations: Vec<String>,
}

/// A step the schedule names that the run cannot take.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("step {index} ({step:?}) cannot be taken: {why}")]
pub struct ReplayError {
    /// The step's index in the schedule (0 first).
    pub index: usize,
    /// The step.
    pub step: Step,
    /// Why not.
    pub why: Cannot,
}

/// Why a replayed step cannot be taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Cannot {
    /// The step names a position the election does not have.
    #[error("no such position")]
    NoSuchPosition,
    /// A start of a node that started already.
    #[error("already started")]
    AlreadyStarted,
    /// Nothing is in flight on the link the step names.
    #[error("nothing in flight there")]
    NothingInFlight,
    /// The message is not the oldest on a FIFO link.
    #[error("not the first in flight on a FIFO link")]
    NotFirstOnFifo,
    /// The message, operation or answer is not in flight.
    #[error("not in flight")]
    NotInFlight,
    /// No such timer is pending.
    #[error("no such timer pending")]
    NoTimer,
    /// The timer was set again or cancelled since.
    #[error("the timer was replaced or cancelled")]
    StaleTimer,
    /// A crash of a node that is down.
    #[error("not a live position")]
    NotLive,
    /// A recovery of a node that is up.
    #[error("not a crashed position")]
    NotCrashed,
}

/// Replay `steps` on `spec`'s nodes (its kept mode behind detector `kept`,
/// or its one-shot mode) on `topology` with `ids`, under `rule`; messages
/// on FIFO links must be delivered in order when `fifo`. The nodes draw
/// the random bits of seed 0: [`replay_seeded`] replays a schedule found
/// with another seed.
pub fn replay(
    spec: &AlgorithmSpec,
    topology: &Topology,
    ids: &[u64],
    rule: Rule,
    kept: Option<DetectorConfig>,
    fifo: bool,
    steps: &[Step],
) -> Result<Replayed, ReplayError> {
    replay_seeded(spec, topology, ids, rule, kept, fifo, 0, steps)
}

/// [`replay`] with the nodes' random bits of `seed` ([`NodeContext::coin`]
/// of an election of that seed): a randomised algorithm's schedule means
/// the same draws only under the seed it was found with.
#[allow(clippy::too_many_arguments)]
pub fn replay_seeded(
    spec: &AlgorithmSpec,
    topology: &Topology,
    ids: &[u64],
    rule: Rule,
    kept: Option<DetectorConfig>,
    fifo: bool,
    seed: u64,
    steps: &[Step],
) -> Result<Replayed, ReplayError> {
    let mut run = Run::new(spec, topology, ids, rule, kept, fifo, seed);
    for (index, &step) in steps.iter().enumerate() {
        let fail = |why: Cannot| ReplayError { index, step, why };
        if let Some(p) = run.take(step).map_err(fail)? {
            run.outputs(p);
        }
    }
    Ok(run.finish())
}

/// A replay under way: the nodes, what is in flight on each link, the timers pending, who is down
/// and the partition, and what the run has shown so far.
struct Run<'a> {
    spec: &'a AlgorithmSpec,
    topology: &'a Topology,
    ids: &'a [u64],
    rule: Rule,
    kept: Option<DetectorConfig>,
    fifo: bool,
    /// The nodes' random bits are an election of this seed's.
    seed: u64,
    info: Vec<PortInfo>,
    nodes: Vec<Shell<Box<dyn Algorithm>>>,
    links: BTreeMap<(u32, Port), Vec<Msg>>,
    timers: BTreeMap<(u32, TimerId), u64>,
    down: Vec<bool>,
    side: Option<u32>,
    /// The election's store, the operations on their way to it (with
    /// whether their answer still has somewhere to go: not once their
    /// node crashed), and the answers on their way back.
    store: MemStore,
    to_store: Vec<(u32, StoreOp, bool)>,
    from_store: Vec<(u32, StoreReply)>,
    out: Outputs,
    r: Replayed,
}

impl<'a> Run<'a> {
    fn new(
        spec: &'a AlgorithmSpec,
        topology: &'a Topology,
        ids: &'a [u64],
        rule: Rule,
        kept: Option<DetectorConfig>,
        fifo: bool,
        seed: u64,
    ) -> Run<'a> {
        let n = topology.len();
        let mut run = Run {
            spec,
            topology,
            ids,
            rule,
            kept,
            fifo,
            seed,
            info: Vec::new(),
            nodes: Vec::with_capacity(n as usize),
            links: BTreeMap::new(),
            timers: BTreeMap::new(),
            down: vec![false; n as usize],
            side: None,
            store: MemStore::default(),
            to_store: Vec::new(),
            from_store: Vec::new(),
            out: Outputs::default(),
            r: Replayed {
                decisions: Vec::new(),
                beliefs: Vec::new(),
                timeline: Vec::new(),
                sent: 0,
                in_flight: 0,
                violations: Vec::new(),
            },
        };
        for p in 0..n {
            let ports = topology.ports(p).len() as Port;
            let receive_only =
                topology.ports(p).iter().enumerate().filter(|(_, l)| !l.outgoing).map(|(q, _)| q as Port);
            let node = Shell::new(run.build(p)).with_links(ports, receive_only.collect::<Vec<_>>());
            run.nodes.push(node);
        }
        run
    }

    /// A fresh state machine for position `p` (its kept mode behind the detector, or its one-shot mode).
    fn build(&mut self, p: u32) -> Box<dyn Algorithm> {
        let ctx = NodeContext::at(self.topology, self.ids, p, self.rule, self.seed, &mut self.info);
        match (self.kept, self.spec.kept.map(|k| k.build)) {
            (Some(d), Some(b)) => b(&ctx, d),
            _ => (self.spec.machine.build)(&ctx),
        }
    }

    /// Does the partition cut the link between `a` and `b`?
    fn cut(&self, a: u32, b: u32) -> bool {
        self.side.is_some_and(|s| (s >> a & 1) != (s >> b & 1))
    }

    /// Take `step`: the position whose outputs it made, if any, or why it cannot be taken.
    fn take(&mut self, step: Step) -> Result<Option<u32>, Cannot> {
        match step {
            Step::Start(p) => {
                let node = self.nodes.get_mut(p as usize).ok_or(Cannot::NoSuchPosition)?;
                if node.started() {
                    return Err(Cannot::AlreadyStarted);
                }
                node.start(&mut self.out);
                Ok(Some(p))
            }
            Step::Deliver { from, port, msg } | Step::Lose { from, port, msg } => {
                let fifo = self.fifo;
                let link = self.links.get_mut(&(from, port)).ok_or(Cannot::NothingInFlight)?;
                let k = match link.iter().position(|&m| m == msg) {
                    Some(k) if k == 0 || !fifo || matches!(step, Step::Lose { .. }) => k,
                    Some(_) => return Err(Cannot::NotFirstOnFifo),
                    None => return Err(Cannot::NotInFlight),
                };
                link.remove(k);
                let Step::Deliver { .. } = step else { return Ok(None) };
                let to = self.topology.ports(from)[port as usize];
                if let Err(e) = self.nodes[to.peer as usize].message(to.remote_port, msg, &mut self.out) {
                    let (by, sender) = (self.ids[to.peer as usize], self.ids[from as usize]);
                    self.r.violations.push(format!("id {by} refused {} from id {sender}: {e}", msg.in_words()));
                }
                Ok(Some(to.peer))
            }
            Step::Duplicate { from, port, msg } => {
                let link = self.links.get_mut(&(from, port)).ok_or(Cannot::NothingInFlight)?;
                if !link.contains(&msg) {
                    return Err(Cannot::NotInFlight);
                }
                link.push(msg);
                Ok(None)
            }
            Step::Fire { node, timer } => {
                let generation = self.timers.remove(&(node, timer)).ok_or(Cannot::NoTimer)?;
                if !self.nodes[node as usize].timer(timer, generation, &mut self.out) {
                    return Err(Cannot::StaleTimer);
                }
                Ok(Some(node))
            }
            Step::Tick(_) => Ok(None),
            Step::Crash(p) => {
                if self.down.get(p as usize) != Some(&false) {
                    return Err(Cannot::NotLive);
                }
                self.down[p as usize] = true;
                let fresh = self.build(p);
                self.nodes[p as usize].forget(fresh);
                self.timers.retain(|&(q, _), _| q != p);
                // Its operations still reach the store; no answer reaches it.
                self.from_store.retain(|&(q, _)| q != p);
                self.to_store.iter_mut().filter(|(q, ..)| *q == p).for_each(|(.., answer)| *answer = false);
                let topology = self.topology;
                for (&(from, port), link) in &mut self.links {
                    if topology.ports(from)[port as usize].peer == p {
                        link.clear();
                    }
                }
                Ok(None)
            }
            Step::Recover(p) => {
                if self.down.get(p as usize) != Some(&true) {
                    return Err(Cannot::NotCrashed);
                }
                self.down[p as usize] = false;
                let fresh = self.build(p);
                self.nodes[p as usize].restart(fresh, &mut self.out);
                Ok(Some(p))
            }
            Step::Partition(s) => {
                self.side = Some(s);
                let topology = self.topology;
                let cut = |a: u32, b: u32| (s >> a & 1) != (s >> b & 1);
                for (&(from, port), link) in &mut self.links {
                    if cut(from, topology.ports(from)[port as usize].peer) {
                        link.clear();
                    }
                }
                Ok(None)
            }
            Step::Heal => {
                self.side = None;
                Ok(None)
            }
            Step::Store { node, item: StoreItem::Op(op) } => {
                let k = self.to_store.iter().position(|&(q, o, _)| (q, o) == (node, op)).ok_or(Cannot::NotInFlight)?;
                let (_, _, answer) = self.to_store.remove(k);
                // The writer's clock stamps nothing a replay reads: 0.
                let reply = self.store.apply(op, 0);
                if answer {
                    self.from_store.push((node, reply));
                }
                Ok(None)
            }
            Step::Store { node, item: StoreItem::Answer(reply) } => {
                let k = self.from_store.iter().position(|&a| a == (node, reply)).ok_or(Cannot::NotInFlight)?;
                self.from_store.remove(k);
                self.nodes[node as usize].store_reply(reply, &mut self.out);
                Ok(Some(node))
            }
            Step::StoreLost { node, item: StoreItem::Op(op) } => {
                let k = self.to_store.iter().position(|&(q, o, _)| (q, o) == (node, op)).ok_or(Cannot::NotInFlight)?;
                self.to_store.remove(k);
                Ok(None)
            }
            Step::StoreLost { node, item: StoreItem::Answer(reply) } => {
                let k = self.from_store.iter().position(|&a| a == (node, reply)).ok_or(Cannot::NotInFlight)?;
                self.from_store.remove(k);
                Ok(None)
            }
        }
    }

    /// Hand out what position `p`'s step made: messages onto their links (unless the receiver is down or
    /// cut off), timers, beliefs and missteps; stale timers are dropped.
    fn outputs(&mut self, p: u32) {
        let outputs: Vec<Output> = self.out.drain().collect();
        for o in outputs {
            match o {
                Output::Send { port, msg } => {
                    self.r.sent += 1;
                    let to = self.topology.ports(p)[port as usize].peer;
                    if !self.down[to as usize] && !self.cut(p, to) {
                        self.links.entry((p, port)).or_default().push(msg);
                    }
                }
                Output::SetTimer { timer, generation, .. } => {
                    self.timers.insert((p, timer), generation);
                }
                Output::Lead(l) => self.r.timeline.push((p, l)),
                Output::Misstep(m) => self.r.violations.push(format!("position {p}: {m}")),
                Output::Store(op) => self.to_store.push((p, op, true)),
                Output::Decided(_) | Output::BeliefEnded(_) => {}
            }
        }
        // A timer a later set or a cancel made stale will not fire.
        let nodes = &self.nodes;
        self.timers.retain(|&(q, t), g| nodes[q as usize].timer_due(t, *g));
    }

    /// How the run ended, with what the simulator's invariants say of it.
    fn finish(self) -> Replayed {
        let Run { spec, nodes, links, down, kept, ids, to_store, from_store, mut r, .. } = self;
        r.in_flight = links.values().map(Vec::len).sum::<usize>() + to_store.len() + from_store.len();
        r.decisions = nodes.iter().map(|s| s.decision()).collect();
        r.beliefs = nodes.iter().zip(&down).map(|(s, &d)| if d { None } else { s.leadership() }).collect();
        let live: Vec<Option<Decision>> =
            r.decisions.iter().zip(&down).map(|(d, &x)| if x { None } else { *d }).collect();
        let checks = [
            invariants::at_most_one_leader(if kept.is_some() { &[] } else { &live[..] }),
            invariants::one_leader_per_term(ids, &r.timeline),
            invariants::one_belief_per_term(&r.beliefs),
        ];
        r.violations.extend(checks.into_iter().filter_map(Result::err).map(|v| v.to_string()));
        // A leased leadership: never two leaders at once, of any term.
        if kept.is_some() && spec.kept.is_some_and(|k| k.leased()) {
            let leading: Vec<usize> =
                (0..ids.len()).filter(|&p| r.beliefs[p].is_some_and(|b| b.leader == Some(ids[p]))).collect();
            if leading.len() > 1 {
                let positions = leading[..leading.len().min(8)].to_vec();
                r.violations
                    .push(invariants::Violation::SeveralLeaders { count: leading.len(), positions }.to_string());
            }
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::TopologyKind;

    /// Every kind of step reads as words that name nodes by their ids (not positions) and say
    /// what a message carries, as the checker's users read them on the page and in the CLI.
    #[test]
    fn steps_read_as_words_with_ids() {
        let topo = Topology::build(TopologyKind::RingUni, 3, 0).unwrap();
        let ids = [7, 3, 5];
        let msg = Msg::Election { id: 7, stage: 1, hops: 0 };
        let words = |s: Step| s.describe(&ids, &topo);
        assert_eq!(words(Step::Start(0)), "id 7 wakes up and starts");
        let right = crate::protocol::RIGHT;
        assert_eq!(
            words(Step::Deliver { from: 0, port: right, msg }),
            "id 3 receives election (id 7, stage 1) from id 7"
        );
        assert_eq!(words(Step::Lose { from: 2, port: right, msg }), "id 5's election (id 7, stage 1) to id 7 is lost");
        assert_eq!(
            words(Step::Duplicate { from: 1, port: right, msg }),
            "id 3's election (id 7, stage 1) to id 5 is duplicated"
        );
        assert_eq!(words(Step::Fire { node: 1, timer: 0 }), "id 3's timer 0 fires");
        assert_eq!(words(Step::Fire { node: 1, timer: 7 }), "id 3's failure-detector timer fires");
        assert_eq!(words(Step::Crash(2)), "id 5 crashes");
        assert_eq!(words(Step::Recover(2)), "id 5 recovers (a new incarnation)");
        assert_eq!(words(Step::Partition(0b101)), "id 7, id 5 cut off from the others");
        assert_eq!(words(Step::Heal), "the partition heals");
        assert_eq!(words(Step::Tick(2)), "time passes (2 longest message delays)");
    }

    /// Store steps read as words too: which node's operation (by its tag) reaches the store or is
    /// lost, and what the store's answer says, naming holders by their ids.
    #[test]
    fn store_steps_read_as_words() {
        let topo = Topology::build(TopologyKind::Complete, 3, 0).unwrap();
        let ids = [1, 2, 3];
        let words = |s: Step| s.describe(&ids, &topo);
        let record = LeaseRecord { holder: 2, duration_ms: 375, transitions: 1 };
        let take = StoreOp::Put { seq: 3, expect: 2, record, acquire: true };
        let renew = StoreOp::Put { seq: 4, expect: 3, record, acquire: false };
        let done = StoreReply::Done { seq: 3, written: true, revision: 3, record: Some(record) };
        assert_eq!(
            words(Step::Store { node: 1, item: StoreItem::Op(take) }),
            "id 2's take-over (id 2, transitions 1) of the lease (op 3, if still revision 2) reaches the store"
        );
        assert_eq!(
            words(Step::Store { node: 1, item: StoreItem::Op(renew) }),
            "id 2's renewal of the lease (op 4, if still revision 3) reaches the store"
        );
        assert_eq!(
            words(Step::Store { node: 1, item: StoreItem::Answer(done) }),
            "the store's answer to id 2's op 3 (written: revision 3, held by id 2) reaches id 2"
        );
        assert_eq!(
            words(Step::StoreLost { node: 0, item: StoreItem::Op(StoreOp::Get { seq: 1 }) }),
            "id 1's read of the lease (op 1) is lost"
        );
    }
}
