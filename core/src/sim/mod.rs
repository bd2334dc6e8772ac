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
//! * It applies a [`FaultPlan`](crate::faults::FaultPlan) ([`SimConfig::faults`]) in its transport:
//!   crashes, recoveries, lossy, slow, duplicating or reordering links, and
//!   partitions (semantics below). With an empty plan a run is exactly the
//!   run without faults.
//!
//! # Faults
//!
//! Each scheduled fault takes effect at its time `at`, before the timers and
//! deliveries of that instant; a plan keeps the run going until its last
//! fault has fired, even if the election went quiet before.
//!
//! * `Crash { node }`: the node stops; its start, timers and every message
//!   still travelling to it are lost, and so is every message sent to it
//!   while it is down (counted in [`SimReport::dropped`], not delivered).
//!   Messages it sent before the crash still arrive.
//! * `CrashLeader`: crashes the live node whose latest [`Effect::Lead`](crate::algo::Effect::Lead) names
//!   itself (highest term first), or else a live node that decided to lead
//!   (one-shot algorithms); with no leader nothing happens and
//!   [`SimReport::fault_log`] says so.
//! * `CutOffLeader`, `LeaderClock { rate }`, `PauseLeader { ms }`: found as
//!   for `CrashLeader` at the fault's time, the leader is cut off from every
//!   other node (a `Partition` of it alone), its clock runs at `rate`, or it
//!   pauses for `ms`; with no leader nothing happens. Each leader fault and
//!   the leader it found are listed in [`SimReport::leader_faults`].
//! * `Recover { node }`: a new incarnation: the state machine is rebuilt from
//!   the node's context (same id, ports and coin), its old decision and
//!   timers are forgotten, it gets back its last [`Effect::Persist`](crate::algo::Effect::Persist) record
//!   (its disk) through [`Algorithm::restore`], and it is woken with `on_start`.
//! * `Link { from, to, fault }`: each message sent on a matching link (of the
//!   fault's `kind`, if any; only the `nth` such message per link, if set)
//!   meets the latest matching link fault only: it is lost with probability
//!   `drop`; else it takes `delay_ms + uniform(0..=jitter_ms)` extra time
//!   units, is delivered twice with probability `duplicate` (the copy right
//!   after the original; it counts as a delivery, not as a message sent), and
//!   on FIFO links is exempt from FIFO order with probability `reorder`. A
//!   fault without effect clears what it selects (see [`crate::faults`]).
//! * A fault with a [`Trigger`] waits for its event, then takes effect `at`
//!   later, and at the earliest at the next instant (the event's own instant
//!   is under way): a node's first [`Effect::Lead`](crate::algo::Effect::Lead) naming itself or leader
//!   decision (`LeaderElected`), the k-th election or notification message
//!   sent (`Messages(k)`), a node's first [`Effect::Lead`](crate::algo::Effect::Lead) naming itself for
//!   a term ≥ t (`Term(t)`). The fault log records each trigger, and each
//!   fault whose event never came.
//! * `Partition { groups }`: messages sent between groups are lost; the
//!   latest partition wins; one group of every node heals.
//! * `Pause { node, ms }`: the node takes no step until `at + ms` (another
//!   pause extends it to the later end). What reaches it meanwhile (its
//!   start, messages, store answers) is held in arrival order, at most
//!   [`MAX_HELD`](crate::faults::MAX_HELD) (beyond, dropped and counted
//!   with the losses), and its timers that come due are deferred. At the
//!   pause's end, after the faults of that instant, first the deferred
//!   timers fire, in deadline order, then the held input is handed over in
//!   arrival order, before anything else of that instant. A crash drops
//!   what it held. What the paused node believed stays its belief until
//!   those steps change it: a paused leader still leads in its own eyes.
//!
//! Link faults and partitions judge a message when it is sent: one already
//! on its way arrives. Every fault draws from its own generator (seeded with
//! its `seed`), never from the scheduler's, which draws exactly as without
//! faults. Faults that break an algorithm's model (losses, crashes,
//! duplicates, reordering under a FIFO assumption, delays for an algorithm
//! that relies on timers) explain a failed election: the verdict then says
//! why in [`Verdict::failed_reason`](crate::invariants::Verdict::failed_reason) instead of listing violations. Safety
//! (one leader, one leader per term) is never excused.
//!
//! ```
//! use ringleader_core::{algo::catalogue, sim::{self, SimConfig}, topology::{Topology, TopologyKind}};
//! let spec = catalogue::find("as-far").unwrap();
//! let ring = Topology::ring(TopologyKind::RingUni, 4, 0).unwrap();
//! let report = sim::run(spec, &ring, &[4, 3, 2, 1], &[0, 1, 2, 3], spec.rule, &SimConfig::default());
//! assert!(report.verdict.violations.is_empty());
//! assert_eq!(report.counters.election_messages, 4 * 5 / 2); // descending: the worst case
//! ```

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use rand::{Rng, SeedableRng, seq::SliceRandom};
use rand_pcg::Pcg64Mcg;

use crate::faults::{self, Fault, FaultError, LinkFate, LinkRule, Outage, Trigger};
use crate::fencing::{self, Fencing};
use crate::invariants::{self, Rules};
use crate::protocol::{
    Algorithm, Decision, Leadership, MemStore, Msg, NodeContext, Options, Port, PortInfo, Role, Rule, StoreOp,
    StoreReply, TimerId,
};
use crate::shell::{Misstep, Output, Outputs, ShellState, Sink};
use crate::spec::AlgorithmSpec;
use crate::topology::Topology;

pub use crate::report;
pub use crate::report::{Cancel, LeaderFault, LeadershipEvent, SimConfig, SimReport};

/// Events between two looks at [`SimConfig::cancel`].
mod leader;

use leader::{leader_fault_name, on_leader};

const CANCEL_CHECK: u64 = 4096;

/// A scheduled delivery or wake-up; its time is the bucket it sits in.
#[derive(Clone, Copy, Debug)]
enum Ev {
    Deliver { to: u32, port: Port, depth: u64, msg: Msg },
    Start { to: u32 },
}

/// An operation on its way to the store, or an answer on its way back,
/// for the incarnation `inc` of a position.
#[derive(Clone, Copy, Debug)]
enum StoreEv {
    Apply { from: u32, inc: u32, op: StoreOp },
    Reply { to: u32, inc: u32, reply: StoreReply },
}

/// The election's store (for algorithms that keep a record in one, see
/// [`crate::protocol::store`]): one linearizable process. An operation
/// takes a link delay to get there, is applied atomically on arrival, and
/// its answer takes another delay back; a cut-off node's operations and
/// answers are lost, a slow one's take [`Fault::Store`]'s extra delay.
#[derive(Default)]
struct StoreSim {
    mem: MemStore,
    /// Events by (time, order of scheduling).
    queue: BTreeMap<(u64, u64), StoreEv>,
    seq: u64,
    /// Per position: cut off from the store, and extra delay each way.
    cut: Vec<bool>,
    extra: Vec<u64>,
    /// Per position: its incarnation (answers to an older one are lost).
    incarnation: Vec<u32>,
    /// Operations sent, and operations or answers lost to faults.
    ops: u64,
    lost: u64,
}

impl StoreSim {
    fn new(n: usize) -> StoreSim {
        StoreSim { cut: vec![false; n], extra: vec![0; n], incarnation: vec![0; n], ..StoreSim::default() }
    }

    fn next_time(&self) -> Option<u64> {
        self.queue.first_key_value().map(|(&(t, _), _)| t)
    }

    /// Send `ev` between position `p` and the store at `now`, `delay` on its
    /// way before faults; lost when `p` is cut off.
    fn travel(&mut self, p: u32, now: u64, delay: u64, ev: StoreEv) {
        if self.cut[p as usize] {
            self.lost += 1;
            return;
        }
        self.seq += 1;
        let at = now.saturating_add(delay).saturating_add(self.extra[p as usize]);
        self.queue.insert((at, self.seq), ev);
    }
}

/// A pending timer: (time, seq, position, timer, generation).
type TimerEv = Reverse<(u64, u64, u32, TimerId, u64)>;

const MAX_ERRORS: usize = 16;
/// Fewest timer events a run may fire before it counts as not terminating.
const MAX_TIMER_EVENTS: u64 = 400_000_000;
/// Largest extra delay a link fault gives a message (see [`faults::MAX_FAULT_DELAY`]).
pub use crate::faults::MAX_FAULT_DELAY;
/// With faults, a run in which nothing is in flight and the nodes' timers
/// have sent, decided and announced nothing for this long counts as quiet:
/// a round clock waiting for a crashed neighbour would otherwise tick until
/// the timer cap.
pub const IDLE_TIME: u64 = 100_000;

/// "1 message was" / "3 messages were".
fn messages(n: u64) -> String {
    if n == 1 { "1 message was".into() } else { format!("{n} messages were") }
}

/// The faults of a run and what they did; consulted only when the plan is
/// not empty.
#[derive(Default)]
struct FaultState {
    /// The plan, in time order (stable: plan order within one time); a
    /// triggered fault joins it when its event comes.
    plan: Vec<crate::faults::Scheduled>,
    next: usize,
    /// Faults waiting for their [`Trigger`], in plan order.
    waiting: Vec<crate::faults::Scheduled>,
    down: Vec<bool>,
    outages: Vec<Outage>,
    /// Group of each position under the current partition; empty = none.
    group_of: Vec<u32>,
    /// Every partition that took effect, the last one open while in force.
    splits: Vec<crate::faults::Split>,
    /// Link faults in force, oldest first (the last match wins).
    links: Vec<LinkRule<u32>>,
    /// Each position's clock rate ([`Fault::Clock`]); empty = every clock at 1.
    clock: Vec<f64>,
    /// Each position's pause ([`Fault::Pause`]): when it ends (0: not
    /// paused); empty = nobody was paused.
    paused: Vec<u64>,
    /// Per position, while paused: the timers that came due (deadline,
    /// order set, timer, generation) ...
    due: Vec<Vec<(u64, u64, TimerId, u64)>>,
    /// ... and the input that reached it, in arrival order.
    held: Vec<Vec<Held>>,
    dropped_paused: u64,
    /// Every pause that took effect: (position, from, until), for the
    /// fencing model's writes.
    pauses: Vec<(u32, u64, u64)>,
    /// Every fault aimed at whoever leads, with the leader it found.
    leader_faults: Vec<LeaderFault>,
    /// Every end of a pause: (position, time, belief once its due timers fired).
    resumes: Vec<(u32, u64, Leadership)>,
    /// Every [`Fault::Store`] that took effect: (time, position or every
    /// one, cut off, extra delay); writes to the fencing resource meet them too.
    store_log: Vec<(u64, Option<u32>, bool, u64)>,
    /// Deliveries too far ahead for the calendar window, by time.
    far: BTreeMap<u64, Vec<Ev>>,
    dropped_crashed: u64,
    dropped_partition: u64,
    dropped_link: u64,
    duplicated: u64,
    delayed: u64,
    reordered: u64,
    log: Vec<String>,
}

/// Input a paused node holds.
#[derive(Clone, Copy, Debug)]
enum Held {
    Ev(Ev),
    Store { inc: u32, reply: StoreReply },
}

impl FaultState {
    fn dropped(&self) -> u64 {
        self.dropped_crashed + self.dropped_partition + self.dropped_link + self.dropped_paused
    }

    /// Is position `p` paused at `now`?
    #[inline]
    fn is_paused(&self, p: u32, now: u64) -> bool {
        self.paused.get(p as usize).is_some_and(|&until| until > now)
    }

    /// Hold `input` for paused position `p` (or drop it beyond the bound).
    fn hold(&mut self, p: u32, input: Held) {
        let held = &mut self.held[p as usize];
        if held.len() < faults::MAX_HELD {
            held.push(input);
        } else {
            self.dropped_paused += 1;
        }
    }

    /// The time of the next fault, pause end or far delivery.
    fn next_time(&self) -> Option<u64> {
        let resume = self.paused.iter().copied().filter(|&t| t > 0).min();
        let fault = self.plan.get(self.next).map(|s| s.at);
        let fault = match (fault, resume) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let far = self.far.keys().next().copied();
        match (fault, far) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Why an election may have failed: the faults the algorithm cannot be
    /// asked to survive (see the module docs).
    fn reasons(&self, assumes_fifo: bool, uses_timers: bool, name: &str) -> Vec<String> {
        let mut r = Vec::new();
        let dropped = self.dropped();
        if dropped > 0 {
            let parts: Vec<String> = [
                (self.dropped_crashed, "to crashed nodes"),
                (self.dropped_partition, "across the partition"),
                (self.dropped_link, "by lossy links"),
                (self.dropped_paused, "to paused nodes holding all they may"),
            ]
            .iter()
            .filter(|(c, _)| *c > 0)
            .map(|(c, why)| format!("{c} {why}"))
            .collect();
            r.push(format!("{} dropped by faults ({})", messages(dropped), parts.join(", ")));
        }
        for o in &self.outages {
            r.push(match o.recovered {
                Some(t) => format!("position {} crashed at {} and recovered at {t}", o.position, o.crashed),
                None => format!("position {} crashed at {}", o.position, o.crashed),
            });
        }
        if self.duplicated > 0 {
            r.push(format!("{} duplicated by faults", messages(self.duplicated)));
        }
        if self.reordered > 0 && assumes_fifo {
            r.push(format!("{} let out of FIFO order, which {name} assumes", messages(self.reordered)));
        }
        if self.delayed > 0 && uses_timers {
            r.push(format!("{} delayed by faults and {name} relies on timers", messages(self.delayed)));
        }
        r
    }
}

/// Everything of a simulation but its nodes: the network and its clock,
/// the fault engine and the logs. It is the nodes' [`Sink`]: each output of
/// a shell is carried out as the shell produces it, in the step of the node
/// at `pos` at time `now`.
struct Net<'a> {
    topo: &'a Topology,
    ids: &'a [u64],
    rule: Rule,
    seed: u64,
    /// Each position's algorithm options (none: empty).
    options: Vec<Vec<(String, String)>>,
    /// The position whose step is under way ...
    pos: u32,
    /// ... and the time of that step.
    now: u64,
    depth: Vec<u64>,
    /// Initiators whose start came before any message reached them.
    spontaneous: Vec<u32>,
    /// Election and notification messages sent so far (for [`Trigger::Messages`]) ...
    messages: u64,
    /// ... and by each position, across its incarnations.
    sent: Vec<u64>,
    link_last: Vec<u64>,
    ideal_time: u64,
    errors: Vec<String>,
    leaderships: Vec<LeadershipEvent>,
    /// `Some` when message times are logged.
    message_times: Option<Vec<u64>>,
    /// `Some` when arrows are logged.
    arrows: Option<Vec<crate::diagram::Arrow>>,
    /// `Some` when arrows are logged: the nodes' states.
    states: Option<crate::report::StateLog>,
    rng: Pcg64Mcg,
    fifo: bool,
    unit_delay: bool,
    max_delay: u64,
    /// Calendar queue: bucket `t % width` holds the events of time `t`.
    buckets: Vec<Vec<Ev>>,
    width: u64,
    pending: u64,
    timers: BinaryHeap<TimerEv>,
    seq: u64,
    /// Some algorithm set a timer (delays may then explain a failure).
    uses_timers: bool,
    /// Time of the last send, delivery, decision or leadership (faulty runs).
    last_activity: u64,
    /// The plan is not empty: sends go through [`Driver::send_faulty`].
    faulty: bool,
    faults: FaultState,
    store: StoreSim,
}

/// A simulation: the nodes, each an algorithm and its shell's state (which
/// keeps its decision, belief, persisted record and timer generations) in
/// two arrays, and, apart from them so that a shell can write to it while it
/// steps, the net its outputs go to (with the step's buffer and the
/// election's tally).
struct Driver<'a, A> {
    /// The state machines, densely (a step touches only its own) ...
    algos: Vec<A>,
    /// ... and their shells' states, apart.
    shells: Vec<ShellState>,
    io: Outputs<Net<'a>>,
}

/// How many deliveries ahead the simulator prefetches a node's memory.
const PREFETCH_AHEAD: usize = 8;

/// Remove the events for position `p` from `evs`; returns the deliveries removed.
fn sweep(evs: &mut Vec<Ev>, p: u32) -> u64 {
    let mut lost = 0;
    evs.retain(|ev| match *ev {
        Ev::Deliver { to, .. } if to == p => {
            lost += 1;
            false
        }
        Ev::Start { to } => to != p,
        Ev::Deliver { .. } => true,
    });
    lost
}

/// The ports of position `p` as its state machine sees them.
pub fn port_info(topo: &Topology, ids: &[u64], p: u32, info: &mut Vec<PortInfo>) {
    info.clear();
    info.extend(topo.ports(p).iter().map(|l| PortInfo { neighbour: ids[l.peer as usize], label: l.label }));
}

impl Net<'_> {
    /// The step of position `pos` at time `now` begins.
    #[inline]
    fn at(&mut self, pos: u32, now: u64) {
        (self.pos, self.now) = (pos, now);
    }

    /// Bring far deliveries that now fit into the calendar window.
    fn bring_near(&mut self, now: u64) {
        while let Some(entry) = self.faults.far.first_entry() {
            if entry.key().saturating_sub(now) >= self.width {
                break;
            }
            let (time, evs) = entry.remove_entry();
            for ev in evs {
                self.schedule(time, ev);
            }
        }
    }

    /// Position `p` crashes at `now` (unless it is down already: then
    /// `false`): what travels to it is lost with it, and a start not yet
    /// taken.
    fn crash(&mut self, now: u64, p: u32, what: &str) -> bool {
        if self.faults.down[p as usize] {
            self.faults.log.push(format!("{now}: {what}: position {p} is already down"));
            return false;
        }
        self.faults.down[p as usize] = true;
        self.store.incarnation[p as usize] += 1;
        self.faults.outages.push(Outage { position: p, crashed: now, recovered: None });
        self.faults.log.push(format!("{now}: {what}: position {p} crashed"));
        for b in &mut self.buckets {
            let before = b.len();
            self.faults.dropped_crashed += sweep(b, p);
            self.pending -= (before - b.len()) as u64;
        }
        for evs in self.faults.far.values_mut() {
            self.faults.dropped_crashed += sweep(evs, p);
        }
        self.faults.far.retain(|_, evs| !evs.is_empty());
        // A paused node's held input is lost with it.
        if let Some(held) = self.faults.held.get_mut(p as usize) {
            self.faults.dropped_crashed +=
                held.iter().filter(|h| matches!(h, Held::Ev(Ev::Deliver { .. }))).count() as u64;
            held.clear();
            self.faults.due[p as usize].clear();
        }
        true
    }

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

    /// Move the waiting faults whose trigger `fired` says has come into the
    /// plan, `at` after `now` and at the earliest at the next instant (this
    /// one is under way).
    fn trigger(&mut self, now: u64, fired: impl Fn(Trigger) -> bool) {
        let f = &mut self.faults;
        let mut i = 0;
        while i < f.waiting.len() {
            let Some(t) = f.waiting[i].after.filter(|&t| fired(t)) else {
                i += 1;
                continue;
            };
            let mut s = f.waiting.remove(i);
            s.at = now.saturating_add(s.at.max(1));
            s.after = None;
            f.log.push(format!("{now}: {t}: a fault takes effect at {}", s.at));
            let at = s.at;
            let pos = f.next + f.plan[f.next..].partition_point(|p| p.at <= at);
            f.plan.insert(pos, s);
        }
    }

    /// Schedule `ev` at `time`, beyond the calendar window if need be.
    fn schedule_from(&mut self, now: u64, time: u64, ev: Ev) {
        if time - now >= self.width {
            self.faults.far.entry(time).or_default().push(ev);
        } else {
            self.schedule(time, ev);
        }
    }

    /// Send `ev` from `from` (on `port`) to `to` through the faults in force;
    /// `time` is the scheduler's delivery time.
    fn send_faulty(&mut self, from: u32, port: Port, to: u32, now: u64, mut time: u64, ev: Ev) {
        self.last_activity = now;
        let f = &mut self.faults;
        let Ev::Deliver { msg, .. } = ev else { return };
        let kind = msg.kind();
        // Every message sent counts towards nth selectors, whatever becomes of it.
        faults::count_all(&mut f.links, &from, &to, kind);
        if f.down[to as usize] {
            f.dropped_crashed += 1;
            self.arrow(from, to, msg, now, None, false);
            return;
        }
        if !f.group_of.is_empty() && f.group_of[from as usize] != f.group_of[to as usize] {
            f.dropped_partition += 1;
            self.arrow(from, to, msg, now, None, false);
            return;
        }
        let (mut duplicate, mut exempt, mut slow) = (false, false, false);
        match faults::decide(&mut f.links, &from, &to, kind) {
            None => {}
            Some(LinkFate::Drop) => {
                f.dropped_link += 1;
                self.arrow(from, to, msg, now, None, false);
                return;
            }
            Some(LinkFate::Send { extra_delay_ms, duplicate: twice, reorder }) => {
                if extra_delay_ms > 0 {
                    time = time.saturating_add(extra_delay_ms);
                    f.delayed += 1;
                    slow = true;
                }
                duplicate = twice;
                exempt = reorder && self.fifo;
            }
        }
        // Delays differ per message now, so FIFO needs the clamp even with unit delays.
        if exempt {
            f.reordered += 1;
        } else if self.fifo
            && let Some(i) = self.topo.link_index(from, port)
        {
            let slot = &mut self.link_last[i];
            time = time.max(*slot);
            *slot = time;
        }
        self.arrow(from, to, msg, now, Some(time), slow);
        self.schedule_from(now, time, ev);
        if duplicate {
            self.faults.duplicated += 1;
            self.arrow(from, to, msg, now, Some(time), slow);
            self.schedule_from(now, time, ev);
        }
    }

    /// Log a message for the diagram (heartbeats are left out); `slow`: a
    /// fault delayed it.
    #[inline]
    fn arrow(&mut self, from: u32, to: u32, msg: Msg, sent: u64, received: Option<u64>, slow: bool) {
        if let Some(log) = &mut self.arrows
            && !msg.kind().is_heartbeat()
        {
            log.push(crate::diagram::Arrow {
                from,
                to,
                kind: msg.kind(),
                sent,
                received,
                msg: Some(msg),
                slow,
                in_flight: false,
            });
        }
    }
}

impl Net<'_> {
    /// A delay to or from the store: as a message's.
    fn store_delay(&mut self) -> u64 {
        if self.unit_delay { 1 } else { self.rng.random_range(1..=self.max_delay) }
    }
}

impl Sink for Net<'_> {
    const CHECKS_LINKS: bool = true;

    /// Carry out an output of the step of `self.pos` at `self.now`.
    #[inline]
    fn output(&mut self, output: Output) {
        let (pos, now) = (self.pos, self.now);
        match output {
            Output::Send { port, msg } => {
                if !self.send(port, msg) {
                    self.error(format!("position {pos} {}", Misstep::NoLink { port, msg }));
                }
            }
            Output::Decided(d) => {
                self.last_activity = now;
                if d.role == Role::Leader && !self.faults.waiting.is_empty() {
                    self.trigger(now, |t| t == Trigger::LeaderElected);
                }
            }
            Output::Misstep(m) => {
                self.last_activity = now;
                self.error(format!("position {pos} {m}"));
            }
            Output::Lead(l) => {
                self.last_activity = now;
                self.leaderships.push(LeadershipEvent { time: now, position: pos, leadership: l });
                if l.leader == Some(self.ids[pos as usize]) && !self.faults.waiting.is_empty() {
                    self.trigger(now, |t| match t {
                        Trigger::LeaderElected => true,
                        Trigger::Term(term) => l.term >= term,
                        Trigger::Messages(_) => false,
                    });
                }
            }
            // The timeline holds what algorithms announce; a recovery is in the outages.
            Output::BeliefEnded(_) => {}
            Output::SetTimer { timer, after_ms, generation } => {
                self.uses_timers = true;
                self.seq += 1;
                let after_ms = match self.faults.clock.get(pos as usize) {
                    Some(&rate) => faults::at_rate(after_ms, rate),
                    None => after_ms,
                };
                self.timers.push(Reverse((now + after_ms.max(1), self.seq, pos, timer, generation)));
            }
            Output::Store(op) => {
                self.uses_timers = true;
                self.store.ops += 1;
                let delay = self.store_delay();
                let inc = self.store.incarnation[pos as usize];
                self.store.travel(pos, now, delay, StoreEv::Apply { from: pos, inc, op });
            }
        }
    }

    /// Send `msg` from the step's node on its `port`.
    #[inline]
    fn send(&mut self, port: Port, msg: Msg) -> bool {
        let (pos, now) = (self.pos, self.now);
        let Some(link) = self.topo.link(pos, port).copied().filter(|l| l.outgoing) else {
            return false;
        };
        if !msg.kind().is_heartbeat() {
            self.messages += 1;
            self.sent[pos as usize] += 1;
            if let Some(log) = &mut self.message_times {
                log.push(now);
            }
            if !self.faults.waiting.is_empty() {
                let sent = self.messages;
                self.trigger(now, |t| matches!(t, Trigger::Messages(k) if sent >= k));
            }
        }
        let depth = self.depth[pos as usize] + 1;
        self.ideal_time = self.ideal_time.max(depth);
        let mut time = if self.unit_delay { now + 1 } else { now + self.rng.random_range(1..=self.max_delay) };
        let ev = Ev::Deliver { to: link.peer, port: link.remote_port, depth, msg };
        if self.faulty {
            self.send_faulty(pos, port, link.peer, now, time, ev);
            return true;
        }
        if self.fifo && !self.unit_delay {
            let Some(i) = self.topo.link_index(pos, port) else { return true };
            let slot = &mut self.link_last[i];
            time = time.max(*slot);
            *slot = time;
        }
        self.arrow(pos, link.peer, msg, now, Some(time), false);
        self.schedule(time, ev);
        true
    }
}

impl<'a, A: Algorithm> Driver<'a, A> {
    /// The net, apart from the nodes.
    #[inline]
    fn net(&mut self) -> &mut Net<'a> {
        self.io.sink_mut()
    }

    /// Apply the faults due at `now` and bring far deliveries into the window.
    fn fault_step(&mut self, now: u64, make: &impl Fn(&NodeContext) -> A, end_time: &mut u64) {
        loop {
            let f = &mut self.net().faults;
            let Some(s) = f.plan.get(f.next).filter(|s| s.at <= now).cloned() else { break };
            f.next += 1;
            self.apply_fault(now, s, make, end_time);
        }
        let f = &self.net().faults;
        let ended: Vec<u32> =
            (0..f.paused.len() as u32).filter(|&p| f.paused[p as usize] > 0 && f.paused[p as usize] <= now).collect();
        for p in ended {
            self.resume(now, p);
            *end_time = now;
        }
        self.net().bring_near(now);
    }

    /// Position `p`'s pause ends at `now`: the timers that came due fire, in
    /// deadline order, then the held input is handed over in arrival order.
    fn resume(&mut self, now: u64, p: u32) {
        let i = p as usize;
        let f = &mut self.net().faults;
        f.paused[i] = 0;
        let mut due = std::mem::take(&mut f.due[i]);
        let held = std::mem::take(&mut f.held[i]);
        due.sort_unstable_by_key(|&(t, seq, ..)| (t, seq));
        f.log.push(format!("{now}: position {p} resumes: {} timer(s) due, {} input(s) held", due.len(), held.len()));
        for (_, _, timer, generation) in due {
            if self.shells[i].timer_due(timer, generation) {
                self.net().at(p, now);
                self.shells[i].timer(&mut self.algos[i], timer, generation, &mut self.io);
                self.note_state(i, now);
            }
        }
        if let Some(belief) = self.shells[i].leadership().filter(|_| !self.net().faults.down[i]) {
            self.net().faults.resumes.push((p, now, belief));
        }
        for h in held {
            match h {
                Held::Ev(ev) => self.handle::<true>(ev, now),
                Held::Store { inc, reply } => {
                    let net = self.net();
                    if net.faults.down[i] || net.store.incarnation[i] != inc || net.store.cut[i] {
                        net.store.lost += 1;
                        continue;
                    }
                    net.at(p, now);
                    self.shells[i].store_reply(&mut self.algos[i], reply, &mut self.io);
                    self.note_state(i, now);
                }
            }
        }
    }

    fn apply_fault(
        &mut self,
        now: u64,
        s: crate::faults::Scheduled,
        make: &impl Fn(&NodeContext) -> A,
        end_time: &mut u64,
    ) {
        let net = self.io.sink_mut();
        match s.fault {
            Fault::Crash { node } => self.crash(now, node, "crash"),
            Fault::CrashLeader
            | Fault::LeaveLeader
            | Fault::CutOffLeader
            | Fault::LeaderClock { .. }
            | Fault::PauseLeader { .. } => self.leader_fault(now, s, make, end_time),
            Fault::Recover { node } => {
                if !net.faults.down[node as usize] {
                    net.faults.log.push(format!("{now}: recover: position {node} is up; nothing to do"));
                    return;
                }
                net.faults.down[node as usize] = false;
                if let Some(o) = net.faults.outages.iter_mut().rev().find(|o| o.position == node) {
                    o.recovered = Some(now);
                }
                let mut info = Vec::new();
                port_info(net.topo, net.ids, node, &mut info);
                let coin = crate::protocol::coin(net.seed, node);
                let options = net.options.get(node as usize).cloned().unwrap_or_default();
                let ctx = NodeContext {
                    id: net.ids[node as usize],
                    rule: net.rule,
                    n: net.topo.len(),
                    coin,
                    ports: info.len() as u32,
                    port_info: &info,
                    options: Options(&options),
                };
                net.faults.log.push(format!("{now}: position {node} recovered as a new incarnation"));
                net.at(node, now);
                let p = node as usize;
                self.shells[p].restart(&mut self.algos[p], make(&ctx), &mut self.io);
                *end_time = now;
            }
            Fault::Link { from, to, fault } => {
                let new = LinkRule::new(from, to, fault, s.seed);
                // Faults the new one shadows everywhere can go.
                net.faults.links.retain(|l| !new.covers(l));
                if fault.has_effect() || !net.faults.links.is_empty() {
                    net.faults.links.push(new);
                }
            }
            Fault::Clock { node, rate } => {
                let n = net.topo.len() as usize;
                let f = &mut net.faults;
                if f.clock.is_empty() {
                    f.clock = vec![1.0; n];
                }
                let before = std::mem::replace(&mut f.clock[node as usize], rate);
                f.log.push(format!("{now}: clock: position {node}'s timers run at {rate} times real time"));
                // Its pending timers have the rest of their time to run by the new clock.
                let timers = std::mem::take(&mut net.timers).into_vec();
                net.timers = timers
                    .into_iter()
                    .map(|Reverse((t, seq, p, timer, generation))| {
                        let t = if p == node && t > now {
                            now + (((t - now) as f64 * before / rate).round() as u64).max(1)
                        } else {
                            t
                        };
                        Reverse((t, seq, p, timer, generation))
                    })
                    .collect();
            }
            Fault::Pause { node, ms } => {
                let n = net.topo.len() as usize;
                let f = &mut net.faults;
                if f.paused.is_empty() {
                    (f.paused, f.due, f.held) = (vec![0; n], vec![Vec::new(); n], vec![Vec::new(); n]);
                }
                let until = &mut f.paused[node as usize];
                *until = (*until).max(now + ms);
                f.pauses.push((node, now, *until));
                f.log.push(format!("{now}: pause: position {node} takes no step until {until}"));
            }
            Fault::Forge { node, port, msg } => {
                if net.faults.down[node as usize] {
                    net.faults.log.push(format!("{now}: forge: position {node} is down; nothing delivered"));
                } else if net.topo.link(node, port).is_none() {
                    net.faults.log.push(format!("{now}: forge: position {node} has no port {port}"));
                } else {
                    net.at(node, now);
                    let p = node as usize;
                    if let Err(e) = self.shells[p].message(&mut self.algos[p], port, msg, &mut self.io) {
                        self.net().error(format!("position {node}: forged {msg:?}: {e}"));
                    }
                    *end_time = now;
                }
            }
            Fault::Store { node, cut, delay_ms } => {
                net.faults.store_log.push((now, node, cut, delay_ms));
                let st = &mut net.store;
                let all = 0..st.cut.len() as u32;
                for p in all.filter(|&p| node.is_none_or(|q| q == p)) {
                    st.cut[p as usize] = cut;
                    st.extra[p as usize] = delay_ms;
                }
                let who = node.map_or("every node".to_string(), |p| format!("position {p}"));
                net.faults.log.push(format!("{now}: store: {who} cut off: {cut}, extra delay {delay_ms}"));
            }
            Fault::Partition { groups } => {
                let n = net.topo.len() as usize;
                let f = &mut net.faults;
                f.group_of.clear();
                if let Some(open) = f.splits.last_mut().filter(|s| s.until.is_none()) {
                    open.until = Some(now);
                }
                if !(groups.len() == 1 && groups[0].len() == n) {
                    f.splits.push(crate::faults::Split { from: now, until: None, groups: groups.clone() });
                    // A node in no group is alone: give it a group number of its own.
                    f.group_of.extend((0..n as u32).map(|p| groups.len() as u32 + p));
                    for (g, members) in groups.iter().enumerate() {
                        for &p in members {
                            f.group_of[p as usize] = g as u32;
                        }
                    }
                }
            }
        }
    }

    /// A fault aimed at whoever leads now ([`Driver::current_leader`]), resolved and applied to it;
    /// the leader it found (or none) is kept for the report.
    fn leader_fault(
        &mut self,
        now: u64,
        s: crate::faults::Scheduled,
        make: &impl Fn(&NodeContext) -> A,
        end_time: &mut u64,
    ) {
        let leader = self.current_leader();
        let what = leader_fault_name(&s.fault);
        let net = self.net();
        net.faults.leader_faults.push(LeaderFault { at: now, fault: s.fault.clone(), leader });
        let Some(p) = leader else {
            let nothing = match s.fault {
                Fault::CrashLeader => "nothing crashed",
                Fault::LeaveLeader => "nobody left",
                _ => "nothing done",
            };
            net.faults.log.push(format!("{now}: {what} found no leader; {nothing}"));
            return;
        };
        match s.fault {
            Fault::CrashLeader => self.crash(now, p, what),
            Fault::LeaveLeader => {
                net.faults.log.push(format!("{now}: position {p} leaves (hands its leadership over)"));
                net.at(p, now);
                let p = p as usize;
                self.shells[p].leave(&mut self.algos[p], &mut self.io);
                *end_time = now;
            }
            _ => {
                net.faults.log.push(format!("{now}: {what}: position {p} leads"));
                let fault = on_leader(&s.fault, p, net.topo.len());
                self.apply_fault(now, crate::faults::Scheduled { fault, ..s }, make, end_time);
            }
        }
    }

    /// The live node that leads now: the highest term of a kept leadership
    /// naming its holder, else a one-shot leader.
    fn current_leader(&self) -> Option<u32> {
        let net = self.io.sink();
        let mut latest: Vec<Option<Leadership>> = vec![None; self.shells.len()];
        for e in &net.leaderships {
            latest[e.position as usize] = Some(e.leadership);
        }
        let live = |p: usize| !net.faults.down[p];
        let kept = latest
            .iter()
            .enumerate()
            .filter(|&(p, l)| live(p) && matches!(l, Some(l) if l.leader == Some(net.ids[p])))
            .max_by_key(|(_, l)| l.map(|l| l.term))
            .map(|(p, _)| p as u32);
        kept.or_else(|| {
            self.shells
                .iter()
                .enumerate()
                .find(|&(p, s)| live(p) && matches!(s.decision(), Some(d) if d.role == Role::Leader))
                .map(|(p, _)| p as u32)
        })
    }

    fn crash(&mut self, now: u64, p: u32, what: &str) {
        if self.net().crash(now, p, what) {
            self.shells[p as usize].crash();
        }
    }

    /// Ask the memory for what a delivery to `to` will read (its state
    /// machine and its links), while earlier deliveries run: in a large
    /// simulation with random delays each delivery lands on a node far from
    /// the last, and waiting for its cache lines one at a time is most of
    /// the cost.
    #[inline]
    fn prefetch(&self, to: u32) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            // SAFETY: a prefetch reads nothing and cannot fault, whatever the
            // address; `unsafe` is only for its target feature, SSE, which
            // every x86_64 has.
            let at = |p: *const u8| unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast()) };
            if let Some(algo) = self.algos.get(to as usize) {
                at((algo as *const A).cast());
            }
            if let Some(link) = self.io.sink().topo.ports(to).first() {
                at((link as *const crate::topology::PortLink).cast());
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = to;
    }

    /// The store's events due at `now`: operations applied in arrival order,
    /// answers handed to the live incarnation that asked.
    fn store_step<const STATES: bool>(&mut self, now: u64) {
        loop {
            let net = self.io.sink_mut();
            let Some(entry) = net.store.queue.first_entry().filter(|e| e.key().0 <= now) else { break };
            match entry.remove() {
                StoreEv::Apply { from, inc, op } => {
                    let reply = net.store.mem.apply(op, now);
                    let delay = net.store_delay();
                    net.store.travel(from, now, delay, StoreEv::Reply { to: from, inc, reply });
                }
                StoreEv::Reply { to, inc, reply } if net.faulty && net.faults.is_paused(to, now) => {
                    net.faults.hold(to, Held::Store { inc, reply });
                }
                StoreEv::Reply { to, inc, reply } => {
                    let p = to as usize;
                    let down = net.faulty && net.faults.down[p];
                    if down || net.store.incarnation[p] != inc || net.store.cut[p] {
                        net.store.lost += 1;
                        continue;
                    }
                    net.at(to, now);
                    self.shells[p].store_reply(&mut self.algos[p], reply, &mut self.io);
                    if STATES {
                        self.note_state(p, now);
                    }
                }
            }
        }
    }

    /// With arrows logged, note position `p`'s state at `now` (if it changed).
    #[inline]
    fn note_state(&mut self, p: usize, now: u64) {
        if let Some(log) = &mut self.io.sink_mut().states {
            log.note(p, now, self.algos[p].state());
        }
    }

    /// [`Driver::note_state`] for every position.
    fn note_states(&mut self, now: u64) {
        for p in 0..self.algos.len() {
            self.note_state(p, now);
        }
    }

    /// Take `ev` at `now`: the node's outputs are carried out as it steps.
    #[inline]
    fn handle<const STATES: bool>(&mut self, ev: Ev, now: u64) {
        let net = self.io.sink_mut();
        if net.faulty {
            let (Ev::Start { to } | Ev::Deliver { to, .. }) = ev;
            if net.faults.is_paused(to, now) {
                net.faults.hold(to, Held::Ev(ev));
                return;
            }
        }
        match ev {
            Ev::Start { to } => {
                let net = self.io.sink_mut();
                // An initiator woken by a message before its own start is, in
                // the asynchronous model, no initiator at all.
                if net.depth[to as usize] == 0 {
                    net.spontaneous.push(to);
                }
                net.at(to, now);
                self.shells[to as usize].start(&mut self.algos[to as usize], &mut self.io);
                if STATES {
                    self.note_state(to as usize, now);
                }
            }
            Ev::Deliver { to, port, depth, msg } => {
                let net = self.io.sink_mut();
                let d = &mut net.depth[to as usize];
                *d = (*d).max(depth);
                net.at(to, now);
                let p = to as usize;
                if let Err(e) = self.shells[p].message(&mut self.algos[p], port, msg, &mut self.io) {
                    self.net().error(format!("position {to}: {e}"));
                }
                if STATES {
                    self.note_state(p, now);
                }
            }
        }
    }
}

/// Run one election of `spec` on `topo` with `ids` (in position order) and
/// the given initiator positions, until no message is in flight.
///
/// Dispatches to [`run_with`] with the algorithm's concrete state machine.
///
/// # Panics
///
/// On a fault plan that does not validate for `topo` (see [`run_checked`]).
pub fn run(
    spec: &AlgorithmSpec,
    topo: &Topology,
    ids: &[u64],
    initiators: &[u32],
    rule: Rule,
    cfg: &SimConfig,
) -> SimReport {
    (spec.machine.simulate)(spec, topo, ids, initiators, rule, cfg)
}

/// [`run`], after checking [`SimConfig::faults`] against the overlay: a
/// fault naming a position the overlay lacks, or a probability outside
/// [0, 1], is refused with the [`FaultError`] naming the field.
pub fn run_checked(
    spec: &AlgorithmSpec,
    topo: &Topology,
    ids: &[u64],
    initiators: &[u32],
    rule: Rule,
    cfg: &SimConfig,
) -> Result<SimReport, FaultError> {
    cfg.faults.validate(topo.len())?;
    Ok(run(spec, topo, ids, initiators, rule, cfg))
}

/// [`run`] in "keep a leader" mode: the state machines come from
/// [`KeptSpec::build`](crate::algo::spec::KeptSpec::build) (boxed, with their failure detector), and
/// `None` if the algorithm has no such mode. The failure detector runs with
/// [`SimConfig::detector`]. Heartbeats never go quiet: give
/// `cfg` a [`SimConfig::horizon`], or the run stops only at the idle rule
/// (faulty runs) or the timer cap.
///
/// # Panics
///
/// On a fault plan that does not validate for `topo` (see [`run_checked`]).
pub fn run_kept(
    spec: &AlgorithmSpec,
    topo: &Topology,
    ids: &[u64],
    initiators: &[u32],
    rule: Rule,
    cfg: &SimConfig,
) -> Option<SimReport> {
    let build = spec.kept?.build;
    let run = Run { spec, topo, ids, initiators, rule, cfg, rules: Rules::Kept };
    Some(run_under(&run, |c| build(c, cfg.detector)))
}

/// [`run`] with the state machines built by `make` (any [`Algorithm`],
/// including `Box<dyn Algorithm>`); `make` also rebuilds a recovered node.
///
/// # Panics
///
/// On a fault plan that does not validate for `topo` (see [`run_checked`]).
pub fn run_with<A: Algorithm>(
    spec: &AlgorithmSpec,
    topo: &Topology,
    ids: &[u64],
    initiators: &[u32],
    rule: Rule,
    cfg: &SimConfig,
    make: impl Fn(&NodeContext) -> A,
) -> SimReport {
    run_under(&Run { spec, topo, ids, initiators, rule, cfg, rules: Rules::OneShot }, make)
}

/// [`run_with`] for the run `run`, judged by its [`Rules`].
fn run_under<A: Algorithm>(run: &Run<'_>, make: impl Fn(&NodeContext) -> A) -> SimReport {
    let Run { spec, topo, ids, cfg, .. } = *run;
    let n = topo.len();
    assert_eq!(ids.len(), n as usize, "one id per position");
    if let Err(e) = cfg.faults.validate(n) {
        panic!("invalid fault plan: {e} (sim::run_checked reports it as an error)");
    }
    let bound = spec.bound_for(topo, run.initiators.len() as u64);
    let caps = Caps::of(spec, n, bound, cfg);
    let d = set_up(run, &make);
    // The states are logged with the arrows, by a loop of their own: the plain one stays as it was.
    let (d, ending) =
        if cfg.log_arrows { drive::<_, true>(d, cfg, &make, caps) } else { drive::<_, false>(d, cfg, &make, caps) };
    report(run, d, ending, bound)
}

/// What a run is asked: the arguments of [`run_with`] but the state machines, and the rules it is
/// judged by (a kept leadership's, or a one-shot election's).
struct Run<'a> {
    spec: &'a AlgorithmSpec,
    topo: &'a Topology,
    ids: &'a [u64],
    initiators: &'a [u32],
    rule: Rule,
    cfg: &'a SimConfig,
    rules: Rules,
}

/// When a run is cut short: deliveries, and timer events (a clock that never stops must not hang the
/// driver either: synchronous algorithms tick every node every round).
#[derive(Clone, Copy, Debug)]
struct Caps {
    deliveries: u64,
    timer_events: u64,
}

impl Caps {
    fn of(spec: &AlgorithmSpec, n: u32, bound: u64, cfg: &SimConfig) -> Caps {
        let deliveries = if cfg.max_deliveries > 0 {
            cfg.max_deliveries
        } else if cfg.horizon.is_some() {
            u64::MAX
        } else {
            bound.saturating_mul(4).saturating_add(1_000)
        };
        let timer_events = deliveries
            .saturating_mul(64)
            .max(MAX_TIMER_EVENTS)
            .max(spec.timer_event_bound(u64::from(n)).saturating_mul(2));
        Caps { deliveries, timer_events }
    }
}

/// How the run loop ended.
#[derive(Clone, Copy, Debug)]
struct Ending {
    deliveries: u64,
    timer_events: u64,
    end_time: u64,
    terminated: bool,
    horizon_reached: bool,
    cancelled: bool,
    caps: Caps,
}

/// The network and the nodes before the first event: every position's state machine built by `make`,
/// the fault plan in order, and the initiators' wake-ups scheduled.
fn set_up<'a, A: Algorithm>(run: &Run<'a>, make: &impl Fn(&NodeContext) -> A) -> Driver<'a, A> {
    let Run { spec, topo, ids, initiators, rule, cfg, .. } = *run;
    let n = topo.len();
    let options: Vec<Vec<(String, String)>> = if cfg.options.is_empty() {
        Vec::new()
    } else {
        (0..n).map(|p| crate::spec::node_options(spec, &cfg.options, p)).collect()
    };
    let max_delay = cfg.max_delay.clamp(1, 4096);
    let width = max_delay + 1;
    let mut info: Vec<PortInfo> = Vec::new();
    let faulty = !cfg.faults.faults.is_empty();
    let mut faults = FaultState::default();
    if faulty {
        (faults.waiting, faults.plan) = cfg.faults.faults.iter().cloned().partition(|s| s.after.is_some());
        faults.plan.sort_by_key(|s| s.at);
        faults.down = vec![false; n as usize];
    }
    let net = Net {
        topo,
        ids,
        rule,
        seed: cfg.seed,
        options,
        depth: vec![0; n as usize],
        spontaneous: Vec::with_capacity(initiators.len()),
        messages: 0,
        sent: vec![0; n as usize],
        link_last: vec![0; topo.link_count()],
        ideal_time: 0,
        errors: Vec::new(),
        leaderships: Vec::new(),
        message_times: cfg.log_message_times.then(Vec::new),
        arrows: cfg.log_arrows.then(Vec::new),
        states: cfg.log_arrows.then(|| crate::report::StateLog::new(n as usize)),
        rng: Pcg64Mcg::seed_from_u64(cfg.seed ^ 0x7363_6865_6475_6c65),
        pos: 0,
        now: 0,
        fifo: cfg.fifo,
        unit_delay: cfg.unit_delay,
        max_delay,
        buckets: vec![Vec::new(); width as usize],
        width,
        pending: 0,
        timers: BinaryHeap::new(),
        seq: 0,
        uses_timers: false,
        last_activity: 0,
        faulty,
        faults,
        store: StoreSim::new(n as usize),
    };
    let algos = ids
        .iter()
        .enumerate()
        .map(|(p, &id)| {
            port_info(topo, ids, p as u32, &mut info);
            let coin = crate::protocol::coin(cfg.seed, p as u32);
            let ports = info.len() as Port;
            let options = Options(net.options.get(p).map_or(&[], Vec::as_slice));
            make(&NodeContext { id, rule, n, coin, ports, port_info: &info, options })
        })
        .collect();
    let shells = (0..n).map(|_| ShellState::default()).collect();
    let mut d = Driver { algos, shells, io: Outputs::new(net) };
    d.note_states(0);
    for &p in initiators {
        let net = d.net();
        let time = if cfg.stagger { net.rng.random_range(0..max_delay) } else { 0 };
        net.schedule(time, Ev::Start { to: p });
    }
    d
}

/// The run loop: time advances bucket by bucket (or jumps to the next timer or fault when nothing is in
/// flight); at each time, the faults due strike, the timers due fire, and the bucket's events are
/// delivered, until nothing is left, a cap or the horizon is reached, or the run is cancelled.
/// The driver is taken and given back by value: behind a reference its fields would be read through it on
/// every event (measured: 0.5% more instructions).
fn drive<'a, A: Algorithm, const STATES: bool>(
    mut d: Driver<'a, A>,
    cfg: &SimConfig,
    make: &impl Fn(&NodeContext) -> A,
    caps: Caps,
) -> (Driver<'a, A>, Ending) {
    let width = d.net().width;
    // Plain locals, not the `Ending` fields, so that they stay in registers in the hot loop.
    let (mut deliveries, mut timer_events, mut end_time) = (0u64, 0u64, 0u64);
    let (mut terminated, mut horizon_reached, mut cancelled) = (true, false, false);
    let (cap, timer_cap) = (caps.deliveries, caps.timer_events);
    let mut steps = 0u64;
    let mut now = 0u64;
    let mut bucket: Vec<Ev> = Vec::new();
    'run: loop {
        let net = d.net();
        if net.pending == 0 {
            // Nothing in the window: jump to the next timer (or fault, or
            // far delivery), or stop.
            let mut next = net.timers.peek().map(|Reverse((t, ..))| *t);
            if let Some(s) = net.store.next_time() {
                next = Some(next.map_or(s, |t| t.min(s)));
            }
            if net.faulty {
                match net.faults.next_time() {
                    Some(f) => next = Some(next.map_or(f, |t| t.min(f))),
                    // Only clocks left: stop once they have long done nothing.
                    None if next.is_some_and(|t| t.saturating_sub(net.last_activity) > IDLE_TIME) => {
                        net.faults.log.push(format!(
                            "{now}: stopped: nothing in flight, and nothing sent, decided or announced since {}",
                            net.last_activity
                        ));
                        break;
                    }
                    None => {}
                }
            }
            match next {
                Some(t) => now = now.max(t),
                None => break,
            }
        }
        steps += 1;
        if steps.is_multiple_of(CANCEL_CHECK) && cfg.cancel.is_cancelled() {
            (cancelled, terminated) = (true, false);
            break;
        }
        if cfg.horizon.is_some_and(|h| now > h) {
            horizon_reached = true;
            net.faults.log.push(format!("{now}: stopped at the horizon"));
            break;
        }
        if net.faulty {
            d.fault_step(now, make, &mut end_time);
            if STATES {
                d.note_states(now);
            }
        }
        while let Some(&Reverse((t, set, pos, timer, generation))) = d.net().timers.peek() {
            if t > now {
                break;
            }
            d.net().timers.pop();
            let net = d.net();
            if net.faulty && net.faults.is_paused(pos, now) {
                net.faults.due[pos as usize].push((t, set, timer, generation));
                continue;
            }
            if d.shells[pos as usize].timer_due(timer, generation) {
                timer_events += 1;
                if timer_events > timer_cap {
                    terminated = false;
                    break 'run;
                }
                if timer_events.is_multiple_of(CANCEL_CHECK) && cfg.cancel.is_cancelled() {
                    (cancelled, terminated) = (true, false);
                    break 'run;
                }
                d.net().at(pos, now);
                let p = pos as usize;
                d.shells[p].timer(&mut d.algos[p], timer, generation, &mut d.io);
                if STATES {
                    d.note_state(p, now);
                }
                end_time = now;
            }
        }
        if d.net().store.next_time().is_some_and(|t| t <= now) {
            d.store_step::<STATES>(now);
            end_time = now;
        }
        let net = d.net();
        std::mem::swap(&mut bucket, &mut net.buckets[(now % width) as usize]);
        if !bucket.is_empty() {
            if !cfg.fifo && cfg.unit_delay {
                // Unit delays put a link's messages in one step: reorder within it.
                bucket.shuffle(&mut net.rng);
            }
            end_time = now;
            net.last_activity = now;
        }
        for (i, &ev) in bucket.iter().enumerate() {
            if let Some(&Ev::Deliver { to, .. }) = bucket.get(i + PREFETCH_AHEAD) {
                d.prefetch(to);
            }
            d.net().pending -= 1;
            if let Ev::Deliver { .. } = ev {
                if deliveries >= cap {
                    terminated = false;
                    break 'run;
                }
                deliveries += 1;
                if deliveries.is_multiple_of(CANCEL_CHECK) && cfg.cancel.is_cancelled() {
                    (cancelled, terminated) = (true, false);
                    break 'run;
                }
            }
            d.handle::<STATES>(ev, now);
        }
        bucket.clear();
        now += 1;
    }
    (d, Ending { deliveries, timer_events, end_time, terminated, horizon_reached, cancelled, caps })
}

/// The report of a run that ended so: its counts, its faults' log, and the verdict of the invariants.
fn report<A: Algorithm>(run: &Run<'_>, d: Driver<'_, A>, e: Ending, bound: u64) -> SimReport {
    let Run { spec, topo, ids, initiators, rule, cfg, rules } = *run;
    let n = topo.len();
    // Candidates are the initiators that really woke by themselves (under
    // `stagger` a message may wake a designated initiator first).
    let Driver { shells, io, .. } = d;
    let counters = *io.counters();
    let mut net = io.into_sink();
    net.spontaneous.sort_unstable();
    let expected = spec.expected_winner(topo, ids, &net.spontaneous, rule);
    let mut failures = Vec::new();
    if e.cancelled {
        failures.push(format!("cancelled after {} deliveries and {} timer events", e.deliveries, e.timer_events));
    } else if !e.terminated {
        failures.push(if e.timer_events > e.caps.timer_events {
            format!("did not go quiet within {} timer events", e.caps.timer_events)
        } else {
            format!("did not go quiet within {} deliveries", e.caps.deliveries)
        });
    }
    failures.extend(net.errors.iter().cloned());
    for s in &net.faults.waiting {
        if let Some(t) = s.after {
            net.faults.log.push(format!("{}: never took effect, waiting until {t}: {:?}", e.end_time, s.fault));
        }
    }
    let crashed: Vec<u32> = (0..n).filter(|&p| net.faults.down.get(p as usize) == Some(&true)).collect();
    let fifo_assumed = spec.assumptions.fifo && cfg.fifo;
    let reasons = net.faults.reasons(fifo_assumed, net.uses_timers, spec.name);
    let decisions: Vec<Option<Decision>> = shells.iter().map(ShellState::decision).collect();
    let timeline: Vec<(u32, Leadership)> = net.leaderships.iter().map(|e| (e.position, e.leadership)).collect();
    let beliefs: Vec<Option<Leadership>> = shells.iter().map(ShellState::leadership).collect();
    let fencing = fence(cfg, ids, &net, e.end_time);
    let verdict = invariants::Outcome {
        rules,
        expected,
        rule,
        ids,
        decisions: &decisions,
        messages: counters.messages,
        bound,
        formula: spec.bound_formula,
        timeline: &timeline,
        beliefs: &beliefs,
        failures,
        crashed: &crashed,
        fault_reasons: &reasons,
    }
    .verdict();
    SimReport {
        n,
        k: initiators.len() as u32,
        sent_per_node: net.sent,
        decisions,
        counters,
        ideal_time: net.ideal_time,
        end_time: e.end_time,
        deliveries: e.deliveries,
        dropped: net.faults.dropped(),
        duplicated: net.faults.duplicated,
        delayed: net.faults.delayed,
        reordered: net.faults.reordered,
        crashed,
        outages: net.faults.outages,
        splits: net.faults.splits,
        fault_log: net.faults.log,
        pauses: net.faults.pauses,
        leader_faults: net.faults.leader_faults,
        errors: net.errors,
        leaderships: net.leaderships,
        terminated: e.terminated,
        horizon_reached: e.horizon_reached,
        cancelled: e.cancelled,
        message_times: net.message_times.unwrap_or_default(),
        arrows: net.arrows.unwrap_or_default(),
        states: net.states.map(crate::report::StateLog::into_changes).unwrap_or_default(),
        bound,
        fencing,
        verdict,
    }
}

/// The writes of a kept run's leaders at the modelled resource (see
/// [`crate::fencing`]): one every detector period, each taking a link delay
/// drawn from its own generator (the scheduler's draws are untouched) plus a
/// [`Fault::Store`]'s extra delay, lost while its sender is cut off from the
/// store. The resource sits beyond partitions, as the store does.
fn fence(cfg: &SimConfig, ids: &[u64], net: &Net<'_>, end_time: u64) -> Fencing {
    if net.leaderships.is_empty() {
        return Fencing::default();
    }
    let timeline: Vec<fencing::Belief> = net.leaderships.iter().map(|e| (e.time, e.position, e.leadership)).collect();
    let schedule = fencing::Schedule {
        ids,
        timeline: &timeline,
        outages: &net.faults.outages,
        pauses: &net.faults.pauses,
        resumes: &net.faults.resumes,
        end_time,
        write_ms: cfg.detector.period_ms,
    };
    let (writes, truncated) = schedule.writes();
    let announced = fencing::Announcements::new(ids, &timeline);
    let mut rng = Pcg64Mcg::seed_from_u64(cfg.seed ^ 0x6665_6e63_696e_6721);
    let store = &net.faults.store_log;
    let arrival = |w: &fencing::Write| {
        let delay = if cfg.unit_delay { 1 } else { rng.random_range(1..=cfg.max_delay.max(1)) };
        let fault = store.iter().rev().find(|&&(t, node, ..)| t <= w.sent && node.is_none_or(|q| q == w.position));
        match fault {
            Some(&(_, _, true, _)) => None,
            Some(&(.., extra)) => Some(w.sent + delay + extra),
            None => Some(w.sent + delay),
        }
    };
    Fencing { truncated, ..fencing::judge(&writes, &announced, arrival) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::catalogue::find;
    use crate::algo::{AlgoError, Effect, LEFT, Outbox, RIGHT, Role, Stable};
    use crate::faults::{FaultPlan, LinkFault};
    use crate::topology::{IdOrder, TopologyKind};

    /// Test machine: the node with id 1 sends 20 numbered messages right and
    /// sets two timers, cancelling one; the receiver refuses a message that
    /// arrives out of order and decides after the last one; the sender decides
    /// when its timer fires.
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    struct Sequencer {
        id: u64,
        next: u32,
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
                out.push(Effect::Decide(Decision { role: Role::Follower, leader: 1 }));
            }
            if stage != expected {
                return Err(AlgoError::Invalid(format!("message {stage} arrived when {expected} was due")));
            }
            Ok(())
        }
        fn on_timer(&mut self, timer: TimerId, out: &mut Outbox) {
            if timer == 1 {
                out.push(Effect::Decide(Decision { role: Role::Leader, leader: 1 }));
            } else {
                out.push(Effect::Decide(Decision { role: Role::Follower, leader: 99 }));
            }
        }
        fn state(&self) -> &'static str {
            "test"
        }
    }

    fn sequencer_run(fifo: bool, seed: u64) -> SimReport {
        let spec = find("as-far").unwrap(); // only its bound is used
        let topo = Topology::ring(TopologyKind::RingUni, 2, 0).unwrap();
        let cfg = SimConfig { fifo, seed, max_delay: 50, ..SimConfig::default() };
        run_with(spec, &topo, &[1, 2], &[0], Rule::Max, &cfg, |c| Sequencer { id: c.id, next: 0 })
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

    /// FIFO links stay FIFO under fault jitter (also with unit delays, which otherwise need no
    /// ordering), and a reorder probability of 1 lets messages overtake each other.
    #[test]
    fn fault_jitter_keeps_fifo_unless_reordered() {
        let spec = find("as-far").unwrap();
        let topo = Topology::ring(TopologyKind::RingUni, 2, 0).unwrap();
        let run_fault = |seed, fault| {
            let faults = FaultPlan {
                faults: vec![crate::faults::Scheduled::new(0, seed, Fault::Link { from: None, to: None, fault })],
            };
            let cfg = SimConfig { seed, unit_delay: true, faults, ..SimConfig::default() };
            run_with(spec, &topo, &[1, 2], &[0], Rule::Max, &cfg, |c| Sequencer { id: c.id, next: 0 })
        };
        let jitter = LinkFault { jitter_ms: 30, ..LinkFault::default() };
        let shuffle = LinkFault { reorder: 1.0, ..jitter };
        let mut overtaken = 0;
        for seed in 0..10 {
            let r = run_fault(seed, jitter);
            assert!(r.errors.is_empty(), "seed {seed}: {:?}", r.errors);
            assert!(r.delayed > 0 && r.reordered == 0, "seed {seed}: {} delayed, {} reordered", r.delayed, r.reordered);
            let r = run_fault(seed, shuffle);
            assert_eq!(r.reordered, COUNT as u64);
            overtaken += usize::from(!r.errors.is_empty());
        }
        assert!(overtaken > 5, "reordering overtook in only {overtaken} of 10 runs");
    }

    /// Test machine for timers across a crash: position 0 wakes position 1 with a message; a
    /// start arms timer 1, a message arms timer 2; each timer decides a different (follower)
    /// decision.
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    struct Clock {
        id: u64,
    }

    impl Algorithm for Clock {
        fn on_start(&mut self, out: &mut Outbox) {
            if self.id == 1 {
                out.send(RIGHT, Msg::Wakeup);
            }
            out.push(Effect::SetTimer { timer: 1, after_ms: 100 });
        }
        fn on_message(&mut self, _port: Port, _msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
            out.push(Effect::SetTimer { timer: 2, after_ms: 100 });
            Ok(())
        }
        fn on_timer(&mut self, timer: TimerId, out: &mut Outbox) {
            out.decide(Role::Follower, if timer == 1 { 7 } else { 99 });
        }
        fn state(&self) -> &'static str {
            "clock"
        }
    }

    /// Sends on every port: a receive-only left port, the right one, and one the node lacks.
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    struct Everywhere;

    impl Algorithm for Everywhere {
        fn on_start(&mut self, out: &mut Outbox) {
            for port in [LEFT, RIGHT, 2] {
                out.send(port, Msg::Notify { leader: 1 });
            }
        }
        fn on_message(&mut self, _port: Port, _msg: Msg, _out: &mut Outbox) -> Result<(), AlgoError> {
            Ok(())
        }
        fn state(&self) -> &'static str {
            "everywhere"
        }
    }

    /// The simulator refuses, as the shell does for every driver, a send on a port with no
    /// outgoing link (receive-only or missing): reported, never delivered, never counted.
    #[test]
    fn sends_without_an_outgoing_link_are_refused_and_uncounted() {
        let spec = find("as-far").unwrap();
        let topo = Topology::ring(TopologyKind::RingUni, 3, 0).unwrap();
        let cfg = SimConfig { unit_delay: true, ..SimConfig::default() };
        let r = run_with(spec, &topo, &[1, 2, 3], &[0], Rule::Max, &cfg, |_| Everywhere);
        assert_eq!((r.counters.messages, r.deliveries, r.sent_per_node.clone()), (1, 1, vec![1, 0, 0]));
        assert_eq!(
            r.errors,
            [
                "position 0 sent Notify { leader: 1 } on port 0, which has no outgoing link",
                "position 0 sent Notify { leader: 1 } on port 2, which has no outgoing link",
            ]
        );
    }

    /// A crash voids the node's pending timers, and a recovered node is a new incarnation whose
    /// old timers never fire: only the timer its new start arms does.
    #[test]
    fn crash_voids_timers_and_recovery_starts_afresh() {
        let spec = find("as-far").unwrap();
        let topo = Topology::ring(TopologyKind::RingUni, 2, 0).unwrap();
        let run_plan = |faults: Vec<Fault>, times: &[u64]| {
            let faults = FaultPlan {
                faults: faults
                    .into_iter()
                    .zip(times)
                    .map(|(fault, &at)| crate::faults::Scheduled::new(at, 0, fault))
                    .collect(),
            };
            let cfg = SimConfig { unit_delay: true, faults, ..SimConfig::default() };
            run_with(spec, &topo, &[1, 2], &[0], Rule::Max, &cfg, |c| Clock { id: c.id })
        };
        let plain = run_plan(vec![], &[]);
        assert_eq!(
            plain.decisions[1],
            Some(Decision { role: Role::Follower, leader: 99 }),
            "woken at 1, timer 2 at 101"
        );
        assert_eq!(plain.end_time, 101);

        let crashed = run_plan(vec![Fault::Crash { node: 1 }], &[50]);
        assert_eq!(crashed.decisions[1], None);
        assert_eq!((crashed.end_time, crashed.crashed.clone()), (100, vec![1]));

        let back = run_plan(vec![Fault::Crash { node: 1 }, Fault::Recover { node: 1 }], &[50, 60]);
        assert!(back.errors.is_empty(), "{:?}", back.errors);
        assert_eq!(back.decisions[1], Some(Decision { role: Role::Follower, leader: 7 }), "only the new start's timer");
        assert_eq!(back.end_time, 160);
        assert!(back.crashed.is_empty());
    }

    /// Test machine for stable storage: every start persists one more term, and a restored
    /// record is reported as the follower decision's leader when the node starts.
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    struct Disk {
        term: u64,
        restored: Option<u64>,
    }

    impl Algorithm for Disk {
        fn on_start(&mut self, out: &mut Outbox) {
            self.term += 1;
            out.push(Effect::Persist(Stable { term: self.term, vote: Some(42) }));
            if let Some(t) = self.restored {
                out.decide(Role::Follower, t);
            }
        }
        fn on_message(&mut self, _port: Port, _msg: Msg, _out: &mut Outbox) -> Result<(), AlgoError> {
            Ok(())
        }
        fn restore(&mut self, stable: Stable) {
            assert_eq!(stable.vote, Some(42));
            self.term = stable.term;
            self.restored = Some(stable.term);
        }
        fn state(&self) -> &'static str {
            "disk"
        }
    }

    /// A recovered incarnation gets its predecessor's last persisted record back before it starts,
    /// so a term (or a vote) written before a crash survives it, twice over.
    #[test]
    fn recovery_restores_the_persisted_record() {
        let spec = find("as-far").unwrap();
        let topo = Topology::ring(TopologyKind::RingUni, 2, 0).unwrap();
        let plan = [(10, Fault::Crash { node: 0 }), (20, Fault::Recover { node: 0 })];
        let plan = plan.iter().chain(&[(30, Fault::Crash { node: 0 }), (40, Fault::Recover { node: 0 })]);
        let faults =
            FaultPlan { faults: plan.map(|(at, f)| crate::faults::Scheduled::new(*at, 0, f.clone())).collect() };
        let cfg = SimConfig { unit_delay: true, faults, ..SimConfig::default() };
        let r = run_with(spec, &topo, &[1, 2], &[0], Rule::Max, &cfg, |_| Disk { term: 0, restored: None });
        assert!(r.errors.is_empty(), "{:?}", r.errors);
        assert_eq!(r.decisions[0], Some(Decision { role: Role::Follower, leader: 2 }), "term 1, then 2 restored");
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

    /// With `log_arrows`, the run logs each position's state at time 0 and every change after, in
    /// time order: Franklin's (Stages) nodes start asleep, become candidates, all but the best id
    /// are defeated and end as followers, the best ends as leader; and the diagram draws one band
    /// per change, coloured by the state's role, each state in the legend. Without it nothing is logged.
    #[test]
    fn states_are_logged_with_the_arrows_and_drawn() {
        let spec = find("stages").unwrap();
        let topo = Topology::build(TopologyKind::RingBi, 5, 0).unwrap();
        let ids = [3, 5, 1, 4, 2];
        let cfg = SimConfig { log_arrows: true, unit_delay: true, ..SimConfig::default() };
        let r = run(spec, &topo, &ids, &[0, 1, 2, 3, 4], Rule::Max, &cfg);
        assert!(r.states.windows(2).all(|w| w[0].time <= w[1].time), "in time order");
        let at_0: Vec<&str> = r.states.iter().take(5).map(|c| c.state).collect();
        assert_eq!(at_0, ["asleep"; 5]);
        for p in 0..5u32 {
            let path: Vec<&str> = r.states.iter().filter(|c| c.position == p).map(|c| c.state).collect();
            let best = ids[p as usize] == 5;
            assert_eq!(path.first(), Some(&"asleep"), "position {p}: {path:?}");
            assert_eq!(path.last(), Some(if best { &"leader" } else { &"follower" }), "position {p}: {path:?}");
            assert!(path.contains(&"candidate"), "position {p}: {path:?}");
            assert_eq!(path.contains(&"defeated"), !best, "position {p}: {path:?}");
            assert!(path.windows(2).all(|w| w[0] != w[1]), "changes only: {path:?}");
        }
        let d = crate::diagram::Diagram {
            nodes: ids.iter().map(|id| format!("id {id}")).collect(),
            arrows: &r.arrows,
            states: &r.states,
            ..crate::diagram::Diagram::default()
        };
        let svg = crate::diagram::svg(&d);
        assert_eq!(svg.matches(r#"<rect class="state""#).count(), r.states.len());
        assert!(svg.contains(r##"data-position="1" data-state="leader" data-colour="#D55E00""##), "{svg}");
        for state in ["asleep", "candidate", "defeated", "follower", "leader"] {
            assert!(svg.contains(&format!(">state: {state}</text>")), "{state} in the legend");
        }
        let plain = run(
            spec,
            &topo,
            &ids,
            &[0, 1, 2, 3, 4],
            Rule::Max,
            &SimConfig { unit_delay: true, ..SimConfig::default() },
        );
        assert!(plain.states.is_empty() && plain.arrows.is_empty());
        assert_eq!(plain.counters, r.counters, "logging changes nothing of the run");
    }

    /// With `log_arrows`, a fault-free run logs one arrow per election or notification message, each
    /// arriving after it left; a kept run leaves the heartbeats out; and the 8-node diagram renders
    /// one arrow per message.
    #[test]
    fn arrows_log_every_message_for_the_diagram() {
        let spec = find("as-far").unwrap();
        let topo = Topology::build(TopologyKind::RingUni, 8, 0).unwrap();
        let ids = IdOrder::Random(3).arrange(8).unwrap();
        let cfg = SimConfig { log_arrows: true, ..SimConfig::default() };
        let r = run(spec, &topo, &ids, &[0, 1, 2, 3, 4, 5, 6, 7], Rule::Max, &cfg);
        assert_eq!(r.arrows.len() as u64, r.counters.messages);
        assert!(r.arrows.iter().all(|a| a.received.is_some_and(|t| t > a.sent) && a.to == (a.from + 1) % 8));
        let nodes = ids.iter().map(|id| format!("id {id}")).collect();
        let leader = ids.iter().position(|&i| i == 8).map(|p| p as u32);
        let d = crate::diagram::Diagram {
            title: "as-far".into(),
            nodes,
            arrows: &r.arrows,
            leader,
            time_unit: "t",
            ring: true,
            ..crate::diagram::Diagram::default()
        };
        let svg = crate::diagram::svg(&d);
        let wraps = r.arrows.iter().filter(|a| (a.from, a.to) == (7, 0)).count();
        assert!(wraps > 0, "AsFar's messages go round the ring");
        assert_eq!(svg.matches(r#"class="msg wrap""#).count(), wraps, "each 7 -> 0 drawn round the edges");
        assert_eq!(svg.matches(r#"class="msg""#).count() + wraps, r.arrows.len());

        let kept = SimConfig { horizon: Some(2_000), log_arrows: true, ..SimConfig::default() };
        let topo = Topology::complete(4).unwrap();
        let ids = IdOrder::Ascending.arrange(4).unwrap();
        let r = run_kept(find("bully").unwrap(), &topo, &ids, &[0, 1, 2, 3], Rule::Max, &kept).unwrap();
        assert!(r.counters.heartbeat_messages > 0);
        assert_eq!(r.arrows.len() as u64, r.counters.messages, "heartbeats are not drawn");
    }

    /// A kept bully leadership heartbeats forever: a horizon stops the run there without a
    /// violation, and the per-position counts leave the heartbeats out, as `messages` does.
    #[test]
    fn horizon_stops_a_kept_leadership() {
        let spec = find("bully").unwrap();
        let topo = Topology::complete(5).unwrap();
        let ids = IdOrder::Ascending.arrange(5).unwrap();
        let cfg = SimConfig { horizon: Some(5_000), log_message_times: true, ..SimConfig::default() };
        let r = run_kept(spec, &topo, &ids, &[0, 1, 2, 3, 4], Rule::Max, &cfg).unwrap();
        assert!(r.horizon_reached && r.terminated);
        assert!(r.verdict.violations.is_empty(), "{:?}", r.verdict.violations);
        assert!(r.end_time <= 5_000 && r.end_time > 4_900, "{}", r.end_time);
        assert!(r.counters.heartbeat_messages > 0);
        assert_eq!(r.sent_per_node.iter().sum::<u64>(), r.counters.messages);
        assert_eq!(r.message_times.len() as u64, r.counters.messages);
        assert!(r.message_times.is_sorted());
        let leader = r.leaderships.last().unwrap().leadership.leader;
        assert_eq!(leader, Some(5));
        assert!(run_kept(find("as-far").unwrap(), &topo, &ids, &[0], Rule::Max, &cfg).is_none());
    }

    /// Every kept algorithm, run with no fault on its default overlay of 3, 5 and 8 nodes over
    /// seeded ids and delays, reaches its horizon with no violation: a kept leadership is judged by
    /// the kept rules (one leader per term), not the one-shot ones (Raft's and the lease's first
    /// candidate wins, whatever its id; heartbeats and acknowledgements exceed the one-shot bound).
    #[test]
    fn kept_runs_without_faults_have_no_violation() {
        let kept: Vec<&AlgorithmSpec> = crate::algo::catalogue::CATALOGUE.iter().filter(|s| s.kept.is_some()).collect();
        assert!(kept.len() >= 6, "bully, repaired ring, zookeeper, chubby, raft, lease: {}", kept.len());
        for spec in kept {
            for n in [3u32, 5, 8] {
                let topo = Topology::build(spec.default_topology(), n, 1).unwrap();
                let all: Vec<u32> = (0..n).collect();
                for seed in 0..4u64 {
                    let ids = IdOrder::Random(seed).arrange(n).unwrap();
                    let cfg = SimConfig { seed, horizon: Some(3_000), log_message_times: true, ..SimConfig::default() };
                    let r = run_kept(spec, &topo, &ids, &all, spec.rule, &cfg).unwrap();
                    let ctx = format!("{} n {n} seed {seed} ids {ids:?}", spec.name);
                    assert!(r.horizon_reached && r.errors.is_empty(), "{ctx}: {:?}", r.errors);
                    assert!(r.leaderships.iter().any(|e| e.leadership.leader.is_some()), "{ctx}: never a leader");
                    assert!(r.verdict.violations.is_empty(), "{ctx}: {:?}", r.verdict.violations);
                    assert_eq!(r.verdict.failed_reason, None, "{ctx}");
                }
            }
        }
    }

    /// A run that never goes quiet is cut at the delivery cap and reported.
    #[test]
    fn non_termination_is_reported() {
        let spec = find("all-the-way").unwrap();
        let topo = Topology::ring(TopologyKind::RingUni, 8, 0).unwrap();
        let cfg = SimConfig { max_deliveries: 10, ..SimConfig::default() };
        let r = run(spec, &topo, &IdOrder::Ascending.arrange(8).unwrap(), &[0], Rule::Min, &cfg);
        assert!(!r.terminated);
        assert!(
            r.verdict.violations.iter().any(|v| v.to_string().contains("did not go quiet")),
            "{:?}",
            r.verdict.violations
        );
    }

    /// Test machine for pauses: position 0 (id 1) sends `Notify { leader: 11 }` at once, then 12 at
    /// 20 ms and 13 at 30 ms (timers 5 and 6); position 1 (id 2) sets timer 1 for 40 ms and timer 2
    /// for 30 ms. Every step of position 1 announces a new term whose "leader" names what the step
    /// took: 1000 + timer, or the message's number.
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    struct Journal {
        id: u64,
        steps: u64,
    }

    impl Journal {
        fn note(&mut self, what: u64, out: &mut Outbox) {
            if self.id == 2 {
                self.steps += 1;
                out.push(Effect::Lead(Leadership { term: self.steps, leader: Some(what) }));
            }
        }
    }

    impl Algorithm for Journal {
        fn on_start(&mut self, out: &mut Outbox) {
            if self.id == 1 {
                out.send(RIGHT, Msg::Notify { leader: 11 });
                out.push(Effect::SetTimer { timer: 5, after_ms: 20 });
            } else {
                out.push(Effect::SetTimer { timer: 1, after_ms: 40 });
                out.push(Effect::SetTimer { timer: 2, after_ms: 30 });
            }
        }
        fn on_message(&mut self, _port: Port, msg: Msg, out: &mut Outbox) -> Result<(), AlgoError> {
            if let Msg::Notify { leader } = msg {
                self.note(leader, out);
            }
            Ok(())
        }
        fn on_timer(&mut self, timer: TimerId, out: &mut Outbox) {
            match (self.id, timer) {
                (1, 5) => {
                    out.send(RIGHT, Msg::Notify { leader: 12 });
                    out.push(Effect::SetTimer { timer: 6, after_ms: 10 });
                }
                (1, _) => out.send(RIGHT, Msg::Notify { leader: 13 }),
                _ => self.note(1_000 + u64::from(timer), out),
            }
        }
        fn state(&self) -> &'static str {
            "journal"
        }
    }

    /// Position 1's steps as (time, what it took), under `plan`.
    fn journal(plan: Vec<(u64, Fault)>) -> (Vec<(u64, u64)>, SimReport) {
        let spec = find("as-far").unwrap();
        let topo = Topology::ring(TopologyKind::RingUni, 2, 0).unwrap();
        let faults =
            FaultPlan { faults: plan.into_iter().map(|(at, f)| crate::faults::Scheduled::new(at, 0, f)).collect() };
        let cfg = SimConfig { unit_delay: true, fifo: true, faults, ..SimConfig::default() };
        let r = run_with(spec, &topo, &[1, 2], &[0, 1], Rule::Max, &cfg, |c| Journal { id: c.id, steps: 0 });
        let steps =
            r.leaderships.iter().filter(|e| e.position == 1).map(|e| (e.time, e.leadership.leader.unwrap())).collect();
        (steps, r)
    }

    /// A node paused from 10 to 110 takes no step meanwhile; at 110 its timers that came due fire
    /// first, in deadline order (timer 2 at 30 before timer 1 at 40), then the messages that reached
    /// it (12 at 21, 13 at 31) in arrival order. Unpaused, each step comes at its own time. A second
    /// pause extends the first to the later end; a crash drops what was held.
    #[test]
    fn a_pause_defers_timers_then_hands_over_held_messages() {
        let (steps, _) = journal(Vec::new());
        assert_eq!(steps, [(1, 11), (21, 12), (30, 1_002), (31, 13), (40, 1_001)]);
        let (steps, r) = journal(vec![(10, Fault::Pause { node: 1, ms: 100 })]);
        assert_eq!(steps, [(1, 11), (110, 1_002), (110, 1_001), (110, 12), (110, 13)], "{:?}", r.fault_log);
        assert!(r.fault_log.iter().any(|l| l == "110: position 1 resumes: 2 timer(s) due, 2 input(s) held"));
        let (steps, _) =
            journal(vec![(10, Fault::Pause { node: 1, ms: 100 }), (50, Fault::Pause { node: 1, ms: 100 })]);
        assert_eq!(steps.last(), Some(&(150, 13)), "the second pause ends later: it extends the first");
        let (steps, r) = journal(vec![(10, Fault::Pause { node: 1, ms: 100 }), (35, Fault::Crash { node: 1 })]);
        assert_eq!(steps, [(1, 11)], "a crash drops what was held");
        assert_eq!(r.dropped, 2, "the two held messages are lost with the crash");
    }
}
