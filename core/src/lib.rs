//! Ringleader's pure election core: everything that decides, and nothing
//! that waits.
//!
//! * [`algo`]: every election algorithm as a sans-IO state machine (inputs:
//!   start, a message on a port, a timer, a suspicion; outputs: effects), the
//!   [`algo::catalogue`] that describes and builds them, and the failure
//!   detector of the kept leaderships.
//! * [`topology`]: rings, trees, meshes, complete and arbitrary graphs, their
//!   ports and id arrangements.
//! * [`sim`] and [`faults`]: the deterministic, seeded simulator and the fault
//!   plans it (and the gRPC runtime) apply.
//! * [`invariants`], [`failover`], [`diagram`]: named safety properties, the
//!   leadership timeline of kept runs, and space-time diagrams.
//! * [`counters`] and [`wire`]: message counting (done by drivers, never by
//!   algorithms) and the domain ↔ protobuf conversion of messages.
//!
//! The crate has no tokio, tonic, hyper, axum, OpenTelemetry, prometheus or
//! redb in its dependency tree, so no I/O can creep into an algorithm: the
//! gRPC node runtime (`ringleader-node`) and the controller drive it from the
//! outside.
//!
//! ```
//! use ringleader_core::{algo::catalogue, sim::{self, SimConfig}, topology::{Topology, TopologyKind}};
//! let spec = catalogue::find("as-far").unwrap();
//! let ring = Topology::ring(TopologyKind::RingUni, 5, 0).unwrap();
//! let report = sim::run(spec, &ring, &[1, 2, 3, 4, 5], &[0, 1, 2, 3, 4], spec.rule, &SimConfig::default());
//! assert!(report.verdict.violations.is_empty());
//! assert_eq!(report.verdict.leader, Some(4)); // AsFar elects the largest id
//! ```
#![warn(missing_docs, unreachable_pub)]

pub mod algo;
pub mod counters;
pub mod diagram;
pub mod failover;
pub mod faults;
pub mod invariants;
pub mod schedule;
pub mod shell;
pub mod sim;
pub mod topology;
pub mod wire;
