//! Node lifecycle: shutdown with open links, reconnection after a peer restarts, unreachable peers.

use std::time::Duration;

use ringleader_core::topology::TopologyKind;
use ringleader_proto::v1 as pb;

use crate::fixtures::*;

const FINISH: Duration = Duration::from_secs(10);

/// A node with open incoming and outgoing links and an open Events stream stops promptly (well within the grace
/// period), and its Events stream ends.
#[tokio::test]
async fn shutdown_closes_streams_and_returns_promptly() {
    let mut nodes = start_nodes(3).await;
    let mut events = nodes[0].agent.events(pb::EventsRequest::default()).await.unwrap().into_inner();
    let plan = ring_plan("s", "as-far", TopologyKind::RingBi, &[1, 2, 3], &[0, 1, 2], pb::Rule::Max, &nodes);
    prepare_all(&mut nodes, plan).await;
    start_all(&mut nodes, "s", &[0, 1, 2]).await;
    wait_finished(&mut nodes, "s", FINISH).await;
    assert!(events.message().await.unwrap().is_some());

    let took = nodes[0].stop().await;
    assert!(took < Duration::from_secs(3), "shutdown took {took:?}");
    let end = tokio::time::timeout(Duration::from_secs(3), events.message()).await.expect("events stream ended");
    assert!(!matches!(end, Ok(Some(_))), "{end:?}");
    for n in nodes.iter_mut().skip(1) {
        let took = n.stop().await;
        assert!(took < Duration::from_secs(3), "shutdown took {took:?}");
    }
}

/// When a peer restarts on the same address, the link to it is reopened on the next send and a new election runs.
#[tokio::test]
async fn link_reconnects_after_the_peer_restarts() {
    let mut nodes = start_nodes(2).await;
    let plan = ring_plan("before", "as-far", TopologyKind::RingUni, &[2, 1], &[0, 1], pb::Rule::Max, &nodes);
    prepare_all(&mut nodes, plan).await;
    start_all(&mut nodes, "before", &[0, 1]).await;
    assert_elected(&wait_finished(&mut nodes, "before", FINISH).await, 2);

    tracing::info!("--- restart node 1 on the same address");
    let addr = nodes[1].address.trim_start_matches("http://").to_string();
    nodes[1].stop().await;
    nodes[1] = TestNode::start_on("node-1", &addr).await;
    // Let node 0 notice that its link ended.
    tokio::time::sleep(Duration::from_millis(200)).await;

    let plan = ring_plan("after", "as-far", TopologyKind::RingUni, &[2, 1], &[0, 1], pb::Rule::Max, &nodes);
    prepare_all(&mut nodes, plan).await;
    start_all(&mut nodes, "after", &[0, 1]).await;
    let all = wait_finished(&mut nodes, "after", FINISH).await;
    assert_elected(&all, 2);
    assert_eq!(counts(&all), (3, 2));
}

/// A port leading to an address where nothing listens: the send is lost, recorded in the election's errors, and
/// the node carries on.
#[tokio::test]
async fn unreachable_peer_loses_the_message_without_harm() {
    let mut nodes = start_nodes(1).await;
    // Reserve a port, then free it so nothing listens there.
    let dead = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap().local_addr().unwrap();
    let dead = format!("http://{dead}");
    let req = lone_initiator("u", &dead);
    nodes[0].agent.prepare(req).await.unwrap();
    nodes[0].agent.start(pb::StartRequest { election_id: "u".into() }).await.unwrap();
    let deadline = tokio::time::Instant::now() + FINISH;
    loop {
        let st = nodes[0].agent.status(pb::StatusRequest { election_id: "u".into() }).await.unwrap().into_inner();
        if let Some(e) = st.errors.first() {
            assert!(e.contains(&dead) && e.contains("1 message(s) lost"), "{e}");
            assert_eq!(st.election_messages, 1, "the send is still counted, as in the simulator");
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "loss not recorded: {st:#?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    nodes[0].agent.info(pb::InfoRequest {}).await.expect("node still serves");
}
