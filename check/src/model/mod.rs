//! The system a check explores: every node's shell, the messages in flight,
//! pending timers, the faults so far; the steps that may follow a state, and
//! the properties every state must keep.
//!
//! (How time passes and which faults strike: [`ElectionModel`].)
//!
//! Its parts: the state (`state`), the moves that may follow a state and the
//! successors the explorer takes (`moves`), the partial-order reductions and
//! the ranks by which one state stands for another (`reductions`), what a
//! step does (`step`), the properties (`properties`), and a schedule drawn
//! and told in words (`render`).

mod inspect;
mod moves;
mod properties;
mod reductions;
mod render;
mod state;
mod step;
mod symmetric;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::Mutex;

use ringleader_core::algo::detector::DetectorConfig;
#[cfg(doc)]
use ringleader_core::algo::detector::HEARTBEAT_TIMER;
use ringleader_core::algo::{Algorithm, Msg, NodeContext, Port, PortInfo, Rule};
use ringleader_core::shell::Shell;
use ringleader_core::spec::AlgorithmSpec;
use ringleader_core::topology::Topology;

use state::Node;

pub use moves::Move;
pub use properties::{KEPT_PROPERTIES, PROPERTIES};
pub use ringleader_core::schedule::Step;
pub use state::{Observation, System};
pub use symmetric::{ENDS, MAX_ROUNDS};

/// One election to check: an algorithm on an overlay, its ids (in position
/// order), its initiators and the rule that picks the winner; one-shot, or
/// keeping a leader behind the failure detector ([`Election::kept`]), with
/// the faults the network may inflict ([`Election::faults`]).
#[derive(Clone, Debug)]
pub struct Election {
    /// The algorithm.
    pub spec: &'static AlgorithmSpec,
    /// The overlay.
    pub topology: Topology,
    /// Ids in position order.
    pub ids: Vec<u64>,
    /// Positions that wake spontaneously.
    pub initiators: Vec<u32>,
    /// Which extremum wins.
    pub rule: Rule,
    /// Keep a leader (the algorithm's kept mode, behind the heartbeat
    /// detector with these settings) instead of electing once.
    pub kept: Option<DetectorConfig>,
    /// The faults a schedule may contain.
    pub faults: Faults,
    /// The longest a message takes, in milliseconds: one tick of the model's
    /// clock (see the module's "Time").
    pub delay_ms: u64,
    /// Timers fire on time: a node whose timer is due takes no message sent
    /// after it fell due (see [`ElectionModel`], "Punctual timers"). A
    /// stronger assumption than the default (a due timer may fire anywhere in
    /// its tick, after messages sent in it), for far fewer states.
    pub punctual_timers: bool,
    /// Kept: a partition heals within this many milliseconds (`None`: at any
    /// point, or never). While a partition lasts, the side without a quorum
    /// may climb through terms without end, and so may the states.
    pub partition_ms: Option<u64>,
    /// Kept, with partitions: the one split a partition makes, as the
    /// positions on one side of it (a bit per position; either side names the
    /// same split); `None`: any split. The checks of each split alone explore
    /// together the states of the check of every split (each also explores
    /// the states before the partition strikes), in pieces that finish and
    /// report on their own (see docs/checking.md, "One split at a time").
    pub partition_side: Option<u32>,
    /// One node's clock runs at a rate other than real time's (the
    /// simulator's [`Fault::Clock`], from the start): its timers last
    /// `1 / rate` times as long in the model's ticks. `None`: every clock
    /// keeps real time (to within a tick, see "Time").
    ///
    /// [`Fault::Clock`]: ringleader_core::faults::Fault::Clock
    pub clock: Option<Clock>,
    /// The seed of the nodes' random bits ([`NodeContext::coin`], drawn as
    /// the simulator and the runtime draw them for an election of this
    /// seed): a randomised algorithm is checked on every schedule of the
    /// draws this seed gives. 0 by default.
    pub seed: u64,
}

/// A node's clock that runs at `rate` times real time ([`Election::clock`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Clock {
    /// The node's position.
    pub position: u32,
    /// Times real time, within the simulator's bounds
    /// ([`MIN_CLOCK_RATE`]..=[`MAX_CLOCK_RATE`]): 0.5 is a clock at half speed.
    ///
    /// [`MIN_CLOCK_RATE`]: ringleader_core::faults::MIN_CLOCK_RATE
    /// [`MAX_CLOCK_RATE`]: ringleader_core::faults::MAX_CLOCK_RATE
    pub rate: f64,
}

impl Election {
    /// A one-shot election, no faults, delays of [`DEFAULT_DELAY_MS`].
    pub fn new(
        spec: &'static AlgorithmSpec,
        topology: Topology,
        ids: Vec<u64>,
        initiators: Vec<u32>,
        rule: Rule,
    ) -> Self {
        Election {
            spec,
            topology,
            ids,
            initiators,
            rule,
            kept: None,
            faults: Faults::NONE,
            delay_ms: DEFAULT_DELAY_MS,
            punctual_timers: false,
            partition_ms: None,
            partition_side: None,
            clock: None,
            seed: 0,
        }
    }

    /// The kept leadership of `spec` on `topology` with `ids`, every node
    /// starting, behind the detector `d`, under `faults`.
    pub fn kept(
        spec: &'static AlgorithmSpec,
        topology: Topology,
        ids: Vec<u64>,
        d: DetectorConfig,
        faults: Faults,
    ) -> Self {
        let initiators = (0..topology.len()).collect();
        Election {
            kept: Some(d),
            faults,
            delay_ms: d.period_ms,
            ..Election::new(spec, topology, ids, initiators, spec.rule)
        }
    }
}

/// The default longest delay of a message: the loopback detector's period.
pub const DEFAULT_DELAY_MS: u64 = DetectorConfig::LOOPBACK.period_ms;

/// How many faults of each kind a schedule may contain.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Faults {
    /// Crashes.
    pub crashes: u8,
    /// A crashed node may recover, as a new incarnation (at any point after
    /// its crash); otherwise crashes are for good.
    pub recover: bool,
    /// Lost messages.
    pub losses: u8,
    /// Duplicated messages.
    pub duplications: u8,
    /// Partitions (each heals when the schedule says so).
    pub partitions: u8,
}

impl Faults {
    /// No fault at all.
    pub const NONE: Faults = Faults { crashes: 0, recover: false, losses: 0, duplications: 0, partitions: 0 };

    /// Is any fault allowed?
    pub fn any(&self) -> bool {
        *self != Faults::NONE
    }
}

/// The model of one [`Election`]: how to build its first state, which steps
/// follow a state, what a step does, and the properties.
///
/// ## Time
///
/// Time is counted in *ticks* of [`Election::delay_ms`], the longest a
/// message may take (digital clocks: the usual discrete-time reading of a
/// timed system). A message sent between two ticks is delivered before the
/// second tick after it (it crosses at most one tick), so the delivery bound
/// holds; a timer set for `after_ms` falls due ⌈after_ms / delay_ms⌉ ticks
/// later and fires before the next tick, in any order with the deliveries
/// of that tick. [`Step::Tick`] is possible only when no message crossed a
/// tick already and no timer is due; while nothing is in flight it jumps
/// straight to the next timer. Without pending timers time plays no part
/// (no tick is taken): the one-shot algorithms without timers are checked in
/// the asynchronous model, any delay.
///
/// ## Faults
///
/// Each within the [`Faults`] budget, at any point after every node has
/// started: a crash (the node's timers are void and the messages in flight to
/// it are lost; it may later recover as a new incarnation with its persisted
/// record), a lost message, a duplicated message, and a partition of the
/// nodes into two sides (messages in flight across it are lost, and so are
/// sends across it) that later heals.
///
/// ## Quiet heartbeats
///
/// A heartbeat that would only tell its receiver that the sender lives
/// ([`Shell::only_refreshes`]: the receiver does not suspect the sender and
/// its algorithm ignores the heartbeat) changes nothing but the detector's
/// silence count for the sender, which only the receiver's clock
/// ([`HEARTBEAT_TIMER`]) reads; and it stays quiet until a step of its
/// receiver changes that. So when such a heartbeat arrives makes no
/// difference to any property, only whether before or after its receiver's
/// clock and the step that ends its quietness, and [`ElectionModel::moves`]
/// delivers quiet heartbeats only as the prelude of a [`Move`]: just before
/// their receiver's clock (any subset of them), just before a step of their
/// receiver after which they would no longer be quiet (any subset of those),
/// before a partition that would cut them off (any subset), and, those that
/// crossed a tick already, before the tick (all, as they must). Any schedule
/// is matched by one that moves each quiet delivery later, to just before the
/// next of those (or for good if the receiver crashes first, which forgets
/// what it counted); the states in between differ only in silence
/// counts and in flight, which no property reads. This partial-order
/// reduction applies to kept leaderships on links in any order;
/// [`ElectionModel::with_reduction`] turns it off, and the check's tests
/// compare both.
///
/// ## Faults at their earliest
///
/// With the same reduction on, a lost message is lost as it is sent (a move
/// may end by losing one of the messages its step just sent) and a crash
/// strikes just after a step of the node that crashes (a move may end by
/// crashing its node); the step that lets faults strike at all (the last
/// start) may be followed by any loss or crash, and a recovery by any crash
/// ([`ElectionModel::successors`]). A schedule with a fault later is matched
/// by one with it that early: every node takes the same steps, no other step
/// needed what the fault removed (links in any order), and the convergence
/// bound starts earlier, asking no less; a state between is reached by the
/// schedule's fault-free prefix.
///
/// ## Partitions at their latest, heals at their earliest
///
/// With the same reduction on, a partition strikes only just before a step
/// that sends across it (whose sends it cuts off: the move starts with the
/// partition), just before a tick (when it cuts off a message in flight,
/// which may not outlive the next tick, or, with punctual timers, when the
/// tick makes a timer due: no partition strikes at that instant),
/// or heals at once (when it cuts off a message in flight); and a partition
/// heals only just after a step whose send across it cut off (the move ends
/// with the heal). A schedule whose partition strikes earlier is matched by
/// one that strikes it later, just before the first of those steps: no
/// message crossed in between (nothing was sent across, and what was in
/// flight across is cut off all the same, later), every node takes the same
/// steps, and the states in between differ only in the partition in force
/// and the clock, which stood at 0 and now runs on (asking no less). A
/// schedule whose partition heals later is matched by one that heals it
/// just after the last send it cut off: nothing was sent across in between,
/// and the convergence bound starts earlier, asking no less. Either schedule
/// spends no longer in partition than the original, so the bound on how
/// long a partition lasts ([`Election::partition_ms`]) holds for it too.
/// (Not with recoveries in the budget: see
/// [`ElectionModel::ranks_partitions`]; then partitions and heals are steps
/// at any point, as without the reduction.)
///
/// ## Punctual timers
///
/// By default a timer due at a tick may fire anywhere in the tick that
/// follows, after messages sent in it (a late timer, or a node whose clock
/// runs a little behind the others': every node's clock starts in the first
/// tick, so the detectors' periods are in step). With
/// [`Election::punctual_timers`] a timer fires on time instead: a node whose
/// timer is due takes no message sent after it fell due (nor takes in such a
/// quiet heartbeat first), only those sent before the tick. A stronger
/// assumption, and it makes the due timers of different nodes independent:
/// their steps touch their own node, and what they send cannot reach
/// another due node before it fires. So with the reduction on, a state with
/// a timer due explores only the moves of the node of least id with one (a
/// persistent set: no step of another node can enable or disable them or
/// reach that node first), unless one of them changes what the properties
/// read (then every move), and none when a duplication or a crash after a
/// recovery could come next. No partition strikes or heals at the instant of
/// a tick, between the timers due at it (the model offers neither while a
/// timer is due): whether a heartbeat crosses a partition depends on whether
/// its timer fires before the heal or after it, so a heal between two due
/// timers would not commute with them. (A partition may come after the
/// node's steps instead of before: it only removes messages, and what the
/// node then does it does as well before it; with heals at their earliest,
/// a heal after a due timer's step comes once no timer is due.) Every
/// cycle of states passes a tick, before which
/// no timer is due and every move is explored. Measured in
/// `punctual_timers_assume_more_and_reduce_exactly` (check's tests): the
/// reduction reaches every observation of the punctual model, and the
/// punctual model misses some of the default's (the repaired ring's third
/// election after a crash needs a late timer).
#[derive(Debug)]
pub struct ElectionModel {
    election: Election,
    fifo: bool,
    /// The first link index of each position (`link_base[p] + port`).
    link_base: Vec<usize>,
    /// Each position's node before it starts (a recovery starts a copy).
    fresh: Vec<Box<dyn Algorithm>>,
    expected: Option<u64>,
    bound: u64,
    /// Kept: ticks within which a leader must be agreed after the last fault.
    converge_ticks: u32,
    /// Deliver quiet heartbeats only just before a step of their receiver
    /// (see "Quiet heartbeats").
    reduce: bool,
    /// Ticks within which a partition heals ([`Election::partition_ms`]).
    heal_within: Option<u32>,
    /// The one split a partition may make, as its side without position 0
    /// ([`Election::partition_side`]).
    split: Option<u32>,
    /// [`Self::only_refreshes`]'s answers, by node hash, port and message.
    refreshes: Mutex<HashMap<(u64, Port, Msg), bool, foldhash::fast::FixedState>>,
}

impl ElectionModel {
    /// The model of `election`; `fifo`: links deliver first in, first out.
    pub fn new(election: Election, fifo: bool) -> Self {
        let t = &election.topology;
        let mut link_base = Vec::with_capacity(t.len() as usize);
        let mut links = 0;
        for p in 0..t.len() {
            link_base.push(links);
            links += t.ports(p).len();
        }
        let k = election.initiators.len() as u64;
        let bound = election.spec.bound_for(t, k);
        let expected = election.spec.expected_winner(t, &election.ids, &election.initiators, election.rule);
        let mut info: Vec<PortInfo> = Vec::new();
        let n = t.len();
        let fresh = (0..n)
            .map(|p| {
                let e = &election;
                let ctx = NodeContext::at(t, &e.ids, p, e.rule, e.seed, &mut info);
                match (e.kept, e.spec.kept.map(|k| k.build)) {
                    (Some(d), Some(build)) => build(&ctx, d),
                    _ => (e.spec.machine.build)(&ctx),
                }
            })
            .collect();
        let delay = election.delay_ms.max(1);
        let converge_ticks = election
            .kept
            .and_then(|d| election.spec.convergence_bound_ms(d, n, delay))
            .map_or(u32::MAX, |ms| ms.div_ceil(delay).min(u64::from(u32::MAX)) as u32);
        let reduce = election.kept.is_some();
        let heal_within = election.partition_ms.map(|ms| ms.div_ceil(delay).clamp(1, u64::from(u32::MAX)) as u32);
        let all = (1u32 << n) - 1;
        let split = election.partition_side.map(|side| if side & 1 == 1 { !side & all } else { side & all });
        let refreshes = Mutex::default();
        ElectionModel {
            election,
            fifo,
            link_base,
            fresh,
            expected,
            bound,
            converge_ticks,
            reduce,
            heal_within,
            split,
            refreshes,
        }
    }

    /// Explore every point at which a quiet heartbeat may arrive (`false`),
    /// or only the points before its receiver's steps (`true`, the default
    /// for kept leaderships; see "Quiet heartbeats", and "FIFO links" for
    /// links that deliver in order). Both visit the same situations; the
    /// second far fewer states.
    pub fn with_reduction(mut self, reduce: bool) -> Self {
        self.reduce = reduce && self.is_kept();
        self
    }

    /// The election checked.
    pub fn election(&self) -> &Election {
        &self.election
    }

    /// The algorithm's message bound for this election (one-shot).
    pub fn bound(&self) -> u64 {
        self.bound
    }

    /// Does the election keep a leader?
    pub fn is_kept(&self) -> bool {
        self.election.kept.is_some()
    }

    /// Ticks within which a kept leadership must agree after the last fault.
    pub fn converge_ticks(&self) -> u32 {
        self.converge_ticks
    }

    /// The system before anything happens.
    pub fn initial(&self) -> System {
        let e = &self.election;
        let t = &e.topology;
        let nodes = (0..t.len())
            .map(|p| {
                let ports = t.ports(p).len() as Port;
                let receive_only = t.ports(p).iter().enumerate().filter(|(_, l)| !l.outgoing).map(|(q, _)| q as Port);
                Node::new(
                    Shell::new(self.fresh[p as usize].clone()).with_links(ports, receive_only.collect::<Vec<_>>()),
                )
            })
            .collect();
        let links = Vec::new();
        let mut unstarted = e.initiators.clone();
        unstarted.sort_unstable();
        unstarted.dedup();
        let since_fault = self.is_kept().then_some(0);
        System {
            nodes,
            links,
            timers: Vec::new(),
            store: None,
            store_flights: Vec::new(),
            unstarted,
            down: 0,
            led: Vec::new(),
            cut: 0,
            heal_left: 0,
            cut_sends: false,
            used: Faults::NONE,
            since_fault,
            sent: 0,
            error: None,
        }
    }
}
