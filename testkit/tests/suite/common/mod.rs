//! Helpers shared by the integration tests: requests through the router
//! (as the dev server and API Gateway route them) and readers of replies.
#![allow(dead_code, unused_imports)]

use lambda_http::{Body, Response};
use local::apps::{dev_confirm_secrets, webhook_headers, webhook_headers_at};
use local::router::{dispatch, request};
use serde_json::{json, Value};
use shared::domain::{EventId, OrderId};
use shared::App;

pub use testkit::fresh_app;

pub mod draw;
pub mod events;
pub mod queue;
pub mod stripe;
pub mod waitlist;

/// Status and JSON body of a reply (also checks the content type).
pub fn read(resp: Response<Body>) -> (u16, Value) {
    let status = resp.status().as_u16();
    let ct = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert_eq!(ct, "application/json", "every reply is JSON");
    let body: &[u8] = resp.body().as_ref();
    let value: Value = serde_json::from_slice(body)
        .unwrap_or_else(|e| panic!("reply is not JSON ({e}): {body:?}"));
    if status >= 400 {
        assert!(
            value["error"].is_string() && value["message"].is_string(),
            "error shape: {value}"
        );
    }
    // Every refusal of a credential, an admission or a limit names its
    // rule with one of the documented reasons.
    if matches!(status, 401 | 403 | 422) {
        let reason = value["reason"].as_str().unwrap_or_default();
        assert!(
            shared::reason::Reason::ALL
                .iter()
                .any(|r| r.code() == reason),
            "a {status} names a documented reason: {value}"
        );
    }
    (status, value)
}

/// A reply: its status, JSON body and `Retry-After` header.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub body: Value,
    pub retry_after: Option<String>,
}

impl Reply {
    /// The error code, or "" for a success.
    pub fn code(&self) -> &str {
        self.body["error"].as_str().unwrap_or("")
    }
}

/// The `reason` of a reply's body, or "" where it has none.
pub fn reason(body: &Value) -> &str {
    body["reason"].as_str().unwrap_or("")
}

/// A request through the router, as the dev server and API Gateway route
/// it; the whole reply.
pub async fn call_full(
    app: &App,
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Reply {
    let body = if body.is_empty() {
        Body::Empty
    } else {
        Body::Text(body.to_owned())
    };
    let resp = dispatch(app, request(method, uri, headers, body)).await;
    let retry_after = resp
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let (status, body) = read(resp);
    Reply {
        status,
        body,
        retry_after,
    }
}

/// [`call_full`]'s status and body.
pub async fn call(
    app: &App,
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, Value) {
    let reply = call_full(app, method, uri, headers, body).await;
    (reply.status, reply.body)
}

/// How many times a test's client sends a request again after a `503`:
/// far more than any race here needs, so only a store that stays down
/// fails a test.
const RESENDS: u32 = 50;

/// A request sent as the contract asks a client to send it (API.md,
/// "Conventions": a route is safe to retry): a `503 store-unavailable` (a
/// race past the bounded retries, a request's deadline on a slow machine)
/// must carry `Retry-After`, and the request goes again after it, at most
/// [`RESENDS`] times. The helpers of requests that may be sent again send
/// this way (a claim, a quantity of places, a payment, a cancel, a read, a
/// new order), so a loaded machine changes how long a test takes, not what
/// it judges. A test that wants to see the `503` itself uses
/// [`call_full`]; a request that must not be sent twice blindly uses
/// [`call`] or checks what landed (as [`best`] does).
pub async fn send(
    app: &App,
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, Value) {
    for _ in 0..RESENDS {
        let reply = call_full(app, method, uri, headers, body).await;
        if reply.status != 503 {
            return (reply.status, reply.body);
        }
        pause_after_503(&reply).await;
    }
    panic!("{method} {uri}: still 503 after {RESENDS} sends")
}

/// What a client does on a `503`: check that it says `store-unavailable`
/// and when to retry, then wait a jittered pause of at most that long.
async fn pause_after_503(reply: &Reply) {
    assert_eq!(reply.code(), "store-unavailable", "{reply:?}");
    let after_s: u64 = reply
        .retry_after
        .as_deref()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("a 503 says when to retry: {reply:?}"));
    let pause_ms = shared::world::random_u64() % (after_s * 1000 + 1);
    tokio::time::sleep(std::time::Duration::from_millis(pause_ms)).await;
}

pub fn plan(rows: &[(&str, &str, u32)], hold_seconds: Option<u32>) -> String {
    let mut sections: Vec<(String, Vec<Value>)> = Vec::new();
    for (section, row, count) in rows {
        let entry = json!({"row": row, "count": count});
        match sections.iter_mut().find(|(s, _)| s == section) {
            Some((_, r)) => r.push(entry),
            None => sections.push((section.to_string(), vec![entry])),
        }
    }
    let mut body = json!({
        "name": "Test event",
        "sections": sections.into_iter().map(|(s, r)| json!({"sectionId": s, "rows": r})).collect::<Vec<_>>(),
    });
    if let Some(h) = hold_seconds {
        body["holdSeconds"] = json!(h);
    }
    body.to_string()
}

/// A raw item's key or whole item, as the SDK has it.
pub type RawItem = std::collections::HashMap<String, aws_sdk_dynamodb::types::AttributeValue>;

/// An order's hold of `quantity` places until `until_ms`, as a bucket
/// (or a listing of places) stores it (`hold#{orderId}`), for raw writes.
pub fn raw_place_hold(quantity: u32, until_ms: i64) -> aws_sdk_dynamodb::types::AttributeValue {
    use aws_sdk_dynamodb::types::AttributeValue;
    AttributeValue::M(
        [
            ("q".to_owned(), AttributeValue::N(quantity.to_string())),
            ("e".to_owned(), AttributeValue::N(until_ms.to_string())),
        ]
        .into(),
    )
}

/// An item as stored, by its key, strongly consistent (a test's raw look
/// at what the store wrote).
pub async fn raw_item(app: &App, key: RawItem) -> RawItem {
    app.store
        .client()
        .get_item()
        .table_name(app.store.table_name())
        .set_key(Some(key))
        .consistent_read(true)
        .send()
        .await
        .unwrap()
        .item
        .unwrap()
}

/// Every item under one partition key, strongly consistent, as stored.
pub async fn partition_items(app: &App, pk: String) -> Vec<RawItem> {
    let out = app
        .store
        .client()
        .query()
        .table_name(app.store.table_name())
        .key_condition_expression("PK = :pk")
        .expression_attribute_values(":pk", aws_sdk_dynamodb::types::AttributeValue::S(pk))
        .consistent_read(true)
        .send()
        .await
        .unwrap();
    out.items.unwrap_or_default()
}

/// Deletes an item by its key, as TTL (or an operator) would: no code of
/// ours is asked.
pub async fn delete_raw_item(app: &App, key: RawItem) {
    app.store
        .client()
        .delete_item()
        .table_name(app.store.table_name())
        .set_key(Some(key))
        .send()
        .await
        .unwrap();
}

/// Creates an event from `plan` (a create-event body) under a fresh id
/// that starts with `prefix`, and checks it is ready (201): how every test
/// makes its events. Its id and the reply.
pub async fn create_event(app: &App, prefix: &str, plan: &str) -> (String, Value) {
    let id = format!("{prefix}-{}", uuid::Uuid::new_v4().simple());
    let (status, body) = call(app, "PUT", &format!("/events/{id}"), &[], plan).await;
    assert_eq!(status, 201, "{body}");
    (id, body)
}

/// [`create_event`] for a plan big enough that a loaded machine may run
/// past create-event's budget: a `202` is finished as the sweep would
/// finish it, so the test's verdict never depends on the machine's load.
pub async fn create_big_event(app: &App, prefix: &str, plan: &str) -> String {
    let id = format!("{prefix}-{}", uuid::Uuid::new_v4().simple());
    let (status, body) = call(app, "PUT", &format!("/events/{id}"), &[], plan).await;
    match status {
        201 => {}
        202 => local::apps::finish_creation(app, &id).await.unwrap(),
        _ => panic!("create-event: {status} {body}"),
    }
    id
}

/// A reader of `app`'s table's stream from its start: each catch-up reads
/// what is new since the last.
pub async fn follow_stream(app: &App) -> local::streams::StreamFollower {
    local::streams::StreamFollower::attach(
        &testkit::dynamodb_endpoint(),
        app.store.client(),
        app.store.table_name(),
    )
    .await
    .unwrap()
}

/// An event with one section A, one row 1, `seats` seats.
pub async fn event(app: &App, seats: u32, hold_seconds: u32) -> String {
    create_event(app, "ev", &plan(&[("A", "1", seats)], Some(hold_seconds)))
        .await
        .0
}

/// An event with a section A of `rows` rows (named 1..=rows) of `seats`
/// each, holds of 300 s.
pub async fn rows_event(app: &App, rows: u32, seats: u32) -> String {
    let rows: Vec<(String, u32)> = (1..=rows).map(|r| (r.to_string(), seats)).collect();
    let rows: Vec<(&str, &str, u32)> = rows.iter().map(|(r, n)| ("A", r.as_str(), *n)).collect();
    create_event(app, "ba", &plan(&rows, Some(300))).await.0
}

/// An event with a seated section A (one row of `seats`) and a
/// general-admission section FLOOR of `capacity` places.
pub async fn ga_event(app: &App, seats: u32, capacity: u32, hold_seconds: u32) -> String {
    let plan = json!({
        "name": "GA",
        "holdSeconds": hold_seconds,
        "sections": [{"sectionId": "A", "rows": [{"row": "1", "count": seats}]}, {"sectionId": "FLOOR", "capacity": capacity}],
    });
    let (id, body) = create_event(app, "ga", &plan.to_string()).await;
    assert_eq!(body["gaCapacity"], json!(capacity), "{body}");
    id
}

#[derive(Clone, Debug)]
pub struct TestOrder {
    pub id: String,
    pub token: String,
    pub expires_at: String,
    pub created_at: String,
}

impl TestOrder {
    /// The order create-order's 201 reply describes.
    pub fn from_reply(body: &Value) -> Self {
        TestOrder {
            id: body["orderId"].as_str().unwrap().to_owned(),
            token: body["holdToken"].as_str().unwrap().to_owned(),
            expires_at: body["expiresAt"].as_str().unwrap().to_owned(),
            created_at: body["createdAt"].as_str().unwrap().to_owned(),
        }
    }
    pub fn auth(&self) -> String {
        format!("Bearer {}", self.token)
    }
    pub fn order_id(&self) -> OrderId {
        OrderId::parse(&self.id).unwrap()
    }
    /// Its hold token as the handlers see it (the MAC checked with the
    /// development key).
    pub fn hold_token(&self) -> shared::auth::HoldToken {
        local::apps::dev_hold_token_keys()
            .decode(&self.order_id(), &self.token)
            .expect("a hold token issued for this order")
    }
    /// An order of the same event that nobody has, with this order's
    /// token issued for it (its MAC verifies, so the store is asked).
    pub fn ghost(&self) -> TestOrder {
        let token = self.hold_token();
        let random = shared::world::random_u128().expect("randomness");
        let id = OrderId::from_random(token.event_id(), random);
        TestOrder {
            id: id.to_string(),
            token: local::apps::dev_hold_token_keys().encode(&id, &token),
            ..self.clone()
        }
    }
}

/// A buyer token from the development seller, for `event`.
pub fn buyer_token(event: &str, buyer: &str) -> String {
    let now_s = shared::world::now().0 / 1_000;
    local::apps::dev_buyer_token(
        &local::apps::dev_buyer_signing_keys(),
        event,
        buyer,
        now_s,
        600,
    )
    .unwrap()
}

/// A new order of `event` for `buyer` (its `X-Buyer-Token`).
pub async fn buyer_order(app: &App, event: &str, buyer: &str) -> TestOrder {
    let token = buyer_token(event, buyer);
    let uri = format!("/events/{event}/orders");
    let (status, body) = send(app, "POST", &uri, &[("x-buyer-token", &token)], "{}").await;
    assert_eq!(status, 201, "{body}");
    local::invariants::remember_order(app, body["orderId"].as_str().unwrap());
    TestOrder::from_reply(&body)
}

pub async fn order(app: &App, event: &str) -> TestOrder {
    let (status, body) = send(app, "POST", &format!("/events/{event}/orders"), &[], "{}").await;
    assert_eq!(status, 201, "{body}");
    local::invariants::remember_order(app, body["orderId"].as_str().unwrap());
    TestOrder::from_reply(&body)
}

pub async fn claim(app: &App, o: &TestOrder, seat: &str) -> (u16, Value) {
    send(
        app,
        "POST",
        &format!("/orders/{}/seats/{seat}", o.id),
        &[("authorization", &o.auth())],
        "",
    )
    .await
}

pub async fn drop_seat(app: &App, o: &TestOrder, seat: &str) -> (u16, Value) {
    call(
        app,
        "DELETE",
        &format!("/orders/{}/seats/{seat}", o.id),
        &[("authorization", &o.auth())],
        "",
    )
    .await
}

pub async fn extend(app: &App, o: &TestOrder, body: &str) -> (u16, Value) {
    call(
        app,
        "POST",
        &format!("/orders/{}/extend", o.id),
        &[("authorization", &o.auth())],
        body,
    )
    .await
}

pub async fn cancel(app: &App, o: &TestOrder) -> (u16, Value) {
    send(
        app,
        "DELETE",
        &format!("/orders/{}", o.id),
        &[("authorization", &o.auth())],
        "",
    )
    .await
}

/// best-available with `body` (`{"quantity", "sectionId"?}`), sent as a
/// client sends it: under an `Idempotency-Key` of its own, sent again with
/// the same key after a `503` (which can come after the claim landed, at
/// the request's deadline: the key makes the resend answer with that block
/// instead of claiming a second).
pub async fn best(app: &App, o: &TestOrder, body: Value) -> (u16, Value) {
    let uri = format!("/orders/{}/best-available", o.id);
    let auth = o.auth();
    let key = uuid::Uuid::new_v4().simple().to_string();
    let headers = [("authorization", auth.as_str()), ("idempotency-key", &key)];
    for _ in 0..RESENDS {
        let reply = call_full(app, "POST", &uri, &headers, &body.to_string()).await;
        if reply.status != 503 {
            return (reply.status, reply.body);
        }
        pause_after_503(&reply).await;
    }
    panic!("{uri}: still 503 after {RESENDS} sends")
}

/// hold-ga: sets the order's places in `section` to `quantity`.
pub async fn hold_ga(app: &App, o: &TestOrder, section: &str, quantity: Value) -> (u16, Value) {
    let body = json!({ "quantity": quantity }).to_string();
    send(
        app,
        "PUT",
        &format!("/orders/{}/ga/{section}", o.id),
        &[("authorization", &o.auth())],
        &body,
    )
    .await
}

/// A signed confirm paying for `seats` and `ga` places.
pub async fn pay(
    app: &App,
    o: &TestOrder,
    payment: &str,
    seats: &[&str],
    ga: Value,
) -> (u16, Value) {
    let body = json!({"orderId": o.id, "paymentId": payment, "seats": seats, "ga": ga}).to_string();
    let headers = signed(&body);
    send(
        app,
        "POST",
        &format!("/orders/{}/confirm", o.id),
        &as_refs(&headers),
        &body,
    )
    .await
}

pub async fn get_order(app: &App, o: &TestOrder) -> (u16, Value) {
    send(
        app,
        "GET",
        &format!("/orders/{}", o.id),
        &[("authorization", &o.auth())],
        "",
    )
    .await
}

/// The Standard Webhooks headers of `body`, signed now with the dev secret.
pub fn signed(body: &str) -> Vec<(&'static str, String)> {
    webhook_headers(&dev_confirm_secrets(), body).to_vec()
}

/// [`signed`] at a chosen timestamp (unix seconds).
pub fn signed_at(body: &str, timestamp: i64) -> Vec<(&'static str, String)> {
    webhook_headers_at(&dev_confirm_secrets(), body, timestamp).to_vec()
}

pub fn as_refs<'a>(headers: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    headers.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// The confirm body: the order and exactly the seats paid for.
pub fn confirm_body(order_id: &str, payment: &str, seats: &[String]) -> String {
    json!({ "orderId": order_id, "paymentId": payment, "seats": seats }).to_string()
}

/// Sends a signed confirm paying for `seats`.
pub async fn confirm_seats(
    app: &App,
    order_id: &str,
    payment: &str,
    seats: &[String],
) -> (u16, Value) {
    let body = confirm_body(order_id, payment, seats);
    let headers = signed(&body);
    send(
        app,
        "POST",
        &format!("/orders/{order_id}/confirm"),
        &as_refs(&headers),
        &body,
    )
    .await
}

/// Sends a signed confirm paying for what the order lists now (read from
/// the table, as the payment page would have shown it).
pub async fn confirm(app: &App, order_id: &str, payment: &str) -> (u16, Value) {
    let seats = match OrderId::parse(order_id).ok() {
        Some(id) => app
            .store
            .get_order(&id)
            .await
            .unwrap()
            .map(|o| o.order.seats)
            .unwrap_or_default(),
        None => vec![],
    };
    let mut seats: Vec<String> = seats.iter().map(|s| s.to_string()).collect();
    if seats.is_empty() {
        // Paying for nothing is a 400; name a seat so the order's own
        // state decides the answer.
        seats.push("A-1-1".to_owned());
    }
    confirm_seats(app, order_id, payment, &seats).await
}

pub async fn seats(app: &App, event: &str) -> Vec<shared::domain::Seat> {
    app.store
        .list_all_seats(&EventId::parse(event).unwrap(), None)
        .await
        .unwrap()
        .unwrap()
}

pub async fn stored_order(app: &App, id: &str) -> shared::domain::Order {
    app.store
        .get_order(&OrderId::parse(id).unwrap())
        .await
        .unwrap()
        .unwrap()
        .order
}

pub async fn sweep(app: &App) -> shared::sweep::SweepSummary {
    shared::sweep::release_expired(
        &local::iam::attributed(app, "expire-holds").store,
        shared::world::now(),
        None,
    )
    .await
}

/// Sleeps until `o`'s holds have expired: a little past its `expiresAt`
/// (the contract's boundary is exact; the margin covers only the sleep).
pub async fn let_expire(o: &TestOrder) {
    let expires_at = chrono::DateTime::parse_from_rfc3339(&o.expires_at)
        .unwrap()
        .timestamp_millis();
    let left = expires_at - shared::world::now().0 + 50;
    if left > 0 {
        tokio::time::sleep(std::time::Duration::from_millis(left as u64)).await;
    }
}

/// Sleeps until a hold of `hold_seconds` taken now has surely expired.
pub async fn let_holds_expire(hold_seconds: u64) {
    tokio::time::sleep(std::time::Duration::from_millis(hold_seconds * 1000 + 150)).await;
}

/// A PENDING order for `event` that expires `seconds` from now, whatever
/// the event's hold: written to the store as create-order writes it, so a
/// rival can outlive an order of the event's short hold made before it.
pub async fn order_expiring_in(app: &shared::App, event: &str, seconds: u32) -> TestOrder {
    let event = shared::domain::EventHead {
        event_id: shared::domain::EventId::parse(event).unwrap(),
        hold_seconds: seconds,
        seat_count: 0,
        buyer_limit: None,
        buyer_key: None,
    };
    let (order, token) = shared::handlers::open_order(
        &event,
        shared::world::now(),
        app.config.expiry_guard_ms,
        None,
    )
    .unwrap();
    app.store.create_order(&order).await.unwrap();
    local::invariants::remember_order(app, order.order_id.as_str());
    TestOrder {
        id: order.order_id.to_string(),
        token: local::apps::dev_hold_token_keys().encode(&order.order_id, &token),
        expires_at: order.expires_at.to_rfc3339(),
        created_at: order.created_at.to_rfc3339(),
    }
}

/// An app on `slow`'s client, on time, and the same with a 1.5 s budget.
pub async fn calm_and_hurried(slow: &local::faults::SlowStore) -> (App, App) {
    let calm = testkit::fresh_app_with(local::faults::production_client_over(
        &testkit::dynamodb_endpoint(),
        slow.http_client(),
        [],
    ))
    .await;
    let mut hurried = calm.clone();
    hurried.config.request_budget_ms = 1_500;
    (calm, hurried)
}
