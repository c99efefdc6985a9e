//! The cutoff's written reverts (API.md, "Returns"): once a waitlist's
//! `returnsCloseAt` has passed, or a put closed returns early, the tick
//! writes each listing that reads reverted `REVERTED`, exactly once (a
//! conditional write from `LISTED`, which publish-events tells as
//! `return.reverted`), and takes its resale item away. A listing a live
//! offer still holds waits for the offer's expiry. Only the open
//! generation's listings: a deleted generation's read reverted, and the
//! delete writes nothing. At most [`REVERTS_PER_VISIT`] a visit, so a
//! cutoff with many listings never holds up the visit's offers.

use crate::domain::returns::ListedUnit;
use crate::domain::waitlist::Waitlist;
use crate::domain::{EventId, Millis};
use crate::error::Error;
use crate::App;

/// The most reverts one visit writes: the rest go on at the next tick.
const REVERTS_PER_VISIT: u32 = 25;

/// Writes the reverts of `event`'s listings due at `now`, `waitlist` as
/// read: when to try again (`None`: every one is written).
pub(super) async fn write_reverts(
    app: &App,
    event: &EventId,
    waitlist: &Waitlist,
    now: Millis,
) -> Result<Option<Millis>, Error> {
    let mut again: Option<Millis> = None;
    let mut written = 0_u32;
    for listed in app.store.listed_units(event).await? {
        if listed.generation != waitlist.generation {
            continue;
        }
        if written >= REVERTS_PER_VISIT {
            again = Some(now);
            break;
        }
        if let Some(until) = held_until(&listed, waitlist, now) {
            again = Some(again.map_or(until, |a| a.min(until)));
            continue;
        }
        if !listed.reverts(waitlist, now) {
            continue;
        }
        if app.store.revert_listing(event, &listed, now).await? {
            written += 1;
        } else {
            // It moved since the read (a resale, a withdrawal, a listing
            // again): the next tick reads what it is now.
            again = Some(now);
        }
    }
    if written > 0 {
        tracing::info!(event_id = %event, written, "listings reverted at the cutoff");
    }
    Ok(again)
}

/// Until when a live offer holds `listed`, if it would revert but for that.
fn held_until(listed: &ListedUnit, waitlist: &Waitlist, now: Millis) -> Option<Millis> {
    let until = listed.held_until.filter(|until| *until > now)?;
    let unheld = ListedUnit {
        held_until: None,
        ..listed.clone()
    };
    unheld.reverts(waitlist, now).then_some(until)
}
