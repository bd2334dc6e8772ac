"use strict";
// The comparison page's own part, run before the election pages' script steps the two
// diagrams: both redrawn on one time scale, and each election's messages so far.
(function () {
  if (!document.body.dataset.compare) return;
  const svgs = Array.from(document.querySelectorAll(".panel .diagram svg"));
  const note = document.getElementById("scale-note");
  const num = (e, a) => Number(e.getAttribute(a));

  // Where each moment is drawn: (time, x) pairs read off the arrows, state bands and marks.
  // The drawing's axis starts at time 0 at the plot's left edge.
  function knots(svg) {
    const seen = new Map();
    const add = (t, x) => { if (Number.isFinite(t) && Number.isFinite(x) && !seen.has(t)) seen.set(t, x); };
    add(0, Number(svg.dataset.left || 0));
    for (const a of svg.querySelectorAll(".msg[data-step]")) {
      const lines = a.tagName === "line" ? [a] : Array.from(a.querySelectorAll("line"));
      if (lines.length === 0) continue;
      add(Number(a.dataset.at), num(lines[0], "x1"));
      const lost = a.classList.contains("lost") || a.classList.contains("flying");
      if (!lost && a.dataset.arrive !== "" && !isNaN(Number(a.dataset.arrive))) {
        add(Number(a.dataset.arrive), num(lines[lines.length - 1], "x2"));
      }
    }
    for (const b of svg.querySelectorAll("rect.state")) add(Number(b.dataset.at), num(b, "x"));
    for (const m of svg.querySelectorAll(".mark")) { const l = m.querySelector("line"); if (l) add(Number(m.dataset.at), num(l, "x1")); }
    const pairs = Array.from(seen.entries()).sort((p, q) => p[0] - q[0]);
    // Keep x increasing with time (a moment drawn at the same x as the one before adds nothing).
    return pairs.filter((p, i) => i === 0 || p[1] > pairs[i - 1][1]);
  }

  // The time drawn at x, between the knots (outside them: the nearest end).
  function timeAt(ks, x) {
    if (x <= ks[0][1]) return ks[0][0];
    for (let i = 1; i < ks.length; i++) {
      const [t0, x0] = ks[i - 1], [t1, x1] = ks[i];
      if (x <= x1) return t0 + (t1 - t0) * (x - x0) / (x1 - x0);
    }
    return ks[ks.length - 1][0];
  }

  // Redraw `svg` so that time t is at `to(t)`: every x inside its plot moves to where its time
  // goes; what lies left of the plot (the rows' names) or right of it moves with the plot's edge.
  function warp(svg, ks, left, right, to, shiftLeft, shiftRight) {
    const map = (x) => x < left ? x + shiftLeft : x > right ? x + shiftRight : to(timeAt(ks, x));
    for (const e of svg.querySelectorAll("line, rect, text, circle, path")) {
      if (e.closest("marker, defs") || e.closest("g[transform]")) continue;
      if (e.tagName === "line") {
        e.setAttribute("x1", String(map(num(e, "x1"))));
        e.setAttribute("x2", String(map(num(e, "x2"))));
      } else if (e.tagName === "rect") {
        if (!e.hasAttribute("x") || String(e.getAttribute("width")).endsWith("%")) continue;
        const a = map(num(e, "x")), b = map(num(e, "x") + num(e, "width"));
        e.setAttribute("x", String(a));
        e.setAttribute("width", String(Math.max(0, b - a)));
      } else if (e.tagName === "text") {
        if (e.hasAttribute("x")) e.setAttribute("x", String(map(num(e, "x"))));
      } else if (e.tagName === "circle") {
        e.setAttribute("cx", String(map(num(e, "cx"))));
      } else {
        // A small mark (a cross, a strike): moved whole, by where its first point goes.
        const d = e.getAttribute("d") || "";
        const first = d.match(/M\s*(-?[\d.]+)/);
        if (!first) continue;
        const dx = map(Number(first[1])) - Number(first[1]);
        let i = 0;
        e.setAttribute("d", d.replace(/-?[\d.]+/g, (n) => (i++ % 2 === 0 ? String(Number(n) + dx) : n)));
      }
    }
  }

  if (svgs.length === 2) {
    const axes = svgs.map((s) => s.dataset.axis || s.dataset.unit || "");
    const all = svgs.map(knots);
    if (axes[0] !== axes[1]) {
      if (note) note.textContent = "Each diagram on its own scale: one is drawn in " + axes[0] + ", the other in " + axes[1] + ".";
    } else if (all.every((ks) => ks.length >= 2)) {
      const lefts = svgs.map((s) => Number(s.dataset.left || 0));
      const rights = svgs.map((s, w) => Number(s.dataset.right || num(s, "width")) || all[w][all[w].length - 1][1]);
      const L = Math.max(...lefts);
      const P = Math.max(...rights.map((r, w) => r - lefts[w]));
      const T = Math.max(...all.map((ks) => ks[ks.length - 1][0]));
      const to = (t) => L + P * t / T;
      svgs.forEach((svg, w) => {
        const tail = num(svg, "width") - rights[w];
        warp(svg, all[w], lefts[w], rights[w], to, L - lefts[w], L + P - rights[w]);
        const width = Math.ceil(L + P + tail), height = num(svg, "height");
        svg.setAttribute("width", String(width));
        svg.setAttribute("viewBox", "0 0 " + width + " " + height);
        svg.dataset.left = String(L);
        svg.dataset.right = String(L + P);
      });
      if (note) {
        note.textContent = "Both diagrams on one time scale, to scale: 0 to " + T + " " + axes[0] +
          " across the width (a moment is at the same place in both).";
      }
    }
  }

  // Each election's messages so far: the arrows shown (sent, arrived or in flight), said beside
  // its name whenever the step bar moves.
  const panels = Array.from(document.querySelectorAll(".panel"));
  function soFar() {
    for (const p of panels) {
      const out = p.querySelector(".so-far");
      if (!out) continue;
      const arrows = Array.from(p.querySelectorAll(".diagram .msg[data-step]"));
      const sent = arrows.filter((a) => a.style.display !== "none").length;
      out.textContent = sent === arrows.length ? arrows.length + " messages in all"
        : sent + " of " + arrows.length + " messages sent so far";
      out.dataset.sent = String(sent);
    }
  }
  const where = document.getElementById("where");
  if (where) new MutationObserver(soFar).observe(where, { childList: true, characterData: true, subtree: true });
  soFar();
})();
