//! best-available's stampede: buyers asking for 2 or 4 seats at once on one
//! section, all through the handler: claims/s and latency next to the
//! correctness counts (overlaps and false sold-outs must be 0; orphans are
//! reported: the contract's centre rule can split a row into odd runs).

use crate::kit::{reply, unique, BenchOrder, Row, Timing};
use crate::scale_model::past_aws_deadline;
use crate::{create_orders, Goal, HOLD_SECONDS};
use crowdcheck::history::{
    check_block_refusals, check_seat, micros_of, wall_us, BlockRefusal, SeatOp, Verdict, Window,
    MEMORY_SLACK_US,
};
use shared::domain::best_available::{has_run, orphans};
use shared::domain::{RowId, SeatId, SectionId};
use shared::App;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Semaphore;

mod spill;
pub(super) use spill::spill_stampedes;

/// The section and the crowd.
#[derive(Debug, Clone, Copy)]
pub struct BestAvailableStampede {
    pub rows: u32,
    pub seats_per_row: u32,
    pub buyers: usize,
    pub in_flight: usize,
}

/// What a buyer asks best-available for: a quantity, and how many of
/// them wheelchair spaces.
type Ask = (u32, u32);

/// One buyer's answer: its latency (ms), what it asked for,
/// best-available's status and body, when it was in flight and for which
/// order.
type Answer = (f64, Ask, u16, serde_json::Value, Window, String);

/// What the buyers got: the seats held, and each kind of answer counted.
#[derive(Default)]
struct Outcome {
    taken: HashSet<(String, u32)>,
    overlaps: usize,
    not_adjacent: usize,
    /// The asks refused as not enough seats.
    refused: Vec<Ask>,
    /// The same refusals with when they were in flight, for the checker.
    refusals: Vec<BlockRefusal>,
    /// Each request answered 5xx, when it was in flight and for which
    /// order: it may have held a block its answer does not name.
    unknown: Vec<(Window, String)>,
    retry: usize,
    other: usize,
    /// Each seat's history as the answers tell it, for the checker.
    histories: HashMap<String, Vec<SeatOp>>,
    /// Each block held: its row (0-based), the wheelchair spaces asked
    /// for, and its seat numbers.
    held: Vec<(usize, u32, Vec<u32>)>,
}

impl Outcome {
    /// Every seat's history and every refusal judged on the section's
    /// `rows`.
    fn judged(&self, rows: &[Vec<String>]) -> BlockVerdict {
        BlockVerdict::judge(SECTION, rows, &self.histories, &self.refusals)
    }
}

/// best-available's answers as the history checker judged them: each
/// seat's holds (never two holders at once), and each refusal on the rows
/// (no row may have had the seats free throughout it).
#[derive(Debug, Default)]
pub(super) struct BlockVerdict {
    seats: usize,
    holds: Verdict,
    refusals: Verdict,
}

impl BlockVerdict {
    /// `histories` judged seat by seat, and `refusals` on `rows`; `name`
    /// names the rows in the violations. What a 5xx held is in
    /// `histories` once read back ([`read_back_unknown`]).
    pub(super) fn judge(
        name: &str,
        rows: &[Vec<String>],
        histories: &HashMap<String, Vec<SeatOp>>,
        refusals: &[BlockRefusal],
    ) -> Self {
        let holds = histories
            .iter()
            .map(|(seat, ops)| check_seat(seat, ops))
            .fold(Verdict::default(), Verdict::and);
        // A refusal may rest on run summaries up to the contract's 5 s old,
        // the bound the crowd gate's memory has too.
        let refusals = check_block_refusals(name, rows, histories, refusals, MEMORY_SLACK_US);
        BlockVerdict {
            seats: histories.len(),
            holds,
            refusals,
        }
    }

    /// Two stampedes' verdicts together.
    fn and(self, other: BlockVerdict) -> BlockVerdict {
        BlockVerdict {
            seats: self.seats + other.seats,
            holds: self.holds.and(other.holds),
            refusals: self.refusals.and(other.refusals),
        }
    }

    pub(super) fn ok(&self) -> bool {
        self.holds.violations.is_empty() && self.refusals.violations.is_empty()
    }

    pub(super) fn text(&self) -> String {
        let first = self
            .holds
            .violations
            .iter()
            .chain(&self.refusals.violations)
            .next();
        format!(
            "history: {} seats, {} holds and {} refusals judged, {} violations{}",
            self.seats,
            self.holds.operations,
            self.refusals.operations,
            self.holds.violations.len() + self.refusals.violations.len(),
            first.map_or(String::new(), |v| format!(" ({v})"))
        )
    }
}

/// The one section the stampedes' events have.
const SECTION: &str = "A";

/// The seat ids of `size`'s section, row by row in seat order.
fn section_rows(size: BestAvailableStampede) -> Result<Vec<Vec<String>>, String> {
    let section = SectionId::parse(SECTION).map_err(|e| e.to_string())?;
    (1..=size.rows)
        .map(|r| {
            let row = RowId::parse(&r.to_string()).map_err(|e| e.to_string())?;
            Ok((1..=size.seats_per_row)
                .map(|n| SeatId::compose(&section, &row, n).as_str().to_owned())
                .collect())
        })
        .collect()
}

/// The stampede: a fresh section, every buyer's order, their requests at
/// once, then the seats left checked for false sold-outs and orphans.
pub(super) async fn best_available_stampede(
    app: &App,
    size: BestAvailableStampede,
) -> Result<Row, String> {
    let event = create_section(app, size).await?;
    let orders = create_orders(app, &event, size.buyers).await?;
    let started = Instant::now();
    let tasks = spawn_buyers(
        app,
        orders,
        size.in_flight,
        &[(2, 0), (2, 0), (4, 0), (2, 0)],
    );
    let mut timing = Timing::default();
    let mut outcome = tally(tasks, &mut timing).await?;
    timing.wall = started.elapsed();
    read_back_unknown(app, &event, &outcome.unknown, &mut outcome.histories).await?;
    // Seats were only ever taken: a run of n that exists now existed when
    // n was refused, so that refusal would have been false.
    let free = free_seats(app, &event, size.seats_per_row).await?;
    let false_sold_outs = outcome
        .refused
        .iter()
        .filter(|&&(n, _)| free.iter().any(|row| has_run(row, n as usize)))
        .count();
    let stranded: usize = free.iter().map(|row| orphans(row)).sum();
    let seats = size.rows * size.seats_per_row;
    let history = outcome.judged(&section_rows(size)?);
    let (taken, o) = (outcome.taken.len(), &outcome);
    let scenario = format!(
        "best-available stampede: {} buyers of 2 or 4 seats, {} × {} seats, {} in flight (handler, metered, map projected)",
        size.buyers, size.rows, size.seats_per_row, size.in_flight
    );
    let goals = vec![Goal::no_503(&scenario, o.retry)];
    Ok(Row {
        scenario,
        correctness: format!(
            "{taken} of {seats} seats held ({:.0} seats/s), {} overlaps, {} not adjacent, {false_sold_outs} false sold-outs, {} refused, {} × 503 ({}), {stranded} orphans; {}",
            taken as f64 / timing.wall.as_secs_f64().max(1e-9),
            o.overlaps,
            o.not_adjacent,
            o.refused.len(),
            o.retry,
            past_aws_deadline(&timing),
            history.text()
        ),
        ok: o.overlaps + o.not_adjacent + false_sold_outs + o.other == 0 && history.ok(),
        timing,
        goals,
    })
}

/// best-available's stampedes with the seat map kept projected by the
/// caller, as project-seat-map does (long rows are read from it, and any
/// row not yet read after a lost race): a row each.
pub(super) async fn projected_stampedes(
    app: &App,
    sizes: &[BestAvailableStampede],
) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();
    for &size in sizes {
        rows.push(best_available_stampede(app, size).await?);
    }
    Ok(rows)
}

/// A fresh event of one section, `size.rows` rows of
/// `size.seats_per_row`: its id.
async fn create_section(app: &App, size: BestAvailableStampede) -> Result<String, String> {
    let rows: Vec<_> = (1..=size.rows)
        .map(|r| serde_json::json!({"row": r.to_string(), "count": size.seats_per_row}))
        .collect();
    create_section_of(app, rows).await
}

/// A fresh event of one section of `rows` (the plan's rows): its id.
async fn create_section_of(app: &App, rows: Vec<serde_json::Value>) -> Result<String, String> {
    let event = unique("best");
    let plan = serde_json::json!({"name": "Best available", "holdSeconds": HOLD_SECONDS, "sections": [{"sectionId": SECTION, "rows": rows}]});
    match reply(
        app,
        "PUT",
        &format!("/events/{event}"),
        None,
        &plan.to_string(),
    )
    .await
    {
        (201, _) => Ok(event),
        // A long row's seats may outrun create-event's budget on the
        // emulator: the sweep finishes it, as it would in AWS.
        (202, _) => {
            local::apps::finish_creation(app, &event).await?;
            Ok(event)
        }
        (s, b) => Err(format!("create-event {event}: {s} {b}")),
    }
}

/// Every order asks best-available for its ask (`asks` in turn),
/// `in_flight` at a time.
fn spawn_buyers(
    app: &App,
    orders: Vec<BenchOrder>,
    in_flight: usize,
    asks: &[Ask],
) -> tokio::task::JoinSet<Answer> {
    let sem = Arc::new(Semaphore::new(in_flight));
    let mut tasks = tokio::task::JoinSet::new();
    for (i, o) in orders.into_iter().enumerate() {
        let (app, sem) = (app.clone(), sem.clone());
        let (n, k) = asks[i % asks.len()];
        tasks.spawn(async move {
            let _permit = sem.acquire_owned().await;
            let (t, start) = (Instant::now(), wall_us());
            let body = match k {
                0 => serde_json::json!({"quantity": n}),
                _ => serde_json::json!({"quantity": n, "wheelchair": k}),
            }
            .to_string();
            let uri = format!("/orders/{}/best-available", o.id);
            let (status, reply) = reply(&app, "POST", &uri, Some(&o.token), &body).await;
            let window = Window::new(start, wall_us());
            (
                t.elapsed().as_secs_f64() * 1000.0,
                (n, k),
                status,
                reply,
                window,
                o.id,
            )
        });
    }
    tasks
}

/// Each answer as it comes: its latency into `timing`, the seats it
/// holds checked for adjacency and overlaps, or its refusal counted.
async fn tally(
    mut tasks: tokio::task::JoinSet<Answer>,
    timing: &mut Timing,
) -> Result<Outcome, String> {
    let mut out = Outcome::default();
    while let Some(done) = tasks.join_next().await {
        let (ms, (n, k), status, body, window, order) = done.map_err(|e| e.to_string())?;
        timing.latencies_ms.push(ms);
        match (status, body["error"].as_str()) {
            (200, _) => out.block_held(&body, (n, k), window, &order),
            (409, Some("not-enough-seats")) => {
                out.refused.push((n, k));
                // The checker judges a refusal on any run of n: one
                // asking for spaces is judged on the map instead
                // (`spill.rs`).
                if k == 0 {
                    out.refusals.push(BlockRefusal {
                        window,
                        quantity: n as usize,
                    });
                }
            }
            (500..=599, _) => {
                // Any 5xx may have held a block; only a 503 is an answer
                // the contract gives.
                out.retry += usize::from(status == 503);
                out.other += usize::from(status != 503);
                out.unknown.push((window, order));
            }
            _ => out.other += 1,
        }
    }
    Ok(out)
}

impl Outcome {
    /// A `200`: its seats checked for adjacency and overlaps, its row
    /// noted, and each seat's hold recorded.
    fn block_held(&mut self, body: &serde_json::Value, (n, k): Ask, window: Window, order: &str) {
        self.record_holds(body, window, order);
        let seats: Vec<(String, u32)> = body["seats"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| SeatId::parse(s.as_str()?).ok())
            .filter_map(|s| {
                s.row_and_number()
                    .map(|(row, number)| (row.to_owned(), number))
            })
            .collect();
        // Rows are named `{section}-{n}`, n from 1 in plan order.
        let row_number = |row: &str| row.rsplit('-').next()?.parse::<usize>().ok();
        if let Some(row) = seats.first().and_then(|(row, _)| row_number(row)) {
            let numbers = seats.iter().map(|(_, number)| *number).collect();
            self.held.push((row.saturating_sub(1), k, numbers));
        }
        let adjacent = seats.len() == n as usize
            && seats
                .windows(2)
                .all(|w| w[0].0 == w[1].0 && w[1].1 == w[0].1 + 1);
        self.not_adjacent += usize::from(!adjacent);
        self.overlaps += seats
            .into_iter()
            .filter(|seat| !self.taken.insert(seat.clone()))
            .count();
    }

    /// A block held: each of its seats held by `order` until `expiresAt`.
    fn record_holds(&mut self, body: &serde_json::Value, window: Window, order: &str) {
        let Some(expires) = body["expiresAt"].as_str().and_then(micros_of) else {
            self.other += 1; // a hold without its expiry says nothing checkable
            return;
        };
        for seat in body["seats"].as_array().into_iter().flatten() {
            let Some(seat) = seat.as_str() else { continue };
            self.histories
                .entry(seat.to_owned())
                .or_default()
                .push(SeatOp::Held {
                    window,
                    order: order.to_owned(),
                    expires,
                });
        }
    }
}

/// The event's seats now, row by row: whether each is available.
async fn free_seats(app: &App, event: &str, seats_per_row: u32) -> Result<Vec<Vec<bool>>, String> {
    let now = shared::world::now();
    let all = app
        .store
        .list_all_seats(
            &shared::domain::EventId::parse(event).map_err(|e| e.to_string())?,
            None,
        )
        .await
        .map_err(|e| e.to_string())?
        .ok_or("event vanished")?;
    Ok(all
        .chunks(seats_per_row as usize)
        .map(|row| {
            row.iter()
                .map(|s| s.state.visible_status(now) == shared::domain::SeatStatus::Available)
                .collect()
        })
        .collect())
}

/// What each request answered 5xx held, read back: the seats its order
/// holds in `event` now (each order sends one request), each as a claim
/// whose answer was lost, in flight from the request's start until this
/// read, which saw it landed, and holding until its expiry. An order that
/// holds nothing now held nothing (seats are only taken here). Nothing is
/// read when nothing answered 5xx.
pub(super) async fn read_back_unknown(
    app: &App,
    event: &str,
    unknown: &[(Window, String)],
    histories: &mut HashMap<String, Vec<SeatOp>>,
) -> Result<(), String> {
    if unknown.is_empty() {
        return Ok(());
    }
    let event = shared::domain::EventId::parse(event).map_err(|e| e.to_string())?;
    let seats = app
        .store
        .list_all_seats(&event, None)
        .await
        .map_err(|e| e.to_string())?
        .ok_or("event vanished")?;
    let read = wall_us();
    for (window, order) in unknown {
        for seat in &seats {
            let shared::domain::SeatState::Held {
                order: holder,
                expires_at,
            } = &seat.state
            else {
                continue;
            };
            if holder.as_str() == order {
                histories
                    .entry(seat.spec.seat_id.as_str().to_owned())
                    .or_default()
                    .push(SeatOp::Unknown {
                        window: Window::new(window.start, read),
                        order: order.clone(),
                        expires_by: expires_at.0 * 1_000,
                    });
            }
        }
    }
    Ok(())
}
