//! The offerer's tick (API.md, "Offers", how fast): every [`TICK_MS`] it
//! visits each waitlist the registry lists and, when its memory of the
//! last look says one is due ([`due`]), looks for seats to offer through
//! one event's look ([`offer_free`], which the stream's frees start too). The stream starts a look for
//! each write that frees a seat; the tick covers what no write announces:
//! a hold whose `expiresAt` passes, a look that stopped at its bounds, a
//! waitlist just put or opened, and joins while seats sit free.
//!
//! On AWS it runs in the offer-waitlists function, started every minute
//! by an EventBridge schedule and ticking for that minute; `make dev`
//! runs it in the dev server. Two offerers at once are harmless: each
//! offer is one conditional transaction. Tests call [`Offerer::tick`]
//! with their own clock.

use std::collections::HashMap;
use std::time::Duration;

use serde::Serialize;

use crate::domain::offer_tick::{due, Due, LastLook};
use crate::domain::waitlist::WaitlistStatus;
use crate::domain::{EventId, EventRef, Millis};
use crate::error::Error;
use crate::store::Store;
use crate::App;

mod look;
pub use look::{offer_free, OfferLook};

/// How often the offerer visits each waitlist: twice within the second
/// the contract allows an expiry to wait for its tick.
pub const TICK_MS: u64 = 500;

/// What the offerer remembers of one waitlist between ticks.
#[derive(Debug)]
struct Seen {
    generation: u64,
    last: Option<LastLook>,
    /// The newest join of each shard of the list at the last check.
    joins: Option<Vec<Option<String>>>,
    joins_checked: Millis,
}

impl Seen {
    /// Nothing seen of `generation` yet: a look is due.
    fn new(generation: u64) -> Self {
        Self {
            generation,
            last: None,
            joins: None,
            joins_checked: Millis(0),
        }
    }
}

/// What one run of the offerer did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OffererRun {
    pub ticks: u64,
    /// Waitlists visited at the last tick.
    pub waitlists: usize,
    pub looks: u64,
    pub offers: u64,
}

/// The offerer's memory of every waitlist it visits.
#[derive(Debug, Default)]
pub struct Offerer {
    seen: HashMap<EventId, Seen>,
}

impl Offerer {
    /// One tick of `event`'s waitlist at `now`: the look it took, if one
    /// was due.
    pub async fn tick(
        &mut self,
        app: &App,
        event: &EventId,
        now: Millis,
    ) -> Result<Option<OfferLook>, Error> {
        let copy = Store::pick_state_copy();
        let read = app
            .store
            .read_waitlist_copy_of(&EventRef::of(event), copy)
            .await?;
        let Some(stored) = read.filter(|s| s.waitlist.status() == WaitlistStatus::Open) else {
            self.seen.remove(event);
            return Ok(None);
        };
        let generation = stored.waitlist.generation;
        let seen = self
            .seen
            .entry(event.clone())
            .or_insert_with(|| Seen::new(generation));
        if seen.generation != generation {
            *seen = Seen::new(generation);
        }
        let due = due(seen.last.as_ref(), stored.version, seen.joins_checked, now);
        if due == Due::Nothing {
            return Ok(None);
        }
        // The list's ends, read before the look: a join after this read is
        // a change the next check sees, one before it the look sees (its
        // reads are strongly consistent and come after).
        let newest = app.store.newest_joins(event, generation).await?;
        seen.joins_checked = now;
        let joined = seen.joins.as_ref() != Some(&newest);
        seen.joins = Some(newest);
        if due == Due::CheckJoins && !joined {
            return Ok(None);
        }
        // A look that fails is taken again at the next tick.
        seen.last = None;
        let look = offer_free(app, event, now).await?;
        seen.last = Some(LastLook {
            version: stored.version,
            at: now,
            next_lapse: look.next_lapse,
            more: look.more,
            free_left: look.free_left,
        });
        Ok(Some(look))
    }

    /// A tick of every listed waitlist, one after another: the looks taken.
    pub async fn tick_all(
        &mut self,
        app: &App,
        now: Millis,
    ) -> Result<Vec<(EventId, OfferLook)>, Error> {
        let events = app.store.waitlisted_events().await?;
        self.seen.retain(|event, _| events.contains(event));
        let mut looks = Vec::new();
        for event in events {
            match self.tick(app, &event, now).await {
                Ok(Some(look)) => looks.push((event, look)),
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(event = %event, error = %crate::error::chain(&e), "waitlist tick failed");
                }
            }
        }
        Ok(looks)
    }

    /// Ticks every listed waitlist every [`TICK_MS`] for `how_long` (the
    /// offer-waitlists function's minute).
    pub async fn run_for(&mut self, app: &App, how_long: Duration) -> OffererRun {
        let until = tokio::time::Instant::now() + how_long;
        let mut tick = tokio::time::interval(Duration::from_millis(TICK_MS));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut run = OffererRun::default();
        while tokio::time::Instant::now() < until {
            tick.tick().await;
            match self.tick_all(app, crate::world::now()).await {
                Ok(looks) => {
                    run.ticks += 1;
                    run.waitlists = self.seen.len();
                    run.looks += looks.len() as u64;
                    run.offers += looks.iter().map(|(_, l)| u64::from(l.made)).sum::<u64>();
                }
                Err(e) => {
                    tracing::warn!(error = %crate::error::chain(&e), "offerer tick failed");
                }
            }
        }
        run
    }
}
