//! Protobuf types and gRPC stubs of Ringleader (package `ringleader.v1`).
//!
//! With `default-features = false` the crate is the prost message types only
//! (no tonic): that is how `ringleader-core` uses it.
//!
//! * [`v1::peer_server`] / [`v1::peer_client`]: node-to-node election traffic,
//!   one persistent stream per directed link.
//! * [`v1::agent_server`] / [`v1::agent_client`]: controller-to-node control.
//! * [`v1::controller_server`] / [`v1::controller_client`]: the user-facing API.
//!
//! ```
//! use prost::Message;
//! use ringleader_proto::v1::{body, Body, Notify};
//! let b = Body { kind: Some(body::Kind::Notify(Notify { leader: 7 })) };
//! assert_eq!(b.encoded_len(), 4);
//! ```
#![warn(missing_docs)]

/// Generated code of `ringleader.v1` (the message types; with the `grpc`
/// feature, the default, also the tonic client and server stubs).
#[allow(missing_docs, clippy::all)]
pub mod v1 {
    include!(concat!(env!("OUT_DIR"), "/ringleader.v1.rs"));
}

/// Encoded `FileDescriptorSet` of every Ringleader proto, for gRPC reflection.
#[cfg(feature = "grpc")]
pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/ringleader_descriptor.bin"));
