//! # Every schedule, not a sample
//!
//! An exhaustive checker of one election: every order in which the network
//! may deliver the messages in flight (first in, first out on each link, or
//! in any order where the algorithm does not assume FIFO links), every order
//! in which the initiators wake (each before any message reaches it: a node a
//! message reaches first is woken by it, so it is no initiator, and the
//! algorithms' claims about initiators assume this), every firing of the
//! timers the nodes set (time in ticks of the longest delay, see
//! [`ElectionModel`], "Time"), and, within a budget ([`Faults`]),
//! crashes, recoveries, lost and duplicated messages and partitions; explored
//! state by state, breadth-first. Each node is the very state machine the
//! gRPC runtime and the simulator run, inside the same node shell
//! (`ringleader_core::shell::Shell`: decide once, counters, port checks,
//! timers), one-shot or keeping a leader behind the real heartbeat detector
//! ([`Election::kept`]), so a schedule found here is one the real system can
//! take.
//!
//! A state is every node's state machine and shell, the messages in flight on
//! each directed link, the timers pending, the initiators not started yet,
//! the faults so far and the messages sent so far; states are deduplicated by
//! a 64-bit fingerprint of their hash, and a schedule is rebuilt from each
//! state's parent and step by replaying it. (Why not the stateright crate,
//! the anchor: see docs/checking.md.) What is checked, at every state, is
//! [`PROPERTIES`] for one-shot elections (no node errs, one leader, agreement,
//! the expected winner, the bound, and no deadlock at a final state) and
//! [`KEPT_PROPERTIES`] for kept leaderships (one leader per term over the
//! whole run, agreement per term, no lease overlap for Chubby-style, and one
//! agreed leader from the convergence bound after the last fault on).
//!
//! Kept leaderships explore [`Move`]s: a step after the quiet heartbeats its
//! node takes in first (heartbeats that change nothing the properties read
//! arrive just before their receiver's next step, not at every point
//! between; [`ElectionModel`], "Quiet heartbeats"), perhaps ending in a loss
//! or crash at its earliest ("Faults at their earliest"): partial-order
//! reductions that see the same situations through fewer states
//! ([`Limits::reduce`]). Their states are told apart without the ticks since
//! the last fault, and explored again only when they come back later
//! ([`Limits::subsume`]).
//!
//! Breadth-first search finds the shortest schedule (in moves) that breaks a property
//! ([`Counterexample`]); a state that breaks one is not explored further, so
//! each other property reported is broken by the shortest schedule that does
//! not break another first. Where every node starts in the same state (the
//! same id) on a ring a rotation maps onto itself, the symmetric execution
//! stands for the property it breaks instead, with its rounds in words
//! ([`ElectionModel::symmetric`], [`Counterexample::rounds`]): Angluin's
//! impossibility, watched. The largest message count over every schedule is
//! reported beside the bound. Limits on states, depth, time and memory, and a
//! cancel flag, end a check early, and say so ([`Report::complete`]);
//! progress is reported as it goes ([`Progress`]). A counterexample replays
//! on a second driver (`ringleader_core::schedule::replay`) and draws as a
//! space-time diagram ([`diagram`]). A small election's schedule can also
//! be chosen by hand, one step at a time ([`explore`]).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use ringleader_core::algo::detector::DetectorConfig;
use ringleader_core::algo::{Decision, Leadership, Rule};
use ringleader_core::spec::AlgorithmSpec;
use ringleader_core::topology::{Topology, TopologyKind};

mod explore;
mod model;
mod parallel;
mod request;
mod walk;
mod watch;

pub use explore::{
    Exploration, MAX_EXPLORE_N, MAX_PATH, NodeNow, PropertyNow, explore, explore_model, path_of, path_of_words,
};
pub use parallel::cores;
pub use request::{CheckAsk, Checked, MAX_DELAY_MS, MAX_FAULTS, MAX_N, MAX_PARTITION_MS, Refusal};
pub use walk::{Sampled, Violation, WalkProgress, Walks, simulate, walk_seed};
pub use watch::{Verdict, Watched, watch};

pub use model::{
    Clock, DEFAULT_DELAY_MS, ENDS, Election, ElectionModel, Faults, KEPT_PROPERTIES, MAX_ROUNDS, Move, Observation,
    PROPERTIES, Step, System,
};

/// How far a check may go.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Links deliver first in, first out (`true`), or in any order.
    pub fifo: bool,
    /// Stop after about this many states (0: no limit).
    pub max_states: usize,
    /// Explore no deeper than this many steps (0: no limit).
    pub max_depth: usize,
    /// Stop after this long.
    pub timeout: Option<Duration>,
    /// Stop before the process's resident memory passes this many MiB (0: no
    /// limit; read from `/proc/self/statm` where there is one, every
    /// [`MEMORY_READ_STATES`] new states).
    pub max_memory_mib: u64,
    /// Explore depth-first: the same states and verdicts, a smaller queue
    /// of states waiting to be explored, but a counterexample need not be
    /// the shortest.
    pub depth_first: bool,
    /// Kept leaderships on links in any order: deliver quiet heartbeats only
    /// just before their receiver's steps ([`ElectionModel`], "Quiet
    /// heartbeats"); the same verdicts, far fewer states. On by default.
    pub reduce: bool,
    /// Sweeps on a complete network: one arrangement of the ids (1..=n in
    /// position order) per set of initiators, not all n! of them, since
    /// every other is the same election with the positions renamed (the
    /// test `on_a_complete_network_every_arrangement_is_a_renaming` measures
    /// it for every such algorithm of the catalogue). An algorithm whose
    /// port order matters (`Extras::port_order_matters`) runs every
    /// arrangement all the same. Off by default.
    pub symmetric: bool,
    /// Kept leaderships: tell states apart without the ticks since the last
    /// fault, and explore a state again only when it comes back with more of
    /// them than it was explored with (one explored later stands for any
    /// earlier: the convergence property asks more of it, and nothing else
    /// reads the clock). The same verdicts; far fewer states. On by default.
    pub subsume: bool,
    /// Threads a check runs on (0 or 1: the calling thread alone). A sweep
    /// checks that many elections at once, each on one; a single
    /// breadth-first check expands that many states at once and takes them
    /// in the order one thread would, so every count, verdict and
    /// counterexample is the same for every number of threads (see the
    /// `parallel` module). Depth-first runs on one. 1 by default.
    pub threads: usize,
}

impl Limits {
    /// FIFO links, no bound but time and memory left unset, every reduction on: [`Limits::default`].
    pub const DEFAULT: Limits = Limits {
        fifo: true,
        max_states: 0,
        max_depth: 0,
        timeout: None,
        max_memory_mib: 0,
        depth_first: false,
        reduce: true,
        symmetric: false,
        subsume: true,
        threads: 1,
    };
}

impl Default for Limits {
    /// [`Limits::DEFAULT`].
    fn default() -> Self {
        Limits::DEFAULT
    }
}

/// A split of the nodes whose ids are `ids` (in position order) in words:
/// the ids on each side, the side of position 0 first, e.g. `{1, 4} / {2, 3}`
/// for the side of positions 1 and 2 (either side names the split, see
/// [`Election::partition_side`]).
pub fn split_words(side: u32, ids: &[u64]) -> String {
    let all = 1u32.checked_shl(ids.len() as u32).map_or(u32::MAX, |b| b - 1);
    let first = if side & 1 == 1 { side & all } else { !side & all };
    let named = |mask: u32| {
        let on: Vec<String> =
            ids.iter().enumerate().filter(|&(p, _)| mask >> p & 1 == 1).map(|(_, id)| id.to_string()).collect();
        on.join(", ")
    };
    format!("{{{}}} / {{{}}}", named(first), named(!first & all))
}

/// A check reads the process's resident memory ([`resident_mib`], a few
/// microseconds) each time it has found this many new states, and stops
/// once that memory plus the next growth of its table of fingerprints
/// (half again its size, allocated at once) passes
/// [`Limits::max_memory_mib`]; so it passes the limit by at most the memory
/// of this many states (and the successors of one).
pub const MEMORY_READ_STATES: usize = 4_096;

/// The process's resident memory in MiB, where the system tells it.
pub fn resident_mib() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096 / (1 << 20))
}

/// A schedule that breaks a property: the steps from the initial state, the
/// shortest such (breadth-first).
#[derive(Clone, Debug)]
pub struct Counterexample {
    /// The property broken.
    pub property: &'static str,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// Each position's decision at the end.
    pub decisions: Vec<Option<Decision>>,
    /// Each position's kept-leadership belief at the end (`None`: none, or
    /// crashed).
    pub beliefs: Vec<Option<Leadership>>,
    /// What went wrong at the end, if a node erred.
    pub error: Option<String>,
    /// The symmetric execution in words, a round per line and how it ends
    /// ([`ElectionModel::symmetric`]); empty for any other schedule.
    pub rounds: Vec<String>,
}

/// What a check found.
#[derive(Clone, Debug)]
pub struct Report {
    /// Distinct states visited (for a kept leadership, told apart without
    /// their clock: [`Limits::subsume`]).
    pub states: usize,
    /// States explored: [`Report::states`], plus each exploration again of a
    /// kept leadership's state that came back with a later clock.
    pub explored: usize,
    /// The longest schedule explored, in steps.
    pub depth: usize,
    /// Final states reached (finished elections, one per distinct outcome
    /// state).
    pub final_states: u64,
    /// The most messages any schedule sent.
    pub most_messages: u64,
    /// The algorithm's bound for this election.
    pub bound: u64,
    /// Every state was explored (no limit cut the check short).
    pub complete: bool,
    /// The limit that cut the check short, if one did: "states", "depth",
    /// "time", "memory", "log" (breadth-first: more states queued than a schedule can
    /// name) or "stopped" (the caller stopped it).
    pub limit: Option<&'static str>,
    /// The properties broken, each with its shortest schedule (breadth-first;
    /// depth-first, the first schedule found).
    pub counterexamples: Vec<Counterexample>,
    /// How long the check took.
    pub elapsed: Duration,
}

impl Report {
    /// No property broken, and every state explored.
    pub fn holds(&self) -> bool {
        self.complete && self.counterexamples.is_empty()
    }
}

/// How far a check has got, as it goes.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Distinct states found so far.
    pub states: usize,
    /// The depth (steps from the start) being explored.
    pub depth: usize,
    /// Time since the check began.
    pub elapsed: Duration,
}

/// The fingerprints seen, each with the highest rank it was queued with
/// ([`ElectionModel::rank`]): open addressing with linear probing on two
/// parallel arrays, 12 bytes a slot (a `HashMap<u64, u32>` takes 17: its
/// entries are padded to 16 bytes, plus a control byte), grown by half when
/// seven eighths full. Depth-first, this table is nearly all of a check's
/// memory. (hashbrown's `HashTable` would take a packed 12-byte entry plus its
/// control byte, and doubles when it grows: up to half again as much just
/// after a growth; the probing here is a dozen lines.)
struct Seen {
    keys: Vec<u64>,
    ranks: Vec<u32>,
    len: usize,
}

impl Seen {
    /// The empty slot's key; a fingerprint equal to it is stored as
    /// [`Self::ZERO`] (one more fingerprint collision, of probability 2^-64).
    const EMPTY: u64 = 0;
    const ZERO: u64 = 0x9e37_79b9_7f4a_7c15;

    fn new() -> Self {
        Seen { keys: vec![Self::EMPTY; 1024], ranks: vec![0; 1024], len: 0 }
    }

    fn len(&self) -> usize {
        self.len
    }

    fn key(fp: u64) -> u64 {
        if fp == Self::EMPTY { Self::ZERO } else { fp }
    }

    /// The slot of `key`, or the empty slot where it would go.
    fn slot(&self, key: u64) -> usize {
        let cap = self.keys.len();
        // Fingerprints are uniform: their high bits pick the home slot.
        let mut i = ((u128::from(key) * cap as u128) >> 64) as usize;
        while self.keys[i] != key && self.keys[i] != Self::EMPTY {
            i = if i + 1 == cap { 0 } else { i + 1 };
        }
        i
    }

    /// The rank `fp` was last queued with, if it was.
    fn get(&self, fp: u64) -> Option<u32> {
        let key = Self::key(fp);
        let i = self.slot(key);
        (self.keys[i] == key).then(|| self.ranks[i])
    }

    /// Record `fp` queued with `rank`: `true` if it is new, or (`raise`) if
    /// it comes back with a higher rank than it had (which it now has).
    fn insert(&mut self, fp: u64, rank: u32, raise: bool) -> bool {
        if (self.len + 1) * 8 > self.keys.len() * 7 {
            self.grow();
        }
        let key = Self::key(fp);
        let i = self.slot(key);
        if self.keys[i] == Self::EMPTY {
            (self.keys[i], self.ranks[i], self.len) = (key, rank, self.len + 1);
            true
        } else if raise && rank > self.ranks[i] {
            self.ranks[i] = rank;
            true
        } else {
            false
        }
    }

    /// The bytes the next growth allocates (the old arrays are freed only
    /// once every key has moved, so memory peaks at both).
    fn growth_bytes(&self) -> u64 {
        let cap = self.keys.len() + self.keys.len() / 2;
        (cap * (size_of::<u64>() + size_of::<u32>())) as u64
    }

    fn grow(&mut self) {
        let cap = self.keys.len() + self.keys.len() / 2;
        let keys = std::mem::replace(&mut self.keys, vec![Self::EMPTY; cap]);
        let ranks = std::mem::replace(&mut self.ranks, vec![0; cap]);
        for (key, rank) in keys.into_iter().zip(ranks).filter(|&(key, _)| key != Self::EMPTY) {
            let i = self.slot(key);
            (self.keys[i], self.ranks[i]) = (key, rank);
        }
    }
}

/// A state's 64-bit fingerprint: foldhash's quality hasher with a fixed
/// seed (the same state has the same fingerprint in every run); with its
/// timing ([`System::timing`]: the whole state), without its clock
/// (`heal`: the ticks its partition has left to heal told apart), or without
/// either.
fn fingerprint(s: &System, clocked: bool, heal: bool) -> u64 {
    use std::hash::BuildHasher;
    let hasher = foldhash::quality::FixedState::with_seed(0x5ca1_ab1e);
    match (clocked, heal) {
        (true, _) => hasher.hash_one((s, s.timing())),
        (false, true) => hasher.hash_one((s, s.timing().1)),
        (false, false) => hasher.hash_one(s),
    }
}

/// Check `election` on every schedule within `limits`, breadth-first (or
/// depth-first, [`Limits::depth_first`]).
pub fn check(election: Election, limits: Limits) -> Report {
    check_with(election, limits, None, |_| {})
}

/// The first limit a breadth- or depth-first check has reached with `states`
/// seen, at depth `d`, `log_len` states logged: its name in the report, or none.
fn limit_hit(
    limits: &Limits,
    states: usize,
    d: usize,
    started: Instant,
    over_memory: bool,
    log_len: usize,
    cancel: Option<&AtomicBool>,
) -> Option<&'static str> {
    [
        (limits.max_states > 0 && states >= limits.max_states, "states"),
        (limits.max_depth > 0 && d >= limits.max_depth, "depth"),
        (limits.timeout.is_some_and(|t| started.elapsed() >= t), "time"),
        (over_memory, "memory"),
        (log_len >= u32::MAX as usize / 2, "log"),
        (cancel.is_some_and(|c| c.load(Ordering::Relaxed)), "stopped"),
    ]
    .into_iter()
    .find_map(|(hit, what)| hit.then_some(what))
}

/// [`check`], stopped early when `cancel` is set, telling `progress` how far
/// it has got about four times a second.
pub fn check_with(
    election: Election,
    limits: Limits,
    cancel: Option<&AtomicBool>,
    mut progress: impl FnMut(Progress),
) -> Report {
    let started = Instant::now();
    let model = ElectionModel::new(election, limits.fifo).with_reduction(limits.reduce);
    if limits.threads > 1 && !limits.depth_first {
        return parallel::check_bfs(&model, limits, cancel, progress);
    }
    let init = model.initial();
    // A kept leadership's states are told apart without their clock, and one
    // seen with a clock at least as late stands for it (see "The clock" in
    // docs/checking.md); a state is explored again when it comes back later.
    let subsume = model.is_kept() && limits.subsume;
    let heal = !model.ranks_partitions();
    let key = |s: &System| fingerprint(s, !subsume, heal);
    // Each state seen, by fingerprint: the highest rank (the latest clock) it was queued with.
    let mut seen = Seen::new();
    // Breadth-first, each state queued, by number: its parent's number and
    // the index of the move that led to it (a state queued again with a
    // later clock gets a new number, so a schedule rebuilt from here is the
    // one explored). Depth-first needs none: the schedule to the state
    // explored is `path`, the index of each move from the start (every
    // state waiting on the stack at depth d is a successor of the state
    // last explored at depth d - 1).
    let mut log: Vec<(u32, u32)> = Vec::new();
    let mut path: Vec<u32> = Vec::new();
    let root = key(&init);
    seen.insert(root, model.rank(&init), false);
    // A queued state: the state, its fingerprint, its number in the log
    // (breadth-first) or the index of the move that led to it (depth-first),
    // and its depth.
    let mut queue = VecDeque::from([(init, root, u32::MAX, 0usize)]);
    if !limits.depth_first {
        log.push((u32::MAX, u32::MAX));
        queue[0].2 = 0;
    }
    let properties = model.properties();
    let mut found: [Option<Vec<u32>>; PROPERTIES.len()] = Default::default();
    let (mut depth, mut final_states, mut most_messages) = (0usize, 0u64, 0u64);
    let (mut complete, mut explored, mut limit) = (true, 0usize, None);
    let mut actions = Vec::new();
    let mut last_report = Instant::now();
    let (mut memory_checked, mut over_memory) = (0usize, false);
    let next =
        |q: &mut VecDeque<(System, u64, u32, usize)>| if limits.depth_first { q.pop_back() } else { q.pop_front() };
    while let Some((s, fp, id, d)) = next(&mut queue) {
        if subsume && seen.get(fp).is_some_and(|rank| rank > model.rank(&s)) {
            continue; // it waits in the queue with a higher rank (a later clock)
        }
        if limits.depth_first && d > 0 {
            path.truncate(d - 1);
            path.push(id);
        }
        explored += 1;
        depth = depth.max(d);
        let mut broken = false;
        for (i, slot) in found.iter_mut().enumerate().take(properties.len()) {
            if !model.holds(i, &s) {
                broken = true;
                if slot.is_none() {
                    *slot = Some(if limits.depth_first { path.clone() } else { schedule(&log, id) });
                }
            }
        }
        if broken {
            continue;
        }
        if s.is_final() {
            final_states += 1;
            most_messages = most_messages.max(s.sent());
            continue;
        }
        if seen.len() >= memory_checked + MEMORY_READ_STATES {
            memory_checked = seen.len();
            // The table's next growth counts now: it comes in one piece, between two reads.
            let growth_mib = seen.growth_bytes() >> 20;
            over_memory = limits.max_memory_mib > 0
                && resident_mib().is_some_and(|m| m.saturating_add(growth_mib) > limits.max_memory_mib);
        }
        if let Some(what) = limit_hit(&limits, seen.len(), d, started, over_memory, log.len(), cancel) {
            complete = false;
            limit.get_or_insert(what);
            if limits.max_depth > 0 && d >= limits.max_depth {
                continue;
            }
            break;
        }
        model.successors(&s, &mut actions);
        for (i, (_, next)) in actions.drain(..).enumerate() {
            let (rank, nfp) = (model.rank(&next), key(&next));
            if seen.insert(nfp, rank, subsume) {
                if limits.depth_first {
                    queue.push_back((next, nfp, i as u32, d + 1));
                } else {
                    queue.push_back((next, nfp, log.len() as u32, d + 1));
                    log.push((id, i as u32));
                }
            }
        }
        if last_report.elapsed() >= Duration::from_millis(250) {
            last_report = Instant::now();
            progress(Progress { states: seen.len(), depth, elapsed: started.elapsed() });
        }
    }
    progress(Progress { states: seen.len(), depth, elapsed: started.elapsed() });
    let mut counterexamples: Vec<Counterexample> = found
        .iter()
        .enumerate()
        .filter_map(|(i, path)| path.as_ref().map(|path| model.replay(properties[i], path)))
        .collect();
    counterexamples.sort_by_key(|c| c.steps.len());
    // Every node alike on a ring that looks the same from each: the symmetric execution stands for the
    // property it breaks, first (it is the argument of the impossibility, not the shortest schedule).
    // It runs within the check's time, memory and cancel, and one cut short counts as the check's limit.
    match model.symmetric_within(&limits, started, cancel) {
        Ok(Some(symmetric)) => {
            counterexamples.retain(|c| c.property != symmetric.property);
            counterexamples.insert(0, symmetric);
        }
        Ok(None) => {}
        Err(what) => {
            complete = false;
            limit.get_or_insert(what);
        }
    }
    Report {
        explored,
        states: seen.len(),
        depth,
        final_states,
        most_messages,
        bound: model.bound(),
        complete,
        limit,
        counterexamples,
        elapsed: started.elapsed(),
    }
}

/// A counterexample of `election` (checked with links FIFO or not, `fifo`) as
/// a space-time diagram (SVG): a line per node labelled with its id, an
/// arrow per message from the step that sent it to the step that delivered
/// it (lost ones end in a cross); time is the step number.
pub fn diagram(election: &Election, fifo: bool, c: &Counterexample) -> String {
    let model = ElectionModel::new(election.clone(), fifo);
    let (arrows, marks, outages, flying) = model.arrows(&c.steps);
    let states = model.states(&c.steps);
    let in_flight = if flying > 0 { format!(", {flying} still in flight") } else { String::new() };
    let d = ringleader_core::diagram::Diagram {
        title: format!("{}: \"{}\" broken after {} steps{in_flight}", election.spec.name, c.property, c.steps.len()),
        nodes: election.ids.iter().zip(model.outcome(&c.steps)).map(|(id, end)| format!("id {id}: {end}")).collect(),
        ids: &election.ids,
        arrows: &arrows,
        states: &states,
        leader: None,
        time_unit: "step",
        marks: &marks,
        outages: &outages,
        ring: election.topology.kind().is_ring(),
        labels: true,
        // Steps are evenly spaced: nothing is idle.
        axis: ringleader_core::diagram::Axis::Time,
        ..Default::default()
    };
    ringleader_core::diagram::svg(&d)
}

/// The schedule to the state queued as number `id` of a breadth-first
/// `log`: the index of each move from the start.
fn schedule(log: &[(u32, u32)], mut id: u32) -> Vec<u32> {
    let mut indices = Vec::new();
    while let Some(&(parent, index)) = log.get(id as usize) {
        if index == u32::MAX {
            break;
        }
        indices.push(index);
        id = parent;
    }
    indices.reverse();
    indices
}

/// Rebuilding a counterexample from the moves of its schedule.
trait Replay {
    fn replay(&self, property: &'static str, indices: &[u32]) -> Counterexample;
}

impl Replay for ElectionModel {
    /// The schedule that takes the move of each index in turn (an index into
    /// [`ElectionModel::successors`]), replayed step by step. A built-in
    /// algorithm's schedule always replays; a program's may not, if its
    /// process answered a step differently the second time (a step cut off
    /// by its time limit once): the replay then stops where it parted, and
    /// the error says so.
    fn replay(&self, property: &'static str, indices: &[u32]) -> Counterexample {
        let mut s = self.initial();
        let mut steps = Vec::with_capacity(indices.len());
        let mut actions = Vec::new();
        let mut parted = false;
        'moves: for &i in indices {
            actions.clear();
            self.successors(&s, &mut actions);
            let Some(&(mv, _)) = actions.get(i as usize) else {
                parted = true;
                break;
            };
            for step in self.expand(&s, mv) {
                let Some(next) = self.next_state(&s, step) else {
                    parted = true;
                    break 'moves;
                };
                steps.push(step);
                s = next;
            }
        }
        let error = match (s.error(), parted) {
            (Some(e), _) => Some(e.to_string()),
            (None, true) => Some(format!(
                "the schedule found did not replay after {} steps: a step went otherwise the second time",
                steps.len()
            )),
            (None, false) => None,
        };
        Counterexample { property, steps, decisions: s.decisions(), beliefs: s.beliefs(), error, rounds: Vec::new() }
    }
}

/// What every election of one algorithm at one size gave.
#[derive(Clone, Debug, Default)]
pub struct Sweep {
    /// Elections checked (id arrangements × initiator sets).
    pub elections: usize,
    /// Distinct states over all of them.
    pub states: usize,
    /// States explored over all of them ([`Report::explored`]).
    pub explored: usize,
    /// The longest schedule.
    pub depth: usize,
    /// The most messages on any schedule of any of them (one-shot).
    pub most_messages: u64,
    /// The largest bound among them (the bound depends on the initiators).
    pub bound: u64,
    /// The most messages on any schedule with every node initiating, and
    /// that election's bound: the worst case against the published one.
    pub all_initiators: (u64, u64),
    /// Every election was explored to the end.
    pub complete: bool,
    /// The elections that broke a property: (ids, initiators, counterexample).
    pub broken: Vec<(Vec<u64>, Vec<u32>, Counterexample)>,
    /// How long the sweep took.
    pub elapsed: Duration,
}

impl Sweep {
    /// Every election explored to the end, none broken.
    pub fn holds(&self) -> bool {
        self.complete && self.broken.is_empty()
    }

    /// The check of one election (`r`, its report) as a sweep of that one.
    pub fn one(election: &Election, r: Report) -> Sweep {
        let mut out = Sweep { complete: true, elapsed: r.elapsed, ..Sweep::default() };
        out.add(&election.ids, &election.initiators, election.topology.len(), r);
        out
    }

    fn add(&mut self, ids: &[u64], initiators: &[u32], n: u32, r: Report) {
        self.elections += 1;
        self.states += r.states;
        self.explored += r.explored;
        self.depth = self.depth.max(r.depth);
        self.most_messages = self.most_messages.max(r.most_messages);
        self.bound = self.bound.max(r.bound);
        if initiators.len() == n as usize {
            self.all_initiators.0 = self.all_initiators.0.max(r.most_messages);
            self.all_initiators.1 = r.bound;
        }
        self.complete &= r.complete;
        for c in r.counterexamples {
            self.broken.push((ids.to_vec(), initiators.to_vec(), c));
        }
    }
}

/// The id arrangements a sweep of `n` nodes on `topology` runs: on a ring,
/// every arrangement up to rotation (a rotation is the same election); on
/// any other overlay, every arrangement.
pub fn arrangements(topology: &Topology) -> Vec<Vec<u64>> {
    let n = topology.len();
    if topology.kind().is_ring() {
        ringleader_core::spec::ring_arrangements(n)
    } else {
        ringleader_core::spec::permutations(&(1..=u64::from(n)).collect::<Vec<_>>())
    }
}

/// Check `spec` on `n` nodes of its default overlay (built with `seed`) under
/// `rule`: every id arrangement ([`arrangements`]) × every non-empty set of
/// initiators, every schedule of each. `progress` is told each election's
/// report as it ends.
pub fn sweep(
    spec: &'static AlgorithmSpec,
    n: u32,
    seed: u64,
    rule: Rule,
    limits: Limits,
    progress: impl FnMut(&[u64], &[u32], &Report),
) -> Result<Sweep, SweepError> {
    sweep_drawn(spec, n, seed, 0, rule, limits, progress)
}

/// [`sweep`], the nodes' random bits drawn from `coins` ([`Election::seed`]).
pub fn sweep_drawn(
    spec: &'static AlgorithmSpec,
    n: u32,
    seed: u64,
    coins: u64,
    rule: Rule,
    limits: Limits,
    mut progress: impl FnMut(&[u64], &[u32], &Report),
) -> Result<Sweep, SweepError> {
    let started = Instant::now();
    let topology = Topology::build(spec.default_topology(), n, seed)?;
    let mut out = Sweep { complete: true, ..Sweep::default() };
    let renaming = topology.kind() == TopologyKind::Complete && !spec.extras.port_order_matters;
    let arrangements =
        if limits.symmetric && renaming { vec![(1..=u64::from(n)).collect()] } else { arrangements(&topology) };
    let mut elections = Vec::new();
    for ids in arrangements {
        for set in 1..(1u64 << n) {
            let initiators: Vec<u32> = (0..n).filter(|p| set >> p & 1 == 1).collect();
            elections
                .push(Election { seed: coins, ..Election::new(spec, topology.clone(), ids.clone(), initiators, rule) });
        }
    }
    let mut each = |e: &Election, r: Report| {
        progress(&e.ids, &e.initiators, &r);
        out.add(&e.ids, &e.initiators, n, r);
    };
    if limits.threads > 1 {
        parallel::sweep_elections(elections, limits, limits.threads, each);
    } else {
        for e in elections {
            let r = check(e.clone(), limits);
            each(&e, r);
        }
    }
    out.elapsed = started.elapsed();
    Ok(out)
}

/// Why a sweep could not start.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SweepError {
    /// The algorithm's overlay of that size cannot be built.
    #[error(transparent)]
    Topology(#[from] ringleader_core::topology::TopologyError),
    /// A kept check of an algorithm that has no kept mode.
    #[error("{0} has no kept mode")]
    NotKept(&'static str),
}

/// How a kept leadership is checked: behind which detector, under which
/// faults, with messages taking how long at most.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KeptCheck {
    /// The heartbeat detector's settings (the algorithm's timeouts follow them).
    pub detector: DetectorConfig,
    /// The faults a schedule may contain.
    pub faults: Faults,
    /// The longest a message takes, in milliseconds (one tick).
    pub delay_ms: u64,
    /// Timers fire on time ([`Election::punctual_timers`]).
    pub punctual_timers: bool,
    /// A partition heals within this long ([`Election::partition_ms`]).
    pub partition_ms: Option<u64>,
    /// The one split a partition makes ([`Election::partition_side`]).
    pub partition_side: Option<u32>,
    /// A node's clock off real time's rate ([`Election::clock`]).
    pub clock: Option<Clock>,
}

impl Default for KeptCheck {
    /// The loopback detector, one crash and one lost message, delays up to a period.
    fn default() -> Self {
        let detector = DetectorConfig::LOOPBACK;
        let faults = Faults { crashes: 1, losses: 1, ..Faults::NONE };
        KeptCheck {
            detector,
            faults,
            delay_ms: detector.period_ms,
            punctual_timers: false,
            partition_ms: None,
            partition_side: None,
            clock: None,
        }
    }
}

/// How deep a kept check of an algorithm whose nodes meet in a store goes when nothing else bounds
/// it (the command line without `--max-depth`, `--max-states` or `--timeout-s`; every API check):
/// its record's revision grows with every renewal, so no two states of a long enough schedule are
/// equal and the check would not end by itself. With the default faults and delays, the lease on 3
/// nodes reaches depth 20 in about 3 s and depth 30 only after 4 minutes and 50 million states
/// (docs/checking.md, "The store", has deeper rows with shorter store delays).
pub const STORE_DEPTH: usize = 20;

/// Check the kept leadership of `spec` on `n` nodes of its complete network
/// as `how` says, every node starting: one id arrangement, ids 1..=n in
/// position order, since on a complete network every other arrangement is
/// the same system with its positions renamed (the symmetry the tests
/// `kept_arrangements_of_a_complete_network_are_renamings` and
/// `on_a_complete_network_every_arrangement_is_a_renaming` check).
pub fn sweep_kept(
    spec: &'static AlgorithmSpec,
    n: u32,
    how: KeptCheck,
    limits: Limits,
    cancel: Option<&AtomicBool>,
    progress: impl FnMut(Progress),
) -> Result<Sweep, SweepError> {
    let started = Instant::now();
    if spec.kept.is_none() {
        return Err(SweepError::NotKept(spec.name));
    }
    let topology = Topology::build(spec.default_topology(), n, 7)?;
    let ids: Vec<u64> = (1..=u64::from(n)).collect();
    let election = Election {
        delay_ms: how.delay_ms,
        punctual_timers: how.punctual_timers,
        partition_ms: how.partition_ms,
        partition_side: how.partition_side,
        clock: how.clock,
        ..Election::kept(spec, topology, ids.clone(), how.detector, how.faults)
    };
    let initiators = election.initiators.clone();
    let r = check_with(election, limits, cancel, progress);
    let mut out = Sweep { complete: true, ..Sweep::default() };
    out.add(&ids, &initiators, n, r);
    out.elapsed = started.elapsed();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kept repaired ring on 3 nodes whose crash may recover: a check that does not end
    /// within minutes.
    fn endless() -> Election {
        let spec = ringleader_core::algo::catalogue::find("repaired-ring").unwrap();
        let topology = Topology::build(spec.default_topology(), 3, 7).unwrap();
        let faults = Faults { crashes: 1, recover: true, ..Faults::NONE };
        Election::kept(spec, topology, vec![1, 2, 3], DetectorConfig::LOOPBACK, faults)
    }

    /// A memory limit is noticed within [`MEMORY_READ_STATES`] new states of being passed: given a
    /// limit below any process's resident memory (1 MiB), a check that would run for minutes stops,
    /// by memory, with fewer than twice that many states, breadth-first and depth-first.
    #[test]
    fn a_memory_limit_is_noticed_within_the_read_interval() {
        for depth_first in [false, true] {
            let limits =
                Limits { max_memory_mib: 1, timeout: Some(Duration::from_secs(120)), depth_first, ..Limits::default() };
            let r = check(endless(), limits);
            assert_eq!(r.limit, Some("memory"), "depth-first {depth_first}: {r:?}");
            assert!(r.states < 2 * MEMORY_READ_STATES, "depth-first {depth_first}: {} states", r.states);
        }
    }

    /// The table of fingerprints answers as a map would, through its growths: every fingerprint
    /// found with its rank, a rank raised only when asked and only upwards, fingerprint 0 (the
    /// empty slot's key) stored like any other, nothing found that was not inserted.
    #[test]
    fn the_table_of_fingerprints_is_a_map() {
        let mut seen = Seen::new();
        let mut map = std::collections::HashMap::new();
        // Spread like hashes, with 0 among them.
        let fps: Vec<u64> = (0..50_000u64).map(|i| i.wrapping_mul(0x2545_f491_4f6c_dd1d).rotate_left(17)).collect();
        assert!(fps.contains(&0));
        for (i, &fp) in fps.iter().enumerate() {
            assert!(seen.insert(fp, i as u32 % 7, false), "new: {fp}");
            map.insert(fp, i as u32 % 7);
        }
        assert_eq!(seen.len(), map.len());
        for (&fp, &rank) in &map {
            assert_eq!(seen.get(fp), Some(rank));
            assert!(!seen.insert(fp, rank + 1, false), "seen, not raised unless asked");
            assert!(!seen.insert(fp, rank, true), "the same rank is no news");
        }
        assert!(seen.insert(fps[3], 100, true), "a higher rank is news");
        assert_eq!(seen.get(fps[3]), Some(100));
        assert!(!seen.insert(fps[3], 99, true), "a lower one is not");
        assert_eq!(seen.len(), map.len());
        assert_eq!(seen.get(0x1234_5678_9abc_def1), None);
    }
}
