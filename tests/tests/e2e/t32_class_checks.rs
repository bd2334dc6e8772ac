//! A class on one controller: thirty students check at once with
//! `max_concurrent_checks = 1`. Identical checks are computed once and
//! shared; different ones wait in a queue that tells each its position.

use std::time::Instant;

use ringleader_proto::v1 as pb;
use ringleader_tests::{Client, TestController};
use tokio::sync::mpsc;
use tokio_stream::StreamExt;

use pb::check_event::Kind;

/// Students in the class.
const CLASS: usize = 30;

/// What one call saw: its queue positions in order, then its verdict.
#[derive(Debug)]
struct Answer {
    positions: Vec<u32>,
    verdict: pb::CheckVerdict,
}

/// Kept bully with a partition: a check that runs for minutes, holding the one place until its
/// caller goes. Returns once it runs (its stream said position 0).
async fn hold_the_place(client: &Client) -> tonic::Streaming<pb::CheckEvent> {
    let req =
        pb::CheckRequest { algorithm: "bully".into(), kept: true, partitions: 1, timeout_s: 600, ..Default::default() };
    let mut stream = client.clone().check_algorithm(req).await.unwrap().into_inner();
    let first = stream.next().await.unwrap().unwrap();
    assert!(matches!(first.kind, Some(Kind::Queued(pb::CheckQueued { position: 0, .. }))), "{first:?}");
    stream
}

/// Send every request at once while `blocker` holds the one place; once each has been told its
/// first position (every one queued), let the blocker's caller go, and collect each call's
/// positions and verdict. No call may be refused.
async fn class(
    client: &Client,
    blocker: tonic::Streaming<pb::CheckEvent>,
    requests: Vec<pb::CheckRequest>,
) -> Vec<Answer> {
    let (queued_tx, mut queued) = mpsc::channel(requests.len());
    let mut calls = tokio::task::JoinSet::new();
    for (i, req) in requests.into_iter().enumerate() {
        let (mut client, queued_tx) = (client.clone(), queued_tx.clone());
        calls.spawn(async move {
            let mut stream = client.check_algorithm(req).await.expect("no call refused").into_inner();
            let mut positions = Vec::new();
            while let Some(event) = stream.next().await {
                match event.expect("no stream refused").kind {
                    Some(Kind::Queued(q)) => {
                        if positions.is_empty() {
                            queued_tx.send(()).await.unwrap();
                        }
                        positions.push(q.position);
                    }
                    Some(Kind::Verdict(verdict)) => return (i, Answer { positions, verdict }),
                    _ => {}
                }
            }
            panic!("call {i}: the stream ended without a verdict");
        });
    }
    for _ in 0..calls.len() {
        queued.recv().await.unwrap();
    }
    tracing::info!("--- every call queued: the blocker's caller goes");
    drop(blocker);
    let mut answers: Vec<Option<Answer>> = (0..calls.len()).map(|_| None).collect();
    while let Some(done) = calls.join_next().await {
        let (i, answer) = done.unwrap();
        answers[i] = Some(answer);
    }
    answers.into_iter().map(Option::unwrap).collect()
}

/// Thirty identical CheckAlgorithm calls at once (kept Chubby-style with a crash and a lost
/// message), while one other check holds the only place: thirty verdicts, none refused, all the
/// same; one run computed it (the one verdict neither `shared` nor `cached`), the other 29
/// joined that run while it was queued (`shared`) and saw its position (1, then 0). Asked once
/// more, the check is answered from the cache.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thirty_identical_checks_are_computed_once() {
    let ctl = TestController::start_tuned(3, |c| c.max_concurrent_checks = 1).await;
    let client = ctl.client();
    let chubby =
        pb::CheckRequest { algorithm: "chubby".into(), kept: true, crashes: 1, losses: 1, ..Default::default() };
    let blocker = hold_the_place(&client).await;
    let started = Instant::now();
    let answers = class(&client, blocker, vec![chubby.clone(); CLASS]).await;
    let ran: Vec<&Answer> = answers.iter().filter(|a| !a.verdict.shared && !a.verdict.cached).collect();
    let shared = answers.iter().filter(|a| a.verdict.shared).count();
    eprintln!(
        "{CLASS} identical checks: {} run, {shared} shared, in {:.1} s; {}",
        ran.len(),
        started.elapsed().as_secs_f64(),
        answers[0].verdict.summary
    );
    assert_eq!(ran.len(), 1, "the checker ran once");
    assert_eq!(shared, CLASS - 1, "the others joined its run");
    let first = &ran[0].verdict;
    assert!(first.holds && first.complete, "{}", first.summary);
    for a in &answers {
        let v = pb::CheckVerdict { shared: false, ..a.verdict.clone() };
        assert_eq!(&v, first, "every verdict is the run's");
        assert_eq!(a.positions, [1, 0], "queued behind the blocker, then running");
    }
    let mut stream = client.clone().check_algorithm(chubby).await.unwrap().into_inner();
    let Some(Ok(pb::CheckEvent { kind: Some(Kind::Verdict(again)) })) = stream.next().await else {
        panic!("a cached verdict comes alone")
    };
    assert!(again.cached && !again.shared && again.summary == first.summary, "{again:?}");
    ctl.stop().await;
}

/// Thirty different small checks at once (AsFar on 4 nodes in each of its 24 id arrangements,
/// Stages on 3 nodes in each of its 6), while one other check holds the only place: all thirty
/// answered, none refused; each was queued at its own position (1 to 30, in the order the
/// controller took them), and the positions each was told only go down, ending at 0 when it ran.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thirty_different_checks_queue_with_positions() {
    let ctl = TestController::start_tuned(3, |c| c.max_concurrent_checks = 1).await;
    let client = ctl.client();
    let permutations = |n: u64| {
        let mut out: Vec<Vec<u64>> = vec![vec![]];
        for _ in 0..n {
            out = out
                .into_iter()
                .flat_map(|p| {
                    (1..=n).filter(|id| !p.contains(id)).map(|id| [p.clone(), vec![id]].concat()).collect::<Vec<_>>()
                })
                .collect();
        }
        out
    };
    let mut requests: Vec<pb::CheckRequest> = permutations(4)
        .into_iter()
        .map(|ids| pb::CheckRequest { algorithm: "as-far".into(), n: 4, ids, ..Default::default() })
        .collect();
    requests.extend(permutations(3).into_iter().map(|ids| pb::CheckRequest {
        algorithm: "stages".into(),
        n: 3,
        ids,
        ..Default::default()
    }));
    assert_eq!(requests.len(), CLASS);
    let blocker = hold_the_place(&client).await;
    let started = Instant::now();
    let answers = class(&client, blocker, requests).await;
    eprintln!("{CLASS} different checks answered in {:.1} s", started.elapsed().as_secs_f64());
    for a in &answers {
        eprintln!("positions {:?}: {}", a.positions, a.verdict.summary);
    }
    let mut first: Vec<u32> = answers.iter().map(|a| a.positions[0]).collect();
    first.sort_unstable();
    assert_eq!(first, (1..=CLASS as u32).collect::<Vec<_>>(), "each queued at its own position");
    for a in &answers {
        assert!(a.positions.windows(2).all(|w| w[1] < w[0]), "positions only go down: {:?}", a.positions);
        assert_eq!(a.positions.last(), Some(&0), "ends running: {:?}", a.positions);
        assert!(a.verdict.holds && !a.verdict.shared && !a.verdict.cached, "{}", a.verdict.summary);
    }
    let moved = answers.iter().map(|a| a.positions.len()).max().unwrap();
    assert!(moved > 2, "a check far back is told as it moves up: at most {moved} positions told");
    ctl.stop().await;
}
