"use strict";
(function () {
  const form = document.getElementById("start");
  const needsToken = document.body.dataset.tokenRequired === "true";
  const tokenRow = document.getElementById("token-row");
  tokenRow.hidden = !needsToken;
  form.token.value = sessionStorage.getItem("ringleader-token") || "";
  const boxes = document.getElementById("initiators");

  function ids() { return form.ids.value.split(/[\s,]+/).filter((w) => w !== ""); }

  // A call's answer: its JSON, or, when the body is not JSON (a proxy's page, the host guard's
  // 421, a body over the limit), a refusal that says the status and what came back.
  async function answerOf(response) {
    const text = await response.text();
    try { return JSON.parse(text); } catch (e) {
      return { code: String(response.status), field: "", message: (response.statusText || "no JSON answer") + (text ? ": " + text.slice(0, 200) : "") };
    }
  }

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

  // A refusal beside the field it names, scrolled into view, and said in `status` (the status
  // line beside the form's button) too: a student who looks at the button sees what happened.
  function refuse(slots, status, r, what) {
    const top = (r.field || "").split(".")[0];
    const slot = (r.field && slots.querySelector('.error[data-for="' + r.field + '"]')) ||
      (top && slots.querySelector('.error[data-for="' + top + '"]')) || null;
    status.classList.add("refused");
    if (slot) {
      slot.textContent = r.message;
      status.textContent = what + ": refused, see " + (r.field || "the form") + " above";
      slot.scrollIntoView({ block: "nearest", inline: "nearest" });
    } else {
      status.textContent = what + ": " + r.message;
      status.scrollIntoView({ block: "nearest", inline: "nearest" });
    }
    return top;
  }

  function showRefusal(r) {
    // The API names the field at fault (e.g. `size`, `detector.timeout_ms`): show it beside that input.
    const top = refuse(form, document.getElementById("status"), r, "not started");
    if (top === "" && (r.code === "UNAUTHENTICATED" || r.code === "PERMISSION_DENIED") && needsToken) {
      form.querySelector('.error[data-for="token"]').textContent = r.message;
    }
  }

  function setStatus(status, text) {
    status.classList.remove("refused");
    status.textContent = text;
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
      heartbeats: form.heartbeats.checked,
      options: form.options.value,
    };
    if (typed.length > 0 && chosen.length === 0) {
      refuse(form, document.getElementById("status"), { field: "initiator_ids", message: "tick at least one initiator" }, "not started");
      return;
    }
    const headers = { "content-type": "application/json", "x-ringleader-lab": "1" };
    if (form.token.value) headers.authorization = "Bearer " + form.token.value;
    const status = document.getElementById("status");
    setStatus(status, "starting…");
    try {
      const response = await fetch("/lab/start", { method: "POST", headers, body: JSON.stringify(body) });
      const answer = await answerOf(response);
      if (!response.ok) { showRefusal(answer); return; }
      setStatus(status, "started " + answer.electionId + ": opening its page…");
      location.href = "/elections/" + encodeURIComponent(answer.electionId);
    } catch (e) {
      setStatus(status, "the controller did not answer: " + e);
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
  // The election the last check asked about (its counterexample opens in the explorer).
  let asked = null;

  // The election the check form describes (the explorer explores the same).
  function checked() {
    // Ids in ring order, e.g. "4,4,4,4" (they fix n); empty: 1..n.
    const ids = check.ids.value.split(/[\s,]+/).filter((x) => x !== "").map(Number);
    return {
      algorithm: check.algorithm.value, n: ids.length > 0 ? ids.length : Number(check.n.value), ids,
      any_order: check.any_order.checked,
      kept: check.kept.checked, crashes: Number(check.crashes.value), losses: Number(check.losses.value),
      partitions: Number(check.partitions.value),
    };
  }

  // Random walks instead of every schedule, when the form asks for them (the seed stays a
  // string: it takes 64 bits).
  function walking() {
    if (check.search.value !== "walk") return {};
    return {
      simulate: true, walks: Number(check.walks.value || 0), walk_depth: Number(check.walk_depth.value || 0),
      walk_seed: check.walk_seed.value.trim(),
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
    // The step just taken, visible in its list (which scrolls on its own).
    const list = document.getElementById("check-steps");
    const now = items[k - 1];
    if (now) list.scrollTop = Math.max(0, now.offsetTop - list.offsetTop - list.clientHeight / 2);
    const svg = document.querySelector("#check-diagram svg");
    if (svg) {
      // The diagram's time is the step number: show what happened up to step k.
      for (const e of svg.querySelectorAll(".msg[data-step], rect.state, .mark, .down, .recover")) {
        e.style.display = Number(e.dataset.at) <= k ? "" : "none";
      }
      // A message sent and not yet arrived at step k is in flight: drawn faint.
      for (const e of svg.querySelectorAll(".msg[data-step]")) {
        const arrive = Number(e.dataset.arrive);
        e.style.opacity = Number.isFinite(arrive) && arrive > k ? "0.35" : "";
      }
      for (const e of svg.querySelectorAll(".label[data-step]")) e.style.display = k === steps.length ? "" : "none";
    }
    const where = document.getElementById("check-where");
    where.textContent = k === 0 ? "before the first step" : "step " + k + " of " + steps.length + ": " + steps[k - 1] +
      (k === steps.length ? " — here \"" + property + "\" breaks" : "");
  }

  // The check's answer: JSON lines, each a wait in the queue (its position), the verdict or a
  // refusal; a whole single JSON answer is read the same way.
  async function eachLine(response, onLine) {
    if (!response.body || !response.body.getReader) {
      for (const line of (await response.text()).split("\n")) if (line.trim()) onLine(JSON.parse(line));
      return;
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffered = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (value) buffered += decoder.decode(value, { stream: true });
      let at;
      while ((at = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, at).trim();
        buffered = buffered.slice(at + 1);
        if (line) onLine(JSON.parse(line));
      }
      if (done) break;
    }
    if (buffered.trim()) onLine(JSON.parse(buffered));
  }

  // A line that says where the check waits: its position in the queue (1: next), if any.
  function queuePosition(x) {
    const q = x.queue !== undefined && typeof x.queue === "object" && x.queue !== null ? x.queue : x;
    for (const k of ["queue_position", "queuePosition", "position"]) {
      if (typeof q[k] === "number") return q[k];
    }
    return null;
  }

  function showVerdict(answer) {
    result.hidden = false;
    const verdict = document.getElementById("check-verdict");
    verdict.textContent = answer.summary;
    // Random walks: the sampled verdict in words, and the seed that walks the violation again.
    if (answer.walks) {
      const w = answer.walks;
      const sampled = document.createElement("strong");
      sampled.textContent = w.violated
        ? "Random walk " + w.violation_walk + " broke \"" + (answer.counterexample ? answer.counterexample.property : "")
          + "\"; replay it: random walk from seed " + w.violation_seed + " (1 walk)."
        : w.verdict.charAt(0).toUpperCase() + w.verdict.slice(1) + ".";
      verdict.prepend(sampled, document.createElement("br"));
      if (w.violated) {
        const replay = document.createElement("button"); replay.type = "button"; replay.textContent = "set the form to replay it";
        replay.addEventListener("click", () => { check.walk_seed.value = w.violation_seed; check.walks.value = "1"; });
        verdict.append(" ", replay);
      }
    }
    // A broken property that rests on timing the checker does not give says so (Raft's split votes).
    if (answer.counterexample && answer.counterexample.note) {
      const note = document.createElement("span"); note.className = "note";
      note.textContent = "Note: " + answer.counterexample.note + ".";
      verdict.append(document.createElement("br"), note);
    }
    const list = document.getElementById("check-steps");
    const diagram = document.getElementById("check-diagram");
    list.textContent = "";
    diagram.textContent = "";
    steps = answer.counterexample ? answer.counterexample.steps : [];
    property = answer.counterexample ? answer.counterexample.property : "";
    for (const s of steps) { const li = document.createElement("li"); li.textContent = s; list.append(li); }
    // The symmetric execution (every node alike): its rounds, and how it ends.
    const rounds = answer.counterexample && answer.counterexample.rounds ? answer.counterexample.rounds : [];
    const roundList = document.getElementById("check-rounds");
    roundList.textContent = "";
    for (const r of rounds) { const li = document.createElement("li"); li.textContent = r; roundList.append(li); }
    document.getElementById("check-symmetric").hidden = rounds.length === 0;
    if (answer.counterexample) {
      const doc = new DOMParser().parseFromString(answer.counterexample.svg, "image/svg+xml");
      diagram.append(document.importNode(doc.documentElement, true));
      if (answer.counterexample.error) {
        const p = document.createElement("p"); p.className = "error"; p.textContent = answer.counterexample.error;
        diagram.append(p);
      }
    }
    slider.max = String(steps.length);
    // Nothing to step through when the property holds: no step buttons.
    document.getElementById("check-controls").hidden = !answer.counterexample;
    // Repeated ids name their steps alike, so a counterexample's words cannot be followed there.
    const repeated = new Set(asked.ids).size < asked.ids.length;
    document.getElementById("check-explore").hidden = !answer.counterexample || (asked.n || 3) > 4 || repeated;
    showStep(0);
    result.scrollIntoView({ block: "start" });
  }

  check.addEventListener("submit", async (event) => {
    event.preventDefault();
    for (const e of check.querySelectorAll(".error")) e.textContent = "";
    const status = document.getElementById("check-status");
    const run = document.getElementById("check-run");
    if (run.disabled) return;
    run.disabled = true;
    const walks = walking();
    const doing = walks.simulate ? "walking random schedules" : "checking every schedule";
    setStatus(status, doing + "…");
    result.hidden = true;
    try {
      asked = checked();
      const response = await fetch("/lab/check", { method: "POST", headers: labHeaders(), body: JSON.stringify(Object.assign({ timeout_s: Number(check.timeout_s.value || 0) }, walks, asked)) });
      let answered = false;
      await eachLine(response, (x) => {
        if (x.summary !== undefined || x.holds !== undefined) {
          answered = true;
          setStatus(status, x.cached ? "answered at once: the same check was answered before"
            : x.shared ? "answered with the same check another student asked at the same time" : "");
          showVerdict(x);
        } else if (x.code !== undefined && x.message !== undefined) {
          answered = true;
          refuse(check, status, x, "not checked");
        } else if (x.running) {
          const states = typeof x.states === "number" ? ": " + x.states.toLocaleString("en") + " states so far" : "";
          setStatus(status, doing + states + "…");
        } else {
          const position = queuePosition(x);
          if (position !== null && position > 0) {
            setStatus(status, "waiting: position " + position + " in the queue" +
              (typeof x.waiting === "number" && x.waiting > 1 ? " (" + x.waiting + " checks waiting)" : ""));
          } else if (position !== null) setStatus(status, doing + "…");
        }
      });
      if (!answered) setStatus(status, "the check ended without a verdict");
    } catch (e) {
      setStatus(status, "the controller did not answer: " + e);
    } finally {
      run.disabled = false;
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
    document.getElementById("explore-where").textContent = x.algorithm + ", " + x.nodes.length + " nodes on " +
      (x.fifo ? "FIFO links" : "links that may reorder messages") + ": " +
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
      const vars = document.createElement("td");
      vars.className = "variables";
      const code = document.createElement("code");
      code.textContent = n.variables || "";
      vars.append(code);
      tr.append(vars);
      rows.append(tr);
    }
    const flight = document.getElementById("explore-flight");
    flight.textContent = "";
    for (const words of x.inFlight || []) { const li = document.createElement("li"); li.textContent = words; flight.append(li); }
    if (!x.inFlight || x.inFlight.length === 0) {
      const li = document.createElement("li"); li.className = "none"; li.textContent = "none"; flight.append(li);
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

  // The address of where the explorer stands: the election and the path, after `#explore?`.
  function pathUrl() {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(explored)) q.set(k, String(v));
    q.set("path", path.join("."));
    return location.pathname + "#explore?" + q.toString();
  }

  // Explore `election` (the one explored so far when not given) along `next`, or along the
  // steps `follow` in words; it becomes the one explored once the controller answers.
  async function explore(next, follow, election) {
    if (exploring) return;
    exploring = true;
    const asking = election || explored;
    setStatus(exploreStatus, "");
    try {
      const body = Object.assign(follow ? { follow } : { path: next }, asking);
      const response = await fetch("/lab/explore", { method: "POST", headers: labHeaders(), body: JSON.stringify(body) });
      const answer = await answerOf(response);
      if (!response.ok) {
        // A refused election is shown beside the check form's field; a refused choice here.
        const top = (answer.field || "").split(".")[0];
        if (top === "path") exploreStatus.textContent = answer.message;
        else { refuse(check, exploreStatus, answer, "not explored"); explorer.hidden = true; }
        return;
      }
      explored = asking;
      path = Array.isArray(answer.path) ? answer.path : next;
      showExploration(answer);
      const url = pathUrl();
      document.getElementById("explore-link").href = url;
      history.replaceState(null, "", url);
    } catch (e) {
      exploreStatus.textContent = "the controller did not answer: " + e;
    } finally {
      exploring = false;
    }
  }

  document.getElementById("explore-run").addEventListener("click", () => {
    for (const e of check.querySelectorAll(".error")) e.textContent = "";
    explore([], undefined, checked());
  });
  document.getElementById("check-explore").addEventListener("click", () => {
    // A schedule in which a message overtakes another needs links that reorder (the check had
    // the box ticked then; kept for a check asked through the API on the algorithm's own links).
    const overtakes = steps.some((s) => s.includes(", overtaking "));
    const election = Object.assign({}, asked, overtakes ? { any_order: true } : {});
    explore([], steps, election).then(() => explorer.scrollIntoView({ block: "start" }));
  });

  // An address with `#check?…` runs a check: the check form set as it says (`search=walk` for
  // random walks, with `walks`, `walk_depth` and `walk_seed`), e.g. a random walk's replay.
  function checkFromAddress() {
    const q = new URLSearchParams(location.hash.slice("#check?".length));
    const fields = ["algorithm", "n", "ids", "crashes", "losses", "partitions", "timeout_s", "walks", "walk_depth", "walk_seed"];
    for (const name of fields) if (q.has(name)) check[name].value = q.get(name);
    for (const name of ["any_order", "kept"]) check[name].checked = q.get(name) === "true";
    check.search.value = q.get("search") === "walk" ? "walk" : "every";
    check.requestSubmit();
  }

  // An address with `#explore?…` opens the explorer there: the check form set to its election.
  function openFromAddress() {
    if (location.hash.startsWith("#check?")) return checkFromAddress();
    if (!location.hash.startsWith("#explore?")) return;
    const q = new URLSearchParams(location.hash.slice("#explore?".length));
    for (const name of ["algorithm", "n", "crashes", "losses", "partitions"]) if (q.has(name)) check[name].value = q.get(name);
    for (const name of ["any_order", "kept"]) check[name].checked = q.get(name) === "true";
    const at = (q.get("path") || "").split(".").filter((w) => w !== "").map(Number);
    explore(at, undefined, checked()).then(() => explorer.scrollIntoView({ block: "start" }));
  }
  openFromAddress();
  window.addEventListener("hashchange", openFromAddress);
  document.getElementById("explore-back").addEventListener("click", () => explore(path.slice(0, -1)));
  document.getElementById("explore-restart").addEventListener("click", () => explore([]));

  // The cluster: its nodes up or down and the faults held with their scope (one election's
  // nodes and links, or node-wide), read every few seconds from `GET /lab/cluster`; the faults
  // the lab set (those scoped to an election) are cleared at once, any one fault by its button.
  const clusterNodes = document.getElementById("cluster-nodes");
  const clusterFaults = document.getElementById("cluster-faults");
  const clusterClear = document.getElementById("cluster-clear");
  const clusterStatus = document.getElementById("cluster-status");
  const text = (v) => (v === undefined || v === null ? "" : String(v));

  // What keeps a node from an election, if anything: "crashed", "unreachable" or "".
  function nodeTrouble(n) {
    if (n.crashed === true) return "crashed";
    if (n.reachable === false) return "unreachable";
    if (n.up === false || n.down === true) return "down";
    return "";
  }

  function faultScope(f) {
    const election = text(f.electionId || f.election_id);
    return election ? "election " + election + " only" : "node-wide";
  }

  async function clearFaults(body) {
    setStatus(clusterStatus, "clearing…");
    try {
      const response = await fetch("/lab/act", { method: "POST", headers: labHeaders(), body: JSON.stringify(body) });
      const answer = await answerOf(response);
      if (response.ok) setStatus(clusterStatus, text(answer.done || "cleared"));
      else refuse(document, clusterStatus, answer, "not cleared");
    } catch (e) {
      setStatus(clusterStatus, "the controller did not answer: " + e);
    }
    readCluster();
  }

  function showCluster(c) {
    const nodes = Array.isArray(c.nodes) ? c.nodes : [];
    const faults = Array.isArray(c.faults) ? c.faults : [];
    clusterNodes.textContent = "";
    const troubled = nodes.filter((n) => nodeTrouble(n) !== "").length;
    clusterNodes.append(nodes.length === 0 ? "no nodes (SIMULATED elections only)"
      : nodes.length + " node" + (nodes.length === 1 ? "" : "s") + ", " + (nodes.length - troubled) + " up" +
        (troubled ? ", " + troubled + " down" : "") + ": ");
    nodes.forEach((n, i) => {
      const span = document.createElement("span");
      const trouble = nodeTrouble(n);
      span.className = trouble ? "down" : "up";
      span.dataset.node = text(n.name);
      span.dataset.state = trouble || "up";
      span.textContent = text(n.name) + (trouble ? " " + trouble.toUpperCase() : " up");
      if (n.error) span.title = text(n.error);
      if (i > 0) clusterNodes.append(" · ");
      clusterNodes.append(span);
    });
    clusterFaults.textContent = "";
    for (const f of faults) {
      const li = document.createElement("li");
      li.dataset.fault = text(f.id);
      li.dataset.scope = text(f.electionId || f.election_id);
      const state = f.state && f.state !== "ACTIVE" ? ", " + text(f.state).toLowerCase() : "";
      li.append(text(f.description || f.id) + " (" + faultScope(f) + state + ") ");
      if (f.id) {
        const b = document.createElement("button");
        b.type = "button"; b.className = "clear-one"; b.textContent = "clear";
        b.addEventListener("click", () => clearFaults({ action: "clear", fault_id: text(f.id) }));
        li.append(b);
      }
      clusterFaults.append(li);
    }
    if (faults.length === 0) {
      const li = document.createElement("li");
      li.textContent = "no fault held";
      clusterFaults.append(li);
    }
    clusterClear.hidden = !faults.some((f) => f.electionId || f.election_id);
  }

  // One read at a time, and none while the tab is hidden: a class of thirty tabs left open
  // asks the controller (and it its nodes) only for what someone looks at.
  let readingCluster = false;
  async function readCluster() {
    if (readingCluster || document.hidden) return;
    readingCluster = true;
    try {
      const response = await fetch("/lab/cluster", { headers: labHeaders() });
      const answer = await answerOf(response);
      if (!response.ok) { clusterNodes.textContent = text(answer.message) || "the cluster could not be read"; return; }
      showCluster(answer);
    } catch (e) {
      clusterNodes.textContent = "the controller did not answer: " + e;
    } finally {
      readingCluster = false;
    }
  }
  document.addEventListener("visibilitychange", () => { if (!document.hidden) readCluster(); });

  clusterClear.addEventListener("click", () => clearFaults({ action: "clear" }));

  readCluster();
  setInterval(readCluster, 3000);
})();
