//! A node's limits hold against a busy or hostile world: it refuses elections beyond its table's
//! size, ends a link that sends an oversized envelope, holds only so many messages for later, and a
//! peer that takes nothing stalls no other election.

use std::time::Duration;

use ringleader_core::algo::{MAX_HELD, Msg};
use ringleader_core::topology::TopologyKind;
use ringleader_node::runtime::{MAX_ELECTIONS, MAX_ENVELOPE};
use ringleader_proto::v1::{self as pb, peer_client::PeerClient};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Code;

use crate::fixtures::*;

/// With MAX_ELECTIONS elections installed, one more Prepare is RESOURCE_EXHAUSTED with a message that
/// gives the limit, and nothing is installed; once one is aborted, the next Prepare is taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepare_beyond_the_election_limit_is_resource_exhausted() {
    let mut nodes = start_nodes(2).await;
    let peer = nodes[1].address.clone();
    for i in 0..MAX_ELECTIONS {
        nodes[0]
            .agent
            .prepare(lone_initiator(&format!("e{i}"), &peer))
            .await
            .unwrap_or_else(|s| panic!("prepare e{i}: {s:?}"));
    }
    let full = nodes[0].agent.prepare(lone_initiator("one-too-many", &peer)).await.unwrap_err();
    assert_eq!(full.code(), Code::ResourceExhausted, "{full:?}");
    assert!(full.message().contains(&MAX_ELECTIONS.to_string()), "the message gives the limit: {full:?}");
    let missing = nodes[0].agent.status(pb::StatusRequest { election_id: "one-too-many".into() }).await.unwrap_err();
    assert_eq!(missing.code(), Code::NotFound, "a refused Prepare installs nothing: {missing:?}");

    nodes[0].agent.abort(pb::AbortRequest { election_id: "e0".into(), ..Default::default() }).await.unwrap();
    nodes[0].agent.prepare(lone_initiator("one-too-many", &peer)).await.unwrap();
}

/// An envelope larger than MAX_ENVELOPE ends that link stream with a status (the node never buffers
/// it whole), while the node keeps serving: a new link's envelope reaches its election.
#[tokio::test]
async fn an_oversized_envelope_ends_only_its_stream() {
    let mut nodes = start_nodes(2).await;
    let plan = ring_plan("r", "as-far", TopologyKind::RingUni, &[1, 2], &[], pb::Rule::Max, &nodes);
    nodes[0].agent.prepare(plan[0].clone()).await.unwrap();
    let envelope = |election_id: String| pb::Envelope {
        election_id,
        sender: 1,
        port: 0,
        causal_time: 1,
        body: Some(Msg::Election { id: 2, stage: 0, hops: 0 }.into()),
        ..Default::default()
    };

    let (tx, rx) = mpsc::channel(4);
    let mut peer = PeerClient::new(channel(&nodes[0].address).await);
    let mut replies = peer.link(ReceiverStream::new(rx)).await.unwrap().into_inner();
    tx.send(envelope("r".repeat(MAX_ENVELOPE + 1))).await.unwrap();
    let ended =
        tokio::time::timeout(Duration::from_secs(5), replies.message()).await.expect("the stream ends promptly");
    let status = ended.expect_err("an oversized envelope ends the stream with a status");
    assert_eq!(status.code(), Code::OutOfRange, "{status:?}");

    let (tx, rx) = mpsc::channel(4);
    let _replies = peer.link(ReceiverStream::new(rx)).await.unwrap().into_inner();
    tx.send(envelope("r".into())).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let st = nodes[0].agent.status(pb::StatusRequest { election_id: "r".into() }).await.unwrap().into_inner();
        if st.received == 1 {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the valid envelope never arrived: {st:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A peer that accepts connections and never reads or answers (a hung process), and elections sending
/// to it, do not hold up the node: a ring election across it and two healthy nodes, started after,
/// finishes with the right leader, and the stuck elections still answer Status.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_that_takes_nothing_stalls_no_other_election() {
    let black_hole = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hole = format!("http://{}", black_hole.local_addr().unwrap());
    // Accept and hold every connection, reading nothing.
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = black_hole.accept().await {
            open.push(socket);
        }
    });
    let mut nodes = start_nodes(3).await;
    for i in 0..50 {
        let id = format!("stuck-{i}");
        nodes[0].agent.prepare(lone_initiator(&id, &hole)).await.unwrap();
        nodes[0].agent.start(pb::StartRequest { election_id: id }).await.unwrap();
    }

    let plan = ring_plan("ok", "stages", TopologyKind::RingBi, &[3, 1, 2], &[0, 1, 2], pb::Rule::Max, &nodes);
    prepare_all(&mut nodes, plan).await;
    start_all(&mut nodes, "ok", &[0, 1, 2]).await;
    let all = wait_finished(&mut nodes, "ok", Duration::from_secs(20)).await;
    assert_elected(&all, 3);

    let st = tokio::time::timeout(
        Duration::from_secs(2),
        nodes[0].agent.status(pb::StatusRequest { election_id: "stuck-0".into() }),
    )
    .await
    .expect("Status of a stuck election answers promptly")
    .unwrap()
    .into_inner();
    assert_eq!(st.role, pb::Role::Undecided as i32, "nobody answered the stuck election: {st:?}");
    held.abort();
}

/// A peer that floods a Stages node with messages on its closed port (held until the other side
/// answers) meets the holding cap: the node holds MAX_HELD of them and answers each further one with
/// a RESOURCE_EXHAUSTED Reject on the same stream.
#[tokio::test]
async fn a_flood_of_held_messages_is_refused_resource_exhausted() {
    let mut nodes = start_nodes(3).await;
    let plan = ring_plan("f", "stages", TopologyKind::RingBi, &[1, 2, 3], &[], pb::Rule::Max, &nodes);
    let (sender, port) = (plan[0].ports[0].position, 0);
    nodes[0].agent.prepare(plan[0].clone()).await.unwrap();

    let (tx, rx) = mpsc::channel(64);
    let mut peer = PeerClient::new(channel(&nodes[0].address).await);
    let mut replies = peer.link(ReceiverStream::new(rx)).await.unwrap().into_inner();
    let extra = 40;
    // The first wakes the node (stage 1) and closes the port; the rest wait there.
    for seq in 1..=(1 + MAX_HELD + extra) as u64 {
        let body = Some(Msg::Election { id: 2, stage: 1, hops: 1 }.into());
        let env =
            pb::Envelope { election_id: "f".into(), sender, port, seq, causal_time: 1, body, ..Default::default() };
        tx.send(env).await.unwrap();
    }
    for i in 0..extra {
        let reply = tokio::time::timeout(Duration::from_secs(5), replies.message()).await.unwrap().unwrap().unwrap();
        let Some(pb::link_reply::Kind::Reject(r)) = reply.kind else { panic!("a reject: {reply:?}") };
        assert_eq!(r.seq, (2 + MAX_HELD + i) as u64, "the envelopes beyond the cap are refused, in order");
        assert_eq!(Code::from_i32(r.code), Code::ResourceExhausted, "{r:?}");
        assert!(r.message.contains("held"), "{r:?}");
    }
    let st = nodes[0].agent.status(pb::StatusRequest { election_id: "f".into() }).await.unwrap().into_inner();
    assert_eq!(st.received, (1 + MAX_HELD + extra) as u64, "{st:?}");
}

/// A `lease` election needs an etcd: Prepare without any endpoint (none in the request, none in
/// the node's configuration) is FAILED_PRECONDITION saying so, one that is not an http(s) URL is
/// INVALID_ARGUMENT naming `etcd_endpoint`, and neither installs anything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_election_needs_an_etcd_endpoint() {
    let mut nodes = start_nodes(2).await;
    let peer = nodes[1].address.clone();
    let lease = |etcd_endpoint: &str| pb::PrepareRequest {
        algorithm: "lease".into(),
        keep_leader: true,
        etcd_endpoint: etcd_endpoint.into(),
        ..lone_initiator("lease-1", &peer)
    };
    let none = nodes[0].agent.prepare(lease("")).await.unwrap_err();
    assert_eq!(none.code(), Code::FailedPrecondition, "{none:?}");
    assert!(none.message().starts_with("lease needs an etcd endpoint"), "{none:?}");
    let bad = nodes[0].agent.prepare(lease("ftp://etcd:2379")).await.unwrap_err();
    assert_eq!(bad.code(), Code::InvalidArgument, "{bad:?}");
    assert!(bad.message().contains("`etcd_endpoint`"), "{bad:?}");
    let missing = nodes[0].agent.status(pb::StatusRequest { election_id: "lease-1".into() }).await.unwrap_err();
    assert_eq!(missing.code(), Code::NotFound, "a refused Prepare installs nothing: {missing:?}");
    nodes[0].agent.prepare(lease("127.0.0.1:2379")).await.expect("an endpoint without a scheme is taken");
}
