//! What one look knows of the free inventory, and what it learns as its
//! offers are made or lost.

use std::collections::{HashMap, HashSet};

use crate::domain::ga::{after_takes, bucket_count, Bucket, LISTING_BUCKETS_FROM};
use crate::domain::offer::{free_units, Offered, SeatsKnown, SectionFree};
use crate::domain::returns::{ListedPlaces, ListedSeat, PlacesResaleHold};
use crate::domain::waitlist::Waitlist;
use crate::domain::{Event, Millis, Order, SeatId, SeatMap, SectionId};
use crate::error::Error;
use crate::store::{MapRead, OfferLoss};
use crate::App;

/// What a look knows of the free inventory: the map as read at its start
/// (it follows the stream), with the seats listed for resale and free to
/// offer as read then, less the seats it has seen taken since (its own
/// offers', and those a lost offer found held or sold when it read them);
/// and the general-admission buckets, kept as the look's own offers leave
/// them and read again where an offer lost to one.
pub(super) struct Known {
    pub map: SeatMap,
    /// Each general-admission section's buckets, and its listings of
    /// places as buckets of their own numbered from
    /// `ga::LISTING_BUCKETS_FROM` (in `listed_places`' order).
    pub buckets: HashMap<SectionId, Vec<Bucket>>,
    pub taken: HashSet<SeatId>,
    /// The seats among `taken` its own offers hold on the map, until
    /// when (a listed seat's offer holds its resale item: the map keeps
    /// it sold).
    pub held: HashMap<SeatId, Millis>,
    pub listed: HashMap<SeatId, ListedSeat>,
    /// The listings of places offers may take some of, the oldest first:
    /// the `j`th is bucket `LISTING_BUCKETS_FROM + j` of its section.
    pub listed_places: Vec<ListedPlaces>,
}

impl Known {
    /// What a look of `event` knows at its start (`now`): the map `read`,
    /// and the `listings` of seats and places its waitlist may offer.
    pub(super) fn at_start(
        event: &Event,
        waitlist: &Waitlist,
        read: MapRead,
        listings: (Vec<ListedSeat>, Vec<ListedPlaces>),
        now: Millis,
    ) -> Self {
        let (listed, listed_places) = listings;
        let mut known = Self {
            map: crate::domain::seat_map(event, &read.rows, &read.buckets, now),
            buckets: read.buckets,
            taken: HashSet::new(),
            held: HashMap::new(),
            listed: listed
                .into_iter()
                .filter(|l| l.offerable(waitlist, now))
                .map(|l| (l.seat.clone(), l))
                .collect(),
            listed_places: Vec::new(),
        };
        let offerable = listed_places.into_iter();
        let offerable = offerable.filter(|l| l.offerable(waitlist, now));
        known.know_listed_places(offerable.collect());
        known
    }

    /// `listed` (listings of places offers may take some of) numbered
    /// among their sections' buckets, the oldest first, in place of those
    /// it knew.
    pub(super) fn know_listed_places(&mut self, mut listed: Vec<ListedPlaces>) {
        for buckets in self.buckets.values_mut() {
            buckets.retain(|b| b.index < LISTING_BUCKETS_FROM);
        }
        listed.sort_by(|a, b| {
            (a.listed_at, &a.seller.order_id).cmp(&(b.listed_at, &b.seller.order_id))
        });
        for (j, places) in (LISTING_BUCKETS_FROM..).zip(&listed) {
            let bucket = Bucket {
                index: j,
                ..places.places.clone()
            };
            self.buckets
                .entry(places.section.clone())
                .or_default()
                .push(bucket);
        }
        self.listed_places = listed;
    }

    /// The listing of places numbered `bucket`, if it is one.
    fn listing(&self, bucket: u32) -> Option<&ListedPlaces> {
        let j = bucket.checked_sub(LISTING_BUCKETS_FROM)?;
        self.listed_places.get(usize::try_from(j).ok()?)
    }

    /// What may be offered to `buyer`: the buckets less its own listings
    /// of places (`None`: it listed none, so all of them).
    pub(super) fn buckets_for(
        &self,
        buyer: &crate::domain::buyer::BuyerId,
    ) -> Option<HashMap<SectionId, Vec<Bucket>>> {
        let own = |b: &Bucket| {
            self.listing(b.index)
                .is_some_and(|l| l.seller.buyer_id.as_ref() == Some(buyer))
        };
        if !self.buckets.values().flatten().any(own) {
            return None;
        }
        let mut buckets = self.buckets.clone();
        for read in buckets.values_mut() {
            read.retain(|b| !own(b));
        }
        Some(buckets)
    }

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
        let buckets = self.buckets_for(buyer);
        if !self.listed.values().any(|l| own(&l)) {
            let buckets = buckets?;
            let listed: HashSet<SeatId> = self.listed.keys().cloned().collect();
            let known = SeatsKnown {
                listed: &listed,
                taken: &self.taken,
            };
            return Some(free_units(&self.map, &known, &buckets, now));
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
        let buckets = buckets.as_ref().unwrap_or(&self.buckets);
        Some(free_units(&self.map, &known, buckets, now))
    }

    /// The listed seats among `seats`, as the holds an offer of them
    /// records.
    pub(super) fn resales(&self, seats: &[SeatId]) -> Vec<crate::domain::returns::ResaleHold> {
        let listed = seats.iter().filter_map(|s| self.listed.get(s));
        listed.map(ListedSeat::hold).collect()
    }

    /// The listed places `offered` takes, as the holds an offer of them
    /// records.
    pub(super) fn place_resales(&self, offered: &Offered) -> Vec<PlacesResaleHold> {
        let Offered::Places(taken) = offered else {
            return Vec::new();
        };
        let listings = taken.takes.iter().filter_map(|take| {
            let listing = self.listing(take.bucket)?;
            Some(listing.hold(take.bucket))
        });
        listings.collect()
    }

    /// No listing offered for the rest of the look (a put closed returns
    /// during it).
    pub(super) fn forget_listings(&mut self) {
        self.listed.clear();
        self.know_listed_places(Vec::new());
    }

    /// `order`'s offer of `offered` committed.
    pub(super) fn took(&mut self, order: &Order, offered: &Offered) {
        match offered {
            Offered::Seats(seats) => {
                self.taken.extend(seats.iter().cloned());
                let unlisted = seats.iter().filter(|s| !self.listed.contains_key(*s));
                let held = unlisted.map(|seat| (seat.clone(), order.expires_at));
                self.held.extend(held);
            }
            Offered::Places(taken) => {
                if let Some(buckets) = self.buckets.get_mut(&taken.section) {
                    after_takes(buckets, &order.order_id, &taken.takes, order.expires_at);
                    // The listings' own counts follow, so numbering them
                    // again keeps what this look took.
                    for bucket in buckets.iter() {
                        let j = bucket.index.checked_sub(LISTING_BUCKETS_FROM);
                        let j = j.and_then(|j| usize::try_from(j).ok());
                        if let Some(listing) = j.and_then(|j| self.listed_places.get_mut(j)) {
                            listing.places = bucket.clone();
                        }
                    }
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
            Offered::Places(taken) => {
                self.read_buckets(app, event, &taken.section).await?;
                if taken.takes.iter().any(|t| t.bucket >= LISTING_BUCKETS_FROM) {
                    // The listings read again (the offerer's one Query of
                    // them), as offerable as before.
                    let (_, places) = app.store.listings_on_offer(&event.event_id).await?;
                    let kept = |p: &ListedPlaces| {
                        self.listed_places.iter().any(|k| {
                            (&k.section, &k.seller.order_id) == (&p.section, &p.seller.order_id)
                        })
                    };
                    let places = places.into_iter().filter(|p| kept(p)).collect();
                    self.know_listed_places(places);
                }
                Ok(())
            }
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
        let mut read = read.await?;
        // Its listings as the look knows them stay.
        let listings = self.buckets.remove(section).unwrap_or_default();
        read.extend(
            listings
                .into_iter()
                .filter(|b| b.index >= LISTING_BUCKETS_FROM),
        );
        self.buckets.insert(section.clone(), read);
        Ok(())
    }
}
