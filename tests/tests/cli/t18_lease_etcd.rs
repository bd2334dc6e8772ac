//! `lease` on a real etcd: Debian's `etcd` started on loopback with its own data directory, three
//! `ringleader-node` processes that keep their lease record in it (each through a TCP relay of the
//! test's, which can cut that node off from etcd), and a controller driving them.

use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use etcd_client::{AlarmAction, AlarmType};
use ringleader_proto::v1 as pb;
use ringleader_tests::{Proc, TestController, free_port, in_ci, kept, leader_until, node_binary, test_config, which};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// The loopback timing of these runs: RetryPeriod 100 ms, RenewDeadline 500 ms, LeaseDuration 750
/// ms (client-go's ratios at a 100 ms detector period; a slower period than the embedded
/// default, so that etcd's fsyncs on a busy CI disk stay well inside a RetryPeriod).
const PERIOD_MS: u64 = 100;
const RENEW_DEADLINE_MS: u64 = 5 * PERIOD_MS;
const LEASE_DURATION_MS: u64 = 15 * PERIOD_MS / 2;

/// An etcd server on loopback, killed (and its data directory removed) when dropped.
struct Etcd {
    _proc: Proc,
    dir: std::path::PathBuf,
    client: SocketAddr,
}

impl Drop for Etcd {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Start `etcd` on two free loopback ports, or `None` (with a note) when it is not installed
/// outside CI; in CI its absence is a failure (`.ci/run` installs `etcd-server`).
async fn start_etcd() -> Option<Etcd> {
    start_etcd_with(&[]).await
}

/// [`start_etcd`] with `extra` arguments (e.g. a quota).
async fn start_etcd_with(extra: &[&str]) -> Option<Etcd> {
    let Some(etcd) = which("etcd") else {
        let how = "install Debian's etcd-server (apt-get install etcd-server)";
        if in_ci() {
            panic!("etcd not found on PATH: {how}");
        }
        eprintln!("note: skipping a lease test: etcd not found on PATH ({how})");
        return None;
    };
    let (client_port, peer_port) = (free_port(), free_port());
    let dir = std::env::temp_dir().join(format!("ringleader-etcd-{}-{client_port}", std::process::id()));
    let log = std::fs::File::create(dir.with_extension("log")).expect("etcd log");
    let client_url = format!("http://127.0.0.1:{client_port}");
    let peer_url = format!("http://127.0.0.1:{peer_port}");
    let child = Command::new(etcd)
        .args(["--name", "ringleader-test", "--data-dir"])
        .arg(&dir)
        .args(["--listen-client-urls", &client_url, "--advertise-client-urls", &client_url])
        .args(["--listen-peer-urls", &peer_url, "--initial-advertise-peer-urls", &peer_url])
        .args(["--initial-cluster", &format!("ringleader-test={peer_url}")])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("log"))
        .stderr(log)
        .spawn()
        .expect("spawn etcd");
    let etcd = Etcd { _proc: Proc(child), dir, client: SocketAddr::from(([127, 0, 0, 1], client_port)) };
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut kv = loop {
        if let Ok(c) = etcd_client::Client::connect([client_url.as_str()], None).await
            && c.kv_client().get("ready", None).await.is_ok()
        {
            break c.kv_client();
        }
        assert!(Instant::now() < deadline, "etcd did not answer within 30 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    kv.get("ready", None).await.expect("etcd answers");
    Some(etcd)
}

/// A TCP relay to etcd for one node; `cut(true)` drops its connections and refuses new ones.
struct Relay {
    port: u16,
    cut: Arc<watch::Sender<bool>>,
}

impl Relay {
    async fn start(target: SocketAddr) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind relay");
        let port = listener.local_addr().expect("relay address").port();
        let cut = Arc::new(watch::channel(false).0);
        let rx = cut.subscribe();
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let mut rx = rx.clone();
                if *rx.borrow() {
                    continue; // cut off: the connection is dropped at once
                }
                tokio::spawn(async move {
                    let Ok(mut outbound) = TcpStream::connect(target).await else { return };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                        _ = rx.wait_for(|&c| c) => {}
                    }
                });
            }
        });
        Relay { port, cut }
    }

    fn cut(&self, cut: bool) {
        self.cut.send_replace(cut);
    }
}

/// Three node processes, each reaching etcd through its own relay, and a controller that
/// names the real etcd (the nodes' own `etcd_endpoint`, their relay, takes precedence).
struct Cluster {
    _nodes: Vec<Proc>,
    pids: Vec<u32>,
    /// Each node's log file.
    logs: Vec<std::path::PathBuf>,
    relays: Vec<Relay>,
    ctl: TestController,
}

async fn cluster(etcd: &Etcd, tag: &str) -> Cluster {
    let mut relays = Vec::new();
    for _ in 0..3 {
        relays.push(Relay::start(etcd.client).await);
    }
    let ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
    let logs: Vec<std::path::PathBuf> = (0..3)
        .map(|i| std::env::temp_dir().join(format!("ringleader-node-{}-{tag}{i}.log", std::process::id())))
        .collect();
    let nodes: Vec<Proc> = ports
        .iter()
        .zip(&relays)
        .enumerate()
        .map(|(i, (&port, relay))| {
            let file = std::fs::File::create(&logs[i]).expect("node log");
            Proc(
                Command::new(node_binary())
                    .args(["--listen", &format!("127.0.0.1:{port}"), "--name", &format!("{tag}{i}")])
                    .env("RINGLEADER__NODE__ETCD_ENDPOINT", format!("http://127.0.0.1:{}", relay.port))
                    .env("RUST_LOG", "info")
                    .stdin(Stdio::null())
                    .stdout(file.try_clone().expect("log"))
                    .stderr(file)
                    .spawn()
                    .expect("spawn ringleader-node"),
            )
        })
        .collect();
    let pids = nodes.iter().map(|p| p.0.id()).collect();
    let mut config = test_config(0);
    config.controller.nodes = ports.iter().map(|p| format!("http://127.0.0.1:{p}")).collect();
    config.controller.etcd_endpoint = format!("http://{}", etcd.client);
    let ctl = TestController::start_with(config).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let c = ctl.client().get_cluster(pb::GetClusterRequest {}).await.unwrap().into_inner();
        if c.nodes.len() == 3 && c.nodes.iter().all(|n| n.reachable) {
            break;
        }
        assert!(Instant::now() < deadline, "nodes not reachable within 60 s: {c:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Cluster { _nodes: nodes, pids, logs, relays, ctl }
}

/// A kept `lease` election at the test's timing.
fn lease_election() -> pb::StartElectionRequest {
    pb::StartElectionRequest {
        detector: Some(pb::FailureDetector { period_ms: PERIOD_MS, timeout_ms: 4 * PERIOD_MS }),
        ..kept("lease")
    }
}

/// The node index of a leader named `<tag><i>`.
fn index(l: &pb::Leader) -> usize {
    let node = &l.leader.as_ref().expect("a leader").node;
    node[node.len() - 1..].parse().expect("a node of this test")
}

/// Three node processes keep a lease in a real etcd: they agree on a holder; SIGKILL of the
/// holder's process makes another node take the lease once the record has stood still for
/// LeaseDuration, and the two others agree on it within LeaseDuration + 3 RetryPeriods plus the
/// controller's polling. The failover time is printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_holder_loses_the_lease_to_another_node() {
    let Some(etcd) = start_etcd().await else { return };
    let c = cluster(&etcd, "k").await;
    let mut client = c.ctl.client();
    let e = client.start_election(lease_election()).await.unwrap().into_inner();
    let first = leader_until(&mut client, &e.election_id, Duration::from_secs(20), |l| l.agreed).await;
    let holder = index(&first);
    tracing::info!("--- kill the holder {holder}");
    let killed = Instant::now();
    assert!(Command::new("kill").args(["-KILL", &c.pids[holder].to_string()]).status().unwrap().success());
    let next = leader_until(&mut client, &e.election_id, Duration::from_secs(20), |l| {
        l.agreed && l.leader.as_ref().is_some_and(|r| r.id != first.leader.as_ref().unwrap().id)
    })
    .await;
    let took = killed.elapsed();
    assert_ne!(index(&next), holder);
    assert!(next.term > first.term, "a new holder is a new transition: {first:?} then {next:?}");
    assert!(took >= Duration::from_millis(LEASE_DURATION_MS - PERIOD_MS), "taken over after {took:?}");
    assert!(took < Duration::from_millis(LEASE_DURATION_MS + 3 * PERIOD_MS + 2_000), "taken over after {took:?}");
    eprintln!(
        "lease on etcd: SIGKILL of the holder {}; {} agreed on after {} ms (LeaseDuration {LEASE_DURATION_MS} ms)",
        first.leader.as_ref().unwrap().node,
        next.leader.as_ref().unwrap().node,
        took.as_millis()
    );
    c.ctl.stop().await;
}

/// A holder cut off from etcd (its relay drops every connection) stops leading within its
/// RenewDeadline, before any other node leads: in the timeline, on the nodes' clocks (one host),
/// its belief ends before another node's claim begins, and no overlap is reported; another node
/// holds the lease, and once the cut heals the old holder follows it too. The gap is printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_holder_cut_off_from_etcd_stops_before_another_leads() {
    let Some(etcd) = start_etcd().await else { return };
    let c = cluster(&etcd, "c").await;
    let mut client = c.ctl.client();
    let e = client.start_election(lease_election()).await.unwrap().into_inner();
    let first = leader_until(&mut client, &e.election_id, Duration::from_secs(20), |l| l.agreed).await;
    let holder = index(&first);
    let holder_id = first.leader.as_ref().unwrap().id;
    tracing::info!("--- cut the holder {holder} off from etcd");
    let since_us = ringleader_tests::unix_us();
    c.relays[holder].cut(true);
    // The cut-off node cannot read who holds the lease now: the others agree without it.
    let next = leader_until(&mut client, &e.election_id, Duration::from_secs(20), |l| {
        l.leader.as_ref().is_some_and(|r| r.id != holder_id)
    })
    .await;
    let record =
        client.get_election(pb::GetElectionRequest { election_id: e.election_id.clone() }).await.unwrap().into_inner();
    let position_of = |id: u64| record.participants.iter().find(|p| p.id == id).map(|p| p.position);
    let holder_position = position_of(holder_id).expect("the holder takes part");
    let later: Vec<&pb::LeadershipChange> = record.timeline.iter().filter(|c| c.node_us >= since_us).collect();
    let stopped = later
        .iter()
        .find(|c| c.position == holder_position && c.leader_id != holder_id)
        .unwrap_or_else(|| panic!("the cut-off holder never stopped leading: {later:?}"));
    let claimed = later
        .iter()
        .find(|c| c.leader_id != 0 && c.leader_id != holder_id && position_of(c.leader_id) == Some(c.position))
        .unwrap_or_else(|| panic!("nobody else claimed the lease: {later:?}"));
    assert!(
        stopped.node_us < claimed.node_us,
        "the holder stopped at {} µs, after {} claimed at {} µs",
        stopped.node_us,
        claimed.node,
        claimed.node_us
    );
    let stop_after_ms = (stopped.node_us - since_us) / 1_000;
    // client-go's renew rounds: up to RetryPeriod + RenewDeadline after the last success.
    assert!(stop_after_ms <= PERIOD_MS + RENEW_DEADLINE_MS + 200, "stopped {stop_after_ms} ms after the cut");
    assert!(record.overlaps.is_empty(), "{:?}", record.overlaps);
    tracing::info!("--- heal: the old holder reads the new one");
    c.relays[holder].cut(false);
    leader_until(&mut client, &e.election_id, Duration::from_secs(20), |l| {
        l.agreed && l.leader.as_ref().is_some_and(|r| r.id == next.leader.as_ref().unwrap().id)
    })
    .await;
    eprintln!(
        "lease on etcd: holder {} cut off from etcd; it stopped leading {stop_after_ms} ms after, {} µs before {} \
         claimed the lease; {} agreed on",
        first.leader.as_ref().unwrap().node,
        claimed.node_us - stopped.node_us,
        claimed.node,
        next.leader.as_ref().unwrap().node
    );
    c.ctl.stop().await;
}

/// Beyond the lease's clock model: the holder's clock is set to a quarter of real time
/// (`InjectFault clock`, below (RetryPeriod + RenewDeadline) / LeaseDuration = 0.8), then it is cut off from etcd.
/// Its RenewDeadline now lasts up to four times as long by real time, so another node takes the
/// lease while the old holder still believes it leads: the record reports the overlap, naming the
/// old holder, on the nodes' clocks. The overlap is printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_holder_clock_beyond_the_model_shows_two_leaders() {
    let Some(etcd) = start_etcd().await else { return };
    let c = cluster(&etcd, "s").await;
    let mut client = c.ctl.client();
    let e = client.start_election(lease_election()).await.unwrap().into_inner();
    let first = leader_until(&mut client, &e.election_id, Duration::from_secs(20), |l| l.agreed).await;
    let holder = index(&first);
    let old = first.leader.clone().unwrap();
    let clock = pb::ClockFault { node: old.node.clone(), rate: 0.25 };
    let fault =
        pb::InjectFaultRequest { kind: Some(pb::inject_fault_request::Kind::Clock(clock)), ..Default::default() };
    client.inject_fault(fault).await.unwrap();
    c.relays[holder].cut(true);
    leader_until(&mut client, &e.election_id, Duration::from_secs(20), |l| {
        l.leader.as_ref().is_some_and(|r| r.id != old.id)
    })
    .await;
    // Time for the old holder's slowed RenewDeadline to run out.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let done = client.stop_election(pb::StopElectionRequest { election_id: e.election_id }).await.unwrap().into_inner();
    let overlap = done.overlaps.iter().find(|o| o.contains(&format!("{} (term {})", old.node, first.term)));
    assert!(overlap.is_some(), "{:?}", done.overlaps);
    eprintln!("lease on etcd, holder clock at 0.25 and cut off: {}", overlap.unwrap());
    c.ctl.stop().await;
}

/// The keys under `/ringleader/lease/` in `etcd` now.
async fn lease_keys(etcd: &Etcd) -> Vec<String> {
    let mut kv =
        etcd_client::Client::connect([format!("http://{}", etcd.client)], None).await.expect("etcd").kv_client();
    let options = etcd_client::GetOptions::new().with_prefix().with_keys_only();
    let resp = kv.get("/ringleader/lease/", Some(options)).await.expect("read the lease keys");
    resp.kvs().iter().map(|kv| String::from_utf8_lossy(kv.key()).into_owned()).collect()
}

/// Wait up to `within` for `etcd` to hold exactly `want` lease keys; the keys it holds then.
async fn lease_keys_until(etcd: &Etcd, want: usize, within: Duration) -> Vec<String> {
    let deadline = Instant::now() + within;
    loop {
        let keys = lease_keys(etcd).await;
        if keys.len() == want || Instant::now() >= deadline {
            return keys;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The descriptors process `pid` holds open.
fn open_descriptors(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

/// Fifty kept lease elections on the same three node processes: each process reaches etcd through
/// one client, whatever the number of elections, so its open descriptors stay where they were
/// with one election (a client per election took one connection each: 210 elections used up
/// nofile 1,024). The counts are printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_lease_elections_keep_one_etcd_connection_per_node_process() {
    let Some(etcd) = start_etcd().await else { return };
    let c = cluster(&etcd, "f").await;
    let mut client = c.ctl.client();
    // A slower period than the other tests': fifty holders renew at once on a 2-core CI host.
    let slow = pb::StartElectionRequest {
        detector: Some(pb::FailureDetector { period_ms: 500, timeout_ms: 2_000 }),
        ..kept("lease")
    };
    let first = client.start_election(slow.clone()).await.unwrap().into_inner();
    leader_until(&mut client, &first.election_id, Duration::from_secs(20), |l| l.agreed).await;
    let before: Vec<usize> = c.pids.iter().map(|&p| open_descriptors(p)).collect();
    tracing::info!("--- 49 more elections");
    let mut ids = vec![first.election_id];
    for _ in 1..50 {
        ids.push(client.start_election(slow.clone()).await.unwrap().into_inner().election_id);
    }
    for id in &ids {
        leader_until(&mut client, id, Duration::from_secs(60), |l| l.agreed).await;
    }
    let after: Vec<usize> = c.pids.iter().map(|&p| open_descriptors(p)).collect();
    eprintln!("lease on etcd: open descriptors of the node processes with 1 election {before:?}, with 50 {after:?}");
    for (b, a) in before.iter().zip(&after) {
        assert!(*a <= b + 8, "descriptors grew with the elections: {before:?} with 1, {after:?} with 50");
    }
    for id in ids {
        client.stop_election(pb::StopElectionRequest { election_id: id }).await.unwrap();
    }
    c.ctl.stop().await;
}

/// Every lease election's key leaves etcd when the election ends: three stopped kept
/// leaderships and a finished one-shot election leave no key under `/ringleader/lease/` (a key
/// per election stayed for good).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ended_lease_election_leaves_no_key_in_etcd() {
    let Some(etcd) = start_etcd().await else { return };
    let c = cluster(&etcd, "d").await;
    let mut client = c.ctl.client();
    let mut ids = Vec::new();
    for _ in 0..3 {
        let e = client.start_election(lease_election()).await.unwrap().into_inner();
        leader_until(&mut client, &e.election_id, Duration::from_secs(20), |l| l.agreed).await;
        ids.push(e.election_id);
    }
    assert_eq!(lease_keys(&etcd).await.len(), 3, "one key per running election");
    tracing::info!("--- stop the kept leaderships");
    for id in ids {
        client.stop_election(pb::StopElectionRequest { election_id: id }).await.unwrap();
    }
    let left = lease_keys_until(&etcd, 0, Duration::from_secs(10)).await;
    assert!(left.is_empty(), "keys left after the elections stopped: {left:?}");
    tracing::info!("--- a one-shot election");
    let one_shot = client.start_election(ringleader_tests::election("lease")).await.unwrap().into_inner();
    assert_eq!(one_shot.state, pb::ElectionState::Finished as i32, "{one_shot:?}");
    let left = lease_keys_until(&etcd, 0, Duration::from_secs(10)).await;
    assert!(left.is_empty(), "keys left after the one-shot election finished: {left:?}");
    c.ctl.stop().await;
}

/// Lines of `log` that carry `needle`.
fn log_lines(log: &std::path::Path, needle: &str) -> Vec<String> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines().filter(|l| l.contains(needle)).map(str::to_string).collect()
}

/// An etcd at its quota (NOSPACE alarm: 1 MiB, filled with the history of one key rewritten)
/// refuses every write, so a lease election gets no leader: each node process says so in one
/// WARN that names the election, the endpoint and the remedy (not one per failed write: it
/// renews every RetryPeriod), and the election's errors say it too. The remedy the WARN gives
/// (compact, defragment, `alarm disarm`) brings a leader without restarting anything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_etcd_out_of_space_is_reported_once_and_the_remedy_brings_a_leader() {
    let Some(etcd) = start_etcd_with(&["--quota-backend-bytes", "1048576"]).await else { return };
    let mut admin = etcd_client::Client::connect([format!("http://{}", etcd.client)], None).await.expect("etcd");
    tracing::info!("--- fill etcd with the history of one key");
    let value = vec![b'x'; 300 * 1024];
    let mut filled = false;
    for _ in 0..64 {
        match admin.put("/filler", value.clone(), None).await {
            Ok(_) => {}
            Err(e) => {
                assert!(e.to_string().contains("database space exceeded"), "{e}");
                filled = true;
                break;
            }
        }
    }
    assert!(filled, "etcd took 64 writes of 300 KiB under a 1 MiB quota");
    let c = cluster(&etcd, "q").await;
    let mut client = c.ctl.client();
    let e = client.start_election(lease_election()).await.unwrap().into_inner();
    // Thirty RetryPeriods: thirty refused writes or reads per node.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let l = client.get_leader(pb::GetLeaderRequest { election_id: e.election_id.clone() }).await;
    assert!(l.as_ref().is_err_and(|s| s.message().contains("no leader")), "a leader with etcd refusing writes: {l:?}");
    for log in &c.logs {
        let warned = log_lines(log, "NOSPACE");
        assert_eq!(warned.len(), 1, "{}: one WARN, then quiet for its interval: {warned:#?}", log.display());
        for what in ["WARN", e.election_id.as_str(), "compact", "defrag", "alarm disarm"] {
            assert!(warned[0].contains(what), "the WARN names `{what}`: {}", warned[0]);
        }
    }
    eprintln!("lease on etcd out of space: {}", log_lines(&c.logs[0], "NOSPACE")[0]);
    tracing::info!("--- the remedy: compact, defragment, disarm");
    let revision = admin.status().await.expect("status").header().expect("a header").revision();
    admin.compact(revision, None).await.expect("compact");
    admin.defragment().await.expect("defragment");
    // `etcdctl alarm disarm`: deactivate each member's alarm.
    let alarms = admin.alarm(AlarmAction::Get, AlarmType::None, None).await.expect("alarm list");
    assert!(alarms.alarms().iter().any(|a| a.alarm() == AlarmType::Nospace), "no NOSPACE alarm raised");
    for a in alarms.alarms() {
        let mut member = etcd_client::AlarmOptions::new();
        member.with_member(a.member_id());
        admin.alarm(AlarmAction::Deactivate, a.alarm(), Some(member)).await.expect("disarm");
    }
    leader_until(&mut client, &e.election_id, Duration::from_secs(20), |l| l.agreed).await;
    c.ctl.stop().await;
}
