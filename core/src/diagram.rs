//! Space-time diagrams of an election as SVG: one horizontal line per node
//! (time runs left to right), one arrow per message from its sending to its
//! receiving moment, coloured by message kind, with a legend. Pure: the
//! drivers collect the [`Arrow`]s (the simulator with
//! [`crate::sim::SimConfig::log_arrows`]) and what else happened.
//!
//! A picture printed grey still reads: each message's role
//! ([`MsgKind::role`]) has its own stroke, left free of the faults' dashes.
//! A candidate's message going out is drawn 1.2 px with a filled head, a
//! reply coming back 1.2 px with an open head, the leader's announcement
//! 2.6 px thick, upkeep (heartbeats, leases) 0.7 px thin; the legend shows
//! each kind in its role's stroke, and the roles in grey when there are
//! several.
//!
//! On the messages:
//!
//! * **Swallowed ids**: where a candidate's id stops, a slashed circle on the
//!   receiver's line just after the arrival, titled "id 3 swallowed by id
//!   8". The rule, from what the diagram holds: a message of the candidate
//!   role carrying id x ([`Msg::candidate`](crate::protocol::Msg::candidate))
//!   reaches a node whose own id beats x, and that node sends no message about
//!   x after (which id beats which is told by the leader's id, the largest or
//!   the smallest; without a leader nothing is marked). In AsFar every id but
//!   the winner's is swallowed once; in Stages an active node swallows both
//!   neighbours' worse ids at once, two marks side by side. Labels keep
//!   clear of the marks.
//! * **Round the ring**: on a ring, a message between the last row and the
//!   first leaves at one edge of the chart and re-enters at the other, each
//!   cut end a dot.
//!
//! What a diagram can show besides messages:
//!
//! * **The axis** ([`Axis`]): wall (or virtual) time; the same with idle
//!   stretches compressed to a narrow grey band labelled with their length
//!   (the default: a failover's timeouts no longer squeeze its bursts of
//!   messages into vertical lines, and each failover of a kept leadership,
//!   from a crash or a cut to the next fault, gets its share of the width
//!   beside the start and the recoveries); or causal time, Lamport's logical clock,
//!   where each message takes one step and only causality orders events.
//! * **Faults**: a crashed node's line is drawn dashed red until it recovers
//!   ([`Outage`]), a partition is a shaded band naming its groups
//!   ([`Split`]), a lost message ends in a cross (its stub dashed 3 2), one
//!   that reached a node that was down in a ring on its line (dashed 2 2),
//!   one still on its way at the end runs to the edge (dashed 8 3 1 3), a
//!   message a fault delayed is dashed 6 3, and a refused answer has a hollow
//!   head.
//! * **Terms** of kept leaderships: a strip above the nodes, one band per
//!   term, naming its leader ([`Term`]).
//! * **Labels**: what each message carries ([`Msg::describe`](crate::protocol::Msg::describe)).
//!
//! Every arrow carries `data-` attributes (its step in sending order, kind,
//! ends, times, causal times, what it carries) and every mark its time, for
//! the election page's step-through and hover panel.

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::faults::{Outage, Split};
use crate::protocol::{MsgKind, MsgRole};
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

/// Where a kept leadership's nodes gave up on a leader, as marks: "suspects" where a node that
/// believed in another leader knows of none (it elects), "steps down" where a leader no longer
/// believes in itself (a lease it could not renew). `ids` by position.
pub fn belief_marks(events: &[LeadershipEvent], ids: &[u64]) -> Vec<Mark> {
    let mut marks = Vec::new();
    let mut believed: Vec<Option<u64>> = vec![None; ids.len()];
    for e in events {
        let p = e.position as usize;
        let Some(slot) = believed.get_mut(p) else { continue };
        if e.leadership.leader.is_none() && e.time > 0 {
            match *slot {
                Some(l) if l == ids[p] => marks.push(Mark { node: e.position, at: e.time, label: "steps down".into() }),
                Some(_) => marks.push(Mark { node: e.position, at: e.time, label: "suspects".into() }),
                None => {}
            }
        }
        *slot = e.leadership.leader;
    }
    marks
}

/// What to draw. `Diagram { title, nodes, arrows, ..Diagram::default() }`
/// draws messages only, on the compressed time axis.
#[derive(Clone, Debug, Default)]
pub struct Diagram<'a> {
    /// Caption, e.g. "as-far, n = 8, RANDOM ids".
    pub title: String,
    /// Label of each position's line, in position order.
    pub nodes: Vec<String>,
    /// Each position's id, in position order: partitions name their groups
    /// by id (by position if empty).
    pub ids: &'a [u64],
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
    pub states: &'a [StateChange<'a>],
    /// The initiators' positions (each marked at the start of its line when
    /// not every node initiates); empty: not drawn.
    pub initiators: &'a [u32],
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

/// Colours for message kinds: Paul Tol's "muted" scheme (its sand darker
/// for thin lines), safe for
/// colour-blind readers and apart from the states' Okabe-Ito colours. A
/// diagram gives them to the kinds it draws in kind order, so an
/// algorithm's kinds keep their colours from picture to picture.
const PALETTE: [&str; 9] =
    ["#332288", "#CC6677", "#117733", "#DDAA33", "#AA4499", "#44AA99", "#882255", "#999933", "#88CCEE"];

/// The picture's width: a page's, whatever the labels. A label that does
/// not fit is left out (its words stay in its element's hover title); the
/// page zooms.
const WIDTH: f64 = 1_000.0;
/// Room right of the plot.
const RIGHT_MARGIN: f64 = 30.0;
/// The narrowest plot, for very long node names.
const MIN_PLOT_WIDTH: f64 = 600.0;
const TOP: f64 = 50.0;
const ROW: f64 = 36.0;
/// Height added above the nodes for the strip of terms.
const TERM_STRIP: f64 = 26.0;
/// Width of a compressed idle stretch.
/// How a stretch with no leader is drawn on the term strip: a gap between the terms, outlined.
const LEADERLESS: &str = r##"fill="white" stroke="#888" stroke-dasharray="3 2""##;
const GAP_PX: f64 = 30.0;
/// An idle stretch is compressed if to scale it would be wider than this.
const IDLE_PX: f64 = 60.0;

/// The colour of `kind` among the kinds `drawn` (see [`PALETTE`]).
fn colour_among(drawn: &[MsgKind], kind: MsgKind) -> &'static str {
    PALETTE[drawn.iter().position(|&k| k == kind).unwrap_or(0) % PALETTE.len()]
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

/// A fault's turn on the axis: when a node crashed or recovered, or a partition began or healed.
#[derive(Clone, Copy, Debug)]
struct Turn {
    /// When, on the axis.
    at: u64,
    /// Something was lost (a crash, a partition), not given back (a recovery, a heal).
    loss: bool,
}

/// The weight of an episode of a kept leadership's axis that is not a failover but holds election
/// work: its start, a recovery's or a heal's (a failover weighs 1).
const MINOR_EPISODE: f64 = 0.35;
/// The weight of an episode with no election work (a crash of a follower, a heal that changed
/// nothing): its marks stay apart.
const QUIET_EPISODE: f64 = 0.1;

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
    ///
    /// The idle stretches are chosen on the compressed axis, not the axis to
    /// scale: the longest stretch goes first, and each one after it is
    /// compressed if, with those before it compressed, it would still be
    /// wider than [`IDLE_PX`]. (A failover's detection wait, short beside the
    /// seconds of a kept leadership, is long beside its bursts once those
    /// seconds are compressed.) Compressing a stretch only widens the rest,
    /// so once the longest left is narrow enough, all are. At most half the
    /// width goes to compressed stretches.
    ///
    /// `faults`: when nodes crashed or recovered and partitions began or healed, each a [`Turn`]:
    /// its time and whether it lost something (a crash, a partition) or gave it back; `work`: when
    /// election messages (not upkeep) were on their way, from sending to receipt. The axis is cut into episodes at the faults: the
    /// start, then each fault until the next. A kept leadership's story is its failovers, so each
    /// episode that begins with a loss and holds election work weighs 1, the start and the
    /// episodes of recoveries and heals with work weigh [`MINOR_EPISODE`], and an episode without
    /// work [`QUIET_EPISODE`]: with one crash its failover gets three quarters of the room left by
    /// the idle bands, with several each its share.
    fn new(
        mut values: Vec<u64>,
        left: f64,
        width: f64,
        compress: bool,
        delay: u64,
        faults: &[Turn],
        work: &[(u64, u64)],
    ) -> Scale {
        values.push(0);
        values.sort_unstable();
        values.dedup();
        let end = values.last().copied().unwrap_or(0).max(1);
        let linear = Scale { knots: vec![(0, left), (end, left + width)], gaps: Vec::new() };
        if !compress {
            return linear;
        }
        let mut candidates: Vec<(u64, u64)> =
            values.windows(2).map(|w| (w[0], w[1])).filter(|&(a, b)| b - a > 4 * delay).collect();
        candidates.sort_by_key(|&(a, b)| (std::cmp::Reverse(b - a), a));
        let most = ((width / 2.0) / GAP_PX) as usize;
        let mut gaps: Vec<(u64, u64)> = Vec::new();
        let mut idle = 0u64;
        for (a, b) in candidates {
            let active = end - idle;
            let per_unit = (width - GAP_PX * gaps.len() as f64) / active as f64;
            if gaps.len() >= most || (b - a) as f64 * per_unit <= IDLE_PX {
                break;
            }
            gaps.push((a, b));
            idle += b - a;
        }
        if gaps.is_empty() && faults.is_empty() {
            return linear;
        }
        gaps.sort_unstable();
        let active = end - idle;
        if active == 0 {
            let per_gap = width / gaps.len() as f64;
            let mut knots = vec![(0, left)];
            for (i, &(a, b)) in gaps.iter().enumerate() {
                knots.push((a, left + per_gap * i as f64));
                knots.push((b, left + per_gap * (i + 1) as f64));
            }
            knots.dedup_by_key(|k| k.0);
            return Scale { knots, gaps };
        }
        // The stretches between the idle bands, cut at the faults: each in one episode.
        let mut cuts: Vec<u64> = faults.iter().map(|f| f.at).filter(|&t| t > 0 && t < end).collect();
        cuts.sort_unstable();
        cuts.dedup();
        let mut bursts: Vec<(u64, u64)> = Vec::new();
        let mut t = 0u64;
        for &(a, b) in gaps.iter().chain([(end, end)].iter()) {
            let inside: Vec<u64> = cuts.iter().copied().filter(|&c| c > t && c < a).collect();
            for c in inside {
                bursts.push((t, c));
                t = c;
            }
            bursts.push((t, a));
            t = b;
        }
        let moments = |(a, b): (u64, u64)| values.partition_point(|&v| v <= b) - values.partition_point(|&v| v < a);
        // Episode of a stretch: how many fault times are at or before its start.
        let episode = |w: (u64, u64)| cuts.partition_point(|&c| c <= w.0);
        let episodes = cuts.len() + 1;
        let mut weights = vec![0.0f64; episodes];
        for (e, weight) in weights.iter_mut().enumerate() {
            let from = if e == 0 { 0 } else { cuts[e - 1] };
            let until = cuts.get(e).copied().unwrap_or(u64::MAX);
            let busy = work.iter().any(|&(a, b)| a < until && b >= from);
            let loses = e > 0 && faults.iter().any(|f| f.at == from && f.loss);
            *weight = match (busy, loses) {
                (true, true) => 1.0,
                (true, false) if episodes > 1 => MINOR_EPISODE,
                (true, false) => 1.0,
                (false, _) => QUIET_EPISODE,
            };
        }
        // Within an episode its stretches share its room a quarter by their time and three
        // quarters by their moments: a burst of many messages in little time still gets room.
        // Within a stretch, time is to scale.
        let mut time_in = vec![0u64; episodes];
        let mut moments_in = vec![0usize; episodes];
        for &w in &bursts {
            time_in[episode(w)] += w.1 - w.0;
            moments_in[episode(w)] += if w.1 > w.0 { moments(w) } else { 0 };
        }
        // Episodes with no stretch of time give their weight up.
        for (weight, &time) in weights.iter_mut().zip(&time_in) {
            if time == 0 {
                *weight = 0.0;
            }
        }
        let total: f64 = weights.iter().sum::<f64>().max(f64::MIN_POSITIVE);
        let share = |w: (u64, u64)| {
            if w.1 == w.0 {
                return 0.0;
            }
            let e = episode(w);
            let by =
                0.25 * (w.1 - w.0) as f64 / time_in[e] as f64 + 0.75 * moments(w) as f64 / moments_in[e].max(1) as f64;
            weights[e] / total * by
        };
        let room = width - GAP_PX * gaps.len() as f64;
        let mut knots = vec![(0, left)];
        let mut x = left;
        let mut gap = gaps.iter().peekable();
        for &w in &bursts {
            x += room * share(w);
            knots.push((w.1, x));
            if let Some(&&(a, b)) = gap.peek()
                && a == w.1
            {
                x += GAP_PX;
                knots.push((b, x));
                gap.next();
            }
        }
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
/// partitions, terms), the nodes' lines, their crashes, the messages (with their swallowed ids),
/// their labels, the marks, then the axis and the legend.
///
/// No text overprints another: the caption, the nodes' names, the swallowed ids' marks and the
/// axis are placed first, then the layers' labels by importance (terms, crashes, marks,
/// partitions, idle stretches, what messages carry), each at the first of its spots where it
/// overlaps nothing placed.
pub fn svg(d: &Diagram<'_>) -> String {
    let l = Layout::new(d);
    let legend = legend(&l);
    let mut placer = Placer { boxes: Vec::new(), right: l.left + l.plot + RIGHT_MARGIN };
    let mut s = String::new();
    head(&mut s, &l, &legend, &mut placer);
    let rows = layer(&l, &mut placer, node_lines);
    layer(&l, &mut placer, reserve_swallowed);
    let axis = layer(&l, &mut placer, |s, l, p| axis_and_legend(s, l, &legend, p));
    let terms = layer(&l, &mut placer, term_bands);
    let downs = layer(&l, &mut placer, outages);
    let marks = layer(&l, &mut placer, marks);
    let parts = layer(&l, &mut placer, partition_bands);
    let twos = layer(&l, &mut placer, two_leaders);
    let idle = layer(&l, &mut placer, idle_bands);
    let labels = if d.labels { layer(&l, &mut placer, message_labels) } else { String::new() };
    for part in [idle, parts, terms] {
        s.push_str(&part);
    }
    state_bands(&mut s, &l);
    s.push_str(&rows);
    s.push_str(&downs);
    messages(&mut s, &l);
    for part in [twos, labels, marks, axis] {
        s.push_str(&part);
    }
    s.push_str("</svg>\n");
    s
}

/// One layer drawn into its own text, its labels placed now.
fn layer(
    l: &Layout<'_, '_>,
    placer: &mut Placer,
    draw: impl FnOnce(&mut String, &Layout<'_, '_>, &mut Placer),
) -> String {
    let mut s = String::new();
    draw(&mut s, l, placer);
    s
}

/// The boxes of the texts placed so far, for labels that must not overprint one another. A box is
/// estimated from the font size and the number of characters (a generous average width, so that
/// a browser's real text fits inside it).
#[derive(Default)]
struct Placer {
    boxes: Vec<[f64; 4]>,
    /// The picture's right edge: nothing is placed past it.
    right: f64,
}

/// Where a text goes: its anchor point and `text-anchor`.
type Spot = (f64, f64, &'static str);

impl Placer {
    /// The box of `text` at `spot` in `size` px (bold a little wider): [x0, y0, x1, y1].
    fn text_box(spot: Spot, size: f64, bold: bool, text: &str) -> [f64; 4] {
        let (x, y, anchor) = spot;
        let w = text.chars().count() as f64 * size * if bold { 0.68 } else { 0.62 };
        let x0 = match anchor {
            "middle" => x - w / 2.0,
            "end" => x - w,
            _ => x,
        };
        [x0, y - size * 0.9, x0 + w, y + size * 0.25]
    }

    /// Take the room of a text that is drawn wherever it overlaps (the caption, a node's name).
    fn fixed(&mut self, spot: Spot, size: f64, bold: bool, text: &str) {
        self.boxes.push(Self::text_box(spot, size, bold, text));
    }

    /// The first of `spots` where `text` overlaps no text placed, taken; `None` if there is none.
    fn place(&mut self, spots: &[Spot], size: f64, text: &str) -> Option<Spot> {
        let spot = spots.iter().copied().find(|&spot| {
            let b = Self::text_box(spot, size, false, text);
            b[0] >= 0.0
                && b[2] <= self.right
                && !self.boxes.iter().any(|o| b[0] < o[2] && o[0] < b[2] && b[1] < o[3] && o[1] < b[3])
        })?;
        self.boxes.push(Self::text_box(spot, size, false, text));
        Some(spot)
    }
}

/// A `<text>` element at `spot`, or nothing: its words are then only in the element's title.
fn text_at(spot: Option<Spot>, size: f64, attrs: &str, text: &str) -> String {
    spot.map_or_else(String::new, |(x, y, anchor)| {
        format!(
            r#"<text x="{x:.1}" y="{y:.1}" font-size="{size}" text-anchor="{anchor}"{attrs}>{}</text>"#,
            escape(text)
        )
    })
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
    /// The kinds drawn, in kind order: their colours.
    kinds: Vec<MsgKind>,
    /// Each drawn arrow's swallowed id, if the id it carries stops where it arrives.
    swallowed: Vec<Option<Swallowed>>,
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
        let plot = (WIDTH - RIGHT_MARGIN - left).max(MIN_PLOT_WIDTH);
        let turn = |at: u64, loss: bool| Turn { at: on_axis(at), loss };
        let mut faults: Vec<Turn> = Vec::new();
        for o in d.outages {
            faults.push(turn(o.crashed, true));
            faults.extend(o.recovered.map(|r| turn(r, false)));
        }
        for s in d.splits {
            faults.push(turn(s.from, true));
            faults.extend(s.until.map(|u| turn(u, false)));
        }
        let work: Vec<(u64, u64)> = drawn
            .iter()
            .zip(&ends)
            .filter(|(a, _)| a.kind.role() != MsgRole::Upkeep)
            .map(|(_, e)| (e.0, e.1.unwrap_or(e.0)))
            .collect();
        let scale = Scale::new(values, left, plot, d.axis == Axis::Compressed, delay, &faults, &work);
        let top = TOP + if d.terms.is_empty() { 0.0 } else { TERM_STRIP };
        let last = n as u32 - 1;
        let bottom = top + ROW * last as f64 + ROW / 2.0;
        let mut order: Vec<usize> = (0..drawn.len()).collect();
        order.sort_by_key(|&i| (ends[i].0, i));
        let kinds = kinds(drawn);
        let mut l = Layout {
            d,
            n,
            last,
            drawn,
            causal,
            ends,
            moments,
            scale,
            left,
            plot,
            top,
            bottom,
            order,
            kinds,
            swallowed: Vec::new(),
        };
        l.swallowed = swallowed(&l);
        l
    }

    /// The roles of the kinds drawn, in role order.
    fn roles(&self) -> Vec<MsgRole> {
        let mut roles: Vec<MsgRole> = self.kinds.iter().map(|k| k.role()).collect();
        roles.sort_unstable();
        roles.dedup();
        roles
    }

    /// The colour of a message kind in this diagram.
    fn colour(&self, kind: MsgKind) -> &'static str {
        colour_among(&self.kinds, kind)
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
    let mut legend = message_legend(l);
    if !d.initiators.is_empty() && d.initiators.len() < l.n {
        let mark = format!(r##"<path d="{}" fill="{INITIATOR}"/>"##, initiator_path(14.0, 0.0));
        legend.push((mark, "initiator".into()));
    }
    if term_losses(d).iter().any(Option::is_some) {
        legend.push((format!(r##"<rect x="1" y="-6" width="22" height="12" {LEADERLESS}/>"##), "no leader".into()));
    }
    if !leader_overlaps(d.states, d.outages, l.n).is_empty() {
        legend.push((
            r##"<rect x="1" y="-6" width="22" height="12" fill="none" stroke="#D55E00" stroke-width="2" stroke-dasharray="4 2"/>"##.into(),
            "more than one leader".into(),
        ));
    }
    if drawn.iter().any(|a| a.msg.is_some_and(|m| m.refuses())) {
        legend.push((REFUSED_SAMPLE.into(), "refused (hollow head)".into()));
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

/// Legend entries of the messages: each kind in its colour, with its role's stroke and head; the
/// roles in grey when more than one is drawn; what became of messages not received; the ring's
/// wrap-around and swallowed ids, when drawn.
fn message_legend(l: &Layout<'_, '_>) -> Vec<(String, String)> {
    let drawn = l.drawn;
    let mut legend: Vec<(String, String)> = kinds(drawn)
        .into_iter()
        .map(|k| {
            let count = drawn.iter().filter(|a| a.kind == k).count();
            let (c, w) = (l.colour(k), RoleStyle::of(k.role()).width);
            (
                format!(
                    r#"<line x1="0" y1="0" x2="24" y2="0" stroke="{c}" stroke-width="{w}" marker-end="url(#head-{})"/>"#,
                    k.name()
                ),
                format!("{} ({count})", k.name()),
            )
        })
        .collect();
    let roles = l.roles();
    if roles.len() > 1 {
        for role in roles {
            let st = RoleStyle::of(role);
            legend.push((
                format!(
                    r##"<line x1="0" y1="0" x2="24" y2="0" stroke="#333" stroke-width="{}" marker-end="url(#head-role-{})"/>"##,
                    st.width,
                    role.name()
                ),
                st.legend.into(),
            ));
        }
    }
    let fates: Vec<Fate> = drawn.iter().map(|a| l.fate(a)).collect();
    for (fate, sample, text) in [
        (Fate::Lost, LOST_SAMPLE, "lost on the network"),
        (Fate::Dropped, DROPPED_SAMPLE, "dropped: receiver down"),
        (Fate::InFlight, FLYING_SAMPLE, "in flight at the end"),
    ] {
        if fates.contains(&fate) {
            legend.push((sample.into(), text.into()));
        }
    }
    if drawn.iter().zip(&fates).any(|(a, &f)| a.received.is_some() && f != Fate::Dropped && l.wraps(a)) {
        legend.push((RING_SAMPLE.into(), "round the ring".into()));
    }
    if l.swallowed.iter().any(Option::is_some) {
        let sample = format!(
            r##"<line x1="0" y1="0" x2="14" y2="0" stroke="#333" stroke-width="1.2"/><path d="M 7 -3.5 L 15 0 L 7 3.5 z" fill="#333"/>{}"##,
            slashed_circle(20.5, 0.0)
        );
        legend.push((sample, "id swallowed".into()));
    }
    legend
}

/// The legend's sample of a message round the ring: out at one edge, in at the other, each cut
/// end a dot.
const RING_SAMPLE: &str = r##"<line x1="0" y1="-6" x2="8" y2="6" stroke="#333" stroke-width="1.2"/><circle cx="8" cy="6" r="2.2" fill="#333"/><circle cx="16" cy="-6" r="2.2" fill="#333"/><line x1="16" y1="-6" x2="24" y2="6" stroke="#333" stroke-width="1.2"/>"##;

/// The colour of a node's state on the diagrams and the page, by its role
/// (the Okabe-Ito palette, safe for colour-blind readers, with a lighter and
/// a darker shade where one algorithm has two states of a role): the leader
/// vermillion (one whose lease lapsed light vermillion); a node still
/// competing orange, one a step further in its round (waiting for a better
/// candidate, proposing, collecting, processing) dark gold, one not yet
/// competing (awake, PreVote's pre-candidate, saturated) light orange; one
/// out of the running (defeated, passive, relay, non-participant) sky blue,
/// a dummy or an echoed candidate light sky blue; a follower that knows its
/// leader blue, one that promised its vote bluish green; a node that knows
/// no leader yellow; one announcing or winning reddish purple, leaving wine;
/// asleep grey; anything else dark grey. Within one algorithm every state
/// has its own colour (a test runs the catalogue).
pub fn state_colour(state: &str) -> &'static str {
    match state {
        "leader" => "#D55E00",
        "leader-unleased" => "#F4A582",
        "candidate" | "active" | "electing" | "looking" | "participant" | "running" => "#E69F00",
        "waiting" | "proposing" | "collecting" | "processing" => "#8F6A00",
        "awake" | "pre-candidate" | "saturated" => "#F5CD7A",
        "defeated" | "passive" | "relay" | "non-participant" => "#56B4E9",
        "dummy" | "echoed" => "#A9D8F5",
        "follower" => "#0072B2",
        "promised" => "#009E73",
        "announcing" | "winning" => "#CC79A7",
        "leaving" => "#882255",
        "asleep" => "#BBBBBB",
        "no-leader" => "#F0E442",
        _ => "#333333",
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
fn head(s: &mut String, l: &Layout<'_, '_>, legend: &[(String, String)], placer: &mut Placer) {
    let (d, drawn, left) = (l.d, l.drawn, l.left);
    let legend_top = l.bottom + 48.0;
    let height = legend_top + 24.0 * legend.len().div_ceil(legend_columns(l)) as f64 + 30.0;
    let width = left + l.plot + RIGHT_MARGIN;
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12" data-unit="{unit}" data-axis="{axis}" data-top="{top}" data-bottom="{bottom}" data-left="{left}" data-right="{right}">"#,
        unit = escape(d.time_unit),
        axis = escape(if d.axis == Axis::Causal { "causal time" } else { d.time_unit }),
        top = l.top - ROW / 2.0,
        bottom = l.bottom,
        right = left + l.plot
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(s, "<defs>");
    for k in kinds(drawn) {
        let (id, c) = (format!("head-{}", k.name()), l.colour(k));
        let _ = writeln!(s, "{}", marker(&id, c, k.role(), false));
        if drawn.iter().any(|a| a.kind == k && a.msg.is_some_and(|m| m.refuses())) {
            let _ = writeln!(s, "{}", marker(&format!("{id}-no"), c, k.role(), true));
        }
    }
    // The legend's samples of the roles, in grey.
    if l.roles().len() > 1 {
        for role in l.roles() {
            let _ = writeln!(s, "{}", marker(&format!("head-role-{}", role.name()), "#333", role, false));
        }
    }
    let _ = writeln!(s, "</defs>");
    let mut caption = escape(&d.title);
    if d.arrows.len() > drawn.len() {
        let _ = write!(caption, " (first {} of {} messages drawn)", drawn.len(), d.arrows.len());
    }
    placer.fixed((left, 22.0, "start"), 15.0, true, &caption);
    let _ = writeln!(s, r#"<text x="{left}" y="22" font-size="15" font-weight="bold">{caption}</text>"#);
}

/// Idle stretches compressed: grey bands labelled with their length below the axis, on one of two
/// lines or, failing both, above the plot.
fn idle_bands(s: &mut String, l: &Layout<'_, '_>, placer: &mut Placer) {
    let (d, top, bottom) = (l.d, l.top, l.bottom);
    for &(a, b) in &l.scale.gaps {
        let (xa, xb) = (l.x(a), l.x(b));
        let xm = (xa + xb) / 2.0;
        let len = duration_text(b - a, d.time_unit);
        let spots =
            [(xm, bottom + 14.0, "middle"), (xm, bottom + 27.0, "middle"), (xm, top - ROW / 2.0 - 3.0, "middle")];
        let _ = writeln!(
            s,
            r##"<g class="idle"><title>idle for {len}</title><rect x="{xa:.1}" y="{ya:.1}" width="{w:.1}" height="{h:.1}" fill="#e8e8e8"/>{text}</g>"##,
            ya = top - ROW / 2.0,
            w = xb - xa,
            h = bottom - top + ROW / 2.0,
            len = escape(&len),
            text = text_at(placer.place(&spots, 10.0, &len), 10.0, r##" fill="#555""##, &len)
        );
    }
}

/// Partitions: orange bands naming the groups by id, at the band's foot or head.
fn partition_bands(s: &mut String, l: &Layout<'_, '_>, placer: &mut Placer) {
    let (d, left, plot, top, bottom) = (l.d, l.left, l.plot, l.top, l.bottom);
    let name = |p: &u32| d.ids.get(*p as usize).map_or_else(|| format!("position {p}"), |id| format!("id {id}"));
    for sp in d.splits {
        let (xa, xb) = (l.x(l.on_axis(sp.from)), sp.until.map_or(left + plot, |u| l.x(l.on_axis(u))));
        let groups: Vec<String> = sp.groups.iter().map(|g| g.iter().map(name).collect::<Vec<_>>().join(", ")).collect();
        let label = format!("partition: {}", groups.join(" | "));
        let spots = [(xa + 3.0, bottom - 3.0, "start"), (xa + 3.0, top - ROW / 2.0 + 11.0, "start")];
        let _ = writeln!(
            s,
            r##"<g class="partition" data-at="{at}" data-until="{until}" data-groups="{positions}"><title>{title}</title><rect x="{xa:.1}" y="{ya:.1}" width="{w:.1}" height="{h:.1}" fill="#f6c89f" opacity="0.5"/>{text}</g>"##,
            at = l.on_axis(sp.from),
            until = sp.until.map_or_else(|| "never".to_string(), |u| l.on_axis(u).to_string()),
            positions = sp
                .groups
                .iter()
                .map(|g| g.iter().map(u32::to_string).collect::<Vec<_>>().join(","))
                .collect::<Vec<_>>()
                .join("|"),
            title = escape(&label),
            ya = top - ROW / 2.0,
            w = (xb - xa).max(1.0),
            h = bottom - top + ROW / 2.0,
            text = text_at(placer.place(&spots, 10.0, &label), 10.0, r##" fill="#8a4b08""##, &label)
        );
    }
}

/// Stretches in which more than one node that is up has the state "leader", from the states and
/// outages drawn (a crashed leader leads nobody until it recovers): (from, until;
/// `None`: to the end) and the most leaders at once.
fn leader_overlaps(states: &[StateChange], outages: &[Outage], n: usize) -> Vec<(u64, Option<u64>, usize)> {
    // (time, position, what changed): a state, or down (true) / up (false).
    enum Change<'s> {
        State(&'s str),
        Down(bool),
    }
    let mut changes: Vec<(u64, usize, Change<'_>)> =
        states.iter().map(|c| (c.time, c.position as usize, Change::State(c.state))).collect();
    for o in outages {
        changes.push((o.crashed, o.position as usize, Change::Down(true)));
        changes.extend(o.recovered.map(|r| (r, o.position as usize, Change::Down(false))));
    }
    changes.retain(|c| c.1 < n);
    changes.sort_by_key(|c| c.0);
    let (mut leading, mut down) = (vec![false; n], vec![false; n]);
    let mut open: Option<(u64, usize)> = None;
    let mut out = Vec::new();
    for (i, (time, p, change)) in changes.iter().enumerate() {
        match change {
            Change::State(state) => leading[*p] = *state == "leader",
            Change::Down(d) => down[*p] = *d,
        }
        if changes.get(i + 1).is_some_and(|next| next.0 == *time) {
            continue;
        }
        let count = leading.iter().zip(&down).filter(|&(&l, &d)| l && !d).count();
        let time = *time;
        match open {
            Some((from, most)) if count < 2 => {
                out.push((from, Some(time), most));
                open = None;
            }
            Some((from, most)) => open = Some((from, most.max(count))),
            None if count >= 2 => open = Some((time, count)),
            None => {}
        }
    }
    out.extend(open.map(|(from, most)| (from, None, most)));
    out
}

/// Where more than one node leads at once: a vermillion frame across the nodes, saying how many.
fn two_leaders(s: &mut String, l: &Layout<'_, '_>, placer: &mut Placer) {
    let (left, plot, top, bottom) = (l.left, l.plot, l.top, l.bottom);
    for (from, until, most) in leader_overlaps(l.d.states, l.d.outages, l.n) {
        let xa = l.x(l.on_axis(from));
        let xb = until.map_or(left + plot, |u| l.x(l.on_axis(u))).max(xa + 2.0);
        let label = format!("{most} leaders");
        let ty = top - ROW / 2.0 - 3.0;
        let spots = [(xa, ty, "start"), (xb, ty, "end"), (xb, bottom + 27.0, "end")];
        let _ = writeln!(
            s,
            r##"<g class="two-leaders" data-at="{at}"><title>{label} at once</title><rect x="{xa:.1}" y="{ya:.1}" width="{w:.1}" height="{h:.1}" fill="none" stroke="#D55E00" stroke-width="2" stroke-dasharray="4 2"/>{text}</g>"##,
            at = l.on_axis(from),
            ya = top - ROW / 2.0,
            w = xb - xa,
            h = bottom - top + ROW / 2.0,
            text = text_at(placer.place(&spots, 10.0, &label), 10.0, r##" fill="#D55E00" font-weight="bold""##, &label)
        );
    }
}

/// Terms: a strip above the nodes, a band per term naming its leader. A band too narrow for its
/// label says less ("term 3", then "3"), at its start or leftwards from its end.
/// When each term's leader was lost (`None`: it led until the next term or the end): its crash,
/// or where it stepped down, after the term began and before the next.
fn term_losses(d: &Diagram<'_>) -> Vec<Option<u64>> {
    d.terms
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let next = d.terms.get(i + 1).map_or(u64::MAX, |n| n.from);
            let crashed = d.outages.iter().filter(|o| o.position == t.leader).map(|o| o.crashed);
            let stepped = d.marks.iter().filter(|m| m.node == t.leader && m.label == "steps down").map(|m| m.at);
            crashed.chain(stepped).filter(|&at| at >= t.from && at < next).min()
        })
        .collect()
}

fn term_bands(s: &mut String, l: &Layout<'_, '_>, placer: &mut Placer) {
    let (d, left, plot, top) = (l.d, l.left, l.plot, l.top);
    let losses = term_losses(d);
    for (i, t) in d.terms.iter().enumerate() {
        let xa = l.x(l.on_axis(t.from));
        let xn = d.terms.get(i + 1).map_or(left + plot, |next| l.x(l.on_axis(next.from)));
        // A lost leader's term ends there; no leader until the next term (or the end).
        let xb = losses[i].map_or(xn, |at| l.x(l.on_axis(at)).min(xn));
        if xn - xb >= 1.0 {
            let ty = top - ROW / 2.0 - TERM_STRIP + 13.0;
            let label = "no leader";
            let spots = [((xb + xn) / 2.0, ty, "middle")];
            let text = text_at(placer.place(&spots, 10.0, label), 10.0, r##" fill="#555""##, label);
            let _ = writeln!(
                s,
                r##"<g class="leaderless" data-at="{at}"><title>no leader after term {term}</title><rect x="{xb:.1}" y="{ya:.1}" width="{w:.1}" height="18" {LEADERLESS}/>{text}</g>"##,
                at = losses[i].map_or(0, |at| l.on_axis(at)),
                term = t.term,
                ya = top - ROW / 2.0 - TERM_STRIP,
                w = xn - xb,
            );
        }
        let fill = if i % 2 == 0 { "#dbe9f6" } else { "#c3d9ee" };
        let name = d.nodes.get(t.leader as usize).map_or_else(|| t.leader.to_string(), |l| l.clone());
        let full = format!("term {}: {name}", t.term);
        let ty = top - ROW / 2.0 - TERM_STRIP + 13.0;
        let spots = [(xa + 3.0, ty, "start"), (xb - 3.0, ty, "end")];
        let texts = [full.clone(), format!("term {}", t.term), t.term.to_string()];
        let placed = texts.iter().find_map(|text| placer.place(&spots, 10.0, text).map(|spot| (spot, text)));
        let text = placed.map_or_else(String::new, |(spot, text)| text_at(Some(spot), 10.0, "", text));
        let _ = writeln!(
            s,
            r##"<g class="term" data-at="{at}"><title>{title}</title><rect x="{xa:.1}" y="{ya:.1}" width="{w:.1}" height="18" fill="{fill}"/>{text}</g>"##,
            at = l.on_axis(t.from),
            title = escape(&full),
            ya = top - ROW / 2.0 - TERM_STRIP,
            w = (xb - xa).max(1.0),
        );
    }
}

/// A line per node, named at its left (its position on hover); the leader's bold.
fn node_lines(s: &mut String, l: &Layout<'_, '_>, placer: &mut Placer) {
    let (d, left, plot) = (l.d, l.left, l.plot);
    let y = |p: u32| l.y(p);
    for (p, name) in d.nodes.iter().enumerate() {
        let p = p as u32;
        let lead = d.leader == Some(p);
        let (stroke, weight) = if lead { ("#000", 3) } else { ("#999", 1) };
        let _ = writeln!(
            s,
            r#"<line class="node" data-position="{p}"{lead_attr} x1="{left}" y1="{yy}" x2="{x2}" y2="{yy}" stroke="{stroke}" stroke-width="{weight}"/>"#,
            lead_attr = if lead { r#" data-lead="true""# } else { "" },
            yy = y(p),
            x2 = left + plot
        );
        let label = if lead { format!("{name} (leader)") } else { name.clone() };
        placer.fixed((left - 8.0, y(p) + 4.0, "end"), 12.0, lead, &label);
        // The leader's mark apart, for the page's step-through to hide before there is a leader.
        let label =
            if lead { format!(r#"{}<tspan class="lead"> (leader)</tspan>"#, escape(name)) } else { escape(&label) };
        // The position on hover: rows are named by id, the API and faults by position too.
        let _ = writeln!(
            s,
            r#"<g class="row" data-position="{p}"{lead_attr}><title>position {p}: {name}</title><text x="{lx}" y="{ly}" text-anchor="end"{bold}>{label}</text></g>"#,
            lead_attr = if lead { r#" data-lead="true""# } else { "" },
            name = escape(name),
            lx = left - 8.0,
            ly = y(p) + 4.0,
            bold = if lead { r#" font-weight="bold""# } else { "" }
        );
    }
    if d.initiators.len() < l.n {
        for &p in d.initiators.iter().filter(|&&p| (p as usize) < l.n) {
            let _ = writeln!(
                s,
                r##"<g class="initiator" data-position="{p}"><title>initiator: it starts on its own</title><path d="{path}" fill="{INITIATOR}"/></g>"##,
                path = initiator_path(left, y(p)),
            );
        }
    }
}

/// The colour of an initiator's mark (Okabe-Ito bluish green).
const INITIATOR: &str = "#009E73";

/// A small triangle pointing into the line at `(x, y)`: an initiator's mark.
fn initiator_path(x: f64, y: f64) -> String {
    format!("M {:.1} {:.1} L {:.1} {y:.1} L {:.1} {:.1} z", x - 7.0, y - 5.0, x, x - 7.0, y + 5.0)
}

/// Crashes (a red cross, the line dashed while down) and recoveries, each labelled above its
/// line, below it, or beside.
fn outages(s: &mut String, l: &Layout<'_, '_>, placer: &mut Placer) {
    let (d, n, left, plot) = (l.d, l.n, l.left, l.plot);
    for o in d.outages.iter().filter(|o| (o.position as usize) < n) {
        let (xa, yy) = (l.x(l.on_axis(o.crashed)), l.y(o.position));
        let xb = o.recovered.map_or(left + plot, |r| l.x(l.on_axis(r)));
        let label = text_at(placer.place(&around(xa, yy), 10.0, "crash"), 10.0, r##" fill="#c00""##, "crash");
        let _ = writeln!(
            s,
            r##"<g class="down" data-at="{at}" data-position="{p}" data-until="{until}"><title>crash</title><line x1="{xa:.1}" y1="{yy:.1}" x2="{xb:.1}" y2="{yy:.1}" stroke="white" stroke-width="4"/><line x1="{xa:.1}" y1="{yy:.1}" x2="{xb:.1}" y2="{yy:.1}" stroke="#c00" stroke-width="2" stroke-dasharray="2 3"/><path d="M {a1:.1} {b1:.1} L {a2:.1} {b2:.1} M {a1:.1} {b2:.1} L {a2:.1} {b1:.1}" stroke="#c00" stroke-width="2.5"/>{label}</g>"##,
            at = l.on_axis(o.crashed),
            p = o.position,
            until = o.recovered.map_or_else(|| "never".to_string(), |r| l.on_axis(r).to_string()),
            a1 = xa - 5.0,
            a2 = xa + 5.0,
            b1 = yy - 5.0,
            b2 = yy + 5.0,
        );
        if let Some(r) = o.recovered {
            let label = text_at(placer.place(&around(xb, yy), 10.0, "recover"), 10.0, r##" fill="#080""##, "recover");
            let _ = writeln!(
                s,
                r##"<g class="recover" data-at="{at}" data-position="{p}"><title>recover</title><line x1="{xb:.1}" y1="{a:.1}" x2="{xb:.1}" y2="{b:.1}" stroke="#080" stroke-width="2.5"/>{label}</g>"##,
                at = l.on_axis(r),
                p = o.position,
                a = yy - 6.0,
                b = yy + 6.0,
            );
        }
    }
}

/// Where a label of an event at (x, y) on a node's line may go: above it, below it, then beside
/// each of those.
fn around(x: f64, y: f64) -> [Spot; 6] {
    let (above, below) = (y - 9.0, y + 18.0);
    [
        (x, above, "middle"),
        (x, below, "middle"),
        (x + 6.0, above, "start"),
        (x - 6.0, above, "end"),
        (x + 6.0, below, "start"),
        (x - 6.0, below, "end"),
    ]
}

/// Every message drawn, in sending order on the axis drawn, numbered (the page steps through them):
/// an arrow, one round the ring drawn out and in again, or a lost one's stub ending in a cross; its
/// stroke and head tell its role, and an arrival where a candidate's id stops is marked.
fn messages(s: &mut String, l: &Layout<'_, '_>) {
    for (step, &i) in l.order.iter().enumerate() {
        let a = &l.drawn[i];
        let pen = Pen::new(l, step, i);
        let (x1, y1) = (l.x(l.ends[i].0), l.y(a.from));
        match (l.ends[i].1, l.fate(a)) {
            (received, Fate::Dropped) => dropped_arrow(s, l, a, &pen, (x1, y1), received),
            (None, Fate::InFlight) => {
                // Still on its way at the end: halfway towards its receiver, at the chart's edge.
                let (x2, y2) = (l.left + l.plot, y1 + (l.y(a.to) - y1) / 2.0);
                let Pen { data, c, w, .. } = &pen;
                let _ = writeln!(
                    s,
                    r#"<g class="msg flying" {data}><title>{title}, sent {ts}, still in flight at the end</title><line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{c}" stroke-width="{w}" stroke-dasharray="8 3 1 3"/></g>"#,
                    title = pen.title,
                    ts = a.sent,
                );
            }
            (Some(r), _) if l.wraps(a) => wrapped_arrow(s, l, a, &pen, (x1, y1), l.x(r), &l.swallowed_mark(i)),
            (Some(r), _) => plain_arrow(s, l, a, &pen, (x1, y1), l.x(r), &l.swallowed_mark(i)),
            (None, _) => {
                // Lost: a short dashed stub towards the receiver, ending in a cross.
                let (x2, y2) = (x1 + 12.0, y1 + (l.y(a.to) - y1) * 0.3);
                let Pen { data, c, w, .. } = &pen;
                let _ = writeln!(
                    s,
                    r#"<g class="msg lost" {data}><title>{title}, sent {ts}, lost</title><line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{c}" stroke-width="{w}" stroke-dasharray="3 2"/><path d="M {a1:.1} {b1:.1} L {a2:.1} {b2:.1} M {a1:.1} {b2:.1} L {a2:.1} {b1:.1}" stroke="{c}"/></g>"#,
                    title = pen.title,
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

/// What every drawing of one message shares: its `data-` attributes, the start of its hover title,
/// its colour, its role's stroke width, its dash (delayed by a fault) and its head.
struct Pen {
    data: String,
    /// "kind (what it carries) from -> to".
    title: String,
    c: &'static str,
    w: f64,
    dash: &'static str,
    /// ", delayed by a fault" or nothing.
    slow: &'static str,
    /// The marker of its head.
    head: String,
}

impl Pen {
    /// The pen of the drawn arrow `i`, the `step`th in sending order.
    fn new(l: &Layout<'_, '_>, step: usize, i: usize) -> Pen {
        let (d, a) = (l.d, &l.drawn[i]);
        let ((sent, received), (cs, cr)) = (l.ends[i], l.causal[i]);
        let name = a.kind.name();
        let carries = a.msg.map(|m| m.describe()).unwrap_or_default();
        let data = format!(
            r#"data-step="{step}" data-at="{sent}" data-arrive="{arrive}" data-kind="{name}" data-from="{from}" data-to="{to}" data-sent="{ts}" data-received="{tr}" data-causal="{cs}{crt}" data-carries="{car}" data-role="{role}""#,
            arrive = received.map_or_else(|| "lost".to_string(), |r| r.to_string()),
            from = d.nodes.get(a.from as usize).map_or_else(|| a.from.to_string(), |l| escape(l)),
            to = d.nodes.get(a.to as usize).map_or_else(|| a.to.to_string(), |l| escape(l)),
            ts = a.sent,
            tr = a.received.map_or_else(|| "lost".to_string(), |r| r.to_string()),
            crt = cr.map_or_else(String::new, |r| format!(" → {r}")),
            car = escape(&carries),
            role = a.kind.role().name(),
        );
        let what = if carries.is_empty() { String::new() } else { format!(" ({})", escape(&carries)) };
        let refused = a.msg.is_some_and(|m| m.refuses());
        Pen {
            data,
            title: format!("{name}{what} {} -> {}", a.from, a.to),
            c: l.colour(a.kind),
            w: RoleStyle::of(a.kind.role()).width,
            dash: if a.slow { r#" stroke-dasharray="6 3""# } else { "" },
            slow: if a.slow { ", delayed by a fault" } else { "" },
            head: if refused { format!("{name}-no") } else { name.to_string() },
        }
    }
}

/// A message that reached a node that was down: to its line, ending in a ring.
fn dropped_arrow(s: &mut String, l: &Layout<'_, '_>, a: &Arrow, pen: &Pen, (x1, y1): (f64, f64), r: Option<u64>) {
    let (x2, y2) = (r.map_or(x1 + 14.0, |r| l.x(r)), l.y(a.to));
    let Pen { data, c, w, .. } = pen;
    let _ = writeln!(
        s,
        r#"<g class="msg dropped" {data}><title>{title}, sent {ts}, dropped: its receiver was down</title><line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{c}" stroke-width="{w}" stroke-dasharray="2 2"/><circle cx="{x2:.1}" cy="{y2:.1}" r="3.5" fill="white" stroke="{c}"/></g>"#,
        title = pen.title,
        ts = a.sent,
    );
}

/// A delivered message: one arrow; with the receiver's mark inside it (a group) where the id it
/// carries stops.
fn plain_arrow(s: &mut String, l: &Layout<'_, '_>, a: &Arrow, pen: &Pen, (x1, y1): (f64, f64), x2: f64, mark: &str) {
    let y2 = l.y(a.to);
    let Pen { data, c, w, dash, head, slow, .. } = pen;
    let title = format!("{}, {} -> {}{slow}", pen.title, a.sent, a.received.unwrap_or(0));
    let line = format!(
        r#"x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{c}" stroke-width="{w}"{dash} marker-end="url(#head-{head})""#
    );
    if mark.is_empty() {
        let _ = writeln!(s, r#"<line class="msg" {data} {line}><title>{title}</title></line>"#);
    } else {
        let _ = writeln!(s, r#"<g class="msg" {data}><title>{title}</title><line {line}/>{mark}</g>"#);
    }
}

/// A message round the ring: down past the last row and in again above the first (or up and in
/// from below), each cut end marked with a dot.
fn wrapped_arrow(s: &mut String, l: &Layout<'_, '_>, a: &Arrow, pen: &Pen, (x1, y1): (f64, f64), x2: f64, mark: &str) {
    let (last, y2, xm) = (l.last, l.y(a.to), (x1 + x2) / 2.0);
    let (out_y, in_y) = if a.from == last {
        (l.y(last) + ROW / 2.0, l.y(0) - ROW / 2.0)
    } else {
        (l.y(0) - ROW / 2.0, l.y(last) + ROW / 2.0)
    };
    let Pen { data, c, w, dash, head, slow, .. } = pen;
    let _ = writeln!(
        s,
        r#"<g class="msg wrap" {data}><title>{title}, {ts} -> {tr} (round the ring{slow})</title><line x1="{x1:.1}" y1="{y1:.1}" x2="{xm:.1}" y2="{out_y:.1}" stroke="{c}" stroke-width="{w}"{dash}/><line x1="{xm:.1}" y1="{in_y:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{c}" stroke-width="{w}"{dash} marker-end="url(#head-{head})"/><circle class="ring-edge" cx="{xm:.1}" cy="{out_y:.1}" r="{dot}" fill="{c}"/><circle class="ring-edge" cx="{xm:.1}" cy="{in_y:.1}" r="{dot}" fill="{c}"/>{mark}</g>"#,
        title = pen.title,
        ts = a.sent,
        tr = a.received.unwrap_or(0),
        dot = RING_EDGE_DOT,
    );
}

/// The radius of the dots where an arrow round the ring leaves the chart and re-enters it.
const RING_EDGE_DOT: f64 = 2.2;

/// An id that stops where its arrow arrives: the node there (`by`, its id) sends nothing about it
/// after.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Swallowed {
    /// The id carried.
    id: u64,
    /// The receiver's id.
    by: u64,
    /// How many ids the same node swallowed at the same moment before this one (Stages takes
    /// both neighbours' at once): the marks stand side by side.
    nth: u32,
}

/// The radius of a swallowed id's mark, and the room each takes along the line.
const SWALLOWED_R: f64 = 4.0;
const SWALLOWED_STEP: f64 = 9.0;

impl Layout<'_, '_> {
    /// The centre of drawn arrow `i`'s swallowed-id mark, if its id stops: on the receiver's line
    /// just after the arrival (after the marks before it at that moment).
    fn swallowed_at(&self, i: usize) -> Option<(f64, f64, Swallowed)> {
        let (sw, r) = (self.swallowed[i]?, self.ends[i].1?);
        let cx = self.x(r) + SWALLOWED_R + 1.5 + SWALLOWED_STEP * f64::from(sw.nth);
        Some((cx, self.y(self.drawn[i].to), sw))
    }

    /// Drawn arrow `i`'s swallowed-id mark (a slashed circle titled with both ids), or nothing.
    fn swallowed_mark(&self, i: usize) -> String {
        self.swallowed_at(i).map_or_else(String::new, |(cx, y, sw)| {
            format!(
                r#"<g class="swallowed"><title>id {} swallowed by id {}</title>{}</g>"#,
                sw.id,
                sw.by,
                slashed_circle(cx, y)
            )
        })
    }
}

/// Keep the swallowed ids' marks clear of every label placed after (labels have a white halo that
/// would hide them).
fn reserve_swallowed(_: &mut String, l: &Layout<'_, '_>, placer: &mut Placer) {
    for i in 0..l.drawn.len() {
        if let Some((cx, y, _)) = l.swallowed_at(i) {
            let r = SWALLOWED_R + 1.0;
            placer.boxes.push([cx - r, y - r, cx + r, y + r]);
        }
    }
}

/// A black slashed circle at `(cx, y)`, white inside: the mark of an id swallowed.
fn slashed_circle(cx: f64, y: f64) -> String {
    format!(
        r##"<circle cx="{cx:.1}" cy="{y:.1}" r="{SWALLOWED_R}" fill="white" stroke="#000" stroke-width="1.3"/><path d="M {a:.1} {b:.1} L {c:.1} {e:.1}" stroke="#000" stroke-width="1.3"/>"##,
        a = cx - 2.8,
        b = y + 2.8,
        c = cx + 2.8,
        e = y - 2.8,
    )
}

/// The arrows whose candidate id stops where they arrive, each as (the id, the receiver's id): a
/// message of the candidate role carrying id x delivered to a node whose own id beats x, after
/// which that node sends no message about x (see [`Msg::candidate`](crate::protocol::Msg::candidate)).
/// Which ids beat which is told by the leader's id (the largest or the smallest); without a
/// leader, or without ids, nothing is marked. Every arrow counts for what a node sends later,
/// those not drawn too; one pass over them and a map.
fn swallowed(l: &Layout<'_, '_>) -> Vec<Option<Swallowed>> {
    let (d, none) = (l.d, vec![None; l.drawn.len()]);
    let Some(beats) = beats(d) else { return none };
    let mut last_sent: HashMap<(u32, u64), u64> = HashMap::new();
    for a in d.arrows {
        if let Some(x) = a.msg.and_then(|m| m.candidate()) {
            let t = last_sent.entry((a.from, x)).or_insert(a.sent);
            *t = (*t).max(a.sent);
        }
    }
    // Marks so far at each (node, moment).
    let mut at: HashMap<(u32, u64), u32> = HashMap::new();
    l.drawn
        .iter()
        .map(|a| {
            let (Some(m), Some(r)) = (a.msg, a.received) else { return None };
            let (Some(x), Some(&own)) = (m.candidate(), d.ids.get(a.to as usize)) else { return None };
            let stops = a.kind.role() == MsgRole::Candidate
                && beats(own, x)
                && l.fate(a) == Fate::Arrived
                && last_sent.get(&(a.to, x)).is_none_or(|&t| t < r);
            stops.then(|| {
                let nth = at.entry((a.to, r)).or_insert(0);
                *nth += 1;
                Swallowed { id: x, by: own, nth: *nth - 1 }
            })
        })
        .collect()
}

/// Which id beats which, told by the leader's id: `Some(larger)` if it is the largest id, the
/// smaller if the smallest; `None` without a leader, ids, or a choice (one id).
fn beats(d: &Diagram<'_>) -> Option<fn(u64, u64) -> bool> {
    let best = *d.ids.get(d.leader? as usize)?;
    let (max, min) = (d.ids.iter().max()?, d.ids.iter().min()?);
    match (best == *max, best == *min) {
        (true, false) => Some(|a, b| a > b),
        (false, true) => Some(|a, b| a < b),
        _ => None,
    }
}

/// How a role's arrows are drawn: the stroke width and the head (its length in px, open or
/// filled), so a picture printed grey tells the roles apart. Dashes are left to the faults (a
/// delayed message 6 3, a lost one's stub 3 2, a dropped one 2 2, one in flight 8 3 1 3).
struct RoleStyle {
    width: f64,
    head: f64,
    open: bool,
    /// Said in the legend.
    legend: &'static str,
}

impl RoleStyle {
    fn of(role: MsgRole) -> RoleStyle {
        let (width, head, open, legend) = match role {
            MsgRole::Candidate => (1.2, 8.4, false, "candidate: filled head"),
            MsgRole::Reply => (1.2, 9.0, true, "reply: open head"),
            MsgRole::Announcement => (2.6, 10.4, false, "announcement: thick"),
            MsgRole::Upkeep => (0.7, 6.3, false, "upkeep: thin"),
        };
        RoleStyle { width, head, open, legend }
    }
}

/// An arrowhead marker `id` in `colour` for lines of `role`: its role's head, or hollow (a
/// refusal). Marker sizes are in stroke widths, so each is scaled to its role's head length.
fn marker(id: &str, colour: &str, role: MsgRole, hollow: bool) -> String {
    let st = RoleStyle::of(role);
    let (size, scale) = if hollow { (9.6 / st.width, 9.6) } else { (st.head / st.width, st.head) };
    // A stroke 1.5 px wide, in the marker's units (10 across the head).
    let stroke = 15.0 / scale;
    let (ref_x, path) = if hollow {
        ("10", format!(r#"<path d="M 1 1 L 9 5 L 1 9 z" fill="white" stroke="{colour}" stroke-width="{stroke:.2}"/>"#))
    } else if st.open {
        (
            "9",
            format!(
                r#"<path d="M 1 1 L 9 5 L 1 9" fill="none" stroke="{colour}" stroke-width="{stroke:.2}" stroke-linejoin="round"/>"#
            ),
        )
    } else {
        ("10", format!(r#"<path d="M 0 0 L 10 5 L 0 10 z" fill="{colour}"/>"#))
    };
    format!(
        r#"<marker id="{id}" viewBox="0 0 10 10" refX="{ref_x}" refY="5" markerWidth="{size:.2}" markerHeight="{size:.2}" orient="auto-start-reverse">{path}</marker>"#
    )
}

/// What became of a message, as drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    /// It arrived.
    Arrived,
    /// The network lost it (a fault, a partition).
    Lost,
    /// It reached a node that was down, which dropped it.
    Dropped,
    /// The run ended with it on its way.
    InFlight,
}

/// Legend samples of the fates of messages not received.
const LOST_SAMPLE: &str = r##"<path d="M 9 -3 L 15 3 M 9 3 L 15 -3" stroke="#333"/>"##;
const DROPPED_SAMPLE: &str = r##"<line x1="0" y1="0" x2="20" y2="0" stroke="#333" stroke-dasharray="2 2"/><circle cx="20" cy="0" r="3.5" fill="white" stroke="#333"/>"##;
const FLYING_SAMPLE: &str = r##"<line x1="0" y1="0" x2="24" y2="0" stroke="#333" stroke-dasharray="8 3 1 3"/>"##;
const REFUSED_SAMPLE: &str = r##"<line x1="0" y1="0" x2="18" y2="0" stroke="#333" stroke-width="1.2"/><path d="M 14 -4 L 22 0 L 14 4 z" fill="white" stroke="#333"/>"##;

impl Layout<'_, '_> {
    /// What became of `a`: a message that arrives while its receiver is down (or is never received
    /// by a node down when it was sent) was dropped there, not lost.
    fn fate(&self, a: &Arrow) -> Fate {
        let down_at = |t: u64| {
            self.d.outages.iter().any(|o| o.position == a.to && o.crashed <= t && o.recovered.is_none_or(|r| t < r))
        };
        match a.received {
            Some(r) if down_at(r) => Fate::Dropped,
            Some(_) => Fate::Arrived,
            None if a.in_flight => Fate::InFlight,
            None if down_at(a.sent) => Fate::Dropped,
            None => Fate::Lost,
        }
    }
}

/// What each delivered message carries, at the middle of its arrow (or a third or two thirds of
/// the way along, where the middle is taken), over the arrows.
fn message_labels(s: &mut String, l: &Layout<'_, '_>, placer: &mut Placer) {
    let (drawn, ends) = (l.drawn, &l.ends);
    let (x, y) = (|t: u64| l.x(t), |p: u32| l.y(p));
    for (step, &i) in l.order.iter().enumerate() {
        let a = &drawn[i];
        let ((sent, Some(r)), Some(m)) = (ends[i], a.msg) else { continue };
        if l.fate(a) != Fate::Arrived {
            continue;
        }
        let text = m.describe();
        if text.is_empty() {
            continue;
        }
        let (x1, y1, x2, y2) = (x(sent), y(a.from), x(r), y(a.to));
        // A wrapped arrow is labelled where it re-enters.
        let (x1, y1) = if l.wraps(a) {
            ((x1 + x2) / 2.0, if a.to == 0 { y2 - ROW / 2.0 } else { y2 + ROW / 2.0 })
        } else {
            (x1, y1)
        };
        let at = |f: f64| (x1 + (x2 - x1) * f, y1 + (y2 - y1) * f - 2.0, "middle");
        let Some((lx, ly, _)) = placer.place(&[at(0.5), at(1.0 / 3.0), at(2.0 / 3.0)], 9.0, &text) else { continue };
        let _ = writeln!(
            s,
            r#"<text class="label" data-step="{step}" x="{lx:.1}" y="{ly:.1}" font-size="9" text-anchor="middle" fill="{c}" stroke="white" stroke-width="2.5" paint-order="stroke">{}</text>"#,
            escape(&text),
            c = l.colour(a.kind)
        );
    }
}

/// Marks on the nodes' lines (a suspicion, a step down), each labelled above its line, below it,
/// or beside.
fn marks(s: &mut String, l: &Layout<'_, '_>, placer: &mut Placer) {
    let mut marks: Vec<&Mark> = l.d.marks.iter().collect();
    marks.sort_by_key(|m| (m.node, m.at));
    for m in marks {
        let at = l.on_axis(m.at);
        let (mx, my) = (l.x(at), l.y(m.node));
        let _ = writeln!(
            s,
            r#"<g class="mark" data-at="{at}"><title>{title}</title><line x1="{mx:.1}" y1="{a:.1}" x2="{mx:.1}" y2="{b:.1}" stroke="black" stroke-width="2"/>{text}</g>"#,
            a = my - 6.0,
            b = my + 6.0,
            title = escape(&m.label),
            text = text_at(placer.place(&around(mx, my), 10.0, &m.label), 10.0, "", &m.label)
        );
    }
}

/// The width of a column of the legend.
const LEGEND_COLUMN: f64 = 220.0;

/// How many columns of the legend fit under the plot (one to four).
fn legend_columns(l: &Layout<'_, '_>) -> usize {
    (((l.plot + RIGHT_MARGIN) / LEGEND_COLUMN) as usize).clamp(1, 4)
}

/// The axis's two ends (0, and the run's length with its unit), then the legend, four entries a row.
fn axis_and_legend(s: &mut String, l: &Layout<'_, '_>, legend: &[(String, String)], placer: &mut Placer) {
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
    let (ty, tx) = (bottom + 14.0, left + plot);
    placer.fixed((left, ty, "start"), 12.0, false, "0");
    placer.fixed((tx, ty, "end"), 12.0, false, &length);
    let _ = writeln!(
        s,
        r##"<text x="{left}" y="{ty}" fill="#555">0</text><text class="axis" x="{tx}" y="{ty}" fill="#555" text-anchor="end">{length}</text>"##,
        length = escape(&length)
    );
    let columns = legend_columns(l);
    for (i, (sample, text)) in legend.iter().enumerate() {
        let lx = left + LEGEND_COLUMN * (i % columns) as f64;
        let ly = legend_top + 24.0 * (i / columns) as f64;
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
    use crate::algo::Rule;
    use crate::protocol::Msg;

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
        assert!(
            wrap.contains(&format!(r#"y1="{last:.1}""#)) && wrap.contains(&format!(r#"y2="{:.1}""#, last + ROW / 2.0))
        );
        assert!(
            wrap.contains(&format!(r#"y1="{:.1}""#, first - ROW / 2.0))
                && wrap.contains(&format!(r#"y2="{first:.1}""#))
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

    /// With the quiet seconds compressed, the failover's 300 ms wait for suspicion is long beside its
    /// bursts and is compressed too: the failover's messages (from the crash to the recovery) get at
    /// least a third of the width, where choosing the idle stretches against the axis to scale gave
    /// them a few pixels.
    #[test]
    fn a_failover_gets_a_third_of_the_width() {
        let mut arrows = Vec::new();
        let (marks, outages, terms) = failover(&mut arrows);
        let ids: Vec<u64> = vec![3, 7, 1, 8, 2, 6, 4, 5];
        let d = Diagram {
            marks: &marks,
            outages: &outages,
            terms: &terms,
            time_unit: "µs",
            ids: &ids,
            ..plain(&arrows, 8)
        };
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
            let span: Vec<(f64, f64)> = msgs
                .iter()
                .filter(|m| (f64::from(from)..f64::from(until)).contains(&m.0))
                .map(|m| (m.1, m.2))
                .collect();
            let a = span.iter().map(|x| x.0).fold(f64::INFINITY, f64::min);
            let b = span.iter().map(|x| x.1).fold(0.0, f64::max);
            let share = (b - a) / (right - left);
            eprintln!("failover from {from}: {} messages, {share:.2} of the width", span.len());
            assert!(!span.is_empty() && share >= 0.2, "from {from}: {a}..{b} of {left}..{right}");
        }
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
                let cfg =
                    crate::sim::SimConfig { log_arrows: true, horizon: Some(2_000), faults, ..Default::default() };
                let r = crate::sim::run_kept(spec, &topo, &ids, &all, spec.rule, &cfg).unwrap();
                let drawn = r.arrows.iter().filter(|a| !a.kind.is_upkeep()).copied().collect();
                (ids, r, drawn)
            })
            .collect();
        let terms: Vec<Vec<Term>> =
            kept_runs.iter().map(|(ids, r, _)| Term::from_leaderships(&r.leaderships, ids)).collect();
        let beliefs: Vec<Vec<Mark>> = kept_runs.iter().map(|(ids, r, _)| belief_marks(&r.leaderships, ids)).collect();
        let kept_sims =
            kept_runs.iter().zip(terms.iter().zip(&beliefs)).map(|((ids, r, drawn), (terms, marks))| Diagram {
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
        for (a, b) in
            [("electing", "waiting"), ("candidate", "waiting"), ("announcing", "relay"), ("follower", "promised")]
        {
            assert_ne!(state_colour(a), state_colour(b), "{a} and {b}");
        }
        assert_ne!(state_colour("looking"), state_colour("proposing"));
        assert_ne!(state_colour("pre-candidate"), state_colour("candidate"), "raft with PreVote");
        assert_ne!(state_colour("leader-unleased"), state_colour("leader"), "raft with its lease");
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
        for entry in ["lost on the network", "dropped: receiver down", "in flight at the end", "refused (hollow head)"]
        {
            assert!(out.contains(&format!(">{entry}</text>")), "legend: {entry}: {out}");
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

    /// A one-shot run of the catalogue's `name` on `n` nodes in its worst arrangement, every node
    /// initiating, unit delays, arrows logged: the ids and the report.
    fn simulated(name: &str, n: u32, rule: Rule) -> (Vec<u64>, crate::report::SimReport) {
        let spec = crate::algo::catalogue::find(name).unwrap();
        let ids = (spec.worst_case.unwrap().ids)(n, rule);
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
        let labels: Vec<(String, [f64; 4])> =
            text_boxes(&out).into_iter().filter(|(t, _)| t.contains("stage")).collect();
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
}
