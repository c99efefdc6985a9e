//! Under a crowd (docs/API.md): the contract's one-seat stampede, 10,000
//! get-seat requests for one seat within one second, spread over N
//! function instances (each an [`App`] of its own, with its own memory of
//! the seats it keeps refusing), every DynamoDB request recorded and
//! priced on the seat's partition key.
//!
//! DynamoDB Local cannot take 10,000 transactions in a second, so the
//! second is simulated: request `i` arrives at `t0 + i / requests` s and
//! goes to instance `i mod N`, which (as a Lambda instance does) serves
//! its requests one at a time, in arrival order, at their simulated
//! instants. What is measured is what the instances send to DynamoDB in
//! that second: the seat key's write units are the write units per second.

use super::onsale_history::{BuyerHistory, HistoryVerdict};
use crate::capacity::{self, CapacityRecorder, PARTITION_WRITE_UNITS};
use crate::kit::{claim_answer, unique};
use crate::setup::{create_buyer_orders, create_event_from};
use crate::{create_event, create_orders, Bound, Goal, HOLD_SECONDS};
use aws_sdk_dynamodb::types::AttributeValue;
use crowdcheck::history::{wall_us, Window};
use shared::auth::HoldToken;
use shared::domain::OrderId;
use shared::domain::SeatId;
use shared::domain::{EventId, Millis};
use shared::error::Error;
use shared::handlers::claim_remembering;
use shared::App;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use tokio::sync::Semaphore;

/// The scenario's size: `requests` within one second, for each of
/// `instances` (one run each).
#[derive(Debug, Clone, Copy)]
pub struct OneSeatStampede {
    pub requests: usize,
    pub instances: [usize; 2],
}

/// One run's outcome.
#[derive(Debug, Clone, Default)]
pub struct StampedeRun {
    pub instances: usize,
    pub requests: usize,
    pub winners: usize,
    pub seat_held: usize,
    pub unavailable: usize,
    /// Any other answer, by name (must be none).
    pub other: BTreeMap<String, usize>,
    /// Claims that reached DynamoDB (the rest were refused from memory).
    pub writes: usize,
    /// Attempts DynamoDB Local failed (no answer, or a 5xx): a 503 may
    /// come from the capacity meter's throttling only.
    pub emulator_errors: usize,
    /// Write units charged to the seat's partition key in the second.
    pub seat_key_write_units: f64,
    /// The event's buyer limit (each claimant a buyer of its own), if any.
    pub buyer_limit: Option<u32>,
    /// Whether the seat's key must stay under a partition's write units
    /// (the contract's 100 instances).
    pub must_fit: bool,
    /// Every answer judged by the history checker as the seat's history.
    pub history: HistoryVerdict,
}

impl StampedeRun {
    /// The contract's counts: one winner, every other request `seat-held`
    /// or, past the contract's 100 instances, `503` where the meter
    /// throttled the seat's key (and only there: no attempt failed in the
    /// emulator).
    pub fn ok(&self) -> bool {
        let throttled_ok = !self.must_fit || self.unavailable == 0;
        self.winners == 1
            && self.seat_held + self.unavailable == self.requests - 1
            && throttled_ok
            && self.emulator_errors == 0
            && self.other.is_empty()
            && self.history.ok()
    }

    /// At the contract's 100 instances, the seat's key stays under a
    /// partition's write units. At 1,000 the key is expected over (every
    /// instance's first claims write): no goal.
    pub fn goal(&self) -> Option<Goal> {
        self.must_fit.then(|| {
            Goal::new(
                format!(
                    "one-seat stampede, {} instances{}: write units/s on the seat's key",
                    self.instances,
                    self.buyer_limit
                        .map_or(String::new(), |limit| format!(", buyer limit {limit}"))
                ),
                self.seat_key_write_units,
                Bound::Below(PARTITION_WRITE_UNITS),
                "a partition's write units/s (DynamoDB's limits)",
            )
        })
    }
    /// Its instances, and the event's limit if it has one.
    pub(crate) fn label(&self) -> String {
        match self.buyer_limit {
            Some(limit) => format!("{} (buyer limit {limit})", self.instances),
            None => self.instances.to_string(),
        }
    }
}

/// Both runs on one event of two seats: the first on A-1-1, the second
/// on A-1-2, by the same orders (an order may hold several seats); then
/// the contract's run again on an event with a buyer limit, each claimant
/// a buyer of its own (every claim also reads its buyer's record).
pub(super) async fn one_seat_stampedes(
    app: &App,
    recorder: &CapacityRecorder,
    size: OneSeatStampede,
) -> Result<Vec<StampedeRun>, String> {
    let event = unique("crowd");
    create_event(app, &event, 2, HOLD_SECONDS).await?;
    let orders = create_orders(app, &event, size.requests).await?;
    let mut runs = Vec::new();
    for (instances, seat) in size.instances.into_iter().zip(["A-1-1", "A-1-2"]) {
        let must_fit = runs.is_empty();
        let run = priced_run(app, recorder, &event, &orders, seat, instances, None).await?;
        runs.push(StampedeRun { must_fit, ..run });
    }
    let limited = unique("crowd-limit");
    let plan = serde_json::json!({
        "name": "Benchmark, limited",
        "holdSeconds": HOLD_SECONDS,
        "buyerLimit": LIMITED_RUN_LIMIT,
        "sections": [{"sectionId": "A", "rows": [{"row": "1", "count": 1}]}],
    });
    create_event_from(app, &limited, &plan).await?;
    let orders = create_buyer_orders(app, &limited, size.requests).await?;
    let instances = size.instances[0];
    let run = priced_run(
        app,
        recorder,
        &limited,
        &orders,
        "A-1-1",
        instances,
        Some(LIMITED_RUN_LIMIT),
    )
    .await?;
    runs.push(StampedeRun {
        must_fit: true,
        ..run
    });
    Ok(runs)
}

/// The limited run's `buyerLimit`.
const LIMITED_RUN_LIMIT: u32 = 2;

/// One run of `orders` on `seat` of `event` over `instances`, its requests
/// recorded and priced on the seat's key.
async fn priced_run(
    app: &App,
    recorder: &CapacityRecorder,
    event: &str,
    orders: &[crate::kit::BenchOrder],
    seat: &str,
    instances: usize,
    buyer_limit: Option<u32>,
) -> Result<StampedeRun, String> {
    let mut claimants = Vec::with_capacity(orders.len());
    for o in orders {
        let (id, token) = o.claimant()?;
        claimants.push((id, token, o.expires));
    }
    let claimants = Arc::new(claimants);
    let seat = SeatId::parse(seat).map_err(|e| e.to_string())?;
    recorder.take();
    recorder.set_recording(true);
    let mut run = stampede(app, claimants, &seat, instances).await?;
    recorder.set_recording(false);
    let records = recorder.take();
    run.emulator_errors = records
        .iter()
        .filter(|r| r.status.is_none_or(|status| status >= 500))
        .count();
    // Transactions that reached the table (a throttled one was defused).
    run.writes = records
        .iter()
        .filter(|r| r.op == "TransactWriteItems" && r.request["TransactItems"].is_array())
        .count();
    let charges = super::pricing::price(app, &records).await?;
    let seat_key = seat_partition(event, &seat)?;
    run.seat_key_write_units = capacity::totals(&charges, &|t| t.clone())
        .iter()
        .filter(|load| load.target == seat_key)
        .map(|load| load.write_units)
        .sum();
    run.buyer_limit = buyer_limit;
    Ok(run)
}

/// The seat's partition key as the recorder names it.
fn seat_partition(event: &str, seat: &SeatId) -> Result<capacity::Target, String> {
    let event = EventId::parse(event).map_err(|e| e.to_string())?;
    let key = shared::store::seat_item_key(&event, seat);
    match key.get(shared::store::PK) {
        Some(AttributeValue::S(pk)) => Ok(capacity::Target::table(pk.clone())),
        _ => Err("a seat key without a string partition key".into()),
    }
}

/// An order of the stampede, its hold token and its `expiresAt` as created.
type Claimant = (OrderId, HoldToken, crowdcheck::history::Micros);

/// The start of the last run's simulated second (ms).
static LAST_SECOND: AtomicI64 = AtomicI64::new(0);

/// One simulated second of `claimants` claiming `seat` through
/// `instances` fresh instances of `app`.
async fn stampede(
    app: &App,
    claimants: Arc<Vec<Claimant>>,
    seat: &SeatId,
    instances: usize,
) -> Result<StampedeRun, String> {
    let requests = claimants.len();
    // The second starts on a whole second of the clock, so it is one
    // second of the capacity meter's (which counts whole seconds), and
    // after the last run's: two runs never share a key's second.
    let next = (shared::world::now().0.div_euclid(1_000) + 1) * 1_000;
    let last = LAST_SECOND.fetch_max(next, Ordering::SeqCst);
    let t0 = Millis(next.max(last + 1_000));
    LAST_SECOND.fetch_max(t0.0, Ordering::SeqCst);
    let arrival = move |i: usize| Millis(t0.0 + (i as i64 * 1_000) / requests.max(1) as i64);
    // Instances run concurrently; DynamoDB Local takes so many at once.
    let in_flight = Arc::new(Semaphore::new(crate::setup::LOCAL_IN_FLIGHT));
    let mut tasks = tokio::task::JoinSet::new();
    for k in 0..instances {
        let instance = app.new_process();
        let (claimants, seat, in_flight) = (claimants.clone(), seat.clone(), in_flight.clone());
        tasks.spawn(async move {
            let mut answers = Vec::new();
            for i in (k..requests).step_by(instances) {
                let (order, token, _) = &claimants[i];
                let _permit = in_flight.acquire().await;
                // The claim's DynamoDB requests metered at its instant.
                let start = wall_us();
                let claim = claim_remembering(&instance, order, token, &seat, arrival(i));
                let answer = crowdcheck::capacity::at(arrival(i), claim).await;
                answers.push((i, Window::new(start, wall_us()), answer));
            }
            answers
        });
    }
    let mut run = StampedeRun {
        instances,
        requests,
        ..StampedeRun::default()
    };
    let mut answers = Vec::with_capacity(requests);
    while let Some(done) = tasks.join_next().await {
        answers.extend(done.map_err(|e| e.to_string())?);
    }
    tally(&mut run, &claimants, seat, answers);
    Ok(run)
}

/// The run's answers counted, and judged by the history checker as the
/// seat's history. Each answer's window is on the wall clock while its
/// claim ran at a simulated instant: a hold lasts until its order expires
/// (`HOLD_SECONDS` after the orders were opened, before the runs), which
/// must outlast the runs (it does by minutes): then every refusal's holder
/// is live on both clocks.
fn tally(
    run: &mut StampedeRun,
    claimants: &[Claimant],
    seat: &SeatId,
    answers: Vec<(usize, Window, Result<Millis, Error>)>,
) {
    let mut history = BuyerHistory::default();
    for (i, window, answer) in answers {
        let (status, body) = claim_answer(&answer);
        let order = claimants[i].0.as_str();
        let life = (claimants[i].2, HOLD_SECONDS);
        history.claim_for(seat.as_str(), window, order, (status, &body), life);
        match answer {
            Ok(_) => run.winners += 1,
            Err(Error::SeatHeld) => run.seat_held += 1,
            Err(Error::StoreUnavailable) => run.unavailable += 1,
            Err(other) => *run.other.entry(other.to_string()).or_default() += 1,
        }
    }
    run.history = history.judge_seats();
}
