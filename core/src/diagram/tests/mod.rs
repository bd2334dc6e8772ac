//! The diagram's tests: what each picture draws, read back from its SVG text. Here the helpers
//! and the basic drawing; `kept` the kept leaderships (faults, terms, leaders, the failovers'
//! share of the width, states); `marks` the marks and labels (fates, initiators, swallowed ids,
//! roles, no label overprinting another).

#[cfg(test)]
mod kept;
#[cfg(test)]
mod marks;

use super::labels::Placer;
use super::layout::{ROW, TOP};
use super::*;
use crate::algo::Rule;
use crate::protocol::{Msg, MsgKind};

fn arrow(from: u32, to: u32, kind: MsgKind, sent: u64, received: Option<u64>) -> Arrow {
    Arrow { from, to, kind, sent, received, msg: None, slow: false, in_flight: false }
}

/// Every node gets a line (its position on hover over its name), every message an arrow (lost
/// ones a dashed stub), every kind a legend entry with its count, every mark a labelled tick,
/// and names are escaped.
#[test]
fn lines_arrows_and_legend() {
    let arrows = [
        arrow(0, 1, MsgKind::Election, 0, Some(3)),
        arrow(1, 2, MsgKind::Election, 3, Some(5)),
        arrow(2, 0, MsgKind::Notify, 5, None),
    ];
    let d = Diagram {
        title: "as-far <test>".into(),
        nodes: vec!["a".into(), "b".into(), "c&d".into()],
        arrows: &arrows,
        leader: Some(2),
        time_unit: "virtual time",
        marks: &[Mark { node: 1, at: 4, label: "crash <1>".into() }],
        ring: false,
        labels: false,
        ..Diagram::default()
    };
    let out = svg(&d);
    assert!(out.starts_with("<svg ") && out.ends_with("</svg>\n"));
    assert_eq!(out.matches(r#"class="node""#).count(), 3);
    assert_eq!(out.matches(r#"<g class="row" data-position="#).count(), 3, "each row's position on hover");
    assert!(out.contains("<title>position 2: "), "{out}");
    assert_eq!(out.matches(r#"class="msg""#).count(), 2);
    assert_eq!(out.matches(r#"class="msg lost""#).count(), 1);
    assert!(out.contains("election (2)") && out.contains("notify (1)"), "{out}");
    assert!(
        out.contains("as-far &lt;test&gt;") && out.contains(r#"c&amp;d<tspan class="lead"> (leader)</tspan>"#),
        "{out}"
    );
    assert!(!out.contains("<test>"));
    assert_eq!(out.matches(r#"class="mark""#).count(), 1);
    assert!(out.contains("crash &lt;1&gt;"), "marks are labelled, escaped");
}

/// Beyond MAX_ARROWS only the first ones are drawn, and the caption says so.
#[test]
fn too_many_arrows_are_capped_and_said() {
    let arrows: Vec<Arrow> =
        (0..MAX_ARROWS as u64 + 7).map(|t| arrow(0, 1, MsgKind::Election, t, Some(t + 1))).collect();
    let d = Diagram {
        title: "big".into(),
        nodes: vec!["a".into(), "b".into()],
        arrows: &arrows,
        leader: None,
        time_unit: "t",
        marks: &[],
        ring: false,
        labels: false,
        ..Diagram::default()
    };
    let out = svg(&d);
    assert_eq!(out.matches(r#"class="msg""#).count(), MAX_ARROWS);
    assert!(out.contains(&format!("first {MAX_ARROWS} of {} messages drawn", MAX_ARROWS + 7)));
}

/// The x where a wrapped arrow's first segment leaves the chart.
fn x_mid(wrap: &str) -> f64 {
    let second = &wrap[wrap.find("<line").unwrap()..];
    let at = second.find(" x2=\"").unwrap() + 5;
    second[at..].split('"').next().unwrap().parse().unwrap()
}

/// On a ring the wrap-around message (last row to first, or first to last) leaves at one edge of the
/// chart and re-enters at the other: two segments, neither crossing the rows between, the second with
/// the arrowhead, each cut end a dot, and the legend says "round the ring"; other messages, and the
/// wrap-around when the rows are no ring, stay single arrows.
#[test]
fn the_ring_wraps_round_the_edges() {
    let arrows = [
        arrow(3, 0, MsgKind::Election, 0, Some(4)),
        arrow(0, 3, MsgKind::Election, 1, Some(5)),
        arrow(1, 2, MsgKind::Election, 2, Some(6)),
    ];
    let d = Diagram {
        title: "ring".into(),
        nodes: (0..4).map(|p| p.to_string()).collect(),
        arrows: &arrows,
        leader: None,
        time_unit: "t",
        marks: &[],
        ring: true,
        labels: false,
        ..Diagram::default()
    };
    let out = svg(&d);
    assert_eq!(out.matches(r#"class="msg wrap""#).count(), 2, "{out}");
    assert_eq!(out.matches(r#"class="msg""#).count(), 1);
    let (first, last) = (TOP, TOP + 3.0 * ROW);
    let wrap = &out[out.find(r#"class="msg wrap""#).unwrap()..];
    let wrap = &wrap[..wrap.find("</g>").unwrap()];
    // 3 -> 0: down from the last row past the bottom edge, in from above the first row.
    assert!(wrap.contains(&format!(r#"y1="{last:.1}""#)) && wrap.contains(&format!(r#"y2="{:.1}""#, last + ROW / 2.0)));
    assert!(
        wrap.contains(&format!(r#"y1="{:.1}""#, first - ROW / 2.0)) && wrap.contains(&format!(r#"y2="{first:.1}""#))
    );
    assert!(wrap.contains("round the ring") && wrap.matches("marker-end").count() == 1);
    // Each cut end is a dot: at the bottom edge going out, at the top edge coming in.
    for edge in [last + ROW / 2.0, first - ROW / 2.0] {
        assert!(wrap.contains(&format!(r#"<circle class="ring-edge" cx="{:.1}" cy="{edge:.1}""#, x_mid(wrap))));
    }
    assert!(out.contains(">round the ring</text>"), "legend: {out}");
    let flat = svg(&Diagram { ring: false, ..d });
    assert_eq!(flat.matches(r#"class="msg""#).count(), 3, "no ring, no wrapping");
    assert!(!flat.contains("round the ring") && !flat.contains("ring-edge"), "{flat}");
}

/// With labels on, each delivered message whose content the driver knows says what it carries at the
/// middle of its arrow (zero fields left out, escaped); lost ones and kind-only arrows get none; with
/// labels off, no arrow is labelled.
#[test]
fn arrows_say_what_they_carry() {
    let mut known = arrow(0, 1, MsgKind::Election, 0, Some(4));
    known.msg = Some(Msg::Election { id: 6, stage: 2, hops: 0 });
    let mut lost = arrow(1, 2, MsgKind::Election, 1, None);
    lost.msg = Some(Msg::Election { id: 7, stage: 0, hops: 0 });
    let arrows = [known, lost, arrow(2, 0, MsgKind::Notify, 2, Some(5))];
    let d = Diagram {
        title: "labels".into(),
        nodes: (0..3).map(|p| p.to_string()).collect(),
        arrows: &arrows,
        leader: None,
        time_unit: "t",
        marks: &[],
        ring: false,
        labels: true,
        ..Diagram::default()
    };
    let out = svg(&d);
    assert_eq!(out.matches(r#"class="label""#).count(), 1, "{out}");
    assert!(out.contains(">id 6, stage 2</text>"), "{out}");
    assert!(!svg(&Diagram { labels: false, ..d }).contains(r#"class="label""#));
}

fn plain(arrows: &[Arrow], n: u32) -> Diagram<'_> {
    Diagram {
        title: "t".into(),
        nodes: (0..n).map(|p| p.to_string()).collect(),
        arrows,
        time_unit: "t",
        ..Diagram::default()
    }
}

/// The x coordinates of the arrows drawn, in their order in the SVG (data-step order).
fn arrow_xs(out: &str) -> Vec<(f64, f64)> {
    let attr = |s: &str, name: &str| -> f64 {
        let at = s.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        s[at..at + s[at..].find('"').unwrap()].parse().unwrap()
    };
    out.lines().filter(|l| l.starts_with(r#"<line class="msg""#)).map(|l| (attr(l, "x1"), attr(l, "x2"))).collect()
}

/// An idle stretch (here 1,000 time units between two bursts of 10) is drawn as a narrow grey band
/// labelled with its length, and each burst gets most of the width; on the time axis to scale the
/// bursts are squeezed to a few pixels; nothing is compressed without idle time.
#[test]
fn idle_stretches_are_compressed_and_said() {
    let arrows = [
        arrow(0, 1, MsgKind::Election, 0, Some(5)),
        arrow(1, 0, MsgKind::Election, 5, Some(10)),
        arrow(0, 1, MsgKind::Notify, 1_010, Some(1_015)),
        arrow(1, 0, MsgKind::Notify, 1_015, Some(1_020)),
    ];
    let d = Diagram { time_unit: "ms", ..plain(&arrows, 2) };
    let out = svg(&d);
    assert_eq!(out.matches(r#"class="idle""#).count(), 1, "{out}");
    assert!(out.contains(">1.0 s</text>"), "its length, in seconds: {out}");
    let xs = arrow_xs(&out);
    let burst = xs[1].1 - xs[0].0;
    assert!(burst > 300.0, "a burst gets room: {burst} px");
    let scaled = svg(&Diagram { axis: Axis::Time, ..d.clone() });
    assert!(!scaled.contains(r#"class="idle""#));
    let xs = arrow_xs(&scaled);
    assert!(xs[1].1 - xs[0].0 < 10.0, "to scale, a burst is a sliver");
    let busy = [arrow(0, 1, MsgKind::Election, 0, Some(5)), arrow(1, 0, MsgKind::Election, 5, Some(10))];
    assert!(!svg(&plain(&busy, 2)).contains(r#"class="idle""#));
}

/// Lamport clocks: a node's events count up one by one, receipts before sendings of the same
/// instant, a receipt one past its sending at least; a receipt logged before its sending (clocks
/// of two hosts that disagree) still comes after it.
#[test]
fn causal_times_follow_lamport() {
    let arrows = [
        arrow(0, 1, MsgKind::Election, 0, Some(100)),
        arrow(1, 2, MsgKind::Election, 100, Some(101)),
        arrow(2, 0, MsgKind::Election, 101, Some(500)),
        arrow(0, 1, MsgKind::Notify, 5, Some(3)),
    ];
    assert_eq!(
        causal_times(&arrows, 3),
        [(1, Some(4)), (5, Some(6)), (7, Some(8)), (2, Some(3))],
        "0 sends (1, 2); 1 takes the second first, as its times say (3), then the first (4), sends (5); \
         2 receives (6), sends (7); 0 receives (8)"
    );
}

/// On the causal axis a long delay takes no room: a message delivered after 1,000 time units and
/// one after 1 are drawn the same length, as one step each.
#[test]
fn the_causal_axis_draws_steps_not_delays() {
    let arrows = [arrow(0, 1, MsgKind::Election, 0, Some(1_000)), arrow(1, 0, MsgKind::Election, 1_000, Some(1_001))];
    let out = svg(&Diagram { axis: Axis::Causal, ..plain(&arrows, 2) });
    let xs = arrow_xs(&out);
    assert!(((xs[0].1 - xs[0].0) - (xs[1].1 - xs[1].0)).abs() < 0.2, "{xs:?}");
    assert!(out.contains("causal time, Lamport clock"));
    assert!(out.contains(r#"data-causal="1 → 2""#) && out.contains(r#"data-causal="3 → 4""#), "{out}");
}

/// Arrows are numbered in sending order and carry their fields for the page: kind, ends (named),
/// times, what they carry.
#[test]
fn arrows_carry_their_fields_for_the_page() {
    let mut later = arrow(1, 0, MsgKind::Notify, 9, Some(12));
    later.msg = Some(Msg::Notify { leader: 4 });
    let arrows = [later, arrow(0, 1, MsgKind::Election, 2, None)];
    let out = svg(&plain(&arrows, 2));
    let first = out.find(r#"data-step="0""#).unwrap();
    assert!(out[first..].starts_with(r#"data-step="0" data-at="2" data-arrive="lost" data-kind="election" data-from="0" data-to="1" data-sent="2" data-received="lost""#), "{out}");
    assert!(out.contains(
        r#"data-step="1" data-at="9" data-arrive="12" data-kind="notify" data-from="1" data-to="0" data-sent="9" data-received="12""#
    ));
    assert!(out.contains(r#"data-unit="t""#), "the time unit, for the page");
    assert!(out.contains(r#"data-carries="leader 4""#), "{out}");
}

/// A kept bully leadership of 8 as the LIVE runs draw it (µs): an election burst, 2.6 s of
/// quiet, a crash, 300 ms until suspicion, the failover's burst, a late coordinator, 1.2 s of
/// quiet, the recovery and the old leader taking over, then the stop.
fn failover(arrows: &mut Vec<Arrow>) -> (Vec<Mark>, Vec<Outage>, Vec<Term>) {
    let burst = |arrows: &mut Vec<Arrow>, from: u64, kind: MsgKind| {
        for i in 0..16u64 {
            let sent = from + i * 1_500;
            arrows.push(arrow((i % 8) as u32, ((i + 3) % 8) as u32, kind, sent, Some(sent + 700)));
        }
    };
    burst(arrows, 0, MsgKind::BullyElection);
    burst(arrows, 2_900_000, MsgKind::BullyElection);
    burst(arrows, 2_950_000, MsgKind::Coordinator);
    burst(arrows, 4_600_000, MsgKind::Coordinator);
    let mut marks: Vec<Mark> =
        (0..8).filter(|&p| p != 3).map(|p| Mark { node: p, at: 2_900_000, label: "suspects".into() }).collect();
    marks.push(Mark { node: 1, at: 4_600_100, label: "steps down".into() });
    marks.push(Mark { node: 3, at: 4_600_200, label: "leads".into() });
    let outages = vec![Outage { position: 3, crashed: 2_600_000, recovered: Some(4_600_000) }];
    let terms = vec![
        Term { from: 20_000, term: 1, leader: 3 },
        Term { from: 2_960_000, term: 2, leader: 1 },
        Term { from: 4_600_500, term: 3, leader: 3 },
    ];
    arrows.push(arrow(1, 0, MsgKind::Coordinator, 4_900_000, Some(4_900_400)));
    (marks, outages, terms)
}

/// The plot's left and right edges, from the root element.
fn plot_edges(out: &str) -> (f64, f64) {
    let attr = |name: &str| {
        let at = out.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
        out[at..].split('"').next().unwrap().parse::<f64>().unwrap()
    };
    (attr("data-left"), attr("data-right"))
}

/// Every text the diagram writes, with its box as the placer estimates it.
fn text_boxes(out: &str) -> Vec<(String, [f64; 4])> {
    let attr = |tag: &str, name: &str| {
        tag.find(&format!(" {name}=\"")).map(|at| tag[at + name.len() + 3..].split('"').next().unwrap().to_string())
    };
    out.split("<text")
        .skip(1)
        .filter(|t| !t.contains("transform"))
        .map(|t| {
            let (tag, rest) = t.split_once('>').unwrap();
            let text = rest.split("</text>").next().unwrap().to_string();
            let num = |n: &str| attr(tag, n).and_then(|v| v.parse::<f64>().ok());
            let size = num("font-size").unwrap_or(12.0);
            let anchor = match attr(tag, "text-anchor").as_deref() {
                Some("middle") => "middle",
                Some("end") => "end",
                _ => "start",
            };
            let bold = tag.contains("bold");
            let b = Placer::text_box((num("x").unwrap(), num("y").unwrap(), anchor), size, bold, &text);
            (text, b)
        })
        .collect()
}

/// A one-shot run of the catalogue's `name` on `n` nodes in its worst arrangement, every node
/// initiating, unit delays, arrows logged: the ids and the report.
fn simulated(name: &str, n: u32, rule: Rule) -> (Vec<u64>, crate::report::SimReport) {
    let spec = crate::algo::catalogue::find(name).unwrap();
    let ids = (spec.extras.worst_case.unwrap().ids)(n, rule);
    let topo = crate::topology::Topology::build(spec.default_topology(), n, 0).unwrap();
    let all: Vec<u32> = (0..n).collect();
    let cfg = crate::sim::SimConfig { log_arrows: true, unit_delay: true, ..crate::sim::SimConfig::default() };
    let r = crate::sim::run(spec, &topo, &ids, &all, rule, &cfg);
    assert!(r.verdict.violations.is_empty(), "{name}: {:?}", r.verdict.violations);
    (ids, r)
}

/// The diagram of a ring run, rows named by id, its leader known.
fn ring_diagram<'a>(ids: &'a [u64], r: &'a crate::report::SimReport) -> Diagram<'a> {
    Diagram {
        title: "ring".into(),
        nodes: ids.iter().map(|id| format!("id {id}")).collect(),
        ids,
        arrows: &r.arrows,
        leader: r.verdict.leader,
        time_unit: "t",
        ring: true,
        ..Diagram::default()
    }
}
