//! Clock-rate faults (`Fault::Clock`) against the leaders that hold a lease:
//! a leader cut off from every other node believes it leads until its lease
//! ends by its own clock, while the others wait out their promise by theirs.
//! Within the rate bound the algorithm states, the two beliefs never overlap
//! in real time; a leader whose clock runs at half speed outlives its lease
//! and overlaps its successor. Simulated, seeded, 5 nodes.

mod common;

use common::{MAX_DELAY, final_agreement};
use ringleader_core::algo::Rule;
use ringleader_core::algo::catalogue;
use ringleader_core::faults::{Fault, FaultPlan, Scheduled};
use ringleader_core::sim::{self, SimConfig, SimReport};
use ringleader_core::topology::{IdOrder, Topology};

/// When the leader's clock changes and it is cut off from the others.
const CUT: u64 = 3_000;

/// The leased leaderships: Chubby, Raft with its `lease` option, and client-go's lease election.
const LEASED: [(&str, &[(&str, &str)]); 3] = [("chubby", &[]), ("raft", &[("lease", "true")]), ("lease", &[])];

fn options(o: &[(&str, &str)]) -> Vec<(String, String)> {
    o.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// A kept leadership of `algorithm` on 5 nodes whose leader's clock runs at `rate` from
/// [`CUT`] on, when it is cut off from the others, to 6 s after.
fn slow_and_cut_off(algorithm: &str, o: &[(&str, &str)], seed: u64, rate: f64) -> (SimReport, Vec<u64>, u32) {
    let n = 5;
    let spec = catalogue::find(algorithm).unwrap();
    let ids = IdOrder::Random(seed).arrange(n).unwrap();
    let all: Vec<u32> = (0..n).collect();
    let topo = Topology::complete(n).unwrap();
    let settled =
        SimConfig { seed, max_delay: MAX_DELAY, horizon: Some(CUT), options: options(o), ..SimConfig::default() };
    let before = sim::run_kept(spec, &topo, &ids, &all, Rule::Max, &settled).unwrap();
    let leading = final_agreement(&before, &ids).and_then(|l| l.leader).expect("a leader before the fault");
    let leader = ids.iter().position(|&id| id == leading).unwrap() as u32;
    let others = (0..n).filter(|&p| p != leader).collect();
    let plan = vec![
        Scheduled::new(CUT, 0, Fault::Clock { node: leader, rate }),
        Scheduled::new(CUT, 0, Fault::Partition { groups: vec![vec![leader], others] }),
        // The lease election's holder talks only to the store: cut that too.
        Scheduled::new(CUT, 0, Fault::Store { node: Some(leader), cut: true, delay_ms: 0 }),
    ];
    let cfg = SimConfig { faults: FaultPlan { faults: plan }, horizon: Some(CUT + 6_000), ..settled };
    let r = sim::run_kept(spec, &topo, &ids, &all, Rule::Max, &cfg).unwrap();
    assert!(r.errors.is_empty(), "{algorithm} seed {seed}: {:?}", r.errors);
    (r, ids, leader)
}

/// Did a position other than `old` come to lead after the cut?
fn replaced(r: &SimReport, ids: &[u64], old: u32) -> bool {
    r.leaderships
        .iter()
        .any(|e| e.time > CUT && e.position != old && e.leadership.leader == Some(ids[e.position as usize]))
}

/// The longest stretch of virtual (real) time during which two positions both believed they led.
fn longest_overlap(r: &SimReport, ids: &[u64]) -> u64 {
    let n = ids.len();
    let mut leads: Vec<Option<u64>> = vec![None; n];
    let (mut longest, mut since) = (0, None);
    for e in &r.leaderships {
        let p = e.position as usize;
        let now_leads = e.leadership.leader == Some(ids[p]);
        leads[p] = match (leads[p], now_leads) {
            (None, true) => Some(e.time),
            (Some(t), true) => Some(t),
            (_, false) => None,
        };
        let leaders = leads.iter().filter(|l| l.is_some()).count();
        match (since, leaders >= 2) {
            (None, true) => since = Some(e.time),
            (Some(s), false) => {
                longest = longest.max(e.time - s);
                since = None;
            }
            _ => {}
        }
    }
    if let Some(s) = since {
        longest = longest.max(r.end_time.saturating_sub(s));
    }
    longest
}

/// Within the rate bound (a leader's clock 3% slow, inside Chubby's 10% and Raft's 5% margin),
/// over 10 seeds each, no two nodes of a leased leadership ever believe they lead at once, though
/// the cut-off leader is replaced. Beyond it the lease breaks: with the leader's clock at half
/// speed every Chubby seed overlaps by at least 100 ms, the old leader still believing in its
/// lease after its successor was elected; Raft's lease has less left to run when the leader is cut
/// off (it is renewed every heartbeat, and its successor must first wait out the others' election
/// timeouts), so its seeds overlap by at least 100 ms only at a tenth of real time. client-go's
/// lease (holder cut off from the store) may break below (RetryPeriod + RenewDeadline) / LeaseDuration = 0.8: at
/// half speed some seeds overlap (the holder's deadline runs from its last renewal, a RetryPeriod
/// or less before the cut), and at a quarter speed every seed by at least 100 ms.
#[test]
fn a_slow_leader_clock_breaks_the_lease_only_beyond_its_bound() {
    for ((algorithm, o), breaking) in LEASED.into_iter().zip([0.5, 0.1, 0.25]) {
        let (mut half, mut far) = (Vec::new(), Vec::new());
        for seed in 0..10 {
            let (within, ids, old) = slow_and_cut_off(algorithm, o, seed, 0.97);
            assert_eq!(longest_overlap(&within, &ids), 0, "{algorithm} seed {seed}: {:?}", within.leaderships);
            assert!(replaced(&within, &ids, old), "{algorithm} seed {seed}: the majority side elects");
            let (r, ids, _) = slow_and_cut_off(algorithm, o, seed, 0.5);
            half.push(longest_overlap(&r, &ids));
            let (r, ids, _) = slow_and_cut_off(algorithm, o, seed, breaking);
            far.push(longest_overlap(&r, &ids));
        }
        eprintln!("{algorithm}: overlaps (ms) with the leader's clock at 0.5: {half:?}; at {breaking}: {far:?}");
        assert!(far.iter().all(|&o| o >= 100), "{algorithm} at {breaking}: {far:?}");
    }
}

/// A clock rate applies to the timers the node sets after it: a leader at rate 2 (its clock
/// twice as fast) sends its heartbeats twice as often, so a failure-free Raft leadership sends
/// about twice the AppendEntries over the same stretch.
#[test]
fn a_fast_clock_fires_its_timers_sooner() {
    let n = 3;
    let spec = catalogue::find("raft").unwrap();
    let ids = vec![1, 2, 3];
    let all: Vec<u32> = (0..n).collect();
    let topo = Topology::complete(n).unwrap();
    let run = |rate: f64| {
        let plan = (0..n).map(|node| Scheduled::new(0, 0, Fault::Clock { node, rate })).collect();
        let cfg = SimConfig { faults: FaultPlan { faults: plan }, horizon: Some(5_000), ..SimConfig::default() };
        let r = sim::run_kept(spec, &topo, &ids, &all, Rule::Max, &cfg).unwrap();
        r.counters.by_kind[ringleader_core::algo::MsgKind::AppendEntries as usize]
    };
    let (normal, fast) = (run(1.0), run(2.0));
    assert!(fast * 10 >= normal * 18 && fast * 10 <= normal * 22, "{normal} at rate 1, {fast} at rate 2");
}

/// `LEASED` covers every leased leadership of the catalogue: each kept entry whose leader holds a
/// lease (`KeptSpec::lease`), and each kept entry with an option that gives one, with that option
/// set; so a new leased algorithm is refused here until it has its row (docs/architecture.md's
/// walkthrough names it).
#[test]
fn every_leased_leadership_has_a_row() {
    let mut from_catalogue: Vec<(&str, Vec<&str>)> = Vec::new();
    for spec in catalogue::CATALOGUE.iter().filter(|s| s.kept.is_some()) {
        if spec.kept.is_some_and(|k| k.lease.is_some()) {
            from_catalogue.push((spec.name, Vec::new()));
        }
        for option in spec.extras.options.iter().filter(|o| o.lease.is_some()) {
            from_catalogue.push((spec.name, vec![option.name]));
        }
    }
    let mut listed: Vec<(&str, Vec<&str>)> =
        LEASED.iter().map(|(name, o)| (*name, o.iter().map(|(k, _)| *k).collect())).collect();
    from_catalogue.sort();
    listed.sort();
    assert_eq!(listed, from_catalogue, "LEASED against the catalogue's leased leaderships");
}
