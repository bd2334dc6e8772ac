use std::time::{Duration, Instant};

use ringleader_tests::{
    clear_faults, crash_the_leader, first_leader, leader_until, partition_without_majority, start_kept, stop_kept,
};

/// The Chubby-style election keeps a leader on 5 LIVE nodes (complete network, 1 s lease): the highest id
/// leads; crashing it with `crash: {leader: true}` makes another node lead a higher term, agreed by every
/// live node. A partition into {node-0, node-1} {node-2, node-3} {node-4} leaves no group a majority: once
/// the lease has run out GetLeader answers FAILED_PRECONDITION "no leader" and keeps answering so for
/// 3 s (nobody is elected without a majority); ClearFaults brings a leader back; StopElection ends it
/// FINISHED with no violation (never two leaders of one term) and no overlap (the recovered leader restarts
/// believing nothing).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chubby_keeps_a_leader_and_refuses_one_without_a_majority() {
    let (ctl, mut client, e) = start_kept("chubby", 5).await;
    let id = e.election_id.clone();
    let first = first_leader(&mut client, &id, 5).await;

    tracing::info!("--- crash the leader");
    let crashed_at = crash_the_leader(&mut client, &first).await;
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
    clear_faults(&mut client).await;
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let second = leader_until(&mut client, &id, Duration::from_secs(20), |l| l.agreed && l.term >= second.term).await;

    tracing::info!("--- partition without a majority");
    let (took, status) = partition_without_majority(&mut client, &id, Duration::from_secs(10)).await;
    eprintln!("partition: no leader after {took:?} ({})", status.message());

    tracing::info!("--- heal");
    clear_faults(&mut client).await;
    let healed = Instant::now();
    let third = leader_until(&mut client, &id, Duration::from_secs(20), |l| l.agreed && l.term > second.term).await;
    eprintln!("healed: {:?} leads term {} after {:?}", third.leader, third.term, healed.elapsed());

    let done = stop_kept(&mut client, id).await;
    // Recovery restarts the crashed leader as a new incarnation that believes nothing until it hears
    // a renewal, and leases keep the others from electing early: never two self-believed leaders.
    eprintln!("overlaps: {:?}", done.overlaps);
    assert!(done.overlaps.is_empty(), "{:?}", done.overlaps);
    assert!(done.term >= third.term);
    ctl.stop().await;
}

/// A Chubby-style leader cut off by a partition is a failover too, with its cause: partitioning the
/// leader (node-4) away from the other four records a failover of term `first.term` whose cause is
/// "partition (cut off from every majority)", closed once the majority agrees on a new leader of a later
/// term (the cut-off leader's lease runs out first); GetCluster shows each node's side of the partition
/// beside it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_cut_off_by_a_partition_is_a_failover() {
    use ringleader_proto::v1 as pb;
    use ringleader_tests::{inject, partition};
    let (ctl, mut client, e) = start_kept("chubby", 5).await;
    let id = e.election_id.clone();
    let first = first_leader(&mut client, &id, 5).await;
    inject(&mut client, partition(&[&["node-0", "node-1", "node-2", "node-3"], &["node-4"]])).await;
    let after = leader_until(&mut client, &id, Duration::from_secs(20), |l| {
        l.last_failover.as_ref().is_some_and(|f| f.agreement_ms.is_some())
    })
    .await;
    let fo = after.last_failover.unwrap();
    assert_eq!(fo.leader.as_ref().map(|l| l.id), Some(5), "{fo:?}");
    assert_eq!((fo.term, fo.cause.as_str()), (first.term, "partition (cut off from every majority)"), "{fo:?}");
    assert!(fo.new_leader.as_ref().is_some_and(|l| l.id != 5) && fo.new_term > fo.term, "{fo:?}");
    let cluster = client.get_cluster(pb::GetClusterRequest {}).await.unwrap().into_inner();
    for node in &cluster.nodes {
        let side = if node.name == "node-4" {
            "partitioned: reaches no other node (".to_string()
        } else {
            let others: Vec<String> = (0..4).map(|i| format!("node-{i}")).filter(|n| *n != node.name).collect();
            format!("partitioned: reaches {} only (", others.join(", "))
        };
        assert!(node.faults.len() == 1 && node.faults[0].starts_with(&side), "{node:?}");
    }
    clear_faults(&mut client).await;
    stop_kept(&mut client, id).await;
    ctl.stop().await;
}
