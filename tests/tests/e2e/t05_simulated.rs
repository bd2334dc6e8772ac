use std::time::{Duration, Instant};

use ringleader_proto::v1 as pb;
use ringleader_tests::{TestController, assert_refused, elect, elect_correct, election};

fn simulated(algorithm: &str) -> pb::StartElectionRequest {
    pb::StartElectionRequest { mode: pb::Mode::Simulated as i32, ..election(algorithm) }
}

/// The space-time diagram of `e`, checked: one whole SVG, with a line per position (`n` of them) and an
/// arrow per message counted (on a ring the wrap-around ones drawn round the edges, `msg wrap`).
fn diagram(e: &pb::Election, n: usize) -> &str {
    let svg = &e.diagram_svg;
    assert!(svg.starts_with("<svg ") && svg.trim_end().ends_with("</svg>"), "{svg}");
    assert_eq!(svg.matches(r#"class="node""#).count(), n, "{svg}");
    let arrows = svg.matches(r#"class="msg""#).count() + svg.matches(r#"class="msg wrap""#).count();
    assert_eq!(arrows as u64, e.metrics.as_ref().unwrap().messages, "{svg}");
    svg
}

/// A SIMULATED AsFar election on a random ring of 100,000 positions finishes correct, within the bound, in seconds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simulated_as_far_on_100000_positions() {
    let ctl = TestController::start(0).await;
    let started = Instant::now();
    let e =
        elect_correct(&mut ctl.client(), pb::StartElectionRequest { size: 100_000, seed: 5, ..simulated("as-far") })
            .await;
    assert!(started.elapsed() < Duration::from_secs(60), "took {:?}", started.elapsed());
    let leader = e.leader.unwrap();
    assert_eq!((leader.id, leader.node), (100_000, format!("sim-{}", leader.position)));
    assert!(e.participants.is_empty(), "participants are listed only up to 1024 positions");
    ctl.stop().await;
}

/// Every algorithm runs SIMULATED with defaults (8 positions, 9 on a torus) and, where it allows them, on non-FIFO links with unit delays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simulated_defaults_and_options() {
    let (ctl, mut client) = TestController::with_client(0).await;
    for spec in ringleader_core::algo::catalogue::CATALOGUE {
        let e = elect_correct(&mut client, simulated(spec.name)).await;
        // A torus has no 8 positions: its default is the next size it takes.
        let n = if spec.default_topology() == ringleader_core::topology::TopologyKind::Torus { 9 } else { 8 };
        assert_eq!((e.n, e.k, e.participants.len()), (n, n, n as usize), "{}", spec.name);
        let options =
            pb::SimulationOptions { non_fifo: !spec.assumptions.fifo, unit_delay: true, ..Default::default() };
        let e = elect_correct(
            &mut client,
            pb::StartElectionRequest { size: 64, seed: 2, simulation: Some(options), ..simulated(spec.name) },
        )
        .await;
        let m = e.metrics.unwrap();
        let ring = spec.default_topology().is_ring();
        assert!(
            !ring || m.ideal_time >= 64,
            "{}: a notification round of a ring alone takes n time units, got {}",
            spec.name,
            m.ideal_time
        );
    }
    ctl.stop().await;
}

/// WORST_CASE and BEST_CASE id orders reach the catalogue's arrangements: AsFar's worst case on 100 positions
/// costs exactly its bound n(n+1)/2 + n, its best case 2n-1 + n, LIVE on 8 nodes too; an algorithm without a
/// known worst case is refused naming `id_order`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worst_and_best_case_id_orders() {
    let (ctl, mut client) = TestController::with_client(8).await;
    for (mode, n) in [(pb::Mode::Simulated, 100u64), (pb::Mode::Live, 8)] {
        let worst = pb::StartElectionRequest {
            size: n as u32,
            mode: mode as i32,
            id_order: pb::IdOrder::WorstCase as i32,
            ..election("as-far")
        };
        let e = elect_correct(&mut client, worst.clone()).await;
        let m = e.metrics.unwrap();
        assert_eq!((m.messages, m.bound), (n * (n + 1) / 2 + n, n * (n + 1) / 2 + n), "{mode:?}");
        let best = pb::StartElectionRequest { id_order: pb::IdOrder::BestCase as i32, ..worst };
        let e = elect_correct(&mut client, best).await;
        assert_eq!(e.metrics.unwrap().messages, 2 * n - 1 + n, "{mode:?}");
    }
    let status = client
        .start_election(pb::StartElectionRequest {
            id_order: pb::IdOrder::WorstCase as i32,
            ..election("controlled-distance")
        })
        .await
        .unwrap_err();
    assert_refused(&status, tonic::Code::InvalidArgument, "id_order");
    let algos = client.list_algorithms(pb::ListAlgorithmsRequest {}).await.unwrap().into_inner().algorithms;
    let as_far = algos.iter().find(|a| a.name == "as-far").unwrap();
    assert!(as_far.worst_case.contains("decreasing") && as_far.best_case.contains("increasing"));
    ctl.stop().await;
}

/// `simulation.diagram` returns the election's space-time diagram as SVG: one line per position and one
/// arrow per message; a LIVE election or more than 256 positions are refused naming the field.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simulated_diagram_as_svg() {
    let (ctl, mut client) = TestController::with_client(0).await;
    let with_diagram = Some(pb::SimulationOptions { diagram: true, ..Default::default() });
    let e = elect_correct(
        &mut client,
        pb::StartElectionRequest { simulation: with_diagram.clone(), ..simulated("as-far") },
    )
    .await;
    diagram(&e, 8);
    let plain = elect(&mut client, simulated("as-far")).await;
    assert!(plain.diagram_svg.is_empty(), "no diagram unless asked for");
    let live = pb::StartElectionRequest { simulation: with_diagram.clone(), ..election("as-far") };
    assert_refused(&client.start_election(live).await.unwrap_err(), tonic::Code::InvalidArgument, "simulation");
    let big = pb::StartElectionRequest { size: 300, simulation: with_diagram, ..simulated("as-far") };
    assert_refused(&client.start_election(big).await.unwrap_err(), tonic::Code::InvalidArgument, "simulation.diagram");
    ctl.stop().await;
}

/// `diagram` on a LIVE election draws it from the nodes' message logs: one line per node, one arrow per
/// message sent, each paired with its receipt (no faults, so none lost), and each node's states as it
/// logged them (as-far: asleep first, one leader and seven followers last); the 256-node limit is
/// refused naming `diagram`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_diagram_as_svg() {
    let (ctl, mut client) = TestController::with_client(8).await;
    let e = elect_correct(&mut client, pb::StartElectionRequest { diagram: true, ..election("as-far") }).await;
    let svg = diagram(&e, 8);
    assert!(svg.contains("LIVE") && svg.contains("node-0"), "{svg}");
    assert!(!svg.contains(r#"class="msg lost""#), "nothing lost without faults");
    // Each node's bands, in time order: its last one is what it ended in.
    let mut last = std::collections::BTreeMap::new();
    let mut first = std::collections::BTreeMap::new();
    for band in svg.split(r#"<rect class="state""#).skip(1) {
        let attr =
            |name: &str| band.split(&format!(r#"{name}=""#)).nth(1).and_then(|v| v.split('"').next()).unwrap_or("");
        let (position, state) = (attr("data-position").to_string(), attr("data-state").to_string());
        first.entry(position.clone()).or_insert_with(|| state.clone());
        last.insert(position, state);
    }
    assert_eq!(first.len(), 8, "every node's states drawn: {first:?}");
    assert!(first.values().all(|s| s == "asleep"), "{first:?}");
    let leaders = last.values().filter(|s| *s == "leader").count();
    assert_eq!((leaders, last.values().filter(|s| *s == "follower").count()), (1, 7), "{last:?}");
    let plain = elect(&mut client, election("as-far")).await;
    assert!(plain.diagram_svg.is_empty(), "no diagram unless asked for");
    let big = pb::StartElectionRequest { size: 300, diagram: true, ..simulated("as-far") };
    assert_refused(&client.start_election(big).await.unwrap_err(), tonic::Code::InvalidArgument, "diagram");
    ctl.stop().await;
}

/// `diagram_options` alone asks for the diagram and chooses how it is drawn: labels say what each
/// message carries, LIVE too (each message once, the nodes logging its body), the causal axis says so;
/// an unknown axis is refused naming `diagram_options.axis`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diagram_options_choose_labels_and_axis() {
    let (ctl, mut client) = TestController::with_client(8).await;
    let options =
        |axis: pb::DiagramAxis| Some(pb::DiagramOptions { axis: axis as i32, labels: true, heartbeats: false });
    for mode in [pb::Mode::Simulated, pb::Mode::Live] {
        let req = pb::StartElectionRequest {
            mode: mode as i32,
            id_order: pb::IdOrder::WorstCase as i32,
            diagram_options: options(pb::DiagramAxis::Causal),
            ..election("as-far")
        };
        let e = elect_correct(&mut client, req).await;
        let svg = diagram(&e, 8);
        let messages = e.metrics.as_ref().unwrap().messages as usize;
        assert_eq!(svg.matches(r#"class="label""#).count(), messages, "{mode:?}: one label per message: {svg}");
        // Worst case, ids decreasing along the ring: id 1 travels one link before id 8 swallows it.
        assert_eq!(svg.matches(">id 1</text>").count(), 1, "{mode:?}: {svg}");
        assert_eq!(svg.matches(">id 8</text>").count(), 8, "{mode:?}: id 8 goes round: {svg}");
        assert!(svg.contains("causal time, Lamport clock"), "{mode:?}");
    }
    let bad = pb::StartElectionRequest {
        diagram_options: Some(pb::DiagramOptions { axis: 9, labels: false, heartbeats: false }),
        ..simulated("as-far")
    };
    assert_refused(
        &client.start_election(bad).await.unwrap_err(),
        tonic::Code::InvalidArgument,
        "diagram_options.axis",
    );
    ctl.stop().await;
}
