//! The `CheckAlgorithm` RPC: one small election on every schedule
//! (`ringleader-check`), its progress streamed, stopped when the caller goes.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ringleader_check::{CheckAsk, Checked, Election, KeptCheck, Limits, Report, check_with, diagram, split_words};
use ringleader_proto::v1 as pb;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tonic::Status;

use crate::budget::{Budget, Reservation};
use crate::config::ControllerConfig;

/// The most states a check may visit (about 2 GB of fingerprints and queue at worst).
pub const MAX_STATES: u64 = 20_000_000;
/// The longest a check may run.
pub const MAX_SECONDS: u32 = 600;

/// A checked request: the election and how far to go.
#[derive(Debug)]
pub struct Plan {
    election: Election,
    limits: Limits,
}

fn invalid(field: &str, why: impl std::fmt::Display) -> Status {
    Status::invalid_argument(format!("{field}: {why}"))
}

/// The request as the checker asks it ([`CheckAsk`]: the same validation as the command line's).
fn ask(req: &pb::CheckRequest) -> CheckAsk {
    CheckAsk {
        algorithm: req.algorithm.clone(),
        n: req.n,
        ids: req.ids.clone(),
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
    }
}

/// Validate `req`, naming the field at fault (the checker's [`CheckAsk::check`], then how far this shared
/// server lets a check go). The plan is run once [`admit`]ted.
pub fn plan(req: &pb::CheckRequest) -> Result<Plan, Status> {
    let Checked { election, fifo } = ask(req).check().map_err(|r| {
        if r.precondition {
            Status::failed_precondition(r.to_string())
        } else {
            Status::invalid_argument(r.to_string())
        }
    })?;
    if req.max_states > MAX_STATES {
        return Err(invalid("max_states", format!("{} is above {MAX_STATES}", req.max_states)));
    }
    if req.timeout_s > MAX_SECONDS {
        return Err(invalid("timeout_s", format!("{} s is above {MAX_SECONDS} s", req.timeout_s)));
    }
    let max_states = if req.max_states == 0 { MAX_STATES } else { req.max_states } as usize;
    let timeout = Duration::from_secs(u64::from(if req.timeout_s == 0 { 60 } else { req.timeout_s }));
    let limits = Limits { fifo, max_states, timeout: Some(timeout), depth_first: req.depth_first, ..Limits::default() };
    Ok(Plan { election, limits })
}

/// How long a check that finds `controller.max_concurrent_checks` running
/// waits for one to end before it is refused (a check whose caller has gone
/// notices at its next progress, within 250 ms, and ends).
pub const ADMISSION_WAIT: Duration = Duration::from_secs(2);
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

/// What an admitted check holds until it ends: its place among the checks
/// running at once, and its share of the controller's memory budget.
#[derive(Debug)]
pub struct Admitted {
    plan: Plan,
    slot: OwnedSemaphorePermit,
    memory: Reservation,
}

/// The memory a check of `limits` reserves, in bytes: its states at most
/// (`max_states`) at the measured bytes per state, and no more than its
/// share of a budget of `budget_bytes` among `max_concurrent` checks
/// ([`CHECKS_SHARE_PERCENT`] of it together).
pub fn reservation_bytes(limits: &Limits, budget_bytes: u64, max_concurrent: usize) -> u64 {
    let per_state = if limits.depth_first { DFS_BYTES_PER_STATE } else { BFS_BYTES_PER_STATE };
    let share = budget_bytes / 100 * CHECKS_SHARE_PERCENT / max_concurrent.max(1) as u64;
    (limits.max_states as u64).saturating_mul(per_state).min(share)
}

/// Admit `plan` among the checks of the controller whose memory budget is
/// `budget` (`controller.memory_budget_mib`), set as in `config`: a place
/// among the `controller.max_concurrent_checks` checks running at once
/// (waiting [`ADMISSION_WAIT`] for one), then its memory
/// ([`reservation_bytes`]) reserved in the budget beside the running
/// elections and checks. Whatever does not fit is refused
/// RESOURCE_EXHAUSTED naming the setting. With a budget, the check stops
/// before the controller's resident memory has grown by its reservation
/// since it was admitted (or passes the whole budget), so the checks and
/// elections running at once stay within the budget together; the margin
/// is the memory of `ringleader_check::MEMORY_READ_STATES` states.
pub async fn admit(
    mut plan: Plan,
    slots: &Slots,
    budget: &Arc<Budget>,
    config: &ControllerConfig,
) -> Result<Admitted, Status> {
    let max = slots.max;
    let slot = match slots.take(ADMISSION_WAIT).await {
        Some(slot) => slot,
        None => {
            return Err(Status::resource_exhausted(format!(
                "max_concurrent_checks: {max} {} running, the most this controller runs at once \
                 (controller.max_concurrent_checks); try again when one has finished",
                if max == 1 { "check is" } else { "checks are" }
            )));
        }
    };
    let budget_bytes = config.memory_budget_mib.saturating_mul(1 << 20);
    let bytes = reservation_bytes(&plan.limits, budget_bytes, max);
    let memory = budget
        .reserve(bytes, || {
            let e = &plan.election;
            let kept = if e.kept.is_some() { " kept" } else { "" };
            format!("a check of {}{kept} on {} nodes", e.spec.name, e.ids.len())
        })
        .map_err(|e| Status::resource_exhausted(e.to_string()))?;
    if budget_bytes > 0 {
        let resident = ringleader_check::resident_mib().unwrap_or(0);
        plan.limits.max_memory_mib = (resident + (bytes >> 20)).min(config.memory_budget_mib);
    }
    Ok(Admitted { plan, slot, memory })
}

/// The places for checks at one controller: `controller.max_concurrent_checks`
/// of them, each held by a running check ([`Admitted`]).
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
        Status::resource_exhausted(format!(
            "max_concurrent_explores: {} {} replaying, the most this controller runs at once \
             (controller.max_concurrent_explores); try again in a moment",
            slots.max,
            if slots.max == 1 { "explore is" } else { "explores are" }
        ))
    })
}

/// The positions on one side of a split (a bit per position), from the ids
/// on that side (`partition_side`) among the election's `ids`.
fn event(kind: pb::check_event::Kind) -> pb::CheckEvent {
    pb::CheckEvent { kind: Some(kind) }
}

/// How long a verdict waits for room in a caller's stream (a caller that
/// reads takes it at once; one that does not loses it, and the stream ends).
pub const VERDICT_WAIT: Duration = Duration::from_secs(30);

/// Run `plan` on a blocking thread, sending progress and the verdict to
/// `tx`. The check never waits for its caller: progress the caller has not
/// taken when the next is due is dropped (the stream holds the latest it
/// had room for), and the verdict is handed to a task that waits at most
/// [`VERDICT_WAIT`] for room; a caller that went away stops the check. So
/// the check's own limits (`timeout_s`) end it whether or not the caller
/// reads, and its thread ends with it, giving back its place and memory.
pub fn run(admitted: Admitted, tx: mpsc::Sender<Result<pb::CheckEvent, Status>>) -> tokio::task::JoinHandle<()> {
    let stop = Arc::new(AtomicBool::new(false));
    tokio::task::spawn_blocking(move || {
        let Admitted { plan: Plan { election, limits }, slot, memory } = admitted;
        let report = check_with(election.clone(), limits, Some(&stop), |p| {
            let secs = p.elapsed.as_secs_f64();
            let progress = pb::CheckProgress {
                states: p.states as u64,
                depth: p.depth as u32,
                states_per_second: if secs > 0.0 { p.states as f64 / secs } else { 0.0 },
                elapsed_s: secs,
            };
            match tx.try_send(Ok(event(pb::check_event::Kind::Progress(progress)))) {
                Ok(()) | Err(mpsc::error::TrySendError::Full(_)) => {}
                Err(mpsc::error::TrySendError::Closed(_)) => stop.store(true, Ordering::Relaxed),
            }
        });
        trim();
        let verdict = event(pb::check_event::Kind::Verdict(verdict(&election, limits.fifo, &report)));
        // The check is over and its memory freed: the next may start before this caller reads
        // the verdict.
        drop((slot, memory));
        tokio::spawn(async move {
            let _ = tokio::time::timeout(VERDICT_WAIT, tx.send(Ok(verdict))).await;
        });
    })
}

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

/// The verdict of `report`, a check of `election`.
fn verdict(election: &Election, fifo: bool, report: &Report) -> pb::CheckVerdict {
    let counterexamples: Vec<pb::CheckCounterexample> = report
        .counterexamples
        .iter()
        .map(|c| {
            let model = ringleader_check::ElectionModel::new(election.clone(), fifo);
            pb::CheckCounterexample {
                property: c.property.to_string(),
                steps: model.words(&c.steps),
                outcome: model.outcome(&c.steps),
                error: c.error.clone().unwrap_or_default(),
                svg: diagram(election, fifo, c),
            }
        })
        .collect();
    let state = if !report.counterexamples.is_empty() {
        format!("BROKEN: {}", report.counterexamples.iter().map(|c| c.property).collect::<Vec<_>>().join("; "))
    } else if report.complete {
        "holds on every schedule".into()
    } else {
        let limit = match report.limit {
            Some("memory") => "its share of the controller's memory budget, controller.memory_budget_mib",
            Some("states") => "max_states",
            Some("time") => "timeout_s",
            Some(other) => other,
            None => "a limit",
        };
        format!("holds where explored (stopped by {limit})")
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
        bound: if election.kept.is_some() { 0 } else { report.bound },
        elapsed_s: report.elapsed.as_secs_f64(),
        counterexamples,
        summary,
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

    /// `plan` admitted alone (a controller of its own, with the default settings).
    async fn alone(plan: Plan) -> Admitted {
        admit(plan, &Slots::new(1), &Budget::new(0), &ControllerConfig::default()).await.unwrap()
    }

    /// Run `plan` to its verdict (progress events skipped), its thread ended.
    async fn verdict_of(plan: Plan) -> pb::CheckVerdict {
        verdict_under(plan, 0).await
    }

    /// A caller that goes away stops the check: a kept repaired ring with a recovering crash, given
    /// 600 s, ends within a minute of the receiver being dropped after its first progress event.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_check_stops_when_its_caller_goes() {
        let req = endless();
        let (tx, mut rx) = mpsc::channel(16);
        let thread = run(alone(plan(&req).unwrap()).await, tx);
        let first = rx.recv().await.unwrap().unwrap();
        assert!(matches!(first.kind, Some(pb::check_event::Kind::Progress(_))), "{first:?}");
        drop(rx);
        tokio::time::timeout(Duration::from_secs(60), thread).await.expect("stopped").unwrap();
    }

    /// A caller that keeps the stream open but does not read it does not freeze its check: a kept
    /// repaired ring with a recovering crash, given 2 s, whose stream holds one event and is not
    /// read, ends by its timeout and its thread ends (within a generous minute); read then, the
    /// stream holds the first progress and then the verdict, stopped by `timeout_s`.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_caller_that_never_reads_does_not_freeze_its_check() {
        let req = pb::CheckRequest { timeout_s: 2, ..endless() };
        let (tx, mut rx) = mpsc::channel(1);
        let thread = run(alone(plan(&req).unwrap()).await, tx);
        tokio::time::timeout(Duration::from_secs(60), thread).await.expect("the check ended by its timeout").unwrap();
        let first = rx.recv().await.unwrap().unwrap();
        assert!(matches!(first.kind, Some(pb::check_event::Kind::Progress(_))), "{first:?}");
        let Some(pb::check_event::Kind::Verdict(v)) = rx.recv().await.unwrap().unwrap().kind else {
            panic!("the verdict follows")
        };
        assert!(v.summary.contains("stopped by timeout_s"), "{}", v.summary);
        assert!(rx.recv().await.is_none(), "the stream ends with the verdict");
    }

    /// Under `max_concurrent_checks = 1`, a check asked for while one runs is refused
    /// RESOURCE_EXHAUSTED naming `controller.max_concurrent_checks`, and a running check whose
    /// caller does not read gives its place back at its timeout: with a kept repaired ring given
    /// 2 s and a stream of one event never read, a second check is refused, and admitted once the
    /// first's thread has ended.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_check_beyond_the_cap_is_refused_until_one_ends() {
        let (budget, config) = (Budget::new(0), ControllerConfig { max_concurrent_checks: 1, ..Default::default() });
        let slots = Slots::new(config.max_concurrent_checks);
        let first = admit(plan(&pb::CheckRequest { timeout_s: 2, ..endless() }).unwrap(), &slots, &budget, &config);
        let (tx, rx) = mpsc::channel(1);
        let thread = run(first.await.unwrap(), tx);
        let small = || plan(&pb::CheckRequest { algorithm: "as-far".into(), ..Default::default() }).unwrap();
        let e = admit(small(), &slots, &budget, &config).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e:?}");
        assert!(e.message().starts_with("max_concurrent_checks: 1 check is running"), "{e:?}");
        assert!(e.message().contains("(controller.max_concurrent_checks)"), "{e:?}");
        tokio::time::timeout(Duration::from_secs(60), thread).await.expect("the first ended by its timeout").unwrap();
        admit(small(), &slots, &budget, &config).await.expect("admitted once the first has ended");
        drop(rx);
    }

    /// A check reserves its share of the memory budget until it ends, and is refused when the
    /// share does not fit: under a budget of 100 MiB and 2 checks at once, a check reserves 25 MiB
    /// (half the budget over two) and stops once the controller's resident memory has grown by
    /// that much since its admission (or passes the budget); one asking for at most 10,000 states depth-first reserves
    /// their measured 1.28 MB; with 80 MiB reserved by elections, the first is refused
    /// RESOURCE_EXHAUSTED naming `memory_budget_mib` and the second fits; a check's thread gives
    /// its share back when it ends.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_check_holds_its_share_of_the_budget() {
        const MIB: u64 = 1 << 20;
        let budget = Budget::new(100);
        let config = ControllerConfig { memory_budget_mib: 100, max_concurrent_checks: 2, ..Default::default() };
        let slots = Slots::new(config.max_concurrent_checks);
        let quick = pb::CheckRequest { algorithm: "as-far".into(), ..Default::default() };
        let small = pb::CheckRequest { max_states: 10_000, depth_first: true, ..quick.clone() };
        let before = ringleader_check::resident_mib().unwrap();
        let check = admit(plan(&quick).unwrap(), &slots, &budget, &config).await.unwrap();
        let after = ringleader_check::resident_mib().unwrap();
        assert_eq!(budget.reserved(), 25 * MIB);
        // Read between `before` and `after` (other tests' memory comes and goes meanwhile), and
        // no higher than the whole budget.
        let limit = check.plan.limits.max_memory_mib;
        let read = before.min(after).saturating_sub(8)..=before.max(after) + 8;
        assert!(limit == 100 || read.contains(&(limit - 25)), "{limit}: {before}, {after}");
        let (tx, mut rx) = mpsc::channel(16);
        run(check, tx).await.unwrap();
        assert_eq!(budget.reserved(), 0, "given back when the check ended");
        while rx.recv().await.is_some() {}

        let elections = budget.reserve(80 * MIB, || "elections".into()).unwrap();
        let e = admit(plan(&quick).unwrap(), &slots, &budget, &config).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e:?}");
        assert!(e.message().starts_with("memory_budget_mib: a check of as-far on 3 nodes is estimated"), "{e:?}");
        let check = admit(plan(&small).unwrap(), &slots, &budget, &config).await.unwrap();
        assert_eq!(budget.reserved(), 80 * MIB + 10_000 * DFS_BYTES_PER_STATE);
        drop((check, elections));
        assert_eq!(budget.reserved(), 0);
    }

    /// `plan` admitted alone under a budget of `mib` MiB, run to its verdict.
    async fn verdict_under(plan: Plan, mib: u64) -> pb::CheckVerdict {
        let config = ControllerConfig { memory_budget_mib: mib, ..Default::default() };
        let (tx, mut rx) = mpsc::channel(16);
        let thread = run(admit(plan, &Slots::new(1), &Budget::new(mib), &config).await.unwrap(), tx);
        let verdict = loop {
            match rx.recv().await.unwrap().unwrap().kind {
                Some(pb::check_event::Kind::Verdict(v)) => break v,
                _ => continue,
            }
        };
        thread.await.unwrap();
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
    }
}
