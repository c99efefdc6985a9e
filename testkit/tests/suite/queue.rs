//! The on-sale queue on DynamoDB Local: the operator's routes, joining
//! and being admitted, admissions as ES256 tokens anyone can verify from
//! the JWKS, create-order under a queue, and the queue's order and pace
//! (the admitter ticks at instants the test chooses: no waiting).

use crate::common;

use common::queue::*;
use common::{call, create_event, event, fresh_app, plan};
use serde_json::{json, Value};
use shared::admission::{SigningKeys, VerifyKeys};
use shared::admitter::Admitter;
use shared::domain::queue::DEFAULT_DRAW_SETTLE_MS;
use shared::domain::{EventId, Millis, OrderId};

#[tokio::test]
async fn the_operator_puts_reads_and_removes_a_queue() {
    let app = fresh_app().await;
    let ev = event(&app, 5, 300).await;
    for (status, body) in [
        put_queue(&app, "nope", &queue_body(0, 60)).await,
        get_queue(&app, "nope").await,
        delete_queue(&app, "nope").await,
        call(&app, "POST", "/events/nope/queue/visitors", &[], "").await,
    ] {
        assert_eq!(
            (status, body["error"].as_str()),
            (404, Some("event-not-found")),
            "{body}"
        );
    }
    let (status, body) = get_queue(&app, &ev).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (404, Some("queue-not-found"))
    );
    let (status, body) = call(
        &app,
        "POST",
        &format!("/events/{ev}/queue/visitors"),
        &[],
        "",
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (404, Some("queue-not-found"))
    );
    let opens_at = Millis(shared::world::now().0 + HOUR_MS).to_rfc3339();
    for bad in [
        "[]".to_owned(),
        "{}".to_owned(),
        json!({"opensAt": "soon", "admitPerMinute": 60}).to_string(),
        json!({"opensAt": opens_at, "admitPerMinute": 0}).to_string(),
        json!({"opensAt": opens_at, "admitPerMinute": 1_000_001}).to_string(),
        json!({"opensAt": opens_at, "admitPerMinute": 1.5}).to_string(),
        json!({"opensAt": opens_at, "admitPerMinute": 60, "admissionSeconds": 59}).to_string(),
        json!({"opensAt": opens_at, "admitPerMinute": 60, "ordersPerAdmission": 11}).to_string(),
    ] {
        let (status, body) = put_queue(&app, &ev, &bad).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("bad-request")),
            "{bad}: {body}"
        );
    }
    assert_eq!(
        get_queue(&app, &ev).await.0,
        404,
        "a refused put writes nothing"
    );

    let body = json!({"opensAt": opens_at, "admitPerMinute": 120, "ordersPerAdmission": 2});
    let (status, put) = put_queue(&app, &ev, &body.to_string()).await;
    assert_eq!(status, 200, "{put}");
    let commitment = put["drawCommitment"].as_str().unwrap_or_default();
    assert!(commitment.len() == 64 && commitment.bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(
        put,
        json!({"eventId": ev, "opensAt": opens_at, "admitPerMinute": 120, "admissionSeconds": 600,
               "ordersPerAdmission": 2, "buyers": "anonymous", "status": "SCHEDULED", "waiting": 0, "admitted": 0,
               "generation": 1, "lateDrawn": 0, "drawCommitment": commitment})
    );
    assert_eq!(get_queue(&app, &ev).await, (200, put));
    // Before it opens, the opening moves; a new pace applies at once.
    let later = Millis(shared::world::now().0 + 2 * HOUR_MS).to_rfc3339();
    let (status, moved) = put_queue(
        &app,
        &ev,
        &json!({"opensAt": later, "admitPerMinute": 30}).to_string(),
    )
    .await;
    assert_eq!(
        (status, &moved["opensAt"], &moved["admitPerMinute"]),
        (200, &json!(later), &json!(30))
    );
    // Open now: the opening no longer moves, the pace still does.
    let (status, _) = put_queue(&app, &ev, &queue_body(-5_000, 30)).await;
    assert_eq!(
        status, 200,
        "an opening still in the future moves into the past"
    );
    let (status, body) = put_queue(&app, &ev, &queue_body(HOUR_MS, 30)).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (409, Some("queue-open")),
        "{body}"
    );
    let (_, open) = get_queue(&app, &ev).await;
    assert_eq!(open["status"], "OPEN");
    // Moved from two hours ahead to a second ago: admission starts now.
    let first = join(&app, &ev).await;
    assert_eq!(first.joined["status"], "ADMITTED", "{}", first.joined);
    let same = json!({"opensAt": open["opensAt"], "admitPerMinute": 90}).to_string();
    assert_eq!(put_queue(&app, &ev, &same).await.1["admitPerMinute"], 90);

    for _ in 0..2 {
        let (status, body) = delete_queue(&app, &ev).await;
        assert_eq!(
            (status, body),
            (200, json!({"eventId": ev, "status": "REMOVED"}))
        );
    }
    assert_eq!(get_queue(&app, &ev).await.1["error"], "queue-not-found");
    // Without a queue, create-order is as before.
    let (status, _) = call(&app, "POST", &format!("/events/{ev}/orders"), &[], "{}").await;
    assert_eq!(status, 201);
}

#[tokio::test]
async fn a_joiner_with_nobody_ahead_is_admitted_at_once_with_a_token_the_jwks_verifies() {
    let app = fresh_app().await;
    let ev = event(&app, 5, 300).await;
    let body = json!({"opensAt": Millis(shared::world::now().0 - 5_000).to_rfc3339(),
                      "admitPerMinute": 60, "admissionSeconds": 120});
    assert_eq!(put_queue(&app, &ev, &body.to_string()).await.0, 200);
    let v = join(&app, &ev).await;
    let joined = &v.joined;
    assert_eq!(joined["status"], "ADMITTED", "{joined}");
    assert_eq!(
        (&joined["eventId"], &joined["visitorId"]),
        (&json!(ev), &json!(v.id))
    );
    let expires = millis(&joined["admissionExpiresAt"]);
    let joined_at = millis(&joined["joinedAt"]);
    assert_eq!(expires.0 % 1_000, 0, "whole seconds");
    assert!(expires.0 - joined_at.0 >= 120_000 && expires.0 - joined_at.0 <= 121_000);

    // Anyone verifies it from the published keys.
    let jwks = call(&app, "GET", "/.well-known/jwks.json", &[], "").await;
    assert_eq!(jwks.0, 200);
    assert_eq!(jwks.1["keys"][0]["alg"], "ES256");
    assert!(jwks.1["keys"][0].get("d").is_none());
    let keys = VerifyKeys::parse(&jwks.1.to_string()).unwrap();
    let token = joined["admissionToken"].as_str().unwrap();
    let event_id = EventId::parse(&ev).unwrap();
    let claims = keys.verify(token, &event_id, shared::world::now()).unwrap();
    assert_eq!(
        (
            claims.sub.as_str(),
            claims.aud.as_str(),
            claims.iss.as_str()
        ),
        (v.id.as_str(), ev.as_str(), "seatclaim")
    );
    assert_eq!(claims.expires_at(), expires);
    assert!(
        keys.verify(token, &event_id, expires).is_err(),
        "no leeway at exp"
    );

    // Asking again gives the same admission.
    let (status, again) = visitor_status(&app, &ev, &v).await;
    assert_eq!((status, &again["status"]), (200, &json!("ADMITTED")));
    let again_claims = keys
        .verify(
            again["admissionToken"].as_str().unwrap(),
            &event_id,
            shared::world::now(),
        )
        .unwrap();
    assert_eq!(
        (again_claims.jti, again_claims.exp),
        (claims.jti, claims.exp)
    );
    assert!(again.get("visitorToken").is_none());

    // Another visitor's token, or none, is 401; an unknown visitor 404.
    let other = join(&app, &ev).await;
    let wrong = common::queue::TestVisitor {
        token: other.token.clone(),
        ..v.clone()
    };
    let (_, refused) = visitor_status(&app, &ev, &wrong).await;
    assert_eq!(
        (refused["error"].as_str(), common::reason(&refused)),
        (Some("unauthorized"), "visitor-token-other-visitor")
    );
    let (code, missing) = call(
        &app,
        "GET",
        &format!("/events/{ev}/queue/visitors/{}", v.id),
        &[],
        "",
    )
    .await;
    assert_eq!(
        (code, common::reason(&missing)),
        (401, "visitor-token-missing")
    );
    let (_, malformed) = call(
        &app,
        "GET",
        &format!("/events/{ev}/queue/visitors/{}", v.id),
        &[("authorization", "Bearer vt_short")],
        "",
    )
    .await;
    assert_eq!(common::reason(&malformed), "visitor-token-malformed");
    let ghost = common::queue::TestVisitor {
        id: "ghost".into(),
        ..v.clone()
    };
    assert_eq!(
        visitor_status(&app, &ev, &ghost).await.1["error"],
        "visitor-not-found"
    );
    assert_eq!(
        other.joined["status"], "WAITING",
        "the spacing: one a second"
    );
    assert_eq!(other.joined["position"], 1, "{}", other.joined);
}

/// A queue that opened five seconds ago, admitting 60 a minute, each
/// admission opening up to two orders.
fn open_queue_of_two_orders() -> String {
    json!({"opensAt": Millis(shared::world::now().0 - 5_000).to_rfc3339(),
           "admitPerMinute": 60, "ordersPerAdmission": 2})
    .to_string()
}

#[tokio::test]
async fn create_order_under_a_queue_takes_an_admission_and_a_lost_reply_loses_nothing() {
    let app = fresh_app().await;
    let ev = event(&app, 5, 300).await;
    assert_eq!(
        put_queue(&app, &ev, &open_queue_of_two_orders()).await.0,
        200
    );
    let v = join(&app, &ev).await;
    let admission = v.joined["admissionToken"].as_str().unwrap().to_owned();

    let (status, body) = call(&app, "POST", &format!("/events/{ev}/orders"), &[], "{}").await;
    assert_eq!((status, &body["error"]), (403, &json!("queue-required")));
    assert_eq!(body["queue"], format!("/events/{ev}/queue/visitors"));
    for bad in ["garbage", "a.b.c", &admission[..admission.len() - 2]] {
        assert_eq!(order_with(&app, &ev, bad, None).await.0, 401, "{bad}");
    }
    let other = event(&app, 5, 300).await;
    assert_eq!(
        put_queue(&app, &other, &queue_body(-5_000, 60)).await.0,
        200
    );
    assert_eq!(
        order_with(&app, &other, &admission, None).await.0,
        401,
        "another event's"
    );
    let (status, body) = order_with(&app, &ev, &admission, Some("not valid!")).await;
    assert_eq!((status, &body["error"]), (400, &json!("bad-request")));

    let (status, first) = order_with(&app, &ev, &admission, Some("retry-1")).await;
    assert_eq!(status, 201, "{first}");
    let (status, replay) = order_with(&app, &ev, &admission, Some("retry-1")).await;
    assert_eq!(status, 201, "{replay}");
    assert_eq!(
        (&replay["orderId"], &replay["holdToken"]),
        (&first["orderId"], &first["holdToken"])
    );
    let auth = format!("Bearer {}", replay["holdToken"].as_str().unwrap());
    let (status, order) = call(
        &app,
        "GET",
        &format!("/orders/{}", first["orderId"].as_str().unwrap()),
        &[("authorization", &auth)],
        "",
    )
    .await;
    assert_eq!(
        (status, &order["visitorId"]),
        (200, &json!(v.id)),
        "{order}"
    );
    let (status, second) = order_with(&app, &ev, &admission, None).await;
    assert_eq!(status, 201, "the second of two: {second}");
    assert_ne!(second["orderId"], first["orderId"]);
    let (status, body) = order_with(&app, &ev, &admission, None).await;
    assert_eq!((status, &body["error"]), (409, &json!("admission-used")));
    let (status, replay) = order_with(&app, &ev, &admission, Some("retry-1")).await;
    assert_eq!(
        (status, &replay["orderId"]),
        (201, &first["orderId"]),
        "a replay does not count"
    );

    // Without the queue, any token is ignored.
    assert_eq!(delete_queue(&app, &ev).await.0, 200);
    assert_eq!(order_with(&app, &ev, "garbage", None).await.0, 201);
}

/// The order id that plain SHA-256 of public parts gave an admission's
/// order under `key` (how ids were derived before they were keyed).
fn unkeyed_order_id(admission: &str, key: &str, event: &str) -> String {
    use base64::Engine;
    use sha2::{Digest, Sha256};
    let payload = admission.split('.').nth(1).unwrap();
    let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .unwrap();
    let claims: Value = serde_json::from_slice(&payload).unwrap();
    let jti = claims["jti"].as_str().unwrap();
    let mut hash = Sha256::new();
    for part in ["seatclaim order id under an admission v1", jti, key, event] {
        hash.update(part.as_bytes());
        hash.update([0u8]);
    }
    let id: [u8; 32] = hash.finalize().into();
    let random = u128::from_le_bytes(id[..16].try_into().unwrap());
    OrderId::from_random(&EventId::parse(event).unwrap(), random).to_string()
}

/// A private JWK Set of P-256 keys from fixed scalars, in order (the
/// first signs).
fn signing_set(keys: &[(&str, u8)]) -> SigningKeys {
    use base64::Engine;
    let keys: Vec<Value> = keys
        .iter()
        .map(|(kid, d)| {
            let d = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode([*d; 32]);
            json!({"kty": "EC", "crv": "P-256", "kid": kid, "d": d})
        })
        .collect();
    SigningKeys::parse(&json!({ "keys": keys }).to_string()).unwrap()
}

/// The `kid` in a compact JWS's header.
fn kid_of(jws: &str) -> String {
    use base64::Engine;
    let header = jws.split('.').next().unwrap();
    let header = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(header)
        .unwrap();
    let header: Value = serde_json::from_slice(&header).unwrap();
    header["kid"].as_str().unwrap().to_owned()
}

/// Another instance of every function on `app`'s table, with `signing`
/// and the public keys `verify`: a deploy with those keys.
fn deployed_with(app: &shared::App, signing: &SigningKeys, verify: &SigningKeys) -> shared::App {
    let mut config = app.config.clone();
    config.admission_signing = Some(signing.clone());
    config.admission_verify = Some(verify.verify_keys());
    shared::App {
        store: app.store.with_client(app.store.client().clone()),
        config,
        memory: app.memory.fresh().with_state_cache_ms(0),
    }
}

#[tokio::test]
async fn a_promoted_key_verifies_against_the_jwks_served_before_its_promotion() {
    let app = fresh_app().await;
    let ev = event(&app, 5, 300).await;
    assert_eq!(
        put_queue(&app, &ev, &queue_body(-5_000, 60_000)).await.0,
        200
    );
    let event_id = EventId::parse(&ev).unwrap();
    // Step one, publish: the next key is in the JWKS but signs nothing.
    let published = signing_set(&[("current", 7), ("next", 9)]);
    let step_one = deployed_with(&app, &published, &published);
    let (status, jwks) = call(&step_one, "GET", "/.well-known/jwks.json", &[], "").await;
    assert_eq!(status, 200);
    let kids: Vec<&str> = jwks["keys"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|k| k["kid"].as_str())
        .collect();
    assert_eq!(kids, ["current", "next"], "the next key is published ahead");
    let cached = VerifyKeys::parse(&jwks.to_string()).unwrap();
    let admission = join(&step_one, &ev).await.joined["admissionToken"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(cached
        .verify(&admission, &event_id, shared::world::now())
        .is_ok());
    // Step two, at least the JWKS's max-age later: the next key signs. A
    // verifier still holding the JWKS of step one accepts what it signs.
    let promoted = signing_set(&[("next", 9), ("current", 7)]);
    let step_two = deployed_with(&app, &promoted, &promoted);
    // (Another event's queue: its first joiner is admitted on the spot.)
    let ev = event(&app, 5, 300).await;
    let event_id = EventId::parse(&ev).unwrap();
    assert_eq!(put_queue(&app, &ev, &queue_body(-5_000, 60)).await.0, 200);
    let admission = join(&step_two, &ev).await.joined["admissionToken"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(kid_of(&admission), "next");
    let claims = cached.verify(&admission, &event_id, shared::world::now());
    assert!(claims.is_ok(), "refused by the cached JWKS: {claims:?}");
    // Publishing and signing in one step is the gap: a JWKS cached before
    // it does not know the key.
    let before_one_step =
        VerifyKeys::parse(&json!({"keys": [jwks["keys"][0].clone()]}).to_string()).unwrap();
    assert!(before_one_step
        .verify(&admission, &event_id, shared::world::now())
        .is_err());
}

#[tokio::test]
async fn an_idempotent_order_is_not_computable_and_its_key_binds_the_body() {
    let app = fresh_app().await;
    let ev = event(&app, 5, 300).await;
    assert_eq!(
        put_queue(&app, &ev, &open_queue_of_two_orders()).await.0,
        200
    );
    let v = join(&app, &ev).await;
    let admission = v.joined["admissionToken"].as_str().unwrap().to_owned();
    let alice = r#"{"userId": "alice"}"#;
    let (status, first) = order_with_body(&app, &ev, &admission, Some("k-1"), alice).await;
    assert_eq!(status, 201, "{first}");
    // Whoever reads the admission's jti and guesses the key cannot name
    // the order: its id is keyed by a server secret.
    assert_ne!(
        first["orderId"].as_str().unwrap(),
        unkeyed_order_id(&admission, "k-1", &ev)
    );
    // The same key with the same body: the same order.
    let (status, replay) = order_with_body(&app, &ev, &admission, Some("k-1"), alice).await;
    assert_eq!(
        (status, &replay["orderId"]),
        (201, &first["orderId"]),
        "{replay}"
    );
    // With another body: 422, and nothing of the first order.
    for other in [r#"{"userId": "mallory"}"#, "{}"] {
        let (status, body) = order_with_body(&app, &ev, &admission, Some("k-1"), other).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (422, Some("idempotency-key-reused")),
            "{other}: {body}"
        );
        let text = body.to_string();
        for part in ["orderId", "holdToken", first["orderId"].as_str().unwrap()] {
            assert!(!text.contains(part), "{other}: {part} in {text}");
        }
    }
    // It counted once: the admission's second order is still there to open.
    let (status, second) = order_with_body(&app, &ev, &admission, Some("k-2"), "{}").await;
    assert_eq!(status, 201, "{second}");
}

#[tokio::test]
async fn early_joiners_are_served_in_a_random_order_at_the_pace_from_the_opening() {
    let app = fresh_app().await;
    let ev = event(&app, 5, 300).await;
    let (_, put) = put_queue(&app, &ev, &queue_body(HOUR_MS, 60)).await;
    let opens = millis(&put["opensAt"]);
    let mut visitors = Vec::new();
    for _ in 0..40 {
        visitors.push(join(&app, &ev).await);
    }
    let (_, waiting) = visitor_status(&app, &ev, &visitors[0]).await;
    assert_eq!(waiting["status"], "WAITING");
    assert!(
        waiting.get("position").is_none(),
        "no position before the opening: {waiting}"
    );

    let mut admitter = Admitter::default();
    let before = tick(&app, &mut admitter, &ev, Millis(opens.0 - 1)).await;
    assert_eq!(
        (before.status, before.admitted, before.waiting),
        ("SCHEDULED", 0, 40)
    );
    assert_eq!(get_queue(&app, &ev).await.1["waiting"], 40);
    // From the opening (once the draw settles): one a second, never two
    // closer than that.
    let opens = Millis(opens.0 + i64::from(DEFAULT_DRAW_SETTLE_MS));
    let first = tick(&app, &mut admitter, &ev, opens).await;
    assert_eq!(
        (first.status, first.admitted, first.waiting),
        ("OPEN", 1, 39)
    );
    assert_eq!(
        tick(&app, &mut admitter, &ev, Millis(opens.0 + 999))
            .await
            .admitted,
        0
    );
    assert_eq!(
        tick(&app, &mut admitter, &ev, Millis(opens.0 + 1_000))
            .await
            .admitted,
        1
    );

    // Everyone still waiting knows exactly where: positions 1..=38.
    let mut order = Vec::new();
    for (joined, v) in visitors.iter().enumerate() {
        match view_at(&app, &ev, v, Millis(opens.0 + 1_000)).await {
            (Some(position), false) => order.push((position, joined)),
            (None, true) => order.push((0, joined)),
            other => panic!("{other:?}"),
        }
    }
    order.sort();
    let positions: Vec<u64> = order.iter().map(|(p, _)| *p).collect();
    assert_eq!(
        positions,
        [0, 0].into_iter().chain(1..=38).collect::<Vec<u64>>()
    );
    // Joining earlier bought nothing: the service order is unrelated to
    // the join order (Spearman's rho near 0; |rho| > 0.5 has odds < 1/1000).
    let served: Vec<f64> = order.iter().map(|(_, joined)| *joined as f64).collect();
    let n = served.len() as f64;
    let d2: f64 = served
        .iter()
        .enumerate()
        .map(|(rank, joined)| (rank as f64 - joined).powi(2))
        .sum();
    let rho = 1.0 - 6.0 * d2 / (n * (n * n - 1.0));
    assert!(rho.abs() < 0.5, "rho {rho}");
    // Each tick admits the next in that order.
    let next = order[2].1;
    assert!(!is_admitted(&app, &ev, &visitors[next]).await);
    tick(&app, &mut admitter, &ev, Millis(opens.0 + 2_000)).await;
    assert!(is_admitted(&app, &ev, &visitors[next]).await);
}

#[tokio::test]
async fn later_joiners_are_served_in_join_order_behind_everyone_earlier() {
    let app = fresh_app().await;
    let ev = event(&app, 5, 300).await;
    // One admission every 10 s: the twelve joins after the first come
    // within its spacing however slow the machine, so none is admitted on
    // the spot; the ticks then step one spacing at a time.
    let (_, put) = put_queue(&app, &ev, &queue_body(-5_000, 6)).await;
    assert_eq!(put["status"], "OPEN");
    let first = join(&app, &ev).await;
    assert_eq!(first.joined["status"], "ADMITTED");
    let mut visitors = Vec::new();
    for _ in 0..12 {
        visitors.push(join(&app, &ev).await);
    }
    let mut admitter = Admitter::default();
    let mut now = shared::world::now();
    for (i, v) in visitors.iter().enumerate() {
        now = Millis(now.0 + 10_000);
        let summary = tick(&app, &mut admitter, &ev, now).await;
        assert_eq!(
            (summary.admitted, summary.waiting),
            (1, (11 - i) as u64),
            "tick {i}"
        );
        assert!(is_admitted(&app, &ev, v).await, "visitor {i} is next");
        if let Some(behind) = visitors.get(i + 1) {
            assert_eq!(view_at(&app, &ev, behind, now).await, (Some(1), false));
        }
    }
    let (_, queue) = get_queue(&app, &ev).await;
    assert_eq!(
        (&queue["admitted"], &queue["waiting"]),
        (&json!(13), &json!(0))
    );
}

#[tokio::test]
async fn a_queue_put_again_after_a_delete_starts_empty() {
    let app = fresh_app().await;
    let ev = create_event(&app, "q", &plan(&[("A", "1", 3)], Some(300)))
        .await
        .0;
    assert_eq!(put_queue(&app, &ev, &queue_body(HOUR_MS, 60)).await.0, 200);
    let old = join(&app, &ev).await;
    assert_eq!(delete_queue(&app, &ev).await.0, 200);
    assert_eq!(
        visitor_status(&app, &ev, &old).await.1["error"],
        "visitor-not-found"
    );
    let (_, put) = put_queue(&app, &ev, &queue_body(HOUR_MS, 60)).await;
    assert_eq!(put["waiting"], 0);
    assert_eq!(
        visitor_status(&app, &ev, &old).await.1["error"],
        "visitor-not-found",
        "gone with its queue"
    );
    let new = join(&app, &ev).await;
    assert_eq!(visitor_status(&app, &ev, &new).await.0, 200);
    let admits_from = Millis(millis(&put["opensAt"]).0 + i64::from(DEFAULT_DRAW_SETTLE_MS));
    let summary = tick(&app, &mut Admitter::default(), &ev, admits_from).await;
    assert_eq!(
        (summary.admitted, summary.waiting),
        (1, 0),
        "only the new queue's visitor"
    );
}

/// `DRAW_SETTLE_MS` is queue-admin's: a queue put under 500 ms admits its
/// first drawn visitor 500 ms after the opening, not before, whatever the
/// admitter's own setting.
#[tokio::test]
async fn the_first_admission_waits_the_settling_time_the_queue_was_put_with() {
    let mut admin = fresh_app().await;
    admin.config.draw_settle_ms = 500;
    let ev = create_event(&admin, "q", &plan(&[("A", "1", 3)], Some(300)))
        .await
        .0;
    let (status, put) = put_queue(&admin, &ev, &queue_body(HOUR_MS, 60)).await;
    assert_eq!(status, 200, "{put}");
    join(&admin, &ev).await;
    let admitter_app = shared::App {
        config: shared::Config {
            draw_settle_ms: 9_000,
            ..admin.config.clone()
        },
        ..admin.clone()
    };
    let opens = millis(&put["opensAt"]).0;
    let mut admitter = Admitter::default();
    let early = tick(&admitter_app, &mut admitter, &ev, Millis(opens + 499)).await;
    assert_eq!(early.admitted, 0);
    let settled = tick(&admitter_app, &mut admitter, &ev, Millis(opens + 500)).await;
    assert_eq!((settled.admitted, settled.waiting), (1, 0));
}

#[tokio::test]
async fn admission_pauses_while_nothing_is_left_and_a_sell_out_ends_the_wait() {
    let streaming = testkit::fresh_app_streaming(None).await;
    // The admitter reads the seat map fresh at every tick here (on AWS it
    // reuses a read for a second, within the contract's lag).
    let app = shared::App {
        memory: streaming.memory.clone().with_seat_map_cache_ms(0),
        ..streaming.clone()
    };
    let endpoint = testkit::dynamodb_endpoint();
    let project = || local::streams::project_now(&app, &endpoint);
    let ev = event(&app, 1, 300).await;
    assert_eq!(put_queue(&app, &ev, &queue_body(-5_000, 60)).await.0, 200);
    let first = join(&app, &ev).await;
    let (second, third) = (join(&app, &ev).await, join(&app, &ev).await);
    assert_eq!(second.joined["status"], "WAITING");
    let holder = admitted_order(&app, &ev, &first.joined).await;
    assert_eq!(common::claim(&app, &holder, "A-1-1").await.0, 200);
    project().await.unwrap();

    // Nothing available: paused, nobody admitted although the pace allows.
    // (The ticks' instants are a few seconds ahead at most: an admission
    // given at one must be valid when the test uses it a moment later.)
    let mut admitter = Admitter::default();
    let start = shared::world::now();
    let paused = tick(&app, &mut admitter, &ev, Millis(start.0 + 2_000)).await;
    assert_eq!((paused.status, paused.admitted), ("PAUSED", 0));
    assert_eq!(get_queue(&app, &ev).await.1["status"], "PAUSED");
    let (_, waiting) = visitor_status(&app, &ev, &second).await;
    assert_eq!(
        (&waiting["status"], &waiting["position"]),
        (&json!("WAITING"), &json!(1)),
        "{waiting}"
    );
    assert!(
        millis(&waiting["estimatedAdmissionAt"]) >= start,
        "never in the past"
    );
    assert_eq!(
        waiting["pollAfterSeconds"], 2,
        "next in line: ask again soon"
    );

    // The seat comes back: admission resumes at once.
    assert_eq!(common::drop_seat(&app, &holder, "A-1-1").await.0, 200);
    project().await.unwrap();
    let resumed = tick(&app, &mut admitter, &ev, Millis(start.0 + 2_500)).await;
    assert_eq!((resumed.status, resumed.admitted), ("OPEN", 1));
    let (_, admitted) = visitor_status(&app, &ev, &second).await;
    assert_eq!(admitted["status"], "ADMITTED");
    assert!(admitted["pollAfterSeconds"].is_null(), "{admitted}");

    // Sold: the queue is SOLD_OUT, and whoever waits is told so.
    let buyer = admitted_order(&app, &ev, &admitted).await;
    assert_eq!(common::claim(&app, &buyer, "A-1-1").await.0, 200);
    assert_eq!(
        common::pay(&app, &buyer, "pay-1", &["A-1-1"], json!([]))
            .await
            .0,
        200
    );
    project().await.unwrap();
    let sold = tick(&app, &mut admitter, &ev, Millis(start.0 + 4_000)).await;
    assert_eq!(
        (sold.status, sold.admitted, sold.waiting),
        ("SOLD_OUT", 0, 0)
    );
    assert_eq!(
        visitor_status(&app, &ev, &third).await.1["status"],
        "SOLD_OUT"
    );
    let (_, queue) = get_queue(&app, &ev).await;
    assert_eq!(
        (&queue["status"], &queue["waiting"], &queue["admitted"]),
        (&json!("SOLD_OUT"), &json!(0), &json!(2))
    );
    let late = join(&app, &ev).await;
    assert_eq!(
        late.joined["status"], "SOLD_OUT",
        "joining a sold-out queue is allowed: {}",
        late.joined
    );
}
