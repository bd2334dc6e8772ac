use pb::TopologyKind::{RingBidirectional, Tree};
use ringleader_proto::v1 as pb;
use ringleader_tests::{
    TestController, assert_correct, assert_refused, elect_correct, election, election_on, topology,
};

fn tree(edges: &[(u32, u32)]) -> Option<pb::Topology> {
    topology(Tree, edges)
}

/// Tree saturation on 8 LIVE nodes (a random tree from the seed, and an explicit path) elects the minimum with
/// exactly 3n + k - 4 messages, the same count as SIMULATED, whatever the ids and initiators.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tree_saturation_live_and_simulated() {
    let (ctl, mut client) = TestController::with_client(8).await;
    let path: Vec<(u32, u32)> = (0..7).map(|i| (i, i + 1)).collect();
    for (topology, initiators, seed) in [(tree(&[]), 0u32, 3u64), (tree(&path), 2, 4), (tree(&[]), 1, 5)] {
        for mode in [pb::Mode::Live, pb::Mode::Simulated] {
            let req = pb::StartElectionRequest {
                topology: topology.clone(),
                initiators,
                seed,
                mode: mode as i32,
                ..election("tree-saturation")
            };
            let e = elect_correct(&mut client, req).await;
            assert_eq!(e.leader.as_ref().unwrap().id, 1, "elects the minimum");
            let (n, k) = (e.n as u64, e.k as u64);
            assert_eq!(e.metrics.unwrap().messages, 3 * n + k - 4, "{mode:?} seed {seed}");
        }
    }
    ctl.stop().await;
}

/// Edges that do not make a tree, edges on a ring, and ring algorithms on a tree are refused naming the field.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_trees_are_refused() {
    let (ctl, mut client) = TestController::with_client(4).await;
    let cases = [
        (election_on("tree-saturation", Tree, &[(0, 1), (1, 2)]), "topology.edges"),
        (election_on("tree-saturation", Tree, &[(0, 1), (1, 2), (2, 0)]), "topology.edges"),
        (election_on("tree-saturation", Tree, &[(0, 1), (1, 2), (2, 7)]), "topology.edges"),
        (election_on("stages", RingBidirectional, &[(0, 1)]), "topology.edges"),
        (election_on("as-far", Tree, &[]), "topology"),
        (pb::StartElectionRequest { topology: None, ..election("tree-saturation") }, ""),
    ];
    for (req, field) in cases {
        let r = client.start_election(req).await;
        if field.is_empty() {
            assert_correct(&r.unwrap().into_inner()); // the default topology of tree-saturation is a tree
        } else {
            assert_refused(&r.unwrap_err(), tonic::Code::InvalidArgument, field);
        }
    }
    ctl.stop().await;
}
