//! The node process's meter: the scope its metrics are created in and the
//! label helper every instrument uses. The lowest layer of the crate's
//! telemetry: [`crate::observe`] (the pipeline, the message counters) and
//! [`crate::limits`] (the connection counters) both build on it.

use opentelemetry::KeyValue;

/// Name of the instrumentation scope (tracer and meter) of the node runtime.
pub const NODE_SCOPE: &str = "ringleader-node";

/// A `KeyValue` helper for the span and metric attributes.
pub fn kv(key: &'static str, value: impl Into<opentelemetry::Value>) -> KeyValue {
    KeyValue::new(key, value)
}
