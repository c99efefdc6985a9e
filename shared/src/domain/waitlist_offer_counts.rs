//! get-waitlist's `offered` and `purchased` (API.md: the counts lag by at
//! most 5 s), kept by the offerer's tick with the positions and from the
//! same kind of log: an offer is a departure naming its expiry (written in
//! the offer's transaction), and an offer's end by a write (a purchase, a
//! decline or removal, a cancel, a refund) is a record naming the offer's
//! expiry, written in that write's transaction. An offer counts as offered
//! from its departure until its end or its expiry, whichever comes first;
//! no write announces an expiry, so the live offers are kept by the second
//! they expire. As the positions do, what was stamped before
//! `settled_until` is counted once for good, and what since is read again
//! at every update (a write may commit up to `SETTLE_MS` after its stamp).
//! An offer its holder empties (drop-seat or hold-ga 0 of its last unit)
//! logs its end in that write.

use super::waitlist_buckets::{add, by_second, second, tally, Bucket};
use super::Millis;

/// An offer ended by a write stamped `at`: bought (`purchased`), or not;
/// the offer expiring at `expires_at`, and `live` at the write (a late
/// sale of an offer already ended or run out counts its purchase only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OfferEnd {
    pub at: Millis,
    pub expires_at: Millis,
    pub purchased: bool,
    pub live: bool,
}

/// The offers live by the second they expire, and the entries purchased,
/// settled and recent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OfferCounts {
    /// Counted for good: offers made less those ended, by expiry second
    /// (signed: an end may settle before its offer), seconds already past
    /// dropped.
    pub settled: Vec<Bucket>,
    /// Those stamped since `settled_until`, as the last update read them.
    pub recent: Vec<Bucket>,
    pub purchased_settled: i64,
    pub purchased_recent: i64,
}

impl OfferCounts {
    /// The counts after reading `made` (each offer's stamp and expiry) and
    /// `ends` at `now`, settling what was stamped before `until` (the
    /// positions' new `settled_until`).
    pub fn update(
        &self,
        made: &[(Millis, Millis)],
        ends: &[OfferEnd],
        until: Millis,
        now: Millis,
    ) -> OfferCounts {
        let made = made.iter().map(|&(at, expires)| (at, second(expires), 1));
        let ended = ends
            .iter()
            .filter(|e| e.live)
            .map(|e| (e.at, second(e.expires_at), -1));
        let moves: Vec<(Millis, i64, i64)> = made.chain(ended).collect();
        let of = |settling: bool| {
            tally(
                moves
                    .iter()
                    .filter(move |(at, _, _)| (*at < until) == settling)
                    .map(|&(_, s, d)| (s, d)),
            )
        };
        let mut settled = self.settled.clone();
        for (at, delta) in of(true) {
            add(&mut settled, at, delta);
        }
        let now_s = second(now);
        settled.retain(|b| b.waiting != 0 && b.last >= now_s);
        let purchases = |settling: bool| {
            let n = ends
                .iter()
                .filter(|e| e.purchased && (e.at < until) == settling)
                .count();
            i64::try_from(n).unwrap_or(i64::MAX)
        };
        OfferCounts {
            settled,
            recent: by_second(of(false)),
            purchased_settled: self.purchased_settled + purchases(true),
            purchased_recent: purchases(false),
        }
    }

    /// The offers live at `now`: those whose expiry second has not passed
    /// (an offer may read live up to a second past its expiry).
    pub fn offered(&self, now: Millis) -> u64 {
        let now_s = second(now);
        let live: i64 = self
            .settled
            .iter()
            .chain(&self.recent)
            .filter(|b| b.last >= now_s)
            .map(|b| b.waiting)
            .sum();
        u64::try_from(live).unwrap_or(0)
    }

    /// The entries purchased.
    pub fn purchased(&self) -> u64 {
        u64::try_from(self.purchased_settled + self.purchased_recent).unwrap_or(0)
    }
}

#[cfg(test)]
#[path = "waitlist_offer_counts_tests.rs"]
mod tests;
