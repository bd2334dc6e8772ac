//! Kept leaderships drawn: faults and terms, the failovers' share of the width, more than one
//! leader, stretches with no leader, the states' colours.

use super::*;
use crate::diagram::terms::{leader_overlaps, state_colour, term_losses};

/// Faults and terms are drawn: a crash as a red cross and a dashed line until the recovery, a
/// partition as a band naming its groups, each term as a band naming its leader, a delayed
/// message dashed; each is in the legend.
#[test]
fn faults_and_terms_are_drawn() {
    let mut slow = arrow(0, 1, MsgKind::Election, 0, Some(50));
    slow.slow = true;
    // The new term's leader announces itself: a kept leadership's last episode with work.
    let arrows = [slow, arrow(1, 2, MsgKind::Election, 50, Some(60)), arrow(1, 0, MsgKind::Notify, 95, Some(99))];
    let outages = [Outage { position: 2, crashed: 70, recovered: Some(90) }];
    let splits = [Split { from: 20, until: Some(40), groups: vec![vec![0], vec![1, 2]] }];
    let terms = [Term { from: 10, term: 1, leader: 2 }, Term { from: 95, term: 2, leader: 1 }];
    let d = Diagram {
        outages: &outages,
        splits: &splits,
        terms: &terms,
        nodes: vec!["a".into(), "b".into(), "c".into()],
        ids: &[5, 1, 8],
        ..plain(&arrows, 3)
    };
    let out = svg(&d);
    assert_eq!(out.matches(r#"class="down""#).count(), 1);
    assert_eq!(out.matches(r#"class="recover""#).count(), 1);
    assert!(out.contains(">partition: id 5 | id 1, id 8</text>"), "{out}");
    assert!(out.contains(">term 1: c</text>") && out.contains(">term 2: b</text>"), "{out}");
    assert!(out.contains(r#"stroke-dasharray="6 3""#) && out.contains("delayed by a fault"));
    for entry in ["crashed (down)", "partition</text>", "delayed by a fault"] {
        assert!(out.contains(entry), "legend: {entry}");
    }
}

/// With the quiet seconds compressed, the failover's 300 ms wait for suspicion is long beside its
/// bursts and is compressed too: the failover's messages (from the crash to the recovery) get at
/// least a third of the width, where choosing the idle stretches against the axis to scale gave
/// them a few pixels.
#[test]
fn a_failover_gets_a_third_of_the_width() {
    let mut arrows = Vec::new();
    let (marks, outages, terms) = failover(&mut arrows);
    let ids: Vec<u64> = vec![3, 7, 1, 8, 2, 6, 4, 5];
    let d =
        Diagram { marks: &marks, outages: &outages, terms: &terms, time_unit: "µs", ids: &ids, ..plain(&arrows, 8) };
    let out = svg(&d);
    let (left, right) = plot_edges(&out);
    let xs = arrow_xs(&out);
    let failover: Vec<(f64, f64)> =
        arrows.iter().zip(&xs).filter(|(a, _)| (2_600_000..4_600_000).contains(&a.sent)).map(|(_, &x)| x).collect();
    let from = failover.iter().map(|x| x.0).fold(f64::INFINITY, f64::min);
    let to = failover.iter().map(|x| x.1).fold(0.0, f64::max);
    assert!((to - from) / (right - left) >= 1.0 / 3.0, "{from}..{to} of {left}..{right}");
}

/// The shape of a LIVE bully failover on 8 nodes, as the controller drew one: a slow start (60
/// messages trickling over 17 ms while the nodes connect), the leader crashed at 2.55 s,
/// suspected at 2.73 s, a failover of 44 messages in 5 ms, a lone burst of 6 at 3.23 s, the
/// recovery at 4.26 s and its 18 messages. The failover (from the crash to the recovery) gets
/// more than a third of the width (0.52): its episode weighs 1, the start's and the
/// recovery's 0.35 each; by time and messages alone it got 0.32 here, and 0.28 to 0.36 LIVE.
#[test]
fn a_live_shaped_failover_gets_a_third_of_the_width() {
    let mut arrows = Vec::new();
    let mut burst = |start: u64, count: u64, every: u64, delay: u64, kind: MsgKind| {
        for i in 0..count {
            let from = (i % 8) as u32;
            let to = ((i * 3 + 1) % 8) as u32;
            let to = if to == from { (to + 1) % 8 } else { to };
            arrows.push(arrow(from, to, kind, start + i * every, Some(start + i * every + delay)));
        }
    };
    // The first messages wait for their connections.
    burst(0, 20, 2, 8_000, MsgKind::BullyElection);
    burst(1_000, 40, 420, 150, MsgKind::Answer);
    burst(2_726_900, 44, 110, 150, MsgKind::BullyElection);
    burst(3_229_000, 6, 8, 150, MsgKind::Coordinator);
    burst(4_264_450, 18, 60, 150, MsgKind::Coordinator);
    let outages = vec![Outage { position: 3, crashed: 2_554_900, recovered: Some(4_259_300) }];
    let ids: Vec<u64> = vec![3, 7, 1, 8, 2, 6, 4, 5];
    let d = Diagram { outages: &outages, time_unit: "µs", ids: &ids, ..plain(&arrows, 8) };
    let out = svg(&d);
    let (left, right) = plot_edges(&out);
    let attr = |tag: &str, name: &str| -> f64 {
        let at = tag.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        tag[at..].split('"').next().unwrap().parse().unwrap()
    };
    let failover: Vec<(f64, f64)> = out
        .lines()
        .filter(|l| l.starts_with(r#"<line class="msg""#))
        .filter(|l| (2_554_900.0..4_259_300.0).contains(&attr(l, "data-at")))
        .map(|l| (attr(l, "x1"), attr(l, "x2")))
        .collect();
    assert!(failover.len() >= 40, "{out}");
    let from = failover.iter().map(|x| x.0).fold(f64::INFINITY, f64::min);
    let to = failover.iter().map(|x| x.1).fold(0.0, f64::max);
    assert!((to - from) / (right - left) >= 1.0 / 3.0, "{from}..{to} of {left}..{right}");
}

/// A SIMULATED kept bully of 8 with its leader crashed at 500 ms, then the next leader cut
/// off from the rest at 1,000 until 1,600 and again at 2,000 until 2,600, drawn as the
/// controller draws it: the two failovers that elect (the crash's and the second cut's; in
/// the first cut the rest's calls to the cut-off leader are lost at one instant and the heal
/// comes first) each span at least a fifth of the plot, their share beside each other, the
/// start and the heals. (With every burst after the first fault weighing double, a crash and
/// two cuts left a failover 0.19.)
#[test]
fn several_failovers_each_get_their_share() {
    use crate::faults::{Fault, FaultPlan, Scheduled};
    let spec = crate::algo::catalogue::find("bully").unwrap();
    let ids: Vec<u64> = vec![3, 7, 1, 8, 2, 6, 4, 5];
    let topo = crate::topology::Topology::build(spec.default_topology(), 8, 0).unwrap();
    let all: Vec<u32> = (0..8).collect();
    // The leaders at 1,000 and 1,600 (id 7, then id 6) cut off, as the controller resolves it.
    let cut = |p: u32| Fault::Partition { groups: vec![vec![p], (0..8).filter(|&q| q != p).collect()] };
    let heal = || Fault::Partition { groups: vec![(0..8).collect()] };
    let faults = vec![
        Scheduled::new(500, 1, Fault::CrashLeader),
        Scheduled::new(1_000, 2, cut(1)),
        Scheduled::new(1_600, 3, heal()),
        Scheduled::new(2_000, 4, cut(1)),
        Scheduled::new(2_600, 5, heal()),
    ];
    let cfg = crate::sim::SimConfig {
        log_arrows: true,
        horizon: Some(3_200),
        faults: FaultPlan { faults },
        ..Default::default()
    };
    let r = crate::sim::run_kept(spec, &topo, &ids, &all, spec.rule, &cfg).unwrap();
    let drawn: Vec<Arrow> = r.arrows.iter().filter(|a| !a.kind.is_upkeep()).copied().collect();
    let terms = Term::from_leaderships(&r.leaderships, &ids);
    let d = Diagram {
        ids: &ids,
        arrows: &drawn,
        states: &r.states,
        outages: &r.outages,
        splits: &r.splits,
        terms: &terms,
        time_unit: "virtual ms",
        ..plain(&drawn, 8)
    };
    let out = svg(&d);
    let (left, right) = plot_edges(&out);
    // Every message drawn (delivered, lost or dropped): when sent, and where its drawing
    // begins and ends.
    let num = |l: &str, name: &str| -> Vec<f64> {
        l.split(&format!(" {name}=\"")).skip(1).filter_map(|v| v.split('"').next()?.parse().ok()).collect()
    };
    let msgs: Vec<(f64, f64, f64)> = out
        .lines()
        .filter(|l| l.starts_with(r#"<line class="msg""#) || l.starts_with(r#"<g class="msg"#))
        .map(|l| {
            let xs: Vec<f64> = num(l, "x1").into_iter().chain(num(l, "x2")).collect();
            let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
            (num(l, "data-at")[0], lo, xs.iter().copied().fold(0.0, f64::max))
        })
        .collect();
    for (from, until) in [(500u32, 1_000u32), (2_000, 2_600)] {
        let span: Vec<(f64, f64)> =
            msgs.iter().filter(|m| (f64::from(from)..f64::from(until)).contains(&m.0)).map(|m| (m.1, m.2)).collect();
        let a = span.iter().map(|x| x.0).fold(f64::INFINITY, f64::min);
        let b = span.iter().map(|x| x.1).fold(0.0, f64::max);
        let share = (b - a) / (right - left);
        eprintln!("failover from {from}: {} messages, {share:.2} of the width", span.len());
        assert!(!span.is_empty() && share >= 0.2, "from {from}: {a}..{b} of {left}..{right}");
    }
}

/// Two nodes in state "leader" at once are framed and counted, from when the second begins to
/// lead until one stops; one leader at a time is never framed.
#[test]
fn two_leaders_at_once_are_framed() {
    let change = |time, position, state| StateChange { time, position, state };
    let states = [
        change(0, 0, "candidate"),
        change(0, 1, "candidate"),
        change(5, 0, "leader"),
        change(9, 1, "leader"),
        change(12, 0, "follower"),
        change(20, 0, "leader"),
    ];
    assert_eq!(leader_overlaps(&states, &[], 2), vec![(9, Some(12), 2), (20, None, 2)]);
    assert!(leader_overlaps(&states[..4], &[], 1).is_empty(), "position 1 is not drawn");
    let arrows = [arrow(0, 1, MsgKind::Election, 0, Some(25))];
    let out = svg(&Diagram { states: &states, ..plain(&arrows, 2) });
    assert_eq!(out.matches(r#"class="two-leaders""#).count(), 2, "{out}");
    assert!(out.contains(">2 leaders</text>") && out.contains("more than one leader"), "{out}");
    let one = svg(&Diagram { states: &states[..3], ..plain(&arrows, 2) });
    assert!(!one.contains("two-leaders"), "{one}");
}

/// A term whose leader crashes ends at the crash on the term strip, and the stretch until the
/// next term is drawn as having no leader (with its legend entry); a leader that steps down
/// ends its term there too (the first such mark counts); without crashes or step-downs there
/// is no such stretch.
#[test]
fn leaderless_stretches_are_drawn_on_the_term_strip() {
    let mut arrows = Vec::new();
    let (mut marks, outages, terms) = failover(&mut arrows);
    let ids: Vec<u64> = vec![3, 7, 1, 8, 2, 6, 4, 5];
    let d = Diagram { marks: &marks, outages: &outages, terms: &terms, ids: &ids, ..plain(&arrows, 8) };
    // Term 2's leader (position 1) steps down when id 8 recovers, before term 3 begins.
    assert_eq!(term_losses(&d), [Some(2_600_000), Some(4_600_100), None]);
    let out = svg(&d);
    assert_eq!(out.matches(r#"<g class="leaderless" data-at="2600000">"#).count(), 1, "{out}");
    assert_eq!(out.matches(r#"class="leaderless""#).count(), 2, "{out}");
    assert!(out.contains(">no leader</text>"), "{out}");
    let calm = Diagram { outages: &[], marks: &[], ..d };
    assert!(!svg(&calm).contains("leaderless"));
    marks.push(Mark { node: 1, at: 4_000_000, label: "steps down".into() });
    let d = Diagram { marks: &marks, outages: &outages, terms: &terms, ids: &ids, ..plain(&arrows, 8) };
    assert_eq!(term_losses(&d), [Some(2_600_000), Some(4_000_000), None]);
}

/// A crashed leader leads nobody: while it is down, the node elected after it is the only
/// leader, and only once it recovers still believing it leads are there two.
#[test]
fn a_crashed_leader_is_not_a_second_leader() {
    let change = |time, position, state| StateChange { time, position, state };
    let states = [change(0, 0, "leader"), change(0, 1, "follower"), change(9, 1, "leader")];
    let down = |recovered| [Outage { position: 0, crashed: 5, recovered }];
    assert!(leader_overlaps(&states, &down(None), 2).is_empty());
    assert_eq!(leader_overlaps(&states, &down(Some(15)), 2), vec![(15, None, 2)]);
    assert_eq!(leader_overlaps(&states, &[], 2), vec![(9, None, 2)]);
}

/// Every algorithm of the catalogue, run one-shot and (if it keeps a leader) kept with its
/// leader crashed at 300 and a partition from 600 to 900, on 6 nodes and three seeds: the
/// states its nodes pass through have pairwise distinct colours, so a picture tells each
/// apart (bully's electing and waiting, ZooKeeper's looking and proposing were one colour).
#[test]
fn each_algorithm_has_a_colour_per_state() {
    use crate::faults::{Fault, FaultPlan, Scheduled};
    let (mut checked, mut shared) = (0, Vec::new());
    for spec in crate::algo::catalogue::CATALOGUE.iter() {
        let mut names: Vec<&str> = Vec::new();
        for seed in 0..3 {
            let n = 6;
            let Ok(topo) = crate::topology::Topology::build(spec.default_topology(), n, 0) else { continue };
            let ids: Vec<u64> = (0..u64::from(n)).map(|i| (i * 7 + seed) % u64::from(n) + 1).collect();
            let all: Vec<u32> = (0..n).collect();
            let cfg = crate::sim::SimConfig { log_arrows: true, seed, ..crate::sim::SimConfig::default() };
            let one = crate::sim::run(spec, &topo, &ids, &all, spec.rule, &cfg);
            names.extend(one.states.iter().map(|c| c.state));
            let faults = vec![
                Scheduled::new(300, seed, Fault::CrashLeader),
                Scheduled::new(600, seed, Fault::Partition { groups: vec![vec![0, 1], vec![2, 3, 4, 5]] }),
                Scheduled::new(900, seed, Fault::Partition { groups: vec![(0..n).collect()] }),
            ];
            let kept = crate::sim::SimConfig { horizon: Some(1_500), faults: FaultPlan { faults }, ..cfg };
            if let Some(r) = crate::sim::run_kept(spec, &topo, &ids, &all, spec.rule, &kept) {
                names.extend(r.states.iter().map(|c| c.state));
            }
        }
        names.sort_unstable();
        names.dedup();
        for (i, a) in names.iter().enumerate() {
            for b in &names[i + 1..] {
                if state_colour(a) == state_colour(b) {
                    shared.push(format!("{}: {a} and {b}", spec.name));
                }
            }
        }
        eprintln!("{}: {}", spec.name, names.join(", "));
        checked += 1;
    }
    assert!(shared.is_empty(), "states sharing a colour: {shared:?}");
    assert!(checked >= 20, "the catalogue: {checked}");
    for (a, b) in [("electing", "waiting"), ("candidate", "waiting"), ("announcing", "relay"), ("follower", "promised")]
    {
        assert_ne!(state_colour(a), state_colour(b), "{a} and {b}");
    }
    assert_ne!(state_colour("looking"), state_colour("proposing"));
    assert_ne!(state_colour("pre-candidate"), state_colour("candidate"), "raft with PreVote");
    assert_ne!(state_colour("leader-unleased"), state_colour("leader"), "raft with its lease");
}
