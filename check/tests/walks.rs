//! Random walks (`--simulate`): a sample of schedules from a seed, each checked against the same
//! properties as the exhaustive search, the first violation replayed from its walk's seed.

use std::sync::atomic::AtomicBool;

use ringleader_check::{CheckAsk, Checked, Election, ElectionModel, Limits, Sampled, Walks, check, simulate};

fn asked(ask: CheckAsk) -> (Election, Limits) {
    let Checked { election, fifo } = ask.check().unwrap();
    (election, Limits { fifo, ..Limits::default() })
}

fn ask(algorithm: &str, n: u32) -> CheckAsk {
    CheckAsk { algorithm: algorithm.into(), n, ..CheckAsk::default() }
}

fn walk(ask: CheckAsk, walks: Walks) -> Sampled {
    let (election, limits) = asked(ask);
    simulate(election, limits, walks, None, |_| {})
}

/// Stages on links that reorder (3 nodes), which the exhaustive search breaks: a run of walks
/// finds a violation of a property the exhaustive search reports broken too; its walk's seed,
/// walked once, gives the same schedule to the same property and the same ending, and the
/// schedule replays on the model to a state that breaks that property; the run stops at it.
#[test]
fn a_violation_is_found_and_replays_from_its_seed() {
    let stages = CheckAsk { any_order: true, ..ask("stages", 3) };
    let walks = Walks { walks: 2_000, depth: 200, seed: 11 };
    let s = walk(stages.clone(), walks);
    let v = s.violation.as_ref().expect("a walk breaks stages on links that reorder");
    assert_eq!(s.walks, v.walk + 1, "the run stops at the violating walk: {s:?}");
    let (election, limits) = asked(stages.clone());
    let exhaustive = check(election.clone(), limits);
    let properties: Vec<&str> = exhaustive.counterexamples.iter().map(|c| c.property).collect();
    assert!(properties.contains(&v.counterexample.property), "{} not in {properties:?}", v.counterexample.property);

    let again = walk(stages, Walks { walks: 1, seed: v.seed, ..walks });
    let w = again.violation.as_ref().expect("the seed walks the violation again");
    assert_eq!((w.walk, w.seed, w.moves), (0, v.seed, v.moves));
    let (c, d) = (&v.counterexample, &w.counterexample);
    assert_eq!((c.property, &c.steps, &c.decisions, &c.error), (d.property, &d.steps, &d.decisions, &d.error));

    let model = ElectionModel::new(election, limits.fifo);
    let end = c.steps.iter().try_fold(model.initial(), |s, &step| model.next_state(&s, step)).expect("replays");
    let i = model.properties().iter().position(|&p| p == c.property).unwrap();
    assert!(!model.holds(i, &end), "the replayed schedule ends breaking {}", c.property);
}

/// AsFar on a 4-node FIFO ring, which holds on every schedule: every walk ends in a finished
/// election (no move left) well within the depth, none breaks a property, and the figures add
/// up: each walk took at least one move per node's start, the distinct states are at least the
/// deepest walk's and at most the exhaustive search's, and the verdict says it is a sample.
#[test]
fn a_holding_election_reports_no_violation_with_its_counts() {
    let walks = Walks { walks: 300, depth: 500, seed: 5 };
    let s = walk(ask("as-far", 4), walks);
    assert!(s.violation.is_none() && s.limit.is_none() && s.clean(), "{s:?}");
    assert_eq!((s.walks, s.quiescent), (300, 300), "{s:?}");
    assert!(s.steps >= 4 * 300 && s.deepest < 500, "{s:?}");
    let (election, limits) = asked(ask("as-far", 4));
    let exhaustive = check(election, limits);
    assert!(exhaustive.holds());
    assert!(s.states > s.deepest && s.states <= exhaustive.states, "{} of {}", s.states, exhaustive.states);
    assert!(s.most_messages > 0 && s.most_messages <= exhaustive.most_messages, "{s:?}");
    assert_eq!(
        s.words(),
        format!("no violation in 300 walks of depth 500, {} distinct states: a sample, not a proof", s.states)
    );
}

/// The same seed gives the same walks (the kept bully on 3 nodes with a crash and a lost message,
/// 40 walks of 60 moves): equal figures twice; another seed walks other schedules; a run stopped
/// by its caller before it starts says so after one walk at most.
#[test]
fn the_same_seed_gives_the_same_walks() {
    let kept = CheckAsk { kept: true, crashes: 1, losses: 1, ..ask("bully", 3) };
    let walks = Walks { walks: 40, depth: 60, seed: 3 };
    let figures = |s: &Sampled| (s.walks, s.steps, s.states, s.deepest, s.quiescent, s.violation.is_some());
    let (a, b) = (walk(kept.clone(), walks), walk(kept.clone(), walks));
    assert_eq!(figures(&a), figures(&b));
    assert!(a.states > 60, "{a:?}");
    let c = walk(kept.clone(), Walks { seed: 4, ..walks });
    assert_ne!((a.steps, a.states), (c.steps, c.states), "another seed, other walks");

    let (election, limits) = asked(kept);
    let stop = AtomicBool::new(true);
    let stopped = simulate(election, limits, walks, Some(&stop), |_| {});
    assert_eq!((stopped.limit, stopped.walks), (Some("stopped"), 1), "{stopped:?}");
    assert!(!stopped.clean() && stopped.words().contains("stopped by stopped after 1 of 40 walks"));
}

/// A deep violation of a kept leadership: kept bully on 3 nodes with a crash and a lost message
/// (10 ms messages, punctual timers), whose shortest split the exhaustive search finds 54 steps
/// deep, is split by a walk too: "at most one leader per term" broken within 1,000 walks, by a
/// schedule no shorter than the search's, which its seed walks again.
#[test]
fn a_deep_kept_violation_is_walked_into() {
    let kept =
        CheckAsk { kept: true, crashes: 1, losses: 1, delay_ms: Some(10), punctual_timers: true, ..ask("bully", 3) };
    let walks = Walks { walks: 1_000, depth: 500, seed: 1 };
    let s = walk(kept.clone(), walks);
    let v = s.violation.expect("a walk splits kept bully");
    assert_eq!(v.counterexample.property, "at most one leader per term");
    let (election, limits) = asked(kept.clone());
    let shortest = check(election, limits);
    let theirs = shortest.counterexamples.iter().find(|c| c.property == v.counterexample.property).unwrap();
    assert!(
        v.counterexample.steps.len() >= theirs.steps.len(),
        "{} < {}",
        v.counterexample.steps.len(),
        theirs.steps.len()
    );
    let again = walk(kept, Walks { walks: 1, seed: v.seed, ..walks }).violation.unwrap();
    assert_eq!(again.counterexample.steps, v.counterexample.steps);
}
