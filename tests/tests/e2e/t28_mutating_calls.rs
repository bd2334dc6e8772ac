//! Which Controller calls need the write token (`auth.token`), as the server
//! enforces it, against the three places that list them for users: the
//! security table of docs/architecture.md, README's section on tokens and the
//! header of node/src/auth.rs.

use std::collections::BTreeSet;

use ringleader_node::auth::Secret;
use ringleader_proto::v1 as pb;
use ringleader_tests::{TestController, test_config, workspace_root};
use tonic::Code;

const WRITE: &str = "write-token-t26";
const READ: &str = "read-token-t26";

/// `message` carrying the read-only token.
fn read_only<T>(message: T) -> tonic::Request<T> {
    let mut r = tonic::Request::new(message);
    r.metadata_mut().insert("authorization", Secret::new(READ).bearer());
    r
}

/// The backticked call names (`StartElection`, ...) in `text`.
fn calls_named(text: &str) -> BTreeSet<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|w| w.chars().next().is_some_and(|c| c.is_ascii_uppercase()) && w.chars().all(char::is_alphanumeric))
        .map(str::to_string)
        .collect()
}

/// The text of `path` (from the workspace root) between `from` and the next `to` after it.
fn between(path: &str, from: &str, to: &str) -> String {
    let text = std::fs::read_to_string(workspace_root().join(path)).unwrap();
    let start = text.find(from).unwrap_or_else(|| panic!("{path} has no `{from}`")) + from.len();
    let len = text[start..].find(to).unwrap_or_else(|| panic!("{path}: no `{to}` after `{from}`"));
    text[start..start + len].to_string()
}

/// Every Controller call made with the read-only token: those refused PERMISSION_DENIED are the mutating
/// ones (StartElection, StopElection, InjectFault, ClearFaults, CompareAlgorithms, CheckAlgorithm), and
/// docs/architecture.md's security table, docs/operations.md, docs/api.md and node/src/auth.rs each name
/// exactly those. Failed before the table and auth.rs were fixed: both left out CheckAlgorithm.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_docs_name_every_call_that_needs_the_write_token() {
    let mut config = test_config(2);
    config.auth.token = Some(WRITE.into());
    config.auth.read_token = Some(READ.into());
    let ctl = TestController::start_with(config).await;
    let mut c = ctl.client();
    let answers: Vec<(&str, Result<(), tonic::Status>)> = vec![
        ("ListAlgorithms", c.list_algorithms(read_only(pb::ListAlgorithmsRequest::default())).await.map(drop)),
        ("GetCluster", c.get_cluster(read_only(pb::GetClusterRequest::default())).await.map(drop)),
        ("StartElection", c.start_election(read_only(pb::StartElectionRequest::default())).await.map(drop)),
        ("GetElection", c.get_election(read_only(pb::GetElectionRequest::default())).await.map(drop)),
        ("ListElections", c.list_elections(read_only(pb::ListElectionsRequest::default())).await.map(drop)),
        ("WatchElection", c.watch_election(read_only(pb::WatchElectionRequest::default())).await.map(drop)),
        ("GetLeader", c.get_leader(read_only(pb::GetLeaderRequest::default())).await.map(drop)),
        ("StopElection", c.stop_election(read_only(pb::StopElectionRequest::default())).await.map(drop)),
        ("CompareAlgorithms", c.compare_algorithms(read_only(pb::CompareRequest::default())).await.map(drop)),
        ("CheckAlgorithm", c.check_algorithm(read_only(pb::CheckRequest::default())).await.map(drop)),
        ("InjectFault", c.inject_fault(read_only(pb::InjectFaultRequest::default())).await.map(drop)),
        ("ListFaults", c.list_faults(read_only(pb::ListFaultsRequest::default())).await.map(drop)),
        ("ClearFaults", c.clear_faults(read_only(pb::ClearFaultsRequest::default())).await.map(drop)),
    ];
    let mutating: BTreeSet<String> = answers
        .iter()
        .filter(|(_, r)| r.as_ref().is_err_and(|s| s.code() == Code::PermissionDenied))
        .map(|(name, _)| name.to_string())
        .collect();
    assert_eq!(mutating.len(), 6, "{mutating:?}");
    let places = [
        ("docs/architecture.md", "`ringleader.v1.Controller` mutating calls:", "|"),
        ("docs/operations.md", "calls that change state (", ")"),
        ("docs/api.md", "Calls that change state (", ")"),
        ("node/src/auth.rs", "the controller's mutating calls (", ")"),
    ];
    for (path, from, to) in places {
        assert_eq!(calls_named(&between(path, from, to)), mutating, "{path} lists the calls that need auth.token");
    }
    ctl.stop().await;
}
