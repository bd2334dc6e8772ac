//! The pages of elections: the index, one election's page with its
//! step-through, and its record as JSON.

use std::fmt::Write as _;

use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};

use super::{HEAD, Pages, escape, not_found};
use ringleader_core::algo::catalogue::CATALOGUE;

use crate::record::{ElectionRecord, Mode};

/// At most this many elections are listed on the index.
pub const MAX_LISTED: usize = 500;

/// The index of recent elections.
pub(super) async fn index(State(Pages { elections, .. }): State<Pages>) -> Html<String> {
    let mut rows = String::new();
    for entry in elections.list().iter().take(MAX_LISTED) {
        entry.inspect(|r| index_row(&mut rows, r));
    }
    let empty = if rows.is_empty() {
        "<p>No election yet: start one from <a href=\"/\">the lab</a> (or with grpcurl, docs/api.md) and reload.</p>"
    } else {
        ""
    };
    Html(format!(
        "{HEAD}<title>Elections · ringleader</title></head><body><nav><a href=\"/\">Lab</a></nav><h1>Elections</h1>\
         <p>Most recent first (at most {MAX_LISTED}). Elections started with <code>\"diagram\": true</code> \
         have a space-time diagram to step through.</p>{empty}\
         <table id=\"elections\"><tr><th>election</th><th>algorithm</th><th>mode</th><th>state</th><th>n</th><th>k</th>\
         <th>leader</th><th>messages</th><th>bound</th><th>diagram</th></tr>{rows}</table></body></html>"
    ))
}

/// One row of the index: `r`'s id, algorithm, mode, state, size, leader and cost.
fn index_row(rows: &mut String, r: &ElectionRecord) {
    let leader = r.leader.as_ref().map_or_else(String::new, |l| format!("{} (id {})", l.node, l.id));
    let (messages, bound) =
        r.metrics.as_ref().map_or((String::new(), String::new()), |m| (m.messages.to_string(), bound_text(m.bound)));
    let _ = write!(
        rows,
        "<tr><td><a href=\"/elections/{id}\">{id}</a></td><td>{alg}</td><td>{mode}</td><td class=\"{class}\">{state}</td>\
         <td class=\"n\">{n}</td><td class=\"n\">{k}</td><td>{leader}</td><td class=\"n\">{messages}</td><td class=\"n\">{bound}</td><td>{diagram}</td></tr>",
        id = escape(&r.id),
        alg = escape(r.algorithm),
        mode = mode_text(r),
        class = state_class(r),
        state = state_text(r),
        n = r.n,
        k = r.k,
        leader = escape(&leader),
        diagram = if r.diagram_svg.is_some() { "yes" } else { "" },
    );
}

/// A bound as the pages show it: "none" (0, a kept leadership), "unbounded" or its figure.
pub(super) fn bound_text(bound: u64) -> String {
    if bound == 0 { "none".to_string() } else { ringleader_core::spec::bound_text(bound) }
}

pub(super) fn mode_text(r: &ElectionRecord) -> &'static str {
    match (r.mode, r.keep_leader) {
        (Mode::Live, true) => "LIVE, kept",
        (Mode::Live, false) => "LIVE",
        (Mode::Simulated, _) => "SIMULATED",
    }
}

fn state_text(r: &ElectionRecord) -> String {
    format!("{:?}", r.state).to_uppercase()
}

pub(super) fn state_class(r: &ElectionRecord) -> &'static str {
    use crate::record::State;
    match r.state {
        State::Pending | State::Running => "running",
        State::Finished if r.violations.is_empty() && (r.agreed || r.keep_leader) => "ok",
        _ => "bad",
    }
}

/// The verdict in one line.
pub(super) fn verdict(r: &ElectionRecord) -> String {
    let leader = r.leader.as_ref().map(|l| format!("{} (id {})", l.node, l.id));
    let mut v = state_text(r);
    match (&r.error, leader) {
        (Some(e), _) => v.push_str(&format!(": {e}")),
        (None, Some(l)) if r.agreed => v.push_str(&format!(": every node agrees on {l}")),
        (None, Some(l)) => v.push_str(&format!(": {l} leads, not yet agreed by all")),
        (None, None) => v.push_str(": no leader yet"),
    }
    if r.keep_leader && r.term > 0 {
        v.push_str(&format!(", term {}", r.term));
    }
    if !r.violations.is_empty() {
        v.push_str(&format!("; {} violation(s)", r.violations.len()));
    }
    v
}

pub(super) async fn record_json(State(Pages { elections, .. }): State<Pages>, Path(id): Path<String>) -> Response {
    let Some(entry) = elections.get(&id) else { return not_found(&id) };
    let mut r = entry.snapshot();
    r.diagram_svg = None;
    match serde_json::to_string(&r) {
        Ok(json) => ([(header::CONTENT_TYPE, "application/json")], json).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

/// One election's diagram as an SVG document: the final one, or a running kept leadership's so far.
pub(super) async fn diagram_svg(State(Pages { elections, .. }): State<Pages>, Path(id): Path<String>) -> Response {
    let Some(entry) = elections.get(&id) else { return not_found(&id) };
    match entry.inspect(|r| r.diagram_svg.clone()) {
        Some(svg) => ([(header::CONTENT_TYPE, "image/svg+xml")], svg.to_string()).into_response(),
        None => (StatusCode::NOT_FOUND, format!("election {id} has no diagram (yet)")).into_response(),
    }
}

/// The step controls of a page with diagrams (the script finds them by id: one bar a page).
pub(super) const STEP_CONTROLS: &str = "<div class=\"controls\">\
                 <button id=\"first\" title=\"before the first event (Home)\">|◀ start</button>\
                 <button id=\"back\" title=\"one event back (←)\">◀ back</button>\
                 <button id=\"play\" title=\"play / pause (space)\">▶ play</button>\
                 <button id=\"forward\" title=\"one event forward (→)\">forward ▶</button>\
                 <button id=\"last\" title=\"every event (End)\">end ▶|</button>\
                 <input type=\"range\" id=\"slider\" min=\"0\" max=\"0\" value=\"0\">\
                 <label>speed <select id=\"speed\"><option value=\"0.5\">½×</option><option value=\"1\" selected>1×</option>\
                 <option value=\"2\">2×</option><option value=\"4\">4×</option><option value=\"16\">16×</option></select></label>\
                 <label>zoom <select id=\"zoom\"><option value=\"1\" selected>fit</option><option value=\"1.5\">150%</option>\
                 <option value=\"2\">200%</option><option value=\"4\">400%</option></select></label>\
                 <span id=\"where\"></span></div>";

/// The election page's jump to the next failover's first step (a crash or a cut), before the
/// slider; the script shows it when the diagram has one.
const NEXT_FAILOVER: &str = "<button id=\"next-failover\" title=\"to the next crash or cut (F)\" hidden>next failover ▶▶</button>\
                             <input type=\"range\"";

/// One election's page.
pub(super) async fn page(State(pages): State<Pages>, Path(id): Path<String>) -> Response {
    let Some(entry) = pages.elections.get(&id) else { return not_found(&id) };
    Html(render(&entry.snapshot(), pages.token_required)).into_response()
}

/// The page of `r` (see the module docs); `token_required`: its buttons that change state ask for
/// the controller's token.
pub fn render(r: &ElectionRecord, token_required: bool) -> String {
    let mut body = String::new();
    let id = escape(&r.id);
    let _ = write!(
        body,
        "<nav><a href=\"/\">Lab</a> · <a href=\"/elections\">All elections</a></nav><h1>{alg} · {mode} · n = {n}, k = {k}</h1>\
         <p>Election <code>{id}</code>, seed {seed}, {topology:?} overlay.</p>\
         <p id=\"verdict\" class=\"state {class}\">{verdict}</p>",
        alg = escape(r.algorithm),
        mode = mode_text(r),
        n = r.n,
        k = r.k,
        seed = r.seed,
        topology = r.topology,
        class = state_class(r),
        verdict = escape(&verdict(r)),
    );
    if !r.options.is_empty() {
        let options: Vec<String> =
            r.options.iter().map(|(k, v)| format!("<code>{}={}</code>", escape(k), escape(v))).collect();
        let _ = write!(body, "<p id=\"options\">Options: {}.</p>", options.join(", "));
    }
    if !r.violations.is_empty() {
        body.push_str("<h2>Violations</h2><ul class=\"bad\">");
        for v in &r.violations {
            let _ = write!(body, "<li>{}</li>", escape(v));
        }
        body.push_str("</ul>");
    }
    if let Some(m) = &r.metrics {
        let ratio = if m.finite_bound().is_some() { format!("{:.3}", m.bound_ratio()) } else { "–".into() };
        let _ = write!(
            body,
            "<h2>Metrics against the bound</h2><table id=\"metrics\"><tr><th>messages</th><th>bound</th><th>messages / bound</th>\
             <th>bound formula</th><th>ideal time</th><th>bytes</th><th>duration</th></tr>\
             <tr><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{ratio}</td><td>{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{} ms</td></tr></table><p>By kind: {}</p>",
            m.messages,
            bound_text(m.bound),
            escape(m.bound_formula),
            m.ideal_time,
            m.bytes,
            m.duration_ms,
            escape(&m.by_kind.iter().map(|(k, c)| format!("{k} {c}")).collect::<Vec<_>>().join(", ")),
        );
    }
    match &r.diagram_svg {
        _ if r.keep_leader && r.diagram_asked && !r.state.is_terminal() => {
            body.push_str(
                "<h2>Space-time diagram so far</h2><p class=\"note\">Redrawn while the leadership runs: after each change \
                 of belief or fault, at most every two seconds. Stop the leadership to step through the whole of it.</p>\
                 <div id=\"diagram-so-far\">",
            );
            match &r.diagram_svg {
                Some(svg) => body.push_str(svg),
                None => body.push_str("<p id=\"no-diagram\">Not drawn yet: it is drawn once the first leader is known.</p>"),
            }
            body.push_str("</div>");
        }
        Some(svg) => {
            body.push_str("<h2>Step through it</h2>");
            body.push_str(&STEP_CONTROLS.replacen("<input type=\"range\"", NEXT_FAILOVER, 1));
            // The topology and the step's words beside the diagram, both in view on a projector.
            body.push_str(
                "<div class=\"beside\"><div class=\"side\"><div id=\"topology\" class=\"topology\"></div>\
                 <div id=\"info\" class=\"info\">Step to watch the election unfold: each send, arrival, change of state and \
                 fault is a step. Point at an arrow to see its message; click it to keep it here.</div></div>\
                 <div id=\"diagram\" class=\"diagram\">",
            );
            body.push_str(svg);
            body.push_str("</div></div>");
            if r.state.is_terminal() && !r.keep_leader && !r.participants.is_empty() {
                same_ids_form(&mut body, r);
            }
        }
        None if r.diagram_asked && !r.state.is_terminal() => body.push_str(
            "<h2>Space-time diagram</h2><p id=\"no-diagram\">Drawn when the election ends; this page then shows it, \
             to step through.</p>",
        ),
        None => body.push_str(
            "<h2>Space-time diagram</h2><p id=\"no-diagram\">Not drawn: start the election with <code>\"diagram\": true</code> \
             (or <code>\"diagram_options\": {\"axis\": \"DIAGRAM_AXIS_CAUSAL\", \"labels\": true}</code>), or from \
             <a href=\"/\">the lab</a>, to draw it.</p>",
        ),
    }
    if r.keep_leader && !r.state.is_terminal() {
        let _ = write!(
            body,
            "<h2>Break it</h2><div class=\"stage\"><div id=\"topology\" class=\"topology\">The topology is being read.</div>\
             <div id=\"faults\"><p>Click nodes on the topology to select them, then:</p><p class=\"controls\">\
             <button id=\"crash\">crash</button><button id=\"recover\">recover</button>\
             <button id=\"partition\">cut off from the rest</button><button id=\"heal\">clear its faults</button>\
             <button id=\"stop\">stop the leadership</button></p>\
             <p class=\"controls\"><button id=\"drop\">drop the next message</button> of kind \
             <input id=\"drop-kind\" list=\"kinds\" placeholder=\"any kind\" size=\"12\"> \
             from the first node selected to the second</p>{kinds}\
             <form id=\"token-row\"><label>Controller token <input id=\"token\" type=\"password\" autocomplete=\"off\"></label></form>\
             <p id=\"fault-status\"></p></div></div>",
            kinds = kinds_list(),
        );
    }
    if r.keep_leader {
        body.push_str("<h2>Failovers</h2><table id=\"failovers\"><tr><th>lost leader</th><th>term</th><th>cause</th><th>lost at</th><th>detection</th><th>agreement</th><th>new leader</th><th>messages</th></tr>");
        body.push_str(&failover_rows(r));
        body.push_str("</table><h2>Timeline</h2><table id=\"timeline\"><tr><th>at</th><th>node</th><th>term</th><th>believes</th></tr>");
        body.push_str(&timeline_rows(r));
        body.push_str("</table>");
        if !r.overlaps.is_empty() {
            // Not violations: leaders of different terms, an old one not yet told (or a lease broken).
            body.push_str("<h2>Two leaders at once</h2><ul id=\"overlaps\">");
            for o in &r.overlaps {
                let _ = write!(body, "<li>{}</li>", escape(o));
            }
            body.push_str("</ul>");
        }
        if let Some(f) = r.fencing {
            let _ = write!(
                body,
                "<h2>Fencing</h2><p id=\"fencing\">{} writes by leaders, {} stale: {} accepted with fencing, \
                 {} without{}</p>",
                f.writes,
                f.stale,
                f.stale_accepted,
                f.stale_accepted_unfenced,
                if f.truncated { " (more writes than the model holds; later ones not counted)" } else { "" }
            );
        }
    }
    if !r.notes.is_empty() {
        body.push_str("<h2>Notes</h2><ul>");
        for n in &r.notes {
            let _ = write!(body, "<li>{}</li>", escape(n));
        }
        body.push_str("</ul>");
    }
    let running = !r.state.is_terminal();
    format!(
        "{HEAD}<title>{alg} {id} · ringleader</title></head><body data-election=\"{id}\" data-running=\"{running}\" data-drawn=\"{drawn}\" data-token-required=\"{token_required}\">\
         {body}<script>{SCRIPT}</script></body></html>",
        alg = escape(r.algorithm),
        drawn = r.diagram_drawn,
    )
}

/// Every message kind's name, for a fault's `kind` (a `<datalist id="kinds">`).
fn kinds_list() -> String {
    let mut names: Vec<&str> = ringleader_core::protocol::MsgKind::ALL.iter().map(|k| k.name()).collect();
    names.sort_unstable();
    names.dedup();
    let mut list = String::from("<datalist id=\"kinds\">");
    for name in names {
        let _ = write!(list, "<option value=\"{}\">", escape(name));
    }
    list.push_str("</datalist>");
    list
}

/// "Same ids, another algorithm": a form that starts another algorithm on `r`'s ids (its
/// initiators, mode, delays and seed too) and opens both side by side.
fn same_ids_form(body: &mut String, r: &ElectionRecord) {
    let mut options = String::new();
    for spec in CATALOGUE.iter().filter(|s| s.name != r.algorithm) {
        let _ = write!(
            options,
            "<option value=\"{name}\">{title} — {name}</option>",
            name = escape(spec.name),
            title = escape(spec.title)
        );
    }
    let _ = write!(
        body,
        "<h2>Same ids, another algorithm</h2><form id=\"again\" class=\"controls\"><label>Run \
         <select name=\"algorithm\">{options}</select></label> on the same {n} ids, {mode}, seed {seed}, and \
         <button type=\"submit\">step both side by side</button>\
         <label id=\"again-token-row\">Controller token <input name=\"token\" type=\"password\" autocomplete=\"off\"></label>\
         <span id=\"again-status\" class=\"error\"></span></form>",
        n = r.participants.len(),
        mode = match (r.mode, r.unit_delay) {
            (Mode::Simulated, true) => "SIMULATED with unit delays",
            (Mode::Simulated, false) => "SIMULATED with random delays",
            (Mode::Live, _) => "LIVE",
        },
        seed = r.seed,
    );
}

fn ms_text(ms: Option<u64>) -> String {
    ms.map_or_else(|| "–".to_string(), |m| format!("{m} ms"))
}

fn failover_rows(r: &ElectionRecord) -> String {
    let mut rows = String::new();
    for f in &r.failovers {
        let new = f.new_leader.as_ref().map_or_else(|| "–".to_string(), |(l, t)| format!("{} (term {t})", l.node));
        let _ = write!(
            rows,
            "<tr><td>{}</td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{} ms</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td></tr>",
            escape(&f.leader.node),
            f.term,
            escape(f.cause.text()),
            f.lost_at_ms,
            ms_text(f.detection_ms),
            ms_text(f.agreement_ms),
            escape(&new),
            f.messages.map_or_else(|| "–".to_string(), |m| m.to_string()),
        );
    }
    rows
}

fn timeline_rows(r: &ElectionRecord) -> String {
    let mut rows = String::new();
    for c in &r.timeline {
        let believes = c.leader_id.map_or_else(|| "no leader (electing)".to_string(), |l| format!("id {l} leads"));
        let _ = write!(
            rows,
            "<tr><td class=\"n\">{} ms</td><td>{}</td><td class=\"n\">{}</td><td>{believes}</td></tr>",
            c.at_ms,
            escape(&c.node),
            c.term
        );
    }
    rows
}

/// Step-through, hover, comparison and live updates (`election.js`): the
/// text of the election pages' one `<script>` element, allowed by its hash.
pub(super) const SCRIPT: &str = include_str!("election.js");

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{LeaderInfo, Metrics, State as RecordState};

    fn record() -> ElectionRecord {
        ElectionRecord {
            n: 3,
            k: 3,
            state: RecordState::Finished,
            agreed: true,
            leader: Some(LeaderInfo { node: "node-2".into(), id: 3, position: 2 }),
            metrics: Some(Metrics { messages: 6, bound: 9, bound_formula: "n(n+1)/2", ..Metrics::default() }),
            ..ElectionRecord::blank("e1-</script><x>".into(), "as-far", Mode::Simulated)
        }
    }

    /// An election of an algorithm with no finite bound (Itai-Rodeh) reads "unbounded" in the index
    /// and on its page, with no ratio: never the sentinel figure nor a ratio against it.
    #[test]
    fn an_unbounded_algorithm_reads_unbounded_without_a_ratio() {
        let r = ElectionRecord {
            metrics: Some(Metrics {
                messages: 26,
                bound: ringleader_core::spec::UNBOUNDED,
                bound_formula: "unbounded (probabilistic)",
                ..Metrics::default()
            }),
            ..ElectionRecord::blank("e1".into(), "itai-rodeh", Mode::Simulated)
        };
        let (mut row, page) = (String::new(), render(&r, false));
        index_row(&mut row, &r);
        assert!(row.contains("<td class=\"n\">unbounded</td>"), "{row}");
        assert!(page.contains("<td class=\"n\">26</td><td class=\"n\">unbounded</td><td class=\"n\">–</td>"), "{page}");
        let figure = ringleader_core::spec::UNBOUNDED.to_string();
        assert!(!row.contains(&figure) && !page.contains(&figure) && !page.contains("e-1"), "{page}");
    }

    /// A running one-shot election that asked for a diagram says it is drawn when it ends; a running
    /// kept leadership that asked shows its diagram so far (or that it is not drawn yet), without
    /// stepping controls; one that did not ask says how to (it told a running kept leadership
    /// started with "diagram": true to start with "diagram": true).
    #[test]
    fn a_diagram_asked_for_is_promised_not_asked_for_again() {
        let running = |keep_leader, asked, svg: Option<&str>| {
            render(
                &ElectionRecord {
                    state: RecordState::Running,
                    keep_leader,
                    diagram_asked: asked,
                    diagram_svg: svg.map(Into::into),
                    diagram_drawn: u32::from(svg.is_some()),
                    ..record()
                },
                false,
            )
        };
        assert!(running(false, true, None).contains("Drawn when the election ends"));
        assert!(running(true, true, None).contains("Not drawn yet"), "{}", running(true, true, None));
        let so_far = running(true, true, Some("<svg>so far</svg>"));
        assert!(so_far.contains(r#"<div id="diagram-so-far"><svg>so far</svg></div>"#), "{so_far}");
        assert!(so_far.contains(r#"data-drawn="1""#) && !so_far.contains(r#"id="slider""#), "{so_far}");
        assert!(!running(true, true, None).contains("Not drawn:"));
        assert!(running(true, false, None).contains("Not drawn: start the election with"));
    }

    /// The page states the verdict and the metrics against the bound, escapes what it quotes (in its
    /// text and in the `data-` attribute its script reads), and
    /// says how to get a diagram when there is none; with one, it inlines it beside the controls.
    #[test]
    fn the_page_states_verdict_metrics_and_diagram() {
        let page = render(&record(), false);
        assert!(page.contains("FINISHED: every node agrees on node-2 (id 3)"), "{page}");
        assert!(page.contains("<td class=\"n\">6</td><td class=\"n\">9</td><td class=\"n\">0.667</td>"), "{page}");
        // Quoted escaped in the HTML, where the script reads it too.
        assert!(page.contains("<code>e1-&lt;/script&gt;&lt;x&gt;</code>"), "{page}");
        assert!(
            page.contains(
                r#"<body data-election="e1-&lt;/script&gt;&lt;x&gt;" data-running="false" data-drawn="0" data-token-required="false">"#
            ),
            "{page}"
        );
        assert_eq!(page.matches("</script>").count(), 1);
        assert!(page.contains("id=\"no-diagram\"") && !page.contains("id=\"slider\""));
        let drawn = render(
            &ElectionRecord {
                diagram_svg: Some("<svg><line class=\"msg\" data-step=\"0\"/></svg>".into()),
                ..record()
            },
            false,
        );
        assert!(drawn.contains("id=\"slider\"") && drawn.contains("<line class=\"msg\" data-step=\"0\"/>"));
        assert!(drawn.contains("data-running=\"false\""));
    }

    /// A kept leadership's page lists its options, its overlaps (two nodes believing they led
    /// at once, of different terms), escaped, and its fencing counts; a record without them
    /// shows none of those headings.
    #[test]
    fn the_page_shows_options_and_overlaps() {
        let kept = ElectionRecord {
            keep_leader: true,
            options: vec![("lease".into(), "true".into()), ("log".into(), "1:<2>".into())],
            overlaps: vec!["sim-3 (term 2) and sim-4 (term 1) believed they led at once for 377 ms".into()],
            fencing: Some(crate::record::FencingRecord {
                writes: 40,
                stale: 3,
                stale_accepted: 0,
                stale_accepted_unfenced: 3,
                truncated: false,
            }),
            ..record()
        };
        let page = render(&kept, false);
        assert!(page.contains("Options: <code>lease=true</code>, <code>log=1:&lt;2&gt;</code>."), "{page}");
        assert!(
            page.contains("<h2>Two leaders at once</h2><ul id=\"overlaps\"><li>sim-3 (term 2) and sim-4"),
            "{page}"
        );
        assert!(page.contains("3 stale: 0 accepted with fencing, 3 without</p>"), "{page}");
        let plain = render(&ElectionRecord { keep_leader: true, ..record() }, false);
        assert!(!plain.contains("Two leaders at once") && !plain.contains("Options:") && !plain.contains("Fencing"));
    }
}
