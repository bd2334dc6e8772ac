//! Carrying out what a step emitted: sending messages, announcing the
//! decision and leadership beliefs, and setting the timers that fire later.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::SystemTime;

use opentelemetry::global;
use opentelemetry::trace::{Span as _, SpanContext};
use ringleader_proto::v1 as pb;
use tracing::{debug, info};

use super::pause::Held;
use super::reports::role_of;
use super::{Election, Input, MAX_LOGGED, State, panic_text, unix_micros};
use crate::observe::{self, kv, node_metrics};
use crate::runtime::reports::monotonic_us;
use ringleader_core::algo::{Decision, Msg, Port, StoreOp, StoreReply, TimerId};
use ringleader_core::shell::{Misstep, Output};

impl Election {
    /// Carry out the effects in the outbox, in order; `span` is the step's
    /// span, which the messages sent carry as their parent.
    pub(super) fn apply(
        self: &Arc<Self>,
        st: &mut State,
        spare: &mut Option<String>,
        mut span: Option<&mut global::BoxedSpan>,
    ) {
        // The state the step left the node in, before what it sends.
        if let Some(log) = st.log.as_mut() {
            super::note_state(log, st.shell.algorithm().state());
        }
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
                    // The shell's belief now: none after an old incarnation's ended.
                    let now = st.shell.leadership();
                    self.belief_writes(st, now);
                }
                Output::SetTimer { timer, after_ms, generation } => {
                    self.set_timer(st, timer, after_ms, generation, context.clone())
                }
                Output::Misstep(Misstep::Failed { why }) => {
                    // The state machine broke (a program's step failed): it takes no more input, and
                    // the controller, told by the report, ends the election with this error.
                    self.break_down(st, why.to_string());
                    break;
                }
                Output::Misstep(m) => st.record_error(m.to_string()),
                Output::Store(op) => self.store_op(st, op),
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
            &self.setup.faults,
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

    /// Sleep `after_ms` by the node's clock (a clock-rate fault changes its
    /// speed), then hand `(timer, generation)` back to the shell.
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
        let clock = self.setup.faults.clock();
        rt.spawn(async move {
            crate::runtime::faults::sleep_by_clock(after_ms, clock).await;
            if let Some(election) = weak.upgrade() {
                election.fire(timer, generation);
            }
        });
    }

    /// Carry `op` to the election's store in a task of its own; its answer
    /// comes back through [`Election::store_answer`].
    fn store_op(self: &Arc<Self>, st: &mut State, op: StoreOp) {
        let Some(store) = self.setup.store.clone() else {
            st.record_error(format!("{} asked for a store operation and has no store", self.setup.algorithm));
            return;
        };
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            st.record_error("store operation outside a tokio runtime".to_string());
            return;
        };
        let (weak, incarnation) = (Arc::downgrade(self), st.incarnation);
        rt.spawn(async move {
            let reply = store.apply(op).await;
            if let Some(election) = weak.upgrade() {
                if let Some(note) = store.take_note() {
                    election.record_error(note);
                }
                election.store_answer(incarnation, reply);
            }
        });
    }

    /// The store answered an operation of `incarnation`: hand it to the
    /// state machine, unless the node crashed or restarted since, or the
    /// election is over.
    /// While the node is paused the answer is held.
    fn store_answer(self: &Arc<Self>, incarnation: u64, reply: StoreReply) {
        if let Some(Held::Store { incarnation, reply }) = self.hold(Held::Store { incarnation, reply }) {
            self.store_answer_now(incarnation, reply);
        }
    }

    /// Hand a store answer over now (see [`Election::store_answer`]).
    pub(super) fn store_answer_now(self: &Arc<Self>, incarnation: u64, reply: StoreReply) {
        let mut st = self.lock();
        if st.closed || st.broken || self.setup.faults.crashed() || st.incarnation != incarnation {
            return;
        }
        let began = self.setup.trace.as_ref().map(|_| SystemTime::now());
        st.steps += 1;
        let State { shell, out, .. } = &mut *st;
        let program = self.setup.program;
        if let Err(panic) =
            super::stepping(program, || catch_unwind(AssertUnwindSafe(|| shell.store_reply(reply, out))))
        {
            let e = format!("algorithm panicked at a store answer: {}", panic_text(&*panic));
            self.break_down(&mut st, e);
            return;
        }
        let mut span = self.step_span(&st, began, Input::Store, None, self.setup.position);
        self.apply(&mut st, &mut None, span.as_mut());
        drop(span);
        self.queue_report(st);
    }

    /// A timer task woke up; it fires only if nothing replaced or cancelled it since.
    /// While the node is paused it is deferred.
    fn fire(self: &Arc<Self>, timer: TimerId, generation: u64) {
        if self.hold(Held::Timer { timer, generation }).is_none() {
            return;
        }
        self.fire_now(timer, generation);
    }

    /// Fire a timer now (see [`Election::fire`]).
    pub(super) fn fire_now(self: &Arc<Self>, timer: TimerId, generation: u64) {
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
        let program = self.setup.program;
        if let Err(panic) =
            super::stepping(program, || catch_unwind(AssertUnwindSafe(|| shell.timer(timer, generation, out))))
        {
            let e = format!("algorithm panicked at timer {timer}: {}", panic_text(&*panic));
            self.break_down(&mut st, e);
            return;
        }
        let mut span = self.step_span(&st, began, Input::Timer(timer), parent, self.setup.position);
        self.apply(&mut st, &mut None, span.as_mut());
        drop(span);
        self.queue_report(st);
    }
}
