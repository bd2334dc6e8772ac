//! Logging: `tracing` to standard error, filtered by `RUST_LOG`, else the
//! configured filter, else `info`.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// Install the global subscriber. Call once, inside the tokio runtime.
pub fn init(configured: Option<&str>) {
    let filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(configured.unwrap_or("info")))
        .unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Colours only for people; log collectors get plain text.
        .with_ansi(std::io::stderr().is_terminal())
        .init();
}
