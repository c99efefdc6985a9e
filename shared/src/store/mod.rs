//! The DynamoDB store: the only module that talks to DynamoDB. Every key,
//! attribute name and condition expression lives here, and every condition
//! failure or transaction cancellation is turned into a typed domain error.
//!
//! Single table (see template.yaml, `SeatsTable`):
//!
//! | item    | PK                  | SK            | notes                                      |
//! |---------|---------------------|---------------|--------------------------------------------|
//! | event   | `EVENT#{ref}`       | `EVENT`       | eventId, name, holdSeconds, sections, ready |
//! | seat    | `EVENT#{ref}`       | `SEAT#{seat}` | ordinal, status, holderOrderId, holdExpiresAt |
//! | order   | `ORDER#{order}`     | `ORDER`       | status, expiresAt, holderDeadline, seats, … |
//! | payment | `PAYMENT#{payment}` | `PAYMENT`     | orderId: which order this payment is for    |
//!
//! `{ref}` is the event's [`EventRef`] (a hash of its id), which every order
//! id starts with: confirm addresses seats from the order id alone.
//!
//! The claim lives on the seat item; a seat's hold expiry is copied from its
//! order. Pending orders carry `pendingShard`/`pendingExpiresAt`, the keys of
//! the sparse `PendingByExpiry` index the sweep queries; the keys are removed
//! when an order leaves PENDING, so the index only ever holds pending work.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use aws_config::timeout::TimeoutConfig;
use aws_config::BehaviorVersion;
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::types::{
    AttributeValue, ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update,
};
use aws_sdk_dynamodb::Client;
use aws_smithy_http_client::tls::{rustls_provider::CryptoMode, Provider};
use aws_smithy_runtime_api::client::http::SharedHttpClient;
use sha2::{Digest, Sha256};

use crate::auth::HoldToken;
use crate::domain::{
    Event, EventId, EventRef, Millis, Order, OrderId, OrderStatus, PaymentId, RefundReason, RowId, Seat,
    SeatId, SeatSpec, SeatState, SectionId,
};
use crate::error::Error;

mod confirm;
mod failures;

pub use failures::ConfirmOutcome;
use failures::{cancellation, claim_error, release_error, ItemFailure};

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
const KIND: &str = "kind";
pub const EVENT_ID: &str = "eventId";
const NAME: &str = "name";
const HOLD_SECONDS: &str = "holdSeconds";
const SEAT_COUNT: &str = "seatCount";
const PLAN_HASH: &str = "planHash";
const READY: &str = "ready";
const SEAT_ID: &str = "seatId";
const SECTION_ID: &str = "sectionId";
const ROW: &str = "row";
const NUMBER: &str = "number";
pub const STATUS: &str = "status";
const HOLDER: &str = "holderOrderId";
const HOLD_EXPIRES_AT: &str = "holdExpiresAt";
const ORDER_ID: &str = "orderId";
const EXPIRES_AT: &str = "expiresAt";
const TOKEN_HASH: &str = "tokenHash";
pub const SEATS: &str = "seats";
const VERSION: &str = "version";
const PAYMENT_ID: &str = "paymentId";
const EXTRA_PAYMENT_IDS: &str = "refundPaymentIds";
const USER_ID: &str = "userId";
const CREATED_AT: &str = "createdAt";
const HOLDER_DEADLINE: &str = "holderDeadline";
const REFUND_REASON: &str = "refundReason";
const ORDINAL: &str = "ordinal";
const SECTIONS: &str = "sections";
pub const PENDING_SHARD: &str = "pendingShard";
pub const PENDING_EXPIRES_AT: &str = "pendingExpiresAt";
pub const TTL: &str = "ttl";

const SEAT_AVAILABLE: &str = "AVAILABLE";
const SEAT_HELD: &str = "HELD";
const SEAT_SOLD: &str = "SOLD";

// The seat-side expressions, one place each. Names: #status, #holder,
// #holdExp; values: :order, :now, :sold, :held, :available.

/// The claim condition (invariants 1–3): the seat exists, is not sold, and
/// is unheld, already this order's, or held by a hold that has expired —
/// compared with the writer's clock, so no sweep is needed first.
const SEAT_IS_FREE_FOR_ORDER: &str = "attribute_exists(PK) AND #status <> :sold AND \
     (attribute_not_exists(#holder) OR #holder = :order OR #holdExp < :now)";
/// Only the holding order's hold can be released (drop-seat, the sweep).
const SEAT_HELD_BY_ORDER: &str = "#holder = :order AND #status = :held";
const RELEASE_SEAT: &str = "SET #status = :available REMOVE #holder, #holdExp";

/// The pending index projects keys only: the sweep reads each order item
/// itself (the index's copy may lag), and a claim that changes an order's
/// seats does not also rewrite the index.
pub const PENDING_INDEX_PROJECTION: &str = "KEYS_ONLY";

/// Most items one `TransactWriteItems` may hold.
pub const MAX_TRANSACTION_ITEMS: usize = 100;
/// Conditional seat writes in flight while creating an event.
const SEAT_WRITES_IN_FLIGHT: usize = 32;

/// Failures talking to DynamoDB. SDK errors stay typed sources.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("DynamoDB {op} failed")]
    Sdk {
        op: &'static str,
        /// Throttled, timed out, unreachable or a 5xx: worth a retry later.
        unavailable: bool,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("could not build the DynamoDB {op} request")]
    Build {
        op: &'static str,
        #[source]
        source: aws_sdk_dynamodb::error::BuildError,
    },
    #[error("item {key} is malformed: {problem}")]
    Malformed { key: String, problem: String },
    #[error("DynamoDB {op} cancelled the transaction for a reason that is not retryable: {codes}")]
    Rejected { op: &'static str, codes: String },
}

impl StoreError {
    pub fn is_unavailable(&self) -> bool {
        match self {
            Self::Sdk { unavailable, .. } => *unavailable,
            _ => false,
        }
    }
}

const UNAVAILABLE_CODES: &[&str] = &[
    "ThrottlingException",
    "ProvisionedThroughputExceededException",
    "RequestLimitExceeded",
    "InternalServerError",
    "ServiceUnavailable",
    "TransactionInProgressException",
    // A plain write that met a transaction on its item: nothing was decided,
    // so it is retryable (the SDK does not retry it itself).
    "TransactionConflictException",
];

fn sdk_error<E, R>(op: &'static str, err: SdkError<E, R>) -> StoreError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    R: std::fmt::Debug + Send + Sync + 'static,
{
    let unavailable = match &err {
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) | SdkError::ResponseError(_) => true,
        SdkError::ServiceError(ctx) => {
            ctx.err().code().is_some_and(|c| UNAVAILABLE_CODES.contains(&c))
        }
        _ => false,
    };
    StoreError::Sdk { op, unavailable, source: Box::new(err) }
}

fn build_error(op: &'static str) -> impl FnOnce(aws_sdk_dynamodb::error::BuildError) -> StoreError {
    move |source| StoreError::Build { op, source }
}

type Item = HashMap<String, AttributeValue>;

fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}
fn n(v: impl ToString) -> AttributeValue {
    AttributeValue::N(v.to_string())
}
fn ss(values: &[&str]) -> AttributeValue {
    AttributeValue::Ss(values.iter().map(|v| (*v).to_owned()).collect())
}

fn event_pk(event: &EventRef) -> AttributeValue {
    s(format!("EVENT#{event}"))
}
fn event_key(event: &EventId) -> Item {
    HashMap::from([(PK.into(), event_pk(&EventRef::of(event))), (SK.into(), s("EVENT"))])
}
const SEAT_SK_PREFIX: &str = "SEAT#";
fn seat_key(event: &EventRef, seat: &SeatId) -> Item {
    HashMap::from([(PK.into(), event_pk(event)), (SK.into(), s(format!("{SEAT_SK_PREFIX}{seat}")))])
}
/// The key of a seat item, for the test harness's raw reads (the store's
/// readers go through [`Store`]).
pub fn seat_item_key(event: &EventId, seat: &SeatId) -> HashMap<String, AttributeValue> {
    seat_key(&EventRef::of(event), seat)
}
const ORDER_PK_PREFIX: &str = "ORDER#";
fn order_key(order: &OrderId) -> Item {
    HashMap::from([(PK.into(), s(format!("{ORDER_PK_PREFIX}{order}"))), (SK.into(), s("ORDER"))])
}
fn payment_key(payment: &PaymentId) -> Item {
    HashMap::from([(PK.into(), s(format!("PAYMENT#{payment}"))), (SK.into(), s("PAYMENT"))])
}
fn pending_shard(order: &OrderId) -> String {
    // Spread by the order id's own randomness (a v4 UUID): stable, no state.
    let h = Sha256::digest(order.as_str().as_bytes());
    format!("PENDING#{}", h[0] % PENDING_SHARDS)
}
fn shard_key(shard: u8) -> String {
    format!("PENDING#{shard}")
}
fn expired_order_ttl(expires_at: Millis) -> i64 {
    expires_at.0 / 1000 + EXPIRED_ORDER_RETENTION_SECONDS
}

/// Typed reads of item attributes; a missing or mistyped attribute is a
/// `Malformed` store error naming the item and the attribute.
struct Fields<'a> {
    item: &'a Item,
}

impl<'a> Fields<'a> {
    fn new(item: &'a Item) -> Self {
        Self { item }
    }
    fn key(&self) -> String {
        let get = |k| self.item.get(k).and_then(|v: &AttributeValue| v.as_s().ok()).map(String::as_str);
        format!("{}/{}", get(PK).unwrap_or("?"), get(SK).unwrap_or("?"))
    }
    fn malformed(&self, attr: &str) -> StoreError {
        StoreError::Malformed { key: self.key(), problem: format!("{attr} missing or mistyped") }
    }
    fn opt_s(&self, attr: &str) -> Option<&'a str> {
        self.item.get(attr).and_then(|v| v.as_s().ok()).map(String::as_str)
    }
    fn str(&self, attr: &str) -> Result<&'a str, StoreError> {
        self.opt_s(attr).ok_or_else(|| self.malformed(attr))
    }
    fn opt_i64(&self, attr: &str) -> Result<Option<i64>, StoreError> {
        match self.item.get(attr) {
            None => Ok(None),
            Some(v) => v
                .as_n()
                .ok()
                .and_then(|x| x.parse().ok())
                .map(Some)
                .ok_or_else(|| self.malformed(attr)),
        }
    }
    fn i64(&self, attr: &str) -> Result<i64, StoreError> {
        self.opt_i64(attr)?.ok_or_else(|| self.malformed(attr))
    }
    fn u32(&self, attr: &str) -> Result<u32, StoreError> {
        u32::try_from(self.i64(attr)?).map_err(|_| self.malformed(attr))
    }
    fn string_set(&self, attr: &str) -> Result<Vec<String>, StoreError> {
        match self.item.get(attr) {
            None => Ok(Vec::new()),
            Some(AttributeValue::Ss(v)) => Ok(v.clone()),
            Some(_) => Err(self.malformed(attr)),
        }
    }
    fn string_list(&self, attr: &str) -> Result<Vec<String>, StoreError> {
        match self.item.get(attr) {
            None => Ok(Vec::new()),
            Some(AttributeValue::L(v)) => {
                v.iter().map(|x| x.as_s().cloned().map_err(|_| self.malformed(attr))).collect()
            }
            Some(_) => Err(self.malformed(attr)),
        }
    }
    fn id<T>(&self, attr: &str, parse: fn(&str) -> Result<T, Error>) -> Result<T, StoreError> {
        parse(self.str(attr)?).map_err(|_| self.malformed(attr))
    }
}

fn parse_event(item: &Item) -> Result<Event, StoreError> {
    let f = Fields::new(item);
    Ok(Event {
        event_id: f.id(EVENT_ID, EventId::parse)?,
        name: f.str(NAME)?.to_owned(),
        hold_seconds: f.u32(HOLD_SECONDS)?,
        seat_count: f.u32(SEAT_COUNT)?,
        sections: f.string_list(SECTIONS)?.iter().map(|x| SectionId::parse(x).map_err(|_| f.malformed(SECTIONS))).collect::<Result<_, _>>()?,
    })
}

fn event_is_ready(item: &Item) -> bool {
    matches!(item.get(READY), Some(AttributeValue::Bool(true)))
}

fn parse_seat(item: &Item) -> Result<Seat, StoreError> {
    let f = Fields::new(item);
    let spec = SeatSpec {
        seat_id: f.id(SEAT_ID, SeatId::parse)?,
        section_id: f.id(SECTION_ID, SectionId::parse)?,
        row: f.id(ROW, RowId::parse)?,
        number: f.u32(NUMBER)?,
        ordinal: f.u32(ORDINAL)?,
    };
    let state = match f.str(STATUS)? {
        SEAT_AVAILABLE => SeatState::Available,
        SEAT_HELD => SeatState::Held {
            order: f.id(HOLDER, OrderId::parse)?,
            expires_at: Millis(f.i64(HOLD_EXPIRES_AT)?),
        },
        SEAT_SOLD => SeatState::Sold { order: f.id(HOLDER, OrderId::parse)? },
        _ => return Err(f.malformed(STATUS)),
    };
    Ok(Seat { spec, state })
}

/// An order as read, with its optimistic-concurrency version.
#[derive(Debug, Clone)]
pub struct StoredOrder {
    pub order: Order,
    pub version: i64,
}

pub(crate) fn parse_order(item: &Item) -> Result<StoredOrder, StoreError> {
    let f = Fields::new(item);
    let ids = |attr| -> Result<Vec<String>, StoreError> {
        let mut v = f.string_set(attr)?;
        v.sort();
        Ok(v)
    };
    let seats = ids(SEATS)?.iter().map(|x| SeatId::parse(x).map_err(|_| f.malformed(SEATS))).collect::<Result<_, _>>()?;
    let refund_payment_ids = ids(EXTRA_PAYMENT_IDS)?
        .iter()
        .map(|x| PaymentId::parse(x).map_err(|_| f.malformed(EXTRA_PAYMENT_IDS)))
        .collect::<Result<_, _>>()?;
    let expires_at = Millis(f.i64(EXPIRES_AT)?);
    let order = Order {
        order_id: f.id(ORDER_ID, OrderId::parse)?,
        event_id: f.id(EVENT_ID, EventId::parse)?,
        status: OrderStatus::parse(f.str(STATUS)?).ok_or_else(|| f.malformed(STATUS))?,
        expires_at,
        holder_deadline: Millis(f.i64(HOLDER_DEADLINE)?),
        created_at: Millis(f.i64(CREATED_AT)?),
        token_hash: f.str(TOKEN_HASH)?.to_owned(),
        seats,
        payment_id: f.opt_s(PAYMENT_ID).map(PaymentId::parse).transpose().map_err(|_| f.malformed(PAYMENT_ID))?,
        refund_payment_ids,
        refund_reason: f.opt_s(REFUND_REASON).map(|r| RefundReason::parse(r).ok_or_else(|| f.malformed(REFUND_REASON))).transpose()?,
        user_id: f.opt_s(USER_ID).map(str::to_owned),
    };
    Ok(StoredOrder { order, version: f.opt_i64(VERSION)?.unwrap_or(0) })
}

/// Result of a transaction: committed, or cancelled with per-item reasons.
pub(crate) enum Txn {
    Committed,
    Cancelled(Vec<Option<ItemFailure>>),
}

/// Where the next page of a query starts (opaque outside the store).
#[derive(Debug, Clone)]
pub struct PageCursor(Item);

/// The SDK timeouts [`Store::connect`] sets, public so the fault tests can
/// build a client that behaves like production's: connect 2 s, one attempt
/// 3 s, the whole operation (retries and backoff included) 8 s, inside the
/// API functions' 10 s Lambda timeout.
pub fn sdk_timeouts() -> TimeoutConfig {
    TimeoutConfig::builder()
        .connect_timeout(Duration::from_secs(2))
        .operation_attempt_timeout(Duration::from_secs(3))
        .operation_timeout(Duration::from_secs(8))
        .build()
}

/// The DynamoDB client and table, built once per process.
#[derive(Clone, Debug)]
pub struct Store {
    client: Client,
    table: Arc<str>,
}

/// The SDK's HTTP client: hyper + rustls on ring, trusting the platform's
/// root certificates (rustls-native-certs; /etc/ssl/certs on Lambda), and
/// plain HTTP too (DynamoDB Local). Built here rather than through the SDK's
/// `default-https-client` feature, which would link aws-lc-rs as a second
/// crypto library next to ring (see the workspace Cargo.toml).
pub fn http_client() -> SharedHttpClient {
    aws_smithy_http_client::Builder::new().tls_provider(Provider::Rustls(CryptoMode::Ring)).build_https()
}

impl Store {
    /// Loads the SDK configuration from the environment (region,
    /// credentials, `AWS_ENDPOINT_URL_DYNAMODB`) with deliberate timeouts:
    /// a hung store fails fast instead of burning the Lambda's timeout.
    pub async fn connect(table: &str) -> Self {
        let sdk = aws_config::defaults(BehaviorVersion::latest())
            .http_client(http_client())
            .timeout_config(sdk_timeouts())
            .load()
            .await;
        Self::new(Client::new(&sdk), table)
    }

    pub fn new(client: Client, table: &str) -> Self {
        Self { client, table: Arc::from(table) }
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    pub fn table_name(&self) -> &str {
        &self.table
    }

    // ----- events -------------------------------------------------------

    /// Creates an event and its seats, safe to retry and to run twice at
    /// once. The event item is written first with `ready = false` under
    /// `attribute_not_exists`, then each seat under `attribute_not_exists`
    /// (a retry never overwrites a seat, so a seat held or sold meanwhile
    /// stays so), then `ready = true`; nothing reads a not-ready event.
    /// The same plan again (same fingerprint) resumes an interrupted
    /// creation, or finds it complete and writes nothing; another plan under
    /// a taken id is `event-exists`.
    pub async fn create_event(&self, event: &Event, seats: &[SeatSpec]) -> Result<(), Error> {
        let fingerprint = plan_fingerprint(event, seats);
        let mut item = event_key(&event.event_id);
        item.extend([
            (KIND.into(), s("event")),
            (EVENT_ID.into(), s(event.event_id.as_str())),
            (NAME.into(), s(&event.name)),
            (HOLD_SECONDS.into(), n(event.hold_seconds)),
            (SEAT_COUNT.into(), n(event.seat_count)),
            (SECTIONS.into(), AttributeValue::L(event.sections.iter().map(|x| s(x.as_str())).collect())),
            (PLAN_HASH.into(), s(&fingerprint)),
            (READY.into(), AttributeValue::Bool(false)),
            (CREATED_AT.into(), n(Millis::now().0)),
        ]);
        let put = self
            .client
            .put_item()
            .table_name(&*self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(PK)")
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .send()
            .await;
        if let Err(err) = put {
            let existing = match err.as_service_error() {
                Some(aws_sdk_dynamodb::operation::put_item::PutItemError::ConditionalCheckFailedException(c)) => {
                    c.item().cloned()
                }
                _ => return Err(sdk_error("PutItem", err).into()),
            };
            let Some(existing) = existing.filter(|old| Fields::new(old).opt_s(PLAN_HASH) == Some(fingerprint.as_str())) else {
                return Err(Error::EventExists);
            };
            if event_is_ready(&existing) {
                return Ok(());
            }
            tracing::info!(event_id = %event.event_id, "resuming an unfinished event creation");
        }
        self.write_seats(&EventRef::of(&event.event_id), seats).await?;
        self.client
            .update_item()
            .table_name(&*self.table)
            .set_key(Some(event_key(&event.event_id)))
            .update_expression("SET #ready = :true")
            .expression_attribute_names("#ready", READY)
            .expression_attribute_values(":true", AttributeValue::Bool(true))
            .send()
            .await
            .map_err(|e| sdk_error("UpdateItem", e))?;
        Ok(())
    }

    /// Writes each seat that does not exist yet (`attribute_not_exists`), a
    /// bounded number at once. A seat that exists is left as it is.
    async fn write_seats(&self, event: &EventRef, seats: &[SeatSpec]) -> Result<(), Error> {
        let mut pending = seats.iter();
        let mut in_flight = tokio::task::JoinSet::new();
        loop {
            while in_flight.len() < SEAT_WRITES_IN_FLIGHT {
                let Some(seat) = pending.next() else { break };
                let mut item = seat_key(event, &seat.seat_id);
                item.extend([
                    (KIND.into(), s("seat")),
                    (SEAT_ID.into(), s(seat.seat_id.as_str())),
                    (SECTION_ID.into(), s(seat.section_id.as_str())),
                    (ROW.into(), s(seat.row.as_str())),
                    (NUMBER.into(), n(seat.number)),
                    (ORDINAL.into(), n(seat.ordinal)),
                    (STATUS.into(), s(SEAT_AVAILABLE)),
                ]);
                let put = self
                    .client
                    .put_item()
                    .table_name(&*self.table)
                    .set_item(Some(item))
                    .condition_expression("attribute_not_exists(PK)");
                in_flight.spawn(async move { conditional(put.send().await, "PutItem") });
            }
            match in_flight.join_next().await {
                None => return Ok(()),
                // Written, or there already: either way the seat exists.
                Some(Ok(result)) => {
                    result?;
                }
                Some(Err(join)) => {
                    return Err(StoreError::Sdk { op: "PutItem", unavailable: false, source: Box::new(join) }.into())
                }
            }
        }
    }

    /// A ready event, or `None`.
    pub async fn get_event(&self, event: &EventId) -> Result<Option<Event>, Error> {
        let out = self
            .client
            .get_item()
            .table_name(&*self.table)
            .set_key(Some(event_key(event)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| sdk_error("GetItem", e))?;
        match out.item {
            Some(item) if event_is_ready(&item) => Ok(Some(parse_event(&item)?)),
            _ => Ok(None),
        }
    }

    /// An event's seats (one section's, if given) in plan order: the event
    /// item, then one `Query` per page. `None` if the event does not exist
    /// or is still being created.
    pub async fn list_seats(&self, event: &EventId, section: Option<&SectionId>) -> Result<Option<Vec<Seat>>, Error> {
        let Some(found) = self.get_event(event).await? else { return Ok(None) };
        if section.is_some_and(|sec| !found.sections.contains(sec)) {
            return Err(Error::SectionNotFound);
        }
        let mut seats = Vec::with_capacity(found.seat_count as usize);
        let mut start: Option<Item> = None;
        loop {
            let q = self
                .client
                .query()
                .table_name(&*self.table)
                .consistent_read(true)
                .set_exclusive_start_key(start.take())
                .key_condition_expression("PK = :pk AND begins_with(SK, :prefix)")
                .expression_attribute_values(":pk", event_pk(&EventRef::of(event)));
            let q = match section {
                None => q.expression_attribute_values(":prefix", s(SEAT_SK_PREFIX)),
                // `begins_with` on `SEAT#{section}-` may also match a section
                // whose id extends this one (`A` vs `A-1`), so the section is
                // filtered exactly as well.
                Some(sec) => q
                    .filter_expression("#section = :section")
                    .expression_attribute_names("#section", SECTION_ID)
                    .expression_attribute_values(":prefix", s(format!("{SEAT_SK_PREFIX}{sec}-")))
                    .expression_attribute_values(":section", s(sec.as_str())),
            };
            let out = q.send().await.map_err(|e| sdk_error("Query", e))?;
            for item in out.items.unwrap_or_default() {
                seats.push(parse_seat(&item)?);
            }
            match out.last_evaluated_key {
                Some(k) => start = Some(k),
                None => break,
            }
        }
        seats.sort_by_key(|seat| seat.spec.ordinal);
        Ok(Some(seats))
    }

    // ----- orders -------------------------------------------------------

    /// Writes a new PENDING order (its id is fresh; the condition only
    /// guards against the impossible collision).
    pub async fn create_order(&self, order: &Order) -> Result<(), Error> {
        let mut item = order_key(&order.order_id);
        item.extend([
            (KIND.into(), s("order")),
            (ORDER_ID.into(), s(order.order_id.as_str())),
            (EVENT_ID.into(), s(order.event_id.as_str())),
            (STATUS.into(), s(OrderStatus::Pending.as_str())),
            (EXPIRES_AT.into(), n(order.expires_at.0)),
            (HOLDER_DEADLINE.into(), n(order.holder_deadline.0)),
            (TOKEN_HASH.into(), s(&order.token_hash)),
            (VERSION.into(), n(0)),
            (CREATED_AT.into(), n(order.created_at.0)),
            (PENDING_SHARD.into(), s(pending_shard(&order.order_id))),
            (PENDING_EXPIRES_AT.into(), n(order.expires_at.0)),
            (TTL.into(), n(expired_order_ttl(order.expires_at))),
        ]);
        if let Some(user) = &order.user_id {
            item.insert(USER_ID.into(), s(user));
        }
        let put = self
            .client
            .put_item()
            .table_name(&*self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(PK)")
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .send()
            .await;
        match put {
            Ok(_) => Ok(()),
            // The SDK retried a put whose first attempt had landed: the item
            // there is ours (same token hash), so the order exists as asked.
            Err(SdkError::ServiceError(ctx))
                if matches!(ctx.err(), aws_sdk_dynamodb::operation::put_item::PutItemError::ConditionalCheckFailedException(c)
                    if c.item().is_some_and(|old| Fields::new(old).opt_s(TOKEN_HASH) == Some(order.token_hash.as_str()))) =>
            {
                Ok(())
            }
            Err(e) => Err(sdk_error("PutItem", e).into()),
        }
    }

    /// One strongly consistent read of an order.
    pub async fn get_order(&self, order: &OrderId) -> Result<Option<StoredOrder>, Error> {
        let out = self
            .client
            .get_item()
            .table_name(&*self.table)
            .set_key(Some(order_key(order)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| sdk_error("GetItem", e))?;
        Ok(out.item.as_ref().map(parse_order).transpose()?)
    }

    async fn transact(&self, items: Vec<TransactWriteItem>) -> Result<Txn, StoreError> {
        match self.client.transact_write_items().set_transact_items(Some(items)).send().await {
            Ok(_) => Ok(Txn::Committed),
            Err(err) => match err.as_service_error() {
                Some(aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError::TransactionCanceledException(c)) => {
                    Ok(Txn::Cancelled(cancellation(c.cancellation_reasons())))
                }
                _ => Err(sdk_error("TransactWriteItems", err)),
            },
        }
    }

    fn update(&self, key: Item) -> aws_sdk_dynamodb::types::builders::UpdateBuilder {
        Update::builder()
            .table_name(&*self.table)
            .set_key(Some(key))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
    }

    /// get-seat: claims `seat` for the order and records it on the order in
    /// one transaction, with no read before it. The seat is claimable if it
    /// exists, is not sold, and is free, held by this order, or held by an
    /// order whose hold expired (`holdExpiresAt < :now`: no stale window).
    /// The order must match the token's hash, be PENDING, unexpired, and
    /// have room (or hold the seat already: re-claiming is idempotent).
    pub async fn claim_seat(
        &self,
        order: &OrderId,
        token: &HoldToken,
        seat: &SeatId,
        max_seats: u32,
        now: Millis,
    ) -> Result<(), Error> {
        let event = EventRef::of(token.event_id());
        let expires_at = token.expires_at();
        let claim = self
            .update(seat_key(&event, seat))
            .update_expression("SET #status = :held, #holder = :order, #holdExp = :exp")
            .condition_expression(SEAT_IS_FREE_FOR_ORDER)
            .expression_attribute_names("#status", STATUS)
            .expression_attribute_names("#holder", HOLDER)
            .expression_attribute_names("#holdExp", HOLD_EXPIRES_AT)
            .expression_attribute_values(":held", s(SEAT_HELD))
            .expression_attribute_values(":sold", s(SEAT_SOLD))
            .expression_attribute_values(":order", s(order.as_str()))
            .expression_attribute_values(":exp", n(expires_at.0))
            .expression_attribute_values(":now", n(now.0))
            .build()
            .map_err(build_error("TransactWriteItems"))?;
        let record = self
            .update(order_key(order))
            .update_expression("ADD #seats :seat, #version :one")
            // The holder's deadline, not expiresAt: the guard margin.
            .condition_expression(
                "attribute_exists(PK) AND #tokenHash = :tokenHash AND #status = :pending \
                 AND #expiresAt = :exp AND #deadline > :now \
                 AND (attribute_not_exists(#seats) OR size(#seats) < :max OR contains(#seats, :seatId))",
            )
            .expression_attribute_names("#deadline", HOLDER_DEADLINE)
            .expression_attribute_names("#seats", SEATS)
            .expression_attribute_names("#version", VERSION)
            .expression_attribute_names("#tokenHash", TOKEN_HASH)
            .expression_attribute_names("#status", STATUS)
            .expression_attribute_names("#expiresAt", EXPIRES_AT)
            .expression_attribute_values(":seat", ss(&[seat.as_str()]))
            .expression_attribute_values(":seatId", s(seat.as_str()))
            .expression_attribute_values(":one", n(1))
            .expression_attribute_values(":tokenHash", s(token.hash()))
            .expression_attribute_values(":pending", s(OrderStatus::Pending.as_str()))
            .expression_attribute_values(":exp", n(expires_at.0))
            .expression_attribute_values(":now", n(now.0))
            .expression_attribute_values(":max", n(max_seats))
            .build()
            .map_err(build_error("TransactWriteItems"))?;
        let items = vec![
            TransactWriteItem::builder().update(claim).build(),
            TransactWriteItem::builder().update(record).build(),
        ];
        let Txn::Cancelled(mut reasons) = self.transact(items).await? else { return Ok(()) };
        let order_failure = reasons.pop().flatten();
        let seat_failure = reasons.pop().flatten();
        Err(claim_error(seat_failure, order_failure, token, max_seats, now)?)
    }

    /// drop-seat: releases a seat this order holds and removes it from the
    /// order, in one transaction and one round trip.
    pub async fn release_seat(
        &self,
        order: &OrderId,
        token: &HoldToken,
        seat: &SeatId,
        now: Millis,
    ) -> Result<(), Error> {
        let release = self
            .update(seat_key(&EventRef::of(token.event_id()), seat))
            .update_expression(RELEASE_SEAT)
            .condition_expression(SEAT_HELD_BY_ORDER)
            .expression_attribute_names("#status", STATUS)
            .expression_attribute_names("#holder", HOLDER)
            .expression_attribute_names("#holdExp", HOLD_EXPIRES_AT)
            .expression_attribute_values(":available", s(SEAT_AVAILABLE))
            .expression_attribute_values(":held", s(SEAT_HELD))
            .expression_attribute_values(":order", s(order.as_str()))
            .build()
            .map_err(build_error("TransactWriteItems"))?;
        let record = self
            .update(order_key(order))
            .update_expression("DELETE #seats :seat ADD #version :one")
            .condition_expression(
                "attribute_exists(PK) AND #tokenHash = :tokenHash AND #status = :pending \
                 AND #expiresAt > :now AND contains(#seats, :seatId)",
            )
            .expression_attribute_names("#seats", SEATS)
            .expression_attribute_names("#version", VERSION)
            .expression_attribute_names("#tokenHash", TOKEN_HASH)
            .expression_attribute_names("#status", STATUS)
            .expression_attribute_names("#expiresAt", EXPIRES_AT)
            .expression_attribute_values(":seat", ss(&[seat.as_str()]))
            .expression_attribute_values(":seatId", s(seat.as_str()))
            .expression_attribute_values(":one", n(1))
            .expression_attribute_values(":tokenHash", s(token.hash()))
            .expression_attribute_values(":pending", s(OrderStatus::Pending.as_str()))
            .expression_attribute_values(":now", n(now.0))
            .build()
            .map_err(build_error("TransactWriteItems"))?;
        let items = vec![
            TransactWriteItem::builder().update(release).build(),
            TransactWriteItem::builder().update(record).build(),
        ];
        let Txn::Cancelled(mut reasons) = self.transact(items).await? else { return Ok(()) };
        let order_failure = reasons.pop().flatten();
        let seat_failure = reasons.pop().flatten();
        Err(release_error(seat_failure, order_failure, token, now)?)
    }

    // ----- expiry sweep -------------------------------------------------

    /// Orders in one shard of the pending index whose expiry has passed:
    /// one `Query` per page, reading only expired entries (no Scan). The
    /// index projects keys only; the sweep reads each order item itself.
    pub async fn expired_orders(
        &self,
        shard: u8,
        now: Millis,
        limit: i32,
        start: Option<PageCursor>,
    ) -> Result<(Vec<OrderId>, Option<PageCursor>), Error> {
        let out = self
            .client
            .query()
            .table_name(&*self.table)
            .index_name(PENDING_INDEX)
            .key_condition_expression("#shard = :shard AND #pendingExp < :now")
            .expression_attribute_names("#shard", PENDING_SHARD)
            .expression_attribute_names("#pendingExp", PENDING_EXPIRES_AT)
            .expression_attribute_values(":shard", s(shard_key(shard)))
            .expression_attribute_values(":now", n(now.0))
            .limit(limit)
            .set_exclusive_start_key(start.map(|c| c.0))
            .send()
            .await
            .map_err(|e| sdk_error("Query", e))?;
        let next = out.last_evaluated_key.map(PageCursor);
        let orders = out
            .items
            .unwrap_or_default()
            .iter()
            .map(|item| {
                let f = Fields::new(item);
                f.str(PK)?
                    .strip_prefix(ORDER_PK_PREFIX)
                    .and_then(|id| OrderId::parse(id).ok())
                    .ok_or_else(|| f.malformed(PK))
            })
            .collect::<Result<_, StoreError>>()?;
        Ok((orders, next))
    }

    /// Releases `seat` only if it is still HELD by `order` (a seat already
    /// re-claimed or sold is left alone). True if this call released it.
    pub async fn release_expired_hold(&self, event: &EventRef, seat: &SeatId, order: &OrderId) -> Result<bool, Error> {
        let result = self
            .client
            .update_item()
            .table_name(&*self.table)
            .set_key(Some(seat_key(event, seat)))
            .update_expression(RELEASE_SEAT)
            .condition_expression(SEAT_HELD_BY_ORDER)
            .expression_attribute_names("#status", STATUS)
            .expression_attribute_names("#holder", HOLDER)
            .expression_attribute_names("#holdExp", HOLD_EXPIRES_AT)
            .expression_attribute_values(":available", s(SEAT_AVAILABLE))
            .expression_attribute_values(":held", s(SEAT_HELD))
            .expression_attribute_values(":order", s(order.as_str()))
            .send()
            .await;
        conditional(result, "UpdateItem")
    }

    /// Takes a swept order out of the pending index, if it is still as
    /// read (`version`): a PENDING one becomes EXPIRED (only if expired),
    /// another keeps its status. True if this call made the change (a
    /// concurrent sweep or confirm may have got there first).
    pub async fn retire_expired_order(&self, stored: &StoredOrder, now: Millis) -> Result<bool, Error> {
        let order = &stored.order;
        let base = self
            .client
            .update_item()
            .table_name(&*self.table)
            .set_key(Some(order_key(&order.order_id)))
            .expression_attribute_names("#status", STATUS)
            .expression_attribute_names("#version", VERSION)
            .expression_attribute_names("#shard", PENDING_SHARD)
            .expression_attribute_names("#pendingExp", PENDING_EXPIRES_AT)
            .expression_attribute_values(":seen", s(order.status.as_str()))
            .expression_attribute_values(":version", n(stored.version))
            .expression_attribute_values(":one", n(1));
        let request = if order.status == OrderStatus::Pending {
            base.update_expression("SET #status = :expired, #version = #version + :one REMOVE #shard, #pendingExp")
                .condition_expression("#status = :seen AND #version = :version AND #expiresAt < :now")
                .expression_attribute_names("#expiresAt", EXPIRES_AT)
                .expression_attribute_values(":expired", s(OrderStatus::Expired.as_str()))
                .expression_attribute_values(":now", n(now.0))
        } else {
            base.update_expression("SET #version = #version + :one REMOVE #shard, #pendingExp")
                .condition_expression("#status = :seen AND #version = :version AND attribute_exists(#shard)")
        };
        conditional(request.send().await, "UpdateItem")
    }
}

/// Ok(true) if a conditional single-item write happened, Ok(false) if its
/// condition failed.
fn conditional<T, E, R>(result: Result<T, SdkError<E, R>>, op: &'static str) -> Result<bool, Error>
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    R: std::fmt::Debug + Send + Sync + 'static,
{
    match result {
        Ok(_) => Ok(true),
        Err(SdkError::ServiceError(ctx)) if ctx.err().code() == Some("ConditionalCheckFailedException") => Ok(false),
        Err(e) => Err(sdk_error(op, e).into()),
    }
}

/// Identifies an event's plan, so a retried create-event can resume.
fn plan_fingerprint(event: &Event, seats: &[SeatSpec]) -> String {
    let mut h = Sha256::new();
    h.update(event.name.as_bytes());
    h.update([0]);
    h.update(event.hold_seconds.to_be_bytes());
    for seat in seats {
        h.update(seat.seat_id.as_str().as_bytes());
        h.update([0]);
        h.update(seat.section_id.as_str().as_bytes());
        h.update([0]);
        h.update(seat.row.as_str().as_bytes());
        h.update([0]);
    }
    hex::encode(h.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tests use `?` rather than unwrap: a failure reports the error.
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

    #[test]
    fn sdk_timeouts_fit_the_lambda_timeout() {
        // The API functions time out at 10 s (template.yaml): a hung store
        // must give up first, so the client gets a 503, not a gateway error.
        let t = sdk_timeouts();
        assert_eq!(t.connect_timeout(), Some(Duration::from_secs(2)));
        assert_eq!(t.operation_attempt_timeout(), Some(Duration::from_secs(3)));
        assert_eq!(t.operation_timeout(), Some(Duration::from_secs(8)));
    }
}
