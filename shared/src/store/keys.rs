//! The table's schema: attribute names, the index, item keys and the
//! pending-index shards. Every key format is written here and only here.

use super::*;

/// Name of the sparse index of pending orders by expiry (template.yaml).
pub const PENDING_INDEX: &str = "PendingByExpiry";
/// Pending orders spread over this many index partitions so one event's
/// on-sale does not make a hot partition; the sweep queries each.
pub const PENDING_SHARDS: u8 = 8;
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
pub(super) const SECTIONS: &str = "sections";
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
pub(super) const SEAT_WRITES_IN_FLIGHT: usize = 32;


pub(super) fn event_pk(event: &EventRef) -> AttributeValue {
    s(format!("EVENT#{event}"))
}
pub(super) fn event_key(event: &EventId) -> Item {
    HashMap::from([(PK.into(), event_pk(&EventRef::of(event))), (SK.into(), s("EVENT"))])
}
pub(super) const SEAT_SK_PREFIX: &str = "SEAT#";
pub(super) fn seat_key(event: &EventRef, seat: &SeatId) -> Item {
    HashMap::from([(PK.into(), event_pk(event)), (SK.into(), s(format!("{SEAT_SK_PREFIX}{seat}")))])
}
/// The key of a seat item, for the test harness's raw reads (the store's
/// readers go through [`Store`]).
pub fn seat_item_key(event: &EventId, seat: &SeatId) -> HashMap<String, AttributeValue> {
    seat_key(&EventRef::of(event), seat)
}
pub(super) const ORDER_PK_PREFIX: &str = "ORDER#";
pub(super) fn order_key(order: &OrderId) -> Item {
    HashMap::from([(PK.into(), s(format!("{ORDER_PK_PREFIX}{order}"))), (SK.into(), s("ORDER"))])
}
pub(super) fn payment_key(payment: &PaymentId) -> Item {
    HashMap::from([(PK.into(), s(format!("PAYMENT#{payment}"))), (SK.into(), s("PAYMENT"))])
}
pub(super) fn pending_shard(order: &OrderId) -> String {
    // Spread by the order id's own randomness (a v4 UUID): stable, no state.
    let h = Sha256::digest(order.as_str().as_bytes());
    format!("PENDING#{}", h[0] % PENDING_SHARDS)
}
pub(super) fn shard_key(shard: u8) -> String {
    format!("PENDING#{shard}")
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
        assert_eq!(seat_key(&EventRef::of(&e), &seat)[SK], s("SEAT#A-1-1"));
        assert_eq!(seat_key(&EventRef::of(&e), &seat)[PK], event_key(&e)[PK], "an event's seats share its partition");
        assert_eq!(event_key(&e)[PK], s(format!("EVENT#{}", EventRef::of(&e))));
        let order = OrderId::generate(&e);
        assert_eq!(order.event_ref().map(|r| event_pk(&r)), Some(event_key(&e)[PK].clone()), "an order id names its event's partition");
        // The event item sorts before its seats, so a partition query
        // meets it first.
        assert!("EVENT" < "SEAT#");
        let shards: std::collections::HashSet<_> =
            (0..200).map(|_| pending_shard(&OrderId::generate(&e))).collect();
        assert_eq!(shards.len(), PENDING_SHARDS as usize, "orders spread over every shard");
        Ok(())
    }
}
