use ringleader_core::spec::{Candidates, Provision};
use ringleader_proto::v1 as pb;
use ringleader_tests::{TestController, assert_correct, election};

/// Every catalogue algorithm but `lease` (it needs an etcd) runs LIVE on 64 local nodes (its default topology, random ids, all initiating) and
/// elects the extremum (of the corners, on a mesh; Elect_root the root its run builds) with every node agreeing and the count within the bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_algorithm_live_on_64_nodes() {
    let (ctl, mut client) = TestController::with_client(64).await;
    // `lease` needs an etcd (tests/tests/cli/t18_lease_etcd.rs runs it on one).
    for spec in ringleader_core::algo::catalogue::CATALOGUE.iter().filter(|s| s.live_provision == Provision::Nodes) {
        let e = client
            .start_election(pb::StartElectionRequest { seed: 7, ..election(spec.name) })
            .await
            .unwrap()
            .into_inner();
        assert_correct(&e);
        assert_eq!(e.n, 64, "{}", spec.name);
        // A mesh elects among its corners; Elect_root elects whichever root the run builds.
        if !matches!(
            spec.candidates,
            Candidates::MeshCorners | Candidates::Root | Candidates::Drawn | Candidates::Captor | Candidates::Survivor
        ) {
            // Every node initiates, so every node is a candidate.
            let expected = if spec.rule == ringleader_core::algo::Rule::Max { 64 } else { 1 };
            assert_eq!(e.leader.unwrap().id, expected, "{}", spec.name);
        }
    }
    ctl.stop().await;
}
