//! `/compare/{a}/{b}`: two elections compared, typically the same ids
//! under two algorithms ("Same ids, another algorithm" on an election's
//! page): their costs against their bounds in one table, and their diagrams
//! one above the other, each beside its topology, stepped together on one
//! time line (each event of either, in time order), so a class sees where
//! one algorithm spends messages the other does not.
//!
//! The page's script (`compare.js`, then the election pages' own) redraws
//! both diagrams on one time scale, to scale, when they share an axis (a
//! moment is at the same x in both), and says each election's messages sent
//! so far as the step bar moves.

use std::fmt::Write as _;

use axum::extract::{Path, State};
use axum::response::{Html, IntoResponse, Response};

use super::election::{STEP_CONTROLS, bound_text, mode_text, state_class, verdict};
use super::{HEAD, Pages, escape, not_found};
use crate::record::ElectionRecord;

/// The comparison page's script: its own part (one time scale, messages so far) before the
/// election pages' stepping.
pub(super) const SCRIPT: &str = concat!(include_str!("compare.js"), include_str!("election.js"));

/// `GET /compare/{a}/{b}`.
pub(super) async fn page(State(pages): State<Pages>, Path((a, b)): Path<(String, String)>) -> Response {
    let Some(first) = pages.elections.get(&a) else { return not_found(&a) };
    let Some(second) = pages.elections.get(&b) else { return not_found(&b) };
    Html(render(&first.snapshot(), &second.snapshot())).into_response()
}

/// The ids by position, e.g. `5 1 8 3`.
fn ids_text(r: &ElectionRecord) -> String {
    let mut by_position: Vec<_> = r.participants.iter().map(|p| (p.position, p.id)).collect();
    by_position.sort_unstable();
    by_position.iter().map(|(_, id)| id.to_string()).collect::<Vec<_>>().join(" ")
}

/// One row of the costs table.
fn cost_row(rows: &mut String, r: &ElectionRecord) {
    let (messages, bound, ratio, ideal, duration) = match &r.metrics {
        Some(m) => (
            m.messages.to_string(),
            bound_text(m.bound),
            if m.finite_bound().is_some() { format!("{:.3}", m.bound_ratio()) } else { "–".into() },
            m.ideal_time.to_string(),
            format!("{} ms", m.duration_ms),
        ),
        None => ("–".into(), "–".into(), "–".into(), "–".into(), "–".into()),
    };
    let leader = r.leader.as_ref().map_or_else(|| "–".to_string(), |l| format!("id {}", l.id));
    let _ = write!(
        rows,
        "<tr><td><a href=\"/elections/{id}\">{alg}</a></td><td>{mode}</td><td class=\"{class}\">{state:?}</td>\
         <td class=\"n\">{messages}</td><td class=\"n\">{bound}</td><td class=\"n\">{ratio}</td><td>{formula}</td>\
         <td class=\"n\">{ideal}</td><td class=\"n\">{duration}</td><td>{leader}</td></tr>",
        id = escape(&r.id),
        alg = escape(r.algorithm),
        mode = mode_text(r),
        class = state_class(r),
        state = r.state,
        formula = escape(r.metrics.as_ref().map_or("", |m| m.bound_formula)),
    );
}

/// One election's part of the page: its name, verdict and messages so far, its topology and the
/// step it is at beside its diagram.
fn panel(body: &mut String, r: &ElectionRecord) {
    let _ = write!(
        body,
        "<section class=\"panel\" data-election=\"{id}\" data-algorithm=\"{alg}\"><h2><a href=\"/elections/{id}\">{alg}</a> \
         <span class=\"so-far\"></span></h2><p class=\"state {class}\">{verdict}</p><div class=\"beside\">\
         <div class=\"side\"><div class=\"topology\"></div><div class=\"info\">Step both: each send, arrival and change \
         of state of either is a step.</div></div>",
        id = escape(&r.id),
        alg = escape(r.algorithm),
        class = state_class(r),
        verdict = escape(&verdict(r)),
    );
    match &r.diagram_svg {
        Some(svg) => {
            body.push_str("<div class=\"diagram\">");
            body.push_str(svg);
            body.push_str("</div>");
        }
        None if !r.state.is_terminal() => body.push_str("<p>Running: the diagram is drawn when it ends.</p>"),
        None => body.push_str("<p>Not drawn: start it with <code>\"diagram\": true</code> to compare its steps.</p>"),
    }
    body.push_str("</div></section>");
}

/// The page comparing `a` and `b`.
pub(super) fn render(a: &ElectionRecord, b: &ElectionRecord) -> String {
    let mut body = String::new();
    let (ids_a, ids_b) = (ids_text(a), ids_text(b));
    let same = if ids_a == ids_b && !ids_a.is_empty() {
        format!("Both on the ids <code>{}</code> (by position).", escape(&ids_a))
    } else {
        format!("Not the same ids: <code>{}</code> and <code>{}</code> (by position).", escape(&ids_a), escape(&ids_b))
    };
    let _ = write!(
        body,
        "<nav><a href=\"/\">Lab</a> · <a href=\"/elections\">All elections</a></nav>\
         <h1>{} and {} compared</h1><p>{same}</p><table id=\"costs\"><tr><th>algorithm</th><th>mode</th><th>state</th>\
         <th>messages</th><th>bound</th><th>messages / bound</th><th>bound formula</th><th>ideal time</th><th>duration</th>\
         <th>leader</th></tr>",
        escape(a.algorithm),
        escape(b.algorithm),
    );
    cost_row(&mut body, a);
    cost_row(&mut body, b);
    body.push_str("</table>");
    if a.diagram_svg.is_some() && b.diagram_svg.is_some() {
        body.push_str(
            "<h2>Step through both</h2><p class=\"note\">One time line: each step is the next event of either \
             election, in time order (at one moment the upper one's first). <span id=\"scale-note\">Each diagram \
             on its own scale.</span></p>",
        );
        body.push_str(STEP_CONTROLS);
    }
    body.push_str("<div class=\"stack\">");
    panel(&mut body, a);
    panel(&mut body, b);
    body.push_str("</div>");
    let running = !(a.state.is_terminal() && b.state.is_terminal());
    format!(
        "{HEAD}<title>{} and {} · ringleader</title></head><body data-compare=\"{} {}\" data-running=\"{running}\">\
         {body}<script>{SCRIPT}</script></body></html>",
        escape(a.algorithm),
        escape(b.algorithm),
        escape(&a.id),
        escape(&b.id),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Metrics, Mode, Participant, State as RecordState};

    fn record(id: &str, algorithm: &'static str, ids: &[u64], messages: u64) -> ElectionRecord {
        let participants = ids
            .iter()
            .enumerate()
            .map(|(p, &id)| Participant {
                position: p as u32,
                node: format!("sim-{p}"),
                id,
                initiator: true,
                decision: None,
                messages_sent: 0,
            })
            .collect();
        ElectionRecord {
            n: ids.len() as u32,
            state: RecordState::Finished,
            participants,
            metrics: Some(Metrics { messages, bound: 10, bound_formula: "n(n+1)/2", ..Metrics::default() }),
            diagram_svg: Some(format!("<svg id=\"{id}-svg\"></svg>").into()),
            ..ElectionRecord::blank(id.into(), algorithm, Mode::Simulated)
        }
    }

    /// The comparison page puts both elections' costs in one table and both diagrams in panels
    /// stacked under one bar of step controls, each with a place for its messages so far; it says
    /// whether the ids are the same, and without both diagrams it shows no controls (nothing to
    /// step together).
    #[test]
    fn both_elections_stacked_under_one_bar() {
        let (a, b) = (record("e1", "as-far", &[5, 1, 8, 3], 7), record("e2", "stages", &[5, 1, 8, 3], 9));
        let page = render(&a, &b);
        assert!(page.contains("<h1>as-far and stages compared</h1>"), "{page}");
        assert!(page.contains("<div class=\"stack\"><section class=\"panel\""), "{page}");
        assert_eq!(page.matches("<span class=\"so-far\"></span>").count(), 2, "{page}");
        assert!(page.contains("id=\"scale-note\"") && page.contains(&format!("<script>{SCRIPT}</script>")));
        assert!(page.contains("Both on the ids <code>5 1 8 3</code>"), "{page}");
        assert!(page.contains("<td class=\"n\">7</td><td class=\"n\">10</td><td class=\"n\">0.700</td>"), "{page}");
        assert!(page.contains("<td class=\"n\">9</td><td class=\"n\">10</td><td class=\"n\">0.900</td>"), "{page}");
        assert!(page.contains(r#"data-compare="e1 e2""#) && page.contains(r#"data-running="false""#));
        assert_eq!(page.matches("id=\"slider\"").count(), 1);
        assert!(page.contains(r#"<div class="diagram"><svg id="e1-svg"></svg></div>"#));
        assert!(page.contains(r#"<div class="diagram"><svg id="e2-svg"></svg></div>"#));
        let other = render(&a, &record("e3", "stages", &[1, 5, 8, 3], 9));
        assert!(other.contains("Not the same ids"), "{other}");
        let undrawn = ElectionRecord { diagram_svg: None, ..b };
        let page = render(&a, &undrawn);
        assert!(!page.contains("id=\"slider\"") && page.contains("Not drawn"), "{page}");
    }
}
