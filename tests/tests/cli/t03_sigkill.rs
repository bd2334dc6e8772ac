use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ringleader_proto::v1 as pb;
use ringleader_proto::v1::agent_client::AgentClient;
use ringleader_proto::v1::controller_client::ControllerClient;
use ringleader_tests::{
    Proc, TestController, assert_correct, controller_binary, election, first_leader, free_port, kept, leader_until,
    leaderless, node_binary, test_config, unix_us,
};

/// A `ringleader-node` process, SIGKILLed when dropped.
struct NodeProcess {
    child: Child,
    log: std::path::PathBuf,
}

impl NodeProcess {
    fn spawn(name: &str, port: u16) -> NodeProcess {
        Self::spawn_with(name, port, &[])
    }

    /// [`NodeProcess::spawn`] with more environment (`RINGLEADER__NODE__…` settings).
    fn spawn_with(name: &str, port: u16, env: &[(&str, &str)]) -> NodeProcess {
        let log = std::env::temp_dir().join(format!("ringleader-node-{}-{name}-{port}.log", std::process::id()));
        let file = std::fs::File::options().create(true).append(true).open(&log).expect("log file");
        let child = Command::new(node_binary())
            .args(["--listen", &format!("127.0.0.1:{port}"), "--name", name])
            .envs(env.iter().copied())
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(file.try_clone().expect("log"))
            .stderr(file)
            .spawn()
            .expect("spawn ringleader-node");
        NodeProcess { child, log }
    }

    /// SIGKILL: no shutdown, no goodbye on any link.
    fn kill(&mut self) {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill").args(["-KILL", &pid]).status().expect("kill -KILL").success());
        let status = self.child.wait().expect("wait");
        assert!(!status.success(), "killed by a signal: {status}");
    }
}

impl NodeProcess {
    /// SIGTERM, as Kubernetes stops a pod: the process must hand over and exit 0.
    fn terminate(&mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill").args(["-TERM", &pid]).status().expect("kill -TERM").success());
        self.child.wait().expect("wait")
    }
}

impl Drop for NodeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Wait until every node of the controller's cluster is reachable.
async fn wait_reachable(ctl: &TestController, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let cluster = ctl.client().get_cluster(pb::GetClusterRequest {}).await.unwrap().into_inner();
        if cluster.nodes.len() == n && cluster.nodes.iter().all(|c| c.reachable) {
            return;
        }
        assert!(Instant::now() < deadline, "nodes not reachable within 60 s: {cluster:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Four real `ringleader-node` processes driven by a controller: an election works; after one node is
/// killed with SIGKILL the next election of all four is refused or ends FAILED, naming that node (no hang); restarted on the
/// same address, the node rejoins cleanly and elections work again, the other nodes' links reconnecting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_node_fails_elections_and_rejoins_after_restart() {
    let ports: Vec<u16> = (0..4).map(|_| free_port()).collect();
    let mut nodes: Vec<NodeProcess> =
        ports.iter().enumerate().map(|(i, &p)| NodeProcess::spawn(&format!("p{i}"), p)).collect();
    let mut config = test_config(0);
    config.controller.nodes = ports.iter().map(|p| format!("http://127.0.0.1:{p}")).collect();
    config.controller.decision_timeout_ms = 3_000;
    config.controller.rpc_timeout_ms = 2_000;
    let ctl = TestController::start_with(config).await;
    wait_reachable(&ctl, 4).await;
    let mut client = ctl.client();
    assert_correct(&client.start_election(election("stages")).await.unwrap().into_inner());

    nodes[2].kill();
    let started = Instant::now();
    // Refused at once when the controller has seen the node's stream break, else FAILED when its
    // Prepare fails: either way naming it.
    let why = match client.start_election(election("stages")).await {
        Ok(e) => {
            let e = e.into_inner();
            assert_eq!(e.state, pb::ElectionState::Failed as i32, "{e:?}");
            e.error
        }
        Err(refused) => {
            assert_eq!(refused.code(), tonic::Code::FailedPrecondition, "{refused:?}");
            refused.message().to_string()
        }
    };
    assert!(why.contains("p2"), "the reason names the dead node: {why}");
    assert!(started.elapsed() < Duration::from_secs(30), "failed promptly, not after a hang");

    nodes[2] = NodeProcess::spawn("p2", ports[2]);
    wait_reachable(&ctl, 4).await;
    for algorithm in ["stages", "as-far", "complete-villadangos"] {
        let e = client.start_election(election(algorithm)).await.unwrap().into_inner();
        assert_correct(&e);
        assert_eq!(e.n, 4, "{algorithm}");
    }
    let log = std::fs::read_to_string(&nodes[2].log).unwrap_or_default();
    assert!(log.contains("p2"), "the restarted node logged under its name");
    ctl.stop().await;
}

/// Four real `ringleader-node` processes keep a bully leader; SIGTERM to the leader's process (a
/// rolling update) makes it hand the leadership over before it exits: it exits 0, its log says
/// handed_over=true, the next best id leads a higher term agreed by the three others, and none of
/// them named no leader for as long as a failure detector would need (the loopback detector
/// suspects after 200 ms, and bully then waits 500 ms for the dead leader's answer): less than
/// 100 ms on their own clocks. The figures are printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminated_leader_hands_over_before_it_exits() {
    let ports: Vec<u16> = (0..4).map(|_| free_port()).collect();
    let mut nodes: Vec<NodeProcess> =
        ports.iter().enumerate().map(|(i, &p)| NodeProcess::spawn(&format!("t{i}"), p)).collect();
    let mut config = test_config(0);
    config.controller.nodes = ports.iter().map(|p| format!("http://127.0.0.1:{p}")).collect();
    let ctl = TestController::start_with(config).await;
    wait_reachable(&ctl, 4).await;
    let mut client = ctl.client();
    let e = client.start_election(kept("bully")).await.unwrap().into_inner();
    let first = first_leader(&mut client, &e.election_id, 4).await;
    let leader = first.leader.as_ref().unwrap();
    let i: usize = leader.node.trim_start_matches('t').parse().expect("a node of this test");
    let since_us = unix_us();
    let started = Instant::now();
    let status = nodes[i].terminate();
    let exited = started.elapsed();
    assert!(status.success(), "SIGTERM: exit {status}");
    let log = std::fs::read_to_string(&nodes[i].log).unwrap_or_default();
    assert!(log.contains("handed_over=true"), "the leader handed over before it exited: {log}");
    let second = leader_until(&mut client, &e.election_id, Duration::from_secs(20), |l| {
        l.agreed && l.term > first.term && l.leader.as_ref().is_some_and(|r| r.id == 3)
    })
    .await;
    let timeline = client
        .get_election(pb::GetElectionRequest { election_id: e.election_id.clone() })
        .await
        .unwrap()
        .into_inner()
        .timeline;
    let l = leaderless(&timeline, since_us, Some(leader.position));
    assert!(l.open.is_empty(), "a node still names no leader: {timeline:?}");
    let longest_us = l.longest_us;
    assert!(longest_us < 100_000, "{longest_us} µs without a leader: {timeline:?}");
    eprintln!(
        "SIGTERM to the bully leader {}: exited 0 after {} ms; id 3 leads term {}; the longest any other node \
         named no leader: {longest_us} µs",
        leader.node,
        exited.as_millis(),
        second.term
    );
    ctl.stop().await;
}

/// A paused leader is a failover with its real times and no overlap: three `ringleader-node`
/// processes keep a Chubby-style leader; SIGSTOP of the leader's process for 6 s lets the two
/// others elect, and while it is still stopped GetLeader names the new leader, agreed (the
/// frozen process had counted as believing until its stream broke: `agreed: false` for as long
/// as the pause). After SIGCONT and the stop, the paused leader's failover of the term it led is
/// dated within 1.5 s of the pause (it was dated when the stream broke, detection and agreement 0)
/// with its detection and agreement after it, and no overlap is reported from the frozen belief.
/// The pause waits for a settled cluster (every node answers, the leader agreed); a node taken
/// as down before (a pulse left unanswered at start on a loaded machine) and back in its own
/// term still has the pause as its failover (before, that start-up loss stood in its place).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_leader_is_a_failover_and_no_overlap() {
    let ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
    let nodes: Vec<NodeProcess> =
        ports.iter().enumerate().map(|(i, &p)| NodeProcess::spawn(&format!("s{i}"), p)).collect();
    let mut config = test_config(0);
    config.controller.nodes = ports.iter().map(|p| format!("http://127.0.0.1:{p}")).collect();
    let ctl = TestController::start_with(config).await;
    wait_reachable(&ctl, 3).await;
    let mut client = ctl.client();
    let started = Instant::now();
    let e = client.start_election(kept("chubby")).await.unwrap().into_inner();
    let first = settled_leader(&ctl, &e.election_id).await;
    let leader = first.leader.clone().unwrap();
    let i: usize = leader.node.trim_start_matches('s').parse().expect("a node of this test");
    let pid = nodes[i].child.id().to_string();
    let paused_ms = started.elapsed().as_millis() as u64;
    assert!(Command::new("kill").args(["-STOP", &pid]).status().expect("kill -STOP").success());
    let next = leader_until(&mut client, &e.election_id, Duration::from_secs(5), |l| {
        l.agreed && l.leader.as_ref().is_some_and(|r| r.node != leader.node)
    })
    .await;
    let agreed_ms = started.elapsed().as_millis() as u64 - paused_ms;
    tokio::time::sleep(Duration::from_secs(6).saturating_sub(Duration::from_millis(agreed_ms))).await;
    assert!(Command::new("kill").args(["-CONT", &pid]).status().expect("kill -CONT").success());
    tokio::time::sleep(Duration::from_secs(2)).await;
    let done = client
        .stop_election(pb::StopElectionRequest { election_id: e.election_id.clone() })
        .await
        .unwrap()
        .into_inner();
    assert!(done.violations.is_empty(), "{:?}", done.violations);
    assert!(done.overlaps.is_empty(), "an overlap from the frozen belief: {:?}", done.overlaps);
    // The pause's failover is the one of the paused leader in the term it led when paused: a
    // loss of it before (taken as down at start on a loaded machine) is of an earlier term, or
    // of this term and then dated afresh at the pause.
    let paused: Vec<&pb::Failover> = done
        .failovers
        .iter()
        .filter(|f| f.term == first.term && f.leader.as_ref().is_some_and(|l| l.node == leader.node))
        .collect();
    let [f] = paused.as_slice() else {
        panic!("one failover of {} in term {}: {:?}", leader.node, first.term, done.failovers)
    };
    assert!(f.new_term > first.term, "{f:?}");
    // The election's clock started a little after `started`: the loss is dated before the pause
    // plus the pulse's half period, not when the stream broke.
    assert!(f.lost_at_ms <= paused_ms + 1_500, "lost at {} ms, paused at {paused_ms} ms: {f:?}", f.lost_at_ms);
    let (detection, agreement) = (f.detection_ms.expect("detected"), f.agreement_ms.expect("agreed"));
    assert!(detection > 0 && agreement >= detection, "{f:?}");
    assert_eq!(f.new_leader.as_ref().map(|l| &l.node), next.leader.as_ref().map(|l| &l.node));
    eprintln!(
        "SIGSTOP of the chubby leader {}: GetLeader agreed on {} {agreed_ms} ms after; failover: lost at {} ms \
         (paused at {paused_ms} ms), detection {detection} ms, agreement {agreement} ms, cause {}",
        leader.node,
        next.leader.as_ref().unwrap().node,
        f.lost_at_ms,
        f.cause
    );
    ctl.stop().await;
}

/// A leader taken as down a moment is followed again: three `ringleader-node` processes keep a
/// Chubby-style leader with a 5 s lease (detector timeout 1 s); SIGSTOP of the leader until the
/// controller takes it as down (its pulse unanswered for 1 s), then SIGCONT, well within the
/// lease: the same leader leads the same term, agreed, as on a loaded machine where a pulse went
/// unanswered at start. A second SIGSTOP, past the lease, lets the others elect: the record has one
/// failover of that leader's term, dated at this pause (after the first SIGSTOP ended), ending with
/// the new leader in a higher term. Before, the failover was the first SIGSTOP's, dated then.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_back_from_a_moment_down_fails_over_at_its_real_pause() {
    let ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
    let nodes: Vec<NodeProcess> =
        ports.iter().enumerate().map(|(i, &p)| NodeProcess::spawn(&format!("b{i}"), p)).collect();
    let mut config = test_config(0);
    config.controller.nodes = ports.iter().map(|p| format!("http://127.0.0.1:{p}")).collect();
    let ctl = TestController::start_with(config).await;
    wait_reachable(&ctl, 3).await;
    let mut client = ctl.client();
    let detector = Some(pb::FailureDetector { period_ms: 200, timeout_ms: 1_000 });
    let e = client.start_election(pb::StartElectionRequest { detector, ..kept("chubby") }).await.unwrap().into_inner();
    // Started after the election: its clock is never ahead of the election's.
    let started = Instant::now();
    let first = settled_leader(&ctl, &e.election_id).await;
    let leader = first.leader.clone().unwrap();
    let i: usize = leader.node.trim_start_matches('b').parse().expect("a node of this test");
    let pid = nodes[i].child.id().to_string();
    let signal = |sig: &str| assert!(Command::new("kill").args([sig, &pid]).status().expect("kill").success());

    tracing::info!("--- stop the leader until the controller takes it as down, then let it go on");
    signal("-STOP");
    taken_as_down(&mut client, &e.election_id).await;
    let resumed_ms = started.elapsed().as_millis() as u64;
    signal("-CONT");
    let back = settled_leader(&ctl, &e.election_id).await;
    assert_eq!((back.leader.as_ref().map(|l| &l.node), back.term), (Some(&leader.node), first.term), "{back:?}");

    tracing::info!("--- stop it past its lease: the others elect");
    signal("-STOP");
    let next = leader_until(&mut client, &e.election_id, Duration::from_secs(30), |l| {
        l.agreed && l.leader.as_ref().is_some_and(|r| r.node != leader.node)
    })
    .await;
    signal("-CONT");
    let done = client
        .stop_election(pb::StopElectionRequest { election_id: e.election_id.clone() })
        .await
        .unwrap()
        .into_inner();
    assert!(done.violations.is_empty(), "{:?}", done.violations);
    let ours: Vec<&pb::Failover> = done
        .failovers
        .iter()
        .filter(|f| f.term == first.term && f.leader.as_ref().is_some_and(|l| l.node == leader.node))
        .collect();
    let [f] = ours.as_slice() else {
        panic!("one failover of {} in term {}: {:?}", leader.node, first.term, done.failovers)
    };
    // Heard again only after the first stop ended; 1 ms for the rounding of the two clocks' ms.
    assert!(f.lost_at_ms + 1 >= resumed_ms, "dated at the second stop, not the first (over at {resumed_ms} ms): {f:?}");
    assert!(f.new_term > first.term && f.agreement_ms.is_some(), "{f:?}");
    assert_eq!(f.new_leader.as_ref().map(|l| &l.node), next.leader.as_ref().map(|l| &l.node));
    eprintln!(
        "a moment down: {} taken as down, back by {resumed_ms} ms in term {}; its failover lost at {} ms, detection \
         {:?} ms, agreement {:?} ms",
        leader.node, first.term, f.lost_at_ms, f.detection_ms, f.agreement_ms
    );
    ctl.stop().await;
}

/// Wait (at most 5 s) until the controller no longer shows kept leadership `id`'s leader as agreed
/// and live: its node taken as down, or no leader at all among the live nodes.
async fn taken_as_down(client: &mut ringleader_tests::Client, id: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match client.get_leader(pb::GetLeaderRequest { election_id: id.into() }).await {
            Ok(l) if l.get_ref().leader_down || !l.get_ref().agreed => return,
            Err(no) if no.code() == tonic::Code::FailedPrecondition => return,
            other => assert!(Instant::now() < deadline, "the leader is still agreed and live: {other:?}"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The leader of kept leadership `id` once the cluster has settled (at most 20 s): every node
/// answers (GetCluster), the live nodes agree on the leader and its node is not taken as down.
async fn settled_leader(ctl: &TestController, id: &str) -> pb::Leader {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut client = ctl.client();
    loop {
        let cluster = client.get_cluster(pb::GetClusterRequest {}).await.unwrap().into_inner();
        let leader = client.get_leader(pb::GetLeaderRequest { election_id: id.into() }).await;
        if let Ok(l) = &leader
            && l.get_ref().agreed
            && !l.get_ref().leader_down
            && cluster.nodes.iter().all(|c| c.reachable)
        {
            return leader.unwrap().into_inner();
        }
        assert!(Instant::now() < deadline, "no settled leader within 20 s: {leader:?}; {cluster:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A `ringleader-controller` process driving the nodes at `nodes` with its history at `history`;
/// its API on `port`, its log appended to `log`.
fn spawn_controller(port: u16, nodes: &[String], history: &std::path::Path, log: &std::path::Path) -> Proc {
    spawn_controller_with(port, nodes, &[("RINGLEADER__CONTROLLER__HISTORY_PATH", history.as_os_str())], log)
}

/// [`spawn_controller`] with the environment `env` (no history unless it names one).
fn spawn_controller_with(port: u16, nodes: &[String], env: &[(&str, &std::ffi::OsStr)], log: &std::path::Path) -> Proc {
    let file = std::fs::File::options().create(true).append(true).open(log).expect("log file");
    let child = Command::new(controller_binary())
        .args(["--host", "127.0.0.1", "--port", &port.to_string(), "--nodes", &nodes.join(",")])
        .envs(env.iter().copied())
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(file.try_clone().expect("log"))
        .stderr(file)
        .spawn()
        .expect("spawn ringleader-controller");
    Proc(child)
}

/// A client of the controller on `port`, once it answers (at most 30 s).
async fn controller_client(port: u16) -> ControllerClient<tonic::transport::Channel> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(c) = ControllerClient::connect(format!("http://127.0.0.1:{port}")).await {
            return c;
        }
        assert!(Instant::now() < deadline, "the controller on port {port} did not answer within 30 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// How many elections each node holds (`Info.elections`).
async fn held(nodes: &[String]) -> Vec<u64> {
    let mut counts = Vec::new();
    for address in nodes {
        let mut agent = AgentClient::connect(address.clone()).await.expect("connect to the node");
        counts.push(agent.info(pb::InfoRequest {}).await.expect("info").into_inner().elections);
    }
    counts
}

/// A controller with a history keeps a bully leadership on three `ringleader-node` processes (their
/// orphan grace off, so that no timer clears them) and is killed with SIGKILL: the nodes still hold
/// the election. A new controller on the same history and nodes reads it back FAILED (interrupted)
/// and it is aborted on every node (by the controller, and by the nodes that see a new controller
/// incarnation): within 15 s no node holds an election and each answers Status of it NotFound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_controller_aborts_what_its_killed_predecessor_left_running() {
    let dir = std::env::temp_dir().join(format!("ringleader-orphans-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (history, log) = (dir.join("history.redb"), dir.join("controller.log"));
    let ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
    let _nodes: Vec<NodeProcess> = ports
        .iter()
        .enumerate()
        .map(|(i, &p)| NodeProcess::spawn_with(&format!("o{i}"), p, &[("RINGLEADER__NODE__ORPHAN_GRACE_MS", "0")]))
        .collect();
    let addresses: Vec<String> = ports.iter().map(|p| format!("http://127.0.0.1:{p}")).collect();

    let port = free_port();
    let mut controller = spawn_controller(port, &addresses, &history, &log);
    let mut client = controller_client(port).await;
    let e = client.start_election(kept("bully")).await.unwrap().into_inner();
    first_leader(&mut client, &e.election_id, 3).await;
    assert_eq!(held(&addresses).await, [1, 1, 1]);

    tracing::info!("--- kill -9 the controller");
    controller.0.kill().expect("SIGKILL");
    controller.0.wait().expect("wait");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(held(&addresses).await, [1, 1, 1], "nobody aborted it: the nodes still run the leadership");

    tracing::info!("--- a new controller on the same history");
    let port = free_port();
    let _controller = spawn_controller(port, &addresses, &history, &log);
    let mut client = controller_client(port).await;
    let back =
        client.get_election(pb::GetElectionRequest { election_id: e.election_id.clone() }).await.unwrap().into_inner();
    assert_eq!(back.state, pb::ElectionState::Failed as i32, "{back:?}");
    assert!(back.error.contains("stopped while this election was running"), "{}", back.error);
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let counts = held(&addresses).await;
        if counts == [0, 0, 0] {
            break;
        }
        let log = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(Instant::now() < deadline, "the nodes still hold {counts:?} elections; controller log:\n{log}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for address in &addresses {
        let mut agent = AgentClient::connect(address.clone()).await.unwrap();
        let gone = agent.status(pb::StatusRequest { election_id: e.election_id.clone() }).await.unwrap_err();
        assert_eq!(gone.code(), tonic::Code::NotFound, "{gone:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A controller with no history (the default) keeps a bully leadership on three `ringleader-node`
/// processes with their default orphan grace (60 s) and is killed with SIGKILL. A new controller on
/// the same nodes opens its event streams at once; within 10 s, far within the grace, no node runs
/// the old leadership, each node's log WARNs naming the count, and the new controller keeps a
/// leadership of its own there. Before, its streams kept the grace from ever expiring and it knew
/// nothing to abort: the old leadership ran on the nodes for good.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_controller_without_history_ends_its_predecessors_leaderships() {
    let dir = std::env::temp_dir().join(format!("ringleader-no-history-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("controller.log");
    let ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
    let nodes: Vec<NodeProcess> =
        ports.iter().enumerate().map(|(i, &p)| NodeProcess::spawn(&format!("h{i}"), p)).collect();
    let addresses: Vec<String> = ports.iter().map(|p| format!("http://127.0.0.1:{p}")).collect();

    let port = free_port();
    let mut controller = spawn_controller_with(port, &addresses, &[], &log);
    let mut client = controller_client(port).await;
    let e = client.start_election(kept("bully")).await.unwrap().into_inner();
    first_leader(&mut client, &e.election_id, 3).await;
    assert_eq!(held(&addresses).await, [1, 1, 1]);

    tracing::info!("--- kill -9 the controller, start a new one without history");
    controller.0.kill().expect("SIGKILL");
    controller.0.wait().expect("wait");
    let port = free_port();
    let _controller = spawn_controller_with(port, &addresses, &[], &log);
    let mut client = controller_client(port).await;
    let restarted = Instant::now();
    loop {
        let counts = held(&addresses).await;
        if counts == [0, 0, 0] {
            break;
        }
        assert!(
            restarted.elapsed() < Duration::from_secs(10),
            "the nodes still run {counts:?} elections {:?} after the new controller started",
            restarted.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for node in &nodes {
        let text = std::fs::read_to_string(&node.log).unwrap_or_default();
        assert!(text.contains("aborted the 1 election(s) a controller that is gone left here"), "{text}");
    }

    tracing::info!("--- the new controller's own leadership stays");
    let mine = client.start_election(kept("bully")).await.unwrap().into_inner();
    first_leader(&mut client, &mine.election_id, 3).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(held(&addresses).await, [1, 1, 1]);
    let _ = std::fs::remove_dir_all(&dir);
}
