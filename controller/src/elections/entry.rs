//! One recorded election and its watchers: the record behind a lock, the
//! events watchers are sent, and the signals that it was asked to stop and
//! that it is done.

use std::sync::{Mutex, MutexGuard};

use ringleader_core::algo::Decision;
use tokio::sync::{broadcast, watch};

use crate::record::{ElectionRecord, FailoverRecord, LeadershipChange, State};

/// Something a watcher of an election is told.
#[derive(Clone, Debug)]
pub enum WatchEvent {
    /// A position decided.
    Decided {
        /// Its position.
        position: u32,
        /// Its node.
        node: String,
        /// What it decided.
        decision: Decision,
    },
    /// The state changed (e.g. to RUNNING).
    State(Box<ElectionRecord>),
    /// The final record; nothing follows.
    Finished(Box<ElectionRecord>),
    /// A kept leadership: a node's belief changed.
    Leadership(LeadershipChange),
    /// A kept leadership: a failover opened or changed.
    Failover(Box<FailoverRecord>),
}

/// One recorded election and its watchers.
#[derive(Debug)]
pub struct Entry {
    record: Mutex<Held>,
    /// The record's weight as the store counted it (0 until it is final).
    counted: std::sync::atomic::AtomicU64,
    done: watch::Sender<bool>,
    /// Set by `StopElection` to end a kept leadership.
    stop: watch::Sender<bool>,
}

/// The record, and the channel of its watchers' events while it may change.
#[derive(Debug)]
struct Held {
    record: ElectionRecord,
    /// `None` once the record is final: a channel keeps room for
    /// [`EVENTS`] events (about 100 KiB) for as long as it lives, which
    /// would be most of a finished record's memory.
    events: Option<broadcast::Sender<WatchEvent>>,
}

/// Events a watcher may fall behind by before it resumes from a snapshot.
const EVENTS: usize = 1024;

impl Entry {
    /// A record just planned: PENDING, with room for its watchers' events.
    pub(super) fn pending(record: ElectionRecord) -> Entry {
        Entry::new(record, Some(broadcast::channel(EVENTS).0), false)
    }

    /// A record read back from the history: done, so nothing will be sent to its watchers.
    pub(super) fn restored(record: ElectionRecord) -> Entry {
        Entry::new(record, None, true)
    }

    fn new(record: ElectionRecord, events: Option<broadcast::Sender<WatchEvent>>, done: bool) -> Entry {
        Entry {
            record: Mutex::new(Held { record, events }),
            counted: 0.into(),
            done: watch::channel(done).0,
            stop: watch::channel(false).0,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Held> {
        self.record.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Read the current record without copying it.
    pub fn inspect<R>(&self, f: impl FnOnce(&ElectionRecord) -> R) -> R {
        f(&self.lock().record)
    }

    /// The record's weight as the store counted it.
    pub(super) fn counted(&self) -> u64 {
        self.counted.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Count the record's weight now; returns it.
    pub(super) fn count(&self) -> u64 {
        let w = self.inspect(ElectionRecord::weight);
        self.counted.store(w, std::sync::atomic::Ordering::Relaxed);
        w
    }

    /// A copy of the current record.
    pub fn snapshot(&self) -> ElectionRecord {
        self.lock().record.clone()
    }

    /// The current record and a receiver of every later event, atomically
    /// (no event falls between the two). Once the record is final the
    /// receiver is closed: nothing follows.
    pub fn watch(&self) -> (ElectionRecord, broadcast::Receiver<WatchEvent>) {
        let held = self.lock();
        let events = match &held.events {
            Some(events) => events.subscribe(),
            None => broadcast::channel(1).1,
        };
        (held.record.clone(), events)
    }

    /// Ask the election to end: a kept leadership ends FINISHED, a running
    /// one-shot election (LIVE or SIMULATED) is cancelled and ends FAILED;
    /// nothing happens to a finished one.
    pub fn stop(&self) {
        self.stop.send_replace(true);
    }

    /// Wait until the election is finished or failed.
    pub async fn wait_done(&self) {
        let mut rx = self.done.subscribe();
        let _ = rx.wait_for(|d| *d).await;
    }

    /// Change the record, and tell the watchers the events `f` returns, if
    /// any (an `Option` or a `Vec`; under the lock, so watchers see events in
    /// the order of the changes).
    pub(super) fn update<E: IntoIterator<Item = WatchEvent>>(&self, f: impl FnOnce(&mut ElectionRecord) -> E) {
        let mut held = self.lock();
        let Held { record, events } = &mut *held;
        for event in f(record) {
            if let Some(events) = events {
                let _ = events.send(event);
            }
        }
    }

    /// The nodes are configured (or the simulator runs): RUNNING, and the watchers are told.
    pub(super) fn set_running(&self) {
        self.update(|r| {
            r.state = State::Running;
            Some(WatchEvent::State(Box::new(r.clone())))
        });
    }

    /// A receiver that sees [`Entry::stop`].
    pub(super) fn stop_requested(&self) -> watch::Receiver<bool> {
        self.stop.subscribe()
    }

    /// The record is final: release every [`Entry::wait_done`], and free the
    /// watchers' channel (a watcher still reading gets what was sent, then
    /// the channel's end).
    pub(super) fn mark_done(&self) {
        self.lock().events = None;
        self.done.send_replace(true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{ElectionRecord, Mode};

    fn record(state: State) -> ElectionRecord {
        ElectionRecord { state, ..ElectionRecord::blank("e1".into(), "as-far", Mode::Live) }
    }

    /// A finished election keeps no channel for its watchers (its ~100 KiB of room for events
    /// was most of a finished record's memory): a watcher from before reads every event sent,
    /// the final one included, then the end; a watcher from after gets the final record and a
    /// closed channel.
    #[tokio::test]
    async fn a_finished_entry_frees_its_watchers_channel() {
        let entry = Entry::pending(record(State::Running));
        let (_, mut before) = entry.watch();
        entry.update(|r| {
            r.state = State::Finished;
            Some(WatchEvent::Finished(Box::new(r.clone())))
        });
        entry.mark_done();
        assert!(entry.lock().events.is_none());
        assert!(matches!(before.recv().await, Ok(WatchEvent::Finished(r)) if r.state == State::Finished));
        assert!(matches!(before.recv().await, Err(broadcast::error::RecvError::Closed)));
        let (snapshot, mut after) = entry.watch();
        assert_eq!(snapshot.state, State::Finished);
        assert!(matches!(after.recv().await, Err(broadcast::error::RecvError::Closed)));
        // A record read back from the history has none from the start.
        assert!(Entry::restored(record(State::Finished)).lock().events.is_none());
    }
}
