//! The pages of elections: the index, one election's page with its
//! step-through, and its record as JSON.

use std::fmt::Write as _;

use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};

use super::{HEAD, Pages, escape, not_found};
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
            body.push_str(
                "<h2>Step through it</h2><div class=\"controls\">\
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
                 <span id=\"where\"></span></div>\
                 <div class=\"stage\"><div id=\"topology\"></div><div id=\"info\">Step to watch the election unfold: \
                 each send, arrival and change of state is a step. Point at an arrow to see its message; click it to keep it here.</div></div>\
                 <h2>Space-time diagram</h2><div id=\"diagram\">",
            );
            body.push_str(svg);
            body.push_str("</div>");
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
        body.push_str(
            "<h2>Break it</h2><div class=\"stage\"><div id=\"topology\">The topology is being read.</div>\
             <div id=\"faults\"><p>Click nodes on the topology to select them, then:</p><p class=\"controls\">\
             <button id=\"crash\">crash</button><button id=\"recover\">recover</button>\
             <button id=\"partition\">cut off from the rest</button><button id=\"heal\">clear every fault</button>\
             <button id=\"stop\">stop the leadership</button></p>\
             <form id=\"token-row\"><label>Controller token <input id=\"token\" type=\"password\" autocomplete=\"off\"></label></form>\
             <p id=\"fault-status\"></p></div></div>",
        );
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
        "{HEAD}<title>{alg} {id} · ringleader</title></head><body data-election=\"{id}\" data-running=\"{running}\" data-drawn=\"{drawn}\" data-token-required=\"{token_required}\">\
         {body}<script>{SCRIPT}</script></body></html>",
        alg = escape(r.algorithm),
        drawn = r.diagram_drawn,
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
  const SVGNS = "http://www.w3.org/2000/svg";
  const svg = document.querySelector("#diagram svg");
  const info = document.getElementById("info");
  const slider = document.getElementById("slider");
  const where = document.getElementById("where");
  const play = document.getElementById("play");
  const speed = document.getElementById("speed");
  const unit = svg ? svg.dataset.unit || "" : "";
  // Zoom: the diagram at a multiple of its own width, scrolled sideways; "fit" fits the page.
  const zoom = document.getElementById("zoom");
  if (svg && zoom) {
    const natural = Number(svg.getAttribute("width"));
    zoom.addEventListener("change", () => {
      const z = Number(zoom.value);
      svg.style.maxWidth = z === 1 ? "" : "none";
      svg.style.width = z === 1 ? "" : String(Math.round(natural * z)) + "px";
    });
  }
  let pinned = null;
  let timer = null;

  // What the diagram holds: arrows in sending order, state bands, timed marks.
  const arrows = svg ? Array.from(svg.querySelectorAll(".msg[data-step]")) : [];
  const labels = svg ? Array.from(svg.querySelectorAll(".label[data-step]")) : [];
  const timed = svg ? Array.from(svg.querySelectorAll(".mark, .down, .recover, .partition, .term")) : [];
  const bands = svg ? Array.from(svg.querySelectorAll("rect.state")) : [];
  const labelOf = new Map(labels.map((l) => [Number(l.dataset.step), l]));
  const num = (e, a) => Number(e.getAttribute(a));

  // Each arrow's geometry: where it leaves and arrives, and its parts to show half drawn in flight.
  const shapes = arrows.map((a) => {
    const lines = a.tagName === "line" ? [a] : Array.from(a.querySelectorAll("line"));
    const first = lines[0], last = lines[lines.length - 1];
    return { first, last, lines, x1: num(first, "x1"), x2: num(last, "x2"), full: [num(first, "x2"), num(first, "y2")] };
  });

  // Every event on one time line: sends, arrivals and changes of state, in time order (at one
  // moment arrivals first, then the states they cause, then the sends).
  const events = [];
  arrows.forEach((a, i) => {
    events.push({ t: Number(a.dataset.at), rank: 2, kind: "send", i, x: shapes[i].x1 });
    if (a.dataset.arrive !== "lost") events.push({ t: Number(a.dataset.arrive), rank: 0, kind: "arrive", i, x: shapes[i].x2 });
  });
  const baseline = new Map();
  bands.forEach((b, i) => {
    const p = Number(b.dataset.position);
    // Each node's first state is where it starts (logged at time 0), before any event.
    if (!baseline.has(p)) { baseline.set(p, i); return; }
    events.push({ t: Number(b.dataset.at), rank: 1, kind: "state", i, x: num(b, "x") });
  });
  events.forEach((e, j) => { e.j = j; });
  events.sort((a, b) => a.t - b.t || a.rank - b.rank || a.j - b.j);
  const total = events.length;
  let shown = 0;

  // Per node: its bands in effect, the last one drawn up to the cursor.
  const bandWidth = bands.map((b) => num(b, "width"));
  const current = new Map(baseline);
  const previous = bands.map(() => null);

  // The "now" cursor across the diagram.
  let cursor = null;
  if (svg) {
    cursor = document.createElementNS(SVGNS, "line");
    cursor.setAttribute("id", "now");
    cursor.setAttribute("y1", svg.dataset.top || "40");
    cursor.setAttribute("y2", svg.dataset.bottom || "100");
    cursor.setAttribute("stroke", "#000");
    cursor.setAttribute("stroke-width", "1");
    cursor.setAttribute("stroke-dasharray", "4 3");
    svg.appendChild(cursor);
  }

  // The topology, drawn from the record (ids, links), its nodes coloured by state.
  const topo = { nodes: [], dots: new Map(), at: null, dotLayer: null, participants: [] };
  // A running leadership has no diagram yet: its nodes are coloured by what they last believed.
  const beliefs = new Map();
  const BELIEF_COLOUR = { leader: "#D55E00", follower: "#0072B2", electing: "#E69F00", down: "#999999" };
  const down = new Set();

  function readBeliefs(r) {
    down.clear();
    for (const p of r.down || []) down.add(p);
    for (const c of r.timeline) {
      const own = r.participants[c.position];
      beliefs.set(c.position, c.leader_id === null ? "electing" : own && own.id === c.leader_id ? "leader" : "follower");
    }
  }
  const topoBox = document.getElementById("topology");

  function drawTopology(r) {
    if (!topoBox) return;
    const n = r.participants.length;
    if (n === 0 || r.links.length === 0) {
      topoBox.textContent = "The topology is drawn for elections of at most 64 nodes.";
      return;
    }
    topo.participants = r.participants;
    const size = 300, mid = size / 2, radius = n > 24 ? 9 : 14;
    const pic = document.createElementNS(SVGNS, "svg");
    pic.setAttribute("viewBox", "0 0 " + size + " " + size);
    pic.setAttribute("width", String(size));
    pic.setAttribute("height", String(size));
    pic.setAttribute("id", "topology-view");
    let at;
    if (r.topology === "Mesh") {
      const cols = Math.ceil(Math.sqrt(n)), rows = Math.ceil(n / cols), step = (size - 60) / Math.max(cols - 1, rows - 1, 1);
      at = (p) => [30 + (p % cols) * step, 30 + Math.floor(p / cols) * step];
    } else {
      const ring = mid - 30;
      at = (p) => [mid + ring * Math.sin(2 * Math.PI * p / n), mid - ring * Math.cos(2 * Math.PI * p / n)];
    }
    topo.at = at;
    for (const [a, b] of r.links) {
      const line = document.createElementNS(SVGNS, "line");
      const [xa, ya] = at(a), [xb, yb] = at(b);
      line.setAttribute("x1", xa); line.setAttribute("y1", ya); line.setAttribute("x2", xb); line.setAttribute("y2", yb);
      line.setAttribute("stroke", "#bbb");
      pic.appendChild(line);
    }
    topo.dotLayer = document.createElementNS(SVGNS, "g");
    for (const part of r.participants) {
      const [x, y] = at(part.position);
      const g = document.createElementNS(SVGNS, "g");
      g.setAttribute("class", "topo-node");
      g.dataset.position = String(part.position);
      const c = document.createElementNS(SVGNS, "circle");
      c.setAttribute("cx", x); c.setAttribute("cy", y); c.setAttribute("r", String(radius));
      c.setAttribute("stroke", "#333");
      const t = document.createElementNS(SVGNS, "text");
      t.setAttribute("x", x); t.setAttribute("y", y + 4); t.setAttribute("text-anchor", "middle");
      t.setAttribute("font-size", n > 24 ? "8" : "11");
      t.textContent = String(part.id);
      const title = document.createElementNS(SVGNS, "title");
      g.append(c, t, title);
      pic.appendChild(g);
      topo.nodes[part.position] = { g, c, title, id: part.id };
    }
    pic.appendChild(topo.dotLayer);
    topoBox.textContent = "";
    topoBox.appendChild(pic);
    const legend = document.createElement("p");
    legend.id = "topology-legend";
    topoBox.appendChild(legend);
    paintNodes();
  }

  function paintNodes() {
    const seen = new Map();
    for (let p = 0; p < topo.nodes.length; p++) {
      const node = topo.nodes[p];
      if (!node) continue;
      let state = "unknown", colour = "#fff";
      if (svg) {
        const i = current.get(p);
        if (i !== undefined) { state = bands[i].dataset.state; colour = bands[i].dataset.colour; }
      } else if (down.has(p)) {
        state = "down";
        colour = BELIEF_COLOUR.down;
      } else if (beliefs.has(p)) {
        state = beliefs.get(p);
        colour = BELIEF_COLOUR[state];
      }
      node.c.setAttribute("fill", colour);
      node.g.dataset.state = state;
      node.title.textContent = "id " + node.id + " (position " + p + "): " + state;
      seen.set(state, colour);
    }
    const legend = document.getElementById("topology-legend");
    if (legend) {
      legend.textContent = svg && bands.length === 0
        ? "Node states are drawn for SIMULATED elections; a LIVE election's nodes log their messages only."
        : Array.from(seen.keys()).sort().join(" · ");
    }
  }

  function placeDot(i) {
    const dot = topo.dots.get(i);
    if (!dot || !topo.at) return;
    const a = arrows[i].dataset;
    const from = Number(a.fromPosition), to = Number(a.toPosition);
    const sent = Number(a.at), arrive = a.arrive === "lost" ? sent + 1 : Number(a.arrive);
    const now = shown > 0 ? events[shown - 1].t : 0;
    const f = Math.min(0.85, Math.max(0.15, arrive > sent ? (now - sent) / (arrive - sent) : 0.5));
    const [xa, ya] = topo.at(from), [xb, yb] = topo.at(to);
    dot.setAttribute("cx", xa + (xb - xa) * f);
    dot.setAttribute("cy", ya + (yb - ya) * f);
  }

  // Apply (or undo) one event.
  function apply(e, forward) {
    if (e.kind === "send" || e.kind === "arrive") {
      const a = arrows[e.i], sh = shapes[e.i];
      const flight = (e.kind === "send") === forward;
      const visible = forward || e.kind === "arrive";
      a.style.display = visible ? "" : "none";
      const label = labelOf.get(e.i);
      if (flight && visible && a.dataset.arrive !== "lost") {
        // In flight: drawn half way, its second part (round the ring) not yet.
        const [fx, fy] = sh.full;
        const x1 = num(sh.first, "x1"), y1 = num(sh.first, "y1");
        sh.first.setAttribute("x2", String((x1 + fx) / 2));
        sh.first.setAttribute("y2", String((y1 + fy) / 2));
        if (sh.lines.length > 1) sh.last.style.display = "none";
        a.classList.add("flight");
        if (label) label.style.display = "none";
        if (topo.at && !topo.dots.has(e.i)) {
          const dot = document.createElementNS(SVGNS, "circle");
          dot.setAttribute("r", "4");
          dot.setAttribute("class", "dot");
          dot.setAttribute("fill", sh.first.getAttribute("stroke") || "#333");
          topo.dotLayer.appendChild(dot);
          topo.dots.set(e.i, dot);
        }
      } else {
        sh.first.setAttribute("x2", String(sh.full[0]));
        sh.first.setAttribute("y2", String(sh.full[1]));
        if (sh.lines.length > 1) sh.last.style.display = "";
        a.classList.remove("flight");
        if (label) label.style.display = visible ? "" : "none";
        const dot = topo.dots.get(e.i);
        if (dot) { dot.remove(); topo.dots.delete(e.i); }
      }
    } else {
      const b = bands[e.i], p = Number(b.dataset.position);
      if (forward) {
        previous[e.i] = current.has(p) ? current.get(p) : null;
        current.set(p, e.i);
        b.style.display = "";
      } else {
        b.style.display = "none";
        if (previous[e.i] === null) current.delete(p); else current.set(p, previous[e.i]);
      }
    }
  }

  function describeArrow(a, prefix) {
    const d = a.dataset;
    const received = d.received === "lost" ? "lost" : "received at " + d.received + " " + unit;
    const carries = d.carries ? ", carrying " + d.carries : "";
    info.textContent = prefix + d.kind + " from " + d.from + " to " + d.to + ": sent at " + d.sent + " " + unit + ", " +
      received + "; causal time " + d.causal + carries;
  }

  function describeEvent(e, k) {
    const head = "step " + k + " of " + total + ": ";
    if (e.kind === "state") {
      const b = bands[e.i];
      const node = topo.nodes[Number(b.dataset.position)];
      const who = node ? "id " + node.id : "position " + b.dataset.position;
      info.textContent = head + who + " becomes " + b.dataset.state;
    } else {
      describeArrow(arrows[e.i], head + (e.kind === "send" ? "sends " : "receives "));
    }
  }

  function show(k) {
    k = Math.max(0, Math.min(total, k));
    while (shown < k) apply(events[shown++], true);
    while (shown > k) apply(events[--shown], false);
    const now = shown > 0 ? events[shown - 1].t : -1;
    const x = shown > 0 ? events[shown - 1].x : (shapes[0] ? shapes[0].x1 : 0);
    if (cursor) {
      cursor.setAttribute("x1", String(x)); cursor.setAttribute("x2", String(x));
      cursor.style.display = shown === total ? "none" : "";
    }
    // Each node's state band in effect ends at the cursor (all of it at the end).
    for (const [, i] of current) {
      const b = bands[i], bx = num(b, "x");
      b.setAttribute("width", String(shown === total ? bandWidth[i] : Math.max(0, Math.min(bandWidth[i], x - bx))));
    }
    for (const e of timed) e.style.display = shown === total || Number(e.dataset.at) <= now ? "" : "none";
    for (const i of topo.dots.keys()) placeDot(i);
    paintNodes();
    slider.value = String(shown);
    where.textContent = shown === total ? "all " + total + " events (" + arrows.length + " messages drawn)" :
      "event " + shown + " of " + total + (shown > 0 ? ", at " + events[shown - 1].t + " " + (svg.dataset.axis || unit) : "");
    if (pinned) describeArrow(pinned, "pinned: ");
    else if (shown > 0 && shown < total) describeEvent(events[shown - 1], shown);
  }

  function stop() {
    if (timer !== null) clearInterval(timer);
    timer = null;
    play.textContent = "▶ play";
  }

  function start() {
    if (shown >= total) show(0);
    play.textContent = "❚❚ pause";
    timer = setInterval(() => { if (shown >= total) stop(); else show(shown + 1); }, 600 / Number(speed.value));
  }

  if (svg) {
    // Each arrow's ends by position, for the dots on the topology.
    const rows = Array.from(svg.querySelectorAll("line.node"));
    const rowOf = (y) => rows.findIndex((r) => Math.abs(num(r, "y1") - y) < 1);
    arrows.forEach((a, i) => {
      const sh = shapes[i];
      a.dataset.fromPosition = String(rowOf(num(sh.first, "y1")));
      a.dataset.toPosition = String(rowOf(sh.lines.length > 1 || a.dataset.arrive !== "lost" ? num(sh.last, "y2") : num(sh.first, "y1")));
    });
    slider.max = String(total);
    document.getElementById("first").addEventListener("click", () => { stop(); show(0); });
    document.getElementById("back").addEventListener("click", () => { stop(); show(shown - 1); });
    document.getElementById("forward").addEventListener("click", () => { stop(); show(shown + 1); });
    document.getElementById("last").addEventListener("click", () => { stop(); show(total); });
    slider.addEventListener("input", () => { stop(); show(Number(slider.value)); });
    play.addEventListener("click", () => { if (timer !== null) stop(); else start(); });
    speed.addEventListener("change", () => { if (timer !== null) { stop(); start(); } });
    document.addEventListener("keydown", (ev) => {
      if (ev.target instanceof HTMLInputElement || ev.target instanceof HTMLSelectElement) return;
      const keys = { ArrowRight: () => show(shown + 1), ArrowLeft: () => show(shown - 1), Home: () => show(0), End: () => show(total) };
      if (keys[ev.key]) { stop(); keys[ev.key](); ev.preventDefault(); }
      else if (ev.key === " ") { if (timer !== null) stop(); else start(); ev.preventDefault(); }
    });
    for (const a of arrows) {
      a.addEventListener("mouseenter", () => { if (!pinned) describeArrow(a, ""); });
      a.addEventListener("click", (ev) => {
        ev.stopPropagation();
        if (pinned) pinned.classList.remove("pinned");
        pinned = pinned === a ? null : a;
        if (pinned) { pinned.classList.add("pinned"); describeArrow(a, "pinned: "); }
      });
    }
    svg.addEventListener("click", () => { if (pinned) { pinned.classList.remove("pinned"); pinned = null; } });
    show(total);
    fetch("/elections/" + encodeURIComponent(ELECTION) + "/record.json")
      .then((r) => r.ok ? r.json() : null)
      .then((r) => { if (r) { drawTopology(r); show(shown); } })
      .catch(() => { if (topoBox) topoBox.textContent = "The topology could not be read."; });
  }
  if (RUNNING) {
    // Follow the election: its verdict line and a kept leadership's tables; reload when it ends.
    const verdict = document.getElementById("verdict");
    let drawnSeen = Number(document.body.dataset.drawn || "0");
    const follow = async () => {
      try {
        const response = await fetch("/elections/" + encodeURIComponent(ELECTION) + "/record.json");
        if (!response.ok) return;
        const r = await response.json();
        if (r.state === "Finished" || r.state === "Failed") { location.reload(); return; }
        if (!svg && topoBox) {
          if (topo.nodes.length === 0) drawTopology(r);
          readBeliefs(r);
          paintNodes();
        }
        const leader = r.leader ? r.leader.node + " (id " + r.leader.id + ")" : "no leader yet";
        verdict.textContent = "RUNNING: " + leader + (r.term ? ", term " + r.term : "") +
          (r.agreed ? ", agreed" : ", not agreed") + "; " + r.timeline.length + " changes of belief, " +
          r.failovers.length + " failover(s)";
        const soFar = document.getElementById("diagram-so-far");
        if (soFar && r.diagram_drawn !== drawnSeen) {
          const picture = await fetch("/elections/" + encodeURIComponent(ELECTION) + "/diagram.svg");
          if (picture.ok) {
            const doc = new DOMParser().parseFromString(await picture.text(), "image/svg+xml");
            soFar.replaceChildren(document.importNode(doc.documentElement, true));
            drawnSeen = r.diagram_drawn;
          }
        }
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
    };
    follow();
    setInterval(follow, 1000);
  }

  // Breaking a running leadership: select nodes on the topology, then crash, recover or cut them off.
  const faultPanel = document.getElementById("faults");
  if (faultPanel) {
    const selected = new Set();
    const status = document.getElementById("fault-status");
    const token = document.getElementById("token");
    document.getElementById("token-row").hidden = document.body.dataset.tokenRequired !== "true";
    token.value = sessionStorage.getItem("ringleader-token") || "";
    token.form.addEventListener("submit", (ev) => ev.preventDefault());
    topoBox.addEventListener("click", (ev) => {
      const g = ev.target.closest(".topo-node");
      if (!g) return;
      const p = Number(g.dataset.position);
      if (selected.has(p)) selected.delete(p); else selected.add(p);
      g.classList.toggle("selected", selected.has(p));
    });
    const act = async (action) => {
      sessionStorage.setItem("ringleader-token", token.value);
      const names = (ps) => ps.map((p) => topo.participants[p].node);
      const body = { election_id: ELECTION, action, nodes: names(Array.from(selected)),
        all: names(topo.participants.map((x) => x.position)) };
      const headers = { "content-type": "application/json", "x-ringleader-lab": "1" };
      if (token.value) headers.authorization = "Bearer " + token.value;
      status.textContent = action + "…";
      try {
        const response = await fetch("/lab/act", { method: "POST", headers, body: JSON.stringify(body) });
        const answer = await response.json();
        status.textContent = response.ok ? answer.done : answer.message;
        status.className = response.ok ? "ok" : "error";
        if (response.ok) {
          selected.clear();
          for (const g of topoBox.querySelectorAll(".topo-node.selected")) g.classList.remove("selected");
        }
      } catch (e) {
        status.textContent = "the controller did not answer: " + e;
      }
    };
    for (const [id, action] of [["crash", "crash"], ["recover", "recover"], ["partition", "partition"], ["heal", "clear"], ["stop", "stop"]]) {
      document.getElementById(id).addEventListener("click", () => act(action));
    }
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
}
