//! The store a `lease` election keeps its record in, LIVE: etcd v3 through
//! the `etcd-client` crate. The core's state machine only pushes
//! [`StoreOp`]s (see `ringleader_core::protocol::store`); this module
//! carries each to etcd and turns the response into the [`StoreReply`] the
//! election hands back to it.
//!
//! One key per election, `/ringleader/lease/<election id>`, holding the
//! record as JSON in client-go's field names (times in Unix milliseconds,
//! stamped from this node's clock as client-go's client does). A read is a
//! `Range`; a write is a `Txn` comparing the key's `mod_revision` with the
//! revision the algorithm read (0: the key does not exist), putting the
//! record if equal and reading it back otherwise, so a lost compare-and-swap
//! answers with the record that won. Any error or a response later than
//! [`STORE_TIMEOUT`] answers [`StoreReply::Failed`].
//!
//! * **One client per endpoint and process.** Every election of every node
//!   in this process that names the same endpoint shares one `Client` (one
//!   HTTP/2 connection, each operation a stream on it), kept while some
//!   election uses it: a client per election took a descriptor each, and a
//!   few hundred elections ran a node out of them.
//! * **The key goes with the election.** When the election ends here
//!   ([`EtcdStore::end`], at its `Abort`), the node deletes the key if its
//!   `mod_revision` is still that of this node's last write: only the node
//!   that wrote last deletes, and only what it wrote, so a record another
//!   node wrote since stays, and that node deletes it at its own end. A node
//!   leaving on purpose (SIGTERM) releases the record but keeps the key: the
//!   election goes on without it.
//! * **A full etcd is reported.** etcd at its quota (the NOSPACE alarm)
//!   refuses every write until an operator compacts, defragments and
//!   disarms it, so no lease election keeps a leader. The first refusal is a
//!   WARN naming the election, the endpoint and the remedy, then at most one
//!   per [`NOSPACE_WARN_EVERY`] and endpoint with the count in between; each
//!   election also notes it once in its errors (the node's status of it).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, Weak};
use std::time::{Duration, Instant, SystemTime};

use etcd_client::{Client, Compare, CompareOp, ConnectOptions, KeyValue, Txn, TxnOp, TxnOpResponse};
use ringleader_core::algo::{LeaseRecord, StoreOp, StoreReply};
use serde::{Deserialize, Serialize};
use tokio::sync::{OnceCell, RwLock};

/// The longest a store operation may take before it counts as failed (the
/// algorithm gives up on it sooner, after its RetryPeriod; this bounds the
/// tasks left waiting on an unreachable etcd).
pub(crate) const STORE_TIMEOUT: Duration = Duration::from_secs(5);

/// The least time between two WARNs of a full etcd at one endpoint.
pub(crate) const NOSPACE_WARN_EVERY: Duration = Duration::from_secs(60);

/// What the operator of an etcd at its quota does (docs/operations.md, "etcd for `lease`").
const NOSPACE_REMEDY: &str = "compact its history (etcdctl compact <revision>), defragment (etcdctl defrag), \
                              then etcdctl alarm disarm; see docs/operations.md, etcd for lease";

/// The record as it sits in etcd (client-go's `LeaderElectionRecord` field names).
#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
struct Stored {
    /// The holder's id in the election; empty once released.
    holder_identity: String,
    lease_duration_ms: u64,
    acquire_time_ms: u64,
    renew_time_ms: u64,
    leader_transitions: u64,
}

impl Stored {
    /// Terms are transitions + 1: a record at the end of the term space is
    /// corrupt or forged, refused like one that does not parse.
    fn plausible(&self) -> Result<(), RecordError> {
        if self.leader_transitions >= ringleader_core::algo::MAX_TERM {
            return Err(RecordError::NoTerm(self.leader_transitions));
        }
        Ok(())
    }
}

/// Why the value at an election's key is no lease record this node takes.
#[derive(Debug, thiserror::Error)]
enum RecordError {
    /// Not the record's JSON.
    #[error("does not hold a lease record: {0}")]
    NotJson(serde_json::Error),
    /// The holder is not an election id.
    #[error("holder `{0}` is not an id")]
    Holder(String),
    /// `leaderTransitions` at the end of the term space ([`Stored::plausible`]).
    #[error("leaderTransitions {0} leaves no term (at most {max})", max = ringleader_core::algo::MAX_TERM - 1)]
    NoTerm(u64),
}

/// One etcd endpoint as this process reaches it: shared by every election
/// that names it, dropped with the last.
struct Endpoint {
    url: String,
    /// Connected on first use (a `Prepare` does not wait for etcd).
    client: OnceCell<Client>,
    /// When the last NOSPACE WARN went out, and the refusals since.
    nospace: Mutex<Throttle>,
}

/// The endpoints in use in this process, by URL.
static ENDPOINTS: LazyLock<Mutex<HashMap<String, Weak<Endpoint>>>> = LazyLock::new(Default::default);

impl Endpoint {
    /// The process's `Endpoint` for `url`, made if no election uses it now.
    fn shared(url: String) -> Arc<Endpoint> {
        let mut all = ENDPOINTS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = all.get(&url).and_then(Weak::upgrade) {
            return e;
        }
        all.retain(|_, e| e.strong_count() > 0);
        let e = Arc::new(Endpoint { url: url.clone(), client: OnceCell::new(), nospace: Mutex::default() });
        all.insert(url, Arc::downgrade(&e));
        e
    }

    async fn client(&self) -> Result<Client, etcd_client::Error> {
        let options = ConnectOptions::new().with_connect_timeout(Duration::from_secs(2)).with_timeout(STORE_TIMEOUT);
        let client = self.client.get_or_try_init(|| Client::connect([self.url.as_str()], Some(options))).await?;
        Ok(client.clone())
    }

    /// etcd refused a write of `election` for want of space: WARN, unless one went out lately.
    fn nospace(&self, election: &str, error: &str) {
        let suppressed = self.nospace.lock().unwrap_or_else(|e| e.into_inner()).admit(Instant::now());
        if let Some(suppressed) = suppressed {
            tracing::warn!(
                endpoint = %self.url, election, error, refused_since_last_warning = suppressed,
                "etcd is out of space (NOSPACE alarm): it refuses every write, so no lease election keeps a \
                 leader until its operator acts: {NOSPACE_REMEDY}"
            );
        }
    }
}

/// At most one event per interval: the first, then one whenever the interval has passed.
#[derive(Debug, Default)]
struct Throttle {
    last: Option<Instant>,
    /// Events held back since the last one let through.
    held: u64,
}

impl Throttle {
    /// An event at `now`: `Some(held back since the last)` if it goes out.
    fn admit(&mut self, now: Instant) -> Option<u64> {
        if self.last.is_some_and(|last| now.saturating_duration_since(last) < NOSPACE_WARN_EVERY) {
            self.held += 1;
            return None;
        }
        self.last = Some(now);
        Some(std::mem::take(&mut self.held))
    }
}

/// etcd's NOSPACE refusal (`rpctypes.ErrGRPCNoSpace`): etcd names its errors
/// by code and exact description, and its own Go client tells them apart by
/// both, as this does ([`CallError::from`]).
const ETCD_NOSPACE: (tonic::Code, &str) = (tonic::Code::ResourceExhausted, "etcdserver: mvcc: database space exceeded");

/// Why an operation failed.
#[derive(Debug, thiserror::Error)]
enum CallError {
    /// etcd's NOSPACE alarm ([`ETCD_NOSPACE`]).
    #[error("{0}")]
    NoSpace(etcd_client::Error),
    /// Any other refusal or failure of etcd's.
    #[error(transparent)]
    Etcd(etcd_client::Error),
    /// The key holds no record this node takes.
    #[error("{key}{}{error}", if matches!(error, RecordError::NotJson(_)) { " " } else { ": " })]
    Record { key: String, error: RecordError },
    /// The record could not be encoded.
    #[error(transparent)]
    Encode(serde_json::Error),
    /// A revision beyond etcd's (i64).
    #[error("revision {0} out of range")]
    Revision(u64),
    /// A lost compare-and-swap's answer did not carry the record.
    #[error("a lost compare-and-swap came back without the record")]
    NoRecord,
}

impl From<etcd_client::Error> for CallError {
    fn from(e: etcd_client::Error) -> Self {
        match &e {
            etcd_client::Error::GRpcStatus(s) if (s.code(), s.message()) == ETCD_NOSPACE => CallError::NoSpace(e),
            _ => CallError::Etcd(e),
        }
    }
}

/// One node's view of one election's record in etcd.
pub(crate) struct EtcdStore {
    endpoint: Arc<Endpoint>,
    election: String,
    key: String,
    /// The current holder's acquire time, as last read or written here (a
    /// renewal keeps it).
    acquired_ms: AtomicU64,
    /// The revision of this node's last successful write (0: none yet).
    written: AtomicU64,
    /// Operations hold it shared while they run; [`EtcdStore::end`] takes
    /// it alone, so it deletes after every write in flight has landed.
    running: RwLock<()>,
    /// The election ended here: no more operations.
    ended: AtomicBool,
    /// The election was told of a NOSPACE refusal (once).
    nospace_noted: AtomicBool,
    /// A note for the election's errors, taken by [`EtcdStore::take_note`].
    note: Mutex<Option<String>>,
}

impl std::fmt::Debug for EtcdStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdStore")
            .field("endpoint", &self.endpoint.url)
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

/// Why an etcd endpoint is refused (each names the endpoint as given).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EtcdEndpointError {
    /// Not a URL at all.
    #[error("`{endpoint}` is not a URL: {reason}")]
    NotUrl {
        /// The endpoint as given.
        endpoint: String,
        /// What the parser said.
        reason: String,
    },
    /// Another scheme than http(s), or no host.
    #[error("`{0}` is not an http(s)://host:port URL")]
    NotHttp(String),
}

/// `endpoint` as etcd-client dials it (`http://host:port`), or why it is not one.
pub fn check_endpoint(endpoint: &str) -> Result<String, EtcdEndpointError> {
    let url = if endpoint.contains("://") { endpoint.to_string() } else { format!("http://{endpoint}") };
    let uri: tonic::codegen::http::Uri = url.parse().map_err(|e: tonic::codegen::http::uri::InvalidUri| {
        EtcdEndpointError::NotUrl { endpoint: endpoint.to_string(), reason: e.to_string() }
    })?;
    if !matches!(uri.scheme_str(), Some("http" | "https")) || uri.host().is_none_or(str::is_empty) {
        return Err(EtcdEndpointError::NotHttp(endpoint.to_string()));
    }
    Ok(url)
}

fn unix_ms() -> u64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

impl EtcdStore {
    /// The record of `election_id` at `endpoint` (already checked with
    /// [`check_endpoint`]), reached through this process's client of it.
    pub(crate) fn new(endpoint: String, election_id: &str) -> EtcdStore {
        EtcdStore {
            endpoint: Endpoint::shared(endpoint),
            election: election_id.to_string(),
            key: format!("/ringleader/lease/{election_id}"),
            acquired_ms: AtomicU64::new(0),
            written: AtomicU64::new(0),
            running: RwLock::new(()),
            ended: AtomicBool::new(false),
            nospace_noted: AtomicBool::new(false),
            note: Mutex::new(None),
        }
    }

    /// This process's client of the store's endpoint.
    pub(crate) async fn client(&self) -> Result<Client, etcd_client::Error> {
        self.endpoint.client().await
    }

    /// Carry `op` to etcd and answer it; never waits longer than [`STORE_TIMEOUT`].
    pub(crate) async fn apply(&self, op: StoreOp) -> StoreReply {
        let seq = op.seq();
        let _running = self.running.read().await;
        if self.ended.load(Ordering::Acquire) {
            return StoreReply::Failed { seq };
        }
        match tokio::time::timeout(STORE_TIMEOUT, self.call(op)).await {
            Ok(Ok(reply)) => reply,
            Ok(Err(CallError::NoSpace(e))) => {
                self.endpoint.nospace(&self.election, &e.to_string());
                if !self.nospace_noted.swap(true, Ordering::Relaxed) {
                    let note = format!(
                        "etcd at {} is out of space (NOSPACE alarm): it refuses the lease record's writes; \
                         its operator must {NOSPACE_REMEDY}",
                        self.endpoint.url
                    );
                    *self.note.lock().unwrap_or_else(|e| e.into_inner()) = Some(note);
                }
                StoreReply::Failed { seq }
            }
            Ok(Err(e)) => {
                tracing::debug!(key = %self.key, endpoint = %self.endpoint.url, error = %e, "store operation failed");
                StoreReply::Failed { seq }
            }
            Err(_) => StoreReply::Failed { seq },
        }
    }

    /// Something the election should keep among its errors, once (a full etcd).
    pub(crate) fn take_note(&self) -> Option<String> {
        self.note.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// The election ended on this node: refuse further operations, wait
    /// for those in flight, then delete the key if this node wrote it last
    /// (its `mod_revision` is still that of this node's last write).
    /// Returns whether it deleted it.
    pub(crate) async fn end(&self) -> bool {
        self.ended.store(true, Ordering::Release);
        let _alone = self.running.write().await;
        let written = self.written.load(Ordering::Acquire);
        if written == 0 {
            return false;
        }
        match tokio::time::timeout(STORE_TIMEOUT, self.delete_if_written(written)).await {
            Ok(Ok(deleted)) => {
                tracing::debug!(key = %self.key, deleted, "election ended: its key deleted if this node wrote it last");
                deleted
            }
            Ok(Err(e)) => {
                tracing::info!(key = %self.key, endpoint = %self.endpoint.url, error = %e, "could not delete an ended election's key");
                false
            }
            Err(_) => {
                tracing::info!(key = %self.key, endpoint = %self.endpoint.url, "etcd did not answer the deletion of an ended election's key");
                false
            }
        }
    }

    async fn delete_if_written(&self, written: u64) -> Result<bool, etcd_client::Error> {
        let written = i64::try_from(written).unwrap_or(i64::MAX);
        let txn = Txn::new()
            .when([Compare::mod_revision(self.key.as_str(), CompareOp::Equal, written)])
            .and_then([TxnOp::delete(self.key.as_str(), None)]);
        Ok(self.client().await?.kv_client().txn(txn).await?.succeeded())
    }

    async fn call(&self, op: StoreOp) -> Result<StoreReply, CallError> {
        let mut kv = self.client().await?.kv_client();
        match op {
            StoreOp::Get { seq } => {
                let resp = kv.get(self.key.as_str(), None).await?;
                let (revision, record) = self.decode(resp.kvs().first())?;
                Ok(StoreReply::Done { seq, written: false, revision, record })
            }
            StoreOp::Put { seq, expect, record, acquire } => {
                let now = unix_ms();
                let acquired = if acquire { now } else { self.acquired_ms.load(Ordering::Relaxed) };
                let value = serde_json::to_vec(&Stored {
                    holder_identity: if record.holder == 0 { String::new() } else { record.holder.to_string() },
                    lease_duration_ms: record.duration_ms,
                    acquire_time_ms: acquired,
                    renew_time_ms: now,
                    leader_transitions: record.transitions,
                })
                .map_err(CallError::Encode)?;
                let expect = i64::try_from(expect).map_err(|_| CallError::Revision(expect))?;
                let txn = Txn::new()
                    .when([Compare::mod_revision(self.key.as_str(), CompareOp::Equal, expect)])
                    .and_then([TxnOp::put(self.key.as_str(), value, None)])
                    .or_else([TxnOp::get(self.key.as_str(), None)]);
                let resp = kv.txn(txn).await?;
                if resp.succeeded() {
                    let revision = resp.header().map_or(0, |h| h.revision()) as u64;
                    self.acquired_ms.store(acquired, Ordering::Relaxed);
                    self.written.store(revision, Ordering::Release);
                    return Ok(StoreReply::Done { seq, written: true, revision, record: Some(record) });
                }
                let read = resp.op_responses().into_iter().find_map(|r| match r {
                    TxnOpResponse::Get(g) => Some(g),
                    _ => None,
                });
                let read = read.ok_or(CallError::NoRecord)?;
                let (revision, record) = self.decode(read.kvs().first())?;
                Ok(StoreReply::Done { seq, written: false, revision, record })
            }
        }
    }

    /// The revision and record of `kv` (none: revision 0, no record).
    fn decode(&self, kv: Option<&KeyValue>) -> Result<(u64, Option<LeaseRecord>), CallError> {
        let Some(kv) = kv else { return Ok((0, None)) };
        let bad = |error| CallError::Record { key: self.key.clone(), error };
        let stored: Stored = serde_json::from_slice(kv.value()).map_err(|e| bad(RecordError::NotJson(e)))?;
        let holder = match stored.holder_identity.as_str() {
            "" => 0,
            h => h.parse().map_err(|_| bad(RecordError::Holder(h.to_string())))?,
        };
        stored.plausible().map_err(bad)?;
        self.acquired_ms.store(stored.acquire_time_ms, Ordering::Relaxed);
        let record =
            LeaseRecord { holder, duration_ms: stored.lease_duration_ms, transitions: stored.leader_transitions };
        Ok((kv.mod_revision() as u64, Some(record)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record whose `leaderTransitions` leaves no term (MAX_TERM and above, u64::MAX) is refused
    /// as implausible, one just below is taken. Before, u64::MAX overflowed the term (`+ 1`): a
    /// panic in a debug build, a wrap to term 0 in a release one.
    #[test]
    fn a_record_at_the_end_of_the_term_space_is_refused() {
        let at = |t: u64| Stored { leader_transitions: t, ..empty() };
        for t in [ringleader_core::algo::MAX_TERM, ringleader_core::algo::MAX_TERM + 1, u64::MAX] {
            assert!(matches!(at(t).plausible(), Err(RecordError::NoTerm(n)) if n == t), "{t}");
        }
        assert!(at(ringleader_core::algo::MAX_TERM - 1).plausible().is_ok());
    }

    fn empty() -> Stored {
        Stored {
            holder_identity: String::new(),
            lease_duration_ms: 0,
            acquire_time_ms: 0,
            renew_time_ms: 0,
            leader_transitions: 0,
        }
    }

    /// An endpoint without a scheme gets `http://`; one that is not a URL is refused, saying so.
    #[test]
    fn endpoints() {
        assert_eq!(check_endpoint("127.0.0.1:2379").unwrap(), "http://127.0.0.1:2379");
        assert_eq!(check_endpoint("https://etcd:2379").unwrap(), "https://etcd:2379");
        assert_eq!(check_endpoint("ftp://etcd").unwrap_err(), EtcdEndpointError::NotHttp("ftp://etcd".into()));
        assert!(check_endpoint("ftp://etcd").unwrap_err().to_string().contains("not an http"));
        assert!(matches!(check_endpoint("a b"), Err(EtcdEndpointError::NotUrl { .. })));
        assert!(check_endpoint("a b").unwrap_err().to_string().contains("not a URL"));
    }

    /// Every election that names an endpoint shares the process's one `Endpoint` (and so its
    /// client); once none uses it, it goes, and the next election gets a fresh one.
    #[test]
    fn elections_share_one_endpoint_per_url_while_any_uses_it() {
        let url = "http://127.0.0.1:1".to_string();
        let (a, b) = (EtcdStore::new(url.clone(), "a"), EtcdStore::new(url.clone(), "b"));
        let other = EtcdStore::new("http://127.0.0.1:2".into(), "a");
        assert!(Arc::ptr_eq(&a.endpoint, &b.endpoint), "one client for one endpoint");
        assert!(!Arc::ptr_eq(&a.endpoint, &other.endpoint), "another endpoint, another client");
        let weak = Arc::downgrade(&a.endpoint);
        drop((a, b));
        assert!(weak.upgrade().is_none(), "dropped with its last election");
        let c = EtcdStore::new(url, "c");
        assert_eq!(Arc::strong_count(&c.endpoint), 1, "a fresh one for the next election");
    }

    /// A full etcd's WARN goes out at the first refusal, then at most once per interval, with the
    /// count held back in between.
    #[test]
    fn nospace_warnings_are_throttled_to_one_per_interval() {
        let mut t = Throttle::default();
        let t0 = Instant::now();
        assert_eq!(t.admit(t0), Some(0), "the first goes out");
        assert_eq!(t.admit(t0 + Duration::from_millis(100)), None);
        assert_eq!(t.admit(t0 + NOSPACE_WARN_EVERY - Duration::from_millis(1)), None);
        assert_eq!(t.admit(t0 + NOSPACE_WARN_EVERY), Some(2), "one per interval, with the count held back");
        assert_eq!(t.admit(t0 + NOSPACE_WARN_EVERY + Duration::from_secs(1)), None);
    }

    /// An etcd on free loopback ports, killed and its directory removed when dropped.
    struct Etcd(std::process::Child, std::path::PathBuf, String);

    impl Drop for Etcd {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
            let _ = std::fs::remove_dir_all(&self.1);
        }
    }

    fn free_port() -> u16 {
        std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("a port")
    }

    /// Start `etcd` if it is on the PATH (Debian's etcd-server; `.ci/run` installs it).
    async fn etcd() -> Option<Etcd> {
        let found =
            std::env::var_os("PATH")?.to_str()?.split(':').any(|d| std::path::Path::new(d).join("etcd").is_file());
        if !found {
            eprintln!("note: skipping: etcd not found on PATH (apt-get install etcd-server)");
            return None;
        }
        let (client, peer) = (format!("http://127.0.0.1:{}", free_port()), format!("http://127.0.0.1:{}", free_port()));
        let dir = std::env::temp_dir().join(format!("ringleader-store-test-{}-{}", std::process::id(), free_port()));
        let child = std::process::Command::new("etcd")
            .args(["--name", "t", "--data-dir"])
            .arg(&dir)
            .args(["--listen-client-urls", &client, "--advertise-client-urls", &client])
            .args(["--listen-peer-urls", &peer, "--initial-advertise-peer-urls", &peer])
            .args(["--initial-cluster", &format!("t={peer}")])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn etcd");
        let etcd = Etcd(child, dir, client);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(mut c) = Client::connect([etcd.2.as_str()], None).await
                && c.get("ready", None).await.is_ok()
            {
                return Some(etcd);
            }
            assert!(Instant::now() < deadline, "etcd did not answer within 30 s");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    fn put(expect: u64, holder: u64) -> StoreOp {
        StoreOp::Put { seq: 1, expect, record: LeaseRecord { holder, duration_ms: 375, transitions: 0 }, acquire: true }
    }

    fn revision(reply: StoreReply) -> u64 {
        match reply {
            StoreReply::Done { written: true, revision, .. } => revision,
            other => panic!("not written: {other:?}"),
        }
    }

    /// On real etcd: at its end a node deletes the election's key only if it wrote it last, after
    /// which it takes no more operations; the node whose write came later deletes it at its own
    /// end, and a node that never wrote deletes nothing.
    #[tokio::test]
    async fn only_the_last_writer_deletes_the_key_at_its_end() {
        let Some(etcd) = etcd().await else { return };
        let (a, b, c) = (
            EtcdStore::new(etcd.2.clone(), "e-end"),
            EtcdStore::new(etcd.2.clone(), "e-end"),
            EtcdStore::new(etcd.2.clone(), "e-end"),
        );
        let first = revision(a.apply(put(0, 1)).await);
        revision(b.apply(put(first, 2)).await);
        let mut kv = a.client().await.expect("client").kv_client();
        assert!(!a.end().await, "a's write is no longer the last");
        assert_eq!(kv.get(a.key.as_str(), None).await.expect("read").kvs().len(), 1, "b's record stays");
        assert!(matches!(a.apply(StoreOp::Get { seq: 7 }).await, StoreReply::Failed { seq: 7 }), "ended: no more");
        assert!(!c.end().await, "c never wrote");
        assert!(b.end().await, "b wrote last");
        assert!(kv.get(b.key.as_str(), None).await.expect("read").kvs().is_empty(), "the key is gone");
    }

    /// etcd's NOSPACE refusal is told apart from any other failure by its code and its exact
    /// description, as etcd names it: the same words under another code, or another
    /// RESOURCE_EXHAUSTED (too many requests), are other failures.
    #[test]
    fn nospace_is_recognised() {
        let etcd = |s: tonic::Status| CallError::from(etcd_client::Error::GRpcStatus(s));
        let full = tonic::Status::resource_exhausted("etcdserver: mvcc: database space exceeded");
        assert!(matches!(etcd(full), CallError::NoSpace(_)));
        let other = tonic::Status::unavailable("etcdserver: request timed out");
        assert!(matches!(etcd(other), CallError::Etcd(_)));
        let busy = tonic::Status::resource_exhausted("etcdserver: too many requests");
        assert!(matches!(etcd(busy), CallError::Etcd(_)));
        let elsewhere = tonic::Status::unavailable("etcdserver: mvcc: database space exceeded");
        assert!(matches!(etcd(elsewhere), CallError::Etcd(_)));
    }
}
