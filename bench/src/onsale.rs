//! The on-sale demand model (issue 9): a 100,000-seat event, buyers picking
//! a section and a row by Zipf(1.0) and a seat uniformly, claiming 1-4 seats
//! and confirming with probability 0.7. Every DynamoDB request is priced
//! per partition key by DynamoDB's rules (`crate::capacity`), under this
//! design's keys and re-keyed onto the old ones (every seat of an event on
//! `EVENT#{ref}`, 8 pending-index shards), and each layout's on-sale
//! ceiling is projected from the hottest key's share.

use super::demand::{DemandModel, StreamCounts, GA_SECTION};
use super::onsale_buyers::{draw_buyers, run_buyers};
use super::onsale_run::{OnSale, TARGET_CLAIMS_PER_SECOND};
use super::pricing::{old_layout, price, price_parts, project};
use crate::capacity::{self, as_caller, CapacityRecorder};
use crate::kit::{reply, unique};
use lambda_http::Body;
use local::router::dispatch;
use local::router::request;
use shared::App;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;

fn plan_json(m: &DemandModel) -> String {
    let mut sections: Vec<_> = (1..=m.sections)
        .map(|s| serde_json::json!({
            "sectionId": format!("S{s}"),
            "rows": (1..=m.rows).map(|r| serde_json::json!({"row": r.to_string(), "count": m.seats_per_row})).collect::<Vec<_>>(),
        }))
        .collect();
    if m.ga_capacity > 0 {
        sections.push(serde_json::json!({"sectionId": GA_SECTION, "capacity": m.ga_capacity}));
    }
    serde_json::json!({"name": "Stadium on-sale", "holdSeconds": m.hold_seconds, "sections": sections}).to_string()
}

/// Runs the demand model on a fresh table of `endpoint`.
pub(super) async fn on_sale(
    app: App,
    endpoint: &str,
    recorder: CapacityRecorder,
    model: DemandModel,
) -> Result<OnSale, String> {
    let mut out = OnSale {
        model: Some(model),
        ..OnSale::default()
    };
    let event = unique("stadium");
    create_event_priced(&app, &recorder, &event, model, &mut out).await?;

    // The on-sale: recorded from the first buyer to the sweep's end.
    let buyers = draw_buyers(model);
    recorder.set_recording(true);
    let (durations, mut history) = run_buyers(&app, &event, buyers, model, &mut out).await?;
    let (buyers, sweep) = sweep_expired(&app, &recorder, model, &mut out).await?;
    out.functions = mean_times(durations);

    let (follower, projection) = project_seat_map(&app, endpoint, &recorder, &mut out).await?;
    price_traffic(&app, [&buyers, &sweep, &projection], &mut out).await?;

    seat_map_figures(&app, &event, &recorder, &mut out).await?;
    check_table(&app, &event, model, &mut out).await?;

    // Last: it sells the rest (and names a seeding order no check knows).
    let mut phase = super::sold_out::sold_out_phase(
        &app,
        &follower,
        &recorder,
        &event,
        model,
        model.sold_out_crowd,
        &mut history,
    )
    .await?;
    // The buyers' answers, the seeding's sales and the crowd's refusals.
    out.history = history.judge(GA_SECTION, u64::from(model.ga_capacity));
    out.ok &= out.history.ok();
    phase.replay(out.attempts as f64 / model.buyers.max(1) as f64);
    out.ok &= phase.ok();
    out.sold_out = Some(phase);
    replay_at_requested_quotas(model, &mut out);
    Ok(out)
}

/// The target replayed on the quotas docs/SCALE.md asks for, which both
/// phases' loads set (so it runs once the sold-out phase has).
fn replay_at_requested_quotas(model: DemandModel, out: &mut OnSale) {
    use super::crowd_projection::{phases, project};
    let need = super::scale_limits::table_quotas_needed(&project(&phases(out)));
    out.replays.at_requested = crate::replay::at_requested_quotas(
        &out.priced_parts,
        out.attempts as f64,
        (TARGET_CLAIMS_PER_SECOND, model.peak_seconds),
        need,
    );
}

/// Creates the event, priced on its own (it is not on-sale traffic).
async fn create_event_priced(
    app: &App,
    recorder: &CapacityRecorder,
    event: &str,
    model: DemandModel,
    out: &mut OnSale,
) -> Result<(), String> {
    recorder.take();
    recorder.set_recording(true);
    let started = Instant::now();
    let (status, body) = reply(
        app,
        "PUT",
        &format!("/events/{event}"),
        None,
        &plan_json(&model),
    )
    .await;
    out.creation_answer = status;
    match status {
        201 => {}
        202 => local::apps::finish_creation(app, event).await?,
        _ => return Err(format!("create-event: {status} {body}")),
    }
    out.creation = started.elapsed();
    recorder.set_recording(false);
    let creation = recorder.take();
    out.creation_write_units = price(app, &creation)
        .await?
        .iter()
        .map(|c| c.write_units)
        .sum();
    Ok(())
}

/// Waits for the unconfirmed orders to expire and sweeps them, then ends
/// the recording the buyers started: the buyers' requests, and the
/// sweep's.
async fn sweep_expired(
    app: &App,
    recorder: &CapacityRecorder,
    model: DemandModel,
    out: &mut OnSale,
) -> Result<(Vec<capacity::Recorded>, Vec<capacity::Recorded>), String> {
    // The unconfirmed orders expire; the sweep's releases are on-sale
    // traffic too. Waiting for the holds to lapse is the point of the wait.
    tokio::time::sleep(Duration::from_secs(u64::from(model.hold_seconds) + 1)).await;
    // The sweep runs alone, so every request recorded meanwhile is its own
    // (its releases run in tasks of their own, which a caller's tag does
    // not reach).
    let buyers = recorder.take();
    let started = Instant::now();
    let summary = shared::sweep::release_expired(&app.store, shared::world::now(), None).await;
    out.sweep = started.elapsed();
    out.swept_orders = summary.expired_orders;
    recorder.set_recording(false);
    let sweep_records = recorder.take();
    out.round_trips
        .insert("expire-holds".into(), sweep_records.len() as u64);
    Ok((buyers, sweep_records))
}

/// Each function's request count and mean handler time (ms).
fn mean_times(durations: BTreeMap<&'static str, Vec<f64>>) -> BTreeMap<&'static str, (u64, f64)> {
    durations
        .into_iter()
        .map(|(f, v)| {
            (
                f,
                (
                    v.len() as u64,
                    v.iter().sum::<f64>() / v.len().max(1) as f64,
                ),
            )
        })
        .collect()
}

/// The seat map: the projection caught up from the stream (its writes
/// are on-sale traffic too, priced with the rest: returned with the
/// follower),
/// then served. One record per projector call: a write per seat change,
/// as under a steady on-sale where each poll brings few records (an upper
/// bound: bigger batches fold a seat's changes together). The follower
/// stays attached for the sold-out phase.
async fn project_seat_map(
    app: &App,
    endpoint: &str,
    recorder: &CapacityRecorder,
    out: &mut OnSale,
) -> Result<(local::streams::StreamFollower, Vec<capacity::Recorded>), String> {
    let follower = local::streams::StreamFollower::attach(
        endpoint,
        app.store.client(),
        app.store.table_name(),
    )
    .await?;
    recorder.take();
    recorder.set_recording(true);
    let started = Instant::now();
    let stream = Arc::new(std::sync::Mutex::new(StreamCounts::default()));
    out.stream_records = follower
        .catch_up(|batch| {
            let (app, stream) = (app.clone(), stream.clone());
            async move {
                for record in batch["Records"].as_array().into_iter().flatten() {
                    stream
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .count(record);
                    as_caller(
                        "project-seat-map",
                        shared::handlers::project_records(
                            &app,
                            &serde_json::json!({"Records": [record]}),
                        ),
                    )
                    .await;
                }
            }
        })
        .await?;
    out.stream = *stream.lock().unwrap_or_else(|p| p.into_inner());
    out.projection = started.elapsed();
    recorder.set_recording(false);
    Ok((follower, recorder.take()))
}

/// Every recorded request of the selling phase counted per function,
/// priced per key, and projected under both key layouts. `parts`: the
/// buyers', the sweep's and the projection's requests, which production
/// sends side by side (the replays keep them apart).
async fn price_traffic(
    app: &App,
    parts: [&[capacity::Recorded]; 3],
    out: &mut OnSale,
) -> Result<(), String> {
    for record in parts.iter().copied().flatten() {
        if let Some(caller) = record.caller.as_deref() {
            *out.round_trips.entry(caller.to_owned()).or_default() += 1;
        }
    }
    let priced_parts = price_parts(app, &parts).await?;
    // The sweep's units as priced with the rest (after the buyers' items).
    let sweep = super::pricing::flattened(&priced_parts[1]);
    out.sweep_write_units = sweep.iter().map(|c| c.write_units).sum();
    out.sweep_read_units = sweep.iter().map(|c| c.read_units).sum();
    let charges = super::pricing::flattened(&priced_parts.concat());
    out.table_write_units = charges.iter().map(|c| c.write_units).sum();
    out.table_read_units = charges.iter().map(|c| c.read_units).sum();
    out.index_write_units = charges
        .iter()
        .filter(|c| c.target.index.is_some())
        .map(|c| c.write_units)
        .sum();
    let attempts = out.attempts as f64;
    out.new_keys = project(
        "new keys",
        capacity::totals(&charges, &|t| t.clone()),
        attempts,
    );
    out.old_keys = project(
        "old keys",
        capacity::totals(&charges, &old_layout),
        attempts,
    );
    out.replays = crate::replay::on_sale_replays(&priced_parts, attempts, TARGET_CLAIMS_PER_SECOND);
    out.charges = charges;
    out.priced_parts = priced_parts;
    Ok(())
}

/// Correctness: the table's own word.
async fn check_table(
    app: &App,
    event: &str,
    model: DemandModel,
    out: &mut OnSale,
) -> Result<(), String> {
    let check = local::invariants::check_invariants(app, event).await;
    out.sold_seats = check.sold as u64;
    out.violations = check.violations.len();
    if model.ga_capacity > 0 {
        let section = shared::domain::SectionId::parse(GA_SECTION).map_err(|e| e.to_string())?;
        let event_id = shared::domain::EventId::parse(event).map_err(|e| e.to_string())?;
        let indexes: Vec<u32> = (0..shared::domain::ga::bucket_count(model.ga_capacity)).collect();
        let buckets = app
            .store
            .read_buckets(&event_id, &section, &indexes, true)
            .await
            .map_err(|e| e.to_string())?;
        let now = shared::world::now();
        out.sold_places = buckets.iter().map(|b| u64::from(b.sold)).sum();
        out.oversold_places = buckets
            .iter()
            .map(|b| u64::from((b.sold + b.live_held(now)).saturating_sub(b.capacity)))
            .sum();
    }
    out.ok = check.violations.is_empty()
        && out.old_keys_throttle()
        && out.unavailable == 0
        && out.sold_seats > 0
        && out.oversold_places == 0
        && (model.ga_capacity == 0 || out.sold_places > 0);
    Ok(())
}

/// Map requests timed, each in a fresh process (no cached event or map).
const MAP_REQUESTS: usize = 20;

async fn seat_map_figures(
    app: &App,
    event: &str,
    recorder: &CapacityRecorder,
    out: &mut OnSale,
) -> Result<(), String> {
    let uri = format!("/events/{event}/availability");
    let fresh = || app.new_process();
    let plain = dispatch(&fresh(), request("GET", &uri, &[], Body::Empty)).await;
    let gzip = dispatch(
        &fresh(),
        request("GET", &uri, &[("accept-encoding", "gzip")], Body::Empty),
    )
    .await;
    if plain.status() != 200 || gzip.headers().get("content-encoding").is_none() {
        return Err(format!(
            "availability: {} / gzip {:?}",
            plain.status(),
            gzip.headers().get("content-encoding")
        ));
    }
    out.map_bytes = plain.body().len();
    out.map_gzip_bytes = gzip.body().len();
    let map: serde_json::Value =
        serde_json::from_slice(plain.body().as_ref()).map_err(|e| e.to_string())?;
    let statuses: String = map["sections"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| s["rows"].as_array().into_iter().flatten())
        .filter_map(|r| r["statuses"].as_str())
        .collect();
    let sold = statuses.matches('S').count() as u64;
    let seats = out
        .model
        .map_or(0, |m| m.sections * m.rows * m.seats_per_row) as usize;
    // Every hold has lapsed (the sweep ran after the wait): the map shows
    // exactly the seats the table says are sold.
    let sold_in_table = local::invariants::check_invariants(app, event).await.sold as u64;
    if statuses.len() != seats || sold != sold_in_table || statuses.contains('H') {
        return Err(format!(
            "the seat map has {} seats, {sold} sold (the table: {sold_in_table}), holds: {}",
            statuses.len(),
            statuses.contains('H')
        ));
    }
    // Read units of one uncached map: its event read and its batch reads.
    recorder.take();
    recorder.set_recording(true);
    let _ = dispatch(&fresh(), request("GET", &uri, &[], Body::Empty)).await;
    recorder.set_recording(false);
    out.map_read_units = price(app, &recorder.take())
        .await?
        .iter()
        .map(|c| c.read_units)
        .sum();
    let started = Instant::now();
    for _ in 0..MAP_REQUESTS {
        let t = Instant::now();
        let resp = dispatch(
            &fresh(),
            request("GET", &uri, &[("accept-encoding", "gzip")], Body::Empty),
        )
        .await;
        if resp.status() != 200 {
            return Err(format!("availability: {}", resp.status()));
        }
        out.map_latency
            .latencies_ms
            .push(t.elapsed().as_secs_f64() * 1000.0);
    }
    out.map_latency.wall = started.elapsed();
    Ok(())
}
