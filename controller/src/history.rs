//! Election history that survives a controller restart: every record
//! (verdict, metrics, timeline, failovers) is written to an embedded store
//! ([redb], one file at `controller.history_path`) when an election is planned
//! and when it ends, by one writer thread so writes keep their order. The
//! record of an ended election is on disk before anyone is told it ended
//! ([`History::save`]: the election task waits for the commit; whatever is
//! queued goes in one transaction). A failed write is retried every
//! [`RETRY`], reopening the file; meanwhile [`History::writable`] is false,
//! the controller refuses new elections (UNAVAILABLE, naming the path) and
//! reports NOT_SERVING, and `ringleader.history.write_failures` counts the
//! failed commits. Service resumes by itself once the disk takes writes.
//!
//! On start the controller reads the newest `max_elections` records back. A
//! record that was still PENDING or RUNNING when the controller stopped ends
//! FAILED, with an error saying so: no election stays "running" forever.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, mpsc};

use redb::{Database, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition};
use tracing::{debug, error, info, warn};

pub use crate::record::StaticStr;
use crate::record::{ElectionRecord, State};
use crate::telemetry;

/// Records by key `<started_at_ms as 16 hex digits>-<id>`: lexicographic order is start order.
const RECORDS: TableDefinition<&str, &[u8]> = TableDefinition::new("elections");

/// The error of a record that was in flight when the controller stopped.
pub const INTERRUPTED: &str = "the controller stopped while this election was running; it was not finished";

/// Errors opening or reading the store.
#[derive(Debug, thiserror::Error)]
#[error("election history {path}: {reason}")]
pub struct HistoryError {
    /// The store's file.
    pub path: PathBuf,
    /// What went wrong.
    pub reason: String,
}

enum Op {
    /// Write a record; `saved` hears once it is committed to disk.
    Put(Box<ElectionRecord>, Option<tokio::sync::oneshot::Sender<()>>),
    Flush(mpsc::Sender<()>),
}

/// The store and its writer thread.
#[derive(Debug)]
pub struct History {
    tx: Mutex<Option<mpsc::Sender<Op>>>,
    writer: Mutex<Option<std::thread::JoinHandle<()>>>,
    path: PathBuf,
    /// `true` while writes succeed; `false` from the first failed commit
    /// until one succeeds again.
    writable: tokio::sync::watch::Receiver<bool>,
}

impl std::fmt::Debug for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Op::Put(r, _) => write!(f, "Put({})", r.id),
            Op::Flush(_) => f.write_str("Flush"),
        }
    }
}

fn key(r: &ElectionRecord) -> String {
    format!("{:016x}-{}", r.started_at_ms, r.id)
}

/// How long the writer waits before it tries a failed write again (reopening the file).
pub const RETRY: std::time::Duration = std::time::Duration::from_millis(250);
/// How long a closing writer keeps trying to save what is queued.
const CLOSING_TRIES: u32 = 20;

/// The history could not save a record (the controller is stopping while
/// the disk refuses writes).
#[derive(Debug, thiserror::Error)]
#[error("the election history {0} could not save the record")]
pub struct NotSaved(pub String);

impl History {
    /// Open (or create) the store at `path`, read back its newest `keep`
    /// records (oldest first, in-flight ones turned FAILED), and start the
    /// writer, which keeps at most `keep` records on disk.
    pub fn open(path: &Path, keep: usize) -> Result<(History, Vec<ElectionRecord>), HistoryError> {
        let fail = |reason: String| HistoryError { path: path.to_path_buf(), reason };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| fail(format!("cannot create {}: {e}", dir.display())))?;
        }
        let db = Database::create(path).map_err(|e| fail(e.to_string()))?;
        let mut records = Vec::new();
        let mut unreadable = 0;
        {
            let tx = db.begin_write().map_err(|e| fail(e.to_string()))?;
            tx.open_table(RECORDS).map_err(|e| fail(e.to_string()))?;
            tx.commit().map_err(|e| fail(e.to_string()))?;
            let read = db.begin_read().map_err(|e| fail(e.to_string()))?;
            let table = read.open_table(RECORDS).map_err(|e| fail(e.to_string()))?;
            for row in table.iter().map_err(|e| fail(e.to_string()))?.rev().take(keep) {
                let (_, value) = row.map_err(|e| fail(e.to_string()))?;
                match serde_json::from_slice::<ElectionRecord>(value.value()) {
                    Ok(r) => records.push(r),
                    Err(_) => unreadable += 1,
                }
            }
        }
        records.reverse();
        let mut interrupted = Vec::new();
        for r in &mut records {
            if !r.state.is_terminal() {
                r.state = State::Failed;
                r.error = Some(INTERRUPTED.to_string());
                interrupted.push(r.clone());
            }
        }
        info!(path = %path.display(), records = records.len(), interrupted = interrupted.len(), unreadable, "election history");
        let (tx, rx) = mpsc::channel::<Op>();
        let (writable_tx, writable) = tokio::sync::watch::channel(true);
        let writer_path = path.to_path_buf();
        let writer = std::thread::Builder::new()
            .name("history-writer".into())
            .spawn(move || Writer { db: Some(db), path: writer_path, keep, writable: writable_tx }.run(rx))
            .map_err(|e| fail(format!("cannot start the writer: {e}")))?;
        let history =
            History { tx: Mutex::new(Some(tx)), writer: Mutex::new(Some(writer)), path: path.to_path_buf(), writable };
        for r in interrupted {
            history.put(&r);
        }
        Ok((history, records))
    }

    /// The store's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Do writes succeed now? (`false` from a failed commit until one succeeds.)
    pub fn writable(&self) -> bool {
        *self.writable.borrow()
    }

    /// Follow [`History::writable`] as it changes.
    pub fn watch_writable(&self) -> tokio::sync::watch::Receiver<bool> {
        self.writable.clone()
    }

    /// Queue a record for writing (replacing its earlier version), without
    /// waiting for the disk (records of elections that have not ended).
    pub fn put(&self, record: &ElectionRecord) {
        if !self.send(Op::Put(Box::new(record.clone()), None)) {
            warn!(path = %self.path.display(), election = %record.id, "the history is closed; record not saved");
        }
    }

    /// Write a record and wait until it is committed to disk. The writer
    /// retries a failed write (reopening the file) until it succeeds, so this
    /// waits as long as the disk refuses writes; it fails only when the
    /// history closes first.
    pub async fn save(&self, record: &ElectionRecord) -> Result<(), NotSaved> {
        let (saved, wait) = tokio::sync::oneshot::channel();
        if !self.send(Op::Put(Box::new(record.clone()), Some(saved))) {
            return Err(NotSaved(self.path.display().to_string()));
        }
        wait.await.map_err(|_| NotSaved(self.path.display().to_string()))
    }

    fn send(&self, op: Op) -> bool {
        let tx = self.tx.lock().unwrap_or_else(|e| e.into_inner());
        tx.as_ref().is_some_and(|tx| tx.send(op).is_ok())
    }

    /// Wait until everything queued so far is on disk (or given up at close).
    pub fn flush(&self) {
        let (done, wait) = mpsc::channel();
        if self.send(Op::Flush(done)) {
            let _ = wait.recv();
        }
    }

    /// Write what is queued, then close the file (later records are not saved).
    pub fn close(&self) {
        self.tx.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(writer) = self.writer.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = writer.join();
        }
    }
}

/// The writer thread's state: the open file (none after a failure, until
/// it is reopened) and the flag the controller's health follows.
struct Writer {
    db: Option<Database>,
    path: PathBuf,
    keep: usize,
    writable: tokio::sync::watch::Sender<bool>,
}

impl Writer {
    fn run(mut self, rx: mpsc::Receiver<Op>) {
        while let Ok(op) = rx.recv() {
            // Write everything that is waiting in one transaction (group commit).
            let mut ops = vec![op];
            ops.extend(rx.try_iter());
            let mut tries = 0u32;
            loop {
                match self.write(&ops) {
                    Ok(()) => {
                        if !*self.writable.borrow() {
                            info!(path = %self.path.display(), "the election history takes writes again");
                            self.writable.send_replace(true);
                        }
                        break;
                    }
                    Err(e) => {
                        telemetry::metrics().history_write_failed();
                        if *self.writable.borrow() {
                            error!(
                                path = %self.path.display(), error = %e,
                                "cannot write the election history; new elections are refused until it can \
                                 (retrying every {} ms)", RETRY.as_millis()
                            );
                            self.writable.send_replace(false);
                        } else {
                            debug!(path = %self.path.display(), error = %e, "the election history still refuses writes");
                        }
                        // redb refuses every later operation after an I/O error: reopen the file.
                        self.db = None;
                        tries += 1;
                        let closing = matches!(rx.try_recv(), Err(mpsc::TryRecvError::Disconnected));
                        if closing && tries >= CLOSING_TRIES {
                            let unsaved = ops.iter().filter(|op| matches!(op, Op::Put(..))).count();
                            error!(path = %self.path.display(), unsaved, "closing with records the disk refused");
                            break;
                        }
                        std::thread::sleep(RETRY);
                        ops.extend(rx.try_iter());
                    }
                }
            }
            for op in ops {
                match op {
                    Op::Put(_, Some(saved)) if *self.writable.borrow() => {
                        let _ = saved.send(());
                    }
                    Op::Flush(done) => {
                        let _ = done.send(());
                    }
                    _ => {}
                }
            }
        }
    }

    /// One transaction with every record in `ops`, then the oldest beyond `keep` forgotten.
    fn write(&mut self, ops: &[Op]) -> Result<(), String> {
        if self.db.is_none() {
            self.db = Some(Database::create(&self.path).map_err(|e| format!("cannot reopen: {e}"))?);
        }
        let db = self.db.as_ref().ok_or("no database")?;
        let result = (|| -> Result<(), redb::Error> {
            let tx = db.begin_write()?;
            {
                let mut table = tx.open_table(RECORDS)?;
                for op in ops {
                    if let Op::Put(r, _) = op {
                        match serde_json::to_vec(&**r) {
                            Ok(bytes) => {
                                table.insert(key(r).as_str(), bytes.as_slice())?;
                            }
                            Err(e) => warn!(election = %r.id, error = %e, "cannot encode a record"),
                        }
                    }
                }
                // Forget the oldest beyond `keep`.
                let excess = (table.len()? as usize).saturating_sub(self.keep);
                if excess > 0 {
                    let old: Vec<String> =
                        table.iter()?.take(excess).filter_map(|r| r.ok().map(|(k, _)| k.value().to_string())).collect();
                    for k in old {
                        table.remove(k.as_str())?;
                    }
                }
            }
            tx.commit()?;
            Ok(())
        })();
        result.map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(i: u64, state: State) -> ElectionRecord {
        ElectionRecord {
            state,
            n: 4,
            k: 4,
            seed: i,
            agreed: state == State::Finished,
            started_at_ms: 1_000 + i,
            ..ElectionRecord::blank(format!("e{i}"), "as-far", crate::record::Mode::Live)
        }
    }

    /// Records written, closed and reopened come back in start order, the newest `keep` of them; one
    /// that was still running comes back FAILED with the reason, and is saved that way.
    #[test]
    fn records_survive_a_reopen() {
        let dir = std::env::temp_dir().join(format!("ringleader-history-{}", std::process::id()));
        let path = dir.join("history.redb");
        let (h, restored) = History::open(&path, 3).unwrap();
        assert!(restored.is_empty());
        for i in 1..=4 {
            h.put(&record(i, State::Pending));
            h.put(&record(i, if i == 4 { State::Running } else { State::Finished }));
        }
        h.close();
        h.put(&record(9, State::Finished));
        let (h, restored) = History::open(&path, 3).unwrap();
        let ids: Vec<&str> = restored.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["e2", "e3", "e4"], "the newest 3, oldest first; nothing after close");
        assert_eq!(restored[0].state, State::Finished);
        assert_eq!((restored[2].state, restored[2].error.as_deref()), (State::Failed, Some(INTERRUPTED)));
        assert_eq!(restored[0].algorithm, "as-far");
        h.close();
        let (h, restored) = History::open(&path, 10).unwrap();
        assert_eq!(restored.last().map(|r| r.state), Some(State::Failed), "the verdict was saved");
        h.close();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
