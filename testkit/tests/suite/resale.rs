//! Resale through the waitlist against a real DynamoDB Local: a listed
//! seat is offered to the earliest entry it fills (never to the buyer who
//! listed it) while it stays sold to its seller, cannot be withdrawn while
//! an offer holds it, goes on at once when the offer lets go of it, and
//! moves from seller to buyer in the offer's payment, once.

use crate::common;

use common::waitlist::*;
use common::*;
use crowdcheck::history::{check_resales, wall_us, ResaleRecord, SeatSale};
use serde_json::{json, Value};

/// Who a seat is sold to, read back from its item.
async fn sold_to(app: &shared::App, event: &str, seat: &str) -> Option<String> {
    let seats = common::seats(app, event).await;
    let found = seats.iter().find(|s| s.spec.seat_id.as_str() == seat)?;
    match &found.state {
        shared::domain::SeatState::Sold { order } => Some(order.as_str().to_owned()),
        _ => None,
    }
}

/// `o` lists `seats`, with `buyer`'s token when the order has a buyer.
async fn list_seats(
    app: &shared::App,
    event: &str,
    o: &TestOrder,
    buyer: Option<&str>,
    seats: &[&str],
) -> (u16, Value) {
    let token = buyer.map(|b| buyer_token(event, b));
    let auth = o.auth();
    let mut headers = vec![("authorization", auth.as_str())];
    headers.extend(token.as_deref().map(|t| ("x-buyer-token", t)));
    let body = json!({ "seats": seats }).to_string();
    let uri = format!("/orders/{}/returns", o.id);
    send(app, "POST", &uri, &headers, &body).await
}

/// The offer an entry holds now, remembered for the invariants' check.
async fn offer_of(app: &shared::App, event: &str, entry: &Value) -> (Value, TestOrder) {
    let status = status_of(app, event, entry).await;
    assert_eq!(status["status"], "OFFERED", "{status}");
    let offer = offered_order(&status);
    local::invariants::remember_order(app, &offer.id);
    (status, offer)
}

/// A seat a buyer bought (A-1-1, A-1-2 of four, the other two held for
/// the test's length), an open waitlist taking returns for an hour.
async fn sold_out_with_a_seller(app: &shared::App) -> (String, TestOrder) {
    let ev = event(app, 4, 300).await;
    let (seller, holder) = (order(app, &ev).await, order(app, &ev).await);
    for (o, seat) in [
        (&seller, "A-1-1"),
        (&seller, "A-1-2"),
        (&holder, "A-1-3"),
        (&holder, "A-1-4"),
    ] {
        assert_eq!(claim(app, o, seat).await.0, 200);
    }
    let (status, paid) = pay(app, &seller, "pi_seller", &["A-1-1", "A-1-2"], json!([])).await;
    assert_eq!(status, 200, "{paid}");
    let close = chrono::Utc::now() + chrono::Duration::seconds(3_600);
    let settings =
        json!({"opens": "now", "offerSeconds": 120, "returnsCloseAt": close.to_rfc3339()});
    put_waitlist(app, &ev, settings).await;
    (ev, seller)
}

/// A seller's A-1-1 listed and offered to the first buyer waiting: the
/// event, the seller's order and the offer's.
async fn offered_a_listing(app: &shared::App) -> (String, TestOrder, TestOrder) {
    let (ev, seller) = sold_out_with_a_seller(app).await;
    let first = joined(app, &ev, "user:1", json!({"quantity": 1})).await;
    assert_eq!(list_seats(app, &ev, &seller, None, &["A-1-1"]).await.0, 200);
    assert_eq!(offer_free(app, &ev).await, 1);
    let (_, offer) = offer_of(app, &ev, &first).await;
    (ev, seller, offer)
}

#[tokio::test]
async fn a_listed_seat_is_offered_and_resold_in_the_offers_payment() {
    let app = testkit::fresh_app_streaming(None).await;
    let (ev, seller) = sold_out_with_a_seller(&app).await;
    let first = joined(&app, &ev, "user:1", json!({"quantity": 1})).await;
    assert_eq!(offer_free(&app, &ev).await, 0, "nothing is free yet");

    let (status, listed) = list_seats(&app, &ev, &seller, None, &["A-1-1"]).await;
    assert_eq!(status, 200, "{listed}");
    assert_eq!(offer_free(&app, &ev).await, 1);
    let (offered, offer) = offer_of(&app, &ev, &first).await;
    assert_eq!(offered["offer"]["seats"], json!(["A-1-1"]), "{offered}");
    // Held by the offer, still sold to its seller: nobody else can have it,
    // and the seller cannot take it back while the offer lives.
    assert_eq!(sold_to(&app, &ev, "A-1-1").await, Some(seller.id.clone()));
    let (status, refused) = send(
        &app,
        "DELETE",
        &format!("/orders/{}/returns/A-1-1", seller.id),
        &[("authorization", &seller.auth())],
        "",
    )
    .await;
    assert_eq!(
        (status, &refused["error"]),
        (409, &json!("return-offered")),
        "{refused}"
    );
    assert_eq!(offer_free(&app, &ev).await, 0, "one offer holds it");

    let (status, paid) = pay(&app, &offer, "pi_resale", &["A-1-1"], json!([])).await;
    assert_eq!(status, 200, "{paid}");
    assert_eq!(sold_to(&app, &ev, "A-1-1").await, Some(offer.id.clone()));
    let (_, read) = get_order(&app, &seller).await;
    let resale = &read["returns"][0];
    assert_eq!(
        (
            &resale["status"],
            &resale["resale"]["orderId"],
            &resale["resale"]["paymentId"]
        ),
        (&json!("RESOLD"), &json!(offer.id), &json!("pi_resale")),
        "{read}"
    );
    assert!(resale["resale"]["at"].is_string(), "{read}");
    // Resold: no longer the seller's to withdraw or list.
    assert_eq!(
        list_seats(&app, &ev, &seller, None, &["A-1-1"]).await.0,
        409
    );
    assert_eq!(get_order(&app, &offer).await.1["status"], "COMPLETED");
    let check = local::invariants::check_invariants(&app, &ev).await;
    assert_eq!(check.violations, Vec::<String>::new());
}

#[tokio::test]
async fn a_dropped_resale_goes_on_and_a_buyer_is_never_offered_its_own_listing() {
    let app = testkit::fresh_app_streaming(None).await;
    let (ev, seller) = sold_out_with_a_seller(&app).await;
    let first = joined(&app, &ev, "user:1", json!({"quantity": 1})).await;
    assert_eq!(
        list_seats(&app, &ev, &seller, None, &["A-1-2"]).await.0,
        200
    );
    assert_eq!(offer_free(&app, &ev).await, 1);
    let (_, offer) = offer_of(&app, &ev, &first).await;

    // The offer drops it: still the seller's, offered on to the next.
    let second = joined(&app, &ev, "user:2", json!({"quantity": 1})).await;
    let uri = format!("/orders/{}/seats/A-1-2", offer.id);
    let (status, dropped) = send(
        &app,
        "DELETE",
        &uri,
        &[("authorization", &offer.auth())],
        "",
    )
    .await;
    assert_eq!(
        (status, &dropped["status"]),
        (200, &json!("SOLD")),
        "{dropped}"
    );
    assert_eq!(sold_to(&app, &ev, "A-1-2").await, Some(seller.id.clone()));
    assert_eq!(offer_free(&app, &ev).await, 1);
    let (_, bought) = offer_of(&app, &ev, &second).await;
    assert_eq!(
        pay(&app, &bought, "pi_2", &["A-1-2"], json!([])).await.0,
        200
    );
    let mut sales = vec![
        sale("A-1-2", &seller, None, 0),
        sale("A-1-2", &bought, Some(&seller), wall_us()),
    ];

    // user:2 lists what it bought and joins again; user:3 joins after:
    // user:2 is passed over for its own listing, user:3 is offered it.
    let (status, listed) = list_seats(&app, &ev, &bought, Some("user:2"), &["A-1-2"]).await;
    assert_eq!(status, 200, "{listed}");
    let again = joined(&app, &ev, "user:2", json!({"quantity": 1})).await;
    let third = joined(&app, &ev, "user:3", json!({"quantity": 1})).await;
    assert_eq!(offer_free(&app, &ev).await, 1);
    let passed_over = status_of(&app, &ev, &again).await;
    assert_eq!(passed_over["status"], "WAITING", "{passed_over}");
    let (_, last) = offer_of(&app, &ev, &third).await;
    assert_eq!(pay(&app, &last, "pi_3", &["A-1-2"], json!([])).await.0, 200);
    sales.push(sale("A-1-2", &last, Some(&bought), wall_us()));
    assert_eq!(sold_to(&app, &ev, "A-1-2").await, Some(last.id.clone()));
    let check = local::invariants::check_invariants(&app, &ev).await;
    assert_eq!(check.violations, Vec::<String>::new());
    // The history checker: one owner at every instant, each resale
    // recorded once by its seller.
    let mut records = resales_recorded(&app, &seller).await;
    records.extend(resales_recorded(&app, &bought).await);
    let verdict = check_resales(&sales, &records);
    assert_eq!(verdict.violations, Vec::<String>::new());
}

/// `order`'s sale of `seat` (from `from`'s order) answered at `at`.
fn sale(seat: &str, order: &TestOrder, from: Option<&TestOrder>, at: i64) -> SeatSale {
    SeatSale {
        seat: seat.into(),
        order: order.id.clone(),
        from: from.map(|f| f.id.clone()),
        at,
    }
}

/// The resales `seller`'s get-order records.
async fn resales_recorded(app: &shared::App, seller: &TestOrder) -> Vec<ResaleRecord> {
    let (_, read) = get_order(app, seller).await;
    let returns = read["returns"].as_array().cloned().unwrap_or_default();
    returns
        .iter()
        .filter(|r| r["status"] == "RESOLD")
        .map(|r| ResaleRecord {
            seat: r["seatId"].as_str().unwrap().to_owned(),
            from: seller.id.clone(),
            to: r["resale"]["orderId"].as_str().unwrap().to_owned(),
        })
        .collect()
}

/// Eight confirms of one resale at once, each on its own instance: the
/// seat moves once, and the seller's listing records one resale.
#[tokio::test]
async fn concurrent_confirms_of_a_resale_move_the_seat_once() {
    let app = testkit::fresh_app_streaming(None).await;
    let (ev, seller, offer) = offered_a_listing(&app).await;
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let (app, offer) = (app.new_process(), offer.clone());
        tasks.spawn(async move { pay(&app, &offer, "pi_once", &["A-1-1"], json!([])).await });
    }
    let answers = tasks.join_all().await;
    assert!(
        answers.iter().all(|(status, _)| *status == 200),
        "{answers:?}"
    );
    assert_eq!(sold_to(&app, &ev, "A-1-1").await, Some(offer.id.clone()));
    let (_, read) = get_order(&app, &seller).await;
    assert_eq!(
        read["returns"][0]["resale"]["orderId"],
        json!(offer.id),
        "{read}"
    );
    let check = local::invariants::check_invariants(&app, &ev).await;
    assert_eq!(check.violations, Vec::<String>::new());
}

/// Returns closed early while an offer holds a listed seat: its payment
/// is refunded (the listing has reverted, the seat is its seller's), the
/// hold is let go of, and the tick writes the listing's revert.
#[tokio::test]
async fn a_payment_after_the_listing_reverted_is_refunded() {
    let app = testkit::fresh_app_streaming(None).await;
    let (ev, seller, offer) = offered_a_listing(&app).await;
    put_waitlist(&app, &ev, json!({"returnsCloseAt": null})).await;

    let (status, refused) = pay(&app, &offer, "pi_late", &["A-1-1"], json!([])).await;
    assert_eq!(
        (status, &refused["error"], &refused["refund"]),
        (409, &json!("seats-unavailable"), &json!(true)),
        "{refused}"
    );
    assert_eq!(sold_to(&app, &ev, "A-1-1").await, Some(seller.id.clone()));
    let event_id = shared::domain::EventId::parse(&ev).unwrap();
    let mut offerer = shared::offerer::Offerer::default();
    offerer
        .tick(&app, &event_id, shared::world::now())
        .await
        .unwrap();
    assert!(app.store.listed_units(&event_id).await.unwrap().is_empty());
    let (_, read) = get_order(&app, &seller).await;
    assert_eq!(read["returns"][0]["status"], "REVERTED", "{read}");
    assert!(read["returns"][0].get("resale").is_none(), "{read}");
    let check = local::invariants::check_invariants(&app, &ev).await;
    assert_eq!(check.violations, Vec::<String>::new());
}

/// A delete of the waitlist while an offer holds a listed seat: the offer
/// keeps its expiry and may be paid, and the payment resells the seat.
#[tokio::test]
async fn a_live_offer_of_a_listing_may_be_paid_after_a_delete() {
    let app = testkit::fresh_app_streaming(None).await;
    let (ev, seller, offer) = offered_a_listing(&app).await;
    let deleted = send(&app, "DELETE", &format!("/events/{ev}/waitlist"), &[], "").await;
    assert_eq!(deleted.0, 200, "{}", deleted.1);
    let (status, paid) = pay(&app, &offer, "pi_after_delete", &["A-1-1"], json!([])).await;
    assert_eq!(status, 200, "{paid}");
    assert_eq!(sold_to(&app, &ev, "A-1-1").await, Some(offer.id.clone()));
    let (_, read) = get_order(&app, &seller).await;
    assert_eq!(read["returns"][0]["status"], "RESOLD", "{read}");
    let check = local::invariants::check_invariants(&app, &ev).await;
    assert_eq!(check.violations, Vec::<String>::new());
}

/// An offer of a listed seat refused on the waitlist's check (a put closed
/// returns since the look read the waitlist, as DynamoDB's cancellation
/// reasons say, injected): the look offers no more listings and goes on
/// with the free seats, so the first entry is offered the free one, the
/// listed seat stays its seller's and unheld, and the second entry waits.
#[tokio::test]
async fn a_listings_offer_refused_on_the_waitlist_goes_on_with_free_seats() {
    use local::faults::{production_client, FaultInjector};
    let faults = FaultInjector::default();
    let endpoint = testkit::dynamodb_endpoint();
    let app =
        testkit::fresh_app_streaming_with(production_client(&endpoint, [faults.shared()])).await;
    let ev = event(&app, 4, 300).await;
    let (seller, holder) = (order(&app, &ev).await, order(&app, &ev).await);
    for (o, seat) in [
        (&seller, "A-1-1"),
        (&seller, "A-1-2"),
        (&holder, "A-1-3"),
        (&holder, "A-1-4"),
    ] {
        assert_eq!(claim(&app, o, seat).await.0, 200);
    }
    let (status, paid) = pay(&app, &seller, "pi_seller", &["A-1-1", "A-1-2"], json!([])).await;
    assert_eq!(status, 200, "{paid}");
    let close = chrono::Utc::now() + chrono::Duration::seconds(3_600);
    let settings = json!({"opens": "now", "returnsCloseAt": close.to_rfc3339()});
    put_waitlist(&app, &ev, settings).await;
    let first = joined(&app, &ev, "user:1", json!({"quantity": 1})).await;
    let second = joined(&app, &ev, "user:2", json!({"quantity": 1})).await;
    // A-1-2 listed (the seat nearest the row's centre, offered first),
    // A-1-4 free, both on the map.
    assert_eq!(
        list_seats(&app, &ev, &seller, None, &["A-1-2"]).await.0,
        200
    );
    assert_eq!(drop_seat(&app, &holder, "A-1-4").await.0, 200);
    local::streams::project_now(&app, &endpoint).await.unwrap();
    refuse_next_offer_on_the_waitlists_check(&faults);
    assert_eq!(offer_free(&app, &ev).await, 1);
    assert_eq!(
        faults.attempts("TransactWriteItems"),
        2,
        "the listing's, then the free seat's"
    );
    let (status, _) = offer_of(&app, &ev, &first).await;
    assert_eq!(status["offer"]["seats"], json!(["A-1-4"]), "{status}");
    assert_eq!(status_of(&app, &ev, &second).await["status"], "WAITING");
    assert_eq!(sold_to(&app, &ev, "A-1-2").await, Some(seller.id.clone()));
}
