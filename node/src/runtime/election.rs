//! One node's share of one election: the state machine in the core's node
//! [`Shell`] (which keeps its decision, belief, persisted record, timer
//! generations, counters and the messages an initiator holds before
//! `Start`), its ports, and what only a live node has: links, tokio timer
//! tasks, spans, metrics and the message log.
//!
//! Everything mutable sits behind one `std::sync::Mutex`, held only for one
//! algorithm step plus the non-blocking enqueueing of its effects.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use opentelemetry::trace::{Span as _, SpanContext, SpanKind, TraceContextExt as _, Tracer as _};
use opentelemetry::{Context, KeyValue, global};
use ringleader_proto::v1 as pb;
use tokio::sync::broadcast;
use tonic::Code;
use tracing::{debug, info, warn};

use super::links::Link;
use super::reports::{Reporter, monotonic_us};
use crate::observe::{self, kv, node_metrics};
use ringleader_core::algo::{Algorithm, Decision, Leadership, Msg, Port, Role, TimerId};
use ringleader_core::shell::{Output, Outputs, Shell, TIMER_SLOTS};

/// Entries of each half (sends, receipts) of a node's message log of one election.
pub(crate) const MAX_LOGGED: usize = 8_192;

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
    /// This node's name: the `node` label of its metrics and spans.
    pub(crate) node: KeyValue,
    /// The controller's root span of the election; `None`: the election is not traced.
    pub(crate) trace: Option<SpanContext>,
    /// Keep a message log for the space-time diagram.
    pub(crate) log_messages: bool,
}

/// An envelope as it arrives, minus the election id.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Arrival<'a> {
    pub(crate) sender: u32,
    pub(crate) port: Port,
    pub(crate) body: Option<&'a pb::Body>,
    pub(crate) causal_time: u64,
    pub(crate) traceparent: &'a str,
    pub(crate) message_seq: u64,
}

impl<'a> Arrival<'a> {
    /// An untraced, unnumbered arrival.
    #[cfg(test)]
    pub(crate) fn new(sender: u32, port: Port, body: Option<&'a pb::Body>, causal_time: u64) -> Self {
        Arrival { sender, port, body, causal_time, traceparent: "", message_seq: 0 }
    }
}

/// Builds a fresh state machine for a kept election's node: what a crashed
/// and restarted process would run.
pub(crate) struct Rebuild(pub(crate) Box<dyn Fn() -> Box<dyn Algorithm> + Send + Sync>);

impl std::fmt::Debug for Rebuild {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Rebuild(..)")
    }
}

/// What the runtime keeps with a message an initiator holds before `Start`.
#[derive(Clone, Debug)]
struct Pending {
    causal_time: u64,
    /// The span that sent it.
    parent: Option<SpanContext>,
}

/// What an algorithm step was handed, for its span.
#[derive(Clone, Copy, Debug)]
enum Input {
    Start,
    Restart,
    Leave,
    Message { port: Port, msg: Msg, causal_time: u64 },
    Timer(TimerId),
}

#[derive(Debug)]
struct State {
    /// The state machine and what every driver keeps around it. Its
    /// persisted record is kept in memory: a crash fault loses the state
    /// machine but not the record (see `restart`); a killed process loses
    /// both and does not rejoin elections in flight.
    shell: Shell<Box<dyn Algorithm>, Pending>,
    out: Outputs,
    /// Causal depth: the largest causal time received.
    depth: u64,
    /// Largest causal time sent or received.
    max_causal: u64,
    received: u64,
    rejected: u64,
    errors: Vec<String>,
    errors_dropped: u64,
    /// The span that set each timer (the parent of the step it fires).
    timer_parents: [Option<SpanContext>; TIMER_SLOTS],
    /// Aborted or the node is shutting down: take no more input.
    closed: bool,
    /// The state machine panicked; its state is unknown, so it takes no more input.
    broken: bool,
    /// Messages sent so far (the last `message_seq`).
    sent_seq: u64,
    /// Unix microseconds when the current kept belief took effect.
    belief_since_us: u64,
    /// The message log, when the election keeps one.
    log: Option<Box<pb::MessageLog>>,
    /// Per port: messages sent on it, and envelopes that arrived on it
    /// (taken, held or refused), for the controller's count of what is
    /// still in flight.
    sent_by_port: Vec<u64>,
    arrived_by_port: Vec<u64>,
    /// Per timer slot: the stamp of the timer set there and not yet fired
    /// (it is pending while the shell still expects that stamp).
    armed: [Option<u64>; TIMER_SLOTS],
    /// Steps taken (start, messages, timers): orders this node's reports.
    steps: u64,
    /// [`monotonic_us`] of the first send and of the decision (0: none yet).
    first_send_us: u64,
    decided_us: u64,
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
    events: broadcast::Sender<Arc<pb::NodeEvent>>,
    state: Mutex<State>,
    /// One-shot elections: where a step queues the election's report
    /// (`None`: kept leaderships, whose heartbeats never end, report beliefs only).
    reporter: Option<Arc<Reporter>>,
    /// Queued for a report that has not been taken yet.
    report_queued: AtomicBool,
    /// When it was prepared here.
    prepared: Instant,
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
        events: broadcast::Sender<Arc<pb::NodeEvent>>,
        reporter: Option<Arc<Reporter>>,
    ) -> Arc<Self> {
        let receive_only = (0..setup.ports.len() as Port).filter(|&p| setup.ports[p as usize].link.is_none());
        let state = State {
            shell: Shell::new(algo).with_links(setup.ports.len() as Port, receive_only),
            out: Outputs::default(),
            depth: 0,
            max_causal: 0,
            received: 0,
            rejected: 0,
            errors: Vec::new(),
            errors_dropped: 0,
            timer_parents: Default::default(),
            closed: false,
            broken: false,
            sent_seq: 0,
            belief_since_us: 0,
            log: None,
            sent_by_port: vec![0; setup.ports.len()],
            arrived_by_port: vec![0; setup.ports.len()],
            armed: [None; TIMER_SLOTS],
            steps: 0,
            first_send_us: 0,
            decided_us: 0,
        };
        let mut state = state;
        if setup.log_messages {
            state.log = Some(Box::default());
        }
        let report_queued = AtomicBool::new(false);
        Arc::new(Election {
            setup,
            events,
            state: Mutex::new(state),
            reporter,
            report_queued,
            prepared: Instant::now(),
        })
    }

    /// The election id.
    pub(crate) fn id(&self) -> &str {
        &self.setup.election_id
    }

    /// When it was prepared on this node.
    pub(crate) fn prepared_at(&self) -> Instant {
        self.prepared
    }

    /// Is it a kept leadership (rather than a one-shot election)?
    pub(crate) fn is_kept(&self) -> bool {
        self.setup.rebuild.is_some()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic inside the algorithm is caught before it can poison the lock;
        // anything else that poisons it must not take the node down with it.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Take an envelope from the network. `spare` is the envelope's own
    /// election id, reused for the first message this step sends.
    pub(crate) fn receive(self: &Arc<Self>, arrival: Arrival<'_>, spare: &mut Option<String>) -> Result<(), Rejection> {
        let Arrival { sender, port, body, causal_time, traceparent, message_seq } = arrival;
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
        let decoded = if causal_time > ringleader_core::algo::MAX_TERM {
            // Each message adds one to the causal time: no run gets near 2^53.
            Err(Rejection::new(
                Code::InvalidArgument,
                format!("implausible causal_time {causal_time} (at most {})", ringleader_core::algo::MAX_TERM),
            ))
        } else {
            match body.map(Msg::try_from) {
                Some(Ok(m)) => Ok(m),
                Some(Err(e)) => Err(Rejection::new(Code::InvalidArgument, format!("bad body: {e}"))),
                None => Err(Rejection::new(Code::InvalidArgument, "bad body: missing field `body`")),
            }
        };
        let mut st = self.lock();
        // It arrived on this link, whatever becomes of it: the sender counted it sent.
        st.arrived_by_port[port as usize] += 1;
        let msg = match decoded {
            Ok(m) if !st.closed && !st.broken => m,
            refused => {
                let r = match refused {
                    Err(r) => r,
                    Ok(_) if st.closed => {
                        Rejection::new(Code::NotFound, format!("election `{}` was aborted", self.id()))
                    }
                    Ok(_) => Rejection::new(
                        Code::FailedPrecondition,
                        format!("election `{}` stopped after its state machine failed", self.id()),
                    ),
                };
                st.rejected += 1;
                self.queue_report(st);
                return Err(r);
            }
        };
        // A malformed trace context costs the message its parent link, not its delivery.
        let parent = match self.setup.trace {
            Some(_) => observe::parse_traceparent(traceparent).ok().flatten(),
            None => None,
        };
        if !msg.kind().is_upkeep()
            && let Some(log) = st.log.as_mut()
        {
            if log.received.len() < MAX_LOGGED {
                log.received.push(pb::LoggedReceipt {
                    from: sender,
                    seq: message_seq,
                    kind: msg.kind().name().to_string(),
                    at_us: unix_micros(),
                });
            } else {
                log.truncated += 1;
            }
        }
        if self.setup.initiator && !st.shell.started() {
            let held = st.shell.hold(port, msg, Pending { causal_time, parent }).map_err(|e| {
                st.rejected += 1;
                Rejection::new(Code::ResourceExhausted, format!("{e} (the initiator has not started yet)"))
            });
            self.queue_report(st);
            return held;
        }
        let began = self.setup.trace.as_ref().map(|_| SystemTime::now());
        let result = self.deliver(&mut st, port, msg, causal_time);
        let mut span = self.step_span(&st, began, Input::Message { port, msg, causal_time }, parent, sender);
        if let (Some(span), Err(r)) = (span.as_mut(), &result) {
            span.set_status(opentelemetry::trace::Status::error(r.message.clone()));
        }
        self.apply(&mut st, spare, span.as_mut());
        self.queue_report(st);
        result
    }

    /// Queue this election's report (one-shot elections; see [`Reporter`]),
    /// once this node has decided: only then can it tell the controller
    /// anything it waits for (its decision, and the figures that show the
    /// election over, which need every node decided), so a node sends a
    /// report or two per election instead of one per step.
    fn queue_report(self: &Arc<Self>, st: MutexGuard<'_, State>) {
        let decided = st.shell.decision().is_some();
        drop(st);
        if decided && let Some(r) = &self.reporter {
            r.queue(self, &self.report_queued);
        }
    }

    /// This node's figures now, as a report event; the election may be
    /// queued for a report again from here on.
    pub(crate) fn take_report(&self) -> pb::NodeEvent {
        self.report_queued.store(false, std::sync::atomic::Ordering::Release);
        let status = self.status();
        pb::NodeEvent {
            election_id: status.election_id.clone(),
            position: status.position,
            role: status.role,
            leader_id: status.leader_id,
            status: Some(status),
            ..Default::default()
        }
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
        let began = self.setup.trace.as_ref().map(|_| SystemTime::now());
        st.steps += 1;
        let State { shell, out, .. } = &mut *st;
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| shell.start(out))) {
            let e = format!("algorithm panicked in on_start: {}", panic_text(&*panic));
            self.break_down(&mut st, e.clone());
            return Err(Rejection::new(Code::Internal, e));
        }
        let mut spare = None;
        let mut span = self.step_span(&st, began, Input::Start, None, self.setup.position);
        self.apply(&mut st, &mut spare, span.as_mut());
        drop(span);
        let mut released = 0;
        while !st.broken
            && let Some((port, msg, p)) = st.shell.release()
        {
            released += 1;
            let began = self.setup.trace.as_ref().map(|_| SystemTime::now());
            let sender = self.setup.ports.get(port as usize).map_or(0, |l| l.peer);
            let result = self.deliver(&mut st, port, msg, p.causal_time);
            if let Err(r) = &result {
                warn!(election = self.id(), port, msg = ?msg, error = %r.message, "queued message refused");
            }
            let input = Input::Message { port, msg, causal_time: p.causal_time };
            let mut span = self.step_span(&st, began, input, p.parent, sender);
            self.apply(&mut st, &mut spare, span.as_mut());
        }
        self.queue_report(st);
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
        if st.closed || st.broken || !st.shell.started() || self.setup.faults.crashed() {
            return false;
        }
        let algo = match catch_unwind(AssertUnwindSafe(|| (rebuild.0)())) {
            Ok(a) => a,
            Err(panic) => {
                let e = format!("algorithm panicked while rebuilding after a crash: {}", panic_text(&*panic));
                self.break_down(&mut st, e);
                return false;
            }
        };
        st.out.clear();
        st.timer_parents = Default::default();
        info!(election = self.id(), position = self.setup.position, restored = ?st.shell.stable(), "restarted after a crash");
        let began = self.setup.trace.as_ref().map(|_| SystemTime::now());
        let State { shell, out, .. } = &mut *st;
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| shell.restart(algo, out))) {
            let e = format!("algorithm panicked in on_start after a crash: {}", panic_text(&*panic));
            self.break_down(&mut st, e);
            return false;
        }
        let mut span = self.step_span(&st, began, Input::Restart, None, self.setup.position);
        self.apply(&mut st, &mut None, span.as_mut());
        true
    }

    /// The node is about to stop on purpose: the algorithm hands over what
    /// it holds ([`Algorithm::on_leave`]). Returns whether this node led the
    /// kept leadership just before, and whether it handed it over (`None`:
    /// nothing to hand over: a one-shot or unstarted election, or one that
    /// cannot take input).
    pub(crate) fn leave(self: &Arc<Self>) -> Option<(bool, bool)> {
        let mut st = self.lock();
        if st.closed || st.broken || !st.shell.started() || self.setup.faults.crashed() {
            return None;
        }
        let belief = st.shell.leadership()?;
        let led = belief.leader == Some(self.setup.id);
        let began = self.setup.trace.as_ref().map(|_| SystemTime::now());
        let State { shell, out, .. } = &mut *st;
        let handing = match catch_unwind(AssertUnwindSafe(|| shell.leave(out))) {
            Ok(h) => h,
            Err(panic) => {
                let e = format!("algorithm panicked in on_leave: {}", panic_text(&*panic));
                self.break_down(&mut st, e);
                return None;
            }
        };
        let mut span = self.step_span(&st, began, Input::Leave, None, self.setup.position);
        self.apply(&mut st, &mut None, span.as_mut());
        Some((led, handing))
    }

    /// This node's id in the election.
    pub(crate) fn node_id(&self) -> u64 {
        self.setup.id
    }

    /// Stop taking input and silence the timers.
    pub(crate) fn close(&self) {
        let mut st = self.lock();
        st.closed = true;
        st.shell.close();
        st.timer_parents = Default::default();
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
        st.steps += 1;
        node_metrics().received.add(1, &self.labels(msg));
        let State { shell, out, .. } = &mut *st;
        match catch_unwind(AssertUnwindSafe(|| shell.message(port, msg, out))) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => {
                st.rejected += 1;
                st.record_error(format!("{msg:?} on port {port}: {e}"));
                let code = match e {
                    ringleader_core::algo::AlgoError::TooManyHeld { .. } => Code::ResourceExhausted,
                    _ => Code::InvalidArgument,
                };
                Err(Rejection::new(code, e.to_string()))
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
        st.shell.close();
        st.timer_parents = Default::default();
        st.record_error(e);
    }

    /// The metric labels of a message of this election.
    fn labels(&self, msg: Msg) -> [KeyValue; 3] {
        [kv("algorithm", self.setup.algorithm), kv("kind", msg.kind().name()), self.setup.node.clone()]
    }

    /// The span of the algorithm step that just ran (its effects still in the
    /// outbox), or `None` when the election is untraced or the step was only
    /// upkeep (heartbeats, lease renewals) that changed nothing.
    fn step_span(
        &self,
        st: &State,
        began: Option<SystemTime>,
        input: Input,
        parent: Option<SpanContext>,
        sender: u32,
    ) -> Option<global::BoxedSpan> {
        let (root, began) = (self.setup.trace.as_ref()?, began?);
        let eventful = st.out.as_slice().iter().any(|o| match o {
            Output::Send { msg, .. } => !msg.kind().is_upkeep(),
            Output::Decided(_) | Output::Lead(_) | Output::BeliefEnded(_) | Output::Misstep(_) => true,
            Output::SetTimer { .. } => false,
        });
        let (name, kind) = match input {
            Input::Message { msg, .. } if msg.kind().is_upkeep() && !eventful => return None,
            Input::Timer(_) if !eventful => return None,
            Input::Message { msg, .. } => (format!("receive {}", msg.kind().name()), SpanKind::Consumer),
            Input::Start => ("start".to_string(), SpanKind::Internal),
            Input::Restart => ("restart".to_string(), SpanKind::Internal),
            Input::Leave => ("leave".to_string(), SpanKind::Internal),
            Input::Timer(_) => ("timer".to_string(), SpanKind::Internal),
        };
        let mut attributes = vec![
            kv("ringleader.election.id", self.setup.election_id.clone()),
            kv("ringleader.algorithm", self.setup.algorithm),
            KeyValue::new("ringleader.node", self.setup.node.value.clone()),
            kv("ringleader.position", i64::from(self.setup.position)),
        ];
        match input {
            Input::Message { port, msg, causal_time } => {
                attributes.push(kv("ringleader.message.kind", msg.kind().name()));
                attributes.push(kv("ringleader.message.sender", i64::from(sender)));
                attributes.push(kv("ringleader.port", i64::from(port)));
                attributes.push(kv("ringleader.causal_time", causal_time as i64));
                if let Some(stage) = msg.stage() {
                    attributes.push(kv("ringleader.stage", i64::from(stage)));
                }
            }
            Input::Timer(t) => {
                attributes.push(kv("ringleader.timer", i64::from(t)));
                attributes.push(kv("ringleader.causal_time", st.depth as i64));
            }
            Input::Start | Input::Restart | Input::Leave => {
                attributes.push(kv("ringleader.causal_time", st.depth as i64))
            }
        }
        let parent = Context::new().with_remote_span_context(parent.unwrap_or_else(|| root.clone()));
        let tracer = global::tracer(observe::NODE_SCOPE);
        Some(
            tracer
                .span_builder(name)
                .with_kind(kind)
                .with_start_time(began)
                .with_attributes(attributes)
                .start_with_context(&tracer, &parent),
        )
    }

    /// Carry out the effects in the outbox, in order; `span` is the step's
    /// span, which the messages sent carry as their parent.
    fn apply(self: &Arc<Self>, st: &mut State, spare: &mut Option<String>, mut span: Option<&mut global::BoxedSpan>) {
        // Only the step's outputs leave `st.out`: its counters stay put.
        let mut list = st.out.take();
        let context = span.as_ref().map(|s| s.span_context().clone());
        let traceparent = context.as_ref().and_then(observe::traceparent);
        for output in list.drain(..) {
            match output {
                Output::Send { port, msg } => {
                    let carried = if msg.kind().is_upkeep() { None } else { traceparent.clone() };
                    if let (Some(span), Some(_)) = (span.as_mut(), &carried) {
                        let to = self.setup.ports.get(port as usize).map_or(-1, |p| i64::from(p.peer));
                        span.add_event(
                            format!("send {}", msg.kind().name()),
                            vec![kv("ringleader.port", i64::from(port)), kv("ringleader.to", to)],
                        );
                    }
                    self.send(st, port, msg, spare, carried)
                }
                Output::Decided(d) => {
                    if let Some(span) = span.as_mut() {
                        span.add_event(
                            "decide",
                            vec![
                                kv("ringleader.role", format!("{:?}", d.role)),
                                kv("ringleader.leader", d.leader as i64),
                            ],
                        );
                    }
                    if st.decided_us == 0 {
                        st.decided_us = monotonic_us();
                    }
                    self.decide(d)
                }
                Output::Lead(l) | Output::BeliefEnded(l) => {
                    info!(election = self.id(), position = self.setup.position, term = l.term, leader = ?l.leader, "leadership");
                    if let Some(span) = span.as_mut() {
                        span.add_event(
                            "leadership",
                            vec![
                                kv("ringleader.term", l.term as i64),
                                kv("ringleader.leader", l.leader.map_or(-1, |id| id as i64)),
                            ],
                        );
                    }
                    st.belief_since_us = unix_micros();
                    let _ = self.events.send(Arc::new(self.lead_event(l, st.belief_since_us)));
                }
                Output::SetTimer { timer, after_ms, generation } => {
                    self.set_timer(st, timer, after_ms, generation, context.clone())
                }
                Output::Misstep(m) => st.record_error(m.to_string()),
            }
        }
        st.out.give_back(list);
    }

    fn send(&self, st: &mut State, port: Port, msg: Msg, spare: &mut Option<String>, traceparent: Option<String>) {
        let Some((link, remote_port)) =
            self.setup.ports.get(port as usize).and_then(|p| Some((p.link.as_ref()?, p.remote_port)))
        else {
            st.record_error(format!("sent {msg:?} on port {port}, which has no outgoing link"));
            return;
        };
        let labels = self.labels(msg);
        let metrics = node_metrics();
        metrics.sent.add(1, &labels);
        metrics.sent_bytes.add(ringleader_core::wire::encoded_len(msg) as u64, &labels);
        let causal_time = st.depth.saturating_add(1);
        st.max_causal = st.max_causal.max(causal_time);
        st.sent_seq += 1;
        if st.first_send_us == 0 {
            st.first_send_us = monotonic_us();
        }
        let message_seq = st.sent_seq;
        if !msg.kind().is_upkeep()
            && let Some(log) = st.log.as_mut()
        {
            if log.sent.len() < MAX_LOGGED {
                let to = self.setup.ports.get(port as usize).map_or(u32::MAX, |p| p.peer);
                log.sent.push(pb::LoggedSend {
                    seq: message_seq,
                    to,
                    kind: msg.kind().name().to_string(),
                    at_us: unix_micros(),
                    body: Some(msg.into()),
                });
            } else {
                log.truncated += 1;
            }
        }
        let election_id = spare.take().unwrap_or_else(|| self.setup.election_id.clone());
        let kind = msg.kind();
        let sent = link.send(
            pb::Envelope {
                election_id,
                sender: self.setup.position,
                port: remote_port,
                seq: 0,
                causal_time,
                traceparent: traceparent.unwrap_or_default(),
                body: Some(msg.into()),
                message_seq,
            },
            kind,
        );
        // What is on its way (a dropped message is not; a duplicated one is twice): the controller
        // balances these against the receiver's arrivals.
        st.sent_by_port[port as usize] += u64::from(sent.on_way);
        if sent.lost > 0 {
            let full = link.full();
            st.record_error(full);
        }
    }

    /// Report the node's (first) decision.
    fn decide(&self, d: Decision) {
        debug!(election = self.id(), position = self.setup.position, role = ?d.role, leader = d.leader, "decided");
        // No subscriber is fine: events are for whoever listens now.
        let _ = self.events.send(Arc::new(pb::NodeEvent {
            election_id: self.setup.election_id.clone(),
            position: self.setup.position,
            role: role_of(Some(d)) as i32,
            leader_id: d.leader,
            ..Default::default()
        }));
    }

    /// Sleep `after_ms`, then hand `(timer, generation)` back to the shell.
    fn set_timer(
        self: &Arc<Self>,
        st: &mut State,
        timer: TimerId,
        after_ms: u64,
        generation: u64,
        parent: Option<SpanContext>,
    ) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            st.record_error(format!("timer {timer} set outside a tokio runtime"));
            return;
        };
        // The shell refuses ids beyond the slots before they come out as timers.
        st.timer_parents[timer as usize] = parent;
        st.armed[timer as usize] = Some(generation);
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
        if !st.shell.timer_due(timer, generation) {
            return;
        }
        let parent = st.timer_parents[timer as usize].take();
        st.armed[timer as usize] = None;
        if st.closed || st.broken || self.setup.faults.crashed() {
            return;
        }
        let began = self.setup.trace.as_ref().map(|_| SystemTime::now());
        st.steps += 1;
        let State { shell, out, .. } = &mut *st;
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| shell.timer(timer, generation, out))) {
            let e = format!("algorithm panicked in on_timer({timer}): {}", panic_text(&*panic));
            self.break_down(&mut st, e);
            return;
        }
        let mut span = self.step_span(&st, began, Input::Timer(timer), parent, self.setup.position);
        self.apply(&mut st, &mut None, span.as_mut());
        drop(span);
        self.queue_report(st);
    }

    /// The kept-leadership event that reports belief `l`, held since `at_us`.
    fn lead_event(&self, l: Leadership, at_us: u64) -> pb::NodeEvent {
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
            at_us,
            status: None,
        }
    }

    /// The current kept-leadership belief as an event, for a subscriber that
    /// (re)connects after it was announced; `None` for one-shot elections.
    pub(crate) fn current_belief(&self) -> Option<pb::NodeEvent> {
        let st = self.lock();
        if st.closed {
            return None;
        }
        st.shell.leadership().map(|l| self.lead_event(l, st.belief_since_us))
    }

    /// This node's message log (`disabled` when the election keeps none).
    pub(crate) fn messages(&self) -> pb::MessageLog {
        match &self.lock().log {
            Some(log) => (**log).clone(),
            None => pb::MessageLog { disabled: true, ..Default::default() },
        }
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
            role: role_of(st.shell.decision()) as i32,
            leader_id: st.shell.decision().map_or(0, |d| d.leader),
            sent_by_kind: st.out.counters().named().map(|(k, v)| (k.to_string(), v)).collect(),
            election_messages: st.out.counters().election_messages,
            notification_messages: st.out.counters().notification_messages,
            bytes: st.out.counters().bytes,
            received: st.received,
            max_causal_time: st.max_causal,
            rejected: st.rejected,
            errors,
            sent_by_port: st.sent_by_port.clone(),
            arrived_by_port: st.arrived_by_port.clone(),
            timers_pending: (0..TIMER_SLOTS)
                .filter(|&t| st.armed[t].is_some_and(|g| st.shell.timer_due(t as TimerId, g)))
                .count() as u32,
            started: st.shell.started(),
            steps: st.steps,
            first_send_us: st.first_send_us,
            decided_us: st.decided_us,
        }
    }
}

/// Unix time in microseconds (0 before 1970).
fn unix_micros() -> u64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64)
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
