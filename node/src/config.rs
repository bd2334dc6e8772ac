//! Configuration of `ringleader-node`.
//!
//! Sources, later ones winning: built-in defaults < a TOML file (`--config`)
//! < environment variables `RINGLEADER__<SECTION>__<KEY>` (e.g.
//! `RINGLEADER__NODE__LISTEN=0.0.0.0:7000`) < command-line flags.
//!
//! ```toml
//! [node]
//! listen = "0.0.0.0:7000"        # where the Peer and Agent services listen
//! name = "node-0"                # default: the host name
//! advertise = "http://node-0.ringleader-node:7000"  # default: http://<listen>; a bare host:port
//!                                                    # gets http:// (https:// with [tls])
//! health_listen = "0.0.0.0:7001" # grpc.health.v1 alone in plain text, for Kubernetes probes of a
//!                                # TLS node; unset: not served
//! max_connections = 4096         # connections held at once; more are closed at once (logged, counted);
//!                                # the metrics port holds a sixteenth of this, at least 4
//! idle_timeout_ms = 60000        # a connection that sends nothing this long is closed (both ports),
//!                                # and a gRPC connection with no call in flight this long
//! max_unread_mib = 64            # held for peers that do not read their answers; past it the
//!                                # stalled and heaviest connections are closed
//! handover_ms = 2000             # on SIGTERM, hand the kept leaderships it leads over and wait
//!                                # up to this long for the successors (0: stop at once)
//! orphan_grace_ms = 60000        # abort every election held once no controller has listened this
//!                                # long (its event stream gone: crashed, killed); 0: never
//!
//! programs_dir = "/programs"   # install the programs there at start (docs/programs.md); unset: none
//!
//! [programs]                   # limits of the programs' processes; see ringleader_node::programs
//! step_ms = 1000
//! isolation = "required"
//!
//! [telemetry]
//! log = "info,ringleader_node=debug"  # tracing filter; RUST_LOG wins over it
//! otlp_endpoint = "http://otel-collector:4317"  # else OTEL_EXPORTER_OTLP_ENDPOINT; unset: none
//! metrics_listen = "0.0.0.0:9464"     # Prometheus /metrics; unset: not served
//! ```

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Parser;
use ringleader_node::setting::SettingError;
use serde::Deserialize;

/// Default listen address.
pub const DEFAULT_LISTEN: &str = "0.0.0.0:7000";

/// Command-line flags. Each one overrides the file and the environment.
#[derive(Debug, Default, Parser)]
#[command(name = "ringleader-node", version, about = "Ringleader node: runs its share of leader elections over gRPC")]
pub struct Cli {
    /// Address to listen on [default: 0.0.0.0:7000]
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,
    /// Node name reported to the controller [default: the host name]
    #[arg(long)]
    pub name: Option<String>,
    /// Also serve grpc.health.v1 alone, in plain text, on this address (for Kubernetes probes under TLS)
    #[arg(long, value_name = "ADDR")]
    pub health_listen: Option<String>,
    /// URL peers and the controller dial to reach this node [default: http://<listen>]
    #[arg(long, value_name = "URL")]
    pub advertise: Option<String>,
    /// TOML configuration file
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// Errors loading or validating the configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A source could not be read or does not have the expected shape.
    #[error("cannot load the configuration: {0}")]
    Load(#[from] ::config::ConfigError),
    /// A `[telemetry]`, `[auth]` or `[tls]` setting has a bad value.
    #[error("invalid setting `{key}`: {reason}")]
    Section {
        /// Dotted key, e.g. `telemetry.metrics_listen`.
        key: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A setting has a bad value.
    #[error("invalid setting `{key}` = {value:?}: {reason}")]
    Invalid {
        /// Dotted key, e.g. `node.listen`.
        key: &'static str,
        /// The value given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
}

/// An address setting that is not a socket address; `example` shows one that is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a socket address like {example}: {source}")]
pub struct BadAddr {
    /// A good value for the setting, e.g. `0.0.0.0:7000`.
    pub example: &'static str,
    /// What the parser said.
    pub source: std::net::AddrParseError,
}

/// The merged configuration. Sections other than `[node]` and `[telemetry]`
/// (e.g. `[controller]`) are ignored, so one file can serve every process;
/// unknown keys inside these two are errors.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct Config {
    /// `[node]`
    pub node: NodeSection,
    /// `[telemetry]`
    #[serde(default)]
    pub telemetry: ringleader_node::observe::TelemetrySection,
    /// `[auth]` (the node uses `agent_token` and `peer_token`; `protect_reads` with `token` or
    /// `read_token` guards its `/metrics`)
    #[serde(default)]
    pub auth: ringleader_node::auth::AuthSection,
    /// `[tls]`
    #[serde(default)]
    pub tls: ringleader_node::tls::TlsSection,
    /// `[programs]`: the limits of installed programs' processes
    #[serde(default)]
    pub programs: ringleader_node::programs::ProgramsSection,
}

/// `[node]`: who the node is and where it listens.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct NodeSection {
    /// Socket address to listen on.
    pub listen: String,
    /// Node name (filled with the host name when not set).
    #[serde(default)]
    pub name: String,
    /// The URL others dial (filled with `http://<listen>` when not set; a bare `host:port` gets
    /// `http://`, or `https://` with `[tls]`).
    #[serde(default)]
    pub advertise: String,
    /// Where to serve `grpc.health.v1` alone in plain text (empty: nowhere).
    #[serde(default)]
    pub health_listen: String,
    /// Most connections the server holds at once (the metrics port: a
    /// sixteenth of them, at least 4).
    #[serde(default = "default_max_connections")]
    pub max_connections: usize,
    /// A connection that sends nothing this long is closed.
    #[serde(default = "default_idle_timeout_ms")]
    pub idle_timeout_ms: u64,
    /// MiB held for peers that do not read their answers, all ports
    /// together; past it the stalled and heaviest connections are closed
    /// ([`ringleader_node::unread`]). 1 to 4096.
    #[serde(default = "default_max_unread_mib")]
    pub max_unread_mib: usize,
    /// On SIGTERM, hand over the kept leaderships this node leads and wait
    /// up to this long for the successors' claims before stopping (0: stop
    /// at once).
    #[serde(default = "default_handover_ms")]
    pub handover_ms: u64,
    /// Abort every election this node holds once no controller's event
    /// stream has been open for this long (0: never).
    #[serde(default = "default_orphan_grace_ms")]
    pub orphan_grace_ms: u64,
    /// The etcd v3 endpoint (`http://host:port`) this node's `lease`
    /// elections keep their record at, whatever the controller names
    /// (empty: the controller's).
    #[serde(default)]
    pub etcd_endpoint: String,
    /// Install the programs in this directory at start (one subdirectory
    /// per program, each with its `program.json`): the controller's
    /// elections may then name them (the controller needs the same ones in
    /// its `controller.programs_dir`). Empty: none.
    #[serde(default)]
    pub programs_dir: String,
}

fn default_orphan_grace_ms() -> u64 {
    ringleader_node::runtime::ORPHAN_GRACE.as_millis() as u64
}

fn default_handover_ms() -> u64 {
    ringleader_node::runtime::HANDOVER_WAIT.as_millis() as u64
}

fn default_max_connections() -> usize {
    ringleader_node::limits::ConnLimits::DEFAULT.max_connections
}

fn default_max_unread_mib() -> usize {
    ringleader_node::unread::DEFAULT_BUDGET >> 20
}

fn default_idle_timeout_ms() -> u64 {
    ringleader_node::limits::ConnLimits::DEFAULT.idle_timeout.as_millis() as u64
}

impl Config {
    /// Merge defaults, the file, the process environment and the flags, fill in derived defaults, and validate.
    pub fn load(cli: &Cli) -> Result<Config, ConfigError> {
        Self::load_with_env(cli, None)
    }

    /// [`Config::load`] with an explicit environment (`None`: the process's own).
    pub fn load_with_env(cli: &Cli, env: Option<::config::Map<String, String>>) -> Result<Config, ConfigError> {
        let mut b = ::config::Config::builder().set_default("node.listen", DEFAULT_LISTEN)?;
        if let Some(path) = &cli.config {
            b = b.add_source(::config::File::from(path.as_path()).format(::config::FileFormat::Toml).required(true));
        }
        let cfg: Config = b
            .add_source(
                ::config::Environment::with_prefix("RINGLEADER").prefix_separator("__").separator("__").source(env),
            )
            .set_override_option("node.listen", cli.listen.clone())?
            .set_override_option("node.name", cli.name.clone())?
            .set_override_option("node.advertise", cli.advertise.clone())?
            .set_override_option("node.health_listen", cli.health_listen.clone())?
            .build()?
            .try_deserialize()?;
        let cfg = cfg.with_derived_defaults();
        cfg.validate()?;
        Ok(cfg)
    }

    fn with_derived_defaults(mut self) -> Config {
        if self.node.name.is_empty() {
            self.node.name = hostname();
        }
        let scheme = if self.tls.cert.is_some() { "https" } else { "http" };
        if self.node.advertise.is_empty() {
            self.node.advertise = format!("{scheme}://{}", self.node.listen);
        } else if !self.node.advertise.contains("://") {
            // A bare host:port: the scheme follows [tls], so turning TLS on needs no second edit.
            self.node.advertise = format!("{scheme}://{}", self.node.advertise);
        }
        self
    }

    /// Check every setting, with an error naming the key and saying what is wrong.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |key, value: &str, reason: String| ConfigError::Invalid { key, value: value.to_string(), reason };
        self.listen_addr().map_err(|e| invalid("node.listen", &self.node.listen, e.to_string()))?;
        if !self.node.etcd_endpoint.is_empty() {
            let e = &self.node.etcd_endpoint;
            ringleader_node::runtime::check_etcd_endpoint(e)
                .map_err(|r| invalid("node.etcd_endpoint", e, r.to_string()))?;
        }
        if self.node.name.trim().is_empty() {
            return Err(invalid("node.name", &self.node.name, "must not be empty".into()));
        }
        let adv = &self.node.advertise;
        let uri: tonic::codegen::http::Uri =
            adv.parse().map_err(|e| invalid("node.advertise", adv, format!("not a URL: {e}")))?;
        let scheme = if self.tls.cert.is_some() { "https" } else { "http" };
        if uri.scheme_str() != Some(scheme) || uri.host().is_none_or(str::is_empty) {
            return Err(invalid(
                "node.advertise",
                adv,
                format!("must be an {scheme}:// URL with a host, e.g. {scheme}://10.0.0.7:7000 (https with [tls])"),
            ));
        }
        self.health_addr().map_err(|e| invalid("node.health_listen", &self.node.health_listen, e.to_string()))?;
        if self.node.max_connections < 8 {
            let v = self.node.max_connections.to_string();
            return Err(invalid("node.max_connections", &v, "must be at least 8".into()));
        }
        if !(1..=4096).contains(&self.node.max_unread_mib) {
            let v = self.node.max_unread_mib.to_string();
            return Err(invalid("node.max_unread_mib", &v, "must be between 1 and 4096".into()));
        }
        if self.node.handover_ms > 60_000 {
            let v = self.node.handover_ms.to_string();
            return Err(invalid("node.handover_ms", &v, "must be at most a minute (0..=60000)".into()));
        }
        if self.node.orphan_grace_ms != 0 && !(1_000..=86_400_000).contains(&self.node.orphan_grace_ms) {
            let v = self.node.orphan_grace_ms.to_string();
            return Err(invalid(
                "node.orphan_grace_ms",
                &v,
                "must be 0 (never) or between 1 s and a day (1000..=86400000)".into(),
            ));
        }
        if !(1_000..=86_400_000).contains(&self.node.idle_timeout_ms) {
            let v = self.node.idle_timeout_ms.to_string();
            return Err(invalid("node.idle_timeout_ms", &v, "must be between 1 s and a day (1000..=86400000)".into()));
        }
        let dir = &self.node.programs_dir;
        ringleader_node::programs::check_dir("node.programs_dir", dir)
            .map_err(|e| invalid("node.programs_dir", dir, e.reason))?;
        self.programs.validate().map_err(|SettingError { key, reason }| ConfigError::Section { key, reason })?;
        self.telemetry.validate().map_err(|SettingError { key, reason }| ConfigError::Section { key, reason })?;
        self.auth.resolve().map_err(|SettingError { key, reason }| ConfigError::Section { key, reason })?;
        self.tls.load().map_err(|SettingError { key, reason }| ConfigError::Section { key, reason })?;
        Ok(())
    }

    /// The server's connection limits.
    pub fn limits(&self) -> ringleader_node::limits::ConnLimits {
        ringleader_node::limits::ConnLimits {
            max_connections: self.node.max_connections,
            idle_timeout: std::time::Duration::from_millis(self.node.idle_timeout_ms),
            ..ringleader_node::limits::ConnLimits::DEFAULT
        }
    }

    /// The plain-text health address, parsed (`None`: not served).
    pub fn health_addr(&self) -> Result<Option<SocketAddr>, BadAddr> {
        match self.node.health_listen.trim() {
            "" => Ok(None),
            a => a.parse().map(Some).map_err(|source| BadAddr { example: "0.0.0.0:7001", source }),
        }
    }

    /// The listen address, parsed.
    pub fn listen_addr(&self) -> Result<SocketAddr, BadAddr> {
        self.node.listen.parse().map_err(|source| BadAddr { example: "0.0.0.0:7000", source })
    }
}

/// The host name, from `HOSTNAME` or `/etc/hostname`, else `node`.
fn hostname() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "node".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Option<::config::Map<String, String>> {
        Some(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
    }

    /// With nothing given, the node listens on 0.0.0.0:7000 and advertises that address.
    #[test]
    fn defaults() {
        let c = Config::load_with_env(&Cli::default(), env(&[])).unwrap();
        assert_eq!(c.node.listen, DEFAULT_LISTEN);
        assert_eq!(c.node.advertise, "http://0.0.0.0:7000");
        assert!(!c.node.name.is_empty());
        assert_eq!(c.node.orphan_grace_ms, 60_000);
    }

    /// `node.programs_dir` must name a directory and the `[programs]` limits their ranges, each
    /// refused naming its key.
    #[test]
    fn programs_settings_name_their_key() {
        let e = Config::load_with_env(&Cli::default(), env(&[("RINGLEADER__NODE__PROGRAMS_DIR", "/no/such/dir")]));
        assert!(e.unwrap_err().to_string().contains("node.programs_dir"));
        let e = Config::load_with_env(&Cli::default(), env(&[("RINGLEADER__PROGRAMS__ISOLATION", "maybe")]));
        assert!(e.unwrap_err().to_string().contains("programs.isolation"));
        let c = Config::load_with_env(&Cli::default(), env(&[("RINGLEADER__PROGRAMS__STEP_MS", "250")])).unwrap();
        assert_eq!(c.programs.step_ms, 250);
    }

    /// The file beats the defaults, the environment beats the file, and flags beat the environment.
    #[test]
    fn precedence() {
        let dir = std::env::temp_dir().join(format!("ringleader-node-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("node.toml");
        std::fs::write(
            &file,
            "[node]\nlisten = \"127.0.0.1:7100\"\nname = \"from-file\"\nadvertise = \"http://file:7100\"\n\
             [telemetry]\nlog = \"debug\"\n",
        )
        .unwrap();
        let cli = Cli { config: Some(file.clone()), ..Cli::default() };
        let c = Config::load_with_env(&cli, env(&[])).unwrap();
        assert_eq!((c.node.listen.as_str(), c.node.name.as_str()), ("127.0.0.1:7100", "from-file"));
        assert_eq!(c.telemetry.log.as_deref(), Some("debug"));

        let e = env(&[("RINGLEADER__NODE__NAME", "from-env"), ("RINGLEADER__NODE__LISTEN", "127.0.0.1:7200")]);
        let c = Config::load_with_env(&cli, e.clone()).unwrap();
        assert_eq!((c.node.listen.as_str(), c.node.name.as_str()), ("127.0.0.1:7200", "from-env"));
        assert_eq!(c.node.advertise, "http://file:7100");

        let cli = Cli { name: Some("from-flag".into()), ..cli };
        let c = Config::load_with_env(&cli, e).unwrap();
        assert_eq!((c.node.listen.as_str(), c.node.name.as_str()), ("127.0.0.1:7200", "from-flag"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Bad values are refused with the key named; unknown keys and missing files are errors too.
    #[test]
    fn validation_names_the_key() {
        let bad = |cli: Cli, e: &[(&str, &str)]| Config::load_with_env(&cli, env(e)).unwrap_err().to_string();
        let m = bad(Cli { listen: Some("nowhere".into()), ..Cli::default() }, &[]);
        assert!(m.contains("`node.listen`"), "{m}");
        let m = bad(Cli { advertise: Some("ftp://10.0.0.1:7000".into()), ..Cli::default() }, &[]);
        assert!(m.contains("`node.advertise`"), "{m}");
        let m = bad(Cli { health_listen: Some("7001".into()), ..Cli::default() }, &[]);
        assert!(m.contains("`node.health_listen`"), "{m}");
        let m = bad(Cli::default(), &[("RINGLEADER__TELEMETRY__LOG", "=#!")]);
        assert!(m.contains("`telemetry.log`"), "{m}");
        let m = bad(Cli::default(), &[("RINGLEADER__NODE__LISTN", "x")]);
        assert!(m.contains("listn"), "{m}");
        let m = bad(Cli { config: Some("/nonexistent/ringleader.toml".into()), ..Cli::default() }, &[]);
        assert!(m.contains("ringleader.toml"), "{m}");
        let m = bad(Cli::default(), &[("RINGLEADER__TELEMETRY__METRICS_LISTEN", "9464")]);
        assert!(m.contains("`telemetry.metrics_listen`"), "{m}");
        let m = bad(Cli::default(), &[("RINGLEADER__NODE__ORPHAN_GRACE_MS", "500")]);
        assert!(m.contains("`node.orphan_grace_ms`"), "{m}");
        let never = env(&[("RINGLEADER__NODE__ORPHAN_GRACE_MS", "0")]);
        assert_eq!(Config::load_with_env(&Cli::default(), never).unwrap().node.orphan_grace_ms, 0);
    }

    /// A bare `host:port` to advertise gets the scheme of the node's transport, so the Kubernetes
    /// manifests need no edit of the address to turn TLS on.
    #[test]
    fn bare_advertise_gets_the_scheme() {
        let cli = Cli { advertise: Some("node-0.ringleader-node:7000".into()), ..Cli::default() };
        let c = Config::load_with_env(&cli, env(&[])).unwrap();
        assert_eq!(c.node.advertise, "http://node-0.ringleader-node:7000");
        let with_tls =
            Config { tls: ringleader_node::tls::TlsSection { cert: Some("c.pem".into()), ..Default::default() }, ..c };
        let derived = Config {
            node: NodeSection { advertise: "node-0.ringleader-node:7000".into(), ..with_tls.node.clone() },
            ..with_tls
        }
        .with_derived_defaults();
        assert_eq!(derived.node.advertise, "https://node-0.ringleader-node:7000");
    }

    /// The controller's section in a shared file does not stop the node.
    #[test]
    fn other_sections_are_ignored() {
        let c = Config::load_with_env(&Cli::default(), env(&[("RINGLEADER__CONTROLLER__PORT", "50051")])).unwrap();
        assert_eq!(c.node.listen, DEFAULT_LISTEN);
    }
}
