use std::time::Duration;

use ringleader_tests::{clear_faults, crash_the_leader, first_leader, leader_until, leads, start_kept, stop_kept};

/// The repaired ring keeps a leader on 5 LIVE nodes: the highest id leads in term >= 1;
/// crashing it with `crash: {leader: true}` makes the live nodes skip it on the ring and agree on a new
/// leader (the next highest id) with a higher term; StopElection ends it FINISHED with no violations.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repaired_ring_keeps_a_leader_across_a_crash() {
    let (ctl, mut client, e) = start_kept("repaired-ring", 5).await;
    tracing::info!("--- wait for the highest id to lead");
    let first = first_leader(&mut client, &e.election_id, 5).await;
    assert!(!first.since.is_empty());
    tracing::info!("--- crash the leader");
    let crashed_at = crash_the_leader(&mut client, &first).await;
    let second = leader_until(&mut client, &e.election_id, Duration::from_secs(20), |l| {
        l.agreed && leads(l, 4) && l.term > first.term
    })
    .await;
    tracing::info!("--- new leader agreed {:?} after the crash, term {}", crashed_at.elapsed(), second.term);
    assert_ne!(second.leader.as_ref().unwrap().node, first.leader.as_ref().unwrap().node);
    clear_faults(&mut client).await;
    let done = stop_kept(&mut client, e.election_id).await;
    assert!(done.term >= second.term);
    ctl.stop().await;
}
