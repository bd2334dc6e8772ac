"use strict";
// The election pages' script: plain DOM, no library. One election's page
// (<body data-election>) steps through its diagram beside its topology,
// follows it while it runs and breaks a running kept leadership; the
// comparison page (<body data-compare>) steps two elections on one time line.
(function () {
  const SVGNS = "http://www.w3.org/2000/svg";
  const BELIEF_COLOUR = { leader: "#D55E00", follower: "#0072B2", electing: "#E69F00", down: "#999999" };
  // The ring of a node cut off from the rest (as the diagram's partition labels).
  const CUT_COLOUR = "#8a4b08";
  const num = (e, a) => Number(e.getAttribute(a));
  // A call's answer: its JSON, or a refusal saying the status when the body is not JSON.
  async function answerOf(response) {
    const text = await response.text();
    try { return JSON.parse(text); } catch (e) {
      return { code: String(response.status), field: "", message: (response.statusText || "no JSON answer") + (text ? ": " + text.slice(0, 200) : "") };
    }
  }

  // One election's diagram and topology, stepped event by event. `root` holds its `.diagram`,
  // `.topology` and `.info`; `single`: the page's only one (its parts keep their ids).
  function stepper(root, single) {
    const svg = root.querySelector(".diagram svg");
    const info = root.querySelector(".info");
    const topoBox = root.querySelector(".topology");
    const unit = svg ? svg.dataset.unit || "" : "";
    let pinned = null;

    // What the diagram holds: arrows in sending order, state bands, timed marks.
    const arrows = svg ? Array.from(svg.querySelectorAll(".msg[data-step]")) : [];
    const labels = svg ? Array.from(svg.querySelectorAll(".label[data-step]")) : [];
    const timed = svg ? Array.from(svg.querySelectorAll(".mark, .down, .recover, .partition, .term, .leaderless, .two-leaders")) : [];
    const bands = svg ? Array.from(svg.querySelectorAll("rect.state")) : [];
    // Faults: each crash until its recovery, each partition (its smaller groups cut off) until
    // healed; `loss`: a crash or a cut, where a failover starts.
    const until = (e) => e.dataset.until === undefined || e.dataset.until === "never" ? Infinity : Number(e.dataset.until);
    const outages = svg ? Array.from(svg.querySelectorAll(".down[data-position]")).map((e) => ({
      p: Number(e.dataset.position), from: Number(e.dataset.at), until: until(e),
      x: num(e.querySelector("line"), "x1"), xEnd: num(e.querySelector("line"), "x2"),
    })) : [];
    const cuts = svg ? Array.from(svg.querySelectorAll(".partition[data-groups]")).map((e) => {
      const groups = e.dataset.groups.split("|").map((g) => g.split(",").filter((x) => x !== "").map(Number));
      const largest = groups.reduce((m, g) => Math.max(m, g.length), 0);
      const main = groups.findIndex((g) => g.length === largest);
      const r = e.querySelector("rect");
      return { cut: groups.filter((_, i) => i !== main).flat(), from: Number(e.dataset.at), until: until(e),
        x: num(r, "x"), xEnd: num(r, "x") + num(r, "width") };
    }) : [];
    // Rows: the lines and names of the nodes, and the leader's mark (shown once it leads).
    const rowLines = svg ? Array.from(svg.querySelectorAll("line.node")) : [];
    const rowNames = svg ? Array.from(svg.querySelectorAll("g.row")) : [];
    const leadLine = svg ? svg.querySelector("line.node[data-lead]") : null;
    const leadMark = svg ? svg.querySelector("g.row[data-lead] .lead") : null;
    const leadName = svg ? svg.querySelector("g.row[data-lead] text") : null;
    const labelOf = new Map(labels.map((l) => [Number(l.dataset.step), l]));

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
    // The faults, each a step of its own: first at its moment (what arrives then is dropped).
    outages.forEach((o, i) => {
      events.push({ t: o.from, rank: -1, kind: "crash", i, x: o.x, loss: true });
      if (o.until !== Infinity) events.push({ t: o.until, rank: -1, kind: "recover", i, x: o.xEnd });
    });
    cuts.forEach((c, i) => {
      events.push({ t: c.from, rank: -1, kind: "cut", i, x: c.x, loss: true });
      if (c.until !== Infinity) events.push({ t: c.until, rank: -1, kind: "heal", i, x: c.xEnd });
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
      if (single) cursor.setAttribute("id", "now");
      cursor.setAttribute("class", "now");
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
    const down = new Set();

    function readBeliefs(r) {
      down.clear();
      for (const p of r.down || []) down.add(p);
      for (const c of r.timeline) {
        const own = r.participants[c.position];
        beliefs.set(c.position, c.leader_id === null ? "electing" : own && own.id === c.leader_id ? "leader" : "follower");
      }
    }

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
      pic.setAttribute("class", "topology-view");
      if (single) pic.setAttribute("id", "topology-view");
      let at;
      if (r.topology === "Mesh") {
        const cols = Math.ceil(Math.sqrt(n)), rows = Math.ceil(n / cols), step = (size - 60) / Math.max(cols - 1, rows - 1, 1);
        at = (p) => [30 + (p % cols) * step, 30 + Math.floor(p / cols) * step];
      } else if (r.topology === "Torus") {
        // Position 0's neighbours are 1, cols - 1, cols and n - cols: cols is the second largest.
        const around = [...new Set(r.links.filter((l) => l[0] === 0 || l[1] === 0).map((l) => l[0] + l[1]))].sort((x, y) => y - x);
        const cols = around.length > 1 ? around[1] : n, rows = Math.ceil(n / cols), step = (size - 60) / Math.max(cols - 1, rows - 1, 1);
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
        // A red cross over a node that is down.
        const cross = document.createElementNS(SVGNS, "path");
        const k = radius * 0.8;
        cross.setAttribute("d", "M " + (x - k) + " " + (y - k) + " L " + (x + k) + " " + (y + k) + " M " + (x - k) + " " + (y + k) + " L " + (x + k) + " " + (y - k));
        cross.setAttribute("stroke", "#c00"); cross.setAttribute("stroke-width", "3"); cross.setAttribute("class", "down-cross");
        cross.style.display = "none";
        g.append(c, t, cross, title);
        pic.appendChild(g);
        topo.nodes[part.position] = { g, c, title, cross, id: part.id };
      }
      pic.appendChild(topo.dotLayer);
      topoBox.textContent = "";
      topoBox.appendChild(pic);
      const legend = document.createElement("p");
      legend.className = "topology-legend";
      if (single) legend.id = "topology-legend";
      topoBox.appendChild(legend);
      for (const i of topo.dots.keys()) placeDot(i);
      paintNodes();
    }

    // What the faults do at time t (-1: before anything): the positions down and cut off.
    function faultsAt(t) {
      const isDown = new Set(), isCut = new Set();
      for (const o of outages) if (o.from <= t && t < o.until) isDown.add(o.p);
      for (const c of cuts) if (c.from <= t && t < c.until) for (const p of c.cut) isCut.add(p);
      return { isDown, isCut };
    }
    let faultsNow = { isDown: new Set(), isCut: new Set() };

    // The rows as the step shown has them: a node down struck through in red, one cut off in
    // orange italics; a node that leads now bold, and the "(leader)" mark only while its node
    // leads (at the end: the verdict's leader).
    function paintRows() {
      const leading = new Set();
      for (const [p, i] of current) {
        if (bands[i].dataset.state === "leader" && !faultsNow.isDown.has(p)) leading.add(p);
      }
      rowNames.forEach((g) => {
        const p = Number(g.dataset.position);
        g.classList.toggle("is-down", faultsNow.isDown.has(p));
        g.classList.toggle("is-cut", faultsNow.isCut.has(p));
        g.classList.toggle("leading", leading.has(p));
      });
      const leads = leadMark ? Number(leadMark.closest("g.row").dataset.position) : -1;
      const marked = shown === total || (bands.length > 0 && leading.has(leads));
      if (leadMark) leadMark.style.display = marked ? "" : "none";
      if (leadName) leadName.setAttribute("font-weight", marked ? "bold" : "normal");
      if (leadLine) {
        leadLine.setAttribute("stroke", marked ? "#000" : "#999");
        leadLine.setAttribute("stroke-width", marked ? "3" : "1");
      }
      for (const l of rowLines) l.classList.toggle("is-down", faultsNow.isDown.has(Number(l.dataset.position)));
    }

    // A swatch of `colour` for the topology's legend (crossed: down; a dashed brown ring: cut off).
    function swatch(colour, how) {
      const pic = document.createElementNS(SVGNS, "svg");
      pic.setAttribute("width", "14"); pic.setAttribute("height", "14"); pic.setAttribute("class", "swatch");
      const c = document.createElementNS(SVGNS, "circle");
      c.setAttribute("cx", "7"); c.setAttribute("cy", "7"); c.setAttribute("r", "6");
      c.setAttribute("fill", colour); c.setAttribute("stroke", how === "cut" ? CUT_COLOUR : "#333");
      if (how === "cut") { c.setAttribute("stroke-width", "2"); c.setAttribute("stroke-dasharray", "3 2"); }
      pic.appendChild(c);
      if (how === "down") {
        const x = document.createElementNS(SVGNS, "path");
        x.setAttribute("d", "M 3 3 L 11 11 M 3 11 L 11 3"); x.setAttribute("stroke", "#c00"); x.setAttribute("stroke-width", "2");
        pic.appendChild(x);
      }
      return pic;
    }

    function paintNodes() {
      const seen = new Map();
      for (let p = 0; p < topo.nodes.length; p++) {
        const node = topo.nodes[p];
        if (!node) continue;
        let state = "unknown", colour = "#fff", how = "";
        if (svg && faultsNow.isDown.has(p)) {
          state = "down"; colour = BELIEF_COLOUR.down; how = "down";
        } else if (svg) {
          const i = current.get(p);
          if (i !== undefined) { state = bands[i].dataset.state; colour = bands[i].dataset.colour; }
          if (faultsNow.isCut.has(p)) how = "cut";
        } else if (down.has(p)) {
          state = "down";
          colour = BELIEF_COLOUR.down;
        } else if (beliefs.has(p)) {
          state = beliefs.get(p);
          colour = BELIEF_COLOUR[state];
        }
        node.c.setAttribute("fill", colour);
        node.c.setAttribute("stroke", how === "cut" ? CUT_COLOUR : "#333");
        node.c.setAttribute("stroke-width", how === "cut" ? "3" : "1");
        node.c.setAttribute("stroke-dasharray", how === "cut" ? "4 2" : "none");
        node.cross.style.display = how === "down" ? "" : "none";
        node.g.dataset.state = state;
        node.g.classList.toggle("is-down", how === "down");
        node.g.classList.toggle("is-cut", how === "cut");
        node.title.textContent = "id " + node.id + " (position " + p + "): " + state + (how === "cut" ? ", cut off" : "");
        if (how !== "down") seen.set(state, colour);
      }
      const legend = topoBox ? topoBox.querySelector(".topology-legend") : null;
      if (legend) {
        legend.textContent = "";
        if (svg && bands.length === 0) legend.textContent = "The nodes logged no states for this election.";
        const entries = Array.from(seen.keys()).sort().map((s) => [s, seen.get(s), ""]);
        const anyDown = topo.nodes.some((n) => n && n.g.classList.contains("is-down"));
        const anyCut = topo.nodes.some((n) => n && n.g.classList.contains("is-cut"));
        if (anyDown) entries.push(["down", BELIEF_COLOUR.down, "down"]);
        if (anyCut) entries.push(["cut off", "#fff", "cut"]);
        for (const [name, colour, how] of entries) {
          const item = document.createElement("span");
          item.className = "legend-item";
          item.dataset.state = name;
          item.append(swatch(colour, how), document.createTextNode(" " + name));
          legend.appendChild(item);
        }
      }
    }

    function now() { return shown > 0 ? events[shown - 1].t : 0; }

    function placeDot(i) {
      let dot = topo.dots.get(i);
      if (!topo.at) return;
      if (!dot) {
        dot = document.createElementNS(SVGNS, "circle");
        dot.setAttribute("r", "4");
        dot.setAttribute("class", "dot");
        dot.setAttribute("fill", shapes[i].first.getAttribute("stroke") || "#333");
        topo.dotLayer.appendChild(dot);
        topo.dots.set(i, dot);
      }
      const a = arrows[i].dataset;
      const from = Number(a.fromPosition), to = Number(a.toPosition);
      const sent = Number(a.at), arrive = a.arrive === "lost" ? sent + 1 : Number(a.arrive);
      const f = Math.min(0.85, Math.max(0.15, arrive > sent ? (now() - sent) / (arrive - sent) : 0.5));
      const [xa, ya] = topo.at(from), [xb, yb] = topo.at(to);
      dot.setAttribute("cx", xa + (xb - xa) * f);
      dot.setAttribute("cy", ya + (yb - ya) * f);
    }

    // Apply (or undo) one event.
    function apply(e, forward) {
      if (e.kind === "crash" || e.kind === "recover" || e.kind === "cut" || e.kind === "heal") {
        // Faults are read off the time shown (faultsAt).
      } else if (e.kind === "send" || e.kind === "arrive") {
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
          if (!topo.dots.has(e.i)) topo.dots.set(e.i, null);
        } else {
          sh.first.setAttribute("x2", String(sh.full[0]));
          sh.first.setAttribute("y2", String(sh.full[1]));
          if (sh.lines.length > 1) sh.last.style.display = "";
          a.classList.remove("flight");
          if (label) label.style.display = visible ? "" : "none";
          const dot = topo.dots.get(e.i);
          if (dot) dot.remove();
          topo.dots.delete(e.i);
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
      const who = (p) => topo.nodes[p] ? "id " + topo.nodes[p].id : "position " + p;
      if (e.kind === "crash" || e.kind === "recover") {
        info.textContent = head + who(outages[e.i].p) + (e.kind === "crash" ? " crashes" : " recovers") + " at " + e.t + " " + unit;
      } else if (e.kind === "cut" || e.kind === "heal") {
        const ids = cuts[e.i].cut.map(who).join(", ");
        info.textContent = head + (e.kind === "cut" ? ids + " cut off from the rest" : "the partition of " + ids + " heals") + " at " + e.t + " " + unit;
      } else if (e.kind === "state") {
        const b = bands[e.i];
        const node = topo.nodes[Number(b.dataset.position)];
        const who = node ? "id " + node.id : "position " + b.dataset.position;
        info.textContent = head + who + " becomes " + b.dataset.state;
      } else {
        describeArrow(arrows[e.i], head + (e.kind === "send" ? "sends " : "receives "));
      }
    }

    // Show the first k events.
    function show(k) {
      k = Math.max(0, Math.min(total, k));
      while (shown < k) apply(events[shown++], true);
      while (shown > k) apply(events[--shown], false);
      const x = shown > 0 ? events[shown - 1].x : (shapes[0] ? shapes[0].x1 : 0);
      if (cursor) {
        cursor.setAttribute("x1", String(x)); cursor.setAttribute("x2", String(x));
        cursor.style.display = shown === total ? "none" : "";
      }
      // Every band whole, then each node's band in effect ends at the cursor (all of it at the end).
      bands.forEach((b, i) => b.setAttribute("width", String(bandWidth[i])));
      for (const [, i] of current) {
        const b = bands[i], bx = num(b, "x");
        b.setAttribute("width", String(shown === total ? bandWidth[i] : Math.max(0, Math.min(bandWidth[i], x - bx))));
      }
      const t = shown > 0 ? events[shown - 1].t : -1;
      for (const e of timed) e.style.display = shown === total || Number(e.dataset.at) <= t ? "" : "none";
      faultsNow = faultsAt(t);
      // A node's state band stops where it goes down.
      for (const o of outages) {
        const i = current.get(o.p);
        if (i !== undefined && o.from <= t && t < o.until && shown < total) {
          const b = bands[i];
          b.setAttribute("width", String(Math.max(0, Math.min(num(b, "width"), o.x - num(b, "x")))));
        }
      }
      for (const i of Array.from(topo.dots.keys())) placeDot(i);
      paintRows();
      paintNodes();
      if (pinned) describeArrow(pinned, "pinned: ");
      else if (shown > 0 && shown < total) describeEvent(events[shown - 1], shown);
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
    }

    // The steps where a failover begins: a crash or a cut of a node that leads then (by its state
    // band in effect), by index into `events`; if no band says "leader", every crash or cut.
    function stateAt(p, t) {
      let state = null, since = -Infinity;
      bands.forEach((b) => {
        const at = Number(b.dataset.at || 0);
        if (Number(b.dataset.position) === p && at <= t && at >= since) { since = at; state = b.dataset.state; }
      });
      return state;
    }
    const hit = (e) => (e.kind === "crash" ? [outages[e.i].p] : cuts[e.i].cut);
    const losses = events.map((e, k) => (e.loss ? k : -1)).filter((k) => k >= 0);
    const ofLeaders = losses.filter((k) => hit(events[k]).some((p) => stateAt(p, events[k].t) === "leader"));
    const failovers = ofLeaders.length > 0 ? ofLeaders : losses;

    return {
      svg, events, total, unit, topoBox, topo, show, drawTopology, readBeliefs, paintNodes, failovers,
      shown: () => shown,
      axis: svg ? svg.dataset.axis || unit : "",
      messages: arrows.length,
    };
  }

  // The page's one bar of step controls (found by id) driving `model`: its `total` events,
  // `show(k)` and `where()` (what the bar says of where it stands).
  function controls(model) {
    const slider = document.getElementById("slider");
    const where = document.getElementById("where");
    const play = document.getElementById("play");
    const speed = document.getElementById("speed");
    const zoom = document.getElementById("zoom");
    let shown = 0;
    let timer = null;
    const go = (k) => {
      shown = Math.max(0, Math.min(model.total, k));
      model.show(shown);
      slider.value = String(shown);
      where.textContent = model.where(shown);
    };
    const stop = () => {
      if (timer !== null) clearInterval(timer);
      timer = null;
      play.textContent = "▶ play";
    };
    const start = () => {
      if (shown >= model.total) go(0);
      play.textContent = "❚❚ pause";
      timer = setInterval(() => { if (shown >= model.total) stop(); else go(shown + 1); }, 600 / Number(speed.value));
    };
    // Zoom: the diagrams at a multiple of their own width, scrolled sideways; "fit" fits the page.
    zoom.addEventListener("change", () => {
      const z = Number(zoom.value);
      for (const svg of model.svgs) {
        svg.style.maxWidth = z === 1 ? "" : "none";
        svg.style.width = z === 1 ? "" : String(Math.round(Number(svg.getAttribute("width")) * z)) + "px";
      }
    });
    slider.max = String(model.total);
    document.getElementById("first").addEventListener("click", () => { stop(); go(0); });
    document.getElementById("back").addEventListener("click", () => { stop(); go(shown - 1); });
    document.getElementById("forward").addEventListener("click", () => { stop(); go(shown + 1); });
    document.getElementById("last").addEventListener("click", () => { stop(); go(model.total); });
    slider.addEventListener("input", () => { stop(); go(Number(slider.value)); });
    play.addEventListener("click", () => { if (timer !== null) stop(); else start(); });
    speed.addEventListener("change", () => { if (timer !== null) { stop(); start(); } });
    document.addEventListener("keydown", (ev) => {
      if (ev.target instanceof HTMLInputElement || ev.target instanceof HTMLSelectElement) return;
      const keys = { ArrowRight: () => go(shown + 1), ArrowLeft: () => go(shown - 1), Home: () => go(0), End: () => go(model.total) };
      if (keys[ev.key]) { stop(); keys[ev.key](); ev.preventDefault(); }
      else if (ev.key === " ") { if (timer !== null) stop(); else start(); ev.preventDefault(); }
    });
    go(model.total);
    return { redraw: () => go(shown), go: (k) => { stop(); go(k); }, shown: () => shown };
  }

  const recordOf = async (election) => {
    const response = await fetch("/elections/" + encodeURIComponent(election) + "/record.json");
    return response.ok ? response.json() : null;
  };

  // The token kept in the tab, for the calls that change state.
  const labHeaders = (token) => {
    sessionStorage.setItem("ringleader-token", token);
    const headers = { "content-type": "application/json", "x-ringleader-lab": "1" };
    if (token) headers.authorization = "Bearer " + token;
    return headers;
  };

  // The comparison page: two elections stepped on one time line.
  const PAIR = document.body.dataset.compare;
  if (PAIR) {
    const panels = Array.from(document.querySelectorAll(".panel"));
    const steppers = panels.map((p) => stepper(p, false));
    if (document.body.dataset.running === "true") {
      setInterval(async () => {
        const records = await Promise.all(panels.map((p) => recordOf(p.dataset.election).catch(() => null)));
        if (records.every((r) => r && (r.state === "Finished" || r.state === "Failed"))) location.reload();
      }, 1000);
    }
    if (steppers.length === 2 && steppers.every((s) => s.svg)) {
      // Every event of either, in time order (at one moment the left one's first); counts[k]: how
      // many of each are among the first k.
      const merged = [];
      steppers.forEach((s, w) => s.events.forEach((e, j) => merged.push({ t: e.t, w, j })));
      merged.sort((a, b) => a.t - b.t || a.w - b.w || a.j - b.j);
      const counts = [[0, 0]];
      for (const m of merged) {
        const [a, b] = counts[counts.length - 1];
        counts.push(m.w === 0 ? [a + 1, b] : [a, b + 1]);
      }
      const names = panels.map((p) => p.dataset.algorithm);
      const units = steppers.map((s) => s.axis);
      const bar = controls({
        total: merged.length,
        svgs: steppers.map((s) => s.svg),
        show: (k) => steppers.forEach((s, w) => s.show(counts[k][w])),
        where: (k) => {
          const each = steppers.map((s, w) => names[w] + " " + counts[k][w] + " of " + s.total).join(", ");
          if (k === merged.length) return "all " + merged.length + " events (" + each + ")";
          const at = k > 0 ? ", at " + merged[k - 1].t + " " + units[merged[k - 1].w] : "";
          return "event " + k + " of " + merged.length + at + ": " + each;
        },
      });
      panels.forEach((p, w) => recordOf(p.dataset.election)
        .then((r) => { if (r) { steppers[w].drawTopology(r); bar.redraw(); } })
        .catch(() => { steppers[w].topoBox.textContent = "The topology could not be read."; }));
    }
    return;
  }

  // One election's page.
  const ELECTION = document.body.dataset.election;
  const RUNNING = document.body.dataset.running === "true";
  const page = stepper(document, true);
  const svg = page.svg;
  const topoBox = page.topoBox;
  const topo = page.topo;
  if (svg) {
    const bar = controls({
      total: page.total,
      svgs: [svg],
      show: page.show,
      where: (k) => k === page.total ? "all " + page.total + " events (" + page.messages + " messages drawn)" :
        "event " + k + " of " + page.total + (k > 0 ? ", at " + page.events[k - 1].t + " " + page.axis : ""),
    });
    // "Next failover": to the step of the next crash or cut after the one shown (from the end or
    // past the last: the first).
    const next = document.getElementById("next-failover");
    if (next) {
      next.hidden = page.failovers.length === 0;
      next.addEventListener("click", () => {
        const now = bar.shown();
        const after = now === page.total ? undefined : page.failovers.find((k) => k + 1 > now);
        bar.go((after === undefined ? page.failovers[0] : after) + 1);
      });
      document.addEventListener("keydown", (ev) => {
        if (ev.target instanceof HTMLInputElement || ev.target instanceof HTMLSelectElement) return;
        if ((ev.key === "f" || ev.key === "F") && !next.hidden) { next.click(); ev.preventDefault(); }
      });
    }
    recordOf(ELECTION)
      .then((r) => { if (r) { page.drawTopology(r); bar.redraw(); sameIds(r); } })
      .catch(() => { if (topoBox) topoBox.textContent = "The topology could not be read."; });
  }

  // "Same ids, another algorithm": start it with this election's ids, initiators, mode, delays
  // and seed, then open both side by side.
  function sameIds(r) {
    const again = document.getElementById("again");
    if (!again) return;
    const status = document.getElementById("again-status");
    document.getElementById("again-token-row").hidden = document.body.dataset.tokenRequired !== "true";
    again.token.value = sessionStorage.getItem("ringleader-token") || "";
    again.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const byPosition = r.participants.slice().sort((a, b) => a.position - b.position);
      const initiators = byPosition.filter((p) => p.initiator).map((p) => p.id);
      const body = {
        algorithm: again.algorithm.value,
        ids: byPosition.map((p) => p.id).join(" "),
        initiators: initiators.length < byPosition.length ? initiators.join(" ") : "",
        simulated: r.mode === "Simulated",
        unit_delay: r.unit_delay === true,
        seed: r.seed,
      };
      status.textContent = "starting…";
      try {
        const response = await fetch("/lab/start", { method: "POST", headers: labHeaders(again.token.value), body: JSON.stringify(body) });
        const answer = await answerOf(response);
        if (!response.ok) { status.textContent = answer.message; return; }
        location.href = "/compare/" + encodeURIComponent(ELECTION) + "/" + encodeURIComponent(answer.electionId);
      } catch (e) {
        status.textContent = "the controller did not answer: " + e;
      }
    });
  }

  if (RUNNING) {
    // Follow the election: its verdict line and a kept leadership's tables; reload when it ends.
    const verdict = document.getElementById("verdict");
    let drawnSeen = Number(document.body.dataset.drawn || "0");
    const follow = async () => {
      try {
        const r = await recordOf(ELECTION);
        if (!r) return;
        if (r.state === "Finished" || r.state === "Failed") { location.reload(); return; }
        if (!svg && topoBox) {
          if (topo.nodes.length === 0) page.drawTopology(r);
          page.readBeliefs(r);
          page.paintNodes();
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

  // Breaking a running leadership: select nodes on the topology, then crash, recover or cut them
  // off, or drop the next message of a kind between two of them.
  const faultPanel = document.getElementById("faults");
  if (faultPanel) {
    const selected = [];
    const status = document.getElementById("fault-status");
    const token = document.getElementById("token");
    document.getElementById("token-row").hidden = document.body.dataset.tokenRequired !== "true";
    token.value = sessionStorage.getItem("ringleader-token") || "";
    token.form.addEventListener("submit", (ev) => ev.preventDefault());
    topoBox.addEventListener("click", (ev) => {
      const g = ev.target.closest(".topo-node");
      if (!g) return;
      const p = Number(g.dataset.position);
      const at = selected.indexOf(p);
      if (at >= 0) selected.splice(at, 1); else selected.push(p);
      g.classList.toggle("selected", at < 0);
    });
    const act = async (action, extra) => {
      const names = (ps) => ps.map((p) => topo.participants[p].node);
      const body = Object.assign({ election_id: ELECTION, action, nodes: names(selected),
        all: names(topo.participants.map((x) => x.position)) }, extra || {});
      status.textContent = action + "…";
      try {
        const response = await fetch("/lab/act", { method: "POST", headers: labHeaders(token.value), body: JSON.stringify(body) });
        const answer = await answerOf(response);
        status.textContent = response.ok ? answer.done : answer.message;
        status.className = response.ok ? "ok" : "error";
        if (response.ok) {
          selected.length = 0;
          for (const g of topoBox.querySelectorAll(".topo-node.selected")) g.classList.remove("selected");
        }
      } catch (e) {
        status.textContent = "the controller did not answer: " + e;
      }
    };
    for (const [id, action] of [["crash", "crash"], ["recover", "recover"], ["partition", "partition"], ["heal", "clear"], ["stop", "stop"]]) {
      document.getElementById(id).addEventListener("click", () => act(action));
    }
    const drop = document.getElementById("drop");
    if (drop) drop.addEventListener("click", () => act("drop", { kind: document.getElementById("drop-kind").value }));
  }
})();
