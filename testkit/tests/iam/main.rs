//! Least privilege, proven (its own binary): the walk over every function's
//! paths checks the calls this process recorded, which must be the walk's
//! own, not the suite's; and, after the suite, every call of the whole run
//! against template.yaml's policies.

// All of it is test code, helpers included: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

#[path = "../suite/common/mod.rs"]
mod common;

mod attributes;
mod built;
mod event_sources;
mod proof;
mod secrets;
