//! The admitter under a flood (issue 28, item 8): a queue with 1,000,000
//! early joiners, written straight to the table (as their joins write
//! them, 25 to a request), and admitters ticking through its opening at a
//! stadium's pace. Measured per tick: DynamoDB round trips and read units
//! (every request recorded, priced by DynamoDB's rules from the items'
//! sizes), the process's peak heap while the tick runs (the bench's
//! counting allocator; the pricing between ticks is the bench's own work,
//! not the admitter's), and the admissions against the pace. The same
//! ticks on a queue a hundred times shorter show what does not grow with
//! the queue. Each queue runs on a DynamoDB Local of its own, dropped
//! after, so the million items never slow another scenario down.

use crate::capacity::{CapacityRecorder, Charge, Recorded};
use crate::kit::{unique, Row, Timing};
use crate::pricing::price;
use crate::queue_model::put_queue;
use crate::setup::create_event;
use crate::{heap, Bound, Goal, HOLD_SECONDS};
use local::dynamodb_local::{free_port, DynamoDbLocal, Jvm, Storage};
use shared::admitter::{Admitter, TICK_MS};
use shared::domain::queue::DEFAULT_DRAW_SETTLE_MS;
use shared::domain::{EventId, Millis};
use shared::store::seeded_visitor;
use shared::App;
use std::time::Instant;

/// Targets (issue 28): the heap the ticks take at their peak (over what
/// the process held before them: in the full run, earlier scenarios'
/// figures), and a tick's reads on the long queue against the short
/// one's (the same, give or take the fronts' refills falling on other
/// ticks).
pub const TARGET_HEAP_MB: f64 = 256.0;
pub const TARGET_GROWTH: f64 = 1.25;

/// The queues and the ticks.
#[derive(Debug, Clone, Copy)]
pub struct Flood {
    pub waiting: u64,
    /// The short queue the long one is held against.
    pub short: u64,
    /// Ticks measured after the opening.
    pub ticks: u64,
    pub per_minute: u32,
}

/// One queue's ticks, measured.
#[derive(Debug, Default)]
struct Measured {
    /// Ticks it took to count every join before the opening, and the most
    /// read units one of them read.
    count_ticks: u64,
    count_read_units: f64,
    /// The first tick after the opening, on a cold admitter.
    cold_round_trips: usize,
    cold_read_units: f64,
    /// The ticks after it, each on average (admissions' writes apart).
    round_trips: f64,
    read_units: f64,
    admissions_per_tick: f64,
    admitted: u64,
    expected: u64,
    /// The most live while a tick ran (its requests' records included).
    peak_heap_mb: f64,
    /// Live when the ticks began (the app, its client, the runtime).
    start_heap_mb: f64,
    seeded_in: f64,
}

/// The row, each queue on a DynamoDB Local of its own in `jvm`.
pub async fn flood(size: Flood, jvm: Jvm) -> Result<Row, String> {
    let started = Instant::now();
    let long = measure(size.waiting, size, jvm).await?;
    let short = measure(size.short, size, jvm).await?;
    let growth = |long: f64, short: f64| long / short.max(1e-9);
    let rt_growth = growth(long.round_trips, short.round_trips);
    let ru_growth = growth(long.read_units, short.read_units);
    let ticks_heap_mb = long.peak_heap_mb - long.start_heap_mb;
    let pace_ok = long.admitted == long.expected && short.admitted == short.expected;
    let waiting = thousands(size.waiting);
    let goals = flood_goals(
        &waiting,
        heap::installed().then_some(ticks_heap_mb),
        rt_growth,
        ru_growth,
    );
    let met = |ok: bool| if ok { "met" } else { "MISSED" };
    Ok(Row {
        scenario: format!(
            "admitter, {waiting} waiting: {} ticks of {TICK_MS} ms at {} a minute from the opening, against {} waiting (handler, measured; seeded in {:.0} s)",
            size.ticks,
            thousands(u64::from(size.per_minute)),
            thousands(size.short),
            long.seeded_in
        ),
        correctness: format!(
            "{waiting} waiting: per tick {:.1} round trips and {:.1} read units besides {:.0} admissions (cold: {} round trips, {:.1} read units; {} ticks counted the joins, at most {:.0} read units each); heap at the ticks' peak {ticks_heap_mb:.1} MB over the {:.1} MB live before them, {:.1} MB in all ({}); {} admitted of {} the pace allows ({}). {} waiting: {:.1} round trips, {:.1} read units a tick. Long ÷ short: {rt_growth:.2} ({}) and {ru_growth:.2} ({})",
            long.round_trips,
            long.read_units,
            long.admissions_per_tick,
            long.cold_round_trips,
            long.cold_read_units,
            long.count_ticks,
            long.count_read_units,
            long.start_heap_mb,
            long.peak_heap_mb,
            goals[0].judged(),
            long.admitted,
            long.expected,
            met(pace_ok),
            thousands(size.short),
            short.round_trips,
            short.read_units,
            goals[1].judged(),
            goals[2].judged(),
        ),
        ok: pace_ok,
        goals,
        timing: Timing {
            latencies_ms: Vec::new(),
            wall: started.elapsed(),
        },
    })
}

/// The flood's targets: the heap its ticks take, and how little a tick's
/// round trips and read units grow with the queue.
fn flood_goals(waiting: &str, heap_mb: Option<f64>, rt_growth: f64, ru_growth: f64) -> Vec<Goal> {
    let growth = |what: &str, value: f64| {
        Goal::new(
            format!("admitter's {what} a tick, long ÷ short queue"),
            value,
            Bound::AtMost(TARGET_GROWTH),
            "`flood::TARGET_GROWTH`",
        )
    };
    vec![
        Goal::seen(
            format!("admitter's heap over the live before its ticks, {waiting} waiting (MB)"),
            heap_mb,
            Bound::AtMost(TARGET_HEAP_MB),
            "`flood::TARGET_HEAP_MB`",
        ),
        growth("round trips", rt_growth),
        growth("read units", ru_growth),
    ]
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// One queue of `waiting` on a DynamoDB Local of its own.
async fn measure(waiting: u64, size: Flood, jvm: Jvm) -> Result<Measured, String> {
    let port = free_port().map_err(|e| e.to_string())?;
    let dynamodb = DynamoDbLocal::start_with(port, "a free port", Storage::InMemory, jvm)
        .map_err(|e| e.to_string())?;
    let recorder = CapacityRecorder::new();
    let app =
        crate::kit::new_app(&dynamodb.endpoint(), None, Some(recorder.clone()), false).await?;
    let event = unique("flood");
    create_event(&app, &event, 100, HOLD_SECONDS).await?;
    let opens = Millis(shared::world::now().0 + 3_600_000);
    put_queue(&app, &event, opens, size.per_minute).await?;
    let event = EventId::parse(&event).map_err(|e| e.to_string())?;
    let mut measured = Measured::default();
    let seeding = Instant::now();
    seed(&app, &event, opens, waiting).await?;
    measured.seeded_in = seeding.elapsed().as_secs_f64();

    measured.start_heap_mb = heap::live() as f64 / 1e6;
    let app = local::iam::attributed(&app, "admit-visitors");
    count_before_opening(&app, &event, &recorder, opens, waiting, &mut measured).await?;
    tick_from_opening(&app, &event, &recorder, opens, size, &mut measured).await?;
    drop(dynamodb);
    Ok(measured)
}

/// Writes `waiting` early joiners, 25 to a request, 32 requests at once.
async fn seed(app: &App, event: &EventId, opens: Millis, waiting: u64) -> Result<(), String> {
    let state = app
        .store
        .read_queue(event)
        .await
        .map_err(|e| e.to_string())?
        .and_then(|q| q.state)
        .ok_or("no queue")?;
    let (generation, shards) = (state.generation, state.shards);
    // Joins spread over most of the hour before the opening, a few
    // milliseconds apart, as a crowd arrives.
    let start = shared::world::now().0;
    let step = i64::try_from(3_000_000 / waiting.max(1))
        .unwrap_or(1)
        .max(1);
    let mut tasks = tokio::task::JoinSet::new();
    let per_task = waiting.div_ceil(32);
    for task in 0..32 {
        let (app, event) = (app.clone(), event.clone());
        let range = task * per_task..((task + 1) * per_task).min(waiting);
        let batches: Vec<Vec<u64>> = range
            .collect::<Vec<_>>()
            .chunks(shared::store::BATCH_WRITE_ITEMS)
            .map(<[u64]>::to_vec)
            .collect();
        tasks.spawn(async move {
            for batch in batches {
                let visitors = batch
                    .into_iter()
                    .map(|i| {
                        let joined = Millis(start + i64::try_from(i).unwrap_or(0) * step);
                        seeded_visitor(i, generation, joined, opens)
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| e.to_string())?;
                app.store
                    .seed_waiting_visitors(&event, &visitors, shards)
                    .await
                    .map_err(|e| e.to_string())?;
            }
            Ok::<(), String>(())
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.map_err(|e| e.to_string())??;
    }
    Ok(())
}

/// Ticks before the opening (a cold admitter, as after a deploy) until
/// every join is counted.
async fn count_before_opening(
    app: &App,
    event: &EventId,
    recorder: &CapacityRecorder,
    opens: Millis,
    waiting: u64,
    measured: &mut Measured,
) -> Result<(), String> {
    let mut admitter = Admitter::default();
    let mut now = Millis(opens.0 - 60_000);
    while measured.count_ticks < 1_000 {
        let Ticked {
            summary, charges, ..
        } = recorded(app, recorder, measured, || admitter.tick(app, event, now)).await?;
        measured.count_ticks += 1;
        let units: f64 = charges.iter().map(|c| c.read_units).sum();
        measured.count_read_units = measured.count_read_units.max(units);
        if summary.waiting == waiting {
            return Ok(());
        }
        now = Millis(now.0 + TICK_MS as i64);
    }
    Err(format!("{waiting} joins not counted in 1,000 ticks"))
}

/// A cold admitter's first tick a second after admission starts, then
/// `ticks` more, a tick apart.
async fn tick_from_opening(
    app: &App,
    event: &EventId,
    recorder: &CapacityRecorder,
    opens: Millis,
    size: Flood,
    measured: &mut Measured,
) -> Result<(), String> {
    let mut admitter = Admitter::default();
    // A second past the first admission's instant (the draw's settling):
    // the first tick catches up that second, as a late admitter may.
    let first = Millis(opens.0 + i64::from(DEFAULT_DRAW_SETTLE_MS) + 1_000);
    let Ticked {
        summary,
        records,
        charges,
    } = recorded(app, recorder, measured, || admitter.tick(app, event, first)).await?;
    measured.cold_round_trips = records.iter().filter(|r| !is_admission(r)).count();
    measured.cold_read_units = charges.iter().map(|c| c.read_units).sum();
    measured.admitted = summary.admitted;
    let (mut round_trips, mut read_units, mut admissions) = (0usize, 0.0, 0u64);
    let mut now = first;
    for _ in 0..size.ticks {
        now = Millis(now.0 + TICK_MS as i64);
        let Ticked {
            summary,
            records,
            charges,
        } = recorded(app, recorder, measured, || admitter.tick(app, event, now)).await?;
        measured.admitted += summary.admitted;
        admissions += summary.admitted;
        // The admissions are the pace's writes, one each: counted apart.
        round_trips += records.iter().filter(|r| !is_admission(r)).count();
        read_units += charges.iter().map(|c| c.read_units).sum::<f64>();
    }
    let ticks = size.ticks.max(1) as f64;
    measured.round_trips = round_trips as f64 / ticks;
    measured.read_units = read_units / ticks;
    measured.admissions_per_tick = admissions as f64 / ticks;
    // A slot every spacing from a second before the first tick (the catch
    // up a late admitter is allowed) to the last.
    let spacing = 60_000_000u64.div_ceil(u64::from(size.per_minute));
    let span_us = u64::try_from(now.0 - first.0 + 1_000).unwrap_or(0) * 1_000;
    measured.expected = span_us / spacing + 1;
    Ok(())
}

/// Whether a request is an admission's write (a visitor's item updated).
fn is_admission(record: &Recorded) -> bool {
    record.op == "UpdateItem"
        && record.request["Key"][shared::store::PK]["S"]
            .as_str()
            .is_some_and(|pk| pk.starts_with(shared::store::VISITOR_PK_PREFIX))
}

/// One tick, recorded: its outcome, its requests and their charges.
struct Ticked<T> {
    summary: T,
    records: Vec<Recorded>,
    charges: Vec<Charge>,
}

/// Runs `tick` with the recorder on, its heap's peak kept in `measured`
/// if it is the highest yet, then prices its requests (after the peak is
/// read: the pricing ledger's copies of the items are the bench's, and
/// they are priced item by item since 4eb5e3a).
async fn recorded<F, Fut, T>(
    app: &App,
    recorder: &CapacityRecorder,
    measured: &mut Measured,
    tick: F,
) -> Result<Ticked<T>, String>
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Result<T, shared::error::Error>>,
{
    recorder.take();
    heap::reset_peak();
    recorder.set_recording(true);
    let outcome = tick().await;
    recorder.set_recording(false);
    measured.peak_heap_mb = measured.peak_heap_mb.max(heap::peak() as f64 / 1e6);
    let records = recorder.take();
    let summary = outcome.map_err(|e| e.to_string())?;
    let charges = price(app, &records).await?;
    Ok(Ticked {
        summary,
        records,
        charges,
    })
}
