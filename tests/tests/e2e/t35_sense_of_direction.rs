use pb::TopologyKind::{CompleteChordal, Hypercube, Torus};
use ringleader_proto::v1 as pb;
use ringleader_tests::{TestController, assert_refused, election, live_and_simulated, rule_of};
use tonic::Code;

fn on(kind: pb::TopologyKind, size: u32, algorithm: &str) -> pb::StartElectionRequest {
    pb::StartElectionRequest {
        topology: Some(pb::Topology { kind: kind as i32, ..Default::default() }),
        size,
        ..election(algorithm)
    }
}

/// The new labelled overlays LIVE on 9 local nodes and SIMULATED with the same seed: `hyper-elect` on the
/// 8-node HYPERCUBE (the ids alone fix its count, so LIVE and SIMULATED send the same messages and bytes, between
/// 3n - 3 and Santoro's 7n - log^2 n - 3 log n - 7), `chordal-capture` on COMPLETE_CHORDAL (exactly 3n - 3 with one
/// initiator both ways; within 3n + 2k - 5 with all), and `echo-extinction` on the 3 x 3 TORUS (one initiator:
/// the same count both ways).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn labelled_overlays_live_and_simulated() {
    let (ctl, mut client) = TestController::with_client(9).await;
    for (seed, initiators, winner) in
        [(1u64, 0u32, pb::Winner::Default), (2, 1, pb::Winner::Min), (3, 3, pb::Winner::Max)]
    {
        let req =
            pb::StartElectionRequest { seed, initiators, winner: winner as i32, ..on(Hypercube, 8, "hyper-elect") };
        let (live, sim) = live_and_simulated(&mut client, req).await;
        assert_eq!((live.n, live.topology), (8, Hypercube as i32));
        let best = rule_of(&live).winner(live.participants.iter().map(|p| p.id)).unwrap();
        assert_eq!(live.leader.as_ref().unwrap().id, best, "seed {seed}: the best id of all leads");
        let (m, s) = (live.metrics.unwrap(), sim.metrics.unwrap());
        assert!((21..=31).contains(&m.messages), "seed {seed}: {} messages", m.messages);
        assert_eq!((m.messages, m.bytes), (s.messages, s.bytes), "seed {seed}: LIVE and SIMULATED agree");
        assert_eq!(m.messages_by_kind.get("notify"), Some(&7), "seed {seed}: a binomial tree");
    }
    for (seed, initiators) in [(4u64, 1u32), (5, 0)] {
        let req = pb::StartElectionRequest { seed, initiators, ..on(CompleteChordal, 9, "chordal-capture") };
        let (live, sim) = live_and_simulated(&mut client, req).await;
        assert_eq!((live.n, live.topology), (9, CompleteChordal as i32));
        let (m, s) = (live.metrics.unwrap(), sim.metrics.unwrap());
        if live.k == 1 {
            assert_eq!((m.messages, s.messages), (24, 24), "one initiator: exactly 3n - 3");
        }
        for x in [&m, &s] {
            let refused = x.messages_by_kind["chord_capture"] - 8;
            assert_eq!(x.messages, 3 * 8 + 2 * refused, "3(n - 1) + 2R");
            assert!(refused < u64::from(live.k), "R < k");
        }
    }
    let req = pb::StartElectionRequest { seed: 6, initiators: 1, ..on(Torus, 9, "echo-extinction") };
    let (live, sim) = live_and_simulated(&mut client, req).await;
    assert_eq!((live.n, live.topology), (9, Torus as i32));
    let (m, s) = (live.metrics.unwrap(), sim.metrics.unwrap());
    assert_eq!(m.messages, s.messages, "one wave: LIVE and SIMULATED agree");
    assert_eq!(m.messages, 2 * 18 + 8, "one wave: 2m + n - 1 on the 18 links of the torus");
    ctl.stop().await;
}

/// Labelled overlays that cannot be built are refused with INVALID_ARGUMENT on `size`: a hypercube of 6 nodes
/// (not a power of two) and a torus of 8 (no shape of at least 3 x 3).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn impossible_labelled_overlays_are_refused() {
    let (ctl, mut client) = TestController::with_client(2).await;
    let sim = |r: pb::StartElectionRequest| pb::StartElectionRequest { mode: pb::Mode::Simulated as i32, ..r };
    let e = client.start_election(sim(on(Hypercube, 6, "hyper-elect"))).await.unwrap_err();
    assert_refused(&e, Code::InvalidArgument, "size");
    assert!(e.message().contains("2^d"), "{e:?}");
    let e = client.start_election(sim(on(Torus, 8, "echo-extinction"))).await.unwrap_err();
    assert_refused(&e, Code::InvalidArgument, "size");
    ctl.stop().await;
}
