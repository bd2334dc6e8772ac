//! Elections nobody drives any more: a node whose controller's event stream
//! has been gone for longer than its grace aborts what it holds.

use std::time::{Duration, Instant};

use ringleader_core::topology::TopologyKind;
use ringleader_proto::v1 as pb;
use tonic::Code;

use crate::fixtures::*;

/// How many elections `node` holds now.
async fn held(node: &mut TestNode) -> u64 {
    node.agent.info(pb::InfoRequest {}).await.expect("info").into_inner().elections
}

/// Two nodes keep a bully leadership and hold a prepared one-shot election, each with a
/// controller's event stream open (`reports: true`); node 0 has a grace of 600 ms, node 1 none
/// (0: never). While the streams are open nothing is dropped, even after twice the grace. Once
/// they close, node 0 aborts both elections after the grace and not before (its Status answers
/// NotFound), while node 1 still holds both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elections_are_dropped_once_no_controller_listened_for_the_grace() {
    let grace = Duration::from_millis(600);
    let mut nodes = vec![
        TestNode::start_tuned("node-0", "127.0.0.1:0", |c| c.orphan_grace = grace).await,
        TestNode::start_tuned("node-1", "127.0.0.1:0", |c| c.orphan_grace = Duration::ZERO).await,
    ];
    let mut streams = Vec::new();
    for n in &mut nodes {
        streams.push(
            n.agent
                .events(pb::EventsRequest { reports: true, ..Default::default() })
                .await
                .expect("events")
                .into_inner(),
        );
    }
    let mut kept = ring_plan("kept", "bully", TopologyKind::Complete, &[1, 2], &[0, 1], pb::Rule::Max, &nodes);
    for req in &mut kept {
        req.keep_leader = true;
    }
    prepare_all(&mut nodes, kept).await;
    start_all(&mut nodes, "kept", &[0, 1]).await;
    let once = ring_plan("once", "as-far", TopologyKind::RingUni, &[1, 2], &[], pb::Rule::Max, &nodes);
    prepare_all(&mut nodes, once).await;

    tracing::info!("--- the controller listens: nothing is dropped");
    tokio::time::sleep(grace * 2).await;
    for n in &mut nodes {
        assert_eq!(held(n).await, 2);
    }

    tracing::info!("--- the controller's streams close");
    drop(streams);
    let closed = Instant::now();
    tokio::time::sleep(grace / 2).await;
    assert_eq!(held(&mut nodes[0]).await, 2, "not before the grace");
    loop {
        if held(&mut nodes[0]).await == 0 {
            break;
        }
        assert!(
            closed.elapsed() < grace + Duration::from_secs(5),
            "still held {:?} after the streams closed",
            closed.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let took = closed.elapsed();
    assert!(took >= grace, "dropped after {took:?}, within the grace of {grace:?}");
    for id in ["kept", "once"] {
        let gone = nodes[0].agent.status(pb::StatusRequest { election_id: id.into() }).await.unwrap_err();
        assert_eq!(gone.code(), Code::NotFound, "{id}: {gone:?}");
    }
    assert_eq!(held(&mut nodes[1]).await, 2, "a grace of 0 never drops");
    for n in &mut nodes {
        n.stop().await;
    }
}
