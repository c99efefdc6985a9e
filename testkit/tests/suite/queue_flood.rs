//! The admitter under a crowd (docs/DESIGN.md, "The admitter under a
//! flood"): a cold tick's requests are the same for a queue ten times
//! longer, the visitors it holds are bounded by the pace, and a visitor
//! far past the front still learns where it stands, from the counts.

use crate::common;

use common::event;
use common::queue::*;
use local::metrics::RequestCounter;
use shared::admitter::Admitter;
use shared::config::QueueShards;
use shared::domain::queue::{QueueRank, DEFAULT_DRAW_SETTLE_MS};
use shared::domain::queue_state::{visitor_view, Visitor, VisitorView};
use shared::domain::{EventId, Millis};
use shared::store::{seeded_visitor, visitor_shard};
use std::collections::BTreeMap;
use testkit::{fresh_app, fresh_app_counting};

/// The shards these tests' queues are put with: a generation put before
/// the count was stored, whose fronts and counts they were written for
/// (a front's page of 32 times 32 shards stays below their long queues).
const SHARDS: QueueShards = QueueShards::LEGACY;

/// `app` putting its queues on `shards`, as queue-admin with
/// `QUEUE_SHARDS` set.
fn on_shards(app: shared::App, shards: QueueShards) -> shared::App {
    let mut app = app;
    app.config.queue_shards = shards;
    app
}

/// A queue opening in an hour, with `n` early joiners written straight to
/// the table (25 to a request), the `i`th joined at `joined(i)`.
struct Seeded {
    ev: String,
    event: EventId,
    opens: Millis,
    generation: u64,
    /// In queue order.
    visitors: Vec<Visitor>,
}

async fn seeded_queue(
    app: &shared::App,
    n: u64,
    per_minute: u32,
    joined: impl Fn(u64) -> Millis,
) -> Seeded {
    let ev = event(app, 5, 300).await;
    let (_, put) = put_queue(app, &ev, &queue_body(HOUR_MS, per_minute)).await;
    let opens = millis(&put["opensAt"]);
    let event = EventId::parse(&ev).unwrap();
    let state = app
        .store
        .read_queue(&event)
        .await
        .unwrap()
        .and_then(|q| q.state)
        .unwrap();
    let (generation, shards) = (state.generation, state.shards);
    assert_eq!(shards, app.config.queue_shards, "the generation's count");
    let mut visitors: Vec<Visitor> = (0..n)
        .map(|i| seeded_visitor(i, generation, joined(i), opens).unwrap())
        .collect();
    let mut writes = tokio::task::JoinSet::new();
    for batch in visitors.chunks(25) {
        let (app, event, batch) = (app.clone(), event.clone(), batch.to_vec());
        writes.spawn(async move {
            app.store
                .seed_waiting_visitors(&event, &batch, shards)
                .await
        });
    }
    for written in writes.join_all().await {
        written.unwrap();
    }
    visitors.sort_by_key(|v| v.rank);
    Seeded {
        ev,
        event,
        opens,
        generation,
        visitors,
    }
}

/// The requests one cold tick after the opening makes, the visitors the
/// admitter then holds, and the place it tells a visitor two thirds back.
struct ColdTick {
    sent: BTreeMap<String, u64>,
    held: usize,
}

async fn cold_tick(app: &shared::App, counter: &RequestCounter, n: u64) -> ColdTick {
    let start = shared::world::now().0;
    let seeded = seeded_queue(app, n, 60, |i| Millis(start + i as i64)).await;
    let (ev, opens) = (&seeded.ev, seeded.opens);
    let ranks: Vec<QueueRank> = seeded.visitors.iter().map(|v| v.rank).collect();
    // Before the opening, every join is counted: one page per shard.
    counter.take();
    let before = tick(app, &mut Admitter::default(), ev, Millis(opens.0 - 1)).await;
    assert_eq!((before.status, before.waiting), ("SCHEDULED", n));
    assert_eq!(
        counter.take().get("Query"),
        Some(&u64::from(SHARDS.count())),
        "{n}: one count per shard"
    );
    // A second past the draw's settling, a cold admitter admits the
    // first two in the draw's order (slots at +2 s and +3 s).
    let mut admitter = Admitter::default();
    let now = Millis(opens.0 + i64::from(DEFAULT_DRAW_SETTLE_MS) + 1_000);
    let first = tick(app, &mut admitter, ev, now).await;
    let sent = counter.take();
    assert_eq!((first.admitted, first.waiting), (2, n - 2), "{n}");
    let state = app
        .store
        .read_queue(&seeded.event)
        .await
        .unwrap()
        .unwrap()
        .state
        .unwrap();
    // Those admitted were the lowest ranks: the next is told 1.
    assert!(matches!(
        visitor_view(ranks[2], None, &state, now),
        VisitorView::Waiting {
            position: Some(1),
            ..
        }
    ));
    // Two thirds back, past every front: within 1% and a second's pace.
    let deep = (2 * n / 3) as usize;
    let truth = deep as u64 - 1;
    match visitor_view(ranks[deep], None, &state, now) {
        VisitorView::Waiting {
            position: Some(p), ..
        } => assert!(p.abs_diff(truth) <= truth / 100 + 1, "{n}: {p} for {truth}"),
        other => panic!("{n}: {other:?}"),
    }
    ColdTick {
        sent,
        held: admitter.held(),
    }
}

#[tokio::test]
async fn a_cold_ticks_reads_and_memory_do_not_grow_with_the_queue() {
    let counter = RequestCounter::default();
    let counting = fresh_app_counting(Some(counter.clone())).await;
    // Every tick reads the seat map afresh: a read reused for a second of
    // wall time would lapse between the ticks only on a loaded machine, and
    // change the count by one BatchGetItem.
    let app = shared::App {
        memory: counting.memory.clone().with_seat_map_cache_ms(0),
        ..on_shards(counting, SHARDS)
    };
    let short = cold_tick(&app, &counter, 320).await;
    let long = cold_tick(&app, &counter, 3_200).await;
    assert_eq!(
        short.sent, long.sent,
        "the same requests, ten times the queue"
    );
    // Per shard a count and a read of the front (32 at this pace).
    assert_eq!(
        long.sent.get("Query"),
        Some(&(2 * u64::from(SHARDS.count())))
    );
    // Its memory: the fronts (a page of 32 a shard) and the two admitted.
    assert!(
        long.held <= 32 * usize::from(SHARDS.count()) + 2,
        "{}",
        long.held
    );
    assert_eq!(short.held, 320, "a short queue is all front");
}

#[tokio::test]
async fn a_count_cut_inside_a_millisecond_counts_each_join_once() {
    let app = on_shards(fresh_app().await, SHARDS);
    // Four joins to a millisecond: pages of three cut inside them.
    let start = shared::world::now().0;
    let seeded = seeded_queue(&app, 400, 60, |i| Millis(start + (i / 4) as i64)).await;
    let generation = seeded.generation;
    let end = start + 1_000;
    let mut counted = Vec::new();
    for shard in SHARDS.all() {
        let mut from = 0;
        let mut reads = 0;
        while from < end {
            let (ranks, to) = app
                .store
                .joins_between(&seeded.event, generation, shard, (from, end), 3)
                .await
                .unwrap();
            assert!(
                to > from || !ranks.is_empty(),
                "shard {shard}: no progress at {from}"
            );
            counted.extend(ranks);
            from = to;
            reads += 1;
            assert!(reads < 400, "shard {shard} never ends");
        }
    }
    counted.sort();
    let all: Vec<QueueRank> = seeded.visitors.iter().map(|v| v.rank).collect();
    assert_eq!(counted, all, "each join once");
}

#[tokio::test]
async fn overlapping_admitters_admit_in_rank_order_and_keep_the_count() {
    let app = on_shards(fresh_app().await, SHARDS);
    // 6,000 a minute: 25 a tick, so the fronts (16 to 32 a shard) are read
    // again and again; two admitters take turns, as the minute's runs do
    // where they overlap.
    let n = 2_000u64;
    let start = shared::world::now().0;
    let seeded = seeded_queue(&app, n, 6_000, |i| Millis(start + i as i64)).await;
    let mut admitters = [Admitter::default(), Admitter::default()];
    let mut now = Millis(seeded.opens.0 - 1);
    assert_eq!(
        tick(&app, &mut admitters[0], &seeded.ev, now).await.waiting,
        n
    );
    now = Millis(seeded.opens.0 + i64::from(DEFAULT_DRAW_SETTLE_MS) + 1_000);
    let mut admitted = 0;
    for turn in 0..24 {
        let admitter = &mut admitters[turn % 2];
        let summary = tick(&app, admitter, &seeded.ev, now).await;
        assert!(summary.committed, "turn {turn}");
        admitted += summary.admitted;
        assert_eq!(
            summary.waiting,
            n - admitted,
            "turn {turn}: the count holds"
        );
        // Its fronts, and the slots either admitter gave lately (kept out
        // of its fronts while the index may still show them).
        assert!(
            admitter.held() <= 32 * usize::from(SHARDS.count()) + 4 * 200,
            "turn {turn}: {}",
            admitter.held()
        );
        now = Millis(now.0 + 250);
    }
    // A second's catch-up, then 25 a tick: every slot given.
    assert_eq!(admitted, 101 + 23 * 25);
    // Exactly the first in the draw's order, none past them.
    for (i, v) in seeded
        .visitors
        .iter()
        .take(admitted as usize + 25)
        .enumerate()
    {
        let stored = app
            .store
            .read_visitor(&seeded.event, &v.visitor_id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            stored.admission.is_some(),
            (i as u64) < admitted,
            "the {i}th in the draw's order"
        );
    }
}

#[tokio::test]
async fn a_queue_on_128_shards_counts_and_admits_every_shard_in_order() {
    let app = on_shards(fresh_app().await, QueueShards::DEFAULT);
    // 60,000 a minute: every visitor has a slot within a few ticks.
    let n = 600u64;
    let start = shared::world::now().0;
    let seeded = seeded_queue(&app, n, 60_000, |i| Millis(start + i as i64)).await;
    let (event, generation) = (&seeded.event, seeded.generation);
    let shard_of = |v: &Visitor| visitor_shard(&v.visitor_id, QueueShards::DEFAULT);
    let legacy = QueueShards::LEGACY.count();
    assert!(
        seeded.visitors.iter().any(|v| shard_of(v) >= legacy),
        "visitors past the legacy shards"
    );
    // A lone visitor past shard 31 is seen only by a look at all 128: a
    // reader of fewer shards than were written would strand it.
    let empty = seeded_queue(&app, 0, 60, |_| Millis(start)).await;
    let lone_generation = empty.generation;
    let lone = (0..)
        .map(|i| seeded_visitor(i, lone_generation, Millis(start), empty.opens).unwrap())
        .find(|v| shard_of(v) >= legacy)
        .unwrap();
    let shards = QueueShards::DEFAULT;
    app.store
        .seed_waiting_visitors(&empty.event, &[lone], shards)
        .await
        .unwrap();
    for (read, seen) in [(shards, true), (QueueShards::LEGACY, false)] {
        let found = app
            .store
            .anyone_waiting(&empty.event, (lone_generation, read))
            .await
            .unwrap();
        assert_eq!(found, seen, "{read:?}");
    }
    let mut admitter = Admitter::default();
    let before = tick(&app, &mut admitter, &seeded.ev, Millis(seeded.opens.0 - 1)).await;
    assert_eq!(before.waiting, n, "every shard's joins counted");
    let mut now = Millis(seeded.opens.0 + i64::from(DEFAULT_DRAW_SETTLE_MS) + 1_000);
    let mut admitted = 0;
    for _ in 0..20 {
        admitted += tick(&app, &mut admitter, &seeded.ev, now).await.admitted;
        now = Millis(now.0 + 250);
    }
    assert_eq!(admitted, n, "every visitor of every shard admitted");
    let mut slots = Vec::new();
    for v in &seeded.visitors {
        let stored = app.store.read_visitor(event, &v.visitor_id).await.unwrap();
        let stored = stored.unwrap();
        assert_eq!(stored.generation, generation);
        slots.push(stored.admission.map(|a| a.slot_us).unwrap());
    }
    assert!(
        slots.windows(2).all(|w| w[0] < w[1]),
        "slots follow the draw's order across the shards"
    );
    assert!(!app
        .store
        .anyone_waiting(event, (generation, QueueShards::DEFAULT))
        .await
        .unwrap());
}
