//! Controller configuration: defaults < file (`--config FILE`, TOML) <
//! environment (`RINGLEADER__CONTROLLER__PORT`, ...) < command-line flags,
//! checked by [`Config::validate`] before anything starts.
//!
//! ```
//! use ringleader_controller::config::{Config, Flags};
//! let flags = Flags { local_nodes: Some(8), ..Flags::default() };
//! let env = [("RINGLEADER__CONTROLLER__PORT".to_string(), "6000".to_string())];
//! let config = Config::load_from(&flags, env).unwrap();
//! assert_eq!((config.controller.port, config.controller.local_nodes), (6000, 8));
//! config.validate().unwrap();
//! ```

use ringleader_core::algo::detector::DetectorConfig;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::Duration;

use config::{Environment, File, FileFormat};
use ringleader_node::setting::SettingError;
use serde::Deserialize;

/// Largest embedded local cluster.
pub const MAX_LOCAL_NODES: u32 = 1024;

/// Largest `controller.max_faults`: a node weighs every link rule it holds
/// against each message it sends.
pub const MAX_FAULTS_LIMIT: usize = 4_096;
/// The most `controller.max_queued_checks` may be: each waiting check holds
/// its request (a few KiB) and two small tasks.
pub const MAX_QUEUED_CHECKS: usize = 4_096;

/// Errors loading or checking the configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A source could not be read or parsed.
    #[error("cannot load configuration: {0}")]
    Load(#[from] config::ConfigError),
    /// A setting has a value the controller cannot use.
    #[error("invalid configuration: `{key}`: {reason}")]
    Invalid {
        /// Dotted key, e.g. `controller.local_nodes`.
        key: &'static str,
        /// What is wrong and how to fix it.
        reason: String,
    },
}

/// A `controller.health_listen` that is not a socket address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{value}` is not a socket address like 0.0.0.0:50052: {source}")]
pub struct BadHealthAddr {
    /// The value given.
    pub value: String,
    /// What the parser said.
    pub source: std::net::AddrParseError,
}

/// Command-line flags of `ringleader-controller` (the highest-priority source).
#[derive(Clone, Debug, Default, PartialEq, Eq, clap::Parser)]
#[command(
    name = "ringleader-controller",
    version,
    about = "Ringleader's control plane: runs leader elections on gRPC nodes"
)]
pub struct Flags {
    /// TOML configuration file (keys as in `[controller]`: port, local_nodes, nodes, ...).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Address to serve the Controller API on [default: 0.0.0.0].
    #[arg(long)]
    pub host: Option<String>,
    /// Port to serve the Controller API on [default: 50051].
    #[arg(long)]
    pub port: Option<u16>,
    /// Start N node servers on 127.0.0.1 inside this process (the embedded local cluster).
    #[arg(long, value_name = "N")]
    pub local_nodes: Option<u32>,
    /// Drive these node processes instead, e.g. `http://10.0.0.1:7000,http://10.0.0.2:7000`.
    #[arg(long, value_name = "ADDRS", value_delimiter = ',')]
    pub nodes: Option<Vec<String>>,
    /// How long a LIVE election may take before it is reported FAILED [default: 30000].
    #[arg(long, value_name = "MS")]
    pub decision_timeout_ms: Option<u64>,
}

/// The whole configuration file / environment tree. Sections other than
/// `[controller]` (e.g. `[node]`) are ignored, so one file can serve every process.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Config {
    /// The `[controller]` section.
    pub controller: ControllerConfig,
    /// The `[telemetry]` section (shared with the nodes; see
    /// [`ringleader_node::observe::TelemetrySection`]).
    pub telemetry: ringleader_node::observe::TelemetrySection,
    /// The `[auth]` section (shared with the nodes; see [`ringleader_node::auth`]).
    pub auth: ringleader_node::auth::AuthSection,
    /// The `[tls]` section (shared with the nodes; see [`ringleader_node::tls`]).
    pub tls: ringleader_node::tls::TlsSection,
    /// The `[programs]` section: the limits of installed programs' processes
    /// (shared with the nodes; see [`ringleader_node::programs`]).
    pub programs: ringleader_node::programs::ProgramsSection,
}

/// The `[controller]` section.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ControllerConfig {
    /// Address to serve on.
    pub host: String,
    /// Port to serve on.
    pub port: u16,
    /// Node servers to start in-process on loopback (0 = none).
    pub local_nodes: u32,
    /// Addresses of external node processes (`http://host:port`).
    pub nodes: Vec<String>,
    /// Deadline for every position of a LIVE election to decide.
    pub decision_timeout_ms: u64,
    /// Deadline for a decided LIVE election's last messages to be delivered.
    pub quiet_timeout_ms: u64,
    /// Deadline of one controller-to-node call.
    pub rpc_timeout_ms: u64,
    /// Elections kept in memory (the oldest finished ones are forgotten first).
    pub max_elections: usize,
    /// Largest `size` of a SIMULATED election.
    pub max_simulated_size: u32,
    /// Most messages one SIMULATED election may deliver before it is stopped
    /// (and FAILED); keeps e.g. All the Way on a million nodes (10^12
    /// messages) from occupying a core for days.
    pub max_simulated_messages: u64,
    /// Heartbeat period of kept leaderships' failure detectors, unless a
    /// `StartElection` gives its own (50 ms: loopback; 500 ms in Kubernetes).
    pub detector_period_ms: u64,
    /// A neighbour silent this long is suspected (200 ms: loopback; 2,000 ms
    /// in Kubernetes). See docs/algorithms.md on false suspicion.
    pub detector_timeout_ms: u64,
    /// Discover the nodes behind this `host:port` (e.g. a Kubernetes headless
    /// Service, `ringleader-node.ringleader.svc.cluster.local:7000`) instead
    /// of listing them; empty = off. See [`crate::cluster::discover`].
    pub discover: String,
    /// With `discover`: wait until at least this many nodes answer.
    pub discover_nodes: u32,
    /// With `discover`: give up (and exit) after this long.
    pub discover_timeout_ms: u64,
    /// Keep election records in this file (an embedded database) so a
    /// restart loses none; empty = in memory only.
    pub history_path: String,
    /// Most elections running at once; `StartElection` beyond it is
    /// refused RESOURCE_EXHAUSTED. Running elections are never forgotten, so
    /// this also bounds memory beyond `max_elections`.
    pub max_running_elections: usize,
    /// Admit elections against this much memory (MiB), each reserving an
    /// estimate of its peak from its size and algorithm until it ends
    /// ([`crate::budget`]); beyond it `StartElection` is refused
    /// RESOURCE_EXHAUSTED. A `CheckAlgorithm` check reserves its share (half
    /// the budget over `max_concurrent_checks`, or less for a small
    /// `max_states`: [`crate::check::reservation_bytes`]) and stops there. 0:
    /// no budget. Set it below the process's memory limit, leaving room for
    /// the controller itself (k8s/: 320 of 512Mi).
    pub memory_budget_mib: u64,
    /// Bytes of finished election records (diagrams included) kept in memory
    /// and in the history, MiB; beyond it the oldest diagrams are dropped
    /// first, then the oldest records. With `memory_budget_mib`, set aside
    /// from it for the records.
    pub max_stored_mib: u64,
    /// A space-time diagram larger than this (KiB) is not kept: the record
    /// says so and keeps everything else.
    pub max_diagram_kib: u64,
    /// Most `CheckAlgorithm` checks running at once; the next wait in the
    /// queue (`max_queued_checks`). A check takes a core for as long as it
    /// runs: the default, half the cores (at least 1), leaves the rest to the
    /// embedded nodes, whose kept leaderships' timing assumes they get CPU.
    pub max_concurrent_checks: usize,
    /// Most `CheckAlgorithm` checks waiting for a place among
    /// `max_concurrent_checks`, in first-come order, each told its position
    /// as the queue moves; one beyond it is refused RESOURCE_EXHAUSTED
    /// naming this setting. Identical checks share one place, and one already
    /// answered is answered from the cache without queueing
    /// ([`crate::check`]). A waiting check holds its request and two small
    /// tasks. 0 to [`MAX_QUEUED_CHECKS`]; the default, 64, holds a class of
    /// 30 with two different checks each.
    pub max_queued_checks: usize,
    /// Most lab explores (`POST /lab/explore`) replayed at once; one
    /// beyond it waits [`crate::check::EXPLORE_WAIT`] for a place, then is
    /// refused 429 RESOURCE_EXHAUSTED. Each takes a core while it replays
    /// (on a blocking thread, never an async worker): the default, half the
    /// cores (at least 1), leaves the rest to the embedded nodes.
    pub max_concurrent_explores: usize,
    /// Also serve `grpc.health.v1` alone, in plain text, on this socket
    /// address (e.g. `0.0.0.0:50052`), for Kubernetes gRPC probes, which
    /// cannot speak TLS; empty = off.
    pub health_listen: String,
    /// Most connections the API server holds at once; more are closed as
    /// soon as they are accepted (logged, counted in
    /// `ringleader.connections.refused`). The HTTP port
    /// (`telemetry.metrics_listen`) holds a sixteenth of this, at least 4
    /// ([`ringleader_node::http::HttpLimits::sharing`]).
    pub max_connections: usize,
    /// A connection that sends nothing this long is closed (live HTTP/2
    /// clients answer the server's pings every 20 s, so only dead or silent
    /// ones are), on the API server and on the HTTP port.
    pub idle_timeout_ms: u64,
    /// Most injected faults held at once (active, scheduled or waiting; a
    /// recover holds none); `InjectFault` beyond it is refused
    /// RESOURCE_EXHAUSTED. Each injection is sent as one change to the nodes
    /// it concerns, whatever the number held; the cap bounds the rules a
    /// node weighs against every message it sends and the size of
    /// `ListFaults` and `GetCluster`. At most [`MAX_FAULTS_LIMIT`].
    pub max_faults: usize,
    /// MiB the process may hold for peers that do not read their answers
    /// (calls in flight and answers not yet taken, on every server of the
    /// process); past it the stalled and heaviest connections are closed
    /// ([`ringleader_node::unread`]). 1 to 4096.
    pub max_unread_mib: usize,
    /// The etcd v3 endpoint (`http://host:port`) LIVE `lease` elections
    /// keep their record at, sent to each node in its `Prepare` (a node's own
    /// `etcd_endpoint` takes precedence); empty: `lease` runs SIMULATED only.
    pub etcd_endpoint: String,
    /// Install the programs in this directory at start (one subdirectory
    /// per program, each with its `program.json`; docs/programs.md), under
    /// the `[programs]` limits; a program that fails to load is logged and
    /// left out. The embedded cluster (`local_nodes`) runs them in this
    /// process; external nodes need the same programs in their own
    /// `node.programs_dir`. Empty: no programs.
    pub programs_dir: String,
    /// The programs installed from `programs_dir` (filled in at start, by
    /// [`crate::run`]; not a setting).
    #[serde(skip)]
    pub programs: crate::programs::Installed,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        ControllerConfig {
            host: "0.0.0.0".into(),
            port: 50051,
            local_nodes: 0,
            nodes: Vec::new(),
            decision_timeout_ms: 30_000,
            quiet_timeout_ms: 10_000,
            rpc_timeout_ms: 5_000,
            max_elections: 1_000,
            max_simulated_size: 1_000_000,
            max_simulated_messages: 200_000_000,
            detector_period_ms: DetectorConfig::LOOPBACK.period_ms,
            detector_timeout_ms: DetectorConfig::LOOPBACK.timeout_ms,
            discover: String::new(),
            discover_nodes: 0,
            discover_timeout_ms: 600_000,
            history_path: String::new(),
            max_running_elections: 256,
            memory_budget_mib: 0,
            max_stored_mib: 64,
            max_diagram_kib: 4_096,
            max_concurrent_checks: default_concurrent_checks(),
            max_queued_checks: 64,
            max_concurrent_explores: default_concurrent_checks(),
            health_listen: String::new(),
            max_connections: ringleader_node::limits::ConnLimits::DEFAULT.max_connections,
            idle_timeout_ms: ringleader_node::limits::ConnLimits::DEFAULT.idle_timeout.as_millis() as u64,
            max_faults: 256,
            max_unread_mib: ringleader_node::unread::DEFAULT_BUDGET >> 20,
            etcd_endpoint: String::new(),
            programs_dir: String::new(),
            programs: crate::programs::Installed::default(),
        }
    }
}

/// Half the cores this process may use (its cgroup's CPU quota, where it
/// has one), at least 1: [`ControllerConfig::max_concurrent_checks`].
pub fn default_concurrent_checks() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get() / 2).max(1)
}

impl ControllerConfig {
    /// [`Self::decision_timeout_ms`] as a duration.
    pub fn decision_timeout(&self) -> Duration {
        Duration::from_millis(self.decision_timeout_ms)
    }

    /// [`Self::quiet_timeout_ms`] as a duration.
    pub fn quiet_timeout(&self) -> Duration {
        Duration::from_millis(self.quiet_timeout_ms)
    }

    /// The default failure detector of kept leaderships.
    pub fn detector(&self) -> DetectorConfig {
        DetectorConfig { period_ms: self.detector_period_ms, timeout_ms: self.detector_timeout_ms }
    }

    /// The API server's connection limits.
    pub fn limits(&self) -> ringleader_node::limits::ConnLimits {
        ringleader_node::limits::ConnLimits {
            max_connections: self.max_connections,
            idle_timeout: Duration::from_millis(self.idle_timeout_ms),
            ..ringleader_node::limits::ConnLimits::DEFAULT
        }
    }

    /// [`Self::health_listen`], parsed (`None`: off).
    pub fn health_addr(&self) -> Result<Option<std::net::SocketAddr>, BadHealthAddr> {
        match self.health_listen.trim() {
            "" => Ok(None),
            a => a.parse().map(Some).map_err(|source| BadHealthAddr { value: a.to_string(), source }),
        }
    }

    /// [`Self::discover_timeout_ms`] as a duration.
    pub fn discover_timeout(&self) -> Duration {
        Duration::from_millis(self.discover_timeout_ms)
    }

    /// [`Self::rpc_timeout_ms`] as a duration.
    pub fn rpc_timeout(&self) -> Duration {
        Duration::from_millis(self.rpc_timeout_ms)
    }
}

impl Config {
    /// Load from the defaults, `flags.config`, the process environment and `flags`.
    pub fn load(flags: &Flags) -> Result<Config, ConfigError> {
        Self::load_from(flags, std::env::vars())
    }

    /// Like [`Config::load`], with the environment given explicitly (for tests).
    pub fn load_from(flags: &Flags, env: impl IntoIterator<Item = (String, String)>) -> Result<Config, ConfigError> {
        let env: HashMap<String, String> = env.into_iter().filter(|(k, _)| k.starts_with("RINGLEADER__")).collect();
        let mut builder = config::Config::builder();
        if let Some(path) = &flags.config {
            builder = builder.add_source(File::from(path.as_path()).format(FileFormat::Toml).required(true));
        }
        builder = builder.add_source(
            Environment::with_prefix("RINGLEADER")
                .prefix_separator("__")
                .separator("__")
                .try_parsing(true)
                .list_separator(",")
                .with_list_parse_key("controller.nodes")
                .source(Some(env.into_iter().collect())),
        );
        builder = builder
            .set_override_option("controller.host", flags.host.clone())?
            .set_override_option("controller.port", flags.port.map(u64::from))?
            .set_override_option("controller.local_nodes", flags.local_nodes.map(u64::from))?
            .set_override_option("controller.nodes", flags.nodes.clone())?
            .set_override_option("controller.decision_timeout_ms", flags.decision_timeout_ms)?;
        Ok(builder.build()?.try_deserialize()?)
    }

    /// Check every setting, with an error naming the key and the fix.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let c = &self.controller;
        c.validate_where()?;
        c.validate_memory()?;
        c.validate_nodes()?;
        c.validate_limits()?;
        ringleader_node::programs::check_dir("controller.programs_dir", &c.programs_dir)
            .and_then(|()| self.programs.validate())
            .map_err(|SettingError { key, reason }| ConfigError::Invalid { key, reason })?;
        self.telemetry.validate().map_err(|SettingError { key, reason }| ConfigError::Invalid { key, reason })?;
        self.auth.resolve().map_err(|SettingError { key, reason }| ConfigError::Invalid { key, reason })?;
        self.tls.load().map(|_| ()).map_err(|SettingError { key, reason }| ConfigError::Invalid { key, reason })
    }
}

impl ControllerConfig {
    /// The store, the address to serve on, and the embedded cluster's size.
    fn validate_where(&self) -> Result<(), ConfigError> {
        let c = self;
        let invalid = |key, reason: String| Err(ConfigError::Invalid { key, reason });
        if !c.etcd_endpoint.is_empty()
            && let Err(e) = ringleader_node::runtime::check_etcd_endpoint(&c.etcd_endpoint)
        {
            return invalid("controller.etcd_endpoint", e.to_string());
        }
        if c.host.trim().is_empty() {
            return invalid("controller.host", "must not be empty (e.g. 0.0.0.0 or 127.0.0.1)".into());
        }
        if c.local_nodes > 0 && !c.nodes.is_empty() {
            return invalid(
                "controller.local_nodes",
                "give either local_nodes (an embedded cluster) or nodes (external node processes), not both".into(),
            );
        }
        if c.local_nodes == 1 {
            return invalid(
                "controller.local_nodes",
                "a ring needs at least 2 nodes; use 0 (none) or 2 or more".into(),
            );
        }
        if c.local_nodes > MAX_LOCAL_NODES {
            return invalid(
                "controller.local_nodes",
                format!("{} is more than the limit {MAX_LOCAL_NODES}", c.local_nodes),
            );
        }
        if let Err(e) = c.health_addr() {
            return invalid("controller.health_listen", e.to_string());
        }
        Ok(())
    }

    /// The stored records, the diagrams and the memory budget, and the detector.
    fn validate_memory(&self) -> Result<(), ConfigError> {
        let c = self;
        let invalid = |key, reason: String| Err(ConfigError::Invalid { key, reason });
        if c.max_stored_mib == 0 {
            return invalid("controller.max_stored_mib", "must be at least 1 (MiB of finished records kept)".into());
        }
        if c.max_diagram_kib > c.max_stored_mib.saturating_mul(1024) {
            return invalid(
                "controller.max_diagram_kib",
                format!(
                    "{} KiB is more than all stored records may take (controller.max_stored_mib = {} MiB)",
                    c.max_diagram_kib, c.max_stored_mib
                ),
            );
        }
        if c.memory_budget_mib > 0 && c.memory_budget_mib <= c.max_stored_mib {
            return invalid(
                "controller.memory_budget_mib",
                format!(
                    "{} MiB leaves nothing for elections once the stored records' {} MiB (controller.max_stored_mib) \
                     are set aside; raise it or lower max_stored_mib",
                    c.memory_budget_mib, c.max_stored_mib
                ),
            );
        }
        if let Err(e) = c.detector().validate() {
            return invalid("controller.detector_timeout_ms", e.to_string());
        }
        Ok(())
    }

    /// The external nodes: a DNS name to discover them by, or their list.
    fn validate_nodes(&self) -> Result<(), ConfigError> {
        let c = self;
        let invalid = |key, reason: String| Err(ConfigError::Invalid { key, reason });
        if !c.discover.is_empty() {
            if c.local_nodes > 0 || !c.nodes.is_empty() {
                return invalid(
                    "controller.discover",
                    "give one of local_nodes, nodes or discover (a DNS name whose addresses are the nodes)".into(),
                );
            }
            let port = c.discover.rsplit_once(':').and_then(|(host, p)| (!host.is_empty()).then_some(p));
            if port.and_then(|p| p.parse::<u16>().ok()).is_none() {
                return invalid(
                    "controller.discover",
                    format!(
                        "`{}` is not host:port, e.g. ringleader-node.ringleader.svc.cluster.local:7000",
                        c.discover
                    ),
                );
            }
            if c.discover_nodes < 2 {
                return invalid(
                    "controller.discover_nodes",
                    "with discover, give how many nodes to wait for (at least 2)".into(),
                );
            }
        }
        if c.nodes.len() == 1 {
            return invalid("controller.nodes", "a ring needs at least 2 nodes; list 2 or more addresses".into());
        }
        let mut seen = HashSet::new();
        for addr in &c.nodes {
            if !(addr.starts_with("http://") || addr.starts_with("https://")) {
                return invalid("controller.nodes", format!("`{addr}` must start with http:// or https://"));
            }
            if addr.parse::<tonic::transport::Uri>().map(|u| u.host().is_none()).unwrap_or(true) {
                return invalid("controller.nodes", format!("`{addr}` is not an address like http://host:port"));
            }
            if !seen.insert(addr.as_str()) {
                return invalid("controller.nodes", format!("`{addr}` is listed twice"));
            }
        }
        Ok(())
    }

    /// The timeouts and the most of each thing the controller runs or keeps at once.
    fn validate_limits(&self) -> Result<(), ConfigError> {
        let c = self;
        let invalid = |key, reason: String| Err(ConfigError::Invalid { key, reason });
        for (key, value) in [
            ("controller.decision_timeout_ms", c.decision_timeout_ms),
            ("controller.quiet_timeout_ms", c.quiet_timeout_ms),
            ("controller.rpc_timeout_ms", c.rpc_timeout_ms),
            ("controller.discover_timeout_ms", c.discover_timeout_ms),
        ] {
            if value == 0 {
                return invalid(key, "must be at least 1 (milliseconds)".into());
            }
        }
        if c.max_running_elections == 0 {
            return invalid("controller.max_running_elections", "must be at least 1".into());
        }
        if c.max_concurrent_checks == 0 {
            return invalid("controller.max_concurrent_checks", "must be at least 1".into());
        }
        if c.max_queued_checks > MAX_QUEUED_CHECKS {
            return invalid(
                "controller.max_queued_checks",
                format!("{} is more than the limit {MAX_QUEUED_CHECKS}", c.max_queued_checks),
            );
        }
        if c.max_concurrent_explores == 0 {
            return invalid("controller.max_concurrent_explores", "must be at least 1".into());
        }
        if c.max_connections < 8 {
            return invalid("controller.max_connections", "must be at least 8".into());
        }
        if !(1_000..=86_400_000).contains(&c.idle_timeout_ms) {
            return invalid("controller.idle_timeout_ms", "must be between 1 s and a day (1000..=86400000)".into());
        }
        if c.max_elections == 0 {
            return invalid("controller.max_elections", "must be at least 1".into());
        }
        if !(1..=MAX_FAULTS_LIMIT).contains(&c.max_faults) {
            return invalid(
                "controller.max_faults",
                format!(
                    "must be between 1 and {MAX_FAULTS_LIMIT} (a node weighs every rule it holds against each message)"
                ),
            );
        }
        if !(1..=4096).contains(&c.max_unread_mib) {
            return invalid("controller.max_unread_mib", "must be between 1 and 4096".into());
        }
        if c.max_simulated_size < 2 {
            return invalid("controller.max_simulated_size", "must be at least 2".into());
        }
        if c.max_simulated_messages == 0 {
            return invalid("controller.max_simulated_messages", "must be at least 1".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    /// With no source at all the defaults apply: port 50051, no nodes.
    #[test]
    fn defaults() {
        let c = Config::load_from(&Flags::default(), env(&[])).unwrap();
        assert_eq!(c, Config::default());
        assert_eq!(c.controller.port, 50051);
        c.validate().unwrap();
    }

    /// Precedence is defaults < file < environment < flags, key by key.
    #[test]
    fn precedence() {
        let dir = std::env::temp_dir().join(format!("ringleader-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("controller.toml");
        std::fs::write(
            &file,
            "[controller]\nport = 6001\nlocal_nodes = 4\nrpc_timeout_ms = 700\n[node]\nanything = 1\n",
        )
        .unwrap();
        let mut flags = Flags { config: Some(file), ..Flags::default() };
        let e = env(&[("RINGLEADER__CONTROLLER__PORT", "6002"), ("RINGLEADER__CONTROLLER__LOCAL_NODES", "5")]);
        let c = Config::load_from(&flags, e.clone()).unwrap();
        assert_eq!((c.controller.port, c.controller.local_nodes, c.controller.rpc_timeout_ms), (6002, 5, 700));
        flags.port = Some(6003);
        let c = Config::load_from(&flags, e).unwrap();
        assert_eq!((c.controller.port, c.controller.local_nodes), (6003, 5));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Node lists come from a comma-separated environment variable or flag.
    #[test]
    fn node_lists() {
        let e = env(&[("RINGLEADER__CONTROLLER__NODES", "http://a:7000,http://b:7000")]);
        let c = Config::load_from(&Flags::default(), e).unwrap();
        assert_eq!(c.controller.nodes, vec!["http://a:7000", "http://b:7000"]);
        c.validate().unwrap();
    }

    /// Bad values are refused with the key named.
    #[test]
    fn validation_names_the_key() {
        let bad = |f: fn(&mut ControllerConfig), key: &str| {
            let mut c = Config::default();
            f(&mut c.controller);
            let err = c.validate().unwrap_err().to_string();
            assert!(err.contains(key), "{err}");
        };
        bad(|c| c.local_nodes = 1, "controller.local_nodes");
        bad(|c| c.local_nodes = MAX_LOCAL_NODES + 1, "controller.local_nodes");
        bad(|c| c.nodes = vec!["a:7000".into(), "http://b:1".into()], "controller.nodes");
        bad(|c| c.nodes = vec!["http://b:1".into(), "http://b:1".into()], "controller.nodes");
        bad(
            |c| {
                c.local_nodes = 2;
                c.nodes = vec!["http://a:1".into(), "http://b:1".into()];
            },
            "controller.local_nodes",
        );
        bad(|c| c.decision_timeout_ms = 0, "controller.decision_timeout_ms");
        bad(|c| c.host = String::new(), "controller.host");
        bad(|c| c.max_concurrent_checks = 0, "controller.max_concurrent_checks");
        bad(|c| c.max_concurrent_explores = 0, "controller.max_concurrent_explores");
        bad(|c| c.max_queued_checks = MAX_QUEUED_CHECKS + 1, "controller.max_queued_checks");
        bad(|c| c.max_faults = 0, "controller.max_faults");
        bad(|c| c.max_unread_mib = 0, "controller.max_unread_mib");
        bad(|c| c.max_faults = MAX_FAULTS_LIMIT + 1, "controller.max_faults");
        bad(|c| c.health_listen = "50052".into(), "controller.health_listen");
        bad(|c| c.discover = "ringleader-node".into(), "controller.discover");
        bad(|c| c.discover = "ringleader-node:7000".into(), "controller.discover_nodes");
        bad(
            |c| {
                c.discover = "n:7000".into();
                c.discover_nodes = 2;
                c.local_nodes = 2;
            },
            "controller.discover",
        );
        bad(|c| c.programs_dir = "/no/such/programs".into(), "controller.programs_dir");
        let mut c = Config::default();
        c.programs.isolation = "sometimes".into();
        assert!(c.validate().unwrap_err().to_string().contains("programs.isolation"));
        let e = env(&[("RINGLEADER__PROGRAMS__STEP_MS", "0")]);
        let c = Config::load_from(&Flags::default(), e).unwrap();
        assert!(c.validate().unwrap_err().to_string().contains("programs.step_ms"));
        let mut c = Config::default();
        c.telemetry.metrics_listen = Some("localhost".into());
        assert!(c.validate().unwrap_err().to_string().contains("telemetry.metrics_listen"));
    }

    /// A typo in the `[controller]` section is an error, not silently ignored.
    #[test]
    fn unknown_keys_are_refused() {
        let e = env(&[("RINGLEADER__CONTROLLER__PROT", "1")]);
        assert!(Config::load_from(&Flags::default(), e).unwrap_err().to_string().contains("prot"));
    }
}
