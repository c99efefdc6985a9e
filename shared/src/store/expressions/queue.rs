//! The on-sale queue's expressions: the queue's state item
//! (`QUEUE#…`, its copies and the list of queued events), a visitor
//! (`VISITOR#…`) and what an admission has opened (`ADMISSION#…`).
//! Names: `#version`, `#events`, `#shard`, `#join`, `#orders`, …; values:
//! `:version`, `:event`, `:allowed`, `:one`, ….

use super::super::codec::{n, s, ss};
use super::super::keys::{
    ADMISSION_EXPIRES_AT, ADMISSION_GIVEN_AT, ADMISSION_ID, ADMISSION_SLOT_US, EVENTS, GENERATION,
    ORDERS_ALLOWED, ORDERS_OPENED, QUEUE_JOIN, QUEUE_SHARD, TTL, VERSION,
};
use super::Expression;
use crate::domain::queue_state::Admission;
use crate::domain::EventId;

/// The queue item as it was read: at `version`, or absent (`None`).
pub(in crate::store) fn as_read(version: Option<i64>) -> Expression {
    match version {
        Some(version) => Expression::condition("#version = :read")
            .name("#version", VERSION)
            .value(":read", n(version)),
        None => Expression::condition("attribute_not_exists(PK)"),
    }
}

/// A copy is written only over an older one (or none): a late write never
/// puts an older state back.
pub(in crate::store) fn older_copy(version: i64) -> Expression {
    Expression::condition("attribute_not_exists(PK) OR #version < :version")
        .name("#version", VERSION)
        .value(":version", n(version))
}

/// Lists (or unlists) `event` among the events with a queue.
pub(in crate::store) fn list_event(event: &EventId, listed: bool) -> Expression {
    let text = if listed {
        "ADD #events :event"
    } else {
        "DELETE #events :event"
    };
    Expression::update(text)
        .name("#events", EVENTS)
        .value(":event", ss(&[event.as_str()]))
}

/// Admits a visitor still waiting in this generation: its admission on
/// its item, its index entry removed (so the index holds only the
/// waiting), and its item kept until `ttl`.
pub(in crate::store) fn admit(admission: &Admission, generation: u64, ttl: i64) -> Expression {
    Expression::update(
        "SET #admissionId = :admission, #slot = :slot, #givenAt = :givenAt, \
         #admissionExp = :admissionExp, #allowed = :allowed, #ttl = :ttl REMOVE #shard, #join",
    )
    .name("#admissionId", ADMISSION_ID)
    .name("#slot", ADMISSION_SLOT_US)
    .value(":slot", n(admission.slot_us))
    .name("#givenAt", ADMISSION_GIVEN_AT)
    .name("#admissionExp", ADMISSION_EXPIRES_AT)
    .name("#allowed", ORDERS_ALLOWED)
    .name("#ttl", TTL)
    .name("#shard", QUEUE_SHARD)
    .name("#join", QUEUE_JOIN)
    .value(":admission", s(&admission.admission_id))
    .value(":givenAt", n(admission.given_at.0))
    .value(":admissionExp", n(admission.expires_at.0))
    .value(":allowed", n(admission.orders_allowed))
    .value(":ttl", n(ttl))
    .and(
        Expression::condition("attribute_exists(#shard) AND #generation = :generation")
            .name("#shard", QUEUE_SHARD)
            .name("#generation", GENERATION)
            .value(":generation", n(generation)),
    )
}

/// Counts one more order opened under an admission that allows `allowed`,
/// kept until `ttl` (the admission's expiry and a margin).
pub(in crate::store) fn open_under(allowed: u32, ttl: i64) -> Expression {
    Expression::update("ADD #orders :one SET #ttl = :ttl")
        .name("#orders", ORDERS_OPENED)
        .name("#ttl", TTL)
        .value(":one", n(1))
        .value(":ttl", n(ttl))
        .and(
            Expression::condition("attribute_not_exists(#orders) OR #orders < :allowed")
                .name("#orders", ORDERS_OPENED)
                .value(":allowed", n(allowed)),
        )
}

/// An index entry's key condition: shard `shard`, joined from `from_ms` on.
pub(in crate::store) fn joined_since(shard: String, from_ms: i64) -> Expression {
    Expression::key_condition("#shard = :shard AND #join >= :from")
        .name("#shard", QUEUE_SHARD)
        .name("#join", QUEUE_JOIN)
        .value(":shard", s(shard))
        .value(":from", n(from_ms))
}
