//! The Agent calls a LIVE election makes to its nodes (Prepare, Start,
//! Status, Messages, Abort), concurrently and each within the RPC timeout,
//! and the reading of a node's answer as a decision.

use std::sync::Arc;
use std::time::Duration;

use ringleader_core::algo::{Decision, Role};
use ringleader_proto::v1 as pb;
use tokio::task::JoinSet;
use tracing::warn;

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
pub(super) async fn rejoin(node: &Node, mut request: pb::PrepareRequest, timeout: Duration) -> Result<bool, String> {
    let mut client = node.client();
    let election_id = request.election_id.clone();
    let known = tokio::time::timeout(timeout, client.status(pb::StatusRequest { election_id: election_id.clone() }))
        .await
        .map_err(|_| format!("Status on {}: timed out", node.name()))?;
    match known {
        Ok(_) => return Ok(false),
        Err(s) if s.code() == tonic::Code::NotFound => {}
        Err(s) => return Err(format!("Status on {}: {}", node.name(), s.message())),
    }
    request.initiator = true;
    let call = async {
        client.prepare(request).await?;
        client.start(pb::StartRequest { election_id }).await
    };
    match tokio::time::timeout(timeout, call).await {
        Ok(Ok(_)) => Ok(true),
        Ok(Err(s)) => Err(format!("Prepare/Start on {}: {}", node.name(), s.message())),
        Err(_) => Err(format!("Prepare/Start on {}: timed out", node.name())),
    }
}

/// A node's decision from its protobuf role and leader id.
pub(super) fn decision_of(role: i32, leader: u64) -> Option<Decision> {
    match pb::Role::try_from(role).ok()? {
        pb::Role::Leader => Some(Decision { role: Role::Leader, leader }),
        pb::Role::Follower => Some(Decision { role: Role::Follower, leader }),
        pb::Role::Undecided | pb::Role::Unspecified => None,
    }
}

/// A call to a node that failed: the node answered with a gRPC code, or did
/// not answer in time. What the caller does depends on which, so it is a
/// type, not text to search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum CallError {
    /// The node refused: its code and message.
    Refused(tonic::Code, String),
    /// No answer within the RPC timeout (ms).
    Silent(u128),
}

impl CallError {
    /// The node answered that it does not hold the election.
    pub(super) fn not_found(&self) -> bool {
        matches!(self, CallError::Refused(tonic::Code::NotFound, _))
    }
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Refused(code, message) => write!(f, "{code:?}: {message}"),
            CallError::Silent(ms) => write!(f, "no answer within {ms} ms"),
        }
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
        set.spawn(async move {
            let r = match tokio::time::timeout(timeout, client.status(req)).await {
                Ok(Ok(s)) => Ok(s.into_inner()),
                Ok(Err(status)) => Err(CallError::Refused(status.code(), status.message().to_string())),
                Err(_) => Err(CallError::Silent(timeout.as_millis())),
            };
            (i, r)
        });
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
    /// A node's refusal is told apart by its code, not by searching its text: NotFound says the
    /// node does not hold the election, whatever the message; other codes and silence do not.
    #[test]
    fn a_call_error_is_known_by_its_code() {
        use super::CallError;
        assert!(CallError::Refused(tonic::Code::NotFound, "no election e1".into()).not_found());
        assert!(!CallError::Refused(tonic::Code::Unavailable, "NotFound in the text".into()).not_found());
        assert!(!CallError::Silent(500).not_found());
        assert_eq!(CallError::Silent(500).to_string(), "no answer within 500 ms");
        assert_eq!(CallError::Refused(tonic::Code::NotFound, "gone".into()).to_string(), "NotFound: gone");
    }

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
