//! best-available on a fragmented stadium (issue 28, item 3): every tenth
//! seat held, so no row has a run of ten, and a crowd asking for ten
//! seats each. Every answer must be `409 not-enough-seats` with nothing
//! claimed; each request's DynamoDB round trips and read units are
//! measured (recorded and priced by DynamoDB's rules), with the crowd
//! spread over as many function instances as it has requests in flight
//! (a Lambda instance serves one request at a time, so each pays for its
//! own copies of the event, the sold-out sections and the run summaries).
//! The history checker judges every refusal against the holds laid.

use crate::best::{read_back_unknown, BlockVerdict};
use crate::capacity::{as_caller, CapacityRecorder};
use crate::kit::{reply, unique, BenchOrder, Row, Timing};
use crate::pricing::price;
use crate::setup::{create_event_from, create_orders, grid_plan, section_id};
use crate::{Bound, Goal, HOLD_SECONDS};
use crowdcheck::history::{seat_claim, seconds_after, wall_us, BlockRefusal, SeatOp, Window};
use shared::domain::{RowId, SeatId, SectionId};
use shared::App;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Semaphore;

/// The targets (issue 28): per request, on average.
pub const TARGET_ROUND_TRIPS: f64 = 10.0;
pub const TARGET_READ_UNITS: f64 = 50.0;
/// The quantity asked for: one more than any run left.
const QUANTITY: u32 = 10;

/// The stadium and the crowd.
#[derive(Debug, Clone, Copy)]
pub struct FragmentedStadium {
    pub sections: u32,
    pub rows: u32,
    pub seats_per_row: u32,
    pub requests: usize,
    pub in_flight: usize,
}

/// What the crowd got and what it cost.
#[derive(Debug, Default)]
struct Tally {
    refused: usize,
    /// The same refusals with when they were in flight, for the checker.
    refusals: Vec<BlockRefusal>,
    /// Each request answered 5xx, when it was in flight and for which
    /// order: it may have held a block.
    unknown: Vec<(Window, String)>,
    other: Vec<String>,
}

impl Tally {
    /// The refusals judged against the holds `laid` on the stadium's `rows`.
    fn judged(&self, rows: &[Vec<String>], laid: &HashMap<String, Vec<SeatOp>>) -> BlockVerdict {
        BlockVerdict::judge("the stadium", rows, laid, &self.refusals)
    }
}

/// The scenario on `app` (a table with its stream, requests recorded).
pub(super) async fn fragmented_best_available(
    app: &App,
    endpoint: &str,
    recorder: &CapacityRecorder,
    size: FragmentedStadium,
) -> Result<Row, String> {
    let event = unique("fragmented");
    create_event_from(app, &event, &plan(size)).await?;
    let rows = stadium_rows(size)?;
    let mut laid = hold_every_tenth(app, &event, &rows, size.in_flight).await?;
    local::streams::project_now(app, endpoint).await?;
    let askers = create_orders(app, &event, size.requests).await?;

    recorder.take();
    recorder.set_recording(true);
    let started = Instant::now();
    let mut timing = Timing::default();
    let tally = ask(app, askers, size.in_flight, &mut timing).await?;
    timing.wall = started.elapsed();
    recorder.set_recording(false);
    let records = recorder.take();
    let charges = price(app, &records).await?;
    let requests = size.requests.max(1) as f64;
    let round_trips = records.len() as f64 / requests;
    let read_units = charges.iter().map(|c| c.read_units).sum::<f64>() / requests;
    let claims = records
        .iter()
        .filter(|r| r.op == "TransactWriteItems")
        .count();
    let (seats, held) = (size.sections * size.rows * size.seats_per_row, laid.len());
    let goals = fragmented_goals(round_trips, read_units);
    read_back_unknown(app, &event, &tally.unknown, &mut laid).await?;
    let history = tally.judged(&rows, &laid);
    Ok(Row {
        scenario: format!(
            "best-available, fragmented: {seats} seats ({} sections of {} × {}), every tenth held ({held} holds), {} requests for {QUANTITY} over {} instances (handler, measured)",
            size.sections, size.rows, size.seats_per_row, size.requests, size.in_flight
        ),
        correctness: format!(
            "{} × 409 not-enough-seats, {} other answers{}, {claims} claims; per request {round_trips:.2} round trips ({}) and {read_units:.2} read units ({}); {}",
            tally.refused,
            tally.other.len(),
            tally.other.first().map(|o| format!(" (first: {o})")).unwrap_or_default(),
            goals[0].judged(),
            goals[1].judged(),
            history.text(),
        ),
        ok: tally.refused == size.requests && claims == 0 && history.ok(),
        goals,
        timing,
    })
}

/// Refusing a fragmented stadium reads little: round trips and read units
/// per request against their targets.
fn fragmented_goals(round_trips: f64, read_units: f64) -> Vec<Goal> {
    vec![
        Goal::new(
            "best-available on a fragmented stadium: round trips per request",
            round_trips,
            Bound::AtMost(TARGET_ROUND_TRIPS),
            "`fragmented::TARGET_ROUND_TRIPS`",
        ),
        Goal::new(
            "best-available on a fragmented stadium: read units per request",
            read_units,
            Bound::AtMost(TARGET_READ_UNITS),
            "`fragmented::TARGET_READ_UNITS`",
        ),
    ]
}

/// `size`'s stadium: sections `S1…` of numbered rows.
fn plan(size: FragmentedStadium) -> serde_json::Value {
    let (name, hold) = ("Fragmented stadium", HOLD_SECONDS);
    grid_plan(name, hold, size.sections, size.rows, size.seats_per_row)
}

/// The seat ids of `size`'s stadium, row by row in seat order.
fn stadium_rows(size: FragmentedStadium) -> Result<Vec<Vec<String>>, String> {
    let mut rows = Vec::new();
    for s in 1..=size.sections {
        let section = SectionId::parse(&section_id(s)).map_err(|e| e.to_string())?;
        for r in 1..=size.rows {
            let row = RowId::parse(&r.to_string()).map_err(|e| e.to_string())?;
            let seats = (1..=size.seats_per_row)
                .map(|n| SeatId::compose(&section, &row, n).as_str().to_owned());
            rows.push(seats.collect());
        }
    }
    Ok(rows)
}

/// Holds seat 10, 20, … of every row, ten to an order, through get-seat,
/// `in_flight` orders at a time: each seat's history as its answer tells it.
async fn hold_every_tenth(
    app: &App,
    event: &str,
    rows: &[Vec<String>],
    in_flight: usize,
) -> Result<HashMap<String, Vec<SeatOp>>, String> {
    let seats: Vec<String> = rows
        .iter()
        .flat_map(|row| row.iter().skip(9).step_by(10).cloned())
        .collect();
    let holders = create_orders(app, event, seats.len().div_ceil(10)).await?;
    let sem = Arc::new(Semaphore::new(in_flight));
    let mut tasks = tokio::task::JoinSet::new();
    for (holder, mine) in holders.into_iter().zip(seats.chunks(10)) {
        let (app, sem, mine) = (app.clone(), sem.clone(), mine.to_vec());
        tasks.spawn(async move {
            let _permit = sem.acquire_owned().await;
            let mut held = Vec::new();
            for seat in mine {
                let uri = format!("/orders/{}/seats/{seat}", holder.id);
                let start = wall_us();
                let (status, body) = reply(&app, "POST", &uri, Some(&holder.token), "").await;
                let window = Window::new(start, wall_us());
                let expiry = Window::new(holder.expires, seconds_after(window.end, HOLD_SECONDS));
                match seat_claim(window, &holder.id, (status, &body), false, expiry) {
                    Some(op @ SeatOp::Held { .. }) => held.push((seat, op)),
                    _ => return Err(format!("get-seat {seat}: {status} {body}")),
                }
            }
            Ok(held)
        });
    }
    let mut laid: HashMap<String, Vec<SeatOp>> = HashMap::new();
    while let Some(done) = tasks.join_next().await {
        for (seat, op) in done.map_err(|e| e.to_string())?? {
            laid.entry(seat).or_default().push(op);
        }
    }
    Ok(laid)
}

/// Each asker's best-available for [`QUANTITY`], `in_flight` at a time,
/// round-robin over `in_flight` function instances.
async fn ask(
    app: &App,
    askers: Vec<BenchOrder>,
    in_flight: usize,
    timing: &mut Timing,
) -> Result<Tally, String> {
    let instances: Vec<App> = (0..in_flight.max(1)).map(|_| app.new_process()).collect();
    let sem = Arc::new(Semaphore::new(in_flight.max(1)));
    let mut tasks = tokio::task::JoinSet::new();
    for (i, o) in askers.into_iter().enumerate() {
        let (app, sem) = (instances[i % instances.len()].clone(), sem.clone());
        tasks.spawn(async move {
            let _permit = sem.acquire_owned().await;
            let (started, start) = (Instant::now(), wall_us());
            let body = serde_json::json!({ "quantity": QUANTITY }).to_string();
            let uri = format!("/orders/{}/best-available", o.id);
            let answer = as_caller(
                "best-available",
                reply(&app, "POST", &uri, Some(&o.token), &body),
            )
            .await;
            let window = Window::new(start, wall_us());
            (
                started.elapsed().as_secs_f64() * 1000.0,
                window,
                answer,
                o.id,
            )
        });
    }
    let mut tally = Tally::default();
    while let Some(done) = tasks.join_next().await {
        let (ms, window, (status, body), order) = done.map_err(|e| e.to_string())?;
        timing.latencies_ms.push(ms);
        match (status, body["error"].as_str()) {
            (409, Some("not-enough-seats")) => {
                tally.refused += 1;
                tally.refusals.push(BlockRefusal {
                    window,
                    quantity: QUANTITY as usize,
                });
            }
            (s, code) => {
                if (500..=599).contains(&s) {
                    tally.unknown.push((window, order));
                }
                tally.other.push(format!("{s} {}", code.unwrap_or("-")));
            }
        }
    }
    Ok(tally)
}
