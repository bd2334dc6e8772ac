//! Space-time diagrams of an election as SVG: one horizontal line per node
//! (time runs left to right), one arrow per message from its sending to its
//! receiving moment, coloured by message kind, with a legend. Pure: the
//! drivers collect the [`Arrow`]s (the simulator with
//! [`crate::sim::SimConfig::log_arrows`]) and what else happened.
//!
//! What a diagram can show besides messages:
//!
//! * **The axis** ([`Axis`]): wall (or virtual) time; the same with idle
//!   stretches compressed to a narrow grey band labelled with their length
//!   (the default: a failover's timeouts no longer squeeze its bursts of
//!   messages into vertical lines); or causal time, Lamport's logical clock,
//!   where each message takes one step and only causality orders events.
//! * **Faults**: a crashed node's line is drawn dashed red until it recovers
//!   ([`Outage`]), a partition is a shaded band naming its groups
//!   ([`Split`]), a lost message ends in a cross, a message a fault delayed is
//!   dashed.
//! * **Terms** of kept leaderships: a strip above the nodes, one band per
//!   term, naming its leader ([`Term`]).
//! * **Labels**: what each message carries ([`Msg::describe`](crate::protocol::Msg::describe)).
//!
//! Every arrow carries `data-` attributes (its step in sending order, kind,
//! ends, times, causal times, what it carries) and every mark its time, for
//! the election page's step-through and hover panel.

use std::fmt::Write as _;

use crate::faults::{Outage, Split};
use crate::protocol::MsgKind;
use crate::report::LeadershipEvent;
pub use crate::report::StateChange;

/// At most this many arrows are drawn; the rest are counted in the caption.
pub const MAX_ARROWS: usize = 5_000;

pub use crate::report::Arrow;

/// What the horizontal axis measures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Axis {
    /// Time as the driver measured it, to scale.
    Time,
    /// Time to scale, except idle stretches (nothing sent, received or
    /// marked for longer than four typical message delays, and than a tenth
    /// of the chart would draw): each is a narrow grey band labelled with
    /// its length.
    #[default]
    Compressed,
    /// Lamport's logical clock: a node's events count up one by one, and a
    /// receipt comes one after its sending; timeouts and delays vanish and
    /// only causality orders the chart.
    Causal,
}

/// A term of a kept leadership, from when its leader first claimed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Term {
    /// When its leader announced it.
    pub from: u64,
    /// The term.
    pub term: u64,
    /// The leader's position.
    pub leader: u32,
}

impl Term {
    /// The terms of a kept leadership's timeline: each term from the first
    /// node that announced it led it (`ids` by position), in time order; a
    /// term no higher than one already seen is left out.
    pub fn from_leaderships(events: &[LeadershipEvent], ids: &[u64]) -> Vec<Term> {
        let mut terms: Vec<Term> = Vec::new();
        for e in events {
            let leads = e.leadership.leader.is_some() && ids.get(e.position as usize) == e.leadership.leader.as_ref();
            if leads && terms.last().is_none_or(|t| e.leadership.term > t.term) {
                terms.push(Term { from: e.time, term: e.leadership.term, leader: e.position });
            }
        }
        terms
    }
}

/// What to draw. `Diagram { title, nodes, arrows, ..Diagram::default() }`
/// draws messages only, on the compressed time axis.
#[derive(Clone, Debug, Default)]
pub struct Diagram<'a> {
    /// Caption, e.g. "as-far, n = 8, RANDOM ids".
    pub title: String,
    /// Label of each position's line, in position order.
    pub nodes: Vec<String>,
    /// The messages, in any order.
    pub arrows: &'a [Arrow],
    /// The elected position, drawn in bold.
    pub leader: Option<u32>,
    /// Unit of the time axis, e.g. "virtual time" or "µs".
    pub time_unit: &'a str,
    /// Events at a node worth a label (a timeout, a belief).
    pub marks: &'a [Mark],
    /// The positions form a ring in row order: a message between the last
    /// row and the first (the ring's wrap-around) leaves at one edge of the
    /// chart and re-enters at the other, instead of crossing every row.
    pub ring: bool,
    /// Label each arrow with what its message carries ([`Msg::describe`](crate::protocol::Msg::describe):
    /// the id, stage, term, hop count), at its middle.
    pub labels: bool,
    /// What the horizontal axis measures.
    pub axis: Axis,
    /// Crashes, each until its recovery (the line is drawn down).
    pub outages: &'a [Outage],
    /// Partitions, each while in force (a band naming its groups).
    pub splits: &'a [Split],
    /// Terms of a kept leadership, in time order (a strip above the nodes).
    pub terms: &'a [Term],
    /// Each node's state from a time on (a coloured band along its line,
    /// see [`state_colour`]); empty: none drawn.
    pub states: &'a [StateChange],
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
/// The widest a plot grows to give labelled arrows room.
const MAX_PLOT_WIDTH: f64 = 2_400.0;
const TOP: f64 = 50.0;
const ROW: f64 = 36.0;
/// Height added above the nodes for the strip of terms.
const TERM_STRIP: f64 = 26.0;
/// Width of a compressed idle stretch.
const GAP_PX: f64 = 34.0;
/// An idle stretch is compressed if to scale it would be wider than this.
const IDLE_PX: f64 = 90.0;

fn colour(kind: MsgKind) -> &'static str {
    PALETTE[kind as usize % PALETTE.len()]
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A length of time in `unit`, microseconds and milliseconds shown in the
/// largest unit that keeps it a readable number.
fn duration_text(len: u64, unit: &str) -> String {
    match unit {
        "µs" if len >= 10_000_000 => format!("{} s", len / 1_000_000),
        "µs" if len >= 1_000_000 => format!("{:.1} s", len as f64 / 1e6),
        "µs" if len >= 10_000 => format!("{} ms", len / 1_000),
        "µs" if len >= 1_000 => format!("{:.1} ms", len as f64 / 1e3),
        "ms" | "virtual ms" if len >= 10_000 => format!("{} s", len / 1_000),
        "ms" | "virtual ms" if len >= 1_000 => format!("{:.1} s", len as f64 / 1e3),
        "virtual ms" => format!("{len} ms"),
        _ => format!("{len} {unit}"),
    }
}

/// Lamport's logical clock of every arrow's sending and receipt: a node's
/// events in time order (receipts before sendings of the same instant, which
/// they may cause), each one more than the node's previous event, a receipt
/// also more than its sending. Clocks that disagree across hosts cannot
/// break it: a receipt waits for its sending, whatever the times say.
pub fn causal_times(arrows: &[Arrow], nodes: usize) -> Vec<(u64, Option<u64>)> {
    // Each node's events: (time, receipt before sending, arrow, is a receipt).
    let mut queues: Vec<Vec<(u64, bool, usize)>> = vec![Vec::new(); nodes];
    for (i, a) in arrows.iter().enumerate() {
        if let Some(q) = queues.get_mut(a.from as usize) {
            q.push((a.sent, true, i));
        }
        if let (Some(r), Some(q)) = (a.received, queues.get_mut(a.to as usize)) {
            q.push((r, false, i));
        }
    }
    for q in &mut queues {
        q.sort_unstable();
        q.reverse();
    }
    let mut sent: Vec<Option<u64>> = vec![None; arrows.len()];
    let mut received: Vec<Option<u64>> = vec![None; arrows.len()];
    let mut clock = vec![0u64; nodes];
    let mut left: usize = queues.iter().map(Vec::len).sum();
    while left > 0 {
        let mut progress = false;
        for (p, q) in queues.iter_mut().enumerate() {
            while let Some(&(_, is_send, i)) = q.last() {
                if is_send {
                    clock[p] += 1;
                    sent[i] = Some(clock[p]);
                } else if let Some(s) = sent[i] {
                    clock[p] = clock[p].max(s) + 1;
                    received[i] = Some(clock[p]);
                } else {
                    break;
                }
                q.pop();
                left -= 1;
                progress = true;
            }
        }
        if !progress {
            // A receipt whose sending never comes first (times that contradict each other at
            // both ends): take the first node's waiting receipt as if sent at its clock.
            if let Some((p, q)) = queues.iter_mut().enumerate().find(|(_, q)| !q.is_empty())
                && let Some((_, _, i)) = q.pop()
            {
                clock[p] += 1;
                received[i] = Some(clock[p]);
                left -= 1;
            }
        }
    }
    sent.into_iter().zip(received).map(|(s, r)| (s.unwrap_or(0), r)).collect()
}

/// Where each time value goes across the chart: piecewise linear through
/// knots (time, x), with the compressed idle stretches it found.
struct Scale {
    knots: Vec<(u64, f64)>,
    /// Idle stretches: (from, to) in axis units.
    gaps: Vec<(u64, u64)>,
}

impl Scale {
    /// `values`: every moment drawn; `delay`: a typical message delay, below
    /// four of which no stretch is idle.
    fn new(mut values: Vec<u64>, left: f64, width: f64, compress: bool, delay: u64) -> Scale {
        values.push(0);
        values.sort_unstable();
        values.dedup();
        let end = values.last().copied().unwrap_or(0).max(1);
        let linear = Scale { knots: vec![(0, left), (end, left + width)], gaps: Vec::new() };
        if !compress {
            return linear;
        }
        let gaps: Vec<(u64, u64)> = values
            .windows(2)
            .map(|w| (w[0], w[1]))
            .filter(|&(a, b)| b - a > 4 * delay && (b - a) as f64 * width / end as f64 > IDLE_PX)
            .collect();
        if gaps.is_empty() {
            return linear;
        }
        let idle: u64 = gaps.iter().map(|(a, b)| b - a).sum();
        let active = end - idle;
        let room = width - GAP_PX * gaps.len() as f64;
        let (per_unit, per_gap) =
            if active == 0 { (0.0, width / gaps.len() as f64) } else { (room / active as f64, GAP_PX) };
        let mut knots = vec![(0, left)];
        let (mut t, mut x) = (0u64, left);
        for &(a, b) in &gaps {
            x += (a - t) as f64 * per_unit;
            knots.push((a, x));
            x += per_gap;
            knots.push((b, x));
            t = b;
        }
        knots.push((end, x + (end - t) as f64 * per_unit));
        knots.dedup_by_key(|k| k.0);
        Scale { knots, gaps }
    }

    fn end(&self) -> u64 {
        self.knots.last().map_or(1, |k| k.0)
    }

    fn x(&self, t: u64) -> f64 {
        let i = self.knots.partition_point(|k| k.0 <= t);
        match (i.checked_sub(1).map(|j| self.knots[j]), self.knots.get(i)) {
            (Some((t0, x0)), Some(&(t1, x1))) => x0 + (x1 - x0) * (t - t0) as f64 / (t1 - t0) as f64,
            (Some((_, x0)), None) => x0,
            (None, Some(&(_, x1))) => x1,
            (None, None) => 0.0,
        }
    }
}

/// Render `d` as a standalone SVG document, layer by layer: the background bands (idle stretches,
/// partitions, terms), the nodes' lines, their crashes, the messages, their labels, the marks, then
/// the axis and the legend.
pub fn svg(d: &Diagram<'_>) -> String {
    let l = Layout::new(d);
    let legend = legend(&l);
    let mut s = String::new();
    head(&mut s, &l, &legend);
    idle_bands(&mut s, &l);
    partition_bands(&mut s, &l);
    term_bands(&mut s, &l);
    state_bands(&mut s, &l);
    node_lines(&mut s, &l);
    outages(&mut s, &l);
    messages(&mut s, &l);
    if d.labels {
        message_labels(&mut s, &l);
    }
    marks(&mut s, &l);
    axis_and_legend(&mut s, &l, &legend);
    s.push_str("</svg>\n");
    s
}

/// Where everything goes: the arrows drawn and their ends on the axis, the scale, and the rows.
struct Layout<'d, 'a> {
    d: &'d Diagram<'a>,
    /// Rows (at least one).
    n: usize,
    /// The last row.
    last: u32,
    /// The arrows drawn (at most [`MAX_ARROWS`]).
    drawn: &'d [Arrow],
    /// Each drawn arrow's causal times.
    causal: Vec<(u64, Option<u64>)>,
    /// Each drawn arrow's ends on the axis.
    ends: Vec<(u64, Option<u64>)>,
    /// On the causal axis, the largest clock of any event at or before a time.
    moments: Vec<(u64, u64)>,
    scale: Scale,
    /// The plot's left edge (room for the node names) and width.
    left: f64,
    plot: f64,
    /// The first row's and the last row's bottom edge.
    top: f64,
    bottom: f64,
    /// The arrows' indices in sending order on the axis drawn: the page steps through them.
    order: Vec<usize>,
}

impl<'d, 'a> Layout<'d, 'a> {
    fn new(d: &'d Diagram<'a>) -> Self {
        let n = d.nodes.len().max(1);
        // Room for the longest label (bold, with " (leader)"), at about 7.5 px per character.
        let longest = d.nodes.iter().map(|l| l.chars().count()).max().unwrap_or(0) + " (leader)".len();
        let left = (longest as f64 * 7.5 + 16.0).max(110.0);
        let drawn = &d.arrows[..d.arrows.len().min(MAX_ARROWS)];
        let causal = causal_times(drawn, n);
        // Every arrow's ends on the axis, and a map of other moments onto it: on the causal axis,
        // the largest clock of any event at or before that time.
        let ends: Vec<(u64, Option<u64>)> = match d.axis {
            Axis::Causal => causal.clone(),
            _ => drawn.iter().map(|a| (a.sent, a.received)).collect(),
        };
        let mut moments: Vec<(u64, u64)> = Vec::new();
        if d.axis == Axis::Causal {
            for (a, &(s, r)) in drawn.iter().zip(&causal) {
                moments.push((a.sent, s));
                if let (Some(at), Some(c)) = (a.received, r) {
                    moments.push((at, c));
                }
            }
            moments.sort_unstable();
            let mut top = 0;
            for m in &mut moments {
                top = top.max(m.1);
                m.1 = top;
            }
        }
        let on_axis = |t: u64| on_axis(d.axis, &moments, t);
        let mut values: Vec<u64> = ends.iter().flat_map(|&(s, r)| [Some(s), r]).flatten().collect();
        values.extend(d.marks.iter().map(|m| on_axis(m.at)));
        values.extend(d.outages.iter().flat_map(|o| [Some(o.crashed), o.recovered]).flatten().map(on_axis));
        values.extend(d.splits.iter().flat_map(|s| [Some(s.from), s.until]).flatten().map(on_axis));
        values.extend(d.terms.iter().map(|t| on_axis(t.from)));
        // The median delay of the messages delivered.
        let mut delays: Vec<u64> = ends.iter().filter_map(|&(s, r)| r.map(|r| r.saturating_sub(s))).collect();
        delays.sort_unstable();
        let delay = delays.get(delays.len() / 2).copied().unwrap_or(0);
        // Labelled arrows need room: about 5 px per character of the longest label across a typical
        // delay (up to MAX_PLOT_WIDTH).
        let plot = if d.labels {
            let longest = drawn.iter().filter_map(|a| a.msg).map(|m| m.describe().chars().count()).max().unwrap_or(0);
            let end = values.iter().copied().max().unwrap_or(1).max(1);
            (longest as f64 * 5.0 * end as f64 / delay.max(1) as f64).clamp(PLOT_WIDTH, MAX_PLOT_WIDTH)
        } else {
            PLOT_WIDTH
        };
        let scale = Scale::new(values, left, plot, d.axis == Axis::Compressed, delay);
        let top = TOP + if d.terms.is_empty() { 0.0 } else { TERM_STRIP };
        let last = n as u32 - 1;
        let bottom = top + ROW * last as f64 + ROW / 2.0;
        let mut order: Vec<usize> = (0..drawn.len()).collect();
        order.sort_by_key(|&i| (ends[i].0, i));
        Layout { d, n, last, drawn, causal, ends, moments, scale, left, plot, top, bottom, order }
    }

    /// A moment on the axis drawn.
    fn on_axis(&self, t: u64) -> u64 {
        on_axis(self.d.axis, &self.moments, t)
    }

    fn x(&self, t: u64) -> f64 {
        self.scale.x(t)
    }

    fn y(&self, p: u32) -> f64 {
        self.top + ROW * p as f64
    }

    /// Does the arrow go round the ring, from the last row to the first or back?
    fn wraps(&self, a: &Arrow) -> bool {
        let last = self.last;
        self.d.ring && self.n >= 3 && ((a.from == last && a.to == 0) || (a.from == 0 && a.to == last))
    }
}

/// `t` on an axis: itself, or on the causal axis the largest clock of any event at or before it.
fn on_axis(axis: Axis, moments: &[(u64, u64)], t: u64) -> u64 {
    match axis {
        Axis::Causal => moments.partition_point(|m| m.0 <= t).checked_sub(1).map_or(0, |i| moments[i].1),
        _ => t,
    }
}

/// Legend entries: (sample, text); each message kind, then what else is drawn.
fn legend(l: &Layout<'_, '_>) -> Vec<(String, String)> {
    let (d, drawn) = (l.d, l.drawn);
    let mut legend: Vec<(String, String)> = kinds(drawn)
        .into_iter()
        .map(|k| {
            let count = drawn.iter().filter(|a| a.kind == k).count();
            (
                format!(r#"<line x1="0" y1="0" x2="24" y2="0" stroke="{}" stroke-width="2"/>"#, colour(k)),
                format!("{} ({count})", k.name()),
            )
        })
        .collect();
    if drawn.iter().any(|a| a.received.is_none()) {
        legend.push((r##"<path d="M 9 -3 L 15 3 M 9 3 L 15 -3" stroke="#333"/>"##.into(), "lost message".into()));
    }
    if drawn.iter().any(|a| a.slow) {
        legend.push((
            r##"<line x1="0" y1="0" x2="24" y2="0" stroke="#333" stroke-dasharray="6 3"/>"##.into(),
            "delayed by a fault".into(),
        ));
    }
    if !d.outages.is_empty() {
        legend.push((
            r##"<line x1="0" y1="0" x2="24" y2="0" stroke="#c00" stroke-width="2" stroke-dasharray="2 3"/>"##.into(),
            "crashed (down)".into(),
        ));
    }
    if !d.splits.is_empty() {
        legend.push((
            r##"<rect x="0" y="-6" width="24" height="12" fill="#f6c89f" opacity="0.5"/>"##.into(),
            "partition".into(),
        ));
    }
    if !l.scale.gaps.is_empty() {
        legend.push((
            r##"<rect x="0" y="-6" width="24" height="12" fill="#e8e8e8"/>"##.into(),
            "idle, compressed".into(),
        ));
    }
    let mut states: Vec<&str> = d.states.iter().map(|c| c.state).collect();
    states.sort_unstable();
    states.dedup();
    for state in states {
        legend.push((
            format!(r#"<rect x="0" y="-4" width="24" height="8" fill="{}" opacity="0.6"/>"#, state_colour(state)),
            format!("state: {state}"),
        ));
    }
    legend
}

/// The colour of a node's state on the diagrams and the page, by its role
/// (the Okabe-Ito palette, safe for colour-blind readers): the leader
/// vermillion; a node still competing (candidate, active, electing,
/// looking, proposing, waiting, awake) orange; one out of the running
/// (defeated, passive, dummy) sky blue; a follower that knows its leader
/// blue; asleep grey; anything else reddish purple.
pub fn state_colour(state: &str) -> &'static str {
    match state {
        "leader" => "#D55E00",
        "candidate" | "active" | "electing" | "looking" | "proposing" | "waiting" | "awake" => "#E69F00",
        "defeated" | "passive" | "dummy" | "echoed" => "#56B4E9",
        "follower" | "promised" => "#0072B2",
        "asleep" => "#BBBBBB",
        "no-leader" => "#F0E442",
        _ => "#CC79A7",
    }
}

/// Each node's state along its line: a band from each change to the next, named on hover; the page
/// colours its topology view from them (`data-position`, `data-state`, `data-colour`).
fn state_bands(s: &mut String, l: &Layout<'_, '_>) {
    let (d, n, right) = (l.d, l.n, l.left + l.plot);
    let mut by_node: Vec<Vec<&StateChange>> = vec![Vec::new(); n];
    for c in d.states.iter().filter(|c| (c.position as usize) < n) {
        by_node[c.position as usize].push(c);
    }
    for (p, changes) in by_node.iter().enumerate() {
        let y = l.y(p as u32);
        for (i, c) in changes.iter().enumerate() {
            let at = l.on_axis(c.time);
            let xa = l.x(at).min(right);
            let xb = changes.get(i + 1).map_or(right, |next| l.x(l.on_axis(next.time)).min(right));
            let colour = state_colour(c.state);
            let _ = writeln!(
                s,
                r#"<rect class="state" data-at="{at}" data-position="{p}" data-state="{state}" data-colour="{colour}" x="{xa:.1}" y="{ya:.1}" width="{w:.1}" height="8" fill="{colour}" opacity="0.6"><title>{state} from {t}</title></rect>"#,
                ya = y - 4.0,
                w = (xb - xa).max(0.0),
                state = escape(c.state),
                t = c.time
            );
        }
    }
}

/// The kinds of the messages drawn, in kind order.
fn kinds(drawn: &[Arrow]) -> Vec<MsgKind> {
    let mut kinds: Vec<MsgKind> = drawn.iter().map(|a| a.kind).collect();
    kinds.sort_by_key(|k| *k as usize);
    kinds.dedup();
    kinds
}

/// The document's opening: its size, the arrowheads of each kind, the caption.
fn head(s: &mut String, l: &Layout<'_, '_>, legend: &[(String, String)]) {
    let (d, drawn, left) = (l.d, l.drawn, l.left);
    let legend_top = l.bottom + 48.0;
    let height = legend_top + 24.0 * legend.len().div_ceil(4) as f64 + 30.0;
    let width = left + l.plot + 40.0;
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12" data-unit="{unit}" data-axis="{axis}" data-top="{top}" data-bottom="{bottom}">"#,
        unit = escape(d.time_unit),
        axis = escape(if d.axis == Axis::Causal { "causal time" } else { d.time_unit }),
        top = l.top - ROW / 2.0,
        bottom = l.bottom
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(s, "<defs>");
    for k in kinds(drawn) {
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
}

/// Idle stretches compressed: grey bands labelled with their length, side by side alternating between
/// two heights.
fn idle_bands(s: &mut String, l: &Layout<'_, '_>) {
    let (d, left, plot, top, bottom) = (l.d, l.left, l.plot, l.top, l.bottom);
    let x = |t: u64| l.x(t);
    let mut last_gap_label = f64::NEG_INFINITY;
    let mut low = false;
    for &(a, b) in &l.scale.gaps {
        let (xa, xb) = (x(a), x(b));
        // Low also near the right end, where the axis says how long the whole run was.
        low = (!low && (xa + xb) / 2.0 - last_gap_label < 70.0) || left + plot - (xa + xb) / 2.0 < 120.0;
        last_gap_label = (xa + xb) / 2.0;
        let _ = writeln!(
            s,
            r##"<g class="idle"><rect x="{xa:.1}" y="{ya:.1}" width="{w:.1}" height="{h:.1}" fill="#e8e8e8"/><text x="{xm:.1}" y="{ty:.1}" font-size="10" text-anchor="middle" fill="#555">{len}</text></g>"##,
            ya = top - ROW / 2.0,
            w = xb - xa,
            h = bottom - top + ROW / 2.0,
            xm = (xa + xb) / 2.0,
            ty = bottom + if low { 27.0 } else { 14.0 },
            len = escape(&duration_text(b - a, d.time_unit))
        );
    }
}

/// Partitions: orange bands naming the groups.
fn partition_bands(s: &mut String, l: &Layout<'_, '_>) {
    let (d, left, plot, top, bottom) = (l.d, l.left, l.plot, l.top, l.bottom);
    let x = |t: u64| l.x(t);
    let on_axis = |t: u64| l.on_axis(t);
    for sp in d.splits {
        let (xa, xb) = (x(on_axis(sp.from)), sp.until.map_or(left + plot, |u| x(on_axis(u))));
        let groups: Vec<String> =
            sp.groups.iter().map(|g| g.iter().map(u32::to_string).collect::<Vec<_>>().join(" ")).collect();
        let _ = writeln!(
            s,
            r##"<g class="partition" data-at="{at}"><rect x="{xa:.1}" y="{ya:.1}" width="{w:.1}" height="{h:.1}" fill="#f6c89f" opacity="0.5"/><text x="{tx:.1}" y="{ty:.1}" font-size="10" fill="#8a4b08">partition {label}</text></g>"##,
            at = on_axis(sp.from),
            ya = top - ROW / 2.0,
            w = (xb - xa).max(1.0),
            h = bottom - top + ROW / 2.0,
            tx = xa + 3.0,
            ty = bottom - 3.0,
            label = escape(&groups.join(" | "))
        );
    }
}

/// Terms: a strip above the nodes, a band per term naming its leader.
fn term_bands(s: &mut String, l: &Layout<'_, '_>) {
    let (d, left, plot, top) = (l.d, l.left, l.plot, l.top);
    let x = |t: u64| l.x(t);
    let on_axis = |t: u64| l.on_axis(t);
    for (i, t) in d.terms.iter().enumerate() {
        let xa = x(on_axis(t.from));
        let xb = d.terms.get(i + 1).map_or(left + plot, |next| x(on_axis(next.from)));
        let fill = if i % 2 == 0 { "#dbe9f6" } else { "#c3d9ee" };
        let name = d.nodes.get(t.leader as usize).map_or_else(|| t.leader.to_string(), |l| l.clone());
        let text = format!("term {}: {name}", t.term);
        // A band too narrow for its label (a term that began near the end) is labelled leftwards
        // from its end, over the band before it.
        let narrow = xb - xa < 5.6 * text.chars().count() as f64 + 6.0;
        let (tx, anchor) = if narrow { (xb - 3.0, "end") } else { (xa + 3.0, "start") };
        let _ = writeln!(
            s,
            r##"<g class="term" data-at="{at}"><rect x="{xa:.1}" y="{ya:.1}" width="{w:.1}" height="18" fill="{fill}"/><text x="{tx:.1}" y="{ty:.1}" font-size="10" text-anchor="{anchor}">{text}</text></g>"##,
            at = on_axis(t.from),
            ya = top - ROW / 2.0 - TERM_STRIP,
            w = (xb - xa).max(1.0),
            ty = top - ROW / 2.0 - TERM_STRIP + 13.0,
            text = escape(&text)
        );
    }
}

/// A line per node, named at its left; the leader's bold.
fn node_lines(s: &mut String, l: &Layout<'_, '_>) {
    let (d, left, plot) = (l.d, l.left, l.plot);
    let y = |p: u32| l.y(p);
    for (p, name) in d.nodes.iter().enumerate() {
        let p = p as u32;
        let lead = d.leader == Some(p);
        let (stroke, weight) = if lead { ("#000", 3) } else { ("#999", 1) };
        let _ = writeln!(
            s,
            r#"<line class="node" x1="{left}" y1="{yy}" x2="{x2}" y2="{yy}" stroke="{stroke}" stroke-width="{weight}"/>"#,
            yy = y(p),
            x2 = left + plot
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
}

/// Crashes (a red cross, the line dashed while down) and recoveries.
fn outages(s: &mut String, l: &Layout<'_, '_>) {
    let (d, n, left, plot) = (l.d, l.n, l.left, l.plot);
    let (x, y) = (|t: u64| l.x(t), |p: u32| l.y(p));
    let on_axis = |t: u64| l.on_axis(t);
    for o in d.outages.iter().filter(|o| (o.position as usize) < n) {
        let (xa, yy) = (x(on_axis(o.crashed)), y(o.position));
        let xb = o.recovered.map_or(left + plot, |r| x(on_axis(r)));
        let _ = writeln!(
            s,
            r##"<g class="down" data-at="{at}"><line x1="{xa:.1}" y1="{yy:.1}" x2="{xb:.1}" y2="{yy:.1}" stroke="white" stroke-width="4"/><line x1="{xa:.1}" y1="{yy:.1}" x2="{xb:.1}" y2="{yy:.1}" stroke="#c00" stroke-width="2" stroke-dasharray="2 3"/><path d="M {a1:.1} {b1:.1} L {a2:.1} {b2:.1} M {a1:.1} {b2:.1} L {a2:.1} {b1:.1}" stroke="#c00" stroke-width="2.5"/><text x="{xa:.1}" y="{ty:.1}" font-size="10" text-anchor="middle" fill="#c00">crash</text></g>"##,
            at = on_axis(o.crashed),
            a1 = xa - 5.0,
            a2 = xa + 5.0,
            b1 = yy - 5.0,
            b2 = yy + 5.0,
            ty = yy - 9.0
        );
        if let Some(r) = o.recovered {
            let _ = writeln!(
                s,
                r##"<g class="recover" data-at="{at}"><line x1="{xb:.1}" y1="{a:.1}" x2="{xb:.1}" y2="{b:.1}" stroke="#080" stroke-width="2.5"/><text x="{xb:.1}" y="{ty:.1}" font-size="10" text-anchor="middle" fill="#080">recover</text></g>"##,
                at = on_axis(r),
                a = yy - 6.0,
                b = yy + 6.0,
                ty = yy - 9.0
            );
        }
    }
}

/// Every message drawn, in sending order on the axis drawn, numbered (the page steps through them):
/// an arrow, one round the ring drawn out and in again, or a lost one's stub ending in a cross.
fn messages(s: &mut String, l: &Layout<'_, '_>) {
    let (d, drawn, ends, causal, last) = (l.d, l.drawn, &l.ends, &l.causal, l.last);
    let (x, y) = (|t: u64| l.x(t), |p: u32| l.y(p));
    for (step, &i) in l.order.iter().enumerate() {
        let a = &drawn[i];
        let (sent, received) = ends[i];
        let (x1, y1) = (x(sent), y(a.from));
        let c = colour(a.kind);
        let name = a.kind.name();
        let carries = a.msg.map(|m| m.describe()).unwrap_or_default();
        let (cs, cr) = causal[i];
        let data = format!(
            r#"data-step="{step}" data-at="{sent}" data-arrive="{arrive}" data-kind="{name}" data-from="{from}" data-to="{to}" data-sent="{ts}" data-received="{tr}" data-causal="{cs}{crt}" data-carries="{car}""#,
            arrive = received.map_or_else(|| "lost".to_string(), |r| r.to_string()),
            from = d.nodes.get(a.from as usize).map_or_else(|| a.from.to_string(), |l| escape(l)),
            to = d.nodes.get(a.to as usize).map_or_else(|| a.to.to_string(), |l| escape(l)),
            ts = a.sent,
            tr = a.received.map_or_else(|| "lost".to_string(), |r| r.to_string()),
            crt = cr.map_or_else(String::new, |r| format!(" → {r}")),
            car = escape(&carries)
        );
        let what = if carries.is_empty() { String::new() } else { format!(" ({})", escape(&carries)) };
        let dash = if a.slow { r#" stroke-dasharray="6 3""# } else { "" };
        let slow = if a.slow { ", delayed by a fault" } else { "" };
        let wraps = l.wraps(a);
        match received {
            Some(r) if wraps => {
                // Down past the last row and in again above the first (or up and in from below).
                let (x2, xm) = (x(r), (x1 + x(r)) / 2.0);
                let down = a.from == last;
                let (out_y, in_y) = if down {
                    (y(last) + ROW / 2.0, y(0) - ROW / 2.0)
                } else {
                    (y(0) - ROW / 2.0, y(last) + ROW / 2.0)
                };
                let _ = writeln!(
                    s,
                    r#"<g class="msg wrap" {data}><title>{name}{what} {from} -> {to}, {ts} -> {tr} (round the ring{slow})</title><line x1="{x1:.1}" y1="{y1:.1}" x2="{xm:.1}" y2="{out_y:.1}" stroke="{c}" stroke-width="1.2"{dash}/><line x1="{xm:.1}" y1="{in_y:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{c}" stroke-width="1.2"{dash} marker-end="url(#head-{name})"/></g>"#,
                    y2 = y(a.to),
                    from = a.from,
                    to = a.to,
                    ts = a.sent,
                    tr = a.received.unwrap_or(0)
                );
            }
            Some(r) => {
                let _ = writeln!(
                    s,
                    r#"<line class="msg" {data} x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{c}" stroke-width="1.2"{dash} marker-end="url(#head-{name})"><title>{name}{what} {from} -> {to}, {ts} -> {tr}{slow}</title></line>"#,
                    x2 = x(r),
                    y2 = y(a.to),
                    from = a.from,
                    to = a.to,
                    ts = a.sent,
                    tr = a.received.unwrap_or(0)
                );
            }
            None => {
                // Lost: a short dashed stub towards the receiver, ending in a cross.
                let (x2, y2) = (x1 + 12.0, y1 + (y(a.to) - y1) * 0.3);
                let _ = writeln!(
                    s,
                    r#"<g class="msg lost" {data}><title>{name}{what} {from} -> {to}, sent {ts}, lost</title><line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{c}" stroke-dasharray="3 2"/><path d="M {a1:.1} {b1:.1} L {a2:.1} {b2:.1} M {a1:.1} {b2:.1} L {a2:.1} {b1:.1}" stroke="{c}"/></g>"#,
                    from = a.from,
                    to = a.to,
                    ts = a.sent,
                    a1 = x2 - 3.0,
                    a2 = x2 + 3.0,
                    b1 = y2 - 3.0,
                    b2 = y2 + 3.0
                );
            }
        }
    }
}

/// What each delivered message carries, at the middle of its arrow (over the arrows).
fn message_labels(s: &mut String, l: &Layout<'_, '_>) {
    let (drawn, ends) = (l.drawn, &l.ends);
    let (x, y) = (|t: u64| l.x(t), |p: u32| l.y(p));
    for (step, &i) in l.order.iter().enumerate() {
        let a = &drawn[i];
        let ((sent, Some(r)), Some(m)) = (ends[i], a.msg) else { continue };
        let text = m.describe();
        if text.is_empty() {
            continue;
        }
        let (x1, y1, x2, y2) = (x(sent), y(a.from), x(r), y(a.to));
        let wraps = l.wraps(a);
        // A wrapped arrow is labelled where it re-enters.
        let (lx, ly) = if wraps {
            ((x1 + 3.0 * x2) / 4.0, (y2 + if a.to == 0 { y2 - ROW / 2.0 } else { y2 + ROW / 2.0 }) / 2.0)
        } else {
            ((x1 + x2) / 2.0, (y1 + y2) / 2.0)
        };
        let _ = writeln!(
            s,
            r#"<text class="label" data-step="{step}" x="{lx:.1}" y="{:.1}" font-size="9" text-anchor="middle" fill="{c}" stroke="white" stroke-width="2.5" paint-order="stroke">{}</text>"#,
            ly - 2.0,
            escape(&text),
            c = colour(a.kind)
        );
    }
}

/// Marks on the nodes' lines (a suspicion, a step down); a label too close to the previous one on
/// its line goes below the line.
fn marks(s: &mut String, l: &Layout<'_, '_>) {
    let (d, n) = (l.d, l.n);
    let (x, y) = (|t: u64| l.x(t), |p: u32| l.y(p));
    let on_axis = |t: u64| l.on_axis(t);
    let mut last_label: Vec<f64> = vec![f64::NEG_INFINITY; n];
    let mut marks: Vec<&Mark> = d.marks.iter().collect();
    marks.sort_by_key(|m| (m.node, m.at));
    for m in marks {
        let at = on_axis(m.at);
        let (mx, my) = (x(at), y(m.node));
        let slot = &mut last_label[(m.node as usize).min(n - 1)];
        let below = mx - *slot < 7.0 * m.label.chars().count() as f64;
        *slot = if below { f64::NEG_INFINITY } else { mx };
        let ty = if below { my + 18.0 } else { my - 9.0 };
        let _ = writeln!(
            s,
            r#"<g class="mark" data-at="{at}"><line x1="{mx:.1}" y1="{a:.1}" x2="{mx:.1}" y2="{b:.1}" stroke="black" stroke-width="2"/><text x="{mx:.1}" y="{ty:.1}" font-size="10" text-anchor="middle">{label}</text></g>"#,
            a = my - 6.0,
            b = my + 6.0,
            label = escape(&m.label)
        );
    }
}

/// The axis's two ends (0, and the run's length with its unit), then the legend, four entries a row.
fn axis_and_legend(s: &mut String, l: &Layout<'_, '_>, legend: &[(String, String)]) {
    let (d, left, plot, bottom) = (l.d, l.left, l.plot, l.bottom);
    let end = l.scale.end();
    let legend_top = bottom + 48.0;
    let length = match d.axis {
        Axis::Causal => format!("{end} (causal time, Lamport clock)"),
        _ if matches!(d.time_unit, "µs" | "ms" | "virtual ms") && end >= 1_000 => {
            format!("{} ({end} {})", duration_text(end, d.time_unit), d.time_unit)
        }
        _ => format!("{end} ({})", d.time_unit),
    };
    let _ = writeln!(
        s,
        r##"<text x="{left}" y="{ty}" fill="#555">0</text><text class="axis" x="{tx}" y="{ty}" fill="#555" text-anchor="end">{length}</text>"##,
        ty = bottom + 14.0,
        tx = left + plot,
        length = escape(&length)
    );
    for (i, (sample, text)) in legend.iter().enumerate() {
        let lx = left + 220.0 * (i % 4) as f64;
        let ly = legend_top + 24.0 * (i / 4) as f64;
        let _ = writeln!(
            s,
            r#"<g transform="translate({lx} {ly})">{sample}<text x="30" y="4">{}</text></g>"#,
            escape(text)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Msg;

    fn arrow(from: u32, to: u32, kind: MsgKind, sent: u64, received: Option<u64>) -> Arrow {
        Arrow { from, to, kind, sent, received, msg: None, slow: false }
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
            ..Diagram::default()
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
            ..Diagram::default()
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
            ..Diagram::default()
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
        let arrows =
            [arrow(0, 1, MsgKind::Election, 0, Some(1_000)), arrow(1, 0, MsgKind::Election, 1_000, Some(1_001))];
        let out = svg(&Diagram { axis: Axis::Causal, ..plain(&arrows, 2) });
        let xs = arrow_xs(&out);
        assert!(((xs[0].1 - xs[0].0) - (xs[1].1 - xs[1].0)).abs() < 0.2, "{xs:?}");
        assert!(out.contains("causal time, Lamport clock"));
        assert!(out.contains(r#"data-causal="1 → 2""#) && out.contains(r#"data-causal="3 → 4""#), "{out}");
    }

    /// Faults and terms are drawn: a crash as a red cross and a dashed line until the recovery, a
    /// partition as a band naming its groups, each term as a band naming its leader, a delayed
    /// message dashed; each is in the legend.
    #[test]
    fn faults_and_terms_are_drawn() {
        let mut slow = arrow(0, 1, MsgKind::Election, 0, Some(50));
        slow.slow = true;
        let arrows = [slow, arrow(1, 2, MsgKind::Election, 50, Some(60))];
        let outages = [Outage { position: 2, crashed: 70, recovered: Some(90) }];
        let splits = [Split { from: 20, until: Some(40), groups: vec![vec![0], vec![1, 2]] }];
        let terms = [Term { from: 10, term: 1, leader: 2 }, Term { from: 95, term: 2, leader: 1 }];
        let d = Diagram {
            outages: &outages,
            splits: &splits,
            terms: &terms,
            nodes: vec!["a".into(), "b".into(), "c".into()],
            ..plain(&arrows, 3)
        };
        let out = svg(&d);
        assert_eq!(out.matches(r#"class="down""#).count(), 1);
        assert_eq!(out.matches(r#"class="recover""#).count(), 1);
        assert!(out.contains(">partition 0 | 1 2</text>"), "{out}");
        assert!(out.contains(">term 1: c</text>") && out.contains(">term 2: b</text>"), "{out}");
        assert!(out.contains(r#"stroke-dasharray="6 3""#) && out.contains("delayed by a fault"));
        for entry in ["crashed (down)", "partition</text>", "delayed by a fault"] {
            assert!(out.contains(entry), "legend: {entry}");
        }
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
}
