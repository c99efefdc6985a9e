//! Logging: one JSON object per line, for CloudWatch and for `make dev`.

use tracing_subscriber::EnvFilter;

/// Installs the JSON subscriber (level from `RUST_LOG`, default `info`).
/// Calling it twice is harmless: the second call keeps the first subscriber.
pub fn init() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .json()
        .with_env_filter(filter)
        .with_current_span(false)
        .with_span_list(false)
        .with_target(false)
        .try_init();
}
