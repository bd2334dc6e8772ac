//! The embedded cluster behind a controller that requires a token:
//! its node ports take nothing from a caller without the
//! per-run credentials, while the controller's own elections still run.

use std::time::Duration;

use ringleader_node::auth::Secret;
use ringleader_proto::v1::{self as pb, agent_client::AgentClient, peer_client::PeerClient};
use ringleader_tests::{TestController, assert_correct, election, test_config};
use tonic::Code;

const TOKEN: &str = "s3cret-token";

/// `request` carrying the controller's token.
fn authorized<T>(message: T) -> tonic::Request<T> {
    let mut r = tonic::Request::new(message);
    r.metadata_mut().insert("authorization", Secret::new(TOKEN).bearer());
    r
}

/// Refused for missing or wrong credentials (never served).
fn refused(s: &tonic::Status) -> bool {
    matches!(s.code(), Code::Unauthenticated | Code::PermissionDenied)
}

/// With only `auth.token` set, every Agent call and every peer link to an embedded node is refused
/// without credentials, and also with the controller's own token (the nodes' credentials are
/// generated per run and differ); the controller's elections still run and are correct, and
/// GetCluster shows addresses on loopback only. Fails on the code before the fix: SetFaults on a
/// node succeeded without any credentials.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_nodes_require_credentials_when_the_controller_does() {
    let mut config = test_config(4);
    config.auth.token = Some(TOKEN.into());
    let ctl = TestController::start_with(config).await;
    let mut client = ctl.client();
    let cluster = client.get_cluster(pb::GetClusterRequest {}).await.unwrap().into_inner();
    assert_eq!(cluster.nodes.len(), 4);
    for node in &cluster.nodes {
        assert!(node.address.starts_with("http://127.0.0.1:"), "{node:?}");
        let mut agent = AgentClient::connect(node.address.clone()).await.unwrap();
        let calls: [(&str, Result<(), tonic::Status>); 7] = [
            (
                "SetFaults",
                agent.set_faults(pb::SetFaultsRequest { crashed: true, ..Default::default() }).await.map(drop),
            ),
            (
                "ChangeFaults",
                agent
                    .change_faults(pb::ChangeFaultsRequest { crashed: Some(true), ..Default::default() })
                    .await
                    .map(drop),
            ),
            ("Prepare", agent.prepare(pb::PrepareRequest::default()).await.map(drop)),
            ("Start", agent.start(pb::StartRequest::default()).await.map(drop)),
            ("Abort", agent.abort(pb::AbortRequest::default()).await.map(drop)),
            ("Status", agent.status(pb::StatusRequest::default()).await.map(drop)),
            ("Events", agent.events(pb::EventsRequest::default()).await.map(drop)),
        ];
        for (name, result) in calls {
            let e = result.expect_err(name);
            assert_eq!(e.code(), Code::Unauthenticated, "{name} on {}: {e:?}", node.address);
        }
        let with_controller_token = agent.set_faults(authorized(pb::SetFaultsRequest::default())).await.unwrap_err();
        assert!(refused(&with_controller_token), "{with_controller_token:?}");
        let mut peer = PeerClient::connect(node.address.clone()).await.unwrap();
        let forged = pb::Envelope { election_id: "forged".into(), ..Default::default() };
        let link = peer.link(tokio_stream::iter([forged])).await;
        let e = match link {
            Err(e) => e,
            Ok(mut replies) => tokio::time::timeout(Duration::from_secs(5), replies.get_mut().message())
                .await
                .expect("the link ends")
                .expect_err("no reply to a forged envelope"),
        };
        assert!(refused(&e), "Peer.Link on {}: {e:?}", node.address);
    }
    let e = client.start_election(authorized(election("as-far"))).await.unwrap().into_inner();
    assert_correct(&e);
    ctl.stop().await;
}
