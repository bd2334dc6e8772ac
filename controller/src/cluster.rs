//! The node processes the controller drives: a static list of addresses or
//! the embedded local cluster (`--local-nodes N`: N node servers on
//! 127.0.0.1 in this process, talking real gRPC to each other).
//!
//! The cluster keeps one `Agent` client per node and follows every node's
//! `Events` stream, handing each event to the election that registered its id
//! with [`Cluster::subscribe`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use ringleader_node::runtime::{self, NodeConfig};
use ringleader_proto::v1::{self as pb, agent_client::AgentClient};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tonic::transport::{Channel, Endpoint};
use tracing::{debug, info, warn};

use crate::config::ControllerConfig;

/// Errors building the cluster.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// A node address is not a valid endpoint.
    #[error("bad node address `{address}`: {source}")]
    BadAddress {
        /// The address.
        address: String,
        /// Why.
        source: tonic::transport::Error,
    },
    /// A local node could not bind its listener.
    #[error("cannot bind a local node on 127.0.0.1: {0}")]
    Bind(#[from] std::io::Error),
}

/// One node process.
#[derive(Debug)]
pub struct Node {
    index: usize,
    address: String,
    name: RwLock<String>,
    client: AgentClient<Channel>,
    events_connected: AtomicBool,
}

impl Node {
    /// Position of the node in the cluster (LIVE position `i` runs on node `i`).
    pub fn index(&self) -> usize {
        self.index
    }

    /// The node's gRPC address, e.g. `http://127.0.0.1:7001`; peers dial it too.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The node's process name (its address until the node has told its name).
    pub fn name(&self) -> String {
        self.name.read().map(|n| n.clone()).unwrap_or_else(|_| self.address.clone())
    }

    /// A client of the node's `Agent` service (cheap to clone).
    pub fn client(&self) -> AgentClient<Channel> {
        self.client.clone()
    }

    /// Is the node's event stream currently open?
    pub fn events_connected(&self) -> bool {
        self.events_connected.load(Ordering::Relaxed)
    }

    fn set_name(&self, name: &str) {
        if !name.is_empty()
            && let Ok(mut n) = self.name.write()
        {
            *n = name.to_string();
        }
    }
}

/// An event from node `node` (its index in the cluster).
pub type RoutedEvent = (usize, pb::NodeEvent);

type Routes = Arc<Mutex<HashMap<String, mpsc::UnboundedSender<RoutedEvent>>>>;

/// Receives the events of one election; unregisters when dropped.
#[derive(Debug)]
pub struct Subscription {
    election_id: String,
    routes: Routes,
    rx: mpsc::UnboundedReceiver<RoutedEvent>,
}

impl Subscription {
    /// The next event (never `None` while the cluster lives).
    pub async fn recv(&mut self) -> Option<RoutedEvent> {
        self.rx.recv().await
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if let Ok(mut r) = self.routes.lock() {
            r.remove(&self.election_id);
        }
    }
}

/// The nodes, their clients, and the tasks following their events.
#[derive(Debug)]
pub struct Cluster {
    nodes: Vec<Arc<Node>>,
    routes: Routes,
    stop: watch::Sender<bool>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    local: bool,
}

impl Cluster {
    /// Build the cluster the configuration describes: start the embedded
    /// local nodes (`local_nodes`) or connect (lazily) to `nodes`.
    pub async fn start(config: &ControllerConfig) -> Result<Arc<Cluster>, ClusterError> {
        let (stop, _) = watch::channel(false);
        let mut tasks = Vec::new();
        let mut members = Vec::new();
        if config.local_nodes > 0 {
            for i in 0..config.local_nodes {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
                let address = format!("http://{}", listener.local_addr()?);
                let name = format!("node-{i}");
                let cfg = NodeConfig { name: name.clone(), advertise: address.clone() };
                let mut rx = stop.subscribe();
                let node_name = name.clone();
                tasks.push(tokio::spawn(async move {
                    let shutdown = async move {
                        let _ = rx.wait_for(|s| *s).await;
                    };
                    if let Err(e) = runtime::serve(listener, cfg, shutdown).await {
                        warn!(node = %node_name, error = %e, "local node stopped with an error");
                    }
                }));
                members.push((name, address));
            }
            info!(nodes = config.local_nodes, "started the embedded local cluster on 127.0.0.1");
        } else {
            members.extend(config.nodes.iter().map(|a| (a.clone(), a.clone())));
        }
        let mut nodes = Vec::with_capacity(members.len());
        for (index, (name, address)) in members.into_iter().enumerate() {
            let endpoint = Endpoint::from_shared(address.clone())
                .map_err(|source| ClusterError::BadAddress { address: address.clone(), source })?
                .tcp_nodelay(true)
                .connect_timeout(config.rpc_timeout())
                .http2_keep_alive_interval(Duration::from_secs(10))
                .keep_alive_while_idle(true);
            let client = AgentClient::new(endpoint.connect_lazy());
            nodes.push(Arc::new(Node {
                index,
                address,
                name: RwLock::new(name),
                client,
                events_connected: AtomicBool::new(false),
            }));
        }
        let routes: Routes = Arc::default();
        for node in &nodes {
            tasks.push(tokio::spawn(follow_events(node.clone(), routes.clone(), stop.subscribe())));
        }
        Ok(Arc::new(Cluster { nodes, routes, stop, tasks: Mutex::new(tasks), local: config.local_nodes > 0 }))
    }

    /// The nodes, in cluster order.
    pub fn nodes(&self) -> &[Arc<Node>] {
        &self.nodes
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// No nodes at all (only SIMULATED elections can run).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Is this the embedded local cluster?
    pub fn is_local(&self) -> bool {
        self.local
    }

    /// Wait until every node's event stream is open, or `timeout` passes.
    /// Returns whether all are open.
    pub async fn wait_ready(&self, timeout: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if self.nodes.iter().all(|n| n.events_connected()) {
                return true;
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Receive the node events of `election_id` (register before preparing the nodes).
    pub fn subscribe(&self, election_id: &str) -> Subscription {
        let (tx, rx) = mpsc::unbounded_channel();
        if let Ok(mut r) = self.routes.lock() {
            r.insert(election_id.to_string(), tx);
        }
        Subscription { election_id: election_id.to_string(), routes: self.routes.clone(), rx }
    }

    /// Stop following events and stop the local nodes; waits for them.
    pub async fn shutdown(&self) {
        let _ = self.stop.send(true);
        let tasks = self.tasks.lock().map(|mut t| std::mem::take(&mut *t)).unwrap_or_default();
        for t in tasks {
            if tokio::time::timeout(Duration::from_secs(5), t).await.is_err() {
                warn!("a cluster task did not stop within 5 s");
            }
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

/// Follow one node's `Events` stream for as long as the cluster lives,
/// reconnecting with back-off, and route each event to its election.
async fn follow_events(node: Arc<Node>, routes: Routes, mut stop: watch::Receiver<bool>) {
    let mut backoff = Duration::from_millis(50);
    loop {
        let session = async {
            let mut client = node.client();
            if let Ok(info) = client.info(pb::InfoRequest {}).await {
                node.set_name(&info.get_ref().name);
            }
            let mut stream = client.events(pb::EventsRequest {}).await?.into_inner();
            node.events_connected.store(true, Ordering::Relaxed);
            debug!(node = %node.name(), "following node events");
            while let Some(event) = stream.message().await? {
                let tx = routes.lock().ok().and_then(|r| r.get(&event.election_id).cloned());
                if let Some(tx) = tx {
                    let _ = tx.send((node.index, event));
                }
            }
            Ok::<(), tonic::Status>(())
        };
        let connected_before = node.events_connected();
        tokio::select! {
            result = session => {
                if let Err(e) = result {
                    debug!(node = %node.address, error = %e, "node event stream closed");
                }
            }
            _ = stop.wait_for(|s| *s) => return,
        }
        if node.events_connected.swap(false, Ordering::Relaxed) || connected_before {
            backoff = Duration::from_millis(50);
        }
        tokio::select! {
            _ = tokio::time::sleep(backoff) => {}
            _ = stop.wait_for(|s| *s) => return,
        }
        backoff = (backoff * 2).min(Duration::from_secs(2));
    }
}
