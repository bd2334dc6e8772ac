//! Reports: a one-shot election's figures ([`pb::NodeElectionStatus`]),
//! pushed on the node's event stream whenever they change, so that a
//! controller learns the decisions and the end of the election from the
//! stream instead of polling `Status`.
//!
//! Reports are coalesced: a step queues its election once until the
//! reporter task sends the election's figures as they are then, so a burst
//! of steps costs one report, and a busy node sends fewer, larger-stepped
//! reports instead of falling behind. No timer and no sleep is involved: a
//! report leaves as soon as the task runs.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Instant;

use ringleader_proto::v1 as pb;
use tokio::sync::{Notify, broadcast};

use super::election::Election;

/// The elections whose figures changed since their last report, and the
/// task that sends them.
#[derive(Debug, Default)]
pub(crate) struct Reporter {
    queue: Mutex<Vec<Weak<Election>>>,
    notify: Notify,
    stopped: AtomicBool,
    /// Event streams open that asked for reports: with none, nothing is
    /// queued (a report nobody reads would still cost its figures' copy).
    /// Such a stream is the controller's: while none is open, nobody drives
    /// this node's elections.
    listeners: AtomicUsize,
    /// When the last of them closed (`None`: none has yet).
    last_listened: Mutex<Option<Instant>>,
}

/// Whether an event stream that asks for reports (the controller's) is open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Listened {
    /// One is open now.
    Now,
    /// None since this instant, when the last one closed.
    Until(Instant),
    /// None has been open yet.
    Never,
}

/// An event stream's interest in reports: counted while it lives.
#[derive(Debug)]
pub(crate) struct Listening(Arc<Reporter>);

impl Drop for Listening {
    fn drop(&mut self) {
        if self.0.listeners.fetch_sub(1, Ordering::AcqRel) == 1 {
            *self.0.last_listened.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
        }
    }
}

impl Reporter {
    /// Queue `election` for a report unless it is queued already (`queued`
    /// is the election's own flag, cleared when its report is taken).
    pub(crate) fn queue(&self, election: &Arc<Election>, queued: &AtomicBool) {
        if self.listeners.load(Ordering::Acquire) == 0 || queued.swap(true, Ordering::AcqRel) {
            return;
        }
        self.queue.lock().unwrap_or_else(|e| e.into_inner()).push(Arc::downgrade(election));
        self.notify.notify_one();
    }

    /// Send the queued elections' reports on `events` until [`Reporter::stop`].
    pub(crate) async fn run(self: Arc<Self>, events: broadcast::Sender<Arc<pb::NodeEvent>>) {
        let mut batch = Vec::new();
        loop {
            self.notify.notified().await;
            if self.stopped.load(Ordering::Acquire) {
                return;
            }
            std::mem::swap(&mut batch, &mut *self.queue.lock().unwrap_or_else(|e| e.into_inner()));
            for election in batch.drain(..).filter_map(|w| w.upgrade()) {
                // No subscriber is fine: reports are for whoever listens now.
                let _ = events.send(Arc::new(election.take_report()));
            }
        }
    }

    /// An event stream that passes reports on opens: reports are made while
    /// the returned guard lives (a subscriber that opens later learns what it
    /// missed from `Status`).
    pub(crate) fn listen(self: &Arc<Self>) -> Listening {
        self.listeners.fetch_add(1, Ordering::AcqRel);
        Listening(self.clone())
    }

    /// Whether a stream listens now, and if not, since when nobody has.
    pub(crate) fn listened(&self) -> Listened {
        if self.listeners.load(Ordering::Acquire) > 0 {
            return Listened::Now;
        }
        match *self.last_listened.lock().unwrap_or_else(|e| e.into_inner()) {
            Some(at) => Listened::Until(at),
            None => Listened::Never,
        }
    }

    /// End [`Reporter::run`].
    pub(crate) fn stop(&self) {
        self.stopped.store(true, Ordering::Release);
        self.notify.notify_one();
    }
}

/// Microseconds on this process's monotonic clock, counted from its first
/// reading (every node of an embedded cluster reads the same clock).
pub(crate) fn monotonic_us() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    // Never 0: 0 means "not yet" in a report.
    EPOCH.get_or_init(Instant::now).elapsed().as_micros() as u64 + 1
}
