use std::time::{Duration, Instant};

use ringleader_proto::v1 as pb;
use ringleader_tests::{TestController, assert_correct, elect, elect_correct, election, wait_for};

/// GetElection returns what StartElection returned; ListElections lists most recent first, filters by
/// algorithm and omits participants.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elections_are_recorded() {
    let (ctl, mut client) = TestController::with_client(4).await;
    let a = elect(&mut client, election("as-far")).await;
    let b = elect(&mut client, election("stages")).await;
    let c =
        elect(&mut client, pb::StartElectionRequest { mode: pb::Mode::Simulated as i32, ..election("as-far") }).await;
    for e in [&a, &b, &c] {
        assert_correct(e);
        let got = client.get_election(pb::GetElectionRequest { election_id: e.election_id.clone() }).await.unwrap();
        assert_eq!(&got.into_inner(), e);
    }
    let all = client.list_elections(pb::ListElectionsRequest::default()).await.unwrap().into_inner().elections;
    let ids: Vec<&str> = all.iter().map(|e| e.election_id.as_str()).collect();
    assert_eq!(ids, vec![c.election_id.as_str(), b.election_id.as_str(), a.election_id.as_str()]);
    assert!(all.iter().all(|e| e.participants.is_empty() && e.metrics.is_some()));
    let as_far =
        client.list_elections(pb::ListElectionsRequest { algorithm: "as-far".into() }).await.unwrap().into_inner();
    let ids: Vec<&str> = as_far.elections.iter().map(|e| e.election_id.as_str()).collect();
    assert_eq!(ids, vec![c.election_id.as_str(), a.election_id.as_str()]);
    ctl.stop().await;
}

/// GetLeader names the leader of a given election, and by default that of the most recently finished one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_leader_by_id_and_latest() {
    let (ctl, mut client) = TestController::with_client(5).await;
    let max = elect_correct(&mut client, election("as-far")).await;
    let min = elect_correct(&mut client, election("all-the-way")).await;
    let latest = client.get_leader(pb::GetLeaderRequest::default()).await.unwrap().into_inner();
    assert_eq!(
        (latest.election_id.as_str(), latest.algorithm.as_str(), latest.agreed, latest.leader.map(|l| l.id)),
        (min.election_id.as_str(), "all-the-way", true, Some(1))
    );
    let by_id =
        client.get_leader(pb::GetLeaderRequest { election_id: max.election_id.clone() }).await.unwrap().into_inner();
    assert_eq!((by_id.leader, by_id.agreed), (max.leader, true));
    ctl.stop().await;
}

/// With wait=false StartElection answers at once (PENDING or RUNNING) and the election still finishes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_without_waiting() {
    let (ctl, mut client) = TestController::with_client(8).await;
    let e = elect(&mut client, pb::StartElectionRequest { wait: false, ..election("controlled-distance") }).await;
    assert!([pb::ElectionState::Pending as i32, pb::ElectionState::Running as i32].contains(&e.state), "{e:?}");
    let request = pb::GetElectionRequest { election_id: e.election_id.clone() };
    let ended = [pb::ElectionState::Finished as i32, pb::ElectionState::Failed as i32];
    let finished = wait_for(
        "not finished within 30 s",
        Instant::now() + Duration::from_secs(30),
        Duration::from_millis(20),
        || {
            let (mut client, request) = (client.clone(), request.clone());
            async move {
                let got = client.get_election(request).await.unwrap().into_inner();
                if ended.contains(&got.state) { Ok(got) } else { Err(got) }
            }
        },
    )
    .await;
    assert_correct(&finished);
    ctl.stop().await;
}
