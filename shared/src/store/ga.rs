//! General admission's store calls: buckets written with the event, read
//! in batches, and hold-ga's one transaction (the order and the buckets it
//! takes from or gives back to). See `domain::ga` for the rules.

use super::buyers::{changed_through, BuyerClaim, BuyerVerdict};
use super::errors::conditional;
use super::failures::unavailable_in;
use super::fan_out::FanOut;
use super::items;
use super::items::bucket::{ga_bucket_key, parse_bucket, CAPACITY, FREE, SOLD};
use super::items::order::Places;
use super::items::order::{order_key, place_member, StoredOrder};
use super::schema::{EVENT_ID, KIND, SECTION_ID, SECTION_PARTS};
use super::seat_map::BATCH_GET_KEYS;
use super::value::{n, s};
use super::{Store, Txn};
use crate::auth::HoldToken;
use crate::domain::buyer_limit::BuyerSeen;
use crate::domain::ga::{bucket_capacity, bucket_count, Take};
use crate::domain::ga::{Bucket, HeldPlaces};
use crate::domain::{Event, EventId, EventRef, Millis, Order, SectionId};
use crate::error::Error;
use aws_sdk_dynamodb::types::TransactWriteItem;

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

/// How hold-ga's transaction ended, short of a fault.
#[derive(Debug)]
pub enum PlacesChange {
    /// The order holds the places asked for.
    Changed,
    /// Something changed since it was read: read and plan again.
    Moved,
    /// Refused for the buyer's limit, as read (`409 buyer-limit`).
    Refused(Error),
}

/// hold-ga's transaction as the store saw it: how it ended, and what it
/// saw of the buyer's record (for the instance's memory).
#[derive(Debug)]
pub struct PlacesReport {
    pub change: PlacesChange,
    pub buyer: BuyerSeen,
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
                    // How many buckets its section has: the stream tells a
                    // sold-out section from its buckets (sold_out.rs).
                    (SECTION_PARTS.into(), n(bucket_count(capacity))),
                ]);
                items.push(item);
            }
        }
        let mut items = items.into_iter();
        let mut fan = FanOut::new(BUCKET_WRITES_IN_FLIGHT, "PutItem");
        while let Some(written) = fan.next(|| items.next().map(|i| self.put_new(i))).await {
            written??;
        }
        Ok(())
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
    /// conditions that keep sold + live holds within its capacity. An
    /// offer's last places given back end it: the order records it emptied
    /// and its end is logged for the waitlist's counts, in the same write.
    pub async fn change_places(
        &self,
        stored: &StoredOrder,
        token: &HoldToken,
        section: &SectionId,
        changes: &[BucketChange],
        now: Millis,
    ) -> Result<PlacesReport, Error> {
        let order = &stored.order;
        let (mut items, change, members) = self.bucket_items(order, section, changes, now)?;
        let gives_all = u32::try_from(members.len()).is_ok_and(|n| n == order.units());
        let change = match change {
            Places::Remove if order.offer.is_some() && gives_all => Places::Empty,
            change => change,
        };
        let member_ids: Vec<&str> = members.iter().map(String::as_str).collect();
        let record = items::order::change_places(token, change, &member_ids, stored.version, now);
        items.insert(0, self.txn_update(order_key(&order.order_id), record)?);
        // The buyer's record in the same transaction: places taken within
        // its limit (as read), or given back.
        let buyer = match change {
            Places::Add => {
                self.buyer_claim(token, &order.order_id, &members, now)
                    .await?
            }
            Places::Remove | Places::Empty => None,
        };
        match &buyer {
            Some(claim) => {
                items.push(self.buyer_item(claim, token, &order.order_id, order.expires_at, now)?)
            }
            None if change != Places::Add => {
                items.extend(self.buyer_release_item(token, &order.order_id, &member_ids)?)
            }
            None => {}
        }
        // After the buyer's item, whose reason is read from the end.
        if change == Places::Empty {
            items.extend(self.offer_end(order, false, true)?);
        }
        self.commit_places(items, buyer, token).await
    }

    /// hold-ga's bucket items, and the place members the order gains or
    /// loses by them.
    fn bucket_items(
        &self,
        order: &Order,
        section: &SectionId,
        changes: &[BucketChange],
        now: Millis,
    ) -> Result<(Vec<TransactWriteItem>, Places, Vec<String>), Error> {
        let event_ref = EventRef::of(&order.event_id);
        let held = |bucket: u32| {
            order
                .places
                .iter()
                .find(|p| &p.section == section && p.bucket == bucket)
                .map_or(0, |p| p.quantity)
        };
        let (mut added, mut removed) = (Vec::new(), Vec::new());
        let mut items = Vec::with_capacity(changes.len() + 2);
        for change in changes {
            let (bucket, expression) = match change {
                BucketChange::Take(take) => {
                    let had = held(take.bucket);
                    added.extend(
                        (had + 1..=had + take.places)
                            .map(|k| place_member(section, take.bucket, k)),
                    );
                    let take_places =
                        items::bucket::take(&order.order_id, take, had, order.expires_at, now);
                    (take.bucket, take_places)
                }
                BucketChange::Give { bucket, had, keeps } => {
                    removed.extend((keeps + 1..=*had).map(|k| place_member(section, *bucket, k)));
                    (
                        *bucket,
                        items::bucket::give(&order.order_id, *had, *keeps, now),
                    )
                }
            };
            let (key, expression) =
                items::resale::places_write(&event_ref, order, section, bucket, expression);
            items.push(self.txn_update(key, expression)?);
        }
        Ok(match removed.is_empty() {
            true => (items, Places::Add, added),
            false => (items, Places::Remove, removed),
        })
    }

    /// hold-ga's transaction, decided: [`PlacesChange::Moved`] when
    /// something moved since it was read, refused when only the buyer's
    /// record refused, as read.
    async fn commit_places(
        &self,
        items: Vec<TransactWriteItem>,
        buyer: Option<BuyerClaim>,
        token: &HoldToken,
    ) -> Result<PlacesReport, Error> {
        let report = |change, buyer| Ok(PlacesReport { change, buyer });
        let mut reasons = match self.transact(items).await? {
            Txn::Committed => {
                let seen = match &buyer {
                    Some(buyer) => buyer.changed(),
                    None => changed_through(token),
                };
                return report(PlacesChange::Changed, seen);
            }
            Txn::Cancelled(reasons) => reasons,
        };
        if let Some(e) = unavailable_in("hold-ga", &reasons) {
            return Err(e);
        }
        let buyer_failure = buyer.as_ref().and_then(|_| reasons.pop().flatten());
        let Some(buyer) = buyer else {
            return report(PlacesChange::Moved, BuyerSeen::Nothing);
        };
        match buyer.verdict(buyer_failure.as_ref()) {
            BuyerVerdict::Over { limit, counted } if reasons.iter().all(Option::is_none) => {
                let refused = PlacesChange::Refused(Error::BuyerLimit { limit, counted });
                report(refused, buyer.refused_as_read())
            }
            _ => report(PlacesChange::Moved, BuyerSeen::Nothing),
        }
    }

    /// Gives back every place `order` holds, each bucket only if its entry
    /// is still as the order records it (an expired order's entry may have
    /// been taken over since). For cancel-order and the sweep; failures are
    /// logged (the places are expired or soon will be, and takeable).
    /// Returns how many places it gave back.
    pub async fn release_places(&self, order: &Order, now: Millis) -> u64 {
        let event_ref = EventRef::of(&order.event_id);
        let mut released = 0;
        for held in &order.places {
            let give = items::bucket::give(&order.order_id, held.quantity, 0, now);
            let (key, give) =
                items::resale::places_write(&event_ref, order, &held.section, held.bucket, give);
            let request = self
                .client
                .update_item()
                .table_name(&*self.table)
                .set_key(Some(key));
            let sent = give.on_update_item(request).send().await;
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
    pub(super) fn give_back_all(
        &self,
        order: &Order,
        now: Millis,
    ) -> Result<Vec<TransactWriteItem>, Error> {
        self.give_back_items(order, &order.places, now)
    }

    /// Transaction items giving back `places` of a live order, each only
    /// while its entry is as the order records it.
    pub(super) fn give_back_items(
        &self,
        order: &Order,
        places: &[HeldPlaces],
        now: Millis,
    ) -> Result<Vec<TransactWriteItem>, Error> {
        let event_ref = EventRef::of(&order.event_id);
        places
            .iter()
            .map(|held| {
                let give = items::bucket::give(&order.order_id, held.quantity, 0, now);
                let (key, give) = items::resale::places_write(
                    &event_ref,
                    order,
                    &held.section,
                    held.bucket,
                    give,
                );
                self.txn_update(key, give)
            })
            .collect()
    }

    /// Transaction items moving the expiry of every place of a live order
    /// to `expires_at`: for extend-order.
    pub(super) fn extend_places(
        &self,
        order: &Order,
        expires_at: Millis,
        now: Millis,
    ) -> Result<Vec<TransactWriteItem>, Error> {
        let event_ref = EventRef::of(&order.event_id);
        order
            .places
            .iter()
            .map(|held| {
                let extend = items::bucket::extend(&order.order_id, held.quantity, expires_at, now);
                let (key, extend) = items::resale::places_write(
                    &event_ref,
                    order,
                    &held.section,
                    held.bucket,
                    extend,
                );
                self.txn_update(key, extend)
            })
            .collect()
    }
}
