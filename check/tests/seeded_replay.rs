//! A counterexample found with a seed other than 0 replays, on the second driver, with that seed.

use ringleader_check::{CheckAsk, Election, Limits, check};
use ringleader_core::schedule::{replay, replay_seeded};

/// ProbAsFar (randomised) on ids [4, 4, 4] checked with seed 5 breaks "at most one leader" in 4
/// steps; replayed with seed 5 those steps reach the checker's decisions (two leaders or more), while
/// seed 0's draws make the same steps mean another run.
#[test]
fn a_counterexample_replays_with_its_seed() {
    let checked = CheckAsk { algorithm: "prob-as-far".into(), ids: vec![4; 3], ..CheckAsk::default() }.check().unwrap();
    let e = Election { seed: 5, ..checked.election };
    let r = check(e.clone(), Limits { fifo: checked.fifo, ..Limits::default() });
    let c = r.counterexamples.first().expect("a counterexample");
    assert_eq!(c.property, "at most one leader");
    let again = replay_seeded(e.spec, &e.topology, &e.ids, e.rule, None, checked.fifo, e.seed, &c.steps).unwrap();
    assert_eq!(again.decisions, c.decisions);
    assert!(again.decisions.iter().flatten().filter(|d| d.role == ringleader_core::algo::Role::Leader).count() >= 2);
    let unseeded = replay(e.spec, &e.topology, &e.ids, e.rule, None, checked.fifo, &c.steps);
    assert!(unseeded.map_or(true, |u| u.decisions != c.decisions), "seed 0 should draw otherwise");
}
