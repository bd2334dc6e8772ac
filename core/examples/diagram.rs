//! Draw the space-time diagram of one simulated election as SVG.
//!
//! `cargo run -p ringleader-core --example diagram -- [ALGORITHM] [N] [OUT.svg] [--labels]`
//! (defaults: as-far, 8 nodes, random ids, every node initiating, standard output;
//! `--labels`: each arrow says what its message carries, e.g. `id 6`).

use ringleader_core::algo::{Rule, catalogue};
use ringleader_core::diagram::{Diagram, svg};
use ringleader_core::sim::{self, SimConfig};
use ringleader_core::topology::{IdOrder, Topology};

fn main() {
    let all: Vec<String> = std::env::args().skip(1).collect();
    let labels = all.iter().any(|a| a == "--labels");
    let args: Vec<String> = all.into_iter().filter(|a| a != "--labels").collect();
    let algorithm = args.first().map_or("as-far", String::as_str);
    let n: u32 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(8);
    let Some(spec) = catalogue::find(algorithm) else {
        eprintln!("unknown algorithm `{algorithm}`; known: {}", catalogue::names());
        std::process::exit(2);
    };
    let topo = match Topology::build(spec.default_topology(), n, 1) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{algorithm} on {n} nodes: {e}");
            std::process::exit(2);
        }
    };
    let ids = IdOrder::Random(1).arrange(n).expect("ids");
    let initiators: Vec<u32> = (0..n).collect();
    let cfg = SimConfig { log_arrows: true, ..SimConfig::default() };
    let r = sim::run(spec, &topo, &ids, &initiators, Rule::Max, &cfg);
    let leader = r.verdict.leader;
    let d = Diagram {
        title: format!("{algorithm}, n = {n}, {} messages", r.counters.messages),
        nodes: ids.iter().enumerate().map(|(p, id)| format!("{p}: id {id}")).collect(),
        arrows: &r.arrows,
        leader,
        time_unit: "virtual time",
        marks: &[],
        ring: topo.kind().is_ring(),
        labels,
    };
    let out = svg(&d);
    match args.get(2) {
        Some(path) => std::fs::write(path, out).expect("write the SVG"),
        None => print!("{out}"),
    }
}
