//! Telemetry of the controller: the pipeline (see
//! [`ringleader_node::observe`]), the election root spans and the election
//! metrics (scope [`SCOPE`]).
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `ringleader.elections.started` | counter | algorithm, mode |
//! | `ringleader.elections.finished` | counter | algorithm, mode, outcome (`correct` / `violated`) |
//! | `ringleader.elections.failed` | counter | algorithm, mode |
//! | `ringleader.election.duration` (s) | histogram | algorithm, mode |
//! | `ringleader.election.messages` | histogram | algorithm, mode |
//! | `ringleader.election.bound` | histogram (finite bounds only) | algorithm, mode |
//! | `ringleader.election.measured_to_bound` (1) | histogram | algorithm, mode |
//! | `ringleader.failover.duration` (s) | histogram | algorithm |
//! | `ringleader.leader.position` | gauge | algorithm (newest running kept leadership) |
//! | `ringleader.leader.term` | gauge | algorithm |
//! | `ringleader.faults.active` | gauge | kind |
//! | `ringleader.elections.running` | gauge | algorithm, mode |

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock, Weak};

use opentelemetry::global;
use opentelemetry::metrics::{Counter, Histogram};
use opentelemetry::trace::TraceContextExt as _;
use ringleader_node::observe::{self, kv};
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

use crate::record::{ElectionRecord, Mode, State};

pub use ringleader_node::observe::{Settings, Telemetry, TelemetryError};

/// Name of the controller's instrumentation scope.
pub const SCOPE: &str = "ringleader-controller";

/// Logging only, for tools that export nothing (`ringleader-sweep`); a second call does nothing.
pub fn init() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
}

/// The `mode` label.
pub fn mode_label(mode: Mode) -> &'static str {
    match mode {
        Mode::Live => "live",
        Mode::Simulated => "simulated",
    }
}

/// The root span of an election's trace. Every node span of a LIVE election
/// descends from it; it ends when the election does (the span is dropped).
pub fn election_span(id: &str, algorithm: &'static str, mode: Mode, n: u32, k: u32) -> tracing::Span {
    tracing::info_span!(
        target: observe::TRACE_TARGET,
        "election",
        otel.name = %format!("election {algorithm}"),
        ringleader.election.id = %id,
        ringleader.algorithm = algorithm,
        ringleader.mode = mode_label(mode),
        ringleader.size = n,
        ringleader.initiators = k,
    )
}

/// The W3C `traceparent` of a root span, empty when tracing is off.
pub fn traceparent_of(span: &tracing::Span) -> String {
    observe::traceparent(span.context().span().span_context()).unwrap_or_default()
}

/// Put the verdict on the root span.
pub fn close_span(span: &tracing::Span, r: &ElectionRecord) {
    span.set_attribute("ringleader.state", format!("{:?}", r.state).to_lowercase());
    span.set_attribute("ringleader.agreed", r.agreed);
    if let Some(l) = &r.leader {
        span.set_attribute("ringleader.leader.id", l.id as i64);
        span.set_attribute("ringleader.leader.node", l.node.clone());
    }
    if let Some(m) = &r.metrics {
        span.set_attribute("ringleader.messages", m.messages as i64);
        if let Some(bound) = m.finite_bound() {
            span.set_attribute("ringleader.bound", bound as i64);
        }
    }
    if let Some(e) = &r.error {
        span.set_status(opentelemetry::trace::Status::error(e.clone()));
    } else if !r.violations.is_empty() {
        span.set_status(opentelemetry::trace::Status::error(r.violations.join("; ")));
    }
}

/// The controller's instruments.
#[derive(Debug)]
pub struct Metrics {
    started: Counter<u64>,
    finished: Counter<u64>,
    failed: Counter<u64>,
    duration: Histogram<f64>,
    messages: Histogram<u64>,
    bound: Histogram<u64>,
    ratio: Histogram<f64>,
    failover: Histogram<f64>,
    history_failures: Counter<u64>,
}

/// The instruments, created from the global meter on first use.
pub fn metrics() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(|| {
        let meter = global::meter(SCOPE);
        let counts = vec![1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1e3, 3e3, 1e4, 3e4, 1e5, 1e6, 1e7];
        Metrics {
            started: meter
                .u64_counter("ringleader.elections.started")
                .with_unit("{election}")
                .with_description("Elections started, by algorithm and mode")
                .build(),
            finished: meter
                .u64_counter("ringleader.elections.finished")
                .with_unit("{election}")
                .with_description("Elections that ended with every position decided; outcome correct or violated")
                .build(),
            failed: meter
                .u64_counter("ringleader.elections.failed")
                .with_unit("{election}")
                .with_description("Elections that could not complete (timeout, unreachable node, budget)")
                .build(),
            duration: meter
                .f64_histogram("ringleader.election.duration")
                .with_unit("s")
                .with_description("Time from the first start to the last decision")
                .with_boundaries(vec![
                    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
                ])
                .build(),
            messages: meter
                .u64_histogram("ringleader.election.messages")
                .with_unit("{message}")
                .with_description("Election and notification messages of one election (heartbeats excluded)")
                .with_boundaries(counts.clone())
                .build(),
            bound: meter
                .u64_histogram("ringleader.election.bound")
                .with_unit("{message}")
                .with_description("The literature's message bound for the election's n and k")
                .with_boundaries(counts)
                .build(),
            ratio: meter
                .f64_histogram("ringleader.election.measured_to_bound")
                .with_unit("1")
                .with_description("Messages measured / the literature's bound (elections with a bound)")
                .with_boundaries(vec![0.1, 0.25, 0.5, 0.75, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0, 5.0])
                .build(),
            failover: meter
                .f64_histogram("ringleader.failover.duration")
                .with_unit("s")
                .with_description("Time from a kept leader's loss to agreement on a new leader")
                .with_boundaries(vec![0.05, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0])
                .build(),
            history_failures: meter
                .u64_counter("ringleader.history.write_failures")
                .with_unit("{write}")
                .with_description("Failed commits of the election history (each is retried)")
                .build(),
        }
    })
}

impl Metrics {
    /// An election was planned.
    pub fn started(&self, algorithm: &'static str, mode: Mode) {
        self.started.add(1, &[kv("algorithm", algorithm), kv("mode", mode_label(mode))]);
    }

    /// An election ended: its verdict and costs.
    pub fn ended(&self, r: &ElectionRecord) {
        let labels = [kv("algorithm", r.algorithm), kv("mode", mode_label(r.mode))];
        if r.state == State::Failed {
            self.failed.add(1, &labels);
            return;
        }
        let outcome = if r.agreed && r.violations.is_empty() { "correct" } else { "violated" };
        self.finished.add(1, &[labels[0].clone(), labels[1].clone(), kv("outcome", outcome)]);
        if let Some(m) = &r.metrics {
            self.duration.record(m.duration_ms as f64 / 1e3, &labels);
            self.messages.record(m.messages, &labels);
            if let Some(bound) = m.finite_bound() {
                self.bound.record(bound, &labels);
                self.ratio.record(m.bound_ratio(), &labels);
            }
        }
    }

    /// A commit of the election history failed (it is retried).
    pub fn history_write_failed(&self) {
        self.history_failures.add(1, &[]);
    }

    /// A kept leadership agreed on a new leader `ms` after losing the old one.
    pub fn failover(&self, algorithm: &'static str, ms: u64) {
        self.failover.record(ms as f64 / 1e3, &[kv("algorithm", algorithm)]);
    }
}

impl Metrics {
    /// Start every election counter at zero for every algorithm and mode, so
    /// the series exist (and `rate()` sees the first election) before anything
    /// has happened; bounded: catalogue size x 2 modes x 2 outcomes.
    pub fn zero(&self) {
        for spec in ringleader_core::algo::catalogue::CATALOGUE {
            for mode in [Mode::Live, Mode::Simulated] {
                let labels = [kv("algorithm", spec.name), kv("mode", mode_label(mode))];
                self.started.add(0, &labels);
                self.failed.add(0, &labels);
                for outcome in ["correct", "violated"] {
                    self.finished.add(0, &[labels[0].clone(), labels[1].clone(), kv("outcome", outcome)]);
                }
            }
        }
        self.history_failures.add(0, &[]);
    }
}

/// The records the gauges read (the election registry implements it), so
/// that telemetry depends on records, not on how elections run.
pub trait Records: Send + Sync + 'static {
    /// Call `f` on every record kept, newest first.
    fn each_record(&self, f: &mut dyn FnMut(&ElectionRecord));
}

/// Start the election counters at zero and register the observable gauges
/// that read the controller's state: running elections, the newest kept
/// leadership's leader and term per algorithm, and the active faults by kind.
pub fn register_gauges<R: Records>(elections: &Arc<R>, faults: Arc<dyn Fn() -> Vec<&'static str> + Send + Sync>) {
    metrics().zero();
    let meter = global::meter(SCOPE);
    let weak: Weak<R> = Arc::downgrade(elections);
    let w = weak.clone();
    meter
        .u64_observable_gauge("ringleader.elections.running")
        .with_unit("{election}")
        .with_description("Elections pending or running, by algorithm and mode")
        .with_callback(move |o| {
            let Some(e) = w.upgrade() else { return };
            let mut running: BTreeMap<(&'static str, &'static str), u64> = BTreeMap::new();
            e.each_record(&mut |r| {
                if !r.state.is_terminal() {
                    *running.entry((r.algorithm, mode_label(r.mode))).or_default() += 1;
                }
            });
            for ((algorithm, mode), c) in running {
                o.observe(c, &[kv("algorithm", algorithm), kv("mode", mode)]);
            }
        })
        .build();
    let w = weak.clone();
    meter
        .i64_observable_gauge("ringleader.leader.position")
        .with_description(
            "Position of the agreed leader of the newest running kept leadership of each algorithm; -1: none",
        )
        .with_callback(move |o| {
            let Some(e) = w.upgrade() else { return };
            for (algorithm, (position, _)) in kept_leaders(&*e) {
                o.observe(position, &[kv("algorithm", algorithm)]);
            }
        })
        .build();
    let w = weak;
    meter
        .u64_observable_gauge("ringleader.leader.term")
        .with_description("Highest term of the newest running kept leadership of each algorithm")
        .with_callback(move |o| {
            let Some(e) = w.upgrade() else { return };
            for (algorithm, (_, term)) in kept_leaders(&*e) {
                o.observe(term, &[kv("algorithm", algorithm)]);
            }
        })
        .build();
    meter
        .u64_observable_gauge("ringleader.faults.active")
        .with_unit("{fault}")
        .with_description(
            "Injected faults in effect or waiting, by kind (crash, link, partition; recover while one waits)",
        )
        .with_callback(move |o| {
            let mut by_kind: BTreeMap<&'static str, u64> =
                ["crash", "link", "partition"].into_iter().map(|k| (k, 0)).collect();
            for kind in faults() {
                *by_kind.entry(kind).or_default() += 1;
            }
            for (kind, c) in by_kind {
                o.observe(c, &[kv("kind", kind)]);
            }
        })
        .build();
}

/// Per algorithm, the newest running kept leadership's (leader position or -1, term).
fn kept_leaders(e: &impl Records) -> BTreeMap<&'static str, (i64, u64)> {
    let mut out = BTreeMap::new();
    // Records come newest first: keep the first seen per algorithm.
    e.each_record(&mut |r| {
        if r.keep_leader && r.state == State::Running && !out.contains_key(r.algorithm) {
            let position = r.leader.as_ref().filter(|_| r.agreed).map_or(-1, |l| i64::from(l.position));
            out.insert(r.algorithm, (position, r.term));
        }
    });
    out
}
