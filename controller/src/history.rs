//! Election history that survives a controller restart: every record
//! (verdict, metrics, timeline, failovers) is written to an embedded store
//! ([redb], one file at `controller.history_path`) when an election is planned
//! and when it ends, by one writer thread so writes keep their order and the
//! election tasks never block on the disk.
//!
//! On start the controller reads the newest `max_elections` records back. A
//! record that was still PENDING or RUNNING when the controller stopped ends
//! FAILED, with an error saying so: no election stays "running" forever.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, mpsc};

use redb::{Database, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition};
use tracing::{info, warn};

use crate::elections::{ElectionRecord, State};

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
    Put(Box<ElectionRecord>),
    Flush(mpsc::Sender<()>),
}

/// The store and its writer thread.
#[derive(Debug)]
pub struct History {
    tx: Mutex<Option<mpsc::Sender<Op>>>,
    writer: Mutex<Option<std::thread::JoinHandle<()>>>,
    path: PathBuf,
}

impl std::fmt::Debug for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Op::Put(r) => write!(f, "Put({})", r.id),
            Op::Flush(_) => f.write_str("Flush"),
        }
    }
}

fn key(r: &ElectionRecord) -> String {
    format!("{:016x}-{}", r.started_at_ms, r.id)
}

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
        let writer_path = path.to_path_buf();
        let writer = std::thread::Builder::new()
            .name("history-writer".into())
            .spawn(move || write_loop(db, rx, keep, &writer_path))
            .map_err(|e| fail(format!("cannot start the writer: {e}")))?;
        let history = History { tx: Mutex::new(Some(tx)), writer: Mutex::new(Some(writer)), path: path.to_path_buf() };
        for r in interrupted {
            history.put(&r);
        }
        Ok((history, records))
    }

    /// Queue a record for writing (replacing its earlier version).
    pub fn put(&self, record: &ElectionRecord) {
        let tx = self.tx.lock().unwrap_or_else(|e| e.into_inner());
        let sent = tx.as_ref().is_some_and(|tx| tx.send(Op::Put(Box::new(record.clone()))).is_ok());
        if !sent {
            warn!(path = %self.path.display(), election = %record.id, "the history is closed; record not saved");
        }
    }

    /// Wait until everything queued so far is on disk.
    pub fn flush(&self) {
        let (done, wait) = mpsc::channel();
        let tx = self.tx.lock().unwrap_or_else(|e| e.into_inner());
        let sent = tx.as_ref().is_some_and(|tx| tx.send(Op::Flush(done)).is_ok());
        drop(tx);
        if sent {
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

fn write_loop(db: Database, rx: mpsc::Receiver<Op>, keep: usize, path: &Path) {
    while let Ok(op) = rx.recv() {
        // Write everything that is waiting in one transaction.
        let mut ops = vec![op];
        ops.extend(rx.try_iter());
        let mut flushed = Vec::new();
        let result = (|| -> Result<(), redb::Error> {
            let tx = db.begin_write()?;
            {
                let mut table = tx.open_table(RECORDS)?;
                for op in ops {
                    match op {
                        Op::Put(r) => match serde_json::to_vec(&*r) {
                            Ok(bytes) => {
                                table.insert(key(&r).as_str(), bytes.as_slice())?;
                            }
                            Err(e) => warn!(election = %r.id, error = %e, "cannot encode a record"),
                        },
                        Op::Flush(done) => flushed.push(done),
                    }
                }
                // Forget the oldest beyond `keep`.
                let excess = (table.len()? as usize).saturating_sub(keep);
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
        if let Err(e) = result {
            warn!(path = %path.display(), error = %e, "cannot write the election history");
        }
        for done in flushed {
            let _ = done.send(());
        }
    }
}

/// A `&'static str` field of a stored record (an alias, so serde does not
/// try to borrow it from the input).
pub type StaticStr = &'static str;

/// Deserialize a `&'static str` field (algorithm names, bound formulas,
/// failover causes): each distinct string is kept once for the process's life.
pub(crate) fn static_str<'de, D: serde::Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    static INTERNED: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let s = <String as serde::Deserialize>::deserialize(d)?;
    let mut set = INTERNED.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&known) = set.get(s.as_str()) {
        return Ok(known);
    }
    let leaked: &'static str = Box::leak(s.into_boxed_str());
    set.insert(leaked);
    Ok(leaked)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(i: u64, state: State) -> ElectionRecord {
        ElectionRecord {
            id: format!("e{i}"),
            algorithm: "as-far",
            mode: crate::elections::Mode::Live,
            state,
            topology: ringleader_node::topology::TopologyKind::RingUni,
            rule: ringleader_node::algo::Rule::Max,
            n: 4,
            k: 4,
            seed: i,
            leader: None,
            agreed: state == State::Finished,
            violations: Vec::new(),
            metrics: None,
            participants: Vec::new(),
            error: None,
            started_at_ms: 1_000 + i,
            keep_leader: false,
            term: 0,
            leader_since_ms: 0,
            timeline: Vec::new(),
            overlaps: Vec::new(),
            failovers: Vec::new(),
            diagram_svg: None,
            notes: Vec::new(),
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
