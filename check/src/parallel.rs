//! The check on several threads ([`Limits::threads`]), with the very
//! results of one thread: the same states, explored states, depth, verdicts
//! and counterexamples, for every thread count.
//!
//! A sweep checks its elections side by side, each on one thread
//! ([`sweep_elections`]), and adds up their reports in the order one thread
//! would have: most sweeps are thousands of small elections (as-far on 6
//! nodes: 7,560 of about 575 states each), too small to share.
//!
//! One election's breadth-first check ([`check_bfs`]) shares its queue: the
//! states at its front are taken in chunks of [`CHUNK`], and each chunk is
//! *expanded* on whichever thread is free (the properties it breaks,
//! whether it is final, its successors with their fingerprints and ranks:
//! all a function of the state alone, and nearly all of a check's work);
//! the calling thread then *merges* the chunks in queue order, as one
//! thread takes the states one by one (the table of fingerprints, the log
//! of parents, the queue, the limits, the progress), expanding a chunk
//! itself whenever the next one is not ready. Since the queue is first in,
//! first out and a merge only adds at its back, the states at its front are
//! the ones one thread would take next, whatever is being merged: the
//! merge order, and so every count, schedule and verdict, is one thread's.
//! The only work spent in vain is the expansion of a state a merge then
//! skips (a kept leadership's state queued again with a later clock before
//! it is taken) or of the chunks under way when a limit ends the check.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, mpsc};
use std::time::{Duration, Instant};

use crate::{
    Counterexample, Election, ElectionModel, Limits, MEMORY_READ_STATES, PROPERTIES, Progress, Replay, Report, Seen,
    System, check, fingerprint, resident_mib, schedule,
};

/// The machine's cores, as the system tells them (1 where it does not): the
/// command line's and the controller's number of threads by default.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

/// States a thread expands at once: few enough that the merge starts soon
/// and the chunks under way hold little memory, enough that taking one
/// costs nothing beside expanding it.
pub(crate) const CHUNK: usize = 64;

/// A state queued: the state, its fingerprint, its number in the log, its depth.
type Queued = (System, u64, u32, usize);

/// What a merge needs of a queued state, found without the table of
/// fingerprints.
struct Expanded {
    fp: u64,
    id: u32,
    depth: usize,
    rank: u32,
    /// Bit `i`: the state breaks property `i`.
    broken: u32,
    is_final: bool,
    sent: u64,
    /// Its successors (none when it breaks a property, is final, or is at the
    /// depth limit): the index of the move, the state (taken when the merge
    /// queues it), its fingerprint and rank.
    next: Vec<(u32, Option<System>, u64, u32)>,
}

/// A chunk expanded, and the thread that expanded it (0: the merging one).
struct Done {
    by: usize,
    states: Vec<Expanded>,
}

/// The pure part of a check, shared by the threads.
struct Expander<'a> {
    model: &'a ElectionModel,
    clocked: bool,
    heal: bool,
    max_depth: usize,
}

impl Expander<'_> {
    fn expand(&self, (s, fp, id, depth): Queued, actions: &mut Vec<(crate::Move, System)>) -> Expanded {
        let model = self.model;
        let broken = (0..model.properties().len()).filter(|&i| !model.holds(i, &s)).fold(0u32, |b, i| b | 1 << i);
        let is_final = s.is_final();
        let mut next = Vec::new();
        if broken == 0 && !is_final && !(self.max_depth > 0 && depth >= self.max_depth) {
            model.successors(&s, actions);
            next.reserve(actions.len());
            for (i, (_, n)) in actions.drain(..).enumerate() {
                let (nfp, rank) = (fingerprint(&n, self.clocked, self.heal), model.rank(&n));
                next.push((i as u32, Some(n), nfp, rank));
            }
        }
        Expanded { fp, id, depth, rank: model.rank(&s), broken, is_final, sent: s.sent(), next }
    }

    fn expand_all(&self, chunk: Vec<Queued>, actions: &mut Vec<(crate::Move, System)>) -> Vec<Expanded> {
        chunk.into_iter().map(|q| self.expand(q, actions)).collect()
    }
}

/// The chunks between the merging thread and the others.
#[derive(Default)]
struct Board {
    /// Chunks to expand, by number, in queue order.
    todo: VecDeque<(u64, Vec<Queued>)>,
    /// Chunks expanded, by number, waiting for their merge.
    done: BTreeMap<u64, Done>,
    /// Chunks merged, by the thread that expanded them: the successors
    /// already seen, for that thread to free. (A state is freed fastest by
    /// the thread that allocated it; freed by another, the allocator takes
    /// it back through a slower path, and a check on 2 threads took twice
    /// one thread's processor time.)
    merged: Vec<Vec<Done>>,
    /// The check is over: the threads leave.
    over: bool,
}

#[derive(Default)]
struct Shared {
    board: Mutex<Board>,
    /// A chunk was put in `todo`, or the check is over.
    work: Condvar,
    /// A chunk was put in `done`.
    expanded: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Board> {
        self.board.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Helper thread `by` (from 1): expand chunks until the check is over.
    fn help(&self, by: usize, x: &Expander<'_>) {
        let mut actions = Vec::new();
        loop {
            let mut trash = Vec::new();
            let job = {
                let mut b = self.lock();
                loop {
                    std::mem::swap(&mut trash, &mut b.merged[by]);
                    if b.over || !trash.is_empty() {
                        break None;
                    }
                    if let Some(job) = b.todo.pop_front() {
                        break Some(job);
                    }
                    b = self.work.wait(b).unwrap_or_else(|e| e.into_inner());
                }
            };
            drop(trash);
            let Some((k, chunk)) = job else {
                if self.lock().over {
                    return;
                }
                continue;
            };
            let states = x.expand_all(chunk, &mut actions);
            self.lock().done.insert(k, Done { by, states });
            self.expanded.notify_one();
        }
    }

    fn end(&self) {
        self.lock().over = true;
        self.work.notify_all();
    }
}

/// The merging thread's side of a check: everything one thread's check keeps.
struct Merge {
    limits: Limits,
    subsume: bool,
    started: Instant,
    seen: Seen,
    log: Vec<(u32, u32)>,
    queue: VecDeque<Queued>,
    found: [Option<Vec<u32>>; PROPERTIES.len()],
    depth: usize,
    final_states: u64,
    most_messages: u64,
    complete: bool,
    explored: usize,
    limit: Option<&'static str>,
    last_report: Instant,
    memory_checked: usize,
    over_memory: bool,
}

impl Merge {
    /// Take the states of `chunk` in order, as one thread's check takes each
    /// state it pops; `false` once a limit ends the check.
    fn merge(
        &mut self,
        chunk: &mut [Expanded],
        cancel: Option<&AtomicBool>,
        progress: &mut impl FnMut(Progress),
    ) -> bool {
        let limits = self.limits;
        for e in chunk {
            let d = e.depth;
            if self.subsume && self.seen.get(e.fp).is_some_and(|rank| rank > e.rank) {
                continue; // it waits in the queue with a higher rank (a later clock)
            }
            self.explored += 1;
            self.depth = self.depth.max(d);
            if e.broken != 0 {
                for (i, slot) in self.found.iter_mut().enumerate() {
                    if e.broken >> i & 1 == 1 && slot.is_none() {
                        *slot = Some(schedule(&self.log, e.id));
                    }
                }
                continue;
            }
            if e.is_final {
                self.final_states += 1;
                self.most_messages = self.most_messages.max(e.sent);
                continue;
            }
            let seen = self.seen.len();
            if seen >= self.memory_checked + MEMORY_READ_STATES {
                self.memory_checked = seen;
                let growth_mib = self.seen.growth_bytes() >> 20;
                self.over_memory = limits.max_memory_mib > 0
                    && resident_mib().is_some_and(|m| m.saturating_add(growth_mib) > limits.max_memory_mib);
            }
            let at_depth = limits.max_depth > 0 && d >= limits.max_depth;
            let limited = [
                (limits.max_states > 0 && seen >= limits.max_states, "states"),
                (at_depth, "depth"),
                (limits.timeout.is_some_and(|t| self.started.elapsed() >= t), "time"),
                (self.over_memory, "memory"),
                (self.log.len() >= u32::MAX as usize / 2, "log"),
                (cancel.is_some_and(|c| c.load(Ordering::Relaxed)), "stopped"),
            ]
            .into_iter()
            .find_map(|(hit, what)| hit.then_some(what));
            if let Some(what) = limited {
                self.complete = false;
                self.limit.get_or_insert(what);
                if at_depth {
                    continue;
                }
                return false;
            }
            for (i, next, nfp, rank) in &mut e.next {
                if self.seen.insert(*nfp, *rank, self.subsume)
                    && let Some(next) = next.take()
                {
                    self.queue.push_back((next, *nfp, self.log.len() as u32, d + 1));
                    self.log.push((e.id, *i));
                }
            }
            if self.last_report.elapsed() >= Duration::from_millis(250) {
                self.last_report = Instant::now();
                progress(Progress { states: self.seen.len(), depth: self.depth, elapsed: self.started.elapsed() });
            }
        }
        true
    }

    /// The next chunk from the front of the queue, if any state waits.
    fn take(&mut self) -> Option<Vec<Queued>> {
        let k = self.queue.len().min(CHUNK);
        (k > 0).then(|| self.queue.drain(..k).collect())
    }
}

/// One election's breadth-first check on `limits.threads` threads (at
/// least 2), with the results of [`crate::check_with`] on one.
pub(crate) fn check_bfs(
    model: &ElectionModel,
    limits: Limits,
    cancel: Option<&AtomicBool>,
    mut progress: impl FnMut(Progress),
) -> Report {
    let started = Instant::now();
    let subsume = model.is_kept() && limits.subsume;
    let heal = !model.ranks_partitions();
    let x = Expander { model, clocked: !subsume, heal, max_depth: limits.max_depth };
    let init = model.initial();
    let root = fingerprint(&init, !subsume, heal);
    let mut seen = Seen::new();
    seen.insert(root, model.rank(&init), false);
    let mut m = Merge {
        limits,
        subsume,
        started,
        seen,
        log: vec![(u32::MAX, u32::MAX)],
        queue: VecDeque::from([(init, root, 0, 0)]),
        found: Default::default(),
        depth: 0,
        final_states: 0,
        most_messages: 0,
        complete: true,
        explored: 0,
        limit: None,
        last_report: Instant::now(),
        memory_checked: 0,
        over_memory: false,
    };
    let shared = Shared::default();
    shared.lock().merged = (0..limits.threads).map(|_| Vec::new()).collect();
    // Chunks handed out ahead of the merge: enough to keep every thread busy.
    let ahead = 4 * limits.threads as u64;
    std::thread::scope(|scope| {
        for by in 1..limits.threads {
            let (shared, x) = (&shared, &x);
            scope.spawn(move || shared.help(by, x));
        }
        let mut actions = Vec::new();
        let (mut handed, mut merged) = (0u64, 0u64);
        loop {
            let mut fresh = Vec::new();
            while handed - merged < ahead
                && let Some(chunk) = m.take()
            {
                fresh.push((handed, chunk));
                handed += 1;
            }
            if handed == merged {
                break; // nothing queued, nothing under way: every state is explored
            }
            let ready = {
                let mut b = shared.lock();
                if !fresh.is_empty() {
                    b.todo.extend(fresh);
                    shared.work.notify_all();
                }
                loop {
                    if let Some(out) = b.done.remove(&merged) {
                        break out;
                    }
                    if let Some((k, chunk)) = b.todo.pop_front() {
                        // Nothing to merge yet: expand the next chunk here.
                        drop(b);
                        let states = x.expand_all(chunk, &mut actions);
                        b = shared.lock();
                        b.done.insert(k, Done { by: 0, states });
                        continue;
                    }
                    b = shared.expanded.wait(b).unwrap_or_else(|e| e.into_inner());
                }
            };
            merged += 1;
            let mut ready = ready;
            let go_on = m.merge(&mut ready.states, cancel, &mut progress);
            if ready.by > 0 {
                shared.lock().merged[ready.by].push(ready);
                shared.work.notify_all();
            }
            if !go_on {
                break;
            }
        }
        shared.end();
    });
    progress(Progress { states: m.seen.len(), depth: m.depth, elapsed: started.elapsed() });
    let properties = model.properties();
    let mut counterexamples: Vec<Counterexample> = m
        .found
        .iter()
        .enumerate()
        .filter_map(|(i, path)| path.as_ref().map(|path| model.replay(properties[i], path)))
        .collect();
    counterexamples.sort_by_key(|c| c.steps.len());
    match model.symmetric_within(&m.limits, started, cancel) {
        Ok(Some(symmetric)) => {
            counterexamples.retain(|c| c.property != symmetric.property);
            counterexamples.insert(0, symmetric);
        }
        Ok(None) => {}
        Err(what) => {
            m.complete = false;
            m.limit.get_or_insert(what);
        }
    }
    Report {
        explored: m.explored,
        states: m.seen.len(),
        depth: m.depth,
        final_states: m.final_states,
        most_messages: m.most_messages,
        bound: model.bound(),
        complete: m.complete,
        limit: m.limit,
        counterexamples,
        elapsed: started.elapsed(),
    }
}

/// Check `elections` on `threads` threads, each election on one, telling
/// `each` every election with its report in the order given, as they end.
pub(crate) fn sweep_elections(
    elections: Vec<Election>,
    limits: Limits,
    threads: usize,
    mut each: impl FnMut(&Election, Report),
) {
    let one = Limits { threads: 1, ..limits };
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, Report)>();
    let elections = &elections;
    std::thread::scope(|scope| {
        for _ in 0..threads.min(elections.len()) {
            let (tx, next) = (tx.clone(), &next);
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(e) = elections.get(i) else { return };
                    if tx.send((i, check(e.clone(), one))).is_err() {
                        return;
                    }
                }
            });
        }
        drop(tx);
        // Reports come as their checks end; each is told in the order given.
        let mut waiting = BTreeMap::new();
        let mut told = 0;
        for (i, r) in rx {
            waiting.insert(i, r);
            while let Some(r) = waiting.remove(&told) {
                each(&elections[told], r);
                told += 1;
            }
        }
    });
}
