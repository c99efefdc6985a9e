//! One waitlist's visit by the tick: what the offerer remembers of it
//! ([`Seen`]), and the visit that reads its state, asks the domain what is
//! due and looks.

use std::time::Instant;

use super::heads::NewestJoins;
use super::look::{offer_free_after, MapKept, OfferLook};
use super::map_memory::MapMemory;
use super::reverts::write_reverts;
use crate::domain::map_parts::Noted;
use crate::domain::offer_tick::{
    counted_after_delete, due, joined_since, Due, LastLook, Visit, FAILED_LOOK_BACKOFF_MS,
};
use crate::domain::returns::{reverts_due, RevertsFor};
use crate::domain::waitlist::{Waitlist, WaitlistStatus};
use crate::domain::{EventId, EventRef, Millis};
use crate::error::Error;
use crate::store::StoredWaitlist;
use crate::App;

/// What the offerer remembers of one open waitlist between ticks.
#[derive(Debug)]
pub(super) struct Seen {
    generation: u64,
    last: Option<LastLook>,
    /// The latest join keys of each shard of the list at the last check.
    joins: Option<Vec<Vec<String>>>,
    joins_checked: Millis,
    /// A look failed: nothing until then.
    backoff_until: Option<Millis>,
    /// What the listings' reverts were last written for, and when to try
    /// again those a live offer held or that moved.
    reverts_done: Option<RevertsFor>,
    reverts_again: Option<Millis>,
    /// The event's map between looks.
    map: Option<Box<MapMemory>>,
}

impl Seen {
    /// The generation of the waitlist it remembers.
    pub(super) fn generation(&self) -> u64 {
        self.generation
    }

    /// Nothing seen of `generation` yet: a look is due.
    fn new(generation: u64) -> Self {
        Self {
            generation,
            last: None,
            joins: None,
            joins_checked: Millis(0),
            backoff_until: None,
            reverts_done: None,
            reverts_again: None,
            map: None,
        }
    }
}

/// Visits `event`'s waitlist at `now` from `memory`: what to remember
/// (`None`: it is neither open nor deleted and still counted), and the
/// look taken, if one was due.
pub(super) async fn visit(
    app: &App,
    event: &EventId,
    copy: u8,
    memory: Option<Seen>,
    now: Millis,
) -> (Option<Seen>, Result<Option<OfferLook>, Error>) {
    let read = match app
        .store
        .read_waitlist_copy_of(&EventRef::of(event), copy)
        .await
    {
        Ok(read) => read,
        Err(e) => return (memory, Err(e)),
    };
    let Some(stored) = read else {
        return (None, Ok(None));
    };
    let generation = stored.waitlist.generation;
    let memory = memory.filter(|seen| seen.generation == generation);
    match (stored.waitlist.status(), stored.waitlist.ended_at) {
        (WaitlistStatus::Open, _) => {}
        (WaitlistStatus::Ended, Some(ended_at)) => {
            return deleted(app, event, memory, &stored.waitlist, ended_at, now).await;
        }
        _ => return (None, Ok(None)),
    }
    let mut seen = memory.unwrap_or_else(|| Seen::new(generation));
    if seen.backoff_until.is_some_and(|until| now < until) {
        return (Some(seen), Ok(None));
    }
    revert_if_due(app, event, &mut seen, &stored, now).await;
    // Read before the look: the map it reads shows what was counted.
    let noted = match app.store.frees_noted(&EventRef::of(event)).await {
        Ok(noted) => noted,
        Err(e) => {
            // As a failed look: a throttled table is not asked every tick.
            seen.backoff_until = Some(Millis(now.0 + FAILED_LOOK_BACKOFF_MS));
            return (Some(seen), Err(e));
        }
    };
    let due = due(Visit {
        last: seen.last.as_ref(),
        version: stored.version,
        opened_at: stored.waitlist.opened_at,
        joins_checked: seen.joins_checked,
        frees: noted.frees,
        now,
    });
    if due == Due::Nothing {
        return (Some(seen), Ok(None));
    }
    let outcome = look_if(app, event, &mut seen, &stored, due, &noted, now).await;
    seen.backoff_until = outcome
        .is_err()
        .then_some(Millis(now.0 + FAILED_LOOK_BACKOFF_MS));
    (Some(seen), outcome)
}

/// Visits a deleted waitlist: remembered, with no look, while its offers'
/// ends may still move its counts (the positions' updates keep them
/// while it is remembered), then taken off the registry.
async fn deleted(
    app: &App,
    event: &EventId,
    memory: Option<Seen>,
    waitlist: &Waitlist,
    ended_at: Millis,
    now: Millis,
) -> (Option<Seen>, Result<Option<OfferLook>, Error>) {
    if counted_after_delete(waitlist.opened_at, ended_at, now) {
        let seen = memory.unwrap_or_else(|| Seen::new(waitlist.generation));
        return (Some(seen), Ok(None));
    }
    let unlisted = app
        .store
        .unlist_ended_waitlist(event, waitlist.generation)
        .await;
    (None, unlisted.map(|_| None))
}

/// Writes the listings' reverts once returns have closed (the cutoff, or
/// a put that closed them early), at most once per closing, and again
/// from `reverts_again` for those a live offer held or that moved. A
/// failure is logged; the next tick tries again.
async fn revert_if_due(
    app: &App,
    event: &EventId,
    seen: &mut Seen,
    stored: &StoredWaitlist,
    now: Millis,
) {
    let Some(closing) = reverts_due(&stored.waitlist, seen.reverts_done, now) else {
        return;
    };
    if seen.reverts_again.is_some_and(|at| now < at) {
        return;
    }
    match write_reverts(app, event, &stored.waitlist, now).await {
        Ok(again) => {
            seen.reverts_done = again.is_none().then_some(closing);
            seen.reverts_again = again;
        }
        Err(e) => {
            seen.reverts_again = Some(Millis(now.0 + FAILED_LOOK_BACKOFF_MS));
            tracing::warn!(event = %event, error = %crate::error::chain(&e), "listings' reverts not written");
        }
    }
}

/// Reads the list's ends (before the look: a join after this read is a
/// key the next check has not seen; one before it, the look's strongly
/// consistent reads see), then looks if `due` says to, or if the check
/// found a join. A list with nobody in it needs no look: the next join
/// check finds the first. `noted`: the stream's counts, read before.
/// When a look is due whatever the check finds, the ends are read
/// strongly consistent and handed to it (it reads them so before its
/// first look at the line); a check alone reads them at half the units.
async fn look_if(
    app: &App,
    event: &EventId,
    seen: &mut Seen,
    stored: &StoredWaitlist,
    due: Due,
    noted: &Noted,
    now: Millis,
) -> Result<Option<OfferLook>, Error> {
    let clock = Instant::now();
    let version = seen
        .last
        .map_or(stored.version, |l| l.version.max(stored.version));
    let consistent = due != Due::CheckJoins;
    let newest = app
        .store
        .newest_joins(event, seen.generation, consistent)
        .await?;
    seen.joins_checked = now;
    let joined = joined_since(seen.joins.as_deref(), &newest);
    let nobody = newest.iter().all(Vec::is_empty);
    let joins = consistent.then(|| NewestJoins {
        generation: seen.generation,
        ends: newest.clone(),
    });
    seen.joins = Some(newest);
    if due == Due::CheckJoins && !joined {
        return Ok(None);
    }
    let look = if nobody {
        None
    } else {
        seen.last = None;
        let elapsed = i64::try_from(clock.elapsed().as_millis()).unwrap_or(i64::MAX);
        let at = Millis(now.0.saturating_add(elapsed));
        let kept = MapKept {
            memory: &mut seen.map,
            noted,
        };
        Some(offer_free_after(app, event, joins, Some(kept), at).await?)
    };
    seen.last = Some(LastLook {
        version,
        at: now,
        next_lapse: look.and_then(|l| l.next_lapse),
        more: look.is_some_and(|l| l.more),
        frees: noted.frees,
    });
    Ok(look)
}
