//! Ringleader's node: the election state machines ([`algo`]), the overlays
//! they run on ([`topology`]), the deterministic simulator ([`sim`]) and the
//! gRPC runtime that runs them between real processes ([`runtime`]).
#![warn(missing_docs, unreachable_pub)]

pub mod algo;
pub mod auth;
pub mod counters;
pub mod diagram;
pub mod failover;
pub mod faults;
pub mod invariants;
pub mod observe;
pub mod runtime;
pub mod sim;
pub mod tls;
pub mod topology;
pub mod wire;
