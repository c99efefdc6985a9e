//! The table's schema: attribute names, the index, item keys and the
//! pending-index shards. Every key format is written here and only here.

use super::codec::{s, Item};
use crate::domain::{EventId, EventRef, Millis, OrderId, PaymentId, SeatId, SectionId, VisitorId};
use aws_sdk_dynamodb::types::AttributeValue;
use sha2::{Digest, Sha256};
use std::collections::HashMap;

/// Name of the sparse index of pending orders by expiry (template.yaml).
pub const PENDING_INDEX: &str = "PendingByExpiry";
/// Pending orders spread over this many index partitions so one event's
/// on-sale does not make a hot partition; the sweep queries each. Sized for
/// the demand model (docs/SCALE.md): at 20,000 claim attempts/s, buyers
/// claiming 2.5 seats each open 8,000 orders/s, and each order writes the
/// index twice (entering and leaving PENDING): 16,000 index writes/s, which
/// 64 shards take at 250 units/s each, a quarter of a partition's 1,000.
/// A multiple of the old 8, so an order keeps `shard mod 8`.
pub const PENDING_SHARDS: u8 = 64;
/// The index shard of events still being created: the sweep finishes them.
pub(super) const CREATING_SHARD: &str = "CREATING";
/// Seats of a row are keyed in blocks of this many consecutive numbers, one
/// partition key per block, so that an on-sale's hottest row spreads over
/// several keys (docs/SCALE.md has the arithmetic; the bench measures it).
pub const SEAT_BLOCK_SIZE: u32 = 10;
/// The seating plan is stored as JSON in chunks of at most this many bytes,
/// items of their own, well inside DynamoDB's 400 KB item limit.
pub(super) const PLAN_CHUNK_BYTES: usize = 300_000;
/// Copies of each plan, each under a partition key of its own: a fresh
/// function instance reads one (its own pick), so the instances an
/// on-sale's first seconds start spread their plan reads over this many
/// keys (docs/SCALE.md has the arithmetic; the bench measures it).
pub const PLAN_REPLICAS: u8 = 4;
/// Expired orders are garbage-collected by DynamoDB TTL this long after
/// their expiry (completed and refund-due orders are kept).
pub const EXPIRED_ORDER_RETENTION_SECONDS: i64 = 30 * 24 * 3600;

// Attribute names.
pub const PK: &str = "PK";
pub const SK: &str = "SK";
pub(super) const KIND: &str = "kind";
pub const EVENT_ID: &str = "eventId";
pub(super) const NAME: &str = "name";
pub(super) const HOLD_SECONDS: &str = "holdSeconds";
pub(super) const SEAT_COUNT: &str = "seatCount";
pub(super) const PLAN_HASH: &str = "planHash";
pub(super) const READY: &str = "ready";
pub(super) const SEAT_ID: &str = "seatId";
pub(super) const SECTION_ID: &str = "sectionId";
pub(super) const ROW: &str = "row";
pub(super) const NUMBER: &str = "number";
pub const STATUS: &str = "status";
pub(super) const HOLDER: &str = "holderOrderId";
pub(super) const HOLD_EXPIRES_AT: &str = "holdExpiresAt";
pub(super) const ORDER_ID: &str = "orderId";
pub(super) const EXPIRES_AT: &str = "expiresAt";
pub(super) const TOKEN_HASH: &str = "tokenHash";
pub const SEATS: &str = "seats";
pub(super) const VERSION: &str = "version";
pub(super) const PAYMENT_ID: &str = "paymentId";
pub(super) const EXTRA_PAYMENT_IDS: &str = "refundPaymentIds";
pub(super) const USER_ID: &str = "userId";
pub(super) const CREATED_AT: &str = "createdAt";
pub(super) const HOLDER_DEADLINE: &str = "holderDeadline";
pub(super) const REFUND_REASON: &str = "refundReason";
pub(super) const ORDINAL: &str = "ordinal";
pub(super) const PLAN: &str = "plan";
pub(super) const PLAN_CHUNKS: &str = "planChunks";
/// On an event being created: every seat before this ordinal exists.
pub(super) const SEATS_WRITTEN: &str = "seatsWritten";
pub const PENDING_SHARD: &str = "pendingShard";
pub const PENDING_EXPIRES_AT: &str = "pendingExpiresAt";
pub const TTL: &str = "ttl";

pub(super) const SEAT_AVAILABLE: &str = "AVAILABLE";
pub(super) const SEAT_HELD: &str = "HELD";
pub(super) const SEAT_SOLD: &str = "SOLD";

/// The pending index projects keys only: the sweep reads each order item
/// itself (the index's copy may lag), and a claim that changes an order's
/// seats does not also rewrite the index.
pub const PENDING_INDEX_PROJECTION: &str = "KEYS_ONLY";

/// Most items one `TransactWriteItems` may hold.
pub const MAX_TRANSACTION_ITEMS: usize = 100;
/// Conditional seat writes in flight while creating an event.
pub const SEAT_WRITES_IN_FLIGHT: usize = 32;
/// How often (in seats) a creation records how far it got.
pub(super) const SEATS_WRITTEN_EVERY: u32 = 2_000;

pub const EVENT_PK_PREFIX: &str = "EVENT#";
pub(super) fn event_pk(event: &EventRef) -> AttributeValue {
    s(format!("{EVENT_PK_PREFIX}{event}"))
}
pub const EVENT_SK: &str = "EVENT";
pub(super) fn event_key_of(event: &EventRef) -> Item {
    HashMap::from([(PK.into(), event_pk(event)), (SK.into(), s(EVENT_SK))])
}
pub(super) fn event_key(event: &EventId) -> Item {
    event_key_of(&EventRef::of(event))
}
pub const PLAN_PK_PREFIX: &str = "PLAN#";
/// Chunk `chunk` of copy `replica` of a plan: `PLAN#{ref}#{replica}`, under
/// the plan's fingerprint (so another plan's chunks are other items).
pub(super) fn plan_chunk_key(
    event: &EventRef,
    fingerprint: &str,
    chunk: usize,
    replica: u8,
) -> Item {
    HashMap::from([
        (PK.into(), s(format!("{PLAN_PK_PREFIX}{event}#{replica}"))),
        (SK.into(), s(format!("PLAN#{fingerprint}#{chunk:04}"))),
    ])
}
/// Where legacy events (the plan's first chunk on the event item) keep their plan's chunks after the
/// first (the first is on the event item): next to the event item.
pub(super) fn legacy_plan_chunk_key(event: &EventRef, fingerprint: &str, chunk: usize) -> Item {
    HashMap::from([
        (PK.into(), event_pk(event)),
        (SK.into(), s(format!("PLAN#{fingerprint}#{chunk:04}"))),
    ])
}
/// The partition key of a seat's block: `SEATS#{event ref}#{section}-{row}#{block}`,
/// block = (number - 1) / [`SEAT_BLOCK_SIZE`]. Computed from the seat id
/// alone, so a claim needs no read. An id no plan produces gets a key of
/// its own where no item exists (the claim then answers seat-not-found).
pub const SEAT_PK_PREFIX: &str = "SEATS#";
pub(super) fn seat_block_pk(event: &EventRef, seat: &SeatId) -> String {
    match seat.row_and_number().filter(|(_, number)| *number >= 1) {
        Some((row, number)) => format!(
            "{SEAT_PK_PREFIX}{event}#{row}#{}",
            (number - 1) / SEAT_BLOCK_SIZE
        ),
        None => format!("{SEAT_PK_PREFIX}{event}#{seat}#-"),
    }
}
/// Seats per seat-map projection item: a row's map is one item up to this
/// many seats (a few KB), more items for longer rows.
pub(super) const SEAT_MAP_ITEM_SEATS: u32 = 1000;
/// The seat-map projection item holding seat `number` of the row
/// `{section}-{row}` (see `seat_map.rs`).
pub(super) fn seat_map_key(event: &EventRef, row: &str, number: u32) -> Item {
    let chunk = number.saturating_sub(1) / SEAT_MAP_ITEM_SEATS;
    HashMap::from([
        (PK.into(), s(format!("MAP#{event}#{row}#{chunk}"))),
        (SK.into(), s("MAP")),
    ])
}
/// What the stream has seen sold out, for good (nothing sold is ever
/// released): `SOLDOUT#{ref}`, SK `EVENT` with `soldOut` (the set of its
/// sections every seat or place of which is sold), and SK
/// `SECTION#{section}` with `fullParts` (the set of the section's seat-map
/// parts, or general-admission buckets, that are sold out). See
/// `sold_out.rs`.
pub const SOLD_OUT_PK_PREFIX: &str = "SOLDOUT#";
pub(super) fn sold_out_key(event: &EventRef) -> Item {
    HashMap::from([
        (PK.into(), s(format!("{SOLD_OUT_PK_PREFIX}{event}"))),
        (SK.into(), s("EVENT")),
    ])
}
pub(super) fn section_progress_key(event: &EventRef, section: &SectionId) -> Item {
    HashMap::from([
        (PK.into(), s(format!("{SOLD_OUT_PK_PREFIX}{event}"))),
        (SK.into(), s(format!("SECTION#{section}"))),
    ])
}
pub(super) const SOLD_OUT: &str = "soldOut";
pub(super) const FULL_PARTS: &str = "fullParts";
/// On a seat item: how many seats its seat-map part has.
pub(super) const PART_SEATS: &str = "partSeats";
/// On a seat item or a general-admission bucket: how many seat-map parts,
/// or buckets, its section has.
pub(super) const SECTION_PARTS: &str = "sectionParts";
pub(super) const SEAT_SK_PREFIX: &str = "SEAT#";
/// A general-admission bucket: `GA#{event ref}#{section}#{bucket}` (see
/// `domain::ga`): its capacity, sold and free counts and its holds.
pub const GA_PK_PREFIX: &str = "GA#";
pub(super) fn ga_bucket_key(event: &EventRef, section: &SectionId, bucket: u32) -> Item {
    HashMap::from([
        (
            PK.into(),
            s(format!("{GA_PK_PREFIX}{event}#{section}#{bucket}")),
        ),
        (SK.into(), s("GA")),
    ])
}
pub(super) const CAPACITY: &str = "capacity";
pub(super) const SOLD: &str = "sold";
pub(super) const FREE: &str = "free";
/// One attribute per holding order, `hold#{orderId}` = `{q: places, e:
/// expiresAt ms}`: top-level rather than one map, so a bucket never keeps
/// an empty map (DynamoDB Local's stream writes one as `{}`, which no SDK
/// parses).
pub(super) const HOLD_PREFIX: &str = "hold#";
pub(super) fn hold_attribute(order: &OrderId) -> String {
    format!("{HOLD_PREFIX}{order}")
}
/// The order and payment of the sale that last wrote a bucket.
pub(super) const SALE_ORDER_ID: &str = "saleOrderId";
pub(super) const SALE_PAYMENT_ID: &str = "salePaymentId";
pub(super) const HOLD_QUANTITY: &str = "q";
pub(super) const HOLD_EXPIRY: &str = "e";
/// An order's places are members of its `seats` set too,
/// `{section}#{bucket}#{n}` for n = 1..=its places there: `size(seats)`
/// then counts seats and places together, as the seat limit does, in the
/// one condition get-seat and best-available already have. A `#` never
/// occurs in a seat id.
pub(super) const PLACE_SEPARATOR: char = '#';
pub(super) fn place_member(section: &SectionId, bucket: u32, n: u32) -> String {
    format!("{section}{PLACE_SEPARATOR}{bucket}{PLACE_SEPARATOR}{n}")
}
/// `(section, bucket)` of a place member; `None` for a seat id.
pub(super) fn parse_place_member(member: &str) -> Option<(SectionId, u32)> {
    let mut parts = member.split(PLACE_SEPARATOR);
    let (section, bucket, n) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || n.parse::<u32>().is_err() {
        return None;
    }
    Some((SectionId::parse(section).ok()?, bucket.parse().ok()?))
}
pub(super) fn seat_key(event: &EventRef, seat: &SeatId) -> Item {
    HashMap::from([
        (PK.into(), s(seat_block_pk(event, seat))),
        (SK.into(), s(format!("{SEAT_SK_PREFIX}{seat}"))),
    ])
}
/// The key of a seat item, for the test harness's raw reads (the store's
/// readers go through [`Store`]).
pub fn seat_item_key(event: &EventId, seat: &SeatId) -> HashMap<String, AttributeValue> {
    seat_key(&EventRef::of(event), seat)
}
/// The key of an event's item (its head), for the test harness's raw
/// reads.
pub fn event_item_key(event: &EventId) -> HashMap<String, AttributeValue> {
    event_key(event)
}
/// The key of a general-admission bucket, for the test harness's raw
/// writes (the store's writers go through [`Store`]).
pub fn ga_bucket_item_key(
    event: &EventId,
    section: &SectionId,
    bucket: u32,
) -> HashMap<String, AttributeValue> {
    ga_bucket_key(&EventRef::of(event), section, bucket)
}
pub const ORDER_PK_PREFIX: &str = "ORDER#";
pub(super) fn order_key(order: &OrderId) -> Item {
    HashMap::from([
        (PK.into(), s(format!("{ORDER_PK_PREFIX}{order}"))),
        (SK.into(), s("ORDER")),
    ])
}
pub(super) fn payment_key(payment: &PaymentId) -> Item {
    HashMap::from([
        (PK.into(), s(format!("PAYMENT#{payment}"))),
        (SK.into(), s("PAYMENT")),
    ])
}
// ----- the on-sale queue ------------------------------------------

/// Name of the index of waiting visitors by join time (template.yaml).
pub const QUEUE_INDEX: &str = "QueueByJoin";
/// A queue's waiting visitors spread over this many index partitions: a
/// join writes one entry and an admission removes it, so 32 shards take
/// 32,000 joins a second before any reaches a partition's 1,000 write
/// units (docs/SCALE.md measures it).
pub const QUEUE_SHARDS: u8 = 32;
/// Copies of a queue's state, each under a partition key of its own: every
/// instance reads its own pick about once a second, so the crowd's reads
/// spread over this many keys.
pub const QUEUE_COPIES: u8 = 8;
/// A visitor's item outlives its admission (or its join, if never
/// admitted) by this long, then TTL removes it.
pub const VISITOR_RETENTION_SECONDS: i64 = 24 * 3600;
/// A waiting visitor's item is kept at most this long after its join.
pub const WAITING_RETENTION_SECONDS: i64 = 2 * 24 * 3600;

pub const QUEUE_SHARD: &str = "queueShard";
pub const QUEUE_JOIN: &str = "queueJoin";
/// The one attribute the queue's index carries besides its keys: the
/// admitter orders visitors by it.
pub const QUEUE_RANK: &str = "queueRank";
pub(super) const GENERATION: &str = "generation";
pub(super) const REMOVED: &str = "removed";
pub(super) const OPENS_AT: &str = "opensAt";
pub(super) const ADMIT_PER_MINUTE: &str = "admitPerMinute";
pub(super) const ADMISSION_SECONDS: &str = "admissionSeconds";
pub(super) const ORDERS_PER_ADMISSION: &str = "ordersPerAdmission";
pub(super) const INVENTORY: &str = "inventory";
pub(super) const LAST_ADMISSION_US: &str = "lastAdmissionUs";
pub(super) const RESUMED_US: &str = "resumedUs";
pub(super) const ADMITTED: &str = "admitted";
pub(super) const WAITING: &str = "waiting";
pub(super) const CHECKPOINTS: &str = "checkpoints";
pub(super) const VISITOR_ID: &str = "visitorId";
pub(super) const JOINED_AT: &str = "joinedAt";
pub(super) const ADMISSION_ID: &str = "admissionId";
pub(super) const ADMISSION_GIVEN_AT: &str = "admissionGivenAt";
pub(super) const ADMISSION_SLOT_US: &str = "admissionSlotUs";
pub(super) const ADMISSION_EXPIRES_AT: &str = "admissionExpiresAt";
pub(super) const ORDERS_ALLOWED: &str = "ordersAllowed";
pub(super) const ORDERS_OPENED: &str = "ordersOpened";
pub(super) const EVENTS: &str = "events";

pub const QUEUE_PK_PREFIX: &str = "QUEUE#";
const QUEUE_SK: &str = "QUEUE";
/// The queue's state, as put and as the admitter keeps it: `QUEUE#{ref}`.
pub(super) fn queue_key(event: &EventRef) -> Item {
    HashMap::from([
        (PK.into(), s(format!("{QUEUE_PK_PREFIX}{event}"))),
        (SK.into(), s(QUEUE_SK)),
    ])
}
/// Copy `copy` of the queue's state: `QUEUE#{ref}#{copy}`.
pub(super) fn queue_copy_key(event: &EventRef, copy: u8) -> Item {
    HashMap::from([
        (PK.into(), s(format!("{QUEUE_PK_PREFIX}{event}#{copy}"))),
        (SK.into(), s(QUEUE_SK)),
    ])
}
/// The events that have (or had) a queue, for the admitter to visit.
pub(super) fn queues_key() -> Item {
    HashMap::from([(PK.into(), s("QUEUES")), (SK.into(), s("QUEUES"))])
}
pub const VISITOR_PK_PREFIX: &str = "VISITOR#";
/// A visitor of an event's queue: `VISITOR#{ref}#{visitorId}`.
pub(super) fn visitor_key(event: &EventRef, visitor: &VisitorId) -> Item {
    HashMap::from([
        (
            PK.into(),
            s(format!("{VISITOR_PK_PREFIX}{event}#{visitor}")),
        ),
        (SK.into(), s("VISITOR")),
    ])
}
/// The visitor id an index entry's table key names.
pub(super) fn visitor_of_key(pk: &str) -> Option<VisitorId> {
    let rest = pk.strip_prefix(VISITOR_PK_PREFIX)?;
    VisitorId::parse(rest.split_once('#')?.1).ok()
}
/// The index partition of a waiting visitor: `QWAIT#{ref}#{generation}#{shard}`.
pub(super) fn queue_shard_key(event: &EventRef, generation: u64, shard: u8) -> String {
    format!("QWAIT#{event}#{generation}#{shard}")
}
/// A visitor's shard, from its id's own randomness.
pub fn visitor_shard(visitor: &VisitorId) -> u8 {
    Sha256::digest(visitor.as_str().as_bytes())[0] % QUEUE_SHARDS
}
/// What an admission has opened: `ADMISSION#{admissionId}`.
pub(super) fn admission_key(admission_id: &str) -> Item {
    HashMap::from([
        (PK.into(), s(format!("ADMISSION#{admission_id}"))),
        (SK.into(), s("ADMISSION")),
    ])
}

pub fn pending_shard(order: &OrderId) -> String {
    // Spread by the order id's own randomness (a v4 UUID): stable, no state.
    let h = Sha256::digest(order.as_str().as_bytes());
    shard_key(h[0] % PENDING_SHARDS)
}
pub const PENDING_SHARD_PREFIX: &str = "PENDING#";
pub(super) fn shard_key(shard: u8) -> String {
    format!("{PENDING_SHARD_PREFIX}{shard}")
}
pub(super) fn expired_order_ttl(expires_at: Millis) -> i64 {
    expires_at.0 / 1000 + EXPIRED_ORDER_RETENTION_SECONDS
}

#[cfg(test)]
mod tests {
    use super::*;

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    #[test]
    fn keys_and_shards() -> TestResult {
        let e = EventId::parse("gala")?;
        let seat = SeatId::parse("A-1-1")?;
        let r = EventRef::of(&e);
        assert_eq!(seat_key(&r, &seat)[SK], s("SEAT#A-1-1"));
        assert_eq!(seat_key(&r, &seat)[PK], s(format!("SEATS#{r}#A-1#0")));
        assert_eq!(event_key(&e)[PK], s(format!("EVENT#{r}")));
        // Seats 1-10 of a row share a block key, 11 starts the next; the
        // row part is everything before the last dash.
        let pk = |id: &str| -> Result<String, Box<dyn std::error::Error>> {
            Ok(seat_block_pk(&r, &SeatId::parse(id)?))
        };
        assert_eq!(pk("A-1-10")?, pk("A-1-1")?);
        assert_eq!(pk("A-1-11")?, format!("SEATS#{r}#A-1#1"));
        assert_eq!(pk("A-1-2-25")?, format!("SEATS#{r}#A-1-2#2"));
        assert_ne!(pk("A-2-1")?, pk("A-1-1")?);
        // Ids no plan makes still get a key (where nothing exists).
        assert_eq!(pk("A")?, format!("SEATS#{r}#A#-"));
        assert_eq!(pk("A-1-0")?, format!("SEATS#{r}#A-1-0#-"));
        assert_eq!(pk("A-x")?, format!("SEATS#{r}#A-x#-"));
        let order = OrderId::from_random(&e, 42);
        assert_eq!(
            order.event_ref().map(|r| event_pk(&r)),
            Some(event_key(&e)[PK].clone()),
            "an order id names its event's partition"
        );
        // The event item sorts before its seats, so a partition query
        // meets it first.
        assert!("EVENT" < "SEAT#");
        let shards: std::collections::HashSet<_> = (0..2000)
            .map(|_| {
                pending_shard(&OrderId::from_random(
                    &e,
                    crate::world::random_u128().unwrap_or_default(),
                ))
            })
            .collect();
        assert_eq!(
            shards.len(),
            PENDING_SHARDS as usize,
            "orders spread over every shard"
        );
        Ok(())
    }
}
