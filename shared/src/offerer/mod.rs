//! The offerer's tick (API.md, "Offers", how fast): every [`TICK_MS`] it
//! visits each waitlist the registry lists and, when its memory of the
//! last look says one is due (`domain::offer_tick::due`), looks for seats
//! to offer through one event's look ([`offer_free`]): it is the one
//! offerer. A batch of the stream that freed seats is counted by the
//! projector (`store::frees`), and a count the last look did not see makes
//! a look due; so does what no write announces: a hold whose `expiresAt`
//! passes, a waitlist just put or opened, and joins (they may fit seats
//! that sit free); and a look that stopped at its bounds goes on at the
//! next tick. Beside the visits it keeps each open waitlist's positions
//! ([`positions`]), and a deleted one's counts until its offers have all
//! ended (then it takes it off the registry).
//!
//! On AWS it runs in the offer-waitlists function, started every minute
//! by an EventBridge schedule and ticking for that minute; `make dev`
//! runs it in the dev server. Two offerers at once (runs overlapping at
//! a minute's turn) are safe: each offer is one conditional transaction. Tests call [`Offerer::tick`]
//! with their own clock.

mod heads;
mod known;
mod look;
mod map_memory;
mod positions;
mod reverts;
mod seen;
mod turns;

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use futures_util::{FutureExt, StreamExt};
use serde::Serialize;

use crate::domain::{EventId, Millis};
use crate::error::Error;
use crate::store::Store;
use crate::App;
use positions::Keeper;
use seen::{visit, Seen};
use turns::{Turns, VISITS_AT_ONCE};

pub use look::{offer_free, OfferLook, OFFERS_PER_LOOK};

/// How often the offerer visits each waitlist: twice within the second
/// the contract allows an expiry to wait for its tick.
pub const TICK_MS: u64 = 500;

/// What one run of the offerer did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OffererRun {
    /// The registry's reads that answered (at most one a tick).
    pub ticks: u64,
    /// Waitlists remembered (open, or deleted and still counted) or being
    /// visited as the last visit ended.
    pub waitlists: usize,
    pub looks: u64,
    pub offers: u64,
}

/// The offerer's memory of every open waitlist it visits, and the copy of
/// their states it reads (one, so a copy that lags never takes back a
/// version it has seen).
#[derive(Debug, Default)]
pub struct Offerer {
    seen: HashMap<EventId, Seen>,
    copy: Option<u8>,
    /// The positions' updates, apart from the visits.
    positions: Keeper,
}

impl Offerer {
    fn copy(&mut self) -> u8 {
        *self.copy.get_or_insert_with(Store::pick_state_copy)
    }

    /// One tick of `event`'s waitlist at `now`: the look it took, if one
    /// was due.
    pub async fn tick(
        &mut self,
        app: &App,
        event: &EventId,
        now: Millis,
    ) -> Result<Option<OfferLook>, Error> {
        let copy = self.copy();
        let (memory, outcome) = visit(app, event, copy, self.seen.remove(event), now).await;
        self.remember(app, event, memory, now);
        // One waitlist's tick answers with its positions updated too.
        self.positions.finish().await;
        outcome
    }

    /// A tick of every listed waitlist from `now`, [`VISITS_AT_ONCE`] at a
    /// time, each on the clock as it starts: the looks taken.
    pub async fn tick_all(
        &mut self,
        app: &App,
        now: Millis,
    ) -> Result<Vec<(EventId, OfferLook)>, Error> {
        let events = app.store.waitlisted_events().await?;
        let copy = self.copy();
        // Memories of events no longer listed are dropped with this map.
        let mut seen = std::mem::take(&mut self.seen);
        let clock = Instant::now();
        let visits = events.into_iter().map(|event| {
            let memory = seen.remove(&event);
            async move {
                let elapsed = i64::try_from(clock.elapsed().as_millis()).unwrap_or(i64::MAX);
                let at = Millis(now.0.saturating_add(elapsed));
                let (memory, outcome) = visit(app, &event, copy, memory, at).await;
                (event, memory, outcome)
            }
        });
        let visited: Vec<_> = futures_util::stream::iter(visits)
            .buffer_unordered(VISITS_AT_ONCE)
            .collect()
            .await;
        let mut looks = Vec::new();
        for (event, memory, outcome) in visited {
            if let Some(look) = self.visited(app, &event, memory, outcome, now) {
                looks.push((event, look));
            }
        }
        self.positions
            .keep_only(|event| self.seen.contains_key(event));
        Ok(looks)
    }

    /// Keeps `event`'s memory after a visit that ended at `now` (and
    /// starts its positions' update if due) while it is open or counted.
    fn remember(&mut self, app: &App, event: &EventId, memory: Option<Seen>, now: Millis) {
        if let Some(memory) = memory {
            self.positions
                .start_if_due(app, event, memory.generation(), now);
            self.seen.insert(event.clone(), memory);
        }
    }

    /// Takes in `event`'s visit that ended at `now`: its memory kept while
    /// it is open, a failure logged; the look it took, if any.
    fn visited(
        &mut self,
        app: &App,
        event: &EventId,
        memory: Option<Seen>,
        outcome: Result<Option<OfferLook>, Error>,
        now: Millis,
    ) -> Option<OfferLook> {
        self.remember(app, event, memory, now);
        outcome
            .inspect_err(|e| {
                tracing::warn!(event = %event, error = %crate::error::chain(e), "waitlist tick failed");
            })
            .ok()
            .flatten()
    }

    /// Waits for the positions' updates still running (a run's end, and a
    /// test that ticks every waitlist and then reads what they wrote).
    pub async fn finish(&mut self) {
        self.positions.finish().await;
    }

    /// Visits every listed waitlist every [`TICK_MS`] for `how_long` (the
    /// offer-waitlists function's minute), in turns ([`Turns`]). A visit
    /// still running at a tick (a long look) goes on while the others are
    /// visited, and its waitlist rejoins the line at the first tick after
    /// it ends: one slow look delays no other waitlist's offers. The
    /// registry's read at a tick runs beside the visits, never holding
    /// them up. The visits running at the end are waited for.
    pub async fn run_for(&mut self, app: &App, how_long: Duration) -> OffererRun {
        let until = tokio::time::Instant::now() + how_long;
        self.positions.start_none_after(until);
        let mut tick = tokio::time::interval(Duration::from_millis(TICK_MS));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let copy = self.copy();
        let (mut run, mut turns, mut listing) = (OffererRun::default(), Turns::default(), false);
        let mut work = futures_util::stream::FuturesUnordered::new();
        loop {
            let running = tokio::time::Instant::now() < until;
            while let Some(event) = running.then(|| turns.start()).flatten() {
                let memory = self.seen.remove(&event);
                work.push(
                    async move {
                        let (memory, outcome) =
                            visit(app, &event, copy, memory, crate::world::now()).await;
                        Done::Visited(event, memory, outcome)
                    }
                    .boxed(),
                );
            }
            tokio::select! {
                _ = tick.tick(), if running && !listing => {
                    if tokio::time::Instant::now() < until {
                        listing = true;
                        work.push(async move { Done::Listed(app.store.waitlisted_events().await) }.boxed());
                    }
                }
                Some(done) = work.next() => {
                    listing &= !matches!(done, Done::Listed(_));
                    self.took_in(app, done, &mut turns, &mut run);
                }
                else => break,
            }
        }
        self.positions.finish().await;
        run
    }

    /// Takes in what a run waited on: the registry's list (the line of
    /// turns follows it, and what is remembered of waitlists no longer
    /// listed, or no longer open, is forgotten), or a visit's end.
    fn took_in(&mut self, app: &App, done: Done, turns: &mut Turns, run: &mut OffererRun) {
        match done {
            Done::Listed(Ok(events)) => {
                run.ticks += 1;
                turns.listed(&events);
                let listed: HashSet<&EventId> = events.iter().collect();
                self.seen.retain(|event, _| listed.contains(event));
                let open = |event: &EventId| self.seen.contains_key(event) || turns.visiting(event);
                self.positions.keep_only(open);
            }
            Done::Listed(Err(e)) => {
                tracing::warn!(error = %crate::error::chain(&e), "offerer tick failed");
            }
            Done::Visited(event, memory, outcome) => {
                turns.ended(&event);
                let now = crate::world::now();
                if let Some(look) = self.visited(app, &event, memory, outcome, now) {
                    run.looks += 1;
                    run.offers += u64::from(look.made);
                }
                run.waitlists = self.seen.len() + turns.visits();
            }
        }
    }
}

/// What a run waits on: the registry's read at a tick, or a visit.
enum Done {
    Listed(Result<Vec<EventId>, Error>),
    Visited(EventId, Option<Seen>, Result<Option<OfferLook>, Error>),
}
