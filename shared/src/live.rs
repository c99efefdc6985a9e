//! An HTTP function's app across its invocations, and its secrets read
//! again as they age, without ever stalling a request on Secrets Manager
//! and without answering for long with keys it cannot re-read.
//!
//! A read falls due [`Timing::refresh`] after the last good one. The first
//! request that finds it due starts it on the runtime (every secret at
//! once, `crate::secrets::fetch_with`) and waits for it at most
//! [`Timing::wait`], then goes on with the app it has; requests while the
//! read is out do not wait. Lambda runs the read only while some
//! invocation runs, so a slow read finishes over the next requests. A
//! failed read is tried again [`Timing::retry`] later, keeping what it has.
//! Past [`Timing::max_age`] without a good read (a revoked key must stop
//! working), the instance answers `503 secrets-unavailable` with
//! `Retry-After`, counting each in the `SecretsStale` metric, which an alarm
//! watches (OPERATIONS.md, "Secrets that cannot be read"), and tries the
//! read again a [`Timing::wait`] after each try (the request that starts it
//! waits for it, any other while it is out too), until one succeeds. A read
//! that panics counts as failed where panics unwind (tests, `make dev`); a
//! deployed binary aborts on a panic and Lambda starts a new sandbox.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use tokio::sync::watch;

use crate::config::ConfigError;
use crate::secrets::SECRET_REFRESH;
use crate::{App, Config};

/// When an instance reads its secrets again, and how stale it may answer.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// After a good read, the wait before the next.
    pub refresh: Duration,
    /// After a failed read, the wait before the next try.
    pub retry: Duration,
    /// The longest a request waits for a read it finds due or out.
    pub wait: Duration,
    /// The oldest secrets an instance answers with.
    pub max_age: Duration,
}

/// The deployed timing: a rotation reaches every instance within 5
/// minutes; a revoked key stops working within 15 even on an instance
/// that can no longer read the secret.
pub const TIMING: Timing = Timing {
    refresh: SECRET_REFRESH,
    retry: Duration::from_secs(30),
    wait: Duration::from_secs(1),
    max_age: Duration::from_secs(3 * SECRET_REFRESH.as_secs()),
};

/// Reads the configuration again (the secrets from Secrets Manager).
pub type Reader = Box<dyn Fn() -> BoxFuture<'static, Result<Config, ConfigError>> + Send + Sync>;

/// Whether the app a request got may answer it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Secrets {
    /// Read within [`Timing::max_age`] (or never read from Secrets Manager).
    Current,
    /// Older than that: answer `503 secrets-unavailable`.
    Stale,
}

pub struct Live {
    function: &'static str,
    /// `None`: the function reads no secret from Secrets Manager.
    read: Option<Reader>,
    timing: Timing,
    state: Mutex<State>,
}

struct State {
    app: Arc<App>,
    /// When the secrets it holds were read.
    read_at: Instant,
    /// When to read them again.
    due_at: Instant,
    /// When the last read ended (good or not).
    tried_at: Instant,
    /// A read under way: its end, for requests to wait on.
    reading: Option<watch::Receiver<bool>>,
}

impl Live {
    /// `app`, its secrets read at `read_at`, read again with `read` (none:
    /// never read again).
    pub fn new(
        function: &'static str,
        app: App,
        read: Option<Reader>,
        timing: Timing,
        read_at: Instant,
    ) -> Arc<Self> {
        Arc::new(Self {
            function,
            read,
            timing,
            state: Mutex::new(State {
                app: Arc::new(app),
                read_at,
                due_at: read_at + timing.refresh,
                tried_at: read_at,
                reading: None,
            }),
        })
    }

    /// The app to answer a request with, and whether its secrets may
    /// still be used; a due read started and waited for (briefly) first.
    pub async fn current(self: &Arc<Self>) -> (Arc<App>, Secrets) {
        if let Some(mut done) = self.read_to_wait_for() {
            // Either way the request goes on: with what the read brought
            // if it ended in time, else with what the instance had.
            let _ = tokio::time::timeout(self.timing.wait, done.wait_for(|ended| *ended)).await;
        }
        let state = self.lock();
        let secrets = if self.is_stale(&state) {
            crate::metrics::secrets_stale(self.function);
            Secrets::Stale
        } else {
            Secrets::Current
        };
        (state.app.clone(), secrets)
    }

    fn is_stale(&self, state: &State) -> bool {
        self.read.is_some() && state.read_at.elapsed() > self.timing.max_age
    }

    /// The app it holds now, without starting a read (tests compare it
    /// with what a request got).
    pub fn current_app(&self) -> Arc<App> {
        self.lock().app.clone()
    }

    /// The read this request waits for: one it started because it was
    /// due, or, while the secrets are stale, the one under way.
    fn read_to_wait_for(self: &Arc<Self>) -> Option<watch::Receiver<bool>> {
        let read = self.read.as_ref()?;
        let mut state = self.lock();
        if let Some(reading) = &state.reading {
            return self.is_stale(&state).then(|| reading.clone());
        }
        // Stale, the instance refuses everything until a read works: it
        // tries again a wait after the last try, not only at the retry
        // time, but no more often (a fleet of stale instances must not
        // press on Secrets Manager with every refused request).
        let now = Instant::now();
        let stale_due = self.is_stale(&state) && now >= state.tried_at + self.timing.wait;
        if now < state.due_at && !stale_due {
            return None;
        }
        let (ended, reading) = watch::channel(false);
        state.reading = Some(reading.clone());
        let reader = read();
        let live = Arc::clone(self);
        tokio::spawn(async move {
            // Dropped unfinished (the read panicked): counted as failed,
            // so no later read waits on this one forever.
            let mut end = ReadEnd {
                live,
                outcome: None,
            };
            end.outcome = Some(reader.await);
            drop(end);
            // Nobody waiting is fine: requests went on without it.
            let _ = ended.send(true);
        });
        Some(reading)
    }

    /// A read's end: its config swapped in, or the next try set.
    fn finish(&self, outcome: Result<Config, ConfigError>) {
        let mut state = self.lock();
        let now = Instant::now();
        state.reading = None;
        state.tried_at = now;
        match outcome {
            Ok(config) => {
                state.app = Arc::new(state.app.with_config(config));
                state.read_at = now;
                state.due_at = now + self.timing.refresh;
            }
            Err(e) => {
                tracing::warn!(
                    error = %crate::error::chain(&e),
                    age_s = state.read_at.elapsed().as_secs(),
                    "reading the secrets again failed: kept the ones read before"
                );
                state.due_at = now + self.timing.retry;
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means a thread panicked holding it; every
        // write leaves the state whole.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A read under way: ends it when dropped, as failed if it never gave an
/// outcome.
struct ReadEnd {
    live: Arc<Live>,
    outcome: Option<Result<Config, ConfigError>>,
}

impl Drop for ReadEnd {
    fn drop(&mut self) {
        let outcome = self.outcome.take().unwrap_or(Err(ConfigError::Missing(
            "the secrets (their read panicked)",
        )));
        self.live.finish(outcome);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deployed_timing_lets_a_rotation_land_before_keys_go_stale() {
        assert!(TIMING.wait < Duration::from_secs(2));
        assert!(TIMING.retry < TIMING.refresh);
        assert!(TIMING.refresh * 2 < TIMING.max_age);
    }
}
