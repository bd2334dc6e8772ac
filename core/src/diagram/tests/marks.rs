//! Marks and labels: what became of each message, initiators, swallowed ids, roles, and no label
//! overprinting another.

use super::*;
use crate::diagram::arrows::SWALLOWED_R;

/// No text overprints another: in a failover whose recovery, step down and next term come
/// within a millisecond, among 40 labelled arrows between two nodes, and in labelled Stages and
/// AsFar rings on their worst arrangements (swallowed ids, wrap-arounds, roles in the legend),
/// and in labelled SIMULATED kept Raft and bully leaderships of 8 with the leader crashed,
/// every pair of labels' boxes is apart.
/// (tests/ checks the pictures of docs/ with a browser's real fonts.)
#[test]
fn no_label_overprints_another() {
    let mut arrows = Vec::new();
    let (marks, outages, terms) = failover(&mut arrows);
    let kept = Diagram { marks: &marks, outages: &outages, terms: &terms, time_unit: "µs", ..plain(&arrows, 8) };
    let ring: Vec<Arrow> = (0..40u32)
        .map(|i| Arrow {
            msg: Some(Msg::Election { id: u64::from(i) * 1_000, stage: 1, hops: i }),
            ..arrow(i % 2, (i + 1) % 2, MsgKind::Election, u64::from(i), Some(u64::from(i) + 1))
        })
        .collect();
    let labelled = Diagram { labels: true, ..plain(&ring, 2) };
    // Rings with swallowed ids, their wrap-arounds and roles in the legend.
    let (stages_ids, stages) = simulated("stages", 8, Rule::Max);
    let (as_far_ids, as_far) = simulated("as-far", 8, Rule::Max);
    let swallowing = [(&stages_ids, &stages), (&as_far_ids, &as_far)]
        .map(|(ids, r)| Diagram { labels: true, ..ring_diagram(ids, r) });
    // SIMULATED kept leaderships of 8 whose leader crashes at 500 ms, drawn as the controller
    // draws them (upkeep left out), labelled: Raft and bully.
    let kept_runs: Vec<(Vec<u64>, crate::report::SimReport, Vec<Arrow>)> = ["raft", "bully"]
        .into_iter()
        .map(|name| {
            let spec = crate::algo::catalogue::find(name).unwrap();
            let ids: Vec<u64> = vec![3, 7, 1, 8, 2, 6, 4, 5];
            let topo = crate::topology::Topology::build(spec.default_topology(), 8, 0).unwrap();
            let all: Vec<u32> = (0..8).collect();
            let faults = crate::faults::FaultPlan {
                faults: vec![crate::faults::Scheduled::new(500, 1, crate::faults::Fault::CrashLeader)],
            };
            let cfg = crate::sim::SimConfig { log_arrows: true, horizon: Some(2_000), faults, ..Default::default() };
            let r = crate::sim::run_kept(spec, &topo, &ids, &all, spec.rule, &cfg).unwrap();
            let drawn = r.arrows.iter().filter(|a| !a.kind.is_upkeep()).copied().collect();
            (ids, r, drawn)
        })
        .collect();
    let terms: Vec<Vec<Term>> =
        kept_runs.iter().map(|(ids, r, _)| Term::from_leaderships(&r.leaderships, ids)).collect();
    let beliefs: Vec<Vec<Mark>> = kept_runs.iter().map(|(ids, r, _)| belief_marks(&r.leaderships, ids)).collect();
    let kept_sims = kept_runs.iter().zip(terms.iter().zip(&beliefs)).map(|((ids, r, drawn), (terms, marks))| Diagram {
        nodes: ids.iter().enumerate().map(|(p, id)| format!("sim-{p} (id {id})")).collect(),
        ids,
        arrows: drawn,
        states: &r.states,
        outages: &r.outages,
        terms,
        marks,
        labels: true,
        leader: r.verdict.leader,
        time_unit: "virtual ms",
        ..Diagram::default()
    });
    for d in [kept, labelled].into_iter().chain(swallowing).chain(kept_sims) {
        let out = svg(&d);
        let boxes = text_boxes(&out);
        assert!(boxes.len() > 8, "{out}");
        for (i, (a, x)) in boxes.iter().enumerate() {
            for (b, y) in &boxes[i + 1..] {
                let apart = x[2] <= y[0] || y[2] <= x[0] || x[3] <= y[1] || y[3] <= x[1];
                assert!(apart, "{a:?} {x:?} overlaps {b:?} {y:?}");
            }
        }
    }
    let out = svg(&Diagram { labels: true, ..plain(&ring, 2) });
    assert!(out.matches(r#"class="label""#).count() >= 5, "several labels fit: {out}");
}

/// A message the network lost ends in a cross, one that reached a crashed node ends in a ring on
/// its line (whether the driver logged an arrival or none), one still on its way when the run
/// ended runs to the chart's edge, and a refused vote has a hollow head; each is in the legend
/// under its own name and none is labelled as delivered.
#[test]
fn losses_drops_flights_and_refusals_are_told_apart() {
    let mut flying = arrow(0, 2, MsgKind::Election, 30, None);
    flying.in_flight = true;
    let mut no = arrow(2, 0, MsgKind::Vote, 5, Some(8));
    no.msg = Some(Msg::Vote { term: 1, candidate: 5, granted: false });
    let mut yes = arrow(1, 0, MsgKind::Vote, 5, Some(8));
    yes.msg = Some(Msg::Vote { term: 1, candidate: 5, granted: true });
    let arrows = [
        arrow(0, 1, MsgKind::Election, 0, None),
        arrow(0, 2, MsgKind::Election, 12, Some(14)),
        arrow(0, 2, MsgKind::Election, 20, None),
        flying,
        no,
        yes,
    ];
    let outages = [Outage { position: 2, crashed: 10, recovered: Some(25) }];
    let out = svg(&Diagram { outages: &outages, labels: true, ..plain(&arrows, 3) });
    assert_eq!(out.matches(r#"class="msg lost""#).count(), 1, "{out}");
    assert_eq!(out.matches(r#"class="msg dropped""#).count(), 2, "{out}");
    assert_eq!(out.matches(r#"class="msg flying""#).count(), 1, "{out}");
    let arrows: String = out.lines().filter(|l| l.contains("data-step")).collect();
    assert_eq!(arrows.matches("url(#head-vote-no)").count(), 1, "{out}");
    assert_eq!(arrows.matches("url(#head-vote)").count(), 1, "{out}");
    for entry in ["lost on the network", "dropped: receiver down", "in flight at the end", "refused (hollow head)"] {
        assert!(out.contains(&format!(">{entry}</text>")), "legend: {entry}: {out}");
    }
}

/// Initiators are marked at the start of their lines, with a legend entry, when some nodes are
/// not initiators; when every node initiates, or none is given, nothing is marked.
#[test]
fn initiators_are_marked_when_not_everyone_starts() {
    let arrows = [arrow(0, 1, MsgKind::Election, 0, Some(3)), arrow(2, 0, MsgKind::Election, 1, Some(4))];
    let some = svg(&Diagram { initiators: &[0, 2], ..plain(&arrows, 3) });
    assert_eq!(some.matches(r#"<g class="initiator""#).count(), 2, "{some}");
    assert!(some.contains(r#"<g class="initiator" data-position="2">"#) && some.contains(">initiator</text>"));
    for all in [&[0, 1, 2][..], &[]] {
        let out = svg(&Diagram { initiators: all, ..plain(&arrows, 3) });
        assert!(!out.contains("initiator"), "{out}");
    }
}

/// AsFar (Chang-Roberts) on its worst arrangement, under either rule and at several sizes: every
/// id but the winner's is swallowed exactly once (by the winner, the only node better than all
/// the ids it receives), so there are n - 1 marks, each titled with both ids, and the legend
/// names the mark; the winner's own id coming home is not marked.
#[test]
fn as_far_swallows_every_id_but_the_winners_once() {
    for rule in [Rule::Max, Rule::Min] {
        for n in [3u32, 8, 13] {
            let (ids, r) = simulated("as-far", n, rule);
            let out = svg(&ring_diagram(&ids, &r));
            let winner = ids.iter().copied().reduce(|a, b| rule.best(a, b)).unwrap();
            assert_eq!(out.matches(r#"<g class="swallowed">"#).count(), n as usize - 1, "{rule:?} n = {n}: {out}");
            for &id in &ids {
                let told = out.matches(&format!("<title>id {id} swallowed by id {winner}</title>")).count();
                assert_eq!(told, usize::from(id != winner), "{rule:?} n = {n}: id {id}");
            }
            assert!(out.contains(">id swallowed</text>"), "{out}");
        }
    }
    let (ids, r) = simulated("as-far", 8, Rule::Max);
    let unknown = svg(&Diagram { leader: None, ..ring_diagram(&ids, &r) });
    assert!(!unknown.contains("swallowed"), "without a leader the rule is unknown: nothing marked");
}

/// Labels leave the swallowed ids' marks clear: in a labelled Stages ring on its worst
/// arrangement (ids swallowed two at a time, side by side, where wrapped arrows are labelled),
/// no label's box covers a mark.
#[test]
fn labels_leave_swallowed_marks_clear() {
    let (ids, r) = simulated("stages", 8, Rule::Max);
    let out = svg(&Diagram { labels: true, ..ring_diagram(&ids, &r) });
    let attr = |tag: &str, name: &str| -> f64 {
        let at = tag.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        tag[at..].split('"').next().unwrap().parse().unwrap()
    };
    let marks: Vec<(f64, f64)> = out
        .split(r#"<g class="swallowed">"#)
        .skip(1)
        .map(|m| {
            let circle = &m[m.find("<circle").unwrap()..];
            (attr(circle, "cx"), attr(circle, "cy"))
        })
        .collect();
    assert!(marks.len() >= 8, "{out}");
    assert!(marks.iter().enumerate().all(|(i, m)| marks[..i].iter().all(|o| o != m)), "side by side: {marks:?}");
    let labels: Vec<(String, [f64; 4])> = text_boxes(&out).into_iter().filter(|(t, _)| t.contains("stage")).collect();
    assert!(labels.len() > 10, "{out}");
    for (text, b) in &labels {
        for &(cx, cy) in &marks {
            let r = SWALLOWED_R;
            let apart = b[2] <= cx - r || cx + r <= b[0] || b[3] <= cy - r || cy + r <= b[1];
            assert!(apart, "{text:?} {b:?} covers the mark at {cx}, {cy}");
        }
    }
}

/// Each role has its own stroke, told without colour and without the faults' dashes: a bully
/// election's calls, answers and coordinators are three styles (stroke width and head shape),
/// none dashed, and the legend shows the three roles.
#[test]
fn roles_are_drawn_apart() {
    let arrows = [
        arrow(0, 2, MsgKind::BullyElection, 0, Some(2)),
        arrow(2, 0, MsgKind::Answer, 2, Some(4)),
        arrow(2, 1, MsgKind::Coordinator, 6, Some(8)),
    ];
    let out = svg(&plain(&arrows, 3));
    let attr = |tag: &str, name: &str| -> String {
        let at = tag.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        tag[at..].split('"').next().unwrap().to_string()
    };
    let styles: Vec<(String, String)> = ["bully_election", "answer", "coordinator"]
        .iter()
        .map(|kind| {
            let line = out.lines().find(|l| l.contains(&format!(r#"data-kind="{kind}""#))).unwrap();
            assert!(!line.contains("dasharray"), "{line}");
            let marker = out.lines().find(|l| l.starts_with(&format!(r#"<marker id="head-{kind}""#))).unwrap();
            // The head's shape, whatever its colour: its outline and whether it is filled.
            let path = &marker[marker.find("<path").unwrap()..];
            let shape = format!("{} filled: {}", attr(path, "d"), attr(path, "fill") != "none");
            (attr(line, "stroke-width"), shape)
        })
        .collect();
    for (i, a) in styles.iter().enumerate() {
        assert!(styles[i + 1..].iter().all(|b| b != a), "{styles:?}");
    }
    for entry in ["candidate: filled head", "reply: open head", "announcement: thick"] {
        assert!(out.contains(&format!(">{entry}</text>")), "legend: {entry}: {out}");
    }
    let one = svg(&plain(&arrows[..1], 3));
    assert!(!one.contains("filled head"), "one role: no role entries");
}
