//! Taking input: envelopes from the network, `Start`, a restart after a
//! crash fault, a planned leave, `Abort`, and errors from outside the state
//! machine; each is handed to the state machine in one step.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::SystemTime;

use opentelemetry::trace::Span as _;
use ringleader_proto::v1 as pb;
use tonic::Code;
use tracing::{info, warn};

use super::pause::Held;
use super::{Arrival, Election, Input, MAX_LOGGED, Pending, Rejection, Started, State, panic_text, unix_micros};
use crate::observe::{self, node_metrics};
#[cfg(doc)]
use ringleader_core::algo::Algorithm;
use ringleader_core::algo::{Msg, Port};

impl Election {
    /// Take an envelope from the network. `spare` is the envelope's own
    /// election id, reused for the first message this step sends.
    /// While the node is paused it is held, and checked when handed over.
    pub(crate) fn receive(self: &Arc<Self>, arrival: Arrival<'_>, spare: &mut Option<String>) -> Result<(), Rejection> {
        if self.setup.faults.crashed() {
            // Crashed (a fault scoped to this election; a node-wide crash drops it before): it hears
            // nothing, and the sender cannot tell.
            self.setup.faults.lost_to_crash();
            return Ok(());
        }
        if self.holding() {
            let Arrival { sender, port, body, causal_time, traceparent, message_seq } = arrival;
            let held = Held::Envelope {
                sender,
                port,
                body: body.cloned(),
                causal_time,
                traceparent: traceparent.to_string(),
                message_seq,
            };
            if self.hold(held).is_none() {
                return Ok(());
            }
        }
        if self.setup.program {
            // Its step may wait on its process: off the link's task, which carries other elections too.
            self.enqueue(arrival);
            return Ok(());
        }
        self.receive_now(arrival, spare)
    }

    /// Take an envelope now (see [`Election::receive`]).
    pub(super) fn receive_now(
        self: &Arc<Self>,
        arrival: Arrival<'_>,
        spare: &mut Option<String>,
    ) -> Result<(), Rejection> {
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

    /// Wake the node (`Input::Start`), then hand it the messages that waited for `Start`.
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
        if self.setup.faults.paused() {
            return Err(Rejection::new(Code::Unavailable, "the node is paused (an injected fault)"));
        }
        let began = self.setup.trace.as_ref().map(|_| SystemTime::now());
        st.steps += 1;
        let State { shell, out, .. } = &mut *st;
        let program = self.setup.program;
        if let Err(panic) = super::stepping(program, || catch_unwind(AssertUnwindSafe(|| shell.start(out)))) {
            let e = format!("algorithm panicked at its start: {}", panic_text(&*panic));
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
                static REFUSED: crate::logs::Throttle = crate::logs::Throttle::new(crate::logs::WARN_INTERVAL);
                crate::warn_throttled!(REFUSED, election = self.id(), port, msg = ?msg, error = %r.message, "queued message refused");
            }
            let input = Input::Message { port, msg, causal_time: p.causal_time };
            let mut span = self.step_span(&st, began, input, p.parent, sender);
            self.apply(&mut st, &mut spare, span.as_mut());
        }
        self.queue_report(st);
        Ok(Started { released })
    }

    /// [`Election::start`] on a blocking thread, for a program's election
    /// (whose start waits on its process, up to its step limit): the caller
    /// (a `Prepare` or `Start` call) answers at once. A start refused is
    /// kept among the election's errors; a program that fails there fails
    /// the election through its report.
    pub(crate) fn start_in_background(self: &Arc<Self>) {
        let election = self.clone();
        let start = move || {
            if let Err(r) = election.start() {
                election.record_error(format!("start refused: {}", r.message));
                let st = election.lock();
                election.queue_report(st);
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => drop(rt.spawn_blocking(start)),
            Err(_) => start(),
        }
    }

    /// The node recovered from a crash fault: a kept election's node becomes
    /// a new incarnation, as in the simulator: a fresh state machine that gets
    /// the last persisted record back ([`Input::Restore`](ringleader_core::algo::Input::Restore)) and starts; the
    /// old one's timers are void. The controller hears that the node's old
    /// belief ended. One-shot elections (no `rebuild`) resume with their state.
    /// Returns whether it restarted.
    pub(crate) fn restart(self: &Arc<Self>) -> bool {
        let Some(rebuild) = &self.setup.rebuild else { return false };
        let mut st = self.lock();
        if st.closed || st.broken || !st.shell.started() || self.setup.faults.crashed() {
            return false;
        }
        let program = self.setup.program;
        let algo = match super::stepping(program, || catch_unwind(AssertUnwindSafe(|| (rebuild.0)()))) {
            Ok(a) => a,
            Err(panic) => {
                let e = format!("algorithm panicked while rebuilding after a crash: {}", panic_text(&*panic));
                self.break_down(&mut st, e);
                return false;
            }
        };
        st.out.clear();
        st.timer_parents = Default::default();
        st.incarnation += 1;
        info!(election = self.id(), position = self.setup.position, restored = ?st.shell.stable(), "restarted after a crash");
        let began = self.setup.trace.as_ref().map(|_| SystemTime::now());
        let State { shell, out, .. } = &mut *st;
        if let Err(panic) = super::stepping(program, || catch_unwind(AssertUnwindSafe(|| shell.restart(algo, out)))) {
            let e = format!("algorithm panicked at its start after a crash: {}", panic_text(&*panic));
            self.break_down(&mut st, e);
            return false;
        }
        let mut span = self.step_span(&st, began, Input::Restart, None, self.setup.position);
        self.apply(&mut st, &mut None, span.as_mut());
        true
    }

    /// The node is about to stop on purpose: the algorithm hands over what
    /// it holds ([`Input::Leave`](ringleader_core::algo::Input::Leave)). Returns whether this node led the
    /// kept leadership just before, and whether it handed it over (`None`:
    /// nothing to hand over: a one-shot or unstarted election, or one that
    /// cannot take input).
    pub(crate) fn leave(self: &Arc<Self>) -> Option<(bool, bool)> {
        let mut st = self.lock();
        if st.closed || st.broken || !st.shell.started() || self.setup.faults.crashed() || self.setup.faults.paused() {
            return None;
        }
        let belief = st.shell.leadership()?;
        let led = belief.leader == Some(self.setup.id);
        let began = self.setup.trace.as_ref().map(|_| SystemTime::now());
        let State { shell, out, .. } = &mut *st;
        let program = self.setup.program;
        let handing = match super::stepping(program, || catch_unwind(AssertUnwindSafe(|| shell.leave(out)))) {
            Ok(h) => h,
            Err(panic) => {
                let e = format!("algorithm panicked at its leave: {}", panic_text(&*panic));
                self.break_down(&mut st, e);
                return None;
            }
        };
        let mut span = self.step_span(&st, began, Input::Leave, None, self.setup.position);
        self.apply(&mut st, &mut None, span.as_mut());
        Some((led, handing))
    }

    /// Stop taking input and silence the timers.
    pub(crate) fn close(&self) {
        let mut st = self.lock();
        st.closed = true;
        st.shell.close();
        st.timer_parents = Default::default();
    }

    /// The election ends on this node (`Abort`): [`Election::close`], then
    /// its store, if it keeps one, deletes the key if this node wrote it
    /// last (`EtcdStore::end`). A node shutting down only closes: the
    /// election may go on without it.
    pub(crate) fn end(&self) {
        self.close();
        if let Some(store) = self.setup.store.clone()
            && let Ok(rt) = tokio::runtime::Handle::try_current()
        {
            rt.spawn(async move { store.end().await });
        }
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
        match super::stepping(self.setup.program, || catch_unwind(AssertUnwindSafe(|| shell.message(port, msg, out)))) {
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

    pub(super) fn break_down(&self, st: &mut State, e: String) {
        warn!(election = self.id(), error = %e, "state machine failed; the election takes no more input");
        st.out.clear();
        st.broken = true;
        st.shell.close();
        st.timer_parents = Default::default();
        st.record_error(e);
    }
}
