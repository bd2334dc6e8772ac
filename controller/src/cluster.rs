//! The node processes the controller drives: a static list of addresses,
//! the nodes behind a DNS name (`discover`: a Kubernetes headless Service),
//! or the embedded local cluster (`--local-nodes N`: N node servers on
//! 127.0.0.1 in this process, talking real gRPC to each other).
//!
//! The cluster keeps one `Agent` client per node and follows every node's
//! `Events` stream, handing each event to the election that registered its id
//! with [`Cluster::subscribe`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use ringleader_node::auth::{Auth, Bearer, Secret};
use ringleader_node::runtime::{self, NodeConfig};
use ringleader_node::tls::Tls;
use ringleader_proto::v1::{self as pb, agent_client::AgentClient};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};
use tracing::{debug, info, warn};

use crate::calls::{CallError, Failures, NodeFailure};
use crate::config::ControllerConfig;

/// Errors building the cluster.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// A node address is not a valid endpoint.
    #[error("bad node address `{address}`: {reason}")]
    BadAddress {
        /// The address.
        address: String,
        /// Why.
        reason: ringleader_node::tls::EndpointError,
    },
    /// The operating system gave no random bytes for the embedded nodes' credentials.
    #[error("cannot generate credentials for the embedded nodes: {0}")]
    Random(String),
    /// The process may not open enough descriptors for the embedded cluster.
    #[error(
        "controller.local_nodes: {nodes} embedded nodes need about {needed} open files, but this process may open \
         {limit} (ulimit -n); raise the limit or start fewer nodes"
    )]
    TooManyFiles {
        /// `controller.local_nodes`.
        nodes: u32,
        /// Descriptors they need.
        needed: u64,
        /// The soft limit.
        limit: u64,
    },
    /// A local node could not bind its listener.
    #[error("cannot bind a local node on 127.0.0.1: {0}")]
    Bind(#[from] std::io::Error),
    /// Discovery did not find enough nodes in time.
    #[error("discovery of `{name}`: {found} of the {wanted} nodes answered within {secs} s (last problem: {last})")]
    Discovery {
        /// The DNS name.
        name: String,
        /// Nodes that answered.
        found: usize,
        /// `controller.discover_nodes`.
        wanted: u32,
        /// How long it tried.
        secs: u64,
        /// The last error met.
        last: String,
    },
}

/// Find the nodes behind `config.discover` (`host:port`, e.g. a headless
/// Service's name, whose A records are the node pods): resolve it until at
/// least `discover_nodes` addresses answer `Info`, then use each node's
/// advertised address (stable pod DNS names in a StatefulSet), in natural
/// order of the node names (`node-2` before `node-10`), so that position `i`
/// of every election runs on the `i`-th pod. Logs its progress while it waits.
pub async fn discover(
    config: &ControllerConfig,
    auth: &Auth,
    tls: Option<&Tls>,
) -> Result<Vec<(String, String)>, ClusterError> {
    let started = tokio::time::Instant::now();
    let deadline = started + config.discover_timeout();
    let mut last;
    let mut found = 0;
    loop {
        match find_nodes(config, auth, tls).await {
            Ok(nodes) if nodes.len() >= config.discover_nodes as usize => {
                info!(name = %config.discover, nodes = nodes.len(), "discovered the nodes");
                return Ok(nodes);
            }
            Ok(nodes) => {
                found = nodes.len();
                last = format!("{found} answered");
            }
            Err(e) => last = e.to_string(),
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(ClusterError::Discovery {
                name: config.discover.clone(),
                found,
                wanted: config.discover_nodes,
                secs: started.elapsed().as_secs(),
                last,
            });
        }
        info!(name = %config.discover, found, wanted = config.discover_nodes, last = %last, "waiting for the nodes");
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

/// Why a discovery round found no node.
#[derive(Debug, thiserror::Error)]
enum RoundError {
    /// The name did not resolve.
    #[error("cannot resolve `{name}`: {source}")]
    Resolve { name: String, source: std::io::Error },
    /// No address answered; what each said.
    #[error("{}", .0.join("; "))]
    NoneAnswered(Vec<String>),
}

/// One discovery round: resolve, then ask every address who it is.
async fn find_nodes(
    config: &ControllerConfig,
    auth: &Auth,
    tls: Option<&Tls>,
) -> Result<Vec<(String, String)>, RoundError> {
    let mut addrs: Vec<std::net::SocketAddr> = tokio::net::lookup_host(config.discover.as_str())
        .await
        .map_err(|source| RoundError::Resolve { name: config.discover.clone(), source })?
        .collect();
    addrs.sort();
    addrs.dedup();
    let mut nodes = Vec::new();
    let mut problems = Vec::new();
    for addr in addrs {
        let url = format!("{}://{addr}", Tls::scheme(tls));
        let info = async {
            let mut endpoint =
                Endpoint::from_shared(url.clone()).map_err(|e| e.to_string())?.connect_timeout(config.rpc_timeout());
            if let Some(tls) = tls {
                // Dialled by IP: the certificates name the Service (and each pod), not the address.
                let host = config.discover.rsplit_once(':').map_or(config.discover.as_str(), |(h, _)| h);
                endpoint = endpoint.tls_config(tls.client().domain_name(host)).map_err(|e| e.to_string())?;
            }
            let channel = endpoint.connect().await.map_err(|e| e.to_string())?;
            let mut client = AgentClient::with_interceptor(channel, Bearer(auth.agent_token.clone()));
            client.info(pb::InfoRequest {}).await.map(|r| r.into_inner()).map_err(|s| s.message().to_string())
        };
        match tokio::time::timeout(config.rpc_timeout(), info).await {
            Ok(Ok(i)) if !i.address.is_empty() => nodes.push((i.name, i.address)),
            Ok(Ok(_)) => problems.push(format!("{url} advertises no address")),
            Ok(Err(e)) => problems.push(format!("{url}: {e}")),
            Err(_) => problems.push(format!("{url}: no answer")),
        }
    }
    if nodes.is_empty() && !problems.is_empty() {
        return Err(RoundError::NoneAnswered(problems));
    }
    nodes.sort_by_key(|n| natural_key(&n.0));
    nodes.dedup_by(|a, b| a.1 == b.1);
    Ok(nodes)
}

/// The soft limit on open files of this process (Linux `/proc`; `None` elsewhere or unlimited).
fn open_files_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// Sort key comparing digit runs as numbers: `node-2` < `node-10`.
fn natural_key(s: &str) -> Vec<(bool, u64, String)> {
    let mut key = Vec::new();
    let mut rest = s;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        if digits > 0 {
            key.push((true, rest[..digits].parse().unwrap_or(u64::MAX), String::new()));
            rest = &rest[digits..];
        } else {
            let text = rest.find(|c: char| c.is_ascii_digit()).unwrap_or(rest.len());
            key.push((false, 0, rest[..text].to_string()));
            rest = &rest[text..];
        }
    }
    key
}

/// The credentials of the embedded cluster (`--local-nodes`): when the
/// controller requires a token, its nodes require agent and peer tokens too,
/// so that nobody reaches around the controller's gate to its nodes' ports.
/// Tokens the configuration does not give are generated for this run (128
/// random bits each, from the operating system), held only in memory, never
/// logged ([`Secret`] prints as `***`) and never returned by any API. Without
/// a controller token, the nodes take what the configuration gives.
pub fn embedded_credentials(auth: &Auth) -> Result<Auth, ClusterError> {
    if auth.token.is_none() {
        return Ok(auth.clone());
    }
    let generate = || -> Result<Secret, ClusterError> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|e| ClusterError::Random(e.to_string()))?;
        Ok(Secret::new(bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()))
    };
    let mut nodes = auth.clone();
    if nodes.agent_token.is_none() {
        nodes.agent_token = Some(generate()?);
    }
    if nodes.peer_token.is_none() {
        nodes.peer_token = Some(generate()?);
    }
    Ok(nodes)
}

/// One node process.
#[derive(Debug)]
pub struct Node {
    index: usize,
    address: String,
    name: RwLock<String>,
    client: AgentClient<InterceptedService<Channel, Bearer>>,
    events_connected: AtomicBool,
    /// Elections this node is to forget, sent in one `Abort` ([`Node::forget`]).
    forgotten: Mutex<Vec<String>>,
    /// An `Abort` of [`Node::forgotten`] is being sent.
    forgetting: AtomicBool,
    /// The node's clock against the controller's, as last measured.
    clock: Mutex<Option<ClockOffset>>,
    /// When the node was last heard from (an event, or an answer to a
    /// pulse), unix microseconds.
    heard_us: AtomicU64,
    /// When the node was last heard from before its event stream last
    /// broke, unix microseconds: after it, its beliefs are unknown.
    lost_at_us: AtomicU64,
    /// Why the node's event stream last failed to open or broke (for the
    /// warning about nodes that do not answer).
    last_error: Mutex<Option<String>>,
    /// How many times the node's event stream has opened ([`Node::sessions`]).
    sessions: AtomicU64,
}

/// A node's monotonic clock (the microseconds of its reports) against the
/// controller's ([`controller_us`]): a reading `t` of the node's is
/// `t - offset_us` of the controller's, within `error_us`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockOffset {
    /// Node clock minus controller clock, in microseconds.
    pub offset_us: i64,
    /// Half the round trip of the call that measured it.
    pub error_us: u64,
}

impl ClockOffset {
    /// The offset a call learns that the controller sent at `sent_us` and
    /// whose answer, carrying the node's clock `node_us`, came at `answered_us`
    /// (both on [`controller_us`]): the node read its clock somewhere in
    /// between, taken as the middle.
    pub fn measured(node_us: u64, sent_us: u64, answered_us: u64) -> ClockOffset {
        let middle = sent_us / 2 + answered_us / 2;
        ClockOffset {
            offset_us: (node_us as i64).saturating_sub(middle as i64),
            error_us: answered_us.saturating_sub(sent_us).div_ceil(2),
        }
    }
}

/// Microseconds on the controller's monotonic clock.
pub fn controller_us() -> u64 {
    static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    EPOCH.get_or_init(std::time::Instant::now).elapsed().as_micros() as u64
}

/// Unix time in microseconds.
fn unix_us() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64)
}

/// How often a node's clock offset is measured again while its event stream is open.
const CLOCK_EVERY: Duration = Duration::from_secs(30);

/// The longest one `Info` call of a clock measurement may take.
const MEASURE_TIMEOUT: Duration = Duration::from_secs(2);

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
    pub fn client(&self) -> AgentClient<InterceptedService<Channel, Bearer>> {
        self.client.clone()
    }

    /// The node's clock against the controller's, once measured (a node
    /// that does not report its clock has none).
    pub fn clock(&self) -> Option<ClockOffset> {
        *self.clock.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Ask the node's `Info` a few times, timing each call: its name, and
    /// its clock's offset from the quickest call (the first on a new
    /// connection also sets the connection up). Each call has [`MEASURE_TIMEOUT`]:
    /// the node's event stream waits meanwhile.
    async fn measure(&self, client: &mut AgentClient<InterceptedService<Channel, Bearer>>) {
        let mut best: Option<ClockOffset> = None;
        for _ in 0..3 {
            let sent = controller_us();
            let Ok(Ok(info)) = tokio::time::timeout(MEASURE_TIMEOUT, client.info(pb::InfoRequest {})).await else {
                return;
            };
            let answered = controller_us();
            let info = info.into_inner();
            self.set_name(&info.name);
            if info.clock_us > 0 {
                let c = ClockOffset::measured(info.clock_us, sent, answered);
                best = Some(best.map_or(c, |b| if c.error_us < b.error_us { c } else { b }));
            }
        }
        if best.is_some() {
            *self.clock.lock().unwrap_or_else(|e| e.into_inner()) = best;
        }
    }

    /// Is the node's event stream currently open?
    pub fn events_connected(&self) -> bool {
        self.events_connected.load(Ordering::Relaxed)
    }

    /// When the node was last heard from before its event stream last broke
    /// (unix microseconds; 0: never broke): a process that stopped
    /// answering (paused, or its host cut off) broke its stream a pulse
    /// timeout after this, and what it believed after this is unknown.
    pub fn lost_at_us(&self) -> u64 {
        self.lost_at_us.load(Ordering::Relaxed)
    }

    fn heard(&self) {
        self.heard_us.store(unix_us(), Ordering::Relaxed);
    }

    /// How many times the node's event stream has opened: a new value means
    /// the controller may have lost touch with the node meanwhile (its
    /// process may have restarted and forgotten what it was told).
    pub fn sessions(&self) -> u64 {
        self.sessions.load(Ordering::Acquire)
    }

    /// Have the node forget `election_id`, without waiting: the ids queue
    /// up while one `Abort` call is out and go together in the next, so a
    /// busy controller sends one call for many elections (best effort:
    /// a failure is logged; the node also drops what it holds at shutdown).
    pub fn forget(self: &Arc<Self>, election_id: &str, timeout: Duration) {
        self.forgotten.lock().unwrap_or_else(|e| e.into_inner()).push(election_id.to_string());
        if self.forgetting.swap(true, Ordering::AcqRel) {
            return;
        }
        let Ok(rt) = tokio::runtime::Handle::try_current() else { return };
        let node = self.clone();
        rt.spawn(async move {
            loop {
                let batch = std::mem::take(&mut *node.forgotten.lock().unwrap_or_else(|e| e.into_inner()));
                if batch.is_empty() {
                    node.forgetting.store(false, Ordering::Release);
                    // An id queued after the take and before the store found the flag still set.
                    let more = !node.forgotten.lock().unwrap_or_else(|e| e.into_inner()).is_empty();
                    if more && !node.forgetting.swap(true, Ordering::AcqRel) {
                        continue;
                    }
                    return;
                }
                let count = batch.len();
                let req = pb::AbortRequest { election_ids: batch, ..Default::default() };
                let mut client = node.client();
                match tokio::time::timeout(timeout, client.abort(req)).await {
                    Ok(Ok(_)) => {}
                    Ok(Err(e)) => warn!(node = %node.name(), count, error = %e, "Abort failed"),
                    Err(_) => warn!(node = %node.name(), count, "Abort timed out"),
                }
            }
        });
    }

    /// Remember the name the node gave (in `Info`), for messages that name it.
    pub fn set_name(&self, name: &str) {
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
    /// The cluster index of each position's node (empty: position `i` on node `i`).
    placement: Vec<usize>,
}

impl Subscription {
    /// The events of an election whose position `i` runs on `nodes[i]`:
    /// [`Subscription::recv`] gives each event with its node's position
    /// instead of its cluster index, and leaves out other nodes' events.
    pub fn placed_on(mut self, nodes: &[Arc<Node>]) -> Self {
        self.placement = nodes.iter().map(|n| n.index).collect();
        self
    }

    /// The next event, with its node's position if placed, else its cluster
    /// index (never `None` while the cluster lives).
    pub async fn recv(&mut self) -> Option<RoutedEvent> {
        loop {
            let (node, event) = self.rx.recv().await?;
            if self.placement.is_empty() {
                return Some((node, event));
            }
            if let Some(position) = self.placement.iter().position(|&i| i == node) {
                return Some((position, event));
            }
        }
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
    /// This controller process, to its nodes (`controller_incarnation`):
    /// random, drawn at start, never 0.
    incarnation: u64,
}

impl Cluster {
    /// Build the cluster the configuration describes: start the embedded
    /// local nodes (`local_nodes`) or connect (lazily) to `nodes`.
    pub async fn start(
        config: &ControllerConfig,
        auth: &Auth,
        tls: Option<&Tls>,
    ) -> Result<Arc<Cluster>, ClusterError> {
        let (stop, _) = watch::channel(false);
        let mut tasks = Vec::new();
        let mut members = Vec::new();
        let embedded;
        let auth = if config.local_nodes > 0 {
            embedded = embedded_credentials(auth)?;
            &embedded
        } else {
            auth
        };
        if config.local_nodes > 0 {
            // Each node: its listener, its server's end of the shared peer connection and of the
            // controller's agent channel, the client ends of both, its event stream; and some room.
            let needed = 6 * u64::from(config.local_nodes) + 256;
            if let Some(limit) = open_files_limit()
                && needed > limit
            {
                return Err(ClusterError::TooManyFiles { nodes: config.local_nodes, needed, limit });
            }
            // One connection per node server for all of them (not one per pair of nodes).
            let channels = ringleader_node::runtime::SharedChannels::default();
            for i in 0..config.local_nodes {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
                let address = format!("{}://{}", Tls::scheme(tls), listener.local_addr()?);
                let name = format!("node-{i}");
                let cfg = NodeConfig {
                    name: name.clone(),
                    advertise: address.clone(),
                    agent_token: auth.agent_token.clone(),
                    peer_token: auth.peer_token.clone(),
                    tls: tls.cloned(),
                    limits: config.limits(),
                    channels: channels.clone(),
                    // All of them stop together: nobody to hand over to.
                    handover_on_shutdown: Duration::ZERO,
                    // They stop with the controller: nothing of theirs can outlive it.
                    orphan_grace: Duration::ZERO,
                    // The controller names etcd in each lease election's Prepare.
                    etcd_endpoint: None,
                };
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
        } else if !config.discover.is_empty() {
            members = discover(config, auth, tls).await?;
        } else {
            members.extend(config.nodes.iter().map(|a| (a.clone(), a.clone())));
        }
        let mut nodes = Vec::with_capacity(members.len());
        for (index, (name, address)) in members.into_iter().enumerate() {
            let endpoint = ringleader_node::tls::endpoint(&address, tls)
                .map_err(|reason| ClusterError::BadAddress { address: address.clone(), reason })?
                .tcp_nodelay(true)
                .connect_timeout(config.rpc_timeout())
                .http2_keep_alive_interval(Duration::from_secs(10))
                .keep_alive_while_idle(true);
            let client = AgentClient::with_interceptor(endpoint.connect_lazy(), Bearer(auth.agent_token.clone()));
            nodes.push(Arc::new(Node {
                index,
                address,
                name: RwLock::new(name),
                client,
                events_connected: AtomicBool::new(false),
                forgotten: Mutex::new(Vec::new()),
                forgetting: AtomicBool::new(false),
                clock: Mutex::new(None),
                heard_us: AtomicU64::new(0),
                lost_at_us: AtomicU64::new(0),
                last_error: Mutex::new(None),
                sessions: AtomicU64::new(0),
            }));
        }
        let incarnation = loop {
            let i = getrandom::u64().map_err(|e| ClusterError::Random(e.to_string()))?;
            if i != 0 {
                break i;
            }
        };
        let routes: Routes = Arc::default();
        // An embedded node pauses only with the controller's own process: no pulse.
        let pulse = (config.local_nodes == 0).then(|| pulse_timeout(config.detector_timeout_ms));
        for node in &nodes {
            tasks.push(tokio::spawn(follow_events(node.clone(), routes.clone(), stop.subscribe(), pulse, incarnation)));
        }
        if config.local_nodes == 0 && !nodes.is_empty() {
            tasks.push(tokio::spawn(warn_silent(nodes.clone(), config.rpc_timeout(), stop.subscribe())));
        }
        info!(incarnation = format!("{incarnation:016x}"), "this controller's incarnation");
        Ok(Arc::new(Cluster {
            nodes,
            routes,
            stop,
            tasks: Mutex::new(tasks),
            local: config.local_nodes > 0,
            incarnation,
        }))
    }

    /// This controller process, as its nodes know it: a new process ends what
    /// an earlier one left running (`PrepareRequest.controller_incarnation`).
    pub fn incarnation(&self) -> u64 {
        self.incarnation
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
        Subscription { election_id: election_id.to_string(), routes: self.routes.clone(), rx, placement: Vec::new() }
    }

    /// Stop following events and stop the local nodes; waits for them.
    pub async fn shutdown(&self) {
        self.stop.send_replace(true);
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
        self.stop.send_replace(true);
    }
}

/// Follow one node's `Events` stream for as long as the cluster lives,
/// reconnecting with back-off, and route each event to its election.
/// How long an external node may leave a pulse (an `Info` call, sent every
/// half of it) unanswered before the controller takes it as down: the
/// controller's failure-detector timeout, at least [`MIN_PULSE_TIMEOUT`].
pub fn pulse_timeout(detector_timeout_ms: u64) -> Duration {
    Duration::from_millis(detector_timeout_ms).max(MIN_PULSE_TIMEOUT)
}

/// The shortest pulse timeout: a busy host answers within it, so a node is
/// not taken as down for a scheduling hiccup.
pub const MIN_PULSE_TIMEOUT: Duration = Duration::from_secs(1);

/// Why a node's event stream ended.
enum Ended {
    /// It closed or failed (the process exited, the connection broke).
    Closed(Option<tonic::Status>),
    /// The node left a pulse unanswered: paused, or its host cut off.
    Silent,
}

/// Follow the events of `node`, routing each to its election's
/// subscription, and reconnect (with a backoff) when the stream ends. With
/// `pulse`, the node must answer an `Info` call within it (one is sent every
/// half of it): one that does not is taken as down and its stream dropped,
/// so that its frozen beliefs stop counting.
async fn follow_events(
    node: Arc<Node>,
    routes: Routes,
    mut stop: watch::Receiver<bool>,
    pulse: Option<Duration>,
    incarnation: u64,
) {
    let mut backoff = Duration::from_millis(50);
    loop {
        let session = async {
            let mut client = node.client();
            node.measure(&mut client).await;
            let mut stream =
                match client.events(pb::EventsRequest { reports: true, controller_incarnation: incarnation }).await {
                    Ok(s) => s.into_inner(),
                    Err(e) => return Ended::Closed(Some(e)),
                };
            node.heard();
            node.sessions.fetch_add(1, Ordering::AcqRel);
            node.events_connected.store(true, Ordering::Relaxed);
            debug!(node = %node.name(), "following node events");
            let mut remeasure = tokio::time::interval_at(tokio::time::Instant::now() + CLOCK_EVERY, CLOCK_EVERY);
            let every = pulse.map_or(Duration::from_secs(3600), |p| p / 2);
            let mut beat = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
            beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut answer: Option<std::pin::Pin<Box<dyn Future<Output = bool> + Send>>> = None;
            loop {
                tokio::select! {
                    event = stream.message() => {
                        let event = match event {
                            Ok(Some(event)) => event,
                            Ok(None) => return Ended::Closed(None),
                            Err(e) => return Ended::Closed(Some(e)),
                        };
                        node.heard();
                        let tx = routes.lock().ok().and_then(|r| r.get(&event.election_id).cloned());
                        if let Some(tx) = tx {
                            let _ = tx.send((node.index, event));
                        }
                    }
                    _ = remeasure.tick() => node.measure(&mut client).await,
                    _ = beat.tick(), if pulse.is_some() && answer.is_none() => {
                        let (mut client, timeout) = (client.clone(), pulse.unwrap_or_default());
                        answer = Some(Box::pin(async move {
                            matches!(tokio::time::timeout(timeout, client.info(pb::InfoRequest {})).await, Ok(Ok(_)))
                        }));
                    }
                    answered = async { answer.as_mut().expect("guarded").await }, if answer.is_some() => {
                        answer = None;
                        if !answered {
                            return Ended::Silent;
                        }
                        node.heard();
                    }
                }
            }
        };
        let connected_before = node.events_connected();
        tokio::select! {
            ended = session => match ended {
                Ended::Closed(e) => {
                    node.lost_at_us.store(unix_us(), Ordering::Relaxed);
                    if let Some(e) = e {
                        debug!(node = %node.address, error = %e, "node event stream closed");
                        *node.last_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(e.message().to_string());
                    }
                }
                Ended::Silent => {
                    let heard = node.heard_us.load(Ordering::Relaxed);
                    node.lost_at_us.store(heard, Ordering::Relaxed);
                    warn!(
                        node = %node.name(),
                        silent_ms = unix_us().saturating_sub(heard) / 1_000,
                        "a node left a pulse unanswered (paused, overloaded or cut off): taken as down until it answers"
                    );
                }
            },
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

/// How often [`warn_silent`] looks again at nodes that did not answer.
const SILENT_POLL: Duration = Duration::from_millis(500);

/// External nodes at start: after `grace`, a WARN names every node whose
/// event stream has not opened (and why, when a call failed) and what the
/// controller does meanwhile; once they all answer, an INFO says so. A
/// controller otherwise serves as if a mistyped or dead address were there,
/// and the operator learns of it from the first LIVE election that fails.
async fn warn_silent(nodes: Vec<Arc<Node>>, grace: Duration, mut stop: watch::Receiver<bool>) {
    tokio::select! {
        _ = tokio::time::sleep(grace) => {}
        _ = stop.wait_for(|s| *s) => return,
    }
    let silent: Vec<String> = nodes
        .iter()
        .filter(|n| !n.events_connected())
        .map(|n| match n.last_error.lock().unwrap_or_else(|e| e.into_inner()).as_deref() {
            Some(why) => format!("{} ({why})", n.address()),
            None => n.address().to_string(),
        })
        .collect();
    if silent.is_empty() {
        return;
    }
    warn!(
        silent = silent.len(),
        nodes = nodes.len(),
        "{} of {} nodes did not answer within {} ms: {}; serving anyway and retrying them (every 2 s at most): \
         LIVE elections and faults that need them fail until they answer (SIMULATED elections do not need them)",
        silent.len(),
        nodes.len(),
        grace.as_millis(),
        silent.join(", ")
    );
    loop {
        tokio::select! {
            _ = tokio::time::sleep(SILENT_POLL) => {}
            _ = stop.wait_for(|s| *s) => return,
        }
        if nodes.iter().all(|n| n.events_connected()) {
            info!(nodes = nodes.len(), "every node answers now ({} nodes)", nodes.len());
            return;
        }
    }
}

/// Run `calls` concurrently, each within `timeout`; the first failures.
pub(crate) async fn all_ok<F>(
    calls: impl Iterator<Item = (Arc<Node>, F)>,
    timeout: Duration,
    what: &'static str,
) -> Result<(), Failures>
where
    F: Future<Output = Result<(), tonic::Status>> + Send + 'static,
{
    let mut set = tokio::task::JoinSet::new();
    for (node, call) in calls {
        set.spawn(async move {
            CallError::within(timeout, call).await.map_err(|error| NodeFailure::Call {
                what,
                node: node.name(),
                address: node.address().to_string(),
                error,
            })
        });
    }
    let mut failures = Vec::new();
    while let Some(joined) = set.join_next().await {
        match joined {
            Ok(Ok(())) => {}
            Ok(Err(e)) => failures.push(e),
            Err(e) => failures.push(NodeFailure::Task { what, reason: e.to_string() }),
        }
    }
    Failures::check(failures)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pod names sort by ordinal, so position i of an election runs on pod i.
    #[test]
    fn natural_order_of_node_names() {
        let mut names = vec!["node-10", "node-2", "node-1", "node-0", "node-11"];
        names.sort_by_key(|n| natural_key(n));
        assert_eq!(names, ["node-0", "node-1", "node-2", "node-10", "node-11"]);
    }

    /// Discovery through DNS finds the node servers behind a name (here `localhost`, one node) and
    /// uses the address each node advertises; asking for more nodes than answer ends in a clear error.
    #[tokio::test]
    async fn discovers_nodes_behind_a_dns_name() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let cfg =
            NodeConfig { name: "pod-0".into(), advertise: format!("http://127.0.0.1:{port}"), ..NodeConfig::default() };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(runtime::serve(listener, cfg, async move {
            let _ = stopped.await;
        }));
        let mut config = ControllerConfig {
            discover: format!("localhost:{port}"),
            discover_nodes: 1,
            discover_timeout_ms: 10_000,
            ..ControllerConfig::default()
        };
        let nodes = discover(&config, &Auth::default(), None).await.unwrap();
        assert_eq!(nodes, vec![("pod-0".to_string(), format!("http://127.0.0.1:{port}"))]);
        config.discover_nodes = 3;
        config.discover_timeout_ms = 1;
        let e = discover(&config, &Auth::default(), None).await.unwrap_err().to_string();
        assert!(e.contains("1 of the 3 nodes"), "{e}");
        let _ = stop.send(());
        server.await.unwrap().unwrap();
    }
}
