//! Soak: many thousands of LIVE elections on 16 `ringleader-node` processes
//! driven by a `ringleader-controller` process, all on loopback, with the
//! resident memory of the controller and of every node sampled after each
//! round. Memory that stays flat once the controller's record limit
//! (`max_elections`, 1,000) is reached is the result to look for; every
//! verdict must be correct (the benchmark stops at the first that is not).
//!
//! `cargo bench -p ringleader-tests --bench soak [-- ELECTIONS [ROUND]]`
//! (default 5,000 elections in rounds of 500, 32 at a time). Nothing about
//! speed or memory is asserted; every figure is measured in this run.
//!
//! Each node process runs one tokio worker thread (`TOKIO_WORKER_THREADS=1`),
//! as a node pod does: k8s/20-node.yaml limits it to 500m CPU, and tokio sizes
//! its pool by the CPU quota. `SOAK_NODE_THREADS=N` gives the nodes N workers
//! instead (`0`: tokio's default, one per core of this machine, 16 processes
//! of two workers each on two cores).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ringleader_proto::v1 as pb;
use ringleader_proto::v1::controller_client::ControllerClient;
use ringleader_tests::{Proc as Process, assert_correct, controller_binary, election, free_port, node_binary};
use tonic::transport::Endpoint;

const NODES: usize = 16;
const IN_FLIGHT: usize = 32;

fn spawn(command: &mut Command) -> Process {
    Process(command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("spawn"))
}

/// Resident set size of process `pid` in KiB (Linux `/proc`).
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmRSS:")).map(str::to_string))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        .expect("VmRSS of a running process")
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// One memory sample: the controller's RSS, and the nodes' mean and largest RSS.
#[derive(Clone, Copy)]
struct Sample {
    controller: u64,
    node_mean: u64,
    node_max: u64,
}

fn sample(controller: &Process, nodes: &[Process]) -> Sample {
    let node_rss: Vec<u64> = nodes.iter().map(|p| rss_kib(p.0.id())).collect();
    Sample {
        controller: rss_kib(controller.0.id()),
        node_mean: node_rss.iter().sum::<u64>() / node_rss.len() as u64,
        node_max: node_rss.iter().copied().max().unwrap_or(0),
    }
}

/// First, last and largest of `xs` (KiB), and the last against the first.
fn growth(what: &str, xs: &[u64]) {
    let (first, last, max) = (xs[0], xs[xs.len() - 1], xs.iter().copied().max().unwrap_or(0));
    println!(
        "  {what:<16} {:>7.1} -> {:>7.1} MiB ({:+.1}%), largest {:>7.1} MiB",
        mib(first),
        mib(last),
        (last as f64 / first as f64 - 1.0) * 100.0,
        mib(max)
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<u64> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let total = args.first().copied().unwrap_or(5_000);
    let round = args.get(1).copied().unwrap_or(500).max(1);

    let node_threads = std::env::var("SOAK_NODE_THREADS").unwrap_or_else(|_| "1".into());
    let node_ports: Vec<u16> = (0..NODES).map(|_| free_port()).collect();
    let nodes: Vec<Process> = node_ports
        .iter()
        .enumerate()
        .map(|(i, port)| {
            let mut node = Command::new(node_binary());
            node.args(["--listen", &format!("127.0.0.1:{port}"), "--name", &format!("node-{i}")]);
            if node_threads != "0" {
                node.env("TOKIO_WORKER_THREADS", &node_threads);
            }
            spawn(&mut node)
        })
        .collect();
    let port = free_port();
    let list = node_ports.iter().map(|p| format!("http://127.0.0.1:{p}")).collect::<Vec<_>>().join(",");
    let controller = spawn(
        Command::new(controller_binary())
            .args(["--host", "127.0.0.1", "--port", &port.to_string(), "--nodes", &list])
            .env("RINGLEADER__CONTROLLER__MAX_ELECTIONS", "1000"),
    );

    let channel = Endpoint::from_shared(format!("http://127.0.0.1:{port}")).expect("endpoint").connect_lazy();
    let client = ControllerClient::new(channel);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(c) = client.clone().get_cluster(pb::GetClusterRequest {}).await {
            let c = c.into_inner();
            if c.nodes.len() == NODES && c.nodes.iter().all(|n| n.reachable) {
                break;
            }
        }
        assert!(Instant::now() < deadline, "the controller and its {NODES} nodes did not come up within 60 s");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let algorithms = ["as-far", "stages", "controlled-distance", "alternate"];
    println!(
        "soak: {total} LIVE elections ({}) on {NODES} node processes (tokio workers each: {}) and a controller \
         process, {IN_FLIGHT} at a time; records kept: 1000",
        algorithms.join(", "),
        if node_threads == "0" { "default" } else { &node_threads }
    );
    println!(
        "{:>9} {:>12} {:>14} {:>13} {:>12} {:>10}",
        "elections", "ctl RSS MiB", "node mean MiB", "node max MiB", "elections/s", "messages"
    );
    let print = |done: u64, s: Sample, rate: Option<f64>, messages: Option<u64>| {
        println!(
            "{done:>9} {:>12.1} {:>14.1} {:>13.1} {:>12} {:>10}",
            mib(s.controller),
            mib(s.node_mean),
            mib(s.node_max),
            rate.map_or("-".into(), |r| format!("{r:.0}")),
            messages.map_or("-".into(), |m| m.to_string())
        )
    };
    print(0, sample(&controller, &nodes), None, None);

    let started = Instant::now();
    let mut done = 0u64;
    let mut samples = Vec::new();
    while done < total {
        let end = done + round.min(total - done);
        let t0 = Instant::now();
        let mut messages = 0u64;
        let mut next = done;
        let mut tasks = tokio::task::JoinSet::new();
        while next < end || !tasks.is_empty() {
            while next < end && tasks.len() < IN_FLIGHT {
                let mut client = client.clone();
                let req =
                    pb::StartElectionRequest { seed: next, ..election(algorithms[next as usize % algorithms.len()]) };
                tasks.spawn(async move { client.start_election(req).await });
                next += 1;
            }
            if let Some(r) = tasks.join_next().await {
                let e = r.expect("task").expect("StartElection").into_inner();
                assert_correct(&e);
                messages += e.metrics.map_or(0, |m| m.messages);
            }
        }
        let rate = (end - done) as f64 / t0.elapsed().as_secs_f64();
        done = end;
        let s = sample(&controller, &nodes);
        samples.push(s);
        print(done, s, Some(rate), Some(messages));
    }
    println!("{done} elections, every verdict correct, in {:.1} s", started.elapsed().as_secs_f64());
    // Growth over the second half, once the record limit has been reached.
    let half = &samples[samples.len() / 2..];
    if !half.is_empty() {
        println!("RSS over the second half ({} -> {done} elections):", done - round * (half.len() as u64 - 1));
        growth("controller", &half.iter().map(|s| s.controller).collect::<Vec<_>>());
        growth("node (mean)", &half.iter().map(|s| s.node_mean).collect::<Vec<_>>());
        growth("node (largest)", &half.iter().map(|s| s.node_max).collect::<Vec<_>>());
    }
}
