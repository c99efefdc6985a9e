//! Hold tokens authenticate themselves (docs/API.md, "Hold tokens"): a
//! token not issued for the order in the path is refused in memory, with
//! no request to the store, whether or not the order exists.

use crate::common;

use common::*;
use local::metrics::RequestCounter;
use serde_json::{json, Value};
use shared::auth::{HoldToken, HoldTokenKeys};
use shared::domain::{EventId, OrderId};
use testkit::fresh_app_counting;

/// A key nobody configured: 32 bytes, base64.
const STRANGE_KEY: &str = "c2VhdGNsYWltLXRlc3QtaG9sZC1rZXktQS0zMi1ieXQ=";

/// Every route that takes a hold token, sent with `o`'s: the statuses and
/// error codes.
async fn every_holder_route(app: &shared::App, o: &TestOrder) -> Vec<(String, u16, Value)> {
    let auth = o.auth();
    let headers = [("authorization", auth.as_str())];
    let id = &o.id;
    let routes = [
        ("GET", format!("/orders/{id}"), ""),
        ("POST", format!("/orders/{id}/extend"), r#"{"seconds": 60}"#),
        ("DELETE", format!("/orders/{id}"), ""),
        ("POST", format!("/orders/{id}/seats/A-1-2"), ""),
        ("DELETE", format!("/orders/{id}/seats/A-1-1"), ""),
        (
            "POST",
            format!("/orders/{id}/best-available"),
            r#"{"quantity": 1}"#,
        ),
        ("PUT", format!("/orders/{id}/ga/A"), r#"{"quantity": 1}"#),
    ];
    let mut replies = Vec::new();
    for (method, path, body) in routes {
        let (status, reply) = call(app, method, &path, &headers, body).await;
        replies.push((format!("{method} {path}"), status, reply));
    }
    replies
}

#[tokio::test]
async fn a_token_not_issued_for_the_order_is_refused_without_a_store_request() {
    let counter = RequestCounter::default();
    let app = fresh_app_counting(Some(counter.clone())).await;
    let ev = event(&app, 4, 300).await;
    let buyer = order(&app, &ev).await;
    let other = order(&app, &ev).await;
    assert_eq!(claim(&app, &buyer, "A-1-1").await.0, 200);

    let event_id = EventId::parse(&ev).unwrap();
    let made_up = OrderId::from_random(&event_id, shared::world::random_u128().unwrap());
    let secret = HoldToken::generate(&event_id, shared::world::now().plus_seconds(300)).unwrap();
    let strange = HoldTokenKeys::parse(STRANGE_KEY).unwrap();
    let (unsigned, mac) = buyer.token.rsplit_once('~').unwrap();
    let flipped = format!("{unsigned}~{}", mac.replace(|c| c != '0', "0"));
    let forgeries = [
        (
            "a made-up order, signed by another key",
            made_up.as_str(),
            strange.encode(&made_up, &secret),
        ),
        (
            "another order's token",
            other.id.as_str(),
            buyer.token.clone(),
        ),
        ("a changed MAC", buyer.id.as_str(), flipped),
        (
            "the token without its MAC",
            buyer.id.as_str(),
            unsigned.to_owned(),
        ),
    ];
    counter.take();
    for (what, id, token) in forgeries {
        let forged = TestOrder {
            id: id.to_owned(),
            token,
            ..buyer.clone()
        };
        for (route, status, reply) in every_holder_route(&app, &forged).await {
            assert_eq!(
                (status, reply["error"].as_str()),
                (401, Some("unauthorized")),
                "{what}: {route}: {reply}"
            );
        }
        let sent = counter.take();
        assert!(sent.is_empty(), "{what}: requests to the store: {sent:?}");
    }
    // The buyer's own token still opens its order, which nothing changed.
    let (status, body) = get_order(&app, &buyer).await;
    assert_eq!((status, &body["seats"]), (200, &json!(["A-1-1"])), "{body}");
}

#[tokio::test]
async fn a_token_issued_for_an_order_that_is_gone_is_404() {
    let app = testkit::fresh_app().await;
    let ev = event(&app, 2, 300).await;
    let event_id = EventId::parse(&ev).unwrap();
    let made_up = OrderId::from_random(&event_id, shared::world::random_u128().unwrap());
    let secret = HoldToken::generate(&event_id, shared::world::now().plus_seconds(300)).unwrap();
    let ghost = TestOrder {
        id: made_up.to_string(),
        token: local::apps::dev_hold_token_keys().encode(&made_up, &secret),
        expires_at: String::new(),
        created_at: String::new(),
    };
    for (route, status, reply) in every_holder_route(&app, &ghost).await {
        assert_eq!(
            (status, reply["error"].as_str()),
            (404, Some("order-not-found")),
            "{route}: {reply}"
        );
    }
}
