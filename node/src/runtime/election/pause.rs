//! A paused node (`FaultTable::paused`): its election takes no step. What
//! arrives is held in arrival order ([`Held`]: envelopes and store answers,
//! at most [`MAX_HELD`]; beyond, dropped and counted), timers that come due
//! are deferred with when they came due. On [`Election::resume`] the
//! deferred timers fire first, in deadline order (the process's clock moved
//! on while it was stopped), then the held input is handed over in arrival
//! order; input that arrives while the held input is being handed over
//! queues behind it, so arrival order holds across the resume. A kept
//! leadership's node first reports the pause (`NodeEvent.paused_from_us`,
//! `paused_until_us`), so the controller leaves the time out of its
//! leadership. A crash drops what was held ([`Election::drop_held`]).

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use ringleader_proto::v1 as pb;

use super::{Arrival, Election, State};
use crate::runtime::faults::{MAX_HELD, Resume};
use ringleader_core::algo::{Port, StoreReply, TimerId};

/// One input a paused election holds.
#[derive(Debug)]
pub(super) enum Held {
    /// An envelope as it arrived (checked when handed over).
    Envelope {
        sender: u32,
        port: Port,
        body: Option<pb::Body>,
        causal_time: u64,
        traceparent: String,
        message_seq: u64,
    },
    /// A store answer to incarnation `incarnation`.
    Store { incarnation: u64, reply: StoreReply },
    /// A timer that came due (deferred timers go first on resume; one that
    /// comes due while the held input is handed over queues behind it).
    Timer { timer: TimerId, generation: u64 },
}

/// What a paused election holds.
#[derive(Debug, Default)]
pub(super) struct Hold {
    /// Timers that came due during the pause, with when.
    due: Vec<(Instant, TimerId, u64)>,
    /// Input, in arrival order.
    held: VecDeque<Held>,
    /// Input dropped because [`MAX_HELD`] were held.
    pub(super) dropped: u64,
}

impl Election {
    /// Inputs held (deferred timers included) and dropped beyond the bound.
    #[cfg(test)]
    pub(crate) fn held(&self) -> (usize, u64) {
        let st = self.lock();
        (st.hold.due.len() + st.hold.held.len(), st.hold.dropped)
    }
}

impl Election {
    /// Must input wait now? (Paused, or handing over what was held.) Exact
    /// under the state's lock: `draining` only changes under it.
    pub(super) fn holding(&self) -> bool {
        self.setup.faults.paused() || self.draining.load(Ordering::SeqCst)
    }

    /// Hold `input` if the election must wait (checked again under the
    /// lock); gives it back otherwise.
    pub(super) fn hold(&self, input: Held) -> Option<Held> {
        if !self.holding() {
            return Some(input);
        }
        let mut st = self.lock();
        if !self.holding() || st.closed || st.broken {
            return Some(input);
        }
        match input {
            Held::Timer { timer, generation } if self.setup.faults.paused() => {
                st.hold.due.push((Instant::now(), timer, generation));
            }
            _ if st.hold.held.len() >= MAX_HELD => self.drop_one(&mut st, input),
            _ => st.hold.held.push_back(input),
        }
        None
    }

    fn drop_one(&self, st: &mut State, input: Held) {
        st.hold.dropped += 1;
        self.setup.faults.count_dropped(1);
        if let Held::Timer { timer, generation } = input {
            self.disarm(st, timer, generation);
        }
        static FULL: crate::logs::Throttle = crate::logs::Throttle::new(crate::logs::WARN_INTERVAL);
        crate::warn_throttled!(
            FULL,
            election = self.id(),
            held = MAX_HELD,
            dropped = st.hold.dropped,
            "a paused election holds the most input it may: the rest is dropped"
        );
    }

    /// A timer that will not fire is no longer pending.
    fn disarm(&self, st: &mut State, timer: TimerId, generation: u64) {
        if st.shell.timer_due(timer, generation) {
            st.armed[timer as usize] = None;
            st.timer_parents[timer as usize] = None;
        }
    }

    /// The node crashed: what was held is lost, the deferred timers with it.
    pub(crate) fn drop_held(&self) {
        let mut st = self.lock();
        let due = std::mem::take(&mut st.hold.due);
        let held = std::mem::take(&mut st.hold.held);
        let lost = held.iter().filter(|h| !matches!(h, Held::Timer { .. })).count();
        self.setup.faults.count_dropped(lost as u64);
        for (_, timer, generation) in due {
            self.disarm(&mut st, timer, generation);
        }
        for h in held {
            if let Held::Timer { timer, generation } = h {
                self.disarm(&mut st, timer, generation);
            }
        }
    }

    /// The node's pause `r` ended: report it (kept leaderships), fire the
    /// timers that came due, in deadline order, then hand over the held
    /// input in arrival order. Stops if the node is paused again meanwhile
    /// (the rest waits for that pause's end).
    pub(crate) fn resume(self: &Arc<Self>, r: Resume) {
        // The timers that came due fire first, as the resumed process's first steps, while any
        // input that arrives waits (`draining`): what they change (a lease that ran out) took
        // effect during the pause, so the pause is reported as ending only after them, and no
        // belief they end is judged to outlive it.
        let (mut due, draining) = {
            let mut st = self.lock();
            (std::mem::take(&mut st.hold.due), self.draining.swap(true, Ordering::SeqCst))
        };
        due.sort_by_key(|d| d.0);
        let mut due = due.into_iter();
        if !draining {
            for (_, timer, generation) in due.by_ref() {
                if self.setup.faults.paused() {
                    // Paused again: this one and the rest wait for that pause's end.
                    self.lock().hold.held.push_front(Held::Timer { timer, generation });
                    break;
                }
                self.fire_now(timer, generation);
            }
        }
        {
            let mut st = self.lock();
            // Not fired (paused again, or another resume is handing over): first in line.
            for (_, timer, generation) in due.rev() {
                st.hold.held.push_front(Held::Timer { timer, generation });
            }
            if self.is_kept() && st.shell.started() && !st.closed {
                let until_us = crate::runtime::faults::unix_us().max(r.until_us);
                let _ = self.events.send(Arc::new(pb::NodeEvent {
                    election_id: self.setup.election_id.clone(),
                    position: self.setup.position,
                    kept: true,
                    paused_from_us: r.from_us,
                    paused_until_us: until_us.max(r.from_us + 1),
                    ..Default::default()
                }));
                self.resume_write(&st);
            }
            if draining {
                return; // the resume already handing over takes these too
            }
            if st.hold.held.is_empty() {
                self.draining.store(false, Ordering::SeqCst);
                return;
            }
        }
        loop {
            let next = {
                let mut st = self.lock();
                let next = if self.setup.faults.paused() { None } else { st.hold.held.pop_front() };
                if next.is_none() {
                    self.draining.store(false, Ordering::SeqCst);
                }
                next
            };
            match next {
                None => return,
                Some(Held::Timer { timer, generation }) => self.fire_now(timer, generation),
                Some(Held::Store { incarnation, reply }) => self.store_answer_now(incarnation, reply),
                Some(Held::Envelope { sender, port, body, causal_time, traceparent, message_seq }) => {
                    let arrival = Arrival {
                        sender,
                        port,
                        body: body.as_ref(),
                        causal_time,
                        traceparent: &traceparent,
                        message_seq,
                    };
                    if let Err(r) = self.receive_now(arrival, &mut None) {
                        static REFUSED: crate::logs::Throttle = crate::logs::Throttle::new(crate::logs::WARN_INTERVAL);
                        crate::warn_throttled!(REFUSED, election = self.id(), port, error = %r.message, "a message held during a pause was refused");
                    }
                }
            }
        }
    }
}
