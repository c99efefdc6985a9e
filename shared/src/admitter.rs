//! The admitter: every [`TICK_MS`] it looks at each queue, reads the
//! joins since its last look from each index shard, asks the domain who is
//! due ([`plan_tick`]), writes the queue's new state over the version it
//! read (so two admitters at once never both admit) and then gives each
//! due visitor its admission. It keeps the waiting visitors in memory
//! between ticks (its mirror), so a tick reads only each shard's newest
//! joins, not the whole queue.
//!
//! On AWS it runs in the admitter function, started every minute by an
//! EventBridge schedule and ticking for that minute; `make dev` runs it
//! in the dev server. Tests call [`Admitter::tick`] with their own clock.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use futures_util::future::join_all;
use serde::Serialize;

use crate::domain::queue::{admission_expires_at, Inventory, QueueRank};
use crate::domain::queue_state::{inventory_of, plan_tick, Admission, QueueState, WaitingVisitor};
use crate::domain::{EventId, Millis, VisitorId};
use crate::error::Error;
use crate::store::{IndexedVisitor, QUEUE_SHARDS};
use crate::App;

/// How often the admitter looks at each queue: a quarter of the second
/// the contract allows a visitor's reply to lag.
pub const TICK_MS: u64 = 250;
/// Each tick reads a shard's joins again from this long before the latest
/// it saw: an index entry shows up a moment after its join (the index is
/// eventually consistent), far sooner than this.
pub const REREAD_MS: i64 = 2_000;
/// Admissions written at once.
const ADMISSIONS_IN_FLIGHT: usize = 64;

/// What the admitter knows of one queue between ticks.
#[derive(Debug, Default)]
struct Mirror {
    generation: u64,
    /// The waiting visitors read so far, in queue order.
    waiting: BTreeMap<QueueRank, IndexedVisitor>,
    /// Per shard, the latest join read.
    read_to: Vec<Option<i64>>,
    /// Visitors this admitter admitted lately (and when): the index may
    /// still show them for a moment.
    admitted: HashMap<VisitorId, i64>,
    /// The state version this admitter last put on the copies.
    copied: Option<i64>,
}

/// One tick's outcome for one queue.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TickSummary {
    pub status: &'static str,
    /// Admissions given this tick.
    pub admitted: u64,
    pub waiting: u64,
    /// Whether this tick's state was written (another writer came first
    /// otherwise, and the next tick tries again).
    pub committed: bool,
}

/// What one run of the admitter did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmitterRun {
    pub ticks: u64,
    /// Queues visited at the last tick.
    pub queues: usize,
    pub admitted: u64,
}

/// The admitter's memory of every queue it visits.
#[derive(Debug, Default)]
pub struct Admitter {
    mirrors: HashMap<EventId, Mirror>,
}

impl Admitter {
    /// One tick of `event`'s queue at `now`.
    pub async fn tick(
        &mut self,
        app: &App,
        event: &EventId,
        now: Millis,
    ) -> Result<TickSummary, Error> {
        let Some(state) = app.store.read_queue(event).await?.and_then(|q| q.state) else {
            self.mirrors.remove(event);
            return Ok(TickSummary::default());
        };
        let mirror = self.mirrors.entry(event.clone()).or_default();
        if mirror.generation != state.generation || mirror.read_to.is_empty() {
            *mirror = Mirror {
                generation: state.generation,
                read_to: vec![None; usize::from(QUEUE_SHARDS)],
                ..Mirror::default()
            };
        }
        read_new_joins(app, event, mirror, now).await?;
        let inventory = inventory(app, event, now).await?;
        let opens_us = state.settings.opens_at.0 * 1_000;
        let waiting: Vec<WaitingVisitor> = mirror
            .waiting
            .values()
            .map(|v| WaitingVisitor {
                rank: v.rank,
                eligible_us: (v.joined_ms * 1_000).max(opens_us),
            })
            .collect();
        let plan = plan_tick(&state, &waiting, inventory, now);
        let mut summary = TickSummary {
            status: plan.status.as_str(),
            admitted: 0,
            waiting: plan.state.waiting,
            committed: false,
        };
        // Nothing changed: no write, so the state's version only moves when
        // something did (a joiner admitted on the spot writes over the
        // version it read, and an idle queue costs no writes).
        let unchanged = QueueState {
            version: state.version,
            ..plan.state.clone()
        } == state;
        if unchanged {
            // Someone else wrote the state since this admitter's last look
            // (a joiner admitted on the spot writes only the main item):
            // the copies catch up, so readers see it and joiners elsewhere
            // stop racing over a version that is gone.
            if mirror.copied != Some(state.version)
                && app.store.copy_queue_state(event, &state).await
            {
                mirror.copied = Some(state.version);
            }
            return Ok(summary);
        }
        let Some(copied) = app
            .store
            .commit_queue_state(event, &plan.state, state.version)
            .await?
        else {
            return Ok(summary);
        };
        summary.committed = true;
        mirror.copied = copied.then_some(plan.state.version);
        summary.admitted = admit(app, event, &plan.state, mirror, &plan.slots, now).await?;
        Ok(summary)
    }

    /// A tick of every queue, one after another.
    pub async fn tick_all(
        &mut self,
        app: &App,
        now: Millis,
    ) -> Result<Vec<(EventId, TickSummary)>, Error> {
        let events = app.store.queued_events().await?;
        self.mirrors.retain(|event, _| events.contains(event));
        let mut summaries = Vec::new();
        for event in events {
            match self.tick(app, &event, now).await {
                Ok(summary) => summaries.push((event, summary)),
                Err(e) => tracing::warn!(event = %event, error = %e, "queue tick failed"),
            }
        }
        // One data point per tick over every queue: a paused one is never
        // hidden behind the next queue's value.
        crate::metrics::queue_tick(
            summaries.iter().map(|(_, s)| s.admitted).sum(),
            summaries.iter().map(|(_, s)| s.waiting).sum(),
            summaries.iter().any(|(_, s)| s.status == "PAUSED"),
        );
        Ok(summaries)
    }

    /// Ticks every queue every [`TICK_MS`] for `how_long` (the admitter
    /// function's minute): how many ticks, and admissions given.
    pub async fn run_for(&mut self, app: &App, how_long: Duration) -> AdmitterRun {
        let until = tokio::time::Instant::now() + how_long;
        let mut tick = tokio::time::interval(Duration::from_millis(TICK_MS));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut run = AdmitterRun::default();
        while tokio::time::Instant::now() < until {
            tick.tick().await;
            match self.tick_all(app, crate::world::now()).await {
                Ok(summaries) => {
                    run.ticks += 1;
                    run.queues = summaries.len();
                    run.admitted += summaries.iter().map(|(_, s)| s.admitted).sum::<u64>();
                }
                Err(e) => tracing::warn!(error = %e, "admitter tick failed"),
            }
            crate::metrics::flush();
        }
        run
    }
}

/// Reads each shard's joins since the mirror's last read (less
/// [`REREAD_MS`]) into the mirror.
async fn read_new_joins(
    app: &App,
    event: &EventId,
    mirror: &mut Mirror,
    now: Millis,
) -> Result<(), Error> {
    let generation = mirror.generation;
    let reads = (0..QUEUE_SHARDS).map(|shard| {
        let from = mirror.read_to[usize::from(shard)].map_or(0, |t| t - REREAD_MS);
        app.store
            .waiting_joined_since(event, generation, shard, from)
    });
    let found = join_all(reads).await;
    mirror.admitted.retain(|_, at| now.0 - *at < 4 * REREAD_MS);
    for (shard, entries) in found.into_iter().enumerate() {
        for entry in entries? {
            let read_to = &mut mirror.read_to[shard];
            *read_to = Some(read_to.map_or(entry.joined_ms, |t| t.max(entry.joined_ms)));
            if !mirror.admitted.contains_key(&entry.visitor_id) {
                mirror.waiting.insert(entry.rank, entry);
            }
        }
    }
    Ok(())
}

/// What the event has left, from its seat map (cached about a second).
async fn inventory(app: &App, event: &EventId, now: Millis) -> Result<Inventory, Error> {
    let Some(plan) = app.store.get_event(&app.memory, event).await? else {
        return Ok(Inventory::Available);
    };
    let (_, read) = app.store.seat_map_rows(&app.memory, &plan).await?;
    let map = crate::domain::seat_map(&plan, &read.rows, &read.buckets, now);
    Ok(inventory_of(&map, &read.buckets))
}

/// Gives each slot to the next waiting visitor in the mirror's order, a
/// few at a time; the number given. A visitor that is no longer waiting
/// (another admitter's run, overlapping this one, admitted it a moment
/// ago, and the index still showed it) is dropped from the mirror and its
/// slot goes to the next one: the state just committed counts every slot,
/// so a slot left empty would be a lost place in the pace and an
/// `admitted` that overcounts.
async fn admit(
    app: &App,
    event: &EventId,
    state: &QueueState,
    mirror: &mut Mirror,
    slots: &[i64],
    now: Millis,
) -> Result<u64, Error> {
    let mut open: Vec<i64> = slots.to_vec();
    let mut given = 0;
    while !open.is_empty() && !mirror.waiting.is_empty() {
        let batch: Vec<(IndexedVisitor, i64)> = mirror
            .waiting
            .values()
            .cloned()
            .zip(open.iter().copied())
            .take(ADMISSIONS_IN_FLIGHT)
            .collect();
        let results = join_all(
            batch
                .iter()
                .map(|(visitor, slot)| admit_one(app, event, state, visitor, *slot, now)),
        )
        .await;
        let mut refused = Vec::new();
        for ((visitor, slot), result) in batch.into_iter().zip(results) {
            if result? {
                given += 1;
            } else {
                refused.push(slot);
            }
            mirror.waiting.remove(&visitor.rank);
            mirror.admitted.insert(visitor.visitor_id, now.0);
        }
        let taken = open.len().min(ADMISSIONS_IN_FLIGHT);
        refused.extend_from_slice(&open[taken..]);
        open = refused;
    }
    Ok(given)
}

/// One visitor's admission at `slot` (µs): whether it was still waiting.
async fn admit_one(
    app: &App,
    event: &EventId,
    state: &QueueState,
    visitor: &IndexedVisitor,
    slot: i64,
    now: Millis,
) -> Result<bool, Error> {
    let q = &state.settings;
    let random = crate::world::random_u128()
        .ok_or_else(|| Error::Corrupt("no randomness for an admission id".into()))?;
    let admission = Admission {
        admission_id: format!("{random:032x}"),
        slot_us: slot,
        given_at: now,
        expires_at: admission_expires_at(slot, now, q.admission_seconds),
        orders_allowed: q.orders_per_admission,
    };
    app.store
        .admit_visitor(event, &visitor.visitor_id, state.generation, &admission)
        .await
}
