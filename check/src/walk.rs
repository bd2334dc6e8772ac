//! # A sample of schedules, when every one is too many
//!
//! Some checks do not finish: their states outgrow the time or the memory
//! (docs/checking.md names them), and all the exhaustive search can then say
//! is "holds where explored", breadth-first, so only about the shortest
//! schedules. [`simulate`] samples the deep ones instead, as TLC's and
//! stateright's simulation modes do: it walks the same graph of moves the
//! exhaustive search explores ([`ElectionModel::successors`], with the same
//! reductions), one schedule at a time, from the initial state, taking at
//! each state one of its moves chosen uniformly by a seeded generator, to a
//! depth or until no move is left. Every state a walk reaches is checked
//! against the same properties ([`ElectionModel::holds`]: the invariants at
//! every step, and at a final state that it is a finished election), and
//! the first walk that breaks one stops the run: its schedule is rebuilt
//! as a [`Counterexample`] as the exhaustive search rebuilds its own, in the
//! same words, though not the shortest.
//!
//! Each walk has a seed of its own: the first walk's is the seed asked
//! ([`Walks::seed`]), and each next walk's is drawn from the one before
//! ([`walk_seed`]). A violation is reported with its walk's seed, so a run
//! from that seed walks the violating schedule first, and prints the same
//! counterexample (`ringleader-check ... --simulate --walk-seed SEED`). The
//! same seed gives the same walks, on any machine; only where a limit of
//! time, memory or a caller's stop cuts the run depends on the machine.
//!
//! A sample is not a proof: "no violation in W walks" says that no schedule
//! walked broke a property, not that none does. The distinct states seen
//! (told apart as the exhaustive search tells them, so the two figures
//! compare) say how much of the state space the walks covered.
//!
//! ```
//! use ringleader_check::{CheckAsk, Limits, Walks, simulate};
//! let ask = CheckAsk { algorithm: "stages".into(), n: 3, any_order: true, ..CheckAsk::default() };
//! let checked = ask.check().unwrap();
//! let limits = Limits { fifo: checked.fifo, ..Limits::default() };
//! let walks = Walks { walks: 1_000, depth: 200, seed: 1 };
//! let s = simulate(checked.election.clone(), limits, walks, None, |_| {});
//! // Stages assumes FIFO links: on links that reorder, a walk finds a schedule that breaks it.
//! let v = s.violation.expect("broken on links that reorder");
//! let again = simulate(checked.election, limits, Walks { walks: 1, seed: v.seed, ..walks }, None, |_| {});
//! assert_eq!(again.violation.unwrap().counterexample.steps, v.counterexample.steps);
//! ```

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::{
    Counterexample, Election, ElectionModel, Limits, MEMORY_READ_STATES, Replay, Seen, fingerprint, resident_mib,
};

/// How many walks to take, how deep, from which seed ([`simulate`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Walks {
    /// Walks to take (the run stops sooner at a violation or a limit).
    pub walks: u64,
    /// The most moves a walk takes (it stops sooner where no move is left).
    pub depth: usize,
    /// The first walk's seed; each next walk's is drawn from the one before
    /// ([`walk_seed`]).
    pub seed: u64,
}

impl Walks {
    /// The command line's and the API's defaults: 1,000 walks of at most
    /// 1,000 moves, from seed 0.
    pub const DEFAULT: Walks = Walks { walks: 1_000, depth: 1_000, seed: 0 };
}

impl Default for Walks {
    /// [`Walks::DEFAULT`].
    fn default() -> Self {
        Walks::DEFAULT
    }
}

/// The walk that broke a property first.
#[derive(Clone, Debug)]
pub struct Violation {
    /// Its number among the walks, from 0.
    pub walk: u64,
    /// Its seed: a run from this seed takes this walk first.
    pub seed: u64,
    /// The moves it took to the state that breaks the property.
    pub moves: usize,
    /// Its schedule, step by step, and how the nodes ended.
    pub counterexample: Counterexample,
}

/// What a run of walks found ([`simulate`]).
#[derive(Clone, Debug)]
pub struct Sampled {
    /// What was asked.
    pub asked: Walks,
    /// Walks taken (the violating one included).
    pub walks: u64,
    /// Moves taken over every walk.
    pub steps: u64,
    /// Distinct states reached, the initial one included (told apart as
    /// the exhaustive search tells them: a kept leadership's without its
    /// clock, [`Limits::subsume`]).
    pub states: usize,
    /// The most moves one walk took.
    pub deepest: usize,
    /// Walks that ended where no move was left (a finished election), not at
    /// the depth.
    pub quiescent: u64,
    /// Walks in which a partition or a crash struck (a lost or duplicated
    /// message is not counted).
    pub faulted: u64,
    /// One-shot: the most messages any walk sent.
    pub most_messages: u64,
    /// The limit that cut the run short, if one did: "states", "time",
    /// "memory" or "stopped" (the caller stopped it).
    pub limit: Option<&'static str>,
    /// The first walk that broke a property, if one did.
    pub violation: Option<Violation>,
    /// How long the run took.
    pub elapsed: Duration,
}

impl Sampled {
    /// Every walk asked for was taken, and none broke a property: a sample,
    /// not a proof.
    pub fn clean(&self) -> bool {
        self.violation.is_none() && self.walks == self.asked.walks
    }

    /// The verdict in words: "no violation in W walks of depth D, S distinct
    /// states: a sample, not a proof", or the property broken with the
    /// seed that replays it.
    pub fn words(&self) -> String {
        let cut = self.limit.map(|l| format!(" (stopped by {l} after {} of {} walks)", self.walks, self.asked.walks));
        match &self.violation {
            Some(v) => format!(
                "BROKEN: {} by walk {} of depth {} (replay: seed {})",
                v.counterexample.property,
                v.walk + 1,
                v.moves,
                v.seed
            ),
            None => format!(
                "no violation in {} walk{} of depth {}, {} distinct states{}: a sample, not a proof",
                self.walks,
                if self.walks == 1 { "" } else { "s" },
                self.asked.depth,
                self.states,
                cut.unwrap_or_default()
            ),
        }
    }
}

/// How far a run of walks has got, as it goes.
#[derive(Clone, Copy, Debug)]
pub struct WalkProgress {
    /// Walks taken so far.
    pub walks: u64,
    /// Moves taken so far.
    pub steps: u64,
    /// Distinct states seen so far.
    pub states: usize,
    /// The most moves one walk took so far.
    pub deepest: usize,
    /// Time since the run began.
    pub elapsed: Duration,
}

/// The seed of the walk after the one of `seed`: SplitMix64's output
/// function of `seed` (so seeds near each other give unrelated walks).
pub fn walk_seed(seed: u64) -> u64 {
    SplitMix(seed ^ 0x5eed_0fa1_1ed5).next()
}

/// SplitMix64 (Steele, Lea and Flood): a 64-bit state, a draw per call;
/// small, fast, and the same on every platform.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A draw below `n` (n > 0): the high half of a 128-bit product
    /// (Lemire's), whose bias is below n / 2^64.
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }
}

/// Walk `election` as `walks` says, within `limits` (of which it reads
/// `fifo`, `reduce`, `subsume`, `max_states` (distinct states), `timeout`
/// and `max_memory_mib`), stopped early when `cancel` is set, telling
/// `progress` how far it has got about four times a second. See the
/// module's docs.
pub fn simulate(
    election: Election,
    limits: Limits,
    walks: Walks,
    cancel: Option<&AtomicBool>,
    mut progress: impl FnMut(WalkProgress),
) -> Sampled {
    let started = Instant::now();
    let model = ElectionModel::new(election, limits.fifo).with_reduction(limits.reduce);
    let subsume = model.is_kept() && limits.subsume;
    let heal = !model.ranks_partitions();
    let key = |s: &crate::System| fingerprint(s, !subsume, heal);
    let properties = model.properties();
    let n = model.election().ids.len() as u32;
    let mut out = Sampled {
        asked: walks,
        walks: 0,
        steps: 0,
        states: 0,
        deepest: 0,
        quiescent: 0,
        faulted: 0,
        most_messages: 0,
        limit: None,
        violation: None,
        elapsed: Duration::ZERO,
    };
    let mut seen = Seen::new();
    let init = model.initial();
    seen.insert(key(&init), 0, false);
    let (mut memory_checked, mut over_memory, mut last_report) = (0usize, false, Instant::now());
    let mut successors = Vec::new();
    let mut indices: Vec<u32> = Vec::new();
    let mut seed = walks.seed;
    'walks: for walk in 0..walks.walks {
        if walk > 0 {
            seed = walk_seed(seed);
        }
        let mut rng = SplitMix(seed);
        let mut s = init.clone();
        indices.clear();
        out.walks += 1;
        let mut faulted = false;
        loop {
            faulted |= s.partitioned() || (0..n).any(|p| s.is_down(p));
            if let Some(i) = (0..properties.len()).find(|&i| !model.holds(i, &s)) {
                let counterexample = model.replay(properties[i], &indices);
                out.violation = Some(Violation { walk, seed, moves: indices.len(), counterexample });
                break 'walks;
            }
            if s.is_final() {
                out.quiescent += 1;
                out.most_messages = out.most_messages.max(s.sent());
                break;
            }
            if indices.len() >= walks.depth {
                break;
            }
            if seen.len() >= memory_checked + MEMORY_READ_STATES {
                memory_checked = seen.len();
                // The table's next growth counts now: it comes in one piece, between two reads.
                let growth_mib = seen.growth_bytes() >> 20;
                over_memory = limits.max_memory_mib > 0
                    && resident_mib().is_some_and(|m| m.saturating_add(growth_mib) > limits.max_memory_mib);
            }
            out.limit = [
                (limits.max_states > 0 && seen.len() >= limits.max_states, "states"),
                (limits.timeout.is_some_and(|t| started.elapsed() >= t), "time"),
                (over_memory, "memory"),
                (cancel.is_some_and(|c| c.load(Ordering::Relaxed)), "stopped"),
            ]
            .into_iter()
            .find_map(|(hit, what)| hit.then_some(what));
            if out.limit.is_some() {
                break 'walks;
            }
            successors.clear();
            model.successors(&s, &mut successors);
            if successors.is_empty() {
                out.quiescent += 1;
                break;
            }
            let k = rng.below(successors.len());
            s = successors.swap_remove(k).1;
            indices.push(k as u32);
            out.steps += 1;
            seen.insert(key(&s), 0, false);
            if last_report.elapsed() >= Duration::from_millis(250) {
                last_report = Instant::now();
                let deepest = out.deepest.max(indices.len());
                let (walks, steps, elapsed) = (out.walks, out.steps, started.elapsed());
                progress(WalkProgress { walks, steps, states: seen.len(), deepest, elapsed });
            }
        }
        out.deepest = out.deepest.max(indices.len());
        out.faulted += u64::from(faulted);
    }
    out.deepest = out.deepest.max(indices.len());
    out.states = seen.len();
    out.elapsed = started.elapsed();
    let (walks, steps, elapsed) = (out.walks, out.steps, out.elapsed);
    progress(WalkProgress { walks, steps, states: out.states, deepest: out.deepest, elapsed });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Draws below n stay below n and reach every value of a small range; the walk seeds of
    /// neighbouring seeds differ.
    #[test]
    fn draws_stay_in_range_and_seeds_spread() {
        let mut rng = SplitMix(7);
        let mut hit = [false; 5];
        for _ in 0..1_000 {
            let k = rng.below(5);
            hit[k] = true;
        }
        assert!(hit.iter().all(|&h| h), "{hit:?}");
        assert_ne!(walk_seed(1), walk_seed(2));
        assert_ne!(walk_seed(1), 1);
    }
}
