//! The checker on several threads (`Limits::threads`) gives one thread's results: the same
//! states, verdicts and shortest counterexamples, whatever the number of threads.

use std::sync::atomic::AtomicBool;

use ringleader_check::{
    CheckAsk, Checked, Election, KeptCheck, Limits, Report, Sweep, check, check_with, sweep, sweep_kept,
};
use ringleader_core::algo::catalogue::CATALOGUE;
use ringleader_core::topology::{Topology, TopologyKind};

/// What must not depend on the number of threads, in words: the counts, the verdict, and each
/// counterexample's property and steps.
fn summary(r: &Report) -> String {
    let broken: Vec<String> = r.counterexamples.iter().map(|c| format!("{} {:?}", c.property, c.steps)).collect();
    let counts = (r.states, r.explored, r.depth, r.final_states, r.most_messages, r.complete, r.limit);
    format!("{counts:?} {broken:?}")
}

fn sweep_summary(s: &Sweep) -> String {
    let broken: Vec<String> =
        s.broken.iter().map(|(ids, set, c)| format!("{ids:?} {set:?} {} {:?}", c.property, c.steps)).collect();
    let counts = (s.elections, s.states, s.explored, s.depth, s.most_messages, s.complete);
    format!("{counts:?} {broken:?}")
}

fn on(threads: usize, limits: Limits) -> Limits {
    Limits { threads, ..limits }
}

/// Every algorithm of the catalogue in its one-shot mode at n = 3 (4 on a hypercube, the one
/// election of a 2 × 2 mesh; none on a torus, whose smallest has 9 nodes), as `every_schedule_of_every_small_election_holds` sweeps it: the
/// sweep on 2 threads (elections side by side) gives the elections, states, explored states,
/// depth, worst case, verdict and broken elections of the sweep on 1; and each sweep's largest
/// election (every node initiating) checked alone on 2 and 3 threads (its queue shared) reports
/// what 1 thread does, counterexamples included.
#[test]
fn every_algorithm_agrees_on_one_and_two_threads() {
    for spec in CATALOGUE.iter() {
        let limits = Limits { fifo: spec.assumptions.fifo, ..Limits::default() };
        let kind = spec.default_topology();
        let (n, mesh) = match kind {
            TopologyKind::Mesh => (4, true),
            _ if Topology::build(kind, 3, 7).is_ok() => (3, false),
            _ if Topology::build(kind, 4, 7).is_ok() => (4, false),
            // A torus has 9 nodes at least: too many states for a test.
            _ => continue,
        };
        let topology = Topology::build(spec.default_topology(), n, 7).unwrap();
        let all: Vec<u32> = (0..n).collect();
        let ids: Vec<u64> = (1..=u64::from(n)).rev().collect();
        let largest = Election::new(spec, topology, ids, all, spec.rule);
        let one = check(largest.clone(), limits);
        for threads in [2, 3] {
            let many = check(largest.clone(), on(threads, limits));
            assert_eq!(summary(&many), summary(&one), "{} on {threads} threads", spec.name);
        }
        if mesh {
            continue; // the smallest mesh's sweep takes a minute
        }
        let s1 = sweep(spec, n, 7, spec.rule, limits, |_, _, _| {}).unwrap();
        let s2 = sweep(spec, n, 7, spec.rule, on(2, limits), |_, _, _| {}).unwrap();
        assert_eq!(sweep_summary(&s2), sweep_summary(&s1), "{}", spec.name);
        assert!(s1.elections >= 7 && s1.states > s1.elections, "{}: {s1:?}", spec.name);
    }
}

/// A sweep on 2 threads tells its progress once per election, in the order one thread does.
#[test]
fn a_sweep_on_two_threads_tells_its_elections_in_order() {
    let spec = ringleader_core::algo::catalogue::find("as-far").unwrap();
    let order = |threads| {
        let mut told = Vec::new();
        sweep(spec, 3, 7, spec.rule, on(threads, Limits::default()), |ids, set, r| {
            told.push((ids.to_vec(), set.to_vec(), r.states))
        })
        .unwrap();
        told
    };
    let one = order(1);
    assert_eq!(one.len(), 14, "2 arrangements × 7 initiator sets");
    assert_eq!(order(2), one);
}

fn kept_bully() -> CheckAsk {
    CheckAsk { algorithm: "bully".into(), n: 3, kept: true, crashes: 1, losses: 1, ..CheckAsk::default() }
}

fn checked(ask: &CheckAsk) -> (Election, Limits) {
    let Checked { election, fifo } = ask.check().unwrap();
    (election, Limits { fifo, ..Limits::default() })
}

/// Kept bully on 3 nodes with a crash and a lost message (which splits its vote after 54 steps,
/// docs/checking.md), its first 30,000 states: a kept check tells states apart without their
/// clock and explores one again when it comes back later, so which states are explored hangs on
/// the order they are taken; on 2 and 3 threads the states, explored states, depth and where the
/// limit cut are one thread's.
#[test]
fn a_kept_check_explores_alike_on_every_thread_count() {
    let (election, limits) = checked(&kept_bully());
    let limits = Limits { max_states: 30_000, ..limits };
    let one = check(election.clone(), limits);
    assert!(one.states >= 30_000 && one.limit == Some("states"), "{one:?}");
    for threads in [2, 3] {
        let many = check(election.clone(), on(threads, limits));
        assert_eq!(summary(&many), summary(&one), "{threads} threads");
    }
}

/// Stages on links that reorder (3 nodes) breaks a property; its shortest counterexample is the
/// same schedule on 1, 2 and 4 threads.
#[test]
fn a_shortest_counterexample_is_the_same_on_every_thread_count() {
    let ask = CheckAsk { algorithm: "stages".into(), n: 3, any_order: true, ..CheckAsk::default() };
    let (election, limits) = checked(&ask);
    let one = check(election.clone(), limits);
    assert!(!one.counterexamples.is_empty(), "stages on links that reorder breaks");
    for threads in [2, 4] {
        assert_eq!(summary(&check(election.clone(), on(threads, limits))), summary(&one), "{threads} threads");
    }
}

/// Limits end a check on 2 threads as on 1: a state limit after the same states (the merge takes
/// them in one thread's order), a depth limit at the same depth, and a check stopped before it
/// starts explores the first state only and says "stopped"; progress is told at the end.
#[test]
fn limits_end_a_check_on_two_threads_as_on_one() {
    let spec = ringleader_core::algo::catalogue::find("bully").unwrap();
    let how = KeptCheck::default();
    let limits = Limits { fifo: false, max_states: 5_000, ..Limits::default() };
    let run = |threads, limits: Limits| {
        let s = sweep_kept(spec, 3, how, on(threads, limits), None, |_| {}).unwrap();
        (s.states, s.explored, s.depth, s.complete)
    };
    let by_states = run(1, limits);
    assert!(!by_states.3 && by_states.0 >= 5_000, "{by_states:?}");
    assert_eq!(run(2, limits), by_states);
    let shallow = Limits { max_states: 0, max_depth: 12, ..limits };
    let by_depth = run(1, shallow);
    assert_eq!((by_depth.2, by_depth.3), (12, false));
    assert_eq!(run(2, shallow), by_depth);

    let (election, limits) = checked(&kept_bully());
    let stop = AtomicBool::new(true);
    let mut told = Vec::new();
    let r = check_with(election, on(2, limits), Some(&stop), |p| told.push(p.states));
    assert_eq!((r.limit, r.complete, r.explored), (Some("stopped"), false, 1));
    assert_eq!(told.last(), Some(&r.states));
}
