//! The tests of what a process has one of, apart from the suite: the
//! metrics recorder (`metrics_emf`) and tracing's per-callsite interest
//! cache (`logs`) are global to a process, so the suite's other tests would
//! count in the one and race the other. Here they run one at a time.

// All of it is test code, helpers included: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

#[path = "../suite/common/mod.rs"]
mod common;

mod logs;
mod metrics_emf;

/// Held by each test of this binary for its whole run.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
