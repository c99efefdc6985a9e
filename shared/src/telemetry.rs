//! Logging: one JSON object per line, for CloudWatch and for `make dev`.

use tracing::level_filters::LevelFilter;
use tracing::{Level, Subscriber};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt;

/// At TRACE, lambda_runtime logs every raw invocation event, and with it the
/// `Authorization` (hold token), `webhook-signature` and `X-Buyer-Token`
/// headers; the SDK's orchestrator logs every request and response body,
/// and with them the buyer ids a visitor's item holds. However verbose
/// `RUST_LOG` asks for, those modules stay at DEBUG (their errors still
/// show).
const BODY_LOGGERS: [&str; 2] = [
    "lambda_runtime::layers::api_response",
    "aws_smithy_runtime::client::orchestrator",
];

/// Installs the JSON subscriber on stdout (level from `RUST_LOG`, default
/// `info`). Calling it twice is harmless: the second call keeps the first.
pub fn init() {
    let rust_log = std::env::var(crate::config::RUST_LOG).ok();
    let _ =
        tracing::subscriber::set_global_default(subscriber(rust_log.as_deref(), std::io::stdout));
    // In a Lambda sandbox (the runtime API is set there, and under the
    // emulator), metrics go out as EMF lines; elsewhere they are no-ops.
    if std::env::var_os("AWS_LAMBDA_RUNTIME_API").is_some() {
        crate::metrics::install();
    }
}

/// The subscriber [`init`] installs, writing to `writer`: tests capture
/// the production log format and levels with it.
pub fn subscriber<W>(rust_log: Option<&str>, writer: W) -> impl Subscriber + Send + Sync
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let json = tracing_subscriber::fmt::layer()
        .json()
        .with_current_span(false)
        .with_span_list(false)
        .with_target(false)
        .with_writer(writer);
    tracing_subscriber::registry()
        .with(json)
        .with(filter(rust_log))
}

/// `RUST_LOG` as `Targets` directives (`debug`, `warn,shared=debug`, ...).
/// Unset, empty or unreadable means `info`; directives without a bare
/// level keep `info` for every other target (a `shared=debug` for one
/// investigation should not silence the rest).
pub fn filter(rust_log: Option<&str>) -> Targets {
    let parsed = rust_log
        .filter(|s| !s.trim().is_empty())
        .and_then(|s| s.parse::<Targets>().ok());
    let mut targets = parsed.unwrap_or_default();
    if targets.default_level().is_none() {
        targets = targets.with_default(LevelFilter::INFO);
    }
    // Never more verbose than DEBUG there, and never more verbose than asked.
    BODY_LOGGERS.into_iter().fold(targets, |targets, logger| {
        let asked = [
            Level::TRACE,
            Level::DEBUG,
            Level::INFO,
            Level::WARN,
            Level::ERROR,
        ]
        .into_iter()
        .find(|level| targets.would_enable(logger, level))
        .map_or(LevelFilter::OFF, LevelFilter::from_level);
        targets.with_target(logger, asked.min(LevelFilter::DEBUG))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_info() {
        let f = filter(None);
        assert!(f.would_enable("shared::handlers", &Level::INFO));
        assert!(!f.would_enable("shared::handlers", &Level::DEBUG));
        for unset in [Some(""), Some("  "), Some("shared=nonsense")] {
            let f = filter(unset);
            assert!(f.would_enable("shared", &Level::INFO), "{unset:?}");
            assert!(!f.would_enable("shared", &Level::DEBUG), "{unset:?}");
        }
    }

    #[test]
    fn rust_log_sets_levels_per_target() {
        let f = filter(Some("warn,shared=debug"));
        assert!(f.would_enable("shared::store", &Level::DEBUG));
        assert!(!f.would_enable("aws_smithy_runtime", &Level::INFO));
        assert!(f.would_enable("aws_smithy_runtime", &Level::WARN));
        let f = filter(Some("shared=debug"));
        assert!(f.would_enable("shared::store", &Level::DEBUG));
        assert!(f.would_enable("aws_smithy_runtime", &Level::INFO));
        assert!(!f.would_enable("aws_smithy_runtime", &Level::DEBUG));
    }

    #[test]
    fn raw_invocation_events_and_store_bodies_are_never_logged() {
        let f = filter(Some("trace"));
        assert!(f.would_enable("aws_smithy_runtime", &Level::TRACE));
        let bodies = "aws_smithy_runtime::client::orchestrator::http";
        for logger in BODY_LOGGERS.into_iter().chain([bodies]) {
            assert!(!f.would_enable(logger, &Level::TRACE), "{logger}");
            assert!(f.would_enable(logger, &Level::ERROR), "{logger}");
            // ...and the cap never makes it more verbose than asked.
            assert!(!filter(Some("warn")).would_enable(logger, &Level::DEBUG));
        }
    }
}
