//! The on-sale's buyers: what each wants (drawn from a fixed seed), the
//! requests each sends through the handlers, and their answers counted and
//! recorded for the history checker.

use super::demand::{DemandModel, Zipf, GA_SECTION};
use super::onsale_history::{BuyerHistory, OnSaleHistory};
use super::onsale_run::OnSale;
use crate::capacity::as_caller;
use crate::kit::{reply, Rng};
use crowdcheck::history::{micros_of, wall_us, Window};
use lambda_http::Body;
use local::router::{dispatch, request};
use shared::App;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Semaphore;

/// What one buyer of the model wants.
pub(super) enum Wants {
    Seats(Vec<String>),
    Places(u32),
}

/// One buyer's requests: (function, status, handler ms), and its answers
/// as the history checker reads them.
async fn buyer(
    app: &App,
    event: &str,
    wants: Wants,
    confirm: bool,
    payment: String,
    hold_seconds: u32,
) -> (Vec<(&'static str, u16, f64)>, BuyerHistory) {
    let started = Instant::now();
    let (status, order) = as_caller(
        "create-order",
        reply(app, "POST", &format!("/events/{event}/orders"), None, "{}"),
    )
    .await;
    let log = vec![("create-order", status, ms_since(started))];
    let expires = order["expiresAt"].as_str().and_then(micros_of);
    let (Some(id), Some(token), Some(expires)) = (
        order["orderId"].as_str(),
        order["holdToken"].as_str(),
        expires,
    ) else {
        return (log, BuyerHistory::default());
    };
    // The invariant check afterwards reads every order: a buyer of places
    // only is named by no seat, and its bucket sales are checked against it.
    local::invariants::remember_order(app, id);
    let mut buyer = Buyer {
        app,
        id,
        token,
        expires,
        log,
        history: BuyerHistory::default(),
    };
    let paying = confirm.then_some(payment.as_str());
    match wants {
        Wants::Places(q) => buyer.places(q, paying, hold_seconds).await,
        Wants::Seats(seats) => buyer.seats(seats, paying, hold_seconds).await,
    }
    (buyer.log, buyer.history)
}

fn ms_since(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

/// A buyer with its order: what it sent and what it was answered.
struct Buyer<'a> {
    app: &'a App,
    id: &'a str,
    token: &'a str,
    /// Its order's `expiresAt` as created.
    expires: crowdcheck::history::Micros,
    log: Vec<(&'static str, u16, f64)>,
    history: BuyerHistory,
}

impl Buyer<'_> {
    /// hold-ga for `q` places, then (with a payment) confirm what it got.
    async fn places(&mut self, q: u32, payment: Option<&str>, hold_seconds: u32) {
        let (started, start) = (Instant::now(), wall_us());
        let body = serde_json::json!({"quantity": q}).to_string();
        let path = format!("/orders/{}/ga/{GA_SECTION}", self.id);
        let request = reply(self.app, "PUT", &path, Some(self.token), &body);
        let (status, answer) = as_caller("hold-ga", request).await;
        self.log.push(("hold-ga", status, ms_since(started)));
        let window = Window::new(start, wall_us());
        let answer_read = (status, &answer);
        self.history
            .places(window, self.id, u64::from(q), answer_read, hold_seconds);
        if let (Some(payment), 200) = (payment, status) {
            let ga = serde_json::json!([{"sectionId": GA_SECTION, "quantity": q}]);
            self.confirm(payment, &[], ga, u64::from(q)).await;
        }
    }

    /// get-seat for each of `seats`, then (with a payment) confirm those won.
    async fn seats(&mut self, seats: Vec<String>, payment: Option<&str>, hold_seconds: u32) {
        let mut won = Vec::new();
        for seat in seats {
            let (started, start) = (Instant::now(), wall_us());
            let path = format!("/orders/{}/seats/{seat}", self.id);
            let request = reply(self.app, "POST", &path, Some(self.token), "");
            let (status, answer) = as_caller("get-seat", request).await;
            self.log.push(("get-seat", status, ms_since(started)));
            let window = Window::new(start, wall_us());
            let answer = (status, &answer);
            self.history
                .claim_for(&seat, window, self.id, answer, (self.expires, hold_seconds));
            if status == 200 && !won.contains(&seat) {
                won.push(seat);
            }
        }
        if let (Some(payment), false) = (payment, won.is_empty()) {
            self.confirm(payment, &won, serde_json::json!([]), 0).await;
        }
    }

    /// A confirm of `seats` and `places` (as `ga`), paid by `payment`.
    async fn confirm(
        &mut self,
        payment: &str,
        seats: &[String],
        ga: serde_json::Value,
        places: u64,
    ) {
        let body =
            serde_json::json!({"orderId": self.id, "paymentId": payment, "seats": seats, "ga": ga});
        let (started, start) = (Instant::now(), wall_us());
        let status = send_confirm(self.app, self.id, body).await;
        self.log.push(("confirm", status, ms_since(started)));
        let window = Window::new(start, wall_us());
        self.history
            .confirmed(window, self.id, seats, places, status);
    }
}

/// A confirm signed as the payment backend signs it; its status.
pub(super) async fn send_confirm(app: &App, order: &str, body: serde_json::Value) -> u16 {
    let body = body.to_string();
    let Some(secrets) = app.config.confirm_secrets.as_ref() else {
        return 0;
    };
    let headers = local::apps::webhook_headers(secrets, &body);
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let confirm = request(
        "POST",
        &format!("/orders/{order}/confirm"),
        &headers,
        Body::Text(body),
    );
    as_caller("confirm", dispatch(app, confirm))
        .await
        .status()
        .as_u16()
}

/// The model's buyers, drawn from a fixed seed: what each wants, and
/// whether it confirms.
pub(super) fn draw_buyers(model: DemandModel) -> Vec<(Wants, bool)> {
    let (sections, rows) = (Zipf::new(model.sections), Zipf::new(model.rows));
    let mut rng = Rng(0x5EA7_C1A1);
    (0..model.buyers)
        .map(|_| {
            let k = rng.below(4) + 1;
            let wants = if model.ga_capacity > 0 && rng.below(6) == 0 {
                Wants::Places(k as u32)
            } else {
                Wants::Seats(
                    (0..k)
                        .map(|_| {
                            let (s, r) = (sections.sample(&mut rng), rows.sample(&mut rng));
                            format!("S{s}-{r}-{}", rng.below(u64::from(model.seats_per_row)) + 1)
                        })
                        .collect(),
                )
            };
            (wants, rng.below(10) < 7)
        })
        .collect()
}

/// The buyers' durations by function, and their answers as the history
/// checker reads them.
pub(super) type BuyersRun = (BTreeMap<&'static str, Vec<f64>>, OnSaleHistory);

/// The buyers, the model's `in_flight` at a time, their answers counted
/// into `out`; each function's handler times (ms) and the history.
pub(super) async fn run_buyers(
    app: &App,
    event: &str,
    buyers: Vec<(Wants, bool)>,
    model: DemandModel,
    out: &mut OnSale,
) -> Result<BuyersRun, String> {
    let started = Instant::now();
    let sem = Arc::new(Semaphore::new(model.in_flight));
    let mut tasks = tokio::task::JoinSet::new();
    for (i, (seats, confirm)) in buyers.into_iter().enumerate() {
        let (app, event, sem) = (app.clone(), event.to_owned(), sem.clone());
        tasks.spawn(async move {
            let _permit = sem.acquire_owned().await;
            let payment = format!("pi_onsale_{i}");
            buyer(&app, &event, seats, confirm, payment, model.hold_seconds).await
        });
    }
    let mut durations: BTreeMap<&'static str, Vec<f64>> = BTreeMap::new();
    let mut history = OnSaleHistory::default();
    while let Some(done) = tasks.join_next().await {
        let (log, answers) = done.map_err(|e| e.to_string())?;
        history.add(answers);
        for (function, status, ms) in log {
            durations.entry(function).or_default().push(ms);
            match (function, status) {
                ("create-order", 201) => out.orders += 1,
                ("get-seat" | "hold-ga", 200) => {
                    out.attempts += 1;
                    out.won += 1;
                }
                ("get-seat" | "hold-ga", 409) => {
                    out.attempts += 1;
                    out.refused += 1;
                }
                ("confirm", 200) => out.confirmed += 1,
                (_, 503) => out.unavailable += 1,
                (f, s) => return Err(format!("{f} answered {s} in the on-sale")),
            }
        }
    }
    out.wall = started.elapsed();
    Ok((durations, history))
}
