//! Ringleader's pure election core: everything that decides, and nothing
//! that waits. Its modules form layers, each using only those below it
//! (`scripts/import-cycles` checks it in CI):
//!
//! * [`protocol`]: what a state machine is and what drivers speak to it: the
//!   [`protocol::Algorithm`] trait, messages, effects, node context, and the
//!   failure detector's settings.
//! * [`topology`], [`wire`], [`counters`], [`faults`], [`invariants`]: rings,
//!   trees, meshes, complete and arbitrary graphs with their ports and id
//!   arrangements; the domain ↔ protobuf conversion of messages; message
//!   counting (done by drivers, never by algorithms); the fault plans the
//!   simulator and the gRPC runtime apply; named safety properties.
//! * [`fencing`]: leaders' tokens and a modelled resource that judges their
//!   writes, with fencing and without.
//! * [`shell`]: the node shell every driver runs an algorithm in.
//! * [`report`] and [`spec`]: what a simulation is asked and answers, and
//!   what a catalogue entry says about an algorithm.
//! * [`diagram`] and [`sim`]: space-time diagrams, and the deterministic,
//!   seeded simulator.
//! * [`algo`]: every election algorithm as a sans-IO state machine, each in
//!   its own file with its catalogue entry, the building blocks they share,
//!   the failure detector of the kept leaderships, and the
//!   [`algo::catalogue`] that lists them.
//! * [`failover`] and [`schedule`]: the leadership timeline of kept runs, and
//!   schedules replayed step by step.
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
mod context;
pub mod counters;
pub mod diagram;
pub mod failover;
pub mod faults;
pub mod fencing;
pub mod invariants;
mod machine;
pub mod protocol;
pub mod report;
pub mod schedule;
pub mod shell;
pub mod sim;
pub mod spec;
pub mod topology;
pub mod wire;
