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

use super::Millis;

/// How long after its stamp a join or a departure is taken to have
/// committed: a transaction's write lands within a request's time (29 s
/// at most behind API Gateway; a few milliseconds in practice), and until
/// then it is read again at every update.
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

/// Settled buckets kept at most (each ~10 bytes stored): past this the
/// closest neighbours merge (see [`Positions::update`]).
pub const MAX_BUCKETS: usize = 2_000;

/// The WAITING entries that joined within `first..=last` (Unix seconds):
/// signed, since a departure can be counted before its join.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bucket {
    pub first: i64,
    pub last: i64,
    pub waiting: i64,
}

/// An entry leaving WAITING at `at`, having joined at `joined_at`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Departure {
    pub at: Millis,
    pub joined_at: Millis,
}

/// What an update read: the joins and departures stamped at or after the
/// positions' `settled_until`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Since {
    /// Each join's `joinedAt`.
    pub joins: Vec<Millis>,
    pub departures: Vec<Departure>,
}

/// The histogram, settled and recent, by join second.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Positions {
    /// Joins and departures stamped before this are in `settled`.
    pub settled_until: Millis,
    /// Sorted by second, disjoint, none empty.
    pub settled: Vec<Bucket>,
    /// Those stamped since, as the last update read them: one second each.
    pub recent: Vec<Bucket>,
}

fn second(at: Millis) -> i64 {
    at.0.div_euclid(1_000)
}

/// Per-second sums of `moves` (a join +1 at its second, a departure -1 at
/// its join's second).
fn tally<'a>(moves: impl Iterator<Item = (i64, i64)> + 'a) -> BTreeMap<i64, i64> {
    let mut seconds = BTreeMap::new();
    for (at, delta) in moves {
        *seconds.entry(at).or_insert(0) += delta;
    }
    seconds.retain(|_, n| *n != 0);
    seconds
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
            settled_until: until,
            settled,
            recent: recent
                .into_iter()
                .map(|(at, waiting)| Bucket {
                    first: at,
                    last: at,
                    waiting,
                })
                .collect(),
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

/// Adds `delta` at second `at`: into the bucket spanning it, or a new one.
fn add(buckets: &mut Vec<Bucket>, at: i64, delta: i64) {
    let i = buckets.partition_point(|b| b.last < at);
    match buckets.get_mut(i) {
        Some(b) if b.first <= at => b.waiting += delta,
        _ => buckets.insert(
            i,
            Bucket {
                first: at,
                last: at,
                waiting: delta,
            },
        ),
    }
}

/// Merges neighbours until at most `max` buckets are left, each time the
/// pair whose merged count is the smallest share of the entries before
/// them (a position inside a merged bucket is off by at most its count:
/// the smallest share keeps that error the smallest fraction of the
/// position, under 1% wherever the line is long enough for that).
fn compact(buckets: &mut Vec<Bucket>, max: usize) {
    while buckets.len() > max.max(1) {
        let mut before = 0i64;
        let mut best: Option<(usize, i64, i64)> = None;
        for i in 0..buckets.len() - 1 {
            let merged = buckets[i].waiting + buckets[i + 1].waiting;
            // merged / before, compared without division.
            let ahead = before.max(1);
            let better = best.is_none_or(|(_, m, a)| merged * a < m * ahead);
            if better {
                best = Some((i, merged, ahead));
            }
            before += buckets[i].waiting;
        }
        let Some((i, merged, _)) = best else { return };
        buckets[i].last = buckets[i + 1].last;
        buckets[i].waiting = merged;
        buckets.remove(i + 1);
    }
}

#[cfg(test)]
#[path = "waitlist_positions_tests.rs"]
mod tests;
