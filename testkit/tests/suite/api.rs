//! Every route of the contract against a real DynamoDB Local: replies,
//! status codes and error codes.

use crate::common;

use common::*;
use serde_json::json;
use shared::domain::Millis;

#[tokio::test]
async fn create_event_replies_and_refuses_a_taken_id() {
    let app = fresh_app().await;
    let body = plan(&[("A", "1", 20), ("A", "2", 20), ("B", "1", 10)], Some(300));
    let (status, reply) = call(&app, "PUT", "/events/gala-2026", &[], &body).await;
    assert_eq!(status, 201);
    let created = json!({"eventId": "gala-2026", "name": "Test event", "holdSeconds": 300, "seatCount": 50, "gaCapacity": 0, "status": "READY"});
    assert_eq!(reply, created);
    // The same plan again is a retry: the same answer, nothing rewritten.
    assert_eq!(
        call(&app, "PUT", "/events/gala-2026", &[], &body).await,
        (201, created)
    );
    // Another plan under the taken id: name, hold time, sections or their order.
    let reordered = plan(&[("B", "1", 10), ("A", "1", 20), ("A", "2", 20)], Some(300));
    let renamed = body.replace("Test event", "Other event");
    for other in [
        plan(&[("A", "1", 1)], None),
        plan(&[("A", "1", 20), ("A", "2", 20), ("B", "1", 10)], Some(301)),
        reordered,
        renamed,
    ] {
        let (status, reply) = call(&app, "PUT", "/events/gala-2026", &[], &other).await;
        assert_eq!(
            (status, reply["error"].as_str()),
            (409, Some("event-exists")),
            "{other}"
        );
    }
}

#[tokio::test]
async fn create_event_defaults_hold_seconds_from_config() {
    let app = fresh_app().await;
    let (status, reply) = call(
        &app,
        "PUT",
        "/events/e1",
        &[],
        &plan(&[("A", "1", 1)], None),
    )
    .await;
    assert_eq!(status, 201);
    assert_eq!(reply["holdSeconds"], 420);
}

#[tokio::test]
async fn bad_event_plans_are_400_and_write_nothing() {
    let app = fresh_app().await;
    let too_big = plan(&[("A", "1", 100_001)], None);
    let cases = [
        ("/events/e1", "not json"),
        ("/events/e1", "[]"),
        ("/events/e1", r#"["G", null, [["A", [["1", 2]]]]]"#),
        ("/events/e1", "null"),
        ("/events/e1", r#"{"name": 5, "sections": []}"#),
        (
            "/events/e1",
            r#"{"sections": [{"sectionId": "A", "rows": [{"row": "1", "count": 1}]}]}"#,
        ),
        (
            "/events/e1",
            r#"{"name": "x", "sections": [{"sectionId": "A", "rows": [{"row": "1", "count": "3"}]}]}"#,
        ),
        (
            "/events/e1",
            r#"{"name": "x", "sections": [{"sectionId": "A", "rows": [{"row": "1", "count": 1.5}]}]}"#,
        ),
        (
            "/events/e1",
            r#"{"name": "x", "sections": [{"sectionId": "A#B", "rows": [{"row": "1", "count": 1}]}]}"#,
        ),
        (
            "/events/e1",
            r#"{"name": "x", "holdSeconds": 0, "sections": [{"sectionId": "A", "rows": [{"row": "1", "count": 1}]}]}"#,
        ),
        (
            "/events/e1",
            r#"{"name": "x", "holdSeconds": 7201, "sections": [{"sectionId": "A", "rows": [{"row": "1", "count": 1}]}]}"#,
        ),
        (
            "/events/e1",
            r#"{"name": "x", "holdSeconds": -1, "sections": [{"sectionId": "A", "rows": [{"row": "1", "count": 1}]}]}"#,
        ),
        (
            "/events/e1",
            r#"{"name": "x", "sections": [{"sectionId": "A", "rows": [{"row": "1", "count": 99999999999}]}]}"#,
        ),
        ("/events/e1", ""),
        ("/events/e1", &too_big),
        (
            "/events/bad%23id",
            r#"{"name": "x", "sections": [{"sectionId": "A", "rows": [{"row": "1", "count": 1}]}]}"#,
        ),
        (
            "/events/a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.0.1.2.3.4.5.6",
            r#"{"name": "x", "sections": [{"sectionId": "A", "rows": [{"row": "1", "count": 1}]}]}"#,
        ),
    ];
    for (path, body) in cases {
        let (status, reply) = call(&app, "PUT", path, &[], body).await;
        assert_eq!(status, 400, "{path} {body}: {reply}");
        assert_eq!(reply["error"], "bad-request");
    }
    // Nothing was written: the event does not exist.
    let (status, reply) = call(&app, "GET", "/events/e1/seats", &[], "").await;
    assert_eq!(
        (status, reply["error"].as_str()),
        (404, Some("event-not-found"))
    );
}

#[tokio::test]
async fn oversized_bodies_are_413() {
    let app = fresh_app().await;
    let huge = format!(
        r#"{{"name": "{}", "sections": []}}"#,
        "x".repeat(shared::http::MAX_BODY_BYTES)
    );
    let (status, reply) = call(&app, "PUT", "/events/e1", &[], &huge).await;
    assert_eq!(
        (status, reply["error"].as_str()),
        (413, Some("payload-too-large"))
    );
}

#[tokio::test]
async fn list_seats_by_event_and_section_without_revealing_orders() {
    let app = fresh_app().await;
    let body = plan(
        &[
            ("A", "1", 2),
            ("A", "10", 1),
            ("A", "9", 1),
            ("A-1", "2", 1),
        ],
        None,
    );
    assert_eq!(call(&app, "PUT", "/events/e1", &[], &body).await.0, 201);
    let o = order(&app, "e1").await;
    assert_eq!(claim(&app, &o, "A-1-2").await.0, 200);

    let (status, reply) = call(&app, "GET", "/events/e1/seats", &[], "").await;
    assert_eq!(status, 200);
    assert_eq!(reply["eventId"], "e1");
    let ids: Vec<_> = reply["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["seatId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        ids,
        ["A-1-1", "A-1-2", "A-10-1", "A-9-1", "A-1-2-1"],
        "plan order: rows as the plan lists them"
    );
    let text = reply.to_string();
    assert!(
        !text.contains(&o.id) && !text.contains(&o.token),
        "never reveals orders or tokens"
    );
    assert_eq!(
        reply["seats"][1],
        json!({"seatId": "A-1-2", "sectionId": "A", "row": "1", "number": 2, "status": "HELD"})
    );
    assert_eq!(reply["seats"][0]["status"], "AVAILABLE");

    // Section A does not include section A-1, whose seat ids share the prefix.
    let (_, reply) = call(&app, "GET", "/events/e1/seats?section=A", &[], "").await;
    assert_eq!(reply["seats"].as_array().unwrap().len(), 4);
    let (_, reply) = call(&app, "GET", "/events/e1/seats?section=A-1", &[], "").await;
    assert_eq!(reply["seats"].as_array().unwrap().len(), 1);
    let (status, reply) = call(&app, "GET", "/events/e1/seats?section=Z", &[], "").await;
    assert_eq!(
        (status, reply["error"].as_str()),
        (404, Some("section-not-found"))
    );
    let (status, _) = call(&app, "GET", "/events/e1/seats?section=a%23b", &[], "").await;
    assert_eq!(status, 400);
    let (status, reply) = call(&app, "GET", "/events/nope/seats?section=A", &[], "").await;
    assert_eq!(
        (status, reply["error"].as_str()),
        (404, Some("event-not-found"))
    );
}

#[tokio::test]
async fn create_order_replies_with_a_token_and_expiry() {
    let app = fresh_app().await;
    let ev = event(&app, 3, 300).await;
    let before = chrono::Utc::now();
    let (status, reply) = call(
        &app,
        "POST",
        &format!("/events/{ev}/orders"),
        &[],
        r#"{"userId": "user@example.com"}"#,
    )
    .await;
    assert_eq!(status, 201, "{reply}");
    assert_eq!(reply["status"], "PENDING");
    assert_eq!(reply["eventId"], ev.as_str());
    let expires: chrono::DateTime<chrono::Utc> =
        reply["expiresAt"].as_str().unwrap().parse().unwrap();
    let held = (expires - before).num_milliseconds();
    assert!(
        (299_000..=301_000).contains(&held),
        "expiresAt is now + holdSeconds, got {held} ms"
    );
    assert!(reply["expiresAt"].as_str().unwrap().ends_with('Z'));
    let created: chrono::DateTime<chrono::Utc> =
        reply["createdAt"].as_str().unwrap().parse().unwrap();
    assert!(
        (created - before).num_milliseconds().abs() < 1_000,
        "createdAt is now"
    );
    assert_eq!(
        (expires - created).num_milliseconds(),
        300_000,
        "expiresAt = createdAt + holdSeconds"
    );
    let token = reply["holdToken"].as_str().unwrap();
    assert!(token.len() >= 64, "at least 128 random bits");
    // Only a hash of the token is stored.
    let stored = stored_order(&app, reply["orderId"].as_str().unwrap()).await;
    assert_ne!(stored.token_hash, token);
    assert!(!stored
        .token_hash
        .contains(token.rsplit('~').next().unwrap()));
    assert_eq!(stored.user_id.as_deref(), Some("user@example.com"));

    // An empty body is `{}`.
    assert_eq!(
        call(&app, "POST", &format!("/events/{ev}/orders"), &[], "")
            .await
            .0,
        201
    );
    for bad in [
        "nope",
        r#"{"userId": 5}"#,
        r#"{"userId": ""}"#,
        "[1]",
        "[]",
        r#"["x"]"#,
    ] {
        let (status, reply) = call(&app, "POST", &format!("/events/{ev}/orders"), &[], bad).await;
        assert_eq!(
            (status, reply["error"].as_str()),
            (400, Some("bad-request")),
            "{bad}"
        );
    }
    let (status, reply) = call(&app, "POST", "/events/nope/orders", &[], "{}").await;
    assert_eq!(
        (status, reply["error"].as_str()),
        (404, Some("event-not-found"))
    );
}

#[tokio::test]
async fn get_order_needs_its_token() {
    let app = fresh_app().await;
    let ev = event(&app, 5, 300).await;
    let o = order(&app, &ev).await;
    let other = order(&app, &ev).await;
    assert_eq!(claim(&app, &o, "A-1-3").await.0, 200);
    assert_eq!(claim(&app, &o, "A-1-1").await.0, 200);
    let (status, reply) = get_order(&app, &o).await;
    assert_eq!(status, 200);
    assert_eq!(
        reply,
        json!({"orderId": o.id, "eventId": ev, "status": "PENDING", "expiresAt": o.expires_at, "createdAt": o.created_at,
               "seats": ["A-1-1", "A-1-3"], "ga": []})
    );
    let path = format!("/orders/{}", o.id);
    for headers in [
        vec![],
        vec![("authorization", other.auth())],
        vec![("authorization", "Bearer nonsense".to_owned())],
        vec![("authorization", o.token.clone())],
    ] {
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let (status, reply) = call(&app, "GET", &path, &headers, "").await;
        assert_eq!(
            (status, reply["error"].as_str()),
            (401, Some("unauthorized"))
        );
    }
    // An order nobody has, with a token issued for it: 404. With a token
    // that was not (this order's, on another id): 401, unread.
    let (status, reply) = get_order(&app, &o.ghost()).await;
    assert_eq!(
        (status, reply["error"].as_str()),
        (404, Some("order-not-found"))
    );
    let (status, reply) = call(
        &app,
        "GET",
        "/orders/no-such-order",
        &[("authorization", &o.auth())],
        "",
    )
    .await;
    assert_eq!(
        (status, reply["error"].as_str()),
        (401, Some("unauthorized"))
    );
    let (status, _) = call(
        &app,
        "GET",
        "/orders/bad~id",
        &[("authorization", &o.auth())],
        "",
    )
    .await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn get_seat_claims_idempotently_and_says_why_not() {
    let app = fresh_app().await;
    let ev = event(&app, 12, 300).await;
    let a = order(&app, &ev).await;
    let b = order(&app, &ev).await;
    let (status, reply) = claim(&app, &a, "A-1-1").await;
    assert_eq!(status, 200);
    assert_eq!(
        reply,
        json!({"orderId": a.id, "seatId": "A-1-1", "status": "HELD", "expiresAt": a.expires_at})
    );
    // Claiming a seat the order holds already is 200 and changes nothing.
    assert_eq!(claim(&app, &a, "A-1-1").await.0, 200);
    assert_eq!(get_order(&app, &a).await.1["seats"], json!(["A-1-1"]));

    let expect = |r: (u16, serde_json::Value), status: u16, code: &str| {
        assert_eq!(
            (r.0, r.1["error"].as_str()),
            (status, Some(code)),
            "{}",
            r.1
        );
    };
    // A hold token refused, with the rule it broke.
    let refused = |r: (u16, serde_json::Value), reason: &str| {
        assert_eq!(
            (r.0, r.1["error"].as_str(), common::reason(&r.1)),
            (401, Some("unauthorized"), reason),
            "{}",
            r.1
        );
    };
    expect(claim(&app, &b, "A-1-1").await, 409, "seat-held");
    expect(claim(&app, &b, "A-1-99").await, 404, "seat-not-found");
    expect(claim(&app, &b, "B-1-1").await, 404, "seat-not-found");
    expect(
        claim(&app, &b.ghost(), "A-1-2").await,
        404,
        "order-not-found",
    );
    let stranger = TestOrder {
        id: "no-such-order".into(),
        ..b.clone()
    };
    refused(claim(&app, &stranger, "A-1-2").await, "hold-token-mac");
    let forged = TestOrder {
        token: a.token.clone(),
        ..b.clone()
    };
    refused(claim(&app, &forged, "A-1-2").await, "hold-token-mac");
    // A token with an edited part opens nothing: the MAC covers every
    // part. One issued with an expiry the order does not have (as a token
    // from before an extension has) claims until the order's own expiry,
    // never the token's.
    let parts: Vec<&str> = b.token.split('~').collect();
    for token in [
        format!("other-event~{}~{}~{}", parts[1], parts[2], parts[3]),
        format!(
            "{}~{}~{}~{}",
            parts[0], 9_999_999_999_999u64, parts[2], parts[3]
        ),
    ] {
        let edited = TestOrder { token, ..b.clone() };
        refused(claim(&app, &edited, "A-1-12").await, "hold-token-mac");
    }
    // A token the server key signed for this order id, with a secret that
    // is not the order's: refused by the order itself, read or written.
    let stranger_secret = shared::auth::HoldToken::from_secret(
        b.hold_token().event_id(),
        b.hold_token().expires_at(),
        [7; 32],
    );
    let other_secret = TestOrder {
        token: local::apps::dev_hold_token_keys().encode(&b.order_id(), &stranger_secret),
        ..b.clone()
    };
    refused(
        claim(&app, &other_secret, "A-1-12").await,
        "hold-token-other-order",
    );
    refused(
        get_order(&app, &other_secret).await,
        "hold-token-other-order",
    );
    let far = b.hold_token().with_expiry(Millis(9_999_999_999_999));
    let issued_far = TestOrder {
        token: local::apps::dev_hold_token_keys().encode(&b.order_id(), &far),
        ..b.clone()
    };
    let (status, reply) = claim(&app, &issued_far, "A-1-12").await;
    assert_eq!(
        (status, reply["expiresAt"].as_str()),
        (200, Some(b.expires_at.as_str())),
        "{reply}"
    );
    assert_eq!(drop_seat(&app, &b, "A-1-12").await.0, 200);
    let missing = call(
        &app,
        "POST",
        &format!("/orders/{}/seats/A-1-2", b.id),
        &[],
        "",
    )
    .await;
    refused(missing, "hold-token-missing");
    // No token: 401 whether or not the order exists (nothing is read).
    let missing = call(&app, "POST", "/orders/no-such-order/seats/A-1-2", &[], "").await;
    refused(missing, "hold-token-missing");
    let basic = call(
        &app,
        "POST",
        &format!("/orders/{}/seats/A-1-2", b.id),
        &[("authorization", &format!("Basic {}", b.token))],
        "",
    )
    .await;
    refused(basic, "hold-token-malformed");
    let (status, _) = claim(&app, &b, "A-1-2%23x").await;
    assert_eq!(status, 400);

    // The seat limit (MAX_SEATS_PER_ORDER, 10 by default).
    for n in 2..=10 {
        assert_eq!(claim(&app, &a, &format!("A-1-{n}")).await.0, 200);
    }
    expect(claim(&app, &a, "A-1-11").await, 422, "seat-limit");
    assert_eq!(
        claim(&app, &a, "A-1-5").await.0,
        200,
        "re-claiming at the limit is still fine"
    );

    // Sold seats, and orders that are no longer pending.
    assert_eq!(confirm(&app, &a.id, "pi_1").await.0, 200);
    expect(claim(&app, &b, "A-1-1").await, 409, "seat-sold");
    expect(claim(&app, &a, "A-1-12").await, 409, "order-not-holdable");
}

/// A function without the keys a credential is checked with refuses it
/// as a deployment fault, naming it: hold tokens and payment signatures.
#[tokio::test]
async fn a_function_without_its_keys_says_so() {
    let mut app = fresh_app().await;
    let ev = event(&app, 2, 60).await;
    let o = order(&app, &ev).await;
    app.config.hold_token_keys = None;
    app.config.confirm_secrets = None;
    let (status, reply) = get_order(&app, &o).await;
    assert_eq!(
        (status, common::reason(&reply)),
        (401, "keys-not-configured"),
        "{reply}"
    );
    let body = confirm_body(&o.id, "pi_1", &["A-1-1".to_owned()]);
    let headers = signed(&body);
    let uri = format!("/orders/{}/confirm", o.id);
    let (status, reply) = call(&app, "POST", &uri, &as_refs(&headers), &body).await;
    assert_eq!(
        (status, common::reason(&reply)),
        (401, "keys-not-configured"),
        "{reply}"
    );
}

#[tokio::test]
async fn seat_limit_follows_config() {
    let mut app = fresh_app().await;
    app.config.max_seats_per_order = 2;
    let ev = event(&app, 3, 300).await;
    let o = order(&app, &ev).await;
    assert_eq!(claim(&app, &o, "A-1-1").await.0, 200);
    assert_eq!(claim(&app, &o, "A-1-2").await.0, 200);
    let (status, reply) = claim(&app, &o, "A-1-3").await;
    assert_eq!((status, reply["error"].as_str()), (422, Some("seat-limit")));
}

#[tokio::test]
async fn drop_seat_releases_only_what_the_order_holds() {
    let app = fresh_app().await;
    let ev = event(&app, 3, 300).await;
    let a = order(&app, &ev).await;
    let b = order(&app, &ev).await;
    assert_eq!(claim(&app, &a, "A-1-1").await.0, 200);
    let (status, reply) = drop_seat(&app, &b, "A-1-1").await;
    assert_eq!(
        (status, reply["error"].as_str()),
        (409, Some("seat-not-held"))
    );
    let (status, reply) = drop_seat(&app, &a, "A-1-1").await;
    assert_eq!(status, 200);
    assert_eq!(
        reply,
        json!({"orderId": a.id, "seatId": "A-1-1", "status": "AVAILABLE"})
    );
    assert_eq!(get_order(&app, &a).await.1["seats"], json!([]));
    let (status, reply) = drop_seat(&app, &a, "A-1-1").await;
    assert_eq!(
        (status, reply["error"].as_str()),
        (409, Some("seat-not-held"))
    );
    let (status, reply) = drop_seat(&app, &a, "A-1-77").await;
    assert_eq!(
        (status, reply["error"].as_str()),
        (404, Some("seat-not-found"))
    );
    // Freed at once: another order can claim it.
    assert_eq!(claim(&app, &b, "A-1-1").await.0, 200);
    let forged = TestOrder {
        token: a.token.clone(),
        ..b.clone()
    };
    let (status, _) = drop_seat(&app, &forged, "A-1-1").await;
    assert_eq!(status, 401);
    let (status, _) = call(
        &app,
        "DELETE",
        &format!("/orders/{}/seats/A-1-1", b.id),
        &[],
        "",
    )
    .await;
    assert_eq!(status, 401);
    assert_eq!(drop_seat(&app, &b.ghost(), "A-1-1").await.0, 404);
    // Completed orders' seats are not droppable.
    assert_eq!(confirm(&app, &b.id, "pi_b").await.0, 200);
    let (status, reply) = drop_seat(&app, &b, "A-1-1").await;
    assert_eq!(
        (status, reply["error"].as_str()),
        (409, Some("order-not-holdable"))
    );
}

#[tokio::test]
async fn expired_orders_read_expired_and_cannot_hold_or_drop() {
    let app = fresh_app().await;
    let ev = event(&app, 3, 1).await;
    let o = order(&app, &ev).await;
    assert_eq!(claim(&app, &o, "A-1-1").await.0, 200);
    let_holds_expire(1).await;
    let (status, reply) = get_order(&app, &o).await;
    assert_eq!(
        (status, reply["status"].as_str()),
        (200, Some("EXPIRED")),
        "before any sweep"
    );
    assert_eq!(reply["seats"], json!(["A-1-1"]));
    let (status, reply) = claim(&app, &o, "A-1-2").await;
    assert_eq!(
        (status, reply["error"].as_str()),
        (409, Some("order-not-holdable"))
    );
    let (status, reply) = drop_seat(&app, &o, "A-1-1").await;
    assert_eq!(
        (status, reply["error"].as_str()),
        (409, Some("order-not-holdable"))
    );
    let (_, listed) = call(&app, "GET", &format!("/events/{ev}/seats"), &[], "").await;
    assert_eq!(
        listed["seats"][0]["status"], "AVAILABLE",
        "an expired hold lists as AVAILABLE"
    );
}

#[tokio::test]
async fn confirm_sells_everything_once_and_is_idempotent() {
    let app = fresh_app().await;
    let ev = event(&app, 3, 300).await;
    let o = order(&app, &ev).await;
    assert_eq!(claim(&app, &o, "A-1-2").await.0, 200);
    assert_eq!(claim(&app, &o, "A-1-1").await.0, 200);
    let (status, reply) = confirm(&app, &o.id, "pi_123").await;
    assert_eq!(status, 200);
    assert_eq!(
        reply,
        json!({"orderId": o.id, "status": "COMPLETED", "seats": ["A-1-1", "A-1-2"], "ga": [], "paymentId": "pi_123"})
    );
    // The same webhook again: the same reply, nothing changes.
    assert_eq!(confirm(&app, &o.id, "pi_123").await, (200, reply.clone()));
    let (status, again) = confirm(&app, &o.id, "pi_other").await;
    assert_eq!(
        (status, again["error"].as_str()),
        (409, Some("already-completed"))
    );
    let (_, order_view) = get_order(&app, &o).await;
    assert_eq!(order_view["status"], "COMPLETED");
    assert_eq!(order_view["paymentId"], "pi_123");
    let (_, listed) = call(&app, "GET", &format!("/events/{ev}/seats"), &[], "").await;
    let statuses: Vec<_> = listed["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["status"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(statuses, ["SOLD", "SOLD", "AVAILABLE"]);
}

#[tokio::test]
async fn unknown_routes_and_methods_are_json_4xx() {
    let app = fresh_app().await;
    let (status, reply) = call(&app, "GET", "/nowhere", &[], "").await;
    assert_eq!((status, reply["error"].as_str()), (404, Some("not-found")));
    let resp = local::router::dispatch(
        &app,
        local::router::request(
            "PATCH",
            "/orders/o1/seats/A-1-1",
            &[],
            lambda_http::Body::Empty,
        ),
    )
    .await;
    assert_eq!(resp.headers()["allow"], "POST, DELETE");
    let (status, reply) = read(resp);
    assert_eq!(
        (status, reply["error"].as_str()),
        (405, Some("method-not-allowed"))
    );
}
