//! Helpers of the on-sale queue's tests: its routes, the admitter ticking
//! at a chosen instant, and a visitor's view at one.

use serde_json::{json, Value};
use shared::admitter::{Admitter, TickSummary};
use shared::domain::queue_state::{visitor_view, VisitorView};
use shared::domain::{EventId, Millis, VisitorId};
use shared::App;

use super::call;

/// Another Lambda instance on the same table: its own caches, and its
/// view of the queue reused for a second, as on AWS.
pub fn instance(app: &App, counter: &local::metrics::RequestCounter) -> App {
    let client = local::local_client_counting(&testkit::dynamodb_endpoint(), Some(counter.clone()));
    App {
        store: app.store.with_client(client),
        config: app.config.clone(),
        memory: app
            .memory
            .fresh()
            .with_state_cache_ms(shared::store::QUEUE_CACHE_MS),
    }
}

/// The claims of a JWT, unverified (the tests' own reading).
pub fn claims_of(jwt: &str) -> Value {
    part_of(jwt, 1)
}

/// A JWT's header, unverified.
pub fn header_of(jwt: &str) -> Value {
    part_of(jwt, 0)
}

fn part_of(jwt: &str, index: usize) -> Value {
    use base64::Engine;
    let payload = jwt.split('.').nth(index).unwrap();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

/// The queue's state as stored (its main item).
pub async fn stored_state(app: &App, event: &EventId) -> shared::domain::queue_state::QueueState {
    app.store
        .read_queue(event)
        .await
        .unwrap()
        .unwrap()
        .state
        .unwrap()
}

/// An hour, for openings far enough ahead that no test reaches them.
pub const HOUR_MS: i64 = 3_600_000;

/// A reply's RFC 3339 time.
pub fn millis(rfc3339: &Value) -> Millis {
    let text = rfc3339
        .as_str()
        .unwrap_or_else(|| panic!("not a time: {rfc3339}"));
    Millis::from(
        chrono::DateTime::parse_from_rfc3339(text)
            .unwrap()
            .with_timezone(&chrono::Utc),
    )
}

/// put-queue's body: opening `opens_in_ms` from now, `per_minute`.
pub fn queue_body(opens_in_ms: i64, per_minute: u32) -> String {
    let opens_at = Millis(shared::world::now().0 + opens_in_ms).to_rfc3339();
    json!({"opensAt": opens_at, "admitPerMinute": per_minute}).to_string()
}

pub async fn put_queue(app: &App, event: &str, body: &str) -> (u16, Value) {
    call(app, "PUT", &format!("/events/{event}/queue"), &[], body).await
}

pub async fn get_queue(app: &App, event: &str) -> (u16, Value) {
    call(app, "GET", &format!("/events/{event}/queue"), &[], "").await
}

pub async fn delete_queue(app: &App, event: &str) -> (u16, Value) {
    call(app, "DELETE", &format!("/events/{event}/queue"), &[], "").await
}

/// A visitor who joined: its id, token and the join's reply.
#[derive(Debug, Clone)]
pub struct TestVisitor {
    pub id: String,
    pub token: String,
    pub joined: Value,
}

impl TestVisitor {
    pub fn auth(&self) -> String {
        format!("Bearer {}", self.token)
    }
}

pub async fn join(app: &App, event: &str) -> TestVisitor {
    let (status, body) = call(
        app,
        "POST",
        &format!("/events/{event}/queue/visitors"),
        &[],
        "",
    )
    .await;
    assert_eq!(status, 201, "{body}");
    TestVisitor {
        id: body["visitorId"].as_str().unwrap().to_owned(),
        token: body["visitorToken"].as_str().unwrap().to_owned(),
        joined: body,
    }
}

pub async fn visitor_status(app: &App, event: &str, v: &TestVisitor) -> (u16, Value) {
    let auth = v.auth();
    call(
        app,
        "GET",
        &format!("/events/{event}/queue/visitors/{}", v.id),
        &[("authorization", &auth)],
        "",
    )
    .await
}

/// create-order under an admission (and an `Idempotency-Key`, if any).
pub async fn order_with(
    app: &App,
    event: &str,
    admission: &str,
    key: Option<&str>,
) -> (u16, Value) {
    order_with_body(app, event, admission, key, "{}").await
}

/// [`order_with`], with the request's body.
pub async fn order_with_body(
    app: &App,
    event: &str,
    admission: &str,
    key: Option<&str>,
    body: &str,
) -> (u16, Value) {
    let auth = format!("Bearer {admission}");
    let mut headers = vec![("authorization", auth.as_str())];
    if let Some(key) = key {
        headers.push(("idempotency-key", key));
    }
    call(
        app,
        "POST",
        &format!("/events/{event}/orders"),
        &headers,
        body,
    )
    .await
}

/// The order the admission in `v` (a join's or visitor-status's reply) opens.
pub async fn admitted_order(app: &App, ev: &str, v: &Value) -> super::TestOrder {
    let admission = v["admissionToken"]
        .as_str()
        .unwrap_or_else(|| panic!("no admission: {v}"));
    let (status, body) = order_with(app, ev, admission, None).await;
    assert_eq!(status, 201, "{body}");
    super::TestOrder::from_reply(&body)
}

/// One admitter tick of `event`'s queue at `now`, as the admitter
/// function runs it (its own instance, its requests recorded as its own).
pub async fn tick(app: &App, admitter: &mut Admitter, event: &str, now: Millis) -> TickSummary {
    let app = local::iam::attributed(app, "admit-visitors");
    admitter
        .tick(&app, &EventId::parse(event).unwrap(), now)
        .await
        .unwrap()
}

/// What visitor-status would tell `v` at `now`, from the stored queue and
/// visitor (a test's clock, not the wall's).
pub async fn view_at(app: &App, event: &str, v: &TestVisitor, now: Millis) -> (Option<u64>, bool) {
    let event = EventId::parse(event).unwrap();
    let state = app
        .store
        .read_queue(&event)
        .await
        .unwrap()
        .unwrap()
        .state
        .unwrap();
    let visitor = app
        .store
        .read_visitor(&event, &VisitorId::parse(&v.id).unwrap())
        .await
        .unwrap()
        .unwrap();
    match visitor_view(visitor.rank, visitor.admission.as_ref(), &state, now) {
        VisitorView::Waiting { position, .. } => (position, false),
        VisitorView::BeforeOpening { .. } => (None, false),
        VisitorView::Admitted(_) => (None, true),
        other => panic!("{other:?}"),
    }
}

/// Whether `v` has an admission in the store.
pub async fn is_admitted(app: &App, event: &str, v: &TestVisitor) -> bool {
    app.store
        .read_visitor(
            &EventId::parse(event).unwrap(),
            &VisitorId::parse(&v.id).unwrap(),
        )
        .await
        .unwrap()
        .unwrap()
        .admission
        .is_some()
}
