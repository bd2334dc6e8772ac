//! The messages: an arrow each, its stroke and head telling its role, its dash and end what
//! became of it (lost, dropped, in flight, delayed), round the ring out at one edge and in at the
//! other; the marks where a candidate's id stops; the arrowheads.

use super::fates::Fate;
use super::labels::Placer;
use super::layout::{Layout, ROW};
use super::pen::{Element, Pen};
use crate::protocol::MsgRole;

/// Every message drawn, in sending order on the axis drawn, numbered (the page steps through them):
/// an arrow, one round the ring drawn out and in again, or a lost one's stub ending in a cross; its
/// stroke and head tell its role, and an arrival where a candidate's id stops is marked.
pub(super) fn messages(pen: &mut Pen, l: &Layout<'_, '_>) {
    for (step, &i) in l.order.iter().enumerate() {
        let a = &l.drawn[i];
        let st = MessageStyle::new(l, step, i);
        let (x1, y1) = (l.x(l.ends[i].0), l.y(a.from));
        match (l.ends[i].1, l.fate(a)) {
            (received, Fate::Dropped) => dropped_arrow(pen, l, &st, (x1, y1), received),
            (None, Fate::InFlight) => {
                // Still on its way at the end: halfway towards its receiver, at the chart's edge.
                let (x2, y2) = (l.left + l.plot, y1 + (l.y(a.to) - y1) / 2.0);
                st.data(pen.group().attr("class", "msg flying")).open();
                pen.title_markup(&format!("{}, sent {}, still in flight at the end", st.title, a.sent));
                let line = pen.line().px("x1", x1).px("y1", y1).px("x2", x2).px("y2", y2);
                st.stroke(line).attr("stroke-dasharray", "8 3 1 3").close();
                pen.end("g");
            }
            (Some(r), _) if l.wraps(a) => wrapped_arrow(pen, l, &st, (x1, y1), l.x(r)),
            (Some(r), _) => plain_arrow(pen, l, &st, (x1, y1), l.x(r)),
            (None, _) => {
                // Lost: a short dashed stub towards the receiver, ending in a cross.
                let (x2, y2) = (x1 + 12.0, y1 + (l.y(a.to) - y1) * 0.3);
                st.data(pen.group().attr("class", "msg lost")).open();
                pen.title_markup(&format!("{}, sent {}, lost", st.title, a.sent));
                let line = pen.line().px("x1", x1).px("y1", y1).px("x2", x2).px("y2", y2);
                st.stroke(line).attr("stroke-dasharray", "3 2").close();
                pen.path().attr("d", cross(x2, y2, 3.0)).attr("stroke", st.c).close();
                pen.end("g");
            }
        }
        pen.newline();
    }
}

/// A cross centred on `(x, y)`, `r` each way: path data.
pub(super) fn cross(x: f64, y: f64, r: f64) -> String {
    let (a1, a2, b1, b2) = (x - r, x + r, y - r, y + r);
    format!("M {a1:.1} {b1:.1} L {a2:.1} {b2:.1} M {a1:.1} {b2:.1} L {a2:.1} {b1:.1}")
}

/// What every drawing of one message shares: its `data-` attributes, the start of its hover title,
/// its colour, its role's stroke width, its dash (delayed by a fault) and its head.
struct MessageStyle<'l> {
    l: &'l Layout<'l, 'l>,
    /// The drawn arrow's index and its step in sending order.
    i: usize,
    step: usize,
    /// What the message carries, in words.
    carries: String,
    /// "kind (what it carries) from -> to", escaped.
    title: String,
    c: &'static str,
    w: f64,
    /// Delayed by a fault (dashed).
    slow: bool,
    /// The marker of its head.
    head: String,
}

impl<'l> MessageStyle<'l> {
    /// The style of the drawn arrow `i`, the `step`th in sending order.
    fn new(l: &'l Layout<'l, 'l>, step: usize, i: usize) -> Self {
        let a = &l.drawn[i];
        let name = a.kind.name();
        // A program's kinds by its manifest's names ("election", not "program").
        let kind = a.msg.map_or(name, |m| m.kind_name());
        let carries = a.msg.map(|m| m.describe()).unwrap_or_default();
        let what = if carries.is_empty() { String::new() } else { format!(" ({})", Pen::escape(&carries)) };
        let refused = a.msg.is_some_and(|m| m.refuses());
        MessageStyle {
            l,
            i,
            step,
            title: format!("{kind}{what} {} -> {}", a.from, a.to),
            carries,
            c: l.colour(a.kind),
            w: RoleStyle::of(a.kind.role()).width,
            slow: a.slow,
            head: if refused { format!("{name}-no") } else { name.to_string() },
        }
    }

    /// The message's `data-` attributes, for the page's step-through and hover panel.
    fn data<'p>(&self, el: Element<'p>) -> Element<'p> {
        let (d, a) = (self.l.d, &self.l.drawn[self.i]);
        let ((sent, received), (cs, cr)) = (self.l.ends[self.i], self.l.causal[self.i]);
        let node = |p: u32| d.nodes.get(p as usize).map_or_else(|| p.to_string(), Clone::clone);
        let lost = |t: Option<u64>| t.map_or_else(|| "lost".to_string(), |r| r.to_string());
        el.attr("data-step", self.step)
            .attr("data-at", sent)
            .attr("data-arrive", lost(received))
            .attr("data-kind", a.kind.name())
            .attr("data-from", node(a.from))
            .attr("data-to", node(a.to))
            .attr("data-sent", a.sent)
            .attr("data-received", lost(a.received))
            .attr("data-causal", format_args!("{cs}{}", cr.map_or_else(String::new, |r| format!(" → {r}"))))
            .attr("data-carries", &self.carries)
            .attr("data-role", a.kind.role().name())
    }

    /// Its colour and stroke width.
    fn stroke<'p>(&self, el: Element<'p>) -> Element<'p> {
        el.attr("stroke", self.c).attr("stroke-width", self.w)
    }

    /// Its colour, stroke width and dash (if a fault delayed it).
    fn dashed<'p>(&self, el: Element<'p>) -> Element<'p> {
        self.stroke(el).maybe("stroke-dasharray", self.slow.then_some("6 3"))
    }

    /// A line from `(x1, y1)` to `(x2, y2)` in its stroke and dash, ending in its head.
    fn arrow<'p>(&self, el: Element<'p>, (x1, y1): (f64, f64), (x2, y2): (f64, f64)) -> Element<'p> {
        let el = self.dashed(el.px("x1", x1).px("y1", y1).px("x2", x2).px("y2", y2));
        el.attr("marker-end", format_args!("url(#head-{})", self.head))
    }

    /// ", delayed by a fault" or nothing.
    fn slow_words(&self) -> &'static str {
        if self.slow { ", delayed by a fault" } else { "" }
    }
}

/// A message that reached a node that was down: to its line, ending in a ring.
fn dropped_arrow(pen: &mut Pen, l: &Layout<'_, '_>, st: &MessageStyle<'_>, (x1, y1): (f64, f64), r: Option<u64>) {
    let a = &l.drawn[st.i];
    let (x2, y2) = (r.map_or(x1 + 14.0, |r| l.x(r)), l.y(a.to));
    st.data(pen.group().attr("class", "msg dropped")).open();
    pen.title_markup(&format!("{}, sent {}, dropped: its receiver was down", st.title, a.sent));
    let line = pen.line().px("x1", x1).px("y1", y1).px("x2", x2).px("y2", y2);
    st.stroke(line).attr("stroke-dasharray", "2 2").close();
    pen.circle().px("cx", x2).px("cy", y2).attr("r", 3.5).attr("fill", "white").attr("stroke", st.c).close();
    pen.end("g");
}

/// A delivered message: one arrow; with the receiver's mark inside it (a group) where the id it
/// carries stops.
fn plain_arrow(pen: &mut Pen, l: &Layout<'_, '_>, st: &MessageStyle<'_>, (x1, y1): (f64, f64), x2: f64) {
    let a = &l.drawn[st.i];
    let y2 = l.y(a.to);
    let title = format!("{}, {} -> {}{}", st.title, a.sent, a.received.unwrap_or(0), st.slow_words());
    if l.swallowed_at(st.i).is_none() {
        st.arrow(st.data(pen.line().attr("class", "msg")), (x1, y1), (x2, y2)).open();
        pen.title_markup(&title);
        pen.end("line");
    } else {
        st.data(pen.group().attr("class", "msg")).open();
        pen.title_markup(&title);
        st.arrow(pen.line(), (x1, y1), (x2, y2)).close();
        l.swallowed_mark(pen, st.i);
        pen.end("g");
    }
}

/// A message round the ring: down past the last row and in again above the first (or up and in
/// from below), each cut end marked with a dot.
fn wrapped_arrow(pen: &mut Pen, l: &Layout<'_, '_>, st: &MessageStyle<'_>, (x1, y1): (f64, f64), x2: f64) {
    let a = &l.drawn[st.i];
    let (last, y2, xm) = (l.last, l.y(a.to), (x1 + x2) / 2.0);
    let (out_y, in_y) = if a.from == last {
        (l.y(last) + ROW / 2.0, l.y(0) - ROW / 2.0)
    } else {
        (l.y(0) - ROW / 2.0, l.y(last) + ROW / 2.0)
    };
    st.data(pen.group().attr("class", "msg wrap")).open();
    let (sent, received, slow) = (a.sent, a.received.unwrap_or(0), st.slow_words());
    pen.title_markup(&format!("{}, {sent} -> {received} (round the ring{slow})", st.title));
    st.dashed(pen.line().px("x1", x1).px("y1", y1).px("x2", xm).px("y2", out_y)).close();
    st.arrow(pen.line(), (xm, in_y), (x2, y2)).close();
    for y in [out_y, in_y] {
        let dot = pen.circle().attr("class", "ring-edge").px("cx", xm).px("cy", y);
        dot.attr("r", RING_EDGE_DOT).attr("fill", st.c).close();
    }
    l.swallowed_mark(pen, st.i);
    pen.end("g");
}

/// The radius of the dots where an arrow round the ring leaves the chart and re-enters it.
const RING_EDGE_DOT: f64 = 2.2;

/// The radius of a swallowed id's mark, and the room each takes along the line.
pub(super) const SWALLOWED_R: f64 = 4.0;
const SWALLOWED_STEP: f64 = 9.0;

impl Layout<'_, '_> {
    /// The centre of drawn arrow `i`'s swallowed-id mark, if its id stops: on the receiver's line
    /// just after the arrival (after the marks before it at that moment).
    fn swallowed_at(&self, i: usize) -> Option<(f64, f64, super::fates::Swallowed)> {
        let (sw, r) = (self.swallowed[i]?, self.ends[i].1?);
        let cx = self.x(r) + SWALLOWED_R + 1.5 + SWALLOWED_STEP * f64::from(sw.nth);
        Some((cx, self.y(self.drawn[i].to), sw))
    }

    /// Drawn arrow `i`'s swallowed-id mark (a slashed circle titled with both ids), or nothing.
    fn swallowed_mark(&self, pen: &mut Pen, i: usize) {
        if let Some((cx, y, sw)) = self.swallowed_at(i) {
            pen.group().attr("class", "swallowed").open();
            pen.title(format_args!("id {} swallowed by id {}", sw.id, sw.by));
            slashed_circle(pen, cx, y);
            pen.end("g");
        }
    }
}

/// Keep the swallowed ids' marks clear of every label placed after (labels have a white halo that
/// would hide them).
pub(super) fn reserve_swallowed(_: &mut Pen, l: &Layout<'_, '_>, placer: &mut Placer) {
    for i in 0..l.drawn.len() {
        if let Some((cx, y, _)) = l.swallowed_at(i) {
            let r = SWALLOWED_R + 1.0;
            placer.reserve([cx - r, y - r, cx + r, y + r]);
        }
    }
}

/// A black slashed circle at `(cx, y)`, white inside: the mark of an id swallowed.
pub(super) fn slashed_circle(pen: &mut Pen, cx: f64, y: f64) {
    let ring = pen.circle().px("cx", cx).px("cy", y).attr("r", SWALLOWED_R);
    ring.attr("fill", "white").attr("stroke", "#000").attr("stroke-width", 1.3).close();
    let slash = format!("M {:.1} {:.1} L {:.1} {:.1}", cx - 2.8, y + 2.8, cx + 2.8, y - 2.8);
    pen.path().attr("d", slash).attr("stroke", "#000").attr("stroke-width", 1.3).close();
}

/// How a role's arrows are drawn: the stroke width and the head (its length in px, open or
/// filled), so a picture printed grey tells the roles apart. Dashes are left to the faults (a
/// delayed message 6 3, a lost one's stub 3 2, a dropped one 2 2, one in flight 8 3 1 3).
pub(super) struct RoleStyle {
    pub(super) width: f64,
    head: f64,
    open: bool,
    /// Said in the legend.
    pub(super) legend: &'static str,
}

impl RoleStyle {
    pub(super) fn of(role: MsgRole) -> RoleStyle {
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
pub(super) fn marker(pen: &mut Pen, id: &str, colour: &str, role: MsgRole, hollow: bool) {
    let st = RoleStyle::of(role);
    let (size, scale) = if hollow { (9.6 / st.width, 9.6) } else { (st.head / st.width, st.head) };
    // A stroke 1.5 px wide, in the marker's units (10 across the head).
    let stroke = 15.0 / scale;
    let ref_x = if st.open && !hollow { "9" } else { "10" };
    let m = pen.element("marker").attr("id", id).attr("viewBox", "0 0 10 10").attr("refX", ref_x).attr("refY", 5);
    let m = m.fixed("markerWidth", size, 2).fixed("markerHeight", size, 2);
    m.attr("orient", "auto-start-reverse").open();
    if hollow {
        let head = pen.path().attr("d", "M 1 1 L 9 5 L 1 9 z").attr("fill", "white").attr("stroke", colour);
        head.fixed("stroke-width", stroke, 2).close();
    } else if st.open {
        let head = pen.path().attr("d", "M 1 1 L 9 5 L 1 9").attr("fill", "none").attr("stroke", colour);
        head.fixed("stroke-width", stroke, 2).attr("stroke-linejoin", "round").close();
    } else {
        pen.path().attr("d", "M 0 0 L 10 5 L 0 10 z").attr("fill", colour).close();
    }
    pen.end("marker");
}
