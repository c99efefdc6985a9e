//! DynamoDB requests per operation, counted by an SDK interceptor: the
//! physical limit is one. get-seat, drop-seat and confirm's common path
//! (a live order holding exactly what was paid) reach it, whatever the
//! seat count.

use crate::common;

use std::collections::BTreeMap;

use common::*;
use local::metrics::RequestCounter;

fn counts(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

#[tokio::test]
async fn requests_per_operation() {
    let counter = RequestCounter::default();
    let app = testkit::fresh_app_counting(Some(counter.clone())).await;
    // An instance keeps its read of the event's queue and waitlist states
    // for a second on AWS (the test app reads them every time); here for
    // the whole test, so that no count depends on the test's pace.
    let app = shared::App {
        memory: app.memory.clone().with_state_cache_ms(60_000),
        ..app
    };
    let ev = event(&app, 14, 300).await;
    counter.take();

    let o = order(&app, &ev).await;
    assert_eq!(
        counter.take(),
        counts(&[("GetItem", 3), ("UpdateItem", 1)]),
        "create-order: the event and its queue's and waitlist's states (none) once, then the order"
    );
    let _ = order(&app, &ev).await;
    assert_eq!(
        counter.take(),
        counts(&[("UpdateItem", 1)]),
        "create-order: a ready event, and its queue's and waitlist's states for a second, are cached per process"
    );
    assert_eq!(claim(&app, &o, "A-1-1").await.0, 200);
    assert_eq!(
        counter.take(),
        counts(&[("GetItem", 2), ("TransactWriteItems", 1)]),
        "get-seat: the seat read, the waitlist's state (once per instance: a claim that would write asks it), then the transaction"
    );
    assert_eq!(claim(&app, &o, "A-1-1").await.0, 200);
    assert_eq!(
        counter.take(),
        counts(&[("GetItem", 1), ("TransactWriteItems", 1)]),
        "idempotent get-seat"
    );
    let rival = order(&app, &ev).await;
    counter.take();
    assert_eq!(claim(&app, &rival, "A-1-1").await.0, 409);
    assert_eq!(
        counter.take(),
        counts(&[("GetItem", 1)]),
        "a refused get-seat: the read alone, no write"
    );
    assert_eq!(drop_seat(&app, &o, "A-1-1").await.0, 200);
    assert_eq!(
        counter.take(),
        counts(&[("TransactWriteItems", 1)]),
        "drop-seat: one round trip"
    );
    assert_eq!(get_order(&app, &o).await.0, 200);
    assert_eq!(counter.take(), counts(&[("GetItem", 1)]), "get-order");
    assert_eq!(
        call(&app, "GET", &format!("/events/{ev}/seats"), &[], "")
            .await
            .0,
        200
    );
    // Each function is its own Lambda instance: list-seats reads the event
    // once, its small item and then one copy of its plan.
    assert_eq!(
        counter.take(),
        counts(&[("GetItem", 2), ("Query", 2)]),
        "list-seats: the event and its plan, then one query per seat block (14 seats: 2)"
    );
    assert_eq!(
        call(
            &app,
            "GET",
            &format!("/events/{ev}/seats?section=A&limit=5"),
            &[],
            ""
        )
        .await
        .0,
        200
    );
    assert_eq!(
        counter.take(),
        counts(&[("Query", 1)]),
        "list-seats, a page of 5: one block, the event cached"
    );

    // confirm's common path: one transaction, no read, for 1 seat or 10.
    let mut next_seat = 2;
    for seats in [1usize, 10] {
        let buyer = order(&app, &ev).await;
        let mut held = Vec::new();
        for _ in 0..seats {
            held.push(format!("A-1-{next_seat}"));
            assert_eq!(
                claim(&app, &buyer, &format!("A-1-{next_seat}")).await.0,
                200
            );
            next_seat += 1;
        }
        counter.take();
        assert_eq!(
            confirm_seats(&app, &buyer.id, &format!("pi_{seats}"), &held)
                .await
                .0,
            200
        );
        assert_eq!(
            counter.take(),
            counts(&[("TransactWriteItems", 1)]),
            "confirm with {seats} seats"
        );
    }
    // Not the common case (it holds more than was paid): one read more, and
    // the transaction that sells the paid seat and releases the other.
    let partial = order(&app, &ev).await;
    assert_eq!(claim(&app, &partial, "A-1-13").await.0, 200);
    assert_eq!(claim(&app, &partial, "A-1-14").await.0, 200);
    counter.take();
    assert_eq!(
        confirm_seats(&app, &partial.id, "pi_partial", &["A-1-13".to_owned()])
            .await
            .0,
        200
    );
    assert_eq!(
        counter.take(),
        counts(&[("GetItem", 1), ("TransactWriteItems", 2)]),
        "confirm of part of an order"
    );
}
