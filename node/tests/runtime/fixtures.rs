//! Shared fixtures: in-process node servers on loopback and election plans.

use std::time::Duration;

use ringleader_core::topology::{Topology, TopologyKind};
use ringleader_node::runtime::{self, NodeConfig, RuntimeError};
use ringleader_proto::v1::{self as pb, agent_client::AgentClient};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::transport::Channel;

/// One node server running in the test's runtime.
pub struct TestNode {
    pub address: String,
    pub agent: AgentClient<Channel>,
    stop: Option<oneshot::Sender<()>>,
    handle: Option<JoinHandle<Result<(), RuntimeError>>>,
}

impl TestNode {
    /// Start a node on `bind` (e.g. `127.0.0.1:0`).
    pub async fn start_on(name: &str, bind: &str) -> TestNode {
        Self::start_tuned(name, bind, |_| {}).await
    }

    /// Start a node on `bind` with its default configuration changed by `tune`.
    pub async fn start_tuned(name: &str, bind: &str, tune: impl FnOnce(&mut NodeConfig)) -> TestNode {
        let listener = tokio::net::TcpListener::bind(bind).await.expect("bind");
        let address = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = oneshot::channel::<()>();
        let mut cfg = NodeConfig { name: name.to_string(), advertise: address.clone(), ..NodeConfig::default() };
        tune(&mut cfg);
        let handle = tokio::spawn(runtime::serve(listener, cfg, async move {
            let _ = stopped.await;
        }));
        let agent = AgentClient::new(channel(&address).await);
        TestNode { address, agent, stop: Some(stop), handle: Some(handle) }
    }

    pub async fn start(name: &str) -> TestNode {
        Self::start_on(name, "127.0.0.1:0").await
    }

    /// Ask the node to stop and wait for `serve` to return; returns how long that took.
    pub async fn stop(&mut self) -> Duration {
        let t0 = std::time::Instant::now();
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(h) = self.handle.take() {
            tokio::time::timeout(Duration::from_secs(30), h)
                .await
                .expect("serve returned within 30 s")
                .expect("serve task did not panic")
                .expect("serve returned Ok");
        }
        t0.elapsed()
    }
}

/// A connected client channel to `address`.
pub async fn channel(address: &str) -> Channel {
    tonic::transport::Endpoint::from_shared(address.to_string()).unwrap().connect().await.expect("connect")
}

pub async fn start_nodes(n: usize) -> Vec<TestNode> {
    let mut nodes = Vec::with_capacity(n);
    for i in 0..n {
        nodes.push(TestNode::start(&format!("node-{i}")).await);
    }
    nodes
}

/// The Prepare requests of a ring election with position i on `nodes[i]`.
pub fn ring_plan(
    election_id: &str,
    algorithm: &str,
    kind: TopologyKind,
    ids: &[u64],
    initiators: &[u32],
    rule: pb::Rule,
    nodes: &[TestNode],
) -> Vec<pb::PrepareRequest> {
    let n = ids.len() as u32;
    let topo = Topology::build(kind, n, 1).unwrap();
    (0..n)
        .map(|i| pb::PrepareRequest {
            election_id: election_id.to_string(),
            algorithm: algorithm.to_string(),
            rule: rule as i32,
            position: i,
            size: n,
            id: ids[i as usize],
            ports: topo
                .ports(i)
                .iter()
                .map(|l| pb::PortPeer {
                    position: l.peer,
                    address: if l.outgoing { nodes[l.peer as usize].address.clone() } else { String::new() },
                    remote_port: l.remote_port,
                    id: ids[l.peer as usize],
                    label: pb::Compass::from(l.label).into(),
                })
                .collect(),
            initiator: initiators.contains(&i),
            // What the simulator draws for seed 0 (SimConfig::default()).
            coin: ringleader_core::algo::coin(0, i),
            keep_leader: false,
            detector: None,
            traceparent: String::new(),
            log_messages: false,
            start: false,
            options: Default::default(),
            etcd_endpoint: String::new(),
            controller_incarnation: 0,
        })
        .collect()
}

/// Position 0 (id 1, an initiator) of a 2-ring AsFar election `election_id` whose one outgoing port
/// leads to `address`: for tests of what a node does with a peer it cannot reach or that hangs.
pub fn lone_initiator(election_id: &str, address: &str) -> pb::PrepareRequest {
    pb::PrepareRequest {
        election_id: election_id.into(),
        algorithm: "as-far".into(),
        rule: pb::Rule::Max as i32,
        position: 0,
        size: 2,
        id: 1,
        ports: vec![
            pb::PortPeer { position: 1, address: String::new(), remote_port: 1, ..Default::default() },
            pb::PortPeer { position: 1, address: address.into(), remote_port: 0, ..Default::default() },
        ],
        initiator: true,
        ..Default::default()
    }
}

pub async fn prepare_all(nodes: &mut [TestNode], plan: Vec<pb::PrepareRequest>) {
    for (node, req) in nodes.iter_mut().zip(plan) {
        node.agent.prepare(req).await.expect("prepare");
    }
}

pub async fn start_all(nodes: &mut [TestNode], election_id: &str, positions: &[u32]) {
    for &p in positions {
        nodes[p as usize].agent.start(pb::StartRequest { election_id: election_id.to_string() }).await.expect("start");
    }
}

/// Poll every node's status until all have decided and the traffic has gone
/// quiet (totals stable over a few polls), or panic after `timeout`.
pub async fn wait_finished(
    nodes: &mut [TestNode],
    election_id: &str,
    timeout: Duration,
) -> Vec<pb::NodeElectionStatus> {
    let deadline = tokio::time::Instant::now() + timeout;
    let mut last_total = None;
    let mut stable = 0;
    loop {
        let mut all = Vec::with_capacity(nodes.len());
        for node in nodes.iter_mut() {
            let st = node.agent.status(pb::StatusRequest { election_id: election_id.to_string() }).await;
            all.push(st.expect("status").into_inner());
        }
        let decided = all.iter().all(|s| s.role != pb::Role::Undecided as i32);
        let total: (u64, u64) = all
            .iter()
            .fold((0, 0), |(s, r), x| (s + x.election_messages + x.notification_messages, r + x.received + x.rejected));
        // Quiet: everything sent has been received (or refused) and nothing changed since last time.
        if decided && total.0 == total.1 && last_total == Some(total) {
            stable += 1;
            if stable >= 2 {
                return all;
            }
        } else {
            stable = 0;
        }
        last_total = Some(total);
        assert!(tokio::time::Instant::now() < deadline, "election {election_id} did not finish: {all:#?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Totals over every node: (election messages, notification messages, bytes, max causal time).
pub fn totals(all: &[pb::NodeElectionStatus]) -> (u64, u64, u64, u64) {
    all.iter().fold((0, 0, 0, 0), |t, s| {
        (t.0 + s.election_messages, t.1 + s.notification_messages, t.2 + s.bytes, t.3.max(s.max_causal_time))
    })
}

/// Every node decided, they agree on `leader`, exactly one of them leads, and none recorded an error.
pub fn assert_elected(all: &[pb::NodeElectionStatus], leader: u64) {
    for s in all {
        assert_eq!(s.leader_id, leader, "{s:#?}");
        assert!(s.errors.is_empty(), "{s:#?}");
        assert_eq!(s.rejected, 0, "{s:#?}");
    }
    assert_eq!(all.iter().filter(|s| s.role == pb::Role::Leader as i32).count(), 1, "{all:#?}");
    assert!(all.iter().all(|s| s.role == pb::Role::Leader as i32 || s.role == pb::Role::Follower as i32));
}

/// Exactly one node leads and every other follows it or, where the algorithm
/// does not tell followers who leads (Elect_root), names no leader; nothing
/// was refused or went wrong.
pub fn assert_one_leader(all: &[pb::NodeElectionStatus]) {
    let leaders: Vec<&pb::NodeElectionStatus> = all.iter().filter(|s| s.role == pb::Role::Leader as i32).collect();
    assert_eq!(leaders.len(), 1, "{all:#?}");
    let leader = leaders[0].leader_id;
    for s in all {
        assert!(s.errors.is_empty() && s.rejected == 0, "{s:#?}");
        assert!(s.role == pb::Role::Leader as i32 || s.role == pb::Role::Follower as i32, "{s:#?}");
        assert!(s.leader_id == leader || s.leader_id == ringleader_core::algo::UNKNOWN_LEADER, "{s:#?}");
    }
}

/// Totals over every node: (election messages, notification messages).
pub fn counts(all: &[pb::NodeElectionStatus]) -> (u64, u64) {
    let t = totals(all);
    (t.0, t.1)
}
