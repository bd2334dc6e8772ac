//! How fast the simulator runs a program against the built-in it imitates:
//! `cargo run --release -p ringleader-program --example rate [DIR] [BUILT-IN] [n] [runs]`
//! (defaults: examples/programs/chang-roberts, as-far, 16, 20).
//!
//! Each run is one SIMULATED election on random ids (seed = run) with every
//! node an initiator. Printed: the built-in's deliveries per second; the
//! program's deliveries per second and the steps its processes answered per
//! second, first on a cold memo (a fresh program: every step asked of a
//! process), then warm (the same runs again: answered from the memo); and
//! whether both gave the same message counts and leaders on every run.

use std::path::PathBuf;
use std::time::Instant;

use ringleader_core::algo::catalogue;
use ringleader_core::report::SimReport;
use ringleader_core::sim::{self, SimConfig};
use ringleader_core::spec::AlgorithmSpec;
use ringleader_core::topology::{IdOrder, Topology};
use ringleader_program::{Isolation, Limits};

fn runs(spec: &AlgorithmSpec, n: u32, runs: u64) -> (Vec<SimReport>, f64) {
    let ring = Topology::build(spec.default_topology(), n, 1).expect("ring");
    let all: Vec<u32> = (0..n).collect();
    let t = Instant::now();
    let reports = (0..runs)
        .map(|seed| {
            let ids = IdOrder::Random(seed).arrange(n).expect("ids");
            let cfg = SimConfig { seed, ..SimConfig::default() };
            sim::run(spec, &ring, &ids, &all, spec.rule, &cfg)
        })
        .collect();
    (reports, t.elapsed().as_secs_f64())
}

fn deliveries(reports: &[SimReport]) -> u64 {
    reports.iter().map(|r| r.deliveries).sum()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = args.next().map(PathBuf::from).unwrap_or_else(|| root.join("examples/programs/chang-roberts"));
    let builtin = args.next().unwrap_or_else(|| "as-far".into());
    let n: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(16);
    let count: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(20);
    let reference = catalogue::find(&builtin).expect("unknown built-in");
    let program = ringleader_program::load(&dir, Limits::default(), Isolation::Required).expect("program");
    let spec = program.install().expect("install");

    let (built, built_s) = runs(reference, n, count);
    println!(
        "{builtin} n={n}, {count} runs: {} deliveries in {built_s:.3} s = {:.0} deliveries/s",
        deliveries(&built),
        deliveries(&built) as f64 / built_s
    );
    for pass in ["cold memo", "warm memo"] {
        let before = program.stats();
        let (mine, s) = runs(spec, n, count);
        let after = program.stats();
        let steps = after.steps - before.steps;
        let hits = after.cache_hits - before.cache_hits;
        let same = mine.iter().zip(&built).all(|(a, b)| {
            a.counters.election_messages == b.counters.election_messages
                && a.counters.notification_messages == b.counters.notification_messages
                && a.decisions == b.decisions
        });
        println!(
            "{} ({pass}): {} deliveries in {s:.3} s = {:.0} deliveries/s ({:.1}x slower); {steps} steps by \
             the process = {:.0} steps/s, {hits} from the memo; same counts and leaders as {builtin} on every \
             run: {same}",
            spec.name,
            deliveries(&mine),
            deliveries(&mine) as f64 / s,
            s / built_s,
            steps as f64 / s,
        );
    }
}
