//! # Schedules: one run, step by step, replayed exactly
//!
//! A [`Step`] is one thing that happens in a run: a node wakes, a message is
//! delivered, a timer fires, time passes, or a fault strikes. A list of them
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
//! says so.

use std::collections::BTreeMap;

use crate::algo::catalogue::AlgorithmSpec;
use crate::algo::detector::DetectorConfig;
use crate::algo::{Algorithm, Decision, Leadership, Msg, NodeContext, Port, PortInfo, Rule, TimerId};
use crate::invariants;
use crate::shell::{Output, Outputs, Shell};
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
    /// Messages still in flight at the end.
    pub in_flight: usize,
    /// What the simulator's invariants say about the end: two leaders, two
    /// leaders of one term, decided nodes that disagree, a node that erred.
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
    pub why: String,
}

/// Replay `steps` on `spec`'s nodes (its kept mode behind detector `kept`,
/// or its one-shot mode) on `topology` with `ids`, under `rule`; messages
/// on FIFO links must be delivered in order when `fifo`.
pub fn replay(
    spec: &AlgorithmSpec,
    topology: &Topology,
    ids: &[u64],
    rule: Rule,
    kept: Option<DetectorConfig>,
    fifo: bool,
    steps: &[Step],
) -> Result<Replayed, ReplayError> {
    let mut run = Run::new(spec, topology, ids, rule, kept, fifo);
    for (index, &step) in steps.iter().enumerate() {
        let fail = |why: String| ReplayError { index, step, why };
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
    info: Vec<PortInfo>,
    nodes: Vec<Shell<Box<dyn Algorithm>>>,
    links: BTreeMap<(u32, Port), Vec<Msg>>,
    timers: BTreeMap<(u32, TimerId), u64>,
    down: Vec<bool>,
    side: Option<u32>,
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
    ) -> Run<'a> {
        let n = topology.len();
        let mut run = Run {
            spec,
            topology,
            ids,
            rule,
            kept,
            fifo,
            info: Vec::new(),
            nodes: Vec::with_capacity(n as usize),
            links: BTreeMap::new(),
            timers: BTreeMap::new(),
            down: vec![false; n as usize],
            side: None,
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
        crate::sim::port_info(self.topology, self.ids, p, &mut self.info);
        let ctx = NodeContext {
            id: self.ids[p as usize],
            rule: self.rule,
            n: self.topology.len(),
            coin: crate::algo::coin(0, p),
            ports: self.info.len() as Port,
            port_info: &self.info,
            options: Default::default(),
        };
        match (self.kept, self.spec.kept.map(|k| k.build)) {
            (Some(d), Some(b)) => b(&ctx, d),
            _ => (self.spec.build)(&ctx),
        }
    }

    /// Does the partition cut the link between `a` and `b`?
    fn cut(&self, a: u32, b: u32) -> bool {
        self.side.is_some_and(|s| (s >> a & 1) != (s >> b & 1))
    }

    /// Take `step`: the position whose outputs it made, if any, or why it cannot be taken.
    fn take(&mut self, step: Step) -> Result<Option<u32>, String> {
        match step {
            Step::Start(p) => {
                let node = self.nodes.get_mut(p as usize).ok_or("no such position")?;
                if node.started() {
                    return Err("already started".into());
                }
                node.start(&mut self.out);
                Ok(Some(p))
            }
            Step::Deliver { from, port, msg } | Step::Lose { from, port, msg } => {
                let fifo = self.fifo;
                let link = self.links.get_mut(&(from, port)).ok_or("nothing in flight there")?;
                let k = match link.iter().position(|&m| m == msg) {
                    Some(k) if k == 0 || !fifo || matches!(step, Step::Lose { .. }) => k,
                    Some(_) => return Err("not the first in flight on a FIFO link".into()),
                    None => return Err("not in flight".into()),
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
                let link = self.links.get_mut(&(from, port)).ok_or("nothing in flight there")?;
                if !link.contains(&msg) {
                    return Err("not in flight".into());
                }
                link.push(msg);
                Ok(None)
            }
            Step::Fire { node, timer } => {
                let generation = self.timers.remove(&(node, timer)).ok_or("no such timer pending")?;
                if !self.nodes[node as usize].timer(timer, generation, &mut self.out) {
                    return Err("the timer was replaced or cancelled".into());
                }
                Ok(Some(node))
            }
            Step::Tick(_) => Ok(None),
            Step::Crash(p) => {
                if self.down.get(p as usize) != Some(&false) {
                    return Err("not a live position".into());
                }
                self.down[p as usize] = true;
                let fresh = self.build(p);
                self.nodes[p as usize].forget(fresh);
                self.timers.retain(|&(q, _), _| q != p);
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
                    return Err("not a crashed position".into());
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
                Output::Store(op) => self.r.violations.push(format!("position {p}: store {op:?} is not replayed")),
                Output::Decided(_) | Output::BeliefEnded(_) => {}
            }
        }
        // A timer a later set or a cancel made stale will not fire.
        let nodes = &self.nodes;
        self.timers.retain(|&(q, t), g| nodes[q as usize].timer_due(t, *g));
    }

    /// How the run ended, with what the simulator's invariants say of it.
    fn finish(self) -> Replayed {
        let Run { nodes, links, down, kept, ids, mut r, .. } = self;
        r.in_flight = links.values().map(Vec::len).sum();
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
}
