//! What frames the messages: the document's head (its size, the arrowheads, the caption), a line
//! per node, the compressed idle stretches, the axis's ends and the legend under the plot.

use super::Axis;
use super::arrows::marker;
use super::labels::{Placer, text_at};
use super::layout::{Layout, RIGHT_MARGIN, ROW, kinds};
use super::pen::Pen;
use super::scale::duration_text;

/// The colour of an initiator's mark (Okabe-Ito bluish green).
pub(super) const INITIATOR: &str = "#009E73";

/// An idle stretch's band.
pub(super) const IDLE: &str = "#e8e8e8";

/// The width of a column of the legend.
const LEGEND_COLUMN: f64 = 220.0;

/// How many columns of the legend fit under the plot (one to four).
fn legend_columns(l: &Layout<'_, '_>) -> usize {
    (((l.plot + RIGHT_MARGIN) / LEGEND_COLUMN) as usize).clamp(1, 4)
}

/// The document's opening: its size, the arrowheads of each kind, the caption.
pub(super) fn head(pen: &mut Pen, l: &Layout<'_, '_>, legend: &[(String, String)], placer: &mut Placer) {
    let (d, drawn, left) = (l.d, l.drawn, l.left);
    let legend_top = l.bottom + 48.0;
    let height = legend_top + 24.0 * legend.len().div_ceil(legend_columns(l)) as f64 + 30.0;
    let width = left + l.plot + RIGHT_MARGIN;
    let svg = pen.element("svg").attr("xmlns", "http://www.w3.org/2000/svg").attr("width", width);
    let svg = svg.attr("height", height).attr("viewBox", format_args!("0 0 {width} {height}"));
    let svg = svg.attr("font-family", "sans-serif").attr("font-size", 12).attr("data-unit", d.time_unit);
    let svg = svg.attr("data-axis", if d.axis == Axis::Causal { "causal time" } else { d.time_unit });
    let svg = svg.attr("data-top", l.top - ROW / 2.0).attr("data-bottom", l.bottom);
    svg.attr("data-left", left).attr("data-right", left + l.plot).open();
    pen.newline();
    pen.rect().attr("width", "100%").attr("height", "100%").attr("fill", "white").close();
    pen.newline();
    pen.element("defs").open();
    pen.newline();
    for k in kinds(drawn) {
        let (id, c) = (format!("head-{}", k.name()), l.colour(k));
        marker(pen, &id, c, k.role(), false);
        pen.newline();
        if drawn.iter().any(|a| a.kind == k && a.msg.is_some_and(|m| m.refuses())) {
            marker(pen, &format!("{id}-no"), c, k.role(), true);
            pen.newline();
        }
    }
    // The legend's samples of the roles, in grey.
    if l.roles().len() > 1 {
        for role in l.roles() {
            marker(pen, &format!("head-role-{}", role.name()), "#333", role, false);
            pen.newline();
        }
    }
    pen.end("defs");
    pen.newline();
    let mut caption = d.title.clone();
    if d.arrows.len() > drawn.len() {
        caption.push_str(&format!(" (first {} of {} messages drawn)", drawn.len(), d.arrows.len()));
    }
    // Its room as written, escaped.
    placer.fixed((left, 22.0, "start"), 15.0, true, &Pen::escape(&caption));
    pen.text().attr("x", left).attr("y", 22).attr("font-size", 15).attr("font-weight", "bold").content(&caption);
    pen.newline();
}

/// A line per node, named at its left (its position on hover); the leader's bold.
pub(super) fn node_lines(pen: &mut Pen, l: &Layout<'_, '_>, placer: &mut Placer) {
    let (d, left, plot) = (l.d, l.left, l.plot);
    let y = |p: u32| l.y(p);
    for (p, name) in d.nodes.iter().enumerate() {
        let p = p as u32;
        let lead = d.leader == Some(p);
        let lead_attr = lead.then_some("true");
        let (stroke, weight) = if lead { ("#000", 3) } else { ("#999", 1) };
        let line = pen.line().attr("class", "node").attr("data-position", p).maybe("data-lead", lead_attr);
        let line = line.attr("x1", left).attr("y1", y(p)).attr("x2", left + plot).attr("y2", y(p));
        line.attr("stroke", stroke).attr("stroke-width", weight).close();
        pen.newline();
        let label = if lead { format!("{name} (leader)") } else { name.clone() };
        placer.fixed((left - 8.0, y(p) + 4.0, "end"), 12.0, lead, &label);
        // The position on hover: rows are named by id, the API and faults by position too.
        pen.group().attr("class", "row").attr("data-position", p).maybe("data-lead", lead_attr).open();
        pen.title(format_args!("position {p}: {name}"));
        let text = pen.text().attr("x", left - 8.0).attr("y", y(p) + 4.0).attr("text-anchor", "end");
        text.maybe("font-weight", lead.then_some("bold")).open();
        pen.words(name);
        if lead {
            // The leader's mark apart, for the page's step-through to hide before there is a leader.
            pen.element("tspan").attr("class", "lead").content(" (leader)");
        }
        pen.end("text");
        pen.end("g");
        pen.newline();
    }
    if d.initiators.len() < l.n {
        for &p in d.initiators.iter().filter(|&&p| (p as usize) < l.n) {
            pen.group().attr("class", "initiator").attr("data-position", p).open();
            pen.title("initiator: it starts on its own");
            pen.path().attr("d", initiator_path(left, y(p))).attr("fill", INITIATOR).close();
            pen.end("g");
            pen.newline();
        }
    }
}

/// A small triangle pointing into the line at `(x, y)`: an initiator's mark, as path data.
pub(super) fn initiator_path(x: f64, y: f64) -> String {
    format!("M {:.1} {:.1} L {:.1} {y:.1} L {:.1} {:.1} z", x - 7.0, y - 5.0, x, x - 7.0, y + 5.0)
}

/// Idle stretches compressed: grey bands labelled with their length below the axis, on one of two
/// lines or, failing both, above the plot.
pub(super) fn idle_bands(pen: &mut Pen, l: &Layout<'_, '_>, placer: &mut Placer) {
    let (d, top, bottom) = (l.d, l.top, l.bottom);
    for &(a, b) in &l.scale.gaps {
        let (xa, xb) = (l.x(a), l.x(b));
        let xm = (xa + xb) / 2.0;
        let len = duration_text(b - a, d.time_unit);
        let spots =
            [(xm, bottom + 14.0, "middle"), (xm, bottom + 27.0, "middle"), (xm, top - ROW / 2.0 - 3.0, "middle")];
        let spot = placer.place(&spots, 10.0, &len);
        pen.group().attr("class", "idle").open();
        pen.title(format_args!("idle for {len}"));
        let band = pen.rect().px("x", xa).px("y", top - ROW / 2.0).px("width", xb - xa);
        band.px("height", bottom - top + ROW / 2.0).attr("fill", IDLE).close();
        text_at(pen, spot, 10.0, &[("fill", "#555")], &len);
        pen.end("g");
        pen.newline();
    }
}

/// The axis's two ends (0, and the run's length with its unit), then the legend, four entries a
/// row: each entry's sample (drawn by its own pen) and its words.
pub(super) fn axis_and_legend(pen: &mut Pen, l: &Layout<'_, '_>, legend: &[(String, String)], placer: &mut Placer) {
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
    pen.text().attr("x", left).attr("y", ty).attr("fill", "#555").content(0);
    let axis = pen.text().attr("class", "axis").attr("x", tx).attr("y", ty).attr("fill", "#555");
    axis.attr("text-anchor", "end").content(&length);
    pen.newline();
    let columns = legend_columns(l);
    for (i, (sample, text)) in legend.iter().enumerate() {
        let lx = left + LEGEND_COLUMN * (i % columns) as f64;
        let ly = legend_top + 24.0 * (i / columns) as f64;
        pen.group().attr("transform", format_args!("translate({lx} {ly})")).open();
        pen.fragment(sample);
        pen.text().attr("x", 30).attr("y", 4).content(text);
        pen.end("g");
        pen.newline();
    }
}
