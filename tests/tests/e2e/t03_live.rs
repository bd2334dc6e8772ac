use ringleader_proto::v1 as pb;
use ringleader_tests::{TestController, assert_correct, elect, elect_correct, election};

/// Run `algorithm` LIVE on all 8 nodes (random ids from a seed, every node an
/// initiator) and check the result; returns the leader's id.
async fn live_on_8(algorithm: &str) -> u64 {
    let ctl = TestController::start(8).await;
    let e = elect(&mut ctl.client(), pb::StartElectionRequest { seed: 11, ..election(algorithm) }).await;
    assert_eq!((e.n, e.k, e.mode), (8, 8, pb::Mode::Live as i32));
    assert_correct(&e);
    ctl.stop().await;
    e.leader.unwrap().id
}

/// All the Way on 8 live nodes elects the smallest id (1), all agree, no violations, within n^2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_the_way_elects_the_minimum_on_8_nodes() {
    assert_eq!(live_on_8("all-the-way").await, 1);
}

/// AsFar on 8 live nodes elects the largest id (8), all agree, no violations, within its bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn as_far_elects_the_maximum_on_8_nodes() {
    assert_eq!(live_on_8("as-far").await, 8);
}

/// Controlled Distance on 8 live nodes elects the largest id (8), all agree, no violations, within its bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controlled_distance_elects_the_maximum_on_8_nodes() {
    assert_eq!(live_on_8("controlled-distance").await, 8);
}

/// Stages on 8 live nodes elects the largest id (8), all agree, no violations, within its bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stages_elects_the_maximum_on_8_nodes() {
    assert_eq!(live_on_8("stages").await, 8);
}

/// Explicit ids, explicit initiators, a mirrored winner rule and an unoriented ring are honoured end to end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explicit_ids_initiators_rule_and_topology() {
    let (ctl, mut client) = TestController::with_client(6).await;
    let ids = vec![40, 10, 60, 30, 50, 20];
    for (algorithm, topology) in [
        ("as-far", pb::TopologyKind::RingUnidirectional),
        ("all-the-way", pb::TopologyKind::RingBidirectional),
        ("controlled-distance", pb::TopologyKind::RingBidirectionalUnoriented),
        ("stages", pb::TopologyKind::RingBidirectionalUnoriented),
    ] {
        let e = elect_correct(
            &mut client,
            pb::StartElectionRequest {
                ids: ids.clone(),
                initiator_ids: vec![30, 10],
                winner: pb::Winner::Min as i32,
                topology: Some(pb::Topology { kind: topology as i32, edges: vec![], ..Default::default() }),
                seed: 3,
                ..election(algorithm)
            },
        )
        .await;
        assert_eq!((e.k, e.topology, e.winner), (2, topology as i32, pb::Winner::Min as i32), "{algorithm}");
        assert_eq!(e.participants.iter().map(|p| p.id).collect::<Vec<_>>(), ids, "{algorithm}: ids in ring order");
        let initiators: Vec<u64> = e.participants.iter().filter(|p| p.initiator).map(|p| p.id).collect();
        assert_eq!(initiators, vec![10, 30], "{algorithm}");
        let leader = e.leader.unwrap();
        assert_eq!((leader.id, leader.position, leader.node.as_str()), (10, 1, "node-1"), "{algorithm}");
    }
    ctl.stop().await;
}

/// Elections of every algorithm run at once on the same 8 nodes without mixing up their messages.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_elections_share_the_nodes() {
    let ctl = TestController::start(8).await;
    let mut tasks = Vec::new();
    for (i, algorithm) in
        ["all-the-way", "as-far", "controlled-distance", "stages"].into_iter().cycle().take(8).enumerate()
    {
        let mut client = ctl.client();
        tasks.push(tokio::spawn(async move {
            let request =
                pb::StartElectionRequest { seed: i as u64, initiators: 1 + (i as u32 % 8), ..election(algorithm) };
            elect(&mut client, request).await
        }));
    }
    let mut ids = Vec::new();
    for t in tasks {
        let e = t.await.unwrap();
        assert_correct(&e);
        ids.push(e.election_id);
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 8, "distinct election ids");
    ctl.stop().await;
}
