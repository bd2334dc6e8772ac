//! One node as every driver runs it: the pure shell around an algorithm.
//!
//! An [`Algorithm`] only answers inputs with [`Effect`]s. What a node does
//! with those effects, apart from moving bytes and keeping time, is the same
//! in the simulator, the gRPC runtime, the fuzz harness and the unit tests, so
//! it lives here once, in the spirit of raft-rs's `RawNode` and quinn-proto's
//! `Connection`:
//!
//! * **decide once**: the first [`Effect::Decide`] is the node's decision; a
//!   later, different one is a [`Misstep::Redecided`], never a second verdict;
//! * **leadership reports**: the latest [`Effect::Lead`] belief, reported to
//!   the driver only when it changes;
//! * **the persisted record**: the last [`Effect::Persist`], which survives a
//!   crash and is handed to the next incarnation ([`Shell::restart`]);
//! * **timers with generations**: each [`Effect::SetTimer`] becomes an
//!   [`Output::SetTimer`] stamped with a generation; the driver sleeps and
//!   hands the stamp back to [`Shell::timer`], which fires only the latest,
//!   uncancelled one, so a replaced, cancelled or pre-crash timer cannot fire;
//! * **messages held before start**: an initiator whose start has not come
//!   yet may hold what reaches it ([`ShellState::hold`]), at most [`MAX_HELD`](crate::protocol::MAX_HELD);
//! * **the counters**: every message the algorithm sends, by kind, into
//!   the driver's [`Outputs`] (one tally per buffer: a driver that runs many
//!   nodes through one buffer and wants each node's own count keeps it
//!   beside its [`Sink::send`], as the simulator does).
//!
//! Every input reaches the algorithm through one entry point,
//! [`ShellState::step`] (or [`Shell::step`]) with an [`Input`]; the methods
//! named after an input ([`Shell::start`], [`Shell::message`],
//! [`Shell::timer`], [`Shell::suspect`], [`Shell::leave`],
//! [`Shell::store_reply`], [`Shell::restart`]) are conveniences over it that
//! add what the shell keeps for that input (a timer's stamp, a leave's
//! answer, the persisted record a restart hands back).
//!
//! The driver gets only what needs I/O, as [`Output`]s: messages to send,
//! timers to schedule, a decision or belief to report, a misstep to log.
//!
//! ```
//! use ringleader_core::algo::{catalogue, NodeContext, Msg, RIGHT};
//! use ringleader_core::shell::{Output, Outputs, Shell};
//! let spec = catalogue::find("as-far").unwrap();
//! let algo = (spec.machine.build)(&NodeContext { id: 7, n: 3, ports: 2, ..Default::default() });
//! let mut node: Shell<_> = Shell::new(algo);
//! let mut out = Outputs::default();
//! node.start(&mut out);
//! assert_eq!(out.drain().collect::<Vec<_>>(), [Output::Send { port: RIGHT, msg: Msg::Election { id: 7, stage: 0, hops: 0 } }]);
//! assert_eq!(out.counters().messages, 1);
//! ```

use std::collections::VecDeque;
use std::fmt;

use crate::counters::Counters;
use crate::protocol::{
    AlgoError, Algorithm, Decision, Effect, Input, Leadership, Msg, Outbox, Port, Role, Stable, StoreOp, StoreReply,
    TIMER_SLOTS, TimerId, room_to_hold,
};

/// What a shell asks its driver to do after a step, in the order the
/// algorithm asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// Send `msg` on local port `port` (already counted).
    Send {
        /// Local port.
        port: Port,
        /// The message.
        msg: Msg,
    },
    /// The node decided, for the first time.
    Decided(Decision),
    /// The node's kept-leadership belief changed to this one (or it is the
    /// first belief of a new incarnation).
    Lead(Leadership),
    /// Call [`Shell::timer`] with `timer` and `generation` after `after_ms`
    /// (milliseconds, virtual ones in the simulator). A later set or cancel
    /// of the same timer makes this one stale: the driver need not unschedule it.
    SetTimer {
        /// The timer.
        timer: TimerId,
        /// Delay in milliseconds.
        after_ms: u64,
        /// The stamp to hand back.
        generation: u64,
    },
    /// A restarted node's old incarnation believed it knew a leader: that
    /// belief ended (the new one believes nothing until it hears or decides).
    BeliefEnded(Leadership),
    /// The algorithm asked for something a node cannot do: a programming
    /// error, logged by the driver; nothing else happened.
    Misstep(Misstep),
    /// Carry `op` to the election's store and hand its answer, if any, to
    /// [`Shell::store_reply`] (see [`crate::protocol::store`]).
    Store(StoreOp),
}

/// An effect the shell refused (a bug in the algorithm, not in its input).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Misstep {
    /// A second decision that differs from the first.
    Redecided {
        /// The decision that stands.
        first: Decision,
        /// The one refused.
        then: Decision,
    },
    /// A timer id beyond [`TIMER_SLOTS`].
    NoSuchTimer {
        /// The id.
        timer: TimerId,
    },
    /// A send on a port the node cannot send on (it does not exist, or it
    /// is receive-only, as the left port of a unidirectional ring): not
    /// sent, not counted.
    NoLink {
        /// The port.
        port: Port,
        /// The message.
        msg: Msg,
    },
    /// The state machine failed ([`Effect::Fail`]): a program-defined
    /// algorithm's program broke (it says what, at which step).
    Failed {
        /// What failed, where.
        why: &'static str,
    },
}

impl fmt::Display for Misstep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Misstep::Redecided { first, then } => write!(f, "decided {first:?} and then {then:?}"),
            Misstep::NoSuchTimer { timer } => {
                write!(f, "set or cancelled timer {timer}; a node has timers 0..{TIMER_SLOTS}")
            }
            Misstep::NoLink { port, msg } => write!(f, "sent {msg:?} on port {port}, which has no outgoing link"),
            Misstep::Failed { why } => f.write_str(why),
        }
    }
}

/// Where a shell's [`Output`]s go, one at a time, as it produces them. A
/// vector collects them for a driver to carry out after the step (the
/// runtime, the fuzz harness, the unit tests); the simulator carries each
/// out at once, so a step's outputs never wait in a buffer.
pub trait Sink {
    /// Does the sink know the node's links? Then [`Sink::send`] refuses a
    /// port with no outgoing link, and the shell need not look at the ports
    /// given to [`Shell::with_links`] (the simulator: its topology knows,
    /// and a node it steps never touches its shell's memory to send).
    /// Otherwise the shell refuses such sends itself.
    const CHECKS_LINKS: bool = false;

    /// Carry out (or keep) `output`.
    fn output(&mut self, output: Output);

    /// Carry out (or keep) [`Output::Send`]: the hot path, with its fields
    /// passed as they are rather than built into an [`Output`] and read
    /// back. `false`: refused, as the node has no outgoing link on `port`
    /// (only a sink that [`CHECKS_LINKS`](Sink::CHECKS_LINKS) refuses); the shell then
    /// reports a [`Misstep::NoLink`] and counts nothing.
    #[inline]
    fn send(&mut self, port: Port, msg: Msg) -> bool {
        self.output(Output::Send { port, msg });
        true
    }
}

impl Sink for Vec<Output> {
    #[inline]
    fn output(&mut self, output: Output) {
        self.push(output);
    }
}

/// The buffer of one step (the algorithm's effects), the sink of the
/// driver's outputs and the tally of every message the shells driven
/// through it have sent. A driver keeps one and reuses it, so a step
/// allocates nothing: the simulator keeps one for all its nodes (its tally is
/// the election's), the runtime one per node and election (its tally is the
/// node's).
#[derive(Debug, Default)]
pub struct Outputs<S = Vec<Output>> {
    effects: Outbox,
    effect_count: usize,
    /// The step met [`Effect::HandingOver`] (reset by [`ShellState::leave`],
    /// the only reader).
    handing_over: bool,
    counters: Counters,
    sink: S,
}

impl<S> Outputs<S> {
    /// Outputs that go to `sink`.
    pub fn new(sink: S) -> Self {
        Outputs {
            effects: Outbox::default(),
            effect_count: 0,
            handing_over: false,
            counters: Counters::default(),
            sink,
        }
    }

    /// What the shells driven through this buffer have sent, by kind.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// How many effects the algorithm pushed in the last step (a runaway
    /// check: outputs are fewer, as persists and cancels stay in the shell).
    pub fn effect_count(&self) -> usize {
        self.effect_count
    }

    /// The sink.
    pub fn sink(&self) -> &S {
        &self.sink
    }

    /// The sink, to change.
    #[inline]
    pub fn sink_mut(&mut self) -> &mut S {
        &mut self.sink
    }

    /// The sink, consuming the buffer.
    pub fn into_sink(self) -> S {
        self.sink
    }
}

impl Outputs<Vec<Output>> {
    /// The outputs of the last step, in order.
    pub fn as_slice(&self) -> &[Output] {
        &self.sink
    }

    /// Take the outputs, leaving the buffer empty (it keeps its capacity).
    pub fn drain(&mut self) -> std::vec::Drain<'_, Output> {
        self.sink.drain(..)
    }

    /// Take the outputs of the last step, leaving the tally here: a driver
    /// that needs itself mutably while it carries them out takes them this
    /// way, and a panic while it does loses the step, never the counts.
    /// [`Outputs::give_back`] returns the (emptied) vector, so its capacity
    /// is reused.
    pub fn take(&mut self) -> Vec<Output> {
        std::mem::take(&mut self.sink)
    }

    /// Hand back a vector [`Outputs::take`] gave out, emptied.
    pub fn give_back(&mut self, mut list: Vec<Output>) {
        list.clear();
        if self.sink.is_empty() {
            self.sink = list;
        }
    }

    /// Forget the outputs (a driver that gives up on a step).
    pub fn clear(&mut self) {
        self.effects.clear();
        self.sink.clear();
    }
}

/// One node of one election: an algorithm and everything every driver keeps
/// around it (its [`ShellState`]). `H` is what the driver keeps with a
/// message held before start (the runtime: its causal time and trace parent;
/// `()` elsewhere). The state's methods that need no algorithm are the
/// shell's too (through `Deref`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Shell<A, H = ()> {
    algo: A,
    state: ShellState<H>,
}

/// What a shell keeps beside its algorithm, apart from it: a driver of many
/// nodes (the simulator) keeps the algorithms in one array and these in
/// another, so that a step touches only its state machine's bytes (a state
/// here is 24 bytes, read only on decisions, timers and beliefs). Its
/// methods take the node's algorithm where they step it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ShellState<H = ()> {
    /// The first decision's leader (when [`DECIDED`] is set).
    leader: u64,
    /// What only some algorithms need (timers, beliefs, a disk, held
    /// messages, receive-only ports from 16 up), allocated on first use: a
    /// simulated node of a one-shot ring election never allocates it.
    cold: Option<Box<Cold<H>>>,
    /// Ports `0..ports` exist ...
    ports: Port,
    /// ... and those of them below 16 whose bit is set here take no sends.
    receive_only_low: u16,
    /// [`STARTED`], [`DECIDED`], [`LEADS`].
    flags: u8,
}

/// [`ShellState::start`] has run.
const STARTED: u8 = 1;
/// The node has decided (its leader is in the shell's `leader`).
const DECIDED: u8 = 2;
/// The decision is to lead.
const LEADS: u8 = 4;
/// Receive-only ports below this are bits of the shell's `receive_only_low`.
const LOW_PORTS: Port = u16::BITS;

/// The part of a [`Shell`] most nodes never touch.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Cold<H> {
    leadership: Option<Leadership>,
    /// A new incarnation has announced nothing yet: its first belief is
    /// reported even if it equals the last one reported.
    fresh: bool,
    stable: Option<Stable>,
    generations: [u64; TIMER_SLOTS],
    held: VecDeque<(Port, Msg, H)>,
    /// Receive-only ports from [`LOW_PORTS`] up (no overlay has any today).
    receive_only_high: Vec<Port>,
}

impl<H> Default for Cold<H> {
    fn default() -> Self {
        Cold {
            leadership: None,
            fresh: false,
            stable: None,
            generations: [0; TIMER_SLOTS],
            held: VecDeque::new(),
            receive_only_high: Vec::new(),
        }
    }
}

impl<A: Algorithm, H> Shell<A, H> {
    /// A node that has not started yet.
    pub fn new(algo: A) -> Self {
        Shell { algo, state: ShellState::default() }
    }

    /// The node has ports `0..ports`, and sends on `receive_only` ones are
    /// refused ([`Misstep::NoLink`]). Without it every port takes sends.
    pub fn with_links(mut self, ports: Port, receive_only: impl IntoIterator<Item = Port>) -> Self {
        self.state = self.state.with_links(ports, receive_only);
        self
    }

    /// Feed the node one input ([`ShellState::step`]): the entry point the
    /// per-input methods below are conveniences over.
    #[inline(always)]
    pub fn step<S: Sink>(&mut self, input: Input<'_>, out: &mut Outputs<S>) -> Result<(), AlgoError> {
        self.state.step(&mut self.algo, input, out)
    }

    /// Wake the node as an initiator ([`ShellState::start`]).
    pub fn start<S: Sink>(&mut self, out: &mut Outputs<S>) {
        self.state.start(&mut self.algo, out);
    }

    /// A message arrived on `port` ([`ShellState::message`]).
    #[inline]
    pub fn message<S: Sink>(&mut self, port: Port, msg: Msg, out: &mut Outputs<S>) -> Result<(), AlgoError> {
        self.state.message(&mut self.algo, port, msg, out)
    }

    /// Would `msg` on `port` only refresh the node's failure detector
    /// ([`Algorithm::only_refreshes`])? The shell keeps nothing of a message
    /// that queues no effect, so the algorithm's answer is the node's.
    pub fn only_refreshes(&self, port: Port, msg: Msg) -> bool {
        self.algo.only_refreshes(port, &msg)
    }

    /// A scheduled timer is due ([`ShellState::timer`]).
    pub fn timer<S: Sink>(&mut self, timer: TimerId, generation: u64, out: &mut Outputs<S>) -> bool {
        self.state.timer(&mut self.algo, timer, generation, out)
    }

    /// The store answered ([`ShellState::store_reply`]).
    pub fn store_reply<S: Sink>(&mut self, reply: StoreReply, out: &mut Outputs<S>) {
        self.state.store_reply(&mut self.algo, reply, out);
    }

    /// Failure-detector input ([`ShellState::suspect`]).
    pub fn suspect<S: Sink>(&mut self, port: Port, suspected: bool, out: &mut Outputs<S>) {
        self.state.suspect(&mut self.algo, port, suspected, out);
    }

    /// The node is about to stop on purpose ([`ShellState::leave`]):
    /// whether it handed something over.
    pub fn leave<S: Sink>(&mut self, out: &mut Outputs<S>) -> bool {
        self.state.leave(&mut self.algo, out)
    }

    /// The node recovered as a new incarnation `algo` ([`ShellState::restart`]).
    pub fn restart<S: Sink>(&mut self, algo: A, out: &mut Outputs<S>) {
        self.state.restart(&mut self.algo, algo, out);
    }

    /// The node is down and stays so until [`Shell::restart`]: only its
    /// persisted record matters now, so keep that and forget the rest (its
    /// algorithm becomes `asleep`, not started; decision, belief, timers
    /// and held messages go). A crashed node's memory is lost anyway; a
    /// driver that compares states (the checker) calls this at a crash so
    /// that two crashes of one node that left the same record are one state.
    pub fn forget(&mut self, asleep: A) {
        self.algo = asleep;
        let state = &mut self.state;
        state.crash();
        state.flags = 0;
        state.leader = 0;
        if let Some(c) = &mut state.cold {
            let stable = c.stable;
            let receive_only_high = std::mem::take(&mut c.receive_only_high);
            **c = Cold { stable, receive_only_high, ..Cold::default() };
        }
    }

    /// The algorithm (for its state name, held count, watched ports).
    pub fn algorithm(&self) -> &A {
        &self.algo
    }

    /// Messages held before start plus those the algorithm holds for later.
    pub fn held(&self) -> usize {
        self.state.held_before_start() + self.algo.held()
    }
}

impl<A, H> std::ops::Deref for Shell<A, H> {
    type Target = ShellState<H>;
    fn deref(&self) -> &ShellState<H> {
        &self.state
    }
}

impl<A, H> std::ops::DerefMut for Shell<A, H> {
    fn deref_mut(&mut self) -> &mut ShellState<H> {
        &mut self.state
    }
}

impl<H> Default for ShellState<H> {
    fn default() -> Self {
        ShellState { leader: 0, cold: None, ports: Port::MAX, receive_only_low: 0, flags: 0 }
    }
}

impl<H> ShellState<H> {
    /// See [`Shell::with_links`].
    pub fn with_links(mut self, ports: Port, receive_only: impl IntoIterator<Item = Port>) -> Self {
        self.ports = ports;
        for port in receive_only {
            if port < LOW_PORTS {
                self.receive_only_low |= 1 << port;
            } else {
                self.cold().receive_only_high.push(port);
            }
        }
        self
    }

    /// Feed the node, whose algorithm is `algo`, one input
    /// ([`Algorithm::step`]), and turn what it answered into outputs: the
    /// one entry point every driver's input goes through (the methods
    /// named after an input are conveniences over it). What the shell adds
    /// to the algorithm's step depends on the input: a start marks the node
    /// started (messages it held before wait for [`ShellState::release`]);
    /// a leave reaches only a node started as an initiator (one woken only by
    /// a message is not marked started, and is not asked to hand over: a
    /// known limit for an algorithm where such a node can come to lead); a
    /// leave's answer, whether it handed over, is read by
    /// [`ShellState::leave`], so a driver calls that rather than this; a timer fires as it is given, so a driver that keeps
    /// stamps hands them to [`ShellState::timer`], which steps only the
    /// latest, uncancelled one. The algorithm may refuse a message; the
    /// effects of what it did before refusing still come out.
    #[inline(always)]
    pub fn step<A: Algorithm + ?Sized, S: Sink>(
        &mut self,
        algo: &mut A,
        input: Input<'_>,
        out: &mut Outputs<S>,
    ) -> Result<(), AlgoError> {
        match input {
            Input::Start => self.flags |= STARTED,
            Input::Leave { .. } if self.flags & STARTED == 0 => return Ok(()),
            _ => {}
        }
        let result = algo.step(input, &mut out.effects);
        self.settle(out);
        result
    }

    /// Wake the node as an initiator: [`Input::Start`] through
    /// [`ShellState::step`].
    pub fn start<A: Algorithm + ?Sized, S: Sink>(&mut self, algo: &mut A, out: &mut Outputs<S>) {
        let _ = self.step(algo, Input::Start, out);
    }

    /// A message arrived on `port`: [`Input::Message`] through
    /// [`ShellState::step`].
    #[inline(always)]
    pub fn message<A: Algorithm + ?Sized, S: Sink>(
        &mut self,
        algo: &mut A,
        port: Port,
        msg: Msg,
        out: &mut Outputs<S>,
    ) -> Result<(), AlgoError> {
        self.step(algo, Input::Message { port, msg }, out)
    }

    /// The timer the driver scheduled for `(timer, generation)` is due. It
    /// fires ([`Input::Timer`] through [`ShellState::step`], and `true`
    /// comes back) only if no later set or cancel, and no crash, made it
    /// stale.
    pub fn timer<A: Algorithm + ?Sized, S: Sink>(
        &mut self,
        algo: &mut A,
        timer: TimerId,
        generation: u64,
        out: &mut Outputs<S>,
    ) -> bool {
        if !self.timer_due(timer, generation) {
            return false;
        }
        let _ = self.step(algo, Input::Timer(timer), out);
        true
    }

    /// Would [`ShellState::timer`] fire `(timer, generation)`? (A driver that
    /// counts or caps timer events asks first.)
    #[inline]
    pub fn timer_due(&self, timer: TimerId, generation: u64) -> bool {
        self.cold.as_ref().is_some_and(|c| c.generations.get(timer as usize) == Some(&generation))
    }

    /// The store answered an [`Output::Store`] operation:
    /// [`Input::StoreReply`] through [`ShellState::step`]. A driver hands a
    /// node only the answers to its current incarnation's operations.
    pub fn store_reply<A: Algorithm + ?Sized, S: Sink>(
        &mut self,
        algo: &mut A,
        reply: StoreReply,
        out: &mut Outputs<S>,
    ) {
        let _ = self.step(algo, Input::StoreReply(reply), out);
    }

    /// Failure-detector input about the neighbour behind `port`:
    /// [`Input::Suspect`] through [`ShellState::step`].
    pub fn suspect<A: Algorithm + ?Sized, S: Sink>(
        &mut self,
        algo: &mut A,
        port: Port,
        suspected: bool,
        out: &mut Outputs<S>,
    ) {
        let _ = self.step(algo, Input::Suspect { port, suspected }, out);
    }

    /// The node is about to stop on purpose: it hands over what it holds
    /// ([`Input::Leave`] through [`ShellState::step`]). Only a started node
    /// has anything to hand over. Returns whether it handed something over
    /// (it pushed [`Effect::HandingOver`]).
    pub fn leave<A: Algorithm + ?Sized, S: Sink>(&mut self, algo: &mut A, out: &mut Outputs<S>) -> bool {
        out.handing_over = false;
        let _ = self.step(algo, Input::Leave { suspected: &[] }, out);
        out.handing_over
    }

    /// Renumber every timer's stamp to 0, for a driver that compares states
    /// (the checker): stamps only grow, so two states alike in every other
    /// way would differ by them forever. Only for a driver that has already
    /// forgotten every stale timer: the pending ones (the current stamp of
    /// their timer) are due at stamp 0 afterwards, and the driver renumbers
    /// them too.
    pub fn restamp_timers(&mut self) {
        if let Some(c) = &mut self.cold {
            c.generations = [0; TIMER_SLOTS];
        }
    }

    /// The node crashed: every pending timer is void.
    pub fn crash(&mut self) {
        if let Some(c) = &mut self.cold {
            c.generations.iter_mut().for_each(|g| *g += 1);
        }
    }

    /// The node, whose algorithm was `algo`, recovered as a new incarnation
    /// `new` (which replaces it): it gets the last
    /// persisted record back ([`Input::Restore`]), forgets the old one's
    /// decision and timers, and starts. A belief of the old incarnation
    /// that named a leader ends (the node now knows of no leader in that
    /// term), which comes out first as [`Output::BeliefEnded`]; the new
    /// incarnation's first belief is reported whatever it is.
    pub fn restart<A: Algorithm, S: Sink>(&mut self, algo: &mut A, mut new: A, out: &mut Outputs<S>) {
        if let Some(stable) = self.stable() {
            // A record is always taken; what the new incarnation queues
            // with it comes out with its start's effects below.
            let _ = new.step(Input::Restore(stable), &mut out.effects);
        }
        *algo = new;
        self.crash();
        self.flags &= !(DECIDED | LEADS);
        let cold = self.cold();
        if let Some(old) = cold.leadership.filter(|l| l.leader.is_some()) {
            let ended = Leadership { term: old.term, leader: None };
            cold.leadership = Some(ended);
            out.sink.output(Output::BeliefEnded(ended));
        }
        cold.fresh = true;
        self.start(algo, out);
    }

    /// Keep a message that reached the node before its start, with the
    /// driver's `extra`; refused beyond [`MAX_HELD`](crate::protocol::MAX_HELD) held messages (a
    /// flooding peer cannot grow the node's memory).
    pub fn hold(&mut self, port: Port, msg: Msg, extra: H) -> Result<(), AlgoError> {
        room_to_hold(self.held_before_start())?;
        self.cold().held.push_back((port, msg, extra));
        Ok(())
    }

    /// The oldest message held before start, to hand to [`ShellState::message`].
    pub fn release(&mut self) -> Option<(Port, Msg, H)> {
        self.cold.as_mut()?.held.pop_front()
    }

    /// Drop the held messages and void the timers (the election is over here).
    pub fn close(&mut self) {
        if let Some(c) = &mut self.cold {
            c.held.clear();
        }
        self.crash();
    }

    /// Has [`ShellState::start`] run?
    pub fn started(&self) -> bool {
        self.flags & STARTED != 0
    }

    /// The first decision, if any.
    #[inline]
    pub fn decision(&self) -> Option<Decision> {
        let role = if self.flags & LEADS != 0 { Role::Leader } else { Role::Follower };
        (self.flags & DECIDED != 0).then_some(Decision { role, leader: self.leader })
    }

    /// The latest kept-leadership belief, if any.
    pub fn leadership(&self) -> Option<Leadership> {
        self.cold.as_ref().and_then(|c| c.leadership)
    }

    /// The last persisted record, if any.
    pub fn stable(&self) -> Option<Stable> {
        self.cold.as_ref().and_then(|c| c.stable)
    }

    /// Can the node send on `port`?
    #[inline]
    fn sends_on(&self, port: Port) -> bool {
        port < self.ports
            && if port < LOW_PORTS {
                self.receive_only_low & (1 << port) == 0
            } else {
                !self.cold.as_ref().is_some_and(|c| c.receive_only_high.contains(&port))
            }
    }

    /// Messages held before start.
    pub fn held_before_start(&self) -> usize {
        self.cold.as_ref().map_or(0, |c| c.held.len())
    }

    /// The cold part, allocated on first use.
    fn cold(&mut self) -> &mut Cold<H> {
        self.cold.get_or_insert_with(Box::default)
    }

    /// Turn the step's effects into outputs, keeping what is the shell's.
    #[inline(always)]
    fn settle<S: Sink>(&mut self, out: &mut Outputs<S>) {
        out.effect_count = out.effects.effects().len();
        // By index over the slice, then one clear: cheaper than a `Drain`
        // on the simulator's hot path (effects are `Copy`).
        for &effect in out.effects.effects() {
            // A send touches nothing of the shell's when the sink checks links:
            // the simulator keeps these states apart from the state machines
            // and a send must not pull the state's cache line in.
            if let Effect::Send { port, msg } = effect {
                if (S::CHECKS_LINKS || self.sends_on(port)) && out.sink.send(port, msg) {
                    out.counters.record(msg);
                } else {
                    out.sink.output(Output::Misstep(Misstep::NoLink { port, msg }));
                }
            } else if effect == Effect::HandingOver {
                out.handing_over = true;
            } else if let Some(output) = self.keep(effect) {
                out.sink.output(output);
            }
        }
        out.effects.clear();
    }

    /// Take in an effect other than a send; what the driver must do about
    /// it, if anything. Out of line, so that its reads of the state stay off
    /// the send path.
    #[inline(never)]
    fn keep(&mut self, effect: Effect) -> Option<Output> {
        Some(match effect {
            Effect::Send { port, msg } => Output::Send { port, msg },
            Effect::Decide(d) => match self.decision() {
                None => {
                    self.leader = d.leader;
                    self.flags |= DECIDED | if d.role == Role::Leader { LEADS } else { 0 };
                    Output::Decided(d)
                }
                Some(first) if first != d => Output::Misstep(Misstep::Redecided { first, then: d }),
                Some(_) => return None,
            },
            Effect::Lead(l) => {
                let cold = self.cold();
                if cold.leadership == Some(l) && !cold.fresh {
                    return None;
                }
                cold.leadership = Some(l);
                cold.fresh = false;
                Output::Lead(l)
            }
            Effect::SetTimer { timer, after_ms } => match self.cold().generations.get_mut(timer as usize) {
                Some(g) => {
                    *g += 1;
                    Output::SetTimer { timer, after_ms, generation: *g }
                }
                None => Output::Misstep(Misstep::NoSuchTimer { timer }),
            },
            Effect::CancelTimer { timer } => match self.cold().generations.get_mut(timer as usize) {
                Some(g) => {
                    *g += 1;
                    return None;
                }
                None => Output::Misstep(Misstep::NoSuchTimer { timer }),
            },
            Effect::Persist(stable) => {
                self.cold().stable = Some(stable);
                return None;
            }
            Effect::Store(op) => Output::Store(op),
            // Taken by `settle`, for `leave`.
            Effect::HandingOver => return None,
            Effect::Fail { why } => Output::Misstep(Misstep::Failed { why }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{AlgoError, MAX_HELD};

    /// A scripted algorithm: each input pushes the effects queued for it.
    #[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
    struct Script {
        on_start: Vec<Effect>,
        on_message: Vec<Effect>,
        on_timer: Vec<Effect>,
        on_leave: Vec<Effect>,
        fired: Vec<TimerId>,
        restored: Option<Stable>,
    }

    impl Algorithm for Script {
        fn step(&mut self, input: Input<'_>, out: &mut Outbox) -> Result<(), AlgoError> {
            let effects = match input {
                Input::Start => &self.on_start,
                Input::Message { .. } => &self.on_message,
                Input::Timer(timer) => {
                    self.fired.push(timer);
                    &self.on_timer
                }
                Input::Restore(stable) => {
                    self.restored = Some(stable);
                    return Ok(());
                }
                Input::Leave { .. } => &self.on_leave,
                Input::Suspect { .. } | Input::Heartbeat { .. } | Input::StoreReply(_) => return Ok(()),
            };
            effects.iter().for_each(|e| out.push(*e));
            Ok(())
        }
        fn state(&self) -> &'static str {
            "scripted"
        }
        fn watched(&self, _port: Port) -> bool {
            true
        }
        fn suspects(&self, _port: Port) -> bool {
            false
        }
        fn timer_name(&self, _timer: TimerId) -> Option<&'static str> {
            None
        }
        fn held(&self) -> usize {
            0
        }
        fn only_refreshes(&self, _port: Port, _msg: &Msg) -> bool {
            false
        }
    }

    const WAKE: Msg = Msg::Wakeup;
    fn leader(id: u64) -> Decision {
        Decision { role: Role::Leader, leader: id }
    }

    /// A forgotten node keeps only its persisted record: two nodes that crashed in different states
    /// but left the same record are equal once forgotten, and a restart restores the record.
    #[test]
    fn a_forgotten_node_keeps_only_its_record() {
        let record = Stable { term: 3, vote: Some(2) };
        let mut a: Shell<Script> = Shell::new(Script::default());
        let mut out: Outputs = Outputs::default();
        a.algo.on_start = vec![Effect::Persist(record), Effect::SetTimer { timer: 1, after_ms: 5 }];
        a.start(&mut out);
        let mut b = a.clone();
        b.algo.on_message = vec![Effect::Lead(Leadership { term: 3, leader: Some(2) })];
        b.message(0, Msg::Notify { leader: 2 }, &mut out).unwrap();
        assert_ne!(a, b);
        a.forget(Script::default());
        b.forget(Script::default());
        assert_eq!(a, b, "the same record, nothing else");
        assert!(!a.started() && a.leadership().is_none() && a.decision().is_none() && !a.timer_due(1, 1));
        a.restart(Script::default(), &mut out);
        assert_eq!(a.algorithm().restored, Some(record), "the record comes back at the restart");
    }

    /// Restamping keeps what is due: a timer set twice is due at stamp 0 afterwards (its current
    /// stamp renumbered), and a cancel or a new set after the restamp makes stamp 0 stale again.
    #[test]
    fn restamped_timers_stay_due_until_replaced() {
        let mut shell: Shell<Script> = Shell::new(Script::default());
        let mut out: Outputs = Outputs::default();
        shell.algo.on_start =
            vec![Effect::SetTimer { timer: 2, after_ms: 5 }, Effect::SetTimer { timer: 2, after_ms: 7 }];
        shell.start(&mut out);
        assert!(shell.timer_due(2, 2) && !shell.timer_due(2, 1), "the second set is the current one");
        shell.restamp_timers();
        assert!(shell.timer_due(2, 0) && !shell.timer_due(2, 2), "renumbered to 0");
        shell.algo.on_timer = vec![Effect::CancelTimer { timer: 2 }];
        assert!(shell.timer(2, 0, &mut out), "it fires at its new stamp");
        assert!(!shell.timer_due(2, 0), "the cancel made stamp 0 stale");
    }

    /// The first decision stands: a repeat is silent, a different one is a
    /// misstep that changes nothing.
    #[test]
    fn decides_once() {
        let mut s: Shell<Script> = Shell::new(Script {
            on_message: vec![Effect::Decide(leader(1)), Effect::Decide(leader(1)), Effect::Decide(leader(2))],
            ..Script::default()
        });
        let mut out = Outputs::default();
        s.message(0, WAKE, &mut out).unwrap();
        assert_eq!(
            out.drain().collect::<Vec<_>>(),
            [Output::Decided(leader(1)), Output::Misstep(Misstep::Redecided { first: leader(1), then: leader(2) })]
        );
        assert_eq!(s.decision(), Some(leader(1)));
    }

    /// A belief is reported when it changes, not when it is repeated.
    #[test]
    fn reports_a_belief_when_it_changes() {
        let a = Leadership { term: 1, leader: Some(3) };
        let b = Leadership { term: 2, leader: None };
        let mut s: Shell<Script> = Shell::new(Script {
            on_message: vec![Effect::Lead(a), Effect::Lead(a), Effect::Lead(b)],
            ..Script::default()
        });
        let mut out = Outputs::default();
        s.message(0, WAKE, &mut out).unwrap();
        assert_eq!(out.drain().collect::<Vec<_>>(), [Output::Lead(a), Output::Lead(b)]);
        assert_eq!(s.leadership(), Some(b));
    }

    /// A send on a missing or receive-only port is a misstep: not sent, not counted.
    #[test]
    fn sends_only_on_links_that_send() {
        let sends = [0, 1, 2].map(|port| Effect::Send { port, msg: WAKE });
        let mut s: Shell<Script> =
            Shell::new(Script { on_start: sends.to_vec(), ..Script::default() }).with_links(2, [0]);
        let mut out = Outputs::default();
        s.start(&mut out);
        assert_eq!(
            out.drain().collect::<Vec<_>>(),
            [
                Output::Misstep(Misstep::NoLink { port: 0, msg: WAKE }),
                Output::Send { port: 1, msg: WAKE },
                Output::Misstep(Misstep::NoLink { port: 2, msg: WAKE }),
            ]
        );
        assert_eq!(out.counters().messages, 1);
    }

    /// A driver that takes a step's outputs to carry them out leaves the tally
    /// behind (a panic on its way loses the step, not the counts), and the
    /// vector it gives back is reused.
    #[test]
    fn taking_the_outputs_leaves_the_counts() {
        let mut s: Shell<Script> =
            Shell::new(Script { on_start: vec![Effect::Send { port: 0, msg: WAKE }], ..Script::default() });
        let mut out = Outputs::default();
        s.start(&mut out);
        let list = out.take();
        assert_eq!(
            (list.as_slice(), out.as_slice(), out.counters().messages),
            (&[Output::Send { port: 0, msg: WAKE }][..], &[][..], 1)
        );
        let capacity = list.capacity();
        out.give_back(list);
        assert_eq!((out.as_slice().len(), out.take().capacity()), (0, capacity));
    }

    /// Only the latest set of a timer fires: a replaced, cancelled or
    /// pre-crash one is stale, and an id beyond the slots is a misstep.
    #[test]
    fn only_the_latest_timer_fires() {
        let mut s: Shell<Script> = Shell::new(Script {
            on_start: vec![
                Effect::SetTimer { timer: 2, after_ms: 5 },
                Effect::SetTimer { timer: 2, after_ms: 9 },
                Effect::SetTimer { timer: 3, after_ms: 1 },
                Effect::CancelTimer { timer: 3 },
                Effect::SetTimer { timer: TIMER_SLOTS as TimerId, after_ms: 1 },
            ],
            ..Script::default()
        });
        let mut out = Outputs::default();
        s.start(&mut out);
        let outs: Vec<Output> = out.drain().collect();
        assert_eq!(
            outs,
            [
                Output::SetTimer { timer: 2, after_ms: 5, generation: 1 },
                Output::SetTimer { timer: 2, after_ms: 9, generation: 2 },
                Output::SetTimer { timer: 3, after_ms: 1, generation: 1 },
                Output::Misstep(Misstep::NoSuchTimer { timer: 8 }),
            ]
        );
        assert!(!s.timer(2, 1, &mut out), "replaced");
        assert!(!s.timer(3, 1, &mut out), "cancelled");
        assert!(!s.timer(8, 0, &mut out), "no such slot");
        assert!(s.timer(2, 2, &mut out));
        assert_eq!(s.algorithm().fired, [2]);
        s.crash();
        assert!(!s.timer(2, 2, &mut out), "voided by the crash");
    }

    /// A new incarnation gets the persisted record back, forgets the old
    /// decision and timers, and the old belief in a leader is ended first.
    #[test]
    fn restart_restores_the_record_and_ends_the_old_belief() {
        let stable = Stable { term: 4, vote: Some(9) };
        let lead = Leadership { term: 4, leader: Some(9) };
        let mut s: Shell<Script> = Shell::new(Script {
            on_start: vec![
                Effect::Persist(stable),
                Effect::Lead(lead),
                Effect::Decide(leader(9)),
                Effect::SetTimer { timer: 0, after_ms: 1 },
                Effect::Send { port: 0, msg: WAKE },
            ],
            ..Script::default()
        });
        let mut out = Outputs::default();
        s.start(&mut out);
        out.clear();
        s.restart(Script::default(), &mut out);
        let ended = Leadership { term: 4, leader: None };
        assert_eq!(out.drain().collect::<Vec<_>>(), [Output::BeliefEnded(ended)]);
        assert_eq!(
            (s.algorithm().restored, s.decision(), s.leadership(), s.stable()),
            (Some(stable), None, Some(ended), Some(stable))
        );
        assert!(!s.timer(0, 1, &mut out));
    }

    /// Messages held before start come back in order, and the holding stops
    /// at the cap with the algorithms' own refusal.
    #[test]
    fn holds_before_start_up_to_the_cap() {
        let mut s: Shell<Script, u32> = Shell::new(Script::default());
        for i in 0..MAX_HELD as u32 {
            s.hold(i % 2, WAKE, i).unwrap();
        }
        assert_eq!(s.hold(0, WAKE, 0), Err(AlgoError::TooManyHeld { held: MAX_HELD }));
        assert_eq!(s.held(), MAX_HELD);
        assert_eq!(s.release(), Some((0, WAKE, 0)));
        assert_eq!(s.release(), Some((1, WAKE, 1)));
    }

    /// A leave reaches only a started node, and its answer is whether the step pushed
    /// `HandingOver`: the shell takes that effect, the driver sees only the sends.
    #[test]
    fn a_leave_is_answered_by_handing_over() {
        let handover = Effect::Send { port: 0, msg: Msg::Notify { leader: 2 } };
        let mut s: Shell<Script> =
            Shell::new(Script { on_leave: vec![handover, Effect::HandingOver], ..Script::default() });
        let mut out = Outputs::default();
        assert!(!s.leave(&mut out), "not started: nothing to hand over");
        assert!(out.as_slice().is_empty());
        s.start(&mut out);
        assert!(s.leave(&mut out));
        assert_eq!(out.drain().collect::<Vec<_>>(), [Output::Send { port: 0, msg: Msg::Notify { leader: 2 } }]);
        s.algo.on_leave = vec![handover];
        assert!(!s.leave(&mut out), "sent, but handed nothing over");
    }
}
