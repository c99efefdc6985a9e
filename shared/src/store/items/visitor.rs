//! A queue's visitor (`VISITOR#{ref}#{visitorId}`), its entry in the
//! waiting index, and what an admission has opened (`ADMISSION#…`): their
//! keys, attribute names and expressions.

use super::queue::GENERATION;
use crate::domain::queue_shards::QueueShards;
use crate::domain::queue_state::Admission;
use crate::domain::{EventId, EventRef, VisitorId};
use crate::store::expression::Expression;
use crate::store::schema::{PK, SK, TTL};
use crate::store::value::{n, s, Item};
use sha2::{Digest, Sha256};
use std::collections::HashMap;

pub const VISITOR_PK_PREFIX: &str = "VISITOR#";

/// A visitor of an event's queue: `VISITOR#{ref}#{visitorId}`.
pub(in crate::store) fn visitor_key(event: &EventRef, visitor: &VisitorId) -> Item {
    HashMap::from([
        (
            PK.into(),
            s(format!("{VISITOR_PK_PREFIX}{event}#{visitor}")),
        ),
        (SK.into(), s("VISITOR")),
    ])
}

/// The key of a visitor's item, for the test harness's raw reads.
pub fn visitor_item_key(event: &EventId, visitor: &VisitorId) -> Item {
    visitor_key(&EventRef::of(event), visitor)
}

/// The visitor id an index entry's table key names.
pub(in crate::store) fn visitor_of_key(pk: &str) -> Option<VisitorId> {
    let rest = pk.strip_prefix(VISITOR_PK_PREFIX)?;
    VisitorId::parse(rest.split_once('#')?.1).ok()
}

/// The index partition of a waiting visitor: `QWAIT#{ref}#{generation}#{shard}`.
pub(in crate::store) fn queue_shard_key(event: &EventRef, generation: u64, shard: u8) -> String {
    format!("QWAIT#{event}#{generation}#{shard}")
}

/// A visitor's shard among its generation's `shards`, from its id's own
/// randomness. A queue's waiting visitors spread over the shards of each
/// queue index: a join writes one entry in each and an admission removes
/// them, so no one partition takes the crowd's joins (docs/QUEUE.md).
pub fn visitor_shard(visitor: &VisitorId, shards: QueueShards) -> u8 {
    shards.of_hash_byte(Sha256::digest(visitor.as_str().as_bytes())[0])
}

pub const QUEUE_SHARD: &str = "queueShard";

/// A drawn visitor's partition of the draw index, on the same shard as
/// its waiting entries: `QDRAW#{ref}#{generation}#{shard}`. It stays after
/// the admission (the draw list shows every drawn visitor).
pub(in crate::store) fn draw_shard_key(event: &EventRef, generation: u64, shard: u8) -> String {
    format!("QDRAW#{event}#{generation}#{shard}")
}

pub const DRAW_SHARD: &str = "drawShard";

/// The draw index's sort key: the draw key, 64 hex digits.
pub const DRAW_KEY: &str = "drawKey";

/// The join index's sort key (the rank index carries it): the admitter
/// counts joins by it, and an admission's eligibility starts at it.
pub const QUEUE_JOIN: &str = "queueJoin";

/// The rank index's sort key (the join index carries it): the queue's
/// order, 32 hex digits so text order is rank order.
pub const QUEUE_RANK: &str = "queueRank";

/// A visitor's item outlives its admission (or its join, if never
/// admitted) by this long, then TTL removes it.
pub const VISITOR_RETENTION_SECONDS: i64 = 24 * 3600;

/// A waiting visitor's item is kept at most this long after its join.
pub const WAITING_RETENTION_SECONDS: i64 = 2 * 24 * 3600;

pub(in crate::store) const VISITOR_ID: &str = "visitorId";

pub(in crate::store) const JOINED_AT: &str = "joinedAt";

/// The buyer whose one place a verified queue's visitor is.
pub(in crate::store) const BUYER_ID: &str = "buyerId";

pub(in crate::store) const ADMISSION_ID: &str = "admissionId";

pub(in crate::store) const ADMISSION_GIVEN_AT: &str = "admissionGivenAt";

pub const ADMISSION_SLOT_US: &str = "admissionSlotUs";

pub(in crate::store) const ADMISSION_EXPIRES_AT: &str = "admissionExpiresAt";

pub(in crate::store) const ORDERS_ALLOWED: &str = "ordersAllowed";

/// What an admission has opened: `ADMISSION#{admissionId}`.
pub(in crate::store) fn admission_key(admission_id: &str) -> Item {
    HashMap::from([
        (PK.into(), s(format!("ADMISSION#{admission_id}"))),
        (SK.into(), s("ADMISSION")),
    ])
}

pub(in crate::store) const ORDERS_OPENED: &str = "ordersOpened";

// ----- expressions ---------------------------------------------------------
// A visitor (`VISITOR#…`), its entry in the waiting index, and what an
// admission has opened (`ADMISSION#…`). Names: `#shard`, `#join`,
// `#orders`, …; values: `:allowed`, `:one`, ….

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

/// A join-index entry's key condition: shard `shard`, joined in
/// `[from_ms, to_ms)`.
pub(in crate::store) fn joined_between(shard: String, from_ms: i64, to_ms: i64) -> Expression {
    Expression::key_condition("#shard = :shard AND #join BETWEEN :from AND :last")
        .name("#shard", QUEUE_SHARD)
        .name("#join", QUEUE_JOIN)
        .value(":shard", s(shard))
        .value(":from", n(from_ms))
        .value(":last", n(to_ms.saturating_sub(1)))
}

/// A draw-index entry's key condition: shard `shard`, keyed from `from`
/// to `to` (both included).
pub(in crate::store) fn drawn_between(shard: String, from: &str, to: &str) -> Expression {
    Expression::key_condition("#shard = :shard AND #key BETWEEN :from AND :to")
        .name("#shard", DRAW_SHARD)
        .name("#key", DRAW_KEY)
        .value(":shard", s(shard))
        .value(":from", s(from))
        .value(":to", s(to))
}

/// A rank-index entry's key condition: shard `shard`, ranked after `after`
/// (from the first when `None`).
pub(in crate::store) fn ranked_after(shard: String, after: Option<&str>) -> Expression {
    match after {
        Some(after) => Expression::key_condition("#shard = :shard AND #rank > :after")
            .name("#rank", QUEUE_RANK)
            .value(":after", s(after)),
        None => Expression::key_condition("#shard = :shard"),
    }
    .name("#shard", QUEUE_SHARD)
    .value(":shard", s(shard))
}
