//! The `CheckAlgorithm` RPC: one small election on every schedule
//! (`ringleader-check`), or on random walks (`simulate`), its progress
//! streamed, stopped when the caller goes.
//!
//! A class asks the same questions at once, so checks are shared
//! ([`Checks`]): a request is reduced to what decides its verdict
//! ([`CheckKey`]: the validated election and links, `max_states`,
//! `depth_first`, and with `simulate` the walks asked: random walks, whose
//! same seed gives the same walks); a verdict already found for it is answered at once from a
//! bounded cache ([`cache`]); an identical request (with the same
//! `timeout_s`) arriving while one is queued or running joins that run and
//! shares its queue position, progress and verdict. Only verdicts no
//! machine's load could change are cached: complete, or stopped by
//! `max_states` (the search is deterministic, so the same budget stops it at
//! the same state); one cut by `timeout_s` or by memory is answered to the
//! callers of its run and forgotten. At most
//! `controller.max_concurrent_checks` run at once; the others wait their
//! turn (the `queue` module), told their position, and one beyond
//! `controller.max_queued_checks` is refused.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use ringleader_check::{CheckAsk, Checked, Election, KeptCheck, Limits, Report, check_with, diagram, split_words};
use ringleader_check::{Counterexample, ElectionModel, Sampled, Walks, simulate};
use ringleader_core::spec::finite_bound;
use ringleader_proto::v1 as pb;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, watch};
use tonic::Status;

use crate::budget::{Budget, Reservation};
use crate::config::ControllerConfig;

pub mod cache;
pub(crate) mod queue;

pub use cache::{CACHE_BYTES, CACHE_ENTRIES};

/// The most states a check may visit (about 2 GB of fingerprints and queue at worst).
pub const MAX_STATES: u64 = 20_000_000;
/// The state budget of a check that names none (`max_states` 0): every row of
/// the teaching sheets' checks finishes within it (kept bully on 3 nodes with
/// a crash and a lost message, the largest, takes 680,042 states), and a
/// release build explores it in 5 to 15 s on one core.
pub const DEFAULT_MAX_STATES: u64 = 1_000_000;
/// The longest a check may run.
pub const MAX_SECONDS: u32 = 600;
/// How long a check that names no `timeout_s` may run: a safety stop behind
/// the state budget.
pub const DEFAULT_SECONDS: u32 = 60;

/// A checked request: the election and how far to go.
#[derive(Debug)]
pub struct Plan {
    election: Election,
    limits: Limits,
    /// Random walks instead of every schedule (`simulate`).
    walks: Option<Walks>,
}

/// What decides a check's verdict, and nothing else: the validated election
/// (algorithm, ids in position order, initiators, rule, detector, faults,
/// delays, timers, partition bound and split), whether links are FIFO, the
/// state budget, the order of the search, and the random walks asked
/// (`simulate`: how many, how deep, from which seed). Requests that spell the same
/// check differently (ids given or defaulted, `n` given or derived from the
/// ids, `initiators` with `kept`, either side of a split, `fifo` where the
/// algorithm assumes it) have equal keys; `timeout_s` is not part of it (a
/// verdict it cut short is never cached).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CheckKey {
    algorithm: &'static str,
    ids: Vec<u64>,
    initiators: Vec<u32>,
    rule: ringleader_core::algo::Rule,
    kept: Option<ringleader_core::algo::detector::DetectorConfig>,
    faults: ringleader_check::Faults,
    delay_ms: u64,
    punctual_timers: bool,
    partition_ms: Option<u64>,
    /// The side of the split without position 0 (either side names it).
    partition_side: Option<u32>,
    fifo: bool,
    max_states: usize,
    depth_first: bool,
    /// Random walks (`simulate`): how many, how deep, from which seed.
    walks: Option<Walks>,
}

impl Plan {
    /// What decides this check's verdict.
    pub fn key(&self) -> CheckKey {
        let e = &self.election;
        let all = 1u32.checked_shl(e.ids.len() as u32).map_or(u32::MAX, |b| b - 1);
        CheckKey {
            algorithm: e.spec.name,
            ids: e.ids.clone(),
            initiators: e.initiators.clone(),
            rule: e.rule,
            kept: e.kept,
            faults: e.faults,
            delay_ms: e.delay_ms,
            punctual_timers: e.punctual_timers,
            partition_ms: e.partition_ms,
            partition_side: e.partition_side.map(|side| if side & 1 == 1 { !side & all } else { side & all }),
            fifo: self.limits.fifo,
            max_states: self.limits.max_states,
            depth_first: self.limits.depth_first,
            walks: self.walks,
        }
    }

    /// The check's own time limit, in whole milliseconds.
    fn timeout_ms(&self) -> u128 {
        self.limits.timeout.map_or(0, |t| t.as_millis())
    }
}

fn invalid(field: &'static str, why: impl std::fmt::Display) -> Status {
    crate::error::RequestError::invalid(field, why.to_string()).into()
}

/// The request as the checker asks it ([`CheckAsk`]: the same validation as the command line's).
fn ask(req: &pb::CheckRequest) -> CheckAsk {
    CheckAsk {
        algorithm: req.algorithm.clone(),
        n: req.n,
        ids: req.ids.clone(),
        anonymous: req.anonymous,
        initiators: req.initiators.clone(),
        kept: req.kept,
        crashes: req.crashes,
        recover: req.recover,
        losses: req.losses,
        duplications: req.duplications,
        partitions: req.partitions,
        delay_ms: (req.delay_ms > 0).then_some(u64::from(req.delay_ms)),
        punctual_timers: req.punctual_timers,
        partition_ms: (req.partition_ms > 0).then_some(u64::from(req.partition_ms)),
        partition_side: req.partition_side.clone(),
        fifo: req.fifo,
        any_order: req.any_order,
        detector: KeptCheck::default().detector,
        walk: req.simulate,
    }
}

/// The most threads a request may ask for (`threads`); no more than the
/// controller's cores are used.
pub const MAX_THREADS: u32 = 1_024;

/// Validate `req`, naming the field at fault (the checker's [`CheckAsk::check`], then how far this shared
/// server lets a check go). The plan is run by [`Checks::ask`].
pub fn plan(req: &pb::CheckRequest) -> Result<Plan, Status> {
    let Checked { election, fifo } = ask(req).check().map_err(|r| Status::from(crate::error::RequestError::from(r)))?;
    if req.max_states > MAX_STATES {
        return Err(invalid("max_states", format!("{} is above {MAX_STATES}", req.max_states)));
    }
    if req.timeout_s > MAX_SECONDS {
        return Err(invalid("timeout_s", format!("{} s is above {MAX_SECONDS} s", req.timeout_s)));
    }
    let max_states = if req.max_states == 0 { DEFAULT_MAX_STATES } else { req.max_states } as usize;
    let timeout = Duration::from_secs(u64::from(if req.timeout_s == 0 { DEFAULT_SECONDS } else { req.timeout_s }));
    // A kept check of an algorithm whose nodes meet in a store never ends by itself (its record's
    // revision grows): it explores every schedule up to a depth, as the command line does.
    let store = req.kept && election.spec.live_provision == ringleader_core::spec::Provision::Store;
    let max_depth = if store { ringleader_check::STORE_DEPTH } else { 0 };
    if req.threads > MAX_THREADS {
        return Err(invalid("threads", format!("{} is above {MAX_THREADS}", req.threads)));
    }
    let limits = Limits {
        fifo,
        max_states,
        max_depth,
        timeout: Some(timeout),
        depth_first: req.depth_first,
        threads: (req.threads as usize).min(ringleader_check::cores()),
        ..Limits::default()
    };
    let walks = walks(req)?;
    Ok(Plan { election, limits, walks })
}

/// The most walks a `simulate` check takes.
pub const MAX_WALKS: u32 = 1_000_000;
/// The most moves one walk of a `simulate` check takes.
pub const MAX_WALK_DEPTH: u32 = 100_000;

/// The walks `req` asks for (`simulate`), each field checked, or `None` for every schedule.
fn walks(req: &pb::CheckRequest) -> Result<Option<Walks>, Status> {
    if !req.simulate {
        let set = [("walks", req.walks > 0), ("walk_depth", req.walk_depth > 0), ("walk_seed", req.walk_seed > 0)];
        if let Some((field, _)) = set.into_iter().find(|&(_, set)| set) {
            let why = "only with simulate (random walks)".to_string();
            return Err(crate::error::RequestError::precondition(field, why).into());
        }
        return Ok(None);
    }
    if req.depth_first {
        return Err(invalid("depth_first", "not with simulate: a walk takes one schedule, in no search order"));
    }
    if req.walks > MAX_WALKS {
        return Err(invalid("walks", format!("{} is above {MAX_WALKS}", req.walks)));
    }
    if req.walk_depth > MAX_WALK_DEPTH {
        return Err(invalid("walk_depth", format!("{} moves is above {MAX_WALK_DEPTH}", req.walk_depth)));
    }
    let default = Walks::DEFAULT;
    Ok(Some(Walks {
        walks: if req.walks == 0 { default.walks } else { u64::from(req.walks) },
        depth: if req.walk_depth == 0 { default.depth } else { req.walk_depth as usize },
        seed: req.walk_seed,
    }))
}

/// Breadth-first, a check's resident memory per state found, at its peak,
/// with a margin: 1.0 to 1.3 KB measured on checks cut short with most
/// states still queued (kept bully on 4 nodes with a crash, the repaired
/// ring with a recovering crash, ZooKeeper-style's split {1, 3, 4} / {2}),
/// 300 to 410 B on ones that drain their queue (kept bully on 3 nodes,
/// Chubby-style on 5); `cargo run --release -p ringleader-check --example
/// rss` measures it.
pub const BFS_BYTES_PER_STATE: u64 = 1_536;
/// Depth-first, the same: 35 to 98 B measured (the table of fingerprints
/// and a stack of a few hundred states), with a margin.
pub const DFS_BYTES_PER_STATE: u64 = 128;
/// The checks running at once together reserve at most this share of the
/// controller's memory budget, leaving the rest to elections.
pub const CHECKS_SHARE_PERCENT: u64 = 50;

/// The memory a check of `limits` reserves, in bytes: its states at most
/// (`max_states`) at the measured bytes per state, and no more than its
/// share of a budget of `budget_bytes` among `max_concurrent` checks
/// ([`CHECKS_SHARE_PERCENT`] of it together).
pub fn reservation_bytes(limits: &Limits, budget_bytes: u64, max_concurrent: usize) -> u64 {
    let per_state = if limits.depth_first { DFS_BYTES_PER_STATE } else { BFS_BYTES_PER_STATE };
    let share = budget_bytes / 100 * CHECKS_SHARE_PERCENT / max_concurrent.max(1) as u64;
    (limits.max_states as u64).saturating_mul(per_state).min(share)
}

/// Reserve the memory of `plan` ([`reservation_bytes`]) in `budget`
/// (`controller.memory_budget_mib`, set as in `config`) when it is about to
/// run, beside the running elections and checks; refused
/// RESOURCE_EXHAUSTED naming the setting if it does not fit. With a budget,
/// the check stops before the controller's resident memory has grown by its
/// reservation since now (or passes the whole budget), so the checks and
/// elections running at once stay within the budget together; the margin is
/// the memory of `ringleader_check::MEMORY_READ_STATES` states.
pub fn reserve(plan: &mut Plan, budget: &Arc<Budget>, config: &ControllerConfig) -> Result<Reservation, Status> {
    let budget_bytes = config.memory_budget_mib.saturating_mul(1 << 20);
    // Random walks keep what a depth-first check keeps: a table of fingerprints, and a path.
    let sized = Limits { depth_first: plan.limits.depth_first || plan.walks.is_some(), ..plan.limits };
    let bytes = reservation_bytes(&sized, budget_bytes, config.max_concurrent_checks);
    let memory = budget
        .reserve(bytes, || {
            let e = &plan.election;
            let kept = if e.kept.is_some() { " kept" } else { "" };
            format!("a check of {}{kept} on {} nodes", e.spec.name, e.ids.len())
        })
        .map_err(|e| {
            crate::error::naming(Status::resource_exhausted(e.to_string()), crate::budget::OVER_BUDGET_FIELD)
        })?;
    if budget_bytes > 0 {
        let resident = ringleader_check::resident_mib().unwrap_or(0);
        plan.limits.max_memory_mib = (resident + (bytes >> 20)).min(config.memory_budget_mib);
    }
    Ok(memory)
}

/// The places for lab explores at one controller:
/// `controller.max_concurrent_explores` of them, each held by an explore
/// replaying.
#[derive(Debug, Clone)]
pub struct Slots {
    places: Arc<Semaphore>,
    max: usize,
}

impl Slots {
    /// `max` places (at least one).
    pub fn new(max: usize) -> Slots {
        let max = max.max(1);
        Slots { places: Arc::new(Semaphore::new(max)), max }
    }

    /// A place, waiting at most `wait` for one; `None` if none came free.
    async fn take(&self, wait: Duration) -> Option<OwnedSemaphorePermit> {
        tokio::time::timeout(wait, self.places.clone().acquire_owned()).await.ok()?.ok()
    }
}

/// Where one run of a check stands, as its callers see it.
#[derive(Clone, Debug)]
enum Stage {
    /// Waiting for a place: 1 is next.
    Queued { position: u32, waiting: u32 },
    /// Running, with its latest progress.
    Running(Option<pb::CheckProgress>),
    /// Its verdict, or why it could not run.
    Done(Result<Arc<pb::CheckVerdict>, Status>),
}

/// One run of a check, shared by every caller who asked it while it was
/// queued or running (each holds a receiver of its stage).
#[derive(Debug)]
struct Flight {
    stage: watch::Sender<Stage>,
}

/// A run is shared by requests with the same key and the same `timeout_s`.
type FlightKey = (CheckKey, u128);

/// The verdicts found and the runs under way.
#[derive(Debug, Default)]
struct Book {
    cache: cache::Cache,
    flights: HashMap<FlightKey, Arc<Flight>>,
}

/// The checks of one controller: the queue, the runs under way and the
/// cache of verdicts (see the module's docs).
#[derive(Debug, Clone)]
pub struct Checks {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    queue: Arc<queue::Queue>,
    budget: Arc<Budget>,
    config: ControllerConfig,
    book: Mutex<Book>,
    runs: AtomicU64,
}

impl Checks {
    /// The checks of a controller set as in `config`, whose memory budget is `budget`.
    pub fn new(budget: Arc<Budget>, config: &ControllerConfig) -> Checks {
        let queue = queue::Queue::new(config.max_concurrent_checks, config.max_queued_checks);
        let inner = Inner { queue, budget, config: config.clone(), book: Mutex::default(), runs: AtomicU64::new(0) };
        Checks { inner: Arc::new(inner) }
    }

    /// Checks run so far (a verdict from the cache or a shared run is not one).
    pub fn runs(&self) -> u64 {
        self.inner.runs.load(Ordering::SeqCst)
    }

    /// Checks running now.
    pub fn running(&self) -> usize {
        self.inner.queue.running()
    }

    /// Checks waiting for a place now (identical ones count once).
    pub fn waiting(&self) -> usize {
        self.inner.queue.waiting()
    }

    /// Verdicts cached, and their bytes.
    pub fn cached(&self) -> (usize, u64) {
        let book = self.inner.book();
        (book.cache.len(), book.cache.bytes())
    }

    /// Answer `plan`: the events of its stream ([`pb::CheckEvent`]): from the
    /// cache, the verdict alone (`cached`); else its queue position as it
    /// moves, position 0 when it runs, progress about four times a second,
    /// and the verdict, of a run of its own or of the identical run already
    /// queued or running (`shared`). Refused RESOURCE_EXHAUSTED naming
    /// `controller.max_queued_checks` when the queue is full. A caller that
    /// closes its stream leaves its run; a run left by all its callers leaves
    /// the queue, or stops. The run never waits for a caller: each caller
    /// has a task of its own that reads the run's latest stage; a progress
    /// event a caller's stream has no room for is dropped (the next one
    /// replaces it), and a position or the verdict waits at most
    /// [`VERDICT_WAIT`] for room (then that caller's stream ends).
    pub fn ask(&self, plan: Plan) -> Result<mpsc::Receiver<Result<pb::CheckEvent, Status>>, Status> {
        let key = plan.key();
        let flight_key = (key.clone(), plan.timeout_ms());
        let (tx, rx) = mpsc::channel(16);
        let mut book = self.inner.book();
        if let Some(verdict) = book.cache.get(&key) {
            let verdict = pb::CheckVerdict { cached: true, ..(*verdict).clone() };
            tx.try_send(Ok(event(pb::check_event::Kind::Verdict(verdict)))).expect("room for one event");
            return Ok(rx);
        }
        if let Some(flight) = book.flights.get(&flight_key) {
            let stage = flight.stage.subscribe();
            drop(book);
            tokio::spawn(forward(stage, tx, true));
            return Ok(rx);
        }
        let mut ticket = self.inner.queue.join()?;
        let first = match ticket.poll() {
            Ok(place) => Ok(place),
            Err(queue::Standing { position, waiting }) => Err(Stage::Queued { position, waiting }),
        };
        let (sender, stage) = watch::channel(first.as_ref().err().cloned().unwrap_or(Stage::Running(None)));
        let flight = Arc::new(Flight { stage: sender });
        book.flights.insert(flight_key.clone(), flight.clone());
        drop(book);
        tokio::spawn(forward(stage, tx, false));
        let place = first.map_err(|_| ticket);
        tokio::spawn(self.inner.clone().drive(flight_key, flight, plan, place));
        Ok(rx)
    }
}

impl Inner {
    fn book(&self) -> MutexGuard<'_, Book> {
        self.book.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Forget `flight` if no caller is left (none can join it after): `true` if forgotten.
    fn abandon(&self, key: &FlightKey, flight: &Arc<Flight>) -> bool {
        let mut book = self.book();
        if flight.stage.receiver_count() > 0 {
            return false;
        }
        if book.flights.get(key).is_some_and(|f| Arc::ptr_eq(f, flight)) {
            book.flights.remove(key);
        }
        true
    }

    /// End `flight` with `result`, caching a `settled` verdict.
    fn finish(&self, key: &FlightKey, flight: &Arc<Flight>, result: Result<pb::CheckVerdict, Status>, settled: bool) {
        let mut book = self.book();
        if book.flights.get(key).is_some_and(|f| Arc::ptr_eq(f, flight)) {
            book.flights.remove(key);
        }
        let result = result.map(Arc::new);
        if settled && let Ok(verdict) = &result {
            book.cache.insert(key.0.clone(), verdict.clone(), &self.budget);
        }
        flight.stage.send_replace(Stage::Done(result));
    }

    /// Wait for a place (telling the callers where the run stands), reserve
    /// its memory, run it on a blocking thread, and end the flight.
    async fn drive(
        self: Arc<Self>,
        key: FlightKey,
        flight: Arc<Flight>,
        mut plan: Plan,
        place: Result<queue::Place, queue::Ticket>,
    ) {
        let place = match place {
            Ok(place) => place,
            Err(ticket) => match self.wait(&key, &flight, ticket).await {
                Some(place) => place,
                None => return,
            },
        };
        let memory = match reserve(&mut plan, &self.budget, &self.config) {
            Ok(memory) => memory,
            Err(status) => return self.finish(&key, &flight, Err(status), false),
        };
        flight.stage.send_replace(Stage::Running(None));
        self.runs.fetch_add(1, Ordering::SeqCst);
        let (this, k, f) = (self.clone(), key.clone(), flight.clone());
        let thread = tokio::task::spawn_blocking(move || {
            let stop = AtomicBool::new(false);
            let Plan { election, limits, walks } = plan;
            if let Some(walks) = walks {
                let sampled = simulate(election.clone(), limits, walks, Some(&stop), |w| {
                    let secs = w.elapsed.as_secs_f64();
                    let progress = pb::CheckProgress {
                        states: w.states as u64,
                        depth: w.deepest as u32,
                        states_per_second: if secs > 0.0 { w.states as f64 / secs } else { 0.0 },
                        elapsed_s: secs,
                    };
                    f.stage.send_replace(Stage::Running(Some(progress)));
                    if f.stage.receiver_count() == 0 && this.abandon(&k, &f) {
                        stop.store(true, Ordering::Relaxed);
                    }
                });
                trim();
                let verdict = walk_verdict(&election, limits.fifo, &sampled);
                drop(memory);
                drop(place);
                // The same seed gives the same walks: only a run no limit of time, memory or a
                // caller cut is kept.
                let settled = matches!(sampled.limit, None | Some("states"));
                return this.finish(&k, &f, Ok(verdict), settled);
            }
            let report = check_with(election.clone(), limits, Some(&stop), |p| {
                let secs = p.elapsed.as_secs_f64();
                let progress = pb::CheckProgress {
                    states: p.states as u64,
                    depth: p.depth as u32,
                    states_per_second: if secs > 0.0 { p.states as f64 / secs } else { 0.0 },
                    elapsed_s: secs,
                };
                f.stage.send_replace(Stage::Running(Some(progress)));
                if f.stage.receiver_count() == 0 && this.abandon(&k, &f) {
                    stop.store(true, Ordering::Relaxed);
                }
            });
            trim();
            let verdict = verdict(&election, limits.fifo, &report);
            // The check is over and its memory freed: the next may start before its callers read
            // the verdict. The memory goes first: the place freed first let the next check in
            // line reserve its share while this one's was still held, and be refused.
            drop(memory);
            drop(place);
            this.finish(&k, &f, Ok(verdict), settled(&report));
        });
        if let Err(e) = thread.await {
            self.finish(&key, &flight, Err(Status::internal(format!("the check failed: {e}"))), false);
        }
    }

    /// Wait in line with `ticket` for a place, telling `flight`'s callers
    /// where it stands; `None` if every caller went first.
    async fn wait(&self, key: &FlightKey, flight: &Arc<Flight>, mut ticket: queue::Ticket) -> Option<queue::Place> {
        let mut moved = self.queue.subscribe();
        loop {
            match ticket.poll() {
                Ok(place) => return Some(place),
                Err(queue::Standing { position, waiting }) => {
                    flight.stage.send_if_modified(|stage| match stage {
                        Stage::Queued { position: p, waiting: w } if (*p, *w) == (position, waiting) => false,
                        _ => {
                            *stage = Stage::Queued { position, waiting };
                            true
                        }
                    });
                }
            }
            tokio::select! {
                _ = moved.changed() => {}
                () = flight.stage.closed() => {
                    if self.abandon(key, flight) {
                        return None;
                    }
                }
            }
        }
    }
}

/// A verdict no machine's load could change: every state explored, or
/// stopped by the state budget or depth (the search is deterministic); not
/// one cut by time, memory or a caller going.
fn settled(report: &Report) -> bool {
    matches!(report.limit, None | Some("states") | Some("depth") | Some("log"))
}

/// Send `event` to a caller, waiting at most [`VERDICT_WAIT`] for room: `false` if the caller has
/// gone or does not read.
async fn deliver(tx: &mpsc::Sender<Result<pb::CheckEvent, Status>>, event: Result<pb::CheckEvent, Status>) -> bool {
    matches!(tokio::time::timeout(VERDICT_WAIT, tx.send(event)).await, Ok(Ok(())))
}

/// Forward a run's stages to one caller's stream (`shared`: a run another
/// caller started), until the verdict or until the caller goes.
async fn forward(mut stage: watch::Receiver<Stage>, tx: mpsc::Sender<Result<pb::CheckEvent, Status>>, shared: bool) {
    use pb::check_event::Kind;
    let mut told: Option<u32> = None;
    stage.mark_changed();
    loop {
        let ended = tokio::select! {
            changed = stage.changed() => changed.is_err(),
            () = tx.closed() => return,
        };
        let now = stage.borrow_and_update().clone();
        let queued = |position, waiting| event(Kind::Queued(pb::CheckQueued { position, waiting }));
        match now {
            Stage::Queued { position, waiting } => {
                if told != Some(position) {
                    if !deliver(&tx, Ok(queued(position, waiting))).await {
                        return;
                    }
                    told = Some(position);
                }
            }
            Stage::Running(progress) => {
                if told != Some(0) {
                    if !deliver(&tx, Ok(queued(0, 0))).await {
                        return;
                    }
                    told = Some(0);
                }
                if let Some(p) = progress {
                    let _ = tx.try_send(Ok(event(Kind::Progress(p))));
                }
            }
            Stage::Done(result) => {
                // A run that began and ended between two looks still says it began.
                if result.is_ok() && told != Some(0) && !deliver(&tx, Ok(queued(0, 0))).await {
                    return;
                }
                let answer = result.map(|v| event(Kind::Verdict(pb::CheckVerdict { shared, ..(*v).clone() })));
                deliver(&tx, answer).await;
                return;
            }
        }
        if ended {
            let _ = tx.try_send(Err(Status::internal("the check ended without a verdict")));
            return;
        }
    }
}

/// How long an explore that finds `controller.max_concurrent_explores`
/// replaying waits for one to end before it is refused (one replays in
/// about 2 ms, so a student's clicks wait at most a few).
pub const EXPLORE_WAIT: Duration = Duration::from_millis(500);

/// Admit a lab explore among the `controller.max_concurrent_explores`
/// replaying at once (`slots`), waiting [`EXPLORE_WAIT`] for a place;
/// refused RESOURCE_EXHAUSTED naming the setting. The explore holds the
/// place until its replay ends, on the blocking thread that runs it.
pub async fn admit_explore(slots: &Slots) -> Result<OwnedSemaphorePermit, Status> {
    slots.take(EXPLORE_WAIT).await.ok_or_else(|| {
        let reason = format!(
            "{} {} replaying, the most this controller runs at once (controller.max_concurrent_explores); try \
             again in a moment",
            slots.max,
            if slots.max == 1 { "explore is" } else { "explores are" }
        );
        let code = tonic::Code::ResourceExhausted;
        crate::error::RequestError { code, field: "max_concurrent_explores".into(), reason }.into()
    })
}

fn event(kind: pb::check_event::Kind) -> pb::CheckEvent {
    pb::CheckEvent { kind: Some(kind) }
}

/// How long a verdict or a queue position waits for room in a caller's
/// stream (a caller that reads takes it at once; one that does not loses it,
/// and the stream ends).
pub const VERDICT_WAIT: Duration = Duration::from_secs(30);

/// Give the memory a check freed back to the system: glibc's allocator
/// keeps it, and the next check's share, measured from the resident memory
/// at its admission, would start on top of it.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim() {
    // SAFETY: malloc_trim only walks the allocator's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}

/// A counterexample of a check of `election` as the API gives it: its steps and how the nodes
/// ended in words, its diagram, and what it may owe to the model.
fn counterexample(election: &Election, fifo: bool, c: &Counterexample) -> pb::CheckCounterexample {
    let model = ringleader_check::ElectionModel::new(election.clone(), fifo);
    pb::CheckCounterexample {
        property: c.property.to_string(),
        steps: model.words(&c.steps),
        outcome: model.outcome(&c.steps),
        error: c.error.clone().unwrap_or_default(),
        svg: diagram(election, fifo, c),
        note: model.caveat(c.property).unwrap_or_default().to_string(),
        rounds: c.rounds.clone(),
    }
}

/// The verdict of a run of random walks of `election` (`simulate`): never `holds` nor `complete`
/// (a sample is not a proof); the walks' figures in `walks`, the first violation's schedule as the
/// counterexample.
fn walk_verdict(election: &Election, fifo: bool, s: &Sampled) -> pb::CheckVerdict {
    let stopped_by = match s.limit {
        Some("states") => "max_states",
        Some("time") => "timeout_s",
        Some("memory") => "memory_budget_mib",
        _ => "",
    };
    let split = election.partition_side.map(|side| format!(" (split {})", split_words(side, &election.ids)));
    let links = if fifo && !election.spec.assumptions.fifo { " on FIFO links" } else { "" };
    let summary = format!(
        "{} n={}{}{}{links}, random walks from seed {}: {} steps, deepest walk {}; {} in {:.1} s",
        election.spec.name,
        election.ids.len(),
        if election.kept.is_some() { " kept" } else { "" },
        split.unwrap_or_default(),
        s.asked.seed,
        s.steps,
        s.deepest,
        s.words(),
        s.elapsed.as_secs_f64()
    );
    let violation = s.violation.as_ref();
    pb::CheckVerdict {
        states: s.states as u64,
        depth: s.deepest as u32,
        most_messages: s.most_messages,
        bound: if election.kept.is_some() {
            0
        } else {
            finite_bound(ElectionModel::new(election.clone(), fifo).bound()).unwrap_or(0)
        },
        elapsed_s: s.elapsed.as_secs_f64(),
        counterexamples: violation.map(|v| counterexample(election, fifo, &v.counterexample)).into_iter().collect(),
        summary,
        stopped_by: stopped_by.into(),
        walks: Some(pb::CheckWalks {
            walks: s.walks,
            asked: s.asked.walks,
            depth: s.asked.depth as u32,
            seed: s.asked.seed,
            steps: s.steps,
            states: s.states as u64,
            deepest: s.deepest as u32,
            quiescent: s.quiescent,
            violated: violation.is_some(),
            violation_walk: violation.map_or(0, |v| v.walk + 1),
            violation_moves: violation.map_or(0, |v| v.moves as u32),
            violation_seed: violation.map_or(0, |v| v.seed),
            verdict: s.words(),
        }),
        ..Default::default()
    }
}

/// The verdict of `report`, a check of `election`.
fn verdict(election: &Election, fifo: bool, report: &Report) -> pb::CheckVerdict {
    let counterexamples: Vec<pb::CheckCounterexample> =
        report.counterexamples.iter().map(|c| counterexample(election, fifo, c)).collect();
    // The setting that cut the check short, and what that means for the verdict.
    let (stopped_by, cut) = match report.limit {
        None => ("", String::new()),
        Some("states") => ("max_states", "max_states, the state budget".to_string()),
        Some("time") => (
            "timeout_s",
            "timeout_s before max_states: cut by time, so how far it got depended on the machine's load; \
             ask again, or allow more time"
                .to_string(),
        ),
        Some("memory") => (
            "memory_budget_mib",
            "its share of the controller's memory budget, controller.memory_budget_mib".to_string(),
        ),
        Some("stopped") => ("", "its callers going".to_string()),
        Some(other) => ("", other.to_string()),
    };
    let state = if !report.counterexamples.is_empty() {
        let broken = report.counterexamples.iter().map(|c| c.property).collect::<Vec<_>>().join("; ");
        if report.complete {
            format!("BROKEN: {broken}")
        } else {
            format!("BROKEN: {broken} (stopped by {cut}: other properties may break too)")
        }
    } else if report.complete {
        "holds on every schedule".into()
    } else {
        format!("holds where explored (stopped by {cut})")
    };
    let split = election.partition_side.map(|side| format!(" (split {})", split_words(side, &election.ids)));
    let links = if fifo && !election.spec.assumptions.fifo { " on FIFO links" } else { "" };
    let summary = format!(
        "{} n={}{}{}{links}: {} states, depth {}; {state} in {:.1} s",
        election.spec.name,
        election.ids.len(),
        if election.kept.is_some() { " kept" } else { "" },
        split.unwrap_or_default(),
        report.states,
        report.depth,
        report.elapsed.as_secs_f64()
    );
    pb::CheckVerdict {
        holds: report.holds(),
        complete: report.complete,
        states: report.states as u64,
        depth: report.depth as u32,
        most_messages: report.most_messages,
        bound: if election.kept.is_some() { 0 } else { finite_bound(report.bound).unwrap_or(0) },
        elapsed_s: report.elapsed.as_secs_f64(),
        counterexamples,
        summary,
        stopped_by: stopped_by.into(),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A check that does not finish within minutes: a kept repaired ring with a recovering crash,
    /// given 600 s.
    fn endless() -> pb::CheckRequest {
        pb::CheckRequest {
            algorithm: "repaired-ring".into(),
            kept: true,
            crashes: 1,
            recover: true,
            timeout_s: 600,
            ..Default::default()
        }
    }

    /// A kept check of the lease (whose nodes meet in a store, so its states never repeat) explores
    /// every schedule up to the checker's store depth and ends there: on 2 nodes without faults
    /// nothing breaks up to that depth; a kept check of a message-passing algorithm has no depth.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_lease_check_ends_at_the_store_depth() {
        let lease = pb::CheckRequest { algorithm: "lease".into(), kept: true, n: 2, ..Default::default() };
        let planned = plan(&lease).unwrap();
        assert_eq!(planned.limits.max_depth, ringleader_check::STORE_DEPTH);
        let bully = pb::CheckRequest { algorithm: "bully".into(), kept: true, n: 3, ..Default::default() };
        assert_eq!(plan(&bully).unwrap().limits.max_depth, 0);
        let v = verdict_of(planned).await;
        // Nothing broke up to the depth, where it stopped: "holds where explored", not complete.
        assert!(v.counterexamples.is_empty() && !v.complete, "{v:?}");
        assert_eq!(v.depth as usize, ringleader_check::STORE_DEPTH, "{v:?}");
        assert!(v.summary.contains("stopped by depth"), "{v:?}");
    }

    /// A split is checked alone when asked, and a bad split is refused naming `partition_side`:
    /// an id not among the ids, an id twice and every node are invalid arguments; a split without
    /// partitions, or in a one-shot check, fails its precondition; Chubby-style on 3 nodes with
    /// node 3 cut off (partition healing within 500 ms, 10 ms messages, punctual timers) holds on
    /// every schedule, in fewer states than with any split.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_split_is_checked_alone_and_bad_splits_are_refused() {
        let split = |side: Vec<u64>| pb::CheckRequest {
            algorithm: "chubby".into(),
            kept: true,
            partitions: 1,
            partition_ms: 500,
            delay_ms: 10,
            punctual_timers: true,
            partition_side: side,
            ..Default::default()
        };
        for (side, why) in [(vec![9], "not one of the ids"), (vec![2, 2], "twice"), (vec![1, 2, 3], "every node")] {
            let e = plan(&split(side)).unwrap_err();
            assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e:?}");
            assert!(e.message().starts_with("partition_side: ") && e.message().contains(why), "{e:?}");
        }
        for req in [
            pb::CheckRequest { partitions: 0, ..split(vec![3]) },
            pb::CheckRequest {
                kept: false,
                partitions: 0,
                partition_ms: 0,
                delay_ms: 0,
                punctual_timers: false,
                ..split(vec![3])
            },
        ] {
            let e = plan(&req).unwrap_err();
            assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{e:?}");
            assert!(e.message().starts_with("partition_side: "), "{e:?}");
        }
        let alone = verdict_of(plan(&split(vec![3])).unwrap()).await;
        let any = verdict_of(plan(&split(vec![])).unwrap()).await;
        assert!(alone.holds && alone.complete && any.holds && any.complete, "{alone:?} {any:?}");
        assert!(alone.states > 1000 && alone.states < any.states, "{} against {}", alone.states, any.states);
        assert!(alone.summary.starts_with("chubby n=3 kept (split {1, 2} / {3}): "), "{}", alone.summary);
    }

    /// `fifo` checks an algorithm that does not assume FIFO links on FIFO links, as the runtime
    /// delivers: ZooKeeper-style kept on 3 nodes (10 ms messages, punctual timers, a lost message)
    /// holds on every schedule in fewer states than with links in any order, and its summary says
    /// so; `fifo` with `any_order` is refused, naming `fifo`.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn fifo_links_are_checked_when_asked() {
        let zk = |fifo| pb::CheckRequest {
            algorithm: "zookeeper".into(),
            kept: true,
            losses: 1,
            delay_ms: 10,
            punctual_timers: true,
            fifo,
            ..Default::default()
        };
        let e = plan(&pb::CheckRequest { any_order: true, ..zk(true) }).unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e:?}");
        assert!(e.message().starts_with("fifo: "), "{e:?}");
        let fifo = verdict_of(plan(&zk(true)).unwrap()).await;
        let any = verdict_of(plan(&zk(false)).unwrap()).await;
        assert!(fifo.holds && fifo.complete && any.holds && any.complete, "{fifo:?} {any:?}");
        assert!(fifo.states > 1000 && fifo.states < any.states, "{} against {}", fifo.states, any.states);
        assert!(fifo.summary.starts_with("zookeeper n=3 kept on FIFO links: "), "{}", fifo.summary);
        assert!(any.summary.starts_with("zookeeper n=3 kept: "), "{}", any.summary);
    }

    /// `depth_first` explores the same states to the same verdicts: Chubby-style on 3 nodes with a
    /// crash and a lost message holds both ways in the same number of states (depth-first deeper
    /// than breadth-first's layers, 373 against 109 moves); bully with a crash
    /// and a lost message is broken both ways ("at most one leader per term"), breadth-first by a
    /// schedule no longer than depth-first's.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn depth_first_reaches_the_same_verdicts() {
        let kept = |algorithm: &str, depth_first| pb::CheckRequest {
            algorithm: algorithm.into(),
            kept: true,
            crashes: 1,
            losses: 1,
            delay_ms: 10,
            punctual_timers: true,
            depth_first,
            ..Default::default()
        };
        let bfs = verdict_of(plan(&kept("chubby", false)).unwrap()).await;
        let dfs = verdict_of(plan(&kept("chubby", true)).unwrap()).await;
        assert!(bfs.holds && dfs.holds, "{bfs:?} {dfs:?}");
        assert_eq!(dfs.states, bfs.states);
        assert!(dfs.depth > bfs.depth, "depth-first runs deeper than the layers: {} against {}", dfs.depth, bfs.depth);
        let bfs = verdict_of(plan(&kept("bully", false)).unwrap()).await;
        let dfs = verdict_of(plan(&kept("bully", true)).unwrap()).await;
        let split = |v: &pb::CheckVerdict| {
            v.counterexamples.iter().find(|c| c.property == "at most one leader per term").map(|c| c.steps.len())
        };
        let (shortest, first) = (split(&bfs).expect("broken breadth-first"), split(&dfs).expect("broken depth-first"));
        assert!(shortest <= first, "{shortest} steps breadth-first, {first} depth-first");
    }

    /// The checks of a controller of its own, set as `config` says (its budget too).
    fn checks(config: ControllerConfig) -> Checks {
        Checks::new(Budget::new(config.memory_budget_mib), &config)
    }

    /// Run `plan` to its verdict (queue and progress events skipped) on a controller of its own.
    async fn verdict_of(plan: Plan) -> pb::CheckVerdict {
        verdict_under(plan, 0).await
    }

    /// `threads` runs a check's search on that many threads (no more than the cores) with the
    /// verdict of one: Stages on 3 nodes on links that reorder, broken, gives the same states and
    /// counterexample on 1 and 2 threads; more than `MAX_THREADS` is refused naming `threads`.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn threads_give_the_verdict_of_one() {
        let stages = |threads| pb::CheckRequest {
            algorithm: "stages".into(),
            n: 3,
            any_order: true,
            threads,
            ..Default::default()
        };
        let two = plan(&stages(2)).unwrap();
        assert_eq!(two.limits.threads, 2.min(ringleader_check::cores()));
        let (one, two) = (verdict_of(plan(&stages(0)).unwrap()).await, verdict_of(two).await);
        assert!(!one.holds && !one.counterexamples.is_empty(), "{one:?}");
        assert_eq!((two.states, two.counterexamples.clone()), (one.states, one.counterexamples.clone()));
        let e = plan(&stages(MAX_THREADS + 1)).unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e:?}");
        assert!(e.message().starts_with("threads: "), "{e:?}");
    }

    /// Random walks through the API: Stages on links that reorder is broken by a walk, its
    /// verdict neither holding nor complete, its counterexample that walk's schedule and its seed
    /// given; that seed as `walk_seed` walks the same schedule first. AsFar on 3 nodes reports no
    /// violation in every walk asked, in words. The walk fields without `simulate`, `depth_first`
    /// with it and counts beyond the bounds are refused naming their field.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn random_walks_find_and_replay_a_violation() {
        let stages = |seed: u64, walks: u32| pb::CheckRequest {
            algorithm: "stages".into(),
            any_order: true,
            simulate: true,
            walks,
            walk_depth: 200,
            walk_seed: seed,
            ..Default::default()
        };
        let v = verdict_of(plan(&stages(11, 2_000)).unwrap()).await;
        let w = v.walks.clone().expect("the walks' figures");
        assert!(w.violated && !v.holds && !v.complete, "{v:?}");
        assert_eq!((w.walks, v.counterexamples.len()), (w.violation_walk, 1), "{w:?}");
        assert!(v.summary.contains(&format!("(replay: seed {})", w.violation_seed)), "{}", v.summary);
        let again = verdict_of(plan(&stages(w.violation_seed, 1)).unwrap()).await;
        assert_eq!(again.counterexamples[0].steps, v.counterexamples[0].steps);
        assert_eq!(again.walks.unwrap().violation_moves, w.violation_moves);

        let as_far = pb::CheckRequest { algorithm: "as-far".into(), simulate: true, walks: 50, ..Default::default() };
        let v = verdict_of(plan(&as_far).unwrap()).await;
        let w = v.walks.unwrap();
        assert!(!w.violated && w.walks == 50 && v.counterexamples.is_empty(), "{w:?}");
        assert!(
            w.verdict.starts_with("no violation in 50 walks of depth 1000, ")
                && w.verdict.ends_with("a sample, not a proof")
        );

        let refused = |r: pb::CheckRequest| plan(&r).unwrap_err();
        let field = |s: &Status| crate::error::field_of(s).map(str::to_string);
        let e = refused(pb::CheckRequest { algorithm: "as-far".into(), walk_seed: 3, ..Default::default() });
        assert_eq!((e.code(), field(&e).as_deref()), (tonic::Code::FailedPrecondition, Some("walk_seed")), "{e:?}");
        let e = refused(pb::CheckRequest { depth_first: true, ..as_far.clone() });
        assert_eq!(field(&e).as_deref(), Some("depth_first"), "{e:?}");
        let e = refused(pb::CheckRequest { walks: MAX_WALKS + 1, ..as_far.clone() });
        assert_eq!(field(&e).as_deref(), Some("walks"), "{e:?}");
        let e = refused(pb::CheckRequest { walk_depth: MAX_WALK_DEPTH + 1, ..as_far });
        assert_eq!(field(&e).as_deref(), Some("walk_depth"), "{e:?}");
    }

    /// The events of `rx` to the end of the stream.
    async fn events(mut rx: mpsc::Receiver<Result<pb::CheckEvent, Status>>) -> Vec<pb::check_event::Kind> {
        let mut out = Vec::new();
        while let Some(e) = rx.recv().await {
            out.extend(e.unwrap().kind);
        }
        out
    }

    /// The verdict that ends `events`.
    fn last_verdict(events: &[pb::check_event::Kind]) -> pb::CheckVerdict {
        match events.last() {
            Some(pb::check_event::Kind::Verdict(v)) => v.clone(),
            other => panic!("the stream ends with the verdict, not {other:?}"),
        }
    }

    /// Wait (at most a minute) until no check runs at `checks`.
    async fn until_idle(checks: &Checks) {
        tokio::time::timeout(Duration::from_secs(60), async {
            while checks.running() > 0 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        .expect("the check's thread ended");
    }

    /// A caller that goes away stops the check: a kept repaired ring with a recovering crash, given
    /// 600 s, ends within a minute of the stream being dropped after its first progress event.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_check_stops_when_its_caller_goes() {
        let checks = checks(ControllerConfig::default());
        let mut rx = checks.ask(plan(&endless()).unwrap()).unwrap();
        let first = rx.recv().await.unwrap().unwrap();
        assert!(matches!(first.kind, Some(pb::check_event::Kind::Queued(pb::CheckQueued { position: 0, .. }))));
        let next = rx.recv().await.unwrap().unwrap();
        assert!(matches!(next.kind, Some(pb::check_event::Kind::Progress(_))), "{next:?}");
        drop(rx);
        until_idle(&checks).await;
        assert_eq!(checks.runs(), 1);
    }

    /// A caller that keeps the stream open but does not read it does not freeze its check: a kept
    /// repaired ring with a recovering crash, given 2 s, whose stream is not read, ends by its
    /// timeout and its thread ends (within a generous minute); read then, the stream holds the
    /// start (position 0), progress and then the verdict, stopped by `timeout_s` and saying the
    /// machine's load decided how far it got; such a verdict is not cached: asked again, it runs
    /// again.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_caller_that_never_reads_does_not_freeze_its_check() {
        let checks = checks(ControllerConfig::default());
        let req = pb::CheckRequest { timeout_s: 2, ..endless() };
        let rx = checks.ask(plan(&req).unwrap()).unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        until_idle(&checks).await;
        let events = events(rx).await;
        assert!(matches!(events[0], pb::check_event::Kind::Queued(pb::CheckQueued { position: 0, .. })));
        assert!(matches!(events[1], pb::check_event::Kind::Progress(_)), "{events:?}");
        let v = last_verdict(&events);
        assert!(v.summary.contains("stopped by timeout_s before max_states: cut by time"), "{}", v.summary);
        assert_eq!((v.stopped_by.as_str(), v.cached, v.shared), ("timeout_s", false, false));
        let again = last_verdict(&events_of(&checks, &req).await);
        assert!(!again.cached && again.stopped_by == "timeout_s", "{again:?}");
        assert_eq!(checks.runs(), 2, "a verdict cut by time is not kept");
    }

    /// The events of `req` asked of `checks`, to the end.
    async fn events_of(checks: &Checks, req: &pb::CheckRequest) -> Vec<pb::check_event::Kind> {
        events(checks.ask(plan(req).unwrap()).unwrap()).await
    }

    /// Under `max_concurrent_checks = 1` and `max_queued_checks = 1`, a check asked for while one
    /// runs waits at position 1 and then runs (position 0) to its verdict once the first has
    /// ended by its timeout (2 s); a third, different check asked while the second waits is
    /// refused RESOURCE_EXHAUSTED naming `controller.max_queued_checks`.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_check_beyond_the_cap_waits_its_turn_and_the_queue_is_bounded() {
        let config = ControllerConfig { max_concurrent_checks: 1, max_queued_checks: 1, ..Default::default() };
        let checks = checks(config);
        let first = checks.ask(plan(&pb::CheckRequest { timeout_s: 2, ..endless() }).unwrap()).unwrap();
        let small = pb::CheckRequest { algorithm: "as-far".into(), ..Default::default() };
        let second = checks.ask(plan(&small).unwrap()).unwrap();
        let third = pb::CheckRequest { n: 4, ..small.clone() };
        let e = checks.ask(plan(&third).unwrap()).unwrap_err();
        assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e:?}");
        assert!(e.message().starts_with("max_queued_checks: 1 check is running and 1 waiting"), "{e:?}");
        assert!(e.message().contains("controller.max_queued_checks = 1"), "{e:?}");
        let events = events(second).await;
        let positions: Vec<u32> = events
            .iter()
            .filter_map(|k| if let pb::check_event::Kind::Queued(q) = k { Some(q.position) } else { None })
            .collect();
        assert_eq!(positions, [1, 0], "{events:?}");
        assert!(last_verdict(&events).holds);
        drop(first);
    }

    /// Identical requests share one run and its verdict is kept: three asks of the same AsFar
    /// check at once (ids given or defaulted, initiators given or defaulted) give three equal verdicts from one run,
    /// two of them `shared`; asked again afterwards it is answered from the cache (`cached`),
    /// still one run; the cache holds one verdict, its bytes reserved in the memory budget.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn identical_checks_run_once() {
        let budget = Budget::new(100);
        let config = ControllerConfig { memory_budget_mib: 100, max_concurrent_checks: 1, ..Default::default() };
        let checks = Checks::new(budget.clone(), &config);
        // Hold the one place, so the three wait together.
        let blocker = checks.ask(plan(&pb::CheckRequest { timeout_s: 1, ..endless() }).unwrap()).unwrap();
        let req = |ids: Vec<u64>| pb::CheckRequest { algorithm: "as-far".into(), n: 5, ids, ..Default::default() };
        let asks = [
            req(vec![1, 2, 3, 4, 5]),
            req(vec![]),
            pb::CheckRequest { initiators: vec![0, 1, 2, 3, 4], ..req(vec![]) },
        ];
        let streams: Vec<_> = asks.iter().map(|r| checks.ask(plan(r).unwrap()).unwrap()).collect();
        let mut verdicts = Vec::new();
        for s in streams {
            verdicts.push(last_verdict(&events(s).await));
        }
        drop(blocker);
        assert!(verdicts.iter().all(|v| v.holds && v.summary == verdicts[0].summary), "{verdicts:?}");
        assert_eq!(verdicts.iter().filter(|v| v.shared).count(), 2);
        let blocker_runs = 1;
        assert_eq!(checks.runs(), blocker_runs + 1);
        let again = last_verdict(&events_of(&checks, &asks[1]).await);
        assert!(again.cached && !again.shared && again.summary == verdicts[0].summary, "{again:?}");
        assert_eq!(checks.runs(), blocker_runs + 1);
        until_idle(&checks).await;
        let (entries, bytes) = checks.cached();
        assert_eq!(entries, 1);
        assert!(bytes > 0 && budget.reserved() == bytes, "{bytes} cached, {} reserved", budget.reserved());
    }

    /// A caller who leaves the queue leaves no work behind: with one place held by a check given
    /// 2 s, a second check's caller reads its position (1) and goes; the queue is empty again and
    /// the second check never runs.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_caller_who_goes_leaves_the_queue() {
        let checks = checks(ControllerConfig { max_concurrent_checks: 1, ..Default::default() });
        let first = checks.ask(plan(&pb::CheckRequest { timeout_s: 2, ..endless() }).unwrap()).unwrap();
        let mut second =
            checks.ask(plan(&pb::CheckRequest { algorithm: "as-far".into(), ..Default::default() }).unwrap()).unwrap();
        let queued = second.recv().await.unwrap().unwrap();
        assert!(matches!(queued.kind, Some(pb::check_event::Kind::Queued(pb::CheckQueued { position: 1, .. }))));
        assert_eq!(checks.waiting(), 1);
        drop(second);
        tokio::time::timeout(Duration::from_secs(10), async {
            while checks.waiting() > 0 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        .expect("left the queue");
        drop(first);
        until_idle(&checks).await;
        assert_eq!(checks.runs(), 1, "only the first ran");
    }

    /// The cache key is the check, not the request's spelling: ids given or defaulted, `n` given
    /// or derived, initiators of a kept check, `timeout_s`, either side of a split and `fifo` where
    /// the algorithm assumes FIFO links give equal keys; the algorithm, `n`, the order of the ids,
    /// the initiators of a one-shot check, each fault, links, `delay_ms`, `punctual_timers`,
    /// `partition_ms`, the split, `max_states` and `depth_first` each give another.
    #[test]
    fn the_cache_key_is_what_decides_the_verdict() {
        let key = |r: &pb::CheckRequest| plan(r).unwrap().key();
        let as_far = pb::CheckRequest { algorithm: "as-far".into(), ..Default::default() };
        let kept = pb::CheckRequest {
            algorithm: "chubby".into(),
            kept: true,
            partitions: 1,
            partition_side: vec![3],
            ..Default::default()
        };
        let same = [
            (as_far.clone(), pb::CheckRequest { n: 3, ids: vec![1, 2, 3], ..as_far.clone() }),
            (as_far.clone(), pb::CheckRequest { initiators: vec![0, 1, 2], timeout_s: 5, ..as_far.clone() }),
            (as_far.clone(), pb::CheckRequest { max_states: DEFAULT_MAX_STATES, ..as_far.clone() }),
            (pb::CheckRequest { algorithm: "stages".into(), ..as_far.clone() }, {
                pb::CheckRequest { algorithm: "stages".into(), fifo: true, ..as_far.clone() }
            }),
            (kept.clone(), pb::CheckRequest { partition_side: vec![1, 2], ..kept.clone() }),
            (kept.clone(), pb::CheckRequest { initiators: vec![0], timeout_s: 600, ..kept.clone() }),
        ];
        for (a, b) in &same {
            assert_eq!(key(a), key(b), "{a:?}\n{b:?}");
        }
        let other = [
            (as_far.clone(), pb::CheckRequest { algorithm: "stages".into(), ..as_far.clone() }),
            (as_far.clone(), pb::CheckRequest { n: 4, ..as_far.clone() }),
            (as_far.clone(), pb::CheckRequest { ids: vec![3, 2, 1], ..as_far.clone() }),
            (as_far.clone(), pb::CheckRequest { initiators: vec![0], ..as_far.clone() }),
            (as_far.clone(), pb::CheckRequest { fifo: true, ..as_far.clone() }),
            (as_far.clone(), pb::CheckRequest { max_states: 10, ..as_far.clone() }),
            (as_far.clone(), pb::CheckRequest { depth_first: true, ..as_far.clone() }),
            (pb::CheckRequest { algorithm: "stages".into(), ..as_far.clone() }, {
                pb::CheckRequest { algorithm: "stages".into(), any_order: true, ..as_far.clone() }
            }),
            (kept.clone(), pb::CheckRequest { crashes: 1, ..kept.clone() }),
            (kept.clone(), pb::CheckRequest { recover: true, ..kept.clone() }),
            (kept.clone(), pb::CheckRequest { losses: 1, ..kept.clone() }),
            (kept.clone(), pb::CheckRequest { duplications: 1, ..kept.clone() }),
            (kept.clone(), pb::CheckRequest { partitions: 2, ..kept.clone() }),
            (kept.clone(), pb::CheckRequest { partition_side: vec![2], ..kept.clone() }),
            (kept.clone(), pb::CheckRequest { partition_side: vec![], ..kept.clone() }),
            (kept.clone(), pb::CheckRequest { partition_ms: 500, ..kept.clone() }),
            (kept.clone(), pb::CheckRequest { delay_ms: 10, ..kept.clone() }),
            (kept.clone(), pb::CheckRequest { punctual_timers: true, ..kept.clone() }),
        ];
        for (a, b) in &other {
            assert_ne!(key(a), key(b), "{a:?}\n{b:?}");
        }
    }

    /// A check reserves its share of the memory budget until it ends, and is refused when the
    /// share does not fit: under a budget of 100 MiB and 2 checks at once, a check reserves 25 MiB
    /// (half the budget over two) and stops once the controller's resident memory has grown by
    /// that much since its admission (or passes the budget); one asking for at most 10,000 states depth-first reserves
    /// their measured 1.28 MB; with 80 MiB reserved by elections, the first is refused
    /// RESOURCE_EXHAUSTED naming `memory_budget_mib` and the second fits; run, a check gives its
    /// share back when it ends.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_check_holds_its_share_of_the_budget() {
        const MIB: u64 = 1 << 20;
        let budget = Budget::new(100);
        let config = ControllerConfig { memory_budget_mib: 100, max_concurrent_checks: 2, ..Default::default() };
        let quick = pb::CheckRequest { algorithm: "as-far".into(), ..Default::default() };
        let small = pb::CheckRequest { max_states: 10_000, depth_first: true, ..quick.clone() };
        let before = ringleader_check::resident_mib().unwrap();
        let mut p = plan(&quick).unwrap();
        let memory = reserve(&mut p, &budget, &config).unwrap();
        let after = ringleader_check::resident_mib().unwrap();
        assert_eq!(budget.reserved(), 25 * MIB);
        // Read between `before` and `after` (other tests' memory comes and goes meanwhile), and
        // no higher than the whole budget.
        let limit = p.limits.max_memory_mib;
        let read = before.min(after).saturating_sub(8)..=before.max(after) + 8;
        assert!(limit == 100 || read.contains(&(limit - 25)), "{limit}: {before}, {after}");
        drop(memory);
        assert_eq!(budget.reserved(), 0);

        let elections = budget.reserve(80 * MIB, || "elections".into()).unwrap();
        let e = reserve(&mut plan(&quick).unwrap(), &budget, &config).unwrap_err();
        assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e:?}");
        assert!(e.message().starts_with("memory_budget_mib: a check of as-far on 3 nodes is estimated"), "{e:?}");
        let check = reserve(&mut plan(&small).unwrap(), &budget, &config).unwrap();
        assert_eq!(budget.reserved(), 80 * MIB + 10_000 * DFS_BYTES_PER_STATE);
        drop((check, elections));
        assert_eq!(budget.reserved(), 0);

        let checks = Checks::new(budget.clone(), &config);
        let v = last_verdict(&events_of(&checks, &small).await);
        assert!(v.holds, "{v:?}");
        until_idle(&checks).await;
        assert_eq!(budget.reserved(), checks.cached().1, "only the cached verdict is left");
    }

    /// `plan` run to its verdict under a budget of `mib` MiB.
    async fn verdict_under(plan: Plan, mib: u64) -> pb::CheckVerdict {
        let checks = checks(ControllerConfig { memory_budget_mib: mib, ..Default::default() });
        let verdict = last_verdict(&events(checks.ask(plan).unwrap()).await);
        until_idle(&checks).await;
        verdict
    }

    /// A check stops at its share of the memory budget, and says so: under a budget of 1 MiB (a
    /// share of 512 KiB), a kept repaired ring with a recovering crash (which does not finish
    /// within minutes) ends after its first reads of memory, incomplete, its summary naming
    /// `controller.memory_budget_mib`.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_check_stops_at_its_share_of_the_memory_budget() {
        let verdict = tokio::time::timeout(Duration::from_secs(60), verdict_under(plan(&endless()).unwrap(), 1))
            .await
            .expect("ended");
        assert!(!verdict.complete && verdict.counterexamples.is_empty(), "{verdict:?}");
        assert!(verdict.states < 200_000, "{} states", verdict.states);
        assert!(verdict.summary.contains("its share of the controller's memory budget"), "{}", verdict.summary);
        assert!(verdict.summary.contains("controller.memory_budget_mib"), "{}", verdict.summary);
        assert_eq!(verdict.stopped_by, "memory_budget_mib");
    }
}
