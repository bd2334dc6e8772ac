//! The deterministic simulator: runs one election's state machines over a
//! [`Topology`] until no message is in flight.
//!
//! * Seeded: the same [`SimConfig`] gives the same run, message for message.
//! * Links are FIFO or not; delays are one time unit each ("ideal time") or
//!   random in `1..=max_delay`.
//! * Scheduling is a calendar queue (one bucket per time unit of the delay
//!   window, events of a bucket in sending order) with a heap only for
//!   timers, so a delivery costs O(1); the state machines of one run live in
//!   one contiguous `Vec` of their concrete type (see [`run_with`]).
//! * Initiators wake at time 0 before any delivery (the schedule the live
//!   runtime reproduces), or at random times with [`SimConfig::stagger`].
//! * It counts messages per kind, election vs notification, bytes (encoded
//!   protobuf sizes) and the longest causal chain, and checks the
//!   [`crate::invariants`].
//!
//! ```
//! use ringleader_node::{algo::catalogue, sim::{self, SimConfig}, topology::{Topology, TopologyKind}};
//! let spec = catalogue::find("as-far").unwrap();
//! let ring = Topology::ring(TopologyKind::RingUni, 4, 0).unwrap();
//! let report = sim::run(spec, &ring, &[4, 3, 2, 1], &[0, 1, 2, 3], spec.rule, &SimConfig::default());
//! assert!(report.verdict.violations.is_empty());
//! assert_eq!(report.counters.election_messages, 4 * 5 / 2); // descending: the worst case
//! ```

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::{Rng, SeedableRng, seq::SliceRandom};
use rand_pcg::Pcg64Mcg;

use crate::algo::catalogue::AlgorithmSpec;
use crate::algo::{Algorithm, Decision, Effect, Leadership, Msg, NodeContext, Outbox, Port, PortInfo, Rule, TimerId};
use crate::counters::Counters;
use crate::invariants::{self, Verdict};
use crate::topology::Topology;

/// How to schedule a simulated run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimConfig {
    /// Links deliver in sending order.
    pub fifo: bool,
    /// Every message takes one time unit; otherwise `1..=max_delay`, random.
    pub unit_delay: bool,
    /// Largest random delay (and the window of staggered wake-ups), at most 4096.
    pub max_delay: u64,
    /// Initiators wake at random times in `0..max_delay` instead of all at 0.
    pub stagger: bool,
    /// Seed of every random choice of the scheduler, and of the nodes'
    /// random bits ([`crate::algo::coin`]).
    pub seed: u64,
    /// Stop after this many deliveries (0 = a generous multiple of the bound).
    pub max_deliveries: u64,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig { fifo: true, unit_delay: false, max_delay: 16, stagger: false, seed: 0, max_deliveries: 0 }
    }
}

/// What a simulated run produced.
#[derive(Clone, Debug)]
pub struct SimReport {
    /// Positions.
    pub n: u32,
    /// Initiators.
    pub k: u32,
    /// Each position's decision.
    pub decisions: Vec<Option<Decision>>,
    /// Messages sent by each position.
    pub sent_per_node: Vec<u64>,
    /// Totals.
    pub counters: Counters,
    /// Longest causal chain of messages.
    pub ideal_time: u64,
    /// Virtual time of the last event.
    pub end_time: u64,
    /// Messages delivered.
    pub deliveries: u64,
    /// Algorithm or driver errors (at most 16 kept).
    pub errors: Vec<String>,
    /// The run went quiet (did not hit `max_deliveries`).
    pub terminated: bool,
    /// The literature bound for (n, k).
    pub bound: u64,
    /// Every [`Effect::Lead`] in time order: the kept-leadership timeline.
    pub leaderships: Vec<LeadershipEvent>,
    /// Invariant checks, including `errors` and termination.
    pub verdict: Verdict,
}

/// A node's [`Effect::Lead`] and when it came.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeadershipEvent {
    /// Virtual time.
    pub time: u64,
    /// The node's position.
    pub position: u32,
    /// What it now believes.
    pub leadership: Leadership,
}

/// A scheduled delivery or wake-up; its time is the bucket it sits in.
#[derive(Clone, Copy, Debug)]
enum Ev {
    Deliver { to: u32, port: Port, depth: u64, msg: Msg },
    Start { to: u32 },
}

/// A pending timer: (time, seq, position, timer, generation).
type TimerEv = Reverse<(u64, u64, u32, TimerId, u64)>;

const MAX_ERRORS: usize = 16;
const TIMER_SLOTS: usize = 8;
/// Fewest timer events a run may fire before it counts as not terminating.
const MAX_TIMER_EVENTS: u64 = 400_000_000;

struct Driver<'a, A> {
    topo: &'a Topology,
    nodes: Vec<A>,
    depth: Vec<u64>,
    /// Initiators whose start came before any message reached them.
    spontaneous: Vec<u32>,
    decisions: Vec<Option<Decision>>,
    sent: Vec<u64>,
    counters: Counters,
    link_last: Vec<u64>,
    timer_gen: Vec<u64>,
    ideal_time: u64,
    errors: Vec<String>,
    leaderships: Vec<LeadershipEvent>,
    rng: Pcg64Mcg,
    out: Outbox,
    fifo: bool,
    unit_delay: bool,
    max_delay: u64,
    /// Calendar queue: bucket `t % width` holds the events of time `t`.
    buckets: Vec<Vec<Ev>>,
    width: u64,
    pending: u64,
    timers: BinaryHeap<TimerEv>,
    seq: u64,
}

impl<A: Algorithm> Driver<'_, A> {
    fn error(&mut self, e: String) {
        if self.errors.len() < MAX_ERRORS {
            self.errors.push(e);
        }
    }

    #[inline]
    fn schedule(&mut self, time: u64, ev: Ev) {
        debug_assert!(self.width > 0);
        self.buckets[(time % self.width) as usize].push(ev);
        self.pending += 1;
    }

    /// Apply the effects in `self.out` produced by `pos` at `now`.
    fn apply(&mut self, pos: u32, now: u64) {
        let mut out = std::mem::take(&mut self.out);
        for eff in out.drain() {
            match eff {
                Effect::Send { port, msg } => {
                    let Some(link) = self.topo.link(pos, port).copied().filter(|l| l.outgoing) else {
                        self.error(format!("position {pos} sent {msg:?} on port {port}, which has no outgoing link"));
                        continue;
                    };
                    self.counters.record(msg);
                    self.sent[pos as usize] += 1;
                    let depth = self.depth[pos as usize] + 1;
                    self.ideal_time = self.ideal_time.max(depth);
                    let mut time =
                        if self.unit_delay { now + 1 } else { now + self.rng.random_range(1..=self.max_delay) };
                    if self.fifo && !self.unit_delay {
                        let Some(i) = self.topo.link_index(pos, port) else { continue };
                        let slot = &mut self.link_last[i];
                        time = time.max(*slot);
                        *slot = time;
                    }
                    self.schedule(time, Ev::Deliver { to: link.peer, port: link.remote_port, depth, msg });
                }
                Effect::Decide(d) => match self.decisions[pos as usize] {
                    Some(prev) if prev != d => self.error(format!("position {pos} decided {prev:?} and then {d:?}")),
                    Some(_) => {}
                    None => self.decisions[pos as usize] = Some(d),
                },
                Effect::Lead(l) => self.leaderships.push(LeadershipEvent { time: now, position: pos, leadership: l }),
                Effect::SetTimer { timer, after_ms } => {
                    let slot = pos as usize * TIMER_SLOTS + timer as usize % TIMER_SLOTS;
                    self.timer_gen[slot] += 1;
                    self.seq += 1;
                    self.timers.push(Reverse((now + after_ms.max(1), self.seq, pos, timer, self.timer_gen[slot])));
                }
                Effect::CancelTimer { timer } => {
                    self.timer_gen[pos as usize * TIMER_SLOTS + timer as usize % TIMER_SLOTS] += 1;
                }
            }
        }
        self.out = out;
    }

    fn handle(&mut self, ev: Ev) -> u32 {
        match ev {
            Ev::Start { to } => {
                // An initiator woken by a message before its own start is, in
                // the asynchronous model, no initiator at all.
                if self.depth[to as usize] == 0 {
                    self.spontaneous.push(to);
                }
                self.nodes[to as usize].on_start(&mut self.out);
                to
            }
            Ev::Deliver { to, port, depth, msg } => {
                let d = &mut self.depth[to as usize];
                *d = (*d).max(depth);
                if let Err(e) = self.nodes[to as usize].on_message(port, msg, &mut self.out) {
                    self.error(format!("position {to}: {e}"));
                }
                to
            }
        }
    }
}

/// Run one election of `spec` on `topo` with `ids` (in position order) and
/// the given initiator positions, until no message is in flight.
///
/// Dispatches to [`run_with`] with the algorithm's concrete state machine.
pub fn run(
    spec: &AlgorithmSpec,
    topo: &Topology,
    ids: &[u64],
    initiators: &[u32],
    rule: Rule,
    cfg: &SimConfig,
) -> SimReport {
    (spec.simulate)(spec, topo, ids, initiators, rule, cfg)
}

/// [`run`] with the state machines built by `make` (any [`Algorithm`],
/// including `Box<dyn Algorithm>`).
pub fn run_with<A: Algorithm>(
    spec: &AlgorithmSpec,
    topo: &Topology,
    ids: &[u64],
    initiators: &[u32],
    rule: Rule,
    cfg: &SimConfig,
    make: impl Fn(&NodeContext) -> A,
) -> SimReport {
    let n = topo.len();
    assert_eq!(ids.len(), n as usize, "one id per position");
    let bound = spec.bound_for(topo, initiators.len() as u64);
    let cap = if cfg.max_deliveries > 0 { cfg.max_deliveries } else { bound.saturating_mul(4).saturating_add(1_000) };
    let max_delay = cfg.max_delay.clamp(1, 4096);
    let width = max_delay + 1;
    let mut info: Vec<PortInfo> = Vec::new();
    let mut d = Driver {
        topo,
        nodes: ids
            .iter()
            .enumerate()
            .map(|(p, &id)| {
                info.clear();
                info.extend(
                    topo.ports(p as u32).iter().map(|l| PortInfo { neighbour: ids[l.peer as usize], label: l.label }),
                );
                let coin = crate::algo::coin(cfg.seed, p as u32);
                make(&NodeContext { id, rule, n, coin, ports: info.len() as u32, port_info: &info })
            })
            .collect(),
        depth: vec![0; n as usize],
        spontaneous: Vec::with_capacity(initiators.len()),
        decisions: vec![None; n as usize],
        sent: vec![0; n as usize],
        counters: Counters::default(),
        link_last: vec![0; topo.link_count()],
        timer_gen: vec![0; n as usize * TIMER_SLOTS],
        ideal_time: 0,
        errors: Vec::new(),
        leaderships: Vec::new(),
        rng: Pcg64Mcg::seed_from_u64(cfg.seed ^ 0x7363_6865_6475_6c65),
        out: Outbox::default(),
        fifo: cfg.fifo,
        unit_delay: cfg.unit_delay,
        max_delay,
        buckets: vec![Vec::new(); width as usize],
        width,
        pending: 0,
        timers: BinaryHeap::new(),
        seq: 0,
    };
    for &p in initiators {
        let time = if cfg.stagger { d.rng.random_range(0..max_delay) } else { 0 };
        d.schedule(time, Ev::Start { to: p });
    }

    let mut deliveries = 0u64;
    // Timers are not messages, but a clock that never stops must not hang the
    // driver either (synchronous algorithms tick every node every round).
    let timer_cap = cap.saturating_mul(64).max(MAX_TIMER_EVENTS);
    let mut timer_events = 0u64;
    let mut end_time = 0u64;
    let mut terminated = true;
    let mut now = 0u64;
    let mut bucket: Vec<Ev> = Vec::new();
    'run: loop {
        if d.pending == 0 {
            // Nothing in the window: jump to the next timer, or stop.
            match d.timers.peek() {
                Some(Reverse((t, ..))) => now = now.max(*t),
                None => break,
            }
        }
        while let Some(&Reverse((t, _, pos, timer, generation))) = d.timers.peek() {
            if t > now {
                break;
            }
            d.timers.pop();
            if d.timer_gen[pos as usize * TIMER_SLOTS + timer as usize % TIMER_SLOTS] == generation {
                timer_events += 1;
                if timer_events > timer_cap {
                    terminated = false;
                    break 'run;
                }
                d.nodes[pos as usize].on_timer(timer, &mut d.out);
                d.apply(pos, now);
                end_time = now;
            }
        }
        std::mem::swap(&mut bucket, &mut d.buckets[(now % width) as usize]);
        if !bucket.is_empty() {
            if !cfg.fifo && cfg.unit_delay {
                // Unit delays put a link's messages in one step: reorder within it.
                bucket.shuffle(&mut d.rng);
            }
            end_time = now;
        }
        for &ev in &bucket {
            d.pending -= 1;
            if let Ev::Deliver { .. } = ev {
                if deliveries >= cap {
                    terminated = false;
                    break 'run;
                }
                deliveries += 1;
            }
            let pos = d.handle(ev);
            d.apply(pos, now);
        }
        bucket.clear();
        now += 1;
    }

    // Candidates are the initiators that really woke by themselves (under
    // `stagger` a message may wake a designated initiator first).
    d.spontaneous.sort_unstable();
    let expected = spec.expected_winner(topo, ids, &d.spontaneous, rule);
    let mut verdict =
        invariants::verdict(expected, rule, ids, &d.decisions, d.counters.messages, bound, spec.bound_formula);
    if !terminated {
        verdict.violations.push(if timer_events > timer_cap {
            format!("did not go quiet within {timer_cap} timer events")
        } else {
            format!("did not go quiet within {cap} deliveries")
        });
    }
    verdict.violations.extend(d.errors.iter().cloned());
    SimReport {
        n,
        k: initiators.len() as u32,
        decisions: d.decisions,
        sent_per_node: d.sent,
        counters: d.counters,
        ideal_time: d.ideal_time,
        end_time,
        deliveries,
        errors: d.errors,
        leaderships: d.leaderships,
        terminated,
        bound,
        verdict,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::catalogue::find;
    use crate::algo::{AlgoError, RIGHT, Role};
    use crate::topology::{IdOrder, TopologyKind};

    /// Test machine: the node with id 1 sends 20 numbered messages right and
    /// sets two timers, cancelling one; the receiver refuses a message that
    /// arrives out of order and decides after the last one; the sender decides
    /// when its timer fires.
    #[derive(Debug)]
    struct Sequencer {
        id: u64,
        next: u32,
        decided: Option<Decision>,
    }

    const COUNT: u32 = 20;

    impl Algorithm for Sequencer {
        fn on_start(&mut self, out: &mut Outbox) {
            if self.id == 1 {
                for i in 0..COUNT {
                    out.send(RIGHT, Msg::Election { id: 1, stage: i, hops: 0 });
                }
                out.push(Effect::SetTimer { timer: 1, after_ms: 1_000 });
                out.push(Effect::SetTimer { timer: 2, after_ms: 5 });
                out.push(Effect::CancelTimer { timer: 2 });
            }
        }
        fn on_message(&mut self, _port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
            let Msg::Election { stage, .. } = msg else { return Err(AlgoError::Invalid("kind".into())) };
            let expected = self.next;
            self.next += 1;
            if self.next == COUNT {
                let d = Decision { role: Role::Follower, leader: 1 };
                self.decided = Some(d);
                out.push(Effect::Decide(d));
            }
            if stage != expected {
                return Err(AlgoError::Invalid(format!("message {stage} arrived when {expected} was due")));
            }
            Ok(())
        }
        fn on_timer(&mut self, timer: TimerId, out: &mut Outbox) {
            if timer == 1 {
                let d = Decision { role: Role::Leader, leader: 1 };
                self.decided = Some(d);
                out.push(Effect::Decide(d));
            } else {
                out.push(Effect::Decide(Decision { role: Role::Follower, leader: 99 }));
            }
        }
        fn decision(&self) -> Option<Decision> {
            self.decided
        }
        fn state(&self) -> &'static str {
            "test"
        }
    }

    fn sequencer_run(fifo: bool, seed: u64) -> SimReport {
        let spec = find("as-far").unwrap(); // only its bound is used
        let topo = Topology::ring(TopologyKind::RingUni, 2, 0).unwrap();
        let cfg = SimConfig { fifo, seed, max_delay: 50, ..SimConfig::default() };
        run_with(spec, &topo, &[1, 2], &[0], Rule::Max, &cfg, |c| Sequencer { id: c.id, next: 0, decided: None })
    }

    /// Timers fire at their virtual time and cancelled ones never do; FIFO
    /// links keep sending order under random delays, non-FIFO links do not.
    #[test]
    fn timers_and_link_order() {
        for seed in 0..20 {
            let r = sequencer_run(true, seed);
            assert!(r.errors.is_empty(), "seed {seed}: {:?}", r.errors);
            assert_eq!(r.decisions[0], Some(Decision { role: Role::Leader, leader: 1 }), "seed {seed}");
            assert!(r.end_time >= 1_000, "the sender decided on its 1000 ms timer");
            assert!(r.terminated);
        }
        let reordered = (0..20).filter(|&seed| !sequencer_run(false, seed).errors.is_empty()).count();
        assert!(reordered > 0, "non-FIFO links never reordered 20 messages in 20 runs");
    }

    /// The same configuration gives the same election, message for message.
    #[test]
    fn runs_are_deterministic() {
        let spec = find("controlled-distance").unwrap();
        let topo = Topology::ring(TopologyKind::RingBiUnoriented, 50, 9).unwrap();
        let ids = IdOrder::Random(9).arrange(50).unwrap();
        let cfg = SimConfig { seed: 9, fifo: false, stagger: true, ..SimConfig::default() };
        let a = run(spec, &topo, &ids, &[3, 7, 20], Rule::Max, &cfg);
        let b = run(spec, &topo, &ids, &[3, 7, 20], Rule::Max, &cfg);
        assert_eq!(
            (a.counters, a.end_time, a.ideal_time, &a.sent_per_node),
            (b.counters, b.end_time, b.ideal_time, &b.sent_per_node)
        );
        let c = run(spec, &topo, &ids, &[3, 7, 20], Rule::Max, &SimConfig { seed: 10, ..cfg });
        assert_ne!((a.end_time, a.counters), (c.end_time, c.counters), "another seed gives another schedule");
    }

    /// A run that never goes quiet is cut at the delivery cap and reported.
    #[test]
    fn non_termination_is_reported() {
        let spec = find("all-the-way").unwrap();
        let topo = Topology::ring(TopologyKind::RingUni, 8, 0).unwrap();
        let cfg = SimConfig { max_deliveries: 10, ..SimConfig::default() };
        let r = run(spec, &topo, &IdOrder::Ascending.arrange(8).unwrap(), &[0], Rule::Min, &cfg);
        assert!(!r.terminated);
        assert!(r.verdict.violations.iter().any(|v| v.contains("did not go quiet")), "{:?}", r.verdict.violations);
    }
}
