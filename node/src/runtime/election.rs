//! One node's share of one election: the state machine, its ports, the
//! driver-side counters, the pending queue of an initiator that has not been
//! started yet, and its timers.
//!
//! Everything mutable sits behind one `std::sync::Mutex`, held only for one
//! algorithm step plus the non-blocking enqueueing of its effects.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use ringleader_proto::v1 as pb;
use tokio::sync::broadcast;
use tonic::Code;
use tracing::{info, warn};

use super::links::Link;
use crate::algo::{Algorithm, Decision, Effect, Leadership, Msg, Outbox, Port, Role, Stable, TimerId};
use crate::counters::Counters;

/// Errors kept per election; later ones are counted, not stored, so a
/// misbehaving peer cannot grow a node's memory without bound.
const MAX_ERRORS: usize = 64;

/// Why an envelope was refused; becomes a `Reject` on the link's reply stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Rejection {
    pub(crate) code: Code,
    pub(crate) message: String,
}

impl Rejection {
    pub(crate) fn new(code: Code, message: impl Into<String>) -> Self {
        Rejection { code, message: message.into() }
    }
}

/// Where one port of this node leads.
#[derive(Debug)]
pub(crate) struct PortLink {
    /// The neighbour's overlay position (the only sender accepted on this port).
    pub(crate) peer: u32,
    /// The neighbour's port our messages arrive on.
    pub(crate) remote_port: Port,
    /// The outgoing link, `None` for a receive-only port.
    pub(crate) link: Option<Arc<Link>>,
}

/// How an election's share was configured.
#[derive(Debug)]
pub(crate) struct ElectionSetup {
    pub(crate) election_id: String,
    pub(crate) algorithm: &'static str,
    pub(crate) position: u32,
    pub(crate) id: u64,
    pub(crate) initiator: bool,
    pub(crate) ports: Vec<PortLink>,
    /// The node's injected faults: while it is crashed the election takes no input.
    pub(crate) faults: Arc<super::faults::FaultTable>,
    /// Kept elections: a new incarnation for a node that recovers from a crash.
    pub(crate) rebuild: Option<Rebuild>,
}

/// Builds a fresh state machine for a kept election's node: what a crashed
/// and restarted process would run.
pub(crate) struct Rebuild(pub(crate) Box<dyn Fn() -> Box<dyn Algorithm> + Send + Sync>);

impl std::fmt::Debug for Rebuild {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Rebuild(..)")
    }
}

/// A message that reached an initiator before `Start`.
#[derive(Clone, Copy, Debug)]
struct Pending {
    port: Port,
    msg: Msg,
    causal_time: u64,
}

#[derive(Debug)]
struct State {
    algo: Box<dyn Algorithm>,
    out: Outbox,
    counters: Counters,
    /// Causal depth: the largest causal time received.
    depth: u64,
    /// Largest causal time sent or received.
    max_causal: u64,
    decision: Option<Decision>,
    /// The latest kept-leadership belief ([`Effect::Lead`]).
    leadership: Option<Leadership>,
    /// The last record the algorithm asked to keep on stable storage
    /// ([`Effect::Persist`]); it survives a crash fault.
    stable: Option<Stable>,
    received: u64,
    rejected: u64,
    errors: Vec<String>,
    errors_dropped: u64,
    started: bool,
    pending: VecDeque<Pending>,
    /// Live timers and the generation that may fire them.
    timers: Vec<(TimerId, u64)>,
    next_generation: u64,
    /// Aborted or the node is shutting down: take no more input.
    closed: bool,
    /// The state machine panicked; its state is unknown, so it takes no more input.
    broken: bool,
}

impl State {
    fn record_error(&mut self, e: String) {
        if self.errors.len() < MAX_ERRORS {
            self.errors.push(e);
        } else {
            self.errors_dropped += 1;
        }
    }
}

/// One node's share of one election.
#[derive(Debug)]
pub(crate) struct Election {
    setup: ElectionSetup,
    events: broadcast::Sender<pb::NodeEvent>,
    state: Mutex<State>,
}

/// What `Start` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Started {
    /// Messages that had waited for `Start` and were then handed to the algorithm.
    pub(crate) released: usize,
}

impl Election {
    pub(crate) fn new(
        setup: ElectionSetup,
        algo: Box<dyn Algorithm>,
        events: broadcast::Sender<pb::NodeEvent>,
    ) -> Arc<Self> {
        let state = State {
            algo,
            out: Outbox::default(),
            counters: Counters::default(),
            depth: 0,
            max_causal: 0,
            decision: None,
            leadership: None,
            stable: None,
            received: 0,
            rejected: 0,
            errors: Vec::new(),
            errors_dropped: 0,
            started: false,
            pending: VecDeque::new(),
            timers: Vec::new(),
            next_generation: 0,
            closed: false,
            broken: false,
        };
        Arc::new(Election { setup, events, state: Mutex::new(state) })
    }

    /// The election id.
    pub(crate) fn id(&self) -> &str {
        &self.setup.election_id
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic inside the algorithm is caught before it can poison the lock;
        // anything else that poisons it must not take the node down with it.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Take an envelope from the network. `spare` is the envelope's own
    /// election id, reused for the first message this step sends.
    pub(crate) fn receive(
        self: &Arc<Self>,
        sender: u32,
        port: Port,
        body: Option<&pb::Body>,
        causal_time: u64,
        spare: &mut Option<String>,
    ) -> Result<(), Rejection> {
        let port_ok = self.setup.ports.get(port as usize).is_some_and(|p| p.peer == sender);
        if !port_ok {
            let why = match self.setup.ports.get(port as usize) {
                Some(p) => format!(
                    "bad port: port {port} of position {} leads to position {}, not to the sender {sender}",
                    self.setup.position, p.peer
                ),
                None => format!(
                    "bad port: position {} has {} port(s), the envelope names port {port}",
                    self.setup.position,
                    self.setup.ports.len()
                ),
            };
            self.lock().rejected += 1;
            return Err(Rejection::new(Code::InvalidArgument, why));
        }
        let msg = match body.map(Msg::try_from) {
            Some(Ok(m)) => m,
            Some(Err(e)) => {
                self.lock().rejected += 1;
                return Err(Rejection::new(Code::InvalidArgument, format!("bad body: {e}")));
            }
            None => {
                self.lock().rejected += 1;
                return Err(Rejection::new(Code::InvalidArgument, "bad body: missing field `body`"));
            }
        };
        let mut st = self.lock();
        if st.closed {
            st.rejected += 1;
            return Err(Rejection::new(Code::NotFound, format!("election `{}` was aborted", self.id())));
        }
        if st.broken {
            st.rejected += 1;
            return Err(Rejection::new(
                Code::FailedPrecondition,
                format!("election `{}` stopped after its state machine failed", self.id()),
            ));
        }
        if self.setup.initiator && !st.started {
            st.pending.push_back(Pending { port, msg, causal_time });
            return Ok(());
        }
        let result = self.deliver(&mut st, port, msg, causal_time);
        self.apply(&mut st, spare);
        result
    }

    /// Wake the node (`on_start`), then hand it the messages that waited for `Start`.
    pub(crate) fn start(self: &Arc<Self>) -> Result<Started, Rejection> {
        let mut st = self.lock();
        if st.closed {
            return Err(Rejection::new(Code::NotFound, format!("election `{}` was aborted", self.id())));
        }
        if st.broken {
            return Err(Rejection::new(Code::FailedPrecondition, "the election's state machine failed earlier"));
        }
        if self.setup.faults.crashed() {
            return Err(Rejection::new(Code::Unavailable, "the node is crashed (an injected fault)"));
        }
        st.started = true;
        let State { algo, out, .. } = &mut *st;
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| algo.on_start(out))) {
            let e = format!("algorithm panicked in on_start: {}", panic_text(&*panic));
            self.break_down(&mut st, e.clone());
            return Err(Rejection::new(Code::Internal, e));
        }
        let mut spare = None;
        self.apply(&mut st, &mut spare);
        let mut released = 0;
        while let Some(p) = st.pending.pop_front() {
            if st.broken {
                break;
            }
            released += 1;
            if let Err(r) = self.deliver(&mut st, p.port, p.msg, p.causal_time) {
                warn!(election = self.id(), port = p.port, msg = ?p.msg, error = %r.message, "queued message refused");
            }
            self.apply(&mut st, &mut spare);
        }
        Ok(Started { released })
    }

    /// The node recovered from a crash fault: a kept election's node becomes
    /// a new incarnation, as in the simulator: a fresh state machine that gets
    /// the last persisted record back ([`Algorithm::restore`]) and starts; the
    /// old one's timers are void. The controller hears that the node's old
    /// belief ended. One-shot elections (no `rebuild`) resume with their state.
    /// Returns whether it restarted.
    pub(crate) fn restart(self: &Arc<Self>) -> bool {
        let Some(rebuild) = &self.setup.rebuild else { return false };
        let mut st = self.lock();
        if st.closed || st.broken || !st.started || self.setup.faults.crashed() {
            return false;
        }
        let mut algo = match catch_unwind(AssertUnwindSafe(|| (rebuild.0)())) {
            Ok(a) => a,
            Err(panic) => {
                let e = format!("algorithm panicked while rebuilding after a crash: {}", panic_text(&*panic));
                self.break_down(&mut st, e);
                return false;
            }
        };
        if let Some(stable) = st.stable {
            algo.restore(stable);
        }
        st.algo = algo;
        st.timers.clear();
        st.out.clear();
        st.decision = None;
        if let Some(old) = st.leadership.filter(|l| l.leader.is_some()) {
            // The new incarnation believes nothing until it hears or decides.
            st.out.push(Effect::Lead(Leadership { term: old.term, leader: None }));
        }
        info!(election = self.id(), position = self.setup.position, restored = ?st.stable, "restarted after a crash");
        let State { algo, out, .. } = &mut *st;
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| algo.on_start(out))) {
            let e = format!("algorithm panicked in on_start after a crash: {}", panic_text(&*panic));
            self.break_down(&mut st, e);
            return false;
        }
        self.apply(&mut st, &mut None);
        true
    }

    /// Stop taking input and silence the timers.
    pub(crate) fn close(&self) {
        let mut st = self.lock();
        st.closed = true;
        st.timers.clear();
        st.pending.clear();
    }

    /// Record an error that happened outside the state machine (e.g. a lost link).
    pub(crate) fn record_error(&self, e: String) {
        self.lock().record_error(e);
    }

    /// Hand one message to the algorithm; the effects stay in the outbox.
    fn deliver(&self, st: &mut State, port: Port, msg: Msg, causal_time: u64) -> Result<(), Rejection> {
        st.depth = st.depth.max(causal_time);
        st.max_causal = st.max_causal.max(causal_time);
        st.received += 1;
        let State { algo, out, .. } = &mut *st;
        match catch_unwind(AssertUnwindSafe(|| algo.on_message(port, msg, out))) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => {
                st.rejected += 1;
                st.record_error(format!("{msg:?} on port {port}: {e}"));
                Err(Rejection::new(Code::InvalidArgument, e.to_string()))
            }
            Err(panic) => {
                let e = format!("algorithm panicked on {msg:?} from port {port}: {}", panic_text(&*panic));
                st.rejected += 1;
                self.break_down(st, e.clone());
                Err(Rejection::new(Code::Internal, e))
            }
        }
    }

    fn break_down(&self, st: &mut State, e: String) {
        warn!(election = self.id(), error = %e, "state machine failed; the election takes no more input");
        st.out.clear();
        st.broken = true;
        st.timers.clear();
        st.pending.clear();
        st.record_error(e);
    }

    /// Carry out the effects in the outbox, in order.
    fn apply(self: &Arc<Self>, st: &mut State, spare: &mut Option<String>) {
        let mut out = std::mem::take(&mut st.out);
        for effect in out.drain() {
            match effect {
                Effect::Send { port, msg } => self.send(st, port, msg, spare),
                Effect::Decide(d) => self.decide(st, d),
                Effect::Lead(l) => {
                    if st.leadership != Some(l) {
                        info!(election = self.id(), position = self.setup.position, term = l.term, leader = ?l.leader, "leadership");
                        st.leadership = Some(l);
                        let _ = self.events.send(self.lead_event(l));
                    }
                }
                Effect::SetTimer { timer, after_ms } => self.set_timer(st, timer, after_ms),
                Effect::CancelTimer { timer } => st.timers.retain(|(t, _)| *t != timer),
                // Kept in memory: a crash fault loses the state machine but
                // not this record (see `restart`); a killed process loses both
                // and does not rejoin elections in flight.
                Effect::Persist(stable) => st.stable = Some(stable),
            }
        }
        st.out = out;
    }

    fn send(&self, st: &mut State, port: Port, msg: Msg, spare: &mut Option<String>) {
        let Some((link, remote_port)) =
            self.setup.ports.get(port as usize).and_then(|p| Some((p.link.as_ref()?, p.remote_port)))
        else {
            st.record_error(format!("sent {msg:?} on port {port}, which has no outgoing link"));
            return;
        };
        st.counters.record(msg);
        let causal_time = st.depth + 1;
        st.max_causal = st.max_causal.max(causal_time);
        let election_id = spare.take().unwrap_or_else(|| self.setup.election_id.clone());
        let kind = msg.kind();
        link.send(
            pb::Envelope {
                election_id,
                sender: self.setup.position,
                port: remote_port,
                seq: 0,
                causal_time,
                traceparent: String::new(),
                body: Some(msg.into()),
            },
            kind,
        );
    }

    fn decide(&self, st: &mut State, d: Decision) {
        match st.decision {
            Some(prev) if prev != d => st.record_error(format!("decided {prev:?} and then {d:?}")),
            Some(_) => {}
            None => {
                st.decision = Some(d);
                info!(election = self.id(), position = self.setup.position, role = ?d.role, leader = d.leader, "decided");
                // No subscriber is fine: events are for whoever listens now.
                let _ = self.events.send(pb::NodeEvent {
                    election_id: self.setup.election_id.clone(),
                    position: self.setup.position,
                    role: role_of(Some(d)) as i32,
                    leader_id: d.leader,
                    ..Default::default()
                });
            }
        }
    }

    fn set_timer(self: &Arc<Self>, st: &mut State, timer: TimerId, after_ms: u64) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            st.record_error(format!("timer {timer} set outside a tokio runtime"));
            return;
        };
        st.next_generation += 1;
        let generation = st.next_generation;
        match st.timers.iter_mut().find(|(t, _)| *t == timer) {
            Some(slot) => slot.1 = generation,
            None => st.timers.push((timer, generation)),
        }
        let weak = Arc::downgrade(self);
        rt.spawn(async move {
            tokio::time::sleep(Duration::from_millis(after_ms)).await;
            if let Some(election) = weak.upgrade() {
                election.fire(timer, generation);
            }
        });
    }

    /// A timer task woke up; it fires only if nothing replaced or cancelled it since.
    fn fire(self: &Arc<Self>, timer: TimerId, generation: u64) {
        let mut st = self.lock();
        let Some(i) = st.timers.iter().position(|&(t, g)| t == timer && g == generation) else { return };
        st.timers.swap_remove(i);
        if st.closed || st.broken || self.setup.faults.crashed() {
            return;
        }
        let State { algo, out, .. } = &mut *st;
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| algo.on_timer(timer, out))) {
            let e = format!("algorithm panicked in on_timer({timer}): {}", panic_text(&*panic));
            self.break_down(&mut st, e);
            return;
        }
        self.apply(&mut st, &mut None);
    }

    /// The kept-leadership event that reports belief `l`.
    fn lead_event(&self, l: Leadership) -> pb::NodeEvent {
        let role = match l.leader {
            Some(id) if id == self.setup.id => pb::Role::Leader,
            Some(_) => pb::Role::Follower,
            None => pb::Role::Undecided,
        };
        pb::NodeEvent {
            election_id: self.setup.election_id.clone(),
            position: self.setup.position,
            role: role as i32,
            leader_id: l.leader.unwrap_or(0),
            kept: true,
            term: l.term,
        }
    }

    /// The current kept-leadership belief as an event, for a subscriber that
    /// (re)connects after it was announced; `None` for one-shot elections.
    pub(crate) fn current_belief(&self) -> Option<pb::NodeEvent> {
        let st = self.lock();
        if st.closed {
            return None;
        }
        st.leadership.map(|l| self.lead_event(l))
    }

    /// This node's figures in the election.
    pub(crate) fn status(&self) -> pb::NodeElectionStatus {
        let st = self.lock();
        let mut errors = st.errors.clone();
        if st.errors_dropped > 0 {
            errors.push(format!("... and {} more error(s)", st.errors_dropped));
        }
        pb::NodeElectionStatus {
            election_id: self.setup.election_id.clone(),
            position: self.setup.position,
            role: role_of(st.decision) as i32,
            leader_id: st.decision.map_or(0, |d| d.leader),
            sent_by_kind: st.counters.named().map(|(k, v)| (k.to_string(), v)).collect(),
            election_messages: st.counters.election_messages,
            notification_messages: st.counters.notification_messages,
            bytes: st.counters.bytes,
            received: st.received,
            max_causal_time: st.max_causal,
            rejected: st.rejected,
            errors,
        }
    }
}

fn role_of(d: Option<Decision>) -> pb::Role {
    match d.map(|d| d.role) {
        None => pb::Role::Undecided,
        Some(Role::Leader) => pb::Role::Leader,
        Some(Role::Follower) => pb::Role::Follower,
    }
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}
