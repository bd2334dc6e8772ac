//! Fencing measured on Raft kept on 5 simulated nodes: its leader is cut off
//! by a partition or paused long enough for the others to elect a new one.
//! Plain Raft's deposed leader goes on writing with its old term (stale
//! writes): a resource without fencing accepts them, a fencing one refuses
//! every one that arrives after the new leader's first write. With Raft's
//! `lease` option the old leader stops believing before anyone else can win,
//! so it sends no stale write at all.

use ringleader_core::algo::raft::RaftConfig;
use ringleader_core::algo::{Rule, catalogue};
use ringleader_core::faults::{Fault, FaultPlan, Scheduled};
use ringleader_core::fencing::Fencing;
use ringleader_core::sim::{self, SimConfig, SimReport};
use ringleader_core::topology::{IdOrder, Topology};

/// When the fault strikes (a leader is surely agreed by then).
const FAULT_AT: u64 = 3_000;
const MAX_DELAY: u64 = 16;
const SEEDS: u64 = 10;

fn run(seed: u64, ids: &[u64], lease: bool, plan: Vec<Scheduled>, horizon: u64) -> SimReport {
    let cfg = SimConfig {
        seed,
        max_delay: MAX_DELAY,
        horizon: Some(horizon),
        faults: FaultPlan { faults: plan },
        options: vec![("lease".into(), lease.to_string())],
        ..SimConfig::default()
    };
    let spec = catalogue::find("raft").unwrap();
    let all: Vec<u32> = (0..5).collect();
    let r = sim::run_kept(spec, &Topology::complete(5).unwrap(), ids, &all, Rule::Max, &cfg).unwrap();
    assert!(r.errors.is_empty(), "seed {seed}: {:?}", r.errors);
    assert!(r.verdict.violations.is_empty(), "seed {seed}: {:?}", r.verdict.violations);
    r
}

/// The position leading the highest term by `t`.
fn leader(r: &SimReport, ids: &[u64], t: u64) -> u32 {
    r.leaderships
        .iter()
        .filter(|e| e.time <= t && e.leadership.leader == Some(ids[e.position as usize]))
        .max_by_key(|e| e.leadership.term)
        .expect("a leader")
        .position
}

/// The longest election timeout: a fault twice as long surely sees a new leader.
fn outage_ms() -> u64 {
    2 * RaftConfig::for_detector(SimConfig::default().detector).election_max_ms
}

/// Cut the first leader off from the others (`pause`: pause it instead) for
/// `outage_ms()`, then run as long again; the fencing counts.
fn deposed(seed: u64, lease: bool, pause: bool) -> Fencing {
    let ids = IdOrder::Random(seed).arrange(5).unwrap();
    let ms = outage_ms();
    let old = leader(&run(seed, &ids, lease, Vec::new(), FAULT_AT), &ids, FAULT_AT);
    let plan = if pause {
        vec![Scheduled::new(FAULT_AT, 0, Fault::Pause { node: old, ms })]
    } else {
        let others: Vec<u32> = (0..5).filter(|&p| p != old).collect();
        vec![
            Scheduled::new(FAULT_AT, 0, Fault::Partition { groups: vec![vec![old], others] }),
            Scheduled::new(FAULT_AT + ms, 1, Fault::Partition { groups: vec![(0..5).collect()] }),
        ]
    };
    let r = run(seed, &ids, lease, plan, FAULT_AT + 2 * ms);
    assert_ne!(leader(&r, &ids, FAULT_AT + ms), old, "seed {seed}: nobody replaced the old leader");
    r.fencing
}

/// Plain Raft, leader cut off by a partition: it keeps writing with its old
/// term after the new leader began (stale), a resource without fencing would
/// accept those, and with fencing at most the one sent before the new
/// leader's first write could reach the resource gets through (the old
/// leader writes once a period, 50 ms, and the new one's first write takes
/// at most 16 ms).
#[test]
fn plain_raft_partitioned_leader_writes_stale_and_fencing_refuses_them() {
    for seed in 0..SEEDS {
        let f = deposed(seed, false, false);
        assert!(f.writes > 0 && !f.truncated, "seed {seed}: {f:?}");
        assert!(f.stale > 1, "seed {seed}: {f:?}");
        assert!(f.stale_accepted_unfenced > 1, "seed {seed}: {f:?}");
        assert!(f.stale_accepted <= 1, "seed {seed}: {f:?}");
        assert!(f.stale_accepted < f.stale_accepted_unfenced, "seed {seed}: {f:?}");
    }
}

/// Plain Raft, leader paused: on resuming it fires its due timers first and
/// still believes it leads, so it writes once with its old term before it
/// reads of the new one; the new leader has been writing all along, so the
/// fencing resource refuses that stale write and one without fencing takes it.
#[test]
fn plain_raft_paused_leader_writes_once_stale_on_resuming() {
    for seed in 0..SEEDS {
        let f = deposed(seed, false, true);
        assert_eq!((f.stale, f.stale_accepted, f.stale_accepted_unfenced), (1, 0, 1), "seed {seed}: {f:?}");
    }
}

/// Raft with the `lease` option, leader cut off or paused: it stops
/// believing before any other node can win a term, so no write is stale.
#[test]
fn raft_with_the_lease_sends_no_stale_write() {
    for seed in 0..SEEDS {
        for pause in [false, true] {
            let f = deposed(seed, true, pause);
            assert!(f.writes > 0, "seed {seed}: {f:?}");
            assert_eq!((f.stale, f.stale_accepted, f.stale_accepted_unfenced), (0, 0, 0), "seed {seed} {pause}: {f:?}");
        }
    }
}

/// Every kept algorithm's token grows with each new leader: on 5 nodes of its default topology,
/// with the leader crashed at 1 500 and again at 4 000 virtual ms, over 4 seeds, each leader in
/// order of its first announcement holds a higher term than every earlier one, and no term has two
/// leaders; a crashed leader writes nothing after its crash, so no write is stale.
#[test]
fn every_kept_algorithm_hands_each_new_leader_a_higher_token() {
    let kept: Vec<_> = catalogue::CATALOGUE.iter().filter(|s| s.kept.is_some()).collect();
    assert!(kept.len() >= 6, "bully, repaired-ring, zookeeper, chubby, raft, lease: {}", kept.len());
    for spec in kept {
        for seed in 0..4 {
            let ids = IdOrder::Random(seed).arrange(5).unwrap();
            let topo = Topology::build(spec.default_topology(), 5, 1).unwrap();
            let all: Vec<u32> = (0..5).collect();
            let plan = vec![Scheduled::new(1_500, 0, Fault::CrashLeader), Scheduled::new(4_000, 1, Fault::CrashLeader)];
            let cfg =
                SimConfig { seed, horizon: Some(7_000), faults: FaultPlan { faults: plan }, ..SimConfig::default() };
            let r = sim::run_kept(spec, &topo, &ids, &all, spec.rule, &cfg).unwrap();
            let ctx = format!("{} seed {seed}", spec.name);
            assert!(r.errors.is_empty() && r.verdict.violations.is_empty(), "{ctx}: {:?}", r.verdict.violations);
            let mut leaders: Vec<(u32, u64)> = Vec::new();
            for e in r.leaderships.iter().filter(|e| e.leadership.leader == Some(ids[e.position as usize])) {
                let l = (e.position, e.leadership.term);
                if leaders.contains(&l) {
                    continue;
                }
                assert!(leaders.iter().all(|&(_, t)| t < l.1), "{ctx}: {l:?} after {leaders:?}");
                leaders.push(l);
            }
            assert!(leaders.len() >= 2, "{ctx}: {leaders:?}");
            assert_eq!(r.fencing.stale, 0, "{ctx}: {:?}", r.fencing);
        }
    }
}
