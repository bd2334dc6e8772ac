//! Who leads: each node's state along its line, the terms of a kept leadership on a strip above
//! the nodes (with the stretches that had no leader), and a frame where more than one node leads.

use super::labels::{Placer, text_at};
use super::layout::{Layout, ROW, TERM_STRIP};
use super::pen::Pen;
use super::{Diagram, StateChange};
use crate::faults::Outage;

/// How a stretch with no leader is drawn on the term strip: a gap between the terms, outlined.
pub(super) const LEADERLESS: [(&str, &str); 3] = [("fill", "white"), ("stroke", "#888"), ("stroke-dasharray", "3 2")];

/// (the Okabe-Ito palette, safe for colour-blind readers, with a lighter and
/// a darker shade where one algorithm has two states of a role): the leader
/// vermillion (one whose lease lapsed light vermillion); a node still
/// competing orange, one a step further in its round (waiting for a better
/// candidate, proposing, collecting, processing) dark gold, one not yet
/// competing (awake, PreVote's pre-candidate, saturated) light orange; one
/// out of the running (defeated, passive, relay, non-participant) sky blue,
/// a dummy, an echoed candidate or a captured node light sky blue; a follower that knows its
/// leader blue, one that promised its vote bluish green; a node that knows
/// no leader yellow; one announcing or winning reddish purple, leaving wine;
/// asleep grey; anything else dark grey. Within one algorithm every state
/// has its own colour (a test runs the catalogue).
pub fn state_colour(state: &str) -> &'static str {
    match state {
        "leader" => "#D55E00",
        "leader-unleased" => "#F4A582",
        "candidate" | "active" | "electing" | "looking" | "participant" | "running" | "duelist" | "yo-down"
        | "find" => "#E69F00",
        "waiting" | "proposing" | "collecting" | "processing" | "yo-up" | "found" => "#8F6A00",
        "awake" | "pre-candidate" | "saturated" | "setup" | "hello" => "#F5CD7A",
        "defeated" | "passive" | "relay" | "non-participant" | "pruned" => "#56B4E9",
        "dummy" | "echoed" | "captured" => "#A9D8F5",
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
pub(super) fn state_bands(pen: &mut Pen, l: &Layout<'_, '_>) {
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
            let band = pen.rect().attr("class", "state").attr("data-at", at).attr("data-position", p);
            let band = band.attr("data-state", c.state).attr("data-colour", colour);
            let band = band.px("x", xa).px("y", y - 4.0).px("width", (xb - xa).max(0.0)).attr("height", 8);
            band.attr("fill", colour).attr("opacity", 0.6).open();
            pen.title(format_args!("{} from {}", c.state, c.time));
            pen.end("rect");
            pen.newline();
        }
    }
}

/// Stretches in which more than one node that is up has the state "leader", from the states and
/// outages drawn (a crashed leader leads nobody until it recovers): (from, until;
/// `None`: to the end) and the most leaders at once.
pub(super) fn leader_overlaps(states: &[StateChange], outages: &[Outage], n: usize) -> Vec<(u64, Option<u64>, usize)> {
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
pub(super) fn two_leaders(pen: &mut Pen, l: &Layout<'_, '_>, placer: &mut Placer) {
    let (left, plot, top, bottom) = (l.left, l.plot, l.top, l.bottom);
    for (from, until, most) in leader_overlaps(l.d.states, l.d.outages, l.n) {
        let xa = l.x(l.on_axis(from));
        let xb = until.map_or(left + plot, |u| l.x(l.on_axis(u))).max(xa + 2.0);
        let label = format!("{most} leaders");
        let ty = top - ROW / 2.0 - 3.0;
        let spots = [(xa, ty, "start"), (xb, ty, "end"), (xb, bottom + 27.0, "end")];
        pen.group().attr("class", "two-leaders").attr("data-at", l.on_axis(from)).open();
        pen.title(format_args!("{label} at once"));
        let frame = pen.rect().px("x", xa).px("y", top - ROW / 2.0).px("width", xb - xa);
        frame.px("height", bottom - top + ROW / 2.0).attrs(&TWO_LEADERS).close();
        let spot = placer.place(&spots, 10.0, &label);
        text_at(pen, spot, 10.0, &[("fill", "#D55E00"), ("font-weight", "bold")], &label);
        pen.end("g");
        pen.newline();
    }
}

/// The frame of more than one leader at once (Okabe-Ito vermillion, the leader's colour, dashed).
pub(super) const TWO_LEADERS: [(&str, &str); 4] =
    [("fill", "none"), ("stroke", "#D55E00"), ("stroke-width", "2"), ("stroke-dasharray", "4 2")];

/// When each term's leader was lost (`None`: it led until the next term or the end): its crash,
/// or where it stepped down, after the term began and before the next.
pub(super) fn term_losses(d: &Diagram<'_>) -> Vec<Option<u64>> {
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

/// Terms: a strip above the nodes, a band per term naming its leader. A band too narrow for its
/// label says less ("term 3", then "3"), at its start or leftwards from its end.
pub(super) fn term_bands(pen: &mut Pen, l: &Layout<'_, '_>, placer: &mut Placer) {
    let (d, left, plot, top) = (l.d, l.left, l.plot, l.top);
    let losses = term_losses(d);
    let (ya, ty) = (top - ROW / 2.0 - TERM_STRIP, top - ROW / 2.0 - TERM_STRIP + 13.0);
    for (i, t) in d.terms.iter().enumerate() {
        let xa = l.x(l.on_axis(t.from));
        let xn = d.terms.get(i + 1).map_or(left + plot, |next| l.x(l.on_axis(next.from)));
        // A lost leader's term ends there; no leader until the next term (or the end).
        let xb = losses[i].map_or(xn, |at| l.x(l.on_axis(at)).min(xn));
        if xn - xb >= 1.0 {
            let label = "no leader";
            let spot = placer.place(&[((xb + xn) / 2.0, ty, "middle")], 10.0, label);
            pen.group().attr("class", "leaderless").attr("data-at", losses[i].map_or(0, |at| l.on_axis(at))).open();
            pen.title(format_args!("no leader after term {}", t.term));
            pen.rect().px("x", xb).px("y", ya).px("width", xn - xb).attr("height", 18).attrs(&LEADERLESS).close();
            text_at(pen, spot, 10.0, &[("fill", "#555")], label);
            pen.end("g");
            pen.newline();
        }
        let fill = if i % 2 == 0 { "#dbe9f6" } else { "#c3d9ee" };
        let name = d.nodes.get(t.leader as usize).map_or_else(|| t.leader.to_string(), |l| l.clone());
        let full = format!("term {}: {name}", t.term);
        let spots = [(xa + 3.0, ty, "start"), (xb - 3.0, ty, "end")];
        let texts = [full.clone(), format!("term {}", t.term), t.term.to_string()];
        let placed = texts.iter().find_map(|text| placer.place(&spots, 10.0, text).map(|spot| (spot, text)));
        pen.group().attr("class", "term").attr("data-at", l.on_axis(t.from)).open();
        pen.title(&full);
        pen.rect()
            .px("x", xa)
            .px("y", ya)
            .px("width", (xb - xa).max(1.0))
            .attr("height", 18)
            .attr("fill", fill)
            .close();
        if let Some((spot, text)) = placed {
            text_at(pen, Some(spot), 10.0, &[], text);
        }
        pen.end("g");
        pen.newline();
    }
}
