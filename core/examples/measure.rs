//! Prints the markdown table of measured message counts in `docs/algorithms.md`:
//! `cargo run --release -p ringleader-core --example measure`.
//!
//! Every algorithm of the catalogue on its default topology, all nodes
//! initiating, FIFO links with random delays (seed 1), for a few n and id orders.

use ringleader_core::algo::catalogue::CATALOGUE;
use ringleader_core::sim::{self, SimConfig};
use ringleader_core::topology::{IdOrder, Topology};

fn main() {
    println!("| algorithm | n | ids | election | notification | total | bound | total/bound | ideal time |");
    println!("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for spec in CATALOGUE {
        for n in [8u32, 64, 1024] {
            for (name, order) in
                [("ascending", IdOrder::Ascending), ("descending", IdOrder::Descending), ("random", IdOrder::Random(1))]
            {
                let ring = Topology::build(spec.default_topology(), n, 1).expect("ring");
                let ids = order.arrange(n).expect("ids");
                let all: Vec<u32> = (0..n).collect();
                let r = sim::run(spec, &ring, &ids, &all, spec.rule, &SimConfig { seed: 1, ..SimConfig::default() });
                assert!(r.verdict.violations.is_empty(), "{}: {:?}", spec.name, r.verdict.violations);
                let c = r.counters;
                println!(
                    "| {} | {n} | {name} | {} | {} | {} | {} | {:.2} | {} |",
                    spec.name,
                    c.election_messages,
                    c.notification_messages,
                    c.messages,
                    r.bound,
                    c.messages as f64 / r.bound as f64,
                    r.ideal_time
                );
            }
        }
    }
}
