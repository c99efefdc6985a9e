//! What several scenarios set up: events, orders, and the routes served
//! over HTTP for the scripts that drive them from outside (cold start,
//! the stadium page).

use crate::kit::{reply, reply_with, BenchOrder};
use crowdcheck::history::micros_of;
use shared::domain::{EventId, OrderId, PaymentId, SeatId};
use shared::App;
use std::sync::Arc;
use tokio::sync::Semaphore;

/// Seeds `seats` of `event` as sold to `order` (paid by `payment`) through
/// the store's seeding call, which uses a late payment's own expressions,
/// [`LOCAL_IN_FLIGHT`] at a time: the seats it sold (a seat not free is left as it is).
pub(super) async fn seed_sold_seats(
    app: &App,
    event: &EventId,
    seats: Vec<SeatId>,
    order: &OrderId,
    payment: &PaymentId,
) -> Result<Vec<SeatId>, String> {
    let now = shared::world::now();
    let in_flight = Arc::new(Semaphore::new(LOCAL_IN_FLIGHT));
    let mut tasks = tokio::task::JoinSet::new();
    for seat in seats {
        let (store, event, order, payment, in_flight) = (
            app.store.clone(),
            event.clone(),
            order.clone(),
            payment.clone(),
            in_flight.clone(),
        );
        tasks.spawn(async move {
            let _permit = in_flight.acquire().await;
            let sold = store
                .seed_sold_seat(&event, &seat, &order, &payment, now)
                .await;
            sold.map(|sold| sold.then_some(seat))
        });
    }
    let mut seeded = Vec::new();
    while let Some(done) = tasks.join_next().await {
        let sold = done
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?;
        seeded.extend(sold);
    }
    Ok(seeded)
}

/// Catches `follower`'s stream up into the seat map, as project-seat-map
/// would: the records read.
pub(super) async fn project_stream(
    app: &App,
    follower: &local::streams::StreamFollower,
) -> Result<usize, String> {
    follower
        .catch_up(|batch| {
            let app = app.clone();
            async move {
                shared::handlers::project_records(&app, &batch).await;
            }
        })
        .await
}

/// A stadium's section id: `S1`, `S2`, ….
pub(super) fn section_id(s: u32) -> String {
    format!("S{s}")
}

/// A plan named `name` of `sections` sections `S1…`, each of `rows`
/// numbered rows of `seats_per_row`, holding for `hold_seconds`.
pub(super) fn grid_plan(
    name: &str,
    hold_seconds: u32,
    sections: u32,
    rows: u32,
    seats_per_row: u32,
) -> serde_json::Value {
    let sections: Vec<_> = (1..=sections)
        .map(|s| {
            let rows: Vec<_> = (1..=rows)
                .map(|r| serde_json::json!({"row": r.to_string(), "count": seats_per_row}))
                .collect();
            serde_json::json!({"sectionId": section_id(s), "rows": rows})
        })
        .collect();
    serde_json::json!({"name": name, "holdSeconds": hold_seconds, "sections": sections})
}

/// Requests the bench keeps in flight at DynamoDB Local where a scenario
/// does not measure concurrency itself: as many as it serves at once on
/// these cores without dropping connections.
pub(super) const LOCAL_IN_FLIGHT: usize = 64;

/// How often a scenario's setup sends a request again after a 503.
const SETUP_RETRIES: u32 = 5;
/// An event of one row of `seats` in section A.
pub(super) async fn create_event(
    app: &App,
    id: &str,
    seats: u32,
    hold_seconds: u32,
) -> Result<(), String> {
    let body = serde_json::json!({
        "name": "Benchmark",
        "holdSeconds": hold_seconds,
        "sections": [{"sectionId": "A", "rows": [{"row": "1", "count": seats}]}],
    });
    create_event_from(app, id, &body).await
}

/// An event of the plan `body`, finished as the sweep would if it runs
/// out of create-event's budget.
pub(super) async fn create_event_from(
    app: &App,
    id: &str,
    body: &serde_json::Value,
) -> Result<(), String> {
    let (uri, body) = (format!("/events/{id}"), body.to_string());
    let mut answer = reply(app, "PUT", &uri, None, &body).await;
    // A 503 asks for a retry (DynamoDB Local, between scenarios, can stall
    // past the SDK's timeouts); create-event is retry-safe. Setup only:
    // no scenario's figures include it.
    for _ in 0..SETUP_RETRIES {
        if answer.0 != 503 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        answer = reply(app, "PUT", &uri, None, &body).await;
    }
    match answer {
        (201, _) => Ok(()),
        // Out of create-event's budget: finish it as the sweep would.
        (202, _) => local::apps::finish_creation(app, id).await,
        (s, b) => Err(format!("create-event {id}: {s} {b}")),
    }
}

pub(super) async fn create_orders(
    app: &App,
    event: &str,
    n: usize,
) -> Result<Vec<BenchOrder>, String> {
    open_orders(app, event, n, false).await
}

/// `n` orders of `event`, each opened by a buyer of its own
/// (`bench:{i}`, its development buyer token): an event with a
/// `buyerLimit` needs them.
pub(super) async fn create_buyer_orders(
    app: &App,
    event: &str,
    n: usize,
) -> Result<Vec<BenchOrder>, String> {
    open_orders(app, event, n, true).await
}

async fn open_orders(
    app: &App,
    event: &str,
    n: usize,
    as_buyers: bool,
) -> Result<Vec<BenchOrder>, String> {
    let sem = Arc::new(Semaphore::new(32));
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..n {
        let (app, event, sem) = (app.clone(), event.to_owned(), sem.clone());
        let token = match as_buyers {
            true => Some(buyer_token(&event, i)?),
            false => None,
        };
        tasks.spawn(async move {
            let _permit = sem.acquire_owned().await;
            let headers: Vec<(&str, &str)> = token
                .as_deref()
                .map(|t| vec![("x-buyer-token", t)])
                .unwrap_or_default();
            let uri = format!("/events/{event}/orders");
            reply_with(&app, "POST", &uri, &headers, "{}").await
        });
    }
    let mut orders = Vec::with_capacity(n);
    while let Some(done) = tasks.join_next().await {
        let (status, body) = done.map_err(|e| e.to_string())?;
        if status != 201 {
            return Err(format!("create-order: {status} {body}"));
        }
        let expires = body["expiresAt"].as_str().and_then(micros_of);
        orders.push(BenchOrder {
            id: body["orderId"].as_str().unwrap_or_default().to_owned(),
            token: body["holdToken"].as_str().unwrap_or_default().to_owned(),
            expires: expires.ok_or_else(|| format!("create-order without expiresAt: {body}"))?,
        });
    }
    Ok(orders)
}

/// A development buyer token for buyer `bench:{n}` of `event`.
fn buyer_token(event: &str, n: usize) -> Result<String, String> {
    let now_s = shared::world::now().0 / 1_000;
    local::apps::dev_buyer_token(
        &local::apps::dev_buyer_signing_keys(),
        event,
        &format!("bench:{n}"),
        now_s,
        3_600,
    )
    .map_err(|e| e.to_string())
}

/// Serves every route and the dev server's page over HTTP on a free port
/// while the caller drives it from outside: the port, and what stops the server (send, then await
/// the handle).
pub(super) async fn serve(
    app: App,
) -> Result<
    (
        u16,
        tokio::sync::oneshot::Sender<()>,
        tokio::task::JoinHandle<()>,
    ),
    String,
> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|e| e.to_string())?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    // With the dev routes: the page at `/` (the stadium page drives it).
    let feed = Some(local::feed::DevFeed::new());
    let server = tokio::spawn(local::server::run_with_feed(listener, app, feed, async {
        let _ = stop_rx.await;
    }));
    Ok((port, stop_tx, server))
}
