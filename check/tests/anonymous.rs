//! Anonymous rings: every node the same id. The checker reports the
//! symmetric execution (Angluin's argument) as the counterexample of a
//! deterministic algorithm, in lock-step rounds after each of which every
//! node is in the same state, and it replays on the second driver.

use ringleader_check::{CheckAsk, ENDS, Limits, PROPERTIES, check};
use ringleader_core::algo::catalogue::CATALOGUE;
use ringleader_core::schedule::replay;

/// AsFar on ids [4, 4, 4, 4]: the counterexample is the symmetric run, two rounds (every node
/// starts and sends its id right; every node gets 4 back on its left port and decides it leads),
/// breaking "at most one leader" with all four leading; it replays with four leaders.
#[test]
fn as_far_on_four_fours_is_the_symmetric_run() {
    let checked = CheckAsk { algorithm: "as-far".into(), ids: vec![4; 4], ..CheckAsk::default() }.check().unwrap();
    let e = checked.election;
    let r = check(e.clone(), Limits { fifo: checked.fifo, ..Limits::default() });
    let c = &r.counterexamples[0];
    assert_eq!(c.property, "at most one leader");
    assert_eq!(c.steps.len(), 8, "{:?}", c.steps);
    assert_eq!(c.rounds.len(), 3, "two rounds and the ending: {:#?}", c.rounds);
    assert!(c.rounds[0].starts_with("round 1: every node wakes up and starts, sends election (id 4)"), "{c:#?}");
    assert!(c.rounds[1].contains("decides it leads") && c.rounds[1].contains("every node now in the same state"));
    assert!(c.rounds[2].contains("all 4 nodes decide they lead"), "{:?}", c.rounds[2]);
    let replayed = replay(e.spec, &e.topology, &e.ids, e.rule, None, checked.fifo, &c.steps).unwrap();
    assert_eq!(replayed.decisions.iter().flatten().filter(|d| d.leader == 4).count(), 4);
    assert!(replayed.violations.iter().any(|v| v.contains("4 leaders")), "{:?}", replayed.violations);
}

/// Distinct ids never give a symmetric run: AsFar on [1, 2, 3, 4] holds and no counterexample of
/// any algorithm on distinct ids has rounds.
#[test]
fn distinct_ids_have_no_symmetric_run() {
    let checked =
        CheckAsk { algorithm: "as-far".into(), ids: vec![1, 2, 3, 4], ..CheckAsk::default() }.check().unwrap();
    assert!(check(checked.election, Limits { fifo: checked.fifo, ..Limits::default() }).holds());
}

/// Every one-shot algorithm of the catalogue that assumes distinct ids, on an anonymous ring of 3
/// (every node id 1) of its default overlay: where that overlay looks the same from every node,
/// the symmetric run breaks a property (Angluin: a deterministic algorithm cannot elect there),
/// and every round leaves every node in the same state; an algorithm that needs no ids has no
/// symmetric run to report (its random bits differ).
#[test]
fn every_deterministic_algorithm_breaks_on_its_symmetric_run() {
    let mut shown = 0;
    for spec in CATALOGUE.iter().filter(|s| s.kept.is_none()) {
        let ask = CheckAsk { algorithm: spec.name.into(), n: 3, anonymous: true, ..CheckAsk::default() };
        let Ok(checked) = ask.check() else { continue };
        let limits = Limits { fifo: checked.fifo, max_states: 200_000, ..Limits::default() };
        let r = check(checked.election, limits);
        let symmetric = r.counterexamples.iter().find(|c| !c.rounds.is_empty());
        if let Some(c) = symmetric {
            shown += 1;
            assert!(!spec.extras.anonymous, "{}: its random bits should differ", spec.name);
            assert!(PROPERTIES.contains(&c.property) || c.property == ENDS, "{}: {}", spec.name, c.property);
            let rounds = &c.rounds[..c.rounds.len() - 1];
            assert!(rounds.iter().all(|w| w.contains("every node")), "{}: {rounds:#?}", spec.name);
            eprintln!("{}: {} after {} rounds", spec.name, c.property, rounds.len());
        }
    }
    assert!(shown >= 5, "only {shown} algorithms had a symmetric run");
}

/// Itai-Rodeh on 3 nodes, for 40 seeds of the nodes' random bits: every arrangement and set of
/// initiators holds every property on every schedule (one leader at most, agreement, a final
/// state only once elected), and some seeds' draws collide, so that a second round is checked too.
#[test]
fn itai_rodeh_holds_on_every_schedule_of_many_draws() {
    let spec = ringleader_core::algo::catalogue::find("itai-rodeh").unwrap();
    let (mut deepest, mut shallowest) = (0, usize::MAX);
    for coins in 0..40 {
        let s = ringleader_check::sweep_drawn(spec, 3, 7, coins, spec.rule, Limits::default(), |_, _, _| {}).unwrap();
        assert!(s.holds(), "seed {coins}: {:?}", s.broken.first());
        (deepest, shallowest) = (deepest.max(s.depth), shallowest.min(s.depth));
    }
    assert!(deepest > shallowest, "some draws collide and take another round ({shallowest}..{deepest} steps)");
}
