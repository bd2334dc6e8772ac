use ringleader_proto::v1 as pb;
use ringleader_tests::{TestController, assert_refused};
use tokio_stream::StreamExt;

async fn sweep(ctl: &TestController, req: pb::CompareRequest) -> Vec<pb::CompareEvent> {
    let mut stream = ctl.client().compare_algorithms(req).await.unwrap().into_inner();
    let mut events = Vec::new();
    while let Some(ev) = stream.next().await {
        events.push(ev.unwrap());
    }
    events
}

/// A LIVE sweep on 8 nodes streams progress before each election, one correct row per election (LIVE counts of
/// the schedule-independent algorithm equal the SIMULATED sweep's), and ends with the whole table, CSV and SVG.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compare_streams_progress_rows_and_result() {
    let ctl = TestController::start(8).await;
    let req = pb::CompareRequest {
        algorithms: vec!["as-far".into(), "controlled-distance".into()],
        sizes: vec![4, 8],
        id_orders: vec![pb::IdOrder::Random as i32, pb::IdOrder::WorstCase as i32],
        repetitions: 2,
        mode: pb::Mode::Live as i32,
        ..Default::default()
    };
    let events = sweep(&ctl, req.clone()).await;
    use pb::compare_event::Kind;
    let kinds: Vec<&Kind> = events.iter().filter_map(|e| e.kind.as_ref()).collect();
    // as-far: 4 random + 2 worst; controlled-distance: 4 random (no worst case) = 10 elections.
    let rows: Vec<&pb::CompareRow> =
        kinds.iter().filter_map(|k| if let Kind::Row(r) = k { Some(r) } else { None }).collect();
    assert_eq!(rows.len(), 10);
    assert!(rows.iter().all(|r| r.correct && r.messages <= r.bound && r.messages > 0), "{rows:?}");
    assert!(matches!(kinds[0], Kind::Progress(p) if p.done == 0 && p.total == 10 && !p.current.is_empty()));
    let Some(Kind::Result(result)) = kinds.last() else { panic!("the stream ends with the result") };
    assert_eq!(result.rows.len(), 10);
    assert_eq!(result.csv.lines().count(), 11);
    assert!(result.svg.starts_with("<svg") && result.svg.contains("as-far (WORST_CASE)"));
    let worst8 =
        result.rows.iter().find(|r| r.algorithm == "as-far" && r.n == 8 && r.id_order == pb::IdOrder::WorstCase as i32);
    assert_eq!(worst8.map(|r| r.messages), Some(8 * 9 / 2 + 8), "AsFar's worst case costs its bound");

    let simulated = sweep(&ctl, pb::CompareRequest { mode: pb::Mode::Simulated as i32, ..req }).await;
    let Some(Kind::Result(sim)) = simulated.last().and_then(|e| e.kind.as_ref()) else { panic!("no result") };
    for (live, sim) in result.rows.iter().zip(&sim.rows) {
        if live.algorithm == "as-far" {
            assert_eq!((live.n, live.seed, live.messages), (sim.n, sim.seed, sim.messages), "LIVE and SIMULATED agree");
        }
    }
    ctl.stop().await;
}

/// Sweep requests are checked before anything runs, naming the field.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compare_refuses_bad_requests() {
    let (ctl, mut client) = TestController::with_client(4).await;
    let bad = |f: fn(&mut pb::CompareRequest)| {
        let mut r = pb::CompareRequest { sizes: vec![4], ..Default::default() };
        f(&mut r);
        r
    };
    let cases: [(pb::CompareRequest, tonic::Code, &str); 4] = [
        (bad(|r| r.algorithms = vec!["paxos".into()]), tonic::Code::InvalidArgument, "algorithms"),
        (bad(|r| r.sizes = vec![16]), tonic::Code::FailedPrecondition, "sizes"),
        (bad(|r| r.sizes = vec![1]), tonic::Code::InvalidArgument, "sizes"),
        (bad(|r| (r.sizes, r.min_size, r.max_size) = (vec![], 64, 8)), tonic::Code::InvalidArgument, "min_size"),
    ];
    for (req, code, field) in cases {
        let status = client.compare_algorithms(req).await.unwrap_err();
        assert_refused(&status, code, field);
    }
    ctl.stop().await;
}

/// A sweep asking for an id order that none of its algorithms has (WORST_CASE and BEST_CASE of all-the-way
/// and controlled-distance, even next to RANDOM) is refused INVALID_ARGUMENT naming `id_orders`, the order
/// and the algorithms, before anything runs. Failed before the fix: with RANDOM beside them the sweep ran and
/// answered RANDOM rows only, without a word about the orders it left out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compare_refuses_an_order_no_algorithm_has() {
    let (ctl, mut client) = TestController::with_client(0).await;
    let orders = [pb::IdOrder::Random, pb::IdOrder::WorstCase, pb::IdOrder::BestCase];
    let req = pb::CompareRequest {
        algorithms: vec!["all-the-way".into(), "controlled-distance".into()],
        sizes: vec![8],
        id_orders: orders.iter().map(|&o| o as i32).collect(),
        mode: pb::Mode::Simulated as i32,
        ..Default::default()
    };
    let status = client.compare_algorithms(req).await.map(drop).unwrap_err();
    assert_refused(&status, tonic::Code::InvalidArgument, "id_orders");
    for word in ["WORST_CASE", "all-the-way", "controlled-distance"] {
        assert!(status.message().contains(word), "the refusal names {word}: {}", status.message());
    }
    ctl.stop().await;
}

/// A sweep asking for WORST_CASE from as-far (which has that arrangement) and all-the-way (which has not)
/// runs as-far's worst case and says in the result, and under the plot, that all-the-way has no
/// WORST_CASE rows. Failed before the fix: the result had no notes; the rows were simply missing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compare_notes_the_orders_an_algorithm_lacks() {
    let ctl = TestController::start(0).await;
    let req = pb::CompareRequest {
        algorithms: vec!["as-far".into(), "all-the-way".into()],
        sizes: vec![8],
        id_orders: vec![pb::IdOrder::WorstCase as i32],
        mode: pb::Mode::Simulated as i32,
        ..Default::default()
    };
    let events = sweep(&ctl, req).await;
    let Some(pb::compare_event::Kind::Result(result)) = events.last().and_then(|e| e.kind.as_ref()) else {
        panic!("the stream ends with the result")
    };
    let shown: Vec<(&str, i32)> = result.rows.iter().map(|r| (r.algorithm.as_str(), r.id_order)).collect();
    assert_eq!(shown, [("as-far", pb::IdOrder::WorstCase as i32)]);
    let note = "WORST_CASE: no rows for all-the-way (no known worst-case arrangement)";
    assert_eq!(result.notes, [note]);
    assert!(result.svg.contains(&format!(">Note: {note}</text>")), "the plot carries the note");
    ctl.stop().await;
}
