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
//!   (its disk) as [`Input::Restore`](crate::protocol::Input::Restore), and it is woken with [`Input::Start`](crate::protocol::Input::Start).
//! * `Link { from, to, fault }`: each message sent on a matching link (of the
//!   fault's `kind`, if any; only the `nth` such message per link, if set)
//!   meets the latest matching link fault only: it is lost with probability
//!   `drop`; else it takes `delay_ms + uniform(0..=jitter_ms)` extra time
//!   units, is delivered twice with probability `duplicate` (the copy right
//!   after the original; it counts as a delivery, not as a message sent), and
//!   on FIFO links is exempt from FIFO order with probability `reorder`. A
//!   fault without effect clears what it selects (see [`crate::faults`]).
//! * A fault with a [`Trigger`](crate::faults::Trigger) waits for its event, then takes effect `at`
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
//!
//! # Layout
//!
//! This file holds the entry points ([`run`], [`run_kept`], [`run_with`]) and
//! the types the rooms share; each room one concern: `run` (setting up and
//! the run loop), `net` (the calendar queue, timers, links and the nodes'
//! [`Sink`](crate::shell::Sink)), `nodes` (a node's step), `faults` (the
//! fault engine), `leader` (faults aimed at whoever leads), `store` (the
//! election's store), `assemble` (the report).

mod assemble;
mod faults;
mod leader;
mod net;
mod nodes;
mod run;
mod store;
#[cfg(test)]
mod tests;

use std::cmp::Reverse;

use crate::faults::FaultError;
use crate::invariants::Rules;
use crate::protocol::{Algorithm, Msg, NodeContext, Port, Rule, TimerId};
use crate::shell::{Outputs, ShellState};
use crate::spec::AlgorithmSpec;
use crate::topology::Topology;
use net::Net;
use run::{drive, set_up};

pub use crate::report;
pub use crate::report::{Cancel, LeaderFault, LeadershipEvent, SimConfig, SimReport};

/// Events between two looks at [`SimConfig::cancel`].
const CANCEL_CHECK: u64 = 4096;

/// A scheduled delivery or wake-up; its time is the bucket it sits in.
#[derive(Clone, Copy, Debug)]
enum Ev {
    Deliver { to: u32, port: Port, depth: u64, msg: Msg },
    Start { to: u32 },
}

/// A pending timer: (time, seq, position, timer, generation).
type TimerEv = Reverse<(u64, u64, u32, TimerId, u64)>;

/// Fewest timer events a run may fire before it counts as not terminating.
const MAX_TIMER_EVENTS: u64 = 400_000_000;
/// Largest extra delay a link fault gives a message (see [`crate::faults::MAX_FAULT_DELAY`]).
pub use crate::faults::MAX_FAULT_DELAY;
/// With faults, a run in which nothing is in flight and the nodes' timers
/// have sent, decided and announced nothing for this long counts as quiet:
/// a round clock waiting for a crashed neighbour would otherwise tick until
/// the timer cap.
pub const IDLE_TIME: u64 = 100_000;

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
/// [`KeptSpec::build`](crate::spec::KeptSpec::build) (boxed, with their failure detector), and
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
    assemble::report(run, d, ending, bound)
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
