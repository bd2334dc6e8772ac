//! The Agent calls a LIVE election makes to its nodes (Prepare, Start,
//! Status, Messages, Abort), concurrently and each within the RPC timeout,
//! and the reading of a node's answer as a decision.

use std::sync::Arc;
use std::time::Duration;

use ringleader_core::algo::{Decision, Role};
use ringleader_proto::v1 as pb;
use tokio::task::JoinSet;
use tracing::warn;

pub(super) use crate::calls::CallError;
use crate::calls::NodeFailure;
use crate::cluster::{Node, all_ok};

/// Forget the election on every node (best effort: failures are logged).
pub(super) async fn abort(nodes: &[Arc<Node>], election_id: &str, timeout: Duration) {
    let calls = nodes.iter().map(|node| {
        let mut client = node.client();
        let req = pb::AbortRequest { election_id: election_id.to_string(), ..Default::default() };
        (node.clone(), async move { client.abort(req).await.map(|_| ()) })
    });
    if let Err(e) = all_ok(calls, timeout, "Abort").await {
        warn!(election = %election_id, error = %e, "could not abort the election everywhere");
    }
}

/// Bring a restarted node back into a kept leadership: if it no longer knows
/// the election (a new process), prepare it with `request` as an initiator
/// and start it, a new incarnation as after a recovered crash. `Ok(false)`:
/// it knew the election (nothing done).
pub(super) async fn rejoin(
    node: &Node,
    mut request: pb::PrepareRequest,
    timeout: Duration,
) -> Result<bool, NodeFailure> {
    let failed =
        |what, error| NodeFailure::Call { what, node: node.name(), address: node.address().to_string(), error };
    let mut client = node.client();
    let election_id = request.election_id.clone();
    let status = pb::StatusRequest { election_id: election_id.clone() };
    match CallError::within(timeout, client.status(status)).await {
        Ok(_) => return Ok(false),
        Err(e) if e.not_found() => {}
        Err(e) => return Err(failed("Status", e)),
    }
    request.initiator = true;
    let call = async {
        client.prepare(request).await?;
        client.start(pb::StartRequest { election_id }).await
    };
    CallError::within(timeout, call).await.map(|_| true).map_err(|e| failed("Prepare/Start", e))
}

/// A node's decision from its protobuf role and leader id.
pub(super) fn decision_of(role: i32, leader: u64) -> Option<Decision> {
    match pb::Role::try_from(role).ok()? {
        pb::Role::Leader => Some(Decision { role: Role::Leader, leader }),
        pb::Role::Follower => Some(Decision { role: Role::Follower, leader }),
        pb::Role::Undecided | pb::Role::Unspecified => None,
    }
}

/// `Status` of the election at the nodes of `positions`, concurrently, in position order.
pub(super) async fn status_of(
    nodes: &[Arc<Node>],
    positions: &[usize],
    election_id: &str,
    timeout: Duration,
) -> Vec<(usize, Result<pb::NodeElectionStatus, CallError>)> {
    let mut set = JoinSet::new();
    for &i in positions {
        let mut client = nodes[i].client();
        let req = pb::StatusRequest { election_id: election_id.to_string() };
        set.spawn(async move { (i, CallError::within(timeout, client.status(req)).await.map(|s| s.into_inner())) });
    }
    let mut out = Vec::with_capacity(positions.len());
    while let Some(joined) = set.join_next().await {
        if let Ok(r) = joined {
            out.push(r);
        }
    }
    out.sort_by_key(|(i, _)| *i);
    out
}

/// The message logs of the election at every node, in position order (`None`: no answer).
pub(super) async fn message_logs(
    nodes: &[Arc<Node>],
    election_id: &str,
    timeout: Duration,
) -> Vec<Option<pb::MessageLog>> {
    let mut set = JoinSet::new();
    for (i, node) in nodes.iter().enumerate() {
        let mut client = node.client();
        let req = pb::MessagesRequest { election_id: election_id.to_string() };
        set.spawn(async move { (i, tokio::time::timeout(timeout, client.messages(req)).await) });
    }
    let mut logs: Vec<Option<pb::MessageLog>> = vec![None; nodes.len()];
    while let Some(Ok((i, r))) = set.join_next().await {
        logs[i] = r.ok().and_then(|r| r.ok()).map(|r| r.into_inner());
    }
    logs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Node roles map to decisions; undecided and unknown roles do not.
    #[test]
    fn roles() {
        assert_eq!(decision_of(pb::Role::Leader as i32, 7), Some(Decision { role: Role::Leader, leader: 7 }));
        assert_eq!(decision_of(pb::Role::Follower as i32, 7), Some(Decision { role: Role::Follower, leader: 7 }));
        assert_eq!(decision_of(pb::Role::Undecided as i32, 0), None);
        assert_eq!(decision_of(99, 0), None);
    }
}
