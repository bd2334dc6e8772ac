//! What saving every ended election before answering costs: small SIMULATED
//! elections (AsFar, 16 positions) answered per second by an in-process
//! controller without a history, and with `history_path` on the disk under
//! `target/` (each answer waits for its record's commit; records queued
//! together share one transaction). One caller at a time, then 32 at once,
//! alternating the two configurations in 3 rounds, all in one run. Nothing
//! is asserted; every figure is measured here.
//!
//! `cargo bench -p ringleader-tests --bench history [-- ELECTIONS]` (default 400 per measurement).

use std::time::Instant;

use ringleader_proto::v1 as pb;
use ringleader_tests::{TestController, simulated, test_config};

/// Elections per second: `total` elections by `callers` concurrent callers.
async fn rate(ctl: &TestController, total: usize, callers: usize) -> f64 {
    let started = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..callers {
        let mut client = ctl.client();
        let share = total / callers + usize::from(c < total % callers);
        tasks.push(tokio::spawn(async move {
            for _ in 0..share {
                let e = client.start_election(simulated("as-far", 16)).await.expect("election").into_inner();
                assert_eq!(e.state, pb::ElectionState::Finished as i32, "{e:?}");
            }
        }));
    }
    for t in tasks {
        t.await.expect("caller");
    }
    total as f64 / started.elapsed().as_secs_f64()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let total: usize = std::env::args().filter_map(|a| a.parse().ok()).next().unwrap_or(400);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench-history");
    let _ = std::fs::remove_dir_all(&dir);
    let mut plain = test_config(0);
    plain.controller.max_elections = 100_000;
    let mut saved = plain.clone();
    saved.controller.history_path = dir.join("history.redb").display().to_string();
    let (mut without, mut with) = (vec![Vec::new(); 2], vec![Vec::new(); 2]);
    for round in 0..3 {
        for (config, out) in [(&plain, &mut without), (&saved, &mut with)] {
            let ctl = TestController::start_with(config.clone()).await;
            out[0].push(rate(&ctl, total, 1).await);
            out[1].push(rate(&ctl, total, 32).await);
            ctl.stop().await;
        }
        eprintln!("round {} done", round + 1);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!("elections answered per second (median of 3 rounds, {total} elections each):");
    for (i, callers) in [1, 32].into_iter().enumerate() {
        let (a, b) = (median(&mut without[i]), median(&mut with[i]));
        println!("  {callers:>2} caller(s): without history {a:8.0}/s, with history {b:8.0}/s, ratio {:.2}", b / a);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
