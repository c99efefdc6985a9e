//! General admission's store calls: buckets written with the event, read
//! in batches, and hold-ga's one transaction (the order and the buckets it
//! takes from or gives back to). See `domain::ga` for the rules.

use super::codec::{n, parse_bucket, s, ss, StoredOrder};
use super::errors::{build_error, conditional, StoreError};
use super::failures::unavailable_in;
use super::keys::{
    ga_bucket_key, hold_attribute, order_key, place_member, CAPACITY, EVENT_ID, FREE,
    HOLDER_DEADLINE, HOLD_EXPIRY, HOLD_QUANTITY, KIND, SEATS, SECTION_ID, SOLD, STATUS, TOKEN_HASH,
    VERSION,
};
use super::seat_map::BATCH_GET_KEYS;
use super::{Store, Txn};
use crate::auth::HoldToken;
use crate::domain::ga::{bucket_capacity, bucket_count, Take};
use crate::domain::ga::{Bucket, HeldPlaces, PlaceHold};
use crate::domain::{Event, EventId, EventRef, Millis, Order, OrderId, OrderStatus, SectionId};
use crate::error::Error;
use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem};
use std::collections::HashMap;

/// Bucket writes in flight while an event is created.
const BUCKET_WRITES_IN_FLIGHT: usize = 16;

/// What hold-ga asks of one bucket.
#[derive(Debug, Clone)]
pub enum BucketChange {
    /// Take places (after removing expired holds of others).
    Take(Take),
    /// Give back places: the order had `had` there and keeps `keeps`.
    Give { bucket: u32, had: u32, keeps: u32 },
}

impl Store {
    /// Writes every bucket of the event's general-admission sections that
    /// does not exist yet (a retried creation leaves existing ones alone).
    pub(super) async fn write_ga_buckets(&self, event: &Event) -> Result<(), Error> {
        let event_ref = EventRef::of(&event.event_id);
        let mut items = Vec::new();
        for (section, capacity) in event.ga_sections() {
            for index in 0..bucket_count(capacity) {
                let mut item = ga_bucket_key(&event_ref, section, index);
                let places = bucket_capacity(capacity, index);
                item.extend([
                    (KIND.into(), s("ga-bucket")),
                    // Its event and section, so a stream record of it stands alone.
                    (EVENT_ID.into(), s(event.event_id.as_str())),
                    (SECTION_ID.into(), s(section.as_str())),
                    (CAPACITY.into(), n(places)),
                    (SOLD.into(), n(0)),
                    (FREE.into(), n(places)),
                ]);
                items.push(item);
            }
        }
        let mut items = items.into_iter();
        let mut in_flight = tokio::task::JoinSet::new();
        loop {
            while in_flight.len() < BUCKET_WRITES_IN_FLIGHT {
                let Some(item) = items.next() else { break };
                let put = self
                    .client
                    .put_item()
                    .table_name(&*self.table)
                    .set_item(Some(item))
                    .condition_expression("attribute_not_exists(PK)");
                in_flight.spawn(async move { conditional(put.send().await, "PutItem") });
            }
            if in_flight.is_empty() {
                return Ok(());
            }
            match in_flight.join_next().await {
                None => return Ok(()),
                Some(Ok(written)) => {
                    written?;
                }
                Some(Err(join)) => {
                    return Err(StoreError::Sdk {
                        op: "PutItem",
                        unavailable: false,
                        source: Box::new(join),
                    }
                    .into())
                }
            }
        }
    }

    /// Buckets `indexes` of a general-admission section (missing ones are
    /// left out). Eventually consistent unless asked: the writes' conditions
    /// decide, a read only chooses.
    pub async fn read_buckets(
        &self,
        event: &EventId,
        section: &SectionId,
        indexes: &[u32],
        consistent: bool,
    ) -> Result<Vec<Bucket>, Error> {
        let event_ref = EventRef::of(event);
        let mut buckets = Vec::with_capacity(indexes.len());
        for chunk in indexes.chunks(BATCH_GET_KEYS) {
            let keys = chunk
                .iter()
                .map(|&i| ga_bucket_key(&event_ref, section, i))
                .collect();
            for item in self.batch_get(keys, consistent).await? {
                buckets.push(parse_bucket(&item)?);
            }
        }
        Ok(buckets)
    }

    /// hold-ga's transaction: the order (as read: its version, still PENDING
    /// and outside its guard margin) gets or loses its place members for
    /// `section`, and each bucket takes or gives back places under
    /// conditions that keep sold + live holds within its capacity.
    /// `Ok(false)`: something changed since it was read; read and try again.
    pub async fn change_places(
        &self,
        stored: &StoredOrder,
        token: &HoldToken,
        section: &SectionId,
        changes: &[BucketChange],
        now: Millis,
    ) -> Result<bool, Error> {
        let order = &stored.order;
        let event_ref = EventRef::of(&order.event_id);
        let held = |bucket: u32| {
            order
                .places
                .iter()
                .find(|p| &p.section == section && p.bucket == bucket)
                .map_or(0, |p| p.quantity)
        };
        let (mut added, mut removed) = (Vec::new(), Vec::new());
        let mut items = Vec::with_capacity(changes.len() + 1);
        for change in changes {
            let update = match change {
                BucketChange::Take(take) => {
                    let had = held(take.bucket);
                    added.extend(
                        (had + 1..=had + take.places)
                            .map(|k| place_member(section, take.bucket, k)),
                    );
                    self.take_update(
                        &event_ref,
                        section,
                        &order.order_id,
                        take,
                        had,
                        order.expires_at,
                    )
                }
                BucketChange::Give { bucket, had, keeps } => {
                    removed.extend((keeps + 1..=*had).map(|k| place_member(section, *bucket, k)));
                    self.give_update(&event_ref, section, &order.order_id, *bucket, *had, *keeps)
                }
            };
            items.push(
                TransactWriteItem::builder()
                    .update(update.build().map_err(build_error("TransactWriteItems"))?)
                    .build(),
            );
        }
        let (verb, members) = if removed.is_empty() {
            ("ADD", added)
        } else {
            ("DELETE", removed)
        };
        let members: Vec<&str> = members.iter().map(String::as_str).collect();
        let record = self
            .update(order_key(&order.order_id))
            .update_expression(match verb {
                "ADD" => "ADD #seats :places, #version :one",
                _ => "DELETE #seats :places ADD #version :one",
            })
            .condition_expression(concat!(
                "#tokenHash = :tokenHash AND #status = :pending AND #version = :version AND ",
                live!("#deadline")
            ))
            .expression_attribute_names("#seats", SEATS)
            .expression_attribute_names("#version", VERSION)
            .expression_attribute_names("#tokenHash", TOKEN_HASH)
            .expression_attribute_names("#status", STATUS)
            .expression_attribute_names("#deadline", HOLDER_DEADLINE)
            .expression_attribute_values(":places", ss(&members))
            .expression_attribute_values(":one", n(1))
            .expression_attribute_values(":version", n(stored.version))
            .expression_attribute_values(":tokenHash", s(token.hash()))
            .expression_attribute_values(":pending", s(OrderStatus::Pending.as_str()))
            .expression_attribute_values(":now", n(now.0))
            .build()
            .map_err(build_error("TransactWriteItems"))?;
        items.insert(0, TransactWriteItem::builder().update(record).build());
        match self.transact(items).await? {
            Txn::Committed => Ok(true),
            Txn::Cancelled(reasons) => match unavailable_in("hold-ga", &reasons) {
                Some(e) => Err(e),
                None => Ok(false),
            },
        }
    }

    /// A bucket's side of taking places: expired holds of others removed
    /// (each exactly as read), this order's entry raised, `free` lowered,
    /// never below zero.
    fn take_update(
        &self,
        event: &EventRef,
        section: &SectionId,
        order: &OrderId,
        take: &Take,
        had: u32,
        expires_at: Millis,
    ) -> aws_sdk_dynamodb::types::builders::UpdateBuilder {
        let reclaimed: i64 = take.reclaim.iter().map(|h| i64::from(h.quantity)).sum();
        let mut update = self
            .update(ga_bucket_key(event, section, take.bucket))
            .expression_attribute_names("#free", FREE)
            .expression_attribute_names("#me", hold_attribute(order))
            .expression_attribute_values(":delta", n(reclaimed - i64::from(take.places)))
            .expression_attribute_values(":need", n(take.free_needed()))
            .expression_attribute_values(
                ":mine",
                AttributeValue::M(HashMap::from([
                    (HOLD_QUANTITY.to_owned(), n(had + take.places)),
                    (HOLD_EXPIRY.to_owned(), n(expires_at.0)),
                ])),
            );
        let mut condition = vec!["#free >= :need".to_owned()];
        if had == 0 {
            condition.push("attribute_not_exists(#me)".into());
        } else {
            condition.push("#me.#q = :had".into());
            update = update.expression_attribute_values(":had", n(had));
        }
        if had > 0 {
            update = update.expression_attribute_names("#q", HOLD_QUANTITY);
        }
        let (update, reclaim_conditions, removes) = bind_reclaims(update, &take.reclaim);
        condition.extend(reclaim_conditions);
        let remove = if removes.is_empty() {
            String::new()
        } else {
            format!(" REMOVE {}", removes.join(", "))
        };
        update
            .update_expression(format!("SET #free = #free + :delta, #me = :mine{remove}"))
            .condition_expression(condition.join(" AND "))
    }

    /// A bucket's side of giving places back: this order's entry lowered
    /// (or removed), `free` raised by as much.
    fn give_update(
        &self,
        event: &EventRef,
        section: &SectionId,
        order: &OrderId,
        bucket: u32,
        had: u32,
        keeps: u32,
    ) -> aws_sdk_dynamodb::types::builders::UpdateBuilder {
        let update = self
            .update(ga_bucket_key(event, section, bucket))
            .condition_expression("#me.#q = :had")
            .expression_attribute_names("#free", FREE)
            .expression_attribute_names("#me", hold_attribute(order))
            .expression_attribute_names("#q", HOLD_QUANTITY)
            .expression_attribute_values(":had", n(had))
            .expression_attribute_values(":give", n(had - keeps));
        if keeps == 0 {
            update.update_expression("SET #free = #free + :give REMOVE #me")
        } else {
            update
                .update_expression("SET #free = #free + :give, #me.#q = :keeps")
                .expression_attribute_values(":keeps", n(keeps))
        }
    }

    /// Gives back every place `order` holds, each bucket only if its entry
    /// is still as the order records it (an expired order's entry may have
    /// been taken over since). For cancel-order and the sweep; failures are
    /// logged (the places are expired or soon will be, and takeable).
    /// Returns how many places it gave back.
    pub async fn release_places(&self, order: &Order) -> u64 {
        let event_ref = EventRef::of(&order.event_id);
        let mut released = 0;
        for held in &order.places {
            let request = self.give_update(
                &event_ref,
                &held.section,
                &order.order_id,
                held.bucket,
                held.quantity,
                0,
            );
            let Ok(update) = request.build() else {
                continue;
            };
            let sent = self
                .client
                .update_item()
                .table_name(update.table_name())
                .set_key(Some(update.key().clone()))
                .update_expression(update.update_expression())
                .set_condition_expression(update.condition_expression().map(str::to_owned))
                .set_expression_attribute_names(update.expression_attribute_names().cloned())
                .set_expression_attribute_values(update.expression_attribute_values().cloned())
                .send()
                .await;
            match conditional(sent, "UpdateItem") {
                Ok(true) => released += u64::from(held.quantity),
                Ok(false) => {}
                Err(e) => {
                    tracing::warn!(order_id = %order.order_id, error = %crate::error::chain(&e), "places not given back; they expire on their own")
                }
            }
        }
        released
    }

    /// Transaction items giving back every place of a live order (its
    /// entries are exactly as it records them): for cancel-order.
    pub(super) fn give_back_all(&self, order: &Order) -> Result<Vec<TransactWriteItem>, Error> {
        self.give_back_items(order, &order.places)
    }

    /// Transaction items giving back `places` of a live order, each only
    /// while its entry is as the order records it.
    pub(super) fn give_back_items(
        &self,
        order: &Order,
        places: &[HeldPlaces],
    ) -> Result<Vec<TransactWriteItem>, Error> {
        let event_ref = EventRef::of(&order.event_id);
        places
            .iter()
            .map(|held| {
                let update = self.give_update(
                    &event_ref,
                    &held.section,
                    &order.order_id,
                    held.bucket,
                    held.quantity,
                    0,
                );
                Ok(TransactWriteItem::builder()
                    .update(update.build().map_err(build_error("TransactWriteItems"))?)
                    .build())
            })
            .collect()
    }

    /// Transaction items moving the expiry of every place of a live order
    /// to `expires_at`: for extend-order.
    pub(super) fn extend_places(
        &self,
        order: &Order,
        expires_at: Millis,
    ) -> Result<Vec<TransactWriteItem>, Error> {
        let event_ref = EventRef::of(&order.event_id);
        order
            .places
            .iter()
            .map(|held| {
                let update = self
                    .update(ga_bucket_key(&event_ref, &held.section, held.bucket))
                    .update_expression("SET #me.#e = :exp")
                    .condition_expression("#me.#q = :had")
                    .expression_attribute_names("#me", hold_attribute(&order.order_id))
                    .expression_attribute_names("#q", HOLD_QUANTITY)
                    .expression_attribute_names("#e", HOLD_EXPIRY)
                    .expression_attribute_values(":had", n(held.quantity))
                    .expression_attribute_values(":exp", n(expires_at.0))
                    .build()
                    .map_err(build_error("TransactWriteItems"))?;
                Ok(TransactWriteItem::builder().update(update).build())
            })
            .collect()
    }
}

/// Binds the removal of `reclaim` (expired holds of other orders) to a
/// bucket update: each is removed only exactly as read (quantity and
/// expiry), so a hold its order extended or changed since is never taken.
/// Returns the update, the conditions and the attributes to `REMOVE`.
pub(super) fn bind_reclaims(
    mut update: aws_sdk_dynamodb::types::builders::UpdateBuilder,
    reclaim: &[PlaceHold],
) -> (
    aws_sdk_dynamodb::types::builders::UpdateBuilder,
    Vec<String>,
    Vec<String>,
) {
    let (mut conditions, mut removes) = (Vec::new(), Vec::new());
    for (i, hold) in reclaim.iter().enumerate() {
        conditions.push(format!("#x{i}.#q = :xq{i} AND #x{i}.#e = :xe{i}"));
        removes.push(format!("#x{i}"));
        update = update
            .expression_attribute_names(format!("#x{i}"), hold_attribute(&hold.order))
            .expression_attribute_values(format!(":xq{i}"), n(hold.quantity))
            .expression_attribute_values(format!(":xe{i}"), n(hold.expires_at.0));
    }
    if !reclaim.is_empty() {
        update = update
            .expression_attribute_names("#q", HOLD_QUANTITY)
            .expression_attribute_names("#e", HOLD_EXPIRY);
    }
    (update, conditions, removes)
}
