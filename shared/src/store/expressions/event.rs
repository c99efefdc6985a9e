//! Event-side expressions: create-event's progress on the event item, the
//! pending index's key condition (swept orders and unfinished events
//! share it), and reading a partition by key.

use super::super::codec::{n, s};
use super::super::keys::{PENDING_EXPIRES_AT, PENDING_SHARD, READY, SEATS_WRITTEN};
use super::Expression;
use crate::domain::Millis;
use aws_sdk_dynamodb::types::AttributeValue;

/// The event is ready: every seat written (`count`); it leaves the
/// pending index's creating shard.
pub(in crate::store) fn ready(count: u32) -> Expression {
    Expression::update("SET #ready = :true, #written = :count REMOVE #shard, #resumeAt")
        .name("#ready", READY)
        .name("#written", SEATS_WRITTEN)
        .name("#shard", PENDING_SHARD)
        .name("#resumeAt", PENDING_EXPIRES_AT)
        .value(":true", AttributeValue::Bool(true))
        .value(":count", n(count))
}

/// `seatsWritten` raised to `written`, never lowered: two creators at once
/// each only move it forward.
pub(in crate::store) fn seats_written(written: u32) -> Expression {
    Expression::update("SET #written = :written")
        .and(Expression::condition("#written < :written"))
        .name("#written", SEATS_WRITTEN)
        .value(":written", n(written))
}

/// The pending index's entries in `shard` that are due at `now` (their
/// expiry, or an unfinished event's resume time, has passed).
pub(in crate::store) fn due_in_shard(shard: String, now: Millis) -> Expression {
    Expression::key_condition(concat!("#shard = :shard AND ", expired!("#due")))
        .name("#shard", PENDING_SHARD)
        .name("#due", PENDING_EXPIRES_AT)
        .value(":shard", s(shard))
        .value(":now", n(now.0))
}

/// Every item of partition `pk`.
pub(in crate::store) fn partition(pk: &str) -> Expression {
    Expression::key_condition("PK = :pk").value(":pk", s(pk))
}
