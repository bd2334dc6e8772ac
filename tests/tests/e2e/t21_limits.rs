//! Overload is refused, not absorbed.

use std::time::{Duration, Instant};

use ringleader_proto::v1 as pb;
use ringleader_tests::{TestController, assert_correct, elect, election, kept, leader_until, wait_for};

/// With `max_running_elections = 1`, a second StartElection while a kept leadership runs is refused
/// RESOURCE_EXHAUSTED with a message naming the setting; once the first is stopped the next one runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn too_many_running_elections_are_refused() {
    let ctl = TestController::start_tuned(4, |c| c.max_running_elections = 1).await;
    let mut client = ctl.client();
    let k = elect(&mut client, kept("bully")).await;
    leader_until(&mut client, &k.election_id, Duration::from_secs(20), |l| l.agreed).await;
    let refused = client.start_election(election("as-far")).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::ResourceExhausted, "{refused:?}");
    assert!(refused.message().contains("max_running_elections"), "{}", refused.message());
    client.stop_election(pb::StopElectionRequest { election_id: k.election_id }).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let e = wait_for("still refused", deadline, Duration::from_millis(50), || {
        let mut client = client.clone();
        async move {
            match client.start_election(election("as-far")).await {
                Ok(e) => Ok(e.into_inner()),
                Err(s) if s.code() == tonic::Code::ResourceExhausted => Err(s),
                Err(s) => panic!("{s:?}"),
            }
        }
    })
    .await;
    assert_correct(&e);
    ctl.stop().await;
}

/// A kept leadership whose election the embedded cluster's one process cannot carry (a 64-node
/// repaired ring with a 10 ms detector period: its electing nodes watch everyone, 64 · 63
/// heartbeats a period, 403,200 a second, five times what the largest ring that agreed here sent)
/// is refused up front, RESOURCE_EXHAUSTED naming `detector`, saying what it would send and which
/// detector would fit; that detector is accepted. (Before, 256 nodes at 50 ms started, never
/// agreed and starved the process.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_leadership_the_process_cannot_carry_is_refused_up_front() {
    let (ctl, mut client) = TestController::with_client(64).await;
    let with_period = |period_ms| pb::StartElectionRequest {
        detector: Some(pb::FailureDetector { period_ms, timeout_ms: 4 * period_ms }),
        ..kept("repaired-ring")
    };
    let refused = client.start_election(with_period(10)).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::ResourceExhausted, "{refused:?}");
    let m = refused.message();
    assert!(m.starts_with("detector: ") && m.contains("403200 messages a second"), "{m}");
    assert!(m.contains("period_ms 50 and timeout_ms 200"), "{m}");
    let k = elect(&mut client, with_period(50)).await;
    client.stop_election(pb::StopElectionRequest { election_id: k.election_id }).await.unwrap();
    ctl.stop().await;
}
