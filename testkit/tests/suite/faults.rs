//! Faults: a store that hangs, refuses, dies mid-stampede, throttles or
//! reports transaction conflicts, and a sweep that runs out of time. Every
//! client here has production's timeouts and retry policy
//! (`local::faults::production_client`); DynamoDB is the real DynamoDB
//! Local, with DynamoDB's own error responses injected through an SDK
//! interceptor where DynamoDB Local cannot produce them.

use crate::common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use local::apps::app_on;
use local::dynamodb_local::{free_port, DynamoDbLocal, Jvm, Storage};
use local::faults::{
    production_client, production_client_over, refusing_endpoint, Fault, FaultInjector,
    SilentListener, SlowStore,
};
use local::invariants::check_invariants;
use serde_json::{json, Value};
use shared::auth::HoldToken;
use shared::domain::{EventId, OrderId, OrderStatus, SeatState};
use shared::sweep::DEADLINE_MARGIN_MS;
use shared::App;
use testkit::{assert_invariants, dynamodb_endpoint, fresh_app_with};

/// Production's timeout of a whole operation, retries included (8 s).
fn operation_timeout() -> Duration {
    shared::store::sdk_timeouts()
        .operation_timeout()
        .expect("production sets an operation timeout")
}

/// Production's timeout of one attempt (3 s).
fn attempt_timeout() -> Duration {
    shared::store::sdk_timeouts()
        .operation_attempt_timeout()
        .expect("production sets an attempt timeout")
}

/// Asserts the contract's answer to a store that is down or busy: 503
/// `store-unavailable` with a numeric `Retry-After`, and nothing about
/// the cause in the body.
fn assert_store_unavailable(what: &str, reply: &Reply) {
    assert_eq!(
        (reply.status, reply.code()),
        (503, "store-unavailable"),
        "{what}: {reply:?}"
    );
    let secs: u64 = reply
        .retry_after
        .as_deref()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{what}: 503 without a numeric Retry-After: {reply:?}"));
    assert!(secs >= 1, "{what}: Retry-After {secs}");
    let text = reply.body.to_string().to_lowercase();
    for internal in [
        "dynamodb",
        "timeout",
        "throttl",
        "throughput",
        "127.0.0.1",
        "dispatch",
        "transaction",
    ] {
        assert!(
            !text.contains(internal),
            "{what}: the body reveals internals ({internal}): {text}"
        );
    }
    assert_eq!(
        reply.body.as_object().map(|o| o.len()),
        Some(2),
        "{what}: only error and message: {text}"
    );
}

/// A token and order id shaped like real ones, for stores that never answer.
fn unknown_order() -> (OrderId, String) {
    let event = EventId::parse("ev-faults").unwrap();
    let token = HoldToken::generate(&event, shared::world::now().plus_seconds(300)).unwrap();
    let order = OrderId::from_random(&event, shared::world::random_u128().unwrap());
    let wire = local::apps::dev_hold_token_keys().encode(&order, &token);
    (order, format!("Bearer {wire}"))
}

/// A signed confirm paying for `seats`, with the whole reply.
async fn confirm_full(app: &App, order_id: &str, payment: &str, seats: &[String]) -> Reply {
    let body = confirm_body(order_id, payment, seats);
    let headers = signed(&body);
    call_full(
        app,
        "POST",
        &format!("/orders/{order_id}/confirm"),
        &as_refs(&headers),
        &body,
    )
    .await
}

// ----- 1. SDK timeouts -------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hung_store_answers_503_within_the_operation_timeout() {
    let listener = SilentListener::start().await.unwrap();
    let app = Arc::new(app_on(
        production_client(&listener.endpoint(), []),
        "seatclaim-hung",
    ));
    let (order_id, auth) = unknown_order();
    // A read (get-order), a transaction (get-seat) and confirm's read, at
    // once: each on its own connections, each bounded on its own.
    let routes = [
        (
            "get-order",
            "GET",
            format!("/orders/{order_id}"),
            vec![("authorization", auth.clone())],
            String::new(),
        ),
        (
            "get-seat",
            "POST",
            format!("/orders/{order_id}/seats/A-1-1"),
            vec![("authorization", auth.clone())],
            String::new(),
        ),
        (
            "confirm",
            "POST",
            format!("/orders/{order_id}/confirm"),
            vec![],
            confirm_body(order_id.as_str(), "pi_1", &["A-1-1".to_owned()]),
        ),
    ];
    let mut tasks = Vec::new();
    for (name, method, uri, mut headers, body) in routes {
        let app = app.clone();
        if name == "confirm" {
            headers.extend(signed(&body));
        }
        tasks.push(tokio::spawn(async move {
            let headers: Vec<(&str, &str)> =
                headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let started = Instant::now();
            let reply = call_full(&app, method, &uri, &headers, &body).await;
            (name, reply, started.elapsed())
        }));
    }
    for task in tasks {
        let (name, reply, elapsed) = task.await.unwrap();
        eprintln!(
            "hung store: {name} answered {} after {elapsed:.2?}",
            reply.status
        );
        assert_store_unavailable(name, &reply);
        // It really waited on the silent socket (at least one attempt
        // timed out), and the operation timeout bounded the whole, retries
        // and backoff included.
        assert!(
            elapsed >= attempt_timeout(),
            "{name} gave up before an attempt could time out: {elapsed:?}"
        );
        assert!(
            elapsed <= operation_timeout() + Duration::from_millis(1500),
            "{name} took {elapsed:?}"
        );
    }
    // Retries opened new connections: the attempt timeout fired, then the
    // SDK tried again (3 requests, at least 2 attempts each).
    eprintln!("hung store: {} connections accepted", listener.accepted());
    assert!(
        listener.accepted() >= 6,
        "connections accepted: {}",
        listener.accepted()
    );
}

#[tokio::test]
async fn a_refused_connection_answers_503_quickly() {
    let app = app_on(
        production_client(&refusing_endpoint().unwrap(), []),
        "seatclaim-refused",
    );
    let (order_id, auth) = unknown_order();
    let started = Instant::now();
    let reply = call_full(
        &app,
        "GET",
        &format!("/orders/{order_id}"),
        &[("authorization", &auth)],
        "",
    )
    .await;
    let elapsed = started.elapsed();
    eprintln!(
        "refused: get-order answered {} after {elapsed:.2?}",
        reply.status
    );
    assert_store_unavailable("get-order", &reply);
    // Three attempts and their backoff (at most 1 s + 2 s), no timeout.
    assert!(
        elapsed < attempt_timeout() + Duration::from_millis(500),
        "took {elapsed:?}"
    );
}

/// expire-holds against a hung store still answers before its Lambda
/// deadline: a store call in flight when the time is up is abandoned.
#[tokio::test]
async fn expire_holds_on_a_hung_store_returns_before_the_deadline() {
    let listener = SilentListener::start().await.unwrap();
    let app = app_on(
        production_client(&listener.endpoint(), []),
        "seatclaim-hung",
    );
    // Time for one page to start, not for its query to time out (8 s).
    let budget = Duration::from_secs(5);
    let started = Instant::now();
    let summary = shared::handlers::expire_holds(
        &local::iam::attributed(&app, "expire-holds"),
        invocation(shared::world::now().0 + budget.as_millis() as i64),
    )
    .await
    .unwrap();
    let elapsed = started.elapsed();
    eprintln!("hung store: expire-holds returned {summary:?} after {elapsed:.2?}");
    assert!(
        elapsed < budget,
        "the sweep outlived its deadline: {elapsed:?}"
    );
    assert!(summary.stopped_early, "{summary:?}");
    assert_eq!((summary.expired_orders, summary.released_seats), (0, 0));
    assert!(listener.accepted() >= 1, "the sweep did reach the store");
}

/// A scheduled-event invocation whose Lambda deadline is `deadline_ms`
/// (epoch milliseconds, as the runtime API gives it).
fn invocation(deadline_ms: i64) -> lambda_runtime::LambdaEvent<Value> {
    let mut context = lambda_runtime::Context::default();
    context.deadline = u64::try_from(deadline_ms).unwrap();
    let event = json!({"version": "0", "detail-type": "Scheduled Event", "source": "aws.events", "detail": {}});
    lambda_runtime::LambdaEvent::new(event, context)
}

// ----- 2. An outage in the middle of a stampede ------------------------------

const BEFORE: u8 = 0;
const OUTAGE: u8 = 1;
const RESTORED: u8 = 2;

/// One answer of the stampede, with the phase it was sent and answered in.
#[derive(Debug)]
struct Answer {
    route: &'static str,
    status: u16,
    code: String,
    retry_after: bool,
    sent: u8,
    answered: u8,
}

/// The stampede's shared state: the phase, the answers, and their count as
/// a watch channel, so phases change on progress, not on a timer.
struct Stampede {
    phase: AtomicU8,
    stop: AtomicBool,
    answers: Mutex<Vec<Answer>>,
    answered: tokio::sync::watch::Sender<usize>,
    /// Payments answered 200.
    paid: tokio::sync::watch::Sender<usize>,
    /// Claims answered 200.
    won: tokio::sync::watch::Sender<usize>,
    /// Payments answered 503: redelivered after the outage, as a payment
    /// backend redelivers an unacknowledged webhook.
    unacknowledged: Mutex<Vec<(String, String, Vec<String>)>>,
}

impl Stampede {
    async fn call(
        &self,
        app: &App,
        route: &'static str,
        method: &str,
        uri: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Reply {
        let sent = self.phase.load(Ordering::SeqCst);
        let reply = call_full(app, method, uri, headers, body).await;
        let answered = self.phase.load(Ordering::SeqCst);
        self.answers.lock().unwrap().push(Answer {
            route,
            status: reply.status,
            code: reply.code().to_owned(),
            retry_after: reply.retry_after.is_some(),
            sent,
            answered,
        });
        self.answered.send_modify(|n| *n += 1);
        reply
    }

    /// Waits until `more` further answers have come in.
    async fn answers_after(&self, more: usize) {
        more_of(&self.answered, more, "answers").await;
    }
}

/// Waits until `count` has grown by `more`; a minute without that is a
/// failure (a stalled stampede), not a hang.
async fn more_of(count: &tokio::sync::watch::Sender<usize>, more: usize, what: &str) {
    let mut rx = count.subscribe();
    let target = *rx.borrow() + more;
    tokio::time::timeout(Duration::from_secs(60), rx.wait_for(|n| *n >= target))
        .await
        .unwrap_or_else(|_| panic!("no {more} more {what} within a minute"))
        .unwrap();
}

/// The answers the contract allows each route of the stampede, besides
/// `503 store-unavailable`: a customer claiming two seats, then paying or
/// dropping them.
fn contract_answer(route: &str, status: u16, code: &str) -> bool {
    match route {
        "create-order" => status == 201,
        "get-seat" => {
            status == 200 || (status == 409 && ["seat-held", "seat-sold"].contains(&code))
        }
        "drop-seat" => status == 200 || (status == 409 && code == "seat-not-held"),
        // A payment for an order holding seats (its own answers said so).
        "confirm" => status == 200,
        _ => false,
    }
}

/// A small deterministic generator per customer (no rand dependency).
fn next_random(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// One customer, until told to stop: an order, two random seats of
/// `seats`, then pay (one time in eight, if both claims were answered) or
/// drop every seat it may hold. After a 503 it waits the `Retry-After`
/// the reply asked for, as a well-behaved client does.
async fn customer(app: Arc<App>, stampede: Arc<Stampede>, ev: String, seats: u32, id: u64) {
    let mut rng = id.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut attempt = 0;
    while !stampede.stop.load(Ordering::SeqCst) {
        attempt += 1;
        let mut retry_after = None;
        let mut note = |reply: &Reply| {
            if reply.status == 503 {
                retry_after = reply
                    .retry_after
                    .as_deref()
                    .and_then(|v| v.parse::<u64>().ok());
            }
        };
        let created = stampede
            .call(
                &app,
                "create-order",
                "POST",
                &format!("/events/{ev}/orders"),
                &[],
                "{}",
            )
            .await;
        note(&created);
        if created.status == 201 {
            local::invariants::remember_order(&app, created.body["orderId"].as_str().unwrap());
            let o = TestOrder {
                id: created.body["orderId"].as_str().unwrap().to_owned(),
                token: created.body["holdToken"].as_str().unwrap().to_owned(),
                expires_at: created.body["expiresAt"].as_str().unwrap().to_owned(),
                created_at: created.body["createdAt"].as_str().unwrap().to_owned(),
            };
            let auth = o.auth();
            // Seats this order may hold: claims answered 200, and claims
            // answered 503, which may have landed with the reply lost.
            let mut mine = Vec::new();
            let mut unsure = false;
            for _ in 0..2 {
                let seat = format!("A-1-{}", next_random(&mut rng) % u64::from(seats) + 1);
                let uri = format!("/orders/{}/seats/{seat}", o.id);
                let reply = stampede
                    .call(
                        &app,
                        "get-seat",
                        "POST",
                        &uri,
                        &[("authorization", &auth)],
                        "",
                    )
                    .await;
                note(&reply);
                if reply.status == 200 {
                    stampede.won.send_modify(|n| *n += 1);
                }
                unsure |= reply.status == 503;
                if (reply.status == 200 || reply.status == 503) && !mine.contains(&seat) {
                    mine.push(seat);
                }
            }
            // Paying is rarer than giving up, so seats stay in play before
            // the outage and after it.
            if !mine.is_empty() && !unsure && next_random(&mut rng).is_multiple_of(8) {
                let payment = format!("pi_{id}_{attempt}");
                let body = confirm_body(&o.id, &payment, &mine);
                let headers = signed(&body);
                let uri = format!("/orders/{}/confirm", o.id);
                let reply = stampede
                    .call(&app, "confirm", "POST", &uri, &as_refs(&headers), &body)
                    .await;
                note(&reply);
                match reply.status {
                    200 => {
                        stampede.paid.send_modify(|n| *n += 1);
                    }
                    _ => stampede.unacknowledged.lock().unwrap().push((
                        o.id.clone(),
                        payment,
                        mine.clone(),
                    )),
                }
            } else {
                for seat in mine {
                    let uri = format!("/orders/{}/seats/{seat}", o.id);
                    // A drop answered 503 is retried once the store is
                    // back, so seats do not stay held by given-up orders.
                    loop {
                        let reply = stampede
                            .call(
                                &app,
                                "drop-seat",
                                "DELETE",
                                &uri,
                                &[("authorization", &auth)],
                                "",
                            )
                            .await;
                        if reply.status != 503 || stampede.stop.load(Ordering::SeqCst) {
                            break;
                        }
                        let secs = reply
                            .retry_after
                            .as_deref()
                            .and_then(|v| v.parse().ok())
                            .unwrap_or(1);
                        tokio::time::sleep(Duration::from_secs(secs)).await;
                    }
                }
            }
        }
        if let Some(secs) = retry_after {
            tokio::time::sleep(Duration::from_secs(secs)).await;
        }
    }
}

/// DynamoDB Local is killed while 100 customers fight over 24 seats, then
/// restarted on the same port and data: every answer is the contract's
/// (503 with Retry-After while it is down, never a 500), every payment
/// answered 503 is honoured on redelivery, the invariants hold in the
/// table, and the service works again.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_outage_mid_stampede_breaks_no_invariant() {
    const CUSTOMERS: u64 = 100;
    const SEATS: u32 = 24;
    let started = Instant::now();
    // In memory-backed files where there are (/dev/shm): the process dies,
    // not the machine, so the medium does not matter, and a disk's fsyncs
    // would slow DynamoDB Local down to timeouts under the stampede.
    let shm = std::path::Path::new("/dev/shm");
    let base = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let data = base.join(format!(
        "seatclaim-outage-{}",
        uuid::Uuid::new_v4().simple()
    ));
    let port = free_port().unwrap();
    let start = {
        let data = data.clone();
        move || {
            DynamoDbLocal::start_with(
                port,
                "the outage test's free port",
                Storage::Path(data),
                Jvm::ShortLived,
            )
        }
    };
    let mut dynamodb = tokio::task::spawn_blocking(start.clone())
        .await
        .unwrap()
        .unwrap();
    let up = started.elapsed();
    let app = Arc::new(fresh_app_with(production_client(&dynamodb.endpoint(), [])).await);
    // One seat more than the stampede uses, for the check after restart.
    let ev = event(&app, SEATS + 1, 300).await;
    let stampede = Arc::new(Stampede {
        phase: AtomicU8::new(BEFORE),
        stop: AtomicBool::new(false),
        answers: Mutex::new(Vec::new()),
        answered: tokio::sync::watch::channel(0).0,
        paid: tokio::sync::watch::channel(0).0,
        won: tokio::sync::watch::channel(0).0,
        unacknowledged: Mutex::new(Vec::new()),
    });
    let mut customers = Vec::new();
    for id in 0..CUSTOMERS {
        customers.push(tokio::spawn(customer(
            app.clone(),
            stampede.clone(),
            ev.clone(),
            SEATS,
            id + 1,
        )));
    }

    // In full swing (a few payments through, claims and drops going on),
    // kill it.
    more_of(&stampede.paid, 2, "payments before the kill").await;
    let down = Instant::now();
    let before_kill = started.elapsed() - up;
    stampede.phase.store(OUTAGE, Ordering::SeqCst);
    tokio::task::block_in_place(|| dynamodb.stop());
    // Let every customer run into the dead store (as many answers again
    // as there are customers), then bring it back on the same data.
    stampede.answers_after(CUSTOMERS as usize).await;
    dynamodb = tokio::task::spawn_blocking(start).await.unwrap().unwrap();
    stampede.phase.store(RESTORED, Ordering::SeqCst);
    let outage = down.elapsed();
    let restored = Instant::now();
    // Until seats change hands again.
    more_of(&stampede.won, 10, "claims won after the restart").await;
    stampede.stop.store(true, Ordering::SeqCst);
    for c in customers {
        c.await.unwrap();
    }
    let after_restart = restored.elapsed();

    let answers = std::mem::take(&mut *stampede.answers.lock().unwrap());
    let mut mix: BTreeMap<String, usize> = BTreeMap::new();
    let mut during = (0, 0); // (answers touching the outage, of which 503)
    let mut after_ok = 0;
    for a in &answers {
        let phase = match (a.sent, a.answered) {
            (BEFORE, BEFORE) => "before",
            (RESTORED, RESTORED) => "after",
            _ => "outage",
        };
        *mix.entry(format!("{phase:6} {:12} {} {}", a.route, a.status, a.code))
            .or_default() += 1;
        if a.status == 503 {
            assert_eq!(a.code, "store-unavailable", "{a:?}");
            assert!(a.retry_after, "503 without Retry-After: {a:?}");
        } else {
            assert!(
                contract_answer(a.route, a.status, &a.code),
                "not a contract answer: {a:?}"
            );
        }
        if phase == "outage" {
            during.0 += 1;
            during.1 += usize::from(a.status == 503);
        }
        if phase == "after" && a.route == "get-seat" && a.status == 200 {
            after_ok += 1;
        }
    }
    eprintln!(
        "outage: {} answers, {} touching the {outage:.1?} outage ({} of them 503), {after_ok} claims won after restart; mix: {mix:#?}",
        answers.len(),
        during.0,
        during.1
    );
    assert!(during.1 > 0, "no request met the outage");
    // Seats change hands again once it is back.
    assert!(after_ok > 0, "no claim succeeded after the restart");

    // Webhooks are redelivered until acknowledged: each payment answered
    // 503 completes its order now (or already had, its reply lost).
    let unacknowledged = std::mem::take(&mut *stampede.unacknowledged.lock().unwrap());
    for (order_id, payment, paid) in &unacknowledged {
        let reply = confirm_full(&app, order_id, payment, paid).await;
        assert_eq!(
            reply.status, 200,
            "redelivered payment {payment}: {reply:?}"
        );
        assert_eq!(
            stored_order(&app, order_id).await.status,
            OrderStatus::Completed
        );
    }

    let check = assert_invariants(&app, &ev).await;
    eprintln!(
        "outage: {} payments redelivered; table after restart: {} orders, {} completed, {} of {} seats sold, {} held",
        unacknowledged.len(),
        check.orders,
        check.completed,
        check.sold,
        check.seats,
        check.live_holds
    );
    assert!(check.completed > 0);

    // The service works again: a new customer claims the spare seat, pays.
    let fresh = order(&app, &ev).await;
    let spare = format!("A-1-{}", SEATS + 1);
    assert_eq!(claim(&app, &fresh, &spare).await.0, 200);
    assert_eq!(confirm(&app, &fresh.id, "pi_after_outage").await.0, 200);
    assert_invariants(&app, &ev).await;
    drop(dynamodb);
    let _ = std::fs::remove_dir_all(&data);
    eprintln!(
        "outage test took {:.1?}: DynamoDB Local up in {up:.1?}, stampede {before_kill:.1?} before the kill, \
         outage {outage:.1?} (restart included), {after_restart:.1?} after it",
        started.elapsed()
    );
}

// ----- Deadlines: a slow store --------------------------------------------------

/// One request of the slow-store test, and how late the store answers it.
struct SlowCall<'a> {
    route: &'static str,
    method: &'static str,
    uri: &'a str,
    headers: Vec<(&'static str, &'a str)>,
    body: &'a str,
    delay_ms: u64,
}

/// Every request has a deadline (`REQUEST_BUDGET_MS`, here scaled down to
/// 1.5 s, and the store's slowness with it): when a slow store would take
/// confirm, best-available or create-event past it, the answer is `503
/// store-unavailable` with `Retry-After` at the deadline, not a gateway
/// timeout; and once the store is quick again, the same request finishes
/// what the cut-off one may have started (the same payment, claim or plan).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_slow_store_is_answered_503_at_the_deadline_and_a_retry_finishes() {
    let slow = SlowStore::default();
    let mut app = fresh_app_with(production_client_over(
        &dynamodb_endpoint(),
        slow.http_client(),
        [],
    ))
    .await;
    let budget = Duration::from_millis(1_500);
    app.config.request_budget_ms = budget.as_millis() as u32;
    let ev = event(&app, 20, 300).await;
    let payer = order(&app, &ev).await;
    assert_eq!(claim(&app, &payer, "A-1-1").await.0, 200);
    let buyer = order(&app, &ev).await;
    let plan = plan(&[("B", "1", 150), ("B", "2", 150)], Some(300));
    let paid = ["A-1-1".to_owned()];
    let pay = confirm_body(&payer.id, "pi_slow", &paid);
    let pay_headers = signed(&pay);
    let buyer_auth = buyer.auth();
    let pay_uri = format!("/orders/{}/confirm", payer.id);
    let best_uri = format!("/orders/{}/best-available", buyer.id);
    let requests = [
        // One transaction, later than the whole budget.
        SlowCall {
            route: "confirm",
            method: "POST",
            uri: &pay_uri,
            headers: as_refs(&pay_headers),
            body: &pay,
            delay_ms: 1_700,
        },
        // A read of the order, of the rows, then the claim: 600 ms each.
        SlowCall {
            route: "best-available",
            method: "POST",
            uri: &best_uri,
            headers: vec![("authorization", buyer_auth.as_str())],
            body: r#"{"quantity": 2}"#,
            delay_ms: 600,
        },
        // The event item, then 300 seats 32 at a time: 400 ms a write.
        SlowCall {
            route: "create-event",
            method: "PUT",
            uri: "/events/slow-plan",
            headers: vec![],
            body: &plan,
            delay_ms: 400,
        },
    ];
    for r in &requests {
        slow.set_delay(Duration::from_millis(r.delay_ms));
        let started = Instant::now();
        let reply = call_full(&app, r.method, r.uri, &r.headers, r.body).await;
        let elapsed = started.elapsed();
        eprintln!(
            "{} on a store {} ms late: {} after {elapsed:.2?}",
            r.route, r.delay_ms, reply.status
        );
        assert_store_unavailable(r.route, &reply);
        // Answered at the deadline: not before it, and with room left
        // before API Gateway's integration timeout, a second after the
        // default budget (a loaded machine schedules the reply late, not
        // the deadline).
        assert!(
            elapsed >= budget - Duration::from_millis(50)
                && elapsed < budget + Duration::from_millis(1_000),
            "{}: answered after {elapsed:?}",
            r.route
        );
    }
    // The store quick again, and the deployed budget: each retry finishes.
    slow.set_delay(Duration::ZERO);
    app.config.request_budget_ms = shared::config::DEFAULT_REQUEST_BUDGET_MS;
    let reply = call_full(&app, "POST", &pay_uri, &requests[0].headers, &pay).await;
    assert_eq!(
        (reply.status, reply.body["status"].as_str()),
        (200, Some("COMPLETED")),
        "{reply:?}"
    );
    let (status, body) = best(&app, &buyer, json!({"quantity": 2})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        stored_order(&app, &buyer.id).await.seats.len(),
        2,
        "one block held, not two"
    );
    let (status, body) = call(&app, "PUT", "/events/slow-plan", &[], &plan).await;
    assert_eq!(
        (status, body["seatCount"].as_u64()),
        (201, Some(300)),
        "{body}"
    );
    assert_eq!(seats(&app, "slow-plan").await.len(), 300);
    assert_invariants(&app, &ev).await;
    assert_invariants(&app, "slow-plan").await;
}

// ----- 3. Throttling and transaction conflicts --------------------------------

/// An app on a fresh table of the shared DynamoDB Local whose client has
/// production's settings and the fault injector.
async fn app_with_faults() -> (App, FaultInjector) {
    let faults = FaultInjector::default();
    let app = fresh_app_with(production_client(&dynamodb_endpoint(), [faults.shared()])).await;
    (app, faults)
}

#[tokio::test]
async fn a_few_throttles_are_retried_and_the_request_succeeds() {
    let (app, faults) = app_with_faults().await;
    let ev = event(&app, 2, 300).await;
    let o = order(&app, &ev).await;
    faults.reset();

    // A hot partition twice, then through: the SDK's standard retry
    // policy (3 attempts) absorbs it; the client sees one 200.
    faults.fail(
        "TransactWriteItems",
        Fault::ProvisionedThroughputExceeded,
        Some(2),
    );
    let started = Instant::now();
    // Sent once (not through the helper that resends a 503): the retries
    // this counts are the SDK's, and the client's one reply is the 200.
    let (status, body) = call(
        &app,
        "POST",
        &format!("/orders/{}/seats/A-1-1", o.id),
        &[("authorization", &o.auth())],
        "",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    eprintln!(
        "throttled get-seat: {} attempts ({} throttled) in {:.2?}",
        faults.attempts("TransactWriteItems"),
        faults.injected("TransactWriteItems"),
        started.elapsed()
    );
    assert_eq!(
        (
            faults.attempts("TransactWriteItems"),
            faults.injected("TransactWriteItems")
        ),
        (3, 2)
    );
    let seat = &seats(&app, &ev).await[0];
    assert!(
        matches!(&seat.state, SeatState::Held { order, .. } if order.as_str() == o.id),
        "{seat:?}"
    );

    // A read throttled once (ThrottlingException): retried too.
    faults.reset();
    faults.fail("GetItem", Fault::Throttling, Some(1));
    let (status, body) = call(
        &app,
        "GET",
        &format!("/orders/{}", o.id),
        &[("authorization", &o.auth())],
        "",
    )
    .await;
    assert_eq!(
        (status, body["seats"].clone()),
        (200, json!(["A-1-1"])),
        "{body}"
    );
    assert_eq!(
        (faults.attempts("GetItem"), faults.injected("GetItem")),
        (2, 1)
    );
    assert_invariants(&app, &ev).await;
}

#[tokio::test]
async fn persistent_throttling_is_a_clean_503() {
    let (app, faults) = app_with_faults().await;
    let ev = event(&app, 2, 300).await;
    let o = order(&app, &ev).await;
    faults.reset();

    faults.fail(
        "TransactWriteItems",
        Fault::ProvisionedThroughputExceeded,
        None,
    );
    let uri = format!("/orders/{}/seats/A-1-1", o.id);
    let reply = call_full(&app, "POST", &uri, &[("authorization", &o.auth())], "").await;
    assert_store_unavailable("get-seat", &reply);
    // Retried up to the policy's limit, then given up: no retry storm.
    assert_eq!(faults.attempts("TransactWriteItems"), 3);

    faults.fail("GetItem", Fault::Throttling, None);
    let read_before = faults.attempts("GetItem");
    let reply = call_full(
        &app,
        "GET",
        &format!("/orders/{}", o.id),
        &[("authorization", &o.auth())],
        "",
    )
    .await;
    assert_store_unavailable("get-order", &reply);
    assert_eq!(faults.attempts("GetItem") - read_before, 3);
    let reply = confirm_full(&app, &o.id, "pi_1", &["A-1-1".to_owned()]).await;
    assert_store_unavailable("confirm", &reply);

    // Nothing was written.
    faults.reset();
    assert!(seats(&app, &ev)
        .await
        .iter()
        .all(|s| s.state == SeatState::Available));
    assert_eq!(
        stored_order(&app, &o.id).await.seats,
        Vec::<shared::domain::SeatId>::new()
    );
}

/// get-seat's transaction cancelled for `TransactionConflict` (another
/// transaction on the same item at that moment). On the seat, a rival's
/// claim was in flight and may yet fail, so nothing is decided: get-seat
/// reads the seat and answers from what it shows, `409 seat-held` if the
/// rival holds it, or claims again if it is still free (the rival failed)
/// — never a `seat-held` that rests on a rival that never held. On the
/// order alone, nothing explains it and the order is unchanged: `503
/// store-unavailable`, retry, one attempt (the SDK does not retry a
/// cancelled transaction) and nothing written.
#[tokio::test]
async fn transaction_conflicts_on_get_seat_get_the_contract_answer() {
    let (app, faults) = app_with_faults().await;
    let ev = event(&app, 2, 300).await;
    let o = order(&app, &ev).await;
    let uri = format!("/orders/{}/seats/A-1-1", o.id);

    // A rival held A-1-2 by the time its conflict is read: seat-held, on
    // the read (one GetItem), after one transaction. (get-seat's own read
    // before the write showed the seat free: the rival's claim landed in
    // between, so the path after that read is called.)
    let rival = order(&app, &ev).await;
    assert_eq!(claim(&app, &rival, "A-1-2").await.0, 200);
    faults.reset();
    faults.fail(
        "TransactWriteItems",
        Fault::TransactionCanceled(vec!["TransactionConflict", "None"]),
        Some(1),
    );
    let seat = shared::domain::SeatId::parse("A-1-2").unwrap();
    let refused = shared::handlers::claim_exactly(
        &app,
        &o.order_id(),
        &o.hold_token(),
        &seat,
        app.config.max_seats_per_order,
        shared::world::now(),
    )
    .await;
    assert!(
        matches!(refused, Err(shared::error::Error::SeatHeld)),
        "{refused:?}"
    );
    assert_eq!(faults.attempts("TransactWriteItems"), 1);
    assert_eq!(faults.attempts("GetItem"), 1, "the seat read once");

    // Items in request order: the seat, then the order. The seat is still
    // free after the conflict (the rival failed): claimed on the next try.
    faults.reset();
    faults.fail(
        "TransactWriteItems",
        Fault::TransactionCanceled(vec!["TransactionConflict", "None"]),
        Some(1),
    );
    let reply = call_full(&app, "POST", &uri, &[("authorization", &o.auth())], "").await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(faults.attempts("TransactWriteItems"), 2);
    let drop = call_full(&app, "DELETE", &uri, &[("authorization", &o.auth())], "").await;
    assert_eq!(drop.status, 200, "{drop:?}");
    // The order as it is now, for the nothing-written check below.
    let before = app.store.get_order(&o.order_id()).await.unwrap().unwrap();

    faults.reset();
    faults.fail(
        "TransactWriteItems",
        Fault::TransactionCanceled(vec!["None", "TransactionConflict"]),
        Some(1),
    );
    let reply = call_full(&app, "POST", &uri, &[("authorization", &o.auth())], "").await;
    assert_store_unavailable("get-seat, order conflict", &reply);
    assert_eq!(faults.attempts("TransactWriteItems"), 1);

    // No partial write: the seat is free, the order as it was.
    faults.reset();
    let seat = &seats(&app, &ev).await[0];
    assert_eq!(seat.state, SeatState::Available);
    let after = app.store.get_order(&o.order_id()).await.unwrap().unwrap();
    assert_eq!((after.order, after.version), (before.order, before.version));
    let check = check_invariants(&app, &ev).await;
    assert!(check.violations.is_empty(), "{:?}", check.violations);

    // Retried by the customer, the claim goes through.
    assert_eq!(claim(&app, &o, "A-1-1").await.0, 200);
    assert_invariants(&app, &ev).await;
}

/// confirm's transaction cancelled by a conflict on a seat (no condition
/// failed): the order is unchanged, so `503` and retry — not a refund, not
/// a sale of some seats.
#[tokio::test]
async fn a_transaction_conflict_on_confirm_is_503_and_sells_nothing() {
    let (app, faults) = app_with_faults().await;
    let ev = event(&app, 2, 300).await;
    let o = order(&app, &ev).await;
    assert_eq!(claim(&app, &o, "A-1-1").await.0, 200);
    assert_eq!(claim(&app, &o, "A-1-2").await.0, 200);
    faults.reset();
    // Items: the two seats, the order, the payment.
    faults.fail(
        "TransactWriteItems",
        Fault::TransactionCanceled(vec!["None", "TransactionConflict", "None", "None"]),
        Some(1),
    );
    let reply = confirm_full(
        &app,
        &o.id,
        "pi_1",
        &["A-1-1".to_owned(), "A-1-2".to_owned()],
    )
    .await;
    assert_store_unavailable("confirm", &reply);
    assert_eq!(faults.attempts("TransactWriteItems"), 1);
    assert_eq!(stored_order(&app, &o.id).await.status, OrderStatus::Pending);
    assert!(seats(&app, &ev)
        .await
        .iter()
        .all(|s| matches!(s.state, SeatState::Held { .. })));
    assert_invariants(&app, &ev).await;
    // The redelivered webhook completes it.
    assert_eq!(confirm(&app, &o.id, "pi_1").await.0, 200);
    assert_invariants(&app, &ev).await;
}

/// confirm's last round (the order "changed" under its first three): a
/// payment for general-admission places it holds is then taken as a late
/// payment would be, from the buckets read anew, and completes the order.
/// Each transaction is cancelled as DynamoDB cancels it, every item's
/// condition failed (so the order's role reads as changed).
#[tokio::test]
async fn confirms_last_round_sells_held_places_from_the_buckets_read_anew() {
    let (app, faults) = app_with_faults().await;
    let ev = format!("ga-last-{}", uuid::Uuid::new_v4().simple());
    let plan = r#"{"name":"GA","holdSeconds":300,"sections":[{"sectionId":"F","capacity":20}]}"#;
    assert_eq!(
        call(&app, "PUT", &format!("/events/{ev}"), &[], plan)
            .await
            .0,
        201
    );
    let o = order(&app, &ev).await;
    assert_eq!(hold_ga(&app, &o, "F", json!(3)).await.0, 200);
    faults.reset();
    faults.fail(
        "TransactWriteItems",
        Fault::TransactionCanceled(vec!["ConditionalCheckFailed"; 8]),
        Some(3),
    );
    // Sent once (not through the helper that resends a 503): the four
    // rounds this counts are one request's.
    let pay = json!({"orderId": o.id, "paymentId": "pi_last", "seats": [], "ga": [{"sectionId": "F", "quantity": 3}]})
        .to_string();
    let headers = signed(&pay);
    let (status, body) = call(
        &app,
        "POST",
        &format!("/orders/{}/confirm", o.id),
        &as_refs(&headers),
        &pay,
    )
    .await;
    assert_eq!(
        (status, body["status"].as_str()),
        (200, Some("COMPLETED")),
        "{body}"
    );
    assert_eq!(
        faults.injected("TransactWriteItems"),
        3,
        "three rounds refused, the last one sold"
    );
    assert!(
        faults.attempts("BatchGetItem") >= 1,
        "the last round read the buckets"
    );
    assert_eq!(body["ga"], json!([{"sectionId": "F", "quantity": 3}]));
    assert_invariants(&app, &ev).await;
}

/// Throttling reported per item inside a cancelled transaction
/// (`ThrottlingError` in `CancellationReasons`, DynamoDB's own body) is a
/// `503` with `Retry-After` on every route, never `409 seat-held`: during
/// an on-sale a customer must not see free seats as taken. get-seat
/// throttled on the seat alone reads it and claims again (a throttle that
/// passes is a `200`). A conflict on the order alone of a refund recording
/// is a 503 too. Nothing is written.
#[tokio::test]
async fn throttling_inside_a_cancelled_transaction_is_503_never_409() {
    let (app, faults) = app_with_faults().await;
    let ev = event(&app, 4, 300).await;
    let o = order(&app, &ev).await;
    assert_eq!(claim(&app, &o, "A-1-1").await.0, 200);
    let claim_uri = format!("/orders/{}/seats/A-1-2", o.id);
    let drop_uri = format!("/orders/{}/seats/A-1-1", o.id);
    let paid = ["A-1-1".to_owned()];
    for reasons in [
        vec!["ThrottlingError", "None"],
        vec!["None", "ThrottlingError"],
        vec!["ThrottlingError", "ConditionalCheckFailed"],
        vec!["ProvisionedThroughputExceeded", "TransactionConflict"],
    ] {
        // Every time: on the seat alone it decided nothing, and get-seat
        // reads the seat and tries again, a few rounds (below).
        faults.reset();
        faults.fail(
            "TransactWriteItems",
            Fault::TransactionCanceled(reasons.clone()),
            None,
        );
        let reply = call_full(
            &app,
            "POST",
            &claim_uri,
            &[("authorization", &o.auth())],
            "",
        )
        .await;
        assert_store_unavailable(&format!("get-seat {reasons:?}"), &reply);
        if reasons == ["ThrottlingError", "None"] {
            // The seat read and the waitlist's state (this test's app
            // rereads it each time), then 3 rounds of a write and a read,
            // a fourth write, and no more.
            assert_eq!(faults.attempts("TransactWriteItems"), 4);
            assert_eq!(faults.attempts("GetItem"), 5);
        }
        faults.reset();
        faults.fail(
            "TransactWriteItems",
            Fault::TransactionCanceled(reasons.clone()),
            Some(1),
        );
        let reply = call_full(
            &app,
            "DELETE",
            &drop_uri,
            &[("authorization", &o.auth())],
            "",
        )
        .await;
        assert_store_unavailable(&format!("drop-seat {reasons:?}"), &reply);
    }
    // confirm's items: the seat, the order, the payment.
    for reasons in [
        vec!["ThrottlingError", "None", "None"],
        vec!["None", "None", "ThrottlingError"],
    ] {
        faults.reset();
        faults.fail(
            "TransactWriteItems",
            Fault::TransactionCanceled(reasons.clone()),
            Some(1),
        );
        let reply = confirm_full(&app, &o.id, "pi_1", &paid).await;
        assert_store_unavailable(&format!("confirm {reasons:?}"), &reply);
    }
    faults.reset();
    assert_eq!(
        seats(&app, &ev)
            .await
            .iter()
            .filter(|s| matches!(s.state, SeatState::Held { .. }))
            .count(),
        1,
        "nothing written"
    );
    assert_eq!(stored_order(&app, &o.id).await.status, OrderStatus::Pending);
    // Throttled once on the seat alone: read again, claimed on the next
    // round, then dropped.
    faults.reset();
    faults.fail(
        "TransactWriteItems",
        Fault::TransactionCanceled(vec!["ThrottlingError", "None"]),
        Some(1),
    );
    let auth = [("authorization", o.auth())];
    let reply = call_full(&app, "POST", &claim_uri, &as_refs(&auth), "").await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(faults.attempts("TransactWriteItems"), 2);
    assert_eq!(
        faults.attempts("GetItem"),
        3,
        "the seat read, the waitlist's state, then the seat again"
    );
    let reply = call_full(&app, "DELETE", &claim_uri, &as_refs(&auth), "").await;
    assert_eq!(reply.status, 200, "{reply:?}");
    faults.reset();

    // A second payment for the completed order is recorded for refund; a
    // conflict on the order item of that recording is a 503, then it lands.
    assert_eq!(confirm_full(&app, &o.id, "pi_1", &paid).await.status, 200);
    // The first transaction is the one-round-trip attempt (it fails: the
    // order is completed); the second is the recording: [order, payment].
    faults.fail_after(
        "TransactWriteItems",
        1,
        Fault::TransactionCanceled(vec!["TransactionConflict", "None"]),
        Some(1),
    );
    let reply = confirm_full(&app, &o.id, "pi_2", &paid).await;
    assert_store_unavailable("refund recording, order conflict", &reply);
    faults.reset();
    assert!(
        stored_order(&app, &o.id)
            .await
            .refund_payment_ids
            .is_empty(),
        "nothing recorded yet"
    );
    let reply = confirm_full(&app, &o.id, "pi_2", &paid).await;
    assert_eq!(
        (reply.status, reply.code()),
        (409, "already-completed"),
        "{reply:?}"
    );
    assert_eq!(stored_order(&app, &o.id).await.refund_payment_ids.len(), 1);
    assert_invariants(&app, &ev).await;
}

/// A creator that dies right after claiming the event id, before any
/// general-admission bucket is written (its bucket writes throttled until
/// the SDK gives up: a 503): the sweep writes the buckets and the seats
/// and marks the event ready, and the section's capacity is whole.
#[tokio::test]
async fn the_sweep_finishes_a_creation_that_died_before_its_buckets() {
    let (mut app, faults) = app_with_faults().await;
    app.config.create_event_budget_ms = 0;
    let plan = r#"{"name":"GA","holdSeconds":60,"sections":[{"sectionId":"A","rows":[{"row":"1","count":4}]},{"sectionId":"F","capacity":50}]}"#;
    faults.fail_after("PutItem", 1, Fault::Throttling, None);
    let reply = call_full(&app, "PUT", "/events/died", &[], plan).await;
    assert_store_unavailable("create-event, buckets throttled", &reply);
    faults.reset();
    assert_eq!(
        call(&app, "GET", "/events/died/availability", &[], "")
            .await
            .0,
        404,
        "not ready"
    );
    let sweeper = local::iam::attributed(&app, "expire-holds");
    let summary = shared::sweep::run(&sweeper.store, shared::world::now(), None).await;
    assert_eq!(summary.completed_events, 1, "{summary:?}");
    assert!(
        faults.attempts("PutItem") >= 5,
        "the sweep put the buckets and the seats"
    );
    let (status, map) = call(&app, "GET", "/events/died/availability", &[], "").await;
    assert_eq!(status, 200, "{map}");
    assert_eq!(
        (
            map["sections"][1]["capacity"].as_u64(),
            map["sections"][1]["available"].as_u64()
        ),
        (Some(50), Some(50)),
        "{map}"
    );
    assert_eq!(seats(&app, "died").await.len(), 4);
    assert_invariants(&app, "died").await;
}

/// create-event dies half-way (every PutItem after the 300th throttled
/// until the SDK gives up: a 503), as a Lambda timeout or crash would leave
/// it. Until it is complete, readers see no event; the same PUT again
/// resumes it and writes only the seats that are missing.
#[tokio::test]
async fn an_interrupted_create_event_is_invisible_and_resumes() {
    let (app, faults) = app_with_faults().await;
    let body = plan(&[("A", "1", 400), ("B", "1", 400)], Some(300));
    // The event item, then 300 seats, then nothing more gets through.
    faults.fail_after("PutItem", 301, Fault::Throttling, None);
    let reply = call_full(&app, "PUT", "/events/crash", &[], &body).await;
    assert_store_unavailable("create-event, store failing half-way", &reply);
    let written = faults.attempts("PutItem") - faults.injected("PutItem");
    assert_eq!(written, 301, "the event item and 300 seats were written");
    faults.reset();
    for (method, uri) in [
        ("GET", "/events/crash/seats"),
        ("GET", "/events/crash/seats?section=B"),
        ("POST", "/events/crash/orders"),
    ] {
        let reply = call_full(&app, method, uri, &[], "").await;
        assert_eq!(
            (reply.status, reply.code()),
            (404, "event-not-found"),
            "{method} {uri}: {reply:?}"
        );
    }
    // Another plan cannot take the id over.
    let other = call_full(
        &app,
        "PUT",
        "/events/crash",
        &[],
        &plan(&[("A", "1", 1)], None),
    )
    .await;
    assert_eq!((other.status, other.code()), (409, "event-exists"));
    // The same plan again finishes the job.
    let reply = call_full(&app, "PUT", "/events/crash", &[], &body).await;
    assert_eq!(reply.status, 201, "{reply:?}");
    // One conditional put per seat and the event item once more (a put the
    // SDK retried after a dropped connection may add one).
    let puts = faults.attempts("PutItem");
    assert!(
        (801..=803).contains(&puts),
        "{puts} puts to resume 800 seats"
    );
    assert_eq!(seats(&app, "crash").await.len(), 800);
    let o = order(&app, "crash").await;
    assert_eq!(claim(&app, &o, "B-1-400").await.0, 200);
}

/// A plain write that meets a transaction on its item
/// (`TransactionConflictException`, which the SDK does not retry) is a 503:
/// nothing was decided, so the caller retries. Here a create-event whose
/// seat put meets a claim; the retried PUT completes the event.
#[tokio::test]
async fn a_transaction_conflict_on_a_plain_write_is_503() {
    let (app, faults) = app_with_faults().await;
    let body = plan(&[("A", "1", 40)], Some(300));
    faults.fail_after("PutItem", 10, Fault::TransactionConflict, Some(1));
    let reply = call_full(&app, "PUT", "/events/conflicted", &[], &body).await;
    assert_store_unavailable("create-event, a seat put conflicted", &reply);
    assert_eq!(faults.injected("PutItem"), 1);
    faults.reset();
    let reply = call_full(&app, "PUT", "/events/conflicted", &[], &body).await;
    assert_eq!(reply.status, 201, "{reply:?}");
    assert_eq!(seats(&app, "conflicted").await.len(), 40);
}

// ----- 4. expire-holds and the Lambda deadline --------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn expire_holds_stops_at_the_deadline_and_the_next_run_finishes() {
    const ORDERS: usize = 300;
    const IN_FLIGHT: usize = 20;
    const HOLD: u64 = 2;
    let app = Arc::new(fresh_app_with(production_client(&dynamodb_endpoint(), [])).await);
    let ev = event(&app, ORDERS as u32, HOLD as u32).await;
    // 300 orders holding one seat each, 20 customers at a time.
    let mut tasks = Vec::new();
    for lane in 0..IN_FLIGHT {
        let (app, ev) = (app.clone(), ev.clone());
        tasks.push(tokio::spawn(async move {
            for i in (lane..ORDERS).step_by(IN_FLIGHT) {
                let o = order(&app, &ev).await;
                let (status, body) = claim(&app, &o, &format!("A-1-{}", i + 1)).await;
                assert_eq!(status, 200, "{body}");
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let_holds_expire(HOLD).await;

    // Already inside the margin: no page is started.
    let first = shared::handlers::expire_holds(
        &local::iam::attributed(&app, "expire-holds"),
        invocation(shared::world::now().0 + 5),
    )
    .await
    .unwrap();
    // Time for a page or two, not for all eight shards.
    let second = shared::handlers::expire_holds(
        &local::iam::attributed(&app, "expire-holds"),
        invocation(shared::world::now().0 + DEADLINE_MARGIN_MS + 50),
    )
    .await
    .unwrap();
    // A normal run (expire-holds' 55 s timeout).
    let third = shared::handlers::expire_holds(
        &local::iam::attributed(&app, "expire-holds"),
        invocation(shared::world::now().0 + 55_000),
    )
    .await
    .unwrap();
    eprintln!("deadline runs: {first:?} / {second:?} / {third:?}");
    assert!(
        first.stopped_early && first.released_seats == 0,
        "{first:?}"
    );
    assert!(
        second.stopped_early && second.released_seats < ORDERS as u64,
        "{second:?}"
    );
    assert!(!third.stopped_early, "{third:?}");
    let runs = [&first, &second, &third];
    assert_eq!(
        runs.iter().map(|s| s.released_seats).sum::<u64>(),
        ORDERS as u64
    );
    assert_eq!(
        runs.iter().map(|s| s.expired_orders).sum::<u64>(),
        ORDERS as u64
    );
    assert_eq!(runs.iter().map(|s| s.failed_orders).sum::<u64>(), 0);
    let serialized = serde_json::to_value(&first).unwrap();
    assert_eq!(
        serialized["stoppedEarly"], true,
        "reported as the contract's JSON: {serialized}"
    );

    let all = seats(&app, &ev).await;
    assert_eq!(all.len(), ORDERS);
    assert!(
        all.iter().all(|s| s.state == SeatState::Available),
        "every seat free"
    );
    let check = assert_invariants(&app, &ev).await;
    assert_eq!(check.orders, ORDERS);
    // Nothing left for a fourth run.
    let fourth = shared::handlers::expire_holds(
        &local::iam::attributed(&app, "expire-holds"),
        invocation(shared::world::now().0 + 55_000),
    )
    .await
    .unwrap();
    assert_eq!((fourth.expired_orders, fourth.released_seats), (0, 0));
}
