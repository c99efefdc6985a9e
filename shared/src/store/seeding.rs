//! Seeding for the bench's sold-out phase (never reachable from a route):
//! what is left of an event sold at once, by the same expressions a late
//! payment uses, so the stream shows ordinary sales.

use super::errors::conditional;
use super::items;
use super::items::bucket::ga_bucket_key;
use super::items::seat::seat_key;
use super::Store;
use crate::domain::ga::{Bucket, PlaceSale, Take};
use crate::domain::{EventId, EventRef, Millis, OrderId, PaymentId, SeatId, SectionId};
use crate::error::Error;

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
        let sold = items::bucket::sell(order, payment, &sale, None)
            .on_update_item(request)
            .send()
            .await;
        conditional(sold, "UpdateItem")
    }
}
