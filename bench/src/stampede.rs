//! The stampede: many orders at one seat, through the handler and through the dev server's HTTP path.

use crate::kit::{reply, unique, Row, Timing};
use crate::{create_event, create_orders, HOLD_SECONDS};
use crowdcheck::history::{
    check_order_refusals, check_seat, seat_claim, seconds_after, wall_us, Micros, SeatOp, Window,
};
use serde_json::Value;
use shared::App;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

/// One claim's answer and the instants its request was in flight.
struct Answer {
    window: Window,
    order: String,
    /// The order's `expiresAt` as created.
    expires: Micros,
    status: u16,
    body: Value,
}

/// The stampede's answers judged by the history checker as the one seat's
/// history (every refusal with the crowd gate's slack: one instance
/// answered them all): the row's text, and whether every answer was read
/// and explained.
fn judged(answers: &[Answer]) -> (String, bool) {
    let ops: Vec<SeatOp> = answers
        .iter()
        .filter_map(|a| {
            let answer = (a.status, &a.body);
            let expires_by = seconds_after(a.window.end, HOLD_SECONDS);
            let expiry = Window::new(a.expires, expires_by);
            seat_claim(a.window, &a.order, answer, true, expiry)
        })
        .collect();
    let unread = answers.len() - ops.len();
    let verdict = check_seat("A-1-1", &ops).and(check_order_refusals(&ops));
    let first = verdict.violations.first().map_or("", String::as_str);
    let text = format!(
        "history: {} requests judged, {unread} unread, {} violations {first}",
        verdict.operations,
        verdict.violations.len()
    );
    (text, unread == 0 && verdict.violations.is_empty())
}

/// 1. Stampede through the handler: all orders claim seat A-1-1 at once.
pub(super) async fn stampede_handler(app: &App, n: usize) -> Result<Row, String> {
    let event = unique("stampede");
    create_event(app, &event, 1, HOLD_SECONDS).await?;
    let orders = create_orders(app, &event, n).await?;
    let barrier = Arc::new(tokio::sync::Barrier::new(n));
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for o in orders {
        let (app, barrier) = (app.clone(), barrier.clone());
        tasks.spawn(async move {
            barrier.wait().await;
            let (t, start) = (Instant::now(), wall_us());
            let (status, body) = reply(
                &app,
                "POST",
                &format!("/orders/{}/seats/A-1-1", o.id),
                Some(&o.token),
                "",
            )
            .await;
            let window = Window::new(start, wall_us());
            let ms = t.elapsed().as_secs_f64() * 1000.0;
            let code = body["error"].as_str().unwrap_or("").to_owned();
            let answer = Answer {
                window,
                order: o.id,
                expires: o.expires,
                status,
                body,
            };
            (ms, status, code, answer)
        });
    }
    let mut timing = Timing::default();
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    let mut answers = Vec::new();
    while let Some(done) = tasks.join_next().await {
        let (ms, status, code, answer) = done.map_err(|e| e.to_string())?;
        answers.push(answer);
        timing.latencies_ms.push(ms);
        *outcomes
            .entry(if status == 200 {
                "won".into()
            } else {
                format!("{status} {code}")
            })
            .or_default() += 1;
    }
    timing.wall = started.elapsed();
    let winners = outcomes.get("won").copied().unwrap_or(0);
    let held = outcomes.get("409 seat-held").copied().unwrap_or(0);
    let (history, explained) = judged(&answers);
    Ok(Row {
        scenario: format!("stampede: {n} orders, 1 seat (handler)"),
        ok: winners == 1 && held == n - 1 && explained,
        correctness: format!("{winners} winner, {held} seat-held; {history}"),
        timing,
        goals: Vec::new(),
    })
}

/// 1b. The same stampede through the dev server's HTTP path.
pub(super) async fn stampede_http(app: &App, n: usize) -> Result<Row, String> {
    use http_body_util::{BodyExt, Empty};
    use hyper_util::client::legacy::Client as HttpClient;
    use hyper_util::rt::TokioExecutor;

    let event = unique("stampede-http");
    create_event(app, &event, 1, HOLD_SECONDS).await?;
    let orders = create_orders(app, &event, n).await?;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|e| e.to_string())?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(local::server::run(listener, app.clone(), async {
        let _ = stop_rx.await;
    }));
    let client: HttpClient<_, Empty<bytes::Bytes>> =
        HttpClient::builder(TokioExecutor::new()).build_http();
    let barrier = Arc::new(tokio::sync::Barrier::new(n));
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for o in orders {
        let (client, barrier) = (client.clone(), barrier.clone());
        tasks.spawn(async move {
            let req = hyper::Request::post(format!(
                "http://127.0.0.1:{port}/orders/{}/seats/A-1-1",
                o.id
            ))
            .header("authorization", format!("Bearer {}", o.token))
            .body(Empty::new())
            .map_err(|e| e.to_string())?;
            barrier.wait().await;
            let (t, start) = (Instant::now(), wall_us());
            let resp = client.request(req).await.map_err(|e| e.to_string())?;
            let status = resp.status().as_u16();
            let body = resp
                .into_body()
                .collect()
                .await
                .map_err(|e| e.to_string())?
                .to_bytes();
            let window = Window::new(start, wall_us());
            let body: Value = serde_json::from_slice(&body).unwrap_or_default();
            let code = body["error"].as_str().unwrap_or("").to_owned();
            let ms = t.elapsed().as_secs_f64() * 1000.0;
            let answer = Answer {
                window,
                order: o.id,
                expires: o.expires,
                status,
                body,
            };
            Ok::<_, String>((ms, status, code, answer))
        });
    }
    let mut timing = Timing::default();
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    let mut answers = Vec::new();
    while let Some(done) = tasks.join_next().await {
        let (ms, status, code, answer) = done.map_err(|e| e.to_string())??;
        answers.push(answer);
        timing.latencies_ms.push(ms);
        *outcomes
            .entry(if status == 200 {
                "won".into()
            } else {
                format!("{status} {code}")
            })
            .or_default() += 1;
    }
    timing.wall = started.elapsed();
    let _ = stop_tx.send(());
    let _ = server.await;
    let winners = outcomes.get("won").copied().unwrap_or(0);
    let held = outcomes.get("409 seat-held").copied().unwrap_or(0);
    let (history, explained) = judged(&answers);
    Ok(Row {
        scenario: format!("stampede: {n} orders, 1 seat (HTTP, dev server)"),
        ok: winners == 1 && held == n - 1 && explained,
        correctness: format!("{winners} winner, {held} seat-held; {outcomes:?}; {history}"),
        timing,
        goals: Vec::new(),
    })
}
