//! States per second of the checker on one core: AsFar on 6 nodes (one
//! election, every node initiating, ids falling in the sending direction,
//! links in any order) and kept bully on 4 nodes with one crash, with the
//! clockless state space and without (each stopped after `SECONDS`, default
//! 60). Prints one line each.

use std::time::Duration;

// The allocator of the `ringleader-check` binary, so the rates are its.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use ringleader_check::{Election, Faults, KeptCheck, Limits, check};
use ringleader_core::algo::catalogue;
use ringleader_core::topology::{Topology, TopologyKind};

fn main() {
    let seconds: u64 = std::env::args().nth(1).map_or(60, |s| s.parse().expect("SECONDS"));
    let spec = catalogue::find("as-far").expect("as-far");
    let ring = Topology::ring(TopologyKind::RingUni, 6, 0).expect("ring");
    let e = Election::new(spec, ring, vec![6, 5, 4, 3, 2, 1], (0..6).collect(), spec.rule);
    let r = check(e, Limits { fifo: false, ..Limits::default() });
    let rate = r.states as f64 / r.elapsed.as_secs_f64();
    let secs = r.elapsed.as_secs_f64();
    println!("as-far n=6: {} states in {secs:.2} s, {rate:.0} states/s, holds: {}", r.states, r.holds());
    let spec = catalogue::find("bully").expect("bully");
    let t = Topology::build(spec.default_topology(), 4, 7).expect("complete");
    let how = KeptCheck { faults: Faults { crashes: 1, ..Faults::NONE }, ..KeptCheck::default() };
    let e = Election::kept(spec, t, vec![1, 2, 3, 4], how.detector, how.faults);
    for subsume in [true, false] {
        let limits = Limits { fifo: false, timeout: Some(Duration::from_secs(seconds)), subsume, ..Limits::default() };
        let r = check(e.clone(), limits);
        let secs = r.elapsed.as_secs_f64();
        println!(
            "bully kept n=4, 1 crash{}: {} states ({} explored) in {secs:.1} s, {:.0} explored/s, complete: {}, broken: {}",
            if subsume { "" } else { ", no subsumption" },
            r.states,
            r.explored,
            r.explored as f64 / secs,
            r.complete,
            r.counterexamples.len()
        );
    }
}
