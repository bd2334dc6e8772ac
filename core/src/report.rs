//! What a simulation is asked ([`SimConfig`]) and what it answers
//! ([`SimReport`]): plain data, apart from the scheduler so that the
//! catalogue can name a simulation's type without depending on it.

use crate::counters::Counters;
use crate::faults::{FaultPlan, Outage};
use crate::invariants::Verdict;
use crate::protocol::detector::DetectorConfig;
use crate::protocol::{Decision, Leadership, Msg, MsgKind};

/// A handle that stops a running simulation from another thread
/// ([`SimConfig::cancel`]): the run ends within a few thousand events,
/// reported with [`SimReport::cancelled`]. Clones share the flag; configs
/// compare equal whatever their handles.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Option<std::sync::Arc<std::sync::atomic::AtomicBool>>);

impl Cancel {
    /// A handle that can be triggered.
    pub fn new() -> Cancel {
        Cancel(Some(std::sync::Arc::default()))
    }

    /// Ask the run to stop.
    pub fn cancel(&self) {
        if let Some(flag) = &self.0 {
            flag.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Was the run asked to stop?
    #[inline]
    pub fn is_cancelled(&self) -> bool {
        self.0.as_ref().is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed))
    }
}

impl PartialEq for Cancel {
    fn eq(&self, _: &Cancel) -> bool {
        true
    }
}

/// How to schedule a simulated run.
#[derive(Clone, Debug, PartialEq)]
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
    /// random bits ([`crate::protocol::coin`]).
    pub seed: u64,
    /// Stop after this many deliveries (0 = a generous multiple of the bound).
    pub max_deliveries: u64,
    /// Faults to apply (none by default); see the module docs.
    pub faults: FaultPlan,
    /// Stop at this virtual time (events of that instant included): for kept
    /// leaderships, whose heartbeats never go quiet. `None`: run until quiet.
    /// Reaching it is no failure ([`SimReport::horizon_reached`]); with a
    /// horizon and `max_deliveries == 0` there is no delivery cap.
    pub horizon: Option<u64>,
    /// Record the time of every election or notification message sent in
    /// [`SimReport::message_times`] (for failover costs; off by default).
    pub log_message_times: bool,
    /// Record every election or notification message (sender, receiver,
    /// kind, sending and arrival time) in [`SimReport::arrows`], for the
    /// space-time diagram ([`crate::diagram`]); off by default.
    pub log_arrows: bool,
    /// Failure-detector settings of kept leaderships ([`run_kept`](crate::sim::run_kept)), in
    /// virtual milliseconds; [`DetectorConfig::LOOPBACK`] by default.
    pub detector: DetectorConfig,
    /// Stops the run when triggered from elsewhere (a user's StopElection,
    /// the controller's shutdown); never by default.
    pub cancel: Cancel,
    /// The election's algorithm options, as a request gives them (checked
    /// with [`crate::spec::check_options`]; a per-node option is cut to each
    /// node's value); none by default.
    pub options: Vec<(String, String)>,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            fifo: true,
            unit_delay: false,
            max_delay: 16,
            stagger: false,
            seed: 0,
            max_deliveries: 0,
            faults: FaultPlan::default(),
            horizon: None,
            log_message_times: false,
            log_arrows: false,
            detector: DetectorConfig::LOOPBACK,
            cancel: Cancel::default(),
            options: Vec::new(),
        }
    }
}

/// A fault aimed at whoever leads, and the leader the simulator found for it at its time
/// (the live node whose latest kept leadership names itself, the highest term first, else a
/// one-shot leader; `None`: nobody led, and the fault did nothing).
#[derive(Clone, Debug, PartialEq)]
pub struct LeaderFault {
    /// When it struck.
    pub at: u64,
    /// The fault as planned.
    pub fault: crate::faults::Fault,
    /// The leader's position.
    pub leader: Option<u32>,
}

/// What a simulated run produced.
#[derive(Clone, Debug, PartialEq)]
pub struct SimReport {
    /// Positions.
    pub n: u32,
    /// Initiators.
    pub k: u32,
    /// Each position's decision.
    pub decisions: Vec<Option<Decision>>,
    /// Election and notification messages sent by each position (heartbeats
    /// excluded, as from [`Counters::messages`], which is their sum).
    pub sent_per_node: Vec<u64>,
    /// Totals.
    pub counters: Counters,
    /// Longest causal chain of messages.
    pub ideal_time: u64,
    /// Virtual time of the last event.
    pub end_time: u64,
    /// Messages delivered (fault duplicates included).
    pub deliveries: u64,
    /// Messages sent but lost to faults (crashed receivers, partitions, lossy
    /// links); sent messages = deliveries − duplicated + dropped once quiet.
    pub dropped: u64,
    /// Extra copies delivered by faults.
    pub duplicated: u64,
    /// Messages given extra delay by faults.
    pub delayed: u64,
    /// Messages exempted from FIFO order by faults (FIFO runs only).
    pub reordered: u64,
    /// Positions down at the end.
    pub crashed: Vec<u32>,
    /// Every crash the faults caused (`CrashLeader` resolved), in time order,
    /// with its recovery if any (see [`crate::failover`]).
    pub outages: Vec<Outage>,
    /// Every partition that took effect, in time order, with when it was
    /// replaced or healed.
    pub splits: Vec<crate::faults::Split>,
    /// What the node faults did, with their times ("40: position 2
    /// crashed"), including faults that found nothing to do.
    pub fault_log: Vec<String>,
    /// Every pause that took effect ([`Fault::Pause`](crate::faults::Fault::Pause), a
    /// [`Fault::PauseLeader`](crate::faults::Fault::PauseLeader) resolved): (position, from,
    /// until), in time order.
    pub pauses: Vec<(u32, u64, u64)>,
    /// Every fault aimed at whoever leads (`CrashLeader`, `LeaveLeader`, `CutOffLeader`,
    /// `LeaderClock`, `PauseLeader`), in time order, with the leader it found at its time.
    pub leader_faults: Vec<LeaderFault>,
    /// Algorithm or driver errors (at most 16 kept).
    pub errors: Vec<String>,
    /// The run went quiet or reached its horizon (did not hit `max_deliveries`
    /// or the timer cap).
    pub terminated: bool,
    /// The run stopped at [`SimConfig::horizon`] with events still pending
    /// (not a violation).
    pub horizon_reached: bool,
    /// The run was stopped through [`SimConfig::cancel`] (`terminated` is
    /// false, and the verdict says so).
    pub cancelled: bool,
    /// With [`SimConfig::log_message_times`]: the virtual time of each
    /// election or notification message sent, in sending order (so sorted).
    pub message_times: Vec<u64>,
    /// With [`SimConfig::log_arrows`]: every election or notification
    /// message, in sending order; a duplicated one twice, a lost one with no
    /// arrival (a message that reaches a node crashed meanwhile is drawn as
    /// arriving).
    pub arrows: Vec<Arrow>,
    /// With [`SimConfig::log_arrows`]: each position's state at time 0 and
    /// every change of it, in the order they happened.
    pub states: Vec<StateChange<'static>>,
    /// The literature bound for (n, k).
    pub bound: u64,
    /// Every [`Effect::Lead`](crate::protocol::Effect::Lead) in time order: the kept-leadership timeline.
    pub leaderships: Vec<LeadershipEvent>,
    /// What the leaders' writes met at a modelled resource, with fencing and
    /// without (kept runs; see [`crate::fencing`]).
    pub fencing: crate::fencing::Fencing,
    /// Invariant checks, including `errors` and termination.
    pub verdict: Verdict,
}

/// A node's state as its algorithm names it ([`Algorithm::state`](crate::protocol::Algorithm::state):
/// `candidate`, `defeated`, `leader`, ...) from a time on. The simulator's names are the
/// algorithms' own (`'static`); a driver that reads them from the network borrows them from the
/// election they belong to, so no election's names outlive it or crowd out another's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StateChange<'a> {
    /// When (the driver's time unit).
    pub time: u64,
    /// The node's position.
    pub position: u32,
    /// Its state from then on.
    pub state: &'a str,
}

/// Each position's last state logged, and the changes (what the drivers keep
/// while arrows are logged).
#[derive(Clone, Debug, Default)]
pub struct StateLog {
    last: Vec<Option<&'static str>>,
    changes: Vec<StateChange<'static>>,
}

impl StateLog {
    /// A log of `n` positions, none noted yet.
    pub fn new(n: usize) -> Self {
        StateLog { last: vec![None; n], changes: Vec::new() }
    }

    /// Position `position` is in `state` at `time`: logged if it changed.
    #[inline]
    pub fn note(&mut self, position: usize, time: u64, state: &'static str) {
        if let Some(last) = self.last.get_mut(position)
            && *last != Some(state)
        {
            *last = Some(state);
            self.changes.push(StateChange { time, position: position as u32, state });
        }
    }

    /// The changes, in the order noted.
    pub fn into_changes(self) -> Vec<StateChange<'static>> {
        self.changes
    }
}

/// One message as the space-time diagram ([`crate::diagram`]) draws it: who sent it to whom, of which kind, when it left and when it
/// arrived (`None`: lost).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrow {
    /// Sending position.
    pub from: u32,
    /// Receiving position.
    pub to: u32,
    /// Message kind.
    pub kind: MsgKind,
    /// Sending time.
    pub sent: u64,
    /// Arrival time, `None` if the message was lost.
    pub received: Option<u64>,
    /// The message itself, where the driver knows it: what a label says.
    pub msg: Option<Msg>,
    /// A fault delayed it (drawn dashed).
    pub slow: bool,
    /// Not received because the run ended with it still on its way (drawn
    /// to the chart's edge), rather than lost.
    pub in_flight: bool,
}

/// A node's [`Effect::Lead`](crate::protocol::Effect::Lead) and when it came.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeadershipEvent {
    /// Virtual time.
    pub time: u64,
    /// The node's position.
    pub position: u32,
    /// What it now believes.
    pub leadership: Leadership,
}
