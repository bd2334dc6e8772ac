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

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use etcd_client::{Client, Compare, CompareOp, ConnectOptions, KeyValue, Txn, TxnOp, TxnOpResponse};
use ringleader_core::algo::{LeaseRecord, StoreOp, StoreReply};
use serde::{Deserialize, Serialize};
use tokio::sync::OnceCell;

/// The longest a store operation may take before it counts as failed (the
/// algorithm gives up on it sooner, after its RetryPeriod; this bounds the
/// tasks left waiting on an unreachable etcd).
pub(crate) const STORE_TIMEOUT: Duration = Duration::from_secs(5);

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

/// One election's record in etcd.
pub(crate) struct EtcdStore {
    endpoint: String,
    key: String,
    /// Connected on first use (a `Prepare` does not wait for etcd).
    client: OnceCell<Client>,
    /// The current holder's acquire time, as last read or written here (a
    /// renewal keeps it).
    acquired_ms: AtomicU64,
}

impl std::fmt::Debug for EtcdStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdStore").field("endpoint", &self.endpoint).field("key", &self.key).finish_non_exhaustive()
    }
}

/// `endpoint` as etcd-client dials it (`http://host:port`), or why it is not one.
pub fn check_endpoint(endpoint: &str) -> Result<String, String> {
    let url = if endpoint.contains("://") { endpoint.to_string() } else { format!("http://{endpoint}") };
    let uri: tonic::codegen::http::Uri = url.parse().map_err(|e| format!("`{endpoint}` is not a URL: {e}"))?;
    if !matches!(uri.scheme_str(), Some("http" | "https")) || uri.host().is_none_or(str::is_empty) {
        return Err(format!("`{endpoint}` is not an http(s)://host:port URL"));
    }
    Ok(url)
}

fn unix_ms() -> u64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

impl EtcdStore {
    /// The record of `election_id` at `endpoint` (already checked with [`check_endpoint`]).
    pub(crate) fn new(endpoint: String, election_id: &str) -> EtcdStore {
        EtcdStore {
            endpoint,
            key: format!("/ringleader/lease/{election_id}"),
            client: OnceCell::new(),
            acquired_ms: AtomicU64::new(0),
        }
    }

    /// Carry `op` to etcd and answer it; never waits longer than [`STORE_TIMEOUT`].
    pub(crate) async fn apply(&self, op: StoreOp) -> StoreReply {
        let seq = op.seq();
        match tokio::time::timeout(STORE_TIMEOUT, self.call(op)).await {
            Ok(Ok(reply)) => reply,
            Ok(Err(e)) => {
                tracing::debug!(key = %self.key, endpoint = %self.endpoint, error = %e, "store operation failed");
                StoreReply::Failed { seq }
            }
            Err(_) => StoreReply::Failed { seq },
        }
    }

    async fn client(&self) -> Result<Client, etcd_client::Error> {
        let options = ConnectOptions::new().with_connect_timeout(Duration::from_secs(2)).with_timeout(STORE_TIMEOUT);
        let client = self.client.get_or_try_init(|| Client::connect([self.endpoint.as_str()], Some(options))).await?;
        Ok(client.clone())
    }

    async fn call(&self, op: StoreOp) -> Result<StoreReply, String> {
        let mut kv = self.client().await.map_err(|e| e.to_string())?.kv_client();
        match op {
            StoreOp::Get { seq } => {
                let resp = kv.get(self.key.as_str(), None).await.map_err(|e| e.to_string())?;
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
                .map_err(|e| e.to_string())?;
                let expect = i64::try_from(expect).map_err(|_| format!("revision {expect} out of range"))?;
                let txn = Txn::new()
                    .when([Compare::mod_revision(self.key.as_str(), CompareOp::Equal, expect)])
                    .and_then([TxnOp::put(self.key.as_str(), value, None)])
                    .or_else([TxnOp::get(self.key.as_str(), None)]);
                let resp = kv.txn(txn).await.map_err(|e| e.to_string())?;
                if resp.succeeded() {
                    let revision = resp.header().map_or(0, |h| h.revision()) as u64;
                    self.acquired_ms.store(acquired, Ordering::Relaxed);
                    return Ok(StoreReply::Done { seq, written: true, revision, record: Some(record) });
                }
                let read = resp.op_responses().into_iter().find_map(|r| match r {
                    TxnOpResponse::Get(g) => Some(g),
                    _ => None,
                });
                let read = read.ok_or("a lost compare-and-swap came back without the record")?;
                let (revision, record) = self.decode(read.kvs().first())?;
                Ok(StoreReply::Done { seq, written: false, revision, record })
            }
        }
    }

    /// The revision and record of `kv` (none: revision 0, no record).
    fn decode(&self, kv: Option<&KeyValue>) -> Result<(u64, Option<LeaseRecord>), String> {
        let Some(kv) = kv else { return Ok((0, None)) };
        let stored: Stored = serde_json::from_slice(kv.value())
            .map_err(|e| format!("{} does not hold a lease record: {e}", self.key))?;
        let holder = match stored.holder_identity.as_str() {
            "" => 0,
            h => h.parse().map_err(|_| format!("{}: holder `{h}` is not an id", self.key))?,
        };
        self.acquired_ms.store(stored.acquire_time_ms, Ordering::Relaxed);
        let record =
            LeaseRecord { holder, duration_ms: stored.lease_duration_ms, transitions: stored.leader_transitions };
        Ok((kv.mod_revision() as u64, Some(record)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An endpoint without a scheme gets `http://`; one that is not a URL is refused, saying so.
    #[test]
    fn endpoints() {
        assert_eq!(check_endpoint("127.0.0.1:2379").unwrap(), "http://127.0.0.1:2379");
        assert_eq!(check_endpoint("https://etcd:2379").unwrap(), "https://etcd:2379");
        assert!(check_endpoint("ftp://etcd").unwrap_err().contains("not an http"));
        assert!(check_endpoint("a b").unwrap_err().contains("not a URL"));
    }
}
