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
/// surplus given back). `None` if it holds fewer than `paid`.
pub fn plan_sale(held: &[HeldPlaces], section: &SectionId, paid: u32) -> Option<Vec<PlaceSale>> {
    let mut here: Vec<&HeldPlaces> = held.iter().filter(|h| &h.section == section).collect();
    here.sort_by_key(|h| h.bucket);
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
mod tests {
    use super::*;

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    fn hold(order: &str, quantity: u32, expires_at: i64) -> Result<PlaceHold, crate::error::Error> {
        Ok(PlaceHold {
            order: OrderId::parse(order)?,
            quantity,
            expires_at: Millis(expires_at),
        })
    }

    #[test]
    fn capacity_is_spread_over_buckets_that_add_up() {
        for capacity in [1, 19, 20, 21, 50, 20_000, 100_000] {
            let count = bucket_count(capacity);
            assert!((1..=MAX_BUCKETS).contains(&count), "{capacity}");
            let total: u32 = (0..count).map(|i| bucket_capacity(capacity, i)).sum();
            assert_eq!(total, capacity);
            assert!((0..count).all(|i| bucket_capacity(capacity, i) >= 1));
        }
        assert_eq!(bucket_count(50), 3, "20 + 20 + 10");
        assert_eq!(bucket_count(20_000), 1000);
        assert_eq!(bucket_count(100_000), 1000, "100 places each");
    }

    #[test]
    fn a_place_hold_is_reclaimable_at_its_exact_expiry() -> TestResult {
        // One boundary (Clocks): live while now < t, another's from now >= t.
        let me = OrderId::parse("me")?;
        let t = 1_000;
        let bucket = Bucket {
            index: 0,
            capacity: 2,
            sold: 0,
            free: 0,
            holds: vec![hold("other", 2, t)?],
        };
        let buckets = std::slice::from_ref(&bucket);
        assert_eq!(bucket.available(Millis(t - 1)), 0);
        assert_eq!(
            plan_take(buckets, &me, 1, Millis(t - 1)),
            None,
            "still live a millisecond before"
        );
        assert_eq!(bucket.available(Millis(t)), 2);
        let take = plan_take(buckets, &me, 2, Millis(t)).ok_or("reclaimable at t")?;
        assert_eq!(take[0].reclaim, vec![hold("other", 2, t)?]);
        assert_eq!(most_holdable(buckets, &me, Millis(t)), 2);
        Ok(())
    }

    #[test]
    fn taking_uses_free_places_then_expired_holds_of_others() -> TestResult {
        let me = OrderId::parse("me")?;
        let now = Millis(1_000);
        let buckets = vec![
            Bucket {
                index: 0,
                capacity: 5,
                sold: 2,
                free: 0,
                holds: vec![hold("live", 2, 5_000)?, hold("late", 1, 900)?],
            },
            Bucket {
                index: 1,
                capacity: 6,
                sold: 0,
                free: 2,
                holds: vec![hold("old", 3, 100)?, hold("me", 1, 5_000)?],
            },
        ];
        assert_eq!(buckets[0].available(now), 1, "the late hold's place");
        assert_eq!(buckets[1].available(now), 5);
        assert_eq!(
            most_holdable(&buckets, &me, now),
            1 + 5 + 1,
            "its own live place counts as holdable for it"
        );
        let takes = plan_take(&buckets, &me, 4, now).ok_or("4 fit")?;
        assert_eq!(
            takes[0],
            Take {
                bucket: 0,
                places: 1,
                reclaim: vec![hold("late", 1, 900)?]
            }
        );
        assert_eq!(
            takes[1],
            Take {
                bucket: 1,
                places: 3,
                reclaim: vec![hold("old", 3, 100)?]
            }
        );
        assert_eq!(takes[0].free_needed(), 0);
        assert_eq!(
            takes[1].free_needed(),
            0,
            "2 free + 3 reclaimed cover 3 (one to spare)"
        );
        assert_eq!(plan_take(&buckets, &me, 2, now).ok_or("2 fit")?.len(), 2);
        assert_eq!(plan_take(&buckets, &me, 6, now).map(|t| t.len()), Some(2));
        assert_eq!(
            plan_take(&buckets, &me, 7, now),
            None,
            "the live holds (its own included) are not takeable"
        );
        Ok(())
    }

    #[test]
    fn a_sale_takes_the_paid_places_and_gives_back_the_rest() -> TestResult {
        let (f, g) = (SectionId::parse("F")?, SectionId::parse("G")?);
        let held = vec![
            HeldPlaces {
                section: f.clone(),
                bucket: 4,
                quantity: 2,
            },
            HeldPlaces {
                section: f.clone(),
                bucket: 1,
                quantity: 2,
            },
            HeldPlaces {
                section: g.clone(),
                bucket: 0,
                quantity: 1,
            },
        ];
        let sale = plan_sale(&held, &f, 3).ok_or("3 of 4 held")?;
        assert_eq!(
            sale.iter()
                .map(|s| (s.bucket, s.held, s.sell))
                .collect::<Vec<_>>(),
            vec![(1, 2, 2), (4, 2, 1)]
        );
        assert_eq!(plan_sale(&held, &f, 5), None);
        assert_eq!(
            plan_sale(&held, &g, 0).ok_or("nothing paid")?,
            vec![PlaceSale {
                section: g.clone(),
                bucket: 0,
                held: 1,
                sell: 0,
                take: None
            }]
        );
        assert_eq!(plan_sale(&held, &SectionId::parse("H")?, 0), Some(vec![]));
        Ok(())
    }

    #[test]
    fn held_sales_cover_every_section_paid_for_or_held() -> TestResult {
        let (f, g) = (SectionId::parse("F")?, SectionId::parse("G")?);
        let held = vec![
            HeldPlaces {
                section: g.clone(),
                bucket: 3,
                quantity: 2,
            },
            HeldPlaces {
                section: f.clone(),
                bucket: 1,
                quantity: 1,
            },
        ];
        // (paid per section, each sale as (section, bucket, held, sell), or None)
        type Sale<'a> = (&'a str, u32, u32, u32);
        type Case<'a> = (Vec<(SectionId, u32)>, Option<Vec<Sale<'a>>>);
        let cases: [Case; 4] = [
            // G paid 1 of 2; F not paid: all of F goes back.
            (
                vec![(g.clone(), 1)],
                Some(vec![("F", 1, 1, 0), ("G", 3, 2, 1)]),
            ),
            (
                vec![(f.clone(), 1), (g.clone(), 2)],
                Some(vec![("F", 1, 1, 1), ("G", 3, 2, 2)]),
            ),
            // More than held in one section: no sale from holds.
            (vec![(f.clone(), 2)], None),
            // A section paid for and never held.
            (vec![(SectionId::parse("H")?, 1)], None),
        ];
        for (paid, expected) in cases {
            let got = plan_held_sales(&held, &paid).map(|sales| {
                sales
                    .iter()
                    .map(|s| (s.section.as_str().to_owned(), s.bucket, s.held, s.sell))
                    .collect::<Vec<_>>()
            });
            let expected = expected.map(|sales| {
                sales
                    .into_iter()
                    .map(|(section, bucket, held, sell)| (section.to_owned(), bucket, held, sell))
                    .collect::<Vec<_>>()
            });
            assert_eq!(got, expected, "paid {paid:?}");
        }
        Ok(())
    }

    #[test]
    fn a_late_sale_sells_its_own_entries_then_takes_what_anyone_may() -> TestResult {
        let f = SectionId::parse("F")?;
        let me = OrderId::parse("me")?;
        let now = Millis(1_000);
        let buckets = vec![
            // Its own expired entry nobody took over, and one free place.
            Bucket {
                index: 2,
                capacity: 5,
                sold: 1,
                free: 1,
                holds: vec![hold("me", 2, 900)?, hold("live", 1, 5_000)?],
            },
            // An expired hold of another order, and a live one.
            Bucket {
                index: 0,
                capacity: 4,
                sold: 0,
                free: 0,
                holds: vec![hold("old", 2, 100)?, hold("live", 2, 5_000)?],
            },
        ];
        let sale = plan_late_sale(&buckets, &f, &me, 1, now).ok_or("its own entry covers 1")?;
        assert_eq!(
            sale,
            vec![PlaceSale {
                section: f.clone(),
                bucket: 2,
                held: 2,
                sell: 1,
                take: None
            }],
            "the surplus is given back"
        );
        let sale =
            plan_late_sale(&buckets, &f, &me, 4, now).ok_or("2 own + 1 free + 2 reclaimable")?;
        assert_eq!(sale.iter().map(PlaceSale::sold).sum::<u32>(), 4);
        assert_eq!(sale[0].bucket, 2);
        assert_eq!(
            (
                sale[0].held,
                sale[0].sell,
                sale[0].take.as_ref().map(|t| t.places)
            ),
            (2, 2, Some(1)),
            "own bucket's free place, one item"
        );
        assert_eq!(
            sale[1].take,
            Some(Take {
                bucket: 0,
                places: 1,
                reclaim: vec![hold("old", 2, 100)?]
            })
        );
        assert_eq!(sale[1].held, 0);
        assert_eq!(
            plan_late_sale(&buckets, &f, &me, 5, now)
                .map(|s| s.iter().map(PlaceSale::sold).sum::<u32>()),
            Some(5)
        );
        assert_eq!(
            plan_late_sale(&buckets, &f, &me, 6, now),
            None,
            "live holds of others are never taken"
        );
        // An order whose entries were all taken over takes what is free.
        let other = OrderId::parse("other")?;
        let sale = plan_late_sale(&buckets, &f, &other, 5, now)
            .ok_or("1 free + 2 + 2 reclaimable (me's expired entry too)")?;
        assert!(sale.iter().all(|s| s.held == 0 && s.sell == 0));
        assert_eq!(sale.iter().map(PlaceSale::sold).sum::<u32>(), 5);
        assert_eq!(plan_late_sale(&buckets, &f, &other, 6, now), None);
        Ok(())
    }

    #[test]
    fn releasing_starts_with_the_biggest_holding() -> TestResult {
        let s = SectionId::parse("F")?;
        let held = vec![
            HeldPlaces {
                section: s.clone(),
                bucket: 0,
                quantity: 1,
            },
            HeldPlaces {
                section: s.clone(),
                bucket: 3,
                quantity: 3,
            },
        ];
        assert_eq!(plan_release(&held, 2), vec![(3, 3, 1)]);
        assert_eq!(plan_release(&held, 4), vec![(3, 3, 0), (0, 1, 0)]);
        assert_eq!(plan_release(&held, 0), vec![]);
        Ok(())
    }
}
