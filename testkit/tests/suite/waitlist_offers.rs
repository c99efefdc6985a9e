//! A waitlist's offers against a real DynamoDB Local: free seats go to the
//! earliest-joined waiting entries they fill as ordinary orders already
//! holding them (the entry's status hands over the hold token), an entry
//! that cannot be filled keeps its place, an offer cannot be extended,
//! pays as any order, and a decline or a removal cancels it; two offerers
//! at once never offer a seat twice.

use crate::common;

use common::waitlist::*;
use common::*;
use serde_json::{json, Value};

/// An event with one row of `seats` in section A and an open waitlist
/// whose offers hold for 120 s.
async fn offering_event(app: &shared::App, seats: u32) -> String {
    let (ev, _) = create_event(app, "of", &plan(&[("A", "1", seats)], Some(300))).await;
    put_waitlist(app, &ev, json!({"opens": "now", "offerSeconds": 120})).await;
    ev
}

#[tokio::test]
async fn free_seats_are_offered_as_orders_to_the_earliest_entries_they_fill() {
    let app = fresh_app().await;
    let ev = offering_event(&app, 4).await;
    let pair = joined(&app, &ev, "user:1", json!({"quantity": 2})).await;
    let three = joined(&app, &ev, "user:2", json!({"quantity": 3})).await;
    let one = joined(&app, &ev, "user:3", json!({"quantity": 1})).await;
    let before = shared::world::now();
    // Two together for the first; three together no longer fit, so the
    // second keeps its place and the third gets one.
    assert_eq!(offer_free(&app, &ev).await, 2);
    let offered = status_of(&app, &ev, &pair).await;
    assert_eq!(offered["status"], "OFFERED", "{offered}");
    let seats = offered["offer"]["seats"].as_array().unwrap().clone();
    assert_eq!(
        (seats.len(), &offered["offer"]["ga"]),
        (2, &json!([])),
        "{offered}"
    );
    let expires =
        chrono::DateTime::parse_from_rfc3339(offered["offer"]["expiresAt"].as_str().unwrap())
            .unwrap()
            .timestamp_millis();
    assert!((before.0 + 120_000..=shared::world::now().0 + 120_000).contains(&expires));
    assert_eq!(status_of(&app, &ev, &three).await["status"], "WAITING");
    assert_eq!(status_of(&app, &ev, &one).await["status"], "OFFERED");
    // The organiser's list shows the offers, without their token.
    let (_, listed) = list(&app, &ev, "?status=OFFERED").await;
    let shown: Vec<&Value> = listed["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["offer"])
        .collect();
    assert_eq!(shown.len(), 2, "{listed}");
    assert!(
        shown
            .iter()
            .all(|offer| offer["orderId"].is_string() && offer.get("holdToken").is_none()),
        "{listed}"
    );

    // The hold token opens an ordinary order: its buyer and entry named,
    // no extension, paid as any order.
    let order = offered_order(&offered);
    let (status, read) = get_order(&app, &order).await;
    assert_eq!(
        (
            status,
            &read["status"],
            &read["seats"],
            &read["waitlistEntryId"],
            &read["buyerId"]
        ),
        (
            200,
            &json!("PENDING"),
            &json!(seats),
            &pair["entryId"],
            &json!("user:1")
        ),
        "{read}"
    );
    let (status, refused) = extend(&app, &order, "{}").await;
    assert_eq!(
        (status, &refused["error"]),
        (409, &json!("hold-limit")),
        "{refused}"
    );
    let (status, paid) = confirm(&app, &order.id, "pi_offer_1").await;
    assert_eq!(status, 200, "{paid}");
    let bought = status_of(&app, &ev, &pair).await;
    assert_eq!(
        (&bought["status"], bought.get("offer")),
        (&json!("PURCHASED"), None),
        "{bought}"
    );

    // A decline cancels the offer and its seat goes on; the seats left
    // are not together, so the three still wait.
    let declined = leave(&app, &ev, &one).await;
    assert_eq!(
        (&declined["status"], &declined["reason"]),
        (&json!("ENDED"), &json!("declined")),
        "{declined}"
    );
    assert_eq!(leave(&app, &ev, &one).await, declined, "again the same");
    assert_eq!(offer_free(&app, &ev).await, 0);
    assert_eq!(status_of(&app, &ev, &three).await["status"], "WAITING");
}

#[tokio::test]
async fn two_offerers_at_once_never_offer_a_seat_twice() {
    let app = fresh_app().await;
    let ev = offering_event(&app, 3).await;
    let mut entries = Vec::new();
    for i in 0..6 {
        entries.push(joined(&app, &ev, &format!("user:{i}"), json!({})).await);
    }
    let made = offer_free_at_once(&app, &ev, 4).await;
    assert_eq!(made, 3, "one offer per free seat");
    let mut offered_seats = Vec::new();
    let mut waiting = 0;
    for entry in &entries {
        let status = status_of(&app, &ev, entry).await;
        match status["status"].as_str() {
            Some("OFFERED") => {
                offered_seats.extend(status["offer"]["seats"].as_array().unwrap().clone())
            }
            Some("WAITING") => waiting += 1,
            other => panic!("{other:?}: {status}"),
        }
    }
    offered_seats.sort_by_key(|s| s.to_string());
    offered_seats.dedup();
    assert_eq!((offered_seats.len(), waiting), (3, 3), "{offered_seats:?}");
    // The first three joined got them: nobody overtook.
    the_first_offered(&app, &ev, &entries, 3).await;
}

#[tokio::test]
async fn a_removal_cancels_a_live_offer_and_the_seat_goes_to_the_next() {
    let app = fresh_app().await;
    let ev = offering_event(&app, 1).await;
    let first = joined(&app, &ev, "user:1", json!({})).await;
    let second = joined(&app, &ev, "user:2", json!({})).await;
    assert_eq!(offer_free(&app, &ev).await, 1);
    let removals = format!("/events/{ev}/waitlist/removals");
    let body = json!({"entryId": first["entryId"]}).to_string();
    let (status, removed) = send(&app, "POST", &removals, &[], &body).await;
    assert_eq!(
        (
            status,
            &removed["status"],
            &removed["reason"],
            removed.get("offer")
        ),
        (200, &json!("ENDED"), &json!("removed"), None),
        "{removed}"
    );
    assert_eq!(
        send(&app, "POST", &removals, &[], &body).await,
        (200, removed)
    );
    assert_eq!(offer_free(&app, &ev).await, 1);
    assert_eq!(status_of(&app, &ev, &second).await["status"], "OFFERED");
}

#[tokio::test]
async fn nothing_is_offered_without_an_open_waitlist() {
    let app = fresh_app().await;
    let ev = offering_event(&app, 2).await;
    let waiting = joined(&app, &ev, "user:1", json!({})).await;
    let (status, _) = send(&app, "DELETE", &format!("/events/{ev}/waitlist"), &[], "").await;
    assert_eq!(status, 200);
    assert_eq!(
        offer_free(&app, &ev).await,
        0,
        "an ended waitlist offers nothing"
    );
    assert_eq!(status_of(&app, &ev, &waiting).await["reason"], "closed");
}

#[tokio::test]
async fn a_seat_the_map_still_shows_free_is_tried_once_and_not_offered() {
    let app = testkit::fresh_app_streaming(None).await;
    let (ev, _) = create_event(&app, "of", &plan(&[("A", "1", 1)], Some(300))).await;
    // Held before the waitlist opens; the map (fed by the stream, which
    // no test projector reads here) still shows it free.
    let rival = order(&app, &ev).await;
    assert_eq!(claim(&app, &rival, "A-1-1").await.0, 200);
    put_waitlist(&app, &ev, json!({"opens": "now", "offerSeconds": 120})).await;
    let waiting = joined(&app, &ev, "user:1", json!({})).await;
    // The offer loses to the hold (its refusal says so) and leaves it be.
    let offerer = local::iam::attributed(&app, "offer-waitlists");
    assert_eq!(offer_free(&offerer, &ev).await, 0);
    assert_eq!(status_of(&app, &ev, &waiting).await["status"], "WAITING");
    // Once the rival drops it and the projector reads the stream, the
    // tick offers it: a free reaches the offerer through the stream.
    assert_eq!(drop_seat(&app, &rival, "A-1-1").await.0, 200);
    // (project_now reads the stream as the event source does, and runs
    // the projector under its own function's name.)
    local::streams::project_now(&app, &testkit::dynamodb_endpoint())
        .await
        .unwrap();
    assert_eq!(tick_now(&app, &ev).await, 1);
    let offered = status_of(&app, &ev, &waiting).await;
    assert_eq!(
        (&offered["status"], &offered["offer"]["seats"]),
        (&json!("OFFERED"), &json!(["A-1-1"])),
        "{offered}"
    );
}

/// Nothing races an offer: a crowd of public orders, opened before the
/// waitlist opened, clicks at the seats a holder frees while the offerer
/// offers them. From the opening's second on (the crowd's instance reads
/// the waitlist afresh) none of their claims takes a seat (each is told
/// `409 waitlist-only`, or `seat-held` once an offer holds it), and every
/// freed seat goes to an entry.
#[tokio::test]
async fn a_crowd_clicking_freed_seats_takes_none_of_them() {
    let app = fresh_app().await;
    let ev = event(&app, 4, 300).await;
    let holder = order(&app, &ev).await;
    let seats: Vec<String> = (1..=4).map(|n| format!("A-1-{n}")).collect();
    for seat in &seats {
        assert_eq!(claim(&app, &holder, seat).await.0, 200);
    }
    let mut crowd = Vec::new();
    for _ in 0..8 {
        crowd.push(order(&app, &ev).await);
    }
    opened_ago(&app, &ev, 1_100).await;
    let mut entries = Vec::new();
    for i in 0..4 {
        entries.push(joined(&app, &ev, &format!("user:{i}"), json!({})).await);
    }
    for seat in &seats {
        assert_eq!(drop_seat(&app, &holder, seat).await.0, 200);
    }
    let crowd_app = app.new_process();
    let mut clicks = tokio::task::JoinSet::new();
    for buyer in crowd {
        let (app, seats) = (crowd_app.clone(), seats.clone());
        clicks.spawn(async move {
            let mut answers = Vec::new();
            for _ in 0..3 {
                for seat in &seats {
                    answers.push(claim(&app, &buyer, seat).await);
                }
            }
            answers
        });
    }
    let made = offer_free(&app, &ev).await;
    let answers: Vec<(u16, Value)> = clicks.join_all().await.into_iter().flatten().collect();
    assert_eq!(answers.len(), 8 * 3 * 4);
    // A seat an offer holds by the time a click reads it is refused as
    // held (API.md allows either answer first); a free one as
    // waitlist-only. None is taken.
    let refused = |error: &str| {
        let of = |(status, body): &&(u16, Value)| *status == 409 && body["error"] == error;
        answers.iter().filter(of).count()
    };
    let (waitlist_only, held) = (refused("waitlist-only"), refused("seat-held"));
    assert_eq!(
        waitlist_only + held,
        answers.len(),
        "no public claim takes a freed seat: {answers:?}"
    );
    assert_eq!(made, 4, "every freed seat is offered");
    let mut offered = Vec::new();
    for entry in &entries {
        let status = status_of(&app, &ev, entry).await;
        assert_eq!(status["status"], "OFFERED", "{status}");
        offered.extend(
            status["offer"]["seats"]
                .as_array()
                .cloned()
                .unwrap_or_default(),
        );
    }
    offered.sort_by_key(|s| s.to_string());
    offered.dedup();
    assert_eq!(offered.len(), 4, "{offered:?}");
}

/// An offer claims nothing more from its first second, before the sale
/// is waitlist-only for the public (the waitlist opening a minute ahead
/// here): its best-available and its get-seat of a seat it was not
/// offered are `409 waitlist-only` while a public order's is served; its
/// own seat it may claim again.
#[tokio::test]
async fn an_offer_claims_nothing_more_before_the_sale_is_waitlist_only() {
    let app = testkit::fresh_app_streaming(None).await;
    let ev = event(&app, 3, 300).await;
    let holder = order(&app, &ev).await;
    assert_eq!(claim(&app, &holder, "A-1-1").await.0, 200);
    opened_ago(&app, &ev, -60_000).await;
    let entry = joined(&app, &ev, "user:first", json!({})).await;
    assert_eq!(offer_free(&app, &ev).await, 1);
    let offered = status_of(&app, &ev, &entry).await;
    let offer = offered_order(&offered);
    let (status, refused) = best(&app, &offer, json!({"quantity": 1})).await;
    assert_eq!(
        (status, &refused["error"]),
        (409, &json!("waitlist-only")),
        "{refused}"
    );
    let own = offered["offer"]["seats"][0].as_str().unwrap();
    let other = ["A-1-2", "A-1-3"].into_iter().find(|s| *s != own).unwrap();
    let (status, refused) = claim(&app, &offer, other).await;
    assert_eq!(
        (status, &refused["error"]),
        (409, &json!("waitlist-only")),
        "{refused}"
    );
    assert_eq!(claim(&app, &offer, own).await.0, 200);
    let public = order(&app, &ev).await;
    let (status, served) = best(&app, &public, json!({"quantity": 1})).await;
    assert_eq!(status, 200, "{served}");
}
