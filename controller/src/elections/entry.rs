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
    record: Mutex<ElectionRecord>,
    events: broadcast::Sender<WatchEvent>,
    done: watch::Sender<bool>,
    /// Set by `StopElection` to end a kept leadership.
    stop: watch::Sender<bool>,
}

impl Entry {
    /// A record just planned: PENDING, with room for its watchers' events.
    pub(super) fn pending(record: ElectionRecord) -> Entry {
        Entry::new(record, 1024, false)
    }

    /// A record read back from the history: done, so nothing will be sent to its watchers.
    pub(super) fn restored(record: ElectionRecord) -> Entry {
        Entry::new(record, 1, true)
    }

    fn new(record: ElectionRecord, events: usize, done: bool) -> Entry {
        Entry {
            record: Mutex::new(record),
            events: broadcast::channel(events).0,
            done: watch::channel(done).0,
            stop: watch::channel(false).0,
        }
    }

    fn lock(&self) -> MutexGuard<'_, ElectionRecord> {
        self.record.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Read the current record without copying it.
    pub fn inspect<R>(&self, f: impl FnOnce(&ElectionRecord) -> R) -> R {
        f(&self.lock())
    }

    /// A copy of the current record.
    pub fn snapshot(&self) -> ElectionRecord {
        self.lock().clone()
    }

    /// The current record and a receiver of every later event, atomically
    /// (no event falls between the two).
    pub fn watch(&self) -> (ElectionRecord, broadcast::Receiver<WatchEvent>) {
        let record = self.lock();
        (record.clone(), self.events.subscribe())
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
        let mut record = self.lock();
        for event in f(&mut record) {
            let _ = self.events.send(event);
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

    /// The record is final: release every [`Entry::wait_done`].
    pub(super) fn mark_done(&self) {
        self.done.send_replace(true);
    }
}
