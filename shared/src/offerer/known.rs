//! What one look knows of the free inventory, and what it learns as its
//! offers are made or lost.

use std::collections::{HashMap, HashSet};

use crate::domain::ga::{after_takes, bucket_count, Bucket};
use crate::domain::offer::{free_units, Offered, SeatsKnown, SectionFree};
use crate::domain::returns::ListedSeat;
use crate::domain::{Event, Millis, Order, SeatId, SeatMap, SectionId};
use crate::error::Error;
use crate::store::OfferLoss;
use crate::App;

/// What a look knows of the free inventory: the map as read at its start
/// (it follows the stream), with the seats listed for resale and free to
/// offer as read then, less the seats it has seen taken since (its own
/// offers', and those a lost offer found held or sold when it read them);
/// and the general-admission buckets, kept as the look's own offers leave
/// them and read again where an offer lost to one.
pub(super) struct Known {
    pub map: SeatMap,
    pub buckets: HashMap<SectionId, Vec<Bucket>>,
    pub taken: HashSet<SeatId>,
    pub listed: HashMap<SeatId, ListedSeat>,
}

impl Known {
    pub(super) fn free(&self, now: Millis) -> Vec<SectionFree> {
        let listed: HashSet<SeatId> = self.listed.keys().cloned().collect();
        let known = SeatsKnown {
            listed: &listed,
            taken: &self.taken,
        };
        free_units(&self.map, &known, &self.buckets, now)
    }

    /// What `buyer` may be offered at `now`: the free inventory less the
    /// seats it listed itself (`None`: it listed none, so all of it).
    pub(super) fn free_for(
        &self,
        buyer: &crate::domain::buyer::BuyerId,
        now: Millis,
    ) -> Option<Vec<SectionFree>> {
        let own = |l: &&ListedSeat| l.seller.buyer_id.as_ref() == Some(buyer);
        if !self.listed.values().any(|l| own(&l)) {
            return None;
        }
        // Its own listings are as good as taken for it, whatever a map
        // that has not caught up yet shows of them.
        let (own, others): (Vec<&ListedSeat>, Vec<&ListedSeat>) =
            self.listed.values().partition(|l| own(l));
        let listed: HashSet<SeatId> = others.iter().map(|l| l.seat.clone()).collect();
        let mut taken = self.taken.clone();
        taken.extend(own.iter().map(|l| l.seat.clone()));
        let known = SeatsKnown {
            listed: &listed,
            taken: &taken,
        };
        Some(free_units(&self.map, &known, &self.buckets, now))
    }

    /// The listed seats among `seats`, as the holds an offer of them
    /// records.
    pub(super) fn resales(&self, seats: &[SeatId]) -> Vec<crate::domain::returns::ResaleHold> {
        let listed = seats.iter().filter_map(|s| self.listed.get(s));
        listed.map(ListedSeat::hold).collect()
    }

    /// `order`'s offer of `offered` committed.
    pub(super) fn took(&mut self, order: &Order, offered: &Offered) {
        match offered {
            Offered::Seats(seats) => self.taken.extend(seats.iter().cloned()),
            Offered::Places(taken) => {
                if let Some(buckets) = self.buckets.get_mut(&taken.section) {
                    after_takes(buckets, &order.order_id, &taken.takes, order.expires_at);
                }
            }
        }
    }

    /// An offer of `offered` lost to one of its units (`loss`): learn what
    /// moved. A seat refused is taken for this look, whether its condition
    /// failed (taken) or another transaction was on it (most likely a
    /// claim of it: the next look's map says).
    pub(super) async fn lost(
        &mut self,
        app: &App,
        event: &Event,
        offered: &Offered,
        loss: &OfferLoss,
        now: Millis,
    ) -> Result<(), Error> {
        match offered {
            Offered::Seats(seats) => {
                let refused = loss.taken.iter().chain(&loss.unsure);
                let refused: Vec<SeatId> = refused.filter_map(|&i| seats.get(i)).cloned().collect();
                // A listed seat reads sold: its resale item says whether
                // another offer took it.
                let (listed, unlisted): (Vec<SeatId>, Vec<SeatId>) = refused
                    .into_iter()
                    .partition(|s| self.listed.contains_key(s));
                self.taken.extend(unlisted);
                if listed.is_empty() {
                    return Ok(());
                }
                // The event's listed seats read again (the offerer's one
                // Query of them): one gone or held now is taken.
                let fresh = app.store.listed_seats(&event.event_id).await?;
                for seat in listed {
                    let free = fresh
                        .iter()
                        .any(|l| l.seat == seat && l.held_at(now).is_none());
                    if !free {
                        self.taken.insert(seat);
                    }
                }
                Ok(())
            }
            Offered::Places(taken) => self.read_buckets(app, event, &taken.section).await,
        }
    }

    /// `section`'s buckets read again, strongly consistent.
    pub(super) async fn read_buckets(
        &mut self,
        app: &App,
        event: &Event,
        section: &SectionId,
    ) -> Result<(), Error> {
        let capacity = event.section(section).and_then(|s| s.capacity).unwrap_or(0);
        let indexes: Vec<u32> = (0..bucket_count(capacity)).collect();
        let read = app
            .store
            .read_buckets(&event.event_id, section, &indexes, true);
        self.buckets.insert(section.clone(), read.await?);
        Ok(())
    }
}
