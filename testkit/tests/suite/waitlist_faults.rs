//! The offerer under faults, against a real DynamoDB Local with
//! production's client settings: DynamoDB throttling an offer's
//! transaction (retried by the SDK, or given up on with nothing written,
//! and offered by the next look), and an offerer stopped mid-offer, before
//! its transaction is sent or after it landed (whole or not at all; the
//! next look finishes the work, offering each seat once); a look ends at
//! an offer the waitlist's check refused, as at a delete during the look.

use crate::common;

use std::time::Duration;

use common::waitlist::*;
use common::*;
use local::faults::{production_client, production_client_over, Fault, FaultInjector, SlowStore};
use serde_json::{json, Value};
use shared::domain::EventId;
use testkit::{dynamodb_endpoint, fresh_app_with};

/// An event of `seats` seats in row A-1, all held, a waitlist open with
/// `seats` single entries waiting, then the holder's seats dropped: what
/// an offer will take.
async fn freed_for(app: &shared::App, seats: u32) -> (String, Vec<Value>) {
    let ev = event(app, seats, 300).await;
    let holder = order(app, &ev).await;
    for n in 1..=seats {
        assert_eq!(claim(app, &holder, &format!("A-1-{n}")).await.0, 200);
    }
    put_waitlist(app, &ev, json!({"opens": "now", "offerSeconds": 120})).await;
    let mut entries = Vec::new();
    for i in 0..seats {
        entries.push(joined(app, &ev, &format!("user:{i}"), json!({})).await);
    }
    for n in 1..=seats {
        assert_eq!(drop_seat(app, &holder, &format!("A-1-{n}")).await.0, 200);
    }
    (ev, entries)
}

/// Each entry as it reads, and every seat's holder: each offered entry's
/// order holds exactly its offer's seats, and no seat is held otherwise
/// (an offer landed whole or not at all).
async fn whole_or_nothing(app: &shared::App, ev: &str, entries: &[Value]) -> usize {
    let mut offered = 0;
    let mut held_by_offers = Vec::new();
    for entry in entries {
        let status = status_of(app, ev, entry).await;
        match status["status"].as_str() {
            Some("OFFERED") => {
                offered += 1;
                let (code, read) = get_order(app, &offered_order(&status)).await;
                assert_eq!(
                    (code, &read["seats"]),
                    (200, &status["offer"]["seats"]),
                    "{read}"
                );
                held_by_offers.extend(read["seats"].as_array().unwrap().clone());
            }
            Some("WAITING") => {}
            other => panic!("{other:?}: {status}"),
        }
    }
    let held: Vec<Value> = seats(app, ev)
        .await
        .iter()
        .filter(|s| matches!(s.state, shared::domain::SeatState::Held { .. }))
        .map(|s| json!(s.spec.seat_id.as_str()))
        .collect();
    held_by_offers.sort_by_key(|s| s.to_string());
    assert_eq!(
        held, held_by_offers,
        "every held seat an offer's, and only those"
    );
    offered
}

#[tokio::test]
async fn throttled_offers_are_retried_or_leave_nothing_and_the_next_look_offers() {
    let faults = FaultInjector::default();
    let app = fresh_app_with(production_client(&dynamodb_endpoint(), [faults.shared()])).await;
    let (ev, entries) = freed_for(&app, 2).await;
    let event_id = EventId::parse(&ev).unwrap();
    faults.reset();
    // Throttled twice, then through: the SDK's retries make the offer. (A
    // look that ran past its 2 s in backoff leaves the rest to the next,
    // as the tick's would.)
    faults.fail(
        "TransactWriteItems",
        Fault::ProvisionedThroughputExceeded,
        Some(2),
    );
    let mut made = 0;
    for _ in 0..3 {
        let look = shared::offerer::offer_free(&app, &event_id, shared::world::now()).await;
        let look = look.unwrap();
        made += look.made;
        if !look.more {
            break;
        }
    }
    let counted = (
        faults.attempts("TransactWriteItems"),
        faults.injected("TransactWriteItems"),
    );
    eprintln!("throttled offers: {counted:?} (attempts, throttled) for {made} offers");
    assert_eq!(made, 2, "both offers made");
    // Both throttled attempts were retried; the offers' own attempts (one
    // each, and any lost to a rival transaction) come on top.
    assert_eq!(counted.1, 2, "two throttled attempts: {counted:?}");
    assert!(
        counted.0 >= 4,
        "each offer retried past its throttling: {counted:?}"
    );
    assert_eq!(whole_or_nothing(&app, &ev, &entries).await, 2);

    // Every attempt throttled: the look gives up (503 for a route), writes
    // nothing, and the buyers' status still answers.
    let (ev, entries) = freed_for(&app, 2).await;
    let event_id = EventId::parse(&ev).unwrap();
    faults.reset();
    faults.fail("TransactWriteItems", Fault::Throttling, None);
    let look = shared::offerer::offer_free(&app, &event_id, shared::world::now()).await;
    assert!(
        matches!(look, Err(shared::error::Error::StoreUnavailable)),
        "{look:?}"
    );
    assert_eq!(
        whole_or_nothing(&app, &ev, &entries).await,
        0,
        "nothing half-written"
    );
    faults.reset();
    assert_eq!(offer_free(&app, &ev).await, 2, "the next look offers them");
    assert_eq!(whole_or_nothing(&app, &ev, &entries).await, 2);
}

/// An offer refused on the waitlist's check alone (a put, a delete or a
/// new generation since the look read it, as DynamoDB's cancellation
/// reasons say): the look ends there, with nothing more sent (every other
/// offer would fail on it too), and says there may be more; the next look
/// reads the waitlist again and offers.
#[tokio::test]
async fn a_look_ends_at_an_offer_refused_on_the_waitlists_check() {
    let faults = FaultInjector::default();
    let app = fresh_app_with(production_client(&dynamodb_endpoint(), [faults.shared()])).await;
    let (ev, entries) = freed_for(&app, 2).await;
    let event_id = EventId::parse(&ev).unwrap();
    refuse_next_offer_on_the_waitlists_check(&faults);
    let look = shared::offerer::offer_free(&app, &event_id, shared::world::now()).await;
    let look = look.unwrap();
    assert_eq!((look.made, look.more), (0, true), "{look:?}");
    assert_eq!(
        faults.attempts("TransactWriteItems"),
        1,
        "nothing more sent"
    );
    assert_eq!(whole_or_nothing(&app, &ev, &entries).await, 0);
    assert_eq!(offer_free(&app, &ev).await, 2, "the next look offers");
    assert_eq!(whole_or_nothing(&app, &ev, &entries).await, 2);
}

/// A delete of the waitlist while a look's first offer is on its way (the
/// offer sent a second late): the offer loses on the waitlist's check,
/// the look ends with nothing more sent, and nothing is held or offered.
#[tokio::test]
async fn a_delete_during_a_look_stops_its_offers() {
    let (slow, sent) = (SlowStore::default(), FaultInjector::default());
    let client = production_client_over(&dynamodb_endpoint(), slow.http_client(), [sent.shared()]);
    let app = fresh_app_with(client).await;
    let (ev, entries) = freed_for(&app, 2).await;
    let event_id = EventId::parse(&ev).unwrap();
    let entry_keys = format!("WENTRY#{}", shared::domain::EventRef::of(&event_id));
    let entry_keys: &'static str = Box::leak(entry_keys.into_boxed_str());
    slow.slow_only(
        "TransactWriteItems",
        entry_keys,
        Duration::from_secs(1),
        Duration::ZERO,
    );
    let offers_before = sent.attempts("TransactWriteItems");
    let look = {
        let (app, event_id) = (app.clone(), event_id.clone());
        tokio::spawn(async move {
            shared::offerer::offer_free(&app, &event_id, shared::world::now()).await
        })
    };
    until_sent(&sent, "TransactWriteItems", offers_before).await;
    let (status, _) = send(&app, "DELETE", &format!("/events/{ev}/waitlist"), &[], "").await;
    assert_eq!(status, 200);
    let look = look.await.unwrap().unwrap();
    assert_eq!(look.made, 0, "{look:?}");
    // The offer and the delete: the look sent nothing after its loss.
    assert_eq!(sent.attempts("TransactWriteItems"), offers_before + 2);
    let held = seats(&app, &ev).await;
    let held = held
        .iter()
        .filter(|s| matches!(s.state, shared::domain::SeatState::Held { .. }));
    assert_eq!(held.count(), 0, "no seat held by an offer");
    for entry in &entries {
        let status = status_of(&app, &ev, entry).await;
        assert_ne!(status["status"], "OFFERED", "{status}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_offerer_stopped_mid_offer_leaves_it_whole_or_not_at_all() {
    // The offer's transaction (the only one that writes an entry) late by
    // 3 s before it is sent, then by 3 s after it was answered; the look
    // is stopped after 1 s each time: a crash before the write, and one
    // after it landed.
    let lateness = [
        (Duration::from_secs(3), Duration::ZERO),
        (Duration::ZERO, Duration::from_secs(3)),
    ];
    for (i, (before, after)) in lateness.into_iter().enumerate() {
        let slow = SlowStore::default();
        let app = fresh_app_with(production_client_over(
            &dynamodb_endpoint(),
            slow.http_client(),
            [],
        ))
        .await;
        let (ev, entries) = freed_for(&app, 3).await;
        slow.slow_only("TransactWriteItems", "WENTRY#", before, after);
        let event_id = EventId::parse(&ev).unwrap();
        let look = shared::offerer::offer_free(&app, &event_id, shared::world::now());
        let stopped = tokio::time::timeout(Duration::from_secs(1), look).await;
        assert!(stopped.is_err(), "the look was stopped mid-offer");
        slow.set_delay(Duration::ZERO);
        let landed = whole_or_nothing(&app, &ev, &entries).await;
        let expected = if i == 0 { 0 } else { 1 };
        assert_eq!(
            landed, expected,
            "stopped {before:?} before, {after:?} after"
        );
        // The next look finishes the work: every seat offered once.
        assert_eq!(offer_free(&app, &ev).await as usize, 3 - landed);
        assert_eq!(whole_or_nothing(&app, &ev, &entries).await, 3);
    }
}
