//! Under a crowd (docs/API.md): a function instance that keeps refusing a
//! seat answers the crowd from memory, without writing to the seat, and
//! never past the contract's bounds: an expiry is claimable at its
//! instant, a release within 5 s, and the holder's own claim stays exact.

use crate::common;

use std::sync::Arc;

use common::*;
use crowdcheck::capacity::{recording_client, CapacityRecorder};
use local::metrics::RequestCounter;
use shared::auth::HoldToken;
use shared::domain::crowd::{CONTENDED_REFUSALS, REMEMBERED_FOR_MS};
use shared::domain::{Millis, SeatId};
use shared::error::Error;
use shared::handlers::{get_seat_at, release_exactly};
use testkit::{assert_invariants, fresh_app_counting};

/// A rival's order that outlives the holder's by far (its guard margin is
/// no factor), with its token.
async fn rival(app: &shared::App, event: &str) -> (TestOrder, HoldToken) {
    let o = order_expiring_in(app, event, 3_600).await;
    let token = o.hold_token();
    (o, token)
}

/// What `n` refusals from memory send: a read of the claimant's own
/// order each, and nothing else.
fn own_order_reads(n: u64) -> std::collections::BTreeMap<String, u64> {
    std::collections::BTreeMap::from([("GetItem".to_owned(), n)])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stampede_on_a_held_seat_is_refused_without_writing_to_it() {
    const CROWD: usize = 300;
    let recorder = CapacityRecorder::new();
    let client = recording_client(&testkit::dynamodb_endpoint(), recorder.clone());
    let app = Arc::new(testkit::fresh_app_with(client).await);
    let ev = event(&app, 1, 300).await;
    let holder = order(&app, &ev).await;
    assert_eq!(claim(&app, &holder, "A-1-1").await.0, 200);
    let mut crowd = Vec::new();
    for _ in 0..CROWD + CONTENDED_REFUSALS {
        crowd.push(order(&app, &ev).await);
    }
    // The first refusals go to DynamoDB: the seat becomes contended.
    for o in &crowd[..CONTENDED_REFUSALS] {
        let (status, body) = claim(&app, o, "A-1-1").await;
        assert_eq!((status, body["error"].as_str()), (409, Some("seat-held")));
    }
    recorder.set_recording(true);
    let barrier = Arc::new(tokio::sync::Barrier::new(CROWD));
    let mut tasks = Vec::new();
    for o in crowd.split_off(CONTENDED_REFUSALS) {
        let (app, barrier) = (app.clone(), barrier.clone());
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            claim(&app, &o, "A-1-1").await
        }));
    }
    for t in tasks {
        let (status, body) = t.await.unwrap();
        assert_eq!(
            (status, body["error"].as_str()),
            (409, Some("seat-held")),
            "{body}"
        );
    }
    // Each hold token is checked without a read, and memory answered:
    // nothing reached the seat. Each claimant's own order was read once
    // (whether it holds the seat by now), each on its own partition.
    let sent = recorder.take();
    let own_orders: std::collections::BTreeSet<&str> = sent
        .iter()
        .filter(|r| r.op == "GetItem")
        .filter_map(|r| r.request["Key"]["PK"]["S"].as_str())
        .filter(|pk| pk.starts_with(shared::store::ORDER_PK_PREFIX))
        .collect();
    assert_eq!(
        (sent.len(), own_orders.len()),
        (CROWD, CROWD),
        "requests during the stampede: {sent:?}"
    );
    // The holder's own claim is never answered from memory.
    assert_eq!(claim(&app, &holder, "A-1-1").await.0, 200);
    assert_invariants(&app, &ev).await;
}

#[tokio::test]
async fn memory_never_outlives_a_holds_expiry() {
    let counter = RequestCounter::default();
    let app = fresh_app_counting(Some(counter.clone())).await;
    let ev = event(&app, 1, 300).await;
    let holder = order(&app, &ev).await;
    assert_eq!(claim(&app, &holder, "A-1-1").await.0, 200);
    let t = stored_order(&app, &holder.id).await.expires_at;
    let (rival, token) = rival(&app, &ev).await;
    let rival_id = rival.order_id();
    let seat = SeatId::parse("A-1-1").unwrap();
    let get_seat = local::iam::attributed(&app, "get-seat");
    let claim_at = |now: Millis| get_seat_at(&get_seat, &rival_id, &token, &seat, now);
    for i in 0..CONTENDED_REFUSALS as i64 {
        let refused = claim_at(Millis(t.0 - 300 + i)).await;
        assert!(matches!(refused, Err(Error::SeatHeld)), "{refused:?}");
    }
    counter.take();
    let remembered = claim_at(Millis(t.0 - 1)).await;
    assert!(matches!(remembered, Err(Error::SeatHeld)), "{remembered:?}");
    assert_eq!(
        counter.take(),
        own_order_reads(1),
        "refused from memory, not written"
    );
    // At expiresAt exactly the hold is over: the claim goes to DynamoDB
    // and wins, though this instance remembered the seat as held.
    let at = claim_at(t).await;
    assert!(at.is_ok(), "claimable at expiresAt: {at:?}");
    assert!(!counter.take().is_empty());
    // (No table-wide invariant check here: it reads at the wall clock,
    // at which the holder's order, which this test let expire at t, is
    // still live.)
}

#[tokio::test]
async fn a_release_elsewhere_is_claimable_within_five_seconds() {
    let counter = RequestCounter::default();
    let app = fresh_app_counting(Some(counter.clone())).await;
    let ev = event(&app, 2, 300).await;
    let dropper = order(&app, &ev).await;
    let canceller = order(&app, &ev).await;
    assert_eq!(claim(&app, &dropper, "A-1-1").await.0, 200);
    assert_eq!(claim(&app, &canceller, "A-1-2").await.0, 200);
    let (rival, token) = rival(&app, &ev).await;
    let rival_id = rival.order_id();
    let get_seat = local::iam::attributed(&app, "get-seat");
    let t0 = shared::world::now();
    for seat in ["A-1-1", "A-1-2"] {
        let seat = SeatId::parse(seat).unwrap();
        let claim_at = |now: Millis| get_seat_at(&get_seat, &rival_id, &token, &seat, now);
        for i in 0..CONTENDED_REFUSALS as i64 {
            assert!(matches!(
                claim_at(Millis(t0.0 + i)).await,
                Err(Error::SeatHeld)
            ));
        }
    }
    // Released through other functions (other instances): get-seat's
    // memory does not see it.
    assert_eq!(drop_seat(&app, &dropper, "A-1-1").await.0, 200);
    assert_eq!(cancel(&app, &canceller).await.0, 200);
    for seat in ["A-1-1", "A-1-2"] {
        let seat = SeatId::parse(seat).unwrap();
        let claim_at = |now: Millis| get_seat_at(&get_seat, &rival_id, &token, &seat, now);
        // While the crowd keeps coming (a claim every 250 ms here, each
        // refused from memory and keeping the seat contended), memory may
        // refuse for up to 5 s after the last exact refusal (at t0 + 2)...
        counter.take();
        for ms in (250..=REMEMBERED_FOR_MS + 2).step_by(250) {
            let stale = claim_at(Millis(t0.0 + ms)).await;
            assert!(
                matches!(stale, Err(Error::SeatHeld)),
                "{seat} at {ms}: {stale:?}"
            );
        }
        assert_eq!(counter.take(), own_order_reads(20));
        // ...past that, the exact write runs and wins.
        let after = claim_at(Millis(t0.0 + REMEMBERED_FOR_MS + 3)).await;
        assert!(after.is_ok(), "{seat} claimable 5 s after: {after:?}");
    }
    assert_invariants(&app, &ev).await;
}

#[tokio::test]
async fn the_seats_new_holder_is_never_refused_from_another_instances_memory() {
    let counter = RequestCounter::default();
    let app = fresh_app_counting(Some(counter.clone())).await;
    let ev = event(&app, 1, 300).await;
    let first = order(&app, &ev).await;
    assert_eq!(claim(&app, &first, "A-1-1").await.0, 200);
    // Another instance keeps refusing a crowd's claim: it remembers the first
    // order as the holder.
    let (crowd, crowd_token) = rival(&app, &ev).await;
    // Another get-seat instance than the one the routes below reach.
    let other_instance = shared::App {
        store: app.store.with_client(app.store.client().clone()),
        config: app.config.clone(),
        memory: app.memory.fresh(),
    };
    let seat = SeatId::parse("A-1-1").unwrap();
    let t0 = shared::world::now();
    for i in 0..CONTENDED_REFUSALS as i64 {
        let refused = get_seat_at(
            &other_instance,
            &crowd.order_id(),
            &crowd_token,
            &seat,
            Millis(t0.0 + i),
        )
        .await;
        assert!(matches!(refused, Err(Error::SeatHeld)), "{refused:?}");
    }
    // Through this instance, the first order lets go and a new one takes it.
    assert_eq!(drop_seat(&app, &first, "A-1-1").await.0, 200);
    let (new_holder, new_token) = rival(&app, &ev).await;
    assert_eq!(claim(&app, &new_holder, "A-1-1").await.0, 200);
    // The crowd may still be refused from memory (a release is missed for
    // at most 5 s), with one read of its own order and nothing on the seat.
    counter.take();
    let refused = get_seat_at(
        &other_instance,
        &crowd.order_id(),
        &crowd_token,
        &seat,
        Millis(t0.0 + 5),
    )
    .await;
    assert!(matches!(refused, Err(Error::SeatHeld)), "{refused:?}");
    assert_eq!(counter.take(), own_order_reads(1));
    // The new holder's re-claim through the other instance is its own
    // claim: never answered from memory, and 200.
    let again = get_seat_at(
        &other_instance,
        &new_holder.order_id(),
        &new_token,
        &seat,
        Millis(t0.0 + 10),
    )
    .await;
    assert!(again.is_ok(), "the holder refused from memory: {again:?}");
    assert_invariants(&app, &ev).await;
}

/// The item every request reads of an event is small, even for the
/// largest head the contract allows; create-order and extend-order read
/// only it, eventually consistent; the plan is read where it is needed,
/// from one of its copies.
#[tokio::test]
async fn a_fresh_instance_reads_a_small_head_and_the_plan_only_where_needed() {
    use crowdcheck::capacity::{item_size, wire_item, CapacityRecorder, Recorded};
    let recorder = CapacityRecorder::new();
    let client =
        crowdcheck::capacity::recording_client(&testkit::dynamodb_endpoint(), recorder.clone());
    let mut app = testkit::fresh_app_with(client).await;
    // 1,000 seats on a loaded DynamoDB Local can outlast the default
    // budget: this test is about what is read, not about the budget.
    app.config.create_event_budget_ms = 120_000;
    app.config.request_budget_ms = 120_000;
    // The longest name (200 characters of 2 bytes) and 1,000 sections of
    // the longest ids: all of it in the plan, none in the head.
    let sections: Vec<_> = (0..1_000)
        .map(|i| serde_json::json!({"sectionId": format!("{i:0>64}"), "rows": [{"row": "1", "count": 1}]}))
        .collect();
    let body =
        serde_json::json!({"name": "é".repeat(200), "holdSeconds": 300, "sections": sections});
    let (status, reply) = call(&app, "PUT", "/events/big-head", &[], &body.to_string()).await;
    assert_eq!(status, 201, "{reply}");
    let event_id = shared::domain::EventId::parse("big-head").unwrap();
    let head = common::raw_item(&app, shared::store::event_item_key(&event_id)).await;
    let size = item_size(&wire_item(&head));
    assert!(size <= 1_024, "the event item is {size} bytes");

    let gets = |records: &[Recorded]| -> Vec<(String, bool)> {
        records
            .iter()
            .filter(|r| r.op == "GetItem")
            .map(|r| {
                let pk = r.request["Key"]["PK"]["S"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned();
                (pk, r.request["ConsistentRead"].as_bool().unwrap_or(false))
            })
            .collect()
    };
    let event_pk = head["PK"].as_s().unwrap().clone();
    // create-order on a fresh instance: the head and its copies of the
    // waitlist's and the queue's states (none here), all small, eventually
    // consistent.
    let fresh = app.new_process();
    recorder.take();
    recorder.set_recording(true);
    let o = order(&fresh, "big-head").await;
    let read = gets(&recorder.take());
    let event_ref = event_pk.trim_start_matches("EVENT#");
    let waitlist_copy = format!("WAITLIST#{event_ref}#");
    let queue_copy = format!("QUEUE#{event_ref}#");
    assert_eq!(read.len(), 3, "{read:?}");
    assert_eq!(read[0], (event_pk.clone(), false));
    assert!(
        read[1].0.starts_with(&waitlist_copy) && !read[1].1,
        "{read:?}"
    );
    assert!(read[2].0.starts_with(&queue_copy) && !read[2].1, "{read:?}");
    // extend-order: the order (strongly), then the head alone.
    assert_eq!(extend(&fresh, &o, "{}").await.0, 200);
    let read = gets(&recorder.take());
    assert!(
        read.iter()
            .all(|(pk, _)| !pk.starts_with(shared::store::PLAN_PK_PREFIX)),
        "{read:?}"
    );
    assert!(read.contains(&(event_pk.clone(), false)), "{read:?}");
    // best-available needs the plan: one copy of it, eventually consistent.
    let seated = serde_json::json!({"quantity": 1});
    assert_eq!(best(&fresh, &o, seated).await.0, 200);
    let read = gets(&recorder.take());
    let plan_reads: Vec<_> = read
        .iter()
        .filter(|(pk, _)| pk.starts_with(shared::store::PLAN_PK_PREFIX))
        .collect();
    assert!(!plan_reads.is_empty(), "{read:?}");
    assert!(
        plan_reads
            .iter()
            .all(|(pk, consistent)| !consistent && pk == &plan_reads[0].0),
        "{read:?}"
    );
    // A second request on the same instance reads no event at all.
    let o2 = order(&fresh, "big-head").await;
    assert_eq!(
        best(&fresh, &o2, serde_json::json!({"quantity": 1}))
            .await
            .0,
        200
    );
    let read = gets(&recorder.take());
    assert!(
        read.iter()
            .all(|(pk, _)| pk != &event_pk && !pk.starts_with(shared::store::PLAN_PK_PREFIX)),
        "{read:?}"
    );
}

/// get-seat reads a seat before writing it, on a fresh instance too: a
/// sold or held seat is refused exactly on one read, with no write; a
/// free seat, and a hold at its expiresAt, are still claimed by the
/// conditional write.
#[tokio::test]
async fn a_claim_reads_the_seat_and_refuses_on_the_read_without_writing() {
    let counter = RequestCounter::default();
    let app = fresh_app_counting(Some(counter.clone())).await;
    let ev = event(&app, 8, 300).await;
    let (buyer, holder) = (order(&app, &ev).await, order(&app, &ev).await);
    for seat in ["A-1-1", "A-1-2"] {
        assert_eq!(claim(&app, &buyer, seat).await.0, 200);
    }
    for seat in ["A-1-3", "A-1-4", "A-1-5"] {
        assert_eq!(claim(&app, &holder, seat).await.0, 200);
    }
    let sold: Vec<String> = ["A-1-1", "A-1-2"].map(String::from).to_vec();
    assert_eq!(
        confirm_seats(&app, &buyer.id, "pi_crowd", &sold).await.0,
        200
    );
    let late = order(&app, &ev).await;
    assert_eq!(claim(&app, &late, "A-1-6").await.0, 200);
    let t = stored_order(&app, &late.id).await.expires_at;
    let (rival, token) = rival(&app, &ev).await;
    let rival_id = rival.order_id();
    let get_seat = local::iam::attributed(&app, "get-seat");
    let claim_at = |seat: &'static str, now: Millis| {
        let (get_seat, rival_id, token) = (get_seat.clone(), rival_id.clone(), token.clone());
        async move {
            let seat = SeatId::parse(seat).unwrap();
            get_seat_at(&get_seat, &rival_id, &token, &seat, now).await
        }
    };
    let now = shared::world::now();
    counter.take();
    assert!(matches!(claim_at("A-1-2", now).await, Err(Error::SeatSold)));
    assert!(matches!(claim_at("A-1-5", now).await, Err(Error::SeatHeld)));
    let sent = counter.take();
    assert_eq!(
        sent,
        [("GetItem".to_owned(), 2)].into(),
        "one read each, no write"
    );
    // A free seat: the read, the waitlist's state (a claim that would
    // write asks it; this test's app rereads it each time), then the
    // write, which wins.
    assert!(claim_at("A-1-7", now).await.is_ok());
    let sent = counter.take();
    assert_eq!(
        sent,
        [
            ("GetItem".to_owned(), 2),
            ("TransactWriteItems".to_owned(), 1)
        ]
        .into()
    );
    // A hold read as live a moment before its expiry is refused on the
    // read; at its expiresAt the same read lets the write claim it.
    assert!(matches!(
        claim_at("A-1-6", Millis(t.0 - 1)).await,
        Err(Error::SeatHeld)
    ));
    let at_expiry = claim_at("A-1-6", t).await;
    assert!(at_expiry.is_ok(), "claimable at expiresAt: {at_expiry:?}");
}

/// A claim whose read of the seat DynamoDB throttles (every attempt the
/// SDK makes) is answered from what this instance saw of the seat: within
/// 5 s, refused as the instance last saw it, after a read of the
/// claimant's own order, with no write; never past the hold's expiry,
/// never the holder's own claim. With nothing to rest on: `503`.
#[tokio::test]
async fn a_throttled_read_is_answered_from_what_the_instance_saw() {
    use local::faults::{Fault, FaultInjector};
    let faults = FaultInjector::default();
    let app = testkit::fresh_app_with(local::faults::production_client(
        &testkit::dynamodb_endpoint(),
        [faults.shared()],
    ))
    .await;
    let ev = event(&app, 2, 300).await;
    let holder = order(&app, &ev).await;
    assert_eq!(claim(&app, &holder, "A-1-1").await.0, 200);
    let expires_at = stored_order(&app, &holder.id).await.expires_at;
    let (rival, token) = rival(&app, &ev).await;
    let claim_at = |order: &TestOrder, token: &HoldToken, seat: &str, now: Millis| {
        let (app, id, token) = (app.clone(), order.order_id(), token.clone());
        let seat = SeatId::parse(seat).unwrap();
        async move { get_seat_at(&app, &id, &token, &seat, now).await }
    };
    let throttled_read = |faults: &FaultInjector| {
        faults.reset();
        // The SDK's standard mode: three attempts, each throttled.
        faults.fail("GetItem", Fault::ProvisionedThroughputExceeded, Some(3));
    };
    let now = shared::world::now();
    // Nothing seen of A-1-1 yet: 503, and no write.
    throttled_read(&faults);
    let unseen = claim_at(&rival, &token, "A-1-1", now).await;
    assert!(matches!(unseen, Err(Error::StoreUnavailable)), "{unseen:?}");
    assert_eq!(faults.attempts("TransactWriteItems"), 0, "no write");
    // One exact refusal, then its read throttled: refused as seen, 5 s
    // later, with one read of the rival's own order and no write.
    faults.reset();
    assert!(matches!(
        claim_at(&rival, &token, "A-1-1", now).await,
        Err(Error::SeatHeld)
    ));
    throttled_read(&faults);
    let at = Millis(now.0 + REMEMBERED_FOR_MS);
    assert!(matches!(
        claim_at(&rival, &token, "A-1-1", at).await,
        Err(Error::SeatHeld)
    ));
    assert_eq!(faults.injected("GetItem"), 3);
    assert_eq!(faults.attempts("GetItem"), 4, "the seat's 3, the order's 1");
    assert_eq!(faults.attempts("TransactWriteItems"), 0, "no write");
    // Older than 5 s: nothing to rest on.
    throttled_read(&faults);
    let stale = claim_at(&rival, &token, "A-1-1", Millis(at.0 + 1)).await;
    assert!(matches!(stale, Err(Error::StoreUnavailable)), "{stale:?}");
    // Seen a moment before the hold's expiry: at expiresAt memory is no
    // answer; the read, served, lets the write claim the seat.
    faults.reset();
    let before = Millis(expires_at.0 - 1);
    assert!(matches!(
        claim_at(&rival, &token, "A-1-1", before).await,
        Err(Error::SeatHeld)
    ));
    throttled_read(&faults);
    let at_expiry = claim_at(&rival, &token, "A-1-1", expires_at).await;
    assert!(
        matches!(at_expiry, Err(Error::StoreUnavailable)),
        "{at_expiry:?}"
    );
    faults.reset();
    let claimed = claim_at(&rival, &token, "A-1-1", expires_at).await;
    assert!(claimed.is_ok(), "claimable at expiresAt: {claimed:?}");
    // Another order seen refused is refused from memory; the holder's own
    // claim, its read throttled, goes to the write and stays 200.
    let late = order_expiring_in(&app, &ev, 3_600).await;
    let late_token = late.hold_token();
    assert!(matches!(
        claim_at(&late, &late_token, "A-1-1", expires_at).await,
        Err(Error::SeatHeld)
    ));
    throttled_read(&faults);
    assert!(matches!(
        claim_at(&late, &late_token, "A-1-1", expires_at).await,
        Err(Error::SeatHeld)
    ));
    throttled_read(&faults);
    let own = claim_at(&rival, &token, "A-1-1", expires_at).await;
    assert!(own.is_ok(), "the holder's own claim: {own:?}");
    assert_eq!(
        faults.attempts("TransactWriteItems"),
        1,
        "the write decided"
    );
    // The seat changes hands through another instance: the rival drops it,
    // the late order takes it. Here memory still names the rival (a late
    // claim refused just before); the late order's own order lists the
    // seat, so its claim goes to the write, which re-claims it (200), and
    // is never refused.
    faults.reset();
    assert!(matches!(
        claim_at(&late, &late_token, "A-1-1", expires_at).await,
        Err(Error::SeatHeld)
    ));
    let other = app.new_process();
    let seat = SeatId::parse("A-1-1").unwrap();
    let (rival_id, late_id) = (rival.order_id(), late.order_id());
    release_exactly(&other, &rival_id, &token, &seat, expires_at)
        .await
        .unwrap();
    get_seat_at(&other, &late_id, &late_token, &seat, expires_at)
        .await
        .unwrap();
    throttled_read(&faults);
    let handed = claim_at(&late, &late_token, "A-1-1", expires_at).await;
    assert!(handed.is_ok(), "the new holder's claim: {handed:?}");
    assert_eq!(
        faults.attempts("TransactWriteItems"),
        1,
        "the write decided"
    );
}

/// What is sold is sold for good: once the stream has seen every seat of
/// a section and every place of a general-admission section sold,
/// best-available and hold-ga refuse them without reading them. Before
/// that (one seat, one place left), they still find what is left.
#[tokio::test]
async fn a_section_sold_out_for_good_is_refused_without_reading_it() {
    let counter = RequestCounter::default();
    let app = testkit::fresh_app_streaming(Some(counter.clone())).await;
    let ev = ga_event(&app, 3, 2, 300).await;
    let project = || async {
        local::streams::project_now(&app, &testkit::dynamodb_endpoint())
            .await
            .unwrap()
    };
    let buyer = order(&app, &ev).await;
    for seat in ["A-1-1", "A-1-2"] {
        assert_eq!(claim(&app, &buyer, seat).await.0, 200);
    }
    assert_eq!(hold_ga(&app, &buyer, "FLOOR", 1.into()).await.0, 200);
    let paid = pay(
        &app,
        &buyer,
        "pi_most",
        &["A-1-1", "A-1-2"],
        serde_json::json!([{"sectionId": "FLOOR", "quantity": 1}]),
    )
    .await;
    assert_eq!(paid.0, 200, "{}", paid.1);
    project().await;
    // One seat and one place left: found, held, and bought.
    let last = order(&app, &ev).await;
    let (status, body) = best(&app, &last, serde_json::json!({"quantity": 1})).await;
    assert_eq!(
        (status, body["seats"][0].as_str()),
        (200, Some("A-1-3")),
        "{body}"
    );
    assert_eq!(hold_ga(&app, &last, "FLOOR", 1.into()).await.0, 200);
    let paid = pay(
        &app,
        &last,
        "pi_last",
        &["A-1-3"],
        serde_json::json!([{"sectionId": "FLOOR", "quantity": 1}]),
    )
    .await;
    assert_eq!(paid.0, 200, "{}", paid.1);
    project().await;
    // Sold out: refused on the event's sold-out item alone, by instances
    // that read it first (an instance that read it within the last second,
    // before the sell-out, may take the exact path until it reads again),
    // cold and then warm.
    let fresh = app.new_process();
    for app in [&fresh, &fresh] {
        let late = order(app, &ev).await;
        counter.take();
        let (status, body) = best(app, &late, serde_json::json!({"quantity": 1})).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (409, Some("not-enough-seats")),
            "{body}"
        );
        let (status, body) = hold_ga(app, &late, "FLOOR", 1.into()).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (409, Some("sold-out")),
            "{body}"
        );
        let sent = counter.take();
        assert!(
            !sent.contains_key("Query") && !sent.contains_key("BatchGetItem"),
            "no seat block or bucket read: {sent:?}"
        );
    }
    assert_invariants(&app, &ev).await;
}
