//! Peak resident memory per state of one check, with the system allocator
//! (the controller's; the `ringleader-check` binary uses mimalloc): the
//! figures `CheckAlgorithm` reserves its memory by (controller/src/check.rs,
//! `BFS_BYTES_PER_STATE`, `DFS_BYTES_PER_STATE`). Prints one line.
//!
//! ```sh
//! cargo run --release -p ringleader-check --example rss -- ALGORITHM N bfs|dfs SECONDS CASE [MAX_MEMORY_MIB]
//! # CASE: crash (kept, a crash), recover (kept, a crash that may recover), crashloss (kept, a
//! # crash and a loss, 10 ms messages), split (kept, positions {1} / the rest partitioned for up to
//! # 300 ms, 10 ms messages, punctual timers) or oneshot (every node initiating)
//! cargo run --release -p ringleader-check --example rss -- bully 4 bfs 30 crash
//! ```

use std::time::Duration;

use ringleader_check::{Election, Faults, Limits, check};
use ringleader_core::algo::catalogue;
use ringleader_core::algo::detector::DetectorConfig;
use ringleader_core::topology::Topology;

/// A field of /proc/self/status in KiB (`VmRSS`, `VmHWM`).
fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status.lines().find(|l| l.starts_with(field)).expect("the field");
    line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect("a number")
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, algorithm, n, search, seconds, case, rest @ ..] = args.as_slice() else {
        panic!("usage: rss ALGORITHM N bfs|dfs SECONDS CASE [MAX_MEMORY_MIB]");
    };
    let spec = catalogue::find(algorithm).expect("an algorithm of the catalogue");
    let n: u32 = n.parse().expect("N");
    let topology = Topology::build(spec.default_topology(), n, 7).expect("a topology");
    let ids: Vec<u64> = (1..=u64::from(n)).collect();
    let kept = |faults| Election::kept(spec, topology.clone(), ids.clone(), DetectorConfig::LOOPBACK, faults);
    let election = match case.as_str() {
        "crash" => kept(Faults { crashes: 1, ..Faults::NONE }),
        "recover" => kept(Faults { crashes: 1, recover: true, ..Faults::NONE }),
        "crashloss" => Election { delay_ms: 10, ..kept(Faults { crashes: 1, losses: 1, ..Faults::NONE }) },
        "split" => Election {
            delay_ms: 10,
            punctual_timers: true,
            partition_ms: Some(300),
            partition_side: Some(0b10),
            ..kept(Faults { partitions: 1, ..Faults::NONE })
        },
        "oneshot" => Election::new(spec, topology.clone(), ids.clone(), (0..n).collect(), spec.rule),
        other => panic!("unknown case {other}"),
    };
    let limits = Limits {
        fifo: spec.assumptions.fifo,
        depth_first: search == "dfs",
        timeout: Some(Duration::from_secs(seconds.parse().expect("SECONDS"))),
        max_memory_mib: rest.first().map_or(0, |m| m.parse().expect("MAX_MEMORY_MIB")),
        ..Limits::default()
    };
    let before = status_kib("VmRSS:");
    let r = check(election, limits);
    let peak = status_kib("VmHWM:");
    println!(
        "{algorithm} n={n} {case} {search}: {} states ({} explored), complete {}, limit {:?}, {:.1} s; RSS {} MiB \
         before, peak {} MiB: {:.0} B a state",
        r.states,
        r.explored,
        r.complete,
        r.limit,
        r.elapsed.as_secs_f64(),
        before / 1024,
        peak / 1024,
        (peak - before) as f64 * 1024.0 / r.states as f64
    );
}
