//! Seeded chaos plans and checks shared by the kept-leadership test files:
//! random crashes of the leader and of followers,
//! recoveries, lossy and slow links and partitions, all healed before the
//! horizon; safety (one leader per term) and agreement after healing.
#![allow(dead_code)] // each test file uses its own share

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use ringleader_core::algo::catalogue;
use ringleader_core::algo::detector::DetectorConfig;
use ringleader_core::algo::{Leadership, Rule};
use ringleader_core::failover::{self, Failover};
use ringleader_core::faults::{Fault, FaultPlan, LinkFault, Scheduled};
use ringleader_core::invariants;
use ringleader_core::sim::{self, SimConfig, SimReport};
use ringleader_core::topology::{IdOrder, Topology};

/// Faults start after the first election and stop (all healed) by this time.
pub const FAULTS_END: u64 = 6_000;
/// Time left after the last fault for the cluster to agree: above every
/// algorithm's convergence bound on these sizes (at most 4,564 ms).
pub const SETTLE: u64 = 5_000;
/// The scheduler's largest delay in these runs.
pub const MAX_DELAY: u64 = 16;

fn at(at: u64, seed: u64, fault: Fault) -> Scheduled {
    Scheduled::new(at, seed, fault)
}

/// Which faults a plan may draw besides crashes and slow links.
#[derive(Clone, Copy, Debug)]
pub struct Mix {
    /// Largest extra link delay (fixed part plus jitter), in ms.
    pub max_delay: u64,
    pub recoveries: bool,
    pub drops: bool,
    pub partitions: bool,
}

/// Everything the issue asks for, with delays well under bully's 500 ms answer timeout.
pub const FULL: Mix = Mix { max_delay: 100, recoveries: true, drops: true, partitions: true };

/// What a plan drew, to sort the runs by the faults outside bully's model.
#[derive(Clone, Copy, Debug, Default)]
pub struct Drawn {
    pub recovery: bool,
    pub drop: bool,
    pub partition: bool,
}

/// A random plan on `n` positions; returns it with the time of its last fault.
pub fn chaos_plan(rng: &mut Pcg64Mcg, n: u32, leader: u32, mix: Mix) -> (FaultPlan, u64, Drawn) {
    let max_delay = mix.max_delay;
    let mut drawn = Drawn::default();
    let mut f = Vec::new();
    let mut down = vec![false; n as usize];
    let mut last = 0;
    let faults = rng.random_range(1..=4);
    for _ in 0..faults {
        let t = rng.random_range(1_000..FAULTS_END - 1_500);
        let until = t + rng.random_range(100..1_500);
        let seed = rng.random();
        let kinds = [true, true, mix.drops, true, mix.partitions];
        let mut kind = rng.random_range(0..5);
        while !kinds[kind] {
            kind = rng.random_range(0..5);
        }
        match kind {
            // 0: the leader, or whoever leads now if the first one is gone; 1: anybody.
            0 | 1 => {
                let p = if kind == 0 && !down[leader as usize] { leader } else { rng.random_range(0..n) };
                f.push(at(t, seed, Fault::Crash { node: p }));
                if mix.recoveries && rng.random_bool(0.6) {
                    drawn.recovery = true;
                    f.push(at(until, seed, Fault::Recover { node: p }));
                } else {
                    down[p as usize] = true;
                }
            }
            2 => {
                drawn.drop = true;
                let drop = rng.random_range(0.0..=0.3);
                let lf = LinkFault { drop, ..LinkFault::default() };
                f.push(at(t, seed, Fault::Link { from: None, to: None, fault: lf }));
                f.push(at(until, seed, Fault::Link { from: None, to: None, fault: LinkFault::default() }));
            }
            3 => {
                let delay_ms = rng.random_range(0..=max_delay / 2);
                let jitter_ms = rng.random_range(0..=max_delay - delay_ms);
                let lf = LinkFault { delay_ms, jitter_ms, ..LinkFault::default() };
                let from = rng.random_bool(0.5).then(|| rng.random_range(0..n));
                f.push(at(t, seed, Fault::Link { from, to: None, fault: lf }));
                f.push(at(until, seed, Fault::Link { from: None, to: None, fault: LinkFault::default() }));
            }
            _ => {
                drawn.partition = true;
                let mut order: Vec<u32> = (0..n).collect();
                order.shuffle(rng);
                let cut = rng.random_range(1..n) as usize;
                let groups = vec![order[..cut].to_vec(), order[cut..].to_vec()];
                f.push(at(t, seed, Fault::Partition { groups }));
                f.push(at(until, seed, Fault::Partition { groups: vec![(0..n).collect()] }));
            }
        }
        last = last.max(until);
    }
    // Someone must survive to lead.
    if down.iter().all(|&d| d) {
        drawn.recovery = true;
        f.push(at(last, 0, Fault::Recover { node: leader }));
    }
    (FaultPlan { faults: f }, last, drawn)
}

/// One seeded kept-leadership run.
pub struct Run {
    pub algorithm: String,
    pub r: SimReport,
    pub ids: Vec<u64>,
    /// Time of the last fault (all healed by then).
    pub last: u64,
    pub drawn: Drawn,
    pub ctx: String,
    /// The plan's pauses: (position, from, until).
    pub pauses: Vec<(u32, u64, u64)>,
}

/// A seeded kept run of `algorithm` on a complete network of 3..=7 nodes under a random plan.
pub fn chaos_run(algorithm: &str, seed: u64, mix: Mix) -> Run {
    chaos_run_with(algorithm, seed, mix, &[], |_, _, _| Vec::new())
}

/// [`chaos_run`] with the election's `options`, and the faults `extra` draws
/// (given the generator, n and the plan's last fault time) added to the
/// plan; they must heal by [`FAULTS_END`].
pub fn chaos_run_with(
    algorithm: &str,
    seed: u64,
    mix: Mix,
    options: &[(String, String)],
    extra: impl Fn(&mut Pcg64Mcg, u32, u64) -> Vec<Scheduled>,
) -> Run {
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    let n = rng.random_range(3..=7);
    let ids = IdOrder::Random(seed).arrange(n).unwrap();
    let leader = ids.iter().position(|&id| id == n as u64).unwrap() as u32;
    let (mut faults, mut last, drawn) = chaos_plan(&mut rng, n, leader, mix);
    let more = extra(&mut rng, n, last);
    let pauses = more
        .iter()
        .filter_map(|f| match f.fault {
            Fault::Pause { node, ms } => Some((node, f.at, f.at + ms)),
            _ => None,
        })
        .collect();
    // A pause lasts past its start: the last fault ends when it does.
    last = more
        .iter()
        .map(|f| match f.fault {
            Fault::Pause { ms, .. } => f.at + ms,
            _ => f.at,
        })
        .fold(last, u64::max);
    faults.faults.extend(more);
    let cfg = SimConfig {
        options: options.to_vec(),
        seed,
        fifo: rng.random_bool(0.5),
        max_delay: MAX_DELAY,
        faults,
        horizon: Some(last + SETTLE),
        log_message_times: true,
        ..SimConfig::default()
    };
    let spec = catalogue::find(algorithm).unwrap();
    let topo = Topology::complete(n).unwrap();
    let all: Vec<u32> = (0..n).collect();
    let r = sim::run_kept(spec, &topo, &ids, &all, Rule::Max, &cfg).unwrap();
    let ctx = format!("{algorithm} seed {seed} n {n} ids {ids:?} {options:?} {cfg:?}");
    Run { algorithm: algorithm.to_string(), r, ids, last, drawn, ctx, pauses }
}

impl Run {
    /// Panics unless the run reached its horizon without an algorithm error.
    pub fn assert_ran(&self) {
        let (r, ctx) = (&self.r, &self.ctx);
        assert!(r.horizon_reached, "{ctx}: stopped before the horizon: {:?}", r.fault_log);
        assert!(r.errors.is_empty(), "{ctx}: {:?}", r.errors);
    }

    /// The value of a check of this run ([`Run::safety`], say); panics with
    /// the run, its faults and its beliefs if the check failed.
    pub fn assert_holds<T, E: std::fmt::Display>(&self, check: Result<T, E>) -> T {
        check.unwrap_or_else(|e| panic!("{}: {e}\n{:?}\n{:?}", self.ctx, self.r.fault_log, self.r.leaderships))
    }

    /// Panics unless the live nodes agree on one live leader at the horizon ([`Run::agreed`]).
    pub fn assert_agreed(&self) {
        let r = &self.r;
        assert!(self.agreed(), "{}: no agreement at the horizon\n{:?}\n{:?}", self.ctx, r.fault_log, r.leaderships);
    }

    /// How long after the last fault the live nodes agreed; panics unless
    /// within the algorithm's bound ([`Run::converged_within_bound`]).
    pub fn assert_converged(&self) -> u64 {
        self.converged_within_bound().unwrap_or_else(|e| panic!("{e}\n{:?}", self.r.leaderships))
    }

    /// Is a majority of the nodes up at the end?
    pub fn live_majority(&self) -> bool {
        let n = self.ids.len();
        n - self.r.crashed.len() > n / 2
    }

    /// For the quorum algorithms: if a majority of the nodes is live at the
    /// horizon, asserts they agreed ([`ChaosRun::assert_agreed`]) within the
    /// convergence bound, pushes when to `converged` and says `true`;
    /// otherwise `false` (the caller checks that nobody leads).
    pub fn agreed_if_majority(&self, converged: &mut Vec<u64>) -> bool {
        if !self.live_majority() {
            return false;
        }
        self.assert_agreed();
        converged.push(self.assert_converged());
        true
    }

    /// Never two leaders of one term.
    pub fn safety(&self) -> Result<(), invariants::Violation> {
        let timeline: Vec<_> = self.r.leaderships.iter().map(|e| (e.position, e.leadership)).collect();
        invariants::one_leader_per_term(&self.ids, &timeline)
    }

    /// The live nodes agree on one live leader from some time after the last fault to the end.
    pub fn agreed(&self) -> bool {
        final_agreement(&self.r, &self.ids).is_some()
            && failover::agreement(&self.ids, &self.r.leaderships, &self.r.outages, self.last, 0).is_some()
    }

    /// How long after the last fault the live nodes came to agree for good on
    /// one live leader: the time of the last change of belief of any live
    /// node, less the time of the last fault (0 if nothing changed after it);
    /// `None` if they do not agree at the horizon.
    pub fn convergence(&self) -> Option<u64> {
        final_agreement(&self.r, &self.ids)?;
        let r = &self.r;
        let last_change = r
            .leaderships
            .iter()
            .filter(|e| !r.crashed.contains(&e.position))
            .map(|e| e.time)
            .chain(r.outages.iter().filter_map(|o| o.recovered))
            .max()
            .unwrap_or(0);
        Some(last_change.saturating_sub(self.last))
    }

    /// The algorithm's convergence bound for this run (the scheduler's delays,
    /// at most [`MAX_DELAY`], are the only ones left once the faults heal).
    pub fn bound(&self) -> u64 {
        catalogue::find(&self.algorithm)
            .and_then(|s| s.convergence_bound_ms(DetectorConfig::default(), self.ids.len() as u32, MAX_DELAY))
            .expect("a kept algorithm")
    }

    /// Agreement within the algorithm's convergence bound of the last fault
    /// (see [`Run::convergence`]); returns how long it took.
    pub fn converged_within_bound(&self) -> Result<u64, String> {
        let bound = self.bound();
        match self.convergence() {
            Some(t) if t <= bound => Ok(t),
            Some(t) => Err(format!("{}: agreed {t} ms after the last fault, bound {bound} ms", self.ctx)),
            None => Err(format!("{}: no agreement at the horizon", self.ctx)),
        }
    }

    /// Every crash of a leader, with its figures.
    pub fn failovers(&self) -> Vec<Failover> {
        failover::failovers(&self.ids, &self.r.leaderships, &self.r.outages, &self.r.message_times)
    }
}

/// The latest belief of each of the `n` positions at the end (a recovered
/// node that announced nothing since its recovery believes nothing).
pub fn final_beliefs(r: &SimReport, n: usize) -> Vec<Option<Leadership>> {
    let mut latest = vec![None; n];
    for e in &r.leaderships {
        latest[e.position as usize] = Some(e.leadership);
    }
    for o in &r.outages {
        if o.recovered.is_some() && !r.leaderships.iter().any(|e| e.position == o.position && e.time >= o.crashed) {
            latest[o.position as usize] = None;
        }
    }
    latest
}

/// The latest belief of every live node at the end, if they all agree on a live leader.
pub fn final_agreement(r: &SimReport, ids: &[u64]) -> Option<Leadership> {
    let latest = final_beliefs(r, ids.len());
    let live: Vec<usize> = (0..ids.len()).filter(|p| !r.crashed.contains(&(*p as u32))).collect();
    let l = latest[live[0]]?;
    let leader = ids.iter().position(|&id| Some(id) == l.leader)?;
    (live.contains(&leader) && live.iter().all(|&p| latest[p] == Some(l))).then_some(l)
}

/// Mean and maximum of `xs`, labelled.
pub fn stats(name: &str, xs: impl Iterator<Item = u64>) -> String {
    let xs: Vec<u64> = xs.collect();
    if xs.is_empty() {
        return format!("{name}: none");
    }
    let mean = xs.iter().sum::<u64>() as f64 / xs.len() as f64;
    format!("{name}: mean {mean:.0}, max {}", xs.iter().max().unwrap())
}

/// Print the failover figures of `runs` runs.
pub fn report(what: &str, fo: &[Failover], runs: usize) {
    eprintln!(
        "{what}: {runs} runs, {} leader crashes, {} agreed; {}; {}; {}",
        fo.len(),
        fo.iter().filter(|f| f.agreement.is_some()).count(),
        stats("detection ms", fo.iter().filter_map(|f| f.detection)),
        stats("agreement ms", fo.iter().filter_map(|f| f.agreement)),
        stats("messages", fo.iter().filter_map(|f| f.messages)),
    );
}

/// The intervals in which each position believed it led: from its `Lead`
/// naming itself to its next `Lead` or its crash (the end of the run if neither).
pub fn leader_intervals(r: &SimReport, ids: &[u64]) -> Vec<(u32, u64, u64)> {
    let mut open: Vec<Option<u64>> = vec![None; ids.len()];
    let mut out = Vec::new();
    let mut crashes: Vec<(u64, u32)> = r.outages.iter().map(|o| (o.crashed, o.position)).collect();
    crashes.sort_unstable();
    let mut c = 0;
    for e in &r.leaderships {
        // A crash takes effect before the events of its instant.
        while c < crashes.len() && crashes[c].0 <= e.time {
            let (t, p) = crashes[c];
            if let Some(s) = open[p as usize].take() {
                out.push((p, s, t));
            }
            c += 1;
        }
        let p = e.position as usize;
        if let Some(s) = open[p].take() {
            out.push((e.position, s, e.time));
        }
        if e.leadership.leader == Some(ids[p]) {
            open[p] = Some(e.time);
        }
    }
    for &(t, p) in &crashes[c..] {
        if let Some(s) = open[p as usize].take() {
            out.push((p, s, t));
        }
    }
    out.extend(open.iter().enumerate().filter_map(|(p, s)| s.map(|s| (p as u32, s, r.end_time.max(s)))));
    out
}

/// No two positions believe they lead at one instant; returns the shortest
/// gap between one leadership's end and the next one's start, if any.
pub fn no_overlap(r: &SimReport, ids: &[u64]) -> Result<Option<u64>, String> {
    let mut iv = leader_intervals(r, ids);
    iv.sort_by_key(|&(_, s, e)| (s, e));
    let mut gap: Option<u64> = None;
    for (i, &(p, s, e)) in iv.iter().enumerate() {
        for &(q, s2, e2) in &iv[i + 1..] {
            if q != p && s2 < e && s < e2 {
                return Err(format!("positions {p} [{s}, {e}) and {q} [{s2}, {e2}) lead at once"));
            }
        }
        if let Some(&(_, s2, _)) = iv[i + 1..].iter().find(|&&(q, ..)| q != p) {
            gap = Some(gap.map_or(s2 - e.min(s2), |g| g.min(s2 - e.min(s2))));
        }
    }
    Ok(gap)
}

/// [`no_overlap`], leaving out the time each position was paused (`pauses`:
/// position, from, until): a paused node acts on nothing, and on resuming
/// it runs the timers that came due before anything else, so a belief they
/// end does not outlive the pause.
pub fn no_overlap_outside_pauses(r: &SimReport, ids: &[u64], pauses: &[(u32, u64, u64)]) -> Result<(), String> {
    let mut iv = Vec::new();
    for (p, s, e) in leader_intervals(r, ids) {
        let mut pieces = vec![(s, e)];
        for &(_, from, until) in pauses.iter().filter(|&&(q, ..)| q == p) {
            pieces = pieces
                .into_iter()
                .flat_map(|(a, b)| [(a, b.min(from)), (a.max(until), b)])
                .filter(|&(a, b)| a < b)
                .collect();
        }
        iv.extend(pieces.into_iter().map(|(a, b)| (p, a, b)));
    }
    iv.sort_by_key(|&(_, s, e)| (s, e));
    for (i, &(p, s, e)) in iv.iter().enumerate() {
        for &(q, s2, e2) in &iv[i + 1..] {
            if q != p && s2 < e && s < e2 {
                return Err(format!("positions {p} [{s}, {e}) and {q} [{s2}, {e2}) lead at once"));
            }
        }
    }
    Ok(())
}
