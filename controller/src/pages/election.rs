//! The pages of elections: the index, one election's page with its
//! step-through, and its record as JSON.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};

use super::{HEAD, escape, not_found};
use crate::elections::Elections;
use crate::record::{ElectionRecord, Mode};

/// At most this many elections are listed on the index.
pub const MAX_LISTED: usize = 500;

/// The index of recent elections.
pub(super) async fn index(State(elections): State<Arc<Elections>>) -> Html<String> {
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

pub(super) async fn record_json(State(elections): State<Arc<Elections>>, Path(id): Path<String>) -> Response {
    let Some(entry) = elections.get(&id) else { return not_found(&id) };
    let mut r = entry.snapshot();
    r.diagram_svg = None;
    match serde_json::to_string(&r) {
        Ok(json) => ([(header::CONTENT_TYPE, "application/json")], json).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

/// One election's page.
pub(super) async fn page(State(elections): State<Arc<Elections>>, Path(id): Path<String>) -> Response {
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
pub(super) const SCRIPT: &str = r##""use strict";
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
}
