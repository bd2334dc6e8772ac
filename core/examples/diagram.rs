//! Draw the space-time diagram of one simulated election as SVG.
//!
//! ```text
//! cargo run -p ringleader-core --example diagram -- [ALGORITHM] [N] [OUT.svg] [OPTIONS]
//! ```
//!
//! Defaults: as-far, 8 nodes, random ids (seed 1), every node initiating,
//! the SVG on standard output. Options:
//!
//! * `--labels`: each arrow says what its message carries (`id 6`, `stage 2`).
//! * `--axis time|compressed|causal`: wall time to scale, idle stretches
//!   compressed (the default), or Lamport's causal time.
//! * `--ids random|ascending|descending|worst|best` (`--seed S` for random).
//! * `--initiators K`: the first K positions of a shuffled order (seeded) wake.
//! * `--unit-delay`: every message takes one time unit.
//! * `--kept`: keep a leader (failure-tolerant algorithms), with heartbeats
//!   and timeouts in virtual milliseconds, until `--horizon T` (default 1500).
//! * `--crash-leader-at T`: the leader at time T crashes.
//! * `--partition-leader-at T` / `--heal-at T`: the leader at time T is cut
//!   off from the others (a partition), healed at the second time.
//!
//! Each of docs/teaching.md's pictures gives the command that drew it.

use ringleader_core::algo::{Rule, catalogue};
use ringleader_core::diagram::{Axis, Diagram, Term, belief_marks, svg};
use ringleader_core::faults::{Fault, FaultPlan, Scheduled};
use ringleader_core::sim::{self, SimConfig, SimReport};
use ringleader_core::topology::{IdOrder, Topology};

fn fail(why: String) -> ! {
    eprintln!("{why}");
    std::process::exit(2);
}

/// The options, parsed by hand (the examples take no argument parser).
struct Options {
    positional: Vec<String>,
    labels: bool,
    axis: Axis,
    ids: String,
    seed: u64,
    initiators: Option<u32>,
    unit_delay: bool,
    kept: bool,
    horizon: u64,
    crash_leader_at: Option<u64>,
    partition_leader_at: Option<u64>,
    heal_at: Option<u64>,
}

fn options() -> Options {
    let mut o = Options {
        positional: Vec::new(),
        labels: false,
        axis: Axis::Compressed,
        ids: "random".into(),
        seed: 1,
        initiators: None,
        unit_delay: false,
        kept: false,
        horizon: 1_500,
        crash_leader_at: None,
        partition_leader_at: None,
        heal_at: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().unwrap_or_else(|| fail(format!("{name} needs a value")));
        let mut number = |name: &str| {
            let v = value(name);
            v.parse::<u64>().unwrap_or_else(|_| fail(format!("{name}: `{v}` is not a number")))
        };
        match a.as_str() {
            "--labels" => o.labels = true,
            "--unit-delay" => o.unit_delay = true,
            "--kept" => o.kept = true,
            "--axis" => {
                o.axis = match value("--axis").as_str() {
                    "time" => Axis::Time,
                    "compressed" => Axis::Compressed,
                    "causal" => Axis::Causal,
                    other => fail(format!("--axis: `{other}`; give time, compressed or causal")),
                }
            }
            "--ids" => o.ids = value("--ids"),
            "--seed" => o.seed = number("--seed"),
            "--initiators" => o.initiators = Some(number("--initiators") as u32),
            "--horizon" => o.horizon = number("--horizon"),
            "--crash-leader-at" => o.crash_leader_at = Some(number("--crash-leader-at")),
            "--partition-leader-at" => o.partition_leader_at = Some(number("--partition-leader-at")),
            "--heal-at" => o.heal_at = Some(number("--heal-at")),
            flag if flag.starts_with("--") => fail(format!("unknown option {flag}")),
            _ => o.positional.push(a),
        }
    }
    o
}

fn main() {
    let o = options();
    let algorithm = o.positional.first().map_or("as-far", String::as_str);
    let n: u32 = o.positional.get(1).map_or(8, |s| s.parse().unwrap_or_else(|_| fail(format!("N: `{s}`"))));
    let Some(spec) = catalogue::find(algorithm) else {
        fail(format!("unknown algorithm `{algorithm}`; known: {}", catalogue::names()))
    };
    let topo = Topology::build(spec.default_topology(), n, o.seed)
        .unwrap_or_else(|e| fail(format!("{algorithm} on {n} nodes: {e}")));
    let arrangement = |a: Option<ringleader_core::spec::Arrangement>, which: &str| match a {
        Some(a) => (a.ids)(n, spec.rule),
        None => fail(format!("{algorithm} has no known {which}-case arrangement")),
    };
    let ids = match o.ids.as_str() {
        "random" => IdOrder::Random(o.seed).arrange(n).expect("ids"),
        "ascending" => IdOrder::Ascending.arrange(n).expect("ids"),
        "descending" => IdOrder::Descending.arrange(n).expect("ids"),
        "worst" => arrangement(spec.extras.worst_case, "worst"),
        "best" => arrangement(spec.extras.best_case, "best"),
        other => fail(format!("--ids: `{other}`; give random, ascending, descending, worst or best")),
    };
    let mut initiators: Vec<u32> = (0..n).collect();
    if let Some(k) = o.initiators {
        // A seeded shuffle: the same k for the same seed.
        let order = IdOrder::Random(o.seed ^ 0x1417).arrange(n).expect("order");
        initiators = order.iter().take(k.clamp(1, n) as usize).map(|&id| id as u32 - 1).collect();
        initiators.sort_unstable();
    }
    let mut cfg = SimConfig { log_arrows: true, unit_delay: o.unit_delay, seed: o.seed, ..SimConfig::default() };
    let run = |cfg: &SimConfig| -> SimReport {
        if o.kept {
            sim::run_kept(spec, &topo, &ids, &initiators, Rule::Max, cfg)
                .unwrap_or_else(|| fail(format!("{algorithm} cannot keep a leader")))
        } else {
            sim::run(spec, &topo, &ids, &initiators, Rule::Max, cfg)
        }
    };
    if o.kept {
        cfg.horizon = Some(o.horizon);
    }
    let mut faults = Vec::new();
    if let Some(at) = o.crash_leader_at {
        faults.push(Scheduled::new(at, 0, Fault::CrashLeader));
    }
    if let Some(at) = o.partition_leader_at {
        // Who leads at `at`, found by the same run without the partition.
        let before = run(&SimConfig { horizon: Some(at), ..cfg.clone() });
        let leader = Term::from_leaderships(&before.leaderships, &ids)
            .last()
            .map(|t| t.leader)
            .or(before.verdict.leader)
            .unwrap_or_else(|| fail(format!("nobody leads at {at}")));
        let others = (0..n).filter(|&p| p != leader).collect();
        faults.push(Scheduled::new(at, 0, Fault::Partition { groups: vec![vec![leader], others] }));
        if let Some(heal) = o.heal_at {
            faults.push(Scheduled::new(heal, 0, Fault::Partition { groups: vec![(0..n).collect()] }));
        }
    }
    cfg.faults = FaultPlan { faults };
    let r = run(&cfg);
    let terms = Term::from_leaderships(&r.leaderships, &ids);
    let leader = if o.kept { terms.last().map(|t| t.leader) } else { r.verdict.leader };
    // Kept leaderships: where a node gives up on its leader (it knows of none: it elects), or a
    // leader on itself (a Chubby-style lease it could not renew).
    let marks = belief_marks(&r.leaderships, &ids);
    let k = initiators.len();
    let d = Diagram {
        title: format!("{algorithm}, n = {n}, k = {k}, {} ids: {} messages", o.ids, r.counters.messages),
        nodes: ids.iter().map(|id| format!("id {id}")).collect(),
        ids: &ids,
        arrows: &r.arrows,
        leader,
        time_unit: if o.kept { "virtual ms" } else { "virtual time" },
        ring: topo.kind().is_ring(),
        labels: o.labels,
        axis: o.axis,
        outages: &r.outages,
        splits: &r.splits,
        terms: &terms,
        marks: &marks,
        states: &r.states,
        initiators: &initiators,
    };
    let out = svg(&d);
    match o.positional.get(2) {
        Some(path) => std::fs::write(path, out).unwrap_or_else(|e| fail(format!("{path}: {e}"))),
        None => print!("{out}"),
    }
}
