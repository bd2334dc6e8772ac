//! The idle-round fast-forward, measured: TimeSlice and VariableSpeeds on
//! large rings with large ids, where a run lasts billions of rounds but
//! sends only a few messages, simulated in well under a second because a
//! node sets one timer for the round it acts in and the simulator jumps
//! over the empty rounds in between:
//! `cargo run --release -p ringleader-core --example time_slice [n] [largest id]`.

use std::time::Instant;

use ringleader_core::algo::catalogue;
use ringleader_core::algo::time_slice::ROUND_MS;
use ringleader_core::sim::{self, SimConfig};
use ringleader_core::topology::{IdOrder, Topology};

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(1_000);
    let top: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    // The n largest ids up to `top`, shuffled: the smallest is top - n + 1,
    // so the leader's slice starts after (top - n)·n rounds.
    let ranks = IdOrder::Random(7).arrange(n).expect("ids");
    let ids: Vec<u64> = ranks.iter().map(|&r| top - u64::from(n) + r).collect();
    let all: Vec<u32> = (0..n).collect();
    let spec = catalogue::find("time-slice").expect("time-slice");
    let ring = Topology::build(spec.default_topology(), n, 1).expect("ring");
    let t = Instant::now();
    let r = sim::run(spec, &ring, &ids, &all, spec.rule, &SimConfig::default());
    let s = t.elapsed().as_secs_f64();
    println!(
        "time-slice n={n} ids {}..={top}: {} messages ({} election + {} notification), {} rounds of virtual time, \
         simulated in {s:.3} s; violations {:?}",
        top - u64::from(n) + 1,
        r.counters.messages,
        r.counters.election_messages,
        r.counters.notification_messages,
        r.end_time / ROUND_MS,
        r.verdict.violations
    );
    // VariableSpeeds' hold is 2^id rounds: ids 1..=n, the largest crawling 2^n rounds a link.
    let spec = catalogue::find("variable-speeds").expect("variable-speeds");
    let small = n.min(40);
    let ids = IdOrder::Random(7).arrange(small).expect("ids");
    let all: Vec<u32> = (0..small).collect();
    let ring = Topology::build(spec.default_topology(), small, 1).expect("ring");
    let t = Instant::now();
    let r = sim::run(spec, &ring, &ids, &all, spec.rule, &SimConfig { unit_delay: true, ..SimConfig::default() });
    let s = t.elapsed().as_secs_f64();
    println!(
        "variable-speeds n={small} ids 1..={small}: {} messages ({} election + {} notification), {} rounds of \
         virtual time, simulated in {s:.3} s; violations {:?}",
        r.counters.messages,
        r.counters.election_messages,
        r.counters.notification_messages,
        r.end_time / ROUND_MS,
        r.verdict.violations
    );
}
