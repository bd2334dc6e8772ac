//! Benchmark: one failover table an operator can use. Every leased or
//! quorum leadership an operator runs (Raft with each of its options, the
//! Chubby-style lease, and whatever the `--algorithms` list adds), at
//! loopback-scaled settings and at production defaults, for four faults of
//! the leader: a crash, a partition that cuts it off, a planned stop, and a
//! cut-off leader whose clock runs at half speed. SIMULATED (the same state
//! machines, virtual milliseconds, 5 nodes, message delays uniform in
//! 1..=`--delay` ms, default 4): production timeouts are seconds long, and a
//! p99 needs hundreds of failovers.
//!
//! Run: `cargo bench -p ringleader-tests --bench failover_table` (add
//! `-- --runs 50` for fewer seeds; `--markdown` prints the table as
//! docs/performance.md has it). Nothing is asserted; every figure is measured
//! in this run and printed.
//!
//! Per row and fault, over `--runs` seeds (ids, timeouts and delays drawn
//! from the seed):
//! * **recovery**: from the fault (a planned stop: from the leader's
//!   handover) until every node but the old leader follows one new leader
//!   that believes it leads; median and p99 (nearest rank), and how many
//!   runs never got there within four convergence bounds;
//! * **overlap**: the longest time, over all runs, that two nodes both
//!   believed they led (of different terms), in real (virtual) time;
//! * **bound**: the algorithm's convergence bound for the setting (its
//!   `KeptSpec::convergence_bound_ms`, argued in its rustdoc), which a
//!   recovery should stay under.

use ringleader_core::algo::Rule;
use ringleader_core::algo::catalogue;
use ringleader_core::algo::detector::DetectorConfig;
use ringleader_core::faults::{Fault, FaultPlan, Scheduled};
use ringleader_core::sim::{self, SimConfig, SimReport};
use ringleader_core::spec;
use ringleader_core::topology::{IdOrder, Topology};

const NODES: u32 = 5;

/// One row: an algorithm with its options.
struct Row {
    label: &'static str,
    algorithm: &'static str,
    options: &'static [(&'static str, &'static str)],
}

const ROWS: &[Row] = &[
    Row { label: "raft", algorithm: "raft", options: &[] },
    Row { label: "raft PreVote", algorithm: "raft", options: &[("pre_vote", "true")] },
    Row { label: "raft CheckQuorum", algorithm: "raft", options: &[("check_quorum", "true")] },
    Row { label: "raft lease", algorithm: "raft", options: &[("lease", "true")] },
    Row {
        label: "raft PreVote+CheckQuorum+lease",
        algorithm: "raft",
        options: &[("pre_vote", "true"), ("check_quorum", "true"), ("lease", "true")],
    },
    Row { label: "chubby", algorithm: "chubby", options: &[] },
];

/// client-go's lease election, at its own settings (below).
const LEASE: Row = Row { label: "lease (client-go)", algorithm: "lease", options: &[] };

/// A timing setting: its name and the kept detector it scales from.
struct Setting {
    name: &'static str,
    detector: DetectorConfig,
}

const SETTINGS: &[Setting] = &[
    Setting { name: "loopback (50/200 ms)", detector: DetectorConfig::LOOPBACK },
    // etcd's defaults: heartbeat 100 ms, election timeout 1,000 ms (raft: timeouts in [1 s, 2 s)).
    Setting { name: "etcd defaults (100/1000 ms)", detector: DetectorConfig { period_ms: 100, timeout_ms: 1_000 } },
];

/// The lease's settings: RetryPeriod the detector's period, client-go's ratios (LeaseDuration
/// 7.5, RenewDeadline 5 periods): loopback 375 / 250 / 50 ms, and client-go's defaults.
const LEASE_SETTINGS: &[Setting] = &[
    Setting { name: "loopback (375/250/50 ms)", detector: DetectorConfig::LOOPBACK },
    Setting {
        name: "client-go defaults (15/10/2 s)",
        detector: DetectorConfig { period_ms: 2_000, timeout_ms: 8_000 },
    },
];

#[derive(Clone, Copy, Debug, PartialEq)]
enum Scenario {
    Crash,
    Partition,
    Planned,
    SlowClock,
}

const SCENARIOS: [Scenario; 4] = [Scenario::Crash, Scenario::Partition, Scenario::Planned, Scenario::SlowClock];

impl Scenario {
    fn name(self) -> &'static str {
        match self {
            Scenario::Crash => "crash",
            Scenario::Partition => "partition",
            Scenario::Planned => "planned stop",
            Scenario::SlowClock => "half-speed clock, cut off",
        }
    }
}

/// What one run measured: the recovery (None: never) and the longest overlap after the fault,
/// and whether an overlap still held when the run ended (the partition never heals).
struct Measured {
    recovery: Option<u64>,
    overlap: u64,
    unhealed: bool,
}

fn options(row: &Row) -> Vec<(String, String)> {
    row.options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// One run of `row` at `setting` with `scenario` on the leader, seed `seed`.
fn run(row: &Row, d: DetectorConfig, scenario: Scenario, seed: u64, delay: u64) -> Measured {
    let s = catalogue::find(row.algorithm).expect("a catalogue algorithm");
    let ids = IdOrder::Random(seed).arrange(NODES).unwrap();
    let all: Vec<u32> = (0..NODES).collect();
    let topo = Topology::complete(NODES).unwrap();
    let bound = s.convergence_bound_ms(d, NODES, delay).unwrap();
    let at = bound + 500;
    let base = SimConfig { seed, max_delay: delay, detector: d, options: options(row), ..SimConfig::default() };
    let settled = SimConfig { horizon: Some(at), ..base.clone() };
    let before = sim::run_kept(s, &topo, &ids, &all, Rule::Max, &settled).unwrap();
    let Some(old) = leader_at_end(&before, &ids) else {
        return Measured { recovery: None, overlap: 0, unhealed: false };
    };
    let others: Vec<u32> = (0..NODES).filter(|&p| p != old).collect();
    // Cut off from the other nodes and from the store (the lease's record), whichever it talks to.
    let cut = [
        Fault::Partition { groups: vec![vec![old], others] },
        Fault::Store { node: Some(old), cut: true, delay_ms: 0 },
    ];
    let cut = cut.map(|f| Scheduled::new(at, 0, f));
    let plan = match scenario {
        Scenario::Crash => vec![Scheduled::new(at, 0, Fault::Crash { node: old })],
        Scenario::Partition => cut.to_vec(),
        Scenario::Planned => {
            vec![Scheduled::new(at, 0, Fault::LeaveLeader), Scheduled::new(at + 500, 0, Fault::Crash { node: old })]
        }
        Scenario::SlowClock => {
            let mut plan = vec![Scheduled::new(at, 0, Fault::Clock { node: old, rate: 0.5 })];
            plan.extend(cut);
            plan
        }
    };
    let cfg = SimConfig { faults: FaultPlan { faults: plan }, horizon: Some(at + 4 * bound), ..base };
    let r = sim::run_kept(s, &topo, &ids, &all, Rule::Max, &cfg).unwrap();
    let (overlap, unhealed) = longest_overlap(&r, &ids, at);
    Measured { recovery: recovered(&r, &ids, old, at).map(|t| t - at), overlap, unhealed }
}

/// The position every node follows at the end of `r`, if they agree on one that leads.
fn leader_at_end(r: &SimReport, ids: &[u64]) -> Option<u32> {
    let mut latest = vec![None; ids.len()];
    for e in &r.leaderships {
        latest[e.position as usize] = e.leadership.leader;
    }
    let l = latest[0]?;
    latest.iter().all(|&x| x == Some(l)).then(|| ids.iter().position(|&id| id == l).unwrap() as u32)
}

/// When, after `from`, every position but `old` first followed one leader other than `old` that
/// believes it leads.
fn recovered(r: &SimReport, ids: &[u64], old: u32, from: u64) -> Option<u64> {
    let mut latest: Vec<Option<u64>> = vec![None; ids.len()];
    for e in &r.leaderships {
        latest[e.position as usize] = e.leadership.leader;
        if e.time < from {
            continue;
        }
        let rest = (0..ids.len()).filter(|&p| p != old as usize);
        let Some(l) = latest[(0..ids.len()).find(|&p| p != old as usize).unwrap()] else { continue };
        if l != ids[old as usize] && rest.clone().all(|p| latest[p] == Some(l)) {
            return Some(e.time);
        }
    }
    None
}

/// The longest stretch after `from` during which two positions both believed they led (a
/// crashed node's belief ends with its crash), and whether one still held at the end.
fn longest_overlap(r: &SimReport, ids: &[u64], from: u64) -> (u64, bool) {
    let beliefs =
        r.leaderships.iter().map(|e| (e.time, e.position, e.leadership.leader == Some(ids[e.position as usize])));
    let crashes = r.outages.iter().map(|o| (o.crashed, o.position, false));
    let mut events: Vec<(u64, u32, bool)> = beliefs.chain(crashes).collect();
    events.sort_by_key(|&(t, ..)| t);
    let mut leads = vec![false; ids.len()];
    let (mut longest, mut since): (u64, Option<u64>) = (0, None);
    for (t, p, now_leads) in events {
        leads[p as usize] = now_leads;
        let two = leads.iter().filter(|&&l| l).count() >= 2;
        match (since, two) {
            (None, true) => since = Some(t.max(from)),
            (Some(s), false) => {
                longest = longest.max(t.saturating_sub(s));
                since = None;
            }
            _ => {}
        }
    }
    match since {
        Some(s) => (longest.max(r.end_time.saturating_sub(s)), true),
        None => (longest, false),
    }
}

/// The nearest-rank percentile `q` (0..=100) of sorted `xs`.
fn percentile(xs: &[u64], q: usize) -> u64 {
    if xs.is_empty() {
        return 0;
    }
    let rank = (q * xs.len()).div_ceil(100).max(1);
    xs[rank - 1]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |name: &str, default: u64| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let runs = value("--runs", 200);
    let delay = value("--delay", 4);
    let markdown = args.iter().any(|a| a == "--markdown");
    println!(
        "failover of kept leaderships on {NODES} nodes, SIMULATED, delays 1..={delay} ms, {runs} seeds per cell: \
         recovery median / p99 ms (runs without a new leader), longest overlap ms"
    );
    if markdown {
        println!("| leadership | setting | bound ms | crash | partition | planned stop | half-speed clock, cut off |");
        println!("|---|---|---|---|---|---|---|");
    }
    let cells = SETTINGS.iter().flat_map(|s| ROWS.iter().map(move |r| (s, r)));
    for (setting, row) in cells.chain(LEASE_SETTINGS.iter().map(|s| (s, &LEASE))) {
        {
            let s = catalogue::find(row.algorithm).unwrap();
            spec::check_options(s, &options(row), NODES, true).expect("the row's options");
            let bound = s.convergence_bound_ms(setting.detector, NODES, delay).unwrap();
            let mut cells = Vec::new();
            for scenario in SCENARIOS {
                let measured: Vec<Measured> =
                    (0..runs).map(|seed| run(row, setting.detector, scenario, seed, delay)).collect();
                let mut times: Vec<u64> = measured.iter().filter_map(|m| m.recovery).collect();
                times.sort_unstable();
                let never = measured.len() - times.len();
                let overlap = measured.iter().map(|m| m.overlap).max().unwrap_or(0);
                let never = if never == 0 { String::new() } else { format!(" ({never} never)") };
                let overlap = match (overlap, measured.iter().any(|m| m.unhealed)) {
                    (_, true) => ", overlap until healed".to_string(),
                    (0, false) => String::new(),
                    (ms, false) => format!(", overlap {ms}"),
                };
                cells.push(format!("{} / {}{never}{overlap}", percentile(&times, 50), percentile(&times, 99)));
                if !markdown {
                    println!(
                        "{:<32} {:<28} bound {bound:>5} {:<26} {}",
                        row.label,
                        setting.name,
                        scenario.name(),
                        cells.last().unwrap()
                    );
                }
            }
            if markdown {
                println!("| {} | {} | {bound} | {} |", row.label, setting.name, cells.join(" | "));
            }
        }
    }
}
