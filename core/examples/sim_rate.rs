//! Prints the simulator's deliveries per second on a few large elections:
//! `cargo run --release -p ringleader-core --example sim_rate [algorithm] [n]`.

use std::time::Instant;

use ringleader_core::algo::catalogue;
use ringleader_core::sim::{self, SimConfig};
use ringleader_core::topology::{IdOrder, Topology};

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| "as-far".into());
    let n: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let spec = catalogue::find(&name).expect("unknown algorithm");
    let ring = Topology::build(spec.default_topology(), n, 1).expect("ring");
    let ids = IdOrder::Random(1).arrange(n).expect("ids");
    let all: Vec<u32> = (0..n).collect();
    for unit_delay in [true, false] {
        let cfg = SimConfig { seed: 1, unit_delay, ..SimConfig::default() };
        let t = Instant::now();
        let r = sim::run(spec, &ring, &ids, &all, spec.rule, &cfg);
        let s = t.elapsed().as_secs_f64();
        println!(
            "{name} n={n} unit_delay={unit_delay}: {} deliveries in {:.3} s = {:.1} M/s; violations {:?}",
            r.deliveries,
            s,
            r.deliveries as f64 / s / 1e6,
            r.verdict.violations
        );
    }
}
