use ringleader_proto::v1 as pb;
use ringleader_tests::{TestController, assert_refused, elect, election, election_on};
use tonic::Code;

/// An unknown algorithm is INVALID_ARGUMENT naming `algorithm` and listing every catalogue name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_algorithm_lists_the_catalogue() {
    let ctl = TestController::start(2).await;
    let err = ctl.client().start_election(election("paxos")).await.unwrap_err();
    assert_refused(&err, Code::InvalidArgument, "algorithm");
    for name in ["all-the-way", "as-far", "controlled-distance", "stages"] {
        assert!(err.message().contains(name), "{err:?}");
    }
    ctl.stop().await;
}

/// Every malformed or impossible StartElection is refused before anything runs, with the documented code and field.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_name_the_field() {
    use Code::{FailedPrecondition as Fp, InvalidArgument as Ia};
    let ctl = TestController::start(8).await;
    let sim = |algorithm: &str| pb::StartElectionRequest { mode: pb::Mode::Simulated as i32, ..election(algorithm) };
    let (uni, unoriented) = (pb::TopologyKind::RingUnidirectional, pb::TopologyKind::RingBidirectionalUnoriented);
    let cases: Vec<(&str, pb::StartElectionRequest, Code, &str)> = vec![
        ("no algorithm", election(""), Ia, "algorithm"),
        ("stages on a unidirectional ring", election_on("stages", uni, &[]), Ia, "topology"),
        ("controlled-distance on a unidirectional ring", election_on("controlled-distance", uni, &[]), Ia, "topology"),
        ("alternate on an unoriented ring", election_on("alternate", unoriented, &[]), Ia, "topology"),
        ("uni-stages on an unoriented ring", election_on("uni-stages", unoriented, &[]), Ia, "topology"),
        (
            "duplicate ids in a kept leadership (one-shot elections take them)",
            pb::StartElectionRequest { ids: vec![3, 1, 3], keep_leader: true, wait: false, ..election("bully") },
            Ia,
            "ids",
        ),
        (
            "ids and size disagree",
            pb::StartElectionRequest { ids: vec![1, 2, 3], size: 4, ..election("as-far") },
            Ia,
            "ids",
        ),
        ("a single id", pb::StartElectionRequest { ids: vec![5], ..election("as-far") }, Ia, "ids"),
        ("id 0", pb::StartElectionRequest { ids: vec![0, 1], ..election("as-far") }, Ia, "ids"),
        (
            "initiator not among the ids",
            pb::StartElectionRequest { ids: vec![1, 2, 3], initiator_ids: vec![4], ..election("as-far") },
            Ia,
            "initiator_ids",
        ),
        (
            "initiator listed twice",
            pb::StartElectionRequest { ids: vec![1, 2, 3], initiator_ids: vec![2, 2], ..election("as-far") },
            Ia,
            "initiator_ids",
        ),
        (
            "more initiators than positions",
            pb::StartElectionRequest { size: 4, initiators: 5, ..election("as-far") },
            Ia,
            "initiators",
        ),
        ("size 1", pb::StartElectionRequest { size: 1, ..election("as-far") }, Ia, "size"),
        ("LIVE larger than the cluster", pb::StartElectionRequest { size: 9, ..election("as-far") }, Fp, "size"),
        (
            "LIVE ids more than the nodes",
            pb::StartElectionRequest { ids: (1..=9).collect(), ..election("as-far") },
            Fp,
            "size",
        ),
        (
            "non-FIFO links for a FIFO algorithm",
            pb::StartElectionRequest {
                simulation: Some(pb::SimulationOptions { non_fifo: true, ..Default::default() }),
                ..sim("stages")
            },
            Fp,
            "simulation.non_fifo",
        ),
        (
            "simulation options in LIVE mode",
            pb::StartElectionRequest {
                simulation: Some(pb::SimulationOptions { unit_delay: true, ..Default::default() }),
                ..election("as-far")
            },
            Ia,
            "simulation",
        ),
        ("SIMULATED above the size cap", pb::StartElectionRequest { size: 1_000_001, ..sim("as-far") }, Ia, "size"),
        ("unknown id_order", pb::StartElectionRequest { id_order: 42, ..election("as-far") }, Ia, "id_order"),
        ("unknown mode", pb::StartElectionRequest { mode: 42, ..election("as-far") }, Ia, "mode"),
        ("unknown winner", pb::StartElectionRequest { winner: 42, ..election("as-far") }, Ia, "winner"),
        (
            "unknown topology",
            pb::StartElectionRequest {
                topology: Some(pb::Topology { kind: 42, edges: vec![], ..Default::default() }),
                ..election("as-far")
            },
            Ia,
            "topology.kind",
        ),
    ];
    let mut client = ctl.client();
    for (what, request, code, field) in cases {
        let err = client.start_election(request).await.expect_err(what);
        assert_eq!((err.code(), err.message().split(':').next()), (code, Some(field)), "{what}: {err:?}");
        assert_refused(&err, code, field);
    }
    let listed = client.list_elections(pb::ListElectionsRequest::default()).await.unwrap().into_inner();
    assert!(listed.elections.is_empty(), "refused requests must not be recorded");
    ctl.stop().await;
}

/// Without any node, a LIVE election is FAILED_PRECONDITION naming `size`, while SIMULATED ones still run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_cluster_only_simulates() {
    let (ctl, mut client) = TestController::with_client(0).await;
    let err = client.start_election(election("as-far")).await.unwrap_err();
    assert_refused(&err, Code::FailedPrecondition, "size");
    let e =
        elect(&mut client, pb::StartElectionRequest { mode: pb::Mode::Simulated as i32, ..election("as-far") }).await;
    assert_eq!((e.state, e.n), (pb::ElectionState::Finished as i32, 8));
    ctl.stop().await;
}

/// Unknown election ids are NOT_FOUND; an empty one is INVALID_ARGUMENT naming `election_id`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_elections_are_not_found() {
    let (ctl, mut client) = TestController::with_client(2).await;
    let err = client.get_election(pb::GetElectionRequest { election_id: "nope".into() }).await.unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    let err = client.get_election(pb::GetElectionRequest::default()).await.unwrap_err();
    assert_refused(&err, Code::InvalidArgument, "election_id");
    let err = client.get_leader(pb::GetLeaderRequest { election_id: "nope".into() }).await.unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    let err = client.get_leader(pb::GetLeaderRequest::default()).await.unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "no election finished yet: {err:?}");
    let err = client.watch_election(pb::WatchElectionRequest { election_id: "nope".into() }).await.unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    let err = client.list_elections(pb::ListElectionsRequest { algorithm: "paxos".into() }).await.unwrap_err();
    assert_refused(&err, Code::InvalidArgument, "algorithm");
    ctl.stop().await;
}
