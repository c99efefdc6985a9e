//! Logging: one JSON object per line, for CloudWatch and for `make dev`.

use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Installs the JSON subscriber (level from `RUST_LOG`, default `info`).
/// Calling it twice is harmless: the second call keeps the first subscriber.
pub fn init() {
    let _ = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .json()
                .with_current_span(false)
                .with_span_list(false)
                .with_target(false),
        )
        .with(filter_from(std::env::var("RUST_LOG").ok().as_deref()))
        .try_init();
}

/// `RUST_LOG` as per-target levels: `info`, `warn,shared=debug`, `off`.
/// `Targets` rather than `EnvFilter` because EnvFilter's span and field
/// matching needs regex, which costs half a megabyte per Lambda binary
/// for syntax nobody sets in a function's environment. Unset, empty or
/// unparsable means `info`, as before.
fn filter_from(rust_log: Option<&str>) -> Targets {
    let default = || Targets::new().with_default(LevelFilter::INFO);
    match rust_log.map(str::trim) {
        None | Some("") => default(),
        Some(spec) => spec.parse().unwrap_or_else(|_| default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing::Level;

    #[test]
    fn unset_empty_or_garbage_means_info() {
        for spec in [None, Some(""), Some("  "), Some("shared=[{x}]")] {
            let f = filter_from(spec);
            assert!(f.would_enable("anything", &Level::INFO), "{spec:?}");
            assert!(!f.would_enable("anything", &Level::DEBUG), "{spec:?}");
        }
    }

    #[test]
    fn per_target_levels() {
        let f = filter_from(Some("warn,shared=debug"));
        assert!(f.would_enable("shared::store", &Level::DEBUG));
        assert!(!f.would_enable("hyper", &Level::INFO));
        assert!(f.would_enable("hyper", &Level::WARN));
        assert!(!filter_from(Some("off")).would_enable("shared", &Level::ERROR));
    }
}
