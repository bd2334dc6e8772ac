//! A program's election takes its envelopes off the link's task: a link
//! (one stream per pair of nodes) carries every election between them, and
//! a program's step may wait on its process up to its step limit. Each
//! envelope is queued here, in arrival order, and handed to the state
//! machine by one blocking thread per election at a time, so the link goes
//! on reading the other elections' envelopes meanwhile.

use std::collections::VecDeque;
use std::sync::Arc;

use super::pause::Held;
use super::{Arrival, Election};
use crate::runtime::faults::MAX_HELD;

/// The envelopes a program's election has not taken yet.
#[derive(Debug, Default)]
pub(super) struct Inbox {
    queue: VecDeque<Held>,
    /// A thread is handing the queue over.
    running: bool,
}

impl Election {
    /// Queue `arrival` for this program's election; a blocking thread hands
    /// the queue over in order ([`Election::receive_now`]). Beyond
    /// [`MAX_HELD`] waiting envelopes one is refused (counted as arrived and
    /// rejected, so the controller's count of what is in flight holds).
    pub(super) fn enqueue(self: &Arc<Self>, arrival: Arrival<'_>) {
        let Arrival { sender, port, body, causal_time, traceparent, message_seq } = arrival;
        let mut inbox = self.inbox.lock().unwrap_or_else(|e| e.into_inner());
        if inbox.queue.len() >= MAX_HELD {
            drop(inbox);
            let mut st = self.lock();
            if let Some(arrived) = st.arrived_by_port.get_mut(port as usize) {
                *arrived += 1;
            }
            st.rejected += 1;
            st.record_error(format!("refused a message on port {port}: {MAX_HELD} wait for the program already"));
            return;
        }
        let body = body.cloned();
        let traceparent = traceparent.to_string();
        inbox.queue.push_back(Held::Envelope { sender, port, body, causal_time, traceparent, message_seq });
        if std::mem::replace(&mut inbox.running, true) {
            return;
        }
        drop(inbox);
        let election = self.clone();
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => drop(rt.spawn_blocking(move || election.drain_inbox())),
            Err(_) => election.drain_inbox(),
        }
    }

    /// Hand the queued envelopes to the state machine, in order, until none is left.
    fn drain_inbox(self: &Arc<Self>) {
        loop {
            let next = {
                let mut inbox = self.inbox.lock().unwrap_or_else(|e| e.into_inner());
                match inbox.queue.pop_front() {
                    Some(next) => next,
                    None => {
                        inbox.running = false;
                        return;
                    }
                }
            };
            if let Held::Envelope { sender, port, body, causal_time, traceparent, message_seq } = next {
                let arrival =
                    Arrival { sender, port, body: body.as_ref(), causal_time, traceparent: &traceparent, message_seq };
                // A refusal is counted (`rejected`) and, for a bad envelope, kept among the errors by
                // `receive_now`; the sender is not told (its link's reply stream went on without it).
                let _ = self.receive_now(arrival, &mut None);
            }
        }
    }
}
