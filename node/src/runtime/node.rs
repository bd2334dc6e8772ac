//! State shared by a node's services: the election table, the outgoing
//! links, the event channel and the shutdown switch.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use ringleader_proto::v1 as pb;
use tokio::sync::{broadcast, oneshot};
use tonic::Code;
use tracing::info;

use super::NodeConfig;
use super::election::{Arrival, Election, Rejection};
use super::faults::FaultTable;
use super::links::{Links, LossReport};
use super::reports::Reporter;

/// Events a slow `Events` subscriber may fall behind by before it skips some.
const EVENT_BUFFER: usize = 4096;

/// Envelopes of one election not prepared here yet that a node keeps for it.
pub(crate) const EARLY_PER_ELECTION: usize = 1_024;
/// Envelopes of elections not prepared yet that a node keeps in all.
pub(crate) const EARLY_TOTAL: usize = 16_384;
/// Their encoded bytes, at most (an envelope may be up to `MAX_ENVELOPE`).
pub(crate) const EARLY_BYTES: usize = 8 * 1024 * 1024;
/// How long a node keeps envelopes for an election that is not prepared.
pub(crate) const EARLY_WAIT: Duration = Duration::from_secs(10);
/// Aborted elections a node remembers, so that their late envelopes are
/// refused at once instead of waiting for a `Prepare` that never comes.
pub(crate) const REMEMBERED_ABORTS: usize = 4_096;

/// Envelopes that reached this node before their election's `Prepare`: a
/// controller prepares every node and starts the initiators in one round of
/// calls, so an initiator's first messages may outrun another node's
/// `Prepare`. They wait here (bounded in number and time) and are handed to
/// the election, in arrival order, when it is prepared.
#[derive(Debug, Default)]
pub(crate) struct Early {
    waiting: HashMap<String, (Instant, Vec<pb::Envelope>)>,
    total: usize,
    bytes: usize,
    /// The latest aborted elections, oldest first.
    aborted: std::collections::VecDeque<String>,
    aborted_set: std::collections::HashSet<String>,
}

impl Early {
    /// Keep `env` for its election, or give it back when its election was
    /// aborted here or there is no room.
    fn hold(&mut self, env: pb::Envelope, dropped: &AtomicU64) -> Result<(), Box<pb::Envelope>> {
        if self.aborted_set.contains(&env.election_id) {
            return Err(Box::new(env));
        }
        if !self.waiting.contains_key(&env.election_id) {
            // A new election waits: forget those that waited too long first.
            let now = Instant::now();
            let (mut expired, mut expired_bytes) = (0, 0);
            self.waiting.retain(|_, (since, envs)| {
                let keep = now.duration_since(*since) < EARLY_WAIT;
                if !keep {
                    expired += envs.len();
                    expired_bytes += envs.iter().map(prost::Message::encoded_len).sum::<usize>();
                }
                keep
            });
            self.total -= expired;
            self.bytes -= expired_bytes;
            dropped.fetch_add(expired as u64, Ordering::Relaxed);
        }
        let size = prost::Message::encoded_len(&env);
        if self.total >= EARLY_TOTAL || self.bytes + size > EARLY_BYTES {
            return Err(Box::new(env));
        }
        let (_, envs) = self.waiting.entry(env.election_id.clone()).or_insert_with(|| (Instant::now(), Vec::new()));
        if envs.len() >= EARLY_PER_ELECTION {
            return Err(Box::new(env));
        }
        envs.push(env);
        self.total += 1;
        self.bytes += size;
        Ok(())
    }

    /// The envelopes waiting for `election_id`, in arrival order; none if
    /// they have waited longer than [`EARLY_WAIT`] (they are counted in
    /// `dropped`).
    fn take(&mut self, election_id: &str, dropped: &AtomicU64) -> Vec<pb::Envelope> {
        let Some((since, envs)) = self.waiting.remove(election_id) else { return Vec::new() };
        self.total -= envs.len();
        self.bytes -= envs.iter().map(prost::Message::encoded_len).sum::<usize>();
        if since.elapsed() >= EARLY_WAIT {
            dropped.fetch_add(envs.len() as u64, Ordering::Relaxed);
            return Vec::new();
        }
        envs
    }

    /// Envelopes waiting now.
    pub(crate) fn len(&self) -> usize {
        self.total
    }

    /// `election_id` was aborted here: its late envelopes are refused.
    pub(crate) fn aborted(&mut self, election_id: &str) {
        if self.aborted_set.insert(election_id.to_string()) {
            self.aborted.push_back(election_id.to_string());
            if self.aborted.len() > REMEMBERED_ABORTS
                && let Some(old) = self.aborted.pop_front()
            {
                self.aborted_set.remove(&old);
            }
        }
    }
}

/// Every election this node holds, by id.
#[derive(Debug, Default)]
pub(crate) struct ElectionTable {
    map: RwLock<HashMap<String, Arc<Election>>>,
    /// The incarnation of the controller that prepared each (absent: not said).
    owners: Mutex<HashMap<String, u64>>,
}

impl ElectionTable {
    pub(crate) fn get(&self, election_id: &str) -> Option<Arc<Election>> {
        self.map.read().unwrap_or_else(|e| e.into_inner()).get(election_id).cloned()
    }

    /// Insert unless the id is taken; returns whether it was inserted.
    pub(crate) fn insert(&self, election: Arc<Election>) -> bool {
        let mut map = self.map.write().unwrap_or_else(|e| e.into_inner());
        if map.contains_key(election.id()) {
            return false;
        }
        map.insert(election.id().to_string(), election);
        true
    }

    pub(crate) fn remove(&self, election_id: &str) -> Option<Arc<Election>> {
        let removed = self.map.write().unwrap_or_else(|e| e.into_inner()).remove(election_id);
        if removed.is_some() {
            self.owners.lock().unwrap_or_else(|e| e.into_inner()).remove(election_id);
        }
        removed
    }

    /// `election_id` was prepared by controller `incarnation` (0: not said).
    fn own(&self, election_id: &str, incarnation: u64) {
        let mut owners = self.owners.lock().unwrap_or_else(|e| e.into_inner());
        if incarnation == 0 {
            owners.remove(election_id);
        } else {
            owners.insert(election_id.to_string(), incarnation);
        }
    }

    /// The incarnation of the controller that prepared `election_id` (0: not said).
    pub(crate) fn owner(&self, election_id: &str) -> u64 {
        self.owners.lock().unwrap_or_else(|e| e.into_inner()).get(election_id).copied().unwrap_or(0)
    }

    pub(crate) fn len(&self) -> usize {
        self.map.read().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Every election held now.
    pub(crate) fn all(&self) -> Vec<Arc<Election>> {
        self.map.read().unwrap_or_else(|e| e.into_inner()).values().cloned().collect()
    }

    fn drain(&self) -> Vec<Arc<Election>> {
        self.owners.lock().unwrap_or_else(|e| e.into_inner()).clear();
        self.map.write().unwrap_or_else(|e| e.into_inner()).drain().map(|(_, e)| e).collect()
    }
}

impl LossReport for ElectionTable {
    fn lost(&self, election_id: &str, what: String) {
        if let Some(e) = self.get(election_id) {
            e.record_error(what);
        }
    }
}

fn reject(seq: u64, election_id: String, r: Rejection) -> pb::Reject {
    pb::Reject { seq, election_id, code: r.code as i32, message: r.message }
}

/// Why [`Node::prepared`] refused.
#[derive(Debug)]
pub(crate) enum Prepared {
    /// The id is taken on this node.
    Taken,
    /// It was installed, but its start failed.
    StartFailed(Rejection),
}

/// One node process (or one in-process node of a local cluster).
#[derive(Debug)]
pub(crate) struct Node {
    pub(crate) cfg: NodeConfig,
    pub(crate) table: Arc<ElectionTable>,
    pub(crate) links: Links,
    /// Injected faults applied to this node's traffic.
    pub(crate) faults: Arc<FaultTable>,
    /// Decisions, beliefs and reports, shared by every subscriber (an `Arc` per
    /// slot keeps the channel's preallocated ring small).
    pub(crate) events: broadcast::Sender<Arc<pb::NodeEvent>>,
    /// Sends one-shot elections' reports on `events`.
    pub(crate) reporter: Arc<Reporter>,
    /// Envelopes waiting for their election's `Prepare`.
    pub(crate) early: Mutex<Early>,
    /// Envelopes refused (or dropped after waiting) because their election is unknown here.
    pub(crate) unknown_election: AtomicU64,
    stopping: AtomicBool,
    /// Wakes every long-lived response stream at shutdown.
    stops: Mutex<Vec<oneshot::Sender<()>>>,
}

impl Node {
    pub(crate) fn new(cfg: NodeConfig) -> Arc<Self> {
        let table = Arc::new(ElectionTable::default());
        let faults = Arc::new(FaultTable::new());
        let report: Arc<dyn LossReport> = table.clone();
        let links = Links::new(Arc::downgrade(&report), cfg.peer_token.clone(), cfg.channels.clone());
        let (events, _) = broadcast::channel(EVENT_BUFFER);
        let reporter = Arc::new(Reporter::default());
        let runtime = tokio::runtime::Handle::try_current().ok();
        if let Some(rt) = &runtime {
            rt.spawn(reporter.clone().run(events.clone()));
        }
        Arc::new(Node {
            cfg,
            table,
            links,
            faults,
            events,
            reporter,
            early: Mutex::new(Early::default()),
            unknown_election: AtomicU64::new(0),
            stopping: AtomicBool::new(false),
            stops: Mutex::new(Vec::new()),
        })
    }

    /// Hand an envelope from the network to its election; a refusal comes
    /// back as the `Reject` to send on the link's reply stream.
    #[inline]
    pub(crate) fn receive(&self, env: pb::Envelope) -> Result<(), pb::Reject> {
        if self.faults.crashed() {
            // A crashed node hears nothing; the sender cannot tell.
            self.faults.lost_to_crash();
            return Ok(());
        }
        let election = match self.table.get(&env.election_id) {
            Some(e) => e,
            None => {
                // Not prepared (yet): it waits, unless the election was prepared meanwhile
                // (`prepared` hands the waiting envelopes over under the same lock).
                let mut early = self.early.lock().unwrap_or_else(|e| e.into_inner());
                match self.table.get(&env.election_id) {
                    Some(e) => {
                        drop(early);
                        e
                    }
                    None => match early.hold(env, &self.unknown_election) {
                        Ok(()) => return Ok(()),
                        Err(env) => {
                            drop(early);
                            self.unknown_election.fetch_add(1, Ordering::Relaxed);
                            self.count_rejection(Code::NotFound);
                            let why = Rejection::new(
                                Code::NotFound,
                                format!(
                                    "unknown election `{}` (aborted here, or no room left to wait for its Prepare)",
                                    env.election_id
                                ),
                            );
                            return Err(reject(env.seq, env.election_id, why));
                        }
                    },
                }
            }
        };
        self.hand_to(&election, env)
    }

    /// Add a prepared election to the table: started first when `start` (an
    /// initiator woken by its `Prepare`), then handed the envelopes that
    /// waited for it (in arrival order: no envelope of its links can overtake
    /// them, as arrivals for an unknown election wait on the same lock). An
    /// id taken here is refused; so is a start that fails (the election
    /// stays, as after a failed `Start`). An id aborted here may be prepared
    /// again (a new election under the old id).
    /// `incarnation` is the preparing controller's (0: not said).
    pub(crate) fn prepared(&self, election: &Arc<Election>, start: bool, incarnation: u64) -> Result<(), Prepared> {
        let mut early = self.early.lock().unwrap_or_else(|e| e.into_inner());
        if self.table.get(election.id()).is_some() {
            return Err(Prepared::Taken);
        }
        self.table.own(election.id(), incarnation);
        if early.aborted_set.remove(election.id()) {
            early.aborted.retain(|id| id != election.id());
        }
        // A program's start waits on its process: it runs after this call, off the lock and the caller's task.
        let started = if start && !election.is_program() { election.start().map(drop) } else { Ok(()) };
        for env in early.take(election.id(), &self.unknown_election) {
            if let Err(r) = self.hand_to(election, env) {
                // Its link's reply stream may be gone: the election keeps the refusal.
                election.record_error(format!("a message that waited for Prepare was refused: {}", r.message));
            }
        }
        if !self.table.insert(election.clone()) {
            return Err(Prepared::Taken);
        }
        drop(early);
        if start && election.is_program() {
            election.start_in_background();
        }
        started.map_err(Prepared::StartFailed)
    }

    /// Hand `env` to `election` (its id is the envelope's).
    fn hand_to(&self, election: &Arc<Election>, env: pb::Envelope) -> Result<(), pb::Reject> {
        let pb::Envelope { election_id, sender, port, seq, causal_time, body, traceparent, message_seq } = env;
        // The envelope's id string is handed on to the first message this step sends.
        let mut spare = Some(election_id);
        let arrival =
            Arrival { sender, port, body: body.as_ref(), causal_time, traceparent: &traceparent, message_seq };
        election.receive(arrival, &mut spare).map_err(|r| {
            self.count_rejection(r.code);
            reject(seq, spare.take().unwrap_or_else(|| election.id().to_string()), r)
        })
    }

    fn count_rejection(&self, code: Code) {
        let labels =
            [crate::observe::kv("node", self.cfg.name.clone()), crate::observe::kv("code", format!("{code:?}"))];
        crate::observe::node_metrics().rejected.add(1, &labels);
    }

    /// Forget `election_id` (an abort): its late envelopes are refused from now on.
    pub(crate) fn abort(&self, election_id: &str) -> bool {
        self.early.lock().unwrap_or_else(|e| e.into_inner()).aborted(election_id);
        match self.table.remove(election_id) {
            Some(e) => {
                e.end();
                true
            }
            None => false,
        }
    }

    pub(crate) fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// The end of a server stream that must end when the node shuts down
    /// (at once if it already has).
    pub(crate) fn stream_end(&self) -> StreamEnd {
        let (tx, rx) = oneshot::channel();
        let mut stops = self.stops.lock().unwrap_or_else(|e| e.into_inner());
        if self.is_stopping() {
            drop(tx);
        } else {
            stops.retain(|s| !s.is_closed());
            stops.push(tx);
        }
        StreamEnd::new(rx)
    }

    /// This node is about to stop on purpose (SIGTERM, or the controller's
    /// planned restart): every kept leadership hands over what this node
    /// holds in it ([`Election::leave`]), and for those it led this waits
    /// until the successor's claim reaches it (its belief names another
    /// leader), or `wait` passes. The node keeps serving meanwhile.
    pub(crate) async fn leave_all(&self, wait: Duration) -> pb::LeaveResponse {
        // Subscribe before leaving: the successor's claim may come at once.
        let mut events = self.events.subscribe();
        let began = Instant::now();
        let mut response = pb::LeaveResponse::default();
        let mut waiting = Vec::new();
        for e in self.table.all() {
            match e.leave() {
                Some((true, handing)) => {
                    let term = e.current_belief().map_or(0, |b| b.term);
                    response.handovers.push(pb::HandoverResult {
                        election_id: e.id().to_string(),
                        term,
                        ..Default::default()
                    });
                    if !handing {
                        // Its algorithm hands nothing over: the others' detectors take over.
                        continue;
                    }
                    waiting.push(response.handovers.len() - 1);
                    // A claim that reached it between leaving and subscribing is its belief now.
                    if let Some(b) = e.current_belief() {
                        Self::handed(&mut response.handovers, &mut waiting, &b, e.node_id(), began);
                    }
                }
                Some((false, _)) => response.followed += 1,
                None => {}
            }
        }
        info!(name = %self.cfg.name, leading = response.handovers.len(), followed = response.followed, "leaving: handing over");
        let deadline = tokio::time::Instant::from_std(began + wait);
        while !waiting.is_empty() {
            match tokio::time::timeout_at(deadline, events.recv()).await {
                Ok(Ok(ev)) if ev.kept => {
                    let id = self.table.get(&ev.election_id).map_or(0, |e| e.node_id());
                    Self::handed(&mut response.handovers, &mut waiting, &ev, id, began);
                }
                Ok(Ok(_)) | Ok(Err(broadcast::error::RecvError::Lagged(_))) => {}
                Ok(Err(broadcast::error::RecvError::Closed)) | Err(_) => break,
            }
        }
        for h in &response.handovers {
            info!(
                name = %self.cfg.name, election = %h.election_id, handed_over = h.handed_over,
                new_leader = h.new_leader_id, took_us = h.took_us, "handover"
            );
        }
        response
    }

    /// `ev`, a belief of this node (id `me`) in an election it is handing
    /// over, may show the handover done: another leader named.
    fn handed(
        results: &mut [pb::HandoverResult],
        waiting: &mut Vec<usize>,
        ev: &pb::NodeEvent,
        me: u64,
        began: Instant,
    ) {
        let Some(at) = waiting.iter().position(|&i| results[i].election_id == ev.election_id) else { return };
        if ev.leader_id == 0 || ev.leader_id == me {
            return;
        }
        let h = &mut results[waiting.swap_remove(at)];
        h.handed_over = true;
        h.new_leader_id = ev.leader_id;
        h.new_term = ev.term;
        h.took_us = began.elapsed().as_micros() as u64;
    }

    /// End the long-lived streams, close the outgoing links and drop every election.
    pub(crate) fn shutdown(&self) {
        if self.stopping.swap(true, Ordering::SeqCst) {
            return;
        }
        for s in self.stops.lock().unwrap_or_else(|e| e.into_inner()).drain(..) {
            let _ = s.send(());
        }
        self.links.close();
        self.reporter.stop();
        let elections = self.table.drain();
        for e in &elections {
            e.close();
        }
        let stats = self.links.stats();
        info!(
            name = %self.cfg.name,
            elections = elections.len(),
            lost = stats.lost.load(Ordering::Relaxed),
            link_failures = stats.failures.load(Ordering::Relaxed),
            rejections_received = stats.rejections_received.load(Ordering::Relaxed),
            unknown_election = self.unknown_election.load(Ordering::Relaxed),
            early = self.early.lock().map_or(0, |e| e.len()),
            "node stopped"
        );
    }
}

/// Where a long-lived server stream stands: it ends once, when the node
/// shuts down ([`Node::stream_end`]) or when the stream itself is over
/// ([`StreamEnd::finish`]), and stays ended.
#[derive(Debug)]
pub(crate) struct StreamEnd {
    stop: oneshot::Receiver<()>,
    done: bool,
}

impl StreamEnd {
    /// A stream that ends when `stop` resolves (or its sender is dropped).
    pub(crate) fn new(stop: oneshot::Receiver<()>) -> Self {
        StreamEnd { stop, done: false }
    }

    /// Has the stream ended, before or now (the node is shutting down)?
    /// Registers `cx` for the shutdown while it has not.
    pub(crate) fn ended(&mut self, cx: &mut std::task::Context<'_>) -> bool {
        if !self.done && std::pin::Pin::new(&mut self.stop).poll(cx).is_ready() {
            self.done = true;
        }
        self.done
    }

    /// The stream is over: every later poll ends it.
    pub(crate) fn finish(&mut self) {
        self.done = true;
    }
}
