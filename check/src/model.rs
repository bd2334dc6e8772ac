//! The system a check explores: every node's shell, the messages in flight,
//! pending timers, the faults so far; the steps that may follow a state, and
//! the properties every state must keep.
//!
//! (How time passes and which faults strike: [`ElectionModel`].)

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ringleader_core::algo::catalogue::AlgorithmSpec;
use ringleader_core::algo::detector::is_reserved;
use ringleader_core::algo::detector::{DetectorConfig, HEARTBEAT_TIMER};
use ringleader_core::algo::{
    Algorithm, Decision, Leadership, Msg, NodeContext, Port, PortInfo, Role, Rule, TimerId, UNKNOWN_LEADER,
};
use ringleader_core::diagram::{Arrow, Mark};
use ringleader_core::invariants;
pub use ringleader_core::schedule::Step;
use ringleader_core::shell::{Output, Outputs, Shell};
use ringleader_core::sim;
use ringleader_core::topology::Topology;

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

/// A message a step sent: on the sender's port, and whether it was lost at
/// once (to a crashed node, or across the partition).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sent {
    /// Sending position.
    pub from: u32,
    /// The sender's port.
    pub port: Port,
    /// The message.
    pub msg: Msg,
    /// Lost when sent.
    pub lost: bool,
}

/// One step of the explored graph: a [`Step`], after the quiet heartbeats
/// its node takes in first (see [`ElectionModel`], "Quiet heartbeats"), and
/// perhaps followed by a fault the step makes possible at its earliest (see
/// "Faults at their earliest"). [`ElectionModel::expand`] spells it out as
/// steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Move {
    /// The step.
    pub step: Step,
    /// How many copies of each quiet heartbeat in the step's scope arrive
    /// first, two bits each in scope order (a tick's prelude is fixed: every
    /// quiet heartbeat that crossed a tick already).
    absorb: u32,
    /// After the step, lose a message: 0 none, k the k-th of
    /// [`ElectionModel::aftermath`]'s candidates.
    lose: u32,
    /// After the step (and the loss), crash a node: 0 none, k the k-th of
    /// [`ElectionModel::aftermath`]'s candidates.
    crash: u32,
    /// Before everything else, split the nodes: the side of a partition that
    /// strikes just before this move's step sends across it (0: none; see
    /// "Partitions at their latest").
    cut: u32,
    /// The quiet heartbeats delivered just before that partition, as
    /// `absorb` is for the step.
    cut_absorb: u32,
    /// After everything else, heal the partition in force (see "Heals at
    /// their earliest").
    heal: bool,
}

impl Move {
    /// `step`, with no prelude and no fault after it.
    pub fn bare(step: Step) -> Self {
        Move { step, absorb: 0, lose: 0, crash: 0, cut: 0, cut_absorb: 0, heal: false }
    }

    /// The partition this move starts with, as a move of its own.
    fn partition(&self) -> Move {
        Move { absorb: self.cut_absorb, ..Move::bare(Step::Partition(self.cut)) }
    }

    /// This move without the partition it starts with.
    fn after_partition(&self) -> Move {
        Move { cut: 0, cut_absorb: 0, ..*self }
    }
}

/// Copies of one quiet heartbeat on one link (see [`ElectionModel`], "Quiet
/// heartbeats").
#[derive(Clone, Copy, Debug)]
struct Quiet {
    from: u32,
    port: Port,
    to: u32,
    msg: Msg,
    copies: u32,
    old: u32,
}

/// A message on a link (its index: the sender's first link,
/// `link_base[from]`, plus the port), and whether it was sent before the last
/// tick (it must then arrive before the next one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Flight {
    link: u32,
    msg: Msg,
    old: bool,
}

/// A timer a node set that has not fired, with the ticks left until it is
/// due, and its stamp: 0 between steps (every state renumbers the shells'
/// timer stamps, [`ShellState::restamp_timers`], once the stale timers are
/// forgotten).
///
/// [`ShellState::restamp_timers`]: ringleader_core::shell::ShellState::restamp_timers
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Pending {
    node: u32,
    timer: TimerId,
    left: u32,
    generation: u64,
}

/// One node of a [`System`]: its shell, shared between states until a step
/// changes it (copy on write: a step touches one node, so a new state copies
/// one node, not all), and the shell's hash, kept beside it so that a
/// state's fingerprint hashes a number per node instead of every node's
/// whole state.
#[derive(Clone, Debug)]
struct Node {
    hash: u64,
    shell: Arc<Shell<Box<dyn Algorithm>>>,
}

impl Node {
    fn new(shell: Shell<Box<dyn Algorithm>>) -> Self {
        let mut node = Node { hash: 0, shell: Arc::new(shell) };
        node.rehash();
        node
    }

    /// The shell, to change (copied first if another state shares it); call
    /// [`Node::rehash`] when done.
    fn edit(&mut self) -> &mut Shell<Box<dyn Algorithm>> {
        Arc::make_mut(&mut self.shell)
    }

    fn rehash(&mut self) {
        use std::hash::BuildHasher;
        self.hash = foldhash::quality::FixedState::with_seed(0x0de5).hash_one(&*self.shell);
    }
}

impl std::ops::Deref for Node {
    type Target = Shell<Box<dyn Algorithm>>;
    fn deref(&self) -> &Self::Target {
        &self.shell
    }
}

impl PartialEq for Node {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash && self.shell == other.shell
    }
}

impl Eq for Node {}

impl std::hash::Hash for Node {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

/// The whole system at one point of a schedule. (Its [`Hash`] leaves out
/// its timing, [`System::timing`]: the ticks since the last fault and those
/// its partition has left to heal; a check hashes them apart where it needs
/// them.)
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct System {
    /// Every node.
    nodes: Vec<Node>,
    /// Messages in flight, by link (one vector for all links: one
    /// allocation per state), in sending order on each FIFO link, sorted (a
    /// multiset) otherwise.
    links: Vec<Flight>,
    /// Timers pending, sorted.
    timers: Vec<Pending>,
    /// Initiators that have not woken yet, in position order.
    unstarted: Vec<u32>,
    /// Crashed nodes (a bit per position).
    down: u32,
    /// Every (term, leader id) a node announced it leads, sorted.
    led: Vec<(u64, u64)>,
    /// The side of the partition in force (a bit per position; 0: none).
    cut: u32,
    /// Ticks within which the partition in force must heal (`u32::MAX`
    /// when it need not; 0 without one). Not hashed: the explorer ranks a
    /// partitioned state by it ([`ElectionModel::rank`]).
    heal_left: u32,
    /// Punctual timers: a send across the partition in force was cut off
    /// since the last state without a timer due (where a heal may come; see
    /// "Heals at their earliest").
    cut_sends: bool,
    /// Faults used so far.
    used: Faults,
    /// Kept leaderships: ticks since the last fault (the start counts as
    /// one), `None` once more than the convergence bound ago.
    since_fault: Option<u32>,
    /// Messages sent so far (one-shot elections only: a kept leadership's
    /// heartbeats never end).
    sent: u64,
    /// The first thing that went wrong, if anything did.
    error: Option<String>,
}

impl std::hash::Hash for System {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let System {
            nodes,
            links,
            timers,
            unstarted,
            down,
            led,
            cut,
            heal_left: _,
            cut_sends,
            used,
            since_fault: _,
            sent,
            error,
        } = self;
        (nodes, links, timers, unstarted, down, led, cut, cut_sends, used, sent, error).hash(state);
    }
}

impl System {
    /// Each position's decision.
    pub fn decisions(&self) -> Vec<Option<Decision>> {
        self.nodes.iter().map(|n| n.decision()).collect()
    }

    /// Each position's kept-leadership belief (`None` for a crashed node).
    pub fn beliefs(&self) -> Vec<Option<Leadership>> {
        self.nodes.iter().enumerate().map(|(p, n)| if self.is_down(p as u32) { None } else { n.leadership() }).collect()
    }

    /// The ticks since the last fault as a rank: the more, the later
    /// (`u32::MAX`: past the convergence bound). Kept leaderships only.
    pub fn clock(&self) -> u32 {
        self.since_fault.unwrap_or(u32::MAX)
    }

    /// What this state's hash leaves out: its clock ([`System::clock`]) and
    /// the ticks within which its partition must heal. With the hash, the
    /// whole state.
    pub fn timing(&self) -> (u32, u32) {
        (self.clock(), self.heal_left)
    }

    /// Messages sent so far (one-shot elections).
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Nothing in flight, no timer pending and every initiator started: no
    /// schedule goes on (but faults).
    pub fn is_final(&self) -> bool {
        self.unstarted.is_empty() && self.timers.is_empty() && self.links.is_empty()
    }

    /// Is a timer due (the model's clock waits for it to fire)?
    pub fn timer_due(&self) -> bool {
        self.timers.iter().any(|t| t.left == 0)
    }

    /// Is a partition in force?
    pub fn partitioned(&self) -> bool {
        self.cut != 0
    }

    /// Has the node at `p` crashed (and not recovered)?
    pub fn is_down(&self, p: u32) -> bool {
        self.down >> p & 1 == 1
    }

    /// The first thing that went wrong, if anything did.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Everything of `self` the properties read: what the nodes decided and
    /// believe, who led which term, the crashed nodes, the ticks since the
    /// last fault, the messages sent and the error. (Not the detectors'
    /// counts, the messages in flight, the timers, the partition in force or
    /// the faults used so far: the properties see a partition only through
    /// the clock, which stands at 0 while it lasts.)
    pub fn observation(&self) -> Observation {
        Observation {
            decisions: self.decisions(),
            beliefs: self.beliefs(),
            led: self.led.clone(),
            down: self.down,
            since_fault: self.since_fault,
            sent: self.sent,
            error: self.error.clone(),
        }
    }
}

/// What the properties read of a [`System`] ([`System::observation`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Observation {
    /// Each position's decision.
    pub decisions: Vec<Option<Decision>>,
    /// Each position's belief (`None` for a crashed node).
    pub beliefs: Vec<Option<Leadership>>,
    /// Every (term, leader id) a node announced it leads, sorted.
    pub led: Vec<(u64, u64)>,
    /// Crashed nodes, a bit per position.
    pub down: u32,
    /// Ticks since the last fault, while within the convergence bound.
    pub since_fault: Option<u32>,
    /// Messages sent so far (one-shot).
    pub sent: u64,
    /// The first thing that went wrong.
    pub error: Option<String>,
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
    /// Are partitioned states told apart without the ticks they have left to
    /// heal, and ranked by them ([`Self::rank`])? Not when a crashed node may
    /// recover: a tick cut short by the bound ends at an instant no other
    /// tick reaches, at which a node may recover out of phase.
    pub fn ranks_partitions(&self) -> bool {
        !self.election.faults.recover
    }

    /// How much `s` asks of what follows it, among the states alike but for
    /// [`System::timing`]: once explored with a rank at least as high, a
    /// state need not be explored again (see "The clock" in
    /// docs/checking.md). Without a partition, its clock: a later one leaves
    /// less time to agree on a leader. In a partition (the clock stands at 0
    /// throughout), the ticks left until it must heal
    /// ([`Self::ranks_partitions`]): with more, every schedule of the state
    /// with fewer is matched by one that heals no later (a tick cut short by
    /// the bound can be followed only by the heal, which the other may take
    /// sooner).
    pub fn rank(&self, s: &System) -> u32 {
        if s.cut != 0 && self.ranks_partitions() { s.heal_left } else { s.clock() }
    }

    /// Do partitions strike at their latest and heal at their earliest (see
    /// "Partitions at their latest")? With the reduction on, and no
    /// recovery in the budget (for the reason in [`Self::ranks_partitions`]).
    fn reduce_partitions(&self) -> bool {
        self.reduce && !self.election.faults.recover
    }

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
                sim::port_info(t, &election.ids, p, &mut info);
                let ports = info.len() as Port;
                let coin = ringleader_core::algo::coin(0, p);
                let e = &election;
                let ctx = NodeContext { id: e.ids[p as usize], rule: e.rule, n, coin, ports, port_info: &info };
                match (e.kept, e.spec.kept.map(|k| k.build)) {
                    (Some(d), Some(build)) => build(&ctx, d),
                    _ => (e.spec.build)(&ctx),
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

    /// A tick of `ticks` (fewer if a partition must heal sooner; none if it
    /// must heal now).
    fn tick(&self, s: &System, ticks: u32) -> Option<Step> {
        let left = if s.cut != 0 { s.heal_left } else { ticks };
        (left > 0).then(|| Step::Tick(ticks.min(left)))
    }

    /// The positions with a timer due (a bit each).
    fn due(s: &System) -> u32 {
        s.timers.iter().filter(|t| t.left == 0).fold(0, |due, t| due | 1 << t.node)
    }

    /// Punctual timers, and a timer is due: the instant of a tick, at which
    /// no partition strikes or heals.
    fn instant(&self, s: &System) -> bool {
        self.election.punctual_timers && Self::due(s) != 0
    }

    /// Is the link from `from` to `to` cut by the partition in force?
    fn cut(s: &System, from: u32, to: u32) -> bool {
        s.cut != 0 && (s.cut >> from & 1) != (s.cut >> to & 1)
    }

    /// Carry out what position `p`'s step put in `out`: sends go on their
    /// links (or are lost, to a crashed node or across the partition),
    /// timers are scheduled; a misstep is the state's error.
    fn absorb(&self, s: &mut System, p: u32, out: &mut Outputs, log: &mut Option<&mut Vec<Sent>>) {
        let delay = self.election.delay_ms.max(1);
        for o in out.drain() {
            match o {
                Output::Send { port, msg } => {
                    if !self.is_kept() {
                        s.sent += 1;
                    }
                    let to = self.election.topology.ports(p)[port as usize].peer;
                    let across = Self::cut(s, p, to);
                    s.cut_sends |= across;
                    let lost = s.is_down(to) || across;
                    if let Some(log) = log {
                        log.push(Sent { from: p, port, msg, lost });
                    }
                    if lost {
                        continue;
                    }
                    self.push(s, Flight { link: self.link_base[p as usize] as u32 + port, msg, old: false });
                }
                Output::SetTimer { timer, after_ms, generation } => {
                    let left = after_ms.div_ceil(delay).min(u64::from(u32::MAX)) as u32;
                    s.timers.retain(|t| (t.node, t.timer) != (p, timer));
                    s.timers.push(Pending { node: p, timer, left, generation });
                    s.timers.sort_unstable();
                }
                Output::Lead(l) => {
                    let id = self.election.ids[p as usize];
                    if l.leader == Some(id)
                        && let Err(at) = s.led.binary_search(&(l.term, id))
                    {
                        s.led.insert(at, (l.term, id));
                    }
                }
                Output::Decided(_) | Output::BeliefEnded(_) => {}
                Output::Misstep(m) => {
                    s.error.get_or_insert_with(|| format!("position {p}: {m:?}"));
                }
            }
        }
    }

    /// The steps that can follow `s`, in a fixed order.
    pub fn actions(&self, s: &System, actions: &mut Vec<Step>) {
        if s.error.is_some() {
            return;
        }
        actions.extend(s.unstarted.iter().map(|&p| Step::Start(p)));
        actions.extend(s.timers.iter().filter(|t| t.left == 0).map(|t| Step::Fire { node: t.node, timer: t.timer }));
        let t = &self.election.topology;
        let mut old = false;
        let due = Self::due(s);
        for from in 0..t.len() {
            let base = self.link_base[from as usize];
            for (port, to) in t.ports(from).iter().enumerate() {
                let link = Self::on_link(s, base + port);
                old |= link.iter().any(|f| f.old);
                let port = port as Port;
                if s.unstarted.binary_search(&to.peer).is_ok() {
                    // An initiator wakes before any message reaches it.
                    continue;
                }
                // Punctual timers: a node whose timer is due takes no message
                // sent since it fell due.
                let punctual = self.election.punctual_timers && due >> to.peer & 1 == 1;
                if self.fifo {
                    if let Some(f) = link.first().filter(|f| f.old || !punctual) {
                        actions.push(Step::Deliver { from, port, msg: f.msg });
                    }
                } else {
                    // A multiset: each distinct message once.
                    let mut last = None;
                    for f in link {
                        if last != Some(f.msg) && (f.old || !punctual) {
                            actions.push(Step::Deliver { from, port, msg: f.msg });
                            last = Some(f.msg);
                        }
                    }
                }
            }
        }
        if s.unstarted.is_empty() && !old && !s.timers.is_empty() && s.timers.iter().all(|t| t.left > 0) {
            let idle = s.links.is_empty();
            let ticks = if idle { s.timers.iter().map(|t| t.left).min().unwrap_or(1) } else { 1 };
            actions.extend(self.tick(s, ticks));
        }
        if !s.unstarted.is_empty() || !self.election.faults.any() {
            return;
        }
        let (budget, used) = (self.election.faults, s.used);
        let n = t.len();
        for p in 0..n {
            if s.is_down(p) {
                if budget.recover {
                    actions.push(Step::Recover(p));
                }
            } else if used.crashes < budget.crashes && s.down == 0 {
                actions.push(Step::Crash(p));
            }
        }
        let losses = used.losses < budget.losses;
        let dups = used.duplications < budget.duplications;
        if losses || dups {
            for from in 0..n {
                let base = self.link_base[from as usize];
                for port in 0..t.ports(from).len() {
                    let mut last = None;
                    for f in Self::on_link(s, base + port) {
                        if last != Some(f.msg) {
                            let (port, msg) = (port as Port, f.msg);
                            if losses {
                                actions.push(Step::Lose { from, port, msg });
                            }
                            if dups {
                                actions.push(Step::Duplicate { from, port, msg });
                            }
                            last = Some(f.msg);
                        }
                    }
                }
            }
        }
        if self.instant(s) {
            // Punctual timers fire at the tick's instant: a partition strikes
            // or heals before it or after them.
        } else if s.cut != 0 {
            actions.push(Step::Heal);
        } else if used.partitions < budget.partitions {
            // One side of each partition: the sides without position 0 (or
            // the one split checked).
            match self.split {
                Some(0) => {} // no split of these nodes
                Some(side) => actions.push(Step::Partition(side)),
                None => actions.extend((1..1u32 << (n - 1)).map(|side| Step::Partition(side << 1))),
            }
        }
    }

    /// The quiet heartbeats in flight in `s`, per link and message, in link
    /// order (none when the reduction is off, or when too many pile up to
    /// encode, which leaves every delivery a step of its own).
    fn quiet(&self, s: &System) -> Vec<Quiet> {
        let mut quiet = Vec::new();
        if !self.reduce || s.error.is_some() {
            return quiet;
        }
        let t = &self.election.topology;
        for from in 0..t.len() {
            let base = self.link_base[from as usize];
            for (port, to) in t.ports(from).iter().enumerate() {
                let link = Self::on_link(s, base + port);
                let mut i = 0;
                // On a FIFO link only the copies at its head may arrive next.
                while i < link.len() && (i == 0 || !self.fifo) {
                    let msg = link[i].msg;
                    let same = link[i..].iter().take_while(|f| f.msg == msg).count();
                    if matches!(msg, Msg::Heartbeat { .. })
                        && !s.is_down(to.peer)
                        && self.only_refreshes(&s.nodes[to.peer as usize], to.remote_port, msg)
                    {
                        let old = link[i..i + same].iter().filter(|f| f.old).count() as u32;
                        let (port, copies) = (port as Port, same as u32);
                        quiet.push(Quiet { from, port, to: to.peer, msg, copies, old });
                    }
                    i += same;
                }
            }
        }
        if quiet.len() > 16 || quiet.iter().any(|q| q.copies > 3) {
            quiet.clear();
        }
        quiet
    }

    /// May a move of `step` take in the quiet heartbeat `q` first? A step
    /// of a node takes in those to it; a partition, those it would cut off;
    /// other steps none. ([`Self::moves`] and [`Self::expand`] both ask
    /// here, so a move replays as it was offered.)
    fn in_scope(&self, step: Step, q: &Quiet) -> bool {
        match step {
            Step::Deliver { from, port, .. } => self.election.topology.ports(from)[port as usize].peer == q.to,
            Step::Fire { node, .. } => node == q.to,
            Step::Partition(side) => (side >> q.from & 1) != (side >> q.to & 1),
            _ => false,
        }
    }

    /// The moves that can follow `s`, in a fixed order: [`Self::actions`]'s
    /// steps, each quiet heartbeat's delivery folded into the steps its
    /// receiver takes next (see "Quiet heartbeats").
    pub fn moves(&self, s: &System, moves: &mut Vec<Move>) {
        let mut steps = Vec::new();
        self.actions(s, &mut steps);
        if self.reduce {
            // Crashes and losses come after the steps that allow them first, a
            // heal after a step whose sends it cut off (a partition comes
            // before a step that sends across it: [`Self::successors_of`]).
            let heal = self.reduce_partitions();
            steps.retain(|step| !(matches!(step, Step::Crash(_) | Step::Lose { .. }) || heal && *step == Step::Heal));
        }
        let quiet = self.quiet(s);
        if quiet.is_empty() {
            moves.extend(steps.into_iter().map(Move::bare));
            return;
        }
        if self.fifo {
            // A FIFO link whose head is quiet: the message behind those
            // copies, which they must precede (see "FIFO links").
            let due = if self.election.punctual_timers { Self::due(s) } else { 0 };
            for q in &quiet {
                let link = Self::on_link(s, self.link_base[q.from as usize] + q.port as usize);
                if let Some(f) = link.get(q.copies as usize).filter(|f| f.old || due >> q.to & 1 == 0) {
                    steps.push(Step::Deliver { from: q.from, port: q.port, msg: f.msg });
                }
            }
        }
        let is_quiet = |from, port, msg| quiet.iter().any(|q| (q.from, q.port, q.msg) == (from, port, msg));
        for step in steps {
            match step {
                // A quiet heartbeat is no step of its own; a tick comes below.
                Step::Deliver { from, port, msg } if is_quiet(from, port, msg) => continue,
                Step::Tick(_) => continue,
                _ => {}
            }
            let scope = self.choices(s, step, &quiet);
            // Every count of copies of each within its range, in mixed radix.
            let span = |&(least, most): &(u32, u32)| (most + 1).saturating_sub(least);
            let combos: u32 = scope.iter().map(span).product();
            for mut k in 0..combos {
                let mut absorb = 0;
                for (g, range) in scope.iter().enumerate() {
                    absorb |= (range.0 + k % span(range)) << (2 * g);
                    k /= span(range);
                }
                moves.push(Move { absorb, ..Move::bare(step) });
            }
        }
        // A tick, once what is due is done: every message that crossed a
        // tick already is a quiet heartbeat, which arrives first.
        let old_quiet: u32 = quiet.iter().map(|q| q.old).sum();
        let old = s.links.iter().filter(|f| f.old).count() as u32;
        let due = s.timers.iter().any(|t| t.left == 0);
        if s.unstarted.is_empty() && !s.timers.is_empty() && !due && old == old_quiet {
            let idle = s.links.len() as u32 == old_quiet;
            let ticks = if idle { s.timers.iter().map(|t| t.left).min().unwrap_or(1) } else { 1 };
            moves.extend(self.tick(s, ticks).map(Move::bare));
        }
    }

    /// Of the quiet heartbeats in `step`'s scope ([`Self::in_scope`]), in
    /// scope order: the fewest and the most copies of each a move of `step`
    /// may take in first. Up to all of them before the receiver's clock
    /// ([`HEARTBEAT_TIMER`], the only reader of what they refresh) and before
    /// a partition; before any other step, none of those that stay quiet
    /// after it (they can wait for the next step that matters, see "Quiet
    /// heartbeats"), up to all of the others; on a FIFO link, all of those
    /// ahead of the message the step delivers (see "FIFO links").
    fn choices(&self, s: &System, step: Step, quiet: &[Quiet]) -> Vec<(u32, u32)> {
        let scope = quiet.iter().filter(|q| self.in_scope(step, q));
        // Punctual timers: a node with a timer due takes in only what was
        // sent before the tick.
        let due = if self.election.punctual_timers { Self::due(s) } else { 0 };
        let cap = |q: &Quiet| if due >> q.to & 1 == 1 { q.old } else { q.copies };
        if matches!(step, Step::Fire { timer: HEARTBEAT_TIMER, .. } | Step::Partition(_)) {
            return scope.map(|q| (0, cap(q))).collect();
        }
        // The copies at the head of the step's own FIFO link, which arrive first.
        let ahead = |q: &Quiet| {
            self.fifo && matches!(step, Step::Deliver { from, port, .. } if (from, port) == (q.from, q.port))
        };
        let mut after = s.clone();
        let mut stepped = true;
        for q in quiet.iter().filter(|q| self.in_scope(step, q) && ahead(q)) {
            for _ in 0..q.copies {
                stepped &=
                    self.apply(&mut after, Step::Deliver { from: q.from, port: q.port, msg: q.msg }, None).is_some();
            }
        }
        stepped = stepped && self.apply(&mut after, step, None).is_some() && after.error.is_none();
        let t = &self.election.topology;
        scope
            .map(|q| {
                if ahead(q) {
                    // All of them, or no move (more than may arrive before a due timer).
                    return (q.copies, cap(q));
                }
                let port = t.ports(q.from)[q.port as usize].remote_port;
                let stays =
                    stepped && !after.is_down(q.to) && self.only_refreshes(&after.nodes[q.to as usize], port, q.msg);
                if stays { (0, 0) } else { (0, cap(q)) }
            })
            .collect()
    }

    /// The steps `mv` takes from `s`: its prelude of quiet heartbeats, its
    /// step, then the fault it chose to follow the step, if any.
    pub fn expand(&self, s: &System, mv: Move) -> Vec<Step> {
        if mv.cut != 0 {
            let mut steps = self.prelude(s, mv.partition());
            if let Some(split) = self.run(s, mv.partition(), None) {
                steps.extend(self.expand(&split, mv.after_partition()));
            }
            return steps;
        }
        let mut steps = self.prelude(s, mv);
        if mv.lose != 0 || mv.crash != 0 {
            let mut sent = Vec::new();
            if let Some(after) = self.run(s, mv, Some(&mut sent)) {
                steps.extend(self.chosen_faults(s, mv, &after, &sent));
            }
        }
        if mv.heal {
            steps.push(Step::Heal);
        }
        steps
    }

    /// The steps of `mv` up to its step: its prelude of quiet heartbeats,
    /// then its step.
    fn prelude(&self, s: &System, mv: Move) -> Vec<Step> {
        let mut steps = Vec::new();
        let quiet = self.quiet(s);
        let deliver = |q: &Quiet| Step::Deliver { from: q.from, port: q.port, msg: q.msg };
        if let Step::Tick(_) = mv.step {
            for q in &quiet {
                steps.extend(std::iter::repeat_n(deliver(q), q.old as usize));
            }
        } else if mv.absorb != 0 {
            for (g, q) in quiet.iter().filter(|q| self.in_scope(mv.step, q)).enumerate() {
                steps.extend(std::iter::repeat_n(deliver(q), (mv.absorb >> (2 * g) & 3) as usize));
            }
        }
        steps.push(mv.step);
        steps
    }

    /// The state after `mv`'s prelude and step (not the fault after it),
    /// telling `log` what the step sent.
    fn run(&self, last: &System, mv: Move, log: Option<&mut Vec<Sent>>) -> Option<System> {
        let mut s = last.clone();
        if mv.absorb == 0 && !matches!(mv.step, Step::Tick(_)) || !self.reduce {
            self.apply(&mut s, mv.step, log)?;
        } else {
            let steps = self.prelude(last, mv);
            let (&step, prelude) = steps.split_last()?;
            for &quiet in prelude {
                self.apply(&mut s, quiet, None)?;
            }
            self.apply(&mut s, step, log)?;
        }
        Some(s)
    }

    /// The position at the other end of `from`'s `port`.
    fn peer(&self, from: u32, port: Port) -> u32 {
        self.election.topology.ports(from)[port as usize].peer
    }

    /// The position whose state `step` changes, if it is a step of one node.
    fn stepper(&self, step: Step) -> Option<u32> {
        match step {
            Step::Start(p) | Step::Recover(p) | Step::Fire { node: p, .. } => Some(p),
            Step::Deliver { from, port, .. } => Some(self.election.topology.ports(from)[port as usize].peer),
            _ => None,
        }
    }

    /// The faults that may follow a step at their earliest (see "Faults at
    /// their earliest"), in a fixed order: the losses, then the crashes.
    /// `before` and `after` are the states around the step (its prelude
    /// included), `sent` what the step itself sent.
    fn aftermath(&self, before: &System, step: Step, after: &System, sent: &[Sent]) -> (Vec<Step>, Vec<Step>) {
        let (mut lose, mut crash) = (Vec::new(), Vec::new());
        if !self.reduce || after.error.is_some() || !after.unstarted.is_empty() {
            return (lose, crash);
        }
        let budget = self.election.faults;
        // The step that lets faults strike (the last start) may be followed by
        // any of them; a recovery, by any crash (one node is down at a time).
        let opened = !before.unstarted.is_empty();
        if after.used.losses < budget.losses {
            let mut add = |from: u32, port: Port, msg: Msg| {
                let l = Step::Lose { from, port, msg };
                if !lose.contains(&l) {
                    lose.push(l);
                }
            };
            if opened {
                for f in &after.links {
                    let from = self.sender(f.link);
                    add(from, f.link - self.link_base[from as usize] as u32, f.msg);
                }
            } else {
                sent.iter().filter(|s| !s.lost).for_each(|s| add(s.from, s.port, s.msg));
            }
        }
        if after.used.crashes < budget.crashes && after.down == 0 {
            if opened || before.down != 0 {
                crash.extend((0..self.election.topology.len()).map(Step::Crash));
            } else if let Some(p) = self.stepper(step) {
                crash.push(Step::Crash(p));
            }
        }
        (lose, crash)
    }

    /// The faults `mv` chose to follow its step with, as steps.
    fn chosen_faults(&self, before: &System, mv: Move, after: &System, sent: &[Sent]) -> Vec<Step> {
        let (lose, crash) = self.aftermath(before, mv.step, after, sent);
        let pick = |from: &[Step], k: u32| (k as usize).checked_sub(1).and_then(|i| from.get(i).copied());
        pick(&lose, mv.lose).into_iter().chain(pick(&crash, mv.crash)).collect()
    }

    /// The state `mv` leads to from `last` (`None`: not possible).
    pub fn next_move(&self, last: &System, mv: Move) -> Option<System> {
        if mv.cut != 0 {
            let split = self.run(last, mv.partition(), None)?;
            return self.next_move(&split, mv.after_partition());
        }
        let mut sent = Vec::new();
        let mut s = self.run(last, mv, Some(&mut sent))?;
        let faults = self.chosen_faults(last, mv, &s, &sent);
        if faults.len() != usize::from(mv.lose != 0) + usize::from(mv.crash != 0) {
            return None;
        }
        for step in faults {
            self.apply(&mut s, step, None)?;
        }
        if mv.heal {
            self.apply(&mut s, Step::Heal, None)?;
        }
        Some(s)
    }

    /// Every move that can follow `s` and the state it leads to, in a fixed
    /// order ([`Self::moves`], each followed by the faults it may choose at
    /// their earliest): what the explorer takes from a state, and a
    /// schedule's move is an index into it.
    pub fn successors(&self, s: &System, out: &mut Vec<(Move, System)>) {
        let mut moves = Vec::new();
        self.moves(s, &mut moves);
        let mut sent = Vec::new();
        if let Some(first) = self.punctual_first(s) {
            // Its moves alone, when none changes what the properties read
            // (see "Punctual timers").
            let (mine, rest): (Vec<Move>, Vec<Move>) =
                moves.into_iter().partition(|mv| self.stepper(mv.step) == Some(first));
            let seen = s.observation();
            let (start, mut invisible) = (out.len(), true);
            for mv in mine {
                if self.successors_of(s, mv, &mut sent, out).is_some() {
                    invisible &= out.last().is_some_and(|(_, after)| after.observation() == seen);
                }
            }
            if invisible && out.len() > start {
                return;
            }
            moves = rest;
        }
        for mv in moves {
            self.successors_of(s, mv, &mut sent, out);
        }
    }

    /// Would `node` only refresh its detector on taking `msg` on `port`
    /// ([`Shell::only_refreshes`], which tries it on a copy of the node)?
    /// Remembered by the node's hash (a collision as unlikely as one of
    /// fingerprints), up to 65,536 answers at a time (a few MB): a fifth of a
    /// ZooKeeper-style check's time went to the copies.
    fn only_refreshes(&self, node: &Node, port: Port, msg: Msg) -> bool {
        let key = (node.hash, port, msg);
        let mut memo = self.refreshes.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&known) = memo.get(&key) {
            return known;
        }
        let answer = node.only_refreshes(port, msg);
        if memo.len() >= 1 << 16 {
            memo.clear();
        }
        memo.insert(key, answer);
        answer
    }

    /// The node whose steps alone may follow `s` (see "Punctual timers"), if
    /// any: with punctual timers, the one of least id with a timer due, when
    /// the reduction is on and no duplication or crash after a recovery is
    /// possible (a duplicate of a message the node is to take would need it
    /// still there; a crash after a recovery may strike the node before it
    /// fires).
    fn punctual_first(&self, s: &System) -> Option<u32> {
        let (budget, used) = (self.election.faults, s.used);
        let reduce = self.reduce
            && self.election.punctual_timers
            && s.unstarted.is_empty()
            && s.error.is_none()
            && used.duplications >= budget.duplications
            && !(budget.recover && s.down != 0 && used.crashes < budget.crashes);
        let due = Self::due(s);
        // The smallest id first, not the first position: a renaming of the
        // positions (another arrangement of the ids) reduces alike.
        let ids = &self.election.ids;
        (0..ids.len() as u32).filter(|&p| reduce && due >> p & 1 == 1).min_by_key(|&p| ids[p as usize])
    }

    /// Push the states `mv` leads to from `s` onto `out`: each fault it may
    /// end in first, then the bare move's; and, when it cut off a send
    /// across the partition in force, each of those again with the partition
    /// healed just after (see "Heals at their earliest"). `Some(true)`: the
    /// step sent across the partition in force; `None`: `mv` is not possible.
    /// With the reduction on, a partition is a move only as the start of the
    /// moves that follow it and send across it (or of a tick, see
    /// [`Self::partitions`]), or, healed at once, when it cuts off a message
    /// in flight (see "Partitions at their latest").
    fn successors_of(&self, s: &System, mv: Move, sent: &mut Vec<Sent>, out: &mut Vec<(Move, System)>) -> Option<bool> {
        if let (true, Step::Partition(side)) = (self.reduce_partitions(), mv.step) {
            return self.partitions(s, Move { cut: side, cut_absorb: mv.absorb, ..mv }, sent, out);
        }
        sent.clear();
        let after = self.run(s, mv, Some(sent))?;
        let across = s.cut != 0 && sent.iter().any(|x| x.lost && Self::cut(s, x.from, self.peer(x.from, x.port)));
        let (lose, crash) = self.aftermath(s, mv.step, &after, sent);
        // A heal, at the first point it may strike after a send it cut off.
        let cut_off = across || s.cut_sends;
        for l in 0..=lose.len() {
            for c in 0..=crash.len() {
                let mut next = after.clone();
                let faults = l.checked_sub(1).map(|i| lose[i]).into_iter().chain(c.checked_sub(1).map(|i| crash[i]));
                if !faults.map(|f| self.apply(&mut next, f, None)).all(|r| r.is_some()) {
                    continue;
                }
                let mv = Move { lose: l as u32, crash: c as u32, ..mv };
                if self.reduce_partitions() && cut_off && next.cut != 0 && !self.instant(&next) {
                    let mut healed = next.clone();
                    if self.apply(&mut healed, Step::Heal, None).is_some() {
                        out.push((Move { heal: true, ..mv }, healed));
                    }
                }
                if l != 0 || c != 0 {
                    out.push((mv, next));
                }
            }
        }
        out.push((mv, after));
        Some(across)
    }

    /// The moves that start with the partition `mv.cut` (after its prelude):
    /// healed at once, if it cut off a message in flight; every move after it
    /// whose step sends across it; and a tick, if the partition cut off a
    /// message in flight (which may not outlive the next tick) or, with
    /// punctual timers, if the tick makes a timer due (no partition strikes
    /// at that instant).
    fn partitions(&self, s: &System, mv: Move, sent: &mut Vec<Sent>, out: &mut Vec<(Move, System)>) -> Option<bool> {
        let split = self.run(s, mv.partition(), None)?;
        let absorbed: u32 = (0..16).map(|g| mv.cut_absorb >> (2 * g) & 3).sum();
        let cut_off = split.links.len() + (absorbed as usize) < s.links.len();
        if cut_off {
            let mut healed = split.clone();
            self.apply(&mut healed, Step::Heal, None)?;
            out.push((Move { heal: true, absorb: mv.cut_absorb, ..Move::bare(mv.step) }, healed));
        }
        let mut next = Vec::new();
        self.moves(&split, &mut next);
        let mut after = Vec::new();
        for m in next {
            after.clear();
            // A tick may not pass a message in flight for good, and no
            // partition strikes at the instant of a punctual timer: one that
            // cut a message off, or before a tick that makes a timer due,
            // strikes before that tick at the latest.
            let tick = matches!(m.step, Step::Tick(_))
                && (cut_off
                    || self.election.punctual_timers && self.run(&split, m, None).is_some_and(|t| self.instant(&t)));
            if self.successors_of(&split, m, sent, &mut after).is_some_and(|across| across || tick) {
                out.extend(after.drain(..).map(|(m, t)| (Move { cut: mv.cut, cut_absorb: mv.cut_absorb, ..m }, t)));
            }
        }
        Some(false)
    }

    /// Does `step` name positions and ports this election has (a schedule
    /// from elsewhere may not)?
    fn names_what_exists(&self, step: Step) -> bool {
        let t = &self.election.topology;
        let link = |from: u32, port: Port| from < t.len() && (port as usize) < t.ports(from).len();
        match step {
            Step::Start(p) | Step::Crash(p) | Step::Recover(p) | Step::Fire { node: p, .. } => p < t.len(),
            Step::Deliver { from, port, .. } | Step::Lose { from, port, .. } | Step::Duplicate { from, port, .. } => {
                link(from, port)
            }
            Step::Partition(side) => side >> t.len() == 0,
            Step::Tick(_) | Step::Heal => true,
        }
    }

    /// Take the message `msg` off the link of `from`'s port `port` (the copy
    /// sent before the last tick, if there is one: the other may wait).
    fn take(&self, s: &mut System, from: u32, port: Port, msg: Msg) -> Option<Flight> {
        let range = Self::link_range(s, self.link_base[from as usize] + port as usize);
        let start = range.start;
        let link = &s.links[range];
        let at = if self.fifo {
            (link.first()?.msg == msg).then_some(0)?
        } else {
            link.iter().position(|f| f.msg == msg && f.old).or_else(|| link.iter().position(|f| f.msg == msg))?
        };
        Some(s.links.remove(start + at))
    }

    /// Where the messages on link `l` are in [`System::links`].
    fn link_range(s: &System, l: usize) -> std::ops::Range<usize> {
        let l = l as u32;
        let start = s.links.partition_point(|f| f.link < l);
        start..start + s.links[start..].partition_point(|f| f.link == l)
    }

    /// The messages in flight on link `l`.
    fn on_link(s: &System, l: usize) -> &[Flight] {
        &s.links[Self::link_range(s, l)]
    }

    /// Put `f` on its link: last on a FIFO link, in order otherwise.
    fn push(&self, s: &mut System, f: Flight) {
        let at =
            if self.fifo { s.links.partition_point(|g| g.link <= f.link) } else { s.links.partition_point(|g| *g < f) };
        s.links.insert(at, f);
    }

    /// The sending position of link `l`.
    fn sender(&self, l: u32) -> u32 {
        (self.link_base.partition_point(|&b| b <= l as usize) - 1) as u32
    }

    /// The receiving position of link `l`.
    fn receiver(&self, l: u32) -> u32 {
        let from = self.sender(l);
        self.election.topology.ports(from)[l as usize - self.link_base[from as usize]].peer
    }

    /// The state `step` leads to from `last` (`None`: the step is not possible).
    pub fn next_state(&self, last: &System, step: Step) -> Option<System> {
        self.next_state_logged(last, step, None)
    }

    /// [`ElectionModel::next_state`], telling `log` every message sent.
    pub fn next_state_logged(&self, last: &System, step: Step, log: Option<&mut Vec<Sent>>) -> Option<System> {
        let mut s = last.clone();
        self.apply(&mut s, step, log)?;
        Some(s)
    }

    /// Take `step` in `s` (`None`: it is not possible; `s` is then spoilt).
    fn apply(&self, s: &mut System, step: Step, mut log: Option<&mut Vec<Sent>>) -> Option<()> {
        if !self.names_what_exists(step) {
            return None;
        }
        let mut out = Outputs::default();
        let mut touched = None;
        let t = &self.election.topology;
        match step {
            Step::Start(p) => {
                s.unstarted.retain(|&q| q != p);
                s.nodes[p as usize].edit().start(&mut out);
                touched = Some(p);
                self.absorb(s, p, &mut out, &mut log);
            }
            Step::Deliver { from, port, msg } => {
                self.take(s, from, port, msg)?;
                let to = t.ports(from)[port as usize];
                touched = Some(to.peer);
                if let Err(e) = s.nodes[to.peer as usize].edit().message(to.remote_port, msg, &mut out) {
                    s.error.get_or_insert_with(|| format!("position {} refused {msg:?}: {e}", to.peer));
                }
                self.absorb(s, to.peer, &mut out, &mut log);
            }
            Step::Fire { node, timer } => {
                let at = s.timers.iter().position(|t| (t.node, t.timer) == (node, timer) && t.left == 0)?;
                let pending = s.timers.remove(at);
                s.nodes[node as usize].edit().timer(timer, pending.generation, &mut out);
                touched = Some(node);
                self.absorb(s, node, &mut out, &mut log);
            }
            Step::Tick(ticks) => {
                for f in &mut s.links {
                    f.old = true;
                }
                for t in &mut s.timers {
                    t.left = t.left.saturating_sub(ticks);
                }
                if s.cut != 0 && s.heal_left != u32::MAX {
                    s.heal_left = s.heal_left.saturating_sub(ticks);
                }
                let bound = self.converge_ticks;
                s.since_fault = s.since_fault.and_then(|u| Some(u.saturating_add(ticks)).filter(|&u| u <= bound));
            }
            Step::Crash(p) => {
                s.used.crashes += 1;
                s.down |= 1 << p;
                let node = &mut s.nodes[p as usize];
                node.edit().forget(self.fresh[p as usize].clone());
                node.rehash();
                s.links.retain(|f| self.receiver(f.link) != p);
            }
            Step::Recover(p) => {
                s.down &= !(1 << p);
                s.nodes[p as usize].edit().restart(self.fresh[p as usize].clone(), &mut out);
                touched = Some(p);
                self.absorb(s, p, &mut out, &mut log);
            }
            Step::Lose { from, port, msg } => {
                s.used.losses += 1;
                if self.fifo {
                    // The last copy: the one just sent, where a loss strikes
                    // at its earliest (see "Faults at their earliest").
                    let range = Self::link_range(s, self.link_base[from as usize] + port as usize);
                    let at = s.links[range.clone()].iter().rposition(|f| f.msg == msg)?;
                    s.links.remove(range.start + at);
                } else {
                    self.take(s, from, port, msg)?;
                }
            }
            Step::Duplicate { from, port, msg } => {
                s.used.duplications += 1;
                self.push(s, Flight { link: self.link_base[from as usize] as u32 + port, msg, old: false });
            }
            Step::Partition(side) => {
                s.used.partitions += 1;
                s.cut = side;
                s.heal_left = self.heal_within.unwrap_or(u32::MAX);
                let cut = |f: &Flight| Self::cut(s, self.sender(f.link), self.receiver(f.link));
                let kept: Vec<Flight> = s.links.iter().filter(|f| !cut(f)).copied().collect();
                s.links = kept;
            }
            Step::Heal => (s.cut, s.heal_left) = (0, 0),
        }
        // A timer a later set, a cancel or a crash made stale never fires:
        // forget it, then renumber the stamps (they only grow: two states
        // alike but for them are one).
        let nodes = &s.nodes;
        let down = s.down;
        s.timers.retain(|t| down >> t.node & 1 == 0 && nodes[t.node as usize].timer_due(t.timer, t.generation));
        s.timers.iter_mut().for_each(|t| t.generation = 0);
        // Only within a punctual instant (timers still due once the stale
        // ones are gone) is a cut-off send remembered.
        s.cut_sends &= s.cut != 0 && self.instant(s);
        // Only the node that stepped can have stamps above 0 (a crash forgets them).
        if let Some(p) = touched {
            let node = &mut s.nodes[p as usize];
            node.edit().restamp_timers();
            node.rehash();
        }
        if self.is_kept() && (step.is_fault() || s.cut != 0) {
            s.since_fault = Some(0);
        }
        Some(())
    }
}

/// The properties a one-shot election keeps at every state, in the order
/// they are reported.
pub const PROPERTIES: [&str; 6] = [
    "no node errs",
    "at most one leader",
    "decided nodes agree",
    "the leader is the expected winner",
    "within the bound",
    "every final state is a finished election",
];

/// The properties a kept leadership keeps at every state, in the order they
/// are reported. One leader per term is over the whole run so far (as the
/// simulator's `invariants::one_leader_per_term`): no term ever had two. (The no-overlap one only for Chubby-style leases.) The last
/// is liveness made a safety property by the algorithm's documented bound
/// (`KeptSpec::convergence_bound_ms`): once that long has passed since the
/// last fault (a partition lasts until it heals), every state has one
/// agreed live leader, so every continuation without faults reaches one and
/// keeps it.
pub const KEPT_PROPERTIES: [&str; 5] = [
    "no node errs",
    "at most one leader per term",
    "the nodes of one term agree on its leader",
    "no two leases overlap",
    "one agreed leader from the convergence bound after the last fault on",
];

impl ElectionModel {
    /// The names of the properties this model checks ([`PROPERTIES`] or
    /// [`KEPT_PROPERTIES`]).
    pub fn properties(&self) -> &'static [&'static str] {
        if self.is_kept() { &KEPT_PROPERTIES } else { &PROPERTIES }
    }

    /// Does `s` keep property `i` of [`ElectionModel::properties`]?
    pub fn holds(&self, i: usize, s: &System) -> bool {
        if self.is_kept() {
            return self.kept_holds(i, s);
        }
        match i {
            0 => s.error.is_none(),
            1 => invariants::at_most_one_leader(&s.decisions()).is_ok(),
            2 => decided_agree(&s.decisions()),
            3 => invariants::leader_is_expected(self.expected, self.election.rule, &self.election.ids, &s.decisions())
                .is_ok(),
            4 => s.sent <= self.bound,
            _ => !s.is_final() || self.finished(s),
        }
    }

    fn kept_holds(&self, i: usize, s: &System) -> bool {
        let ids = &self.election.ids;
        let beliefs = s.beliefs();
        let leaders =
            || beliefs.iter().zip(ids).filter_map(|(b, &id)| b.filter(|b| b.leader == Some(id)).map(|b| (b.term, id)));
        match i {
            0 => s.error.is_none(),
            1 => s.led.windows(2).all(|w| w[0].0 != w[1].0),
            2 => {
                let mut named: Vec<(u64, u64)> =
                    beliefs.iter().flatten().filter_map(|b| b.leader.map(|l| (b.term, l))).collect();
                named.sort_unstable();
                named.dedup();
                named.windows(2).all(|w| w[0].0 != w[1].0)
            }
            // A leased leadership ([`KeptSpec::lease`]): never two leaders at once, of any term.
            3 => !self.election.spec.kept.is_some_and(|k| k.leased()) || leaders().count() <= 1,
            _ => s.since_fault.is_some() || self.settled(s),
        }
    }

    /// A kept leadership is settled: every live node believes in the same
    /// leader of the same term, and that leader is live (so it believes it
    /// leads).
    fn settled(&self, s: &System) -> bool {
        let mut first: Option<Leadership> = None;
        for (p, node) in s.nodes.iter().enumerate() {
            if s.is_down(p as u32) {
                continue;
            }
            match (node.leadership(), first) {
                (Some(b), _) if b.leader.is_none() => return false,
                (None, _) => return false,
                (Some(b), None) => first = Some(b),
                (Some(b), Some(f)) if b != f => return false,
                _ => {}
            }
        }
        first.is_some_and(|f| {
            self.election.ids.iter().enumerate().any(|(p, &id)| f.leader == Some(id) && !s.is_down(p as u32))
        })
    }

    /// At a final state: every node decided, and the simulator's verdict
    /// (one leader, agreement, the expected winner, the bound) holds.
    fn finished(&self, s: &System) -> bool {
        let e = &self.election;
        let decisions = s.decisions();
        if decisions.iter().any(Option::is_none) {
            return false;
        }
        let v =
            invariants::verdict(self.expected, e.rule, &e.ids, &decisions, s.sent, self.bound, e.spec.bound_formula);
        v.violations.is_empty() && v.leader.is_some()
    }
}

/// Do the nodes that decided name one leader? (A follower told only that
/// somebody leads, [`UNKNOWN_LEADER`], agrees with anybody.)
fn decided_agree(decisions: &[Option<Decision>]) -> bool {
    let mut named = decisions.iter().flatten().filter(|d| d.role == Role::Leader || d.leader != UNKNOWN_LEADER);
    match named.next() {
        None => true,
        Some(first) => named.all(|d| d.leader == first.leader),
    }
}

impl ElectionModel {
    /// The messages of the schedule `steps`, as arrows of a space-time
    /// diagram ([`ringleader_core::diagram`]) whose time is the step number
    /// (step 1 is the first): each from the step that sent it to the step
    /// that delivered it, or lost (a lost step, a crash of its receiver, a
    /// partition, or sent to a crashed node or across a partition). Messages
    /// still in flight at the end are left out; their count comes back too,
    /// after the marks of the events at nodes (starts, timeouts other than
    /// the detector's clock, crashes, recoveries, partitions).
    pub fn arrows(&self, steps: &[Step]) -> (Vec<Arrow>, Vec<Mark>, usize) {
        let t = &self.election.topology;
        let mut s = self.initial();
        let mut arrows = Vec::new();
        let mut marks = Vec::new();
        // In flight per link: (message, step that sent it), oldest first.
        let links = self.link_base.last().map_or(0, |&b| b + t.ports(t.len() - 1).len());
        let mut flying: Vec<Vec<(Msg, u64)>> = vec![Vec::new(); links];
        let mut log = Vec::new();
        let to_of = |from: u32, port: Port| t.ports(from)[port as usize].peer;
        for (i, &step) in steps.iter().enumerate() {
            let at = i as u64 + 1;
            let mut land = |flying: &mut Vec<Vec<(Msg, u64)>>, from: u32, port: Port, msg: Msg, received| {
                let link = &mut flying[self.link_base[from as usize] + port as usize];
                if let Some(k) = link.iter().position(|&(m, _)| m == msg) {
                    let (_, sent) = link.remove(k);
                    arrows.push(Arrow {
                        from,
                        to: to_of(from, port),
                        kind: msg.kind(),
                        sent,
                        received,
                        msg: Some(msg),
                        slow: false,
                    });
                }
            };
            let mut mark = |node: u32, label: String| marks.push(Mark { node, at, label });
            match step {
                Step::Start(p) => mark(p, "start".into()),
                Step::Fire { node, timer } if !is_reserved(timer) => mark(node, format!("timer {timer}")),
                Step::Crash(p) => mark(p, "crash".into()),
                Step::Recover(p) => mark(p, "recover".into()),
                Step::Lose { from, port, .. } => {
                    mark(from, format!("loses one to id {}", self.election.ids[to_of(from, port) as usize]))
                }
                Step::Partition(side) => {
                    (0..t.len()).filter(|p| side >> p & 1 == 1).for_each(|p| mark(p, "cut off".into()))
                }
                Step::Heal => (0..t.len()).for_each(|p| mark(p, "heal".into())),
                _ => {}
            }
            match step {
                Step::Deliver { from, port, msg } => land(&mut flying, from, port, msg, Some(at)),
                Step::Lose { from, port, msg } => land(&mut flying, from, port, msg, None),
                Step::Duplicate { from, port, msg } => {
                    flying[self.link_base[from as usize] + port as usize].push((msg, at));
                }
                _ => {}
            }
            log.clear();
            let Some(next) = self.next_state_logged(&s, step, Some(&mut log)) else { break };
            for sent in &log {
                if sent.lost {
                    let to = to_of(sent.from, sent.port);
                    let (from, kind, msg) = (sent.from, sent.msg.kind(), Some(sent.msg));
                    arrows.push(Arrow { from, to, kind, sent: at, received: None, msg, slow: false });
                } else {
                    flying[self.link_base[sent.from as usize] + sent.port as usize].push((sent.msg, at));
                }
            }
            // What a crash or a partition took off the links is lost.
            for (l, link) in flying.iter_mut().enumerate() {
                let mut left: Vec<Msg> = Self::on_link(&next, l).iter().map(|f| f.msg).collect();
                let from = self.link_base.partition_point(|&b| b <= l) as u32 - 1;
                let port = (l - self.link_base[from as usize]) as Port;
                link.retain(|&(m, sent)| match left.iter().position(|&x| x == m) {
                    Some(k) => {
                        left.swap_remove(k);
                        true
                    }
                    None => {
                        arrows.push(Arrow {
                            from,
                            to: to_of(from, port),
                            kind: m.kind(),
                            sent,
                            received: None,
                            msg: Some(m),
                            slow: false,
                        });
                        false
                    }
                });
            }
            s = next;
        }
        let flying = flying.iter().map(Vec::len).sum();
        (arrows, marks, flying)
    }
}

impl ElectionModel {
    /// Where each node ends after `steps`: its belief (kept leaderships) or
    /// decision, in words ("leads term 2", "follows 3 (term 1)", "crashed").
    pub fn outcome(&self, steps: &[Step]) -> Vec<String> {
        let mut s = self.initial();
        for &step in steps {
            match self.next_state(&s, step) {
                Some(next) => s = next,
                None => break,
            }
        }
        s.nodes
            .iter()
            .enumerate()
            .map(|(p, node)| match (node.leadership(), node.decision()) {
                _ if s.is_down(p as u32) => "crashed".into(),
                (Some(l), _) => match l.leader {
                    Some(id) if id == self.election.ids[p] => format!("leads term {}", l.term),
                    Some(id) => format!("follows {id} (term {})", l.term),
                    None => format!("no leader (term {})", l.term),
                },
                (None, Some(d)) if d.role == Role::Leader => "leads".into(),
                (None, Some(d)) => format!("follows {}", d.leader),
                (None, None) => "undecided".into(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ringleader_core::topology::Topology;
    use std::collections::VecDeque;

    /// The remembered answer to "would this node only refresh its detector on this heartbeat?"
    /// is the node's own, asked afresh, for every heartbeat in flight in the first few thousand
    /// states of ZooKeeper-style with a lost message on 3 nodes (many answered from memory,
    /// both ways).
    #[test]
    fn a_remembered_quiet_heartbeat_is_the_nodes_own_answer() {
        let spec = ringleader_core::algo::catalogue::find("zookeeper").unwrap();
        let topology = Topology::build(spec.default_topology(), 3, 7).unwrap();
        let faults = Faults { losses: 1, ..Faults::NONE };
        let e = Election {
            delay_ms: 10,
            ..Election::kept(spec, topology, vec![1, 2, 3], DetectorConfig::LOOPBACK, faults)
        };
        let model = ElectionModel::new(e, false);
        let mut queue = VecDeque::from([model.initial()]);
        let (mut asked, mut answers, mut out) = (0, [0, 0], Vec::new());
        while let Some(s) = queue.pop_front().filter(|_| asked < 20_000) {
            for f in s.links.iter().filter(|f| matches!(f.msg, Msg::Heartbeat { .. })) {
                let from = model.sender(f.link);
                let port = model.election.topology.ports(from)[f.link as usize - model.link_base[from as usize]];
                let node = &s.nodes[port.peer as usize];
                let own = node.only_refreshes(port.remote_port, f.msg);
                assert_eq!(model.only_refreshes(node, port.remote_port, f.msg), own, "{f:?} in {s:?}");
                asked += 1;
                answers[usize::from(own)] += 1;
            }
            model.successors(&s, &mut out);
            queue.extend(out.drain(..).map(|(_, next)| next));
        }
        let remembered = model.refreshes.lock().unwrap().len();
        assert!(asked >= 20_000 && remembered < asked / 10, "{asked} asked, {remembered} remembered");
        assert!(answers.iter().all(|&k| k > 50), "answers {answers:?}");
    }

    /// On a FIFO link a loss takes the last copy of its message, the one just sent, wherever it
    /// lies on the link (a loss strikes as its message is sent, see "Faults at their earliest"):
    /// in the first states of kept bully on 3 nodes with FIFO links and a loss in the budget, every
    /// message behind another on its link can be lost, and only it leaves the link.
    #[test]
    fn on_a_fifo_link_the_message_just_sent_can_be_lost() {
        let spec = ringleader_core::algo::catalogue::find("bully").unwrap();
        let topology = Topology::build(spec.default_topology(), 3, 7).unwrap();
        let faults = Faults { losses: 1, ..Faults::NONE };
        let e = Election::kept(spec, topology, vec![1, 2, 3], DetectorConfig::LOOPBACK, faults);
        let model = ElectionModel::new(e, true);
        let mut queue = VecDeque::from([model.initial()]);
        let (mut behind, mut out, mut explored) = (0, Vec::new(), 0);
        while let Some(s) = queue.pop_front().filter(|_| explored < 5_000) {
            explored += 1;
            for (i, f) in s.links.iter().enumerate() {
                if i == 0 || s.links[i - 1].link != f.link || s.used.losses > 0 {
                    continue;
                }
                let from = model.sender(f.link);
                let port = f.link - model.link_base[from as usize] as u32;
                let lost = model.next_state(&s, Step::Lose { from, port, msg: f.msg });
                let lost = lost.unwrap_or_else(|| panic!("{f:?} cannot be lost in {s:?}"));
                let mut expected = s.links.clone();
                let last = expected.iter().rposition(|g| (g.link, g.msg) == (f.link, f.msg)).unwrap();
                expected.remove(last);
                assert_eq!(lost.links, expected);
                behind += 1;
            }
            model.successors(&s, &mut out);
            queue.extend(out.drain(..).map(|(_, next)| next));
        }
        assert!(behind > 100, "{behind} messages behind another");
    }
}
