use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ringleader_proto::v1 as pb;
use ringleader_tests::{TestController, assert_correct, election, free_port, node_binary, test_config};

/// A `ringleader-node` process, SIGKILLed when dropped.
struct NodeProcess {
    child: Child,
    log: std::path::PathBuf,
}

impl NodeProcess {
    fn spawn(name: &str, port: u16) -> NodeProcess {
        let log = std::env::temp_dir().join(format!("ringleader-node-{}-{name}-{port}.log", std::process::id()));
        let file = std::fs::File::options().create(true).append(true).open(&log).expect("log file");
        let child = Command::new(node_binary())
            .args(["--listen", &format!("127.0.0.1:{port}"), "--name", name])
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
/// killed with SIGKILL the next election ends FAILED with a reason naming that node (no hang); restarted on the
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
    let e = client.start_election(election("stages")).await.unwrap().into_inner();
    assert_eq!(e.state, pb::ElectionState::Failed as i32, "{e:?}");
    assert!(e.error.contains("p2"), "the reason names the dead node: {}", e.error);
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
