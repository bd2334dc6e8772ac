//! Injected faults: the registry behind `InjectFault`, `ListFaults` and
//! `ClearFaults`, and the pushes that tell each node its share.
//!
//! The controller keeps every fault injected and not cleared, at most
//! `controller.max_faults` of them (active, scheduled or waiting; a fault
//! beyond is refused RESOURCE_EXHAUSTED, and a refused fault takes no id).
//! A node's share is what it must do to its own traffic: crashed or not, the
//! link rules of its outgoing messages in injection order, the peers of its
//! partition group. Each change (a fault made active, one cleared) is sent
//! only to the nodes it concerns, as that change alone (`Agent.ChangeFaults`:
//! a rule added or removed, the crash or the partition set or lifted), so
//! its cost does not grow with the faults held. A node the controller may
//! have lost touch with (never told anything yet, a failed push, its event
//! stream opened again since) gets its whole share instead (`Agent.SetFaults`)
//! with the next change, whether the change concerns it or not, which puts
//! it back in step; so does a node that does not know ChangeFaults.
//! Changes and their pushes are serialised, so the nodes see them in order.
//! A node applies faults in its transport layer (see
//! `ringleader_node::runtime`), so a live election meets them exactly where
//! real failures happen. `recover` clears the node's crash faults; a new
//! `partition` replaces the previous one; `ClearFaults` without an id clears
//! everything.
//!
//! Link faults may select a message kind (`link.kind`) and the nth matching
//! message per link (`link.nth`); the nodes apply both (each rule carries its
//! fault id, so a fault pushed again in a whole share keeps counting where it
//! was).
//!
//! A fault with `after` is WAITING until its event, then SCHEDULED for
//! `at_ms`, then ACTIVE. The controller watches the event itself (see
//! [`Watch`]): the election watched is the running LIVE kept leadership when
//! the fault is injected, else the next LIVE election started. It looks every
//! [`POLL`]: leadership events come from the nodes' event streams as they
//! happen, so a leader or term trigger fires within about `POLL` of the
//! controller hearing of it (a one-shot election's leader is known when it
//! finishes); a message-count trigger asks every node's `Agent.Status`, so it
//! fires once the count reported is reached, and the messages sent
//! meanwhile (at most one `POLL` plus an RPC round trip) are not held back;
//! a one-shot election that ends before a poll sees the count (many take a
//! few milliseconds) is counted by its record, and the fault fires after it.
//! The simulator's triggers are exact (`ringleader_core::sim`).
//!
//! **Scoped faults.** A fault may name an election (`election_id`, a
//! running LIVE one): it then concerns only that election's nodes, and on
//! them only that election's instance and traffic (each node keeps a fault
//! table per election beside its own: `ElectionFaults`,
//! `ChangeFaultsRequest.election_id`). The node's other elections run on,
//! and new elections are placed on it ([`Faults::active`] is the node-wide
//! faults only; [`Faults::active_in`] adds an election's own, which its
//! kept leadership's failover bookkeeping reads). `crash.leader` means that
//! election's leader. The fault ends with its election
//! ([`Faults::end_election`], called as the election's record becomes
//! final). A SIMULATED election is refused: it takes its faults in its
//! request.
//!
//! A `pause` (a GC pause, SIGSTOP, a VM stall) is ACTIVE from when it fires
//! until its `ms` have run, then leaves the registry by itself (the node
//! resumes on its own clock: it is told how long, not when). A node under
//! several pauses is told the latest end among them, so a second pause
//! extends the first; clearing one tells the node the end of those left (0:
//! resume now).

use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ringleader_core::faults::{Trigger, kind_named};
use ringleader_proto::v1 as pb;
use tonic::Code;
use tracing::{info, warn};

use crate::calls::{CallError, Failures, NodeFailure};
use crate::cluster::Cluster;
use crate::elections::ActiveFaults;
use crate::error::RequestError;

/// Longest `at_ms` accepted (one day).
pub const MAX_AT_MS: u64 = 86_400_000;

/// How often a fault waiting for an event looks at the election.
pub const POLL: Duration = Duration::from_millis(10);

/// What the controller knows of its elections, for faults that wait for an
/// event (implemented over the election registry by the API layer).
pub trait Watch: Send + Sync + 'static {
    /// The node that leads now (for `crash.leader`), if any.
    fn leader(&self) -> Option<String>;
    /// The id of the running LIVE kept leadership, if any.
    fn running_kept(&self) -> Option<String>;
    /// The ids of every LIVE election known, most recent first.
    fn live_elections(&self) -> Vec<String>;
    /// Election `id`: does it have a leader, and the highest term a node claimed to lead.
    fn progress(&self, id: &str) -> Option<(bool, u64)>;
    /// Election `id`'s message count, once it has finished (its record's metrics).
    fn messages(&self, id: &str) -> Option<u64>;
    /// Election `id` as a fault scoped to it needs it (`None`: unknown).
    fn election(&self, id: &str) -> Option<ElectionView>;
}

/// An election as a fault scoped to it sees it ([`Watch::election`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ElectionView {
    /// It runs on the nodes (LIVE), not in the simulator.
    pub live: bool,
    /// It has ended: finished, failed or stopped.
    pub ended: bool,
    /// The names of the nodes it runs on, by position (empty: not listed,
    /// a very large election; every node is taken to run it).
    pub nodes: Vec<String>,
    /// The node of its leader now, if it has one.
    pub leader: Option<String>,
}

/// The election a fault is scoped to, and the cluster indices of its nodes.
#[derive(Clone, Debug, PartialEq)]
struct Scope {
    election: String,
    nodes: Vec<usize>,
}

/// The trigger of `after`, checked; `None` without `after`.
pub fn trigger(after: Option<&pb::AfterEvent>) -> Result<Option<Trigger>, RequestError> {
    use pb::after_event::Event;
    let Some(after) = after else { return Ok(None) };
    let t = match after.event {
        None | Some(Event::LeaderElected(false)) => {
            return Err(RequestError::invalid("after", "give one of leader_elected: true, messages, term"));
        }
        Some(Event::LeaderElected(true)) => Trigger::LeaderElected,
        Some(Event::Messages(k)) => Trigger::Messages(k),
        Some(Event::Term(t)) => Trigger::Term(t),
    };
    ringleader_core::faults::validate_trigger(&t).map_err(|e| RequestError::invalid(e.field, e.reason))?;
    Ok(Some(t))
}

/// A fault resolved to node indices.
#[derive(Clone, Debug, PartialEq)]
enum Resolved {
    Crash(usize),
    /// Crash whoever leads when the fault fires.
    CrashLeader,
    Recover(usize),
    Link {
        from: Option<usize>,
        to: Option<usize>,
        spec: pb::LinkFaultSpec,
    },
    Partition(Vec<Vec<usize>>),
    /// The node's timers run at `rate` times real time.
    Clock {
        node: usize,
        rate: f64,
    },
    /// The node takes no step for `ms` (its end is [`Entry::until`]).
    Pause {
        node: usize,
        ms: u64,
    },
    /// Pause whoever leads when the fault fires.
    PauseLeader {
        ms: u64,
    },
}

/// Longest pause accepted (ten minutes).
pub const MAX_PAUSE_MS: u64 = 600_000;

#[derive(Clone, Debug)]
struct Entry {
    id: String,
    request: pb::InjectFaultRequest,
    resolved: Resolved,
    seed: u64,
    state: pb::FaultState,
    /// The event it waits for (while WAITING).
    after: Option<Trigger>,
    /// A planned stop: what the node handed over before it stopped.
    handovers: Vec<pb::HandoverResult>,
    /// An active pause: when it ends, and when it began (unix µs, taken
    /// before the node is told, so no later than the node's own start).
    until: Option<std::time::Instant>,
    paused_us: u64,
    /// The election it is scoped to (`None`: node-wide).
    scope: Option<Scope>,
}

impl Entry {
    /// The id of the election it is scoped to ("" when node-wide).
    fn scope_id(&self) -> &str {
        self.scope.as_ref().map_or("", |s| s.election.as_str())
    }

    /// Does it concern node `i` (a scoped fault: only its election's nodes)?
    fn on(&self, i: usize) -> bool {
        self.scope.as_ref().is_none_or(|s| s.nodes.contains(&i))
    }

    fn active(&self) -> bool {
        self.state == pb::FaultState::Active
    }
}

/// The fault registry of one controller.
#[derive(Debug)]
pub struct Faults {
    cluster: Arc<Cluster>,
    entries: Mutex<Vec<Entry>>,
    /// Serialises the changes to `entries` that concern the nodes, with their
    /// pushes, so the nodes see the changes in order (and ids are given in
    /// the order faults are registered).
    push: tokio::sync::Mutex<()>,
    /// The number of the next fault id (taken only once a fault is accepted).
    next: AtomicU64,
    rpc_timeout: Duration,
    /// Most faults held (`controller.max_faults`).
    max_faults: usize,
    /// Per node, how it stands with the controller: in step since which of
    /// its event-stream sessions ([`crate::cluster::Node::sessions`]), or not
    /// known to be (never told, or the last push failed).
    synced: Mutex<Vec<Synced>>,
    /// What the faults did after each change, with its unix time in µs
    /// (the last [`MAX_CHANGES`]): what a kept leadership's diagram draws.
    changes: Mutex<VecDeque<(u64, Snapshot)>>,
    /// Nodes handing their leaderships over before a planned stop.
    leaving: Mutex<Vec<usize>>,
}

/// Most changes of the faults in force remembered.
pub const MAX_CHANGES: usize = 1_000;

/// Most faults `GetCluster` describes on one node (the rest are counted):
/// a fault on every link would otherwise be described once per node.
pub const SHOWN_PER_NODE: usize = 16;

/// How a node stands with the controller's faults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Synced {
    /// Not known to hold its share: the next push sends all of it.
    No,
    /// Holds its share, as of this event-stream session.
    Since(u64),
    /// Does not know `ChangeFaults` (an older node): always the whole share.
    Whole,
}

/// What one change means for the nodes: per node (by index) and scope (an
/// election id, "" for node-wide), the change to send it.
type Changes = BTreeMap<(usize, String), pb::ChangeFaultsRequest>;

/// What the active faults do: node-wide, and each election's own (the
/// faults scoped to it alone).
#[derive(Clone, Debug, Default, PartialEq)]
struct Snapshot {
    node: ActiveFaults,
    scoped: BTreeMap<String, ActiveFaults>,
}

impl Snapshot {
    /// What election `election` meets (`None`: the node-wide faults only).
    fn seen_by(&self, election: Option<&str>) -> ActiveFaults {
        let Some(own) = election.and_then(|id| self.scoped.get(id)) else { return self.node.clone() };
        let mut out = self.node.clone();
        out.crashed.extend(own.crashed.iter().filter(|i| !self.node.crashed.contains(i)));
        out.cut_off.extend(own.cut_off.iter().filter(|i| !self.node.cut_off.contains(i)));
        out.paused.extend(own.paused.iter().copied());
        if !own.groups.is_empty() {
            out.groups = own.groups.clone();
        }
        out
    }
}

/// The registry as the elections see it ([`crate::elections::FaultProbe`]);
/// weak, so a store outliving the API holds no registry.
pub struct Probe(pub std::sync::Weak<Faults>);

impl crate::elections::FaultProbe for Probe {
    fn active(&self, election: Option<&str>) -> ActiveFaults {
        self.0.upgrade().map(|f| f.active_in(election)).unwrap_or_default()
    }

    fn changes_since(&self, since_us: u64, election: Option<&str>) -> Vec<(u64, ActiveFaults)> {
        self.0.upgrade().map(|f| f.changes_since(since_us, election)).unwrap_or_default()
    }

    fn ended(&self, election: &str) {
        if let Some(f) = self.0.upgrade() {
            f.end_election(election);
        }
    }

    fn prepared(&self, election: &str, positions: &[usize]) {
        if let Some(f) = self.0.upgrade() {
            f.election_prepared(election, positions);
        }
    }
}

/// Unix time in microseconds.
fn unix_us() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Faults {
    /// A registry for `cluster`, calling nodes with `rpc_timeout`, holding at
    /// most `max_faults` faults.
    pub fn new(cluster: Arc<Cluster>, rpc_timeout: Duration, max_faults: usize) -> Arc<Self> {
        let synced = Mutex::new(vec![Synced::No; cluster.len()]);
        Arc::new(Faults {
            cluster,
            entries: Mutex::new(Vec::new()),
            push: tokio::sync::Mutex::new(()),
            next: AtomicU64::new(1),
            rpc_timeout,
            max_faults,
            synced,
            changes: Mutex::new(VecDeque::new()),
            leaving: Mutex::new(Vec::new()),
        })
    }

    fn node_index(&self, field: &'static str, name: &str) -> Result<usize, RequestError> {
        if name.is_empty() {
            return Err(RequestError::invalid(field, "required: a node name (see GetCluster)"));
        }
        self.cluster.nodes().iter().position(|n| n.name() == name).ok_or_else(|| {
            let names: Vec<String> = self.cluster.nodes().iter().map(|n| n.name()).collect();
            RequestError::invalid(field, format!("unknown node `{name}`; nodes: {}", names.join(", ")))
        })
    }

    fn optional_node(&self, field: &'static str, name: &str) -> Result<Option<usize>, RequestError> {
        if name.is_empty() { Ok(None) } else { self.node_index(field, name).map(Some) }
    }

    /// Check a request and resolve node names (a leader crash is resolved when it fires).
    fn resolve(&self, req: &pb::InjectFaultRequest) -> Result<Resolved, RequestError> {
        use pb::inject_fault_request::Kind;
        if self.cluster.is_empty() {
            return Err(RequestError::precondition("kind", "the cluster has no nodes to inject faults into"));
        }
        if req.at_ms > MAX_AT_MS {
            return Err(RequestError::invalid("at_ms", format!("{} ms is more than a day", req.at_ms)));
        }
        let probability = |field: &'static str, p: f64| {
            if (0.0..=1.0).contains(&p) {
                Ok(())
            } else {
                Err(RequestError::invalid(field, format!("{p} is not a probability in [0, 1]")))
            }
        };
        match &req.kind {
            None => Err(RequestError::invalid("kind", "give one of crash, recover, link, partition, clock, pause")),
            Some(Kind::Pause(p)) => {
                if !(1..=MAX_PAUSE_MS).contains(&p.ms) {
                    return Err(RequestError::invalid(
                        "pause.ms",
                        format!("{} ms; a pause lasts 1..={MAX_PAUSE_MS} ms", p.ms),
                    ));
                }
                match (p.leader, p.node.is_empty()) {
                    (true, false) => {
                        Err(RequestError::invalid("pause.leader", "give a node or leader: true, not both"))
                    }
                    (true, true) => Ok(Resolved::PauseLeader { ms: p.ms }),
                    (false, _) => Ok(Resolved::Pause { node: self.node_index("pause.node", &p.node)?, ms: p.ms }),
                }
            }
            Some(Kind::Clock(c)) => {
                let node = self.node_index("clock.node", &c.node)?;
                ringleader_core::faults::clock_rate("clock.rate", c.rate)
                    .map_err(|e| RequestError::invalid(e.field, e.reason))?;
                Ok(Resolved::Clock { node, rate: c.rate })
            }
            Some(Kind::Crash(c)) => match (c.leader, c.node.is_empty()) {
                (true, false) => Err(RequestError::invalid("crash.leader", "give a node or leader: true, not both")),
                (true, true) => Ok(Resolved::CrashLeader),
                (false, _) => Ok(Resolved::Crash(self.node_index("crash.node", &c.node)?)),
            },
            Some(Kind::Recover(r)) => Ok(Resolved::Recover(self.node_index("recover.node", &r.node)?)),
            Some(Kind::Link(l)) => {
                let from = self.optional_node("link.from", &l.from)?;
                let to = self.optional_node("link.to", &l.to)?;
                if from.is_some() && from == to {
                    return Err(RequestError::invalid("link.to", "a link joins two different nodes"));
                }
                probability("link.drop", l.drop)?;
                probability("link.duplicate", l.duplicate)?;
                probability("link.reorder", l.reorder)?;
                if l.delay_ms > MAX_AT_MS || l.jitter_ms > MAX_AT_MS {
                    return Err(RequestError::invalid("link.delay_ms", "a delay of more than a day"));
                }
                kind_named("link.kind", &l.kind).map_err(|e| RequestError::invalid(e.field, e.reason))?;
                let effect = l.drop > 0.0 || l.delay_ms > 0 || l.jitter_ms > 0 || l.duplicate > 0.0 || l.reorder > 0.0;
                if l.nth > 0 && !effect {
                    return Err(RequestError::invalid(
                        "link.nth",
                        "a fault on one message needs an effect (drop, delay_ms, jitter_ms, duplicate or reorder)",
                    ));
                }
                Ok(Resolved::Link { from, to, spec: l.clone() })
            }
            Some(Kind::Partition(p)) => {
                if p.groups.is_empty() {
                    return Err(RequestError::invalid("partition.groups", "give at least one group of nodes"));
                }
                let mut seen = HashSet::new();
                let mut groups = Vec::with_capacity(p.groups.len());
                for g in &p.groups {
                    if g.nodes.is_empty() {
                        return Err(RequestError::invalid("partition.groups", "a group has no nodes"));
                    }
                    let mut group = Vec::with_capacity(g.nodes.len());
                    for name in &g.nodes {
                        let i = self.node_index("partition.groups", name)?;
                        if !seen.insert(i) {
                            return Err(RequestError::invalid(
                                "partition.groups",
                                format!("node `{name}` is named twice"),
                            ));
                        }
                        group.push(i);
                    }
                    groups.push(group);
                }
                Ok(Resolved::Partition(groups))
            }
        }
    }

    /// The scope `req.election_id` gives a fault resolved to `resolved`: the
    /// election must be a running LIVE one (unknown: NOT_FOUND; ended or
    /// SIMULATED: FAILED_PRECONDITION), and every node the fault names one of
    /// its nodes (else INVALID_ARGUMENT naming the field).
    fn scope(
        &self,
        req: &pb::InjectFaultRequest,
        resolved: &Resolved,
        watch: &dyn Watch,
    ) -> Result<Option<Scope>, RequestError> {
        let id = req.election_id.as_str();
        if id.is_empty() {
            return Ok(None);
        }
        let view = watch.election(id).ok_or_else(|| RequestError {
            code: Code::NotFound,
            field: "election_id".into(),
            reason: format!("no election `{id}` (see ListElections)"),
        })?;
        if !view.live {
            return Err(RequestError::precondition(
                "election_id",
                format!(
                    "election `{id}` is SIMULATED: it takes its faults in its request (simulation.faults); \
                     a fault scoped to an election is for LIVE ones"
                ),
            ));
        }
        if view.ended {
            return Err(RequestError::precondition(
                "election_id",
                format!("election `{id}` has ended; a fault scoped to it would end at once"),
            ));
        }
        if matches!(&req.kind, Some(pb::inject_fault_request::Kind::Crash(c)) if c.planned) {
            return Err(RequestError::invalid(
                "crash.planned",
                "a planned stop is node-wide (the node hands over every leadership it leads): give no election_id",
            ));
        }
        let names = self.cluster.nodes();
        let nodes: Vec<usize> = match view.nodes.is_empty() {
            true => (0..names.len()).collect(),
            false => view.nodes.iter().filter_map(|n| names.iter().position(|m| m.name() == *n)).collect(),
        };
        let within = |field: &'static str, i: usize| {
            if nodes.contains(&i) {
                return Ok(());
            }
            let name = names.get(i).map_or_else(|| format!("#{i}"), |n| n.name());
            Err(RequestError::invalid(
                field,
                format!("{name} does not run election `{id}`; its nodes: {}", view.nodes.join(", ")),
            ))
        };
        match resolved {
            Resolved::Crash(i) => within("crash.node", *i)?,
            Resolved::Recover(i) => within("recover.node", *i)?,
            Resolved::Link { from, to, .. } => {
                from.map_or(Ok(()), |i| within("link.from", i))?;
                to.map_or(Ok(()), |i| within("link.to", i))?;
            }
            Resolved::Partition(groups) => {
                for &i in groups.iter().flatten() {
                    within("partition.groups", i)?;
                }
            }
            Resolved::Clock { node, .. } => within("clock.node", *node)?,
            Resolved::Pause { node, .. } => within("pause.node", *node)?,
            Resolved::CrashLeader | Resolved::PauseLeader { .. } => {}
        }
        Ok(Some(Scope { election: id.to_string(), nodes }))
    }

    /// Check and register a fault; apply it now, when `at_ms` has passed, or
    /// `at_ms` after its `after` event. `watch` tells whoever leads now (for
    /// `crash.leader`) and how the elections progress (for `after`).
    pub async fn inject(
        self: &Arc<Self>,
        req: pb::InjectFaultRequest,
        watch: Arc<dyn Watch>,
    ) -> Result<pb::FaultInfo, RequestError> {
        let resolved = self.resolve(&req)?;
        let scope = self.scope(&req, &resolved, &*watch)?;
        let after = trigger(req.after.as_ref())?;
        let now = req.at_ms == 0 && after.is_none();
        // Before a planned stop hands anything over: a fault with no room is refused (again when it is
        // registered, in case another took the room meanwhile).
        self.room(&lock(&self.entries), &resolved, &req.election_id, now)?;
        let state = if after.is_some() { pb::FaultState::Waiting } else { pb::FaultState::Scheduled };
        let mut entry = Entry {
            // Given once the fault is accepted: a refused one takes no id.
            id: String::new(),
            request: req.clone(),
            resolved,
            seed: req.seed,
            state,
            after,
            handovers: Vec::new(),
            until: None,
            paused_us: 0,
            scope,
        };
        if now {
            let info = self.apply(entry, &*watch, false).await?;
            let info =
                info.ok_or_else(|| RequestError::precondition("kind", "the fault was cleared as it was injected"))?;
            self.end_pause_later(&info);
            self.unless_ended(&info.election_id, &*watch);
            return Ok(info);
        }
        let info = {
            let _order = self.push.lock().await;
            let mut entries = lock(&self.entries);
            self.room(&entries, &entry.resolved, entry.scope_id(), false)?;
            entry.id = self.next_id();
            let info = self.info(&entry);
            entries.push(entry);
            info
        };
        let id = info.fault_id.clone();
        let me = self.clone();
        // The election to watch is chosen now: the one the fault is scoped to, else the running kept
        // leadership, else the next one started.
        let kept = if req.election_id.is_empty() { watch.running_kept() } else { Some(req.election_id.clone()) };
        let known: HashSet<String> =
            if kept.is_none() { watch.live_elections().into_iter().collect() } else { HashSet::new() };
        tokio::spawn(async move {
            if let Some(t) = after {
                if !me.wait_for(&id, t, kept, &known, &*watch).await {
                    return; // cleared meanwhile
                }
                if let Some(e) = lock(&me.entries).iter_mut().find(|e| e.id == id) {
                    e.state = pb::FaultState::Scheduled;
                    e.after = None;
                }
                info!(fault = %id, event = %t, "the event of a waiting fault came");
            }
            tokio::time::sleep(Duration::from_millis(req.at_ms)).await;
            let Some(entry) = lock(&me.entries).iter().find(|e| e.id == id).cloned() else { return }; // cleared
            match me.apply(entry, &*watch, true).await {
                Ok(Some(info)) => {
                    me.end_pause_later(&info);
                    me.unless_ended(&info.election_id, &*watch);
                    info!(fault = %info.fault_id, what = %info.description, "scheduled fault fired")
                }
                Ok(None) => {} // cleared meanwhile
                Err(e) => warn!(fault = %id, error = %e, "scheduled fault could not fire"),
            }
        });
        Ok(info)
    }

    /// A fault scoped to election `id` came in force as the election ended:
    /// end the election's faults now (its end may have come first).
    fn unless_ended(self: &Arc<Self>, id: &str, watch: &dyn Watch) {
        if !id.is_empty() && watch.election(id).is_none_or(|v| v.ended) {
            self.end_election(id);
        }
    }

    /// Election `id` ended (finished, failed or stopped): the faults scoped
    /// to it leave the registry at once (ListFaults lists them no more).
    /// The nodes are not sent their removal: they drop an election's faults
    /// with the election when its Abort comes (or their orphan watch ends
    /// it), and a removal arriving first would lift a scoped crash or pause
    /// and let the ended election's instance run again for a moment.
    pub fn end_election(self: &Arc<Self>, id: &str) {
        let removed = {
            let mut entries = lock(&self.entries);
            let before = entries.len();
            entries.retain(|e| e.scope_id() != id);
            before - entries.len()
        };
        if removed == 0 {
            return;
        }
        self.remember();
        info!(election = %id, faults = removed, "the faults scoped to an election ended with it");
    }

    /// Election `id` was prepared on the nodes at `positions`: if faults are
    /// scoped to it, those nodes get their whole share again in the
    /// background (a fault injected before a node held the election was
    /// skipped there, and a restarted node holds none).
    pub fn election_prepared(self: &Arc<Self>, id: &str, positions: &[usize]) {
        let nodes: Vec<usize> = {
            let entries = lock(&self.entries);
            positions.iter().copied().filter(|&i| entries.iter().any(|e| e.scope_id() == id && e.on(i))).collect()
        };
        if nodes.is_empty() {
            return;
        }
        let (me, id) = (Arc::downgrade(self), id.to_string());
        tokio::spawn(async move {
            let Some(me) = me.upgrade() else { return };
            let _order = me.push.lock().await;
            for i in nodes {
                if let Err(e) = me.push_whole(i).await {
                    warn!(election = %id, error = %e, "an election's faults did not reach a node it was prepared on");
                }
            }
        });
    }

    /// An active pause leaves the registry when it has run its time (its
    /// node resumes by itself); anything else stays.
    fn end_pause_later(self: &Arc<Self>, info: &pb::FaultInfo) {
        let until = lock(&self.entries).iter().find(|e| e.id == info.fault_id).and_then(|e| e.until);
        let Some(until) = until else { return };
        let (me, id) = (Arc::downgrade(self), info.fault_id.clone());
        tokio::spawn(async move {
            tokio::time::sleep_until(until.into()).await;
            let Some(me) = me.upgrade() else { return };
            let _order = me.push.lock().await;
            let ended = {
                let mut entries = lock(&me.entries);
                let before = entries.len();
                entries.retain(|e| e.id != id);
                entries.len() < before
            };
            if ended {
                me.remember();
                info!(fault = %id, "a pause ended");
            }
        });
    }

    /// The next fault id (called with `push` and `entries` held, so ids
    /// follow the order faults are registered in).
    fn next_id(&self) -> String {
        format!("f{}", self.next.fetch_add(1, Ordering::Relaxed))
    }

    /// Refuse a new fault that would hold one more than `max_faults`
    /// (RESOURCE_EXHAUSTED, naming the setting). A fault made active `now`
    /// may take no place (a recover holds nothing) or another's (a partition
    /// replaces the one in force); a scheduled or waiting one holds a place
    /// until it fires.
    fn room(&self, entries: &[Entry], resolved: &Resolved, scope: &str, now: bool) -> Result<(), RequestError> {
        let after = match now {
            true => {
                entries.len() + usize::from(Self::holds(resolved)) - Self::replaced(entries, resolved, scope).count()
            }
            false => entries.len() + 1,
        };
        if after <= self.max_faults {
            return Ok(());
        }
        Err(RequestError {
            code: Code::ResourceExhausted,
            field: "kind".into(),
            reason: format!(
                "{} faults are held (active, scheduled or waiting), the most this controller holds \
                 (controller.max_faults); clear some with ClearFaults first",
                entries.len()
            ),
        })
    }

    /// Does a fault of this kind stay in the registry once active?
    fn holds(resolved: &Resolved) -> bool {
        !matches!(resolved, Resolved::Recover(_))
    }

    /// The indices of the active faults that `resolved` (scoped to election
    /// `scope`, "" for node-wide), made active, removes: a recover, the
    /// node's crashes (of that scope; node-wide, of every scope); a
    /// partition or a clock, the one in force in that scope.
    fn replaced<'a>(entries: &'a [Entry], resolved: &'a Resolved, scope: &'a str) -> impl Iterator<Item = usize> + 'a {
        entries.iter().enumerate().filter_map(move |(i, e)| {
            let active = e.state == pb::FaultState::Active;
            let same = e.scope_id() == scope;
            let gone = match resolved {
                // A node-wide recover recovers the node's scoped crashes too.
                Resolved::Recover(node) => e.resolved == Resolved::Crash(*node) && (scope.is_empty() || same),
                Resolved::Partition(_) => same && matches!(e.resolved, Resolved::Partition(_)),
                Resolved::Clock { node, .. } => {
                    same && matches!(e.resolved, Resolved::Clock { node: n, .. } if n == *node)
                }
                _ => false,
            };
            (active && gone).then_some(i)
        })
    }

    /// Make `entry` active and push the change to the nodes it concerns; a
    /// planned stop first has its node hand its leaderships over.
    /// `registered`: a scheduled fault firing (it already has its id and its
    /// place); `None` if it was cleared meanwhile.
    async fn apply(
        &self,
        mut entry: Entry,
        watch: &dyn Watch,
        registered: bool,
    ) -> Result<Option<pb::FaultInfo>, RequestError> {
        let leaving = self.hand_over(&mut entry, watch).await?;
        let done = async {
            let _order = self.push.lock().await;
            let Some((info, changes)) = self.activate(entry, watch, registered)? else { return Ok(None) };
            self.push(changes).await.map_err(|e| RequestError {
                code: Code::Unavailable,
                field: "kind".into(),
                reason: e.to_string(),
            })?;
            Ok(Some(info))
        }
        .await;
        if let Some(i) = leaving {
            lock(&self.leaving).retain(|&j| j != i);
        }
        done
    }

    /// A planned stop (`crash.planned`): resolve the node (the leader now,
    /// for `crash.leader`) and have it hand over what it leads
    /// (`Agent.Leave`) before the crash is applied; the node is `leaving`
    /// meanwhile (and until the caller has pushed the crash). Returns the
    /// node's index, if it was a planned stop.
    async fn hand_over(&self, entry: &mut Entry, watch: &dyn Watch) -> Result<Option<usize>, RequestError> {
        let planned = matches!(&entry.request.kind, Some(pb::inject_fault_request::Kind::Crash(c)) if c.planned);
        if !planned {
            return Ok(None);
        }
        if entry.resolved == Resolved::CrashLeader {
            self.resolve_leader(entry, watch)?;
        }
        let Resolved::Crash(i) = entry.resolved else { return Ok(None) };
        let Some(node) = self.cluster.nodes().get(i).cloned() else { return Ok(None) };
        lock(&self.leaving).push(i);
        let mut client = node.client();
        let wait = ringleader_node::runtime::HANDOVER_WAIT;
        let call = client.leave(pb::LeaveRequest { wait_ms: wait.as_millis() as u64 });
        match tokio::time::timeout(wait + self.rpc_timeout, call).await {
            Ok(Ok(r)) => entry.handovers = r.into_inner().handovers,
            // It stops anyway: the others' failure detectors take over.
            Ok(Err(e)) => {
                warn!(node = %node.name(), error = %e.message(), "planned stop: the node could not hand over")
            }
            Err(_) => warn!(node = %node.name(), "planned stop: the handover did not answer in time"),
        }
        Ok(Some(i))
    }

    /// The node that leads now, for `field` (`crash.leader`, `pause.leader`):
    /// of the election a fault is scoped to, else as [`Watch::leader`].
    fn leader_now(&self, entry: &Entry, watch: &dyn Watch, field: &'static str) -> Result<String, RequestError> {
        match &entry.scope {
            None => {
                watch.leader().ok_or_else(|| RequestError::precondition(field, "no election has elected a leader yet"))
            }
            Some(s) => watch.election(&s.election).and_then(|v| v.leader).ok_or_else(|| {
                RequestError::precondition(field, format!("election `{}` has no leader now", s.election))
            }),
        }
    }

    /// Resolve `pause.leader` to the node that leads now.
    fn resolve_pause_leader(&self, entry: &mut Entry, watch: &dyn Watch, ms: u64) -> Result<(), RequestError> {
        let name = self.leader_now(entry, watch, "pause.leader")?;
        let node = self.node_index("pause.leader", &name)?;
        entry.resolved = Resolved::Pause { node, ms };
        entry.request.kind =
            Some(pb::inject_fault_request::Kind::Pause(pb::PauseFault { node: name, leader: true, ms }));
        Ok(())
    }

    /// Resolve `crash.leader` to the node that leads now.
    fn resolve_leader(&self, entry: &mut Entry, watch: &dyn Watch) -> Result<(), RequestError> {
        let name = self.leader_now(entry, watch, "crash.leader")?;
        let i = self.node_index("crash.leader", &name)?;
        entry.resolved = Resolved::Crash(i);
        let planned = matches!(&entry.request.kind, Some(pb::inject_fault_request::Kind::Crash(c)) if c.planned);
        entry.request.kind =
            Some(pb::inject_fault_request::Kind::Crash(pb::CrashFault { node: name, leader: true, planned }));
        Ok(())
    }

    /// Poll until `t` holds for the watched election (`kept`, else the first
    /// LIVE election not in `known`); false if fault `id` was cleared first.
    async fn wait_for(
        &self,
        id: &str,
        t: Trigger,
        kept: Option<String>,
        known: &HashSet<String>,
        watch: &dyn Watch,
    ) -> bool {
        let mut target = kept;
        let mut tick = tokio::time::interval(POLL);
        loop {
            tick.tick().await;
            if !lock(&self.entries).iter().any(|e| e.id == id) {
                return false;
            }
            if target.is_none() {
                // The first one started after the fault (the list is most recent first).
                target = watch.live_elections().into_iter().rev().find(|e| !known.contains(e));
            }
            let Some(election) = &target else { continue };
            let met = match t {
                Trigger::LeaderElected => watch.progress(election).is_some_and(|(leader, _)| leader),
                Trigger::Term(term) => watch.progress(election).is_some_and(|(_, claimed)| claimed >= term),
                // A one-shot election may end (and its nodes forget it) between two polls: then its
                // record has the count.
                Trigger::Messages(k) => match watch.messages(election) {
                    Some(sent) => sent >= k,
                    None => self.messages_sent(election).await >= k,
                },
            };
            if met {
                return true;
            }
        }
    }

    /// Election and notification messages the nodes report for `election` so far.
    async fn messages_sent(&self, election: &str) -> u64 {
        let mut set = tokio::task::JoinSet::new();
        for node in self.cluster.nodes() {
            let mut client = node.client();
            let req = pb::StatusRequest { election_id: election.to_string() };
            let timeout = self.rpc_timeout;
            set.spawn(async move {
                match tokio::time::timeout(timeout, client.status(req)).await {
                    Ok(Ok(s)) => s.get_ref().election_messages + s.get_ref().notification_messages,
                    // A node without that election (or down) has sent nothing of it.
                    _ => 0,
                }
            });
        }
        let mut sum = 0;
        while let Some(n) = set.join_next().await {
            sum += n.unwrap_or(0);
        }
        sum
    }

    /// Make `entry` active in the registry (resolving a leader crash; a
    /// recover removes the node's crashes, a partition the one in force), with
    /// its id if it is new (after checking there is room): the fault as
    /// listed and what the change means for the nodes. `None`: a registered
    /// fault cleared meanwhile. Called with `push` held.
    fn activate(
        &self,
        mut entry: Entry,
        watch: &dyn Watch,
        registered: bool,
    ) -> Result<Option<(pb::FaultInfo, Changes)>, RequestError> {
        if let Some(s) = &entry.scope
            && watch.election(&s.election).is_none_or(|v| v.ended)
        {
            // Its election ended while it waited: it ends with it.
            if registered {
                lock(&self.entries).retain(|e| e.id != entry.id);
                self.remember();
                return Ok(None);
            }
            let why = format!("election `{}` has ended; a fault scoped to it would end at once", s.election);
            return Err(RequestError::precondition("election_id", why));
        }
        if entry.resolved == Resolved::CrashLeader {
            self.resolve_leader(&mut entry, watch)?;
        }
        if let Resolved::PauseLeader { ms } = entry.resolved {
            self.resolve_pause_leader(&mut entry, watch, ms)?;
        }
        if let Resolved::Pause { ms, .. } = entry.resolved {
            entry.until = Some(std::time::Instant::now() + Duration::from_millis(ms));
            entry.paused_us = unix_us();
        }
        let changes = {
            let mut entries = lock(&self.entries);
            if registered {
                // Firing: it leaves its place and comes last, in the order the nodes apply it.
                let Some(i) = entries.iter().position(|e| e.id == entry.id) else { return Ok(None) };
                entries.remove(i);
            } else {
                self.room(&entries, &entry.resolved, entry.scope_id(), true)?;
                entry.id = self.next_id();
            }
            entry.state = pb::FaultState::Active;
            let gone: Vec<usize> = Self::replaced(&entries, &entry.resolved, entry.scope_id()).collect();
            let mut removed = Vec::with_capacity(gone.len());
            for i in gone.into_iter().rev() {
                removed.push(entries.remove(i));
            }
            let changes = changes_for(self.cluster.len(), &self.addresses(), &entries, &removed, Some(&entry));
            // A recover is an action, not a standing fault.
            if Self::holds(&entry.resolved) {
                entries.push(entry.clone());
            }
            changes
        };
        self.remember();
        Ok(Some((self.info(&entry), changes)))
    }

    /// The nodes' addresses, by index.
    fn addresses(&self) -> Vec<String> {
        self.cluster.nodes().iter().map(|n| n.address().to_string()).collect()
    }

    /// Note what the faults in force do now, if it changed.
    fn remember(&self) {
        let (now, active) = (unix_us(), self.snapshot());
        let mut changes = lock(&self.changes);
        if changes.back().is_none_or(|(_, last)| *last != active) {
            changes.push_back((now, active));
            if changes.len() > MAX_CHANGES {
                changes.pop_front();
            }
        }
    }

    /// What the faults election `election` meets (`None`: the node-wide
    /// ones) did at unix time `since_us` (µs; nothing if no change came
    /// before it) and every change after, each with its unix time.
    pub fn changes_since(&self, since_us: u64, election: Option<&str>) -> Vec<(u64, ActiveFaults)> {
        let changes = lock(&self.changes);
        let first = changes.partition_point(|(t, _)| *t <= since_us);
        let mut out: Vec<(u64, ActiveFaults)> = Vec::new();
        for (t, snapshot) in changes.iter().skip(first.saturating_sub(1)) {
            let seen = snapshot.seen_by(election);
            // Another election's faults changing changes nothing for this one.
            if out.last().is_none_or(|(_, last)| *last != seen) {
                out.push((*t, seen));
            }
        }
        out
    }

    /// What the node-wide faults do: the nodes crashed, and those a
    /// partition cuts off from every majority of the cluster (what decides
    /// whether a node may run a new election).
    pub fn active(&self) -> ActiveFaults {
        self.snapshot().node
    }

    /// What election `election` meets: the node-wide faults and those
    /// scoped to it (`None`: the node-wide ones).
    pub fn active_in(&self, election: Option<&str>) -> ActiveFaults {
        self.snapshot().seen_by(election)
    }

    /// What the active faults do, node-wide and per election.
    fn snapshot(&self) -> Snapshot {
        let cluster: Vec<usize> = (0..self.cluster.len()).collect();
        let mut out = Snapshot::default();
        out.node.leaving = lock(&self.leaving).clone();
        for e in lock(&self.entries).iter().filter(|e| e.active()) {
            let (f, members) = match &e.scope {
                None => (&mut out.node, &cluster),
                Some(s) => (out.scoped.entry(s.election.clone()).or_default(), &s.nodes),
            };
            match &e.resolved {
                Resolved::Crash(i) => f.crashed.push(*i),
                Resolved::Partition(groups) => {
                    // A node in no group is alone; a majority is of the nodes it concerns.
                    let size = |i: usize| groups.iter().find(|g| g.contains(&i)).map_or(1, Vec::len);
                    f.cut_off.extend(members.iter().copied().filter(|&i| 2 * size(i) <= members.len()));
                    f.groups = groups.clone();
                }
                Resolved::Pause { node, .. } => f.paused.push((*node, e.paused_us)),
                _ => {}
            }
        }
        out
    }

    /// The active faults on node `i`, in words, each naming its fault id
    /// (for `GetCluster`): the first [`SHOWN_PER_NODE`], then a line counting
    /// the others.
    pub fn on_node(&self, i: usize) -> Vec<String> {
        let name = |j: usize| self.cluster.nodes().get(j).map_or_else(|| format!("node {j}"), |n| n.name());
        let mut out = Vec::new();
        for e in lock(&self.entries).iter().filter(|e| e.active() && e.on(i)) {
            let id = match &e.scope {
                None => e.id.clone(),
                Some(s) => format!("{}, election {} only", e.id, s.election),
            };
            match &e.resolved {
                Resolved::Crash(j) if *j == i => out.push(format!("crashed ({id})")),
                Resolved::Link { from, to, spec } if from.is_none_or(|f| f == i) || to.is_none_or(|t| t == i) => {
                    let end = |x: &Option<usize>| x.map_or_else(|| "every node".to_string(), name);
                    out.push(format!(
                        "link {} -> {} impaired: drop {}, delay {} ms + up to {} ms, duplicate {}, reorder {} ({id})",
                        end(from),
                        end(to),
                        spec.drop,
                        spec.delay_ms,
                        spec.jitter_ms,
                        spec.duplicate,
                        spec.reorder
                    ));
                }
                Resolved::Partition(groups) => {
                    let peers: Vec<String> = groups
                        .iter()
                        .find(|g| g.contains(&i))
                        .map(|g| g.iter().filter(|&&j| j != i).map(|&j| name(j)).collect())
                        .unwrap_or_default();
                    if peers.is_empty() {
                        out.push(format!("partitioned: reaches no other node ({id})"));
                    } else {
                        out.push(format!("partitioned: reaches {} only ({id})", peers.join(", ")));
                    }
                }
                Resolved::Clock { node, rate } if *node == i => {
                    out.push(format!("clock at {rate} times real time ({id})"));
                }
                Resolved::Pause { node, ms } if *node == i => {
                    let left =
                        e.until.map_or(0, |u| u.saturating_duration_since(std::time::Instant::now()).as_millis());
                    out.push(format!("paused for {ms} ms, {left} ms left ({id})"));
                }
                _ => {}
            }
        }
        if out.len() > SHOWN_PER_NODE {
            let more = out.len() - SHOWN_PER_NODE;
            out.truncate(SHOWN_PER_NODE);
            out.push(format!("... and {more} more (ListFaults lists them all)"));
        }
        out
    }

    /// The kind (`crash`, `recover`, `link`, `partition`) of every registered fault
    /// (active, scheduled or waiting), for the `ringleader.faults.active` gauge.
    pub fn active_kinds(&self) -> Vec<&'static str> {
        lock(&self.entries)
            .iter()
            .map(|e| match e.resolved {
                Resolved::Crash(_) | Resolved::CrashLeader => "crash",
                Resolved::Recover(_) => "recover",
                Resolved::Link { .. } => "link",
                Resolved::Partition(_) => "partition",
                Resolved::Clock { .. } => "clock",
                Resolved::Pause { .. } | Resolved::PauseLeader { .. } => "pause",
            })
            .collect()
    }

    /// Every registered fault, in injection order.
    pub fn list(&self) -> Vec<pb::FaultInfo> {
        lock(&self.entries).iter().map(|e| self.info(e)).collect()
    }

    /// Clear one fault, those scoped to election `election_id` (with an
    /// empty `fault_id`), or all (both empty), and push the change to the
    /// nodes it concerns (clearing all: every node, an empty share).
    pub async fn clear(&self, fault_id: &str, election_id: &str) -> Result<u32, RequestError> {
        let _order = self.push.lock().await;
        let (cleared, changes) = {
            let mut entries = lock(&self.entries);
            if fault_id.is_empty() && !election_id.is_empty() {
                let (removed, kept): (Vec<Entry>, Vec<Entry>) =
                    std::mem::take(&mut *entries).into_iter().partition(|e| e.scope_id() == election_id);
                *entries = kept;
                (removed.len() as u32, changes_for(self.cluster.len(), &self.addresses(), &entries, &removed, None))
            } else if fault_id.is_empty() {
                let cleared = entries.len() as u32;
                entries.clear();
                // A whole share, empty: the nodes drop whatever they hold.
                for s in lock(&self.synced).iter_mut().filter(|s| **s != Synced::Whole) {
                    *s = Synced::No;
                }
                let nodes = 0..self.cluster.len();
                (cleared, nodes.map(|i| ((i, String::new()), pb::ChangeFaultsRequest::default())).collect())
            } else {
                let Some(i) = entries.iter().position(|e| e.id == fault_id) else {
                    return Err(RequestError {
                        code: Code::NotFound,
                        field: "fault_id".into(),
                        reason: format!("no fault `{fault_id}`"),
                    });
                };
                let removed = entries.remove(i);
                (1, changes_for(self.cluster.len(), &self.addresses(), &entries, &[removed], None))
            }
        };
        self.remember();
        self.push(changes).await.map_err(|e| RequestError {
            code: Code::Unavailable,
            field: "fault_id".into(),
            reason: e.to_string(),
        })?;
        Ok(cleared)
    }

    fn describe(&self, e: &Entry) -> String {
        let what = match &e.scope {
            None => self.describe_fault(e),
            Some(s) => format!("{} in election {}", self.describe_fault(e), s.election),
        };
        match e.after {
            Some(t) => format!("{what}; pending: {} ms after {t}", e.request.at_ms),
            None => what,
        }
    }

    fn describe_fault(&self, e: &Entry) -> String {
        let name = |i: &usize| self.cluster.nodes().get(*i).map_or_else(|| format!("#{i}"), |n| n.name());
        let any = |i: &Option<usize>| i.as_ref().map_or_else(|| "*".to_string(), name);
        match &e.resolved {
            Resolved::Crash(i) if Self::planned(e) => {
                let handed: Vec<String> = e
                    .handovers
                    .iter()
                    .map(|h| match h.handed_over {
                        true => format!("id {} leads term {} after {} µs", h.new_leader_id, h.new_term, h.took_us),
                        false => format!("{}: not handed over in time", h.election_id),
                    })
                    .collect();
                match handed.is_empty() {
                    true => format!("planned stop {} (led nothing)", name(i)),
                    false => format!("planned stop {} (handed over: {})", name(i), handed.join("; ")),
                }
            }
            Resolved::Crash(i) => format!("crash {}", name(i)),
            Resolved::CrashLeader if Self::planned(e) => "planned stop of the leader".to_string(),
            Resolved::CrashLeader => "crash the leader".to_string(),
            Resolved::Recover(i) => format!("recover {}", name(i)),
            Resolved::Link { from, to, spec } => format!(
                "link {} -> {}{}{}: drop {}, delay {} ms + jitter {} ms, duplicate {}, reorder {}",
                any(from),
                any(to),
                if spec.kind.is_empty() { String::new() } else { format!(", {} messages", spec.kind) },
                if spec.nth == 0 { String::new() } else { format!(", message #{} per link", spec.nth) },
                spec.drop,
                spec.delay_ms,
                spec.jitter_ms,
                spec.duplicate,
                spec.reorder
            ),
            Resolved::Partition(groups) => format!(
                "partition {}",
                groups
                    .iter()
                    .map(|g| format!("[{}]", g.iter().map(name).collect::<Vec<_>>().join(", ")))
                    .collect::<Vec<_>>()
                    .join(" | ")
            ),
            Resolved::Clock { node, rate } => format!("clock {} at {rate} times real time", name(node)),
            Resolved::Pause { node, ms } => format!("pause {} for {ms} ms", name(node)),
            Resolved::PauseLeader { ms } => format!("pause the leader for {ms} ms"),
        }
    }

    fn planned(e: &Entry) -> bool {
        matches!(&e.request.kind, Some(pb::inject_fault_request::Kind::Crash(c)) if c.planned)
    }

    fn info(&self, e: &Entry) -> pb::FaultInfo {
        pb::FaultInfo {
            fault_id: e.id.clone(),
            fault: Some(e.request.clone()),
            state: e.state as i32,
            description: self.describe(e),
            handovers: e.handovers.clone(),
            election_id: e.scope_id().to_string(),
        }
    }

    /// Send each node concerned its change, at once; a node that may not be
    /// in step ([`Synced`]) gets its whole share instead, with this change
    /// whether it concerns it or not, so that every change brings the nodes
    /// out of step back (a restarted node, a failed push, what a previous
    /// controller left). Called with `push` held. A node that does not know
    /// `ChangeFaults` gets its whole share at once, and from then on.
    async fn push(&self, changes: Changes) -> Result<(), Failures> {
        // Per node, its changes in order (the node-wide one first).
        let mut changes: BTreeMap<usize, Vec<pb::ChangeFaultsRequest>> =
            changes.into_iter().fold(BTreeMap::new(), |mut m, ((i, _), c)| {
                m.entry(i).or_default().push(c);
                m
            });
        let whole: Vec<usize> = {
            let synced = lock(&self.synced);
            let out_of_step = |i: usize, n: &Arc<crate::cluster::Node>| match synced.get(i) {
                Some(Synced::Since(s)) => *s != n.sessions(),
                Some(Synced::No) | None => true,
                Some(Synced::Whole) => false,
            };
            for (i, node) in self.cluster.nodes().iter().enumerate() {
                if out_of_step(i, node) {
                    changes.entry(i).or_default();
                }
            }
            let whole = |i: &usize| synced.get(*i) == Some(&Synced::Whole);
            changes.keys().copied().filter(|i| whole(i) || out_of_step(*i, &self.cluster.nodes()[*i])).collect()
        };
        let shares: BTreeMap<usize, pb::SetFaultsRequest> = {
            let entries = lock(&self.entries);
            whole.iter().map(|&i| (i, share(&entries, i, &self.addresses()))).collect()
        };
        let mut set = tokio::task::JoinSet::new();
        for (i, each) in changes {
            let Some(node) = self.cluster.nodes().get(i).cloned() else { continue };
            let (share, timeout) = (shares.get(&i).cloned(), self.rpc_timeout);
            set.spawn(async move {
                let session = node.sessions();
                let mut client = node.client();
                let call = async {
                    match share {
                        Some(share) => client.set_faults(share).await.map(|_| Synced::Since(session)),
                        None => {
                            for change in each {
                                client.change_faults(change).await?;
                            }
                            Ok(Synced::Since(session))
                        }
                    }
                };
                let result = match CallError::within(timeout, call).await {
                    Err(e) if e.is(Code::Unimplemented) => Ok(Synced::Whole),
                    result => result,
                };
                let failed =
                    |error| NodeFailure::Faults { node: node.name(), address: node.address().to_string(), error };
                (i, result.map_err(failed))
            });
        }
        let mut errors = Vec::new();
        let mut older = Vec::new();
        while let Some(joined) = set.join_next().await {
            let Ok((i, result)) = joined else { continue };
            let mut synced = lock(&self.synced);
            match result {
                Ok(Synced::Whole) => older.push(i),
                Ok(s) => synced[i] = if synced[i] == Synced::Whole { Synced::Whole } else { s },
                Err(e) => {
                    synced[i] = if synced[i] == Synced::Whole { Synced::Whole } else { Synced::No };
                    errors.push(e);
                }
            }
        }
        for i in older {
            lock(&self.synced)[i] = Synced::Whole;
            if let Err(e) = self.push_whole(i).await {
                errors.push(e);
            }
        }
        Failures::check(errors)
    }

    /// Send node `i` its whole share (a node that does not know `ChangeFaults`).
    async fn push_whole(&self, i: usize) -> Result<(), NodeFailure> {
        let Some(node) = self.cluster.nodes().get(i).cloned() else { return Ok(()) };
        let share = share(&lock(&self.entries), i, &self.addresses());
        let mut client = node.client();
        match CallError::within(self.rpc_timeout, client.set_faults(share)).await {
            Ok(_) => Ok(()),
            Err(error) => Err(NodeFailure::Faults { node: node.name(), address: node.address().to_string(), error }),
        }
    }
}

/// The nodes a link fault from `from` to `to` (`None`: every node) puts a
/// rule on: the senders it selects, but not a node sending to itself.
fn targets(n: usize, from: Option<usize>, to: Option<usize>) -> impl Iterator<Item = usize> {
    (0..n).filter(move |&i| from.is_none_or(|f| f == i) && to != Some(i))
}

/// Node `i`'s rule for link fault `e` (`spec`, towards `to`).
fn rule_for(e: &Entry, i: usize, to: Option<usize>, spec: &pb::LinkFaultSpec, addresses: &[String]) -> pb::LinkRule {
    pb::LinkRule {
        to: to.and_then(|j| addresses.get(j).cloned()).unwrap_or_default(),
        drop: spec.drop,
        delay_ms: spec.delay_ms,
        jitter_ms: spec.jitter_ms,
        duplicate: spec.duplicate,
        reorder: spec.reorder,
        // Each node draws its own sequence from the fault's seed.
        seed: e.seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15),
        kind: spec.kind.clone(),
        nth: spec.nth,
        fault_id: e.id.clone(),
    }
}

/// The peers node `i` reaches under a partition into `groups` (a node in no group reaches none).
fn reachable(groups: &[Vec<usize>], i: usize, addresses: &[String]) -> Vec<String> {
    groups
        .iter()
        .find(|g| g.contains(&i))
        .map(|g| g.iter().filter(|&&j| j != i).filter_map(|&j| addresses.get(j).cloned()).collect())
        .unwrap_or_default()
}

/// Node `i`'s whole share of the active faults in `entries`: the node-wide
/// ones, and those of each election scoped to that concern it.
fn share(entries: &[Entry], i: usize, addresses: &[String]) -> pb::SetFaultsRequest {
    let mut req = share_in(entries, i, addresses, "");
    let scopes: BTreeSet<&str> =
        entries.iter().filter(|e| e.active() && e.scope.is_some() && e.on(i)).map(Entry::scope_id).collect();
    for scope in scopes {
        let faults = Some(share_in(entries, i, addresses, scope));
        req.elections.push(pb::ElectionFaults { election_id: scope.to_string(), faults });
    }
    req
}

/// Node `i`'s share of the active faults in `entries` of one scope (an
/// election id, "" for the node-wide ones).
fn share_in(entries: &[Entry], i: usize, addresses: &[String], scope: &str) -> pb::SetFaultsRequest {
    let mut req = pb::SetFaultsRequest::default();
    for e in entries.iter().filter(|e| e.active() && e.scope_id() == scope && e.on(i)) {
        match &e.resolved {
            Resolved::Crash(j) if *j == i => req.crashed = true,
            Resolved::Link { from, to, spec } if from.is_none_or(|f| f == i) && *to != Some(i) => {
                req.links.push(rule_for(e, i, *to, spec, addresses));
            }
            Resolved::Partition(groups) => {
                req.partitioned = true;
                req.reachable = reachable(groups, i, addresses);
            }
            Resolved::Clock { node, rate } if *node == i => req.clock_rate = *rate,
            _ => {}
        }
    }
    req.pause_ms = pause_left(entries, i, None, scope);
    req
}

/// How long node `i` stays paused, in ms, by the active pauses of scope
/// `scope` in `entries` and `added` (the latest end among them; 0: not
/// paused). A pause that has a moment left counts as 1 ms, so the node is
/// told it is paused.
fn pause_left(entries: &[Entry], i: usize, added: Option<&Entry>, scope: &str) -> u64 {
    let now = std::time::Instant::now();
    entries
        .iter()
        .chain(added)
        .filter(|e| {
            e.active() && e.scope_id() == scope && matches!(e.resolved, Resolved::Pause { node, .. } if node == i)
        })
        .filter_map(|e| e.until)
        .filter(|u| *u > now)
        .map(|u| (u - now).as_millis().max(1) as u64)
        .max()
        .unwrap_or(0)
}

/// The change for node `i` in fault `e`'s scope, if `e` concerns the node.
fn at<'a>(out: &'a mut Changes, e: &Entry, i: usize) -> Option<&'a mut pb::ChangeFaultsRequest> {
    if !e.on(i) {
        return None;
    }
    let scope = e.scope_id().to_string();
    Some(
        out.entry((i, scope.clone()))
            .or_insert_with(|| pb::ChangeFaultsRequest { election_id: scope, ..Default::default() }),
    )
}

/// What a change means for the nodes of an `n`-node cluster: the faults
/// `removed` go (those not active concern no node), `added` (active) comes,
/// and `held` are the faults left. Per node concerned and scope, the change
/// to send: a link fault touches the nodes whose messages it selects, a
/// crash or a recover its node, a partition every node (a fault scoped to
/// an election: only among that election's nodes). Its size does not
/// depend on `held` (a crash cleared asks whether another crash of its
/// node is held in its scope).
fn changes_for(n: usize, addresses: &[String], held: &[Entry], removed: &[Entry], added: Option<&Entry>) -> Changes {
    let mut out = Changes::new();
    let crashed = |j: usize, scope: &str| {
        held.iter().any(|e| e.active() && e.scope_id() == scope && e.resolved == Resolved::Crash(j))
    };
    for e in removed.iter().filter(|e| e.active()) {
        match &e.resolved {
            Resolved::Crash(j) => {
                if let Some(c) = at(&mut out, e, *j) {
                    c.crashed = Some(crashed(*j, e.scope_id()));
                }
            }
            Resolved::Link { from, to, .. } => {
                for i in targets(n, *from, *to) {
                    if let Some(c) = at(&mut out, e, i) {
                        c.remove.push(e.id.clone());
                    }
                }
            }
            Resolved::Partition(_) => {
                for i in 0..n {
                    if let Some(c) = at(&mut out, e, i) {
                        (c.partitioned, c.reachable) = (Some(false), Vec::new());
                    }
                }
            }
            Resolved::Clock { node, .. } => {
                if let Some(c) = at(&mut out, e, *node) {
                    c.clock_rate = Some(1.0);
                }
            }
            Resolved::Pause { node, .. } => {
                if let Some(c) = at(&mut out, e, *node) {
                    c.pause_ms = Some(pause_left(held, *node, added, e.scope_id()));
                }
            }
            Resolved::CrashLeader | Resolved::Recover(_) | Resolved::PauseLeader { .. } => {}
        }
    }
    let Some(e) = added else { return out };
    match &e.resolved {
        Resolved::Crash(j) => {
            if let Some(c) = at(&mut out, e, *j) {
                c.crashed = Some(true);
            }
        }
        Resolved::Recover(j) => {
            if let Some(c) = at(&mut out, e, *j) {
                c.crashed = Some(false);
            }
        }
        Resolved::Link { from, to, spec } => {
            for i in targets(n, *from, *to) {
                if let Some(c) = at(&mut out, e, i) {
                    c.add.push(rule_for(e, i, *to, spec, addresses));
                }
            }
        }
        Resolved::Partition(groups) => {
            for i in 0..n {
                if let Some(c) = at(&mut out, e, i) {
                    (c.partitioned, c.reachable) = (Some(true), reachable(groups, i, addresses));
                }
            }
        }
        Resolved::Clock { node, rate } => {
            if let Some(c) = at(&mut out, e, *node) {
                c.clock_rate = Some(*rate);
            }
        }
        Resolved::Pause { node, .. } => {
            if let Some(c) = at(&mut out, e, *node) {
                c.pause_ms = Some(pause_left(held, *node, Some(e), e.scope_id()));
            }
        }
        Resolved::CrashLeader | Resolved::PauseLeader { .. } => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pb::after_event::Event;

    /// The key of node `i`'s node-wide change.
    fn k(i: usize) -> (usize, String) {
        (i, String::new())
    }

    fn entry(id: &str, resolved: Resolved) -> Entry {
        Entry {
            id: id.into(),
            request: pb::InjectFaultRequest::default(),
            resolved,
            seed: 0,
            state: pb::FaultState::Active,
            after: None,
            handovers: Vec::new(),
            until: None,
            paused_us: 0,
            scope: None,
        }
    }

    fn slow(id: &str, from: Option<usize>, to: Option<usize>) -> Entry {
        let spec = pb::LinkFaultSpec { delay_ms: 5, ..Default::default() };
        entry(id, Resolved::Link { from, to, spec })
    }

    /// The change a fault makes, node by node: as many rules as it adds, whatever is held (200 link faults
    /// here); a link fault from one node touches that node, one from every node all but its `to`; clearing
    /// one removes its id where it was; a crash cleared leaves the node crashed while another crash of it
    /// is held; a partition reaches every node, and lifting it too; faults not active concern no node.
    #[test]
    fn a_change_concerns_only_what_it_touches() {
        let addresses: Vec<String> = (0..4).map(|i| format!("http://n{i}")).collect();
        let held: Vec<Entry> = (0..200).map(|k| slow(&format!("f{k}"), None, None)).collect();
        let change = |removed: &[Entry], added: Option<&Entry>| changes_for(4, &addresses, &held, removed, added);
        let added = |c: &Changes| c.iter().map(|(i, r)| (i.0, r.add.len(), r.remove.clone())).collect::<Vec<_>>();

        assert_eq!(added(&change(&[], Some(&slow("f300", Some(2), None)))), [(2, 1, vec![])]);
        assert_eq!(
            added(&change(&[], Some(&slow("f301", None, Some(1))))),
            [(0, 1, vec![]), (2, 1, vec![]), (3, 1, vec![])]
        );
        let rule = &change(&[], Some(&slow("f302", Some(0), Some(3))))[&k(0)].add[0];
        assert_eq!((rule.to.as_str(), rule.fault_id.as_str(), rule.delay_ms), ("http://n3", "f302", 5));
        let gone = vec!["f300".to_string()];
        assert_eq!(added(&change(&[slow("f300", Some(2), None)], None)), [(2, 0, gone)]);

        let crash = |id: &str, j| entry(id, Resolved::Crash(j));
        assert_eq!(change(&[], Some(&crash("f1", 3)))[&k(3)].crashed, Some(true));
        assert_eq!(change(&[crash("f1", 3)], None)[&k(3)].crashed, Some(false));
        let twice = [crash("f2", 3)];
        assert_eq!(changes_for(4, &addresses, &twice, &[crash("f1", 3)], None)[&k(3)].crashed, Some(true));
        assert_eq!(change(&[], Some(&entry("r", Resolved::Recover(1))))[&k(1)].crashed, Some(false));

        let split = entry("p", Resolved::Partition(vec![vec![0, 1], vec![2]]));
        let cut = change(&[], Some(&split));
        assert_eq!(cut.len(), 4);
        assert_eq!((cut[&k(0)].partitioned, cut[&k(0)].reachable.clone()), (Some(true), vec!["http://n1".to_string()]));
        assert_eq!(
            (cut[&k(3)].partitioned, cut[&k(3)].reachable.len()),
            (Some(true), 0),
            "a node in no group is alone"
        );
        assert!(change(&[split], None).values().all(|c| c.partitioned == Some(false)));

        let mut pending = slow("f9", None, None);
        pending.state = pb::FaultState::Scheduled;
        assert!(change(&[pending], None).is_empty(), "a fault not active concerns no node");
    }

    /// A fault scoped to an election concerns only that election's nodes, in its scope: a scoped link
    /// fault from every node puts a rule on the election's nodes only, tagged with the election; a scoped
    /// crash is that election's; a node-wide recover clears the node's scoped crash in its scope too; a
    /// whole share carries the node-wide part and each election's; a node not in the election gets none of
    /// it; what an election meets is the node-wide faults and its own, another's are not seen.
    #[test]
    fn a_scoped_fault_concerns_its_elections_nodes_only() {
        let addresses: Vec<String> = (0..4).map(|i| format!("http://n{i}")).collect();
        let scoped = |e: Entry| Entry { scope: Some(Scope { election: "e1".into(), nodes: vec![1, 2] }), ..e };
        let link = scoped(slow("f1", None, None));
        let c = changes_for(4, &addresses, &[], &[], Some(&link));
        let keys: Vec<(usize, String)> = c.keys().cloned().collect();
        assert_eq!(keys, [(1, "e1".to_string()), (2, "e1".to_string())]);
        assert!(c.values().all(|r| r.election_id == "e1" && r.add.len() == 1));

        let crash = scoped(entry("f2", Resolved::Crash(2)));
        let c = changes_for(4, &addresses, &[], &[], Some(&crash));
        assert_eq!(c[&(2, "e1".to_string())].crashed, Some(true));
        assert!(!c.contains_key(&k(2)), "the node itself is not crashed");

        let held = vec![link.clone(), crash.clone(), entry("f3", Resolved::Crash(3))];
        let two = share(&held, 2, &addresses);
        assert!(!two.crashed && two.links.is_empty(), "nothing node-wide on node 2: {two:?}");
        let own = two.elections.iter().find(|e| e.election_id == "e1").and_then(|e| e.faults.clone()).unwrap();
        assert!(own.crashed && own.links.len() == 1);
        assert!(share(&held, 0, &addresses).elections.is_empty(), "node 0 does not run e1");
        assert!(share(&held, 3, &addresses).crashed);

        let gone: Vec<usize> = Faults::replaced(&held, &Resolved::Recover(2), "").collect();
        assert_eq!(gone, [1], "a node-wide recover takes the scoped crash too");
        let gone: Vec<usize> = Faults::replaced(&held, &Resolved::Recover(2), "e2").collect();
        assert!(gone.is_empty(), "a recover scoped to another election does not");
        let c = changes_for(4, &addresses, &held[..1], &[crash], None);
        assert_eq!(c[&(2, "e1".to_string())].crashed, Some(false));

        let snapshot = Snapshot {
            node: ActiveFaults { crashed: vec![3], ..Default::default() },
            scoped: [("e1".to_string(), ActiveFaults { crashed: vec![2], ..Default::default() })].into(),
        };
        assert_eq!(snapshot.seen_by(Some("e1")).crashed, [3, 2]);
        assert_eq!(snapshot.seen_by(Some("e2")).crashed, [3]);
        assert_eq!(snapshot.seen_by(None).crashed, [3]);
    }

    /// A node's whole share has every active rule on it in injection order, its crash and its partition.
    #[test]
    fn a_whole_share_has_every_rule_in_order() {
        let addresses: Vec<String> = (0..3).map(|i| format!("http://n{i}")).collect();
        let mut pending = slow("f4", None, None);
        pending.state = pb::FaultState::Waiting;
        let held = [
            slow("f1", None, None),
            slow("f2", Some(1), None),
            entry("f3", Resolved::Crash(0)),
            pending,
            slow("f5", None, Some(0)),
            entry("f6", Resolved::Partition(vec![vec![0, 2]])),
        ];
        let ids = |s: &pb::SetFaultsRequest| s.links.iter().map(|r| r.fault_id.clone()).collect::<Vec<_>>();
        let (zero, one) = (share(&held, 0, &addresses), share(&held, 1, &addresses));
        assert_eq!(
            (ids(&zero), zero.crashed, zero.reachable.clone()),
            (vec!["f1".to_string()], true, vec!["http://n2".to_string()])
        );
        assert_eq!(
            (ids(&one), one.crashed, one.partitioned),
            (vec!["f1".into(), "f2".into(), "f5".into()], false, true)
        );
    }

    /// `after` decodes to its trigger; an empty one, `leader_elected: false` and zero counts are refused naming
    /// `after`, `after.messages` and `after.term`; no `after` is no trigger.
    #[test]
    fn after_decodes_or_names_the_field() {
        let t = |event| trigger(Some(&pb::AfterEvent { event }));
        assert_eq!(trigger(None), Ok(None));
        assert_eq!(t(Some(Event::LeaderElected(true))), Ok(Some(Trigger::LeaderElected)));
        assert_eq!(t(Some(Event::Messages(4))), Ok(Some(Trigger::Messages(4))));
        assert_eq!(t(Some(Event::Term(2))), Ok(Some(Trigger::Term(2))));
        assert_eq!(t(None).unwrap_err().field, "after");
        assert_eq!(t(Some(Event::LeaderElected(false))).unwrap_err().field, "after");
        assert_eq!(t(Some(Event::Messages(0))).unwrap_err().field, "after.messages");
        assert_eq!(t(Some(Event::Term(0))).unwrap_err().field, "after.term");
    }

    /// A pause tells its node how long it lasts: the latest end among the node's pauses (a second,
    /// later one extends the first); clearing one tells the end of those left, 0 (resume now) when
    /// none is; a whole share carries it; another node's pause concerns no other node.
    #[test]
    fn a_pause_tells_its_node_the_latest_end() {
        let addresses: Vec<String> = (0..3).map(|i| format!("http://n{i}")).collect();
        let pause = |id: &str, node, ms| Entry {
            until: Some(std::time::Instant::now() + Duration::from_millis(ms)),
            ..entry(id, Resolved::Pause { node, ms })
        };
        let (short, long) = (pause("p1", 1, 1_000), pause("p2", 1, 5_000));
        let within = |ms: Option<u64>, want: u64| ms.is_some_and(|ms| ms <= want && ms + 200 > want);
        let added = changes_for(3, &addresses, std::slice::from_ref(&short), &[], Some(&long));
        assert_eq!(added.len(), 1, "only the paused node: {added:?}");
        assert!(within(added[&k(1)].pause_ms, 5_000), "{added:?}");
        let cleared = changes_for(3, &addresses, std::slice::from_ref(&short), std::slice::from_ref(&long), None);
        assert!(within(cleared[&k(1)].pause_ms, 1_000), "the short one's end: {cleared:?}");
        let none = changes_for(3, &addresses, &[], std::slice::from_ref(&short), None);
        assert_eq!(none[&k(1)].pause_ms, Some(0), "nothing left: resume now");
        let held = [short, long];
        assert!(within(Some(share(&held, 1, &addresses).pause_ms), 5_000));
        assert_eq!(share(&held, 0, &addresses).pause_ms, 0);
    }
}
