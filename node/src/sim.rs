//! The deterministic simulator: runs one election's state machines over a
//! [`Topology`] until no message is in flight.
//!
//! * Seeded: the same [`SimConfig`] gives the same run, message for message.
//! * Links are FIFO or not; delays are one time unit each ("ideal time") or
//!   random in `1..=max_delay`.
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
use crate::algo::{Algorithm, Decision, Effect, Msg, NodeContext, Outbox, Port, Rule, TimerId};
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
    /// Largest random delay.
    pub max_delay: u64,
    /// Initiators wake at random times in `0..max_delay` instead of all at 0.
    pub stagger: bool,
    /// Seed of every random choice of the scheduler.
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
    /// Invariant checks, including `errors` and termination.
    pub verdict: Verdict,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum What {
    Deliver { port: Port, msg: MsgOrd, depth: u64 },
    Start,
    Timer { timer: TimerId, generation: u64 },
}

/// `Msg` has no total order; events only need one for the heap's tie-breaks,
/// which `seq` already settles, so all messages compare equal.
#[derive(Clone, Copy, Debug)]
struct MsgOrd(Msg);
impl PartialEq for MsgOrd {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for MsgOrd {}
impl PartialOrd for MsgOrd {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for MsgOrd {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Event {
    time: u64,
    seq: u64,
    to: u32,
    what: What,
}

const MAX_ERRORS: usize = 16;

struct Driver<'a> {
    topo: &'a Topology,
    cfg: &'a SimConfig,
    nodes: Vec<Box<dyn Algorithm>>,
    depth: Vec<u64>,
    decisions: Vec<Option<Decision>>,
    sent: Vec<u64>,
    counters: Counters,
    link_last: Vec<u64>,
    timer_gen: Vec<u64>,
    ideal_time: u64,
    errors: Vec<String>,
    seq: u64,
    rng: Pcg64Mcg,
    out: Outbox,
}

impl Driver<'_> {
    fn error(&mut self, e: String) {
        if self.errors.len() < MAX_ERRORS {
            self.errors.push(e);
        }
    }

    /// Apply the effects in `self.out` produced by `pos` at `now`; queued events go through `push`.
    fn apply(&mut self, pos: u32, now: u64, mut push: impl FnMut(Event, &mut Pcg64Mcg)) {
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
                    let mut time = if self.cfg.unit_delay {
                        now + 1
                    } else {
                        now + self.rng.random_range(1..=self.cfg.max_delay.max(1))
                    };
                    if self.cfg.fifo && !self.cfg.unit_delay {
                        let slot = &mut self.link_last[(pos * self.topo.max_degree() + port) as usize];
                        time = time.max(*slot);
                        *slot = time;
                    }
                    self.seq += 1;
                    push(
                        Event {
                            time,
                            seq: self.seq,
                            to: link.peer,
                            what: What::Deliver { port: link.remote_port, msg: MsgOrd(msg), depth },
                        },
                        &mut self.rng,
                    );
                }
                Effect::Decide(d) => {
                    if let Some(prev) = self.decisions[pos as usize] {
                        if prev != d {
                            self.error(format!("position {pos} decided {prev:?} and then {d:?}"));
                        }
                    } else {
                        self.decisions[pos as usize] = Some(d);
                    }
                }
                Effect::SetTimer { timer, after_ms } => {
                    if self.cfg.unit_delay {
                        self.error("timers are not simulated under unit delays".into());
                        continue;
                    }
                    let slot = pos as usize * 8 + timer as usize % 8;
                    self.timer_gen[slot] += 1;
                    self.seq += 1;
                    let generation = self.timer_gen[slot];
                    push(
                        Event {
                            time: now + after_ms.max(1),
                            seq: self.seq,
                            to: pos,
                            what: What::Timer { timer, generation },
                        },
                        &mut self.rng,
                    );
                }
                Effect::CancelTimer { timer } => {
                    self.timer_gen[pos as usize * 8 + timer as usize % 8] += 1;
                }
            }
        }
        self.out = out;
    }

    fn handle(&mut self, ev: Event) {
        let pos = ev.to;
        match ev.what {
            What::Start => self.nodes[pos as usize].on_start(&mut self.out),
            What::Deliver { port, msg, depth } => {
                let d = &mut self.depth[pos as usize];
                *d = (*d).max(depth);
                if let Err(e) = self.nodes[pos as usize].on_message(port, msg.0, &mut self.out) {
                    self.error(format!("position {pos}: {e}"));
                }
            }
            What::Timer { timer, generation } => {
                if self.timer_gen[pos as usize * 8 + timer as usize % 8] == generation {
                    self.nodes[pos as usize].on_timer(timer, &mut self.out);
                }
            }
        }
    }
}

/// Run one election of `spec` on `topo` with `ids` (in position order) and
/// the given initiator positions, until no message is in flight.
pub fn run(
    spec: &AlgorithmSpec,
    topo: &Topology,
    ids: &[u64],
    initiators: &[u32],
    rule: Rule,
    cfg: &SimConfig,
) -> SimReport {
    let n = topo.len();
    assert_eq!(ids.len(), n as usize, "one id per position");
    let bound = (spec.bound)(n as u64, initiators.len() as u64);
    let cap = if cfg.max_deliveries > 0 { cfg.max_deliveries } else { bound.saturating_mul(4).saturating_add(1_000) };
    let nodes = ids.iter().map(|&id| (spec.build)(&NodeContext { id, rule, n })).collect();
    let mut d = Driver {
        topo,
        cfg,
        nodes,
        depth: vec![0; n as usize],
        decisions: vec![None; n as usize],
        sent: vec![0; n as usize],
        counters: Counters::default(),
        link_last: vec![0; (n * topo.max_degree()) as usize],
        timer_gen: vec![0; n as usize * 8],
        ideal_time: 0,
        errors: Vec::new(),
        seq: 0,
        rng: Pcg64Mcg::seed_from_u64(cfg.seed ^ 0x7363_6865_6475_6c65),
        out: Outbox::default(),
    };
    let mut deliveries = 0u64;
    let mut end_time = 0u64;
    let mut terminated = true;

    if cfg.unit_delay {
        // Breadth-first by time step: everything sent at t arrives at t + 1,
        // in sending order (FIFO) or shuffled within the step (non-FIFO).
        let mut now_q: Vec<Event> = Vec::new();
        let mut next_q: Vec<Event> = Vec::new();
        for &p in initiators {
            d.handle(Event { time: 0, seq: 0, to: p, what: What::Start });
            d.apply(p, 0, |e, _| next_q.push(e));
        }
        let mut now = 0;
        'outer: while !next_q.is_empty() {
            now += 1;
            std::mem::swap(&mut now_q, &mut next_q);
            if !cfg.fifo {
                now_q.shuffle(&mut d.rng);
            }
            for ev in now_q.drain(..) {
                if deliveries >= cap {
                    terminated = false;
                    break 'outer;
                }
                deliveries += 1;
                let to = ev.to;
                d.handle(ev);
                d.apply(to, now, |e, _| next_q.push(e));
            }
            end_time = now;
        }
    } else {
        let mut heap: BinaryHeap<Reverse<Event>> = BinaryHeap::new();
        for &p in initiators {
            let time = if cfg.stagger { d.rng.random_range(0..cfg.max_delay.max(1)) } else { 0 };
            d.seq += 1;
            heap.push(Reverse(Event { time, seq: d.seq, to: p, what: What::Start }));
        }
        while let Some(Reverse(ev)) = heap.pop() {
            if matches!(ev.what, What::Deliver { .. }) {
                if deliveries >= cap {
                    terminated = false;
                    break;
                }
                deliveries += 1;
            }
            end_time = ev.time;
            let to = ev.to;
            d.handle(ev);
            d.apply(to, ev.time, |e, _| heap.push(Reverse(e)));
        }
    }

    let mut verdict = invariants::verdict(rule, ids, &d.decisions, d.counters.messages, bound, spec.bound_formula);
    if !terminated {
        verdict.violations.push(format!("did not go quiet within {cap} deliveries"));
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
        terminated,
        bound,
        verdict,
    }
}
