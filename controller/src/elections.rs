//! Running elections: plan -> configure the nodes -> start -> collect the
//! decisions -> verdict -> record.
//!
//! A [`Plan`] (built and checked by [`crate::api`]) fixes everything about an
//! election: algorithm, overlay, ids, initiators, mode. [`Elections::launch`]
//! records it and runs it in a task:
//!
//! * **LIVE**: position `i` runs on cluster node `i`. Every position is
//!   prepared (its id, its ports -> the neighbours' node addresses) before any
//!   initiator is started; the controller then waits for every decision (the
//!   nodes' `Events` streams, with a `Status` poll as a safety net), waits
//!   until the election is quiet (every message sent has been received or
//!   rejected, twice in a row), sums the nodes' counters, checks the
//!   invariants and aborts the election on the nodes to free their memory.
//! * **SIMULATED**: the node crate's deterministic simulator, on a blocking
//!   thread.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ringleader_core::algo::catalogue::AlgorithmSpec;
use ringleader_core::algo::detector::DetectorConfig;
use ringleader_core::algo::{Decision, MsgKind, Role, Rule};
use ringleader_core::diagram::{self, Arrow};
use ringleader_core::invariants;
use ringleader_core::sim::{self, SimConfig};
use ringleader_core::topology::Topology;
use ringleader_proto::v1 as pb;
use tokio::sync::{broadcast, watch};
use tokio::task::JoinSet;
use tracing::{error, info, warn};

use crate::cluster::{Cluster, Node};
use crate::config::ControllerConfig;
pub use crate::error::{LaunchError, Overloaded};
use crate::failover::{self, Mark, Tracker};
pub use crate::record::{
    ElectionRecord, LeaderInfo, LeadershipChange, MAX_PARTICIPANTS, Metrics, Mode, Participant, SimOptions, State,
};
use crate::telemetry;

/// The most nodes a space-time diagram is drawn for.
pub const MAX_DIAGRAM_NODES: u32 = 256;

/// A fully resolved, checked election.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The algorithm.
    pub spec: &'static AlgorithmSpec,
    /// LIVE or SIMULATED.
    pub mode: Mode,
    /// The overlay.
    pub topology: Topology,
    /// Who wins.
    pub rule: Rule,
    /// Ids in ring order (position `i` has `ids[i]`).
    pub ids: Vec<u64>,
    /// Initiator positions, sorted.
    pub initiators: Vec<u32>,
    /// Seed of every random choice.
    pub seed: u64,
    /// Simulator options (SIMULATED only).
    pub sim: SimOptions,
    /// Draw the space-time diagram (LIVE: from the nodes' message logs).
    pub diagram: bool,
    /// Keep a leader until stopped (failure-tolerant algorithms, LIVE).
    pub keep_leader: bool,
    /// The failure detector of a kept leadership.
    pub detector: DetectorConfig,
}

impl Plan {
    /// Number of positions.
    pub fn n(&self) -> u32 {
        self.ids.len() as u32
    }

    /// Number of initiators.
    pub fn k(&self) -> u32 {
        self.initiators.len() as u32
    }
}

/// The error of an election ended by `StopElection` before it finished.
pub const STOPPED: &str = "stopped by StopElection before it finished";
/// The error of an election ended by the controller's shutdown before it finished.
pub const SHUT_DOWN: &str = "stopped by the controller's shutdown before it finished";

/// Something a watcher of an election is told.
#[derive(Clone, Debug)]
pub enum WatchEvent {
    /// A position decided.
    Decided {
        /// Its position.
        position: u32,
        /// Its node.
        node: String,
        /// What it decided.
        decision: Decision,
    },
    /// The state changed (e.g. to RUNNING).
    State(Box<ElectionRecord>),
    /// The final record; nothing follows.
    Finished(Box<ElectionRecord>),
}

/// One recorded election and its watchers.
#[derive(Debug)]
pub struct Entry {
    record: Mutex<ElectionRecord>,
    events: broadcast::Sender<WatchEvent>,
    done: watch::Sender<bool>,
    /// Set by `StopElection` to end a kept leadership.
    stop: watch::Sender<bool>,
}

impl Entry {
    fn lock(&self) -> MutexGuard<'_, ElectionRecord> {
        self.record.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Read the current record without copying it.
    pub fn inspect<R>(&self, f: impl FnOnce(&ElectionRecord) -> R) -> R {
        f(&self.lock())
    }

    /// A copy of the current record.
    pub fn snapshot(&self) -> ElectionRecord {
        self.lock().clone()
    }

    /// The current record and a receiver of every later event, atomically
    /// (no event falls between the two).
    pub fn watch(&self) -> (ElectionRecord, broadcast::Receiver<WatchEvent>) {
        let record = self.lock();
        (record.clone(), self.events.subscribe())
    }

    /// Ask the election to end: a kept leadership ends FINISHED, a running
    /// one-shot election (LIVE or SIMULATED) is cancelled and ends FAILED;
    /// nothing happens to a finished one.
    pub fn stop(&self) {
        self.stop.send_replace(true);
    }

    /// Wait until the election is finished or failed.
    pub async fn wait_done(&self) {
        let mut rx = self.done.subscribe();
        let _ = rx.wait_for(|d| *d).await;
    }

    fn update(&self, f: impl FnOnce(&mut ElectionRecord) -> Option<WatchEvent>) {
        let mut record = self.lock();
        if let Some(event) = f(&mut record) {
            let _ = self.events.send(event);
        }
    }
}

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
    crashed: std::sync::OnceLock<CrashProbe>,
    /// Where records are kept across restarts, if anywhere.
    history: Option<crate::history::History>,
    /// Elections launched and not finished yet.
    running: std::sync::atomic::AtomicUsize,
    /// The controller is shutting down ([`Elections::stop_all`]).
    shutting_down: std::sync::atomic::AtomicBool,
}

/// Tells which node indices an injected fault keeps crashed now.
pub struct CrashProbe(pub Box<dyn Fn() -> Vec<usize> + Send + Sync>);

impl std::fmt::Debug for CrashProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CrashProbe")
    }
}

/// Most leadership changes a kept election records.
pub const MAX_TIMELINE: usize = 10_000;

/// Describes the active faults, if any (see [`Elections::set_fault_note`]).
pub struct FaultNote(pub Box<dyn Fn() -> Option<String> + Send + Sync>);

impl std::fmt::Debug for FaultNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FaultNote")
    }
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
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
        history: Option<crate::history::History>,
        restored: Vec<ElectionRecord>,
    ) -> Arc<Elections> {
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        let mut registry = Registry::default();
        for record in restored {
            let finished = record.state == State::Finished;
            let id = record.id.clone();
            let entry = Arc::new(Entry {
                record: Mutex::new(record),
                events: broadcast::channel(1).0,
                done: watch::channel(true).0,
                stop: watch::channel(false).0,
            });
            registry.order.push_front(entry.clone());
            registry.by_id.insert(id, entry.clone());
            if finished {
                registry.last_finished = Some(entry);
            }
        }
        Arc::new(Elections {
            cluster,
            config,
            registry: Mutex::new(registry),
            next: 0.into(),
            simulations: tokio::sync::Semaphore::new(cores),
            fault_note: std::sync::OnceLock::new(),
            crashed: std::sync::OnceLock::new(),
            history,
            running: 0.into(),
            shutting_down: false.into(),
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

    /// Install the probe of crashed nodes that kept leaderships use to judge
    /// agreement among live nodes (once; later calls are ignored).
    pub fn set_crash_probe(&self, probe: CrashProbe) {
        let _ = self.crashed.set(probe);
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

    /// Record `plan` as a PENDING election and run it in a task. Refused
    /// while `max_running_elections` run, or while the history refuses writes
    /// (an election whose record could not be saved must not start).
    pub fn launch(self: &Arc<Self>, plan: Plan) -> Result<Arc<Entry>, LaunchError> {
        use std::sync::atomic::Ordering::SeqCst;
        if let Some(h) = self.history.as_ref().filter(|h| !h.writable()) {
            return Err(LaunchError::HistoryUnavailable(h.path().display().to_string()));
        }
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
            id: id.clone(),
            algorithm: plan.spec.name,
            mode: plan.mode,
            state: State::Pending,
            topology: plan.topology.kind(),
            rule: plan.rule,
            n: plan.n(),
            k: plan.k(),
            seed: plan.seed,
            leader: None,
            agreed: false,
            violations: Vec::new(),
            metrics: None,
            participants,
            error: None,
            started_at_ms,
            keep_leader: plan.keep_leader,
            term: 0,
            leader_since_ms: 0,
            timeline: Vec::new(),
            overlaps: Vec::new(),
            failovers: Vec::new(),
            diagram_svg: None,
            notes: Vec::new(),
        };
        let entry = Arc::new(Entry {
            record: Mutex::new(record),
            events: broadcast::channel(1024).0,
            done: watch::channel(false).0,
            stop: watch::channel(false).0,
        });
        {
            let mut reg = self.registry();
            reg.order.push_front(entry.clone());
            reg.by_id.insert(id.clone(), entry.clone());
            // Forget the oldest finished elections beyond the limit; running ones stay.
            while reg.order.len() > self.config.max_elections {
                let Some(pos) = reg.order.iter().rposition(|e| e.lock().state.is_terminal()) else { break };
                if let Some(old) = reg.order.remove(pos) {
                    let old_id = old.lock().id.clone();
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
                    match plan.mode {
                        Mode::Live => {
                            let mut outcome = this.run_live(&entry, &plan, traceparent).await;
                            if let (Some(error), Some(note)) = (outcome.error.as_mut(), this.fault_note.get())
                                && let Some(faults) = (note.0)()
                            {
                                error.push_str(&format!("; injected faults active: {faults}"));
                            }
                            outcome
                        }
                        Mode::Simulated => this.run_simulated(&entry, plan).await,
                    }
                })
            };
            let outcome = runner.await.unwrap_or_else(|e| Outcome::failed(format!("the election task crashed: {e}")));
            this.finish(&task_entry, outcome).await;
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

    /// Why a stopped election stopped: a user's StopElection, or the shutdown.
    fn stopped_text(&self) -> &'static str {
        if self.shutting_down.load(std::sync::atomic::Ordering::SeqCst) { SHUT_DOWN } else { STOPPED }
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

    /// Follow a kept leadership until `StopElection`: record every change of
    /// belief, keep the current leader and term, and check safety as it goes
    /// (never two leaders of one term; overlaps of two self-believed leaders
    /// are reported with their duration).
    async fn keep(
        &self,
        entry: &Arc<Entry>,
        plan: &Plan,
        nodes: &[Arc<Node>],
        election_id: &str,
        mut events: crate::cluster::Subscription,
        started: Instant,
    ) -> Outcome {
        let n = nodes.len();
        let mut stop = entry.stop.subscribe();
        let mut belief: Vec<Option<(u64, Option<u64>)>> = vec![None; n];
        let mut claims: BTreeMap<u64, usize> = BTreeMap::new();
        let mut violations = Capped::default();
        let mut overlaps = Capped::default();
        // When an overlap began, and every term each node led while it lasted.
        let mut overlap_since: Option<(Instant, BTreeMap<usize, BTreeSet<u64>>)> = None;
        let mut events_open = true;
        let leads = |belief: &[Option<(u64, Option<u64>)>], i: usize| matches!(belief[i], Some((_, Some(l))) if l == plan.ids[i]);
        let describe_overlap = |who: &BTreeMap<usize, BTreeSet<u64>>, since: Instant| {
            overlap_text(who, |i| nodes[i].name(), since.elapsed().as_millis() as u64)
        };
        let info = |i: usize| LeaderInfo { node: nodes[i].name(), id: plan.ids[i], position: i as u32 };
        // Failover figures: a tick notices lost leaders without waiting for an event, and message
        // counts are read from the nodes off the loop (a snapshot at the loss, one at agreement).
        let mut tracker = Tracker::new();
        let mut shown: Option<usize> = None;
        let mut tick = tokio::time::interval(Duration::from_millis(50));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let mut snapshots: HashMap<usize, tokio::task::JoinHandle<HashMap<usize, u64>>> = HashMap::new();
        let (measured_tx, mut measured) = tokio::sync::mpsc::unbounded_channel::<(usize, u64)>();
        let rpc_timeout = self.config.rpc_timeout();
        let snapshot = |positions: Vec<usize>| {
            let nodes = nodes.to_vec();
            let id = election_id.to_string();
            tokio::spawn(async move {
                status_of(&nodes, &positions, &id, rpc_timeout)
                    .await
                    .into_iter()
                    .filter_map(|(i, s)| s.ok().map(|s| (i, s.election_messages + s.notification_messages)))
                    .collect::<HashMap<usize, u64>>()
            })
        };
        loop {
            let event = tokio::select! {
                _ = stop.wait_for(|s| *s) => break,
                _ = tick.tick() => None,
                Some((i, m)) = measured.recv() => {
                    tracker.set_messages(i, m);
                    entry.update(|r| {
                        r.failovers = tracker.records().to_vec();
                        None
                    });
                    continue;
                }
                ev = events.recv(), if events_open => match ev {
                    Some((node, ev)) if node < n && ev.kept && ev.position as usize == node => Some((node, ev)),
                    Some(_) => continue,
                    None => {
                        events_open = false;
                        continue;
                    }
                },
            };
            // A crashed node's last belief is frozen, and so is that of a node whose events no
            // longer reach the controller: judge leaders and agreement among live nodes.
            let crashed = self.crashed.get().map(|p| (p.0)()).unwrap_or_default();
            let live = |i: &usize| !crashed.contains(i) && nodes[*i].events_connected();
            // A crashed node's belief dies with it: the node comes back as a new incarnation that
            // reports afresh, and its old belief must not count (nor overlap) in between.
            for &i in crashed.iter().filter(|&&i| i < n) {
                belief[i] = None;
            }
            let at_ms = started.elapsed().as_millis() as u64;
            if let Some((node, ev)) = &event {
                let (node, leader) = (*node, (ev.leader_id != 0).then_some(ev.leader_id));
                belief[node] = Some((ev.term, leader));
                if leads(&belief, node) {
                    match claims.get(&ev.term) {
                        Some(&other) if other != node => violations.push(format!(
                            "two leaders of term {}: {} and {}",
                            ev.term,
                            nodes[other].name(),
                            nodes[node].name()
                        )),
                        _ => {
                            claims.insert(ev.term, node);
                        }
                    }
                }
                if live(&node) {
                    tracker.belief(at_ms, ev.term, leader);
                }
            }
            if let Some(p) = tracker.held_position().map(|p| p as usize)
                && !live(&p)
            {
                let cause = if crashed.contains(&p) { failover::CRASH_FAULT } else { failover::UNREACHABLE };
                if let Mark::Opened(i) = tracker.leader_lost(at_ms, cause) {
                    snapshots.insert(i, snapshot((0..n).filter(live).collect()));
                }
            }
            let leaders: Vec<usize> = (0..n).filter(|&i| leads(&belief, i)).filter(live).collect();
            match (&mut overlap_since, leaders.len() >= 2) {
                (None, true) => overlap_since = Some((Instant::now(), BTreeMap::new())),
                (Some((since, who)), false) => {
                    overlaps.push(describe_overlap(who, *since));
                    overlap_since = None;
                }
                _ => {}
            }
            // Terms change during an overlap (a stale leader elects again): name each one.
            if let Some((_, who)) = &mut overlap_since {
                for &i in &leaders {
                    who.entry(i).or_default().insert(belief[i].map_or(0, |b| b.0));
                }
            }
            // The leader now: the self-believed leader of the highest term.
            let top = leaders.iter().copied().max_by_key(|&i| belief[i].map_or(0, |b| b.0));
            let agreed = top.is_some_and(|t| {
                (0..n).filter(live).all(|i| matches!(belief[i], Some((_, Some(l))) if l == plan.ids[t]))
            });
            if let Some(t) = top.filter(|_| agreed)
                && let Mark::Closed(i) = tracker.agreed(at_ms, info(t), belief[t].map_or(0, |b| b.0))
            {
                if let Some(ms) = tracker.records().get(i).and_then(|r| r.agreement_ms) {
                    telemetry::metrics().failover(plan.spec.name, ms);
                }
                if let Some(before) = snapshots.remove(&i) {
                    let after = snapshot((0..n).filter(live).collect());
                    let tx = measured_tx.clone();
                    tokio::spawn(async move {
                        if let (Ok(before), Ok(after)) = (before.await, after.await) {
                            let spent = after.iter().filter_map(|(p, a)| Some(a.saturating_sub(*before.get(p)?))).sum();
                            let _ = tx.send((i, spent));
                        }
                    });
                }
            }
            if event.is_none() && top == shown {
                // A tick that changed nothing visible: keep the record as it is.
                entry.update(|r| {
                    r.agreed = agreed;
                    r.failovers = tracker.records().to_vec();
                    None
                });
                continue;
            }
            shown = top;
            entry.update(|r| {
                if let Some((node, ev)) = &event
                    && r.timeline.len() < MAX_TIMELINE
                {
                    r.timeline.push(LeadershipChange {
                        position: *node as u32,
                        node: nodes[*node].name(),
                        term: ev.term,
                        leader_id: (ev.leader_id != 0).then_some(ev.leader_id),
                        at_ms,
                    });
                }
                match top {
                    Some(t) => {
                        let term = belief[t].map_or(0, |b| b.0);
                        if r.leader.as_ref().map(|l| l.position) != Some(t as u32) || r.term != term {
                            r.leader_since_ms = now_ms();
                        }
                        r.term = r.term.max(term);
                        r.leader = Some(info(t));
                    }
                    None => r.leader = None,
                }
                r.agreed = agreed;
                r.violations = violations.to_vec();
                r.overlaps = overlaps.to_vec();
                r.failovers = tracker.records().to_vec();
                None
            });
        }
        if let Some((since, who)) = overlap_since.take() {
            overlaps.push(describe_overlap(&who, since));
        }
        let statuses = status_of(nodes, &(0..n).collect::<Vec<_>>(), election_id, self.config.rpc_timeout()).await;
        let diagram = match plan.diagram {
            true => self.live_diagram(plan, nodes, election_id).await,
            false => None,
        };
        self.abort(nodes, election_id).await;
        let mut metrics = Metrics {
            duration_ms: started.elapsed().as_millis() as u64,
            bound: 0,
            bound_formula: "none: a kept leadership elects again after every failure",
            ..Metrics::default()
        };
        // A node that no longer knows the election dropped it outside the controller: an Abort
        // from elsewhere, or a restarted process. Say so, instead of reporting silence.
        let mut notes: Vec<String> = statuses
            .iter()
            .filter(|(_, s)| s.as_ref().is_err_and(|e| e.contains("NotFound")))
            .map(|(i, _)| {
                format!(
                    "{} no longer ran the election when it was stopped (aborted outside the controller, or its \
                     process restarted); its counts are missing from the metrics",
                    nodes[*i].name()
                )
            })
            .collect();
        if self.shutting_down.load(std::sync::atomic::Ordering::SeqCst) {
            notes.push("ended by the controller's shutdown".to_string());
        }
        for s in statuses.into_iter().filter_map(|(_, s)| s.ok()) {
            metrics.election_messages += s.election_messages;
            metrics.notification_messages += s.notification_messages;
            for (kind, c) in &s.sent_by_kind {
                *metrics.by_kind.entry(kind.clone()).or_default() += c;
            }
            metrics.bytes += s.bytes;
            metrics.ideal_time = metrics.ideal_time.max(s.max_causal_time);
        }
        metrics.messages = metrics.election_messages + metrics.notification_messages;
        let record = entry.snapshot();
        entry.update(|r| {
            r.overlaps = overlaps.to_vec();
            r.notes = notes;
            None
        });
        let diagram_svg = diagram.map(|d| d.svg(record.leader.as_ref().map(|l| l.position), metrics.messages));
        Outcome {
            error: None,
            agreed: record.agreed,
            violations: violations.to_vec(),
            metrics: Some(metrics),
            leader: record.leader,
            per_position: Vec::new(),
            diagram_svg,
        }
    }

    fn node_name(&self, mode: Mode, position: u32) -> String {
        match mode {
            Mode::Simulated => format!("sim-{position}"),
            Mode::Live => self.cluster.nodes().get(position as usize).map(|n| n.name()).unwrap_or_default(),
        }
    }

    fn set_running(&self, entry: &Entry) {
        entry.update(|r| {
            r.state = State::Running;
            Some(WatchEvent::State(Box::new(r.clone())))
        });
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
        entry.done.send_replace(true);
    }

    async fn run_simulated(&self, entry: &Arc<Entry>, plan: Plan) -> Outcome {
        let mut stop = entry.stop.subscribe();
        // One simulation per core at a time; the others wait their turn (or are stopped waiting).
        let _permit = tokio::select! {
            permit = self.simulations.acquire() => match permit {
                Ok(p) => p,
                Err(_) => return Outcome::failed("the simulator is shutting down".into()),
            },
            () = stopped(&mut stop) => return Outcome::failed(self.stopped_text().into()),
        };
        self.set_running(entry);
        // The simulator's own cap (a generous multiple of the bound) or the configured budget, whichever is lower.
        let bound = plan.spec.bound_for(&plan.topology, plan.k() as u64);
        let own_cap = bound.saturating_mul(4).saturating_add(1_000);
        let budget = self.config.max_simulated_messages;
        let cfg = SimConfig {
            fifo: !plan.sim.non_fifo,
            unit_delay: plan.sim.unit_delay,
            log_arrows: plan.diagram,
            seed: plan.seed,
            max_deliveries: own_cap.min(budget),
            cancel: sim::Cancel::new(),
            ..SimConfig::default()
        };
        let cancel = cfg.cancel.clone();
        let started = Instant::now();
        let job = tokio::task::spawn_blocking(move || {
            let report = sim::run(plan.spec, &plan.topology, &plan.ids, &plan.initiators, plan.rule, &cfg);
            (plan, report)
        });
        tokio::pin!(job);
        let joined = tokio::select! {
            joined = &mut job => joined,
            () = stopped(&mut stop) => {
                // The simulator looks at the flag every few thousand events: it ends within milliseconds.
                cancel.cancel();
                job.await
            }
        };
        let duration_ms = started.elapsed().as_millis() as u64;
        let (plan, report) = match joined {
            Ok(r) => r,
            Err(e) => return Outcome::failed(format!("the simulator crashed: {e}")),
        };
        let error = if report.cancelled {
            Some(format!("{} ({} simulated deliveries done)", self.stopped_text(), report.deliveries))
        } else if !report.terminated && budget < own_cap {
            Some(format!(
                "stopped after {} messages, the simulator's budget per election (max_simulated_messages)",
                report.deliveries
            ))
        } else {
            None
        };
        let counters = &report.counters;
        let metrics = Metrics {
            messages: counters.messages,
            election_messages: counters.election_messages,
            notification_messages: counters.notification_messages,
            by_kind: counters.named().map(|(k, c)| (k.to_string(), c)).collect(),
            bytes: counters.bytes,
            ideal_time: report.ideal_time,
            duration_ms,
            bound: report.bound,
            bound_formula: plan.spec.bound_formula,
        };
        let leader = report.verdict.leader.map(|p| LeaderInfo {
            node: format!("sim-{p}"),
            id: plan.ids[p as usize],
            position: p,
        });
        let diagram_svg = plan.diagram.then(|| {
            let title = format!(
                "{}, n = {}, k = {}, seed {}: {} messages",
                plan.spec.name,
                plan.n(),
                plan.k(),
                plan.seed,
                report.counters.messages
            );
            let nodes = plan.ids.iter().enumerate().map(|(p, id)| format!("sim-{p} (id {id})")).collect();
            let d = ringleader_core::diagram::Diagram {
                title,
                nodes,
                arrows: &report.arrows,
                leader: report.verdict.leader,
                time_unit: "virtual time",
            };
            ringleader_core::diagram::svg(&d)
        });
        let per_position = if plan.n() <= MAX_PARTICIPANTS {
            report.decisions.iter().copied().zip(report.sent_per_node.iter().copied()).collect()
        } else {
            Vec::new()
        };
        Outcome {
            error,
            agreed: report.verdict.agreed,
            violations: report.verdict.violations,
            metrics: Some(metrics),
            leader,
            per_position,
            diagram_svg,
        }
    }

    async fn run_live(&self, entry: &Arc<Entry>, plan: &Plan, traceparent: String) -> Outcome {
        let election_id = entry.lock().id.clone();
        let n = plan.n() as usize;
        let Some(nodes) = self.cluster.nodes().get(..n).map(|s| s.to_vec()) else {
            return Outcome::failed(format!("the cluster has {} nodes; {n} are needed", self.cluster.len()));
        };
        let rpc_timeout = self.config.rpc_timeout();
        let mut events = self.cluster.subscribe(&election_id);

        // Configure every position before starting anyone, so no message finds an unprepared node.
        let mut is_initiator = vec![false; n];
        for &p in &plan.initiators {
            is_initiator[p as usize] = true;
        }
        let prepares = (0..n).map(|i| {
            let ports = plan
                .topology
                .ports(i as u32)
                .iter()
                .map(|link| pb::PortPeer {
                    position: link.peer,
                    address: if link.outgoing {
                        nodes[link.peer as usize].address().to_string()
                    } else {
                        String::new()
                    },
                    remote_port: link.remote_port,
                    id: plan.ids[link.peer as usize],
                    label: pb::Compass::from(link.label).into(),
                })
                .collect();
            pb::PrepareRequest {
                election_id: election_id.clone(),
                algorithm: plan.spec.name.to_string(),
                rule: pb::Rule::from(plan.rule) as i32,
                position: i as u32,
                size: n as u32,
                id: plan.ids[i],
                ports,
                initiator: is_initiator[i],
                // The same bits the simulator gives this position for this seed.
                coin: ringleader_core::algo::coin(plan.seed, i as u32),
                keep_leader: plan.keep_leader,
                detector: plan.keep_leader.then_some(pb::FailureDetector {
                    period_ms: plan.detector.period_ms,
                    timeout_ms: plan.detector.timeout_ms,
                }),
                traceparent: traceparent.clone(),
                log_messages: plan.diagram,
            }
        });
        let calls = nodes.iter().zip(prepares).map(|(node, req)| {
            let mut client = node.client();
            (node.clone(), async move { client.prepare(req).await.map(|_| ()) })
        });
        if let Err(e) = all_ok(calls, rpc_timeout, "Prepare").await {
            self.abort(&nodes, &election_id).await;
            return Outcome::failed(e);
        }
        self.set_running(entry);

        let started = Instant::now();
        let calls = plan.initiators.iter().map(|&p| {
            let node = nodes[p as usize].clone();
            let mut client = node.client();
            let req = pb::StartRequest { election_id: election_id.clone() };
            (node, async move { client.start(req).await.map(|_| ()) })
        });
        if let Err(e) = all_ok(calls, rpc_timeout, "Start").await {
            self.abort(&nodes, &election_id).await;
            return Outcome::failed(e);
        }
        if plan.keep_leader {
            return self.keep(entry, plan, &nodes, &election_id, events, started).await;
        }
        let mut stop = entry.stop.subscribe();

        // Collect decisions: events as they come, a Status poll of the
        // undecided now and then in case an event stream was not open.
        let mut decisions: Vec<Option<Decision>> = vec![None; n];
        let mut undecided = n;
        let mut last_decision = started;
        let deadline = tokio::time::Instant::now() + self.config.decision_timeout();
        let mut poll = tokio::time::interval_at(
            tokio::time::Instant::now() + Duration::from_millis(500),
            Duration::from_millis(500),
        );
        let mut timed_out = false;
        let mut events_open = true;
        while undecided > 0 {
            let found: Vec<(usize, Decision)> = tokio::select! {
                event = events.recv(), if events_open => match event {
                    Some((node, ev)) if node < n && ev.position as usize == node => {
                        decision_of(ev.role, ev.leader_id).map(|d| vec![(node, d)]).unwrap_or_default()
                    }
                    Some((node, ev)) => {
                        warn!(election = %election_id, node, position = ev.position, "event from an unexpected position");
                        Vec::new()
                    }
                    None => {
                        events_open = false;
                        Vec::new()
                    }
                },
                _ = poll.tick() => {
                    let pending: Vec<usize> = (0..n).filter(|&i| decisions[i].is_none()).collect();
                    let statuses = status_of(&nodes, &pending, &election_id, rpc_timeout).await;
                    statuses
                        .into_iter()
                        .filter_map(|(i, s)| s.ok().and_then(|s| decision_of(s.role, s.leader_id)).map(|d| (i, d)))
                        .collect()
                }
                _ = tokio::time::sleep_until(deadline) => {
                    timed_out = true;
                    break;
                }
                () = stopped(&mut stop) => {
                    self.abort(&nodes, &election_id).await;
                    return Outcome::failed(format!(
                        "{} ({} of {n} positions had decided)",
                        self.stopped_text(),
                        n - undecided
                    ));
                }
            };
            for (i, d) in found {
                if decisions[i].is_none() {
                    decisions[i] = Some(d);
                    undecided -= 1;
                    last_decision = Instant::now();
                    let node = nodes[i].name();
                    entry.update(|r| {
                        if let Some(p) = r.participants.get_mut(i) {
                            p.decision = Some(d);
                        }
                        Some(WatchEvent::Decided { position: i as u32, node, decision: d })
                    });
                }
            }
        }
        let duration_ms = last_decision.duration_since(started).as_millis() as u64;

        // Wait until every message sent has arrived (received or rejected), twice in a row.
        let quiet_deadline = tokio::time::Instant::now() + self.config.quiet_timeout();
        let all: Vec<usize> = (0..n).collect();
        let mut previous: Option<(u64, u64, u64)> = None;
        let mut violations = Vec::new();
        let statuses = loop {
            let polled = status_of(&nodes, &all, &election_id, rpc_timeout).await;
            let mut statuses = Vec::with_capacity(n);
            let mut failure = None;
            for (i, s) in polled {
                match s {
                    Ok(s) => statuses.push(s),
                    Err(e) => {
                        failure = Some(format!("Status on {} ({}) failed: {e}", nodes[i].name(), nodes[i].address()))
                    }
                }
            }
            if failure.is_none() && statuses.len() != n {
                failure = Some(format!("Status answered for {} of {n} positions", statuses.len()));
            }
            if let Some(e) = failure {
                self.abort(&nodes, &election_id).await;
                return Outcome::failed(e);
            }
            let totals = statuses.iter().fold((0, 0, 0), |(s, r, j), st| {
                (s + st.election_messages + st.notification_messages, r + st.received, j + st.rejected)
            });
            if timed_out || (totals.0 == totals.1 + totals.2 && previous == Some(totals)) {
                break statuses;
            }
            let stop_asked = *stop.borrow();
            if stop_asked {
                self.abort(&nodes, &election_id).await;
                return Outcome::failed(format!("{} (waiting for its last messages)", self.stopped_text()));
            }
            if tokio::time::Instant::now() >= quiet_deadline {
                violations.push(format!(
                    "did not go quiet within {} ms: {} messages sent, {} received, {} rejected",
                    self.config.quiet_timeout_ms, totals.0, totals.1, totals.2
                ));
                break statuses;
            }
            previous = Some(totals);
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        let diagram = match plan.diagram {
            true => self.live_diagram(plan, &nodes, &election_id).await,
            false => None,
        };
        self.abort(&nodes, &election_id).await;

        // The nodes' final word on decisions wins over the events.
        for (i, s) in statuses.iter().enumerate() {
            if let Some(d) = decision_of(s.role, s.leader_id) {
                decisions[i] = Some(d);
            }
        }
        let mut metrics = Metrics {
            duration_ms,
            bound: plan.spec.bound_for(&plan.topology, plan.k() as u64),
            bound_formula: plan.spec.bound_formula,
            ..Metrics::default()
        };
        let mut rejected = 0;
        for (i, s) in statuses.iter().enumerate() {
            metrics.election_messages += s.election_messages;
            metrics.notification_messages += s.notification_messages;
            for (kind, c) in &s.sent_by_kind {
                *metrics.by_kind.entry(kind.clone()).or_default() += c;
            }
            metrics.bytes += s.bytes;
            metrics.ideal_time = metrics.ideal_time.max(s.max_causal_time);
            rejected += s.rejected;
            violations.extend(s.errors.iter().map(|e| format!("position {i}: {e}")));
        }
        metrics.by_kind.retain(|_, c| *c > 0);
        metrics.messages = metrics.election_messages + metrics.notification_messages;
        if rejected > 0 {
            violations.push(format!("{rejected} messages were rejected by the nodes"));
        }
        let verdict = invariants::verdict(
            plan.spec.expected_winner(&plan.topology, &plan.ids, &plan.initiators, plan.rule),
            plan.rule,
            &plan.ids,
            &decisions,
            metrics.messages,
            metrics.bound,
            plan.spec.bound_formula,
        );
        let mut all_violations = verdict.violations;
        all_violations.extend(violations);
        let leader = verdict.leader.map(|p| LeaderInfo {
            node: nodes[p as usize].name(),
            id: plan.ids[p as usize],
            position: p,
        });
        let diagram_svg = diagram.map(|d| d.svg(verdict.leader, metrics.messages));
        let per_position = if plan.n() <= MAX_PARTICIPANTS {
            decisions.iter().zip(&statuses).map(|(d, s)| (*d, s.election_messages + s.notification_messages)).collect()
        } else {
            Vec::new()
        };
        let error = timed_out.then(|| {
            let missing: Vec<usize> = (0..n).filter(|&i| decisions[i].is_none()).collect();
            format!(
                "timed out after {} ms waiting for decisions: {} of {n} positions undecided (positions {:?})",
                self.config.decision_timeout_ms,
                missing.len(),
                &missing[..missing.len().min(16)]
            )
        });
        Outcome {
            error,
            agreed: verdict.agreed,
            violations: all_violations,
            metrics: Some(metrics),
            leader,
            per_position,
            diagram_svg,
        }
    }

    /// Read the nodes' message logs of a LIVE election and pair each send with
    /// its receipts (a lost message has none, a duplicated one two) into the
    /// arrows of its space-time diagram, in microseconds since the first send.
    async fn live_diagram(&self, plan: &Plan, nodes: &[Arc<Node>], election_id: &str) -> Option<LiveDiagram> {
        let mut set = JoinSet::new();
        for (i, node) in nodes.iter().enumerate() {
            let mut client = node.client();
            let req = pb::MessagesRequest { election_id: election_id.to_string() };
            let timeout = self.config.rpc_timeout();
            set.spawn(async move { (i, tokio::time::timeout(timeout, client.messages(req)).await) });
        }
        let mut logs: Vec<Option<pb::MessageLog>> = vec![None; nodes.len()];
        while let Some(Ok((i, r))) = set.join_next().await {
            logs[i] = r.ok().and_then(|r| r.ok()).map(|r| r.into_inner());
        }
        let mut notes = Vec::new();
        let unread: Vec<String> =
            logs.iter().enumerate().filter(|(_, l)| l.is_none()).map(|(i, _)| nodes[i].name()).collect();
        if !unread.is_empty() {
            notes.push(format!("no log from {}", unread.join(", ")));
        }
        let truncated: u64 = logs.iter().flatten().map(|l| l.truncated).sum();
        if truncated > 0 {
            notes.push(format!("{truncated} log entries over the limit left out"));
        }
        let kind = |name: &str| MsgKind::ALL.into_iter().find(|k| k.name() == name);
        let mut sends: HashMap<(u32, u64), (u32, MsgKind, u64)> = HashMap::new();
        let mut origin = u64::MAX;
        for (from, log) in logs.iter().enumerate() {
            for s in log.iter().flat_map(|l| &l.sent) {
                if let Some(k) = kind(&s.kind) {
                    sends.insert((from as u32, s.seq), (s.to, k, s.at_us));
                    origin = origin.min(s.at_us);
                }
            }
        }
        if sends.is_empty() {
            origin = 0;
        }
        let mut arrows = Vec::with_capacity(sends.len());
        let mut received: HashSet<(u32, u64)> = HashSet::new();
        for (to, log) in logs.iter().enumerate() {
            for r in log.iter().flat_map(|l| &l.received) {
                if let Some(&(_, k, sent)) = sends.get(&(r.from, r.seq)) {
                    received.insert((r.from, r.seq));
                    arrows.push(Arrow {
                        from: r.from,
                        to: to as u32,
                        kind: k,
                        sent: sent.saturating_sub(origin),
                        received: Some(r.at_us.saturating_sub(origin)),
                    });
                }
            }
        }
        for (&(from, seq), &(to, kind, sent)) in &sends {
            if !received.contains(&(from, seq)) {
                arrows.push(Arrow { from, to, kind, sent: sent.saturating_sub(origin), received: None });
            }
        }
        arrows.sort_by_key(|a| (a.sent, a.from, a.to));
        arrows.truncate(diagram::MAX_ARROWS);
        let nodes = nodes.iter().zip(&plan.ids).map(|(n, id)| format!("{} (id {id})", n.name())).collect();
        Some(LiveDiagram {
            title: format!("{}, n = {}, k = {}, LIVE", plan.spec.name, plan.n(), plan.k()),
            nodes,
            arrows,
            notes,
        })
    }

    /// Forget the election on every node (best effort: failures are logged).
    async fn abort(&self, nodes: &[Arc<Node>], election_id: &str) {
        let calls = nodes.iter().map(|node| {
            let mut client = node.client();
            let req = pb::AbortRequest { election_id: election_id.to_string() };
            (node.clone(), async move { client.abort(req).await.map(|_| ()) })
        });
        if let Err(e) = all_ok(calls, self.config.rpc_timeout(), "Abort").await {
            warn!(election = %election_id, error = %e, "could not abort the election everywhere");
        }
    }
}

impl telemetry::Records for Elections {
    fn each_record(&self, f: &mut dyn FnMut(&ElectionRecord)) {
        for entry in self.list() {
            entry.inspect(|r| f(r));
        }
    }
}

/// The pieces of a LIVE election's space-time diagram.
struct LiveDiagram {
    title: String,
    nodes: Vec<String>,
    arrows: Vec<Arrow>,
    /// What is missing from the picture (unread logs, truncation).
    notes: Vec<String>,
}

impl LiveDiagram {
    fn svg(self, leader: Option<u32>, messages: u64) -> String {
        let mut title = format!("{}: {messages} messages", self.title);
        for note in &self.notes {
            title.push_str(&format!("; {note}"));
        }
        let d = diagram::Diagram { title, nodes: self.nodes, arrows: &self.arrows, leader, time_unit: "µs" };
        diagram::svg(&d)
    }
}

/// The result of running an election, applied to its record by `finish`.
#[derive(Debug, Default)]
struct Outcome {
    error: Option<String>,
    agreed: bool,
    violations: Vec<String>,
    metrics: Option<Metrics>,
    leader: Option<LeaderInfo>,
    per_position: Vec<(Option<Decision>, u64)>,
    diagram_svg: Option<String>,
}

impl Outcome {
    fn failed(error: String) -> Outcome {
        Outcome { error: Some(error), ..Outcome::default() }
    }
}

/// A node's decision from its protobuf role and leader id.
/// The text of an overlap: every node that believed it led while it lasted,
/// with each term it led meanwhile, e.g. `node-0 (term 2) and node-4 (terms
/// 1 and 3) believed they led at once for 120 ms`.
fn overlap_text(who: &BTreeMap<usize, BTreeSet<u64>>, name: impl Fn(usize) -> String, ms: u64) -> String {
    let names: Vec<String> = who
        .iter()
        .map(|(&i, terms)| {
            let terms: Vec<String> = terms.iter().map(u64::to_string).collect();
            match terms.as_slice() {
                [one] => format!("{} (term {one})", name(i)),
                [init @ .., last] => format!("{} (terms {} and {last})", name(i), init.join(", ")),
                [] => name(i),
            }
        })
        .collect();
    format!("{} believed they led at once for {ms} ms", names.join(" and "))
}

/// Resolves once `StopElection` asked the election to end (holds no borrow of the flag).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

fn decision_of(role: i32, leader: u64) -> Option<Decision> {
    match pb::Role::try_from(role).ok()? {
        pb::Role::Leader => Some(Decision { role: Role::Leader, leader }),
        pb::Role::Follower => Some(Decision { role: Role::Follower, leader }),
        pb::Role::Undecided | pb::Role::Unspecified => None,
    }
}

/// Run `calls` concurrently, each within `timeout`; the first failures, described.
/// Most violations (or overlaps) a kept leadership records word for word;
/// beyond, they are only counted. A cluster that cannot agree (e.g. with
/// delays above bully's timeouts) can otherwise add thousands a second, each
/// copied into every snapshot of the record.
pub const MAX_RECORDED_VIOLATIONS: usize = 100;

/// A list of findings kept to [`MAX_RECORDED_VIOLATIONS`], the rest counted.
#[derive(Clone, Debug, Default)]
struct Capped {
    list: Vec<String>,
    more: u64,
}

impl Capped {
    fn push(&mut self, finding: String) {
        if self.list.len() < MAX_RECORDED_VIOLATIONS {
            self.list.push(finding);
        } else {
            self.more += 1;
        }
    }

    /// The findings kept, and a last line counting the others if any.
    fn to_vec(&self) -> Vec<String> {
        let mut v = self.list.clone();
        if self.more > 0 {
            v.push(format!("... and {} more of the same kind, not recorded", self.more));
        }
        v
    }
}

async fn all_ok<F>(
    calls: impl Iterator<Item = (Arc<Node>, F)>,
    timeout: Duration,
    what: &'static str,
) -> Result<(), String>
where
    F: std::future::Future<Output = Result<(), tonic::Status>> + Send + 'static,
{
    let mut set = JoinSet::new();
    for (node, call) in calls {
        set.spawn(async move {
            let result = match tokio::time::timeout(timeout, call).await {
                Ok(Ok(())) => return Ok(()),
                Ok(Err(status)) => format!("{:?}: {}", status.code(), status.message()),
                Err(_) => format!("no answer within {} ms", timeout.as_millis()),
            };
            Err(format!("{what} on {} ({}) failed: {result}", node.name(), node.address()))
        });
    }
    let mut errors = Vec::new();
    while let Some(joined) = set.join_next().await {
        match joined {
            Ok(Ok(())) => {}
            Ok(Err(e)) => errors.push(e),
            Err(e) => errors.push(format!("{what} task failed: {e}")),
        }
    }
    if errors.is_empty() {
        return Ok(());
    }
    errors.sort();
    let more = errors.len().saturating_sub(3);
    errors.truncate(3);
    let mut msg = errors.join("; ");
    if more > 0 {
        msg.push_str(&format!(" (and {more} more)"));
    }
    Err(msg)
}

/// `Status` of the election at the nodes of `positions`, concurrently, in position order.
async fn status_of(
    nodes: &[Arc<Node>],
    positions: &[usize],
    election_id: &str,
    timeout: Duration,
) -> Vec<(usize, Result<pb::NodeElectionStatus, String>)> {
    let mut set = JoinSet::new();
    for &i in positions {
        let mut client = nodes[i].client();
        let req = pb::StatusRequest { election_id: election_id.to_string() };
        set.spawn(async move {
            let r = match tokio::time::timeout(timeout, client.status(req)).await {
                Ok(Ok(s)) => Ok(s.into_inner()),
                Ok(Err(status)) => Err(format!("{:?}: {}", status.code(), status.message())),
                Err(_) => Err(format!("no answer within {} ms", timeout.as_millis())),
            };
            (i, r)
        });
    }
    let mut out = Vec::with_capacity(positions.len());
    while let Some(joined) = set.join_next().await {
        if let Ok(r) = joined {
            out.push(r);
        }
    }
    out.sort_by_key(|(i, _)| *i);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kept leadership that cannot agree records at most 100 violations word for word and counts
    /// the rest (a 256-node kept bully on one process recorded thousands, each copied into every
    /// snapshot: GetElection answered 900 KB and the process grew to 2.9 GB).
    #[test]
    fn violations_beyond_the_cap_are_counted_not_kept() {
        let mut c = Capped::default();
        for i in 0..10_000 {
            c.push(format!("two leaders of term {i}"));
        }
        let v = c.to_vec();
        assert_eq!(v.len(), MAX_RECORDED_VIOLATIONS + 1);
        assert_eq!(v[99], "two leaders of term 99");
        assert_eq!(v[100], "... and 9900 more of the same kind, not recorded");
        let mut few = Capped::default();
        few.push("one".into());
        assert_eq!(few.to_vec(), ["one"]);
    }

    /// An overlap names every term each node led while it lasted, not only the terms when it began
    /// (it named node-4 "term 1" while node-4 led term 3).
    #[test]
    fn overlap_text_names_every_term_led() {
        let who = BTreeMap::from([(0, BTreeSet::from([2])), (4, BTreeSet::from([1, 3]))]);
        assert_eq!(
            overlap_text(&who, |i| format!("node-{i}"), 120),
            "node-0 (term 2) and node-4 (terms 1 and 3) believed they led at once for 120 ms"
        );
    }

    /// Node roles map to decisions; undecided and unknown roles do not.
    #[test]
    fn roles() {
        assert_eq!(decision_of(pb::Role::Leader as i32, 7), Some(Decision { role: Role::Leader, leader: 7 }));
        assert_eq!(decision_of(pb::Role::Follower as i32, 7), Some(Decision { role: Role::Follower, leader: 7 }));
        assert_eq!(decision_of(pb::Role::Undecided as i32, 0), None);
        assert_eq!(decision_of(99, 0), None);
    }
}
