//! `make bench`: seatclaim under load against DynamoDB Local, every scenario
//! in one process run so the figures compare side by side. Each scenario
//! prints its correctness count next to its speed.

use std::time::{Duration, Instant};

use local::metrics::RequestCounter;

pub use crowdcheck::capacity;

mod alone;
mod best;
mod buyer_limit;
mod cold_start;
mod contention;
mod crowd;
mod crowd_doc;
pub mod crowd_projection;
mod demand;
mod end_to_end;
mod flood;
mod fragmented;
mod fresh;
mod ga;
pub mod goals;
pub mod heap;
mod kit;
mod onsale;
mod onsale_buyers;
mod onsale_history;
mod onsale_run;
mod ops;
mod pricing;
mod queue;
mod queue_doc;
mod queue_draw;
mod queue_model;
mod queue_pause;
mod queue_projection;
mod raw;
mod replay;
mod report;
mod scale;
pub mod scale_doc;
pub mod scale_limits;
mod scale_model;
mod scale_queue;
mod setup;
mod sizes;
mod sold_out;
mod sold_out_crowd;
mod sold_out_doc;
mod spread;
mod stadium_page;
mod stampede;
pub mod waitlist;
mod waitlist_seen;
mod waitlist_setup;

use alone::metered_one_seat;
pub use alone::{
    admitter_flood, best_available_alone, buyer_limit_alone, fragmented_stadium, on_sale_alone,
    one_seat_alone, queue_alone, stadium_page_alone,
};
pub use best::BestAvailableStampede;
pub use capacity::{PARTITION_READ_UNITS, PARTITION_WRITE_UNITS};
use cold_start::cold_start;
pub use cold_start::ColdStart;
use contention::{concurrency, contention, raw_and_naive};
use crowd::one_seat_stampedes;
pub use crowd::{OneSeatStampede, StampedeRun};
pub use crowd_doc::markdown as crowd_markdown;
pub use demand::DemandModel;
pub use ga::GaStampede;
use ga::{ga_naive_counter, ga_stampede};
pub use goals::{Bound, Goal};
use kit::new_app;
pub use kit::{
    Row, Timing, EMULATOR_REQUEST_BUDGET_MS, HANDLER_OVER_BARE, HOLD_SECONDS, SWEEP_HOLD_SECONDS,
    SWEEP_LARGE_OVER_SMALL,
};
use onsale::on_sale;
pub use onsale_run::OnSale;
pub use ops::SWEEP_LIVE_ORDER_SHARE;
use ops::{round_trips, sweep_scaling, warm_up};
pub use pricing::Projection;
pub use queue_model::{QueueModel, QueueRun};
use raw::table_name;
pub use report::Report;
pub use scale_model::{aws_deadline_ms, AWS_REQUEST_MS};
use setup::{create_event, create_event_from, create_orders, serve};
pub use sizes::{ColdStartPass, Sizes};
pub use stadium_page::StadiumPageSize;

pub async fn run(
    endpoint: &str,
    sizes: Sizes,
    mut progress: impl FnMut(&str),
) -> Result<Report, String> {
    let mut report = Report::default();
    progress("warming DynamoDB Local up (scratch table, not measured)");
    report.warm_up = warm_up_dynamodb(endpoint, sizes).await?;

    let app = new_app(endpoint, None, None, false).await?;
    contention(endpoint, &app, sizes, &mut report, &mut progress).await?;
    raw_and_naive(&app, sizes, &mut report, &mut progress).await?;

    progress(
        "one-seat stampede over many instances (simulated second, metered and priced per key)",
    );
    report.one_seat = metered_one_seat(endpoint, sizes).await?;
    let recorder = crate::capacity::CapacityRecorder::new();
    let recording = new_app(endpoint, None, Some(recorder.clone()), false).await?;

    progress("claims with and without a buyer limit (priced per claim)");
    report
        .rows
        .push(buyer_limit::buyer_limit_claims(&recording, &recorder, sizes.buyer_limit).await?);

    // The crowds that must get an answer run under the capacity meter.
    let metered = alone::metered_app(endpoint).await?;
    progress(
        "best-available stampedes, the map projected (20 × 20; one row of 10,000; ten of 1,000)",
    );
    report
        .rows
        .extend(alone::best_available_projected(sizes).await?);
    progress("best-available under a crowd (stampedes of pairs, who lands behind a free pair)");
    report
        .rows
        .push(best::spill_stampedes(&metered, sizes.best_spill_rounds).await?);

    progress("GA stampede (metered), and the naive counter it replaces");
    report.rows.push(ga_stampede(&metered, sizes.ga).await?);
    report.rows.push(ga_naive_counter(&app, sizes.ga).await?);

    progress("throughput vs concurrency");
    report.concurrency = concurrency(&app, sizes).await?;

    operations(endpoint, sizes, &mut report, &mut progress).await?;
    crowds(endpoint, sizes, &mut report, &mut progress).await?;
    Ok(report)
}

/// A fresh table on `endpoint` and an app on it, its client counting
/// requests or recording them for pricing. Only the on-sale reads the
/// stream: every other table goes without it (see
/// Warms DynamoDB Local up on a scratch table, then drops it: the
/// requests sent and how long they took.
async fn warm_up_dynamodb(endpoint: &str, sizes: Sizes) -> Result<(usize, Duration), String> {
    let scratch = new_app(endpoint, None, None, false).await?;
    let started = Instant::now();
    let sent = warm_up(&scratch, sizes.warm_up_orders).await?;
    let took = started.elapsed();
    let _ = scratch
        .store
        .client()
        .delete_table()
        .table_name(table_name(&scratch))
        .send()
        .await;
    Ok((sent, took))
}

/// What operations see: round trips per route, the sweep on a small and
/// a large table, and cold starts.
async fn operations(
    endpoint: &str,
    sizes: Sizes,
    report: &mut Report,
    progress: &mut impl FnMut(&str),
) -> Result<(), String> {
    let counter = RequestCounter::default();
    progress("round trips");
    let counting = new_app(endpoint, Some(counter.clone()), None, false).await?;
    report.round_trips = round_trips(&counting, &counter).await?;
    report.goals.extend(ops::trip_goals(&report.round_trips));

    progress("sweep scaling");
    for others in [sizes.sweep_small_table, sizes.sweep_large_table] {
        let app = new_app(endpoint, Some(counter.clone()), None, false).await?;
        let (took, expired, queries) =
            sweep_scaling(&app, sizes.sweep_expired, others, &counter).await?;
        report.sweep.push((
            format!(
                "{} expired among {others} other items, {} of them live pending orders in the index",
                sizes.sweep_expired,
                others / SWEEP_LIVE_ORDER_SHARE
            ),
            took,
            expired,
            queries,
        ));
    }
    if let [(_, small, ..), (_, large, ..)] = report.sweep.as_slice() {
        report.goals.push(Goal::new(
            "large ÷ small sweep time",
            large.as_secs_f64() / small.as_secs_f64().max(1e-9),
            Bound::AtMost(SWEEP_LARGE_OVER_SMALL),
            "`bench::SWEEP_LARGE_OVER_SMALL`",
        ));
    }

    progress(
        "cold start under the Lambda Runtime Interface Emulator (scripts/bench_cold_start.py)",
    );
    report.cold_start = cold_start(
        new_app(endpoint, None, None, false).await?,
        endpoint,
        sizes.cold_start,
    )
    .await?;
    Ok(())
}

/// The crowds, each on a table of its own: the on-sale queue and the
/// on-sale demand model. The stadium page, best-available on a fragmented
/// stadium, the admitter's flood and the waitlist run before, each on a
/// DynamoDB Local of its own (`on_their_own`).
async fn crowds(
    endpoint: &str,
    sizes: Sizes,
    report: &mut Report,
    progress: &mut impl FnMut(&str),
) -> Result<(), String> {
    progress("on-sale queue: joins, admissions at the pace, status polls, pause and resume (priced per key)");
    let recorder = crate::capacity::CapacityRecorder::new();
    report.queue = queue::queue_bench(
        new_app(endpoint, None, Some(recorder.clone()), false).await?,
        endpoint,
        recorder,
        sizes.queue,
    )
    .await?;
    report.rows.push(report.queue.row());

    // The streaming tables last: a table with the stream slows DynamoDB
    // Local down for every table after it (see TableSpec::without_stream).
    progress("on-sale demand model (create the event, then the buyers, priced per partition key)");
    let recorder = crate::capacity::CapacityRecorder::new();
    report.on_sale = on_sale(
        new_app(endpoint, None, Some(recorder.clone()), true).await?,
        endpoint,
        recorder,
        sizes.on_sale,
    )
    .await?;
    Ok(())
}

/// The largest scenarios, each on a DynamoDB Local of its own: the full
/// run calls this before it starts the shared DynamoDB Local, so nothing
/// else runs beside them. Kept running, the shared emulator (every earlier
/// scenario's tables, several with the stream) slowed the 1,000,000-entry
/// waitlist's seeding from 963 s to 1,396 s and its offers past their
/// targets on these 2 cores. The waitlist goes first, the longest and the
/// most sensitive to a busy machine; the rows come back in the report's
/// order, after `run`'s.
pub async fn on_their_own(
    sizes: Sizes,
    mut progress: impl FnMut(&str),
) -> Result<Vec<Row>, String> {
    progress("waitlist offers after a sell-out: seats freed four ways, counted by the stream, offered by the tick (metered)");
    let waitlist = waitlist::waitlist_rows(sizes).await?;
    progress("stadium page: the live map of a stadium (held, sold, free) in headless Chromium, one refresh");
    let mut rows = vec![stadium_page_alone(sizes).await?];
    progress("best-available on a fragmented stadium (every tenth seat held, priced)");
    rows.push(fragmented_stadium(sizes).await?);
    progress("the admitter with a crowd waiting (seeded, each tick priced, the heap counted)");
    rows.push(admitter_flood(sizes).await?);
    rows.extend(waitlist);
    Ok(rows)
}
