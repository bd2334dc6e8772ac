use pb::TopologyKind::{Complete, Graph, RingBidirectional, RingBidirectionalUnoriented, RingUnidirectional};
use ringleader_proto::v1 as pb;
use ringleader_tests::{
    TestController, assert_refused, elect_correct, election, election_on, live_and_simulated, rule_of, simulated,
    topology,
};
use tonic::Code;

/// The best of the initiators' ids under the election's rule.
fn best_initiator(e: &pb::Election) -> u64 {
    rule_of(e).winner(e.participants.iter().filter(|p| p.initiator).map(|p| p.id)).unwrap()
}

/// `complete-villadangos` LIVE on 8 local nodes of a complete network, with 1, 3 and all 8 initiators and both
/// rules: the best initiator leads (a passive node with a better id does not), every node agrees, and the count
/// is exactly 2n + 2k - 3, the same as SIMULATED with the same seed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn villadangos_live_on_a_complete_network() {
    let (ctl, mut client) = TestController::with_client(8).await;
    for (initiators, seed, winner) in
        [(1u32, 1u64, pb::Winner::Default), (3, 2, pb::Winner::Min), (0, 3, pb::Winner::Max)]
    {
        let req =
            pb::StartElectionRequest { initiators, seed, winner: winner as i32, ..election("complete-villadangos") };
        let (live, sim) = live_and_simulated(&mut client, req).await;
        assert_eq!(live.topology, pb::TopologyKind::Complete as i32);
        assert_eq!(live.leader.as_ref().unwrap().id, best_initiator(&live), "k = {}", live.k);
        let m = live.metrics.clone().unwrap();
        assert_eq!(m.messages, 2 * 8 + 2 * live.k as u64 - 3, "k = {}", live.k);
        assert_eq!(m.notification_messages, 7);
        let s = sim.metrics.unwrap();
        assert_eq!((s.messages, s.bytes), (m.messages, m.bytes), "LIVE and SIMULATED agree");
    }
    ctl.stop().await;
}

/// `echo-extinction` LIVE on 8 local nodes: on the seed's random connected graph, on explicit edges (a cycle with
/// chords) and on the complete network, with 2 initiators and with all: the best initiator leads, everyone agrees,
/// notification is exactly n - 1 (down the winning wave's tree), and the count is within 2mk + n - 1 for the
/// overlay's own m.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn echo_extinction_live_on_graphs() {
    let (ctl, mut client) = TestController::with_client(8).await;
    let cycle_with_chords = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 6), (6, 7), (7, 0), (0, 4), (2, 6)];
    for (topology, m) in [(None, 7 + 4), (topology(Graph, &cycle_with_chords), 10), (topology(Complete, &[]), 28)] {
        for (initiators, seed) in [(2u32, 5u64), (0, 6)] {
            let req = pb::StartElectionRequest {
                topology: topology.clone(),
                initiators,
                seed,
                ..election("echo-extinction")
            };
            let e = elect_correct(&mut client, req).await;
            assert_eq!(e.leader.as_ref().unwrap().id, best_initiator(&e), "{topology:?}");
            let metrics = e.metrics.unwrap();
            assert_eq!(metrics.notification_messages, 7, "{topology:?}");
            assert_eq!(metrics.bound, 2 * m * e.k as u64 + 7, "{topology:?}: the bound uses the overlay's m");
        }
    }
    ctl.stop().await;
}

/// Algorithms refuse topologies they cannot handle, naming `topology`: the complete-network algorithm on a ring,
/// echo with extinction on a unidirectional ring, Alternate on an unoriented ring; a GRAPH whose edges leave a
/// node out is refused naming `topology.edges`, and a COMPLETE network too large to build naming `size`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn impossible_topologies_are_refused() {
    let (ctl, mut client) = TestController::with_client(8).await;
    let cases = [
        (election_on("complete-villadangos", RingBidirectional, &[]), "topology"),
        (election_on("echo-extinction", RingUnidirectional, &[]), "topology"),
        (election_on("alternate", RingBidirectionalUnoriented, &[]), "topology"),
        (election_on("echo-extinction", Graph, &[(0, 1), (1, 2)]), "topology.edges"),
        (simulated("complete-villadangos", 5000), "size"),
    ];
    for (req, field) in cases {
        let status = client.start_election(req).await.unwrap_err();
        assert_refused(&status, Code::InvalidArgument, field);
    }
    ctl.stop().await;
}
