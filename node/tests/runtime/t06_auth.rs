//! A node with agent and peer tokens takes Agent calls only with the agent token and Peer links only with
//! the peer token.

use ringleader_node::auth::{Bearer, Secret};
use ringleader_node::runtime::{self, NodeConfig};
use ringleader_proto::v1::{self as pb, agent_client::AgentClient, peer_client::PeerClient};
use tonic::Code;

use crate::fixtures::channel;

/// Agent calls without a token are UNAUTHENTICATED, with the peer token PERMISSION_DENIED, with the agent
/// token answered; a Peer link without the peer token is refused, with it accepted.
#[tokio::test]
async fn node_checks_agent_and_peer_tokens() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = format!("http://{}", listener.local_addr().unwrap());
    let (agent_token, peer_token) = (Secret::new("agent-token-1"), Secret::new("peer-token-1"));
    let cfg = NodeConfig {
        name: "guarded".into(),
        advertise: address.clone(),
        agent_token: Some(agent_token.clone()),
        peer_token: Some(peer_token.clone()),
        ..NodeConfig::default()
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(runtime::serve(listener, cfg, async move {
        let _ = stopped.await;
    }));
    let ch = channel(&address).await;

    let info = |secret: Option<Secret>| {
        let mut client = AgentClient::with_interceptor(ch.clone(), Bearer(secret));
        async move { client.info(pb::InfoRequest {}).await }
    };
    assert_eq!(info(None).await.unwrap_err().code(), Code::Unauthenticated);
    assert_eq!(info(Some(peer_token.clone())).await.unwrap_err().code(), Code::PermissionDenied);
    assert_eq!(info(Some(agent_token.clone())).await.unwrap().into_inner().name, "guarded");

    let link = |secret: Option<Secret>| {
        let mut client = PeerClient::with_interceptor(ch.clone(), Bearer(secret));
        async move { client.link(tokio_stream::empty::<pb::Envelope>()).await.map(|_| ()) }
    };
    assert_eq!(link(None).await.unwrap_err().code(), Code::Unauthenticated);
    assert_eq!(link(Some(agent_token)).await.unwrap_err().code(), Code::PermissionDenied);
    link(Some(peer_token)).await.unwrap();

    let _ = stop.send(());
    server.await.unwrap().unwrap();
}
