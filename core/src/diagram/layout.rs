//! Where everything goes: the rows, the plot's edges, the arrows drawn and their ends on the axis,
//! and each message kind's colour.

use super::fates::{self, Fate, Swallowed};
use super::scale::{self, Scale, Turn, causal_times};
use super::{Arrow, Axis, Diagram, MAX_ARROWS};
use crate::protocol::{MsgKind, MsgRole};

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
pub(super) const RIGHT_MARGIN: f64 = 30.0;
/// The narrowest plot, for very long node names.
const MIN_PLOT_WIDTH: f64 = 600.0;
pub(super) const TOP: f64 = 50.0;
pub(super) const ROW: f64 = 36.0;
/// Height added above the nodes for the strip of terms.
pub(super) const TERM_STRIP: f64 = 26.0;

/// The colour of `kind` among the kinds `drawn` (see [`PALETTE`]).
fn colour_among(drawn: &[MsgKind], kind: MsgKind) -> &'static str {
    PALETTE[drawn.iter().position(|&k| k == kind).unwrap_or(0) % PALETTE.len()]
}

/// The kinds of the messages drawn, in kind order.
pub(super) fn kinds(drawn: &[Arrow]) -> Vec<MsgKind> {
    let mut kinds: Vec<MsgKind> = drawn.iter().map(|a| a.kind).collect();
    kinds.sort_by_key(|k| *k as usize);
    kinds.dedup();
    kinds
}

/// Where everything goes: the arrows drawn and their ends on the axis, the scale, and the rows.
pub(super) struct Layout<'d, 'a> {
    pub(super) d: &'d Diagram<'a>,
    /// Rows (at least one).
    pub(super) n: usize,
    /// The last row.
    pub(super) last: u32,
    /// The arrows drawn (at most [`MAX_ARROWS`]).
    pub(super) drawn: &'d [Arrow],
    /// Each drawn arrow's causal times.
    pub(super) causal: Vec<(u64, Option<u64>)>,
    /// Each drawn arrow's ends on the axis.
    pub(super) ends: Vec<(u64, Option<u64>)>,
    /// On the causal axis, the largest clock of any event at or before a time.
    pub(super) moments: Vec<(u64, u64)>,
    pub(super) scale: Scale,
    /// The plot's left edge (room for the node names) and width.
    pub(super) left: f64,
    pub(super) plot: f64,
    /// The first row's and the last row's bottom edge.
    pub(super) top: f64,
    pub(super) bottom: f64,
    /// The arrows' indices in sending order on the axis drawn: the page steps through them.
    pub(super) order: Vec<usize>,
    /// The kinds drawn, in kind order: their colours.
    pub(super) kinds: Vec<MsgKind>,
    /// Each drawn arrow's swallowed id, if the id it carries stops where it arrives.
    pub(super) swallowed: Vec<Option<Swallowed>>,
}

impl<'d, 'a> Layout<'d, 'a> {
    pub(super) fn new(d: &'d Diagram<'a>) -> Self {
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
        let on_axis = |t: u64| scale::on_axis(d.axis, &moments, t);
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
        let swallowed = fates::swallowed(d, drawn);
        Layout { d, n, last, drawn, causal, ends, moments, scale, left, plot, top, bottom, order, kinds, swallowed }
    }

    /// The roles of the kinds drawn, in role order.
    pub(super) fn roles(&self) -> Vec<MsgRole> {
        let mut roles: Vec<MsgRole> = self.kinds.iter().map(|k| k.role()).collect();
        roles.sort_unstable();
        roles.dedup();
        roles
    }

    /// The colour of a message kind in this diagram.
    pub(super) fn colour(&self, kind: MsgKind) -> &'static str {
        colour_among(&self.kinds, kind)
    }

    /// A moment on the axis drawn.
    pub(super) fn on_axis(&self, t: u64) -> u64 {
        scale::on_axis(self.d.axis, &self.moments, t)
    }

    pub(super) fn x(&self, t: u64) -> f64 {
        self.scale.x(t)
    }

    pub(super) fn y(&self, p: u32) -> f64 {
        self.top + ROW * p as f64
    }

    /// Does the arrow go round the ring, from the last row to the first or back?
    pub(super) fn wraps(&self, a: &Arrow) -> bool {
        let last = self.last;
        self.d.ring && self.n >= 3 && ((a.from == last && a.to == 0) || (a.from == 0 && a.to == last))
    }

    /// What became of `a`, as drawn.
    pub(super) fn fate(&self, a: &Arrow) -> Fate {
        fates::fate(self.d, a)
    }
}
