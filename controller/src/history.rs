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
//! The file holds the records memory holds: memory prunes by
//! [`crate::record::prune`] (the oldest diagrams, then the oldest records)
//! and the history follows, rewriting a record whose diagram went and
//! removing one forgotten ([`History::forget`]); a read-back applies the same
//! rule. At open the bound is capped to a [`VOLUME_SHARE`] of the volume, so
//! the file never fills it; a write the disk refuses anyway first drops the
//! oldest diagrams on disk.
//!
//! On start the controller reads the newest `max_elections` records back. A
//! record that was still PENDING or RUNNING when the controller stopped ends
//! FAILED, with an error saying so ([`INTERRUPTED`]): no election stays
//! "running" forever. The controller then aborts the LIVE ones on its nodes,
//! which may still run them (`elections/interrupted.rs`).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, mpsc};

use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};
use tracing::{debug, error, info, warn};

pub use crate::record::StaticStr;
use crate::record::{ElectionRecord, State, Stored, prune};
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
    /// Write a record; `saved` hears once it is committed to disk, and how.
    Put(Box<ElectionRecord>, Option<tokio::sync::oneshot::Sender<Saved>>),
    /// Remove the record of this key (memory forgot it).
    Forget(String),
    Flush(mpsc::Sender<()>),
}

/// What [`History::open`] read back, and what it could not.
#[derive(Debug, Default)]
pub struct Restored {
    /// The records, oldest first.
    pub records: Vec<ElectionRecord>,
    /// Records that could not be read (lost).
    pub unreadable: usize,
    /// Older records dropped from the file: beyond `keep`, or beyond
    /// `max_bytes` once every older diagram was left out ([`prune`]).
    pub left_out: usize,
    /// Records read back without their diagram, to fit `max_bytes`.
    pub diagrams_left_out: usize,
    /// Where a damaged file was moved.
    pub damaged: Option<PathBuf>,
}

/// Why a history file cannot be read.
#[derive(Debug, thiserror::Error)]
enum Damage {
    /// A file of 0 bytes (a crash while it was created, or a truncation).
    #[error("the file is empty")]
    Empty,
    /// redb refuses the file as corrupt or not a database.
    #[error("{0}")]
    Unreadable(String),
    /// Not damage: a problem the file cannot be blamed for (another process holds it, permissions).
    #[error("{0}")]
    Fatal(String),
}

/// What a write to the history file, or the work around it, met.
#[derive(Debug, thiserror::Error)]
enum FileError {
    /// redb refused an operation.
    #[error(transparent)]
    Redb(#[from] redb::Error),
    /// The file could not be opened again after a failure.
    #[error("cannot reopen: {0}")]
    Reopen(redb::DatabaseError),
    /// A damaged file could not be moved aside.
    #[error("cannot move the damaged file to {}: {source}", to.display())]
    MoveAside { to: PathBuf, source: std::io::Error },
    /// The readable records of a damaged file could not be written to the new one.
    #[error("cannot write the readable records to a new file: {0}")]
    WriteAll(redb::Error),
}

/// The cache redb may fill while the history is read or written: its default (a large share of
/// memory) would let a large history file outgrow the memory budget at start.
const CACHE_BYTES: usize = 8 << 20;

fn create(path: &Path) -> Result<Database, redb::DatabaseError> {
    Database::builder().set_cache_size(CACHE_BYTES).create(path)
}

/// What a read left out of the file, to remove or rewrite there.
#[derive(Debug, Default)]
struct LeftOut {
    /// Keys of records dropped (beyond `keep`, or beyond the bytes).
    dropped: Vec<String>,
    /// Records kept without their diagram.
    stripped: Vec<ElectionRecord>,
}

/// Open `path` and read its newest `keep` records (oldest first) within
/// `max_bytes` by the pruning rule memory follows ([`prune`]: the older
/// diagrams left out first, then the older records); with how many could not
/// be read and what was left out.
fn read(path: &Path, keep: usize, max_bytes: u64) -> Result<(Database, Vec<ElectionRecord>, usize, LeftOut), Damage> {
    // redb checks a file's consistency with debug assertions in debug builds: a damaged file may
    // panic there where a release build returns an error. Either is damage.
    let opened = std::panic::catch_unwind(|| create(path)).map_err(|_| Damage::Unreadable("redb panicked".into()))?;
    let db = opened.map_err(|e| match &e {
        redb::DatabaseError::DatabaseAlreadyOpen | redb::DatabaseError::LockProtocolMismatch => {
            Damage::Fatal(format!("{e}: is another controller using it?"))
        }
        redb::DatabaseError::Storage(redb::StorageError::Io(io))
            if !matches!(io.kind(), std::io::ErrorKind::InvalidData | std::io::ErrorKind::UnexpectedEof) =>
        {
            Damage::Fatal(e.to_string())
        }
        _ => Damage::Unreadable(e.to_string()),
    })?;
    let scan = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| -> Result<_, redb::Error> {
        // Reading only: a controller restarted on a full disk must start (the writer creates the
        // table with its first record).
        let read = db.begin_read()?;
        let table = match read.open_table(RECORDS) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok((Vec::new(), 0, LeftOut::default())),
            Err(e) => return Err(e.into()),
        };
        // First pass, newest first: what each weighs (one record held at a time).
        let (mut weighed, mut unreadable, mut left) = (Vec::new(), 0, LeftOut::default());
        for row in table.iter()?.rev() {
            let Ok((k, value)) = row else {
                unreadable += 1;
                continue;
            };
            if weighed.len() >= keep {
                left.dropped.push(k.value().to_string());
                continue;
            }
            let Ok(r) = serde_json::from_slice::<ElectionRecord>(value.value()) else {
                unreadable += 1;
                continue;
            };
            weighed.push((k.value().to_string(), Stored::of(&r, DIAGRAM_LEFT_OUT)));
        }
        weighed.reverse();
        let stored: Vec<Stored> = weighed.iter().map(|(_, s)| *s).collect();
        let pruning = prune(&stored, max_bytes, keep);
        // Second pass, oldest first: the records kept, as the rule keeps them.
        let mut records = Vec::with_capacity(weighed.len() - pruning.records.len());
        for (i, (k, _)) in weighed.into_iter().enumerate() {
            if pruning.records.binary_search(&i).is_ok() {
                left.dropped.push(k);
                continue;
            }
            let Some(Ok(mut r)) = table.get(k.as_str())?.map(|v| serde_json::from_slice::<ElectionRecord>(v.value()))
            else {
                unreadable += 1;
                continue;
            };
            if pruning.diagrams.binary_search(&i).is_ok() {
                r.diagram_svg = None;
                r.notes.push(DIAGRAM_LEFT_OUT.to_string());
                left.stripped.push(r.clone());
            }
            records.push(r);
        }
        Ok((records, unreadable, left))
    }));
    match scan {
        Ok(Ok((records, unreadable, left))) => Ok((db, records, unreadable, left)),
        Ok(Err(e)) => Err(Damage::Unreadable(e.to_string())),
        Err(_) => Err(Damage::Unreadable("redb panicked while reading it".into())),
    }
}

/// Commit an empty transaction (so the pages the last one freed are free),
/// then compact the file (so it gives them back to the file system).
fn release(db: &mut Database) -> Result<(), redb::Error> {
    db.begin_write()?.commit()?;
    while db.compact()? {}
    Ok(())
}

/// Make the file hold what was read back: `left`'s dropped records removed,
/// its stripped ones rewritten (the same records as memory, after [`prune`]).
fn write_left_out(db: &Database, left: &LeftOut) -> Result<(), redb::Error> {
    let tx = db.begin_write()?;
    {
        let mut table = tx.open_table(RECORDS)?;
        for k in &left.dropped {
            table.remove(k.as_str())?;
        }
        for r in &left.stripped {
            if let Ok(bytes) = serde_json::to_vec(r) {
                table.insert(key(r).as_str(), bytes.as_slice())?;
            }
        }
    }
    tx.commit()?;
    Ok(())
}

/// Move a damaged file to `<path>.damaged-<unix ms>`; the new path.
fn move_aside(path: &Path) -> Result<PathBuf, FileError> {
    let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
    let mut to = path.as_os_str().to_owned();
    to.push(format!(".damaged-{ms}"));
    let to = PathBuf::from(to);
    match std::fs::rename(path, &to) {
        Ok(()) => Ok(to),
        Err(source) => Err(FileError::MoveAside { to, source }),
    }
}

/// Write `records` to a new store in one transaction.
fn write_all(db: &Database, records: &[ElectionRecord]) -> Result<(), FileError> {
    let result = (|| -> Result<(), redb::Error> {
        let tx = db.begin_write()?;
        {
            let mut table = tx.open_table(RECORDS)?;
            for r in records {
                if let Ok(bytes) = serde_json::to_vec(r) {
                    table.insert(key(r).as_str(), bytes.as_slice())?;
                }
            }
        }
        tx.commit()?;
        Ok(())
    })();
    result.map_err(FileError::WriteAll)
}

/// The note of a record read back without its diagram, to fit `max_stored_mib`.
pub const DIAGRAM_LEFT_OUT: &str =
    "the space-time diagram was left out when the history was read back, to fit controller.max_stored_mib";

/// How a record went to disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Saved {
    /// As it was.
    Whole,
    /// Without its space-time diagram: the disk refused the record with it
    /// and took it without (the caller should drop it too, and say so).
    WithoutDiagram,
}

/// The note of a record whose diagram the disk did not take.
pub const DIAGRAM_NOT_SAVED: &str = "the space-time diagram was not kept: the election history's disk refused the \
                                     record with it (full), and took it without";

/// The store and its writer thread.
#[derive(Debug)]
pub struct History {
    tx: Mutex<Option<mpsc::Sender<Op>>>,
    writer: Mutex<Option<std::thread::JoinHandle<()>>>,
    path: PathBuf,
    /// `true` while writes succeed; `false` from the first failed commit
    /// until one succeeds again.
    writable: tokio::sync::watch::Receiver<bool>,
    /// See [`History::max_bytes`].
    max_bytes: u64,
}

/// The share of its volume the history's records may weigh: one in
/// `VOLUME_SHARE`. The file holds more than the records weigh (JSON, redb's
/// pages, and the copy a transaction writes before the old pages are free).
pub const VOLUME_SHARE: u64 = 4;

/// `max_bytes`, or [`VOLUME_SHARE`] of the volume holding `dir` if less,
/// with a WARN naming both sizes.
fn fit_the_volume(path: &Path, dir: &Path, max_bytes: u64) -> u64 {
    let Some(volume) = volume_bytes(dir) else { return max_bytes };
    let room = volume / VOLUME_SHARE;
    if max_bytes <= room {
        return max_bytes;
    }
    warn!(
        path = %path.display(), volume_mib = volume >> 20, max_stored_mib = max_bytes >> 20, capped_mib = room >> 20,
        "the election history's volume ({} MiB) is too small for controller.max_stored_mib ({} MiB): the stored \
         records are kept to {} MiB (a {VOLUME_SHARE}th of the volume), in memory and on disk; give the volume at \
         least {VOLUME_SHARE} times max_stored_mib",
        volume >> 20, max_bytes >> 20, room >> 20
    );
    room
}

/// The size of the filesystem holding `dir` (`None`: unknown).
fn volume_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: `c` is a NUL-terminated path and `stat` a plain C struct statvfs fills in.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above; statvfs only writes to `stat`.
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut stat) };
    #[allow(clippy::useless_conversion)] // u32 on some targets
    let size = u64::from(stat.f_blocks).saturating_mul(u64::from(stat.f_frsize));
    (rc == 0).then_some(size)
}

impl std::fmt::Debug for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Op::Put(r, _) => write!(f, "Put({})", r.id),
            Op::Forget(k) => write!(f, "Forget({k})"),
            Op::Flush(_) => f.write_str("Flush"),
        }
    }
}

/// The key of `r` in the file.
pub(crate) fn key(r: &ElectionRecord) -> String {
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
    /// records (oldest first, in-flight ones turned FAILED) that together
    /// weigh at most `max_bytes` ([`ElectionRecord::weight`]: beyond it the
    /// older records' diagrams are left out, then the older records, and
    /// dropped from the file), or a [`VOLUME_SHARE`] of the volume if less
    /// ([`History::max_bytes`]), and start the writer, which writes and
    /// removes what it is told.
    ///
    /// A damaged file never stops the controller and is never taken quietly:
    /// an empty file, one redb cannot open, or one with unreadable records is
    /// moved aside (to `<path>.damaged-<unix ms>`), logged as a WARN naming
    /// what was lost and where the file went, and the readable records are
    /// written to a fresh file.
    pub fn open(path: &Path, keep: usize, max_bytes: u64) -> Result<(History, Restored), HistoryError> {
        let fail =
            |reason: &dyn std::fmt::Display| HistoryError { path: path.to_path_buf(), reason: reason.to_string() };
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| fail(&format!("cannot create {}: {e}", dir.display())))?;
        let max_bytes = fit_the_volume(path, dir, max_bytes);
        let mut restored = Restored::default();
        let empty = std::fs::metadata(path).is_ok_and(|m| m.len() == 0);
        let (db, mut records) = match if empty { Err(Damage::Empty) } else { read(path, keep, max_bytes) } {
            Ok((db, records, unreadable, left)) => {
                if unreadable == 0 {
                    restored.left_out = left.dropped.len();
                    restored.diagrams_left_out = left.stripped.len();
                    if (restored.left_out, restored.diagrams_left_out) != (0, 0) {
                        warn!(
                            path = %path.display(), loaded = records.len(), dropped = restored.left_out,
                            diagrams_left_out = restored.diagrams_left_out,
                            "the election history held more than controller.max_elections ({keep}) or \
                             controller.max_stored_mib ({} MiB) allow: {} older records dropped and {} diagrams \
                             left out (the oldest first)",
                            max_bytes >> 20, restored.left_out, restored.diagrams_left_out
                        );
                        if let Err(e) = write_left_out(&db, &left) {
                            warn!(path = %path.display(), error = %e, "could not drop them from the file yet");
                        }
                    }
                    (db, records)
                } else {
                    drop(db);
                    let to = move_aside(path).map_err(|e| fail(&e))?;
                    warn!(
                        path = %path.display(), unreadable, kept = records.len(), moved_to = %to.display(),
                        "the election history had unreadable records: {unreadable} election records are lost; the \
                         damaged file was moved aside and the readable records written to a new one"
                    );
                    restored.unreadable = unreadable;
                    restored.damaged = Some(to);
                    let db = create(path).map_err(|e| fail(&e))?;
                    write_all(&db, &records).map_err(|e| fail(&e))?;
                    (db, records)
                }
            }
            Err(Damage::Fatal(reason)) => return Err(fail(&reason)),
            Err(damage) => {
                let to = move_aside(path).map_err(|e| fail(&e))?;
                warn!(
                    path = %path.display(), moved_to = %to.display(), problem = %damage,
                    "the election history could not be read ({damage}): its records are lost; the damaged file was \
                     moved aside and a new history started"
                );
                restored.damaged = Some(to);
                (create(path).map_err(|e| fail(&e))?, Vec::new())
            }
        };
        let mut db = db;
        // A file larger than its records (pruned, or grown by an earlier run's large diagrams)
        // gives its free pages back before anything is written.
        if let Err(e) = release(&mut db) {
            debug!(path = %path.display(), error = %e, "compacting the election history failed");
        }
        let mut interrupted = Vec::new();
        for r in &mut records {
            if !r.state.is_terminal() {
                r.state = State::Failed;
                r.error = Some(INTERRUPTED.to_string());
                interrupted.push(r.clone());
            }
        }
        info!(path = %path.display(), records = records.len(), interrupted = interrupted.len(), "election history");
        let (tx, rx) = mpsc::channel::<Op>();
        let (writable_tx, writable) = tokio::sync::watch::channel(true);
        let writer_path = path.to_path_buf();
        let writer = std::thread::Builder::new()
            .name("history-writer".into())
            .spawn(move || Writer { db: Some(db), path: writer_path, writable: writable_tx }.run(rx))
            .map_err(|e| fail(&format!("cannot start the writer: {e}")))?;
        let history = History {
            tx: Mutex::new(Some(tx)),
            writer: Mutex::new(Some(writer)),
            path: path.to_path_buf(),
            writable,
            max_bytes,
        };
        for r in interrupted {
            history.put(&r);
        }
        restored.records = records;
        Ok((history, restored))
    }

    /// The bytes the stored records may weigh: `max_stored_mib`, or less
    /// when the history's volume is smaller ([`VOLUME_SHARE`]). The records in
    /// memory keep to it too, so both hold the same.
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// Remove the record of history key `key` (see `key`): memory forgot it.
    pub fn forget(&self, key: String) {
        self.send(Op::Forget(key));
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
    /// history closes first. A record the disk refuses with its diagram but
    /// takes without is saved so ([`Saved::WithoutDiagram`]).
    pub async fn save(&self, record: &ElectionRecord) -> Result<Saved, NotSaved> {
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
    writable: tokio::sync::watch::Sender<bool>,
}

impl Writer {
    fn run(mut self, rx: mpsc::Receiver<Op>) {
        while let Ok(op) = rx.recv() {
            // Write everything that is waiting in one transaction (group commit).
            let mut ops = vec![op];
            ops.extend(rx.try_iter());
            let mut tries = 0u32;
            let mut stripped = false;
            loop {
                let written = self.write(&ops).or_else(|e| {
                    telemetry::metrics().history_write_failed();
                    // redb refuses every later operation after an I/O error: reopen the file.
                    self.db = None;
                    // Make room apart from the batch that failed (the oldest diagrams, then the
                    // oldest records, as the memory drops them), and try once more.
                    self.make_room(&ops);
                    self.write(&ops).map_err(|_| e)
                });
                let Err(error) = written else {
                    if !*self.writable.borrow() {
                        info!(path = %self.path.display(), "the election history takes writes again");
                        self.writable.send_replace(true);
                    }
                    break;
                };
                self.db = None;
                // A record the disk cannot take with its diagram, it may take without.
                if !stripped && ops.iter().any(|op| matches!(op, Op::Put(r, _) if r.diagram_svg.is_some())) {
                    stripped = true;
                    let mut without = 0;
                    for op in &mut ops {
                        if let Op::Put(r, _) = op
                            && r.diagram_svg.take().is_some()
                        {
                            r.notes.push(DIAGRAM_NOT_SAVED.to_string());
                            without += 1;
                        }
                    }
                    warn!(
                        path = %self.path.display(), error = %error, records = without,
                        "the election history's disk refused records with their diagrams; saving them without"
                    );
                    continue;
                }
                if *self.writable.borrow() {
                    error!(
                        path = %self.path.display(), error = %error,
                        "cannot write the election history; new elections are refused until it can \
                         (retrying every {} ms)", RETRY.as_millis()
                    );
                    self.writable.send_replace(false);
                } else {
                    debug!(path = %self.path.display(), error = %error, "the election history still refuses writes");
                }
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
            for op in ops {
                match op {
                    Op::Put(r, Some(saved)) if *self.writable.borrow() => {
                        let how = if r.notes.last().is_some_and(|n| n == DIAGRAM_NOT_SAVED) {
                            Saved::WithoutDiagram
                        } else {
                            Saved::Whole
                        };
                        let _ = saved.send(how);
                    }
                    Op::Flush(done) => {
                        let _ = done.send(());
                    }
                    _ => {}
                }
            }
        }
    }

    /// One transaction with every record and removal in `ops`.
    fn write(&mut self, ops: &[Op]) -> Result<(), FileError> {
        self.transaction(|table| {
            for op in ops {
                match op {
                    Op::Put(r, _) => match serde_json::to_vec(&**r) {
                        Ok(bytes) => {
                            table.insert(key(r).as_str(), bytes.as_slice())?;
                        }
                        Err(e) => warn!(election = %r.id, error = %e, "cannot encode a record"),
                    },
                    Op::Forget(k) => {
                        table.remove(k.as_str())?;
                    }
                    Op::Flush(_) => {}
                }
            }
            Ok(())
        })
    }

    /// The disk refused `ops`: free at least twice what they write (1 MiB at
    /// least), in a transaction of its own, by dropping the oldest diagrams
    /// (the pruning rule memory follows, never the batch's own; records
    /// answered ended stay), with a WARN naming the count.
    fn make_room(&mut self, ops: &[Op]) {
        let batch: std::collections::HashSet<String> =
            ops.iter().filter_map(|op| if let Op::Put(r, _) = op { Some(key(r)) } else { None }).collect();
        let need: u64 =
            ops.iter().map(|op| if let Op::Put(r, _) = op { 2 * r.weight() } else { 0 }).sum::<u64>().max(1 << 20);
        let mut said = 0;
        let result = self.transaction(|table| {
            let mut others = Vec::new();
            for row in table.iter()? {
                let (k, v) = row?;
                if batch.contains(k.value()) {
                    continue;
                }
                if let Ok(r) = serde_json::from_slice::<ElectionRecord>(v.value()) {
                    others.push((k.value().to_string(), Stored::of(&r, DIAGRAM_NOT_SAVED)));
                }
            }
            let total: u64 = others.iter().map(|(_, s)| s.weight).sum();
            let stored: Vec<Stored> = others.iter().map(|(_, s)| *s).collect();
            let pruning = prune(&stored, total.saturating_sub(need), usize::MAX);
            let pruning = crate::record::Pruning { records: Vec::new(), ..pruning };
            // Diagrams only: a record answered ended stays, listed and on disk (a disk another
            // file filled refuses elections until it has room again, see `run`).
            for &i in &pruning.diagrams {
                let k = others[i].0.as_str();
                let Some(mut r) = table.get(k)?.and_then(|v| serde_json::from_slice::<ElectionRecord>(v.value()).ok())
                else {
                    continue;
                };
                r.diagram_svg = None;
                r.notes.push(DIAGRAM_NOT_SAVED.to_string());
                if let Ok(bytes) = serde_json::to_vec(&r) {
                    table.insert(k, bytes.as_slice())?;
                }
            }
            said = pruning.diagrams.len();
            Ok(())
        });
        if result.is_ok()
            && let Some(db) = self.db.as_mut()
        {
            // The pages a transaction frees are reused only once a later one commits; compaction
            // then gives the file's free pages back to the file system.
            if let Err(e) = release(db) {
                debug!(path = %self.path.display(), error = %e, "compacting the election history failed");
            }
        }
        match result {
            Ok(()) if said > 0 => warn!(
                path = %self.path.display(), diagrams = said,
                "the election history's disk is full: dropped the diagrams of the {said} oldest records that had \
                 one, on disk, to make room (memory keeps them until this controller restarts)"
            ),
            Ok(()) => {}
            Err(e) => debug!(path = %self.path.display(), error = %e, "making room in the election history failed"),
        }
    }

    /// Run `f` on the records' table in one write transaction, (re)opening the file first if needed.
    fn transaction(
        &mut self,
        f: impl FnOnce(&mut redb::Table<&str, &[u8]>) -> Result<(), redb::Error>,
    ) -> Result<(), FileError> {
        let db = match self.db.take() {
            Some(db) => db,
            None => create(&self.path).map_err(FileError::Reopen)?,
        };
        let db = self.db.insert(db);
        let result = (|| -> Result<(), redb::Error> {
            let tx = db.begin_write()?;
            {
                let mut table = tx.open_table(RECORDS)?;
                f(&mut table)?;
            }
            tx.commit()?;
            Ok(())
        })();
        Ok(result?)
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
        let (h, Restored { records: restored, .. }) = History::open(&path, 3, u64::MAX).unwrap();
        assert!(restored.is_empty());
        for i in 1..=4 {
            h.put(&record(i, State::Pending));
            h.put(&record(i, if i == 4 { State::Running } else { State::Finished }));
        }
        h.close();
        h.put(&record(9, State::Finished));
        let (h, Restored { records: restored, .. }) = History::open(&path, 3, u64::MAX).unwrap();
        let ids: Vec<&str> = restored.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["e2", "e3", "e4"], "the newest 3, oldest first; nothing after close");
        assert_eq!(restored[0].state, State::Finished);
        assert_eq!((restored[2].state, restored[2].error.as_deref()), (State::Failed, Some(INTERRUPTED)));
        assert_eq!(restored[0].algorithm, "as-far");
        h.close();
        let (h, Restored { records: restored, .. }) = History::open(&path, 10, u64::MAX).unwrap();
        assert_eq!(restored.last().map(|r| r.state), Some(State::Failed), "the verdict was saved");
        h.close();
        std::fs::remove_dir_all(&dir).unwrap();
    }
    fn temp_path(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ringleader-history-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("history.redb")
    }

    fn damaged_files(path: &Path) -> Vec<PathBuf> {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.file_name().is_some_and(|f| f.to_string_lossy().starts_with(&format!("{name}.damaged-"))))
            .collect()
    }

    /// A history file of 0 bytes (a crash while it was created) is not quietly taken as new: it is
    /// moved aside, the open says so, and the new file works. Before, it was silently a new history.
    #[test]
    fn an_empty_file_is_moved_aside() {
        let path = temp_path("empty");
        std::fs::write(&path, b"").unwrap();
        let (h, restored) = History::open(&path, 10, u64::MAX).unwrap();
        let moved = damaged_files(&path);
        assert_eq!(moved.len(), 1, "{moved:?}");
        assert_eq!(restored.damaged.as_ref(), Some(&moved[0]));
        h.put(&record(1, State::Finished));
        h.close();
        let (h, restored) = History::open(&path, 10, u64::MAX).unwrap();
        assert_eq!((restored.records.len(), restored.damaged), (1, None));
        h.close();
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    /// A file with an unreadable record: the readable ones are read back and written to a new file,
    /// the damaged file is moved aside, and the loss is counted. Before, the record was dropped with
    /// an INFO line and the damage stayed in place.
    #[test]
    fn unreadable_records_are_counted_and_the_file_moved_aside() {
        let path = temp_path("unreadable");
        let (h, _) = History::open(&path, 10, u64::MAX).unwrap();
        for i in 1..=5 {
            h.put(&record(i, State::Finished));
        }
        h.close();
        {
            let db = Database::create(&path).unwrap();
            let tx = db.begin_write().unwrap();
            tx.open_table(RECORDS).unwrap().insert("0000000000000bb8-bad", b"{not json".as_slice()).unwrap();
            tx.commit().unwrap();
        }
        let (h, restored) = History::open(&path, 10, u64::MAX).unwrap();
        assert_eq!((restored.records.len(), restored.unreadable), (5, 1));
        assert_eq!(damaged_files(&path), vec![restored.damaged.clone().unwrap()]);
        h.close();
        let (h, restored) = History::open(&path, 10, u64::MAX).unwrap();
        assert_eq!((restored.records.len(), restored.unreadable, restored.damaged), (5, 0, None), "rewritten whole");
        h.close();
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    /// Bytes overwritten anywhere in a history file never stop the controller from starting and never
    /// lose records quietly: every open succeeds, and either every record is read back or the file
    /// was moved aside (and the loss counted). Before, some corruptions refused to start with redb's
    /// message, and others dropped records with an INFO line.
    #[test]
    fn corruption_anywhere_starts_and_is_said() {
        let path = temp_path("corrupt");
        let (h, _) = History::open(&path, 100, u64::MAX).unwrap();
        for i in 1..=40 {
            h.put(&record(i, State::Finished));
        }
        h.close();
        let pristine = std::fs::read(&path).unwrap();
        let mut outcomes = (0, 0);
        for offset in (0..pristine.len()).step_by(pristine.len() / 23 + 1) {
            let mut bytes = pristine.clone();
            for b in bytes.iter_mut().skip(offset).take(64) {
                *b ^= 0x5a;
            }
            std::fs::write(&path, &bytes).unwrap();
            for f in damaged_files(&path) {
                std::fs::remove_file(f).unwrap();
            }
            let (h, restored) = History::open(&path, 100, u64::MAX)
                .unwrap_or_else(|e| panic!("64 bytes at {offset} stopped the start: {e}"));
            h.close();
            if restored.records.len() == 40 && restored.damaged.is_none() {
                outcomes.0 += 1;
            } else {
                assert!(restored.damaged.is_some(), "at {offset}: {} of 40 read, nothing said", restored.records.len());
                assert_eq!(damaged_files(&path).len(), 1, "at {offset}");
                outcomes.1 += 1;
            }
        }
        eprintln!("{} corruptions read whole, {} moved aside", outcomes.0, outcomes.1);
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    /// The file holds what it is told (memory decides what to forget); reading back keeps to
    /// `max_bytes` by the rule memory follows: the older diagrams are left out first, every one if
    /// need be, before any record; then the older records. What was left out goes from the file
    /// too, and the open counts both.
    #[test]
    fn the_read_back_keeps_within_its_bytes_as_memory_does() {
        let path = temp_path("bytes");
        let (h, _) = History::open(&path, 1_000, 64 * 1024).unwrap();
        for i in 1..=20 {
            let r = ElectionRecord { diagram_svg: Some("x".repeat(10_000).into()), ..record(i, State::Finished) };
            h.put(&r);
        }
        h.forget(key(&record(1, State::Finished)));
        h.close();
        let (h, restored) = History::open(&path, 1_000, 64 * 1024).unwrap();
        assert_eq!(restored.records.len(), 19, "every record but the forgotten one");
        assert_eq!((restored.left_out, restored.diagrams_left_out), (0, 14));
        assert!(restored.records[13].diagram_svg.is_none() && restored.records[13].notes == [DIAGRAM_LEFT_OUT]);
        assert!(restored.records[14].diagram_svg.is_some(), "the newest keep theirs");
        h.close();
        let (h, restored) = History::open(&path, 1_000, u64::MAX).unwrap();
        let with: usize = restored.records.iter().filter(|r| r.diagram_svg.is_some()).count();
        assert_eq!((restored.records.len(), with), (19, 5), "the file holds what was read back");
        h.close();
        let (h, restored) = History::open(&path, 1_000, 5_000).unwrap();
        assert_eq!(restored.records.last().unwrap().id, "e20", "the newest stay");
        assert_eq!(restored.left_out + restored.records.len(), 19);
        assert!(restored.records.iter().all(|r| r.diagram_svg.is_none()));
        h.close();
        let (h, again) = History::open(&path, 1_000, u64::MAX).unwrap();
        assert_eq!(again.records.len(), restored.records.len(), "the dropped records went from the file");
        h.close();
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }
}
