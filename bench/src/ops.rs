//! Round trips per operation, sweep scaling, and the JIT warm-up.

use crate::kit::{reply, unique};
use crate::{create_event, create_orders, Bound, Goal, HOLD_SECONDS, SWEEP_HOLD_SECONDS};
use lambda_http::Body;
use local::metrics::RequestCounter;
use local::router::dispatch;
use local::router::request;
use shared::App;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;
use tokio::sync::Semaphore;

/// One operation's row: its name, the DynamoDB requests it made (by
/// operation), and its limit with what makes it up.
pub type TripRow = (String, BTreeMap<String, u64>, (u64, String));

/// An operation's row from the requests the counter took; `limit` is the
/// design's count, `why` what the requests are.
fn trip_row(name: &str, limit: u64, why: &str, counts: BTreeMap<String, u64>) -> TripRow {
    (name.to_owned(), counts, (limit, why.to_owned()))
}

/// Each row's count held to its limit.
pub fn trip_goals(rows: &[TripRow]) -> Vec<Goal> {
    rows.iter()
        .map(|(name, counts, (limit, _))| {
            Goal::new(
                format!("DynamoDB round trips: {name}"),
                counts.values().sum::<u64>() as f64,
                Bound::AtMost(*limit as f64),
                "the design's requests per operation (`ops::round_trips`)",
            )
        })
        .collect()
}

/// 5. Round trips per operation.
pub(super) async fn round_trips(
    app: &App,
    counter: &RequestCounter,
) -> Result<Vec<TripRow>, String> {
    let event = unique("trips");
    create_event(app, &event, 20, HOLD_SECONDS).await?;
    counter.take();
    let mut rows = order_round_trips(app, &event, counter).await?;
    for seats in [1u32, 10] {
        let counts = confirm_round_trips(app, &event, seats, counter).await?;
        rows.push(trip_row(
            &format!(
                "confirm ({seats} seat{})",
                if seats == 1 { "" } else { "s" }
            ),
            1,
            "one transaction, no read",
            counts,
        ));
    }
    Ok(rows)
}

/// `answer` if it has the status `operation` answers when it works: a
/// round trip counted on any other answer (a 503, a 400) would count
/// what the operation does not do.
fn answered(
    operation: &str,
    want: u16,
    (status, body): (u16, serde_json::Value),
) -> Result<serde_json::Value, String> {
    match status == want {
        true => Ok(body),
        false => Err(format!(
            "round trips of {operation}: answered {status}, not {want}: {body}"
        )),
    }
}

/// The order's operations, one request each, counted, each answered as
/// it answers when it works: create-order (first of the process, then
/// cached), get-seat, drop-seat, get-order and list-seats.
async fn order_round_trips(
    app: &App,
    event: &str,
    counter: &RequestCounter,
) -> Result<Vec<TripRow>, String> {
    let mut rows = Vec::new();
    let orders = format!("/events/{event}/orders");
    let order = answered(
        "create-order",
        201,
        reply(app, "POST", &orders, None, "{}").await,
    )?;
    rows.push(trip_row(
        "create-order (first of the process)",
        4,
        "the event's head and its waitlist's and queue's states, read once and kept by the process, and the order's write",
        counter.take(),
    ));
    answered(
        "create-order",
        201,
        reply(app, "POST", &orders, None, "{}").await,
    )?;
    rows.push(trip_row(
        "create-order (event cached)",
        1,
        "the order's write",
        counter.take(),
    ));
    let (id, token) = (
        order["orderId"].as_str().unwrap_or_default().to_owned(),
        order["holdToken"].as_str().unwrap_or_default().to_owned(),
    );
    let seat = format!("/orders/{id}/seats/A-1-1");
    let held = reply(app, "POST", &seat, Some(&token), "").await;
    answered("get-seat", 200, held)?;
    rows.push(trip_row(
        "get-seat (first of the process)",
        3,
        "the seat's read, the waitlist's state (read once and kept by the process), then one transaction",
        counter.take(),
    ));
    let dropped = reply(app, "DELETE", &seat, Some(&token), "").await;
    answered("drop-seat", 200, dropped)?;
    rows.push(trip_row("drop-seat", 1, "one transaction", counter.take()));
    let read = reply(app, "GET", &format!("/orders/{id}"), Some(&token), "").await;
    answered("get-order", 200, read)?;
    rows.push(trip_row("get-order", 1, "the order's read", counter.take()));
    let listed = reply(app, "GET", &format!("/events/{event}/seats"), None, "").await;
    answered("list-seats", 200, listed)?;
    let blocks = 20_u64.div_ceil(shared::store::SEAT_BLOCK_SIZE as u64);
    rows.push(trip_row(
        "list-seats (20 seats)",
        blocks + 2,
        &format!(
            "a query per seat block of {}, and the event's item and its plan's copy, read once and kept by the process (create-order keeps only the item's head)",
            shared::store::SEAT_BLOCK_SIZE
        ),
        counter.take(),
    ));
    Ok(rows)
}

/// A new order holding `seats` seats, then its confirm (a signed webhook
/// naming them): the confirm's requests, counted.
async fn confirm_round_trips(
    app: &App,
    event: &str,
    seats: u32,
    counter: &RequestCounter,
) -> Result<BTreeMap<String, u64>, String> {
    let orders = format!("/events/{event}/orders");
    let o = answered(
        "create-order",
        201,
        reply(app, "POST", &orders, None, "{}").await,
    )?;
    let (oid, tok) = (
        o["orderId"].as_str().unwrap_or_default().to_owned(),
        o["holdToken"].as_str().unwrap_or_default().to_owned(),
    );
    let first = if seats == 1 { 2 } else { 3 };
    for n in first..first + seats {
        let seat = format!("/orders/{oid}/seats/A-1-{n}");
        answered(
            "get-seat",
            200,
            reply(app, "POST", &seat, Some(&tok), "").await,
        )?;
    }
    counter.take();
    let paid: Vec<String> = (first..first + seats).map(|n| format!("A-1-{n}")).collect();
    let body = serde_json::json!({"orderId": oid, "paymentId": format!("pi_bench_{seats}"), "seats": paid}).to_string();
    let secrets = app.config.confirm_secrets.as_ref().ok_or("no secret")?;
    let headers = local::apps::webhook_headers(secrets, &body);
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let resp = dispatch(
        app,
        request(
            "POST",
            &format!("/orders/{oid}/confirm"),
            &headers,
            Body::Text(body),
        ),
    )
    .await;
    if resp.status() != 200 {
        return Err(format!("confirm in round-trip count: {}", resp.status()));
    }
    Ok(counter.take())
}

/// The share of the sweep scenario's other items that are live pending
/// orders: in the index's key space (its shards), outside the expired
/// range the sweep reads, so a sweep that read the index whole would show.
pub const SWEEP_LIVE_ORDER_SHARE: u32 = 10;

/// 6. Sweep time with `expired` expired orders among `others` other items.
pub(super) async fn sweep_scaling(
    app: &App,
    expired: usize,
    others: u32,
    counter: &RequestCounter,
) -> Result<(Duration, u64, u64), String> {
    // The other items: live pending orders (one in
    // SWEEP_LIVE_ORDER_SHARE), and seats of big events (20,000 per event
    // at most).
    let live = others / SWEEP_LIVE_ORDER_SHARE;
    let mut left = others - live;
    while left > 0 {
        let n = left.min(shared::domain::MAX_EVENT_SEATS);
        create_event(app, &unique("filler"), n, HOLD_SECONDS).await?;
        left -= n;
    }
    // Last, so the setup before cannot outlast their holds.
    let live_event = unique("filler");
    create_event(app, &live_event, 1, HOLD_SECONDS).await?;
    create_orders(app, &live_event, live as usize).await?;
    // Each order claims its seat right after it is created (its 3 s hold
    // covers that, however long 10,000 of them take to set up).
    let event = unique("sweep");
    create_event(app, &event, expired as u32, SWEEP_HOLD_SECONDS).await?;
    let sem = Arc::new(Semaphore::new(32));
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..expired {
        let (app, event, sem) = (app.clone(), event.clone(), sem.clone());
        tasks.spawn(async move {
            let _permit = sem.acquire_owned().await;
            let (status, order) =
                reply(&app, "POST", &format!("/events/{event}/orders"), None, "{}").await;
            if status != 201 {
                return (status, order);
            }
            let (id, token) = (
                order["orderId"].as_str().unwrap_or_default(),
                order["holdToken"].as_str().unwrap_or_default(),
            );
            reply(
                &app,
                "POST",
                &format!("/orders/{id}/seats/A-1-{}", i + 1),
                Some(token),
                "",
            )
            .await
        });
    }
    while let Some(done) = tasks.join_next().await {
        let (status, body) = done.map_err(|e| e.to_string())?;
        if status != 200 {
            return Err(format!("sweep setup claim: {status} {body}"));
        }
    }
    // Let the holds expire: the only sleep, and it is the point.
    tokio::time::sleep(Duration::from_millis(
        u64::from(SWEEP_HOLD_SECONDS) * 1000 + 200,
    ))
    .await;
    counter.take();
    let started = Instant::now();
    let summary = shared::sweep::release_expired(&app.store, shared::world::now(), None).await;
    let took = started.elapsed();
    let queries = counter.take().get("Query").copied().unwrap_or(0);
    if summary.expired_orders != expired as u64 || summary.released_seats != expired as u64 {
        return Err(format!("sweep released the wrong amount: {summary:?}"));
    }
    Ok((took, summary.expired_orders, queries))
}

/// Runs every scenario on fresh tables of one DynamoDB Local.
/// Throwaway traffic on a scratch table before anything is measured:
/// DynamoDB Local is a JVM, and its first few hundred requests (class
/// loading, JIT) are several times slower than the rest, which would land
/// on the first scenario, the handler stampede. Every operation the
/// scenarios use: create-event, create-order, claims (TransactWriteItems),
/// drops, get-order, list-seats. Returns the number of requests sent.
pub(super) async fn warm_up(app: &App, orders: usize) -> Result<usize, String> {
    const CLAIMS_PER_ORDER: usize = 3;
    let event = unique("warm-up");
    let seats = (orders * CLAIMS_PER_ORDER) as u32;
    create_event(app, &event, seats, HOLD_SECONDS).await?;
    let created = create_orders(app, &event, orders).await?;
    let sem = Arc::new(Semaphore::new(16));
    let mut tasks = tokio::task::JoinSet::new();
    for (i, order) in created.into_iter().enumerate() {
        let (app, event, sem) = (app.clone(), event.clone(), sem.clone());
        tasks.spawn(async move {
            let _permit = sem.acquire_owned().await;
            let auth = Some(order.token.as_str());
            for k in 0..CLAIMS_PER_ORDER {
                let seat = format!("A-1-{}", i * CLAIMS_PER_ORDER + k + 1);
                reply(
                    &app,
                    "POST",
                    &format!("/orders/{}/seats/{seat}", order.id),
                    auth,
                    "",
                )
                .await;
            }
            let seat = format!("A-1-{}", i * CLAIMS_PER_ORDER + 1);
            reply(
                &app,
                "DELETE",
                &format!("/orders/{}/seats/{seat}", order.id),
                auth,
                "",
            )
            .await;
            reply(&app, "GET", &format!("/orders/{}", order.id), auth, "").await;
            reply(
                &app,
                "GET",
                &format!("/events/{event}/seats?section=A"),
                None,
                "",
            )
            .await;
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.map_err(|e| e.to_string())?;
    }
    // Statuses don't matter here; only the traffic does.
    Ok(1 + orders * (1 + CLAIMS_PER_ORDER + 3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_trip_is_counted_only_on_the_answer_the_operation_gives_when_it_works() {
        let body = serde_json::json!({"orderId": "o"});
        assert_eq!(answered("get-seat", 200, (200, body.clone())), Ok(body));
        let unavailable = serde_json::json!({"error": "store-unavailable"});
        let refused = answered("get-seat", 200, (503, unavailable));
        assert!(refused.is_err_and(|e| e.contains("answered 503, not 200")));
    }
}
