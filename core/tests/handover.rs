//! Planned stops: a leader that is about to stop on
//! purpose hands its leadership over (`Algorithm::on_leave`, the simulator's
//! `Fault::LeaveLeader`) before it stops, so the others need not wait for a
//! failure detector. Simulated, seeded, on 5 nodes of a complete network.

mod common;

use common::{MAX_DELAY, final_agreement};
use ringleader_core::algo::Rule;
use ringleader_core::algo::catalogue::{self, CATALOGUE};
use ringleader_core::algo::detector::DetectorConfig;
use ringleader_core::faults::{Fault, FaultPlan, Scheduled};
use ringleader_core::sim::{self, SimConfig, SimReport};
use ringleader_core::topology::{IdOrder, Topology};

/// When the leader leaves, and when it stops (a crash, as its process exits).
const LEAVE: u64 = 3_000;
const STOP: u64 = LEAVE + 500;

/// The kept algorithms, which all hand over on a planned stop: every kept entry of the catalogue.
fn handing_over() -> impl Iterator<Item = &'static str> {
    CATALOGUE.iter().filter(|s| s.kept.is_some()).map(|s| s.name)
}

/// The longest a node other than the leaver may name no leader: a few delays, or, on the ring,
/// the handover election's trip round the ring and the coordinator's (2n + 2 delays); for the
/// lease, from the read that shows the record released to the read that shows its new holder,
/// at most two RetryPeriods and two store round trips.
fn allowed_gap(algorithm: &str) -> u64 {
    match algorithm {
        "repaired-ring" => (2 * 5 + 2) * MAX_DELAY,
        "lease" => 2 * ringleader_core::algo::lease::LeaseConfig::LOOPBACK.retry_period_ms + 4 * MAX_DELAY,
        _ => 4 * MAX_DELAY,
    }
}

/// A kept leadership of `algorithm` on 5 nodes whose leader leaves at
/// [`LEAVE`] and stops (crashes) at [`STOP`].
fn planned_stop(algorithm: &str, seed: u64) -> (SimReport, Vec<u64>, u32) {
    let n = 5;
    let spec = catalogue::find(algorithm).unwrap();
    let ids = IdOrder::Random(seed).arrange(n).unwrap();
    // Whoever leads once the cluster settles (the best id under bully and Chubby's back-off by
    // rank; under Raft whoever timed out first): the same run without faults, up to the leave.
    let all: Vec<u32> = (0..n).collect();
    let settled = SimConfig { seed, max_delay: MAX_DELAY, horizon: Some(LEAVE), ..SimConfig::default() };
    let before = sim::run_kept(spec, &Topology::complete(n).unwrap(), &ids, &all, Rule::Max, &settled).unwrap();
    let leading = final_agreement(&before, &ids).and_then(|l| l.leader).expect("a leader before the leave");
    let leader = ids.iter().position(|&id| id == leading).unwrap() as u32;
    let plan =
        vec![Scheduled::new(LEAVE, 0, Fault::LeaveLeader), Scheduled::new(STOP, 0, Fault::Crash { node: leader })];
    let bound =
        catalogue::find(algorithm).unwrap().convergence_bound_ms(DetectorConfig::default(), n, MAX_DELAY).unwrap();
    let cfg = SimConfig {
        seed,
        max_delay: MAX_DELAY,
        faults: FaultPlan { faults: plan },
        horizon: Some(STOP + bound + 1_000),
        ..SimConfig::default()
    };
    let r = sim::run_kept(spec, &Topology::complete(n).unwrap(), &ids, &all, Rule::Max, &cfg).unwrap();
    (r, ids, leader)
}

/// The longest any position other than `except` named no leader after `from`
/// (its belief without a leader, until its next belief or the end of the run).
fn longest_leaderless(r: &SimReport, from: u64, except: u32) -> u64 {
    let mut open: std::collections::HashMap<u32, u64> = Default::default();
    let mut longest = 0;
    for e in r.leaderships.iter().filter(|e| e.time >= from && e.position != except) {
        match (e.leadership.leader, open.remove(&e.position)) {
            (None, was) => {
                open.insert(e.position, was.unwrap_or(e.time));
            }
            (Some(_), Some(at)) => longest = longest.max(e.time - at),
            (Some(_), None) => {}
        }
    }
    open.values().map(|&at| r.end_time - at).fold(longest, u64::max)
}

/// For every kept algorithm of the catalogue (bully, Chubby-style, ZooKeeper-style, the repaired
/// ring, Raft, the lease), 50 seeds each: the leader leaves at 3 s and stops 500 ms later. By
/// then every other node follows one new leader of a higher term (no failure detector or lease
/// had to expire: the stop is after the agreement), never two leaders of one term, no node is
/// without a leader longer than a few message delays (4 × 16 ms; the ring: its election's trip
/// and its coordinator's, 12 × 16 ms), and nothing changes after the stop: nobody noticed it.
#[test]
fn a_leaving_leader_hands_over_before_it_stops() {
    let algorithms: Vec<&str> = handing_over().collect();
    assert!(algorithms.len() >= 6, "the catalogue's kept algorithms: {algorithms:?}");
    for algorithm in algorithms {
        let (mut widest, mut slowest) = (0, 0);
        for seed in 0..50 {
            let (r, ids, leader) = planned_stop(algorithm, seed);
            let name = format!("{algorithm} seed {seed}");
            assert!(r.errors.is_empty(), "{name}: {:?}", r.errors);
            let timeline: Vec<_> = r.leaderships.iter().map(|e| (e.position, e.leadership)).collect();
            ringleader_core::invariants::one_leader_per_term(&ids, &timeline).unwrap_or_else(|e| panic!("{name}: {e}"));
            let before = r.leaderships.iter().rfind(|e| e.time < LEAVE).map(|e| e.leadership).unwrap();
            assert_eq!(before.leader, Some(ids[leader as usize]), "{name}: the settled leader led first");
            let agreed = final_agreement(&r, &ids).unwrap_or_else(|| panic!("{name}: no agreement"));
            assert!(agreed.term > before.term && agreed.leader != before.leader, "{name}: {agreed:?}");
            let last_change = r.leaderships.iter().filter(|e| e.position != leader).map(|e| e.time).max().unwrap();
            assert!(last_change < STOP, "{name}: a belief changed at {last_change}, after the stop at {STOP}");
            let gap = longest_leaderless(&r, LEAVE, leader);
            assert!(gap <= allowed_gap(algorithm), "{name}: a node named no leader for {gap} ms");
            let agreed_at = r.leaderships.iter().filter(|e| e.position != leader).map(|e| e.time).max().unwrap();
            (widest, slowest) = (widest.max(gap), slowest.max(agreed_at - LEAVE));
        }
        eprintln!(
            "{algorithm}: over 50 seeds, at most {widest} ms without a leader (a node), all agreed within {slowest} ms of the leave (delays 1..={MAX_DELAY} ms)"
        );
    }
}

/// Chubby-style's lease is kept across the handover: the leaver steps down before it releases
/// anybody, so no two nodes believe they lead at one instant (any terms), and the successor
/// leads within a few delays of the leave rather than a lease (1 s) and a back-off later.
#[test]
fn chubby_hands_over_without_overlapping_leases() {
    for seed in 0..50 {
        let (r, ids, leader) = planned_stop("chubby", seed);
        let mut leading: Option<(u32, u64)> = None;
        let mut successor_at = None;
        for e in &r.leaderships {
            if e.time >= STOP && leading.is_some_and(|(p, _)| p == leader) {
                leading = None; // the leaver's process stopped
            }
            let leads = e.leadership.leader == Some(ids[e.position as usize]);
            match leading {
                Some((p, _)) if p == e.position && !leads => leading = None,
                Some((p, t)) if p != e.position && leads => {
                    panic!("seed {seed}: positions {p} (since {t}) and {} lead at {}", e.position, e.time)
                }
                None if leads => {
                    leading = Some((e.position, e.time));
                    if e.time >= LEAVE && e.position != leader {
                        successor_at.get_or_insert(e.time);
                    }
                }
                _ => {}
            }
        }
        let took = successor_at.expect("a successor leads") - LEAVE;
        assert!(took <= 4 * MAX_DELAY, "seed {seed}: the successor led {took} ms after the leave");
    }
}
