//! Seeding for the bench (never reachable from a route): what is left of
//! an event sold at once, by the same expressions a late payment uses, so
//! the stream shows ordinary sales; and a queue's crowd of waiting
//! visitors, written as joins write them, many to a request.

use crate::domain::queue_life::VisitorItems;
use aws_sdk_dynamodb::types::{PutRequest, WriteRequest};

use super::errors::{conditional, sdk_error};
use super::items;
use super::items::bucket::ga_bucket_key;
use super::items::entry::join_items;
use super::items::seat::seat_key;
use super::schema::BATCH_WRITE_ITEMS;
use super::value::Item;
use super::Store;
use crate::domain::ga::{Bucket, PlaceSale, Take};
use crate::domain::queue::queue_rank;
use crate::domain::queue_shards::QueueShards;
use crate::domain::queue_state::Visitor;
use crate::domain::waitlist_entry::Entry;
use crate::domain::{EventId, EventRef, Millis, OrderId, PaymentId, SeatId, SectionId, VisitorId};
use crate::error::Error;
use crate::retry::{Rounds, UNPROCESSED_KEYS_ROUNDS};

/// The `i`th of a seeded crowd of early joiners (of queue `generation`,
/// joined at `joined_at`, before `opens_at`): an id of its own and a rank
/// spread like a draw, the same in every run.
pub fn seeded_visitor(
    i: u64,
    generation: u64,
    joined_at: Millis,
    opens_at: Millis,
) -> Result<Visitor, Error> {
    Ok(Visitor {
        visitor_id: VisitorId::parse(&format!("seeded-{i:08}"))?,
        generation,
        joined_at,
        rank: queue_rank(
            joined_at,
            opens_at,
            (i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        ),
        token_hash: "seeded".into(),
        admission: None,
        buyer: None,
        draw_key: None,
    })
}

impl Store {
    /// Sells `seat` to `order` for `payment` if it is free for it (as a
    /// late payment takes a free seat); `false`: it was not.
    pub async fn seed_sold_seat(
        &self,
        event: &EventId,
        seat: &SeatId,
        order: &OrderId,
        payment: &PaymentId,
        now: Millis,
    ) -> Result<bool, Error> {
        let request = self
            .client
            .update_item()
            .table_name(&*self.table)
            .set_key(Some(seat_key(&EventRef::of(event), seat)));
        let sold = items::seat::take_paid(order, payment, now)
            .on_update_item(request)
            .send()
            .await;
        conditional(sold, "UpdateItem")
    }

    /// Sells every free place of `bucket` (as read) to `order` for
    /// `payment`, only while they are still free; `false`: they were not.
    pub async fn seed_sold_places(
        &self,
        event: &EventId,
        section: &SectionId,
        bucket: &Bucket,
        order: &OrderId,
        payment: &PaymentId,
        now: Millis,
    ) -> Result<bool, Error> {
        if bucket.free == 0 {
            return Ok(true);
        }
        let sale = PlaceSale {
            section: section.clone(),
            bucket: bucket.index,
            held: 0,
            sell: 0,
            take: Some(Take {
                bucket: bucket.index,
                places: bucket.free,
                reclaim: Vec::new(),
            }),
        };
        let request = self
            .client
            .update_item()
            .table_name(&*self.table)
            .set_key(Some(ga_bucket_key(
                &EventRef::of(event),
                section,
                bucket.index,
            )));
        let sold = items::bucket::sell(order, payment, &sale, None, now)
            .on_update_item(request)
            .send()
            .await;
        conditional(sold, "UpdateItem")
    }

    /// Writes `visitors` (at most [`BATCH_WRITE_ITEMS`], each waiting, of a generation with
    /// `shards`) as their joins would, in one `BatchWriteItem`, sending
    /// again what DynamoDB left out (as a read sends again the keys it
    /// left out).
    pub async fn seed_waiting_visitors(
        &self,
        event: &EventId,
        visitors: &[Visitor],
        shards: QueueShards,
    ) -> Result<(), Error> {
        let items = visitors
            .iter()
            .map(|v| super::visitors::visitor_item(event, v, VisitorItems::without_end(shards)));
        self.seed_items("seed-visitors", items.collect()).await
    }

    /// Writes `entries` (each waiting, of a fresh buyer) as their joins
    /// would, [`BATCH_WRITE_ITEMS`] to a `BatchWriteItem`, one after
    /// another (a join writes four items or more).
    pub async fn seed_waiting_entries(
        &self,
        event: &EventId,
        entries: &[Entry],
    ) -> Result<(), Error> {
        let mut items = Vec::new();
        for entry in entries {
            let joined = join_items(event, entry);
            items.push(joined.buyer);
            items.extend(joined.new);
        }
        while !items.is_empty() {
            let rest = items.split_off(items.len().min(BATCH_WRITE_ITEMS));
            self.seed_items("seed-entries", std::mem::replace(&mut items, rest))
                .await?;
        }
        Ok(())
    }

    /// Puts `items` (at most [`BATCH_WRITE_ITEMS`]) in one `BatchWriteItem`, sending again
    /// what DynamoDB left out (as a read sends again the keys it left out).
    async fn seed_items(&self, what: &'static str, items: Vec<Item>) -> Result<(), Error> {
        let mut writes = items
            .into_iter()
            .map(|item| {
                let put = PutRequest::builder()
                    .set_item(Some(item))
                    .build()
                    .map_err(|e| Error::Corrupt(e.to_string()))?;
                Ok(WriteRequest::builder().put_request(put).build())
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let mut rounds = Rounds::new(what, UNPROCESSED_KEYS_ROUNDS + 1);
        while rounds.next().await.is_some() {
            let sent = self
                .client
                .batch_write_item()
                .request_items(&*self.table, std::mem::take(&mut writes))
                .send()
                .await
                .map_err(|e| sdk_error("BatchWriteItem", e))?;
            writes = sent
                .unprocessed_items
                .and_then(|mut left| left.remove(&*self.table))
                .unwrap_or_default();
            if writes.is_empty() {
                return Ok(());
            }
            rounds.lost();
        }
        Err(rounds.spent())
    }
}
