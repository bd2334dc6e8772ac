//! Ringleader's node: the gRPC runtime ([`runtime`]) that runs the pure
//! election core (`ringleader-core`: algorithms, topologies, simulator) between
//! real processes, with its bearer-token gate ([`auth`]), TLS ([`tls`]),
//! telemetry ([`observe`]) and the HTTP port serving `/metrics` ([`http`]).
#![warn(missing_docs, unreachable_pub)]

pub mod auth;
pub mod http;
pub mod limits;
pub mod logs;
pub mod meter;
pub mod observe;
pub mod programs;
pub mod runtime;
pub mod setting;
pub mod tls;
pub mod unread;
