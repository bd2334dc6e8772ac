//! The elections this controller keeps, and the means to run more: the
//! store of records and their watchers ([`Elections`]), the public face of
//! the submodules that run an election by its mode.
//!
//! A [`Plan`] (built and checked by [`crate::api`]) fixes everything about an
//! election: algorithm, overlay, ids, initiators, mode. [`Elections::launch`]
//! records it and runs it in a task:
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
mod kept;
mod live;
mod overlap;
mod run;
mod simulated;

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tracing::{error, info, warn};

use crate::cluster::Cluster;
use crate::config::ControllerConfig;
use crate::history::History;
use crate::telemetry;

pub use crate::error::{LaunchError, Overloaded};
pub use crate::record::{
    ElectionRecord, LeaderInfo, LeadershipChange, MAX_PARTICIPANTS, Metrics, Mode, Participant, SimOptions, State,
};
pub use entry::{Entry, WatchEvent};
pub use kept::{MAX_RECORDED_VIOLATIONS, MAX_TIMELINE};
pub use run::{ActiveFaults, Drawing, FaultProbe, MAX_DIAGRAM_NODES, Plan, SHUT_DOWN, STOPPED};
use run::{Context, Outcome, now_ms};

#[derive(Debug, Default)]
struct Registry {
    /// Most recent first.
    order: VecDeque<Arc<Entry>>,
    by_id: HashMap<String, Arc<Entry>>,
    last_finished: Option<Arc<Entry>>,
}

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
    /// Elections launched and not finished yet.
    running: std::sync::atomic::AtomicUsize,
    /// The controller is shutting down ([`Elections::stop_all`]).
    shutting_down: std::sync::atomic::AtomicBool,
    /// The memory the running elections reserved (`memory_budget_mib`).
    budget: Arc<crate::budget::Budget>,
}

/// Describes the active faults, if any (see [`Elections::set_fault_note`]).
pub struct FaultNote(pub Box<dyn Fn() -> Option<String> + Send + Sync>);

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
            registry.order.push_front(entry.clone());
            registry.by_id.insert(id, entry.clone());
            if finished {
                registry.last_finished = Some(entry);
            }
        }
        Arc::new(Elections {
            cluster,
            registry: Mutex::new(registry),
            next: 0.into(),
            simulations: tokio::sync::Semaphore::new(cores),
            fault_note: std::sync::OnceLock::new(),
            faults: std::sync::OnceLock::new(),
            history,
            running: 0.into(),
            shutting_down: false.into(),
            budget: crate::budget::Budget::new(config.memory_budget_mib),
            config,
        })
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

    /// Could `plan` ever fit the memory budget (nothing else running)? A
    /// sweep asks before it waits for room.
    pub fn fits_the_budget(&self, plan: &Plan) -> Result<(), crate::budget::OverBudget> {
        self.budget.fits_alone(crate::budget::estimate(plan, self.cluster.is_local()), || describe(plan))
    }

    /// Record `plan` as a PENDING election and run it in a task. Refused
    /// while `max_running_elections` run, or while the history refuses writes
    /// (an election whose record could not be saved must not start).
    pub fn launch(self: &Arc<Self>, plan: Plan) -> Result<Arc<Entry>, LaunchError> {
        use std::sync::atomic::Ordering::SeqCst;
        if let Some(h) = self.history.as_ref().filter(|h| !h.writable()) {
            return Err(LaunchError::HistoryUnavailable(h.path().display().to_string()));
        }
        let bytes = crate::budget::estimate(&plan, self.cluster.is_local());
        let reservation = self.budget.reserve(bytes, || describe(&plan))?;
        let limit = self.config.max_running_elections;
        if self.running.fetch_add(1, SeqCst) >= limit {
            self.running.fetch_sub(1, SeqCst);
            return Err(LaunchError::Overloaded(Overloaded(limit)));
        }
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
                    node: self.node_name(plan.mode, i as u32),
                    id,
                    initiator: initiator[i],
                    decision: None,
                    messages_sent: 0,
                })
                .collect()
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
            started_at_ms,
            keep_leader: plan.keep_leader,
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
                if let Some(old) = reg.order.remove(pos) {
                    let old_id = old.inspect(|r| r.id.clone());
                    reg.by_id.remove(&old_id);
                }
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
                                && let Some(faults) = (note.0)()
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
            this.finish(&task_entry, outcome).await;
            drop(reservation);
            task_entry.inspect(|r| {
                telemetry::close_span(&span, r);
                telemetry::metrics().ended(r);
            });
            drop(span);
        });
        Ok(entry)
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

    fn node_name(&self, mode: Mode, position: u32) -> String {
        match mode {
            Mode::Simulated => format!("sim-{position}"),
            Mode::Live => self.cluster.nodes().get(position as usize).map(|n| n.name()).unwrap_or_default(),
        }
    }

    /// Record the outcome: on disk first (with a history), then in memory,
    /// where callers and watchers see it: nothing is reported ended that a
    /// restart could lose.
    async fn finish(&self, entry: &Arc<Entry>, mut outcome: Outcome) {
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
        r.diagram_svg = outcome.diagram_svg;
        if !r.participants.is_empty() {
            for (p, (decision, sent)) in r.participants.iter_mut().zip(outcome.per_position) {
                p.decision = decision;
                p.messages_sent = sent;
                if r.mode == Mode::Live
                    && let Some(node) = self.cluster.nodes().get(p.position as usize)
                {
                    p.node = node.name();
                }
            }
        }
        if let Some(h) = &self.history
            && let Err(e) = h.save(&r).await
        {
            // Only when the controller stops while the disk refuses writes.
            error!(election = %r.id, error = %e, "the election ended but its record is not on disk");
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
        entry.update(|current| {
            *current = r;
            Some(WatchEvent::Finished(Box::new(current.clone())))
        });
        if finished_ok {
            self.registry().last_finished = Some(entry.clone());
        }
        self.running.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
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

/// `plan` in words, for a refusal: "a SIMULATED as-far election of 1000 positions".
fn describe(plan: &Plan) -> String {
    let mode = match plan.mode {
        Mode::Live => "LIVE",
        Mode::Simulated => "SIMULATED",
    };
    format!("a {mode} {} election of {} positions", plan.spec.name, plan.n())
}
