//! What keeping a leader costs the embedded cluster at 16, 64 and 256 nodes:
//! a kept ZooKeeper-style and a kept bully leadership (complete network, loopback detector:
//! heartbeats every 50 ms) on an in-process controller with `--local-nodes
//! N`, measured once every node follows the leader, over a steady window:
//! open sockets of the process, heartbeats sent per second (the nodes' own
//! counters, read at StopElection), and CPU (user + system time of the
//! process over the window, in cores). A size the process cannot hold is
//! reported with what went wrong. Nothing is asserted; every figure is
//! measured in this run.
//!
//! `cargo bench -p ringleader-tests --bench keep [-- SIZES...]` (default 16 64 256; window 10 s);
//! `KEEP_ALGORITHMS=bully` (comma-separated) measures only those.

use std::time::{Duration, Instant};

use ringleader_proto::v1 as pb;
use ringleader_tests::{TestController, kept, test_config};

/// Sockets among this process's descriptors.
fn sockets() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| std::fs::read_link(e.path()).is_ok_and(|l| l.to_string_lossy().starts_with("socket:")))
                .count()
        })
        .unwrap_or(0)
}

/// User + system CPU time of this process, in seconds.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may hold spaces): utime is the 12th, stime the 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let field = |i: usize| f.get(i).and_then(|x| x.parse::<u64>().ok()).unwrap_or(0);
    let ticks = 100.0; // USER_HZ on Linux
    (field(11) + field(12)) as f64 / ticks
}

async fn measure(algorithm: &str, n: u32, window: Duration) -> Result<String, String> {
    let mut config = test_config(n);
    config.controller.decision_timeout_ms = 120_000;
    let ctl = TestController::start_with(config).await;
    let mut client = ctl.client();
    let started = Instant::now();
    let e = client.start_election(kept(algorithm)).await.map_err(|s| s.to_string())?.into_inner();
    let id = e.election_id.clone();
    let agreed = loop {
        match client.get_leader(pb::GetLeaderRequest { election_id: id.clone() }).await {
            Ok(l) if l.get_ref().agreed => break started.elapsed(),
            _ if started.elapsed() > Duration::from_secs(120) => {
                let e = client.get_election(pb::GetElectionRequest { election_id: id.clone() }).await;
                let why = e.map(|e| e.into_inner().error).unwrap_or_else(|s| s.to_string());
                ctl.stop().await;
                return Err(format!("no agreed leader within 120 s ({why})"));
            }
            _ => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    };
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (cpu0, t0) = (cpu_seconds(), Instant::now());
    let mut sampled = Vec::new();
    while t0.elapsed() < window {
        tokio::time::sleep(Duration::from_secs(1)).await;
        sampled.push(sockets());
    }
    let cores = (cpu_seconds() - cpu0) / t0.elapsed().as_secs_f64();
    let stopped = client
        .stop_election(pb::StopElectionRequest { election_id: id })
        .await
        .map_err(|s| s.to_string())?
        .into_inner();
    let m = stopped.metrics.unwrap_or_default();
    let heartbeats = m.messages_by_kind.get("heartbeat").copied().unwrap_or(0);
    let per_second = heartbeats as f64 / (m.duration_ms.max(1) as f64 / 1e3);
    ctl.stop().await;
    Ok(format!(
        "{n:>4} nodes: agreed after {:>6} ms; sockets {:>6} (max in window); heartbeats {:>9.0}/s (whole run, {} \
         in {} ms); CPU {:.2} cores in the window",
        agreed.as_millis(),
        sampled.iter().max().copied().unwrap_or(0),
        per_second,
        heartbeats,
        m.duration_ms,
        cores
    ))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let sizes: Vec<u32> = std::env::args().filter_map(|a| a.parse().ok()).collect();
    let sizes = if sizes.is_empty() { vec![16, 64, 256] } else { sizes };
    let algorithms: Vec<String> = std::env::var("KEEP_ALGORITHMS")
        .map(|a| a.split(',').map(String::from).collect())
        .unwrap_or_else(|_| vec!["zookeeper".into(), "bully".into()]);
    for algorithm in &algorithms {
        println!("kept {algorithm} on the embedded cluster (loopback detector: heartbeat every 50 ms):");
        for &n in &sizes {
            match tokio::time::timeout(
                Duration::from_secs(300),
                measure(algorithm.as_str(), n, Duration::from_secs(10)),
            )
            .await
            {
                Ok(Ok(line)) => println!("  {line}"),
                Ok(Err(e)) => println!("  {n:>4} nodes: failed: {e}"),
                Err(_) => println!("  {n:>4} nodes: failed: no result within 300 s"),
            }
        }
    }
}
