//! The scenarios that run on a DynamoDB Local of their own: each can run
//! alone (`seatclaim-bench --only …`), and the full run calls the same
//! entry points.

use crate::kit::{app_with_client, new_app, Row, Timing};
use crate::{
    buyer_limit, crowd_markdown, flood, fragmented, one_seat_stampedes, stadium_page, Sizes,
    StampedeRun,
};

/// A DynamoDB Local of a scenario's own, in memory, on a free port.
pub(crate) fn own_dynamodb(sizes: Sizes) -> Result<local::dynamodb_local::DynamoDbLocal, String> {
    let port = local::dynamodb_local::free_port().map_err(|e| e.to_string())?;
    local::dynamodb_local::DynamoDbLocal::start_with(
        port,
        "a free port",
        local::dynamodb_local::Storage::InMemory,
        sizes.jvm,
    )
    .map_err(|e| e.to_string())
}

/// best-available on a fragmented stadium, on a DynamoDB Local of its own
/// (with the stream: a table after the on-sale's would run slow): its row.
/// `--only fragmented` runs it alone.
pub async fn fragmented_stadium(sizes: Sizes) -> Result<Row, String> {
    let dynamodb = own_dynamodb(sizes)?;
    let endpoint = dynamodb.endpoint();
    let recorder = crate::capacity::CapacityRecorder::new();
    let app = new_app(&endpoint, None, Some(recorder.clone()), true).await?;
    fragmented::fragmented_best_available(&app, &endpoint, &recorder, sizes.fragmented).await
}

/// The stadium page on a DynamoDB Local of its own: its mix is laid on
/// a table with the stream (the page is fed by project-seat-map), and a
/// stream table laid after the on-sale's ran for over an hour on the
/// shared one (DynamoDB Local's one SQLite thread describing the stream on
/// every write). `--only stadium-page` runs it alone.
pub async fn stadium_page_alone(sizes: Sizes) -> Result<Row, String> {
    let dynamodb = own_dynamodb(sizes)?;
    let endpoint = dynamodb.endpoint();
    let app = new_app(&endpoint, None, None, true).await?;
    stadium_page::stadium_page(app, &endpoint, sizes.stadium_page).await
}

/// The one-seat stampedes on a table of their own, warmed as docs/SCALE.md
/// says to warm it before an on-sale, every request through an enforcing
/// capacity meter and recorded for pricing.
pub(crate) async fn metered_one_seat(
    endpoint: &str,
    sizes: Sizes,
) -> Result<Vec<StampedeRun>, String> {
    let recorder = crate::capacity::CapacityRecorder::new();
    let limits = crate::capacity::meter::Limits::WARMED;
    let meter = crate::capacity::CapacityMeter::enforcing_with(limits);
    let client = crate::capacity::metered_client(endpoint, recorder.clone(), meter.clone());
    let app = app_with_client(client, false).await?;
    one_seat_stampedes(&app, &meter, &recorder, sizes.one_seat).await
}

/// An app whose every request goes through an enforcing capacity meter on
/// a table warmed as docs/SCALE.md says to warm it: the crowds' `503`s
/// measured against DynamoDB's limits, not assumed away by an emulator
/// that has none.
pub(crate) async fn metered_app(endpoint: &str) -> Result<shared::App, String> {
    metered_app_with(endpoint, false).await
}

/// [`metered_app`], its table with the stream when `stream`.
async fn metered_app_with(endpoint: &str, stream: bool) -> Result<shared::App, String> {
    let recorder = crate::capacity::CapacityRecorder::new();
    let meter =
        crate::capacity::CapacityMeter::enforcing_with(crate::capacity::meter::Limits::WARMED);
    let client = crate::capacity::metered_client(endpoint, recorder, meter);
    app_with_client(client, stream).await
}

/// best-available's stampedes on a short section and on long rows,
/// metered, on a DynamoDB Local of its own with the stream (a stream table
/// slows every table after it on a shared emulator), the seat map and run
/// summaries projected every quarter second meanwhile, as project-seat-map
/// keeps them about a second behind in AWS (a request reads rows it has
/// not read from the map after a lost race): a row each.
pub async fn best_available_projected(sizes: Sizes) -> Result<Vec<Row>, String> {
    use std::sync::atomic::{AtomicBool, Ordering};
    let dynamodb = own_dynamodb(sizes)?;
    let endpoint = dynamodb.endpoint();
    let app = metered_app_with(&endpoint, true).await?;
    let (client, table) = (app.store.client(), app.store.table_name());
    let follower = local::streams::StreamFollower::attach(&endpoint, client, table).await?;
    let done = std::sync::Arc::new(AtomicBool::new(false));
    let projector = {
        let (app, done) = (app.clone(), done.clone());
        tokio::spawn(async move {
            while !done.load(Ordering::SeqCst) {
                // A batch that fails is read again on the next pass.
                let _ = local::streams::project_new(&follower, &app).await;
                tokio::time::sleep(std::time::Duration::from_millis(250)).await;
            }
        })
    };
    let mut stampedes = vec![sizes.best_available];
    stampedes.extend(sizes.best_long_rows);
    let rows = crate::best::projected_stampedes(&app, &stampedes).await;
    done.store(true, Ordering::SeqCst);
    let _ = projector.await;
    rows
}

/// The one-seat stampedes alone (`--only one-seat`): their section of
/// docs/BENCHMARKS.md as a row.
pub async fn one_seat_alone(sizes: Sizes) -> Result<Row, String> {
    let dynamodb = own_dynamodb(sizes)?;
    let runs = metered_one_seat(&dynamodb.endpoint(), sizes).await?;
    Ok(Row {
        scenario: "one-seat stampedes, metered".into(),
        timing: Timing::default(),
        correctness: crowd_markdown(&runs),
        ok: runs.iter().all(StampedeRun::ok),
        goals: runs.iter().flat_map(StampedeRun::goals).collect(),
    })
}

/// Claims with and without a buyer limit, on a DynamoDB Local of its own:
/// its row. `--only buyer-limit` runs it alone (the full run measures it
/// beside the one-seat stampede, on the same recording app).
pub async fn buyer_limit_alone(sizes: Sizes) -> Result<Row, String> {
    let dynamodb = own_dynamodb(sizes)?;
    let recorder = crate::capacity::CapacityRecorder::new();
    let app = new_app(&dynamodb.endpoint(), None, Some(recorder.clone()), false).await?;
    buyer_limit::buyer_limit_claims(&app, &recorder, sizes.buyer_limit).await
}

/// best-available's stampedes (on a short section, on long rows, and of
/// pairs under a crowd), metered, on a DynamoDB Local of its own (the
/// first two on one with the stream, [`best_available_projected`]): their
/// rows, as one. `--only best-available` runs them alone (the full run
/// measures the pairs on the shared emulator).
pub async fn best_available_alone(sizes: Sizes) -> Result<Row, String> {
    let dynamodb = own_dynamodb(sizes)?;
    let app = metered_app(&dynamodb.endpoint()).await?;
    let mut rows = best_available_projected(sizes).await?;
    rows.push(crate::best::spill_stampedes(&app, sizes.best_spill_rounds).await?);
    let mut row = Row::joined(rows);
    row.timing = Timing::default();
    Ok(row)
}

/// The on-sale demand model on a DynamoDB Local of its own (with the
/// stream): its section of docs/BENCHMARKS.md as a row, its goals judged.
/// `--only on-sale` runs it alone (the full run measures it on the shared
/// emulator, after the queue).
pub async fn on_sale_alone(sizes: Sizes) -> Result<Row, String> {
    let dynamodb = own_dynamodb(sizes)?;
    let endpoint = dynamodb.endpoint();
    let recorder = crate::capacity::CapacityRecorder::new();
    let app = new_app(&endpoint, None, Some(recorder.clone()), true).await?;
    let run = crate::onsale::on_sale(app, &endpoint, recorder, sizes.on_sale).await?;
    Ok(Row {
        scenario: "on-sale demand model".into(),
        timing: Timing::default(),
        correctness: run.markdown(),
        ok: run.ok,
        goals: run.goals(),
    })
}

/// The on-sale queue on a DynamoDB Local of its own: its row, with the
/// goals docs/QUEUE.md judges (its lags, key bounds and replays). `--only
/// queue` runs it alone (the full run measures it on the shared emulator).
pub async fn queue_alone(sizes: Sizes) -> Result<Row, String> {
    let dynamodb = own_dynamodb(sizes)?;
    let endpoint = dynamodb.endpoint();
    let recorder = crate::capacity::CapacityRecorder::new();
    let app = new_app(&endpoint, None, Some(recorder.clone()), false).await?;
    let run = crate::queue::queue_bench(app, &endpoint, recorder, sizes.queue).await?;
    Ok(Row {
        goals: run.goals(),
        ..run.row()
    })
}

/// The admitter with a crowd already waiting (each queue on a DynamoDB
/// Local of its own): its row. `--only flood` runs it alone.
pub async fn admitter_flood(sizes: Sizes) -> Result<Row, String> {
    flood::flood(sizes.flood, sizes.jvm).await
}
