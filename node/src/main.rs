//! `ringleader-node`: one Ringleader node process (wiring only; see
//! [`ringleader_node::runtime`] for what it does).

mod config;

use std::process::ExitCode;

use clap::Parser;
use ringleader_node::observe::Telemetry;
use ringleader_node::runtime::{self, NodeConfig};
use ringleader_node::setting::SettingError;
use tracing::{error, warn};

use crate::config::{Cli, Config};

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let cfg = match Config::load(&cli) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("ringleader-node: {e}");
            return ExitCode::from(2);
        }
    };
    let limits = cfg.limits();
    ringleader_node::unread::set_budget(cfg.node.max_unread_mib << 20);
    let auth = match cfg.auth.resolve() {
        Ok(a) => a,
        Err(SettingError { key, reason }) => {
            eprintln!("ringleader-node: invalid setting `{key}`: {reason}");
            return ExitCode::from(2);
        }
    };
    // With auth.protect_reads, /metrics takes auth.token or auth.read_token, as the controller's reads do.
    let readers = auth.clone();
    let reads = auth.protect_reads.then(|| {
        std::sync::Arc::new(move |t: &str| readers.token.iter().chain(&readers.read_token).any(|s| s.matches(t)))
            as ringleader_node::observe::guard::TokenCheck
    });
    let settings = cfg.telemetry.settings("ringleader-node").with_http("node-http", &limits).protect_reads(reads);
    let telemetry = match Telemetry::init(&settings).await {
        Ok(t) => t,
        Err(e) => {
            eprintln!("ringleader-node: {e}");
            return ExitCode::FAILURE;
        }
    };
    let addr = match cfg.listen_addr() {
        Ok(a) => a,
        Err(e) => {
            error!(listen = %cfg.node.listen, error = %e, "bad listen address");
            return ExitCode::from(2);
        }
    };
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(l) => l,
        Err(e) => {
            error!(listen = %addr, error = %e, "cannot listen");
            return ExitCode::FAILURE;
        }
    };
    let health_listener = match cfg.health_addr() {
        Ok(None) => None,
        Ok(Some(addr)) => match tokio::net::TcpListener::bind(addr).await {
            Ok(l) => Some(l),
            Err(e) => {
                error!(health_listen = %addr, error = %e, "cannot listen");
                return ExitCode::FAILURE;
            }
        },
        Err(e) => {
            error!(error = %e, "bad health_listen address");
            return ExitCode::from(2);
        }
    };
    if cfg.node.advertise == format!("http://{}", cfg.node.listen) && addr.ip().is_unspecified() {
        warn!(advertise = %cfg.node.advertise, "advertising an unspecified address; set --advertise so others can dial it");
    }
    let tls = match cfg.tls.load() {
        Ok(t) => t,
        Err(SettingError { key, reason }) => {
            eprintln!("ringleader-node: invalid setting `{key}`: {reason}");
            return ExitCode::from(2);
        }
    };
    if !addr.ip().is_loopback() {
        for (token, key) in [(&auth.agent_token, "auth.agent_token"), (&auth.peer_token, "auth.peer_token")] {
            if token.is_none() {
                warn!(listen = %addr, "no {key} but listening beyond loopback: anyone who reaches {addr} may call this node; set {key}");
            }
        }
    }
    if !cfg.node.programs_dir.is_empty() {
        let (dir, section) = (std::path::PathBuf::from(&cfg.node.programs_dir), cfg.programs.clone());
        let installed =
            tokio::task::spawn_blocking(move || ringleader_node::programs::install_dir(&dir, &section).len()).await;
        if let Err(e) = installed {
            warn!(error = %e, "installing the programs failed; none is installed");
        }
    }
    let node = NodeConfig {
        name: cfg.node.name,
        advertise: cfg.node.advertise,
        agent_token: auth.agent_token,
        peer_token: auth.peer_token,
        tls,
        limits,
        channels: Default::default(),
        handover_on_shutdown: std::time::Duration::from_millis(cfg.node.handover_ms),
        orphan_grace: std::time::Duration::from_millis(cfg.node.orphan_grace_ms),
        etcd_endpoint: Some(cfg.node.etcd_endpoint).filter(|e| !e.is_empty()),
    };
    let code = match runtime::serve_with_health(listener, health_listener, node, runtime::shutdown_signal()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            error!(error = %e, "node failed");
            ExitCode::FAILURE
        }
    };
    telemetry.shutdown().await;
    code
}
