//! The admitter: every [`TICK_MS`] it looks at each queue, counts the
//! joins that settled since its last look (each shard of the join index,
//! from where the counts say it stopped), reads the front of the queue
//! from the rank index, asks the domain who is due ([`plan_tick`]), writes
//! the queue's new state over the version it read (so two admitters at
//! once never both admit) and then gives each due visitor its admission.
//! Between ticks it keeps only the front of each shard (its mirror): a
//! tick's reads and its memory follow the pace, never the queue's length,
//! and a cold admitter starts from the counts on the queue's item.
//!
//! On AWS it runs in the admitter function, started every minute by an
//! EventBridge schedule and ticking for that minute; `make dev` runs it
//! in the dev server. Tests call [`Admitter::tick`] with their own clock.

mod admissions;
mod fronts;

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use futures_util::future::join_all;
use serde::Serialize;

use crate::domain::queue::{Inventory, QueueRank};
use crate::domain::queue_counts::JoinCounts;
use crate::domain::queue_state::{inventory_of, plan_tick, Head, QueueState};
use crate::domain::waitlist::queue_inventory;
use crate::domain::{EventId, Millis};
use crate::error::Error;
use crate::App;
use admissions::{admit, assign, retry_pending, taken};
use fronts::{empty_fronts, read_fronts, ShardFront};

/// How often the admitter looks at each queue: a quarter of the second
/// the contract allows a visitor's reply to lag.
pub const TICK_MS: u64 = 250;
/// An index entry shows up a moment after its write (the indexes are
/// eventually consistent), far sooner than this: joins are counted once
/// this old, and a shard read to its end is read again from this far
/// back in join time.
pub const SETTLE_MS: i64 = 2_000;
/// Joins counted per tick, at most, a page spread over the shards: an
/// admitter that was away catches up over a few ticks instead of in one
/// long one, and still counts 128,000 joins a second, six times issue
/// 19's crowd.
pub const COUNT_PER_TICK: i32 = 32_000;
/// A visitor admitted here is kept out of the fronts this long: its index
/// entries have surely gone by then (twice the settling, twice over).
const ADMITTED_MEMORY_MS: i64 = 4 * SETTLE_MS;

/// What the admitter knows of one queue between ticks.
#[derive(Debug, Default)]
struct Mirror {
    generation: u64,
    shards: Vec<ShardFront>,
    /// Visitors this admitter admitted lately (their rank, and when): the
    /// index may still show them for a moment.
    admitted: HashMap<QueueRank, i64>,
    /// The state version this admitter last wrote or found unchanged:
    /// another version means another writer came between (an admitter
    /// overlapping this one, or this instance's last run a minute ago),
    /// and the fronts are read afresh.
    version: Option<i64>,
    /// The state version this admitter last put on the copies.
    copied: Option<i64>,
    /// Counted visitors admitted less those the last commit counted out
    /// (a planned visitor refused: admitted already): added to the counts
    /// at the next commit, so the count does not drift.
    correction: i64,
    /// Slots a commit counted whose visitor turned out admitted already:
    /// taken off `admitted` at the next commit.
    empty_slots: u64,
    /// Pending admissions this admitter wrote (by rank): the next tick
    /// does not write them again.
    written: HashSet<QueueRank>,
}

impl Mirror {
    fn new(read: &QueueState) -> Self {
        Self {
            generation: read.generation,
            shards: empty_fronts(read.shards),
            ..Self::default()
        }
    }

    /// Forgets every shard's front: another writer came between, and
    /// what this admitter read may be stale.
    fn forget_fronts(&mut self) {
        self.shards
            .iter_mut()
            .for_each(|front| *front = ShardFront::default());
    }

    /// Forgets what `read` makes stale: everything for a new generation,
    /// the fronts when another writer came between, admissions older than
    /// the index's lag, and written pending admissions no longer pending.
    fn catch_up(&mut self, read: &QueueState, now: Millis) {
        if self.generation != read.generation
            || self.shards.len() != usize::from(read.shards.count())
        {
            *self = Mirror::new(read);
        }
        if self.version.is_some_and(|v| v != read.version) {
            self.forget_fronts();
        }
        self.admitted
            .retain(|_, at| now.0 - *at < ADMITTED_MEMORY_MS);
        self.written
            .retain(|rank| read.pending.iter().any(|p| p.rank == *rank));
        // Visitors with a slot (whoever gave it, written or not) stay out
        // of the fronts: the index may show them a moment longer.
        for p in &read.pending {
            self.admitted.entry(p.rank).or_insert(now.0);
        }
    }
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
    /// Visitors this admitter holds in memory, over every queue: the
    /// shards' fronts and the recently admitted.
    pub fn held(&self) -> usize {
        self.mirrors
            .values()
            .map(|m| m.admitted.len() + m.shards.iter().map(|f| f.waiting.len()).sum::<usize>())
            .sum()
    }

    /// One tick of `event`'s queue at `now`.
    pub async fn tick(
        &mut self,
        app: &App,
        event: &EventId,
        now: Millis,
    ) -> Result<TickSummary, Error> {
        // A generation past its end is over: nobody is admitted from it.
        let Some(read) = app
            .store
            .read_queue(event)
            .await?
            .and_then(|q| q.state)
            .filter(|state| !state.has_ended(now))
        else {
            self.mirrors.remove(event);
            return Ok(TickSummary::default());
        };
        let mirror = self.mirrors.entry(event.clone()).or_default();
        mirror.catch_up(&read, now);
        let (state, head) = prepare_tick(app, event, mirror, &read, now).await?;
        let inventory = inventory(app, event, now).await?;
        let mut plan = plan_tick(&state, &head, inventory, now);
        let assigned = assign(mirror, &head, &plan.slots);
        plan.state
            .pending
            .extend(assigned.iter().map(|a| a.pending.clone()));
        let mut summary = TickSummary {
            status: plan.status.as_str(),
            admitted: 0,
            waiting: plan.state.waiting,
            committed: false,
        };
        let committed = match write_state(app, event, mirror, &read, &plan.state).await {
            Ok(committed) => committed,
            Err(e) => {
                // What this admitter holds may be stale: read afresh.
                mirror.forget_fronts();
                mirror.version = None;
                return Err(e);
            }
        };
        if committed {
            taken(mirror, &assigned);
            summary.committed = true;
            mirror.correction = 0;
            mirror.empty_slots = 0;
            summary.admitted = admit(app, event, &plan.state, mirror, &assigned, now).await;
        }
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

/// The queue as this tick works from: the item `read` with the pending
/// admissions retried (which writes them, and notes them in `mirror`),
/// the joins counted and (from the opening on) the front of each shard.
/// SOLD_OUT is final: nobody is counted, placed or admitted again.
async fn prepare_tick(
    app: &App,
    event: &EventId,
    mirror: &mut Mirror,
    read: &QueueState,
    now: Millis,
) -> Result<(QueueState, Head), Error> {
    let pending = retry_pending(app, event, read, mirror, now).await;
    let mut state = QueueState {
        admitted: read.admitted.saturating_sub(mirror.empty_slots),
        pending,
        ..read.clone()
    };
    let sold_out = read.inventory == Inventory::AllSold;
    if !sold_out {
        state.counts = count_joins(app, event, read, now).await?;
        state.counts.admitted = state
            .counts
            .admitted
            .saturating_add_signed(mirror.correction);
    }
    // Before the opening nobody is admitted: the counts alone place
    // everyone, and the fronts are read from the opening on.
    let head = if now >= read.settings.opens_at && !sold_out {
        read_fronts(app, event, mirror, &state, now).await?
    } else {
        Head::default()
    };
    Ok((state, head))
}

/// Writes the tick's `next` state over the one it `read`: whether it did
/// (another writer came first otherwise, or nothing changed).
async fn write_state(
    app: &App,
    event: &EventId,
    mirror: &mut Mirror,
    read: &QueueState,
    next: &QueueState,
) -> Result<bool, Error> {
    // Nothing changed: no write, so the state's version only moves when
    // something did (a joiner admitted on the spot writes over the version
    // it read, and an idle queue costs no writes).
    let unchanged = QueueState {
        version: read.version,
        ..next.clone()
    } == *read;
    if unchanged {
        // Someone else wrote the state since this admitter's last look (a
        // joiner admitted on the spot writes only the main item): the
        // copies catch up, so readers see it and joiners elsewhere stop
        // racing over a version that is gone.
        if mirror.copied != Some(read.version) && app.store.copy_queue_state(event, read).await {
            mirror.copied = Some(read.version);
        }
        mirror.version = Some(read.version);
        return Ok(false);
    }
    match app
        .store
        .commit_queue_state(event, next, read.version)
        .await?
    {
        Some(copied) => {
            mirror.copied = copied.then_some(next.version);
            mirror.version = Some(next.version);
            Ok(true)
        }
        // Another writer came first: what this admitter holds may be stale.
        None => {
            mirror.forget_fronts();
            mirror.version = None;
            Ok(false)
        }
    }
}

/// The counts once every shard's joins that settled since its last
/// count are counted (a page per shard at most). A shard where no join
/// settled keeps its mark, so an idle queue's state does not change.
async fn count_joins(
    app: &App,
    event: &EventId,
    state: &QueueState,
    now: Millis,
) -> Result<JoinCounts, Error> {
    let settled = now.0 - SETTLE_MS;
    let counts = &state.counts;
    let page = COUNT_PER_TICK / i32::from(state.shards.count());
    let reads = state.shards.all().map(|shard| {
        let from = counts.counted_to(usize::from(shard));
        async move {
            if from >= settled {
                return Ok((Vec::new(), from));
            }
            app.store
                .joins_between(event, state.generation, shard, (from, settled), page)
                .await
        }
    });
    let mut counts = counts.clone();
    for (shard, read) in join_all(reads).await.into_iter().enumerate() {
        let (ranks, to) = read?;
        // A page cut short moves the mark even when all it read was one
        // millisecond (left to the next read); an empty window does not.
        if !ranks.is_empty() || to < settled {
            counts.record(shard, ranks, to);
        }
    }
    Ok(counts)
}

/// What the event has left, from its seat map (cached about a second), as
/// its waitlist (its state, as long) lets the queue see it
/// ([`queue_inventory`]).
async fn inventory(app: &App, event: &EventId, now: Millis) -> Result<Inventory, Error> {
    let waitlist = app.waitlist(event, now).await?;
    let Some(plan) = app.event(event).await? else {
        return Ok(Inventory::Available);
    };
    let (_, read) = app.seat_map(&plan).await?;
    let map = crate::domain::seat_map(&plan, &read.rows, &read.buckets, now);
    let seen = inventory_of(&map, &read.buckets);
    Ok(queue_inventory(waitlist.as_deref(), seen, now))
}
