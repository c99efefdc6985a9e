//! General admission on DynamoDB Local: capacity under a real stampede,
//! set-quantity semantics, places of an expired order taken over at once
//! (no sweep), the seat limit over seats and places together, and places
//! released by cancel and the sweep, moved by extend.

use crate::common;

use common::*;
use serde_json::json;
use shared::domain::ga::bucket_count;
use shared::domain::{EventId, SectionId};

/// Invariant 8 read straight from the buckets: sold + live holds per bucket
/// within its capacity, and the section's totals.
async fn floor_totals(app: &shared::App, ev: &str, capacity: u32) -> (u32, u32) {
    let section = SectionId::parse("FLOOR").unwrap();
    let indexes: Vec<u32> = (0..bucket_count(capacity)).collect();
    let buckets = app
        .store
        .read_buckets(&EventId::parse(ev).unwrap(), &section, &indexes, true)
        .await
        .unwrap();
    assert_eq!(buckets.len(), indexes.len());
    let now = shared::world::now();
    for b in &buckets {
        assert!(
            b.sold + b.live_held(now) <= b.capacity,
            "bucket {} over capacity: {b:?}",
            b.index
        );
        let recorded: u32 = b.holds.iter().map(|h| h.quantity).sum();
        assert_eq!(
            b.sold + recorded + b.free,
            b.capacity,
            "bucket {} does not add up: {b:?}",
            b.index
        );
    }
    (
        buckets.iter().map(|b| b.sold).sum(),
        buckets.iter().map(|b| b.live_held(now)).sum(),
    )
}

#[tokio::test]
async fn two_hundred_buyers_of_one_place_each_get_exactly_fifty() {
    let app = fresh_app().await;
    let ev = ga_event(&app, 1, 50, 300).await;
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..200 {
        let (app, ev) = (app.clone(), ev.clone());
        tasks.spawn(async move {
            let o = order(&app, &ev).await;
            hold_ga(&app, &o, "FLOOR", json!(1)).await
        });
    }
    let (mut won, mut sold_out) = (0, 0);
    while let Some(reply) = tasks.join_next().await {
        let (status, body) = reply.unwrap();
        match (status, body["error"].as_str()) {
            (200, _) => {
                assert_eq!(body["quantity"], 1);
                won += 1;
            }
            (409, Some("sold-out")) => {
                assert_eq!(body["available"], 0, "{body}");
                sold_out += 1;
            }
            other => panic!("unexpected {other:?}: {body}"),
        }
    }
    assert_eq!((won, sold_out), (50, 150));
    assert_eq!(floor_totals(&app, &ev, 50).await, (0, 50));
    let (_, map) = call(&app, "GET", &format!("/events/{ev}/availability"), &[], "").await;
    assert_eq!(
        map["sections"][1],
        json!({"sectionId": "FLOOR", "kind": "ga", "capacity": 50, "available": 0})
    );
}

#[tokio::test]
async fn hold_ga_sets_the_quantity_and_says_what_is_left() {
    let app = fresh_app().await;
    let ev = ga_event(&app, 4, 12, 300).await;
    let o = order(&app, &ev).await;
    let (status, body) = hold_ga(&app, &o, "FLOOR", json!(3)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (
            body["orderId"].as_str(),
            &body["sectionId"],
            &body["quantity"]
        ),
        (Some(o.id.as_str()), &json!("FLOOR"), &json!(3))
    );
    assert_eq!(body["expiresAt"].as_str(), Some(o.expires_at.as_str()));
    // Set, not add: 5 means 5; the same again changes nothing.
    for _ in 0..2 {
        assert_eq!(hold_ga(&app, &o, "FLOOR", json!(5)).await.1["quantity"], 5);
    }
    assert_eq!(floor_totals(&app, &ev, 12).await, (0, 5));
    let (_, got) = get_order(&app, &o).await;
    assert_eq!(
        got["ga"],
        json!([{"sectionId": "FLOOR", "quantity": 5}]),
        "{got}"
    );
    assert_eq!(got["seats"], json!([]), "places are not seats");
    // Another order can have only what is left, and is told how much.
    let rival = order(&app, &ev).await;
    let (status, body) = hold_ga(&app, &rival, "FLOOR", json!(8)).await;
    assert_eq!(
        (status, &body["error"], &body["available"]),
        (409, &json!("sold-out"), &json!(7)),
        "{body}"
    );
    assert_eq!(hold_ga(&app, &rival, "FLOOR", json!(7)).await.0, 200);
    let (status, body) = hold_ga(&app, &o, "FLOOR", json!(6)).await;
    assert_eq!(
        (status, &body["available"]),
        (409, &json!(5)),
        "its own 5 are what it could set: {body}"
    );
    // Lowering never fails, down to 0.
    assert_eq!(
        hold_ga(&app, &rival, "FLOOR", json!(2)).await.1["quantity"],
        2
    );
    assert_eq!(hold_ga(&app, &o, "FLOOR", json!(0)).await.1["quantity"], 0);
    assert_eq!(get_order(&app, &o).await.1["ga"], json!([]));
    assert_eq!(floor_totals(&app, &ev, 12).await, (0, 2));
    let (_, map) = call(&app, "GET", &format!("/events/{ev}/availability"), &[], "").await;
    assert_eq!(map["sections"][1]["available"], 10, "{map}");

    // What the contract refuses.
    for bad in [json!(-1), json!(11), json!("2"), json!(null)] {
        let (status, body) = hold_ga(&app, &o, "FLOOR", bad.clone()).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("bad-request")),
            "{bad}: {body}"
        );
    }
    assert_eq!(
        hold_ga(&app, &o, "A", json!(1)).await.0,
        400,
        "a seated section"
    );
    assert_eq!(
        hold_ga(&app, &o, "NOPE", json!(1)).await.1["error"],
        "section-not-found"
    );
    let thief = TestOrder {
        token: rival.token.clone(),
        ..o.clone()
    };
    assert_eq!(hold_ga(&app, &thief, "FLOOR", json!(1)).await.0, 401);
}

#[tokio::test]
async fn the_plan_shows_general_admission_everywhere() {
    let app = fresh_app().await;
    let ev = ga_event(&app, 3, 20_000, 300).await;
    let (_, got) = call(&app, "GET", &format!("/events/{ev}"), &[], "").await;
    assert_eq!(
        (&got["seatCount"], &got["gaCapacity"]),
        (&json!(3), &json!(20_000))
    );
    assert_eq!(
        got["sections"][1],
        json!({"sectionId": "FLOOR", "kind": "ga", "capacity": 20_000})
    );
    let (status, seats) = call(
        &app,
        "GET",
        &format!("/events/{ev}/seats?section=FLOOR"),
        &[],
        "",
    )
    .await;
    assert_eq!((status, &seats["seats"]), (200, &json!([])), "{seats}");
    assert!(seats.get("nextCursor").is_none());
    let (_, all) = call(&app, "GET", &format!("/events/{ev}/seats"), &[], "").await;
    assert_eq!(all["seats"].as_array().unwrap().len(), 3);
    assert_eq!(floor_totals(&app, &ev, 20_000).await, (0, 0));
    let (_, map) = call(&app, "GET", &format!("/events/{ev}/availability"), &[], "").await;
    assert_eq!(map["sections"][1]["available"], 20_000);
    // A GA-only event has no seats at all.
    let (status, body) = call(
        &app,
        "PUT",
        "/events/ga-only-event",
        &[],
        r#"{"name":"Club","sections":[{"sectionId":"F","capacity":5}]}"#,
    )
    .await;
    assert_eq!(
        (status, &body["seatCount"], &body["gaCapacity"]),
        (201, &json!(0), &json!(5)),
        "{body}"
    );
}

#[tokio::test]
async fn an_expired_orders_places_go_to_the_next_buyer_at_once() {
    let app = fresh_app().await;
    let ev = ga_event(&app, 1, 5, 1).await;
    // A hold of its own length: still live when the rival asks, however
    // slow the machine.
    let early = order_expiring_in(&app, &ev, 3).await;
    assert_eq!(hold_ga(&app, &early, "FLOOR", json!(5)).await.0, 200);
    let live = order_expiring_in(&app, &ev, 60).await;
    let (status, body) = hold_ga(&app, &live, "FLOOR", json!(1)).await;
    assert_eq!((status, &body["available"]), (409, &json!(0)), "{body}");
    let_expire(&early).await;
    // No sweep has run: the expired places are taken over by the write itself.
    let (status, body) = hold_ga(&app, &live, "FLOOR", json!(5)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(floor_totals(&app, &ev, 5).await, (0, 5));
    // The sweep later finds nothing of the expired order's left to give back.
    let summary = sweep(&app).await;
    assert_eq!(
        (summary.expired_orders, summary.released_places),
        (1, 0),
        "{summary:?}"
    );
}

#[tokio::test]
async fn the_sweep_and_cancel_give_places_back_and_extend_keeps_them() {
    let app = fresh_app().await;
    let ev = ga_event(&app, 1, 10, 2).await;
    // Holds of 4 s: the three orders' work before the expiry fits however
    // slow the machine.
    let swept = order_expiring_in(&app, &ev, 4).await;
    let cancelled = order_expiring_in(&app, &ev, 4).await;
    let extended = order_expiring_in(&app, &ev, 4).await;
    for (o, n) in [(&swept, 3), (&cancelled, 3), (&extended, 4)] {
        assert_eq!(hold_ga(&app, o, "FLOOR", json!(n)).await.0, 200);
    }
    assert_eq!(cancel(&app, &cancelled).await.0, 200);
    assert_eq!(
        floor_totals(&app, &ev, 10).await,
        (0, 7),
        "cancelled: given back at once"
    );
    let (status, body) = call(
        &app,
        "POST",
        &format!("/orders/{}/extend", extended.id),
        &[("authorization", &extended.auth())],
        r#"{"seconds": 60}"#,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let_expire(&swept).await;
    // The extended order's places outlive the original expiry.
    assert_eq!(floor_totals(&app, &ev, 10).await, (0, 4));
    let rival = order_expiring_in(&app, &ev, 60).await;
    let (status, body) = hold_ga(&app, &rival, "FLOOR", json!(7)).await;
    assert_eq!((status, &body["available"]), (409, &json!(6)), "{body}");
    let summary = sweep(&app).await;
    assert_eq!(
        (summary.expired_orders, summary.released_places),
        (1, 3),
        "{summary:?}"
    );
    assert_eq!(hold_ga(&app, &rival, "FLOOR", json!(6)).await.0, 200);
    assert_eq!(floor_totals(&app, &ev, 10).await, (0, 10));
}

#[tokio::test]
async fn seats_and_places_count_together_against_the_limit() {
    let app = fresh_app().await;
    let ev = ga_event(&app, 10, 20, 300).await;
    let o = order(&app, &ev).await;
    for n in 1..=8 {
        assert_eq!(claim(&app, &o, &format!("A-1-{n}")).await.0, 200);
    }
    let (status, body) = hold_ga(&app, &o, "FLOOR", json!(3)).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (422, Some("seat-limit")),
        "{body}"
    );
    assert_eq!(hold_ga(&app, &o, "FLOOR", json!(2)).await.0, 200);
    let (status, body) = claim(&app, &o, "A-1-9").await;
    assert_eq!(
        (status, body["error"].as_str()),
        (422, Some("seat-limit")),
        "8 seats and 2 places: {body}"
    );
    let (status, body) = call(
        &app,
        "POST",
        &format!("/orders/{}/best-available", o.id),
        &[("authorization", &o.auth())],
        r#"{"quantity": 1}"#,
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (422, Some("seat-limit")),
        "{body}"
    );
    assert_eq!(drop_seat(&app, &o, "A-1-1").await.0, 200);
    assert_eq!(claim(&app, &o, "A-1-9").await.0, 200);
    let (_, got) = get_order(&app, &o).await;
    assert_eq!(got["seats"].as_array().unwrap().len(), 8);
    assert_eq!(got["ga"], json!([{"sectionId": "FLOOR", "quantity": 2}]));
}

#[tokio::test]
async fn confirm_sells_the_paid_places_and_gives_back_the_rest() {
    let app = fresh_app().await;
    let ev = ga_event(&app, 2, 10, 300).await;
    let o = order(&app, &ev).await;
    assert_eq!(claim(&app, &o, "A-1-1").await.0, 200);
    assert_eq!(hold_ga(&app, &o, "FLOOR", json!(3)).await.0, 200);
    for _ in 0..2 {
        let (status, body) = pay(
            &app,
            &o,
            "pay-ga-1",
            &["A-1-1"],
            json!([{"sectionId": "FLOOR", "quantity": 2}]),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            (&body["status"], &body["seats"], &body["ga"]),
            (
                &json!("COMPLETED"),
                &json!(["A-1-1"]),
                &json!([{"sectionId": "FLOOR", "quantity": 2}])
            ),
            "{body}"
        );
    }
    assert_eq!(
        floor_totals(&app, &ev, 10).await,
        (2, 0),
        "2 sold, the third given back"
    );
    let (_, got) = get_order(&app, &o).await;
    assert_eq!(
        (&got["status"], &got["ga"]),
        (
            &json!("COMPLETED"),
            &json!([{"sectionId": "FLOOR", "quantity": 2}])
        ),
        "{got}"
    );
    testkit::assert_invariants(&app, &ev).await;

    // Only seats paid for: the places it held go back in the same transaction.
    let seats_only = order(&app, &ev).await;
    assert_eq!(claim(&app, &seats_only, "A-1-2").await.0, 200);
    assert_eq!(hold_ga(&app, &seats_only, "FLOOR", json!(4)).await.0, 200);
    let (status, body) = pay(&app, &seats_only, "pay-ga-2", &["A-1-2"], json!([])).await;
    assert_eq!((status, &body["ga"]), (200, &json!([])), "{body}");
    assert_eq!(floor_totals(&app, &ev, 10).await, (2, 0));

    // More places paid for than held: the one held and one free place sold.
    let greedy = order(&app, &ev).await;
    assert_eq!(hold_ga(&app, &greedy, "FLOOR", json!(1)).await.0, 200);
    let (status, body) = pay(
        &app,
        &greedy,
        "pay-ga-3",
        &[],
        json!([{"sectionId": "FLOOR", "quantity": 2}]),
    )
    .await;
    assert_eq!(
        (status, &body["ga"]),
        (200, &json!([{"sectionId": "FLOOR", "quantity": 2}])),
        "{body}"
    );
    assert_eq!(floor_totals(&app, &ev, 10).await, (4, 0));
    assert_eq!(
        get_order(&app, &greedy).await.1["ga"],
        json!([{"sectionId": "FLOOR", "quantity": 2}])
    );

    // Paid for places nobody can give (the rest live-held): refund due, and
    // what it held goes back.
    let rival = order(&app, &ev).await;
    assert_eq!(hold_ga(&app, &rival, "FLOOR", json!(5)).await.0, 200);
    let short = order(&app, &ev).await;
    assert_eq!(hold_ga(&app, &short, "FLOOR", json!(1)).await.0, 200);
    let (status, body) = pay(
        &app,
        &short,
        "pay-ga-4",
        &[],
        json!([{"sectionId": "FLOOR", "quantity": 2}]),
    )
    .await;
    assert_eq!(
        (status, &body["error"], &body["refund"]),
        (409, &json!("seats-unavailable"), &json!(true)),
        "{body}"
    );
    assert_eq!(get_order(&app, &short).await.1["status"], "REFUND_DUE");
    assert_eq!(
        floor_totals(&app, &ev, 10).await,
        (4, 5),
        "its place went back; the rival's stay"
    );
    // A section the event does not have, or a seated one: money arrived, refund.
    for (i, section) in ["NOPE", "A"].into_iter().enumerate() {
        let stray = order(&app, &ev).await;
        let (status, body) = pay(
            &app,
            &stray,
            &format!("pay-ga-stray-{i}"),
            &[],
            json!([{"sectionId": section, "quantity": 1}]),
        )
        .await;
        assert_eq!(
            (status, &body["refund"]),
            (409, &json!(true)),
            "{section}: {body}"
        );
    }
    testkit::assert_invariants(&app, &ev).await;
}

#[tokio::test]
async fn a_live_payment_for_a_seat_it_does_not_hold_gives_its_places_back() {
    let app = fresh_app().await;
    let ev = ga_event(&app, 3, 10, 300).await;
    let o = order(&app, &ev).await;
    assert_eq!(hold_ga(&app, &o, "FLOOR", json!(3)).await.0, 200);
    // A free seat it never held, no places: taken and sold, the places go back.
    let (status, body) = pay(&app, &o, "pay-live-take", &["A-1-3"], json!([])).await;
    assert_eq!(
        (status, &body["seats"], &body["ga"]),
        (200, &json!(["A-1-3"]), &json!([])),
        "{body}"
    );
    assert_eq!(floor_totals(&app, &ev, 10).await, (0, 0));
    // Refunded while live (a seat another order holds): its places go back too.
    let rival = order(&app, &ev).await;
    assert_eq!(claim(&app, &rival, "A-1-1").await.0, 200);
    let refused = order(&app, &ev).await;
    assert_eq!(hold_ga(&app, &refused, "FLOOR", json!(2)).await.0, 200);
    let (status, body) = pay(&app, &refused, "pay-live-refund", &["A-1-1"], json!([])).await;
    assert_eq!(
        (status, &body["error"], &body["refund"]),
        (409, &json!("seats-unavailable"), &json!(true)),
        "{body}"
    );
    assert_eq!(floor_totals(&app, &ev, 10).await, (0, 0));
    testkit::assert_invariants(&app, &ev).await;
}

#[tokio::test]
async fn late_payments_for_cancelled_and_expired_orders_retake_places_or_refund() {
    let app = fresh_app().await;
    let ev = ga_event(&app, 1, 6, 1).await;
    // Cancelled, then paid while places are free: they are taken and sold.
    let cancelled = order_expiring_in(&app, &ev, 60).await;
    assert_eq!(hold_ga(&app, &cancelled, "FLOOR", json!(2)).await.0, 200);
    assert_eq!(cancel(&app, &cancelled).await.0, 200);
    assert_eq!(floor_totals(&app, &ev, 6).await, (0, 0));
    let (status, body) = pay(
        &app,
        &cancelled,
        "pay-cancelled",
        &[],
        json!([{"sectionId": "FLOOR", "quantity": 2}]),
    )
    .await;
    assert_eq!(
        (status, &body["status"], &body["ga"]),
        (
            200,
            &json!("COMPLETED"),
            &json!([{"sectionId": "FLOOR", "quantity": 2}])
        ),
        "{body}"
    );
    assert_eq!(floor_totals(&app, &ev, 6).await, (2, 0));
    // Again: the same 200, nothing more sold.
    assert_eq!(
        pay(
            &app,
            &cancelled,
            "pay-cancelled",
            &[],
            json!([{"sectionId": "FLOOR", "quantity": 2}])
        )
        .await
        .0,
        200
    );
    assert_eq!(floor_totals(&app, &ev, 6).await, (2, 0));

    // Expired holding 1, paid for 3: its own place nobody took over and
    // the two of another expired order, reclaimed in the same write.
    let expired = order(&app, &ev).await;
    assert_eq!(hold_ga(&app, &expired, "FLOOR", json!(1)).await.0, 200);
    let abandoned = order(&app, &ev).await;
    assert_eq!(hold_ga(&app, &abandoned, "FLOOR", json!(2)).await.0, 200);
    let live = order_expiring_in(&app, &ev, 60).await;
    assert_eq!(hold_ga(&app, &live, "FLOOR", json!(1)).await.0, 200);
    let_holds_expire(1).await;
    let (status, body) = pay(
        &app,
        &expired,
        "pay-expired",
        &[],
        json!([{"sectionId": "FLOOR", "quantity": 3}]),
    )
    .await;
    assert_eq!(
        (status, &body["ga"]),
        (200, &json!([{"sectionId": "FLOOR", "quantity": 3}])),
        "{body}"
    );
    assert_eq!(
        floor_totals(&app, &ev, 6).await,
        (5, 1),
        "the live order keeps its place"
    );

    // Cancelled, and the places taken meanwhile: refund due.
    let outbid = order_expiring_in(&app, &ev, 60).await;
    let (status, body) = hold_ga(&app, &outbid, "FLOOR", json!(1)).await;
    assert_eq!((status, &body["available"]), (409, &json!(0)), "{body}");
    assert_eq!(cancel(&app, &outbid).await.0, 200);
    let (status, body) = pay(
        &app,
        &outbid,
        "pay-outbid",
        &[],
        json!([{"sectionId": "FLOOR", "quantity": 1}]),
    )
    .await;
    assert_eq!(
        (status, &body["error"], &body["refund"]),
        (409, &json!("order-expired"), &json!(true)),
        "{body}"
    );
    assert_eq!(get_order(&app, &outbid).await.1["status"], "REFUND_DUE");
    assert_eq!(floor_totals(&app, &ev, 6).await, (5, 1));
    testkit::assert_invariants(&app, &ev).await;
}

#[tokio::test]
async fn late_payments_racing_for_the_last_places_never_oversell() {
    let app = fresh_app().await;
    let ev = ga_event(&app, 1, 20, 60).await;
    // 16 cancelled orders, each paid for 2 places afterwards, at once: 10
    // complete, 6 are refunds, and nothing is sold twice.
    let mut orders = Vec::new();
    for _ in 0..16 {
        let o = order(&app, &ev).await;
        assert_eq!(hold_ga(&app, &o, "FLOOR", json!(2)).await.0, 200);
        assert_eq!(cancel(&app, &o).await.0, 200);
        orders.push(o);
    }
    let mut tasks = tokio::task::JoinSet::new();
    for (i, o) in orders.into_iter().enumerate() {
        let app = app.clone();
        tasks.spawn(async move {
            pay(
                &app,
                &o,
                &format!("pay-race-{i}"),
                &[],
                json!([{"sectionId": "FLOOR", "quantity": 2}]),
            )
            .await
        });
    }
    let (mut completed, mut refunded) = (0, 0);
    while let Some(done) = tasks.join_next().await {
        let (status, body) = done.unwrap();
        match (status, body["refund"].as_bool()) {
            (200, _) => completed += 1,
            (409, Some(true)) => refunded += 1,
            _ => panic!("unexpected answer {status}: {body}"),
        }
    }
    let (sold, held) = floor_totals(&app, &ev, 20).await;
    assert_eq!(held, 0);
    assert_eq!(
        sold,
        2 * completed,
        "every completed payment sold exactly its places"
    );
    assert!(completed <= 10);
    // Nothing frees places here, so a refund is only honest once all 20 are sold.
    if refunded > 0 {
        assert_eq!(completed, 10, "{refunded} refunded while places were left");
    }
    assert_eq!(
        (completed, refunded),
        (10, 6),
        "every payment answered for good: 20 places, 2 each"
    );
    testkit::assert_invariants(&app, &ev).await;
}

#[tokio::test]
async fn a_late_payment_buys_the_places_nobody_took_over_and_refunds_otherwise() {
    let app = fresh_app().await;
    let ev = ga_event(&app, 1, 4, 1).await;
    let late = order(&app, &ev).await;
    assert_eq!(hold_ga(&app, &late, "FLOOR", json!(2)).await.0, 200);
    let unlucky = order(&app, &ev).await;
    assert_eq!(hold_ga(&app, &unlucky, "FLOOR", json!(2)).await.0, 200);
    let_holds_expire(1).await;
    // Nobody took the first order's places: paid late, they are sold.
    let (status, body) = pay(
        &app,
        &late,
        "pay-late-ga",
        &[],
        json!([{"sectionId": "FLOOR", "quantity": 2}]),
    )
    .await;
    assert_eq!(
        (status, &body["ga"]),
        (200, &json!([{"sectionId": "FLOOR", "quantity": 2}])),
        "{body}"
    );
    assert_eq!(floor_totals(&app, &ev, 4).await, (2, 0));
    // A rival takes over the second order's expired places first: refund.
    let rival = order_expiring_in(&app, &ev, 60).await;
    assert_eq!(hold_ga(&app, &rival, "FLOOR", json!(2)).await.0, 200);
    let (status, body) = pay(
        &app,
        &unlucky,
        "pay-late-ga-2",
        &[],
        json!([{"sectionId": "FLOOR", "quantity": 2}]),
    )
    .await;
    assert_eq!(
        (status, &body["error"], &body["refund"]),
        (409, &json!("order-expired"), &json!(true)),
        "{body}"
    );
    assert_eq!(
        floor_totals(&app, &ev, 4).await,
        (2, 2),
        "the rival keeps its places"
    );
}

/// The invariant check reads the buckets: a place sold without an order,
/// or a live hold no order records, is reported (so the checks above could
/// fail).
#[tokio::test]
async fn the_invariant_check_sees_a_place_sold_twice_or_a_stray_hold() {
    use aws_sdk_dynamodb::types::AttributeValue;
    let app = fresh_app().await;
    let ev = ga_event(&app, 1, 10, 300).await;
    let o = order(&app, &ev).await;
    assert_eq!(hold_ga(&app, &o, "FLOOR", json!(2)).await.0, 200);
    assert_eq!(
        pay(
            &app,
            &o,
            "pay-check",
            &[],
            json!([{"sectionId": "FLOOR", "quantity": 2}])
        )
        .await
        .0,
        200
    );
    testkit::assert_invariants(&app, &ev).await;
    let key = shared::store::ga_bucket_item_key(
        &EventId::parse(&ev).unwrap(),
        &SectionId::parse("FLOOR").unwrap(),
        0,
    );
    let n = |v: i64| AttributeValue::N(v.to_string());
    let stray = raw_place_hold(1, shared::world::now().0 + 60_000);
    app.store
        .client()
        .update_item()
        .table_name(app.store.table_name())
        .set_key(Some(key))
        .update_expression("SET #sold = #sold + :one, #free = #free - :two, #stray = :stray")
        .expression_attribute_names("#sold", "sold")
        .expression_attribute_names("#free", "free")
        .expression_attribute_names("#stray", "hold#stray-order")
        .expression_attribute_values(":one", n(1))
        .expression_attribute_values(":two", n(2))
        .expression_attribute_values(":stray", stray)
        .send()
        .await
        .unwrap();
    let check = local::invariants::check_invariants(&app, &ev).await;
    let found = check.violations.join("\n");
    assert!(
        found.contains("has 3 sold, COMPLETED orders list 2 there"),
        "{found}"
    );
    assert!(
        found.contains("its order does not record as live"),
        "{found}"
    );
    assert_eq!(check.violations.len(), 2, "{found}");
}
