//! Space-time diagrams of an election as SVG: one horizontal line per node
//! (time runs left to right), one arrow per message from its sending to its
//! receiving moment, coloured by message kind, with a legend. Lost messages
//! end in a cross. Pure: the drivers collect the [`Arrow`]s (the simulator
//! with [`crate::sim::SimConfig::log_arrows`]).

use std::fmt::Write as _;

use crate::algo::{Msg, MsgKind};

/// At most this many arrows are drawn; the rest are counted in the caption.
pub const MAX_ARROWS: usize = 5_000;

/// One message: who sent it to whom, of which kind, when it left and when it
/// arrived (`None`: lost).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrow {
    /// Sending position.
    pub from: u32,
    /// Receiving position.
    pub to: u32,
    /// Message kind.
    pub kind: MsgKind,
    /// Sending time.
    pub sent: u64,
    /// Arrival time, `None` if the message was lost.
    pub received: Option<u64>,
    /// The message itself, where the driver knows it (the simulator and the
    /// checker; a LIVE log keeps kinds only): what a label says.
    pub msg: Option<Msg>,
}

/// What to draw.
#[derive(Clone, Debug)]
pub struct Diagram<'a> {
    /// Caption, e.g. "as-far, n = 8, RANDOM ids".
    pub title: String,
    /// Label of each position's line, in position order.
    pub nodes: Vec<String>,
    /// The messages, in any order.
    pub arrows: &'a [Arrow],
    /// The elected position, drawn in bold.
    pub leader: Option<u32>,
    /// Unit of the time axis, e.g. "virtual time" or "ms".
    pub time_unit: &'a str,
    /// Events at a node worth a label (a crash, a timeout, a belief).
    pub marks: &'a [Mark],
    /// The positions form a ring in row order: a message between the last
    /// row and the first (the ring's wrap-around) leaves at one edge of the
    /// chart and re-enters at the other, instead of crossing every row.
    pub ring: bool,
    /// Label each arrow with what its message carries ([`Msg::describe`]:
    /// the id, stage, term, hop count), at its middle.
    pub labels: bool,
}

/// An event at one node: a black tick on its line, labelled above it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    /// The position.
    pub node: u32,
    /// When.
    pub at: u64,
    /// What happened, a word or two.
    pub label: String,
}

/// Colours for message kinds, by kind index (cycled).
const PALETTE: [&str; 10] =
    ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"];

const PLOT_WIDTH: f64 = 900.0;
const TOP: f64 = 50.0;
const ROW: f64 = 36.0;

fn colour(kind: MsgKind) -> &'static str {
    PALETTE[kind as usize % PALETTE.len()]
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Render `d` as a standalone SVG document.
pub fn svg(d: &Diagram<'_>) -> String {
    let n = d.nodes.len().max(1);
    // Room for the longest label (bold, with " (leader)"), at about 7.5 px per character.
    let longest = d.nodes.iter().map(|l| l.chars().count()).max().unwrap_or(0) + " (leader)".len();
    let left = (longest as f64 * 7.5 + 16.0).max(110.0);
    let drawn = &d.arrows[..d.arrows.len().min(MAX_ARROWS)];
    let end = drawn
        .iter()
        .map(|a| a.received.unwrap_or(a.sent))
        .chain(d.marks.iter().map(|m| m.at))
        .max()
        .unwrap_or(0)
        .max(1);
    let x = |t: u64| left + PLOT_WIDTH * t as f64 / end as f64;
    let y = |p: u32| TOP + ROW * p as f64;
    let mut kinds: Vec<MsgKind> = drawn.iter().map(|a| a.kind).collect();
    kinds.sort_by_key(|k| *k as usize);
    kinds.dedup();
    let legend_top = TOP + ROW * n as f64 + 20.0;
    let height = legend_top + 24.0 * kinds.len().div_ceil(4) as f64 + 30.0;
    let width = left + PLOT_WIDTH + 40.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(s, "<defs>");
    for &k in &kinds {
        let _ = writeln!(
            s,
            r#"<marker id="head-{name}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="{c}"/></marker>"#,
            name = k.name(),
            c = colour(k)
        );
    }
    let _ = writeln!(s, "</defs>");
    let mut caption = escape(&d.title);
    if d.arrows.len() > drawn.len() {
        let _ = write!(caption, " (first {} of {} messages drawn)", drawn.len(), d.arrows.len());
    }
    let _ = writeln!(s, r#"<text x="{left}" y="22" font-size="15" font-weight="bold">{caption}</text>"#);
    for (p, name) in d.nodes.iter().enumerate() {
        let p = p as u32;
        let lead = d.leader == Some(p);
        let (stroke, weight) = if lead { ("#000", 3) } else { ("#999", 1) };
        let _ = writeln!(
            s,
            r#"<line class="node" x1="{left}" y1="{yy}" x2="{x2}" y2="{yy}" stroke="{stroke}" stroke-width="{weight}"/>"#,
            yy = y(p),
            x2 = left + PLOT_WIDTH
        );
        let label = if lead { format!("{} (leader)", escape(name)) } else { escape(name) };
        let _ = writeln!(
            s,
            r#"<text x="{lx}" y="{ly}" text-anchor="end"{bold}>{label}</text>"#,
            lx = left - 8.0,
            ly = y(p) + 4.0,
            bold = if lead { r#" font-weight="bold""# } else { "" }
        );
    }
    let last = n as u32 - 1;
    for a in drawn {
        let (x1, y1) = (x(a.sent), y(a.from));
        let c = colour(a.kind);
        let wraps = d.ring && n >= 3 && ((a.from == last && a.to == 0) || (a.from == 0 && a.to == last));
        if let (true, Some(r)) = (wraps, a.received) {
            // Down past the last row and in again above the first (or up and in from below).
            let (x2, xm) = (x(r), (x1 + x(r)) / 2.0);
            let down = a.from == last;
            let (out_y, in_y) =
                if down { (y(last) + ROW / 2.0, y(0) - ROW / 2.0) } else { (y(0) - ROW / 2.0, y(last) + ROW / 2.0) };
            let _ = writeln!(
                s,
                r#"<g class="msg wrap"><title>{name} {from} -> {to}, {sent} -> {r} (round the ring)</title><line x1="{x1:.1}" y1="{y1:.1}" x2="{xm:.1}" y2="{out_y:.1}" stroke="{c}" stroke-width="1.2"/><line x1="{xm:.1}" y1="{in_y:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{c}" stroke-width="1.2" marker-end="url(#head-{name})"/></g>"#,
                y2 = y(a.to),
                name = a.kind.name(),
                from = a.from,
                to = a.to,
                sent = a.sent
            );
            continue;
        }
        match a.received {
            Some(r) => {
                let _ = writeln!(
                    s,
                    r#"<line class="msg" x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{c}" stroke-width="1.2" marker-end="url(#head-{name})"><title>{name} {from} -> {to}, {sent} -> {r}</title></line>"#,
                    x2 = x(r),
                    y2 = y(a.to),
                    name = a.kind.name(),
                    from = a.from,
                    to = a.to,
                    sent = a.sent
                );
            }
            None => {
                // Lost: a short dashed stub towards the receiver, ending in a cross.
                let (x2, y2) = (x1 + 12.0, y1 + (y(a.to) - y1) * 0.3);
                let _ = writeln!(
                    s,
                    r#"<line class="msg lost" x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{c}" stroke-dasharray="3 2"><title>{name} {from} -> {to}, sent {sent}, lost</title></line>"#,
                    name = a.kind.name(),
                    from = a.from,
                    to = a.to,
                    sent = a.sent
                );
                let _ = writeln!(
                    s,
                    r#"<path d="M {a1:.1} {b1:.1} L {a2:.1} {b2:.1} M {a1:.1} {b2:.1} L {a2:.1} {b1:.1}" stroke="{c}"/>"#,
                    a1 = x2 - 3.0,
                    a2 = x2 + 3.0,
                    b1 = y2 - 3.0,
                    b2 = y2 + 3.0
                );
            }
        }
    }
    if d.labels {
        // What each delivered message carries, at the middle of its arrow (over the arrows).
        for a in drawn {
            let (Some(r), Some(m)) = (a.received, a.msg) else { continue };
            let text = m.describe();
            if text.is_empty() {
                continue;
            }
            let (x1, y1, x2, y2) = (x(a.sent), y(a.from), x(r), y(a.to));
            let wraps = d.ring && n >= 3 && ((a.from == last && a.to == 0) || (a.from == 0 && a.to == last));
            // A wrapped arrow is labelled where it re-enters.
            let (lx, ly) = if wraps {
                ((x1 + 3.0 * x2) / 4.0, (y2 + if a.to == 0 { y2 - ROW / 2.0 } else { y2 + ROW / 2.0 }) / 2.0)
            } else {
                ((x1 + x2) / 2.0, (y1 + y2) / 2.0)
            };
            let _ = writeln!(
                s,
                r#"<text class="label" x="{lx:.1}" y="{:.1}" font-size="9" text-anchor="middle" fill="{c}" stroke="white" stroke-width="2.5" paint-order="stroke">{}</text>"#,
                ly - 2.0,
                escape(&text),
                c = colour(a.kind)
            );
        }
    }
    // A label too close to the previous one on its line goes below the line.
    let mut last_label: Vec<f64> = vec![f64::NEG_INFINITY; n];
    let mut marks: Vec<&Mark> = d.marks.iter().collect();
    marks.sort_by_key(|m| (m.node, m.at));
    for m in marks {
        let (mx, my) = (x(m.at), y(m.node));
        let slot = &mut last_label[(m.node as usize).min(n - 1)];
        let below = mx - *slot < 7.0 * m.label.chars().count() as f64;
        *slot = if below { f64::NEG_INFINITY } else { mx };
        let ty = if below { my + 18.0 } else { my - 9.0 };
        let _ = writeln!(
            s,
            r#"<g class="mark"><line x1="{mx:.1}" y1="{a:.1}" x2="{mx:.1}" y2="{b:.1}" stroke="black" stroke-width="2"/><text x="{mx:.1}" y="{ty:.1}" font-size="10" text-anchor="middle">{label}</text></g>"#,
            a = my - 6.0,
            b = my + 6.0,
            label = escape(&m.label)
        );
    }
    let _ = writeln!(
        s,
        r##"<text x="{left}" y="{ty}" fill="#555">0</text><text x="{tx}" y="{ty}" fill="#555" text-anchor="end">{end} ({unit})</text>"##,
        ty = TOP + ROW * (n as f64 - 1.0) + 22.0,
        tx = left + PLOT_WIDTH,
        unit = escape(d.time_unit)
    );
    for (i, &k) in kinds.iter().enumerate() {
        let lx = left + 220.0 * (i % 4) as f64;
        let ly = legend_top + 24.0 * (i / 4) as f64;
        let count = drawn.iter().filter(|a| a.kind == k).count();
        let _ = writeln!(
            s,
            r#"<line x1="{lx}" y1="{ly}" x2="{lx2}" y2="{ly}" stroke="{c}" stroke-width="2"/><text x="{tx}" y="{ty}">{name} ({count})</text>"#,
            lx2 = lx + 24.0,
            c = colour(k),
            tx = lx + 30.0,
            ty = ly + 4.0,
            name = k.name()
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arrow(from: u32, to: u32, kind: MsgKind, sent: u64, received: Option<u64>) -> Arrow {
        Arrow { from, to, kind, sent, received, msg: None }
    }

    /// Every node gets a line, every message an arrow (lost ones a dashed stub), every kind a legend
    /// entry with its count, every mark a labelled tick, and names are escaped.
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
        };
        let out = svg(&d);
        assert!(out.starts_with("<svg ") && out.ends_with("</svg>\n"));
        assert_eq!(out.matches(r#"class="node""#).count(), 3);
        assert_eq!(out.matches(r#"class="msg""#).count(), 2);
        assert_eq!(out.matches(r#"class="msg lost""#).count(), 1);
        assert!(out.contains("election (2)") && out.contains("notify (1)"), "{out}");
        assert!(out.contains("as-far &lt;test&gt;") && out.contains("c&amp;d (leader)"), "{out}");
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
        };
        let out = svg(&d);
        assert_eq!(out.matches(r#"class="msg""#).count(), MAX_ARROWS);
        assert!(out.contains(&format!("first {MAX_ARROWS} of {} messages drawn", MAX_ARROWS + 7)));
    }

    /// On a ring the wrap-around message (last row to first, or first to last) leaves at one edge of the
    /// chart and re-enters at the other: two segments, neither crossing the rows between, the second with
    /// the arrowhead; other messages, and the wrap-around when the rows are no ring, stay single arrows.
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
        };
        let out = svg(&d);
        assert_eq!(out.matches(r#"class="msg wrap""#).count(), 2, "{out}");
        assert_eq!(out.matches(r#"class="msg""#).count(), 1);
        let (first, last) = (TOP, TOP + 3.0 * ROW);
        let wrap = &out[out.find(r#"class="msg wrap""#).unwrap()..];
        let wrap = &wrap[..wrap.find("</g>").unwrap()];
        // 3 -> 0: down from the last row past the bottom edge, in from above the first row.
        assert!(
            wrap.contains(&format!(r#"y1="{last:.1}""#)) && wrap.contains(&format!(r#"y2="{:.1}""#, last + ROW / 2.0))
        );
        assert!(
            wrap.contains(&format!(r#"y1="{:.1}""#, first - ROW / 2.0))
                && wrap.contains(&format!(r#"y2="{first:.1}""#))
        );
        assert!(wrap.contains("round the ring") && wrap.matches("marker-end").count() == 1);
        let flat = svg(&Diagram { ring: false, ..d });
        assert_eq!(flat.matches(r#"class="msg""#).count(), 3, "no ring, no wrapping");
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
        };
        let out = svg(&d);
        assert_eq!(out.matches(r#"class="label""#).count(), 1, "{out}");
        assert!(out.contains(">id 6, stage 2</text>"), "{out}");
        assert!(!svg(&Diagram { labels: false, ..d }).contains(r#"class="label""#));
    }
}
