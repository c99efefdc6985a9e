//! When the offerer's tick looks at a waitlist (API.md, "Offers", how
//! fast), pure. The tick is the one offerer: the stream counts every batch
//! that frees seats or places, and a count the last look did not see makes
//! a look due; so does what no write announces: a hold whose
//! `expiresAt` passes (its seat is free from that instant, swept or not),
//! a waitlist just put or opened, the holds of the opening's last second,
//! and joins (seats may sit free that nobody waiting before could fill).
//! The tick keeps what its last look saw ([`LastLook`]) and looks again
//! only when one of those is due, so an idle waitlist costs a copy's read
//! and the count's a tick, and its list's ends every [`JOIN_CHECK_MS`].

use std::collections::HashMap;

use super::ga::Bucket;
use super::seat_map::{ProjectedSeat, RowProjection};
use super::waitlist::{OFFER_SECONDS_RANGE, WAITLIST_ONLY_AFTER_MS};
use super::waitlist_positions::SETTLE_MS;
use super::{hold_is_live, Millis, RowId, SectionId};

/// How often the tick looks at a waitlist whatever it remembers: a safety
/// net for holds its memory cannot know. After the opening's settling
/// ([`OPENING_SETTLE_MS`]) the only new holds are offers (an order's own
/// re-claims keep its expiry, and an extension only delays a lapse), and
/// an offer holds at least 60 s: a look this often sees another
/// instance's offer before it lapses.
pub const REFRESH_MS: i64 = 30_000;

/// How often the tick asks whether anyone joined (a join may fit seats
/// that sit free): such a join is offered within this and a tick.
pub const JOIN_CHECK_MS: i64 = 2_000;

/// After the opening, ordinary holds are taken for one more second, and
/// the map shows them up to 5 s later: a look this long after the opening
/// sees every hold but offers, whatever the looks before it saw.
pub const OPENING_SETTLE_MS: i64 = WAITLIST_ONLY_AFTER_MS + 5_000;

/// How long the tick leaves a waitlist alone after a look failed (a
/// throttled table is not asked again at every tick).
pub const FAILED_LOOK_BACKOFF_MS: i64 = 2_000;

/// How long after its delete the tick keeps visiting a waitlist that had
/// opened, for its counts alone (API.md, get-waitlist: they lag by at most
/// 5 s): an offer lives at most the longest `offerSeconds`, so every offer
/// made before the delete has ended or run out by then, and each end
/// logged meanwhile has settled.
pub const COUNTED_AFTER_DELETE_MS: i64 = *OFFER_SECONDS_RANGE.end() as i64 * 1_000 + SETTLE_MS;

/// Whether the tick still keeps the counts of a waitlist deleted at
/// `ended_at` (opened at `opened_at`, if it opened) at `now`; else it
/// takes it off its registry.
pub fn counted_after_delete(opened_at: Option<Millis>, ended_at: Millis, now: Millis) -> bool {
    opened_at.is_some() && now.0 < ended_at.0.saturating_add(COUNTED_AFTER_DELETE_MS)
}

/// What the tick's last look at a waitlist saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LastLook {
    /// The waitlist's state version it looked at: a put or an opening
    /// since (a later version) makes another look due.
    pub version: i64,
    pub at: Millis,
    /// The earliest expiry of a hold live at the look (its own offers'
    /// included): from then a seat is free that no write announces.
    pub next_lapse: Option<Millis>,
    /// It stopped at its bounds: there may be more to offer.
    pub more: bool,
    /// The stream's count of batches that freed something, as read
    /// before it (the look's map shows what they freed).
    pub frees: u64,
}

/// What the tick knows of a waitlist as it visits it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Visit<'a> {
    pub last: Option<&'a LastLook>,
    /// The state's version and opening, as the copy read shows them.
    pub version: i64,
    pub opened_at: Option<Millis>,
    /// When the list's ends were last read.
    pub joins_checked: Millis,
    /// The stream's count of batches that freed something, read now.
    pub frees: u64,
    pub now: Millis,
}

/// Why a look is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// No look yet, or the waitlist was put or opened since.
    Changed,
    /// The opening's last holds now show on the map.
    Settled,
    More,
    /// The stream counted a batch that freed seats or places.
    Freed,
    Lapsed,
    Refresh,
}

/// What the tick does for a waitlist now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    Look(Why),
    /// Look if anyone joined since the last check.
    CheckJoins,
    Nothing,
}

/// When the opening at `opened_at` has settled ([`OPENING_SETTLE_MS`]).
pub fn settled_at(opened_at: Option<Millis>) -> Option<Millis> {
    opened_at.map(|at| Millis(at.0 + OPENING_SETTLE_MS))
}

/// What is due at a visit.
pub fn due(visit: Visit) -> Due {
    let now = visit.now;
    // A copy read may lag the one read before it: an older version is no
    // change.
    let Some(last) = visit.last.filter(|last| last.version >= visit.version) else {
        return Due::Look(Why::Changed);
    };
    let settled = settled_at(visit.opened_at);
    if settled.is_some_and(|settled| last.at < settled && now >= settled) {
        Due::Look(Why::Settled)
    } else if last.more {
        Due::Look(Why::More)
    } else if visit.frees > last.frees {
        Due::Look(Why::Freed)
    } else if last.next_lapse.is_some_and(|at| !hold_is_live(at, now)) {
        Due::Look(Why::Lapsed)
    } else if now.0 - last.at.0 >= REFRESH_MS {
        Due::Look(Why::Refresh)
    } else if now.0 - visit.joins_checked.0 >= JOIN_CHECK_MS {
        Due::CheckJoins
    } else {
        Due::Nothing
    }
}

/// Whether the list's ends read now (`newest`: each shard's latest join
/// keys, newest first) show a join the ones read before (`before`) did
/// not. A key missing from `before` is a join whatever its place: a join's
/// key is stamped before its write commits, so a late commit can land
/// below the newest key seen.
pub fn joined_since(before: Option<&[Vec<String>]>, newest: &[Vec<String>]) -> bool {
    let Some(before) = before.filter(|b| b.len() == newest.len()) else {
        return true;
    };
    newest
        .iter()
        .zip(before)
        .any(|(now, then)| now.iter().any(|key| !then.contains(key)))
}

/// The earliest expiry among the holds `rows` (the map's projection) and
/// `buckets` (general admission's, as read) show live at `now`.
pub fn next_lapse(
    rows: &HashMap<(SectionId, RowId), RowProjection>,
    buckets: &HashMap<SectionId, Vec<Bucket>>,
    now: Millis,
) -> Option<Millis> {
    let seats = rows
        .values()
        .flat_map(|row| row.values())
        .filter_map(|seat| match *seat {
            ProjectedSeat::Held { expires_at } => Some(expires_at),
            _ => None,
        });
    let places = buckets
        .values()
        .flatten()
        .flat_map(|bucket| bucket.holds.iter().map(|hold| hold.expires_at));
    seats
        .chain(places)
        .filter(|&expires_at| hold_is_live(expires_at, now))
        .min()
}

#[cfg(test)]
#[path = "offer_tick_tests.rs"]
mod tests;
