//! The elections this controller keeps, and the means to run more: the
//! store of records and their watchers ([`Elections`]), the public face of
//! the submodules that run an election by its mode.
//!
//! A [`Plan`] (built and checked by [`crate::api`]) fixes everything about an
//! election: algorithm, overlay, ids, initiators, mode. It is built once
//! [`Elections::admit`] has let the election in (its memory estimate
//! reserved, a running slot taken); [`Elections::launch_admitted`] records it
//! and runs it in a task:
//!
//! * **LIVE** (`live`): position `i` runs on cluster node `i`. Every position
//!   is prepared (its id, its ports -> the neighbours' node addresses) before
//!   any initiator is started; the controller then waits for every decision
//!   (the nodes' `Events` streams, with a `Status` poll as a safety net), waits
//!   until the election is quiet (every message sent has been received or
//!   rejected, twice in a row), sums the nodes' counters, checks the
//!   invariants and aborts the election on the nodes to free their memory.
//!   A kept leadership (`kept`) is followed instead until it is stopped.
//! * **SIMULATED** (`simulated`): the core crate's deterministic simulator, on
//!   a blocking thread.
//!
//! Every run gets a `run::Context` borrowed from the store and returns an
//! `Outcome` that the store applies to the record; the runs never see the
//! store itself, so the dependencies point one way: this module -> the runs
//! -> `entry`, `agent`, `diagram`, `run` -> [`crate::record`].

mod agent;
mod diagram;
mod entry;
mod interrupted;
mod kept;
mod live;
mod run;
mod simulated;

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tracing::{error, info, warn};

use crate::cluster::Cluster;
use crate::config::ControllerConfig;
use crate::history::History;
use crate::record::Stored;
use crate::telemetry;
use ringleader_core::spec::AlgorithmSpec;
use ringleader_core::topology::TopologyKind;

pub use crate::error::{LaunchError, Overloaded};
pub use crate::record::{
    ElectionRecord, LeaderInfo, LeadershipChange, MAX_LISTED_LINKS_N, MAX_PARTICIPANTS, Metrics, Mode, Participant,
    SimOptions, State,
};
pub use entry::{Entry, WatchEvent};
pub use kept::{MAX_RECORDED_VIOLATIONS, MAX_TIMELINE};
pub use run::{ActiveFaults, Drawing, FaultProbe, MAX_DIAGRAM_NODES, Plan, PlannedFault, SHUT_DOWN, STOPPED};
use run::{Context, Outcome, now_ms};

#[derive(Debug, Default)]
struct Registry {
    /// Most recent first.
    order: VecDeque<Arc<Entry>>,
    by_id: HashMap<String, Arc<Entry>>,
    last_finished: Option<Arc<Entry>>,
    /// The weight of the final records held ([`ElectionRecord::weight`]).
    stored: u64,
}

impl Registry {
    /// Forget the entry at `pos` of `order`.
    fn forget(&mut self, pos: usize) {
        if let Some(old) = self.order.remove(pos) {
            let old_id = old.inspect(|r| r.id.clone());
            self.by_id.remove(&old_id);
            self.stored = self.stored.saturating_sub(old.counted());
        }
    }
}

/// The note of a record whose diagram was dropped to keep the stored records within their bytes.
pub const DIAGRAM_DROPPED: &str = "the space-time diagram was dropped to keep the stored records within \
                                   controller.max_stored_mib (the oldest diagrams go first)";

/// The elections this controller has run, and the means to run more.
#[derive(Debug)]
pub struct Elections {
    cluster: Arc<Cluster>,
    config: ControllerConfig,
    registry: Mutex<Registry>,
    next: std::sync::atomic::AtomicU64,
    simulations: tokio::sync::Semaphore,
    /// Describes the injected faults active now (set by the API), so a LIVE
    /// election that fails says which faults were in the way.
    fault_note: std::sync::OnceLock<FaultNote>,
    /// Which node indices are crashed by an injected fault now (set by the API).
    faults: std::sync::OnceLock<Box<dyn FaultProbe>>,
    /// Where records are kept across restarts, if anywhere.
    history: Option<History>,
    /// Elections admitted and not finished yet.
    running: Arc<std::sync::atomic::AtomicUsize>,
    /// The controller is shutting down ([`Elections::stop_all`]).
    shutting_down: std::sync::atomic::AtomicBool,
    /// The memory the running elections reserved (`memory_budget_mib`).
    budget: Arc<crate::budget::Budget>,
    /// The stored records' share of the budget (`max_stored_mib`), set aside for good.
    _records: Option<crate::budget::Reservation>,
}

/// Describes the active faults that concern an election (its id given), if
/// any (see [`Elections::set_fault_note`]).
pub struct FaultNote(pub Box<NoteOf>);

/// What [`FaultNote`] holds: the note for the election of an id.
pub type NoteOf = dyn Fn(&str) -> Option<String> + Send + Sync;

impl std::fmt::Debug for FaultNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FaultNote")
    }
}

impl Elections {
    /// An empty record over `cluster`, kept in memory only.
    pub fn new(cluster: Arc<Cluster>, config: ControllerConfig) -> Arc<Elections> {
        Self::with_history(cluster, config, None, Vec::new())
    }

    /// A record over `cluster` that starts with `restored` (oldest first) and
    /// writes every change to `history`.
    pub fn with_history(
        cluster: Arc<Cluster>,
        config: ControllerConfig,
        history: Option<History>,
        restored: Vec<ElectionRecord>,
    ) -> Arc<Elections> {
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        let mut registry = Registry::default();
        for record in restored {
            let finished = record.state == State::Finished;
            let id = record.id.clone();
            let entry = Arc::new(Entry::restored(record));
            registry.stored += entry.count();
            registry.order.push_front(entry.clone());
            registry.by_id.insert(id, entry.clone());
            if finished {
                registry.last_finished = Some(entry);
            }
        }
        let budget = crate::budget::Budget::new(config.memory_budget_mib);
        // Config::validate keeps the budget above the records' share.
        let records = (config.memory_budget_mib > 0)
            .then(|| budget.reserve(config.max_stored_mib << 20, || "the stored records".into()).ok())
            .flatten();
        Arc::new(Elections {
            cluster,
            registry: Mutex::new(registry),
            next: 0.into(),
            simulations: tokio::sync::Semaphore::new(cores),
            fault_note: std::sync::OnceLock::new(),
            faults: std::sync::OnceLock::new(),
            history,
            running: Arc::new(0.into()),
            shutting_down: false.into(),
            budget,
            _records: records,
            config,
        })
    }

    /// Abort on every node, in a task, the LIVE elections read back from
    /// the history as interrupted: a controller that died left them
    /// running there (see `interrupted.rs`). `None` when there are none, or
    /// on the embedded cluster (its nodes started with this process).
    pub fn abort_interrupted(&self) -> Option<tokio::task::JoinHandle<()>> {
        if self.cluster.is_local() || self.cluster.is_empty() {
            return None;
        }
        let ids: Vec<String> = self
            .registry()
            .order
            .iter()
            .filter_map(|e| e.inspect(|r| interrupted::left_on_nodes(r).then(|| r.id.clone())))
            .collect();
        if ids.is_empty() {
            return None;
        }
        let nodes = self.cluster.nodes().to_vec();
        Some(tokio::spawn(interrupted::abort_everywhere(nodes, ids, self.config.rpc_timeout())))
    }

    /// If `entry` is a LIVE election that a previous controller stopped in
    /// the middle, have every node forget it again (cheap and idempotent; in
    /// the background, best effort): `StopElection` of such a record.
    pub fn forget_if_interrupted(&self, entry: &Entry) {
        let Some(id) = entry.inspect(|r| interrupted::left_on_nodes(r).then(|| r.id.clone())) else { return };
        for node in self.cluster.nodes() {
            node.forget(&id, self.config.rpc_timeout());
        }
    }

    /// Follow whether the history takes writes (`None` without a history).
    pub fn watch_history(&self) -> Option<tokio::sync::watch::Receiver<bool>> {
        self.history.as_ref().map(|h| h.watch_writable())
    }

    /// Write every record change so far to disk and close the history (no-op
    /// without one), retrying a while if the disk refuses.
    pub fn close_history(&self) {
        if let Some(h) = &self.history {
            h.close();
        }
    }

    /// Install the probe of active faults that kept leaderships use to judge
    /// agreement among live nodes and why a leader was lost (once; later
    /// calls are ignored).
    pub fn set_fault_probe(&self, probe: Box<dyn FaultProbe>) {
        let _ = self.faults.set(probe);
    }

    /// Install the description of active faults that failed LIVE elections
    /// quote (once; later calls are ignored).
    pub fn set_fault_note(&self, note: FaultNote) {
        let _ = self.fault_note.set(note);
    }

    /// Why the node at cluster index `i` cannot run a position now, if it
    /// cannot: crashed by an injected fault, or its event stream to the
    /// controller closed (the process unreachable, stopped or paused).
    pub fn node_down(&self, i: usize) -> Option<&'static str> {
        let crashed = self.faults.get().is_some_and(|p| p.active(None).crashed.contains(&i));
        let node = self.cluster.nodes().get(i)?;
        if crashed {
            Some("crashed by an injected fault")
        } else if !node.events_connected() {
            Some("not answering: its event stream to the controller is closed")
        } else {
            None
        }
    }

    /// The cluster indices of the nodes that run the `n` positions of a
    /// LIVE election: the nodes `names` names, in order, or else the first
    /// `n` nodes that are up (see [`Elections::node_down`]), in cluster order.
    /// A named node that is unknown, named twice or down, or too few nodes up,
    /// is refused naming the field `nodes` (or `size`) and the nodes down.
    pub fn place(&self, names: &[String], n: u32) -> Result<Vec<usize>, crate::error::RequestError> {
        use crate::error::RequestError;
        let nodes = self.cluster.nodes();
        let down = |i: usize| self.node_down(i);
        if !names.is_empty() {
            let mut placement = Vec::with_capacity(names.len());
            for name in names {
                let Some(i) = nodes.iter().position(|node| node.name() == *name) else {
                    let known: Vec<String> = nodes.iter().take(16).map(|n| n.name()).collect();
                    return Err(RequestError::invalid(
                        "nodes",
                        format!("no node `{name}` in the cluster; its nodes: {}", known.join(", ")),
                    ));
                };
                if placement.contains(&i) {
                    return Err(RequestError::invalid("nodes", format!("`{name}` named twice; one position per node")));
                }
                if let Some(why) = down(i) {
                    return Err(RequestError::precondition("nodes", format!("`{name}` is down: {why}")));
                }
                placement.push(i);
            }
            return Ok(placement);
        }
        let up: Vec<usize> = (0..nodes.len()).filter(|&i| down(i).is_none()).take(n as usize).collect();
        if up.len() < n as usize {
            let all_up = (0..nodes.len()).filter(|&i| down(i).is_none()).count();
            let gone: Vec<String> =
                (0..nodes.len()).filter_map(|i| down(i).map(|why| format!("{} ({why})", nodes[i].name()))).collect();
            let shown = gone.iter().take(8).cloned().collect::<Vec<_>>().join(", ");
            let more = if gone.len() > 8 { format!(" and {} more", gone.len() - 8) } else { String::new() };
            return Err(RequestError::precondition(
                "size",
                format!(
                    "{n} positions but only {all_up} of the cluster's {} nodes are up; down: {shown}{more}; ask for \
                     size {all_up} or fewer, or recover the nodes (InjectFault with `recover`)",
                    nodes.len()
                ),
            ));
        }
        Ok(up)
    }

    /// The cluster elections run on.
    pub fn cluster(&self) -> &Arc<Cluster> {
        &self.cluster
    }

    /// The controller settings.
    pub fn config(&self) -> &ControllerConfig {
        &self.config
    }

    fn registry(&self) -> MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The election `id`.
    pub fn get(&self, id: &str) -> Option<Arc<Entry>> {
        self.registry().by_id.get(id).cloned()
    }

    /// Every kept election, most recent first.
    pub fn list(&self) -> Vec<Arc<Entry>> {
        self.registry().order.iter().cloned().collect()
    }

    /// The most recently finished election (state FINISHED).
    pub fn last_finished(&self) -> Option<Arc<Entry>> {
        self.registry().last_finished.clone()
    }

    /// The memory estimate of an election of `spec`'s algorithm on `n` positions of
    /// a `kind` overlay in `mode`, run here ([`crate::budget::estimate_of`]).
    pub fn estimate(&self, spec: &AlgorithmSpec, mode: Mode, kind: TopologyKind, n: u32) -> u64 {
        crate::budget::estimate_of(spec, mode, kind, n, self.cluster.is_local())
    }

    /// Could `bytes` ever fit the memory budget (nothing else running)? A
    /// sweep asks for each point before it waits for room.
    pub fn fits_the_budget(&self, bytes: u64, what: impl FnOnce() -> String) -> Result<(), crate::budget::OverBudget> {
        self.budget.fits_alone(bytes, what)
    }

    /// Admit an election estimated at `bytes` (described by `what` in a
    /// refusal) before its plan is built: refused while the history refuses
    /// writes (an election whose record could not be saved must not start),
    /// when it does not fit the memory budget beside what is reserved, or
    /// while `max_running_elections` run. The admission holds its share until
    /// the election it launches ends (or until it is dropped unused).
    pub fn admit(&self, bytes: u64, what: impl FnOnce() -> String) -> Result<Admission, LaunchError> {
        use std::sync::atomic::Ordering::SeqCst;
        if let Some(h) = self.history.as_ref().filter(|h| !h.writable()) {
            return Err(LaunchError::HistoryUnavailable(h.path().display().to_string()));
        }
        let reservation = self.budget.reserve(bytes, what)?;
        let limit = self.config.max_running_elections;
        if self.running.fetch_add(1, SeqCst) >= limit {
            self.running.fetch_sub(1, SeqCst);
            return Err(LaunchError::Overloaded(Overloaded(limit)));
        }
        Ok(Admission { _reservation: reservation, _slot: RunningSlot(self.running.clone()) })
    }

    /// Record `plan` as a PENDING election and run it in a task, within
    /// `admission`.
    pub fn launch_admitted(self: &Arc<Self>, plan: Plan, admission: Admission) -> Arc<Entry> {
        let seq = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        let started_at_ms = now_ms();
        let id = format!("e{seq}-{started_at_ms:x}");
        let participants = if plan.n() <= MAX_PARTICIPANTS {
            let mut initiator = vec![false; plan.ids.len()];
            for &p in &plan.initiators {
                initiator[p as usize] = true;
            }
            plan.ids
                .iter()
                .enumerate()
                .map(|(i, &id)| Participant {
                    position: i as u32,
                    node: self.node_name(&plan, i as u32),
                    id,
                    initiator: initiator[i],
                    decision: None,
                    messages_sent: 0,
                })
                .collect()
        } else {
            Vec::new()
        };
        let links = if plan.n() <= MAX_LISTED_LINKS_N {
            plan.topology.edges().into_iter().map(|(a, b)| [a, b]).collect()
        } else {
            Vec::new()
        };
        let record = ElectionRecord {
            topology: plan.topology.kind(),
            rule: plan.rule,
            n: plan.n(),
            k: plan.k(),
            seed: plan.seed,
            participants,
            links,
            diagram_asked: plan.diagram.is_some(),
            started_at_ms,
            keep_leader: plan.keep_leader,
            unit_delay: plan.mode == Mode::Simulated && plan.sim.unit_delay,
            options: plan.options.clone(),
            ..ElectionRecord::blank(id.clone(), plan.spec.name, plan.mode)
        };
        let entry = Arc::new(Entry::pending(record));
        {
            let mut reg = self.registry();
            reg.order.push_front(entry.clone());
            reg.by_id.insert(id.clone(), entry.clone());
            // Forget the oldest finished elections beyond the limit; running ones stay.
            while reg.order.len() > self.config.max_elections {
                let Some(pos) = reg.order.iter().rposition(|e| e.inspect(|r| r.state.is_terminal())) else { break };
                if let (Some(h), Some(old)) = (&self.history, reg.order.get(pos)) {
                    h.forget(old.inspect(crate::history::key));
                }
                reg.forget(pos);
            }
        }
        if let Some(h) = &self.history {
            entry.inspect(|r| h.put(r));
        }
        info!(election = %id, algorithm = plan.spec.name, mode = ?plan.mode, n = plan.n(), k = plan.k(), "election planned");
        telemetry::metrics().started(plan.spec.name, plan.mode);
        // The root of the election's trace: the nodes' spans descend from it.
        let span = telemetry::election_span(&id, plan.spec.name, plan.mode, plan.n(), plan.k());
        let traceparent = telemetry::traceparent_of(&span);
        let this = self.clone();
        let task_entry = entry.clone();
        let placement = plan.placement.clone();
        tokio::spawn(async move {
            // Run in a task of its own so that even a panic ends the election (FAILED) instead of leaving
            // it RUNNING with its waiters hanging.
            let runner = {
                let (this, entry) = (this.clone(), task_entry.clone());
                tokio::spawn(async move {
                    let ctx = this.context();
                    match plan.mode {
                        Mode::Live => {
                            let mut outcome = live::run(&ctx, &entry, &plan, traceparent).await;
                            if let (Some(error), Some(note)) = (outcome.error.as_mut(), this.fault_note.get())
                                && let Some(faults) = (note.0)(&entry.inspect(|r| r.id.clone()))
                            {
                                error.push_str(&format!("; injected faults active: {faults}"));
                            }
                            outcome
                        }
                        Mode::Simulated => simulated::run(&ctx, &entry, plan).await,
                    }
                })
            };
            let outcome = runner.await.unwrap_or_else(|e| Outcome::failed(format!("the election task crashed: {e}")));
            this.finish(&task_entry, outcome, admission, &placement).await;
            task_entry.inspect(|r| {
                telemetry::close_span(&span, r);
                telemetry::metrics().ended(r);
            });
            drop(span);
        });
        entry
    }

    /// Keep the final records within `max_stored_mib` by the one pruning
    /// rule the history follows too ([`crate::record::prune`]: the oldest
    /// diagrams first, then the oldest records). Returns the entries whose
    /// diagrams were dropped and the history keys of those forgotten (the
    /// history follows both).
    fn keep_within(&self, reg: &mut Registry) -> (Vec<Arc<Entry>>, Vec<String>) {
        let cap = self.stored_cap();
        if reg.stored <= cap {
            return (Vec::new(), Vec::new());
        }
        let ended: Vec<Arc<Entry>> =
            reg.order.iter().rev().filter(|e| e.inspect(|r| r.state.is_terminal())).cloned().collect();
        let stored: Vec<Stored> = ended.iter().map(|e| e.inspect(|r| Stored::of(r, DIAGRAM_DROPPED))).collect();
        let pruning = crate::record::prune(&stored, cap, usize::MAX);
        let mut dropped = Vec::new();
        for &i in &pruning.diagrams {
            let e = &ended[i];
            let before = e.counted();
            e.update(|r| {
                r.diagram_svg = None;
                r.notes.push(DIAGRAM_DROPPED.to_string());
                None
            });
            reg.stored = reg.stored.saturating_sub(before) + e.count();
            dropped.push(e.clone());
        }
        let mut forgotten = Vec::new();
        for &i in &pruning.records {
            let key = ended[i].inspect(crate::history::key);
            if let Some(pos) = reg.order.iter().position(|e| Arc::ptr_eq(e, &ended[i])) {
                reg.forget(pos);
                forgotten.push(key);
            }
        }
        (dropped, forgotten)
    }

    /// The bytes the stored records may weigh: `max_stored_mib`, or less
    /// when the history's volume is smaller ([`History::max_bytes`]).
    fn stored_cap(&self) -> u64 {
        let cap = self.config.max_stored_mib << 20;
        self.history.as_ref().map_or(cap, |h| cap.min(h.max_bytes()))
    }

    /// Bytes of final records held now ([`ElectionRecord::weight`]).
    pub fn stored_bytes(&self) -> u64 {
        self.registry().stored
    }

    /// Stop every election still running (the controller's shutdown): kept
    /// leaderships end, one-shot elections (simulations included) are
    /// cancelled, so none outlives the grace period.
    pub fn stop_all(&self) {
        self.shutting_down.store(true, std::sync::atomic::Ordering::SeqCst);
        let entries: Vec<Arc<Entry>> = self.registry().order.iter().cloned().collect();
        for e in entries.iter().filter(|e| !e.inspect(|r| r.state.is_terminal())) {
            e.stop();
        }
    }

    /// What a run borrows from the store.
    fn context(&self) -> Context<'_> {
        Context {
            config: &self.config,
            cluster: &self.cluster,
            simulations: &self.simulations,
            faults: &self.faults,
            shutting_down: &self.shutting_down,
        }
    }

    /// Wait until no election runs, or `timeout` passes; returns whether none runs.
    pub async fn wait_idle(&self, timeout: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        while self.running() > 0 {
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        true
    }

    /// Elections launched and not finished yet.
    pub fn running(&self) -> usize {
        self.running.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn node_name(&self, plan: &Plan, position: u32) -> String {
        match plan.mode {
            Mode::Simulated => format!("sim-{position}"),
            Mode::Live => {
                let i = plan.placement.get(position as usize).copied().unwrap_or(position as usize);
                self.cluster.nodes().get(i).map(|n| n.name()).unwrap_or_default()
            }
        }
    }

    /// Record the outcome: on disk first (with a history), then in memory,
    /// where callers and watchers see it: nothing is reported ended that a
    /// restart could lose.
    async fn finish(&self, entry: &Arc<Entry>, mut outcome: Outcome, admission: Admission, placement: &[usize]) {
        if outcome.error.is_none() && outcome.leader.is_none() && !entry.inspect(|r| r.keep_leader) {
            // A one-shot election without a leader is never FINISHED: its violations say why.
            outcome.error = Some(match outcome.violations.first() {
                Some(v) => format!("no leader: {v}"),
                None => "no leader".to_string(),
            });
        }
        // The runner has returned: nothing else changes the record now.
        let mut r = entry.snapshot();
        r.state = if outcome.error.is_some() { State::Failed } else { State::Finished };
        let finished_ok = r.state == State::Finished;
        r.error = outcome.error;
        r.agreed = outcome.agreed;
        r.violations = outcome.violations;
        r.metrics = outcome.metrics;
        r.leader = outcome.leader;
        r.diagram_svg = match outcome.diagram_svg {
            Some(svg) if svg.len() as u64 > self.config.max_diagram_kib << 10 => {
                r.notes.push(format!(
                    "the space-time diagram ({} KiB) was not kept: it is larger than controller.max_diagram_kib \
                     ({} KiB); draw fewer nodes, or without labels",
                    svg.len() >> 10,
                    self.config.max_diagram_kib
                ));
                None
            }
            svg => svg.map(Arc::from),
        };
        r.diagram_drawn += u32::from(r.diagram_svg.is_some());
        if !r.participants.is_empty() {
            for (p, (decision, sent)) in r.participants.iter_mut().zip(outcome.per_position) {
                p.decision = decision;
                p.messages_sent = sent;
                let at = placement.get(p.position as usize).copied().unwrap_or(p.position as usize);
                if r.mode == Mode::Live
                    && let Some(node) = self.cluster.nodes().get(at)
                {
                    p.node = node.name();
                }
            }
        }
        if let Some(h) = &self.history {
            match h.save(&r).await {
                Ok(crate::history::Saved::Whole) => {}
                // What is answered is what is on disk.
                Ok(crate::history::Saved::WithoutDiagram) => {
                    r.diagram_svg = None;
                    r.notes.push(crate::history::DIAGRAM_NOT_SAVED.to_string());
                }
                // Only when the controller stops while the disk refuses writes.
                Err(e) => error!(election = %r.id, error = %e, "the election ended but its record is not on disk"),
            }
        }
        match r.state {
            State::Failed => warn!(election = %r.id, error = ?r.error, "election failed"),
            _ => info!(
                election = %r.id,
                leader = ?r.leader.as_ref().map(|l| l.id),
                agreed = r.agreed,
                violations = r.violations.len(),
                messages = r.metrics.as_ref().map(|m| m.messages),
                "election finished"
            ),
        }
        if let Some(faults) = self.faults.get() {
            // Before anyone hears that it ended: its scoped faults are gone by then.
            faults.ended(&r.id);
        }
        entry.update(|current| {
            *current = r;
            Some(WatchEvent::Finished(Box::new(current.clone())))
        });
        let (dropped, forgotten) = {
            let mut reg = self.registry();
            if finished_ok {
                reg.last_finished = Some(entry.clone());
            }
            if reg.by_id.contains_key(&entry.inspect(|r| r.id.clone())) {
                reg.stored += entry.count();
            }
            self.keep_within(&mut reg)
        };
        if let Some(h) = &self.history {
            // The history keeps what memory keeps: the same diagrams dropped, the same records forgotten.
            for e in dropped {
                e.inspect(|r| h.put(r));
            }
            for key in forgotten {
                h.forget(key);
            }
        }
        // Its memory and its running slot are free before anyone waiting hears that it ended.
        drop(admission);
        entry.mark_done();
    }

    /// The memory budget elections and checks are admitted against.
    pub fn budget(&self) -> &Arc<crate::budget::Budget> {
        &self.budget
    }
}

impl telemetry::Records for Elections {
    fn each_record(&self, f: &mut dyn FnMut(&ElectionRecord)) {
        for entry in self.list() {
            entry.inspect(|r| f(r));
        }
    }
}

/// An election in words, for a refusal: "a SIMULATED as-far election of 1000 positions".
pub fn describe(mode: Mode, algorithm: &str, n: u32) -> String {
    let mode = match mode {
        Mode::Live => "LIVE",
        Mode::Simulated => "SIMULATED",
    };
    format!("a {mode} {algorithm} election of {n} positions")
}

/// An election let in by [`Elections::admit`]: its share of the memory
/// budget and its running slot, both given back when dropped.
#[derive(Debug)]
pub struct Admission {
    _reservation: crate::budget::Reservation,
    _slot: RunningSlot,
}

/// One of `max_running_elections`, given back when dropped.
#[derive(Debug)]
struct RunningSlot(Arc<std::sync::atomic::AtomicUsize>);

impl Drop for RunningSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}
