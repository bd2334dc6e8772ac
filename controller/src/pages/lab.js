"use strict";
(function () {
  const form = document.getElementById("start");
  const needsToken = document.body.dataset.tokenRequired === "true";
  const tokenRow = document.getElementById("token-row");
  tokenRow.hidden = !needsToken;
  form.token.value = sessionStorage.getItem("ringleader-token") || "";
  const boxes = document.getElementById("initiators");

  function ids() { return form.ids.value.split(/[\s,]+/).filter((w) => w !== ""); }

  function drawInitiators() {
    const typed = ids();
    boxes.textContent = "";
    if (typed.length === 0) { boxes.textContent = "every node (type ids to choose)"; return; }
    for (const id of typed) {
      const label = document.createElement("label");
      const box = document.createElement("input");
      box.type = "checkbox"; box.value = id; box.checked = true; box.className = "initiator";
      label.append(box, " id " + id);
      boxes.append(label);
    }
  }

  function keptAllowed() {
    const option = form.algorithm.selectedOptions[0];
    const kept = option && option.dataset.kept === "true";
    document.getElementById("kept").disabled = !kept;
    if (!kept) form.keep_leader.checked = false;
  }

  function clearErrors() { for (const e of form.querySelectorAll(".error")) e.textContent = ""; }

  function showRefusal(r) {
    // The API names the field at fault (e.g. `size`, `detector.timeout_ms`): show it beside that input.
    const top = (r.field || "").split(".")[0];
    const slot = (r.field && form.querySelector('.error[data-for="' + r.field + '"]')) ||
      form.querySelector('.error[data-for="' + top + '"]') || document.getElementById("status");
    slot.textContent = r.message;
    if (top === "" && (r.code === "UNAUTHENTICATED" || r.code === "PERMISSION_DENIED") && needsToken) {
      form.querySelector('.error[data-for="token"]').textContent = r.message;
    }
  }

  form.ids.addEventListener("input", drawInitiators);
  form.algorithm.addEventListener("change", keptAllowed);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearErrors();
    sessionStorage.setItem("ringleader-token", form.token.value);
    const typed = ids();
    const chosen = Array.from(boxes.querySelectorAll("input.initiator:checked")).map((b) => b.value);
    const body = {
      algorithm: form.algorithm.value,
      size: typed.length > 0 ? 0 : Number(form.size.value),
      ids: form.ids.value,
      arrangement: typed.length > 0 ? "" : form.arrangement.value,
      initiators: typed.length > 0 && chosen.length < typed.length ? chosen.join(" ") : "",
      simulated: form.mode.value === "simulated",
      unit_delay: form.unit_delay.checked,
      seed: Number(form.seed.value),
      keep_leader: form.keep_leader.checked,
      detector_period_ms: Number(form.detector_period_ms.value || 0),
      detector_timeout_ms: Number(form.detector_timeout_ms.value || 0),
      horizon_ms: Number(form.horizon_ms.value || 0),
      fault: form.fault.value,
      fault_at_ms: Number(form.fault_at_ms.value || 0),
      fault_id: Number(form.fault_id.value || 0),
      undo_at_ms: Number(form.undo_at_ms.value || 0),
      axis: form.axis.value,
      labels: form.labels.checked,
      options: form.options.value,
    };
    if (typed.length > 0 && chosen.length === 0) {
      form.querySelector('.error[data-for="initiator_ids"]').textContent = "tick at least one initiator";
      return;
    }
    const headers = { "content-type": "application/json", "x-ringleader-lab": "1" };
    if (form.token.value) headers.authorization = "Bearer " + form.token.value;
    document.getElementById("status").textContent = "starting…";
    try {
      const response = await fetch("/lab/start", { method: "POST", headers, body: JSON.stringify(body) });
      const answer = await response.json();
      if (!response.ok) { document.getElementById("status").textContent = ""; showRefusal(answer); return; }
      location.href = "/elections/" + encodeURIComponent(answer.electionId);
    } catch (e) {
      document.getElementById("status").textContent = "the controller did not answer: " + e;
    }
  });
  drawInitiators();
  keptAllowed();

  // The checker: run a check, then step through its counterexample to where the property breaks.
  const check = document.getElementById("check");
  const result = document.getElementById("check-result");
  const slider = document.getElementById("check-slider");
  let steps = [];
  let property = "";

  // The election the check form describes (the explorer explores the same).
  function checked() {
    return {
      algorithm: check.algorithm.value, n: Number(check.n.value), any_order: check.any_order.checked,
      kept: check.kept.checked, crashes: Number(check.crashes.value), losses: Number(check.losses.value),
      partitions: Number(check.partitions.value),
    };
  }

  function labHeaders() {
    const headers = { "content-type": "application/json", "x-ringleader-lab": "1" };
    const token = sessionStorage.getItem("ringleader-token") || form.token.value;
    if (token) headers.authorization = "Bearer " + token;
    return headers;
  }

  function showStep(k) {
    k = Math.max(0, Math.min(steps.length, k));
    slider.value = String(k);
    const items = document.querySelectorAll("#check-steps li");
    items.forEach((li, i) => {
      li.classList.toggle("done", i < k);
      li.classList.toggle("now", i === k - 1);
    });
    const svg = document.querySelector("#check-diagram svg");
    if (svg) {
      // The diagram's time is the step number: show what happened up to step k.
      for (const e of svg.querySelectorAll(".msg[data-step], rect.state, .mark")) {
        e.style.display = Number(e.dataset.at) <= k ? "" : "none";
      }
      for (const e of svg.querySelectorAll(".label[data-step]")) e.style.display = k === steps.length ? "" : "none";
    }
    const where = document.getElementById("check-where");
    where.textContent = k === 0 ? "before the first step" : "step " + k + " of " + steps.length + ": " + steps[k - 1] +
      (k === steps.length ? " — here \"" + property + "\" breaks" : "");
  }

  check.addEventListener("submit", async (event) => {
    event.preventDefault();
    for (const e of check.querySelectorAll(".error")) e.textContent = "";
    const status = document.getElementById("check-status");
    status.textContent = "checking every schedule…";
    result.hidden = true;
    try {
      const response = await fetch("/lab/check", { method: "POST", headers: labHeaders(), body: JSON.stringify(Object.assign({ timeout_s: Number(check.timeout_s.value || 0) }, checked())) });
      const answer = await response.json();
      status.textContent = "";
      if (!response.ok) {
        const top = (answer.field || "").split(".")[0];
        (check.querySelector('.error[data-for="' + top + '"]') || status).textContent = answer.message;
        return;
      }
      result.hidden = false;
      document.getElementById("check-verdict").textContent = answer.summary;
      const list = document.getElementById("check-steps");
      const diagram = document.getElementById("check-diagram");
      list.textContent = "";
      diagram.textContent = "";
      steps = answer.counterexample ? answer.counterexample.steps : [];
      property = answer.counterexample ? answer.counterexample.property : "";
      for (const s of steps) { const li = document.createElement("li"); li.textContent = s; list.append(li); }
      if (answer.counterexample) {
        const doc = new DOMParser().parseFromString(answer.counterexample.svg, "image/svg+xml");
        diagram.append(document.importNode(doc.documentElement, true));
        if (answer.counterexample.error) {
          const p = document.createElement("p"); p.className = "error"; p.textContent = answer.counterexample.error;
          diagram.append(p);
        }
      }
      slider.max = String(steps.length);
      document.getElementById("check-controls").hidden = !answer.counterexample;
      showStep(0);
    } catch (e) {
      status.textContent = "the controller did not answer: " + e;
    }
  });
  document.getElementById("check-back").addEventListener("click", () => showStep(Number(slider.value) - 1));
  document.getElementById("check-forward").addEventListener("click", () => showStep(Number(slider.value) + 1));
  document.getElementById("check-end").addEventListener("click", () => showStep(steps.length));
  slider.addEventListener("input", () => showStep(Number(slider.value)));

  // The explorer: the check form's election, its schedule chosen by hand. The controller keeps
  // nothing: each choice (or "back") sends the whole path and gets back where it ends.
  const explorer = document.getElementById("explore");
  const exploreStatus = document.getElementById("explore-status");
  let explored = null;
  let path = [];
  let exploring = false;

  function cell(row, text, changed) {
    const td = document.createElement("td");
    if (changed) { const m = document.createElement("mark"); m.textContent = text; td.append(m); } else td.textContent = text;
    row.append(td);
  }

  function showExploration(x) {
    explorer.hidden = false;
    const ended = x.final ? " — the run has ended: nothing in flight, no timer pending"
      : x.choices.length === 0 ? " — no step can follow" : "";
    document.getElementById("explore-where").textContent = x.algorithm + ", " + x.nodes.length + " nodes: " +
      (x.taken.length === 0 ? "the first state" : "after " + x.taken.length + " step" + (x.taken.length === 1 ? "" : "s")) + ended;
    document.getElementById("explore-error").textContent = x.error ? "a node erred: " + x.error : "";
    document.getElementById("explore-back").disabled = path.length === 0;
    const steps = document.getElementById("explore-steps");
    steps.textContent = "";
    for (const words of x.taken) { const li = document.createElement("li"); li.textContent = words; steps.append(li); }
    const choices = document.getElementById("explore-choices");
    choices.textContent = "";
    x.choices.forEach((words, i) => {
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.type = "button"; b.dataset.choice = String(i); b.textContent = words;
      b.addEventListener("click", () => explore(path.concat([i])));
      li.append(b);
      choices.append(li);
    });
    const rows = document.querySelector("#explore-nodes tbody");
    rows.textContent = "";
    for (const n of x.nodes) {
      const tr = document.createElement("tr");
      tr.dataset.id = String(n.id); tr.dataset.changed = String(n.changed);
      cell(tr, "id " + n.id, false); cell(tr, String(n.position), false);
      cell(tr, n.state, n.changed); cell(tr, n.belief, n.changed);
      rows.append(tr);
    }
    const properties = document.getElementById("explore-properties");
    properties.textContent = "";
    for (const p of x.properties) {
      const li = document.createElement("li");
      li.className = p.holds ? "ok" : "bad";
      li.dataset.holds = String(p.holds);
      li.textContent = p.name + (p.holds ? ": holds" : ": BROKEN since step " + p.brokenSince);
      properties.append(li);
    }
  }

  async function explore(next) {
    if (exploring) return;
    exploring = true;
    exploreStatus.textContent = "";
    try {
      const body = Object.assign({ path: next }, explored);
      const response = await fetch("/lab/explore", { method: "POST", headers: labHeaders(), body: JSON.stringify(body) });
      const answer = await response.json();
      if (!response.ok) {
        // A refused election is shown beside the check form's field; a refused choice here.
        const top = (answer.field || "").split(".")[0];
        const slot = top === "path" ? null : check.querySelector('.error[data-for="' + top + '"]');
        (slot || exploreStatus).textContent = answer.message;
        if (top !== "path") explorer.hidden = true;
        return;
      }
      path = next;
      showExploration(answer);
    } catch (e) {
      exploreStatus.textContent = "the controller did not answer: " + e;
    } finally {
      exploring = false;
    }
  }

  document.getElementById("explore-run").addEventListener("click", () => {
    for (const e of check.querySelectorAll(".error")) e.textContent = "";
    explored = checked();
    explore([]);
  });
  document.getElementById("explore-back").addEventListener("click", () => explore(path.slice(0, -1)));
  document.getElementById("explore-restart").addEventListener("click", () => explore([]));
})();
