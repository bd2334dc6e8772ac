//! Ringleader's controller: the `ringleader.v1.Controller` gRPC service that
//! plans leader elections, runs them on the node processes (LIVE) or in the
//! deterministic simulator (SIMULATED), checks them and keeps their records.
//!
//! * [`config`]: defaults < file < `RINGLEADER__…` environment < flags.
//! * [`cluster`]: the nodes (static addresses or the embedded local cluster).
//! * [`api`]: the service, request checks and error mapping.
//! * [`elections`]: plan -> configure -> start -> collect -> verdict -> record.
//! * [`convert`]: protobuf <-> domain conversions.
//! * [`record`]: what is known of an election; [`error`]: why a request is
//!   refused. Both are leaves that every other module may read.
//!
//! Serving the API with an embedded cluster of 4 nodes, then stopping it:
//!
//! ```no_run
//! # async fn demo() -> Result<(), ringleader_controller::Error> {
//! use ringleader_controller::config::Config;
//! let mut config = Config::default();
//! config.controller.local_nodes = 4;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
//! let server = tokio::spawn(ringleader_controller::run(config, listener, async move {
//!     let _ = stopped.await;
//! }));
//! // ... talk to it with ringleader_proto::v1::controller_client::ControllerClient ...
//! let _ = stop.send(());
//! server.await.expect("server task")?;
//! # Ok(()) }
//! ```
#![warn(missing_docs, unreachable_pub)]

use std::future::Future;
use std::time::Duration;

use ringleader_proto::v1::controller_server::ControllerServer;
use tokio::net::TcpListener;
use tracing::{info, warn};

pub mod api;
pub mod budget;
mod calls;
pub mod check;
pub mod cluster;
pub mod compare;
pub mod config;
pub mod convert;
pub mod elections;
pub mod error;
pub mod failover;
pub mod faults;
pub mod history;
pub mod pages;
pub mod programs;
pub mod record;
pub mod telemetry;

/// Install the programs in `controller.programs_dir` (none when it is
/// empty), off the async workers: each is started and asked for its first
/// state. A program that fails to load is logged and left out.
async fn install_programs(config: &config::Config) -> programs::Installed {
    let dir = config.controller.programs_dir.clone();
    if dir.is_empty() {
        return programs::Installed::default();
    }
    let section = config.programs.clone();
    let installed = tokio::task::spawn_blocking(move || {
        ringleader_node::programs::install_dir(std::path::Path::new(&dir), &section)
    })
    .await
    .unwrap_or_else(|e| {
        warn!(error = %e, "installing the programs failed; none is installed");
        Vec::new()
    });
    programs::Installed::new(installed)
}

/// Errors that stop the controller.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The configuration is unusable.
    #[error(transparent)]
    Config(#[from] config::ConfigError),
    /// The cluster could not be set up.
    #[error(transparent)]
    Cluster(#[from] cluster::ClusterError),
    /// The reflection service could not read the descriptors.
    #[error("gRPC reflection: {0}")]
    Reflection(#[from] tonic_reflection::server::Error),
    /// The election history could not be opened.
    #[error(transparent)]
    History(#[from] history::HistoryError),
    /// The gRPC server failed.
    #[error("gRPC server: {0}")]
    Serve(#[from] tonic::transport::Error),
    /// A socket could not be set up.
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
}

/// Serve the Controller API (with reflection v1 and v1alpha and
/// `grpc.health.v1`) on `listener` until `shutdown` resolves, driving the
/// cluster `config` describes; then stop the embedded nodes.
pub async fn run(
    config: config::Config,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), Error> {
    config.validate()?;
    let mut config = config;
    config.controller.programs = install_programs(&config).await;
    let auth = config.auth.resolve().map_err(|ringleader_node::setting::SettingError { key, reason }| {
        config::ConfigError::Invalid { key, reason }
    })?;
    let tls = config.tls.load().map_err(|ringleader_node::setting::SettingError { key, reason }| {
        config::ConfigError::Invalid { key, reason }
    })?;
    let settings = config.controller;
    let settings_limits = settings.limits();
    let settings_health = settings
        .health_addr()
        .map_err(|e| config::ConfigError::Invalid { key: "controller.health_listen", reason: e.to_string() })?;
    let addr = listener.local_addr()?;
    if auth.token.is_none() && !addr.ip().is_loopback() {
        warn!(
            %addr,
            "the controller requires no token but listens beyond loopback: anyone who reaches {addr} may start \
             elections and inject faults; set auth.token (RINGLEADER__AUTH__TOKEN) or listen on 127.0.0.1"
        );
    }
    // The history first: a bad path must not start (and then stop) the embedded nodes.
    let (history, restored) = match settings.history_path.as_str() {
        "" => (None, Vec::new()),
        path => {
            let path = std::path::Path::new(path);
            let (h, restored) = history::History::open(path, settings.max_elections, settings.max_stored_mib << 20)?;
            (Some(h), restored.records)
        }
    };
    let cluster = cluster::Cluster::start(&settings, &auth, tls.as_ref()).await?;
    if cluster.is_local() && !cluster.wait_ready(Duration::from_secs(10)).await {
        warn!("some local nodes did not open their event stream within 10 s");
    }
    let elections = elections::Elections::with_history(cluster.clone(), settings, history, restored);
    // What a controller that died left running on the nodes; retried while this one serves.
    let _interrupted = elections.abort_interrupted().map(ringleader_node::runtime::AbortOnDrop);
    let token_required = auth.token.is_some();
    let api = api::ControllerService::with_auth(elections.clone(), auth);
    // The lab and the election pages, on the metrics port (when the process serves one).
    let lab = pages::Lab { service: api.clone(), token_required };
    ringleader_node::observe::serve_also(pages::router(elections.clone(), lab));
    let service = ControllerServer::new(api);

    let (health, health_service) = tonic_health::server::health_reporter();
    health.set_serving::<ControllerServer<api::ControllerService>>().await;
    // While the history refuses writes the controller refuses elections: say so to the probes.
    let _history_health = elections.watch_history().map(|mut writable| {
        let health = health.clone();
        ringleader_node::runtime::AbortOnDrop(tokio::spawn(async move {
            loop {
                if *writable.borrow_and_update() {
                    health.set_serving::<ControllerServer<api::ControllerService>>().await;
                    health.set_service_status("", tonic_health::ServingStatus::Serving).await;
                } else {
                    health.set_not_serving::<ControllerServer<api::ControllerService>>().await;
                    health.set_service_status("", tonic_health::ServingStatus::NotServing).await;
                }
                if writable.changed().await.is_err() {
                    return;
                }
            }
        }))
    });
    // Bound only now: like the API, the probes' port answers once the cluster is up.
    let _plain_health = match settings_health {
        Some(addr) => {
            let l = TcpListener::bind(addr).await.map_err(|e| config::ConfigError::Invalid {
                key: "controller.health_listen",
                reason: format!("cannot listen on {addr}: {e}"),
            })?;
            Some(ringleader_node::runtime::AbortOnDrop(tokio::spawn(ringleader_node::runtime::serve_plain_health(
                l,
                health_service.clone(),
            ))))
        }
        None => None,
    };
    // Advertise only what this server serves: the descriptor set also holds the nodes' Agent and Peer.
    let reflection = |reflection_service: &str| {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(ringleader_proto::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
            .with_service_name("ringleader.v1.Controller")
            .with_service_name("grpc.health.v1.Health")
            .with_service_name(reflection_service)
    };
    let reflection_v1 = reflection("grpc.reflection.v1.ServerReflection").build_v1()?;
    let reflection_v1alpha = reflection("grpc.reflection.v1alpha.ServerReflection").build_v1alpha()?;

    // On the shutdown signal, stop every running election first: the server drains its
    // in-flight calls, and a StartElection waiting on a long simulation would hold it open.
    let stopping = elections.clone();
    let shutdown = async move {
        shutdown.await;
        info!(running = stopping.running(), "stopping every running election");
        stopping.stop_all();
    };
    info!(%addr, nodes = cluster.len(), "ringleader.v1.Controller serving");
    let mut builder = tonic::transport::Server::builder();
    if let Some(tls) = &tls {
        builder = builder.tls_config(tls.server())?;
    }
    let limits = settings_limits;
    info!(tls = tls.as_ref().map(|t| if t.mutual() { "mutual" } else { "server" }).unwrap_or("off"), "transport");
    let served = ringleader_node::limits::apply_http2(builder, &limits)
        .add_service(service)
        .add_service(health_service)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .serve_with_incoming_shutdown(ringleader_node::limits::incoming(listener, limits, "controller"), shutdown)
        .await;
    info!("controller stopping");
    if !elections.wait_idle(Duration::from_secs(5)).await {
        warn!(running = elections.running(), "elections still running 5 s after the shutdown began");
    }
    cluster.shutdown().await;
    let records = elections.clone();
    let _ = tokio::task::spawn_blocking(move || records.close_history()).await;
    served?;
    Ok(())
}

pub use ringleader_node::runtime::shutdown_signal;
