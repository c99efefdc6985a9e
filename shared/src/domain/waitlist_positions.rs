//! A waitlist's positions and its count of waiting entries (API.md,
//! "Entries": a position is within 1% and one second's joins, as of at
//! most 5 s ago), kept by the offerer's tick as a histogram of the WAITING
//! entries by the second they joined.
//!
//! Its inputs are two append-only logs, each stamped by its writer before
//! the write commits: the organiser's list (a join, at its `joinedAt`) and
//! the departures (an entry leaving WAITING: offered, left, removed, at
//! that instant, naming when it joined). A write stamped before
//! `settled_until` is counted once for good in `settled`; those stamped
//! since are read again at every update and counted in `recent`, so a
//! write that commits late (up to [`SETTLE_MS`] after its stamp) is still
//! counted, and none is counted twice. Both are signed: a departure may be
//! settled before its join.

use std::collections::BTreeMap;

pub use super::waitlist_buckets::Bucket;
use super::waitlist_buckets::{add, by_second, second, tally};
use super::waitlist_offer_counts::{OfferCounts, OfferEnd};
use super::Millis;

/// How long after its stamp a join or a departure is taken to have
/// committed: every writer stamps it just before its transaction, which
/// the SDK gives up on after 8 s (`store::sdk_timeouts`, retries within
/// it); until then it is read again at every update. Well past that, for
/// a clock a little behind the tick's.
pub const SETTLE_MS: i64 = 30_000;

/// How often the offerer's tick updates an open waitlist's positions:
/// with a reader's second of cache and the reads' lag, a position is
/// then well within the contract's 5 s.
pub const UPDATE_MS: i64 = 2_000;

/// Whether an update is due at `now`, the last having been at `last`
/// (`None`: none yet, by this tick).
pub fn update_due(last: Option<Millis>, now: Millis) -> bool {
    last.is_none_or(|last| now.0 - last.0 >= UPDATE_MS || now < last)
}

/// Settled buckets kept at most (each ~6 bytes stored at one a second):
/// past this the neighbours that are the smallest share of the line ahead
/// merge ([`compact`]).
pub const MAX_BUCKETS: usize = 2_000;

/// Merged buckets counted again second by second at most per update (each
/// a read of the list over its span: see [`Positions::to_recount`]).
pub const RECOUNTS_PER_UPDATE: usize = 2;

/// An entry leaving WAITING at `at`, having joined at `joined_at`; an
/// offer's, with the offer's expiry (what the offered count follows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Departure {
    pub at: Millis,
    pub joined_at: Millis,
    pub offer_expires_at: Option<Millis>,
}

/// What an update read: the joins, departures and offers' ends stamped at
/// or after the positions' `settled_until`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Since {
    /// Each join's `joinedAt`.
    pub joins: Vec<Millis>,
    pub departures: Vec<Departure>,
    pub ends: Vec<OfferEnd>,
}

/// The histogram, settled and recent, by join second.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Positions {
    /// Joins and departures stamped before this are in `settled`.
    pub settled_until: Millis,
    /// Sorted by second, disjoint, none empty.
    pub settled: Vec<Bucket>,
    /// Those stamped since, as the last update read them: one second each.
    pub recent: Vec<Bucket>,
    /// The offers live and the entries purchased, kept from the same logs.
    pub offers: OfferCounts,
}

impl Default for Positions {
    /// None counted yet: everything ever stamped is still to be read.
    fn default() -> Self {
        Self {
            settled_until: Millis(0),
            settled: Vec::new(),
            recent: Vec::new(),
            offers: OfferCounts::default(),
        }
    }
}

/// The offers among `since`'s departures: when each was made, and its
/// expiry.
fn offers_made(since: &Since) -> Vec<(Millis, Millis)> {
    since
        .departures
        .iter()
        .filter_map(|d| d.offer_expires_at.map(|expires| (d.at, expires)))
        .collect()
}

impl Positions {
    /// The positions after reading `since` at `now`: what was stamped more
    /// than [`SETTLE_MS`] ago moves into `settled` (once: the next update
    /// reads from the new `settled_until`), the rest is `recent`.
    pub fn update(&self, since: &Since, now: Millis) -> Positions {
        let until = Millis(self.settled_until.0.max(now.0 - SETTLE_MS));
        let joins = since.joins.iter().map(|at| (*at, second(*at), 1));
        let departures = since
            .departures
            .iter()
            .map(|d| (d.at, second(d.joined_at), -1));
        let moves: Vec<(Millis, i64, i64)> = joins.chain(departures).collect();
        let settling = tally(
            moves
                .iter()
                .filter(|(at, _, _)| *at < until)
                .map(|&(_, s, d)| (s, d)),
        );
        let recent = tally(
            moves
                .iter()
                .filter(|(at, _, _)| *at >= until)
                .map(|&(_, s, d)| (s, d)),
        );
        let mut settled = self.settled.clone();
        for (at, delta) in settling {
            add(&mut settled, at, delta);
        }
        settled.retain(|b| b.waiting != 0);
        compact(&mut settled, MAX_BUCKETS);
        Positions {
            offers: self
                .offers
                .update(&offers_made(since), &since.ends, until, now),
            settled_until: until,
            settled,
            recent: by_second(recent),
        }
    }

    /// The WAITING entries that joined before an entry that joined at
    /// `joined_at`, plus one: every bucket wholly before its second, and
    /// of a merged bucket it falls in, the share of its span before it.
    /// Those of its own second are not counted (the contract allows one
    /// second's joins).
    pub fn position(&self, joined_at: Millis) -> u64 {
        let at = second(joined_at);
        let ahead: i64 = self
            .settled
            .iter()
            .chain(&self.recent)
            .map(|b| {
                if b.last < at {
                    b.waiting
                } else if b.first < at {
                    let span = b.last - b.first + 1;
                    b.waiting * (at - b.first) / span
                } else {
                    0
                }
            })
            .sum();
        u64::try_from(ahead).unwrap_or(0) + 1
    }

    /// The WAITING entries counted.
    pub fn waiting(&self) -> u64 {
        let all: i64 = self
            .settled
            .iter()
            .chain(&self.recent)
            .map(|b| b.waiting)
            .sum();
        u64::try_from(all).unwrap_or(0)
    }
}

impl Positions {
    /// The spans of merged buckets whose count has come to be more than 1%
    /// of the waiting entries ahead of them (merged further back in a line
    /// whose head has since been offered away), earliest first, at most
    /// [`RECOUNTS_PER_UPDATE`]: each is to be counted again second by
    /// second ([`Positions::recounted`]) so positions stay within 1%.
    pub fn to_recount(&self) -> Vec<(i64, i64)> {
        self.settled
            .iter()
            .filter(|b| b.first < b.last && b.waiting > 0)
            .filter(|b| {
                let ahead = self.position(Millis(b.first.saturating_mul(1_000))) - 1;
                i128::from(b.waiting) * 100 > i128::from(ahead)
            })
            .take(RECOUNTS_PER_UPDATE)
            .map(|b| (b.first, b.last))
            .collect()
    }

    /// The positions with the settled bucket spanning exactly `first..=last`
    /// replaced by `seconds`, its waiting entries by join second as counted
    /// again (unchanged if no bucket spans exactly that).
    pub fn recounted(&self, first: i64, last: i64, seconds: &BTreeMap<i64, i64>) -> Positions {
        let mut next = self.clone();
        let Some(i) = next
            .settled
            .iter()
            .position(|b| b.first == first && b.last == last)
        else {
            return next;
        };
        let split = seconds
            .range(first..=last)
            .filter(|(_, n)| **n != 0)
            .map(|(&at, &waiting)| Bucket {
                first: at,
                last: at,
                waiting,
            });
        next.settled.splice(i..=i, split);
        compact(&mut next.settled, MAX_BUCKETS);
        next
    }
}

/// What one list place counts in a recount as of `as_of` (the positions'
/// `settled_until`), as [`Positions::update`] counted it in `settled`: its
/// join if stamped before `as_of`, less its departure if stamped before
/// it. A join still recent is not settled yet (`recent` counts it); a
/// departure stamped before `as_of` of a join stamped at or after it (a
/// writer's clock behind) is settled already, as -1.
pub fn settled_count(joined_at: Millis, left_at: Option<Millis>, as_of: Millis) -> i64 {
    let joined = i64::from(joined_at < as_of);
    let left = i64::from(left_at.is_some_and(|at| at < as_of));
    joined - left
}

/// Merges neighbours until at most `max` buckets are left, the pairs
/// whose merged count is the smallest share of the entries before them
/// first (a position inside a merged bucket is off by at most its count:
/// the smallest share keeps that error the smallest fraction of the
/// position). Each pass merges as many disjoint pairs as it needs, so a
/// long history compacts in a few sorts, not a pass per merge.
fn compact(buckets: &mut Vec<Bucket>, max: usize) {
    let max = max.max(1);
    while buckets.len() > max {
        let pairs = pairs_to_merge(buckets, buckets.len() - max);
        *buckets = merged(buckets, &pairs);
    }
}

/// Up to `wanted` disjoint neighbour pairs, smallest share first: each
/// bucket marked that merges with its pair.
fn pairs_to_merge(buckets: &[Bucket], wanted: usize) -> Vec<bool> {
    let mut before = 0i64;
    let mut pairs = Vec::with_capacity(buckets.len());
    for i in 0..buckets.len().saturating_sub(1) {
        let merged = buckets[i].waiting + buckets[i + 1].waiting;
        pairs.push((i, merged, before.max(1)));
        before += buckets[i].waiting;
    }
    // merged / before, compared without division.
    pairs.sort_by(|a, b| {
        (i128::from(a.1) * i128::from(b.2)).cmp(&(i128::from(b.1) * i128::from(a.2)))
    });
    let mut marked = vec![false; buckets.len()];
    let mut merges = 0;
    for (i, _, _) in pairs {
        if merges == wanted {
            break;
        }
        if !marked[i] && !marked[i + 1] {
            marked[i] = true;
            marked[i + 1] = true;
            merges += 1;
        }
    }
    marked
}

/// `buckets` with each marked pair merged: marked buckets come in
/// disjoint pairs, so scanning from the left meets each pair's first.
fn merged(buckets: &[Bucket], marked: &[bool]) -> Vec<Bucket> {
    let mut out = Vec::with_capacity(buckets.len());
    let mut i = 0;
    while i < buckets.len() {
        let b = buckets[i];
        match buckets.get(i + 1) {
            Some(next) if marked[i] && marked[i + 1] => {
                out.push(Bucket {
                    first: b.first,
                    last: next.last,
                    waiting: b.waiting + next.waiting,
                });
                i += 2;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "waitlist_positions_tests.rs"]
mod tests;
