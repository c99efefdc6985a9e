//! When the offerer's tick looks at a waitlist (API.md, "Offers", how
//! fast), pure. The stream starts a look for every write that frees a
//! seat; what no write announces is left to the tick: a hold whose
//! `expiresAt` passes (its seat is free from that instant, swept or not),
//! a look that stopped at its bounds, a waitlist just put or opened, and
//! joins while seats sit free that nobody waiting could fill. The tick
//! keeps what its last look saw ([`LastLook`]) and looks again only when
//! one of those is due, so an idle waitlist costs a copy's read a tick.

use std::collections::HashMap;

use super::seat_map::{ProjectedSeat, RowProjection};
use super::{hold_is_live, Millis, RowId, SectionId};

/// How often the tick looks at a waitlist whatever it remembers: a safety
/// net for what its memory cannot know (a hold made by another instance's
/// offer expires no sooner than a minute after it is made, so a look this
/// often sees it before it lapses; a stream look that stopped at its
/// bounds).
pub const REFRESH_MS: i64 = 30_000;

/// How often the tick asks whether anyone joined while seats sit free:
/// such a join is offered within this and a tick.
pub const JOIN_CHECK_MS: i64 = 2_000;

/// What the tick's last look at a waitlist saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LastLook {
    /// The waitlist's state version it looked at: a put or an opening
    /// since makes another look due.
    pub version: i64,
    pub at: Millis,
    /// The earliest expiry of a hold live at the look (its own offers'
    /// included): from then a seat is free that no write announces.
    pub next_lapse: Option<Millis>,
    /// It stopped at its bounds: there may be more to offer.
    pub more: bool,
    /// It left seats free that no waiting entry could fill: a join may.
    pub free_left: bool,
}

/// Why a look is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// No look yet, or the waitlist was put or opened since.
    Changed,
    More,
    Lapsed,
    Refresh,
}

/// What the tick does for a waitlist now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    Look(Why),
    /// Seats sit free: look if anyone joined since the last check.
    CheckJoins,
    Nothing,
}

/// What is due at `now` for a waitlist at state `version`, after `last`
/// and a join check at `joins_checked`.
pub fn due(last: Option<&LastLook>, version: i64, joins_checked: Millis, now: Millis) -> Due {
    let Some(last) = last.filter(|last| last.version == version) else {
        return Due::Look(Why::Changed);
    };
    if last.more {
        Due::Look(Why::More)
    } else if last.next_lapse.is_some_and(|at| !hold_is_live(at, now)) {
        Due::Look(Why::Lapsed)
    } else if now.0 - last.at.0 >= REFRESH_MS {
        Due::Look(Why::Refresh)
    } else if last.free_left && now.0 - joins_checked.0 >= JOIN_CHECK_MS {
        Due::CheckJoins
    } else {
        Due::Nothing
    }
}

/// The earliest expiry among the holds `rows` (the map's projection)
/// shows live at `now`.
pub fn next_lapse(
    rows: &HashMap<(SectionId, RowId), RowProjection>,
    now: Millis,
) -> Option<Millis> {
    rows.values()
        .flat_map(|row| row.values())
        .filter_map(|seat| match *seat {
            ProjectedSeat::Held { expires_at } if hold_is_live(expires_at, now) => Some(expires_at),
            _ => None,
        })
        .min()
}

#[cfg(test)]
#[path = "offer_tick_tests.rs"]
mod tests;
