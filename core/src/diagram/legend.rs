//! The legend's entries: each message kind in its colour with its role's stroke, the roles in
//! grey, what became of messages not received, and whatever else the diagram draws (initiators,
//! leaderless stretches, faults, idle stretches, states), each with a sample drawn by its own pen.

use super::arrows::{RoleStyle, slashed_circle};
use super::fates::Fate;
use super::faults::PARTITION;
use super::frame::{IDLE, INITIATOR, initiator_path};
use super::layout::{Layout, kinds};
use super::pen::{Element, Pen};
use super::terms::{LEADERLESS, TWO_LEADERS, leader_overlaps, state_colour, term_losses};

/// A legend's sample, drawn by `draw` with a pen of its own.
fn sample(draw: impl FnOnce(&mut Pen)) -> String {
    let mut pen = Pen::new();
    draw(&mut pen);
    pen.finish()
}

/// A sample's segment from `(x1, y1)` to `(x2, y2)` in `stroke`.
fn segment<'p>(pen: &'p mut Pen, (x1, y1): (f64, f64), (x2, y2): (f64, f64), stroke: &str) -> Element<'p> {
    pen.line().attr("x1", x1).attr("y1", y1).attr("x2", x2).attr("y2", y2).attr("stroke", stroke)
}

/// A sample's box: `x`, `y`, `width` and `height`.
fn swatch(pen: &mut Pen, x: f64, y: f64, width: f64, height: f64) -> Element<'_> {
    pen.rect().attr("x", x).attr("y", y).attr("width", width).attr("height", height)
}

/// Legend entries: (sample, text); each message kind, then what else is drawn.
pub(super) fn entries(l: &Layout<'_, '_>) -> Vec<(String, String)> {
    let (d, drawn) = (l.d, l.drawn);
    let mut legend = message_entries(l);
    let mut push = |draw: &dyn Fn(&mut Pen), text: &str| legend.push((sample(draw), text.to_string()));
    if !d.initiators.is_empty() && d.initiators.len() < l.n {
        push(
            &|pen: &mut Pen| pen.path().attr("d", initiator_path(14.0, 0.0)).attr("fill", INITIATOR).close(),
            "initiator",
        );
    }
    if term_losses(d).iter().any(Option::is_some) {
        push(&|pen: &mut Pen| swatch(pen, 1.0, -6.0, 22.0, 12.0).attrs(&LEADERLESS).close(), "no leader");
    }
    if !leader_overlaps(d.states, d.outages, l.n).is_empty() {
        push(&|pen: &mut Pen| swatch(pen, 1.0, -6.0, 22.0, 12.0).attrs(&TWO_LEADERS).close(), "more than one leader");
    }
    if drawn.iter().any(|a| a.msg.is_some_and(|m| m.refuses())) {
        let refused = |pen: &mut Pen| {
            segment(pen, (0.0, 0.0), (18.0, 0.0), "#333").attr("stroke-width", 1.2).close();
            pen.path().attr("d", "M 14 -4 L 22 0 L 14 4 z").attr("fill", "white").attr("stroke", "#333").close();
        };
        push(&refused, "refused (hollow head)");
    }
    if drawn.iter().any(|a| a.slow) {
        let delayed =
            |pen: &mut Pen| segment(pen, (0.0, 0.0), (24.0, 0.0), "#333").attr("stroke-dasharray", "6 3").close();
        push(&delayed, "delayed by a fault");
    }
    if !d.outages.is_empty() {
        let down = |pen: &mut Pen| {
            let line = segment(pen, (0.0, 0.0), (24.0, 0.0), "#c00");
            line.attr("stroke-width", 2).attr("stroke-dasharray", "2 3").close();
        };
        push(&down, "crashed (down)");
    }
    if !d.splits.is_empty() {
        push(&|pen: &mut Pen| swatch(pen, 0.0, -6.0, 24.0, 12.0).attrs(&PARTITION).close(), "partition");
    }
    if !l.scale.gaps.is_empty() {
        push(&|pen: &mut Pen| swatch(pen, 0.0, -6.0, 24.0, 12.0).attr("fill", IDLE).close(), "idle, compressed");
    }
    let mut states: Vec<&str> = d.states.iter().map(|c| c.state).collect();
    states.sort_unstable();
    states.dedup();
    for state in states {
        let band = |pen: &mut Pen| {
            swatch(pen, 0.0, -4.0, 24.0, 8.0).attr("fill", state_colour(state)).attr("opacity", 0.6).close();
        };
        push(&band, &format!("state: {state}"));
    }
    legend
}

/// Legend entries of the messages: each kind in its colour, with its role's stroke and head; the
/// roles in grey when more than one is drawn; what became of messages not received; the ring's
/// wrap-around and swallowed ids, when drawn.
fn message_entries(l: &Layout<'_, '_>) -> Vec<(String, String)> {
    let drawn = l.drawn;
    let arrow = |pen: &mut Pen, colour: &str, width: f64, head: &str| {
        let line = segment(pen, (0.0, 0.0), (24.0, 0.0), colour).attr("stroke-width", width);
        line.attr("marker-end", format_args!("url(#head-{head})")).close();
    };
    let mut legend: Vec<(String, String)> = kinds(drawn)
        .into_iter()
        .map(|k| {
            let count = drawn.iter().filter(|a| a.kind == k).count();
            let (c, w) = (l.colour(k), RoleStyle::of(k.role()).width);
            // A program's kinds of one role share a colour: the legend names each (its manifest's names).
            let mut names: Vec<&str> =
                drawn.iter().filter(|a| a.kind == k).map(|a| a.msg.map_or(k.name(), |m| m.kind_name())).collect();
            names.sort_unstable();
            names.dedup();
            (sample(|pen| arrow(pen, c, w, k.name())), format!("{} ({count})", names.join(", ")))
        })
        .collect();
    let roles = l.roles();
    if roles.len() > 1 {
        for role in roles {
            let st = RoleStyle::of(role);
            let head = format!("role-{}", role.name());
            legend.push((sample(|pen| arrow(pen, "#333", st.width, &head)), st.legend.into()));
        }
    }
    let fates: Vec<Fate> = drawn.iter().map(|a| l.fate(a)).collect();
    let lost = |pen: &mut Pen| pen.path().attr("d", "M 9 -3 L 15 3 M 9 3 L 15 -3").attr("stroke", "#333").close();
    let dropped = |pen: &mut Pen| {
        segment(pen, (0.0, 0.0), (20.0, 0.0), "#333").attr("stroke-dasharray", "2 2").close();
        pen.circle().attr("cx", 20).attr("cy", 0).attr("r", 3.5).attr("fill", "white").attr("stroke", "#333").close();
    };
    let flying =
        |pen: &mut Pen| segment(pen, (0.0, 0.0), (24.0, 0.0), "#333").attr("stroke-dasharray", "8 3 1 3").close();
    for (fate, draw, text) in [
        (Fate::Lost, &lost as &dyn Fn(&mut Pen), "lost on the network"),
        (Fate::Dropped, &dropped, "dropped: receiver down"),
        (Fate::InFlight, &flying, "in flight at the end"),
    ] {
        if fates.contains(&fate) {
            legend.push((sample(draw), text.into()));
        }
    }
    if drawn.iter().zip(&fates).any(|(a, &f)| a.received.is_some() && f != Fate::Dropped && l.wraps(a)) {
        // Out at one edge, in at the other, each cut end a dot.
        let round = |pen: &mut Pen| {
            segment(pen, (0.0, -6.0), (8.0, 6.0), "#333").attr("stroke-width", 1.2).close();
            for (cx, cy) in [(8, 6), (16, -6)] {
                pen.circle().attr("cx", cx).attr("cy", cy).attr("r", 2.2).attr("fill", "#333").close();
            }
            segment(pen, (16.0, -6.0), (24.0, 6.0), "#333").attr("stroke-width", 1.2).close();
        };
        legend.push((sample(round), "round the ring".into()));
    }
    if l.swallowed.iter().any(Option::is_some) {
        let swallowed = |pen: &mut Pen| {
            segment(pen, (0.0, 0.0), (14.0, 0.0), "#333").attr("stroke-width", 1.2).close();
            pen.path().attr("d", "M 7 -3.5 L 15 0 L 7 3.5 z").attr("fill", "#333").close();
            slashed_circle(pen, 20.5, 0.0);
        };
        legend.push((sample(swallowed), "id swallowed".into()));
    }
    legend
}
