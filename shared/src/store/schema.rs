//! The table's vocabulary: its keys, the attribute names several items
//! share, its indexes and DynamoDB's limits the store plans around. What
//! one item alone carries is in its module under `items/`.

// Attribute names.
pub const PK: &str = "PK";

pub const SK: &str = "SK";

pub(in crate::store) const KIND: &str = "kind";

pub const EVENT_ID: &str = "eventId";

pub(in crate::store) const SECTION_ID: &str = "sectionId";

pub(in crate::store) const SEAT_ID: &str = "seatId";

pub const STATUS: &str = "status";

pub(in crate::store) const ORDER_ID: &str = "orderId";

pub(in crate::store) const EXPIRES_AT: &str = "expiresAt";

pub(in crate::store) const TOKEN_HASH: &str = "tokenHash";

pub const SEATS: &str = "seats";

pub(in crate::store) const VERSION: &str = "version";

pub(in crate::store) const PAYMENT_ID: &str = "paymentId";

pub(in crate::store) const CREATED_AT: &str = "createdAt";

pub const TTL: &str = "ttl";

/// On a seat item or a general-admission bucket: how many seat-map parts,
/// or buckets, its section has.
pub(in crate::store) const SECTION_PARTS: &str = "sectionParts";

/// Name of the sparse index of pending orders by expiry (template.yaml).
pub const PENDING_INDEX: &str = "PendingByExpiry";

/// The pending index projects keys only: the sweep reads each order item
/// itself (the index's copy may lag), and a claim that changes an order's
/// seats does not also rewrite the index.
pub const PENDING_INDEX_PROJECTION: &str = "KEYS_ONLY";

/// Name of the index of waiting visitors by join time (template.yaml).
pub const QUEUE_INDEX: &str = "QueueByJoin";

/// Name of the index of waiting visitors by rank (template.yaml): the
/// admitter reads the front of the queue from it.
pub const QUEUE_RANK_INDEX: &str = "QueueByRank";

/// Name of the index of drawn visitors by draw key (template.yaml): the
/// draw list.
pub const QUEUE_DRAW_INDEX: &str = "QueueByDraw";

/// Most items one `TransactWriteItems` may hold.
pub const MAX_TRANSACTION_ITEMS: usize = 100;

/// Most items one `BatchWriteItem` may put.
pub const BATCH_WRITE_ITEMS: usize = 25;

pub const PENDING_SHARD: &str = "pendingShard";

pub const PENDING_EXPIRES_AT: &str = "pendingExpiresAt";

/// When an order, seat or general-admission item last changed in a way
/// the events out tell (ms since the epoch): every such write sets it to
/// its own `now` ([`super::expression::Expression::stamped`]), so an
/// event's `at` is the change's time to the millisecond, not the stream
/// record's approximate one (DynamoDB Streams rounds it to the minute).
pub const CHANGED_AT: &str = "changedAt";
