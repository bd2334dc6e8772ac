//! What every state machine is, and what its drivers speak to it: the
//! [`Algorithm`] trait, the messages ([`Msg`]), the effects it answers with
//! ([`Effect`], [`Outbox`]), its node's context ([`NodeContext`], ports,
//! [`Rule`]), decisions and leaderships, and the failure detector's settings
//! ([`detector::DetectorConfig`]). It depends on nothing else in the crate:
//! the topologies, the node shell, the simulator and the algorithms
//! ([`crate::algo`]) all build on it.
//!
//! Every algorithm is a pure state machine implementing [`Algorithm`]: a
//! driver feeds it one [`Input`] at a time through its one entry point,
//! [`Algorithm::step`] (a start of a spontaneous initiator, a message on a
//! port, a timer it set, what its failure detector suspects or heard, a
//! leave, a store's answer, its record after a crash), and it answers by
//! pushing [`Effect`]s into an [`Outbox`], as raft-rs's `step` and
//! quinn-proto's `handle_event` do. A new capability is a new variant of
//! [`Input`] (or [`Effect`]): every driver that has it constructs it, every
//! algorithm matches it, and the compiler lists the places. The rest of
//! the trait is read-only questions (its state's name, the neighbours it
//! watches, its timers' names, ...), every one required, so that a wrapper
//! (the [`Box`] impl here, the failure detector, a test's wrapper) that
//! forgets one does not compile rather than answer a default. A state
//! machine never touches tokio, sockets, clocks or a random generator; the
//! drivers (the node shell in [`crate::shell`], under the simulator in
//! [`crate::sim`], the model checker and the gRPC runtime in
//! `ringleader-node`'s `runtime`) do, and they do the counting, so an
//! algorithm cannot misreport its own cost. Its timers are named in a
//! [`timers!`](crate::timers) table ([`Timers`]), checked at compile time
//! against the failure detector's slots.
//!
//! Ring conventions (kept by every ring algorithm and by [`crate::topology`]):
//! ids are listed in ring order, position `i`'s *right* neighbour is position
//! `i + 1 mod n`, port [`RIGHT`] leads right and port [`LEFT`] leads left, and
//! a unidirectional algorithm sends to the right. On an unoriented ring each
//! node's `LEFT`/`RIGHT` labels are its own.

use std::any::Any;
use std::fmt;
use std::hash::{Hash, Hasher};

pub use msg::{Msg, MsgKind, MsgRole, Traffic, WireError};
pub use store::{LeaseRecord, MemStore, StoreOp, StoreReply, StoredLease};
pub use timers::{ALGORITHM_TIMERS, TIMER_SLOTS, TimerRow, Timers};

pub mod detector;
pub mod program;
pub mod store;

mod msg;
mod timers;

/// A node's local link label. Rings use [`LEFT`] and [`RIGHT`].
pub type Port = u32;
/// The port leading to the left neighbour (position `i - 1` on an oriented ring).
pub const LEFT: Port = 0;
/// The port leading to the right neighbour (position `i + 1` on an oriented ring).
pub const RIGHT: Port = 1;

/// The other port of a ring node ([`LEFT`] for anything but [`LEFT`]: no
/// arithmetic on a port number that came with a message).
#[inline]
pub fn other(port: Port) -> Port {
    if port == LEFT { RIGHT } else { LEFT }
}

/// The largest term a message may carry: 2^53 − 1. Terms grow by one per
/// election, so a real cluster stays far below it (a new term every
/// microsecond would take 285 years to get there), while every term a
/// correct node can reach still has a successor; and 2^53 − 1 is also the
/// largest integer a JSON client reads exactly. A larger term can only be
/// forged or corrupted: it is refused ([`AlgoError::Implausible`]) before it
/// touches any state, so no term arithmetic can overflow or wrap.
pub const MAX_TERM: u64 = (1 << 53) - 1;

/// The term after `term`, or `None` when `term` is already [`MAX_TERM`]
/// (the term space is used up: the caller keeps its state rather than wrap).
#[inline]
pub fn next_term(term: u64) -> Option<u64> {
    (term < MAX_TERM).then(|| term + 1)
}

/// Refuse a message whose term field is above [`MAX_TERM`] (see there).
/// Every kept-leadership algorithm calls it first thing on a message.
pub fn check_term(algorithm: &'static str, msg: &Msg) -> Result<(), AlgoError> {
    match msg.term() {
        Some(value) if value > MAX_TERM => {
            Err(AlgoError::Implausible { algorithm, field: "term", value, max: MAX_TERM })
        }
        _ => Ok(()),
    }
}

/// `value + 1` for a counter taken from (or pushed by) a message, refused as
/// implausible instead of wrapping at `u32::MAX`.
#[inline]
pub fn plus_one(algorithm: &'static str, field: &'static str, value: u32) -> Result<u32, AlgoError> {
    value.checked_add(1).ok_or(AlgoError::Implausible {
        algorithm,
        field,
        value: u64::from(value),
        max: u64::from(u32::MAX - 1),
    })
}

/// Names a timer an algorithm set.
pub type TimerId = u32;

/// Which extremum wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Rule {
    /// The smallest id wins.
    Min,
    /// The largest id wins.
    Max,
}

impl Rule {
    /// Does `a` beat `b` under this rule?
    #[inline]
    pub fn beats(self, a: u64, b: u64) -> bool {
        match self {
            Rule::Min => a < b,
            Rule::Max => a > b,
        }
    }

    /// The better of two ids.
    #[inline]
    pub fn best(self, a: u64, b: u64) -> u64 {
        if self.beats(b, a) { b } else { a }
    }

    /// The winning id among `ids` (`None` when empty).
    pub fn winner(self, ids: impl IntoIterator<Item = u64>) -> Option<u64> {
        ids.into_iter().reduce(|a, b| self.best(a, b))
    }

    /// Lower-case name: `"min"` or `"max"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::Min => "min",
            Rule::Max => "max",
        }
    }
}

/// What a node decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Role {
    /// This node is the leader.
    Leader,
    /// Another node is the leader.
    Follower,
}

/// A node's final decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Decision {
    /// Leader or follower.
    pub role: Role,
    /// The leader's id (this node's own id when it leads), or
    /// [`UNKNOWN_LEADER`] for a follower of an algorithm that does not tell
    /// followers who leads ([`elect_root`](crate::algo::elect_root)).
    pub leader: u64,
}

/// The leader a follower names when it knows only that it follows (ids are
/// positive, so 0 is nobody's). Agreement checks leave such followers out.
pub const UNKNOWN_LEADER: u64 = 0;

/// What a node believes about a kept leadership (failure-tolerant
/// algorithms), announced with [`Effect::Lead`] whenever it changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Leadership {
    /// The term (epoch) the belief is about; terms only grow at a node.
    pub term: u64,
    /// The leader of that term (this node's own id when it leads), or `None`
    /// while the node knows of no leader (an election is under way).
    pub leader: Option<u64>,
}

/// What a state machine asks its driver to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Effect {
    /// Send `msg` on `port`.
    Send {
        /// Local port.
        port: Port,
        /// The message.
        msg: Msg,
    },
    /// Record the node's decision (at most once per election).
    Decide(Decision),
    /// Record the node's current belief about a kept leadership (any number
    /// of times; drivers keep the timeline and check that no two nodes lead
    /// in one term).
    Lead(Leadership),
    /// Step the node with [`Input::Timer`] after `after_ms`, replacing
    /// the pending one of the same id. A node has
    /// [`TIMER_SLOTS`] timers, ids `0..8` (the
    /// failure detector takes 6 and 7); the node [`Shell`](crate::shell::Shell)
    /// stamps each set with a generation, so a replaced, cancelled or
    /// pre-crash timer never fires, and refuses an id beyond the slots.
    SetTimer {
        /// Timer name, below [`TIMER_SLOTS`].
        timer: TimerId,
        /// Delay in milliseconds (virtual milliseconds in the simulator).
        after_ms: u64,
    },
    /// Cancel a pending timer.
    CancelTimer {
        /// Timer name.
        timer: TimerId,
    },
    /// Write `Stable` to the node's stable storage before any later effect
    /// (a write-ahead record, replacing the previous one). A recovered
    /// incarnation gets the last record back as [`Input::Restore`],
    /// as a quorum algorithm that must never vote twice in one term needs.
    Persist(Stable),
    /// Carry `op` to the election's store (see [`store`]); the answer, if
    /// any, comes back as [`Input::StoreReply`]. Only
    /// algorithms that keep their state in a store push it.
    Store(StoreOp),
    /// The answer to [`Input::Leave`]: the node handed something over (a
    /// leadership, a lease), so its driver keeps it running until its
    /// belief changes (the successor's claim reached it) before stopping
    /// it. A leave that hands nothing over does not push it.
    HandingOver,
    /// The node's state machine failed and takes no further step: a
    /// program-defined algorithm whose program crashed, hung, answered
    /// garbage or broke a limit (the `ringleader-program` crate). The
    /// driver fails the election with `why` (a
    /// [`Misstep::Failed`](crate::shell::Misstep::Failed)), which names the
    /// step and the field. Built-in algorithms never push it.
    Fail {
        /// What failed, where: from [`program::failure`] (kept once per text).
        why: &'static str,
    },
}

/// Everything a driver feeds a node's state machine, one variant per kind of
/// input, through the one entry point [`Algorithm::step`]. A new capability
/// is a new variant: every driver that has it constructs it, and every
/// algorithm's `step` names it, acting on it or listing it among the inputs
/// it ignores (no `_ =>` arm, so that the compiler lists the places). It is
/// `Copy` and borrows what it does not own, so a step allocates nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input<'a> {
    /// Spontaneous wake-up of an initiator. Ignored if the node is already awake.
    Start,
    /// A message arrived on `port`.
    Message {
        /// The local port it arrived on.
        port: Port,
        /// The message.
        msg: Msg,
    },
    /// A timer set with [`Effect::SetTimer`] fired.
    Timer(TimerId),
    /// Failure-detector input: the neighbour behind `port` is suspected to
    /// have crashed (`suspected`), or was heard from again after a
    /// suspicion. One-shot algorithms ignore it.
    Suspect {
        /// The port of the neighbour.
        port: Port,
        /// Suspected now, or heard from again.
        suspected: bool,
    },
    /// Failure-detector input: the neighbour behind `port` is alive, its
    /// latest announced term is `term` and it believes it leads that term
    /// (`leading`) or not (a [`Msg::Heartbeat`], already checked against
    /// [`MAX_TERM`]). A node that missed the message telling it of a newer
    /// term, or a leader that sees a neighbour behind, learns it here:
    /// heartbeats keep flowing after faults heal, so an algorithm that uses
    /// them converges even when every election message to a node was lost.
    /// Algorithms without terms ignore it.
    Heartbeat {
        /// The port of the neighbour.
        port: Port,
        /// Its latest announced term.
        term: u64,
        /// It believes it leads that term.
        leading: bool,
    },
    /// The driver is about to stop this node on purpose (SIGTERM: a rolling
    /// update, a drained host): hand over what it holds, so that the others
    /// need not wait for a failure detector to notice it gone, as Raft's
    /// leadership transfer and client-go's `ReleaseOnCancel` do, and take no
    /// part in later elections. The node keeps running until the driver
    /// stops it: its belief changes when the successor's claim reaches it,
    /// which is how the driver knows the handover is done. A node that
    /// handed something over says so with [`Effect::HandingOver`] (the
    /// driver then waits for that change of belief). Algorithms without a
    /// leadership to hand over ignore it.
    Leave {
        /// `suspected[port]`: the failure detector suspects the neighbour
        /// behind `port` (a shorter slice: the rest are not suspected).
        suspected: &'a [bool],
    },
    /// The store answered an [`Effect::Store`] operation (see [`store`]).
    StoreReply(StoreReply),
    /// A recovered incarnation, before its [`Input::Start`], gets back the
    /// last [`Effect::Persist`] record of the crashed one. Algorithms that
    /// persist nothing ignore it.
    Restore(Stable),
}

/// What a quorum algorithm keeps on disk across a crash: the highest term it
/// has seen and whom it voted for (acknowledged) in it. Raft's `currentTerm`
/// and `votedFor`; ZooKeeper's accepted epoch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Stable {
    /// Highest term seen.
    pub term: u64,
    /// The candidate voted for (or proposal acknowledged) in `term`, if any.
    pub vote: Option<u64>,
}

/// The effects of one input, in order. Drivers reuse one outbox to avoid
/// allocating per message.
#[derive(Default, Debug)]
pub struct Outbox {
    effects: Vec<Effect>,
}

/// What a kept algorithm has reported so far: its belief ([`Effect::Lead`])
/// and its first decision ([`Effect::Decide`]), each pushed only when new.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Reports {
    announced: Option<Leadership>,
    decided: Option<Decision>,
}

impl Reports {
    /// Push `Lead(l)` unless `l` is the belief announced last.
    pub fn announce(&mut self, l: Leadership, out: &mut Outbox) {
        if self.announced != Some(l) {
            self.announced = Some(l);
            out.push(Effect::Lead(l));
        }
    }

    /// Push `Decide` the first time only (the one-shot verdict).
    pub fn decide_once(&mut self, role: Role, leader: u64, out: &mut Outbox) {
        if self.decided.is_none() {
            let d = Decision { role, leader };
            self.decided = Some(d);
            out.push(Effect::Decide(d));
        }
    }

    /// The first decision, if any.
    pub fn decision(&self) -> Option<Decision> {
        self.decided
    }
}

impl Outbox {
    /// Queue a send.
    #[inline]
    pub fn send(&mut self, port: Port, msg: Msg) {
        self.effects.push(Effect::Send { port, msg });
    }

    /// Queue a decision.
    #[inline]
    pub fn decide(&mut self, role: Role, leader: u64) {
        self.effects.push(Effect::Decide(Decision { role, leader }));
    }

    /// Queue any effect.
    #[inline]
    pub fn push(&mut self, effect: Effect) {
        self.effects.push(effect);
    }

    /// The queued effects.
    pub fn effects(&self) -> &[Effect] {
        &self.effects
    }

    /// Take the queued effects, leaving the outbox empty (keeps its capacity).
    #[inline]
    pub fn drain(&mut self) -> std::vec::Drain<'_, Effect> {
        self.effects.drain(..)
    }

    /// Forget the queued effects.
    #[inline]
    pub fn clear(&mut self) {
        self.effects.clear();
    }
}

/// A message a state machine cannot take in its current state.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AlgoError {
    /// The message kind does not belong to this algorithm.
    #[error("{algorithm} does not use {kind} messages")]
    UnexpectedKind {
        /// Algorithm name.
        algorithm: &'static str,
        /// Kind received.
        kind: &'static str,
    },
    /// The message arrived on a port this node does not have.
    #[error("port {port} does not exist on this node")]
    BadPort {
        /// The port.
        port: Port,
    },
    /// The message contradicts the algorithm's invariants (e.g. a duplicate id).
    #[error("{0}")]
    Invalid(String),
    /// A field holds a value no correct node sends (a term above
    /// [`MAX_TERM`], a stage or hop count at the top of its range): refused
    /// before it touches any state, so nothing that came from the network
    /// can overflow or wrap.
    #[error("{algorithm}: implausible {field} {value} (at most {max}): refused")]
    Implausible {
        /// Algorithm name.
        algorithm: &'static str,
        /// The message field.
        field: &'static str,
        /// Its value.
        value: u64,
        /// The largest value taken.
        max: u64,
    },
    /// The node already holds [`MAX_HELD`] messages for later: refused (a
    /// faulty or flooding peer), so its memory stays bounded.
    #[error("{held} messages are already held for later, the most a node holds (a faulty peer?): refused")]
    TooManyHeld {
        /// Messages held.
        held: usize,
    },
}

/// Compass direction of a mesh port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Compass {
    /// Not a mesh port.
    #[default]
    None,
    /// Towards row − 1.
    North,
    /// Towards column + 1.
    East,
    /// Towards row + 1.
    South,
    /// Towards column − 1.
    West,
}

/// What a node knows about one of its ports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortInfo {
    /// The id of the neighbour behind the port. Complete-network algorithms
    /// address candidates by id; ring and tree algorithms do not look at it.
    pub neighbour: u64,
    /// Compass direction on a mesh; [`Compass::None`] elsewhere.
    pub label: Compass,
}

/// What a node knows when its share of an election is created.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeContext<'a> {
    /// This node's id.
    pub id: u64,
    /// Which extremum wins.
    pub rule: Rule,
    /// Ring size. Algorithms of this crate do not rely on it (All the Way
    /// learns it); it is there for algorithms that assume n known.
    pub n: u32,
    /// Random bits for randomized algorithms (e.g. ProbAsFar's direction),
    /// drawn by the driver with [`coin`] so that the simulator and the live
    /// runtime give a node the same bits for the same election seed.
    pub coin: u64,
    /// Number of ports (2 on a ring; the degree on other topologies).
    pub ports: u32,
    /// Port `p` is `port_info[p]`; drivers always fill it (one entry per
    /// port), hand-built contexts in tests may leave it empty.
    pub port_info: &'a [PortInfo],
    /// The election's options for this node (a request's `options`, checked
    /// against the algorithm's [`AlgoOption`](crate::spec::AlgoOption)s, a
    /// per-node option already cut to this node's value); empty by default.
    pub options: Options<'a>,
}

/// An election's options as one node gets them: names and text values,
/// checked by the driver against the catalogue entry before any node is
/// built (see [`crate::spec::check_options`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options<'a>(pub &'a [(String, String)]);

impl<'a> Options<'a> {
    /// The value of option `name`, if the election set it.
    pub fn get(&self, name: &str) -> Option<&'a str> {
        self.0.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// Is flag `name` set to `true`?
    pub fn flag(&self, name: &str) -> bool {
        self.get(name) == Some("true")
    }
}

impl Default for Rule {
    /// [`Rule::Max`], the rule of most of the literature.
    fn default() -> Self {
        Rule::Max
    }
}

/// The random bits of `position` in an election with `seed` (SplitMix64 of both).
pub fn coin(seed: u64, position: u32) -> u64 {
    let mut z = seed ^ (position as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x636f_696e;
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A node's state machine as a value: a copy, a hash and equality, through a
/// `dyn Algorithm`, for a checker that stores the states it has seen and
/// explores from each (see the `ringleader-check` crate). Every algorithm
/// that is `Clone + Eq + Hash` has it: a node's state is plain data.
pub trait NodeValue {
    /// A copy of the node.
    fn clone_node(&self) -> Box<dyn Algorithm>;
    /// Feed the node's state to `state` (as [`Hash::hash`]).
    fn hash_node(&self, state: &mut dyn Hasher);
    /// Is `other` the same algorithm in the same state?
    fn eq_node(&self, other: &dyn Algorithm) -> bool;
    /// The node as [`Any`], to compare it with another of its type.
    fn as_any(&self) -> &dyn Any;
}

impl<T: Algorithm + Clone + Eq + Hash + 'static> NodeValue for T {
    fn clone_node(&self) -> Box<dyn Algorithm> {
        Box::new(self.clone())
    }

    fn hash_node(&self, mut state: &mut dyn Hasher) {
        self.hash(&mut state);
    }

    fn eq_node(&self, other: &dyn Algorithm) -> bool {
        other.as_any().downcast_ref::<T>() == Some(self)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Clone for Box<dyn Algorithm> {
    fn clone(&self) -> Self {
        (**self).clone_node()
    }
}

impl PartialEq for Box<dyn Algorithm> {
    fn eq(&self, other: &Self) -> bool {
        (**self).eq_node(&**other)
    }
}

impl Eq for Box<dyn Algorithm> {}

impl Hash for Box<dyn Algorithm> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (**self).hash_node(state);
    }
}

/// An election algorithm at one node: a pure state machine, and a value
/// ([`NodeValue`]).
pub trait Algorithm: Send + Sync + fmt::Debug + NodeValue {
    /// Take one input, answering with effects pushed into `out`. Only a
    /// [`Input::Message`] the node cannot take is refused (the effects it
    /// pushed before refusing stand); every other input is taken.
    fn step(&mut self, input: Input<'_>, out: &mut Outbox) -> Result<(), AlgoError>;

    /// Current state name (for logs and events), e.g. `"candidate"`.
    fn state(&self) -> &'static str;

    /// Does this node need to watch the neighbour behind `port` now? A
    /// failure detector sends heartbeats to, and suspects, only the watched
    /// neighbours, so an algorithm that needs only its leader (a follower)
    /// or its followers (the leader) keeps heartbeats at O(n) a period
    /// instead of n(n − 1). An algorithm that never runs under a detector
    /// answers `true` (every neighbour).
    fn watched(&self, port: Port) -> bool;

    /// Does this node's failure detector suspect the neighbour behind
    /// `port` now? For the words of a schedule ("id 1 suspects id 3"):
    /// the detector ([`detector`](crate::algo::detector)) answers, every
    /// other algorithm `false`.
    fn suspects(&self, port: Port) -> bool;

    /// What the timer `timer` waits for, in a word or two ("answer",
    /// "renewal"), for the steps the checker tells in words ("id 1's answer
    /// timer fires"); `None` for a timer it does not name. An algorithm with
    /// timers answers from its [`timers!`](crate::timers) table
    /// (`TIMERS.name(timer)`), one without answers `None`.
    fn timer_name(&self, timer: TimerId) -> Option<&'static str>;

    /// How many messages the node holds for later (a later stage, a closed
    /// port, the next round); never more than [`MAX_HELD`].
    fn held(&self) -> usize;

    /// Would `msg` arriving on `port` now only tell this node that the
    /// neighbour lives: change nothing but what only the node's next clock
    /// tick reads (the failure detector's silence count for that port, read
    /// when [`detector::HEARTBEAT_TIMER`](crate::algo::detector::HEARTBEAT_TIMER) fires), and send, set, announce
    /// nothing? Then when it arrives makes no difference, only whether before
    /// or after that tick and the step that ends its quietness: the model
    /// checker delivers such a message just before one of those instead of
    /// at every point between (a partial-order reduction, see
    /// `docs/checking.md`). An algorithm without a detector answers `false`:
    /// every message counts.
    fn only_refreshes(&self, port: Port, msg: &Msg) -> bool;
}

/// Most messages one node of one election holds for later. A correct run
/// holds a few (a couple per port at most); the cap keeps a faulty or hostile
/// peer that sends later-stage messages without end from growing the node's
/// memory. Beyond it a message is refused, as the runtime refuses any
/// envelope an algorithm cannot take (a `Reject` to the sender, counted).
pub const MAX_HELD: usize = 256;

/// `Ok` while a node holding `held` messages may hold one more (see [`MAX_HELD`]).
pub fn room_to_hold(held: usize) -> Result<(), AlgoError> {
    if held >= MAX_HELD { Err(AlgoError::TooManyHeld { held }) } else { Ok(()) }
}

/// Where a node keeps what it holds for later: [`Hold::hold`] keeps one more
/// item at the back while there is room ([`room_to_hold`]), and refuses it
/// with [`AlgoError::TooManyHeld`] beyond [`MAX_HELD`].
pub trait Hold<T> {
    /// Keep `item` for later, at the back, if there is room.
    fn hold(&mut self, item: T) -> Result<(), AlgoError>;
}

impl<T> Hold<T> for Vec<T> {
    #[inline]
    fn hold(&mut self, item: T) -> Result<(), AlgoError> {
        room_to_hold(self.len())?;
        self.push(item);
        Ok(())
    }
}

impl<T> Hold<T> for std::collections::VecDeque<T> {
    #[inline]
    fn hold(&mut self, item: T) -> Result<(), AlgoError> {
        room_to_hold(self.len())?;
        self.push_back(item);
        Ok(())
    }
}

/// A boxed state machine is one too, so drivers can hold `Box<dyn Algorithm>`.
/// Every method of [`Algorithm`] is required, so a method added there is a
/// compile error here until it is forwarded.
impl Algorithm for Box<dyn Algorithm> {
    #[inline]
    fn step(&mut self, input: Input<'_>, out: &mut Outbox) -> Result<(), AlgoError> {
        (**self).step(input, out)
    }

    fn state(&self) -> &'static str {
        (**self).state()
    }

    fn watched(&self, port: Port) -> bool {
        (**self).watched(port)
    }

    fn suspects(&self, port: Port) -> bool {
        (**self).suspects(port)
    }

    fn timer_name(&self, timer: TimerId) -> Option<&'static str> {
        (**self).timer_name(timer)
    }

    fn held(&self) -> usize {
        (**self).held()
    }

    fn only_refreshes(&self, port: Port, msg: &Msg) -> bool {
        (**self).only_refreshes(port, msg)
    }
}
