//! Every sample event in events/ runs through its handler, as `sam local
//! invoke` gives it (scripts/sam_local_invoke_test.py runs the same files
//! through SAM).

use crate::common;

use local::router::call;
use serde_json::Value;

const EXAMPLE_ORDER: &str = "3d2d2b34abc1b57393e6-3f1c2a9e7b4d4c8e9a1f0d2b6e5c7a81";
/// Issued for [`EXAMPLE_ORDER`] under the development hold token key.
const EXAMPLE_TOKEN: &str = concat!(
    "gala-2026~1795300000000~9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "~5f65066f0b45eff79cacd866fb294ebfd2a990a3787cab5eff0d63f9668a0d28"
);

#[test]
fn the_sample_hold_token_is_issued_for_the_sample_order() {
    let order = shared::domain::OrderId::parse(EXAMPLE_ORDER).unwrap();
    let keys = local::apps::dev_hold_token_keys();
    let token = keys.decode(&order, EXAMPLE_TOKEN);
    assert!(
        token.is_some(),
        "sam local invoke of a sample gets past the MAC"
    );
    let other = shared::domain::OrderId::parse("3d2d2b34abc1b57393e6-other").unwrap();
    assert!(keys.decode(&other, EXAMPLE_TOKEN).is_none());
}

/// events/<sample>.json: a route's name, or a function's not on HTTP.
pub(crate) fn event_text(sample: &str) -> String {
    std::fs::read_to_string(
        local::repo_root()
            .join("events")
            .join(format!("{sample}.json")),
    )
    .unwrap()
}

/// The function whose events/ file `sample` is.
fn function_of(sample: &str) -> &'static str {
    shared::routes::sample_names()
        .find(|(_, name)| *name == sample)
        .map(|(f, _)| f.name)
        .unwrap_or_else(|| panic!("no route or function named {sample}"))
}

/// events/<sample>.json (each `replace` made in turn) through its
/// function's Lambda entry point, as `sam local invoke` gives it.
async fn run_event(app: &shared::App, sample: &str, replace: &[(&str, &str)]) -> (u16, Value) {
    let mut text = event_text(sample);
    for (from, to) in replace {
        text = text.replace(from, to);
    }
    let req = lambda_http::request::from_str(&text)
        .unwrap_or_else(|e| panic!("events/{sample}.json: {e}"));
    common::read(call(function_of(sample), app, req).await)
}

/// Every route's sample names its route in `routeKey`, and its function,
/// given the sample, picks that route, with the key and (as a hand-written
/// invoke without one) by its method and path alike.
#[test]
fn every_routes_sample_picks_its_route() {
    for (function, sample) in shared::routes::sample_names() {
        let event: Value = serde_json::from_str(&event_text(sample)).unwrap();
        let Some(key) = event["routeKey"].as_str() else {
            assert!(function.routes().is_empty(), "events/{sample}.json");
            continue;
        };
        assert_eq!(Some(key), event["requestContext"]["routeKey"].as_str());
        let method = event["requestContext"]["http"]["method"].as_str().unwrap();
        let path = event["rawPath"].as_str().unwrap();
        for key in [Some(key), None] {
            let route = shared::routes::route_of(function, key, method, path).unwrap();
            assert_eq!(route.name, sample, "events/{sample}.json, key {key:?}");
        }
    }
}

/// events/confirm.json with its body naming `order` and `seat`, and its
/// Standard Webhooks headers signed now with the development secret.
async fn run_confirm_event_signed_now(app: &shared::App, order: &str, seat: &str) -> (u16, Value) {
    let mut event: Value = serde_json::from_str(&event_text("confirm")).unwrap();
    let mut body: Value = serde_json::from_str(event["body"].as_str().unwrap()).unwrap();
    assert_eq!(
        body["orderId"], EXAMPLE_ORDER,
        "the sample names the example order"
    );
    body["orderId"] = order.into();
    body["seats"] = serde_json::json!([seat]);
    let body = body.to_string();
    let path = event["rawPath"]
        .as_str()
        .unwrap()
        .replace(EXAMPLE_ORDER, order);
    event["rawPath"] = path.clone().into();
    event["requestContext"]["http"]["path"] = path.into();
    event["pathParameters"]["orderId"] = order.into();
    for (name, value) in local::apps::webhook_headers(&local::apps::dev_confirm_secrets(), &body) {
        assert!(
            event["headers"][name].is_string(),
            "the sample carries {name}"
        );
        event["headers"][name] = value.into();
    }
    event["headers"]["content-length"] = body.len().to_string().into();
    event["body"] = body.into();
    let req = lambda_http::request::from_str(&event.to_string()).unwrap();
    common::read(call("confirm", app, req).await)
}

/// events/stripe-payment.json naming `order`, signed now by Stripe's own
/// library with the development secret.
async fn run_stripe_event_signed_now(app: &shared::App, order: &str) -> (u16, Value) {
    let text = event_text("stripe-payment").replace(EXAMPLE_ORDER, order);
    let mut event: Value = serde_json::from_str(&text).unwrap();
    let body = event["body"].as_str().unwrap().to_owned();
    assert!(
        body.contains(order),
        "the sample's metadata names the example order"
    );
    event["headers"]["stripe-signature"] = common::stripe::stripe_signature(&body).into();
    let req = lambda_http::request::from_str(&event.to_string()).unwrap();
    common::read(call("stripe-payment", app, req).await)
}

#[tokio::test]
async fn every_event_file_runs_through_its_handler() {
    let app = common::fresh_app().await;
    let (status, body) = run_event(&app, "create-event", &[]).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["eventId"], "gala-2026");
    let (status, body) = run_event(&app, "get-event", &[]).await;
    assert_eq!(
        (status, &body["status"], &body["sections"][0]["kind"]),
        (200, &"READY".into(), &"seated".into()),
        "{body}"
    );
    let (status, body) = run_event(&app, "availability", &[]).await;
    assert_eq!(
        (status, body["sections"][0]["rows"][0]["statuses"].as_str()),
        (200, Some("A".repeat(20).as_str())),
        "{body}"
    );
    let (status, body) = run_event(&app, "list-seats", &[]).await;
    assert_eq!(status, 200, "{body}");
    assert!(body["seats"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["sectionId"] == "A"));
    let (status, order) = run_event(&app, "create-order", &[]).await;
    assert_eq!(status, 201, "{order}");
    let id = order["orderId"].as_str().unwrap();
    let token = order["holdToken"].as_str().unwrap();
    let real = [(EXAMPLE_ORDER, id), (EXAMPLE_TOKEN, token)];
    let (status, body) = run_event(&app, "get-seat", &real).await;
    assert_eq!(
        (status, body["status"].as_str()),
        (200, Some("HELD")),
        "{body}"
    );
    let seat = body["seatId"].as_str().unwrap().to_owned();
    let (status, body) = run_event(&app, "get-order", &real).await;
    assert_eq!(
        (status, body["seats"].clone()),
        (200, serde_json::json!([seat])),
        "{body}"
    );
    let (status, body) = run_event(&app, "extend-order", &real).await;
    assert_eq!(
        (status, body["orderId"].as_str()),
        (200, Some(id)),
        "{body}"
    );
    let (status, body) = run_event(&app, "best-available", &real).await;
    assert_eq!(
        (status, body["seats"].as_array().map(Vec::len)),
        (200, Some(2)),
        "{body}"
    );
    let (status, body) = run_event(&app, "hold-ga", &real).await;
    assert_eq!(
        (status, &body["quantity"]),
        (200, &serde_json::json!(2)),
        "{body}"
    );
    let (_, body) = run_event(&app, "get-order", &real).await;
    assert_eq!(
        body["ga"],
        serde_json::json!([{"sectionId": "FLOOR", "quantity": 2}]),
        "{body}"
    );
    let (status, body) = run_event(&app, "drop-seat", &real).await;
    assert_eq!(
        (status, body["status"].as_str()),
        (200, Some("AVAILABLE")),
        "{body}"
    );
    assert_eq!(run_event(&app, "get-seat", &real).await.0, 200);
    // The file is signed with the development secret at a fixed past
    // time, so as it stands it is refused (the 300 s tolerance); re-signed
    // now for the real order, as a payment backend would send it, it sells.
    let (status, body) = run_event(&app, "confirm", &real).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("unauthorized")),
        "a stale signature: {body}"
    );
    let (status, body) = run_confirm_event_signed_now(&app, id, &seat).await;
    assert_eq!(
        (status, body["status"].as_str(), body["seats"].clone()),
        (200, Some("COMPLETED"), serde_json::json!([seat])),
        "{body}"
    );

    // Stripe's sample, as it stands signed at a past time: refused. Signed
    // now, it pays the order confirm completed with another session: sold
    // nothing, recorded for refund, and 200 so that Stripe stops retrying.
    let (status, body) = run_event(&app, "stripe-payment", &real).await;
    assert_eq!(
        (status, common::reason(&body)),
        (401, "signature-timestamp"),
        "{body}"
    );
    let (status, body) = run_stripe_event_signed_now(&app, id).await;
    assert_eq!(
        (status, &body["outcome"], &body["error"], &body["refund"]),
        (
            200,
            &"not-sold".into(),
            &"already-completed".into(),
            &true.into()
        ),
        "{body}"
    );

    let (status, body) = run_event(&app, "cancel-order", &real).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (409, Some("order-not-cancellable")),
        "a completed order: {body}"
    );
    // Returns: a seat it did not buy (A-1-1), with no waitlist taking
    // returns: 409; a withdrawal of what it never listed answers the order
    // as it stands.
    let (status, body) = run_event(&app, "list-returns", &real).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (409, Some("returns-closed")),
        "{body}"
    );
    let seat_withdrawn = run_event(&app, "withdraw-return", &real).await;
    let places_withdrawn = run_event(&app, "withdraw-return-ga", &real).await;
    for (status, body) in [seat_withdrawn, places_withdrawn] {
        assert_eq!(
            (status, &body["status"], body.get("returns")),
            (200, &"COMPLETED".into(), None),
            "{body}"
        );
    }

    // The queue's files: put (open since the sample's past opening),
    // read, its draw list (get-queue's other GET), a join (admitted on the
    // spot) and its status, the JWKS, an admitter run, and the delete.
    let (status, body) = run_event(&app, "put-queue", &[]).await;
    assert_eq!((status, &body["status"]), (200, &"OPEN".into()), "{body}");
    let (status, body) = run_event(&app, "get-queue", &[]).await;
    assert_eq!(
        (status, &body["ordersPerAdmission"]),
        (200, &2.into()),
        "{body}"
    );
    let (status, body) = run_event(&app, "draw-list", &[]).await;
    assert_eq!(
        (
            status,
            body["entries"].is_array(),
            body["drawSeed"].is_string()
        ),
        (200, true, true),
        "draw-list's reply, not get-queue's: {body}"
    );
    let (status, body) = run_event(&app, "join-queue", &[]).await;
    assert_eq!(
        (status, &body["status"]),
        (201, &"ADMITTED".into()),
        "{body}"
    );
    let visitor = [
        (
            "EXAMPLE-VISITOR-TOKEN",
            body["visitorToken"].as_str().unwrap(),
        ),
        ("EXAMPLE-VISITOR", body["visitorId"].as_str().unwrap()),
    ];
    let (status, body) = run_event(&app, "visitor-status", &visitor).await;
    assert_eq!(
        (status, &body["status"], body.get("visitorToken")),
        (200, &"ADMITTED".into(), None),
        "{body}"
    );
    // Unchanged, the file's token is no visitor token.
    assert_eq!(run_event(&app, "visitor-status", &[]).await.0, 401);
    let (status, body) = run_event(&app, "admission-keys", &[]).await;
    assert_eq!(
        (status, &body["keys"][0]["alg"]),
        (200, &"ES256".into()),
        "{body}"
    );
    let scheduled: Value = serde_json::from_str(&event_text("admit-visitors")).unwrap();
    let mut admitter_app = local::iam::attributed(&app, "admit-visitors");
    admitter_app.config.admitter_run_seconds = 1;
    let run = shared::handlers::admit_visitors(
        &admitter_app,
        &tokio::sync::Mutex::default(),
        lambda_runtime::LambdaEvent::new(scheduled, lambda_runtime::Context::default()),
    )
    .await
    .unwrap();
    assert!(run.ticks >= 1 && run.queues >= 1, "{run:?}");
    let (status, body) = run_event(&app, "delete-queue", &[]).await;
    assert_eq!(
        (status, &body["status"]),
        (200, &"REMOVED".into()),
        "{body}"
    );

    // The waitlist's files: put (armed, to open at a sell-out), read, its
    // entries' files, end.
    let (status, body) = run_event(&app, "put-waitlist", &[]).await;
    assert_eq!(
        (status, &body["status"], &body["maxQuantity"]),
        (200, &"ARMED".into(), &4.into()),
        "{body}"
    );
    let (status, body) = run_event(&app, "get-waitlist", &[]).await;
    assert_eq!(
        (status, &body["opens"]),
        (200, &"sold-out".into()),
        "{body}"
    );
    waitlist_entry_files(&app).await;
    // The offerer's tick visits the open waitlist (the put listed it);
    // nobody waits any more, so nothing is offered.
    let scheduled: Value = serde_json::from_str(&event_text("offer-waitlists")).unwrap();
    let mut offerer_app = local::iam::attributed(&app, "offer-waitlists");
    offerer_app.config.offerer_run_seconds = 1;
    let run = shared::handlers::offer_waitlists(
        &offerer_app,
        &tokio::sync::Mutex::default(),
        lambda_runtime::LambdaEvent::new(scheduled, lambda_runtime::Context::default()),
    )
    .await
    .unwrap();
    assert!(
        run.ticks >= 1 && run.waitlists == 1 && run.offers == 0,
        "{run:?}"
    );
    let (status, body) = run_event(&app, "delete-waitlist", &[]).await;
    assert_eq!((status, &body["status"]), (200, &"ENDED".into()), "{body}");

    // Unchanged, the order routes' files name an order that does not exist.
    assert_eq!(run_event(&app, "get-order", &[]).await.0, 404);

    let scheduled: Value = serde_json::from_str(&event_text("expire-holds")).unwrap();
    assert_eq!(scheduled["detail-type"], "Scheduled Event");
    let invocation =
        lambda_runtime::LambdaEvent::new(scheduled, lambda_runtime::Context::default());
    let summary =
        shared::handlers::expire_holds(&local::iam::attributed(&app, "expire-holds"), invocation)
            .await
            .unwrap();
    let summary = serde_json::to_value(summary).unwrap();
    assert_eq!(
        summary,
        serde_json::json!({"expiredOrders": 0, "releasedSeats": 0, "releasedPlaces": 0})
    );

    // The stream sample: an order created, its seat and two places sold, the
    // order completed, each an event that stands alone.
    let records: Value = serde_json::from_str(&event_text("publish-events")).unwrap();
    let feed = local::feed::DevFeed::quiet();
    let out = shared::outbox::publish_records(&feed, &records, shared::world::now()).await;
    assert_eq!(
        (out.records, out.events, out.failed_records.len()),
        (4, 4, 0),
        "{out:?}"
    );
    let events: Vec<(String, Value)> = feed.events();
    let kinds: Vec<&str> = events.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        kinds,
        ["order.created", "seat.sold", "ga.sold", "order.completed"]
    );
    for (_, detail) in &events {
        assert_eq!(
            (detail["eventId"].as_str(), detail["orderId"].as_str()),
            (Some("gala-2026"), Some(EXAMPLE_ORDER))
        );
    }
    assert_eq!(
        (
            events[1].1["seatId"].as_str(),
            events[1].1["paymentId"].as_str()
        ),
        (Some("A-1-7"), Some("pi_3PexampleA1"))
    );
    assert_eq!(
        (
            events[2].1["sectionId"].as_str(),
            events[2].1["quantity"].as_u64()
        ),
        (Some("FLOOR"), Some(2))
    );
}

/// The buyer token in events/create-order.json: signed with the
/// development buyer key for the sample event, and long expired.
const SAMPLE_BUYER_TOKEN_EXPIRES: i64 = 1_795_300_180;

/// events/create-order.json on an event with a buyer limit: as it stands
/// its `X-Buyer-Token` (for the sample event, and expired) is refused and
/// nothing is written; with a token the seller's sign-in mints now for
/// that event, it opens an order naming the buyer, whose claims the limit
/// counts. On the sample event (no limit) the same header is ignored
/// (`every_event_file_runs_through_its_handler`).
#[tokio::test]
async fn the_create_order_sample_opens_a_buyers_order_on_a_limited_event() {
    let app = common::fresh_app().await;
    let event: Value = serde_json::from_str(&event_text("create-order")).unwrap();
    let sample_token = event["headers"]["x-buyer-token"].as_str().unwrap();
    let claims = common::queue::claims_of(sample_token);
    assert_eq!(
        common::queue::header_of(sample_token)["typ"],
        shared::buyer::BUYER_TOKEN_TYPE,
        "a buyer token as the seller's sign-in must sign it"
    );
    assert_eq!(
        (&claims["aud"], &claims["sub"], &claims["exp"]),
        (
            &"gala-2026".into(),
            &"user:42".into(),
            &SAMPLE_BUYER_TOKEN_EXPIRES.into()
        ),
        "{claims}"
    );
    let mut plan: Value = serde_json::from_str(
        serde_json::from_str::<Value>(&event_text("create-event")).unwrap()["body"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    plan["buyerLimit"] = 1.into();
    let (limited, _) = common::create_event(&app, "gala-limited", &plan.to_string()).await;
    let on_limited = [("gala-2026", limited.as_str())];
    let (status, body) = run_event(&app, "create-order", &on_limited).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("buyer-token-invalid")),
        "{body}"
    );
    let minted = common::buyer_token(&limited, "user:42");
    let with_token = [("gala-2026", limited.as_str()), (sample_token, &minted)];
    let (status, order) = run_event(&app, "create-order", &with_token).await;
    assert_eq!(status, 201, "{order}");
    let (id, token) = (
        order["orderId"].as_str().unwrap(),
        order["holdToken"].as_str().unwrap(),
    );
    local::invariants::remember_order(&app, id);
    // The sample hold token begins with the sample event's id: replaced
    // whole before the event's id is.
    let real = [
        (EXAMPLE_ORDER, id),
        (EXAMPLE_TOKEN, token),
        ("gala-2026", limited.as_str()),
    ];
    let (status, body) = run_event(&app, "get-order", &real).await;
    assert_eq!(
        (status, &body["buyerId"]),
        (200, &"user:42".into()),
        "{body}"
    );
    let (status, body) = run_event(&app, "get-seat", &real).await;
    assert_eq!((status, &body["status"]), (200, &"HELD".into()), "{body}");
    let (status, body) = run_event(&app, "best-available", &real).await;
    assert_eq!(
        (status, &body["error"], &body["limit"]),
        (409, &"buyer-limit".into(), &1.into()),
        "{body}"
    );
    testkit::assert_invariants(&app, &limited).await;
}

/// The waitlist's entry files on the sample event's armed waitlist, opened
/// now: a buyer joins (a token minted now for the file's, which is for the
/// sample event and expired), reads its entry and is listed; the organiser
/// removes it, and its leave then answers it as it stands.
async fn waitlist_entry_files(app: &shared::App) {
    let (status, body) = run_event(app, "put-waitlist", &[("sold-out", "now")]).await;
    assert_eq!((status, &body["status"]), (200, &"OPEN".into()), "{body}");
    let file: Value = serde_json::from_str(&event_text("join-waitlist")).unwrap();
    let sample_token = file["headers"]["x-buyer-token"].as_str().unwrap();
    let minted = common::buyer_token("gala-2026", "user:7");
    let (status, joined) = run_event(app, "join-waitlist", &[(sample_token, &minted)]).await;
    assert_eq!(
        (status, &joined["status"], &joined["quantity"]),
        (201, &"WAITING".into(), &2.into()),
        "{joined}"
    );
    let id = joined["entryId"].as_str().unwrap();
    let entry = [
        (
            "EXAMPLE-ENTRY-TOKEN",
            joined["entryToken"].as_str().unwrap(),
        ),
        ("EXAMPLE-ENTRY", id),
    ];
    let (status, body) = run_event(app, "entry-status", &entry).await;
    assert_eq!(
        (status, &body["status"], body.get("entryToken")),
        (200, &"WAITING".into(), None),
        "{body}"
    );
    // Unchanged, the file's token is no entry token.
    assert_eq!(run_event(app, "entry-status", &[]).await.0, 401);
    let (status, body) = run_event(app, "list-entries", &[]).await;
    assert_eq!(
        (
            status,
            &body["entries"][0]["entryId"],
            body["entries"][0].get("entryToken")
        ),
        (200, &id.into(), None),
        "{body}"
    );
    let (status, body) = run_event(app, "remove-entry", &entry).await;
    assert_eq!(
        (status, &body["status"], &body["reason"]),
        (200, &"ENDED".into(), &"removed".into()),
        "{body}"
    );
    let (status, body) = run_event(app, "leave-waitlist", &entry).await;
    assert_eq!(
        (status, &body["reason"]),
        (200, &"removed".into()),
        "{body}"
    );
}
