//! Raft's lease LIVE, as an operator would break it: a short cut of the
//! leader, duplicating links, and a planned stop with logs that differ.
//! Trials per case: `RINGLEADER_LEASE_TRIALS` (default 2; the figures in
//! docs/performance.md were taken with 10 and 20).

use std::time::{Duration, Instant};

use ringleader_proto::v1 as pb;
use ringleader_tests::{Client, clear_faults, elect, fault, inject, leader_until, partition, stop_kept};

fn trials() -> usize {
    std::env::var("RINGLEADER_LEASE_TRIALS").ok().and_then(|v| v.parse().ok()).unwrap_or(2)
}

/// A kept Raft election on every node with the lease (and `more` options), at `detector`.
fn raft(detector: Option<(u64, u64)>, more: &[(&str, &str)]) -> pb::StartElectionRequest {
    let mut options: Vec<(String, String)> = vec![("lease".into(), "true".into())];
    options.extend(more.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    pb::StartElectionRequest {
        options: options.into_iter().collect(),
        detector: detector.map(|(period_ms, timeout_ms)| pb::FailureDetector { period_ms, timeout_ms }),
        ..ringleader_tests::kept("raft")
    }
}

/// The names of the nodes other than `leader`'s, of 5.
fn others(leader: &str) -> Vec<String> {
    (0..5).map(|i| format!("node-{i}")).filter(|n| n != leader).collect()
}

/// Wait until every node agrees on one leader; its answer and how long it took.
async fn agreed(client: &mut Client, id: &str, within: Duration) -> (pb::Leader, Duration) {
    let t = Instant::now();
    let l = leader_until(client, id, within, |l| l.agreed && l.leader.is_some()).await;
    (l, t.elapsed())
}

/// Wait until a node other than `leader`'s leads a term above `first`'s (the old leader, cut off
/// or paused, may not have heard of it yet).
async fn replaced(client: &mut Client, id: &str, leader: &str, first: &pb::Leader) -> pb::Leader {
    leader_until(client, id, Duration::from_secs(10), |l| {
        l.leader.as_ref().is_some_and(|r| r.node != leader) && l.term > first.term
    })
    .await
}

/// Stop the kept leadership `id`: its record must show no overlap.
async fn stop_without_overlap(client: &mut Client, id: String) {
    let done = stop_kept(client, id).await;
    assert!(done.overlaps.is_empty(), "{:?}", done.overlaps);
}

/// Cut the agreed leader off alone for 160 ms, `trials` times, at loopback timing and at etcd's
/// (100 ms heartbeats, 1,000 ms election timeout): after each heal every node agrees on one
/// leader again within 10 s (before, with the lease, 17 of 18 LIVE trials stayed without an
/// agreed leader: a lost round was held against the term), and the record shows no overlap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_cut_of_the_leased_leader_heals() {
    let ctl = ringleader_tests::TestController::start(5).await;
    let mut client = ctl.client();
    for (name, detector) in [("loopback", None), ("etcd", Some((100, 1_000)))] {
        let e = elect(&mut client, raft(detector, &[])).await;
        let id = e.election_id.clone();
        let mut took = Vec::new();
        for trial in 0..trials() {
            let (l, _) = agreed(&mut client, &id, Duration::from_secs(20)).await;
            let leader = l.leader.unwrap().node;
            let rest = others(&leader);
            let rest: Vec<&str> = rest.iter().map(String::as_str).collect();
            inject(&mut client, partition(&[&[leader.as_str()], &rest])).await;
            tokio::time::sleep(Duration::from_millis(160)).await;
            clear_faults(&mut client).await;
            let (after, t) = agreed(&mut client, &id, Duration::from_secs(10)).await;
            eprintln!("{name} trial {trial}: {leader} cut for 160 ms; {:?} agreed after {t:?}", after.leader);
            took.push(t.as_millis());
        }
        let done = stop_kept(&mut client, id).await;
        assert!(done.overlaps.is_empty(), "{name}: {:?}", done.overlaps);
        eprintln!(
            "raft lease, {name}: {} of {} cuts of 160 ms healed; agreement after {took:?} ms",
            took.len(),
            trials()
        );
    }
    ctl.stop().await;
}

/// Every link duplicates every message (the API's `duplicate` link fault), then the leader is
/// cut off: the others elect a new leader, and the record shows no overlap of the old and new
/// leader (before, 6 of 12 LIVE trials overlapped 3-49 ms: duplicated acknowledgements were
/// credited twice and stretched the old lease).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicated_acks_give_no_overlap() {
    let ctl = ringleader_tests::TestController::start(5).await;
    let mut client = ctl.client();
    let e = elect(&mut client, raft(None, &[])).await;
    let id = e.election_id.clone();
    for trial in 0..trials() {
        let (first, _) = agreed(&mut client, &id, Duration::from_secs(20)).await;
        let leader = first.leader.clone().unwrap().node;
        let dup = pb::LinkFaultSpec { duplicate: 1.0, ..Default::default() };
        inject(&mut client, fault(pb::inject_fault_request::Kind::Link(dup))).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        let rest = others(&leader);
        let rest: Vec<&str> = rest.iter().map(String::as_str).collect();
        inject(&mut client, partition(&[&[leader.as_str()], &rest])).await;
        let next = replaced(&mut client, &id, &leader, &first).await;
        eprintln!("duplicates, trial {trial}: {leader} cut off, {:?} leads term {}", next.leader, next.term);
        clear_faults(&mut client).await;
    }
    stop_without_overlap(&mut client, id).await;
    ctl.stop().await;
    eprintln!("raft lease, duplicated acks: {} trials, no overlap", trials());
}

/// A planned stop of a leader whose followers' logs differ (node-0 and node-3 behind, at 1:9;
/// the others at 2:5): it hands over at once to the best up-to-date node, in the next term
/// (before, it picked the highest id whatever its log, whose candidacy the others refused, and
/// still said `handed_over` after a whole election timeout, 1,055-1,775 ms).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_planned_stop_with_differing_logs_hands_over_at_once() {
    let ctl = ringleader_tests::TestController::start(5).await;
    let mut client = ctl.client();
    let req = pb::StartElectionRequest { ids: vec![1, 2, 3, 4, 5], ..raft(None, &[("log", "1:9,2:5,2:5,1:9,2:5")]) };
    let e = elect(&mut client, req).await;
    let id = e.election_id.clone();
    let up_to_date = [2, 3, 5];
    for trial in 0..trials() {
        let (l, _) = agreed(&mut client, &id, Duration::from_secs(20)).await;
        let leader = l.leader.clone().unwrap();
        assert!(up_to_date.contains(&leader.id), "only an up-to-date log wins: {l:?}");
        let stop = pb::CrashFault { node: String::new(), leader: true, planned: true };
        let f = inject(&mut client, fault(pb::inject_fault_request::Kind::Crash(stop))).await;
        let h = f.handovers.first().cloned().unwrap_or_default();
        eprintln!("planned stop, trial {trial}: {} -> {h:?}", leader.node);
        // The leader names the best up-to-date node it heard (max rule): that one runs at once.
        let best = up_to_date.iter().copied().filter(|&id| id != leader.id).max();
        assert!(h.handed_over && Some(h.new_leader_id) == best && h.new_term == l.term + 1, "{h:?}");
        // No election timeout (200 ms at least) was waited out: a handover, not an election. The
        // time itself (1.0 to 1.7 ms on an idle machine) is measured, not asserted.
        assert!(h.took_us < 200_000, "a handover, not an election: {h:?}");
        clear_faults(&mut client).await;
        // The stopped node comes back and is the next trial's target: let its links to the others
        // come up (a few heartbeats) before it is handed to. Once, on a loaded machine, the next
        // handover to a node restarted just before took a second term (297 ms), its first candidacy's
        // requests lost on links not yet connected.
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    stop_kept(&mut client, id).await;
    ctl.stop().await;
}

/// A leased leader paused (the `pause` fault, 2.5 election timeouts) while acknowledgements are in
/// flight: the others elect a new leader; on resuming, the old leader's round timers fire before
/// the acknowledgements that waited reach it, so it does not lease itself again on them, and the
/// record shows no overlap (before, 3 of 10 SIGSTOPped leaders re-leased on stale acks, about 21
/// ms beside the new leader).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_leader_does_not_lease_itself_on_stale_acks() {
    let ctl = ringleader_tests::TestController::start(5).await;
    let mut client = ctl.client();
    let e = elect(&mut client, raft(None, &[])).await;
    let id = e.election_id.clone();
    for trial in 0..trials() {
        let (first, _) = agreed(&mut client, &id, Duration::from_secs(20)).await;
        let leader = first.leader.clone().unwrap().node;
        let pause = pb::PauseFault { node: String::new(), leader: true, ms: 500 };
        inject(&mut client, fault(pb::inject_fault_request::Kind::Pause(pause))).await;
        let next = replaced(&mut client, &id, &leader, &first).await;
        // Past the pause: the old leader resumed and learned the new term.
        tokio::time::sleep(Duration::from_millis(600)).await;
        eprintln!("pause, trial {trial}: {leader} paused 500 ms, {:?} leads term {}", next.leader, next.term);
        clear_faults(&mut client).await;
    }
    stop_without_overlap(&mut client, id).await;
    ctl.stop().await;
    eprintln!("raft lease, paused leader: {} trials, no overlap", trials());
}

/// A planned stop of the only node whose log is up-to-date (node-0, id 5, at 2:6; node-1 and
/// node-2 at 2:5, the others at 1:9): no follower can take over without an election, so the
/// leader hands nothing over and the result says so (`handed_over: false`), where before it sent
/// TimeoutNow to the highest id it heard and reported a handover once any node led, an election
/// timeout later. (If node-1 or node-2 wins first, its planned stop hands over to node-0, the best
/// up-to-date node.) The others then elect one of themselves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_planned_stop_with_no_up_to_date_follower_says_it_did_not_hand_over() {
    let ctl = ringleader_tests::TestController::start(5).await;
    let mut client = ctl.client();
    let req = pb::StartElectionRequest { ids: vec![5, 1, 2, 3, 4], ..raft(None, &[("log", "2:6,2:5,2:5,1:9,1:9")]) };
    let e = elect(&mut client, req).await;
    let stop = || {
        fault(pb::inject_fault_request::Kind::Crash(pb::CrashFault {
            node: String::new(),
            leader: true,
            planned: true,
        }))
    };
    let (mut l, _) = agreed(&mut client, &e.election_id, Duration::from_secs(20)).await;
    if l.leader.as_ref().map(|r| r.id) != Some(5) {
        let h = inject(&mut client, stop()).await.handovers.first().cloned().unwrap_or_default();
        assert!(h.handed_over && h.new_leader_id == 5, "node-0 is the best up-to-date node: {h:?}");
        clear_faults(&mut client).await;
        l = leader_until(&mut client, &e.election_id, Duration::from_secs(10), |l| {
            l.agreed && l.leader.as_ref().is_some_and(|r| r.id == 5)
        })
        .await;
    }
    let h = inject(&mut client, stop()).await.handovers.first().cloned().unwrap_or_default();
    assert!(!h.handed_over, "{h:?}");
    let next = leader_until(&mut client, &e.election_id, Duration::from_secs(10), |n| {
        n.leader.as_ref().is_some_and(|r| r.id != 5) && n.term > l.term
    })
    .await;
    eprintln!("planned stop of the only up-to-date node: {h:?}; then {:?} led term {}", next.leader, next.term);
    clear_faults(&mut client).await;
    stop_kept(&mut client, e.election_id).await;
    ctl.stop().await;
}
