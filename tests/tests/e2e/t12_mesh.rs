use ringleader_core::algo::mesh_corners;
use ringleader_proto::v1 as pb;
use ringleader_tests::{TestController, assert_correct, assert_refused, election, rule_of};
use tonic::Code;

fn mesh(rows: u32, cols: u32) -> Option<pb::Topology> {
    Some(pb::Topology { kind: pb::TopologyKind::Mesh as i32, rows, cols, ..Default::default() })
}

/// `mesh-corners` LIVE on 12 local nodes, as an explicit 3 x 4 mesh and as the most square mesh of `size: 12`
/// (with and without naming MESH), with all, one and five initiators and both rules: the best of the four corners
/// (positions 0, 3, 8, 11) leads, every node decides for it, and the count is exactly the schedule-free formula
/// of `mesh_corners::message_count`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mesh_corners_live_on_a_3_by_4_mesh() {
    let (ctl, mut client) = TestController::with_client(12).await;
    let shapes = [(mesh(3, 4), 0), (mesh(0, 0), 12), (None, 12)];
    let runs = [(0u32, 1u64, pb::Winner::Default), (1, 2, pb::Winner::Min), (5, 3, pb::Winner::Max)];
    for (topology, size) in shapes {
        for (initiators, seed, winner) in runs {
            let req = pb::StartElectionRequest {
                topology: topology.clone(),
                size,
                initiators,
                seed,
                winner: winner as i32,
                ..election("mesh-corners")
            };
            let e = client.start_election(req).await.unwrap().into_inner();
            let ctx = format!("{topology:?} size {size} initiators {initiators} {winner:?}");
            assert_correct(&e);
            assert_eq!((e.n, e.topology), (12, pb::TopologyKind::Mesh as i32), "{ctx}");
            let ids: Vec<u64> = e.participants.iter().map(|p| p.id).collect();
            let rule = rule_of(&e);
            let best = rule.winner([0, 3, 8, 11].map(|p| ids[p])).unwrap();
            let leader = e.leader.as_ref().unwrap();
            assert_eq!(leader.id, best, "{ctx}: the best corner leads");
            assert!([0, 3, 8, 11].contains(&leader.position), "{ctx}: at a corner");
            assert!(e.participants.iter().all(|p| p.leader_id == best), "{ctx}: every node agrees");
            let m = e.metrics.unwrap();
            assert_eq!(m.messages, mesh_corners::message_count(3, 4, &ids, e.k as u64, rule), "{ctx}");
            assert_eq!(m.messages_by_kind.get("notify"), Some(&(2 * 17 - 12 + 1)), "{ctx}: 2m - n + 1");
        }
    }
    ctl.stop().await;
}

/// Mesh requests that cannot work are refused with INVALID_ARGUMENT naming the field: `mesh-corners` on a ring
/// (`topology`), a mesh of one row (`topology.rows`), a prime size with no shape given (`size`), and rows that do
/// not divide the size (`topology.rows`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_meshes_are_refused() {
    let (ctl, mut client) = TestController::with_client(12).await;
    let ring = Some(pb::Topology { kind: pb::TopologyKind::RingBidirectional as i32, ..Default::default() });
    let cases = [
        (pb::StartElectionRequest { topology: ring, ..election("mesh-corners") }, "topology"),
        (pb::StartElectionRequest { topology: mesh(1, 0), ..election("mesh-corners") }, "topology.rows"),
        (pb::StartElectionRequest { topology: mesh(1, 12), ..election("mesh-corners") }, "topology.rows"),
        (pb::StartElectionRequest { topology: mesh(0, 0), size: 7, ..election("mesh-corners") }, "size"),
        (pb::StartElectionRequest { size: 7, ..election("mesh-corners") }, "size"),
        (pb::StartElectionRequest { topology: mesh(5, 0), size: 12, ..election("mesh-corners") }, "topology.rows"),
    ];
    for (req, field) in cases {
        let err = client.start_election(req).await.unwrap_err();
        assert_refused(&err, Code::InvalidArgument, field);
    }
    ctl.stop().await;
}
