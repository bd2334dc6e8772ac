//! The election pages: what the controller's HTTP port (the one serving
//! Prometheus `/metrics`) shows a browser.
//!
//! * `/elections`: the index of recent elections, most recent first, each
//!   linking to its page.
//! * `/elections/{id}`: one election: its verdict, its metrics against the
//!   literature's bound, a kept leadership's terms, timeline and failovers,
//!   and its space-time diagram (when the election was started with
//!   `diagram` or `diagram_options`) with step-through (play, pause, step
//!   forward and back, a slider) and a panel describing the message under
//!   the pointer (kind, ends, times, causal time, what it carries). A page of
//!   an election still running reads `record.json` every second and shows
//!   what changed (a kept leadership's new terms and failovers); it reloads
//!   once the election ends, diagram included.
//! * `/elections/{id}/record.json`: the record as JSON, without the diagram.
//!
//! Everything is inline (HTML, CSS, SVG, script): no external asset, so
//! the page works offline and from behind a port-forward. Like `/metrics`
//! the pages are read-only and not authenticated; keep the port inside the
//! cluster (or behind `kubectl port-forward`) if records are sensitive.
//!
//! Every response carries [`policy`] as its `Content-Security-Policy`: the
//! one script and the one style sheet run by their hashes (the same text on
//! every page: an election's id and state reach the script as `data-`
//! attributes of `<body>`), `record.json` may be fetched, and nothing else
//! loads, runs or frames the pages, so a record's text that slipped through
//! the escaping still could not run.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;

use crate::elections::Elections;
use crate::record::{ElectionRecord, Mode};

/// At most this many elections are listed on the index.
pub const MAX_LISTED: usize = 500;

/// The routes of the pages, over the store `elections`.
pub fn router(elections: Arc<Elections>) -> axum::Router {
    axum::Router::new()
        .route("/", get(|| async { axum::response::Redirect::to("/elections") }))
        .route("/elections", get(index))
        .route("/elections/{id}", get(page))
        .route("/elections/{id}/record.json", get(record_json))
        .with_state(elections)
        .layer(axum::middleware::map_response(with_policy))
}

/// The pages' `Content-Security-Policy` (see the module docs).
pub fn policy() -> &'static str {
    static POLICY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    POLICY.get_or_init(|| {
        format!(
            "default-src 'none'; script-src {}; style-src {}; img-src data:; connect-src 'self'; \
             base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
            hash_source(SCRIPT),
            hash_source(STYLE)
        )
    })
}

/// The `'sha256-…'` source that allows an inline element whose text is `text`.
fn hash_source(text: &str) -> String {
    use base64::Engine as _;
    let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    format!("'sha256-{}'", base64::engine::general_purpose::STANDARD.encode(digest.as_ref()))
}

async fn with_policy(mut response: Response) -> Response {
    if let Ok(value) = HeaderValue::from_str(policy()) {
        response.headers_mut().insert(header::CONTENT_SECURITY_POLICY, value);
    }
    response
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn not_found(id: &str) -> Response {
    let body = format!(
        "{HEAD}<title>No election · ringleader</title></head><body><nav><a href=\"/elections\">All elections</a></nav>\
         <h1>No election <code>{}</code></h1><p>The controller keeps the most recent elections only \
         (<code>max_elections</code>); see the index.</p></body></html>",
        escape(id)
    );
    (StatusCode::NOT_FOUND, Html(body)).into_response()
}

/// The pages' style sheet (a macro, for [`HEAD`] to inline it and [`STYLE`] to name it).
macro_rules! style {
    () => {
        r#"
body { font-family: sans-serif; margin: 1.2em 2em; color: #222; }
h1 { font-size: 1.4em; margin-bottom: 0.2em; }
table { border-collapse: collapse; margin: 0.6em 0; }
th, td { border-bottom: 1px solid #ddd; padding: 3px 10px; text-align: left; font-size: 0.92em; }
th { background: #f4f4f4; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.state { font-weight: bold; }
.ok { color: #176117; } .bad { color: #b00; } .running { color: #a65f00; }
.controls { margin: 0.6em 0; display: flex; gap: 0.4em; align-items: center; flex-wrap: wrap; }
.controls button { font-size: 1em; min-width: 2.4em; }
#slider { width: 22em; }
#diagram svg { max-width: 100%; height: auto; border: 1px solid #eee; }
#diagram .msg { cursor: pointer; }
#diagram .msg:hover, #diagram .msg.latest { stroke-width: 3; filter: drop-shadow(0 0 2px #fc0); }
#info { min-height: 2.6em; background: #fafafa; border: 1px solid #eee; padding: 0.4em 0.7em; font-size: 0.92em; }
code { background: #f4f4f4; padding: 0 3px; }
"#
    };
}

/// The text of the pages' one `<style>` element, allowed by its hash.
const STYLE: &str = style!();

const HEAD: &str = concat!(
    r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,"><style>"#,
    style!(),
    "</style>"
);

/// The index of recent elections.
async fn index(State(elections): State<Arc<Elections>>) -> Html<String> {
    let mut rows = String::new();
    for entry in elections.list().iter().take(MAX_LISTED) {
        entry.inspect(|r| index_row(&mut rows, r));
    }
    let empty = if rows.is_empty() {
        "<p>No election yet: start one (docs/api.md: <code>grpcurl … StartElection</code>) and reload.</p>"
    } else {
        ""
    };
    Html(format!(
        "{HEAD}<title>Elections · ringleader</title></head><body><h1>Elections</h1>\
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

fn bound_text(bound: u64) -> String {
    if bound == 0 { "none".to_string() } else { bound.to_string() }
}

fn mode_text(r: &ElectionRecord) -> &'static str {
    match (r.mode, r.keep_leader) {
        (Mode::Live, true) => "LIVE, kept",
        (Mode::Live, false) => "LIVE",
        (Mode::Simulated, _) => "SIMULATED",
    }
}

fn state_text(r: &ElectionRecord) -> String {
    format!("{:?}", r.state).to_uppercase()
}

fn state_class(r: &ElectionRecord) -> &'static str {
    use crate::record::State;
    match r.state {
        State::Pending | State::Running => "running",
        State::Finished if r.violations.is_empty() && (r.agreed || r.keep_leader) => "ok",
        _ => "bad",
    }
}

/// The verdict in one line.
fn verdict(r: &ElectionRecord) -> String {
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

async fn record_json(State(elections): State<Arc<Elections>>, Path(id): Path<String>) -> Response {
    let Some(entry) = elections.get(&id) else { return not_found(&id) };
    let mut r = entry.snapshot();
    r.diagram_svg = None;
    match serde_json::to_string(&r) {
        Ok(json) => ([(header::CONTENT_TYPE, "application/json")], json).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

/// One election's page.
async fn page(State(elections): State<Arc<Elections>>, Path(id): Path<String>) -> Response {
    let Some(entry) = elections.get(&id) else { return not_found(&id) };
    Html(render(&entry.snapshot())).into_response()
}

/// The page of `r` (see the module docs).
pub fn render(r: &ElectionRecord) -> String {
    let mut body = String::new();
    let id = escape(&r.id);
    let _ = write!(
        body,
        "<nav><a href=\"/elections\">All elections</a></nav><h1>{alg} · {mode} · n = {n}, k = {k}</h1>\
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
    if !r.violations.is_empty() {
        body.push_str("<h2>Violations</h2><ul class=\"bad\">");
        for v in &r.violations {
            let _ = write!(body, "<li>{}</li>", escape(v));
        }
        body.push_str("</ul>");
    }
    if let Some(m) = &r.metrics {
        let ratio = if m.bound > 0 { format!("{:.3}", m.bound_ratio()) } else { "–".into() };
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
        Some(svg) => {
            body.push_str(
                "<h2>Space-time diagram</h2><div class=\"controls\">\
                 <button id=\"first\" title=\"before the first message\">|◀ start</button>\
                 <button id=\"back\" title=\"one message back\">◀ back</button>\
                 <button id=\"play\" title=\"play / pause\">▶ play</button>\
                 <button id=\"forward\" title=\"one message forward\">forward ▶</button>\
                 <button id=\"last\" title=\"every message\">end ▶|</button>\
                 <input type=\"range\" id=\"slider\" min=\"0\" max=\"0\" value=\"0\"><span id=\"where\"></span></div>\
                 <div id=\"info\">Point at an arrow to see its message; step to watch the election unfold.</div><div id=\"diagram\">",
            );
            body.push_str(svg);
            body.push_str("</div>");
        }
        None => body.push_str(
            "<h2>Space-time diagram</h2><p id=\"no-diagram\">Not drawn: start the election with <code>\"diagram\": true</code> \
             (or <code>\"diagram_options\": {\"axis\": \"DIAGRAM_AXIS_CAUSAL\", \"labels\": true}</code>) to draw it; \
             a kept leadership's diagram is drawn when it stops.</p>",
        ),
    }
    if r.keep_leader {
        body.push_str("<h2>Failovers</h2><table id=\"failovers\"><tr><th>lost leader</th><th>term</th><th>cause</th><th>lost at</th><th>detection</th><th>agreement</th><th>new leader</th><th>messages</th></tr>");
        body.push_str(&failover_rows(r));
        body.push_str("</table><h2>Timeline</h2><table id=\"timeline\"><tr><th>at</th><th>node</th><th>term</th><th>believes</th></tr>");
        body.push_str(&timeline_rows(r));
        body.push_str("</table>");
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
        "{HEAD}<title>{alg} {id} · ringleader</title></head><body data-election=\"{id}\" data-running=\"{running}\">\
         {body}<script>{SCRIPT}</script></body></html>",
        alg = escape(r.algorithm),
    )
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
            escape(f.cause),
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

/// Step-through, hover and live updates; plain DOM, no library. The text of
/// the pages' one `<script>` element, allowed by its hash.
const SCRIPT: &str = r##""use strict";
(function () {
  const ELECTION = document.body.dataset.election;
  const RUNNING = document.body.dataset.running === "true";
  const svg = document.querySelector("#diagram svg");
  const arrows = svg ? Array.from(svg.querySelectorAll(".msg[data-step]")) : [];
  const labels = svg ? Array.from(svg.querySelectorAll(".label[data-step]")) : [];
  const timed = svg ? Array.from(svg.querySelectorAll(".mark, .down, .recover, .partition, .term")) : [];
  const info = document.getElementById("info");
  const slider = document.getElementById("slider");
  const where = document.getElementById("where");
  const play = document.getElementById("play");
  const total = arrows.length;
  let shown = total;
  let timer = null;

  function describe(a, prefix) {
    const d = a.dataset;
    const received = d.received === "lost" ? "lost" : "received " + d.received;
    const carries = d.carries ? ", carries " + d.carries : "";
    info.textContent = prefix + d.kind + " from " + d.from + " to " + d.to + ": sent " + d.sent + ", " + received +
      "; causal time " + d.causal + carries;
  }

  function show(k) {
    shown = Math.max(0, Math.min(total, k));
    const limit = shown === total ? Infinity : (shown === 0 ? -1 : Number(arrows[shown - 1].dataset.at));
    for (const a of arrows) {
      const step = Number(a.dataset.step);
      a.style.display = step < shown ? "" : "none";
      a.classList.toggle("latest", shown < total && step === shown - 1);
    }
    for (const l of labels) l.style.display = Number(l.dataset.step) < shown ? "" : "none";
    for (const e of timed) e.style.display = Number(e.dataset.at) <= limit ? "" : "none";
    slider.value = String(shown);
    where.textContent = shown === total ? "all " + total + " messages" : "message " + shown + " of " + total;
    if (shown > 0 && shown < total) describe(arrows[shown - 1], "step " + shown + ": ");
  }

  function stop() {
    if (timer !== null) clearInterval(timer);
    timer = null;
    play.textContent = "▶ play";
  }

  if (svg) {
    slider.max = String(total);
    document.getElementById("first").addEventListener("click", () => { stop(); show(0); });
    document.getElementById("back").addEventListener("click", () => { stop(); show(shown - 1); });
    document.getElementById("forward").addEventListener("click", () => { stop(); show(shown + 1); });
    document.getElementById("last").addEventListener("click", () => { stop(); show(total); });
    slider.addEventListener("input", () => { stop(); show(Number(slider.value)); });
    play.addEventListener("click", () => {
      if (timer !== null) { stop(); return; }
      if (shown >= total) show(0);
      play.textContent = "❚❚ pause";
      timer = setInterval(() => { if (shown >= total) stop(); else show(shown + 1); }, 400);
    });
    for (const a of arrows) a.addEventListener("mouseenter", () => describe(a, ""));
    show(total);
  }

  if (RUNNING) {
    // Follow the election: its verdict line and a kept leadership's tables; reload when it ends.
    const verdict = document.getElementById("verdict");
    setInterval(async () => {
      try {
        const response = await fetch("/elections/" + encodeURIComponent(ELECTION) + "/record.json");
        if (!response.ok) return;
        const r = await response.json();
        if (r.state === "Finished" || r.state === "Failed") { location.reload(); return; }
        const leader = r.leader ? r.leader.node + " (id " + r.leader.id + ")" : "no leader yet";
        verdict.textContent = "RUNNING: " + leader + (r.term ? ", term " + r.term : "") +
          (r.agreed ? ", agreed" : ", not agreed") + "; " + r.timeline.length + " changes of belief, " +
          r.failovers.length + " failover(s)";
        const failovers = document.getElementById("failovers");
        if (failovers) {
          while (failovers.rows.length > 1) failovers.deleteRow(1);
          for (const f of r.failovers) {
            const row = failovers.insertRow();
            const cells = [f.leader.node, f.term, f.cause, f.lost_at_ms + " ms",
              f.detection_ms === null ? "–" : f.detection_ms + " ms",
              f.agreement_ms === null ? "–" : f.agreement_ms + " ms",
              f.new_leader ? f.new_leader[0].node + " (term " + f.new_leader[1] + ")" : "–",
              f.messages === null ? "–" : f.messages];
            for (const c of cells) row.insertCell().textContent = String(c);
          }
        }
        const timeline = document.getElementById("timeline");
        if (timeline) {
          for (const c of r.timeline.slice(timeline.rows.length - 1)) {
            const row = timeline.insertRow();
            const cells = [c.at_ms + " ms", c.node, c.term, c.leader_id === null ? "no leader (electing)" : "id " + c.leader_id + " leads"];
            for (const x of cells) row.insertCell().textContent = String(x);
          }
        }
      } catch (e) {
        verdict.textContent = "lost contact with the controller: " + e;
      }
    }, 1000);
  }
})();
"##;

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

    /// The page states the verdict and the metrics against the bound, escapes what it quotes (in its
    /// text and in the `data-` attribute its script reads), and
    /// says how to get a diagram when there is none; with one, it inlines it beside the controls.
    #[test]
    fn the_page_states_verdict_metrics_and_diagram() {
        let page = render(&record());
        assert!(page.contains("FINISHED: every node agrees on node-2 (id 3)"), "{page}");
        assert!(page.contains("<td class=\"n\">6</td><td class=\"n\">9</td><td class=\"n\">0.667</td>"), "{page}");
        // Quoted escaped in the HTML, where the script reads it too.
        assert!(page.contains("<code>e1-&lt;/script&gt;&lt;x&gt;</code>"), "{page}");
        assert!(page.contains(r#"<body data-election="e1-&lt;/script&gt;&lt;x&gt;" data-running="false">"#), "{page}");
        assert_eq!(page.matches("</script>").count(), 1);
        assert!(page.contains("id=\"no-diagram\"") && !page.contains("id=\"slider\""));
        let drawn = render(&ElectionRecord {
            diagram_svg: Some("<svg><line class=\"msg\" data-step=\"0\"/></svg>".into()),
            ..record()
        });
        assert!(drawn.contains("id=\"slider\"") && drawn.contains("<line class=\"msg\" data-step=\"0\"/>"));
        assert!(drawn.contains("data-running=\"false\""));
    }

    /// The texts of the `<tag>` elements of `html`.
    fn inline(html: &str, tag: &str) -> Vec<String> {
        let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
        html.split(&open).skip(1).filter_map(|rest| rest.split_once(&close)).map(|(text, _)| text.to_string()).collect()
    }

    /// Every response of the pages (the index, an election's page, its JSON, a missing election)
    /// carries one Content-Security-Policy that loads nothing from elsewhere, runs no script but the
    /// page's own and may not be framed, and the page's inline script and style sheet are allowed
    /// by their hashes, so the page still works under it. Before, the pages sent no policy.
    #[tokio::test]
    async fn every_page_carries_a_policy_its_inline_script_and_style_meet() {
        use tower::ServiceExt as _;
        let config = crate::config::ControllerConfig::default();
        let cluster = crate::cluster::Cluster::start(&config, &Default::default(), None).await.unwrap();
        let drawn = ElectionRecord {
            id: "e1".into(),
            diagram_svg: Some("<svg><line class=\"msg\" data-step=\"0\"/></svg>".into()),
            ..record()
        };
        let elections = Elections::with_history(cluster, config, None, vec![drawn]);
        let app = router(elections);
        let mut policies = Vec::new();
        let mut page = String::new();
        for (path, status) in [
            ("/elections", StatusCode::OK),
            ("/elections/e1", StatusCode::OK),
            ("/elections/e1/record.json", StatusCode::OK),
            ("/elections/nope", StatusCode::NOT_FOUND),
        ] {
            let request = axum::http::Request::get(path).body(axum::body::Body::empty()).unwrap();
            let response = app.clone().oneshot(request).await.unwrap();
            assert_eq!(response.status(), status, "{path}");
            let policy =
                response.headers().get(header::CONTENT_SECURITY_POLICY).map(|v| v.to_str().unwrap().to_string());
            policies.push(policy.unwrap_or_else(|| panic!("{path}: no Content-Security-Policy")));
            if path == "/elections/e1" {
                let body = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
                page = String::from_utf8(body.to_vec()).unwrap();
            }
        }
        assert!(policies.iter().all(|p| *p == policies[0]), "{policies:?}");
        let directives: Vec<&str> = policies[0].split(';').map(str::trim).collect();
        for wanted in ["default-src 'none'", "frame-ancestors 'none'", "base-uri 'none'", "connect-src 'self'"] {
            assert!(directives.contains(&wanted), "{wanted} in {directives:?}");
        }
        let directive = |name: &str| directives.iter().find(|d| d.starts_with(name)).map(|d| d.to_string());
        let (scripts, styles) = (inline(&page, "script"), inline(&page, "style"));
        assert_eq!((scripts.len(), styles.len()), (1, 1), "{page}");
        let script_src = directive("script-src ").expect("a script-src");
        let style_src = directive("style-src ").expect("a style-src");
        assert!(script_src.contains(&hash_source(&scripts[0])), "{script_src} does not allow the page's script");
        assert!(style_src.contains(&hash_source(&styles[0])), "{style_src} does not allow the page's style");
        assert!(!policies[0].contains("unsafe"), "{}", policies[0]);
        assert!(!page.contains(" style=") && !page.contains(" onclick="), "no inline style or handler attributes");
    }
}
