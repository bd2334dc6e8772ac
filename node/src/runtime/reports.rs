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
//!
//! What is reported is anything [`Reported`] (an election, which names this
//! module, not the other way round).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Instant;

use ringleader_proto::v1 as pb;
use tokio::sync::{Notify, broadcast};

/// Something whose figures are reported: an election.
pub(crate) trait Reported: Send + Sync {
    /// Its figures now, as a report event; it may be queued again from here on.
    fn take_report(&self) -> pb::NodeEvent;
}

/// The elections whose figures changed since their last report, and the
/// task that sends them.
#[derive(Default)]
pub(crate) struct Reporter {
    queue: Mutex<Vec<Weak<dyn Reported>>>,
    notify: Notify,
    stopped: AtomicBool,
    /// Event streams open that asked for reports: with none, nothing is
    /// queued (a report nobody reads would still cost its figures' copy).
    /// Such a stream is the controller's: while none is open, nobody drives
    /// this node's elections.
    listeners: AtomicUsize,
    /// When the last of them closed (`None`: none has yet).
    last_listened: Mutex<Option<Instant>>,
    /// The controller processes seen here, by incarnation
    /// ([`pb::EventsRequest::controller_incarnation`]).
    incarnations: Mutex<Incarnations>,
}

/// Most controller incarnations a node remembers: beyond it, the one
/// silent for longest is forgotten (its elections then count from their
/// `Prepare`).
pub(crate) const MAX_INCARNATIONS: usize = 256;

/// The controller incarnations a node has seen (0, "not said", is never one).
#[derive(Debug, Default)]
struct Incarnations(std::collections::HashMap<u64, Seen>);

/// One controller incarnation, as a node saw it.
#[derive(Debug, Clone, Copy)]
struct Seen {
    /// Its event streams that ask for reports, open now.
    open: usize,
    /// When the last of them closed (`None`: none has yet).
    closed_at: Option<Instant>,
    /// When the node first heard of it (a stream or a `Prepare`).
    first_seen: Instant,
}

impl Incarnations {
    /// Note `incarnation` (at `now`); whether it is new here.
    fn note(&mut self, incarnation: u64, now: Instant) -> bool {
        if incarnation == 0 || self.0.contains_key(&incarnation) {
            return false;
        }
        if self.0.len() >= MAX_INCARNATIONS {
            let silent =
                self.0.iter().filter(|(_, s)| s.open == 0).min_by_key(|(_, s)| s.closed_at.unwrap_or(s.first_seen));
            if let Some((&old, _)) = silent {
                self.0.remove(&old);
            }
        }
        self.0.insert(incarnation, Seen { open: 0, closed_at: None, first_seen: now });
        true
    }
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

/// An event stream's interest in reports: counted while it lives, for its
/// controller's incarnation too.
#[derive(Debug)]
pub(crate) struct Listening(Arc<Reporter>, u64);

impl std::fmt::Debug for Reporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reporter")
            .field("queued", &self.queue.lock().unwrap_or_else(|e| e.into_inner()).len())
            .field("stopped", &self.stopped)
            .field("listeners", &self.listeners)
            .finish_non_exhaustive()
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        let now = Instant::now();
        if self.1 != 0 {
            let mut seen = self.0.incarnations.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(s) = seen.0.get_mut(&self.1) {
                s.open = s.open.saturating_sub(1);
                if s.open == 0 {
                    s.closed_at = Some(now);
                }
            }
        }
        if self.0.listeners.fetch_sub(1, Ordering::AcqRel) == 1 {
            *self.0.last_listened.lock().unwrap_or_else(|e| e.into_inner()) = Some(now);
        }
    }
}

impl Reporter {
    /// Queue `election` for a report unless it is queued already (`queued`
    /// is the election's own flag, cleared when its report is taken).
    pub(crate) fn queue<R: Reported + 'static>(&self, election: &Arc<R>, queued: &AtomicBool) {
        if self.listeners.load(Ordering::Acquire) == 0 || queued.swap(true, Ordering::AcqRel) {
            return;
        }
        let election: Weak<R> = Arc::downgrade(election);
        let election: Weak<dyn Reported> = election;
        self.queue.lock().unwrap_or_else(|e| e.into_inner()).push(election);
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
    /// `incarnation` is the listening controller's (0: not said); the flag
    /// says whether this node had not seen it before.
    pub(crate) fn listen(self: &Arc<Self>, incarnation: u64) -> (Listening, bool) {
        let new = {
            let mut seen = self.incarnations.lock().unwrap_or_else(|e| e.into_inner());
            let new = seen.note(incarnation, Instant::now());
            if let Some(s) = seen.0.get_mut(&incarnation) {
                s.open += 1;
            }
            new
        };
        self.listeners.fetch_add(1, Ordering::AcqRel);
        (Listening(self.clone(), incarnation), new)
    }

    /// A `Prepare` of controller `incarnation` came: whether this node had
    /// not seen it before.
    pub(crate) fn note_incarnation(&self, incarnation: u64) -> bool {
        self.incarnations.lock().unwrap_or_else(|e| e.into_inner()).note(incarnation, Instant::now())
    }

    /// Whether a stream of controller `incarnation` listens now, and if not,
    /// since when none has (any stream's, for incarnation 0: not said).
    pub(crate) fn listened_by(&self, incarnation: u64) -> Listened {
        if incarnation == 0 {
            return self.listened();
        }
        match self.incarnations.lock().unwrap_or_else(|e| e.into_inner()).0.get(&incarnation) {
            Some(s) if s.open > 0 => Listened::Now,
            Some(Seen { closed_at: Some(at), .. }) => Listened::Until(*at),
            _ => Listened::Never,
        }
    }

    /// A controller incarnation other than `than` that this node first saw
    /// after `since`: the controller that came after it.
    pub(crate) fn newer(&self, than: u64, since: Instant) -> Option<u64> {
        let seen = self.incarnations.lock().unwrap_or_else(|e| e.into_inner());
        seen.0.iter().find(|(i, s)| **i != than && s.first_seen > since).map(|(&i, _)| i)
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
