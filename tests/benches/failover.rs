//! Benchmark: failover time of kept leaderships against failure-detector
//! settings, next to etcd's own failover on the same machine.
//!
//! Run: `cargo bench -p ringleader-tests --bench failover` (add `-- --quick`
//! for fewer crashes and no `etcdctl elect` measurement, which takes a
//! minute per crash; `-- --algorithms bully,zookeeper` picks algorithms;
//! `--option NAME=VALUE`, repeated, gives every election that algorithm
//! option, e.g. `-- --algorithms raft --option lease=true`; `--setting
//! 100/1000`, repeated, replaces the detector settings; `--members 3,5`
//! replaces the cluster size of 5; `--trials N` the number of crashes per
//! row; `--no-etcd` leaves etcd out).
//! `-- --raft-vs-etcd` prints only the table "Raft beside etcd" of
//! docs/performance.md instead (see [`raft_vs_etcd`]).
//! Nothing is asserted; every figure is measured in this run and printed.
//!
//! * **Ringleader.** An embedded cluster of 5 nodes on loopback keeps a
//!   leader with each kept algorithm and each detector setting (heartbeat
//!   period, suspicion timeout). The benchmark crashes the agreed leader with
//!   `InjectFault crash {leader: true}`, recovers it once another leader is
//!   agreed, and repeats. Per crash it reports the time a client polling
//!   `GetLeader` every 5 ms saw until a new leader was agreed by every live
//!   node, and the controller's own failover figures (detection, agreement,
//!   messages).
//! * **Planned restarts.** The same cluster, then the same number of
//!   planned stops (`InjectFault crash {leader: true, planned: true}`, what a
//!   node does on SIGTERM): the leader hands its leadership over before it
//!   stops. Per stop: the time the polling client saw until the new leader
//!   was agreed (polled every millisecond), the handover as the leaving node
//!   timed it (from handing over to hearing its successor lead), and the
//!   longest any node named no leader (from the nodes' own clocks, one clock
//!   on loopback); next to a gRPC round trip on loopback measured in the
//!   same run.
//! * **etcd Raft.** A 5-member etcd cluster (Debian's `etcd-server`) on
//!   loopback with `--heartbeat-interval` / `--election-timeout` set to the
//!   same pairs (the election timeout raised to five heartbeats, etcd's
//!   minimum, where the pair is tighter): SIGKILL of the Raft leader, then the time until a surviving
//!   member reports a new leader (`etcdctl endpoint status`, polled).
//! * **etcdctl elect.** Two `etcdctl elect` campaigners; SIGKILL of the
//!   leading one, then the time until the other one prints that it leads.
//!   etcdctl 3.4 holds its session lease with a fixed TTL of 60 s, so this is
//!   a minute per crash; it is what an application that uses `etcdctl elect`
//!   as its election gets.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ringleader_core::algo::catalogue;
use ringleader_proto::v1 as pb;
use ringleader_tests::{TestController, election, leaderless, test_config, unix_us};

#[path = "failover/raft_vs_etcd.rs"]
mod raft_vs_etcd;

/// (heartbeat period, suspicion timeout) in ms.
const SETTINGS: [(u64, u64); 4] = [(20, 80), (50, 200), (100, 400), (250, 1_000)];
/// Cluster size unless `--members` says otherwise.
const NODES: u32 = 5;

type Client = pb::controller_client::ControllerClient<tonic::transport::Channel>;

fn median(xs: &mut [u64]) -> u64 {
    xs.sort_unstable();
    if xs.is_empty() { 0 } else { xs[xs.len() / 2] }
}

/// The nearest-rank `q` quantile (0 < q <= 1) of `xs`, which is sorted.
fn quantile(sorted: &[u64], q: f64) -> u64 {
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted.get(rank.clamp(1, sorted.len().max(1)) - 1).copied().unwrap_or(0)
}

fn summary(name: &str, xs: &mut [u64]) -> String {
    if xs.is_empty() {
        return format!("{name} -");
    }
    let med = median(xs);
    format!("{name} {med} (p95 {}, max {})", quantile(xs, 0.95), xs[xs.len() - 1])
}

/// What a client saw over repeated crashes of the agreed leader, with the controller's own figures.
#[derive(Default)]
struct Crashes {
    /// Client-seen time from each crash until a new leader was agreed, in ms.
    seen: Vec<u64>,
    /// Per new leader, its term less the crashed leader's: 1 when the first candidacy won.
    terms: Vec<u64>,
    detection: Vec<u64>,
    agreement: Vec<u64>,
    messages: Vec<u64>,
    /// Crashes after which no new leader was agreed within a minute.
    failed: usize,
}

/// A kept election of `algorithm` on the controller's embedded nodes under one detector setting.
async fn start_kept(
    client: &mut Client,
    algorithm: &str,
    options: &[(String, String)],
    period_ms: u64,
    timeout_ms: u64,
) -> Result<String, tonic::Status> {
    let req = pb::StartElectionRequest {
        keep_leader: true,
        wait: false,
        detector: Some(pb::FailureDetector { period_ms, timeout_ms }),
        topology: Some(pb::Topology { kind: pb::TopologyKind::Complete as i32, ..Default::default() }),
        options: options.iter().cloned().collect(),
        ..election(algorithm)
    };
    Ok(client.start_election(req).await?.into_inner().election_id)
}

/// Failovers of one kept algorithm under one detector setting.
async fn ringleader(
    algorithm: &str,
    options: &[(String, String)],
    (members, period_ms, timeout_ms): (u32, u64, u64),
    crashes: usize,
) -> String {
    let ctl = TestController::start_with(test_config(members)).await;
    let mut client = ctl.client();
    let id = match start_kept(&mut client, algorithm, options, period_ms, timeout_ms).await {
        Ok(id) => id,
        Err(s) => return format!("{algorithm}: refused: {}", s.message()),
    };
    let mut c = crash_trials(&mut client, &id, crashes, timeout_ms).await;
    let size = if members == NODES { String::new() } else { format!("{members} nodes ") };
    let crash_row = format!(
        "{algorithm:<12} {size}period {period_ms:>4} ms timeout {timeout_ms:>5} ms | crash   | {} | {} | {} | {} | {} crashes, {} without a new leader",
        summary("client-seen ms", &mut c.seen),
        summary("detection ms", &mut c.detection),
        summary("agreement ms", &mut c.agreement),
        summary("messages", &mut c.messages),
        crashes,
        c.failed,
    );
    let planned_row = planned(&mut client, &id, crashes, timeout_ms).await;
    let _ = client.stop_election(pb::StopElectionRequest { election_id: id }).await;
    ctl.stop().await;
    format!(
        "{crash_row}\n{algorithm:<12} {size}period {period_ms:>4} ms timeout {timeout_ms:>5} ms | planned | {planned_row}"
    )
}

/// `crashes` crashes of the agreed leader of kept leadership `id`, each recovered once a new
/// leader is agreed and followed by a rest of three timeouts.
async fn crash_trials(client: &mut Client, id: &str, crashes: usize, timeout_ms: u64) -> Crashes {
    let agreed = |l: &pb::Leader| l.agreed && l.leader.is_some();
    let mut c = Crashes::default();
    for _ in 0..crashes {
        let Some(before) = poll(client, id, Duration::from_secs(30), agreed).await else {
            c.failed += 1;
            break;
        };
        let crash = pb::InjectFaultRequest {
            kind: Some(pb::inject_fault_request::Kind::Crash(pb::CrashFault {
                node: String::new(),
                leader: true,
                planned: false,
            })),
            ..Default::default()
        };
        let fault = client.inject_fault(crash).await.expect("crash the leader").into_inner();
        let t0 = Instant::now();
        let new = |l: &pb::Leader| agreed(l) && l.term > before.term && l.leader != before.leader;
        match poll(client, id, Duration::from_secs(60), new).await {
            Some(l) => {
                c.seen.push(t0.elapsed().as_millis() as u64);
                c.terms.push(l.term - before.term);
            }
            None => c.failed += 1,
        }
        // The controller's figures; the message count arrives a moment after agreement.
        let with_messages = |l: &pb::Leader| l.last_failover.as_ref().is_some_and(|f| f.messages.is_some());
        if let Some(l) = poll(client, id, Duration::from_secs(10), with_messages).await {
            let f = l.last_failover.unwrap();
            c.detection.extend(f.detection_ms);
            c.agreement.extend(f.agreement_ms);
            c.messages.extend(f.messages);
        }
        let node = fault.description.trim_start_matches("crash ").to_string();
        let recover = pb::InjectFaultRequest {
            kind: Some(pb::inject_fault_request::Kind::Recover(pb::RecoverFault { node })),
            ..Default::default()
        };
        client.inject_fault(recover).await.expect("recover");
        tokio::time::sleep(Duration::from_millis(timeout_ms * 3)).await;
    }
    c
}

/// `stops` planned stops of the agreed leader of kept leadership `id`, each recovered afterwards.
async fn planned(client: &mut Client, id: &str, stops: usize, timeout_ms: u64) -> String {
    let agreed = |l: &pb::Leader| l.agreed && l.leader.is_some();
    let (mut seen, mut handover, mut leaderless) = (Vec::new(), Vec::new(), Vec::new());
    let (mut failed, mut not_handed) = (0, 0);
    for _ in 0..stops {
        let Some(before) = poll_every(client, id, Duration::from_secs(30), Duration::from_millis(1), agreed).await
        else {
            failed += 1;
            break;
        };
        let since_us = unix_us();
        let stop = pb::InjectFaultRequest {
            kind: Some(pb::inject_fault_request::Kind::Crash(pb::CrashFault {
                node: String::new(),
                leader: true,
                planned: true,
            })),
            ..Default::default()
        };
        let t0 = Instant::now();
        let fault = client.inject_fault(stop).await.expect("planned stop of the leader").into_inner();
        let new = |l: &pb::Leader| agreed(l) && l.term > before.term && l.leader != before.leader;
        match poll_every(client, id, Duration::from_secs(60), Duration::from_millis(1), new).await {
            Some(_) => seen.push(t0.elapsed().as_micros() as u64),
            None => failed += 1,
        }
        for h in &fault.handovers {
            if h.handed_over {
                handover.push(h.took_us);
            } else {
                not_handed += 1;
            }
        }
        if let Ok(e) = client.get_election(pb::GetElectionRequest { election_id: id.into() }).await {
            leaderless.push(longest_leaderless_us(&e.into_inner().timeline, since_us));
        }
        let node = fault.fault.and_then(|f| f.kind).map_or(String::new(), |k| match k {
            pb::inject_fault_request::Kind::Crash(c) => c.node,
            _ => String::new(),
        });
        let recover = pb::InjectFaultRequest {
            kind: Some(pb::inject_fault_request::Kind::Recover(pb::RecoverFault { node })),
            ..Default::default()
        };
        client.inject_fault(recover).await.expect("recover");
        tokio::time::sleep(Duration::from_millis(timeout_ms * 3)).await;
    }
    let ms = |xs: &[u64]| xs.iter().map(|x| x / 1_000).collect::<Vec<_>>();
    format!(
        "{} | {} | {} | {stops} stops, {failed} without a new leader, {not_handed} not handed over",
        summary("client-seen ms", &mut ms(&seen)),
        summary("handover µs", &mut handover),
        summary("longest leaderless µs (any node)", &mut leaderless),
    )
}

/// The longest stretch any node named no leader, from its own clock, among the beliefs since
/// unix time `since_us` (one without a leader that lasts until now counts until now).
fn longest_leaderless_us(timeline: &[pb::LeadershipChange], since_us: u64) -> u64 {
    let l = leaderless(timeline, since_us, None);
    let now = unix_us();
    l.open.values().map(|&at| now.saturating_sub(at)).fold(l.longest_us, u64::max)
}

/// The median round trip of a small gRPC call on loopback (ListAlgorithms), over `n` calls.
async fn round_trip_us(n: usize) -> u64 {
    let ctl = TestController::start_with(test_config(NODES)).await;
    let mut client = ctl.client();
    let mut xs = Vec::with_capacity(n);
    for _ in 0..n {
        let t0 = Instant::now();
        let _ = client.list_algorithms(pb::ListAlgorithmsRequest::default()).await;
        xs.push(t0.elapsed().as_micros() as u64);
    }
    ctl.stop().await;
    median(&mut xs)
}

async fn poll(client: &mut Client, id: &str, within: Duration, ok: impl Fn(&pb::Leader) -> bool) -> Option<pb::Leader> {
    poll_every(client, id, within, Duration::from_millis(5), ok).await
}

async fn poll_every(
    client: &mut Client,
    id: &str,
    within: Duration,
    every: Duration,
    ok: impl Fn(&pb::Leader) -> bool,
) -> Option<pb::Leader> {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if let Ok(l) = client.get_leader(pb::GetLeaderRequest { election_id: id.into() }).await
            && ok(l.get_ref())
        {
            return Some(l.into_inner());
        }
        tokio::time::sleep(every).await;
    }
    None
}

// --------------------------------------------------------------------- etcd

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("port")
}

struct Etcd {
    members: Vec<Option<Child>>,
    clients: Vec<String>,
    /// Each member's command line, to start it again after a kill.
    commands: Vec<Vec<String>>,
    dir: std::path::PathBuf,
}

impl Etcd {
    /// A new cluster of `n` members on loopback, each started; `None` if etcd is not installed.
    fn start(n: u32, heartbeat_ms: u64, election_ms: u64) -> Option<Etcd> {
        Command::new("etcd").arg("--version").output().ok()?;
        let dir = std::env::temp_dir().join(format!("ringleader-etcd-{}-{n}-{heartbeat_ms}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let peers: Vec<(u16, u16)> = (0..n).map(|_| (free_port(), free_port())).collect();
        let initial: Vec<String> =
            peers.iter().enumerate().map(|(i, (_, p))| format!("m{i}=http://127.0.0.1:{p}")).collect();
        let commands = peers
            .iter()
            .enumerate()
            .map(|(i, (c, p))| {
                let data = dir.join(format!("m{i}")).to_string_lossy().into_owned();
                #[rustfmt::skip]
                let args = [
                    "--name", &format!("m{i}"), "--data-dir", &data,
                    "--listen-client-urls", &format!("http://127.0.0.1:{c}"),
                    "--advertise-client-urls", &format!("http://127.0.0.1:{c}"),
                    "--listen-peer-urls", &format!("http://127.0.0.1:{p}"),
                    "--initial-advertise-peer-urls", &format!("http://127.0.0.1:{p}"),
                    "--initial-cluster", &initial.join(","),
                    "--initial-cluster-state", "new", "--initial-cluster-token", "ringleader-bench",
                    "--heartbeat-interval", &heartbeat_ms.to_string(),
                    "--election-timeout", &election_ms.to_string(),
                ]
                .map(String::from);
                args.to_vec()
            })
            .collect();
        let clients = peers.iter().map(|(c, _)| format!("127.0.0.1:{c}")).collect();
        let mut etcd = Etcd { members: (0..n).map(|_| None).collect(), clients, commands, dir };
        for i in 0..n as usize {
            etcd.restart(i).then_some(())?;
        }
        Some(etcd)
    }

    /// Start member `i` (again, on its data directory); false if it would not start.
    fn restart(&mut self, i: usize) -> bool {
        let child = Command::new("etcd").args(&self.commands[i]).stdout(Stdio::null()).stderr(Stdio::null()).spawn();
        self.members[i] = child.ok();
        self.members[i].is_some()
    }

    /// The Raft leader's member index as reported by member `via`.
    fn leader(&self, via: usize) -> Option<usize> {
        let out = Command::new("etcdctl")
            .args(["--endpoints", &self.clients[via], "--command-timeout=300ms", "--dial-timeout=300ms"])
            .args(["endpoint", "status", "-w", "fields"])
            .env("ETCDCTL_API", "3")
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let field = |name: &str| {
            text.lines()
                .find(|l| l.starts_with(&format!("\"{name}\"")))
                .and_then(|l| l.split(':').nth(1))
                .map(str::trim)
        };
        let (leader, me) = (field("Leader")?.parse::<u64>().ok()?, field("MemberID")?.parse::<u64>().ok()?);
        if leader == 0 {
            return None;
        }
        if leader == me {
            return Some(via);
        }
        // Which member is the leader: ask each live one for its own id.
        (0..self.clients.len()).filter(|&i| i != via && self.members[i].is_some()).find(|&i| {
            Command::new("etcdctl")
                .args([
                    "--endpoints",
                    &self.clients[i],
                    "--command-timeout=300ms",
                    "endpoint",
                    "status",
                    "-w",
                    "fields",
                ])
                .env("ETCDCTL_API", "3")
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains(&format!("\"MemberID\" : {leader}")))
        })
    }

    fn kill(&mut self, i: usize) {
        if let Some(mut c) = self.members[i].take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        for c in self.members.iter_mut().flatten() {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Raft failovers of a 5-member etcd cluster: SIGKILL the leader, time until a survivor names a new one.
fn etcd_raft(members: u32, heartbeat_ms: u64, election_ms: u64, crashes: usize) -> String {
    let mut seen = Vec::new();
    let mut failed = 0;
    for _ in 0..crashes {
        let Some(mut etcd) = Etcd::start(members, heartbeat_ms, election_ms) else {
            return "etcd: not installed (apt-get install etcd-server etcd-client)".into();
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        let leader = loop {
            if let Some(l) = etcd.leader(0) {
                break Some(l);
            }
            if Instant::now() > deadline {
                break None;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let Some(leader) = leader else {
            failed += 1;
            continue;
        };
        std::thread::sleep(Duration::from_millis(election_ms * 2));
        etcd.kill(leader);
        let t0 = Instant::now();
        let survivor = (0..members as usize).find(|&i| i != leader).unwrap();
        let mut got = false;
        while t0.elapsed() < Duration::from_secs(30) {
            if etcd.leader(survivor).is_some_and(|l| l != leader) {
                got = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        if got {
            seen.push(t0.elapsed().as_millis() as u64);
        } else {
            failed += 1;
        }
    }
    let size = if members == NODES { String::new() } else { format!("{members} members ") };
    format!(
        "etcd raft    {size}heartbeat {heartbeat_ms:>4} ms election {election_ms:>5} ms | {} | {crashes} crashes, {failed} without a new leader",
        summary("client-seen ms", &mut seen)
    )
}

/// `etcdctl elect`: two campaigners, SIGKILL the leading one, time until the other leads.
fn etcdctl_elect() -> String {
    let Some(etcd) = Etcd::start(NODES, 100, 1_000) else { return "etcdctl elect: etcd not installed".into() };
    std::thread::sleep(Duration::from_secs(3));
    let campaign = |name: &str| {
        Command::new("etcdctl")
            .args(["--endpoints", &etcd.clients.join(","), "elect", "bench", name])
            .env("ETCDCTL_API", "3")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("etcdctl elect")
    };
    let mut first = campaign("first");
    let mut lines = BufReader::new(first.stdout.take().unwrap()).lines();
    if lines.next().is_none() {
        let _ = first.kill();
        let _ = first.wait();
        return "etcdctl elect: the first campaigner never led".into();
    }
    let mut second = campaign("second");
    std::thread::sleep(Duration::from_secs(1));
    let _ = first.kill();
    let _ = first.wait();
    let t0 = Instant::now();
    let mut out = BufReader::new(second.stdout.take().unwrap()).lines();
    let led = out.next().is_some();
    let took = t0.elapsed();
    let _ = second.kill();
    let _ = second.wait();
    if led {
        format!(
            "etcdctl elect (session TTL 60 s): the second campaigner led {} ms after SIGKILL of the first",
            took.as_millis()
        )
    } else {
        "etcdctl elect: the second campaigner never led".into()
    }
}

/// The command line, parsed.
struct Args {
    quick: bool,
    etcd: bool,
    raft_vs_etcd: bool,
    /// `--trials N`, if given.
    trials: Option<usize>,
    algorithms: Vec<String>,
    options: Vec<(String, String)>,
    /// `--setting P/T`, repeated (none: the mode's own).
    settings: Vec<(u64, u64)>,
    /// `--members 3,5` (none: the mode's own).
    members: Vec<u32>,
}

impl Args {
    fn parse() -> Args {
        let args: Vec<String> = std::env::args().collect();
        let flag = |name: &str| args.iter().any(|a| a == name);
        let value = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1));
        let list = |name: &str| value(name).map(|s| s.split(',').map(String::from).collect::<Vec<_>>());
        Args {
            quick: flag("--quick"),
            etcd: !flag("--no-etcd"),
            raft_vs_etcd: flag("--raft-vs-etcd"),
            trials: value("--trials").and_then(|n| n.parse().ok()),
            algorithms: list("--algorithms").unwrap_or_else(|| {
                catalogue::CATALOGUE.iter().filter(|s| s.kept.is_some()).map(|s| s.name.to_string()).collect()
            }),
            options: args
                .windows(2)
                .filter(|w| w[0] == "--option")
                .filter_map(|w| w[1].split_once('=').map(|(k, v)| (k.to_string(), v.to_string())))
                .collect(),
            settings: args
                .windows(2)
                .filter(|w| w[0] == "--setting")
                .filter_map(|w| w[1].split_once('/').and_then(|(p, t)| Some((p.parse().ok()?, t.parse().ok()?))))
                .collect(),
            members: list("--members").unwrap_or_default().iter().filter_map(|m| m.parse().ok()).collect(),
        }
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args = Args::parse();
    if args.raft_vs_etcd {
        return raft_vs_etcd::run(&args).await;
    }
    let crashes = args.trials.unwrap_or(if args.quick { 3 } else { 10 });
    let options = &args.options;
    let sizes = if args.members.is_empty() { vec![NODES] } else { args.members.clone() };
    let sizes_text = sizes.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
    println!(
        "failover of kept leaderships on {sizes_text} loopback nodes, {crashes} crashes and {crashes} planned stops per setting (medians, p95, max){}",
        if options.is_empty() { String::new() } else { format!(", options {options:?}") }
    );
    println!("a gRPC round trip on loopback (ListAlgorithms, median of 200): {} µs", round_trip_us(200).await);
    let settings = if args.settings.is_empty() { SETTINGS.to_vec() } else { args.settings.clone() };
    // etcd restarts its cluster for every crash: fewer of them unless asked.
    let etcd_crashes = args.trials.unwrap_or(crashes.min(5));
    for &members in &sizes {
        for &(period, timeout) in &settings {
            for a in &args.algorithms {
                println!("{}", ringleader(a, options, (members, period, timeout), crashes).await);
            }
            if !args.etcd {
                continue;
            }
            // etcd refuses an election timeout below five heartbeats.
            let election = timeout.max(5 * period);
            let row = tokio::task::spawn_blocking(move || etcd_raft(members, period, election, etcd_crashes));
            println!("{}", row.await.unwrap());
        }
    }
    if !args.quick && args.etcd {
        println!("{}", tokio::task::spawn_blocking(etcdctl_elect).await.unwrap());
    }
}
