//! Space-time diagrams of an election as SVG: one horizontal line per node
//! (time runs left to right), one arrow per message from its sending to its
//! receiving moment, coloured by message kind, with a legend. Pure: the
//! drivers collect the [`Arrow`]s (the simulator with
//! [`crate::sim::SimConfig::log_arrows`]) and what else happened.
//!
//! A picture printed grey still reads: each message's role
//! ([`MsgKind::role`](crate::protocol::MsgKind::role)) has its own stroke, left free of the faults' dashes.
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
//!
//! The files, by concern: this one holds what callers name (the [`Diagram`] to draw and [`svg`],
//! which draws it layer by layer); `scale` maps time onto the axis (idle stretches compressed,
//! Lamport's clock); `fates` tells what became of each message and which ids it swallowed;
//! `layout` places rows and arrows; `labels` keeps texts from overprinting one another; `arrows`
//! draws the messages, `terms` the leaders and states, `faults` the crashes and partitions,
//! `frame` the document's head, rows, axis and legend, `legend` the legend's entries; every
//! element is written with the [`Pen`].

mod arrows;
mod fates;
mod faults;
mod frame;
mod labels;
mod layout;
mod legend;
mod pen;
mod scale;
mod terms;
#[cfg(test)]
mod tests;

use crate::faults::{Outage, Split};
use crate::report::LeadershipEvent;
pub use crate::report::StateChange;
pub use pen::{Element, Pen};
pub use scale::causal_times;
pub use terms::state_colour;

use labels::Placer;
use layout::Layout;

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
    let legend = legend::entries(&l);
    let mut placer = Placer::new(l.left + l.plot + layout::RIGHT_MARGIN);
    let mut pen = Pen::new();
    frame::head(&mut pen, &l, &legend, &mut placer);
    let rows = layer(&l, &mut placer, frame::node_lines);
    layer(&l, &mut placer, arrows::reserve_swallowed);
    let axis = layer(&l, &mut placer, |pen, l, p| frame::axis_and_legend(pen, l, &legend, p));
    let terms = layer(&l, &mut placer, terms::term_bands);
    let downs = layer(&l, &mut placer, faults::outages);
    let marks = layer(&l, &mut placer, labels::marks);
    let parts = layer(&l, &mut placer, faults::partition_bands);
    let twos = layer(&l, &mut placer, terms::two_leaders);
    let idle = layer(&l, &mut placer, frame::idle_bands);
    let labels = if d.labels { layer(&l, &mut placer, labels::message_labels) } else { String::new() };
    for part in [idle, parts, terms] {
        pen.fragment(&part);
    }
    terms::state_bands(&mut pen, &l);
    pen.fragment(&rows);
    pen.fragment(&downs);
    arrows::messages(&mut pen, &l);
    for part in [twos, labels, marks, axis] {
        pen.fragment(&part);
    }
    pen.end("svg");
    pen.newline();
    pen.finish()
}

/// One layer drawn with its own pen, its labels placed now.
fn layer(l: &Layout<'_, '_>, placer: &mut Placer, draw: impl FnOnce(&mut Pen, &Layout<'_, '_>, &mut Placer)) -> String {
    let mut pen = Pen::new();
    draw(&mut pen, l, placer);
    pen.finish()
}
