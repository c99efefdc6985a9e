//! The on-sale queue's state item (`QUEUE#{ref}` and its copies): its
//! keys, its attribute names and its expressions.

use crate::domain::queue_state::QueueState;
use crate::domain::EventRef;
use crate::store::expression::Expression;
use crate::store::schema::{PK, SK, VERSION};
use crate::store::value::{n, s, Item};
use std::collections::HashMap;

pub const QUEUE_PK_PREFIX: &str = "QUEUE#";

const QUEUE_SK: &str = "QUEUE";

/// The queue's state, as put and as the admitter keeps it: `QUEUE#{ref}`.
pub(in crate::store) fn queue_key(event: &EventRef) -> Item {
    HashMap::from([
        (PK.into(), s(format!("{QUEUE_PK_PREFIX}{event}"))),
        (SK.into(), s(QUEUE_SK)),
    ])
}

/// Copy `copy` of the queue's state: `QUEUE#{ref}#{copy}`.
pub(in crate::store) fn queue_copy_key(event: &EventRef, copy: u8) -> Item {
    HashMap::from([
        (PK.into(), s(format!("{QUEUE_PK_PREFIX}{event}#{copy}"))),
        (SK.into(), s(QUEUE_SK)),
    ])
}

/// Copies of a queue's state, each under a partition key of its own: every
/// instance reads its own pick about once a second, so the crowd's reads
/// spread over this many keys.
pub const QUEUE_COPIES: u8 = 8;

pub(in crate::store) const GENERATION: &str = "generation";

pub(in crate::store) const REMOVED: &str = "removed";

pub(in crate::store) const OPENS_AT: &str = "opensAt";

pub(in crate::store) const ADMIT_PER_MINUTE: &str = "admitPerMinute";

pub(in crate::store) const ADMISSION_SECONDS: &str = "admissionSeconds";

pub(in crate::store) const ORDERS_PER_ADMISSION: &str = "ordersPerAdmission";

/// How long after the opening the first admission waits (absent on a
/// queue put before it was a setting: the default).
pub(in crate::store) const DRAW_SETTLE_MS: &str = "drawSettleMs";

/// `anonymous` or `verified` (absent on a queue put before buyers: anonymous).
pub(in crate::store) const BUYERS: &str = "buyers";

/// The version of `DRAW_SECRET` the generation's seed is derived under.
pub(in crate::store) const DRAW_SECRET_VERSION: &str = "drawSecret";

/// The index shards the generation's visitors spread over (absent on a
/// queue put before the count was stored: 32). Not `queueShard…`, the
/// index key it counts.
pub(in crate::store) const SHARDS: &str = "shards";

/// When the generation ends (absent on one put before ends: none).
pub(in crate::store) const ENDS_AT: &str = "endsAt";

pub(in crate::store) const INVENTORY: &str = "inventory";

/// Admissions a committed tick gave slots to, not yet known written: on
/// the main item only (admitters read it; visitors read the copies).
pub(in crate::store) const PENDING: &str = "pending";
pub(in crate::store) const PENDING_VISITOR: &str = "v";
pub(in crate::store) const PENDING_RANK: &str = "r";
pub(in crate::store) const PENDING_SLOT: &str = "s";

/// The highest drawn rank given a slot, and how many drawn visitors came late.
pub(in crate::store) const LAST_DRAWN: &str = "lastDrawn";
pub(in crate::store) const LATE_DRAWN: &str = "lateDrawn";

pub(in crate::store) const LAST_ADMISSION_US: &str = "lastAdmissionUs";

pub(in crate::store) const RESUMED_US: &str = "resumedUs";

pub(in crate::store) const ADMITTED: &str = "admitted";

pub(in crate::store) const WAITING: &str = "waiting";

pub(in crate::store) const CHECKPOINTS: &str = "checkpoints";

/// The admitter's counts of joins: on the main item only, which it alone
/// reads (visitors read the copies).
pub(in crate::store) const JOIN_COUNTS: &str = "joinCounts";

// ----- expressions ---------------------------------------------------------
// The queue's state item (`QUEUE#…`, its copies). Names: `#version`;
// values: `:version`.

/// The queue item as it was read (a whole-item write's condition).
pub(in crate::store) use super::as_read;

/// A visitor admitted as it joins, over the version read: the three
/// attributes such an admission changes (`after` is the state it makes),
/// and no others. An `UpdateItem`, so IAM can hold queue-visitors to them:
/// it cannot rewrite a queue's settings or remove it (template.yaml).
pub(in crate::store) fn admitted_on_join(after: &QueueState, read: i64) -> Expression {
    let last = after.last_admission_us.unwrap_or_default();
    Expression::update("SET #last = :last, #admitted = :admitted, #version = :version")
        .name("#last", LAST_ADMISSION_US)
        .name("#admitted", ADMITTED)
        .name("#version", VERSION)
        .value(":last", n(last))
        .value(":admitted", n(after.admitted))
        .value(":version", n(after.version))
        .and(as_read(Some(read)))
}

/// A copy written only over an older one.
pub(in crate::store) use super::older_copy;
