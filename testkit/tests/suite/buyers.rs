//! Buyers on DynamoDB Local: buyer tokens the seller signs, and a verified
//! queue's one place per buyer, joined at once from many instances.

use crate::common;

use common::queue::*;
use common::{buyer_token, call, event, fresh_app};
use serde_json::{json, Value};
use shared::App;

/// join-queue with these headers.
async fn join_as(app: &App, event: &str, headers: &[(&str, &str)]) -> (u16, Value) {
    let path = format!("/events/{event}/queue/visitors");
    call(app, "POST", &path, headers, "").await
}

async fn join_as_buyer(app: &App, event: &str, token: &str) -> (u16, Value) {
    join_as(app, event, &[("x-buyer-token", token)]).await
}

fn verified_queue(opens_in_ms: i64, per_minute: u32) -> String {
    let mut body: Value = serde_json::from_str(&queue_body(opens_in_ms, per_minute)).unwrap();
    body["buyers"] = json!("verified");
    body.to_string()
}

fn visitor_of(reply: &Value) -> TestVisitor {
    TestVisitor {
        id: reply["visitorId"].as_str().unwrap().to_owned(),
        token: reply["visitorToken"].as_str().unwrap().to_owned(),
        joined: reply.clone(),
    }
}

#[tokio::test]
async fn concurrent_joins_by_one_buyer_make_one_visitor() {
    let app = fresh_app().await;
    let ev = event(&app, 5, 300).await;
    let (status, put) = put_queue(&app, &ev, &verified_queue(HOUR_MS, 600)).await;
    assert_eq!((status, &put["buyers"]), (200, &json!("verified")), "{put}");
    let counter = local::metrics::RequestCounter::default();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..60 {
        // Every join on an instance of its own, each with its own token.
        let (instance, ev) = (instance(&app, &counter), ev.clone());
        tasks.spawn(async move {
            let token = buyer_token(&ev, "user:42|eu");
            join_as_buyer(&instance, &ev, &token).await
        });
    }
    let replies = tasks.join_all().await;
    let created = replies.iter().filter(|(s, _)| *s == 201).count();
    assert!(
        replies.iter().all(|(s, _)| *s == 200 || *s == 201),
        "{replies:?}"
    );
    assert_eq!(created, 1, "exactly one join made the visitor");
    let first = &replies[0].1;
    for (_, reply) in &replies {
        assert_eq!(reply["visitorId"], first["visitorId"]);
        assert_eq!(reply["joinedAt"], first["joinedAt"]);
        assert_eq!(reply["buyerId"], "user:42|eu");
        assert_eq!(reply["status"], "WAITING");
    }
    // Every token given works, on any instance.
    for (_, reply) in &replies {
        let (status, seen) = visitor_status(&app, &ev, &visitor_of(reply)).await;
        assert_eq!(status, 200, "{seen}");
        assert_eq!(seen["buyerId"], "user:42|eu");
    }
    // Another buyer is another visitor.
    let other = join_as_buyer(&app, &ev, &buyer_token(&ev, "user:43")).await;
    assert_eq!(other.0, 201);
    assert_ne!(other.1["visitorId"], first["visitorId"]);
    let (_, queue) = get_queue(&app, &ev).await;
    assert_eq!(queue["buyers"], "verified");
}

#[tokio::test]
async fn a_join_without_a_valid_buyer_token_writes_nothing() {
    let app = fresh_app().await;
    let ev = event(&app, 5, 300).await;
    let other_ev = event(&app, 5, 300).await;
    assert_eq!(
        put_queue(&app, &ev, &verified_queue(HOUR_MS, 600)).await.0,
        200
    );
    let counter = local::metrics::RequestCounter::default();
    let instance = instance(&app, &counter);
    let stranger = shared::admission::SigningKeys::parse(
        &json!({"keys": [{"kty": "EC", "crv": "P-256", "kid": "seatclaim-dev-buyer-NOT-SECRET",
            "d": "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE"}]})
        .to_string(),
    )
    .unwrap();
    let now_s = shared::world::now().0 / 1_000;
    let forged = local::apps::dev_buyer_token(&stranger, &ev, "user:42", now_s, 600).unwrap();
    let expired = local::apps::dev_buyer_token(
        &local::apps::dev_buyer_signing_keys(),
        &ev,
        "user:42",
        now_s - 700,
        600,
    )
    .unwrap();
    let refusals = [
        (vec![], "buyer-token-required", "buyer-token-missing"),
        (
            vec![("x-buyer-token", "")],
            "buyer-token-required",
            "buyer-token-missing",
        ),
        (
            vec![("x-buyer-token", "not.a.jwt")],
            "buyer-token-invalid",
            "token-malformed",
        ),
        (
            vec![("x-buyer-token", forged.as_str())],
            "buyer-token-invalid",
            "token-signature",
        ),
        (
            vec![("x-buyer-token", expired.as_str())],
            "buyer-token-invalid",
            "token-expired",
        ),
    ];
    for (headers, code, reason) in refusals {
        let (status, body) = join_as(&instance, &ev, &headers).await;
        assert_eq!(
            (status, body["error"].as_str(), common::reason(&body)),
            (401, Some(code), reason),
            "{body}"
        );
        assert!(
            headers
                .iter()
                .all(|(_, token)| token.is_empty() || !body.to_string().contains(token)),
            "the token is not echoed: {body}"
        );
    }
    let for_another_event = buyer_token(&other_ev, "user:42");
    let (status, body) = join_as_buyer(&instance, &ev, &for_another_event).await;
    assert_eq!(
        (status, body["error"].as_str(), common::reason(&body)),
        (401, Some("buyer-token-invalid"), "token-audience")
    );
    let requests = counter.take();
    let writes: Vec<_> = requests
        .keys()
        .filter(|op| !matches!(op.as_str(), "GetItem" | "Query" | "BatchGetItem"))
        .collect();
    assert!(writes.is_empty(), "a refused join wrote: {requests:?}");
    // An anonymous queue ignores the header.
    assert_eq!(
        put_queue(&app, &other_ev, &queue_body(HOUR_MS, 600))
            .await
            .0,
        200
    );
    let (status, body) = join_as_buyer(&app, &other_ev, "not.a.jwt").await;
    assert_eq!(status, 201, "{body}");
    assert!(body.get("buyerId").is_none());
}

#[tokio::test]
async fn an_admitted_buyer_joining_again_gets_its_own_admission_back() {
    let app = fresh_app().await;
    let ev = event(&app, 5, 300).await;
    // Open, and pacing one a second: the first joiner is admitted on the spot.
    assert_eq!(
        put_queue(&app, &ev, &verified_queue(-5_000, 60)).await.0,
        200
    );
    let token = buyer_token(&ev, "user:7");
    let (status, first) = join_as_buyer(&app, &ev, &token).await;
    assert_eq!(
        (status, &first["status"]),
        (201, &json!("ADMITTED")),
        "{first}"
    );
    let admission = claims_of(first["admissionToken"].as_str().unwrap());
    assert!(
        !admission.to_string().contains("user:7"),
        "an admission names no buyer: {admission}"
    );
    assert_eq!(admission["sub"], first["visitorId"]);
    let (status, again) = join_as_buyer(&app, &ev, &buyer_token(&ev, "user:7")).await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["status"], "ADMITTED");
    assert_eq!(again["visitorId"], first["visitorId"]);
    assert_eq!(again["joinedAt"], first["joinedAt"]);
    let again_admission = claims_of(again["admissionToken"].as_str().unwrap());
    assert_eq!(
        again_admission["jti"], admission["jti"],
        "the same admission"
    );
    // Both visitor tokens work.
    for reply in [&first, &again] {
        assert_eq!(visitor_status(&app, &ev, &visitor_of(reply)).await.0, 200);
    }
}

/// On an event with a buyer limit, an admission of a verified queue opens
/// an order of its buyer without a buyer token, though the admission
/// names no buyer: create-order reads it from the visitor. A token naming
/// another buyer is refused.
#[tokio::test]
async fn an_admission_opens_its_buyers_order_without_naming_the_buyer() {
    let app = fresh_app().await;
    let plan = json!({"name": "Limited", "holdSeconds": 300, "buyerLimit": 2,
        "sections": [{"sectionId": "A", "rows": [{"row": "1", "count": 5}]}]});
    let (ev, _) = common::create_event(&app, "bq", &plan.to_string()).await;
    assert_eq!(
        put_queue(&app, &ev, &verified_queue(-5_000, 60)).await.0,
        200
    );
    let (status, joined) = join_as_buyer(&app, &ev, &buyer_token(&ev, "user:7")).await;
    assert_eq!(
        (status, &joined["status"]),
        (201, &json!("ADMITTED")),
        "{joined}"
    );
    let admission = joined["admissionToken"].as_str().unwrap();
    assert!(!claims_of(admission).to_string().contains("user:7"));
    let (status, order) = order_with(&app, &ev, admission, None).await;
    assert_eq!(status, 201, "{order}");
    let (_, read) = common::get_order(&app, &common::TestOrder::from_reply(&order)).await;
    assert_eq!(read["buyerId"], "user:7", "{read}");
    let auth = format!("Bearer {admission}");
    let other = buyer_token(&ev, "user:8");
    let (status, body) = call(
        &app,
        "POST",
        &format!("/events/{ev}/orders"),
        &[("authorization", &auth), ("x-buyer-token", &other)],
        "{}",
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str(), common::reason(&body)),
        (401, Some("buyer-token-invalid"), "buyer-not-admitted"),
        "another buyer's token under this admission"
    );
    // Its visitor gone, the admission names no one: refused, whatever
    // buyer a token would name.
    let event_id = shared::domain::EventId::parse(&ev).unwrap();
    let visitor = shared::domain::VisitorId::parse(joined["visitorId"].as_str().unwrap()).unwrap();
    common::delete_raw_item(&app, shared::store::visitor_item_key(&event_id, &visitor)).await;
    let mine = buyer_token(&ev, "user:7");
    let (status, body) = call(
        &app,
        "POST",
        &format!("/events/{ev}/orders"),
        &[("authorization", &auth), ("x-buyer-token", &mine)],
        "{}",
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str(), common::reason(&body)),
        (401, Some("unauthorized"), "admission-visitor-unknown"),
        "{body}"
    );
}

#[tokio::test]
async fn who_may_join_changes_only_before_anyone_has() {
    let app = fresh_app().await;
    let ev = event(&app, 5, 300).await;
    let bad = json!({"opensAt": "2030-01-01T00:00:00Z", "admitPerMinute": 60, "buyers": "vip"});
    let (status, body) = put_queue(&app, &ev, &bad.to_string()).await;
    assert_eq!((status, body["error"].as_str()), (400, Some("bad-request")));
    let (_, put) = put_queue(&app, &ev, &queue_body(HOUR_MS, 60)).await;
    assert_eq!(put["buyers"], "anonymous", "a new queue is anonymous");
    let (status, put) = put_queue(&app, &ev, &verified_queue(HOUR_MS, 60)).await;
    assert_eq!((status, &put["buyers"]), (200, &json!("verified")));
    assert_eq!(put["generation"], 2, "a new rule, a new generation");
    let (_, put) = put_queue(&app, &ev, &queue_body(HOUR_MS, 90)).await;
    assert_eq!(put["buyers"], "verified", "left out, it is kept");
    // Once somebody has joined, it stays.
    let (status, _) = join_as_buyer(&app, &ev, &buyer_token(&ev, "user:1")).await;
    assert_eq!(status, 201);
    let mut anonymous: Value = serde_json::from_str(&queue_body(HOUR_MS, 90)).unwrap();
    anonymous["buyers"] = json!("anonymous");
    let (status, body) = put_queue(&app, &ev, &anonymous.to_string()).await;
    assert_eq!((status, body["error"].as_str()), (409, Some("queue-open")));
    assert_eq!(get_queue(&app, &ev).await.1["buyers"], "verified");
    // A new generation chooses again.
    assert_eq!(delete_queue(&app, &ev).await.0, 200);
    let (_, put) = put_queue(&app, &ev, &queue_body(HOUR_MS, 90)).await;
    assert_eq!(put["buyers"], "anonymous");
}

#[tokio::test]
async fn the_dev_servers_sign_in_mints_tokens_only_for_its_own_key() {
    let app = fresh_app().await;
    let ev = event(&app, 5, 300).await;
    assert_eq!(
        put_queue(&app, &ev, &verified_queue(HOUR_MS, 60)).await.0,
        200
    );
    let asked = json!({"eventId": ev, "buyerId": "dev:ann", "seconds": 60}).to_string();
    let (status, minted) = common::read(local::dev_routes::buyer_token(&app, asked.as_bytes()));
    assert_eq!(status, 200, "{minted}");
    let token = minted["buyerToken"].as_str().unwrap();
    let claims = claims_of(token);
    assert_eq!(
        (claims["exp"].as_i64().unwrap() - claims["iat"].as_i64().unwrap()),
        60
    );
    let (status, joined) = join_as_buyer(&app, &ev, token).await;
    assert_eq!((status, &joined["buyerId"]), (201, &json!("dev:ann")));
    for bad in [
        json!({"eventId": ev, "buyerId": "a@b.example"}),
        json!({"eventId": ev, "buyerId": "ann", "seconds": 3_601}),
        json!({"buyerId": "ann"}),
    ] {
        let (status, _) = common::read(local::dev_routes::buyer_token(
            &app,
            bad.to_string().as_bytes(),
        ));
        assert_eq!(status, 400, "{bad}");
    }
    // A dev server told the seller's own keys mints nothing.
    let mut seller = app.clone();
    let keys = shared::admission::SigningKeys::parse(
        &json!({"keys": [{"kty": "EC", "crv": "P-256", "kid": "seller",
            "d": "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE"}]})
        .to_string(),
    )
    .unwrap();
    seller.config.buyer_keys = Some(shared::buyer::BuyerKeys::new(keys.verify_keys(), "shop"));
    let (status, _) = common::read(local::dev_routes::buyer_token(&seller, asked.as_bytes()));
    assert_eq!(status, 404);
}

/// One place per buyer for the generation's whole life: a visitor's item
/// is kept until a day past its generation's end (90 days after the queue
/// was first put), not from its join; an opening later than 60 days after
/// that is refused. Once the generation has ended, and TTL has taken the
/// buyer's item, the queue answers as removed: the buyer cannot take a
/// second place in it, and a put starts the next generation.
#[tokio::test]
async fn a_buyers_place_lasts_its_generations_whole_life() {
    const DAY_MS: i64 = 86_400_000;
    let app = fresh_app().await;
    let ev = event(&app, 5, 300).await;
    let before = shared::world::now();
    let (status, put) = put_queue(&app, &ev, &verified_queue(HOUR_MS, 60)).await;
    assert_eq!(status, 200, "{put}");
    let event_id = shared::domain::EventId::parse(&ev).unwrap();
    let stored = app.store.read_queue(&event_id).await.unwrap().unwrap();
    let state = stored.state.unwrap();
    let end = state.ends_at.expect("a new generation has an end").0;
    assert!((before.0 + 90 * DAY_MS..=shared::world::now().0 + 90 * DAY_MS).contains(&end));
    let (status, joined) = join_as_buyer(&app, &ev, &buyer_token(&ev, "user:5")).await;
    assert_eq!(status, 201, "{joined}");
    let visitor = shared::domain::VisitorId::parse(joined["visitorId"].as_str().unwrap()).unwrap();
    let key = shared::store::visitor_item_key(&event_id, &visitor);
    let item = common::raw_item(&app, key.clone()).await;
    let ttl: i64 = item[shared::store::TTL].as_n().unwrap().parse().unwrap();
    assert_eq!(
        ttl,
        end / 1_000 + DAY_MS / 1_000,
        "a day past the end, not past the join"
    );

    // An opening past 60 days after the first put: refused.
    let late = {
        let opens = chrono::DateTime::from_timestamp_millis(end - 30 * DAY_MS + 60_000).unwrap();
        json!({"opensAt": opens.to_rfc3339(), "admitPerMinute": 60, "buyers": "verified"})
    };
    let (status, body) = put_queue(&app, &ev, &late.to_string()).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("bad-request")),
        "{body}"
    );

    // The end comes (the state's end moved to the past, as time would),
    // then TTL takes the buyer's item.
    let ended = shared::domain::queue_state::QueueState {
        ends_at: Some(shared::domain::Millis(shared::world::now().0 - 1)),
        version: state.version + 1,
        ..state.clone()
    };
    assert!(app
        .store
        .put_queue(&event_id, &ended, Some(state.version))
        .await
        .unwrap());
    common::delete_raw_item(&app, key).await;
    let later = app.new_process();
    assert_eq!(
        get_queue(&later, &ev).await.1["error"],
        "queue-not-found",
        "an ended generation answers as removed"
    );
    let (status, body) = join_as_buyer(&later, &ev, &buyer_token(&ev, "user:5")).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (404, Some("queue-not-found")),
        "no second place in the generation: {body}"
    );
    let (status, put) = put_queue(&later, &ev, &verified_queue(HOUR_MS, 60)).await;
    assert_eq!(
        (status, &put["generation"]),
        (200, &json!(state.generation + 1)),
        "{put}"
    );
}
