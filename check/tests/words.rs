//! The words of a schedule: what a student reads beside a counterexample's
//! diagram names the message that was overtaken, the moment a node starts to
//! suspect another, votes granted or refused, a refusal by ids, timers by
//! name, and the caveat of a liveness property that rests on random timing.

use ringleader_check::{Election, ElectionModel, Faults, Limits, Step, check};
use ringleader_core::algo::catalogue;
use ringleader_core::algo::detector::DetectorConfig;
use ringleader_core::topology::{Topology, TopologyKind};

/// Stages on a bidirectional ring of 3 whose links may reorder: the shortest schedule that makes a
/// node err ends with a stage-2 message overtaking the stage-1 one sent before it on the same link,
/// and the words say so by name; the error names the refusing node and the sender by id and the
/// message in words (before: "position 1 refused Election { id: 3, .. }").
#[test]
fn an_overtaking_message_names_what_it_overtook() {
    let spec = catalogue::find("stages").unwrap();
    let topology = Topology::ring(TopologyKind::RingBi, 3, 0).unwrap();
    let e = Election::new(spec, topology, vec![1, 2, 3], vec![0], spec.rule);
    let r = check(e.clone(), Limits { fifo: false, ..Limits::default() });
    let c = r.counterexamples.iter().find(|c| c.property == "no node errs").expect("links that reorder break stages");
    let words = ElectionModel::new(e, false).words(&c.steps);
    let last = words.last().unwrap();
    assert!(
        last.contains(
            "receives election (id 3, stage 2) from id 3, overtaking election (id 3, stage 1), sent before it"
        ),
        "{words:#?}"
    );
    assert_eq!(words.iter().filter(|w| w.contains("overtaking")).count(), 1, "{words:#?}");
    let error = c.error.as_deref().unwrap();
    assert!(error.starts_with("id 2 refused election (id 3, stage 2) from id 3: "), "{error}");
}

/// Kept bully on 3 nodes whose leader (id 3) crashes after every node has started, then time
/// passes with no other fault: the words say at which step id 1 and id 2 each start to suspect
/// id 3, on the failure-detector step that made them; nothing else is said to suspect anyone, and
/// no step names a timer by its number.
#[test]
fn the_words_say_when_a_node_starts_to_suspect() {
    let spec = catalogue::find("bully").unwrap();
    let topology = Topology::complete(3).unwrap();
    let faults = Faults { crashes: 1, ..Faults::NONE };
    let model =
        ElectionModel::new(Election::kept(spec, topology, vec![1, 2, 3], DetectorConfig::LOOPBACK, faults), false);
    let mut s = model.initial();
    let mut steps = Vec::new();
    let mut actions = Vec::new();
    for _ in 0..400 {
        actions.clear();
        model.actions(&s, &mut actions);
        let started = !actions.iter().any(|a| matches!(a, Step::Start(_)));
        let crashed = steps.contains(&Step::Crash(2));
        let step = if started && !crashed {
            Step::Crash(2)
        } else {
            *actions.iter().find(|a| !a.is_fault()).expect("a step that is not a fault")
        };
        s = model.next_state(&s, step).expect("a step the model offered");
        steps.push(step);
    }
    let words = model.words(&steps);
    let crash = words.iter().position(|w| w == "id 3 crashes").expect("the crash");
    for id in [1, 2] {
        let said = format!("id {id} now suspects id 3");
        let at = words.iter().position(|w| w.ends_with(&said)).unwrap_or_else(|| panic!("{said}: {words:#?}"));
        assert!(at > crash, "{said} after the crash");
        assert!(words[at].starts_with(&format!("id {id}'s failure-detector timer fires; ")), "{}", words[at]);
    }
    assert_eq!(words.iter().filter(|w| w.contains("suspects")).count(), 2, "{words:#?}");
    assert!(!words.iter().any(|w| w.contains("timer 0") || w.contains("timer 1")), "{words:#?}");
}

/// Raft on 3 nodes with one crash, every order of the timers: the convergence property breaks on a
/// schedule of split votes, whose words say votes "granted" and "refused", and the model gives the
/// caveat that Raft relies on randomised timeouts there; the safety properties have no caveat, and
/// neither has bully's convergence.
#[test]
fn a_split_vote_livelock_is_said_to_rest_on_random_timeouts() {
    let raft = catalogue::find("raft").unwrap();
    let e = Election::kept(
        raft,
        Topology::complete(3).unwrap(),
        vec![1, 2, 3],
        DetectorConfig::LOOPBACK,
        Faults { crashes: 1, ..Faults::NONE },
    );
    let r = check(e.clone(), Limits { fifo: false, ..Limits::default() });
    let convergence = ringleader_check::KEPT_PROPERTIES[4];
    let c = r.counterexamples.iter().find(|c| c.property == convergence).expect("timers firing together");
    let model = ElectionModel::new(e, false);
    let words = model.words(&c.steps).join("\n");
    assert!(words.contains("raft_vote (term") && words.contains(", refused)"), "{words}");
    assert!(model.caveat(convergence).unwrap().contains("randomised timeouts"));
    assert_eq!(model.caveat(ringleader_check::KEPT_PROPERTIES[1]), None);
    let bully = ElectionModel::new(
        Election::kept(
            catalogue::find("bully").unwrap(),
            Topology::complete(3).unwrap(),
            vec![1, 2, 3],
            DetectorConfig::LOOPBACK,
            Faults::NONE,
        ),
        false,
    );
    assert_eq!(bully.caveat(convergence), None);
}
