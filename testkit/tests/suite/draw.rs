//! The draw anyone can check, on DynamoDB Local: the queue commits to its
//! seed before anyone joins, tells a waiting visitor nothing that depends
//! on its draw before the opening, discloses the seed after it, and serves
//! the drawn visitors in the order of the keys a buyer recomputes from the
//! disclosed seed alone (here with the hmac and sha2 crates, not the
//! product's code).

use crate::common;

use common::queue::*;
use common::{call, event, fresh_app};
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use shared::admitter::Admitter;
use shared::App;

/// What a buyer computes: HMAC-SHA-256 under the seed over its draw id.
fn draw_key(seed: &[u8], draw_id: &str) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(seed).unwrap();
    mac.update(draw_id.as_bytes());
    mac.finalize().into_bytes().to_vec()
}

/// Opens the queue now, put as it was, with its opening ten seconds ago:
/// the seed is disclosed at once (a queue may open early while SCHEDULED).
async fn open_now(app: &App, event: &str, per_minute: u32) -> Value {
    let (status, put) = put_queue(app, event, &queue_body(-10_000, per_minute)).await;
    assert_eq!(status, 200, "{put}");
    put
}

/// Every attribute value of every item of the test's table, as text (a
/// binary value as hex): where the seed must not be.
async fn everything_stored(app: &App) -> String {
    let scan = app
        .store
        .client()
        .scan()
        .table_name(app.store.table_name())
        .into_paginator()
        .items()
        .send()
        .collect::<Vec<_>>()
        .await;
    let mut text = String::new();
    for item in scan {
        for value in item.unwrap().values() {
            match value {
                aws_sdk_dynamodb::types::AttributeValue::B(b) => text += &hex::encode(b.as_ref()),
                other => text += &format!("{other:?}"),
            }
        }
    }
    text
}

#[tokio::test]
async fn drawn_visitors_are_served_in_the_order_the_disclosed_seed_gives() {
    let app = fresh_app().await;
    let ev = event(&app, 5, 300).await;
    let (_, put) = put_queue(&app, &ev, &queue_body(HOUR_MS, 6_000)).await;
    let commitment = put["drawCommitment"].as_str().unwrap().to_owned();
    assert_eq!((commitment.len(), &put["generation"]), (64, &json!(1)));
    assert!(put.get("drawSeed").is_none(), "not before the opening");
    let mut visitors = Vec::new();
    for _ in 0..40 {
        visitors.push(join(&app, &ev).await);
    }
    // Before the opening a reply tells nothing of the visitor's draw:
    // apart from who it is and when to poll, every reply is the same.
    let personal = [
        "visitorId",
        "visitorToken",
        "joinedAt",
        "drawId",
        "pollAfterSeconds",
    ];
    let shared_part = |reply: &Value| {
        let mut r = reply.clone();
        personal.iter().for_each(|k| {
            r.as_object_mut().unwrap().remove(*k);
        });
        r
    };
    for v in &visitors {
        assert_eq!(v.joined["drawCommitment"], commitment.as_str());
        assert_eq!(v.joined["drawId"], v.joined["visitorId"]);
        assert_eq!(shared_part(&v.joined), shared_part(&visitors[0].joined));
        assert!(
            v.joined.get("position").is_none() && v.joined.get("estimatedAdmissionAt").is_none()
        );
        let polls = v.joined["pollAfterSeconds"].as_i64().unwrap();
        assert!((2..=30).contains(&polls), "{polls}");
    }
    let disclosed = open_now(&app, &ev, 6_000).await;
    let seed = hex::decode(disclosed["drawSeed"].as_str().unwrap()).unwrap();
    assert_eq!(
        hex::encode(Sha256::digest(&seed)),
        commitment,
        "the seed is what was committed"
    );
    assert_eq!(disclosed["drawCommitment"], commitment.as_str());
    let mut admitter = Admitter::default();
    let mut now = shared::world::now();
    for _ in 0..10 {
        if tick(&app, &mut admitter, &ev, now).await.waiting == 0 {
            break;
        }
        now = shared::domain::Millis(now.0 + 1_000);
    }
    // Each visitor's slot, by its key as the buyer computes it.
    let mut slots = Vec::new();
    for v in &visitors {
        let (status, seen) = visitor_status(&app, &ev, v).await;
        assert_eq!(
            (status, &seen["status"]),
            (200, &json!("ADMITTED")),
            "{seen}"
        );
        let slot = claims_of(seen["admissionToken"].as_str().unwrap())["slot"]
            .as_i64()
            .unwrap();
        slots.push((draw_key(&seed, &v.id), slot));
    }
    slots.sort();
    let inversions = slots.windows(2).filter(|w| w[0].1 >= w[1].1).count();
    assert_eq!(inversions, 0, "slots follow the keys: {slots:?}");
    let stored = everything_stored(&app).await;
    assert!(
        !stored.contains(&hex::encode(&seed)),
        "the seed is in an item"
    );
}

#[tokio::test]
async fn a_verified_queue_draws_by_buyer_and_each_generation_commits_anew() {
    let app = fresh_app().await;
    let ev = event(&app, 5, 300).await;
    let mut body: Value = serde_json::from_str(&queue_body(HOUR_MS, 600)).unwrap();
    body["buyers"] = json!("verified");
    let (_, first) = put_queue(&app, &ev, &body.to_string()).await;
    let now_s = shared::world::now().0 / 1_000;
    let token = local::apps::dev_buyer_token(
        &local::apps::dev_buyer_signing_keys(),
        &ev,
        "user:9",
        now_s,
        600,
    )
    .unwrap();
    let path = format!("/events/{ev}/queue/visitors");
    let (status, joined) = call(&app, "POST", &path, &[("x-buyer-token", &token)], "").await;
    assert_eq!(status, 201, "{joined}");
    assert_eq!(joined["drawId"], "user:9");
    assert_eq!(joined["drawCommitment"], first["drawCommitment"]);
    let (_, status_reply) = visitor_status(
        &app,
        &ev,
        &TestVisitor {
            id: joined["visitorId"].as_str().unwrap().into(),
            token: joined["visitorToken"].as_str().unwrap().into(),
            joined: joined.clone(),
        },
    )
    .await;
    assert_eq!(status_reply["drawId"], "user:9");
    // Deleted and put again: the next generation, another seed.
    assert_eq!(delete_queue(&app, &ev).await.0, 200);
    let (_, second) = put_queue(&app, &ev, &queue_body(HOUR_MS, 600)).await;
    assert_eq!(second["generation"], 2);
    assert_ne!(second["drawCommitment"], first["drawCommitment"]);
    assert_eq!(
        get_queue(&app, &ev).await.1["drawCommitment"],
        second["drawCommitment"]
    );
}
