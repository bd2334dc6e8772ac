use ringleader_proto::v1 as pb;
use ringleader_tests::TestController;

/// ListAlgorithms shows every catalogue entry in order with its winner rule, candidates, assumptions and bound; the
/// classics have their literature's rule.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_algorithms_shows_the_catalogue() {
    let ctl = TestController::start(2).await;
    let algos = ctl.client().list_algorithms(pb::ListAlgorithmsRequest {}).await.unwrap().into_inner().algorithms;
    let summary: Vec<(&str, pb::Winner)> =
        algos.iter().map(|a| (a.name.as_str(), pb::Winner::try_from(a.winner).unwrap())).collect();
    let names: Vec<&str> = ringleader_core::algo::catalogue::CATALOGUE.iter().map(|s| s.name).collect();
    assert_eq!(summary.iter().map(|(n, _)| *n).collect::<Vec<_>>(), names);
    for expected in [
        ("all-the-way", pb::Winner::Min),
        ("as-far", pb::Winner::Max),
        ("controlled-distance", pb::Winner::Max),
        ("stages", pb::Winner::Max),
        ("tree-saturation", pb::Winner::Min),
    ] {
        assert!(summary.contains(&expected), "{expected:?}");
    }
    for a in &algos {
        let spec = ringleader_tests::spec(&a.name);
        assert_eq!(a.bound_formula, spec.bound_formula);
        assert_eq!(a.topologies.len(), spec.topologies.len(), "{}", a.name);
        assert!(a.topologies.contains(&a.default_topology), "{}", a.name);
        assert_eq!(a.assumptions.as_ref().unwrap().fifo, spec.assumptions.fifo, "{}", a.name);
        assert!(!a.title.is_empty() && !a.source.is_empty() && !a.description.is_empty(), "{}", a.name);
        assert_eq!(a.candidates, spec.candidates.describe(), "{}", a.name);
    }
    let stages = algos.iter().find(|a| a.name == "stages").unwrap();
    assert!(!stages.topologies.contains(&(pb::TopologyKind::RingUnidirectional as i32)));
    // Alternate needs a common sense of direction: only the oriented bidirectional ring.
    let alternate = algos.iter().find(|a| a.name == "alternate").unwrap();
    assert_eq!(alternate.topologies, vec![pb::TopologyKind::RingBidirectional as i32]);
    assert!(alternate.assumptions.as_ref().unwrap().oriented);
    ctl.stop().await;
}

/// GetCluster reports every embedded node by name and loopback address, reachable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_cluster_reports_every_local_node() {
    let ctl = TestController::start(8).await;
    let nodes = ctl.client().get_cluster(pb::GetClusterRequest {}).await.unwrap().into_inner().nodes;
    assert_eq!(nodes.len(), 8);
    for (i, n) in nodes.iter().enumerate() {
        assert_eq!(n.name, format!("node-{i}"));
        assert!(n.address.starts_with("http://127.0.0.1:"), "{n:?}");
        assert!(n.reachable && n.error.is_empty(), "{n:?}");
    }
    ctl.stop().await;
}
