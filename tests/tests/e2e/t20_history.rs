//! Election history across a controller restart.

use std::time::Duration;

use ringleader_proto::v1 as pb;
use ringleader_tests::{TestController, assert_correct, election, kept, leader_until, test_config};

/// With `history_path` set, a controller that stops and starts again on the same file lists the same
/// elections, in the same order, with the same verdicts, leaders and metrics; the kept leadership that
/// was running when it stopped was ended by the shutdown (FINISHED, with a note saying so) and comes
/// back so; GetElection finds a restored record and new elections are added next to the old ones.
/// (A record in flight when a controller dies comes back FAILED: history.rs's unit tests.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_keeps_list_elections() {
    let dir = std::env::temp_dir().join(format!("ringleader-history-e2e-{}", std::process::id()));
    let mut config = test_config(4);
    config.controller.history_path = dir.join("history.redb").display().to_string();

    let ctl = TestController::start_with(config.clone()).await;
    let mut client = ctl.client();
    assert_correct(&client.start_election(election("stages")).await.unwrap().into_inner());
    let simulated = pb::StartElectionRequest { mode: pb::Mode::Simulated as i32, size: 16, ..election("as-far") };
    assert_correct(&client.start_election(simulated).await.unwrap().into_inner());
    let k = client.start_election(kept("bully")).await.unwrap().into_inner();
    leader_until(&mut client, &k.election_id, Duration::from_secs(20), |l| l.agreed).await;
    let before = client.list_elections(pb::ListElectionsRequest::default()).await.unwrap().into_inner().elections;
    assert_eq!(before.len(), 3);
    ctl.stop().await;

    let ctl = TestController::start_with(config.clone()).await;
    let mut client = ctl.client();
    let after = client.list_elections(pb::ListElectionsRequest::default()).await.unwrap().into_inner().elections;
    let ids = |l: &[pb::Election]| l.iter().map(|e| e.election_id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&after), ids(&before), "same elections, same order (most recent first)");
    for (a, b) in after.iter().zip(&before).filter(|(a, _)| a.election_id != k.election_id) {
        assert_eq!(a, b, "a finished election comes back as it was");
    }
    let kept_after = after.iter().find(|e| e.election_id == k.election_id).unwrap();
    assert_eq!(kept_after.state, pb::ElectionState::Finished as i32, "{kept_after:?}");
    assert!(kept_after.notes.iter().any(|n| n.contains("shutdown")), "{:?}", kept_after.notes);
    let one = client
        .get_election(pb::GetElectionRequest { election_id: before[2].election_id.clone() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(one.algorithm, "stages");
    assert_correct(&client.start_election(election("as-far")).await.unwrap().into_inner());
    let more = client.list_elections(pb::ListElectionsRequest::default()).await.unwrap().into_inner().elections;
    assert_eq!(more.len(), 4);
    ctl.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}
