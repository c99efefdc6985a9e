//! The draw anyone can check, on DynamoDB Local: the queue commits to its
//! seed before anyone joins, tells a waiting visitor nothing that depends
//! on its draw before the opening, discloses the seed after it, and serves
//! the drawn visitors in the order of the keys a buyer recomputes from the
//! disclosed seed alone (here with the hmac and sha2 crates, not the
//! product's code).

use crate::common;

use common::draw::*;
use common::queue::*;
use common::{call, event, fresh_app};
use hmac::{Hmac, KeyInit, Mac};
use local::faults::{production_client, Fault, FaultInjector};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use shared::admitter::Admitter;
use shared::domain::{EventId, Millis, VisitorId};
use shared::App;
use testkit::dynamodb_endpoint;

/// Every attribute value of the queue's items (its state and its copies)
/// and of `visitors`' items, read by key, as text (a binary value as hex):
/// where the seed must not be.
async fn everything_stored(app: &App, event: &str, visitors: &[TestVisitor]) -> String {
    use aws_sdk_dynamodb::types::AttributeValue;
    use shared::store::{PK, QUEUE_COPIES, QUEUE_PK_PREFIX, SK, VISITOR_PK_PREFIX};
    let event_ref = shared::domain::EventRef::of(&EventId::parse(event).unwrap());
    let mut keys = vec![(format!("{QUEUE_PK_PREFIX}{event_ref}"), "QUEUE")];
    keys.extend((0..QUEUE_COPIES).map(|c| (format!("{QUEUE_PK_PREFIX}{event_ref}#{c}"), "QUEUE")));
    keys.extend(visitors.iter().map(|v| {
        (
            format!("{VISITOR_PK_PREFIX}{event_ref}#{}", v.id),
            "VISITOR",
        )
    }));
    let mut text = String::new();
    for (pk, sk) in keys {
        let read = app
            .store
            .client()
            .get_item()
            .table_name(app.store.table_name())
            .key(PK, AttributeValue::S(pk.clone()))
            .key(SK, AttributeValue::S(sk.into()))
            .send()
            .await
            .unwrap();
        let item = read.item.unwrap_or_else(|| panic!("no item {pk}"));
        for value in item.values() {
            match value {
                AttributeValue::B(b) => text += &hex::encode(b.as_ref()),
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
    let path = format!("/events/{ev}/queue/draw");
    let (status, early) = call(&app, "GET", &path, &[], "").await;
    assert_eq!(
        (status, early["error"].as_str()),
        (404, Some("draw-not-disclosed"))
    );
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
    // The draw list is exactly that, paged.
    let listed = draw_list(&app, &ev, 7).await;
    let expected: Vec<(String, i64)> = slots.iter().map(|(k, s)| (hex::encode(k), *s)).collect();
    assert_eq!(listed, expected);
    for bad in ["?after=XYZ", "?limit=0", "?limit=1001"] {
        let (status, _) = call(&app, "GET", &format!("{path}{bad}"), &[], "").await;
        assert_eq!(status, 400, "{bad}");
    }
    let stored = everything_stored(&app, &ev, &visitors).await;
    assert!(
        stored.contains("visitor") && stored.contains(&ev),
        "the items were read"
    );
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
    assert_eq!(
        joined["drawId"], joined["visitorId"],
        "the keyed visitor id"
    );
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
    assert_eq!(status_reply["drawId"], joined["visitorId"]);
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

/// The disclosed list and seed tell nobody which buyers joined a verified
/// queue: a draw id is the visitor id, keyed from the buyer id by the
/// server, so a key computed from a guessed buyer id is no entry's. A
/// million guesses, the joined buyers' ids among them, find none; each
/// buyer finds its own entry from the `drawId` its join was told.
#[tokio::test]
async fn a_disclosed_verified_draw_names_no_buyer() {
    let app = fresh_app().await;
    let ev = event(&app, 5, 300).await;
    let verified = |opens_in_ms: i64| {
        let mut body: Value = serde_json::from_str(&queue_body(opens_in_ms, 600)).unwrap();
        body["buyers"] = json!("verified");
        body.to_string()
    };
    let (_, put) = put_queue(&app, &ev, &verified(HOUR_MS)).await;
    let buyers = ["user:0", "user:18734", "user:999999"];
    let mut draw_ids = Vec::new();
    for buyer in buyers {
        let token = common::buyer_token(&ev, buyer);
        let path = format!("/events/{ev}/queue/visitors");
        let (status, joined) = call(&app, "POST", &path, &[("x-buyer-token", &token)], "").await;
        assert_eq!(status, 201, "{joined}");
        draw_ids.push(joined["drawId"].as_str().unwrap().to_owned());
    }
    let (status, opened) = put_queue(&app, &ev, &verified(-10_000)).await;
    assert_eq!((status, &opened["generation"]), (200, &put["generation"]));
    let seed = hex::decode(opened["drawSeed"].as_str().unwrap()).unwrap();
    let listed: std::collections::HashSet<Vec<u8>> = draw_list(&app, &ev, 1_000)
        .await
        .into_iter()
        .map(|(key, _)| hex::decode(key).unwrap())
        .collect();
    assert_eq!(listed.len(), buyers.len());
    for draw_id in &draw_ids {
        assert!(
            listed.contains(&draw_key(&seed, draw_id)),
            "{draw_id}'s own entry"
        );
    }
    // What an enumerator does: every id of the seller's documented shape.
    let keyed = Hmac::<Sha256>::new_from_slice(&seed).unwrap();
    let found: Vec<u32> = (0..1_000_000u32)
        .filter(|i| {
            let mut mac = keyed.clone();
            mac.update(format!("user:{i}").as_bytes());
            listed.contains(mac.finalize().into_bytes().as_slice())
        })
        .collect();
    assert!(found.is_empty(), "buyers found from the list: {found:?}");
}

/// A put that keeps who may join keeps the generation and its commitment;
/// one that changes `buyers` before anyone joined starts the next
/// generation, with a new commitment (API.md, put-queue), and after a join
/// `buyers` no longer changes.
#[tokio::test]
async fn changing_who_may_join_starts_a_generation_and_other_puts_keep_it() {
    let app = fresh_app().await;
    let ev = event(&app, 5, 300).await;
    let anonymous = queue_body(HOUR_MS, 600);
    let (_, first) = put_queue(&app, &ev, &anonymous).await;
    let mut faster: Value = serde_json::from_str(&queue_body(HOUR_MS, 900)).unwrap();
    let (_, kept) = put_queue(&app, &ev, &faster.to_string()).await;
    assert_eq!(
        (&kept["generation"], &kept["drawCommitment"]),
        (&first["generation"], &first["drawCommitment"])
    );
    faster["buyers"] = json!("verified");
    let (status, verified) = put_queue(&app, &ev, &faster.to_string()).await;
    assert_eq!(status, 200, "{verified}");
    assert_eq!(
        verified["generation"],
        first["generation"].as_u64().unwrap() + 1
    );
    assert_ne!(verified["drawCommitment"], first["drawCommitment"]);
    assert_eq!(
        get_queue(&app, &ev).await.1["drawCommitment"],
        verified["drawCommitment"]
    );
}

/// Each of `ids`' draw key under `seed` and its admission's slot, in key
/// order (every one must have been admitted).
async fn slots_by_key(
    app: &App,
    event: &EventId,
    seed: &[u8],
    ids: &[VisitorId],
) -> Vec<(Vec<u8>, i64)> {
    let mut slots = Vec::new();
    for id in ids {
        let visitor = app.store.read_visitor(event, id).await.unwrap().unwrap();
        let admission = visitor
            .admission
            .unwrap_or_else(|| panic!("{id} was not admitted"));
        slots.push((draw_key(seed, id.as_str()), admission.slot_us));
    }
    slots.sort();
    slots
}

/// A seller's longer settling time (`DRAW_SETTLE_MS` 5 s here) covers a
/// longer index lag: drawn entries that show up 3 s after the opening,
/// past the admitter's own 2 s of reading every front from the first,
/// still take their place in key order, and nobody is admitted before.
#[tokio::test]
async fn a_longer_settling_time_covers_a_longer_index_lag() {
    let mut app = fresh_app().await;
    app.config.draw_settle_ms = 5_000;
    let ev = event(&app, 5, 300).await;
    let event_id = EventId::parse(&ev).unwrap();
    let per_minute = 6_000;
    let (status, put) = put_queue(&app, &ev, &queue_body(600_000, per_minute)).await;
    assert_eq!(status, 200, "{put}");
    let state = stored_state(&app, &event_id).await;
    let opens = state.settings.opens_at;
    let mut ids = drawn_visitors(&app, &event_id, &state, 0..40).await;
    let mut admitter = Admitter::default();
    let mut waiting = u64::MAX;
    for step in 0..=40 {
        let now = Millis(opens.0 + 250 * step);
        if step == 12 {
            ids.extend(drawn_visitors(&app, &event_id, &state, 40..60).await);
        }
        let summary = tick(&app, &mut admitter, &ev, now).await;
        if now.0 < opens.0 + 5_000 {
            assert_eq!(summary.admitted, 0, "at {}", now.0 - opens.0);
        }
        waiting = summary.waiting;
    }
    assert_eq!(waiting, 0);
    let disclosed = open_now(&app, &ev, per_minute).await;
    assert_eq!(disclosed["lateDrawn"], 0, "{disclosed}");
    let seed = hex::decode(disclosed["drawSeed"].as_str().unwrap()).unwrap();
    let slots = slots_by_key(&app, &event_id, &seed, &ids).await;
    let inversions = slots.windows(2).filter(|w| w[0].1 >= w[1].1).count();
    assert_eq!((slots.len(), inversions), (60, 0));
    assert!(slots[0].1 >= (opens.0 + 5_000) * 1_000);
}

/// Drawn entries the index shows only after the settling time, some
/// ranked before visitors already admitted and some among those the
/// admitter's fronts have already read past: each is read on its shard's
/// next refill, not left for the admitter's next run. Those ranked before
/// an admitted visitor go next and are counted late; the others keep the
/// keys' order.
#[tokio::test]
async fn drawn_entries_shown_after_the_settling_time_are_read_on_the_next_refill() {
    let app = fresh_app().await;
    let ev = event(&app, 5, 300).await;
    let event_id = EventId::parse(&ev).unwrap();
    let per_minute = 1_200; // 20 a second: 120 drawn take six seconds
    let (status, put) = put_queue(&app, &ev, &queue_body(600_000, per_minute)).await;
    assert_eq!(status, 200, "{put}");
    let state = stored_state(&app, &event_id).await;
    let opens = state.settings.opens_at;
    let seed = seed_of(&app, &event_id, &state);
    let mut ids = drawn_visitors(&app, &event_id, &state, 0..120).await;
    let mut keys: Vec<_> = ids.iter().map(|id| seed.key(id.as_str())).collect();
    keys.sort();
    let (mut admitter, mut waiting) = (Admitter::default(), u64::MAX);
    let (mut before, mut shown_at) = (Vec::new(), 0);
    for step in 1..=120 {
        let now = Millis(opens.0 + 250 * step);
        let summary = tick(&app, &mut admitter, &ev, now).await;
        waiting = summary.waiting;
        if step == 20 {
            // Five seconds in: settled, some sixty admitted, the fronts
            // read well past the next few.
            let admitted = 120 - usize::try_from(waiting).unwrap();
            let named = |range: (usize, usize), from: usize| {
                (from..)
                    .map(|j| VisitorId::parse(&format!("late-{j:05}")).unwrap())
                    .filter(|id| {
                        let key = seed.key(id.as_str());
                        keys[range.0] < key && key < keys[range.1]
                    })
                    .take(2)
                    .collect::<Vec<_>>()
            };
            before = named((0, admitted - 10), 0);
            let among = named((admitted + 5, admitted + 30), 10_000);
            for id in before.iter().chain(&among) {
                drawn_visitor_named(&app, &event_id, &state, id.clone()).await;
            }
            ids.extend(before.iter().chain(&among).cloned());
            shown_at = now.0;
        }
        if waiting == 0 && step > 20 {
            break;
        }
    }
    assert_eq!(waiting, 0);
    let disclosed = open_now(&app, &ev, per_minute).await;
    assert_eq!(disclosed["admitted"], 124, "this run read every late entry");
    assert_eq!(disclosed["lateDrawn"], 2, "{disclosed}");
    let seed_bytes = hex::decode(disclosed["drawSeed"].as_str().unwrap()).unwrap();
    for id in &before {
        let slot = app
            .store
            .read_visitor(&event_id, id)
            .await
            .unwrap()
            .unwrap();
        let slot_us = slot.admission.unwrap().slot_us;
        assert!(
            slot_us <= (shown_at + 1_000) * 1_000,
            "{id} went next: {} ms after showing",
            slot_us / 1_000 - shown_at
        );
    }
    let in_order: Vec<VisitorId> = ids.into_iter().filter(|id| !before.contains(id)).collect();
    let slots = slots_by_key(&app, &event_id, &seed_bytes, &in_order).await;
    let inversions = slots.windows(2).filter(|w| w[0].1 >= w[1].1).count();
    assert_eq!((slots.len(), inversions), (122, 0));
}

/// A generation put before draws existed (its item names no key) has no
/// draw to check: no commitment or seed in get-queue or a join, the draw
/// list `404 draw-not-disclosed` even after the opening, and its early
/// joiners ranked at random as before. Nothing there follows the key set,
/// so a rotation changes nothing a buyer was told.
#[tokio::test]
async fn a_generation_put_before_draws_has_none_to_commit_or_disclose() {
    let app = fresh_app().await;
    let ev = event(&app, 5, 300).await;
    let event_id = EventId::parse(&ev).unwrap();
    assert_eq!(put_queue(&app, &ev, &queue_body(600_000, 600)).await.0, 200);
    let stored = app.store.read_queue(&event_id).await.unwrap().unwrap();
    let mut state = stored.state.unwrap();
    state.draw_secret = String::new();
    state.version = stored.version + 1;
    let written = app
        .store
        .commit_queue_state(&event_id, &state, stored.version);
    assert_eq!(written.await.unwrap(), Some(true));
    // An instance that has not read the queue before (none cached).
    let app = App {
        memory: app.memory.fresh(),
        ..app
    };

    let visitor = join(&app, &ev).await;
    assert!(
        visitor.joined.get("drawCommitment").is_none(),
        "{}",
        visitor.joined
    );
    let id = VisitorId::parse(&visitor.id).unwrap();
    let read = app
        .store
        .read_visitor(&event_id, &id)
        .await
        .unwrap()
        .unwrap();
    assert!(read.draw_key.is_none(), "ranked at random, with no key");
    let put = open_now(&app, &ev, 600).await;
    let (_, got) = get_queue(&app, &ev).await;
    for reply in [&put, &got] {
        assert!(reply.get("drawCommitment").is_none(), "{reply}");
        assert!(reply.get("drawSeed").is_none(), "{reply}");
    }
    let (status, body) = call(&app, "GET", &format!("/events/{ev}/queue/draw"), &[], "").await;
    assert_eq!(
        (status, body["error"].as_str()),
        (404, Some("draw-not-disclosed"))
    );
}

/// 1,000 drawn visitors, two admitters ticking at the same instants (so
/// their runs overlap at every tick), one of them failing a run of
/// admission writes in the middle of a batch, and 30 visitors whose index
/// entries show up only after the opening (within the settling time, DRAW_SETTLE_MS): from
/// the disclosed seed, every slot follows the keys, keeps the spacing, and
/// nobody came late.
#[tokio::test]
async fn slots_follow_the_draw_through_overlapping_admitters_failures_and_index_lag() {
    let app = fresh_app().await;
    let ev = event(&app, 5, 300).await;
    let event_id = EventId::parse(&ev).unwrap();
    // Opening in ten minutes by the wall's clock; the admitters tick on
    // the test's clock from the opening on.
    let per_minute = 30_000;
    assert_eq!(
        put_queue(&app, &ev, &queue_body(600_000, per_minute))
            .await
            .0,
        200
    );
    let state = stored_state(&app, &event_id).await;
    let opens = state.settings.opens_at;
    let mut ids = drawn_visitors(&app, &event_id, &state, 0..970).await;

    let faults = FaultInjector::default();
    let failing = App {
        store: app
            .store
            .with_client(production_client(&dynamodb_endpoint(), [faults.shared()])),
        config: app.config.clone(),
        memory: app.memory.fresh(),
    };
    let calm = App {
        memory: app.memory.fresh(),
        ..app.clone()
    };
    // From its 100th admission on, 200 attempts in a row are refused as a
    // hot partition refuses them: a batch in flight fails outright, each
    // write after the SDK's three attempts.
    faults.fail_after(
        "UpdateItem",
        100,
        Fault::ProvisionedThroughputExceeded,
        Some(200),
    );
    let (mut a, mut b) = (Admitter::default(), Admitter::default());
    let mut waiting = u64::MAX;
    for step in 1..=80 {
        let now = Millis(opens.0 + 250 * step);
        if step == 3 {
            // Index entries that show up after the opening, before the
            // first admission.
            ids.extend(drawn_visitors(&app, &event_id, &state, 970..1_000).await);
        }
        let (first, second) = if step % 2 == 0 {
            (&mut a, &mut b)
        } else {
            (&mut b, &mut a)
        };
        let apps = if step % 2 == 0 {
            (&failing, &calm)
        } else {
            (&calm, &failing)
        };
        tick(apps.0, first, &ev, now).await;
        let summary = tick(apps.1, second, &ev, now).await;
        let pending = stored_state(&app, &event_id).await.pending;
        waiting = summary.waiting;
        if waiting == 0 && pending.is_empty() && step > 12 {
            break;
        }
    }
    assert_eq!(waiting, 0);
    assert_eq!(faults.injected("UpdateItem"), 200, "the failures happened");

    // The operator opens the queue now (it is still SCHEDULED by the
    // wall's clock): the seed is disclosed.
    let disclosed = open_now(&app, &ev, per_minute).await;
    assert_eq!(disclosed["lateDrawn"], 0, "{disclosed}");
    let seed = hex::decode(disclosed["drawSeed"].as_str().unwrap()).unwrap();
    let slots = slots_by_key(&app, &event_id, &seed, &ids).await;
    let listed = draw_list(&app, &ev, 1_000).await;
    let expected: Vec<(String, i64)> = slots.iter().map(|(k, s)| (hex::encode(k), *s)).collect();
    assert_eq!(
        listed, expected,
        "the draw list is every drawn visitor, in key order"
    );
    let spacing = 60_000_000 / i64::from(per_minute);
    let inversions = slots.windows(2).filter(|w| w[0].1 >= w[1].1).count();
    let too_close = slots
        .windows(2)
        .filter(|w| w[1].1 - w[0].1 < spacing)
        .count();
    assert_eq!((slots.len(), inversions, too_close), (1_000, 0, 0));
    assert!(
        slots[0].1 >= (opens.0 + i64::from(shared::domain::queue::DEFAULT_DRAW_SETTLE_MS)) * 1_000,
        "the first slot waits for the index to settle"
    );
}
