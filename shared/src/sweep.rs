//! The sweep (the expire-holds function): marks expired PENDING orders EXPIRED and
//! releases the seats they still hold. Correctness never depends on it (a
//! claim compares the hold's expiry itself); it tidies up, so that seats read
//! as free in the table and orders read as EXPIRED in the index.

use serde::Serialize;

use crate::domain::{hold_is_live, EventRef, EventStatus, Millis, Order, OrderId, OrderStatus};
use crate::error::chain;
use crate::store::{FanOut, Store, PENDING_SHARDS};

/// Orders read per index query.
const PAGE_SIZE: i32 = 100;
/// Orders released concurrently, per lane.
pub const ORDERS_IN_FLIGHT: usize = 16;
/// Index shards swept at once, each lane its own shards in turn: one
/// lane waited out 64 shards' queries and page ends one after another,
/// and fell short of the rate a stadium on-sale's expiries need
/// (docs/BENCHMARKS.md, "sweep throughput").
pub const SHARD_LANES: usize = 4;
/// Stop starting new pages when the invocation has less than this left,
/// so the report still goes out; the next run finishes the rest.
pub const DEADLINE_MARGIN_MS: i64 = 2_000;

#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SweepSummary {
    /// Orders this run moved from PENDING to EXPIRED.
    pub expired_orders: u64,
    /// Seats this run released (each still held by its expired order).
    pub released_seats: u64,
    /// General-admission places this run gave back (each still held by
    /// its expired order).
    pub released_places: u64,
    /// Orders that failed (logged); they stay in the index for the next run.
    #[serde(skip_serializing_if = "is_zero")]
    pub failed_orders: u64,
    /// Events whose creation this run finished (create-event answered 202).
    #[serde(skip_serializing_if = "is_zero")]
    pub completed_events: u64,
    /// True when the deadline stopped the run before the index was empty.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stopped_early: bool,
    /// How long the oldest expired order this run found had been expired
    /// (milliseconds): how far the sweep runs behind. Absent when it found
    /// none.
    #[serde(rename = "sweepLagMs", skip_serializing_if = "Option::is_none")]
    pub lag_ms: Option<u64>,
}

impl SweepSummary {
    /// Adds another part of the same run (a lane) to this one.
    fn absorb(&mut self, part: SweepSummary) {
        self.expired_orders += part.expired_orders;
        self.released_seats += part.released_seats;
        self.released_places += part.released_places;
        self.failed_orders += part.failed_orders;
        self.completed_events += part.completed_events;
        self.stopped_early |= part.stopped_early;
        self.lag_ms = self.lag_ms.max(part.lag_ms);
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Work still running this close to the deadline is abandoned, so the
/// summary goes out before Lambda ends the invocation: each SDK call is
/// bounded (8 s), but a run of them against a hung store is not — 7 index
/// queries timing out one after another outlast expire-holds' 55 s.
pub const REPORT_RESERVE_MS: i64 = 500;

/// What expire-holds does each minute: releases expired holds, then spends
/// what is left of the invocation finishing event creations that ran out
/// of time (create-event answered `202`).
pub async fn run(store: &Store, now: Millis, deadline: Option<Millis>) -> SweepSummary {
    let mut summary = release_expired(store, now, deadline).await;
    match deadline {
        Some(d) => {
            let left = d.0 - DEADLINE_MARGIN_MS - crate::world::now().0;
            if left <= 0 {
                return summary;
            }
            let work = finish_events(store, now, deadline, &mut summary);
            // `left` is positive here.
            if tokio::time::timeout(std::time::Duration::from_millis(left as u64), work)
                .await
                .is_err()
            {
                tracing::warn!("sweep: event creation still running at the deadline was abandoned; the next run resumes it");
            }
        }
        None => finish_events(store, now, deadline, &mut summary).await,
    }
    summary
}

/// Finishes unfinished events one after another until the deadline (each
/// write is conditional, so two runs at once only repeat work).
pub async fn finish_events(
    store: &Store,
    now: Millis,
    deadline: Option<Millis>,
    summary: &mut SweepSummary,
) {
    let events = match store.unfinished_events(now).await {
        Ok(events) => events,
        Err(e) => {
            tracing::error!(error = %chain(&e), "sweep: creating-events query failed");
            return;
        }
    };
    // No deadline (the dev server, tests): as long as it takes.
    let until = deadline.map_or(Millis(i64::MAX / 2), |d| Millis(d.0 - DEADLINE_MARGIN_MS));
    for event in events {
        match store.finish_event(&event, until).await {
            Ok(EventStatus::Ready) => {
                summary.completed_events += 1;
                tracing::info!(event_ref = %event, "sweep: event creation finished");
            }
            Ok(EventStatus::Creating) => {
                summary.stopped_early = true;
                tracing::info!(event_ref = %event, "sweep: event creation continues next run");
                // Out of time: the rest waits for the next run.
                return;
            }
            Err(e) => {
                tracing::error!(event_ref = %event, error = %chain(&e), "sweep: event creation failed; next run retries it")
            }
        }
    }
}

/// Sweeps every shard of the pending index for orders expired at `now`.
/// Safe to run twice at once: each release and each retirement is a
/// conditional write that only one run can win. With a `deadline`, it
/// starts no page within [`DEADLINE_MARGIN_MS`] of it and abandons what is
/// still running [`REPORT_RESERVE_MS`] before it (the abandoned orders stay
/// in the index; seats an abandoned release freed are not counted).
pub async fn release_expired(store: &Store, now: Millis, deadline: Option<Millis>) -> SweepSummary {
    let mut lanes = vec![SweepSummary::default(); SHARD_LANES];
    let work = sweep_shards(store, now, deadline, &mut lanes);
    let mut abandoned = false;
    match deadline {
        Some(d) => {
            let left = u64::try_from(d.0 - REPORT_RESERVE_MS - crate::world::now().0).unwrap_or(0);
            if tokio::time::timeout(std::time::Duration::from_millis(left), work)
                .await
                .is_err()
            {
                abandoned = true;
                tracing::warn!("sweep: store calls still running at the deadline were abandoned");
            }
        }
        None => work.await,
    }
    // What every lane did, finished or not.
    let mut summary = SweepSummary {
        stopped_early: abandoned,
        ..SweepSummary::default()
    };
    for lane in lanes {
        summary.absorb(lane);
    }
    // The contract's field names, as in the returned summary.
    tracing::info!(
        expiredOrders = summary.expired_orders,
        releasedSeats = summary.released_seats,
        releasedPlaces = summary.released_places,
        failedOrders = summary.failed_orders,
        stoppedEarly = summary.stopped_early,
        "sweep"
    );
    summary
}

/// The shards in `lanes.len()` lanes at once, each lane's summary its own.
async fn sweep_shards(
    store: &Store,
    now: Millis,
    deadline: Option<Millis>,
    lanes: &mut [SweepSummary],
) {
    let step = lanes.len().max(1);
    futures_util::future::join_all(lanes.iter_mut().zip(0..).map(|(summary, first)| {
        sweep_lane(
            store,
            now,
            deadline,
            (first..PENDING_SHARDS).step_by(step),
            summary,
        )
    }))
    .await;
}

async fn sweep_lane(
    store: &Store,
    now: Millis,
    deadline: Option<Millis>,
    shards: impl Iterator<Item = u8>,
    summary: &mut SweepSummary,
) {
    'shards: for shard in shards {
        let mut cursor = None;
        loop {
            if deadline.is_some_and(|d| crate::world::now().0 + DEADLINE_MARGIN_MS >= d.0) {
                summary.stopped_early = true;
                break 'shards;
            }
            let (orders, next) = match store
                .expired_orders(shard, now, PAGE_SIZE, cursor.take())
                .await
            {
                Ok(page) => page,
                Err(e) => {
                    tracing::error!(shard, error = %chain(&e), "sweep: index query failed");
                    summary.failed_orders += 1;
                    continue 'shards;
                }
            };
            release_page(store, orders, now, summary).await;
            match next {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
    }
}

async fn release_page(
    store: &Store,
    orders: Vec<OrderId>,
    now: Millis,
    summary: &mut SweepSummary,
) {
    let mut orders = orders.into_iter();
    let mut fan = FanOut::new(ORDERS_IN_FLIGHT, "sweep");
    let release = |order: OrderId| {
        let store = store.clone();
        async move {
            let result = release_order(&store, &order, now).await;
            (order, result)
        }
    };
    while let Some(joined) = fan.next(|| orders.next().map(release)).await {
        match joined {
            Ok((
                _,
                Ok(Released {
                    seats,
                    places,
                    expired,
                    expired_at,
                }),
            )) => {
                summary.released_seats += seats;
                summary.released_places += places;
                summary.expired_orders += u64::from(expired);
                if let Some(at) = expired_at {
                    let lag = u64::try_from(now.0 - at.0).unwrap_or(0);
                    summary.lag_ms = Some(summary.lag_ms.map_or(lag, |l| l.max(lag)));
                }
            }
            Ok((order, Err(e))) => {
                summary.failed_orders += 1;
                tracing::error!(order_id = %order, error = %chain(&e), "sweep: order failed; next run retries it");
            }
            Err(lost) => {
                summary.failed_orders += 1;
                tracing::error!(error = %chain(&lost), "sweep: task failed");
            }
        }
    }
}

/// Releases the seats an expired order still holds, then retires it,
/// working from the order item itself (a strongly consistent read), never
/// from the index's copy, which may lag behind a claim. Seats first: if the
/// run dies in between, the order is still in the index and the next run
/// completes it; and the retirement requires the order unchanged since the
/// read, so a seat it took meanwhile is released by the next run.
pub async fn release_order(
    store: &Store,
    order_id: &OrderId,
    now: Millis,
) -> Result<Released, crate::Error> {
    let mut released = Released::default();
    let Some(stored) = store.get_order(order_id).await? else {
        return Ok(released);
    };
    let order = &stored.order;
    if order.status == OrderStatus::Pending && hold_is_live(order.expires_at, now) {
        // Not expired after all (the index entry is older than the order).
        return Ok(released);
    }
    released.expired_at = Some(order.expires_at);
    // A completed order's seats are sold, not held.
    if order.status != OrderStatus::Completed {
        let event = EventRef::of(&order.event_id);
        for seat in &order.seats {
            if store
                .release_expired_hold(&event, seat, &order.order_id, now)
                .await?
            {
                released.seats += 1;
            }
        }
        // An offer's listed places are its listing's: their hold lapses
        // on its own, and the next offer's take reclaims it (the tick
        // looks then), as a listed seat's does.
        let bucket_places = Order {
            places: order
                .places
                .iter()
                .filter(|p| !p.from_listing())
                .cloned()
                .collect(),
            ..order.clone()
        };
        released.places = store.release_places(&bucket_places, now).await;
    }
    let retired = store.retire_expired_order(&stored, now).await?;
    released.expired = retired && order.status == OrderStatus::Pending;
    Ok(released)
}

/// What the sweep did for one order.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Released {
    pub seats: u64,
    pub places: u64,
    /// Whether this call moved the order from PENDING to EXPIRED.
    pub expired: bool,
    /// The order's expiry, when the sweep found it past it.
    pub expired_at: Option<Millis>,
}
