use std::time::Duration;

use ringleader_tests::{clear_faults, crash_the_leader, leader_until, leads, start_kept, stop_kept};

/// Bully keeps a leader on 5 LIVE nodes: the highest id leads in term >= 1; crashing it with
/// `crash: {leader: true}` makes the next highest id lead with a higher term, agreed by every live node (the
/// crashed leader's frozen belief does not count); the timeline never shows two
/// leaders of one term; the crash is recorded as a failover with its detection and agreement times and
/// messages; recovering the crashed leader restarts it, and it bullies back with a higher term, agreed by
/// all; StopElection ends it FINISHED with no violations and the whole timeline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bully_keeps_a_leader_across_a_crash() {
    let (ctl, mut client, e) = start_kept("bully", 5).await;
    let first =
        leader_until(&mut client, &e.election_id, Duration::from_secs(20), |l| leads(l, 5) && l.term >= 1).await;
    assert!(!first.since.is_empty());
    crash_the_leader(&mut client, &first).await;
    let second =
        leader_until(&mut client, &e.election_id, Duration::from_secs(20), |l| leads(l, 4) && l.term > first.term)
            .await;
    let second =
        leader_until(&mut client, &e.election_id, Duration::from_secs(20), |l| l.agreed && l.term == second.term).await;
    assert_ne!(second.leader.as_ref().unwrap().node, first.leader.as_ref().unwrap().node);
    // The crash is recorded as a failover: detected, agreed, and (read from the nodes a moment later) its messages.
    let fo = leader_until(&mut client, &e.election_id, Duration::from_secs(20), |l| {
        l.last_failover.as_ref().is_some_and(|f| f.messages.is_some())
    })
    .await
    .last_failover
    .unwrap();
    assert_eq!(fo.leader.as_ref().map(|l| l.id), Some(5), "{fo:?}");
    assert_eq!((fo.term, fo.cause.as_str()), (first.term, "crash fault"), "{fo:?}");
    assert_eq!(fo.new_leader.as_ref().map(|l| l.id), Some(4), "{fo:?}");
    assert!(fo.new_term > fo.term, "{fo:?}");
    let (detection, agreement) = (fo.detection_ms.unwrap(), fo.agreement_ms.unwrap());
    assert!(detection <= agreement, "{fo:?}");
    assert!(
        fo.messages.unwrap() >= 4,
        "at least an election to the one better node, its answer and coordinators: {fo:?}"
    );
    // Recovery is a restart: the old leader comes back as a new incarnation (not frozen in its old
    // belief), bullies back as the highest id with a higher term, and every node agrees.
    clear_faults(&mut client).await;
    let third = leader_until(&mut client, &e.election_id, Duration::from_secs(20), |l| {
        l.agreed && leads(l, 5) && l.term > second.term
    })
    .await;
    let done = stop_kept(&mut client, e.election_id).await;
    assert!(done.timeline.len() >= 5, "{:?}", done.timeline);
    assert!(done.term >= third.term);
    ctl.stop().await;
}
