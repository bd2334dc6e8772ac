use std::time::Duration;

use ringleader_tests::{
    clear_faults, crash_the_leader, first_leader, leader_until, partition_without_majority, start_kept, stop_kept,
};

/// The ZooKeeper-style election keeps a leader on 5 LIVE nodes: the highest id leads; crashing
/// it with `crash: {leader: true}` makes another node lead with a higher term, agreed by every
/// live node. A partition that leaves no majority (groups of 2, 2 and 1 with one node down)
/// leaves the cluster without a leader: GetLeader answers FAILED_PRECONDITION "no leader"
/// within a few seconds and keeps answering so; ClearFaults brings one agreed leader back;
/// StopElection ends it FINISHED with no violations (never two leaders of one term).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zookeeper_keeps_a_leader_and_a_minority_elects_none() {
    let (ctl, mut client, e) = start_kept("zookeeper", 5).await;
    let id = e.election_id.clone();
    tracing::info!("--- wait for the highest id to lead");
    let first = first_leader(&mut client, &id, 5).await;

    tracing::info!("--- crash the leader");
    let crashed_at = crash_the_leader(&mut client, &first).await;
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
    let (took, status) = partition_without_majority(&mut client, &id, Duration::from_secs(5)).await;
    tracing::info!("--- no leader {took:?} after the partition: {}", status.message());

    tracing::info!("--- clear the faults: one leader again");
    clear_faults(&mut client).await;
    let third = leader_until(&mut client, &id, Duration::from_secs(20), |l| l.agreed && l.term >= second.term).await;
    tracing::info!("--- leader {:?} in term {} after healing", third.leader, third.term);

    let done = stop_kept(&mut client, id).await;
    assert!(done.term >= third.term);
    ctl.stop().await;
}

/// A partition with no group of a majority ({node-0, node-1} {node-2, node-3} {node-4}) cuts every
/// node off, the leader included: a failover opens (cause "partition"). Once the partition clears,
/// the nodes agree on a leader of a higher term, and StopElection, called at once, answers a record
/// whose failover counts the messages that took: more than none, and no more than the whole
/// election sent. Failed before the fix: with every node cut off at the loss, the count was read
/// from no node and the record said `messages: 0` (or, stopped before the count came in, nothing).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failover_after_a_partition_counts_its_messages() {
    let (ctl, mut client, e) = start_kept("zookeeper", 5).await;
    let id = e.election_id.clone();
    let first = first_leader(&mut client, &id, 5).await;

    tracing::info!("--- partition with no majority: every node is cut off, the leader too");
    partition_without_majority(&mut client, &id, Duration::from_secs(5)).await;

    tracing::info!("--- clear the faults: a leader of a higher term, agreed; stop at once");
    clear_faults(&mut client).await;
    leader_until(&mut client, &id, Duration::from_secs(20), |l| l.agreed && l.term > first.term).await;
    let done = stop_kept(&mut client, id).await;

    let failover = done.failovers.first().expect("a failover");
    tracing::info!("--- failover: {failover:?}");
    assert_eq!(failover.cause, "partition (cut off from every majority)", "{failover:?}");
    assert!(failover.new_term > first.term, "{failover:?}");
    let total = done.metrics.as_ref().map_or(0, |m| m.messages);
    let messages = failover.messages.expect("the failover's messages, measured");
    assert!(messages > 0 && messages <= total, "the failover sent {messages} of the election's {total}: {failover:?}");
    ctl.stop().await;
}
