//! The checker by hand: a small election's schedule chosen one step at a
//! time (stateright's Explorer, for our catalogue). [`explore`] replays a
//! path of choices from the initial state, each an index into the steps
//! that may follow the state it reached ([`ElectionModel::actions`], in
//! that order), and tells where it ends: the steps so far and those that
//! may come next in words, every node's state and belief, and which
//! properties the state breaks.
//!
//! It is pure and stateless, so a page keeps only the path and asks again
//! after each choice (or after "back", the path without its last choice);
//! and bounded: at most [`MAX_EXPLORE_N`] nodes and [`MAX_PATH`] choices,
//! each replayed once (a choice costs one state's steps and one step).
//! Every step of the model is offered, faults within the budget included,
//! without the check's reductions: a person sees each delivery, timer and
//! tick the network may take.
//!
//! ```
//! use ringleader_check::{CheckAsk, explore};
//! let ask = CheckAsk { algorithm: "as-far".into(), n: 3, ..CheckAsk::default() };
//! let start = explore(&ask, &[]).unwrap();
//! assert_eq!(start.choices[1], "id 2 wakes up and starts");
//! let after = explore(&ask, &[1]).unwrap();
//! assert_eq!(after.taken, ["id 2 wakes up and starts"]);
//! assert!(after.nodes[1].changed && !after.nodes[0].changed);
//! ```

use crate::{CheckAsk, Checked, ElectionModel, Refusal, Step, System};

/// The most nodes an exploration may have: each state's next steps are
/// listed for a person to choose from, and they grow with the links.
pub const MAX_EXPLORE_N: u32 = 4;

/// The most choices a path may hold (a kept leadership's failover by hand
/// takes some fifty steps; a path is replayed whole on every request).
pub const MAX_PATH: usize = 1_000;

/// Where a path of choices ends ([`explore`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exploration {
    /// The steps taken, in words, in order.
    pub taken: Vec<String>,
    /// The steps that may come next, in words: choice `i` is `choices[i]`
    /// (empty when none can: a final state, or a node erred).
    pub choices: Vec<String>,
    /// Every node, in position order.
    pub nodes: Vec<NodeNow>,
    /// Every property the model checks ([`ElectionModel::properties`]), in order.
    pub properties: Vec<PropertyNow>,
    /// What went wrong, if a node erred ([`System::error`]).
    pub error: Option<String>,
    /// Nothing in flight, no timer pending, every initiator started
    /// ([`System::is_final`]).
    pub is_final: bool,
    /// The links deliver first in, first out.
    pub fifo: bool,
    /// The messages in flight, link by link, in words ("id 1's election (id 1) to id 2").
    pub in_flight: Vec<String>,
}

/// One node where a path ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeNow {
    /// Its position.
    pub position: u32,
    /// Its id.
    pub id: u64,
    /// Its algorithm's state (`"candidate"`, `"leader"`, ...), or `crashed`.
    pub state: &'static str,
    /// What it believes or decided, in words ("follows 3 (term 1)", "undecided").
    pub belief: String,
    /// Its state or belief changed in the last step.
    pub changed: bool,
    /// Its variables, `name: value` separated by commas (`stage: 2, best: 3`).
    pub variables: String,
}

/// One property where a path ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PropertyNow {
    /// Its name, as the checker reports it.
    pub name: &'static str,
    /// The state keeps it.
    pub holds: bool,
    /// Broken: after how many steps it broke (and stayed broken since).
    pub broken_since: Option<usize>,
}

fn refused(field: &'static str, why: String) -> Refusal {
    Refusal { field, why, precondition: false }
}

/// Replay `path` (each choice an index into the steps that may follow the
/// state reached so far) on the election `ask` describes, validated as a
/// check is ([`CheckAsk::check`]); refused naming `n` beyond
/// [`MAX_EXPLORE_N`] nodes, and naming `path` beyond [`MAX_PATH`] choices or
/// at a choice that is not one of its state's.
pub fn explore(ask: &CheckAsk, path: &[u32]) -> Result<Exploration, Refusal> {
    let n = if ask.n == 0 { 3 } else { ask.n };
    if n > MAX_EXPLORE_N {
        return Err(refused(
            "n",
            format!("{n} nodes: the explorer takes at most {MAX_EXPLORE_N} (every state's next steps are listed)"),
        ));
    }
    if path.len() > MAX_PATH {
        return Err(refused("path", format!("{} choices: at most {MAX_PATH}", path.len())));
    }
    let Checked { election, fifo } = ask.check()?;
    explore_model(&ElectionModel::new(election, fifo), fifo, path)
}

/// [`explore`] on a model already built (`fifo`: its links are FIFO), with
/// no bound on its size or on the path's length.
pub fn explore_model(model: &ElectionModel, fifo: bool, path: &[u32]) -> Result<Exploration, Refusal> {
    let properties = model.properties();
    let mut broken_since: Vec<Option<usize>> = vec![None; properties.len()];
    let mut note = |s: &System, at: usize| {
        for (i, since) in broken_since.iter_mut().enumerate() {
            if model.holds(i, s) {
                *since = None;
            } else {
                since.get_or_insert(at);
            }
        }
    };
    let mut s = model.initial();
    let mut before = None;
    let mut taken = Vec::with_capacity(path.len());
    let mut next = Vec::new();
    note(&s, 0);
    for (k, &choice) in path.iter().enumerate() {
        next.clear();
        model.actions(&s, &mut next);
        let step = *next.get(choice as usize).ok_or_else(|| out_of_range(k, choice, next.len()))?;
        let after = model
            .next_state(&s, step)
            .ok_or_else(|| refused("path", format!("path[{k}]: step {} cannot be taken", k + 1)))?;
        taken.push(step);
        before = Some(std::mem::replace(&mut s, after));
        note(&s, k + 1);
    }
    next.clear();
    model.actions(&s, &mut next);
    Ok(Exploration {
        taken: model.words(&taken),
        choices: model.next_words(&taken, &next),
        nodes: nodes(model, &s, before.as_ref()),
        properties: properties
            .iter()
            .zip(broken_since)
            .map(|(&name, since)| PropertyNow { name, holds: since.is_none(), broken_since: since })
            .collect(),
        error: s.error().map(str::to_string),
        is_final: s.is_final(),
        fifo,
        in_flight: model.in_flight(&s),
    })
}

/// The refusal of choice `choice` at `path[k]`, where `count` steps could follow.
fn out_of_range(k: usize, choice: u32, count: usize) -> Refusal {
    let why = match count {
        0 => format!("path[{k}] is {choice}, but no step can follow step {k} (the run has ended)"),
        _ => format!("path[{k}] is {choice}, but step {} has {count} choices (0 to {})", k + 1, count - 1),
    };
    refused("path", why)
}

/// Every node of `s`, each marked changed if its state or belief differs from `before`'s.
fn nodes(model: &ElectionModel, s: &System, before: Option<&System>) -> Vec<NodeNow> {
    let (states, beliefs, variables) = (model.node_states(s), model.fates(s), model.variables(s));
    let was = before.map(|b| (model.node_states(b), model.fates(b)));
    let ids = &model.election().ids;
    (0..states.len())
        .map(|p| NodeNow {
            position: p as u32,
            id: ids[p],
            state: states[p],
            belief: beliefs[p].clone(),
            changed: was.as_ref().is_some_and(|(st, be)| st[p] != states[p] || be[p] != beliefs[p]),
            variables: fields(&variables[p]),
        })
        .collect()
}

/// The fields of a `Debug` struct's text (`Stages { id: 3, stage: 2 }` gives
/// `id: 3, stage: 2`); other text as it is.
fn fields(debug: &str) -> String {
    match (debug.find(" { "), debug.strip_suffix(" }")) {
        (Some(open), Some(body)) => body.get(open + 3..).map_or_else(|| debug.to_string(), str::to_string),
        _ => debug.to_string(),
    }
}

/// The choices that follow `steps` from the initial state of `model`, one
/// per step (the path [`explore_model`] replays), or `None` at the first
/// step that is not one of its state's.
pub fn path_of(model: &ElectionModel, steps: &[Step]) -> Option<Vec<u32>> {
    let mut s = model.initial();
    let mut next = Vec::new();
    let mut path = Vec::with_capacity(steps.len());
    for &step in steps {
        next.clear();
        model.actions(&s, &mut next);
        path.push(next.iter().position(|&x| x == step)? as u32);
        s = model.next_state(&s, step)?;
    }
    Some(path)
}

/// The choices that follow the steps `words` say, in order, from the
/// initial state of the election `ask` describes (validated and bounded as
/// [`explore`] is): how the explorer opens a checker's counterexample, whose
/// steps come in these words. Refused naming `follow` at the first step no
/// choice of its state says (a schedule of another link model, say).
pub fn path_of_words(ask: &CheckAsk, words: &[String]) -> Result<Vec<u32>, Refusal> {
    explore(ask, &[])?;
    if words.len() > MAX_PATH {
        return Err(refused("follow", format!("{} steps: at most {MAX_PATH}", words.len())));
    }
    let Checked { election, fifo } = ask.check()?;
    let model = ElectionModel::new(election, fifo);
    let mut s = model.initial();
    let (mut taken, mut next, mut path) = (Vec::with_capacity(words.len()), Vec::new(), Vec::new());
    for (k, word) in words.iter().enumerate() {
        next.clear();
        model.actions(&s, &mut next);
        let said = model.next_words(&taken, &next);
        let links = if fifo { "FIFO links" } else { "links that may reorder messages" };
        let choice = said.iter().position(|w| w == word).ok_or_else(|| {
            refused("follow", format!("step {} ({word}) is not among the next steps on {links}", k + 1))
        })?;
        let step = next[choice];
        s = model
            .next_state(&s, step)
            .ok_or_else(|| refused("follow", format!("step {} ({word}) cannot be taken", k + 1)))?;
        taken.push(step);
        path.push(choice as u32);
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::fields;

    /// A `Debug` text's fields: a struct's inside its braces, anything else as it is, and no
    /// panic on a struct with empty braces (`X { }` sliced past its end before).
    #[test]
    fn fields_of_debug_texts() {
        assert_eq!(fields("Stages { id: 3, stage: 2 }"), "id: 3, stage: 2");
        assert_eq!(fields("Idle"), "Idle");
        assert_eq!(fields("X { }"), "X { }");
    }

    use super::*;
    use crate::{Limits, check};

    fn ask(algorithm: &str, n: u32) -> CheckAsk {
        CheckAsk { algorithm: algorithm.into(), n, ..CheckAsk::default() }
    }

    fn kept_bully() -> CheckAsk {
        CheckAsk { kept: true, crashes: 1, losses: 1, ..ask("bully", 3) }
    }

    /// At the initial state of a 3-node AsFar ring the choices are the nodes' starts, in words
    /// and position order; nothing was taken, no node changed or decided, every one of the six
    /// one-shot properties holds, and the state is not final (the initiators have not woken).
    #[test]
    fn the_first_choices_of_a_ring_are_its_starts() {
        let x = explore(&ask("as-far", 3), &[]).unwrap();
        assert_eq!(x.choices, ["id 1 wakes up and starts", "id 2 wakes up and starts", "id 3 wakes up and starts"]);
        assert!(x.taken.is_empty() && !x.is_final && x.error.is_none());
        let ids: Vec<(u32, u64)> = x.nodes.iter().map(|n| (n.position, n.id)).collect();
        assert_eq!(ids, [(0, 1), (1, 2), (2, 3)]);
        assert!(x.nodes.iter().all(|n| n.belief == "undecided" && !n.changed), "{:?}", x.nodes);
        assert_eq!(x.properties.len(), 6);
        assert!(x.properties.iter().all(|p| p.holds && p.broken_since.is_none()));
    }

    /// After the three starts of a 3-node AsFar ring, each node's id is in flight to its
    /// neighbour, in words, and each node's variables show its id and the best id it has seen.
    #[test]
    fn the_messages_in_flight_and_the_variables_are_shown() {
        let x = explore(&ask("as-far", 3), &[0, 0, 0]).unwrap();
        assert_eq!(x.in_flight.len(), 3, "{:?}", x.in_flight);
        assert!(x.in_flight.iter().all(|m| m.starts_with("id ") && m.contains("'s ") && m.contains(" to id ")));
        assert!(x.in_flight.contains(&"id 1's election (id 1) to id 2".to_string()), "{:?}", x.in_flight);
        let first = &x.nodes[0].variables;
        assert!(first.starts_with("id: 1, ") && first.contains("best: "), "{first}");
        assert_eq!(explore(&ask("as-far", 3), &[]).unwrap().in_flight, Vec::<String>::new());
    }

    /// Choices are replayed in the order given: id 2 starting, then the first choice left (id 1
    /// starting) is not id 1 then the second left (id 3); only the node that stepped is marked
    /// changed, and a path without its last choice ("back") is where the path was before it.
    #[test]
    fn choices_replay_in_order_and_back_is_the_shorter_path() {
        let a = ask("as-far", 3);
        let x = explore(&a, &[1, 0]).unwrap();
        assert_eq!(x.taken, ["id 2 wakes up and starts", "id 1 wakes up and starts"]);
        let changed: Vec<u64> = x.nodes.iter().filter(|n| n.changed).map(|n| n.id).collect();
        assert_eq!(changed, [1]);
        let y = explore(&a, &[0, 1]).unwrap();
        assert_eq!(y.taken, ["id 1 wakes up and starts", "id 3 wakes up and starts"]);
        let back = explore(&a, &[1]).unwrap();
        assert_eq!(back.taken, x.taken[..1]);
        assert!(back.choices.contains(&"id 1 wakes up and starts".to_string()));
    }

    /// Following the checker's shortest counterexample of Stages on links that reorder (3 nodes)
    /// choice by choice reaches the state that breaks its property, broken since the last step
    /// and not before, with the node's error and no choice left; the steps taken are the
    /// counterexample's in the CLI's words.
    #[test]
    fn a_counterexamples_choices_reach_its_broken_property() {
        let a = CheckAsk { any_order: true, ..ask("stages", 3) };
        let Checked { election, fifo } = a.check().unwrap();
        let report = check(election.clone(), Limits { fifo, ..Limits::default() });
        let c = report.counterexamples.first().expect("stages on links that reorder breaks");
        let model = ElectionModel::new(election, fifo);
        let path = path_of(&model, &c.steps).expect("every step of the counterexample is a choice");
        let x = explore(&a, &path).unwrap();
        assert_eq!(x.taken, model.words(&c.steps));
        let p = x.properties.iter().find(|p| p.name == c.property).unwrap();
        assert_eq!((p.holds, p.broken_since), (false, Some(c.steps.len())), "{p:?}");
        assert_eq!((x.error.as_deref(), x.choices.len()), (c.error.as_deref(), 0));
        let before = explore(&a, &path[..path.len() - 1]).unwrap();
        assert!(before.properties.iter().all(|p| p.holds), "{:?}", before.properties);
    }

    /// A counterexample's steps in words (Stages on links that reorder, as the checker reports
    /// them) become the choices that reach it, the ones [`path_of`] finds from its steps; on FIFO
    /// links the same words are refused naming `follow` at the step that overtakes.
    #[test]
    fn a_counterexamples_words_become_its_choices() {
        let a = CheckAsk { any_order: true, ..ask("stages", 3) };
        let Checked { election, fifo } = a.check().unwrap();
        let report = check(election.clone(), Limits { fifo, ..Limits::default() });
        let c = report.counterexamples.first().expect("stages on links that reorder breaks");
        let model = ElectionModel::new(election, fifo);
        let words = model.words(&c.steps);
        assert_eq!(path_of_words(&a, &words).unwrap(), path_of(&model, &c.steps).unwrap());
        let e = path_of_words(&ask("stages", 3), &words).unwrap_err();
        assert_eq!(e.field, "follow", "{e}");
        assert!(e.why.ends_with("is not among the next steps on FIFO links"), "{e}");
    }

    /// Kept bully split by hand, as a student clicks it (3 nodes, a crash and a lost message; the
    /// checker's shortest schedule, docs/checking.md): id 3 leads and crashes, the detectors tick
    /// until both others suspect it, id 1's election to id 2 is lost, and both answer timers fire:
    /// two leaders of term 2, "at most one leader per term" broken at the last step.
    #[test]
    fn kept_bully_splits_by_hand() {
        let a = kept_bully();
        let beat = |k: usize| {
            let one = ["time passes (one longest message delay)", "id 1's failure-detector timer fires"];
            (0..k).flat_map(move |_| one.into_iter().chain(["id 2's failure-detector timer fires"]))
        };
        let words: Vec<&str> = ["id 1 wakes up and starts", "id 2 wakes up and starts", "id 3 wakes up and starts"]
            .into_iter()
            .chain(["id 3 crashes", "id 2 receives bully_election from id 1", "id 1 receives answer from id 2"])
            .chain(["id 1 receives coordinator (leader 3, term 1) from id 3"])
            .chain(["id 2 receives coordinator (leader 3, term 1) from id 3"])
            .chain(beat(4))
            .chain(["time passes (one longest message delay)"])
            .chain(["id 1's failure-detector timer fires; id 1 now suspects id 3"])
            .chain(["id 1's bully_election (term 1) to id 2 is lost"])
            .chain(["id 2's failure-detector timer fires; id 2 now suspects id 3"])
            .chain(beat(9))
            .chain(["time passes (one longest message delay)", "id 1's answer timer fires"])
            .chain(["id 2's answer timer fires"])
            .collect();
        let mut path = Vec::new();
        for (k, w) in words.iter().enumerate() {
            let x = explore(&a, &path).unwrap();
            assert!(x.properties.iter().all(|p| p.holds), "broken before step {}: {:?}", k + 1, x.properties);
            let choice = x.choices.iter().position(|c| c == w);
            path.push(choice.unwrap_or_else(|| panic!("step {}: no {w:?} among {:?}", k + 1, x.choices)) as u32);
        }
        let x = explore(&a, &path).unwrap();
        let broken: Vec<(&str, Option<usize>)> =
            x.properties.iter().filter(|p| !p.holds).map(|p| (p.name, p.broken_since)).collect();
        assert_eq!(broken[0], ("at most one leader per term", Some(54)), "{broken:?}");
        let nodes: Vec<(&str, &str)> = x.nodes.iter().map(|n| (n.state, n.belief.as_str())).collect();
        assert_eq!(nodes, [("leader", "leads term 2"), ("leader", "leads term 2"), ("crashed", "crashed")]);
        assert!(x.nodes[1].changed && !x.nodes[0].changed, "id 2 stepped last");
    }

    /// More than four nodes are refused naming `n` (though the checker takes six), a path longer
    /// than the bound naming `path`, a choice beyond its state's naming `path` with its index,
    /// its step and the choices there; a bad algorithm is refused as a check refuses it.
    #[test]
    fn too_many_nodes_and_bad_choices_are_refused_by_field() {
        let e = explore(&ask("as-far", 5), &[]).unwrap_err();
        assert_eq!(e.to_string(), "n: 5 nodes: the explorer takes at most 4 (every state's next steps are listed)");
        let e = explore(&ask("as-far", 3), &vec![0; MAX_PATH + 1]).unwrap_err();
        assert_eq!(e.to_string(), "path: 1001 choices: at most 1000");
        let e = explore(&ask("as-far", 3), &[0, 7]).unwrap_err();
        assert_eq!(e.to_string(), "path: path[1] is 7, but step 2 has 2 choices (0 to 1)");
        assert_eq!(explore(&ask("paxos", 3), &[]).unwrap_err().field, "algorithm");
    }

    /// A one-shot AsFar run to its end by always taking the first choice ends final, with no
    /// choice left, the leader id 3 and everyone following it; one more choice is refused.
    #[test]
    fn a_run_ends_final_with_no_choice_left() {
        let a = ask("as-far", 3);
        let mut path = Vec::new();
        let x = loop {
            let x = explore(&a, &path).unwrap();
            if x.choices.is_empty() {
                break x;
            }
            path.push(0);
        };
        assert!(x.is_final && x.properties.iter().all(|p| p.holds));
        let beliefs: Vec<&str> = x.nodes.iter().map(|n| n.belief.as_str()).collect();
        assert_eq!(beliefs, ["follows 3", "follows 3", "leads"]);
        path.push(0);
        let e = explore(&a, &path).unwrap_err();
        assert!(e.why.ends_with("(the run has ended)"), "{e}");
    }
}
