//! How close a LIVE election's time comes to the algorithm's own time: on an
//! embedded cluster of 64 nodes (a `ringleader-controller --local-nodes 64`
//! process), Stages and AsFar with every node an initiator, each election's
//! time divided by its ideal time (its longest causal chain of messages)
//! times the hop latency measured in the same run.
//!
//! The hop latency is that of the same cluster on a chain with nothing
//! else going on: AsFar with the largest id the only initiator, whose
//! messages form one causal chain (out around the ring and the notification
//! around again), on 64 and on 32 positions: the difference of their times
//! over the difference of their ideal times is one hop, the node's step
//! included, and the fixed cost of a call is left out. Each time is the
//! median of the runs.
//!
//! Two times per election: the wall time a client sees (the `StartElection`
//! call with `wait`, from the call to the answer), and `nodeDurationUs`, the
//! nodes' own (first send to last decision; 0 from a controller that does
//! not report it). Nothing is asserted; every figure is measured in this run.
//!
//! The ratios use the hop by the nodes' clock: the client's includes the
//! calls that set up each position, which grow with the positions. A
//! controller that does not report the nodes' time (an older binary) has its
//! ratios taken against `LIVE_RATIO_HOP_US` if set (the nodes' hop of a run
//! of the newer one in the same sitting: the data plane is the same), else
//! against the client's hop.
//!
//! `cargo bench -p ringleader-tests --bench live_ratio [-- RUNS]` (default 30);
//! `RINGLEADER_CONTROLLER_BIN` runs another controller binary (before/after).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ringleader_proto::v1 as pb;
use ringleader_proto::v1::controller_client::ControllerClient;
use ringleader_tests::{Proc as Process, assert_correct, controller_binary, election, free_port};
use tonic::transport::{Channel, Endpoint};

const NODES: u32 = 64;

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// One election's times: (the client's wall µs, the nodes' µs (0: not reported), ideal time).
async fn run(client: &mut ControllerClient<Channel>, request: pb::StartElectionRequest) -> (f64, f64, f64) {
    let t = Instant::now();
    let e = client.start_election(request).await.expect("StartElection").into_inner();
    let wall = t.elapsed().as_secs_f64() * 1e6;
    assert_correct(&e);
    let m = e.metrics.expect("metrics");
    (wall, m.node_duration_us as f64, m.ideal_time as f64)
}

/// Medians over `runs` elections of `request`: (wall µs, nodes µs, ideal time).
async fn medians(
    client: &mut ControllerClient<Channel>,
    request: &pb::StartElectionRequest,
    runs: usize,
) -> (f64, f64, f64) {
    let (mut walls, mut nodes, mut ideals) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        let (wall, node, ideal) = run(client, request.clone()).await;
        walls.push(wall);
        nodes.push(node);
        ideals.push(ideal);
    }
    (median(walls), median(nodes), median(ideals))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let runs: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(30).max(1);
    let port = free_port();
    let _controller = Process(
        Command::new(controller_binary())
            .args(["--host", "127.0.0.1", "--port", &port.to_string(), "--local-nodes", &NODES.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn the controller"),
    );
    let channel = Endpoint::from_shared(format!("http://127.0.0.1:{port}")).expect("endpoint").connect_lazy();
    let mut client = ControllerClient::new(channel);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(c) = client.get_cluster(pb::GetClusterRequest {}).await {
            let c = c.into_inner();
            if c.nodes.len() == NODES as usize && c.nodes.iter().all(|n| n.reachable) {
                break;
            }
        }
        assert!(Instant::now() < deadline, "the controller and its {NODES} nodes did not come up within 60 s");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let request = |algorithm: &str, n: u32, lone: bool| pb::StartElectionRequest {
        size: n,
        ids: (1..=u64::from(n)).collect(),
        initiator_ids: if lone { vec![u64::from(n)] } else { Vec::new() },
        ..election(algorithm)
    };
    // Warm the links up (every node's connection to its neighbours) before measuring.
    for _ in 0..3 {
        run(&mut client, request("stages", NODES, false)).await;
    }
    let (long, long_nodes, long_ideal) = medians(&mut client, &request("as-far", NODES, true), runs).await;
    let (short, short_nodes, short_ideal) = medians(&mut client, &request("as-far", NODES / 2, true), runs).await;
    let hop_client = (long - short) / (long_ideal - short_ideal);
    let hop_nodes = (long_nodes - short_nodes) / (long_ideal - short_ideal);
    let given: Option<f64> = std::env::var("LIVE_RATIO_HOP_US").ok().and_then(|v| v.parse().ok());
    let (hop, which) = match given {
        _ if hop_nodes > 0.0 => (hop_nodes, "the nodes' hop"),
        Some(h) => (h, "LIVE_RATIO_HOP_US"),
        None => (hop_client, "the client's hop"),
    };
    println!(
        "live_ratio: {NODES} nodes (embedded), {runs} runs each; hop latency (AsFar, one initiator, one causal chain, \
         {NODES} against {} positions): {hop_client:.1} µs by the client's clock, {hop_nodes:.1} µs by the nodes'; \
         ratios against {which}, {hop:.1} µs",
        NODES / 2
    );
    println!(
        "{:<8} {:>6} {:>10} {:>10} {:>15} {:>16}",
        "", "ideal", "wall µs", "nodes µs", "wall/(ideal·hop)", "nodes/(ideal·hop)"
    );
    for algorithm in ["stages", "as-far"] {
        let (wall, node, ideal) = medians(&mut client, &request(algorithm, NODES, false), runs).await;
        let node_ratio = if node > 0.0 { format!("{:.2}", node / (ideal * hop)) } else { "-".to_string() };
        println!(
            "{algorithm:<8} {ideal:>6.0} {wall:>10.0} {node:>10.0} {:>15.2} {node_ratio:>16}",
            wall / (ideal * hop)
        );
    }
}
