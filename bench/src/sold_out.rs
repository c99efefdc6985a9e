//! The on-sale's sold-out phase (issue 18): after the buyers, the rest of
//! the stadium is *seeded* as sold (every seat and place still free sold
//! at once through the store's seeding calls, which use a late payment's
//! own expressions, so the stream shows ordinary sales), the stream is
//! projected, and a crowd in the model's mix is refused through
//! [`CROWD_INSTANCES`] warm function instances, every DynamoDB request
//! recorded and priced per function. Then the first seconds of an on-sale
//! are projected (`fresh.rs`).

use super::demand::{DemandModel, StreamCounts, Zipf, GA_SECTION};
use super::onsale_history::OnSaleHistory;
use super::pricing::Priced;
use super::pricing::{flattened, price_each};
use super::replay::Replays;
use super::setup::{project_stream, seed_sold_seats};
use super::sold_out_crowd::{crowd_claims, refuse, Ask, CROWD_INSTANCES, CROWD_ORDER_SECONDS};
use crate::capacity::{self, CapacityRecorder, KeyLoad};
use crate::kit::{reply, BenchOrder, Rng};
use crowdcheck::history::{wall_us, Window};
use shared::domain::OrderId;
use shared::domain::SeatId;
use shared::domain::{EventId, PaymentId, SectionId};
use shared::App;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;
use tokio::sync::Semaphore;

/// The contract's targets for a refusal on a sold-out event (docs/API.md,
/// "Under a crowd"), on average.
pub const REFUSAL_READ_UNITS: f64 = 5.0;
pub const REFUSAL_WRITE_UNITS: f64 = 1.0;

/// What one function's requests in the crowd cost.
#[derive(Debug, Clone, Default)]
pub struct FunctionCost {
    pub requests: u64,
    /// Answered with the refusal a sold-out event calls for.
    pub refused: u64,
    /// Any other answer, by status and code (must be none).
    pub other: BTreeMap<String, u64>,
    pub read_units: f64,
    pub write_units: f64,
    /// DynamoDB requests made.
    pub round_trips: u64,
}

impl FunctionCost {
    pub fn reads_per_request(&self) -> f64 {
        self.read_units / self.requests.max(1) as f64
    }
    pub fn writes_per_request(&self) -> f64 {
        self.write_units / self.requests.max(1) as f64
    }
}

/// What the sold-out phase measured.
#[derive(Debug, Clone, Default)]
pub struct SoldOutPhase {
    pub seeded_seats: u64,
    pub seeded_places: u64,
    pub seeding: Duration,
    /// Sections the stream saw sold out, of all.
    pub sold_out_sections: usize,
    pub sections: usize,
    pub functions: BTreeMap<&'static str, FunctionCost>,
    /// The hottest keys of the crowd's requests, for writes and for reads.
    pub hottest_write: Option<KeyLoad>,
    pub hottest_read: Option<KeyLoad>,
    /// Read units one fresh instance of each function spends on its first
    /// request, all keys but the order's own.
    pub fresh: BTreeMap<&'static str, f64>,
    /// The hottest key in the first seconds' projection, and its read
    /// units per second.
    pub fresh_hottest: Option<(String, f64)>,
    /// Every priced request of the refusals, and of the crowd's orders
    /// (`orders` of them), for the crowd's projection.
    pub refusal_charges: Vec<capacity::Charge>,
    pub order_charges: Vec<capacity::Charge>,
    /// The same requests one by one, in recorded order, for the replay:
    /// the refusals by function (recorded one function after another,
    /// replayed side by side).
    pub refusal_requests: Vec<Vec<Priced>>,
    pub order_requests: Vec<Priced>,
    /// The crowd replayed through the capacity meter (`replay`), with a
    /// refused buyer's one order for so many refusals.
    pub replays: Replays,
    pub refusals_per_order: f64,
    pub orders: u64,
    pub order_round_trips: u64,
    /// What the crowd's orders put on the stream.
    pub order_stream: StreamCounts,
}

impl SoldOutPhase {
    fn totals(&self) -> (u64, f64, f64) {
        self.functions.values().fold((0, 0.0, 0.0), |(n, r, w), f| {
            (n + f.requests, r + f.read_units, w + f.write_units)
        })
    }
    /// Read units per refused request, all functions together.
    pub fn refusal_read_units(&self) -> f64 {
        let (n, r, _) = self.totals();
        r / n.max(1) as f64
    }
    pub fn refusal_write_units(&self) -> f64 {
        let (n, _, w) = self.totals();
        w / n.max(1) as f64
    }
    /// Every request refused as it should be, and the stream saw every
    /// section sold out (the costs are [`Self::goals`]).
    pub fn ok(&self) -> bool {
        self.functions
            .values()
            .all(|f| f.other.is_empty() && f.refused == f.requests)
            && self.functions.values().any(|f| f.requests > 0)
            && self.sold_out_sections == self.sections
    }
}

/// Sells the rest, projects it, refuses the crowd, projects a cold start.
pub(super) async fn sold_out_phase(
    app: &App,
    follower: &local::streams::StreamFollower,
    recorder: &CapacityRecorder,
    event: &str,
    model: DemandModel,
    crowd: usize,
    history: &mut OnSaleHistory,
) -> Result<SoldOutPhase, String> {
    let mut out = SoldOutPhase::default();
    let event_id = EventId::parse(event).map_err(|e| e.to_string())?;
    sell_the_rest(app, follower, &event_id, model, (&mut out, history)).await?;

    let instances: Vec<App> = (0..CROWD_INSTANCES).map(|_| app.new_process()).collect();
    let asks = crowd_asks(model, crowd);
    let orders = crowd_orders(app, follower, recorder, &event_id, asks.len(), &mut out).await?;
    // Warm: each instance has served one request of each function.
    let warm = &orders[0];
    warm_instances(&instances, &asks, warm).await;
    let charges = refuse_the_crowd(
        app,
        recorder,
        &instances,
        &orders,
        &asks,
        (&mut out, history),
    )
    .await?;
    let loads = capacity::totals(&charges, &|t| t.clone());
    out.refusal_charges = charges;
    out.hottest_write = loads.first().cloned();
    out.hottest_read = loads
        .iter()
        .max_by(|a, b| a.read_units.total_cmp(&b.read_units))
        .cloned();
    (out.fresh, out.fresh_hottest) =
        super::fresh::fresh_instances(app, event, warm, recorder).await?;
    Ok(out)
}

/// Seeds the rest of the stadium as sold, projects the stream, and counts
/// the sections a fresh instance sees sold out.
async fn sell_the_rest(
    app: &App,
    follower: &local::streams::StreamFollower,
    event_id: &EventId,
    model: DemandModel,
    (out, history): (&mut SoldOutPhase, &mut OnSaleHistory),
) -> Result<(), String> {
    let started = Instant::now();
    (out.seeded_seats, out.seeded_places) = seed_the_rest(app, event_id, model, history).await?;
    out.seeding = started.elapsed();
    project_stream(app, follower).await?;
    out.sections = (model.sections + u32::from(model.ga_capacity > 0)) as usize;
    let fresh = app.new_process();
    out.sold_out_sections = fresh
        .sold_out_sections(event_id)
        .await
        .map_err(|e| e.to_string())?
        .len();
    Ok(())
}

/// The crowd's `n` orders, written as create-order writes them: a refused
/// buyer still made one, and its cost is part of the crowd's. Their
/// requests are priced, and what they put on the stream counted.
async fn crowd_orders(
    app: &App,
    follower: &local::streams::StreamFollower,
    recorder: &CapacityRecorder,
    event_id: &EventId,
    n: usize,
    out: &mut SoldOutPhase,
) -> Result<Vec<BenchOrder>, String> {
    recorder.take();
    recorder.set_recording(true);
    let orders = long_orders(app, event_id, n).await?;
    recorder.set_recording(false);
    let records = recorder.take();
    out.order_round_trips = records.len() as u64;
    out.order_requests = price_each(app, &records).await?;
    out.order_charges = flattened(&out.order_requests);
    out.orders = orders.len() as u64;
    // What those orders put on the stream (their expiry, not run here,
    // changes each order item once more).
    let stream = std::sync::Arc::new(std::sync::Mutex::new(StreamCounts::default()));
    follower
        .catch_up(|batch| {
            let stream = stream.clone();
            async move {
                let mut counts = stream.lock().unwrap_or_else(|p| p.into_inner());
                for record in batch["Records"].as_array().into_iter().flatten() {
                    counts.count(record);
                }
            }
        })
        .await?;
    out.order_stream = *stream.lock().unwrap_or_else(|p| p.into_inner());
    Ok(orders)
}

/// Each instance serves the first asks (one of each function) for the
/// `warm` order, unrecorded, so the crowd meets warm instances.
async fn warm_instances(instances: &[App], asks: &[Ask], warm: &BenchOrder) {
    for instance in instances {
        for ask in &asks[..asks.len().min(12)] {
            reply(
                instance,
                ask.method,
                &ask.path.replace("{o}", &warm.id),
                Some(&warm.token),
                &ask.body,
            )
            .await;
        }
    }
}

/// The crowd, one function at a time: its requests recorded and priced,
/// and each answer counted as the refusal it should be or not. Every
/// refusal's charges.
async fn refuse_the_crowd(
    app: &App,
    recorder: &CapacityRecorder,
    instances: &[App],
    orders: &[BenchOrder],
    asks: &[Ask],
    (out, history): (&mut SoldOutPhase, &mut OnSaleHistory),
) -> Result<Vec<capacity::Charge>, String> {
    let mut charges = Vec::new();
    for function in ["get-seat", "hold-ga", "best-available"] {
        let mine: Vec<(usize, &Ask)> = asks
            .iter()
            .enumerate()
            .filter(|(_, a)| a.function == function)
            .collect();
        recorder.take();
        recorder.set_recording(true);
        let answers = refuse(instances, orders, &mine).await?;
        recorder.set_recording(false);
        if function == "get-seat" {
            crowd_claims(history, orders, &mine, &answers);
        }
        let records = recorder.take();
        let requests = price_each(app, &records).await?;
        let priced = flattened(&requests);
        out.refusal_requests.push(requests);
        let cost = out.functions.entry(function).or_default();
        cost.round_trips = records.len() as u64;
        cost.read_units = priced.iter().map(|c| c.read_units).sum();
        cost.write_units = priced.iter().map(|c| c.write_units).sum();
        for (ask, (status, body, _)) in mine.iter().map(|(_, a)| a).zip(answers) {
            cost.requests += 1;
            let code = body["error"].as_str().unwrap_or_default();
            if status == ask.refusal.0 && ask.refusal.1.contains(&code) {
                cost.refused += 1;
            } else {
                *cost.other.entry(format!("{status} {code}")).or_default() += 1;
            }
        }
        charges.extend(priced);
    }
    Ok(charges)
}

/// `n` PENDING orders of `event` living [`CROWD_ORDER_SECONDS`], written
/// as create-order writes them.
async fn long_orders(app: &App, event: &EventId, n: usize) -> Result<Vec<BenchOrder>, String> {
    let head = shared::domain::EventHead {
        event_id: event.clone(),
        hold_seconds: CROWD_ORDER_SECONDS,
        seat_count: 0,
        buyer_limit: None,
        buyer_key: None,
    };
    let in_flight = Arc::new(Semaphore::new(32));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..n {
        let (app, head, in_flight) = (app.clone(), head.clone(), in_flight.clone());
        tasks.spawn(async move {
            let _permit = in_flight.acquire().await;
            let now = shared::world::now();
            let (order, token) =
                shared::handlers::open_order(&head, now, app.config.expiry_guard_ms, None)
                    .map_err(|e| e.to_string())?;
            app.store
                .create_order(&order)
                .await
                .map_err(|e| e.to_string())?;
            Ok::<_, String>(BenchOrder {
                id: order.order_id.to_string(),
                token: local::apps::dev_hold_token_keys().encode(&order.order_id, &token),
                expires: order.expires_at.0 * 1_000,
            })
        });
    }
    let mut orders = Vec::with_capacity(n);
    while let Some(done) = tasks.join_next().await {
        orders.push(done.map_err(|e| e.to_string())??);
    }
    Ok(orders)
}

/// Every seat and place still free, sold to one seeding order; the sales
/// go into the on-sale's `history`, which judges the crowd's refusals.
async fn seed_the_rest(
    app: &App,
    event: &EventId,
    model: DemandModel,
    history: &mut OnSaleHistory,
) -> Result<(u64, u64), String> {
    let start = wall_us();
    let order = OrderId::from_random(event, 0x5EED);
    let payment = PaymentId::parse("pi_seeded_sold_out").map_err(|e| e.to_string())?;
    let seats: Vec<SeatId> = (1..=model.sections)
        .flat_map(|s| {
            (1..=model.rows)
                .flat_map(move |r| (1..=model.seats_per_row).map(move |k| format!("S{s}-{r}-{k}")))
        })
        .filter_map(|id| SeatId::parse(&id).ok())
        .collect();
    let seeded = seed_sold_seats(app, event, seats, &order, &payment).await?;
    let mut seeded_places = 0;
    if model.ga_capacity > 0 {
        let section = SectionId::parse(GA_SECTION).map_err(|e| e.to_string())?;
        let all: Vec<u32> = (0..shared::domain::ga::bucket_count(model.ga_capacity)).collect();
        let buckets = app
            .store
            .read_buckets(event, &section, &all, true)
            .await
            .map_err(|e| e.to_string())?;
        for bucket in &buckets {
            let sold = app
                .store
                .seed_sold_places(
                    event,
                    &section,
                    bucket,
                    &order,
                    &payment,
                    shared::world::now(),
                )
                .await
                .map_err(|e| e.to_string())?;
            if sold {
                seeded_places += u64::from(bucket.free);
            }
        }
    }
    let seats: Vec<String> = seeded.iter().map(ToString::to_string).collect();
    let window = Window::new(start, wall_us());
    history.sold(window, order.as_str(), &seats, seeded_places);
    Ok((seats.len() as u64, seeded_places))
}

/// The crowd's requests in the model's mix: five in six buyers want seats
/// (a tenth of them through best-available, the rest naming 1-4 seats by
/// Zipf section and row), one in six 1-4 places. `{o}` stands for the
/// buyer's order.
fn crowd_asks(model: DemandModel, requests: usize) -> Vec<Ask> {
    const SEATS_GONE: &[&str] = &["seat-sold"];
    let (sections, rows) = (Zipf::new(model.sections), Zipf::new(model.rows));
    let mut rng = Rng(0x5017_D0A7);
    let mut asks = Vec::with_capacity(requests);
    while asks.len() < requests {
        let k = rng.below(4) + 1;
        let ask = match rng.below(60) {
            0..=9 => Ask {
                function: "hold-ga",
                method: "PUT",
                path: format!("/orders/{{o}}/ga/{GA_SECTION}"),
                body: serde_json::json!({"quantity": k}).to_string(),
                refusal: (409, &["sold-out"]),
            },
            10..=14 => {
                let section =
                    (rng.below(2) == 0).then(|| format!("S{}", sections.sample(&mut rng)));
                Ask {
                    function: "best-available",
                    method: "POST",
                    path: "/orders/{o}/best-available".into(),
                    body: serde_json::json!({"quantity": k, "sectionId": section}).to_string(),
                    refusal: (409, &["not-enough-seats"]),
                }
            }
            _ => {
                let (s, r) = (sections.sample(&mut rng), rows.sample(&mut rng));
                let seat = rng.below(u64::from(model.seats_per_row)) + 1;
                Ask {
                    function: "get-seat",
                    method: "POST",
                    path: format!("/orders/{{o}}/seats/S{s}-{r}-{seat}"),
                    body: String::new(),
                    refusal: (409, SEATS_GONE),
                }
            }
        };
        asks.push(ask);
    }
    asks
}
