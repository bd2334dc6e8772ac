//! Load: hundreds of LIVE elections at once on one cluster.
//!
//! A test binary of its own: cargo runs test binaries one after another, so
//! this load (both cores busy for seconds) never runs beside the e2e tests
//! whose failure detectors have loopback timings (50 ms heartbeats, 200 ms
//! suspicion) and would see false suspicions under it.

use std::time::Instant;

use ringleader_proto::v1 as pb;
use ringleader_tests::{TestController, assert_correct, election, test_config};

/// 300 LIVE elections of four ring algorithms, all started at once on 16 embedded nodes (the nodes
/// multiplex them over their links), every one with a correct verdict; the records list them all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hundreds_of_concurrent_elections_on_16_nodes() {
    let mut config = test_config(16);
    config.controller.decision_timeout_ms = 120_000;
    config.controller.quiet_timeout_ms = 60_000;
    config.controller.max_running_elections = 512;
    let ctl = TestController::start_with(config).await;
    let algorithms = ["as-far", "stages", "controlled-distance", "alternate"];
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..300u64 {
        let mut client = ctl.client();
        let request = pb::StartElectionRequest { seed: i, ..election(algorithms[i as usize % algorithms.len()]) };
        tasks.spawn(async move { client.start_election(request).await });
    }
    let mut done = 0;
    while let Some(r) = tasks.join_next().await {
        let e = r.unwrap().unwrap().into_inner();
        assert_eq!(e.n, 16);
        assert_correct(&e);
        done += 1;
    }
    assert_eq!(done, 300);
    eprintln!("300 concurrent LIVE elections on 16 nodes: {:.1} s", started.elapsed().as_secs_f64());
    let listed = ctl.client().list_elections(pb::ListElectionsRequest::default()).await.unwrap().into_inner();
    assert_eq!(listed.elections.len(), 300);
    ctl.stop().await;
}
