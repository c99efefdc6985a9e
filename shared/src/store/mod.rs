//! The DynamoDB store: the only module that talks to DynamoDB. Every key,
//! attribute name and condition expression lives here, and every condition
//! failure or transaction cancellation is turned into a typed domain error.
//!
//! Single table (see template.yaml, `SeatsTable`):
//!
//! | item    | PK                  | SK            | notes                                      |
//! |---------|---------------------|---------------|--------------------------------------------|
//! | event   | `EVENT#{ref}`       | `EVENT`       | the head: eventId, holdSeconds, seatCount, ready (under 1 KB) |
//! | plan    | `PLAN#{ref}#{copy}` | `PLAN#{fingerprint}#{nnnn}` | name and plan in chunks; `PLAN_REPLICAS` copies |
//! | seat    | `SEATS#{ref}#{section}-{row}#{block}` | `SEAT#{seat}` | status, holderOrderId, holdExpiresAt |
//! | seat map | `MAP#{ref}#{section}-{row}#{n}` | `MAP` | `s{number}`: `S` or `H{expiresAt}` per unavailable seat, `version` (from the stream) |
//! | free runs | `RUNS#{ref}#{item}` | `RUNS` | `{section}-{row}` = `{v, l, u}` per single-part row, the event's rows dealt over items of under 1 KB (16 at least, or one a row): its longest free run, until when (from the stream) |
//! | order   | `ORDER#{order}`     | `ORDER`       | status, expiresAt, holderDeadline, seats, … |
//! | payment | `PAYMENT#{payment}` | `PAYMENT`     | orderId: which order this payment is for    |
//! | GA bucket | `GA#{ref}#{section}#{n}` | `GA` | capacity, sold, free, `hold#{order}` = `{q, e}` per holder |
//! | sold out | `SOLDOUT#{ref}` | `EVENT` / `SECTION#{section}` | the sections sold out for good / a section's full parts (from the stream) |
//!
//! `{ref}` is the event's [`EventRef`] (a hash of its id), which every order
//! id starts with: confirm addresses seats from the order id alone. Seats
//! are keyed by block (ten consecutive numbers of one row, see
//! [`SEAT_BLOCK_SIZE`]), so an on-sale spreads over many partition keys.
//!
//! The claim lives on the seat item; a seat's hold expiry is copied from its
//! order. Pending orders carry `pendingShard`/`pendingExpiresAt`, the keys of
//! the sparse `PendingByExpiry` index the sweep queries; the keys are removed
//! when an order leaves PENDING, so the index only ever holds pending work.
//!
//! Where each rule lives (each file imports what it uses by name, so its
//! dependencies read from its head):
//! - `items/`: one module per item type above, each holding its key, its
//!   codec and its expressions (every condition, update and key condition
//!   that writes it, carrying its own names and values);
//! - `schema`: the table's keys, the attribute names several items share,
//!   the indexes; `value`: attribute values and typed reads of an item;
//! - `expression`: what an expression is, and the one expiry boundary
//!   (`live!`, `expired!`);
//! - `errors`: SDK failures, which are 503; `failures`: cancelled
//!   transactions decided (pure, unit-tested);
//! - `events`: create-event (retry-safe, resumable) and listing seats;
//!   `event_reads`: the event's head and plan (an instance keeps them);
//! - `orders`: creating, reading, extending and cancelling orders;
//!   `holds`: get-seat, drop-seat;
//!   `best_available`: reading rows and claiming a block; `ga`:
//!   general-admission buckets; `buyers`: the buyer limit in a claim;
//! - `confirm`: confirm's writes;
//! - `sweep`: the sweep's calls; `seat_map`: the stream-fed projection
//!   and availability's read; `sold_out`: what the stream saw sold out for
//!   good; `stream`: decoding stream records; `seeding`: the bench's
//!   sold-out show, sold at once.

use crate::error::Error;
use aws_config::timeout::TimeoutConfig;
use aws_config::BehaviorVersion;
use aws_sdk_dynamodb::Client;
use aws_smithy_runtime_api::client::http::SharedHttpClient;
use errors::{build_error, sdk_error};
use expression::Expression;
use items::order::parse_order;
use std::sync::Arc;
use std::time::Duration;
use value::{Fields, Item};

use aws_sdk_dynamodb::types::{
    ConditionCheck, Delete, Put, ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update,
};
use aws_smithy_http_client::tls::{rustls_provider::CryptoMode, Provider};

// First: its `live!` and `expired!` are used by every file after it.
#[macro_use]
mod expression;
mod best_available;
mod buyers;
mod confirm;
mod entries;
mod errors;
mod event_reads;
mod events;
mod failures;
mod fan_out;
mod free_runs;
mod frees;
mod ga;
mod holds;
mod items;
mod offers;
mod orders;
mod positions;
mod projector;
mod queue;
mod queue_counts;
mod registry;
mod returns;
mod schema;
mod seat_map;
mod seeding;
mod sold_out;
mod stream;
mod sweep;
mod value;
mod visitors;
mod waitlist;

pub use best_available::{BlockClaim, BlockReport};
pub use confirm::Leftovers;
pub use entries::{entry_index_shards, index_shards, EntryPage, IndexHead};
pub use errors::StoreError;
pub use events::SEAT_WRITES_IN_FLIGHT;
pub use failures::ConfirmOutcome;
use failures::{cancellation, ItemFailure};
pub use fan_out::{in_order, FanOut};
pub use free_runs::SectionRuns;
pub use ga::{BucketChange, PlacesChange, PlacesReport};
pub use holds::{ClaimReport, Release, Released, SeatClaim, SeatRead};
pub use items::bucket::{ga_bucket_item_key, GA_PK_PREFIX};
pub use items::buyer::{BUYER_PK_PREFIX, BUYER_RECORD_ATTRIBUTES, BUYER_SK};
pub use items::entry::{
    is_join_key, waiting_index_partitions, ENTRY_BUYER_PK_PREFIX, ENTRY_LIST_PK_PREFIX,
    ENTRY_PK_PREFIX, ENTRY_SHARDS, WAITING_INDEX_PK_PREFIX,
};
pub use items::event::{event_item_key, EVENT_PK_PREFIX, EVENT_SK, PLAN_PK_PREFIX, PLAN_REPLICAS};
pub use items::order::{
    pending_shard, StoredOrder, EXPIRED_ORDER_RETENTION_SECONDS, ORDER_CREATE_ATTRIBUTES,
    ORDER_PK_PREFIX, PENDING_SHARDS, PENDING_SHARD_PREFIX,
};
pub use items::positions::positions_copy_keys;
pub use items::queue::{QUEUE_COPIES, QUEUE_PK_PREFIX};
pub use items::resale::{listed_places_item_key, resale_offerable, RESALE_ATTRIBUTES};
pub use items::returns::{RESOLD_ATTRIBUTES, RETURN_ATTRIBUTES, REVERT_ATTRIBUTES};
pub use items::seat::{seat_item_key, SEAT_BLOCK_SIZE, SEAT_PK_PREFIX};
pub use items::seat_map::{RUNS_PK_PREFIX, SOLD_OUT_PK_PREFIX};
pub use items::visitor::{
    visitor_item_key, visitor_shard, ADMISSION_SLOT_US, DRAW_KEY, DRAW_SHARD, QUEUE_JOIN,
    QUEUE_RANK, QUEUE_SHARD, VISITOR_PK_PREFIX, VISITOR_RETENTION_SECONDS,
    WAITING_RETENTION_SECONDS,
};
pub use offers::{OfferLoss, OfferWrite};
pub use positions::{PositionsWrite, StoredPositions};
pub use queue::{StoredQueue, QUEUE_CACHE_MS};
pub use schema::{
    BATCH_WRITE_ITEMS, EVENT_ID, MAX_TRANSACTION_ITEMS, PENDING_EXPIRES_AT, PENDING_INDEX,
    PENDING_INDEX_PROJECTION, PENDING_SHARD, PK, QUEUE_DRAW_INDEX, QUEUE_INDEX, QUEUE_RANK_INDEX,
    SEATS, SK, STATUS, TTL,
};
pub use seat_map::{seat_change, MapRead, Rows, SeatChange, SEAT_MAP_CACHE_MS};
pub use seeding::seeded_visitor;
pub use sold_out::{
    bucket_freed, bucket_record, full_bucket, FullBucket, PartShape, SOLD_OUT_CACHE_MS,
};
pub use stream::{item_change, RecordError};
pub use sweep::PageCursor;
pub use visitors::{IndexedVisitor, VISITOR_ITEM_ATTRIBUTES};
pub use waitlist::{Listing, StoredWaitlist, WAITLIST_PK_PREFIX};

impl Store {
    /// Every item `condition` (a key condition) selects, page after page,
    /// each read by `parse` as its page comes (a long read keeps what it
    /// parsed, not the items).
    async fn query_every_page<T>(
        &self,
        condition: Expression,
        consistent: bool,
        parse: impl Fn(&Item) -> Result<T, StoreError>,
    ) -> Result<Vec<T>, Error> {
        let mut found = Vec::new();
        let mut start: Option<Item> = None;
        loop {
            let query = self
                .client
                .query()
                .table_name(&*self.table)
                .consistent_read(consistent)
                .set_exclusive_start_key(start.take());
            let page = condition
                .clone()
                .on_query(query)
                .send()
                .await
                .map_err(|e| errors::sdk_error("Query", e))?;
            for item in page.items() {
                found.push(parse(item)?);
            }
            match page.last_evaluated_key {
                Some(key) if !key.is_empty() => start = Some(key),
                _ => return Ok(found),
            }
        }
    }

    /// Puts each of `copies` (a state's copies, at `version`) unless the
    /// copy there is as new: whether every copy now has it or a newer one
    /// (one left behind is the writer's to copy again).
    async fn put_copies(&self, copies: Vec<Item>, version: i64, what: &'static str) -> bool {
        let writes = copies.into_iter().map(|item| {
            let put = self
                .client
                .put_item()
                .table_name(&*self.table)
                .set_item(Some(item));
            items::older_copy(version).on_put_item(put).send()
        });
        let mut all = true;
        for result in futures_util::future::join_all(writes).await {
            if let Err(e) = result {
                if !errors::is_condition_failure(&e) {
                    tracing::warn!(error = %crate::error::chain(&e), what, "a copy was not updated");
                    all = false;
                }
            }
        }
        all
    }

    /// Writes `item` unless one is there already (`Ok(false)` then): a
    /// retried creation leaves what it wrote alone. The request is built
    /// now and sent when the future is awaited (it owns what it needs).
    fn put_new(&self, item: Item) -> impl std::future::Future<Output = Result<bool, Error>> {
        let put = self
            .client
            .put_item()
            .table_name(&*self.table)
            .set_item(Some(item));
        let put = Expression::new_item().on_put_item(put);
        async move { errors::conditional(put.send().await, "PutItem") }
    }
}

/// Result of a transaction: committed, or cancelled with per-item reasons.
pub(crate) enum Txn {
    Committed,
    Cancelled(Vec<Option<ItemFailure>>),
}

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

/// The DynamoDB client and table, built once per process. It remembers
/// nothing between requests and reports what it saw: an instance's memory
/// is [`crate::memory::Memory`], which the handlers consult around its
/// calls.
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
    aws_smithy_http_client::Builder::new()
        .tls_provider(Provider::Rustls(CryptoMode::Ring))
        .build_https()
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
        Self {
            client,
            table: Arc::from(table),
        }
    }

    /// The same table over `client` (another instance's, recorded or
    /// faulty).
    pub fn with_client(&self, client: Client) -> Self {
        Self {
            client,
            table: self.table.clone(),
        }
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    pub fn table_name(&self) -> &str {
        &self.table
    }

    pub(super) async fn transact(&self, items: Vec<TransactWriteItem>) -> Result<Txn, StoreError> {
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

    /// One strongly consistent read of an item.
    pub(super) async fn get_consistent(&self, key: Item) -> Result<Option<Item>, StoreError> {
        self.get_item(key, true).await
    }

    /// One read of an item: eventually consistent, then strongly
    /// consistent when that finds nothing (an item written a moment ago),
    /// or strongly consistent at once when `consistent` asks for it.
    pub(super) async fn get_settled(
        &self,
        key: Item,
        consistent: bool,
    ) -> Result<Option<Item>, StoreError> {
        if !consistent {
            if let Some(item) = self.get_item(key.clone(), false).await? {
                return Ok(Some(item));
            }
        }
        self.get_consistent(key).await
    }

    /// One read of an item, strongly consistent or not.
    pub(super) async fn get_item(
        &self,
        key: Item,
        consistent: bool,
    ) -> Result<Option<Item>, StoreError> {
        let out = self
            .client
            .get_item()
            .table_name(&*self.table)
            .set_key(Some(key))
            .consistent_read(consistent)
            .send()
            .await
            .map_err(|e| sdk_error("GetItem", e))?;
        Ok(out.item)
    }

    /// One UpdateItem of `key` under `expression`: whether its condition
    /// held (`false`: the item moved; throttling and outages are errors).
    async fn update_if(&self, key: Item, expression: Expression) -> Result<bool, Error> {
        let request = self
            .client
            .update_item()
            .table_name(&*self.table)
            .set_key(Some(key));
        let sent = expression.on_update_item(request).send().await;
        errors::conditional(sent, "UpdateItem")
    }

    pub(super) fn update(&self, key: Item) -> aws_sdk_dynamodb::types::builders::UpdateBuilder {
        Update::builder()
            .table_name(&*self.table)
            .set_key(Some(key))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
    }

    /// A transaction's `Put` of `item` under `condition`.
    fn txn_put(&self, item: Item, condition: Expression) -> Result<TransactWriteItem, Error> {
        let put = condition
            .on_put(
                Put::builder()
                    .table_name(&*self.table)
                    .set_item(Some(item))
                    .return_values_on_condition_check_failure(
                        ReturnValuesOnConditionCheckFailure::AllOld,
                    ),
            )
            .build()
            .map_err(build_error("TransactWriteItems"))?;
        Ok(TransactWriteItem::builder().put(put).build())
    }

    /// A transaction's `Delete` of the item at `key`, unconditioned.
    fn txn_delete(&self, key: Item) -> Result<TransactWriteItem, Error> {
        let delete = Delete::builder()
            .table_name(&*self.table)
            .set_key(Some(key))
            .build()
            .map_err(build_error("TransactWriteItems"))?;
        Ok(TransactWriteItem::builder().delete(delete).build())
    }

    /// A transaction's `Delete` of the item at `key` under `condition`.
    fn txn_delete_if(&self, key: Item, condition: Expression) -> Result<TransactWriteItem, Error> {
        let delete = condition
            .on_delete(
                Delete::builder()
                    .table_name(&*self.table)
                    .set_key(Some(key))
                    .return_values_on_condition_check_failure(
                        ReturnValuesOnConditionCheckFailure::AllOld,
                    ),
            )
            .build()
            .map_err(build_error("TransactWriteItems"))?;
        Ok(TransactWriteItem::builder().delete(delete).build())
    }

    /// A transaction's item that only checks `condition` on `key` (the
    /// item as it was comes back when it fails).
    fn txn_check(&self, key: Item, condition: Expression) -> Result<TransactWriteItem, Error> {
        let check = condition
            .on_condition_check(
                ConditionCheck::builder()
                    .table_name(&*self.table)
                    .set_key(Some(key))
                    .return_values_on_condition_check_failure(
                        ReturnValuesOnConditionCheckFailure::AllOld,
                    ),
            )
            .build()
            .map_err(build_error("TransactWriteItems"))?;
        Ok(TransactWriteItem::builder().condition_check(check).build())
    }

    /// A transaction's `Update` of the item at `key`, by `expression`.
    fn txn_update(&self, key: Item, expression: Expression) -> Result<TransactWriteItem, Error> {
        let update = expression
            .on_update(self.update(key))
            .build()
            .map_err(build_error("TransactWriteItems"))?;
        Ok(TransactWriteItem::builder().update(update).build())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
