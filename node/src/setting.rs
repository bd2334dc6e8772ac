//! A setting refused when a process starts: the key at fault and why, for
//! the sections every process shares (`[auth]`, `[tls]`, `[telemetry]`).

/// A setting with a value the process cannot use, naming its key.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {reason}")]
pub struct SettingError {
    /// Dotted key, e.g. `auth.token` or `telemetry.metrics_listen`.
    pub key: &'static str,
    /// What is wrong and what would be accepted.
    pub reason: String,
}

impl SettingError {
    pub(crate) fn new(key: &'static str, reason: impl Into<String>) -> Self {
        SettingError { key, reason: reason.into() }
    }
}
