//! The pause fault (`Fault::Pause`) against plain Raft kept on 5 simulated
//! nodes: a leader paused for twice the election timeout is replaced while it
//! sleeps; when it resumes it first fires the timers that came due (its
//! heartbeat: it still believes it leads) and then learns the higher term
//! from the messages it held.

use ringleader_core::algo::Rule;
use ringleader_core::algo::catalogue;
use ringleader_core::algo::raft::RaftConfig;
use ringleader_core::faults::{Fault, FaultPlan, Scheduled};
use ringleader_core::sim::{self, SimConfig, SimReport};
use ringleader_core::topology::{IdOrder, Topology};

/// When the leader pauses.
const PAUSE_AT: u64 = 3_000;

/// Run plain Raft on 5 nodes to `horizon` with `plan`.
fn raft(seed: u64, ids: &[u64], horizon: u64, plan: Vec<Scheduled>) -> SimReport {
    let spec = catalogue::find("raft").unwrap();
    let all: Vec<u32> = (0..5).collect();
    let cfg = SimConfig {
        seed,
        max_delay: 16,
        horizon: Some(horizon),
        faults: FaultPlan { faults: plan },
        ..SimConfig::default()
    };
    let r = sim::run_kept(spec, &Topology::complete(5).unwrap(), ids, &all, Rule::Max, &cfg).unwrap();
    assert!(r.errors.is_empty(), "seed {seed}: {:?}", r.errors);
    r
}

/// The position that leads the highest term by `r`'s last beliefs.
fn leader(r: &SimReport, ids: &[u64]) -> (u32, u64) {
    r.leaderships
        .iter()
        .filter(|e| e.leadership.leader == Some(ids[e.position as usize]))
        .map(|e| (e.position, e.leadership.term))
        .max_by_key(|&(_, t)| t)
        .expect("a leader")
}

/// Raft's leader paused for twice its longest election timeout, over 20 seeds: the others elect
/// a leader of a higher term during the pause; the paused leader takes no step (no belief changes)
/// until the pause ends; then it resumes with timers due and messages held (the simulator fires
/// the timers first: `sim::tests::a_pause_defers_timers_then_hands_over_held_messages`), and its
/// first change of belief, at the instant it resumes, follows the higher term it learned from a
/// held message.
#[test]
fn a_paused_raft_leader_is_replaced_then_fires_its_timers_then_follows() {
    let pause = 2 * RaftConfig::for_detector(SimConfig::default().detector).election_max_ms;
    let mut replaced_after = Vec::new();
    for seed in 0..20 {
        let ids = IdOrder::Random(seed).arrange(5).unwrap();
        let before = raft(seed, &ids, PAUSE_AT, Vec::new());
        let (old, term) = leader(&before, &ids);
        let plan = vec![Scheduled::new(PAUSE_AT, 0, Fault::Pause { node: old, ms: pause })];
        let r = raft(seed, &ids, PAUSE_AT + 3 * pause, plan);
        let resumed = PAUSE_AT + pause;
        let during = |e: &&ringleader_core::sim::LeadershipEvent| e.time > PAUSE_AT && e.time < resumed;
        let new = r.leaderships.iter().filter(during).find(|e| e.leadership.leader == Some(ids[e.position as usize]));
        let new = new.unwrap_or_else(|| panic!("seed {seed}: nobody was elected during the pause"));
        assert!(new.leadership.term > term && new.position != old, "seed {seed}: {new:?}");
        replaced_after.push(new.time - PAUSE_AT);
        assert!(
            !r.leaderships.iter().filter(during).any(|e| e.position == old),
            "seed {seed}: the paused leader took a step"
        );
        let log = r.fault_log.iter().find(|l| l.starts_with(&format!("{resumed}: position {old} resumes")));
        let log = log.unwrap_or_else(|| panic!("seed {seed}: {:?}", r.fault_log));
        assert!(!log.contains(" 0 timer(s)") && !log.contains(" 0 input(s)"), "seed {seed}: {log}");
        let after: Vec<_> = r.leaderships.iter().filter(|e| e.position == old && e.time >= resumed).collect();
        let first = after.first().unwrap_or_else(|| panic!("seed {seed}: the old leader never changed its belief"));
        assert_eq!(first.time, resumed, "seed {seed}: it learns the higher term as it resumes");
        assert!(first.leadership.term > term && first.leadership.leader != Some(ids[old as usize]), "{first:?}");
    }
    replaced_after.sort_unstable();
    eprintln!(
        "pause of {pause} ms: a new leader {} / {} / {} ms (min / median / max of 20 seeds) after the pause began",
        replaced_after[0], replaced_after[10], replaced_after[19]
    );
}
