use ringleader_proto::v1 as pb;
use std::time::{Duration, Instant};

use ringleader_tests::{TestController, assert_refused, simulated, wait_for};
use tokio_stream::StreamExt;

use pb::check_event::Kind;

async fn check(ctl: &TestController, req: pb::CheckRequest) -> Vec<Kind> {
    let mut stream = ctl.client().check_algorithm(req).await.unwrap().into_inner();
    let mut events = Vec::new();
    while let Some(ev) = stream.next().await {
        events.extend(ev.unwrap().kind);
    }
    events
}

fn verdict(events: &[Kind]) -> &pb::CheckVerdict {
    match events.last() {
        Some(Kind::Verdict(v)) => v,
        other => panic!("the stream ends with the verdict, not {other:?}"),
    }
}

/// CheckAlgorithm over gRPC: AsFar on 4 nodes holds on every schedule (the verdict reaches the bound of 14
/// messages, as the checker's table says); Stages on 3 nodes with links that reorder (it assumes FIFO) ends
/// BROKEN with a shortest schedule of 5 steps in words, each node's end and its diagram with states; kept ZooKeeper-style with a
/// crash and a loss, given 3 s, says it started (queue position 0), streams progress (states growing, states
/// per second) and ends saying time cut it short before its state budget; kept Chubby-style with a crash and messages of at most 10 ms holds on every schedule; so
/// does the repaired ring with a crash, with timers that may fire late and (in a third of the states or
/// fewer) with punctual timers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_streams_progress_and_the_verdict() {
    let ctl = TestController::start(3).await;
    let req = pb::CheckRequest { algorithm: "as-far".into(), n: 4, ids: vec![4, 3, 2, 1], ..Default::default() };
    let events = check(&ctl, req).await;
    let v = verdict(&events);
    assert!(v.holds && v.complete && v.counterexamples.is_empty(), "{v:?}");
    assert_eq!((v.most_messages, v.bound), (14, 14));
    assert!(v.summary.contains("holds on every schedule"), "{}", v.summary);

    let req =
        pb::CheckRequest { algorithm: "stages".into(), any_order: true, initiators: vec![0], ..Default::default() };
    let events = check(&ctl, req).await;
    let v = verdict(&events);
    assert!(!v.holds && v.complete, "{}", v.summary);
    let refused = v.counterexamples.iter().find(|c| c.property == "no node errs").unwrap();
    assert_eq!(refused.steps.len(), 5, "{:?}", refused.steps);
    assert_eq!(refused.steps[0], "id 1 wakes up and starts", "steps in words, nodes by their ids");
    assert!(refused.error.contains("refused"), "{}", refused.error);
    assert_eq!(refused.outcome, ["undecided", "undecided", "undecided"]);
    assert!(refused.svg.starts_with("<svg") && refused.svg.contains("no node errs"));
    assert!(refused.svg.contains(r#"data-state="candidate""#), "each node's state drawn along the steps");

    // ZooKeeper-style with a crash and a loss, messages up to a heartbeat period: far more than 3 s.
    let req = pb::CheckRequest {
        algorithm: "zookeeper".into(),
        kept: true,
        crashes: 1,
        losses: 1,
        timeout_s: 3,
        ..Default::default()
    };
    let events = check(&ctl, req).await;
    assert!(matches!(events[0], Kind::Queued(pb::CheckQueued { position: 0, .. })), "{:?}", events[0]);
    let progress: Vec<&pb::CheckProgress> =
        events.iter().filter_map(|k| if let Kind::Progress(p) = k { Some(p) } else { None }).collect();
    assert!(progress.len() >= 2 && progress.windows(2).all(|w| w[0].states <= w[1].states), "{progress:?}");
    assert!(progress.iter().all(|p| p.states_per_second > 0.0));
    let v = verdict(&events);
    assert!(!v.complete && v.counterexamples.is_empty(), "{}", v.summary);
    assert!(v.summary.contains("holds where explored (stopped by timeout_s before max_states"), "{}", v.summary);
    assert_eq!(v.stopped_by, "timeout_s");

    let req =
        pb::CheckRequest { algorithm: "chubby".into(), kept: true, crashes: 1, delay_ms: 10, ..Default::default() };
    let v = verdict(&check(&ctl, req).await).clone();
    assert!(v.holds && v.complete && v.states > 1_000, "{}", v.summary);

    let ring = pb::CheckRequest {
        algorithm: "repaired-ring".into(),
        kept: true,
        crashes: 1,
        delay_ms: 10,
        ..Default::default()
    };
    let late = verdict(&check(&ctl, ring.clone()).await).clone();
    let punctual = verdict(&check(&ctl, pb::CheckRequest { punctual_timers: true, ..ring }).await).clone();
    assert!(
        late.holds && late.complete && punctual.holds && punctual.complete,
        "{} / {}",
        late.summary,
        punctual.summary
    );
    assert!(punctual.states * 3 < late.states, "punctual timers: {} states against {}", punctual.states, late.states);
    ctl.stop().await;
}

/// Bad requests are refused naming the field, before any check runs; a caller may close the stream of a long
/// check after two progress events, and the controller answers the next check at once (that the closed check's
/// thread stops is the controller's own test, `a_check_stops_when_its_caller_goes`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_refuses_bad_requests_and_stops_when_the_caller_goes() {
    let ctl = TestController::start(3).await;
    let mut client = ctl.client();
    let bad = |f: fn(&mut pb::CheckRequest)| {
        let mut r = pb::CheckRequest { algorithm: "as-far".into(), ..Default::default() };
        f(&mut r);
        r
    };
    let cases: [(pb::CheckRequest, tonic::Code, &str); 15] = [
        (bad(|r| r.algorithm = "paxos".into()), tonic::Code::InvalidArgument, "algorithm"),
        (bad(|r| r.n = 7), tonic::Code::InvalidArgument, "n"),
        // A size given by `ids` alone is refused naming `ids`: 7 of them, or 3 for a hypercube.
        (bad(|r| r.ids = (1..=7).collect()), tonic::Code::InvalidArgument, "ids"),
        (bad(|r| (r.algorithm, r.ids) = ("hyper-elect".into(), vec![1, 2, 3])), tonic::Code::InvalidArgument, "ids"),
        (bad(|r| (r.n, r.ids) = (3, vec![1, 2])), tonic::Code::InvalidArgument, "ids"),
        (
            bad(|r| (r.algorithm, r.kept, r.ids) = ("bully".into(), true, vec![1, 1, 2])),
            tonic::Code::InvalidArgument,
            "ids",
        ),
        (bad(|r| r.initiators = vec![3]), tonic::Code::InvalidArgument, "initiators"),
        (bad(|r| r.kept = true), tonic::Code::FailedPrecondition, "kept"),
        (bad(|r| r.losses = 1), tonic::Code::FailedPrecondition, "losses"),
        (bad(|r| r.timeout_s = 601), tonic::Code::InvalidArgument, "timeout_s"),
        (bad(|r| r.delay_ms = 10), tonic::Code::FailedPrecondition, "delay_ms"),
        (bad(|r| r.punctual_timers = true), tonic::Code::FailedPrecondition, "punctual_timers"),
        (bad(|r| r.partition_ms = 1_000), tonic::Code::FailedPrecondition, "partition_ms"),
        (
            bad(|r| {
                (r.algorithm, r.kept, r.partitions, r.partition_ms) = ("chubby".into(), true, 1, 600_001);
            }),
            tonic::Code::InvalidArgument,
            "partition_ms",
        ),
        (
            bad(|r| {
                (r.algorithm, r.kept, r.delay_ms) = ("bully".into(), true, 10_001);
            }),
            tonic::Code::InvalidArgument,
            "delay_ms",
        ),
    ];
    for (req, code, field) in cases {
        let status = client.check_algorithm(req.clone()).await.expect_err(&format!("{req:?}"));
        assert_refused(&status, code, field);
    }
    // Kept bully with a partition runs for minutes: take two progress events and go.
    let req =
        pb::CheckRequest { algorithm: "bully".into(), kept: true, partitions: 1, timeout_s: 600, ..Default::default() };
    let started = std::time::Instant::now();
    let mut stream = client.check_algorithm(req).await.unwrap().into_inner();
    assert!(matches!(stream.next().await, Some(Ok(pb::CheckEvent { kind: Some(Kind::Queued(_)) }))));
    for _ in 0..2 {
        assert!(matches!(stream.next().await, Some(Ok(pb::CheckEvent { kind: Some(Kind::Progress(_)) }))));
    }
    drop(stream);
    let req = pb::CheckRequest { algorithm: "as-far".into(), ..Default::default() };
    let v = verdict(&check(&ctl, req).await).clone();
    assert!(v.holds, "{v:?}");
    assert!(started.elapsed() < std::time::Duration::from_secs(120), "the stopped check did not hold things up");
    ctl.stop().await;
}

/// With `max_concurrent_checks = 1` and `max_queued_checks = 1`, a check asked for while another runs waits
/// in the queue instead of being refused: AsFar given 1 s, behind a check given 10 s whose caller keeps its
/// stream without reading it, is told position 1, then 0 when the first ends (within its 10 s), and holds on
/// every schedule: its 1 s counts from its start, not from its arrival. A third, different check asked
/// while AsFar waits is refused RESOURCE_EXHAUSTED naming `controller.max_queued_checks`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checks_beyond_the_cap_wait_in_a_bounded_queue() {
    let ctl = TestController::start_tuned(3, |c| {
        c.max_concurrent_checks = 1;
        c.max_queued_checks = 1;
    })
    .await;
    let mut client = ctl.client();
    // Kept bully with a partition runs for minutes: given 10 s, its stream kept and never read.
    let long =
        pb::CheckRequest { algorithm: "bully".into(), kept: true, partitions: 1, timeout_s: 10, ..Default::default() };
    let mut unread = client.check_algorithm(long).await.unwrap().into_inner();
    assert!(matches!(unread.next().await, Some(Ok(pb::CheckEvent { kind: Some(Kind::Queued(_)) }))));
    let started = Instant::now();
    let as_far = pb::CheckRequest { algorithm: "as-far".into(), timeout_s: 1, ..Default::default() };
    let waiting = client.check_algorithm(as_far).await.unwrap().into_inner();
    let third = pb::CheckRequest { algorithm: "as-far".into(), n: 4, ..Default::default() };
    let refused = client.check_algorithm(third).await.unwrap_err();
    assert_refused(&refused, tonic::Code::ResourceExhausted, "max_queued_checks");
    assert!(refused.message().contains("controller.max_queued_checks = 1"), "{}", refused.message());
    let events: Vec<Kind> = waiting.filter_map(|e| e.unwrap().kind).collect().await;
    let positions: Vec<u32> =
        events.iter().filter_map(|k| if let Kind::Queued(q) = k { Some(q.position) } else { None }).collect();
    assert_eq!(positions, [1, 0], "{events:?}");
    let v = verdict(&events);
    eprintln!("answered after {:.1} s in the queue: {}", started.elapsed().as_secs_f64(), v.summary);
    assert!(v.holds && v.complete, "{v:?}");
    drop(unread);
    ctl.stop().await;
}

/// A running check holds its share of the memory budget: with `memory_budget_mib = 100` (8 MiB
/// of it set aside for records) and one check at a time, a check reserves half the budget (50 MiB), so while it runs a SIMULATED
/// controlled-distance election of 130,000 positions (about 59 MiB by its estimate) is refused
/// RESOURCE_EXHAUSTED naming `memory_budget_mib`; once the check's caller has gone, it is admitted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_holds_its_share_of_the_memory_budget() {
    let ctl = TestController::start_tuned(3, |c| {
        c.max_concurrent_checks = 1;
        c.memory_budget_mib = 100;
        c.max_stored_mib = 8;
    })
    .await;
    let mut client = ctl.client();
    let long =
        pb::CheckRequest { algorithm: "bully".into(), kept: true, partitions: 1, timeout_s: 600, ..Default::default() };
    let mut stream = client.check_algorithm(long).await.unwrap().into_inner();
    assert!(matches!(stream.next().await, Some(Ok(pb::CheckEvent { kind: Some(Kind::Queued(_)) }))));
    assert!(matches!(stream.next().await, Some(Ok(pb::CheckEvent { kind: Some(Kind::Progress(_)) }))));
    let election = simulated("controlled-distance", 130_000);
    let refused = client.start_election(election.clone()).await.unwrap_err();
    assert_refused(&refused, tonic::Code::ResourceExhausted, "memory_budget_mib");
    drop(stream);
    let deadline = Instant::now() + Duration::from_secs(120);
    let e = wait_for("still refused", deadline, Duration::from_millis(100), || {
        let (mut client, req) = (client.clone(), election.clone());
        async move {
            match client.start_election(req).await {
                Ok(e) => Ok(e.into_inner()),
                Err(s) if s.code() == tonic::Code::ResourceExhausted => Err(s),
                Err(s) => panic!("{s:?}"),
            }
        }
    })
    .await;
    assert_eq!(e.state, pb::ElectionState::Finished as i32, "{:?}", e.error);
    ctl.stop().await;
}

/// A counterexample over gRPC in words: Stages on 3 nodes with links that reorder ends with the
/// stage-2 message that overtook the stage-1 one, named, and no note; kept Raft on 3 nodes with a
/// crash breaks its convergence property on split votes, and the counterexample's note says Raft
/// relies on randomised timeouts there, while its steps say votes refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counterexamples_name_what_was_overtaken_and_a_liveness_caveat() {
    let ctl = TestController::start(0).await;
    let stages = pb::CheckRequest { algorithm: "stages".into(), n: 3, any_order: true, ..Default::default() };
    let events = check(&ctl, stages).await;
    let c = &verdict(&events).counterexamples[0];
    assert!(c.steps.last().unwrap().contains(", overtaking election (id 3, stage 1), sent before it"), "{c:?}");
    assert!(c.error.starts_with("id 2 refused election (id 3, stage 2) from id 3: ") && c.note.is_empty(), "{c:?}");
    let raft = pb::CheckRequest { algorithm: "raft".into(), n: 3, kept: true, crashes: 1, ..Default::default() };
    let events = check(&ctl, raft).await;
    let v = verdict(&events);
    let c = v.counterexamples.iter().find(|c| c.property.starts_with("one agreed leader")).expect("split votes");
    assert!(c.note.contains("Raft relies on randomised timeouts"), "{c:?}");
    assert!(c.steps.iter().any(|s| s.contains("raft_vote (term") && s.contains("refused")), "{:?}", c.steps);
    ctl.stop().await;
}
