//! Raft's options under short faults: a leader cut off for a blip, lossy and
//! duplicating links, with every combination of PreVote, CheckQuorum and the
//! lease. The lease rests on heartbeat rounds (thesis §6.4.1), so a lost
//! round is forgotten and the next round a majority acknowledges renews it:
//! after any blip the nodes agree on one leader again within Raft's
//! convergence bound, and with the lease never two believe they lead at once.

use ringleader_core::algo::raft::{RaftConfig, convergence_bound_ms};
use ringleader_core::algo::{Leadership, Rule, catalogue};
use ringleader_core::faults::{Fault, FaultPlan, LinkFault, Scheduled};
use ringleader_core::sim::{self, SimConfig, SimReport};
use ringleader_core::topology::Topology;

const IDS: [u64; 5] = [3, 7, 1, 8, 2];
const MAX_DELAY: u64 = 16;
/// When the first leader is surely agreed (a fault-free run agrees well before).
const CUT_AT: u64 = 2_000;

/// Every combination of the three options, as election options.
fn combos() -> Vec<Vec<(String, String)>> {
    (0..8u8)
        .map(|bits| {
            ["pre_vote", "check_quorum", "lease"]
                .iter()
                .enumerate()
                .map(|(i, name)| (name.to_string(), (bits >> i & 1 == 1).to_string()))
                .collect()
        })
        .collect()
}

fn run(seed: u64, options: &[(String, String)], faults: Vec<Scheduled>, horizon: u64) -> SimReport {
    let cfg = SimConfig {
        seed,
        max_delay: MAX_DELAY,
        faults: FaultPlan { faults },
        horizon: Some(horizon),
        options: options.to_vec(),
        ..SimConfig::default()
    };
    let spec = catalogue::find("raft").unwrap();
    let topo = Topology::complete(IDS.len() as u32).unwrap();
    let all: Vec<u32> = (0..IDS.len() as u32).collect();
    let r = sim::run_kept(spec, &topo, &IDS, &all, Rule::Max, &cfg).unwrap();
    assert!(r.errors.is_empty(), "seed {seed} {options:?}: {:?}", r.errors);
    r
}

/// The belief of position `p` at time `t`.
fn belief(r: &SimReport, p: u32, t: u64) -> Option<Leadership> {
    r.leaderships.iter().rev().find(|e| e.position == p && e.time <= t).map(|e| e.leadership)
}

/// The leader every position believes in at `t`, if they agree on one.
fn agreed(r: &SimReport, t: u64) -> Option<Leadership> {
    let first = belief(r, 0, t)?;
    let all = (0..IDS.len() as u32).all(|p| belief(r, p, t) == Some(first));
    (all && first.leader.is_some()).then_some(first)
}

/// When the positions last changed belief, if they agree at the end.
fn settled(r: &SimReport, horizon: u64) -> Option<u64> {
    agreed(r, horizon)?;
    r.leaderships.iter().map(|e| e.time).max()
}

/// Whether two positions believe they lead at one instant, and when.
fn two_leaders_at_once(r: &SimReport) -> Option<u64> {
    let mut leading = [false; IDS.len()];
    let mut events: Vec<_> = r.leaderships.iter().collect();
    events.sort_by_key(|e| e.time);
    let mut i = 0;
    while i < events.len() {
        let t = events[i].time;
        while i < events.len() && events[i].time == t {
            let e = events[i];
            leading[e.position as usize] = e.leadership.leader == Some(IDS[e.position as usize]);
            i += 1;
        }
        if leading.iter().filter(|&&l| l).count() > 1 {
            return Some(t);
        }
    }
    None
}

fn leased(options: &[(String, String)]) -> bool {
    options.iter().any(|(k, v)| k == "lease" && v == "true")
}

/// The agreed leader's position at `CUT_AT` in a fault-free run of `seed`.
fn leader_at_cut(seed: u64, options: &[(String, String)]) -> u32 {
    let before = run(seed, options, vec![], CUT_AT);
    let l = agreed(&before, CUT_AT).unwrap_or_else(|| panic!("seed {seed} {options:?}: no leader at {CUT_AT}"));
    IDS.iter().position(|&id| Some(id) == l.leader).unwrap() as u32
}

/// Cut the leader off alone at `CUT_AT` for `blip` ms; how long after the heal every node
/// agreed again (`None`: not at the horizon) and whether two believed they led at once.
fn blip(seed: u64, options: &[(String, String)], blip: u64) -> (Option<u64>, Option<u64>) {
    let p = leader_at_cut(seed, options);
    let rest: Vec<u32> = (0..IDS.len() as u32).filter(|&q| q != p).collect();
    let heal = CUT_AT + blip;
    let bound = convergence_bound_ms(RaftConfig::LOOPBACK, MAX_DELAY);
    let horizon = heal + bound + 1_000;
    let faults = vec![
        Scheduled::new(CUT_AT, seed, Fault::Partition { groups: vec![vec![p], rest] }),
        Scheduled::new(heal, seed, Fault::Partition { groups: vec![(0..IDS.len() as u32).collect()] }),
    ];
    let r = run(seed, options, faults, horizon);
    (settled(&r, horizon).map(|t| t.saturating_sub(heal)), two_leaders_at_once(&r))
}

/// The case: the leader cut off for 160 ms, 100 seeds, with every option combination.
/// Every run agrees on one leader again within Raft's convergence bound of the heal (before,
/// with the lease, 86 of 100 stayed leaderless for good: a lost round was held against the
/// term), and with the lease never two nodes believe they lead at once.
#[test]
fn a_160_ms_leader_cut_converges_in_every_run_with_every_option() {
    let bound = convergence_bound_ms(RaftConfig::LOOPBACK, MAX_DELAY);
    for options in combos() {
        let mut worst = 0;
        for seed in 0..100 {
            let (agreed_after, overlap) = blip(seed, &options, 160);
            let t = agreed_after.unwrap_or_else(|| panic!("seed {seed} {options:?}: no agreement"));
            assert!(t <= bound, "seed {seed} {options:?}: agreed {t} ms after the heal, bound {bound}");
            if leased(&options) {
                assert_eq!(overlap, None, "seed {seed} {options:?}: two leaders at once");
            }
            worst = worst.max(t);
        }
        eprintln!("160 ms cut, {options:?}: 100 of 100 agreed, the slowest {worst} ms after the heal (bound {bound})");
    }
}

/// Blips of 50 to 1,000 ms (drawn per seed), 100 seeds, with the lease and each combination of
/// PreVote and CheckQuorum: every run agrees again within the bound, never two leaders at once.
#[test]
fn blips_of_50_to_1000_ms_converge_with_the_lease() {
    let bound = convergence_bound_ms(RaftConfig::LOOPBACK, MAX_DELAY);
    for options in combos().into_iter().filter(|o| leased(o)) {
        let mut worst = 0;
        for seed in 0..100 {
            let length = 50 + (seed * 9_973 + 17) % 951;
            let (agreed_after, overlap) = blip(seed, &options, length);
            let t = agreed_after.unwrap_or_else(|| panic!("seed {seed} {options:?} blip {length}: no agreement"));
            assert!(t <= bound, "seed {seed} {options:?} blip {length}: agreed after {t} ms, bound {bound}");
            assert_eq!(overlap, None, "seed {seed} {options:?} blip {length}: two leaders at once");
            worst = worst.max(t);
        }
        eprintln!("blips 50-1000 ms, {options:?}: 100 of 100 agreed, the slowest {worst} ms after the heal");
    }
}

/// Every link duplicates half its messages, or loses 20% (3 s from `CUT_AT`), 40 seeds, every
/// option combination: one leader per term always, never two leaders at once with the lease
/// (a duplicated acknowledgement credits its round once), and agreement again after the links heal.
#[test]
fn duplicates_and_losses_never_give_two_leaders_at_once_with_the_lease() {
    let bound = convergence_bound_ms(RaftConfig::LOOPBACK, MAX_DELAY);
    for options in combos() {
        for (what, fault) in [
            ("duplicate 0.5", LinkFault { duplicate: 0.5, ..LinkFault::default() }),
            ("drop 0.2", LinkFault { drop: 0.2, ..LinkFault::default() }),
        ] {
            for seed in 0..40 {
                let heal = CUT_AT + 3_000;
                let faults = vec![
                    Scheduled::new(CUT_AT, seed, Fault::Link { from: None, to: None, fault }),
                    Scheduled::new(heal, seed, Fault::Link { from: None, to: None, fault: LinkFault::default() }),
                ];
                let horizon = heal + bound + 1_000;
                let r = run(seed, &options, faults, horizon);
                let timeline: Vec<_> = r.leaderships.iter().map(|e| (e.position, e.leadership)).collect();
                ringleader_core::invariants::one_leader_per_term(&IDS, &timeline).unwrap();
                if leased(&options) {
                    assert_eq!(two_leaders_at_once(&r), None, "seed {seed} {options:?} {what}");
                }
                assert!(agreed(&r, horizon).is_some(), "seed {seed} {options:?} {what}: no agreement after healing");
            }
        }
    }
}

/// The lease's clock-rate tolerance, stated and measured. The leader's clock runs slow from
/// `CUT_AT` on, when it is cut off alone; the others elect a successor. At the rate the module
/// docs derive from the code (ρ < margin / (2·election_min − margin), 5.2% at the presets'
/// 10% margin), no seed overlaps, at loopback timing and at etcd's; the first slower rate (in
/// steps of 1%) at which any of 20 seeds overlaps is printed: the measured tolerance, wider
/// because a successor also waits out a follower's election timeout and a round of votes.
#[test]
fn the_lease_holds_within_its_stated_clock_bound_and_the_measured_one_is_printed() {
    use ringleader_core::algo::detector::DetectorConfig;
    let overlaps = |detector: DetectorConfig, seed: u64, rate: f64| {
        let options = vec![("lease".to_string(), "true".to_string())];
        let base = SimConfig {
            seed,
            max_delay: MAX_DELAY,
            detector,
            options,
            horizon: Some(CUT_AT * 3),
            ..SimConfig::default()
        };
        let spec = catalogue::find("raft").unwrap();
        let topo = Topology::complete(IDS.len() as u32).unwrap();
        let all: Vec<u32> = (0..IDS.len() as u32).collect();
        let before = sim::run_kept(spec, &topo, &IDS, &all, Rule::Max, &base).unwrap();
        let l = agreed(&before, CUT_AT).unwrap_or_else(|| panic!("seed {seed}: no leader"));
        let p = IDS.iter().position(|&id| Some(id) == l.leader).unwrap() as u32;
        let rest: Vec<u32> = (0..IDS.len() as u32).filter(|&q| q != p).collect();
        let faults = vec![
            Scheduled::new(CUT_AT, 0, Fault::Clock { node: p, rate }),
            Scheduled::new(CUT_AT, 0, Fault::Partition { groups: vec![vec![p], rest] }),
        ];
        let horizon = CUT_AT + 10 * detector.timeout_ms;
        let cfg = SimConfig { faults: FaultPlan { faults }, horizon: Some(horizon), ..base };
        let r = sim::run_kept(spec, &topo, &IDS, &all, Rule::Max, &cfg).unwrap();
        two_leaders_at_once(&r).is_some()
    };
    for (name, detector) in
        [("loopback", DetectorConfig::LOOPBACK), ("etcd", DetectorConfig { period_ms: 100, timeout_ms: 1_000 })]
    {
        let c = RaftConfig::for_detector(detector);
        let (m, e) = (c.margin_ms as f64, c.election_min_ms as f64);
        let stated = m / (2.0 * e - m);
        for seed in 0..20 {
            assert!(!overlaps(detector, seed, 1.0 - stated * 0.99), "{name} seed {seed}: overlap within the bound");
        }
        let measured = (1..=60)
            .map(|pct| f64::from(pct) / 100.0)
            .find(|slow| (0..20).any(|seed| overlaps(detector, seed, 1.0 - slow)));
        eprintln!(
            "raft lease, {name} timing: stated tolerance {:.1}% slow, first overlap at {} slow (20 seeds, 1% steps)",
            stated * 100.0,
            measured.map_or("none up to 60%".to_string(), |s| format!("{:.0}%", s * 100.0))
        );
    }
}
