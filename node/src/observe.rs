//! Observability shared by the node and the controller processes: the
//! OpenTelemetry pipeline (OTLP/gRPC traces and metrics, a Prometheus pull
//! endpoint, `tracing` logs), the node's message metrics and the W3C trace
//! context carried in election envelopes.
//!
//! * [`Telemetry::init`] installs the global tracer and meter providers and the
//!   `tracing` subscriber. Call it once, inside the tokio runtime, before the
//!   first election: instruments are created on first use from the global meter.
//! * Without an OTLP endpoint nothing is exported, but metrics are still served
//!   on the Prometheus endpoint when one is configured.
//! * Metric names follow OpenTelemetry conventions (dotted, with units); the
//!   Prometheus exporter turns `ringleader.messages.sent` into
//!   `ringleader_messages_sent_total`. Labels are bounded: algorithm, message
//!   kind, node name, mode, verdict; never an election id.
//!
//! See `docs/observability.md` for every metric and span attribute.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::Duration;

use opentelemetry::metrics::Counter;
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::{SpanContext, TraceContextExt, TracerProvider as _};
use opentelemetry::{Context, global};
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider};
use tracing::{info, warn};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

use crate::http::HttpLimits;
use crate::limits::ConnLimits;
use crate::setting::SettingError;

pub mod guard;
pub use guard::{HttpGuard, ReadCheck};

/// The `tracing` target of the spans that are exported as traces (the
/// controller's election root spans); other `tracing` spans stay local.
pub const TRACE_TARGET: &str = "ringleader::trace";

pub use crate::meter::NODE_SCOPE;

/// Where and how to export.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// `service.name` of this process's telemetry (`OTEL_SERVICE_NAME` wins).
    pub service_name: String,
    /// OTLP/gRPC collector, e.g. `http://otel-collector:4317`; `None` falls
    /// back to `OTEL_EXPORTER_OTLP_ENDPOINT`, and without either nothing is
    /// exported over OTLP.
    pub otlp_endpoint: Option<String>,
    /// Serve the metrics in Prometheus text format on `http://<addr>/metrics`.
    pub metrics_listen: Option<SocketAddr>,
    /// Limits of that HTTP port ([`Settings::with_http`]; default: the share
    /// of the default gRPC limits).
    pub http_limits: HttpLimits,
    /// That port's name in logs and in the `server` label of the connection
    /// metrics (default `http`).
    pub http_server: &'static str,
    /// Names that port answers to besides localhost and its addresses, comma-separated
    /// (`telemetry.http_hosts`; see [`guard`]).
    pub http_hosts: String,
    /// Every request to that port needs a token this allows, or the session cookie
    /// ([`Settings::protect_reads`]); `None`: reads are open.
    pub read_check: Option<ReadCheck>,
    /// How often metrics are pushed and queued spans are sent.
    pub export_interval: Duration,
    /// `tracing` filter of the logs (`RUST_LOG` wins; default `info`).
    pub log: Option<String>,
}

impl Settings {
    /// Defaults for a process named `service_name`: no export, logs at `info`.
    pub fn new(service_name: impl Into<String>) -> Settings {
        Settings {
            service_name: service_name.into(),
            otlp_endpoint: None,
            metrics_listen: None,
            http_limits: HttpLimits::default(),
            http_server: "http",
            http_hosts: String::new(),
            read_check: None,
            export_interval: Duration::from_secs(5),
            log: None,
        }
    }

    /// Every request to the HTTP port needs a bearer token `check` allows (`auth.protect_reads`:
    /// the token or the read-only one) or the session cookie a browser gets with one ([`guard`]);
    /// `None` leaves reads open.
    pub fn protect_reads(self, check: Option<guard::TokenCheck>) -> Settings {
        Settings { read_check: check.map(ReadCheck), ..self }
    }

    /// Serve the HTTP port as `server` (e.g. `node-http`) under its share
    /// ([`HttpLimits::sharing`]) of `grpc`, the limits of the process's gRPC
    /// servers.
    pub fn with_http(self, server: &'static str, grpc: &ConnLimits) -> Settings {
        Settings { http_limits: HttpLimits::sharing(grpc), http_server: server, ..self }
    }

    /// The endpoint in effect: the configured one, else `OTEL_EXPORTER_OTLP_ENDPOINT`.
    pub fn endpoint(&self) -> Option<String> {
        self.otlp_endpoint
            .clone()
            .or_else(|| std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT").ok())
            .filter(|e| !e.trim().is_empty())
    }

    /// The service name in effect: `OTEL_SERVICE_NAME`, else the configured one.
    pub fn service(&self) -> String {
        std::env::var("OTEL_SERVICE_NAME").ok().filter(|s| !s.trim().is_empty()).unwrap_or(self.service_name.clone())
    }
}

/// The `[telemetry]` section of both processes' configuration files
/// (`RINGLEADER__TELEMETRY__<KEY>` in the environment).
///
/// ```toml
/// [telemetry]
/// otlp_endpoint = "http://otel-collector:4317"  # else OTEL_EXPORTER_OTLP_ENDPOINT; unset: no OTLP export
/// service_name = "ringleader-node"              # OTEL_SERVICE_NAME wins
/// metrics_listen = "0.0.0.0:9464"               # Prometheus /metrics; unset: not served
/// http_hosts = "ringleader.example.com"         # names it answers to besides localhost and its addresses
/// export_interval_ms = 5000
/// log = "info"                                  # tracing filter; RUST_LOG wins
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TelemetrySection {
    /// OTLP/gRPC endpoint.
    pub otlp_endpoint: Option<String>,
    /// `service.name` (default: the program's name).
    pub service_name: Option<String>,
    /// Socket address of the Prometheus endpoint.
    pub metrics_listen: Option<String>,
    /// Export period in milliseconds (default 5,000).
    pub export_interval_ms: Option<u64>,
    /// `tracing` filter directives.
    pub log: Option<String>,
    /// Names the HTTP port answers to besides localhost and its addresses, comma-separated
    /// (e.g. `ringleader.example.com`): a request with another Host is refused 421.
    pub http_hosts: Option<String>,
}

impl TelemetrySection {
    /// Check every key; the error names it (`telemetry.<key>`) and says what is wrong.
    pub fn validate(&self) -> Result<(), SettingError> {
        if let Some(e) = self.otlp_endpoint.as_deref().filter(|e| !e.is_empty()) {
            let uri: Result<tonic::transport::Uri, _> = e.parse();
            if !(e.starts_with("http://") || e.starts_with("https://"))
                || uri.map(|u| u.host().is_none()).unwrap_or(true)
            {
                return Err(SettingError::new(
                    "telemetry.otlp_endpoint",
                    format!("`{e}` is not a URL like http://otel-collector:4317"),
                ));
            }
        }
        if let Some(a) = self.metrics_listen.as_deref().filter(|a| !a.is_empty())
            && a.parse::<SocketAddr>().is_err()
        {
            return Err(SettingError::new(
                "telemetry.metrics_listen",
                format!("`{a}` is not a socket address like 0.0.0.0:9464"),
            ));
        }
        if self.export_interval_ms == Some(0) {
            return Err(SettingError::new("telemetry.export_interval_ms", "must be at least 1 (milliseconds)"));
        }
        for name in self.http_hosts.iter().flat_map(|h| h.split(',')).map(str::trim).filter(|n| !n.is_empty()) {
            if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-.:[]_".contains(&b)) {
                return Err(SettingError::new(
                    "telemetry.http_hosts",
                    format!("`{name}` is not a host name like ringleader.example.com (names separated by commas)"),
                ));
            }
        }
        if let Some(filter) = &self.log {
            EnvFilter::try_new(filter)
                .map_err(|e| SettingError::new("telemetry.log", format!("`{filter}` is not a tracing filter: {e}")))?;
        }
        Ok(())
    }

    /// The settings of a process whose default service name is `service` (call [`Self::validate`] first).
    pub fn settings(&self, service: &str) -> Settings {
        Settings {
            service_name: self.service_name.clone().filter(|s| !s.is_empty()).unwrap_or_else(|| service.to_string()),
            otlp_endpoint: self.otlp_endpoint.clone().filter(|e| !e.is_empty()),
            metrics_listen: self.metrics_listen.as_deref().and_then(|a| a.parse().ok()),
            http_limits: HttpLimits::default(),
            http_server: "http",
            http_hosts: self.http_hosts.clone().unwrap_or_default(),
            read_check: None,
            export_interval: Duration::from_millis(self.export_interval_ms.unwrap_or(5_000)),
            log: self.log.clone(),
        }
    }
}

/// Errors setting the pipeline up.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    /// An exporter could not be built (e.g. a malformed endpoint).
    #[error("telemetry: cannot build the {what} exporter: {reason}")]
    Exporter {
        /// `OTLP span`, `OTLP metric` or `Prometheus`.
        what: &'static str,
        /// Why.
        reason: String,
    },
    /// The metrics endpoint could not listen.
    #[error("telemetry: cannot serve metrics on {addr}: {source}")]
    Listen {
        /// The address asked for.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
}

/// The installed pipeline; [`Telemetry::shutdown`] flushes it.
#[derive(Debug)]
pub struct Telemetry {
    tracer: Option<SdkTracerProvider>,
    meter: SdkMeterProvider,
    registry: prometheus::Registry,
    /// Where `/metrics` is served, if it is.
    pub metrics_addr: Option<SocketAddr>,
}

impl Telemetry {
    /// Install logging, the global tracer provider (OTLP when an endpoint is
    /// set) and the global meter provider (Prometheus registry, plus OTLP when
    /// an endpoint is set); serve `/metrics` when `metrics_listen` is set,
    /// under `http_limits` ([`crate::http`]).
    /// A collector that is down does not stop the process: exports fail and are logged.
    pub async fn init(settings: &Settings) -> Result<Telemetry, TelemetryError> {
        let endpoint = settings.endpoint();
        let resource = Resource::builder().with_service_name(settings.service()).build();
        let tracer = match &endpoint {
            Some(url) => {
                let exporter = opentelemetry_otlp::SpanExporter::builder()
                    .with_tonic()
                    .with_endpoint(url.clone())
                    .build()
                    .map_err(|e| TelemetryError::Exporter { what: "OTLP span", reason: e.to_string() })?;
                // Elections of a few hundred nodes send thousands of messages in a burst: queue them all.
                let batch = BatchConfigBuilder::default()
                    .with_max_queue_size(65_536)
                    .with_max_export_batch_size(2_048)
                    .with_scheduled_delay(settings.export_interval)
                    .build();
                let processor = BatchSpanProcessor::builder(exporter).with_batch_config(batch).build();
                Some(
                    SdkTracerProvider::builder().with_span_processor(processor).with_resource(resource.clone()).build(),
                )
            }
            None => None,
        };
        let registry = prometheus::Registry::new();
        let prometheus = opentelemetry_prometheus::exporter()
            .with_registry(registry.clone())
            .scope_info_enabled(false)
            .build()
            .map_err(|e| TelemetryError::Exporter { what: "Prometheus", reason: e.to_string() })?;
        let mut meter = SdkMeterProvider::builder().with_resource(resource).with_reader(prometheus);
        if let Some(url) = &endpoint {
            let exporter = opentelemetry_otlp::MetricExporter::builder()
                .with_tonic()
                .with_endpoint(url.clone())
                .build()
                .map_err(|e| TelemetryError::Exporter { what: "OTLP metric", reason: e.to_string() })?;
            meter =
                meter.with_reader(PeriodicReader::builder(exporter).with_interval(settings.export_interval).build());
        }
        let meter = meter.build();
        global::set_meter_provider(meter.clone());
        global::set_text_map_propagator(TraceContextPropagator::new());

        let filter = EnvFilter::try_from_default_env()
            .or_else(|_| EnvFilter::try_new(settings.log.as_deref().unwrap_or("info")))
            .unwrap_or_else(|_| EnvFilter::new("info"));
        let fmt = tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(std::io::stderr().is_terminal())
            .with_filter(filter);
        let otel = tracer.as_ref().map(|provider| {
            global::set_tracer_provider(provider.clone());
            tracing_opentelemetry::layer()
                .with_tracer(provider.tracer("ringleader"))
                .with_filter(tracing_subscriber::filter::Targets::new().with_target(TRACE_TARGET, tracing::Level::INFO))
        });
        // A second init (tests) keeps the first subscriber.
        let _ = tracing_subscriber::registry().with(fmt).with(otel).try_init();

        let mut telemetry = Telemetry { tracer, meter, registry, metrics_addr: None };
        if let Some(addr) = settings.metrics_listen {
            let listener =
                tokio::net::TcpListener::bind(addr).await.map_err(|source| TelemetryError::Listen { addr, source })?;
            telemetry.metrics_addr = listener.local_addr().ok();
            let mut guard = HttpGuard::new(telemetry.metrics_addr, &settings.http_hosts);
            if let Some(ReadCheck(check)) = &settings.read_check {
                let port = telemetry.metrics_addr.map_or(addr.port(), |a| a.port());
                guard = guard
                    .protect_reads(port, check.clone())
                    .map_err(|source| TelemetryError::Listen { addr, source })?;
            }
            let app = metrics_app(telemetry.registry.clone(), guard);
            tokio::spawn(crate::http::serve(listener, app, settings.http_limits, settings.http_server));
        }
        info!(
            otlp = endpoint.as_deref().unwrap_or("off"),
            metrics = ?telemetry.metrics_addr,
            service = %settings.service(),
            "telemetry"
        );
        Ok(telemetry)
    }

    /// Every metric in Prometheus text format.
    pub fn prometheus_text(&self) -> String {
        prometheus_text(&self.registry)
    }

    /// Send what is queued and stop exporting (off the async workers: the
    /// exporters block until their last batch is sent).
    pub async fn shutdown(self) {
        let Telemetry { tracer, meter, .. } = self;
        let flushed = tokio::task::spawn_blocking(move || {
            if let Some(t) = tracer
                && let Err(e) = t.shutdown()
            {
                warn!(error = %e, "flushing traces");
            }
            if let Err(e) = meter.shutdown() {
                warn!(error = %e, "flushing metrics");
            }
        });
        let _ = flushed.await;
    }
}

fn prometheus_text(registry: &prometheus::Registry) -> String {
    let mut out = Vec::new();
    if let Err(e) = prometheus::Encoder::encode(&prometheus::TextEncoder::new(), &registry.gather(), &mut out) {
        warn!(error = %e, "encoding metrics");
    }
    String::from_utf8(out).unwrap_or_default()
}

/// Routes the metrics port serves besides `/metrics` (the controller's
/// election pages), set once per process by [`serve_also`].
static ALSO: OnceLock<axum::Router> = OnceLock::new();

/// Serve `routes` on the metrics port too (when `metrics_listen` is set),
/// whenever they are set, before or after the port opened. Once per process:
/// `false` if routes were set already (they stay). Their responses get the
/// port's security headers ([`crate::http`]); a route may set its own
/// `Content-Security-Policy`.
pub fn serve_also(routes: axum::Router) -> bool {
    ALSO.set(routes).is_ok()
}

/// The HTTP port's routes: `/metrics`, then the routes set by [`serve_also`], all behind `guard`
/// (the Host rule and, with `auth.protect_reads`, the credentials).
fn metrics_app(registry: prometheus::Registry, guard: HttpGuard) -> axum::Router {
    use axum::http::header::CONTENT_TYPE;
    use axum::response::IntoResponse;
    use tower::ServiceExt;
    let app = axum::Router::new()
        .route(
            "/metrics",
            axum::routing::get(move || {
                let registry = registry.clone();
                async move { ([(CONTENT_TYPE, "text/plain; version=0.0.4")], prometheus_text(&registry)) }
            }),
        )
        .fallback(|request: axum::extract::Request| async move {
            match ALSO.get() {
                Some(routes) => routes.clone().oneshot(request).await.into_response(),
                None => axum::http::StatusCode::NOT_FOUND.into_response(),
            }
        });
    guard::layer(app, guard)
}

/// The node runtime's message counters (scope [`NODE_SCOPE`]), labelled by
/// `algorithm`, `kind` and `node`.
#[derive(Debug)]
pub struct NodeMetrics {
    /// `ringleader.messages.sent` {message}: messages handed to a link.
    pub sent: Counter<u64>,
    /// `ringleader.messages.received` {message}: messages handed to the algorithm.
    pub received: Counter<u64>,
    /// `ringleader.messages.sent.size` (By): encoded size of the bodies sent.
    pub sent_bytes: Counter<u64>,
    /// `ringleader.messages.rejected` {message}: envelopes refused (bad port, body, unknown election).
    pub rejected: Counter<u64>,
}

/// The node metrics, created from the global meter on first use.
pub fn node_metrics() -> &'static NodeMetrics {
    static METRICS: OnceLock<NodeMetrics> = OnceLock::new();
    METRICS.get_or_init(|| {
        let meter = global::meter_provider().meter(NODE_SCOPE);
        NodeMetrics {
            sent: meter
                .u64_counter("ringleader.messages.sent")
                .with_unit("{message}")
                .with_description(
                    "Messages sent (election and notification, and a kept leadership's heartbeats: kind \"heartbeat\"), \
                     by algorithm, kind and sending node",
                )
                .build(),
            received: meter
                .u64_counter("ringleader.messages.received")
                .with_unit("{message}")
                .with_description(
                    "Messages received and handed to the algorithm (heartbeats included), by algorithm, kind and node",
                )
                .build(),
            sent_bytes: meter
                .u64_counter("ringleader.messages.sent.size")
                .with_unit("By")
                .with_description("Encoded size of the message bodies sent, by algorithm, kind and node")
                .build(),
            rejected: meter
                .u64_counter("ringleader.messages.rejected")
                .with_unit("{message}")
                .with_description("Envelopes a node refused (bad port, bad body, unknown or aborted election)")
                .build(),
        }
    })
}

/// The W3C `traceparent` of a span context (`None` when it is invalid).
pub fn traceparent(sc: &SpanContext) -> Option<String> {
    if !sc.is_valid() {
        return None;
    }
    let cx = Context::new().with_remote_span_context(sc.clone());
    let mut carrier = HashMap::new();
    TraceContextPropagator::new().inject_context(&cx, &mut carrier);
    carrier.remove("traceparent")
}

/// A `traceparent` that is not a W3C one (the text as it came).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{}` is not a W3C traceparent like 00-<32 hex>-<16 hex>-01", .0.escape_debug())]
pub struct BadTraceparent(pub String);

/// Parse a W3C `traceparent`; `Ok(None)` for an empty one, `Err` for a malformed one.
pub fn parse_traceparent(s: &str) -> Result<Option<SpanContext>, BadTraceparent> {
    if s.is_empty() {
        return Ok(None);
    }
    let bad = || BadTraceparent(s.to_string());
    // The propagator is lenient about field widths; the W3C format is not.
    let fields: Vec<&str> = s.split('-').collect();
    let widths_ok = fields.len() >= 4
        && fields.iter().zip([2, 32, 16, 2]).all(|(f, w)| f.len() == w)
        && fields[..4].iter().all(|f| f.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
    if !widths_ok {
        return Err(bad());
    }
    let carrier = HashMap::from([("traceparent".to_string(), s.to_string())]);
    let cx = TraceContextPropagator::new().extract(&carrier);
    let sc = cx.span().span_context().clone();
    if sc.is_valid() { Ok(Some(sc)) } else { Err(bad()) }
}

pub use crate::meter::kv;

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::trace::{SpanId, TraceFlags, TraceId, TraceState};

    /// Bad telemetry settings are refused with the key named; good ones become settings.
    #[test]
    fn section_validation() {
        let ok = TelemetrySection {
            otlp_endpoint: Some("http://collector:4317".into()),
            metrics_listen: Some("127.0.0.1:9464".into()),
            ..Default::default()
        };
        ok.validate().unwrap();
        let s = ok.settings("svc");
        assert_eq!((s.service_name.as_str(), s.metrics_listen.map(|a| a.port())), ("svc", Some(9464)));
        let bad = [
            (TelemetrySection { otlp_endpoint: Some("collector:4317".into()), ..Default::default() }, "otlp_endpoint"),
            (TelemetrySection { metrics_listen: Some("9464".into()), ..Default::default() }, "metrics_listen"),
            (TelemetrySection { export_interval_ms: Some(0), ..Default::default() }, "export_interval_ms"),
            (TelemetrySection { log: Some("=[".into()), ..Default::default() }, "log"),
        ];
        for (section, key) in bad {
            assert_eq!(section.validate().unwrap_err().key, format!("telemetry.{key}"));
        }
    }

    /// A span context survives the trip through a `traceparent` string, and junk is refused.
    #[test]
    fn traceparent_round_trip() {
        let sc = SpanContext::new(
            TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap(),
            SpanId::from_hex("00f067aa0ba902b7").unwrap(),
            TraceFlags::SAMPLED,
            true,
            TraceState::default(),
        );
        let s = traceparent(&sc).unwrap();
        assert_eq!(s, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
        let back = parse_traceparent(&s).unwrap().unwrap();
        assert_eq!((back.trace_id(), back.span_id(), back.is_sampled()), (sc.trace_id(), sc.span_id(), true));
        assert_eq!(parse_traceparent("").unwrap(), None);
        for bad in ["nonsense", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "00-4bf92f35-00f0-01"] {
            assert_eq!(parse_traceparent(bad).unwrap_err(), BadTraceparent(bad.into()));
        }
        assert_eq!(traceparent(&SpanContext::empty_context()), None);
    }
}
