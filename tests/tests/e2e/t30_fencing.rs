//! Fencing through the controller's API: a SIMULATED kept Raft leadership
//! whose leader is cut off records how many of the deposed leader's writes
//! were stale, how many a fencing resource accepted and how many one without
//! fencing would have; with Raft's lease none is stale.

use ringleader_proto::v1 as pb;

use pb::scheduled_fault::Fault as F;

/// Raft on 5 SIMULATED nodes, its leader cut off at 1 000 virtual ms until the horizon.
fn cut_off_raft(lease: bool) -> pb::StartElectionRequest {
    lab_sheet(lease, vec![pb::ScheduledFault { at_ms: 1_000, fault: Some(F::CutOffLeader(true)) }], 0)
}

/// Lab sheet 11's runs: Raft on 5 SIMULATED nodes for 4 000 virtual ms, seed `seed` (0: the
/// API's default), with `faults`.
fn lab_sheet(lease: bool, faults: Vec<pb::ScheduledFault>, seed: u64) -> pb::StartElectionRequest {
    pb::StartElectionRequest {
        mode: pb::Mode::Simulated as i32,
        wait: true,
        ids: vec![1, 2, 3, 4, 5],
        options: [("lease".to_string(), lease.to_string())].into(),
        simulation: Some(pb::SimulationOptions { horizon_ms: 4_000, faults, ..Default::default() }),
        seed,
        ..ringleader_tests::kept("raft")
    }
}

/// The record's `fencing` of a SIMULATED kept Raft leadership with its leader cut off: plain
/// Raft's old leader goes on writing with its old term, so some writes are stale, a resource
/// without fencing takes them and a fencing one at most the one sent before the new leader's
/// first write arrived; with the lease no write is stale.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fencing_counts_stale_writes_simulated() {
    let (ctl, mut client) = ringleader_tests::TestController::with_client(0).await;
    let plain = client.start_election(cut_off_raft(false)).await.unwrap().into_inner();
    assert_eq!((plain.state, plain.error.as_str()), (pb::ElectionState::Finished as i32, ""));
    let f = plain.fencing.expect("a kept SIMULATED election has fencing counts");
    eprintln!("plain raft, leader cut off: {f:?}; overlaps {:?}", plain.overlaps);
    assert!(f.writes > 0 && f.stale_writes > 1 && f.stale_accepted_unfenced > 1, "{f:?}");
    assert!(f.stale_accepted <= 1 && !f.truncated, "{f:?}");
    let got = client
        .get_election(pb::GetElectionRequest { election_id: plain.election_id.clone() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got.fencing, Some(f), "GetElection shows the same counts");
    let leased = client.start_election(cut_off_raft(true)).await.unwrap().into_inner();
    let f = leased.fencing.expect("fencing counts");
    eprintln!("raft with the lease, leader cut off: {f:?}");
    assert!(f.writes > 0 && f.stale_writes == 0 && f.stale_accepted_unfenced == 0, "{f:?}");
    ctl.stop().await;
}

/// Lab sheet 11 (docs/teaching/fencing.md) as the teacher's appendix gives it, seed 1: the leader
/// cut off from 1 000 to 3 000 virtual ms, or paused for 1 000 ms at 1 000, each without and with
/// Raft's lease. Without the lease both faults give stale writes that fencing refuses; with it,
/// none is stale.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lab_sheet_fencing_figures() {
    let (ctl, mut client) = ringleader_tests::TestController::with_client(0).await;
    let at = |at_ms, fault| pb::ScheduledFault { at_ms, fault: Some(fault) };
    let cut = vec![at(1_000, F::CutOffLeader(true)), at(3_000, F::Heal(true))];
    let pause = vec![at(1_000, F::PauseLeader(1_000))];
    for (name, faults) in [("cut off", cut), ("paused", pause)] {
        for lease in [false, true] {
            let e = client.start_election(lab_sheet(lease, faults.clone(), 1)).await.unwrap().into_inner();
            assert_eq!((e.state, e.error.as_str()), (pb::ElectionState::Finished as i32, ""), "{name} {lease}");
            let f = e.fencing.expect("fencing counts");
            eprintln!("lab sheet 11, leader {name}, lease {lease}: {f:?}; overlaps {:?}", e.overlaps);
            if lease {
                assert_eq!(f.stale_writes, 0, "{name}: {f:?}");
            } else {
                assert!(f.stale_writes > 0 && f.stale_accepted < f.stale_accepted_unfenced, "{name}: {f:?}");
            }
        }
    }
    ctl.stop().await;
}

/// LIVE: plain Raft keeps a leader on 5 nodes; cut off alone, the old leader goes on believing
/// (no CheckQuorum) and writing with its old term while the other four elect a leader of a
/// higher term. The nodes report their writes through their event streams, the controller's
/// resource judges them: the record's `fencing` counts stale writes, a resource without fencing
/// would have accepted them, and a fencing one at most the one that overtook the new leader's
/// first write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fencing_counts_stale_writes_live() {
    use ringleader_tests::{clear_faults, inject, leader_until, partition, start_kept, stop_kept};
    use std::time::Duration;
    let (ctl, mut client, e) = start_kept("raft", 5).await;
    let within = Duration::from_secs(20);
    let first = leader_until(&mut client, &e.election_id, within, |l| l.agreed && l.term >= 1).await;
    let old = first.leader.clone().unwrap().node;
    let cluster = client.get_cluster(pb::GetClusterRequest {}).await.unwrap().into_inner();
    let others: Vec<String> = cluster.nodes.iter().map(|n| n.name.clone()).filter(|n| *n != old).collect();
    let others: Vec<&str> = others.iter().map(String::as_str).collect();
    inject(&mut client, partition(&[&[old.as_str()], &others])).await;
    leader_until(&mut client, &e.election_id, within, |l| {
        l.leader.as_ref().is_some_and(|r| r.node != old) && l.term > first.term
    })
    .await;
    // The old leader writes every 50 ms with its old term meanwhile.
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    clear_faults(&mut client).await;
    let done = stop_kept(&mut client, e.election_id).await;
    let f = done.fencing.expect("a LIVE kept leadership whose leaders wrote has fencing counts");
    eprintln!("LIVE plain raft, leader cut off: {f:?}; overlaps {:?}", done.overlaps);
    assert!(f.writes > 0 && f.stale_writes >= 10 && f.stale_accepted_unfenced >= 10, "{f:?}");
    assert!(f.stale_accepted <= 1, "{f:?}");
    ctl.stop().await;
}

/// LIVE: plain Raft's leader paused for 1.5 s is replaced meanwhile; it writes nothing while
/// paused, and on resuming, its deferred timers fired and still believing it leads, it writes with
/// its old term before it reads of the new one: at least one stale write, refused by fencing (the
/// new leader's writes reached the resource long before).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_leader_writes_stale_on_resuming_live() {
    use pb::inject_fault_request::Kind;
    use ringleader_tests::{clear_faults, fault, inject, leader_until, start_kept, stop_kept};
    use std::time::Duration;
    let (ctl, mut client, e) = start_kept("raft", 5).await;
    let within = Duration::from_secs(20);
    let first = leader_until(&mut client, &e.election_id, within, |l| l.agreed && l.term >= 1).await;
    let old = first.leader.clone().unwrap().node;
    inject(&mut client, fault(Kind::Pause(pb::PauseFault { node: String::new(), leader: true, ms: 1_500 }))).await;
    let second = leader_until(&mut client, &e.election_id, within, |l| {
        l.term > first.term && l.leader.as_ref().is_some_and(|r| r.node != old)
    })
    .await;
    // The pause ends by itself; then every node, the old leader too, agrees on the new leader.
    leader_until(&mut client, &e.election_id, within, |l| {
        l.agreed && l.term >= second.term && l.leader.as_ref().is_some_and(|r| r.node != old)
    })
    .await;
    clear_faults(&mut client).await;
    let done = stop_kept(&mut client, e.election_id).await;
    let f = done.fencing.expect("fencing counts");
    eprintln!("LIVE plain raft, leader paused 1.5 s: {f:?}");
    assert!(f.stale_writes >= 1 && f.stale_accepted == 0 && f.stale_accepted_unfenced >= 1, "{f:?}");
    ctl.stop().await;
}
