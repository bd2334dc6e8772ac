use std::time::{Duration, Instant};

use pb::inject_fault_request::Kind;
use ringleader_proto::v1 as pb;
use ringleader_tests::{TestController, crash_leader, kept, leader_until, test_config};
use tonic::Code;

type Client = pb::controller_client::ControllerClient<tonic::transport::Channel>;

/// GetLeader's answer: the leader, or the FAILED_PRECONDITION status saying there is none.
async fn get_leader(client: &mut Client, id: &str) -> Result<pb::Leader, tonic::Status> {
    client.get_leader(pb::GetLeaderRequest { election_id: id.into() }).await.map(|l| l.into_inner())
}

fn partition(groups: &[&[&str]]) -> pb::InjectFaultRequest {
    let groups = groups.iter().map(|g| pb::NodeGroup { nodes: g.iter().map(|n| n.to_string()).collect() }).collect();
    pb::InjectFaultRequest { kind: Some(Kind::Partition(pb::PartitionFault { groups })), ..Default::default() }
}

/// The Chubby-style election keeps a leader on 5 LIVE nodes (complete network, 1 s lease): the highest id
/// leads; crashing it with `crash: {leader: true}` makes another node lead a higher term, agreed by every
/// live node. A partition into {node-0, node-1} {node-2, node-3} {node-4} leaves no group a majority: once
/// the lease has run out GetLeader answers FAILED_PRECONDITION "no leader" and keeps answering so for
/// 3 s (nobody is elected without a majority); ClearFaults brings a leader back; StopElection ends it
/// FINISHED with no violation (never two leaders of one term) and no overlap (the recovered leader restarts
/// believing nothing).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chubby_keeps_a_leader_and_refuses_one_without_a_majority() {
    let ctl = TestController::start_with(test_config(5)).await;
    let mut client = ctl.client();
    let req = kept("chubby");
    let e = client.start_election(req).await.unwrap().into_inner();
    let id = e.election_id.clone();
    assert!(e.keep_leader);
    let first = leader_until(&mut client, &id, Duration::from_secs(20), |l| {
        l.agreed && l.leader.as_ref().is_some_and(|r| r.id == 5) && l.term >= 1
    })
    .await;

    tracing::info!("--- crash the leader");
    let crash = crash_leader();
    let f = client.inject_fault(crash).await.unwrap().into_inner();
    assert_eq!(f.description, format!("crash {}", first.leader.as_ref().unwrap().node));
    let crashed_at = Instant::now();
    let second = leader_until(&mut client, &id, Duration::from_secs(20), |l| l.agreed && l.term > first.term).await;
    assert_ne!(second.leader.as_ref().unwrap().node, first.leader.as_ref().unwrap().node);
    eprintln!(
        "crash of {:?}: {:?} leads term {} after {:?}",
        first.leader,
        second.leader,
        second.term,
        crashed_at.elapsed()
    );
    tracing::info!("--- bring the crashed leader back");
    // It restarts as a new incarnation (its vote restored), believes nothing, and follows once a
    // renewal of the later term reaches it (within one renewal period).
    client.clear_faults(pb::ClearFaultsRequest::default()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let second = leader_until(&mut client, &id, Duration::from_secs(20), |l| l.agreed && l.term >= second.term).await;

    tracing::info!("--- partition without a majority");
    client.inject_fault(partition(&[&["node-0", "node-1"], &["node-2", "node-3"], &["node-4"]])).await.unwrap();
    let cut = Instant::now();
    let deadline = cut + Duration::from_secs(10);
    let status = loop {
        match get_leader(&mut client, &id).await {
            Err(s) => break s,
            Ok(l) => assert!(Instant::now() < deadline, "still a leader 10 s after the partition: {l:?}"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(status.code(), Code::FailedPrecondition, "{status:?}");
    assert!(status.message().contains("no leader"), "{}", status.message());
    eprintln!("partition: no leader after {:?} ({})", cut.elapsed(), status.message());
    let quiet = Instant::now() + Duration::from_secs(3);
    while Instant::now() < quiet {
        let answer = get_leader(&mut client, &id).await;
        assert!(answer.as_ref().is_err_and(|s| s.code() == Code::FailedPrecondition), "{answer:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    tracing::info!("--- heal");
    client.clear_faults(pb::ClearFaultsRequest::default()).await.unwrap();
    let healed = Instant::now();
    let third = leader_until(&mut client, &id, Duration::from_secs(20), |l| l.agreed && l.term > second.term).await;
    eprintln!("healed: {:?} leads term {} after {:?}", third.leader, third.term, healed.elapsed());

    let done = client.stop_election(pb::StopElectionRequest { election_id: id }).await.unwrap().into_inner();
    assert_eq!(done.state, pb::ElectionState::Finished as i32, "{done:?}");
    assert!(done.violations.is_empty(), "{:?}", done.violations);
    // Recovery restarts the crashed leader as a new incarnation that believes nothing until it hears
    // a renewal, and leases keep the others from electing early: never two self-believed leaders.
    eprintln!("overlaps: {:?}", done.overlaps);
    assert!(done.overlaps.is_empty(), "{:?}", done.overlaps);
    assert!(done.term >= third.term);
    ctl.stop().await;
}
