//! What a controller that died left running on its nodes. A record that was
//! in flight when the controller stopped comes back from the history FAILED
//! ([`crate::history::INTERRUPTED`]); if it was LIVE, its nodes may still run
//! it (after kill -9 nobody told them to stop), a kept leadership with its
//! heartbeats. The restarted controller aborts every such election on every
//! node it drives, retrying a node that does not answer for about a minute;
//! a node it never reaches drops them itself once no controller has
//! listened to it for its `orphan_grace_ms`.

use std::sync::Arc;
use std::time::Duration;

use ringleader_proto::v1 as pb;
use tokio::task::JoinSet;
use tracing::{debug, info, warn};

use crate::calls::CallError;
use crate::cluster::Node;
use crate::history::INTERRUPTED;
use crate::record::{ElectionRecord, Mode, State};

/// Pauses between the tries of one node: about a minute in all, the nodes' default grace.
const RETRIES: [Duration; 6] = [
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(4),
    Duration::from_secs(8),
    Duration::from_secs(16),
    Duration::from_secs(30),
];

/// Ids per `Abort` call (a few tens of bytes each, far below the nodes' request limit).
const BATCH: usize = 1_024;

/// Was `r` a LIVE election the controller stopped in the middle of (so its nodes may still run it)?
pub(super) fn left_on_nodes(r: &ElectionRecord) -> bool {
    r.mode == Mode::Live && r.state == State::Failed && r.error.as_deref() == Some(INTERRUPTED)
}

/// Abort `ids` on every one of `nodes`, each node on its own, retrying one
/// that fails ([`RETRIES`]); logs what each node did, and a WARN naming a
/// node given up on.
pub(super) async fn abort_everywhere(nodes: Vec<Arc<Node>>, ids: Vec<String>, timeout: Duration) {
    info!(elections = ids.len(), nodes = nodes.len(), "aborting the interrupted elections on every node");
    let ids = Arc::new(ids);
    let mut calls = JoinSet::new();
    for node in nodes {
        calls.spawn(abort_on(node, ids.clone(), timeout));
    }
    while calls.join_next().await.is_some() {}
}

/// [`abort_everywhere`] for one node.
async fn abort_on(node: Arc<Node>, ids: Arc<Vec<String>>, timeout: Duration) {
    let mut pauses = RETRIES.iter();
    loop {
        let error = match abort_once(&node, &ids, timeout).await {
            Ok(()) => {
                info!(node = %node.name(), elections = ids.len(), "aborted the interrupted elections on the node");
                return;
            }
            Err(e) => e,
        };
        let Some(pause) = pauses.next() else {
            warn!(
                node = %node.name(), address = %node.address(), elections = ids.len(), error = %error,
                "could not abort the interrupted elections on {}: it drops them itself once no controller has \
                 listened to it for its node.orphan_grace_ms",
                node.name()
            );
            return;
        };
        debug!(node = %node.name(), error = %error, retry_in_ms = pause.as_millis() as u64, "Abort failed");
        tokio::time::sleep(*pause).await;
    }
}

/// One try: every id, in batches, each call within `timeout`.
async fn abort_once(node: &Node, ids: &[String], timeout: Duration) -> Result<(), CallError> {
    let mut client = node.client();
    for batch in ids.chunks(BATCH) {
        let req = pb::AbortRequest { election_ids: batch.to_vec(), ..Default::default() };
        CallError::within(timeout, client.abort(req)).await?;
    }
    Ok(())
}
