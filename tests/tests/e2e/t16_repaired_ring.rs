use std::time::{Duration, Instant};

use ringleader_proto::v1 as pb;
use ringleader_tests::{TestController, crash_leader, kept, leader_until, test_config};

/// The repaired ring (seed 002) keeps a leader on 5 LIVE nodes: the highest id leads in term >= 1;
/// crashing it with `crash: {leader: true}` makes the live nodes skip it on the ring and agree on a new
/// leader (the next highest id) with a higher term; StopElection ends it FINISHED with no violations.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repaired_ring_keeps_a_leader_across_a_crash() {
    let ctl = TestController::start_with(test_config(5)).await;
    let mut client = ctl.client();
    let req = kept("repaired-ring");
    let e = client.start_election(req).await.unwrap().into_inner();
    assert!(e.keep_leader);
    tracing::info!("--- wait for the highest id to lead");
    let first = leader_until(&mut client, &e.election_id, Duration::from_secs(20), |l| {
        l.agreed && l.leader.as_ref().is_some_and(|r| r.id == 5) && l.term >= 1
    })
    .await;
    assert!(!first.since.is_empty());
    tracing::info!("--- crash the leader");
    let crash = crash_leader();
    let f = client.inject_fault(crash).await.unwrap().into_inner();
    assert_eq!(f.description, format!("crash {}", first.leader.as_ref().unwrap().node));
    let crashed_at = Instant::now();
    let second = leader_until(&mut client, &e.election_id, Duration::from_secs(20), |l| {
        l.agreed && l.leader.as_ref().is_some_and(|r| r.id == 4) && l.term > first.term
    })
    .await;
    tracing::info!("--- new leader agreed {:?} after the crash, term {}", crashed_at.elapsed(), second.term);
    assert_ne!(second.leader.as_ref().unwrap().node, first.leader.as_ref().unwrap().node);
    client.clear_faults(pb::ClearFaultsRequest::default()).await.unwrap();
    let done = client.stop_election(pb::StopElectionRequest { election_id: e.election_id }).await.unwrap().into_inner();
    assert_eq!(done.state, pb::ElectionState::Finished as i32, "{done:?}");
    assert!(done.violations.is_empty(), "{:?}", done.violations);
    assert!(done.term >= second.term);
    ctl.stop().await;
}
