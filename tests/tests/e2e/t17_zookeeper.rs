use std::time::{Duration, Instant};

use pb::inject_fault_request::Kind;
use ringleader_proto::v1 as pb;
use ringleader_tests::{TestController, crash_leader, kept, leader_until, test_config};
use tonic::Code;

type Client = pb::controller_client::ControllerClient<tonic::transport::Channel>;

/// GetLeader's refusal now, if it refuses.
async fn no_leader(client: &mut Client, id: &str) -> Option<tonic::Status> {
    client.get_leader(pb::GetLeaderRequest { election_id: id.into() }).await.err()
}

/// The ZooKeeper-style election keeps a leader on 5 LIVE nodes: the highest id leads; crashing
/// it with `crash: {leader: true}` makes another node lead with a higher term, agreed by every
/// live node. A partition that leaves no majority (groups of 2, 2 and 1 with one node down)
/// leaves the cluster without a leader: GetLeader answers FAILED_PRECONDITION "no leader"
/// within a few seconds and keeps answering so; ClearFaults brings one agreed leader back;
/// StopElection ends it FINISHED with no violations (never two leaders of one term).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zookeeper_keeps_a_leader_and_a_minority_elects_none() {
    let ctl = TestController::start_with(test_config(5)).await;
    let mut client = ctl.client();
    let req = kept("zookeeper");
    let e = client.start_election(req).await.unwrap().into_inner();
    assert!(e.keep_leader);
    let id = e.election_id.clone();
    tracing::info!("--- wait for the highest id to lead");
    let first = leader_until(&mut client, &id, Duration::from_secs(20), |l| {
        l.agreed && l.leader.as_ref().is_some_and(|r| r.id == 5) && l.term >= 1
    })
    .await;

    tracing::info!("--- crash the leader");
    let crash = crash_leader();
    let f = client.inject_fault(crash).await.unwrap().into_inner();
    assert_eq!(f.description, format!("crash {}", first.leader.as_ref().unwrap().node));
    let crashed_at = Instant::now();
    let second = leader_until(&mut client, &id, Duration::from_secs(20), |l| {
        l.agreed && l.leader.as_ref().is_some_and(|r| r.id != 5) && l.term > first.term
    })
    .await;
    tracing::info!(
        "--- new leader {:?} agreed {:?} after the crash, term {}",
        second.leader,
        crashed_at.elapsed(),
        second.term
    );
    assert_ne!(second.leader.as_ref().unwrap().node, first.leader.as_ref().unwrap().node);

    tracing::info!("--- partition with no majority: [node-0, node-1] [node-2, node-3] [node-4]");
    let groups = [&["node-0", "node-1"][..], &["node-2", "node-3"], &["node-4"]];
    let partition = pb::InjectFaultRequest {
        kind: Some(Kind::Partition(pb::PartitionFault {
            groups: groups.iter().map(|g| pb::NodeGroup { nodes: g.iter().map(|n| n.to_string()).collect() }).collect(),
        })),
        ..Default::default()
    };
    client.inject_fault(partition).await.unwrap();
    let cut_at = Instant::now();
    let deadline = cut_at + Duration::from_secs(5);
    let status = loop {
        if let Some(s) = no_leader(&mut client, &id).await {
            break s;
        }
        assert!(Instant::now() < deadline, "a leader is still shown 5 s after the partition");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    tracing::info!("--- no leader {:?} after the partition: {}", cut_at.elapsed(), status.message());
    assert_eq!(status.code(), Code::FailedPrecondition, "{status:?}");
    assert!(status.message().contains("no leader"), "{}", status.message());
    for _ in 0..30 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let s = no_leader(&mut client, &id).await;
        assert!(s.as_ref().is_some_and(|s| s.code() == Code::FailedPrecondition), "a leader without a majority: {s:?}");
    }

    tracing::info!("--- clear the faults: one leader again");
    client.clear_faults(pb::ClearFaultsRequest::default()).await.unwrap();
    let third = leader_until(&mut client, &id, Duration::from_secs(20), |l| l.agreed && l.term >= second.term).await;
    tracing::info!("--- leader {:?} in term {} after healing", third.leader, third.term);

    let done = client.stop_election(pb::StopElectionRequest { election_id: id }).await.unwrap().into_inner();
    assert_eq!(done.state, pb::ElectionState::Finished as i32, "{done:?}");
    assert!(done.violations.is_empty(), "{:?}", done.violations);
    assert!(done.term >= third.term);
    ctl.stop().await;
}
