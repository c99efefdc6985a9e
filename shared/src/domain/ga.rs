//! General admission as pure rules: a section's capacity spread over
//! buckets (so an on-sale is no hot partition), each bucket carrying its
//! holds with their expiries (so an expired order's places are takeable at
//! once, before any sweep), and how hold-ga takes and gives back places.
//!
//! A bucket keeps `free` = capacity − sold − every hold it still carries,
//! live or expired. Taking `t` places from it removes some expired holds of
//! other orders (`reclaim`, each checked unchanged and expired by the
//! write's condition) and needs `free + reclaimed ≥ t`: sold plus live
//! holds never exceed the capacity (invariant 8).

use super::{Millis, OrderId, SectionId};

/// Fewest places per bucket: small buckets only add items to read.
pub const MIN_BUCKET_PLACES: u32 = 20;
/// Most buckets per section: availability and a sold-out answer read them all.
pub const MAX_BUCKETS: u32 = 1000;

/// Where an order records the places an offer holds of a listing (API.md,
/// "Returns"): held places under a bucket number from here on are some of
/// a seller's listed places, on that listing's resale item (the offer's
/// `placeResales` say whose), not a section bucket's: no section has that
/// many buckets.
pub const LISTING_BUCKETS_FROM: u32 = MAX_BUCKETS;

/// Places per bucket of a section of `capacity` places.
pub fn bucket_places(capacity: u32) -> u32 {
    MIN_BUCKET_PLACES.max(capacity.div_ceil(MAX_BUCKETS))
}

/// How many buckets a section of `capacity` places has.
pub fn bucket_count(capacity: u32) -> u32 {
    capacity.div_ceil(bucket_places(capacity))
}

/// Bucket `index`'s share of `capacity` (the last one takes the rest).
pub fn bucket_capacity(capacity: u32, index: u32) -> u32 {
    let per = bucket_places(capacity);
    capacity.saturating_sub(index * per).min(per)
}

/// One order's places in one bucket, as the bucket records them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlaceHold {
    pub order: OrderId,
    pub quantity: u32,
    pub expires_at: Millis,
}

/// A bucket as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bucket {
    pub index: u32,
    pub capacity: u32,
    pub sold: u32,
    /// Capacity − sold − every hold recorded (expired ones included).
    pub free: u32,
    pub holds: Vec<PlaceHold>,
}

impl Bucket {
    /// Places held by live orders at `now`.
    pub fn live_held(&self, now: Millis) -> u32 {
        self.holds
            .iter()
            .filter(|h| super::hold_is_live(h.expires_at, now))
            .map(|h| h.quantity)
            .sum()
    }
    /// Places anyone may take at `now`: capacity − sold − live holds.
    pub fn available(&self, now: Millis) -> u32 {
        self.capacity
            .saturating_sub(self.sold)
            .saturating_sub(self.live_held(now))
    }
    /// Expired holds of orders other than `me`, the longest expired first.
    fn reclaimable(&self, me: &OrderId, now: Millis) -> Vec<&PlaceHold> {
        let mut expired: Vec<&PlaceHold> = self
            .holds
            .iter()
            .filter(|h| &h.order != me && !super::hold_is_live(h.expires_at, now))
            .collect();
        expired.sort_by_key(|h| h.expires_at);
        expired
    }
}

/// One bucket's part of taking places.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Take {
    pub bucket: u32,
    pub places: u32,
    /// Expired holds removed to make room (their places come back first).
    pub reclaim: Vec<PlaceHold>,
}

impl Take {
    /// What the bucket's `free` must be at least for this take to fit.
    pub fn free_needed(&self) -> i64 {
        i64::from(self.places)
            - self
                .reclaim
                .iter()
                .map(|h| i64::from(h.quantity))
                .sum::<i64>()
    }
}

/// How `me` takes `wanted` more places from `buckets` (in the order given:
/// the caller shuffles them, so buyers spread): free places first, then
/// expired holds of other orders. `None` if they do not hold that many.
pub fn plan_take(buckets: &[Bucket], me: &OrderId, wanted: u32, now: Millis) -> Option<Vec<Take>> {
    let mut remaining = wanted;
    let mut takes = Vec::new();
    for bucket in buckets {
        if remaining == 0 {
            break;
        }
        let mut take = Take {
            bucket: bucket.index,
            places: bucket.free.min(remaining),
            reclaim: Vec::new(),
        };
        for hold in bucket.reclaimable(me, now) {
            if take.places >= remaining {
                break;
            }
            take.places = (take.places + hold.quantity).min(remaining);
            take.reclaim.push(hold.clone());
        }
        if take.places > 0 {
            remaining -= take.places;
            takes.push(take);
        }
    }
    (remaining == 0).then_some(takes)
}

/// What `me`'s `takes` (all committed, holding until `expires_at`) leave
/// in `buckets`, as the bucket items now record it: each take's reclaimed
/// holds gone, its places held by `me`, `free` lowered by what it took
/// beyond what it reclaimed. A look that makes several offers of places
/// goes on from its own reading without reading every bucket again.
pub fn after_takes(buckets: &mut [Bucket], me: &OrderId, takes: &[Take], expires_at: Millis) {
    for take in takes {
        let Some(bucket) = buckets.iter_mut().find(|b| b.index == take.bucket) else {
            continue;
        };
        let reclaimed = |h: &PlaceHold| take.reclaim.contains(h);
        bucket.holds.retain(|h| !reclaimed(h));
        let free = i64::from(bucket.free) - take.free_needed();
        bucket.free = u32::try_from(free.max(0)).unwrap_or(0);
        bucket.holds.push(PlaceHold {
            order: me.clone(),
            quantity: take.places,
            expires_at,
        });
    }
}

/// Places anyone other than `me` does not hold live, over `buckets`: the
/// most `me` could hold there in all (its own places included).
pub fn most_holdable(buckets: &[Bucket], me: &OrderId, now: Millis) -> u32 {
    buckets
        .iter()
        .map(|b| {
            // Its own live places; expired ones count in `available` already.
            let mine: u32 = b
                .holds
                .iter()
                .filter(|h| &h.order == me && super::hold_is_live(h.expires_at, now))
                .map(|h| h.quantity)
                .sum();
            b.available(now) + mine
        })
        .sum()
}

/// An order's places in one bucket of a section, as the order records them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldPlaces {
    pub section: SectionId,
    pub bucket: u32,
    pub quantity: u32,
}

impl HeldPlaces {
    /// They are some of a seller's listed places (an offer's), not a
    /// bucket's.
    pub fn from_listing(&self) -> bool {
        self.bucket >= LISTING_BUCKETS_FROM
    }
}

/// How `me` gives back `release` of its places in a section: from the
/// buckets where it holds the most first. Returns each bucket's new count.
pub fn plan_release(held: &[HeldPlaces], release: u32) -> Vec<(u32, u32, u32)> {
    let mut by_size: Vec<&HeldPlaces> = held.iter().collect();
    by_size.sort_by(|a, b| b.quantity.cmp(&a.quantity).then(a.bucket.cmp(&b.bucket)));
    let mut remaining = release;
    let mut out = Vec::new();
    for h in by_size {
        if remaining == 0 {
            break;
        }
        let give = h.quantity.min(remaining);
        remaining -= give;
        // (bucket, had, keeps)
        out.push((h.bucket, h.quantity, h.quantity - give));
    }
    out
}

/// One bucket's part of a confirm: of the `held` places the order has
/// there, `sell` are sold and the rest given back; and, for a payment its
/// holds do not cover, `take` more places sold from the bucket's free
/// ones and the expired holds of others it removes (`take.reclaim`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlaceSale {
    pub section: SectionId,
    pub bucket: u32,
    pub held: u32,
    pub sell: u32,
    pub take: Option<Take>,
}

impl PlaceSale {
    /// Places this sale sells in its bucket, its own and taken ones.
    pub fn sold(&self) -> u32 {
        self.sell + self.take.as_ref().map_or(0, |t| t.places)
    }
}

/// How a confirm sells `paid` places of `section` out of what the order
/// holds there (every bucket of the section it holds places in, the
/// surplus given back): listed places first (a seller's return is resold
/// before the section's own places), then by bucket. `None` if it holds
/// fewer than `paid`.
pub fn plan_sale(held: &[HeldPlaces], section: &SectionId, paid: u32) -> Option<Vec<PlaceSale>> {
    let mut here: Vec<&HeldPlaces> = held.iter().filter(|h| &h.section == section).collect();
    here.sort_by_key(|h| (!h.from_listing(), h.bucket));
    let mut remaining = paid;
    let sales: Vec<PlaceSale> = here
        .into_iter()
        .map(|h| {
            let sell = h.quantity.min(remaining);
            remaining -= sell;
            PlaceSale {
                section: section.clone(),
                bucket: h.bucket,
                held: h.quantity,
                sell,
                take: None,
            }
        })
        .collect();
    (remaining == 0).then_some(sales)
}

/// Every section's sale out of what the order `held`, for `paid` places
/// per section (sections not named are paid 0: their places all go back):
/// [`plan_sale`] over each section paid for or held, in section order.
/// `None` if it holds fewer than paid for in any section.
pub fn plan_held_sales(held: &[HeldPlaces], paid: &[(SectionId, u32)]) -> Option<Vec<PlaceSale>> {
    let mut sections: Vec<&SectionId> = paid.iter().map(|(section, _)| section).collect();
    sections.extend(held.iter().map(|h| &h.section));
    sections.sort();
    sections.dedup();
    let mut sales = Vec::new();
    for section in sections {
        let wanted = paid
            .iter()
            .find(|(s, _)| s == section)
            .map_or(0, |(_, quantity)| *quantity);
        sales.extend(plan_sale(held, section, wanted)?);
    }
    Some(sales)
}

/// How a payment that the order's holds do not cover (a late payment, or
/// more places than it holds) gets `paid` places of `section` out of
/// `buckets` as read: its own entries the buckets still carry first
/// (expired or not: places nobody took over are still its own), lowest
/// bucket first, the surplus given back; then places anyone may take, as
/// hold-ga takes them (free ones, then expired holds of other orders).
/// `None` if the buckets cannot give that many.
pub fn plan_late_sale(
    buckets: &[Bucket],
    section: &SectionId,
    me: &OrderId,
    paid: u32,
    now: Millis,
) -> Option<Vec<PlaceSale>> {
    let mut own: Vec<(u32, u32)> = buckets
        .iter()
        .filter_map(|b| {
            b.holds
                .iter()
                .find(|h| &h.order == me)
                .map(|h| (b.index, h.quantity))
        })
        .collect();
    own.sort_unstable();
    let mut remaining = paid;
    let mut sales: Vec<PlaceSale> = own
        .into_iter()
        .map(|(bucket, held)| {
            let sell = held.min(remaining);
            remaining -= sell;
            PlaceSale {
                section: section.clone(),
                bucket,
                held,
                sell,
                take: None,
            }
        })
        .collect();
    if remaining > 0 {
        // Every own place is sold by now, so a bucket's `free` is all the
        // room it has besides the expired holds of others.
        for take in plan_take(buckets, me, remaining, now)? {
            match sales.iter_mut().find(|sale| sale.bucket == take.bucket) {
                Some(sale) => sale.take = Some(take),
                None => sales.push(PlaceSale {
                    section: section.clone(),
                    bucket: take.bucket,
                    held: 0,
                    sell: 0,
                    take: Some(take),
                }),
            }
        }
    }
    Some(sales)
}

#[cfg(test)]
#[path = "ga_tests.rs"]
mod tests;
