//! The gRPC runtime: runs the election state machines of [`ringleader_core::algo`]
//! between real processes.
//!
//! A node serves two services on one port:
//!
//! * `ringleader.v1.Agent`, the controller's handle: `Prepare` installs this
//!   node's share of an election (its id, its ports and where they lead, the
//!   algorithm), `Start` wakes it as an initiator, `Status` reports its
//!   counters, `Events` streams its decisions, `Abort` forgets it.
//! * `ringleader.v1.Peer`, election traffic between nodes: one persistent
//!   `Link` stream per directed pair of processes, opened by the sender on
//!   first use and shared by every election between the two (FIFO per link).
//!
//! The runtime is the driver of the sans-IO state machines, as the simulator
//! is: it counts what they send (per kind, election vs notification, encoded
//! bytes) and tracks causal time (each message carries its sender's causal
//! depth + 1), so live and simulated figures are the same quantities. An
//! initiator holds the messages that reach it before `Start` and processes them
//! right after its `Input::Start`, the schedule the simulator uses, so message counts
//! match too.
//!
//! Nothing that arrives over the network can take a node down: unknown
//! elections, bad ports, bodies the state machine cannot take are answered
//! with a `Reject` on the link's reply stream (and logged and counted);
//! undecodable bytes end that one stream with an error status.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use ringleader_node::runtime::{self, NodeConfig};
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let advertise = format!("http://{}", listener.local_addr()?);
//! let cfg = NodeConfig { name: "node-0".into(), advertise, ..NodeConfig::default() };
//! runtime::serve(listener, cfg, async { let _ = tokio::signal::ctrl_c().await; }).await?;
//! # Ok(()) }
//! ```

use std::future::Future;
use std::time::Duration;

use ringleader_proto::v1::{agent_server::AgentServer, peer_server::PeerServer};
use tokio::sync::oneshot;
use tonic::service::interceptor::InterceptedService;

use crate::auth::Gate;
use crate::limits;
use tracing::{info, warn};

mod agent;
mod election;
mod faults;
mod links;
mod node;
mod orphans;
mod peer;
mod reports;
mod store;
#[cfg(test)]
mod tests;

/// Largest envelope a node takes from a peer (election messages are tens of bytes).
pub const MAX_ENVELOPE: usize = 64 * 1024;

/// Largest controller request a node takes (a `Prepare` of a 1,024-port node is ~60 KiB).
pub const MAX_AGENT_REQUEST: usize = 4 * 1024 * 1024;

pub use agent::MAX_ELECTIONS;
pub use links::{ChannelPool, MAX_QUEUED, SharedChannels};
pub use store::{EtcdEndpointError, check_endpoint as check_etcd_endpoint};

/// How long shutdown waits for open connections to close before returning anyway.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Who this node is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeConfig {
    /// Node process name (reported by `Info`).
    pub name: String,
    /// The address peers dial to reach this node, e.g. `http://127.0.0.1:7001`
    /// (reported by `Info`).
    pub advertise: String,
    /// Agent calls must present this token (the controller's); `None`: open.
    pub agent_token: Option<crate::auth::Secret>,
    /// Peer links must present this token, and this node presents it on its own links; `None`: open.
    pub peer_token: Option<crate::auth::Secret>,
    /// Serve TLS (mutual TLS if so configured) and dial `https://` peers with it; `None`: plain text.
    pub tls: Option<crate::tls::Tls>,
    /// Connections and streams this node's server holds at most, and its idle timeout.
    pub limits: limits::ConnLimits,
    /// The outgoing connections it shares with the other nodes of its process
    /// (the embedded cluster gives all its nodes one pool; a default config
    /// has a pool of its own).
    pub channels: SharedChannels,
    /// On shutdown, hand over the kept leaderships this node leads and wait
    /// up to this long for each successor's claim before stopping
    /// (`Node::leave_all`); zero: stop at once, handing nothing over (the
    /// embedded cluster, which stops all its nodes together).
    pub handover_on_shutdown: Duration,
    /// Abort every election this node holds once no controller has listened
    /// to it for this long: no `Events` stream asking for reports (the
    /// controller's) has been open for the grace, counted from when the last
    /// one closed or from the election's `Prepare` if later. A controller
    /// that crashed leaves no heartbeat behind for longer than this. Zero:
    /// never (the embedded cluster, which lives and dies with its controller).
    pub orphan_grace: Duration,
    /// The etcd v3 endpoint of elections that keep their state in a store
    /// (`lease`); `None`: the one their `Prepare` names.
    pub etcd_endpoint: Option<String>,
}

impl Default for NodeConfig {
    fn default() -> Self {
        NodeConfig {
            name: String::new(),
            advertise: String::new(),
            agent_token: None,
            peer_token: None,
            tls: None,
            limits: limits::ConnLimits::default(),
            channels: SharedChannels::default(),
            handover_on_shutdown: Duration::ZERO,
            orphan_grace: ORPHAN_GRACE,
            etcd_endpoint: None,
        }
    }
}

/// How long a node keeps its elections without a controller listening, by
/// default ([`NodeConfig::orphan_grace`], the node binary's
/// `node.orphan_grace_ms`): long enough for a controller to restart (or
/// its event stream to reconnect, within 2 s) and take them back, short
/// enough that a crashed controller's leaderships do not heartbeat on for
/// good.
pub const ORPHAN_GRACE: Duration = Duration::from_secs(60);

/// How long a leaving node waits for its handovers by default
/// ([`NodeConfig::handover_on_shutdown`] of the node binary, and a `Leave`
/// call without `wait_ms`): a handover takes a round trip, so this is for a
/// successor that is slow or gone (then the node stops anyway and the
/// others' failure detectors take over). Well within the manifests' 10 s
/// grace period.
pub const HANDOVER_WAIT: Duration = Duration::from_secs(2);

/// Errors of the runtime.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The gRPC server failed.
    #[error("gRPC server failed: {0}")]
    Serve(#[from] tonic::transport::Error),
}

/// Serve the Peer and Agent services (and `grpc.health.v1`) on `listener` until `shutdown` resolves.
///
/// On shutdown the node stops accepting connections, ends its long-lived
/// streams (incoming links, event streams), closes its outgoing links after
/// sending what is queued, drops its elections, and returns once the
/// connections have closed (or after a grace period of a few seconds).
pub async fn serve(
    listener: tokio::net::TcpListener,
    cfg: NodeConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), RuntimeError> {
    serve_with_health(listener, None, cfg, shutdown).await
}

/// [`serve`], and with `health_listener` also `grpc.health.v1` alone in plain text there (see
/// [`serve_plain_health`]), for as long as the node serves.
pub async fn serve_with_health(
    listener: tokio::net::TcpListener,
    health_listener: Option<tokio::net::TcpListener>,
    cfg: NodeConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), RuntimeError> {
    let local = listener.local_addr().map_or_else(|e| format!("unknown ({e})"), |a| a.to_string());
    let node = node::Node::new(cfg);
    if !node.cfg.orphan_grace.is_zero() {
        tokio::spawn(orphans::watch(std::sync::Arc::downgrade(&node), node.cfg.orphan_grace));
    }
    info!(name = %node.cfg.name, advertise = %node.cfg.advertise, listen = %local, "node serving");

    let (fired_tx, fired_rx) = oneshot::channel::<()>();
    let stopper = node.clone();
    let signal = async move {
        shutdown.await;
        info!(name = %stopper.cfg.name, "shutting down");
        if !stopper.cfg.handover_on_shutdown.is_zero() {
            stopper.leave_all(stopper.cfg.handover_on_shutdown).await;
        }
        stopper.shutdown();
        let _ = fired_tx.send(());
    };
    // Election messages are small and latency-bound: `incoming` sets TCP_NODELAY.
    let incoming = limits::incoming(listener, node.cfg.limits, "node");
    // grpc.health.v1 for Kubernetes probes: the whole server ("") and each service.
    let (health, health_service) = tonic_health::server::health_reporter();
    health.set_serving::<PeerServer<peer::PeerService>>().await;
    health.set_serving::<AgentServer<agent::AgentService>>().await;
    let _plain_health =
        health_listener.map(|l| AbortOnDrop(tokio::spawn(serve_plain_health(l, health_service.clone()))));
    let mut builder = tonic::transport::Server::builder();
    if let Some(tls) = &node.cfg.tls {
        builder = builder.tls_config(tls.server())?;
    }
    // A slow peer gets its own HTTP/2 flow control; no connection may hold
    // more than `limits.max_streams` streams open against us.
    let server = limits::apply_http2(builder, &node.cfg.limits)
        .add_service(health_service)
        .add_service(InterceptedService::new(
            PeerServer::from_arc(std::sync::Arc::new(peer::PeerService(node.clone())))
                .max_decoding_message_size(MAX_ENVELOPE),
            Gate { service: "peer", expected: node.cfg.peer_token.clone() },
        ))
        .add_service(InterceptedService::new(
            AgentServer::from_arc(std::sync::Arc::new(agent::AgentService(node.clone())))
                .max_decoding_message_size(MAX_AGENT_REQUEST),
            Gate { service: "agent", expected: node.cfg.agent_token.clone() },
        ))
        .serve_with_incoming_shutdown(incoming, signal);
    let grace = async move {
        match fired_rx.await {
            Ok(()) => tokio::time::sleep(SHUTDOWN_GRACE).await,
            Err(_) => std::future::pending().await,
        }
    };
    let result = tokio::select! {
        r = server => r,
        _ = grace => {
            warn!(name = %node.cfg.name, "connections still open after the grace period; stopping anyway");
            Ok(())
        }
    };
    node.shutdown();
    Ok(result?)
}

/// Serve `grpc.health.v1` alone, in plain text, on `listener`, answering from the same reporter as
/// `service`'s main server. Kubernetes gRPC probes cannot speak TLS, so a server that serves TLS only
/// gives its probes this second port; it reveals nothing but whether the process serves. Runs until
/// the task running it is dropped or aborted; an accept error is logged and ends it.
pub async fn serve_plain_health<H: tonic_health::pb::health_server::Health>(
    listener: tokio::net::TcpListener,
    service: tonic_health::pb::health_server::HealthServer<H>,
) {
    let addr = listener.local_addr().map_or_else(|e| format!("unknown ({e})"), |a| a.to_string());
    info!(listen = %addr, "grpc.health.v1 serving in plain text");
    let limits = limits::ConnLimits::default();
    if let Err(e) = limits::apply_http2(tonic::transport::Server::builder(), &limits)
        .add_service(service)
        .serve_with_incoming(limits::incoming(listener, limits, "health"))
        .await
    {
        warn!(listen = %addr, error = %e, "plain-text health server failed");
    }
}

/// Aborts a spawned task when dropped: a helper server lives exactly as long as its main server.
#[derive(Debug)]
pub struct AbortOnDrop(pub tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Resolves on Ctrl-C or SIGTERM (for `serve`'s `shutdown`; the binaries use it).
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            warn!(error = %e, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(e) => {
                warn!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => info!("Ctrl-C received"),
        _ = term => info!("SIGTERM received"),
    }
}
