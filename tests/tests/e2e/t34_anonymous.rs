use ringleader_proto::v1 as pb;

use ringleader_tests::{TestController, assert_refused, election, simulated};
use tokio_stream::StreamExt;

use pb::check_event::Kind;

/// The verdict a CheckAlgorithm stream ends with.
async fn verdict(ctl: &TestController, req: pb::CheckRequest) -> pb::CheckVerdict {
    let mut stream = ctl.client().check_algorithm(req).await.unwrap().into_inner();
    let mut last = None;
    while let Some(ev) = stream.next().await {
        last = ev.unwrap().kind;
    }
    match last {
        Some(Kind::Verdict(v)) => v,
        other => panic!("the stream ends with the verdict, not {other:?}"),
    }
}

/// An anonymous ring over gRPC: CheckAlgorithm of AsFar on ids [4, 4, 4, 4] answers the symmetric
/// execution in words (two lock-step rounds, every node in the same state after each, all four
/// leading), as its first counterexample with its schedule, outcome and diagram; `anonymous`
/// gives every node id 1 and the same run; a kept check refuses repeats. StartElection takes the
/// repeated ids, SIMULATED and LIVE, and both report the four leaders as a violation; a kept
/// leadership refuses them naming `ids`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn as_far_on_an_anonymous_ring_shows_the_symmetric_run() {
    let ctl = TestController::start(4).await;
    let req = pb::CheckRequest { algorithm: "as-far".into(), ids: vec![4; 4], ..Default::default() };
    let v = verdict(&ctl, req).await;
    assert!(!v.holds && v.complete, "{}", v.summary);
    let c = &v.counterexamples[0];
    assert_eq!(c.property, "at most one leader");
    assert_eq!(c.rounds.len(), 3, "{:#?}", c.rounds);
    assert!(c.rounds[0].starts_with("round 1: every node wakes up and starts"), "{}", c.rounds[0]);
    assert!(c.rounds[1].contains("every node now in the same state, \"leader\""), "{}", c.rounds[1]);
    assert!(c.rounds[2].contains("all 4 nodes decide they lead"), "{}", c.rounds[2]);
    assert_eq!(c.steps.len(), 8);
    assert_eq!(c.outcome, ["leads"; 4]);
    assert!(c.svg.starts_with("<svg") && c.svg.contains("at most one leader"));

    let anonymous = pb::CheckRequest { algorithm: "as-far".into(), n: 3, anonymous: true, ..Default::default() };
    let v = verdict(&ctl, anonymous).await;
    assert!(v.counterexamples[0].rounds.last().unwrap().contains("all 3 nodes decide they lead"), "{v:?}");
    let kept = pb::CheckRequest { algorithm: "bully".into(), kept: true, ids: vec![2, 2, 3], ..Default::default() };
    let mut client = ctl.client();
    assert_refused(&client.check_algorithm(kept).await.unwrap_err(), tonic::Code::InvalidArgument, "ids");

    for mode in [pb::Mode::Simulated, pb::Mode::Live] {
        let req = pb::StartElectionRequest { ids: vec![4; 4], mode: mode as i32, ..simulated("as-far", 0) };
        let e = client.start_election(req).await.unwrap().into_inner();
        assert!(e.violations.iter().any(|v| v.starts_with("4 leaders")), "{mode:?}: {:?}", e.violations);
        assert_eq!(e.participants.iter().filter(|p| p.role == "leader").count(), 4, "{mode:?}");
    }
    let kept = pb::StartElectionRequest { ids: vec![4; 4], keep_leader: true, wait: false, ..election("bully") };
    assert_refused(&client.start_election(kept).await.unwrap_err(), tonic::Code::InvalidArgument, "ids");
    ctl.stop().await;
}
