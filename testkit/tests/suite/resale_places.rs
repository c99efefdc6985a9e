//! Resale of listed places through the waitlist against a real DynamoDB
//! Local: a seller's listed places of a section are offered like free
//! places (several offers each holding part of one listing, never to the
//! buyer who listed them) while they stay sold to the seller; a decline
//! gives them back to the listing; a payment resells them in one
//! transaction, splitting the listing (a `RESOLD` element per resale, the
//! rest `LISTED`), and `ga.resold` says it once.

use crate::common;

use common::waitlist::*;
use common::*;
use crowdcheck::history::{check_place_resales, wall_us, PlacesResaleRecord, PlacesSale};
use serde_json::{json, Value};

/// `order`'s purchase of `quantity` FLOOR places (from `from`'s listing)
/// answered now.
fn bought(order: &TestOrder, quantity: u32, from: Option<&TestOrder>) -> PlacesSale {
    PlacesSale {
        section: "FLOOR".into(),
        order: order.id.clone(),
        quantity,
        from: from.map(|f| f.id.clone()),
        at: wall_us(),
    }
}

/// The resales of places `seller`'s get-order records.
async fn place_resales_recorded(app: &shared::App, seller: &TestOrder) -> Vec<PlacesResaleRecord> {
    let (_, read) = get_order(app, seller).await;
    let returns = read["returns"].as_array().cloned().unwrap_or_default();
    returns
        .iter()
        .filter(|r| r["status"] == "RESOLD")
        .map(|r| PlacesResaleRecord {
            section: r["sectionId"].as_str().unwrap().to_owned(),
            from: seller.id.clone(),
            to: r["resale"]["orderId"].as_str().unwrap().to_owned(),
            quantity: u32::try_from(r["quantity"].as_u64().unwrap()).unwrap(),
        })
        .collect()
}

/// An event of seats A-1-1..4 and 4 places of FLOOR: a seller who bought
/// 3 places, the fourth held for the test's length, the waitlist open now
/// and taking returns for an hour.
async fn sold_out_with_a_seller_of_places(app: &shared::App) -> (String, TestOrder) {
    let ev = ga_event(app, 4, 4, 300).await;
    let (seller, holder) = (order(app, &ev).await, order(app, &ev).await);
    assert_eq!(hold_ga(app, &seller, "FLOOR", json!(3)).await.0, 200);
    assert_eq!(hold_ga(app, &holder, "FLOOR", json!(1)).await.0, 200);
    let ga = json!([{"sectionId": "FLOOR", "quantity": 3}]);
    let (status, paid) = pay(app, &seller, "pi_seller", &[], ga).await;
    assert_eq!(status, 200, "{paid}");
    let close = chrono::Utc::now() + chrono::Duration::seconds(3_600);
    let settings =
        json!({"opens": "now", "offerSeconds": 120, "returnsCloseAt": close.to_rfc3339()});
    put_waitlist(app, &ev, settings).await;
    (ev, seller)
}

/// `o` lists `quantity` of its FLOOR places.
async fn list_places(app: &shared::App, o: &TestOrder, quantity: u32) -> (u16, Value) {
    let body = json!({"ga": [{"sectionId": "FLOOR", "quantity": quantity}]}).to_string();
    let uri = format!("/orders/{}/returns", o.id);
    send(app, "POST", &uri, &[("authorization", &o.auth())], &body).await
}

/// Who asks for `quantity` places of FLOOR.
fn floor(quantity: u32) -> Value {
    json!({"quantity": quantity, "sectionIds": ["FLOOR"]})
}

/// The offer an entry holds now: the places it shows, and its order.
async fn offered_floor(app: &shared::App, event: &str, entry: &Value) -> (Value, TestOrder) {
    let status = status_of(app, event, entry).await;
    assert_eq!(status["status"], "OFFERED", "{status}");
    let offer = offered_order(&status);
    local::invariants::remember_order(app, &offer.id);
    (status["offer"]["ga"].clone(), offer)
}

/// A seller's 3 listed places of FLOOR, 2 of them offered to the first
/// buyer waiting: the event, the seller's order and the offer's.
async fn two_of_three_listed_places_offered(app: &shared::App) -> (String, TestOrder, TestOrder) {
    let (ev, seller) = sold_out_with_a_seller_of_places(app).await;
    let two = joined(app, &ev, "user:1", floor(2)).await;
    assert_eq!(list_places(app, &seller, 3).await.0, 200);
    assert_eq!(offer_free(app, &ev).await, 1);
    let (_, offer) = offered_floor(app, &ev, &two).await;
    (ev, seller, offer)
}

#[tokio::test]
async fn listed_places_are_offered_in_parts_and_resold_in_the_offers_payment() {
    let app = testkit::fresh_app_streaming(None).await;
    let (ev, seller) = sold_out_with_a_seller_of_places(&app).await;
    let two = joined(&app, &ev, "user:1", floor(2)).await;
    let one = joined(&app, &ev, "user:2", floor(1)).await;
    assert_eq!(offer_free(&app, &ev).await, 0, "nothing is free yet");

    assert_eq!(list_places(&app, &seller, 3).await.0, 200);
    assert_eq!(offer_free(&app, &ev).await, 2, "one listing, two offers");
    let (held, pair) = offered_floor(&app, &ev, &two).await;
    assert_eq!(held, json!([{"sectionId": "FLOOR", "quantity": 2}]));
    let (held, _) = offered_floor(&app, &ev, &one).await;
    assert_eq!(held, json!([{"sectionId": "FLOOR", "quantity": 1}]));
    // Held by offers: the seller cannot take them back meanwhile.
    let uri = format!("/orders/{}/returns/ga/FLOOR", seller.id);
    let auth = [("authorization", seller.auth())];
    let auth: Vec<(&str, &str)> = auth.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (status, refused) = send(&app, "DELETE", &uri, &auth, "").await;
    assert_eq!(
        (status, &refused["error"]),
        (409, &json!("return-offered")),
        "{refused}"
    );

    // The single place is declined: back on the listing, offered on to
    // the next buyer waiting for it.
    let later = joined(&app, &ev, "user:3", floor(1)).await;
    as_holder(&app, "DELETE", &ev, &one).await;
    assert_eq!(offer_free(&app, &ev).await, 1);
    let (_, last) = offered_floor(&app, &ev, &later).await;

    let mut sales = vec![bought(&seller, 3, None)];
    let ga = json!([{"sectionId": "FLOOR", "quantity": 2}]);
    let (status, paid) = pay(&app, &pair, "pi_pair", &[], ga).await;
    assert_eq!(status, 200, "{paid}");
    sales.push(bought(&pair, 2, Some(&seller)));
    let (_, read) = get_order(&app, &pair).await;
    assert_eq!(
        (&read["status"], &read["ga"]),
        (
            &json!("COMPLETED"),
            &json!([{"sectionId": "FLOOR", "quantity": 2}])
        ),
        "{read}"
    );
    // The listing split: two places resold to the pair's order, one
    // still listed (held by the last offer).
    let (_, sold) = get_order(&app, &seller).await;
    let returns = sold["returns"].as_array().cloned().unwrap_or_default();
    let listed: Vec<&Value> = returns.iter().filter(|r| r["status"] == "LISTED").collect();
    let resold: Vec<&Value> = returns.iter().filter(|r| r["status"] == "RESOLD").collect();
    assert_eq!(
        (listed.len(), &listed[0]["quantity"]),
        (1, &json!(1)),
        "{sold}"
    );
    assert_eq!(
        (
            resold.len(),
            &resold[0]["quantity"],
            &resold[0]["resale"]["orderId"],
            &resold[0]["resale"]["paymentId"]
        ),
        (1, &json!(2), &json!(pair.id), &json!("pi_pair")),
        "{sold}"
    );
    // Resold places are no longer the seller's to list again.
    assert_eq!(list_places(&app, &seller, 1).await.0, 409);

    let ga = json!([{"sectionId": "FLOOR", "quantity": 1}]);
    assert_eq!(pay(&app, &last, "pi_last", &[], ga).await.0, 200);
    sales.push(bought(&last, 1, Some(&seller)));
    let (_, sold) = get_order(&app, &seller).await;
    let returns = sold["returns"].as_array().cloned().unwrap_or_default();
    let mut statuses: Vec<String> = returns
        .iter()
        .map(|r| format!("{} {}", r["status"], r["quantity"]))
        .collect();
    statuses.sort();
    assert_eq!(
        statuses,
        ["\"RESOLD\" 1", "\"RESOLD\" 2"],
        "all resold, nothing listed: {sold}"
    );
    // All resold: no longer the seller's to withdraw.
    let (status, refused) = send(&app, "DELETE", &uri, &auth, "").await;
    assert_eq!(
        (status, &refused["error"]),
        (409, &json!("return-not-owned")),
        "{refused}"
    );
    let check = local::invariants::check_invariants(&app, &ev).await;
    assert_eq!(check.violations, Vec::<String>::new());
    // The history checker: every place one owner at every instant, each
    // resale recorded once by its seller.
    let records = place_resales_recorded(&app, &seller).await;
    let verdict = check_place_resales(&sales, &records);
    assert_eq!(verdict.violations, Vec::<String>::new());

    // Each resale said once, with the buyer's places sold beside it; a
    // listing all resold says nothing more.
    use common::events::{publish, stream_records};
    let records = stream_records(&app).await;
    let feed = local::feed::DevFeed::quiet();
    assert_eq!(
        publish(&feed, &records).await.failed_records,
        Vec::<String>::new()
    );
    let said = |kind: &str| -> Vec<Value> {
        let events = feed.events().into_iter().filter(|(t, _)| t == kind);
        events.map(|(_, d)| d).collect()
    };
    let resales: Vec<(Value, Value, Value, Value)> = said("ga.resold")
        .iter()
        .map(|d| {
            assert_eq!(
                (&d["sectionId"], &d["fromOrderId"]),
                (&json!("FLOOR"), &json!(seller.id)),
                "{d}"
            );
            (
                d["quantity"].clone(),
                d["toOrderId"].clone(),
                d["paymentId"].clone(),
                d["orderId"].clone(),
            )
        })
        .collect();
    let mut want = vec![
        (json!(2), json!(pair.id), json!("pi_pair"), Value::Null),
        (json!(1), json!(last.id), json!("pi_last"), Value::Null),
    ];
    let key = |r: &(Value, Value, Value, Value)| r.2.to_string();
    let mut resales = resales;
    resales.sort_by_key(key);
    want.sort_by_key(key);
    assert_eq!(resales, want);
    for (buyer, quantity) in [(&pair, 2), (&last, 1)] {
        let sold = said("ga.sold");
        let theirs: Vec<&Value> = sold
            .iter()
            .filter(|d| d["orderId"] == json!(buyer.id))
            .collect();
        assert_eq!(theirs.len(), 1, "{sold:?}");
        assert_eq!(theirs[0]["quantity"], json!(quantity), "{sold:?}");
    }
}

/// `seller`'s listed places of FLOOR as their resale item counts them:
/// (capacity, sold, free).
async fn listing_counts(app: &shared::App, event: &str, seller: &TestOrder) -> (u32, u32, u32) {
    use shared::domain::{EventId, OrderId, SectionId};
    let (event, seller) = (
        EventId::parse(event).unwrap(),
        OrderId::parse(&seller.id).unwrap(),
    );
    let floor = SectionId::parse("FLOOR").unwrap();
    let read = app.store.listed_places(&event, &seller, &floor);
    let item = read.await.unwrap().unwrap();
    (item.places.capacity, item.places.sold, item.places.free)
}

/// An offer lowering its listed places gives them back to the listing
/// (offered on at once); a buyer who lists places it bought through an
/// offer and joins again is passed over for them, and the one behind it
/// is offered them.
#[tokio::test]
async fn listed_places_go_back_to_their_listing_and_never_to_their_seller() {
    let app = testkit::fresh_app_streaming(None).await;
    let (ev, seller) = sold_out_with_a_seller_of_places(&app).await;
    let three = joined(&app, &ev, "user:1", floor(3)).await;
    assert_eq!(list_places(&app, &seller, 3).await.0, 200);
    assert_eq!(offer_free(&app, &ev).await, 1);
    let (_, first) = offered_floor(&app, &ev, &three).await;
    assert_eq!(listing_counts(&app, &ev, &seller).await, (3, 0, 0));

    assert_eq!(hold_ga(&app, &first, "FLOOR", json!(2)).await.0, 200);
    assert_eq!(listing_counts(&app, &ev, &seller).await, (3, 0, 1));
    let one = joined(&app, &ev, "user:2", floor(1)).await;
    assert_eq!(offer_free(&app, &ev).await, 1, "the place given back");
    let (_, second) = offered_floor(&app, &ev, &one).await;
    let mut sales = vec![bought(&seller, 3, None)];
    let ga = json!([{"sectionId": "FLOOR", "quantity": 1}]);
    assert_eq!(pay(&app, &second, "pi_2", &[], ga.clone()).await.0, 200);
    sales.push(bought(&second, 1, Some(&seller)));
    let ga2 = json!([{"sectionId": "FLOOR", "quantity": 2}]);
    assert_eq!(pay(&app, &first, "pi_1", &[], ga2).await.0, 200);
    sales.push(bought(&first, 2, Some(&seller)));
    assert_eq!(listing_counts(&app, &ev, &seller).await, (3, 3, 0));

    // user:2 lists the place it bought and joins again; user:3 joins
    // after: user:2 is passed over for its own listing.
    let token = buyer_token(&ev, "user:2");
    let body = json!({"ga": [{"sectionId": "FLOOR", "quantity": 1}]}).to_string();
    let auth = second.auth();
    let headers = [
        ("authorization", auth.as_str()),
        ("x-buyer-token", token.as_str()),
    ];
    let uri = format!("/orders/{}/returns", second.id);
    let (status, listed) = send(&app, "POST", &uri, &headers, &body).await;
    assert_eq!(status, 200, "{listed}");
    let again = joined(&app, &ev, "user:2", floor(1)).await;
    let third = joined(&app, &ev, "user:3", floor(1)).await;
    assert_eq!(offer_free(&app, &ev).await, 1);
    let passed_over = status_of(&app, &ev, &again).await;
    assert_eq!(passed_over["status"], "WAITING", "{passed_over}");
    let (_, last) = offered_floor(&app, &ev, &third).await;
    assert_eq!(pay(&app, &last, "pi_3", &[], ga).await.0, 200);
    sales.push(bought(&last, 1, Some(&second)));
    let (_, resold) = get_order(&app, &second).await;
    assert_eq!(
        (
            &resold["returns"][0]["status"],
            &resold["returns"][0]["resale"]["orderId"]
        ),
        (&json!("RESOLD"), &json!(last.id)),
        "{resold}"
    );
    let check = local::invariants::check_invariants(&app, &ev).await;
    assert_eq!(check.violations, Vec::<String>::new());
    let mut records = place_resales_recorded(&app, &seller).await;
    records.extend(place_resales_recorded(&app, &second).await);
    let verdict = check_place_resales(&sales, &records);
    assert_eq!(verdict.violations, Vec::<String>::new());
}

/// Eight confirms of one offer of listed places at once, each on its own
/// instance: the places are resold once, and the seller's listing records
/// one resale.
#[tokio::test]
async fn concurrent_confirms_of_a_resale_of_places_resell_them_once() {
    let app = testkit::fresh_app_streaming(None).await;
    let (ev, seller, offer) = two_of_three_listed_places_offered(&app).await;
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let (app, offer) = (app.new_process(), offer.clone());
        let ga = json!([{"sectionId": "FLOOR", "quantity": 2}]);
        tasks.spawn(async move { pay(&app, &offer, "pi_once", &[], ga).await });
    }
    let answers = tasks.join_all().await;
    assert!(
        answers.iter().all(|(status, _)| *status == 200),
        "{answers:?}"
    );
    assert_eq!(listing_counts(&app, &ev, &seller).await, (3, 2, 1));
    let records = place_resales_recorded(&app, &seller).await;
    assert_eq!(
        records,
        [PlacesResaleRecord {
            section: "FLOOR".into(),
            from: seller.id.clone(),
            to: offer.id.clone(),
            quantity: 2,
        }]
    );
    let check = local::invariants::check_invariants(&app, &ev).await;
    assert_eq!(check.violations, Vec::<String>::new());
}

/// Returns closed early while an offer holds listed places: its payment
/// is refunded (the listing has reverted, the places are their seller's),
/// the hold is given back, and the tick writes the listing's revert once
/// nothing holds it.
#[tokio::test]
async fn a_payment_after_the_places_listing_reverted_is_refunded() {
    let app = testkit::fresh_app_streaming(None).await;
    let (ev, seller, offer) = two_of_three_listed_places_offered(&app).await;
    put_waitlist(&app, &ev, json!({"returnsCloseAt": null})).await;

    let ga = json!([{"sectionId": "FLOOR", "quantity": 2}]);
    let (status, refused) = pay(&app, &offer, "pi_late", &[], ga).await;
    assert_eq!(
        (status, &refused["error"], &refused["refund"]),
        (409, &json!("seats-unavailable"), &json!(true)),
        "{refused}"
    );
    assert_eq!(
        listing_counts(&app, &ev, &seller).await,
        (3, 0, 3),
        "nothing sold, the hold given back"
    );
    let event_id = shared::domain::EventId::parse(&ev).unwrap();
    let mut offerer = shared::offerer::Offerer::default();
    offerer
        .tick(&app, &event_id, shared::world::now())
        .await
        .unwrap();
    assert!(app.store.listed_units(&event_id).await.unwrap().is_empty());
    let (_, read) = get_order(&app, &seller).await;
    assert_eq!(
        (
            &read["returns"][0]["status"],
            &read["returns"][0]["quantity"]
        ),
        (&json!("REVERTED"), &json!(3)),
        "{read}"
    );
    let check = local::invariants::check_invariants(&app, &ev).await;
    assert_eq!(check.violations, Vec::<String>::new());
}

/// Four offerers at once over one listing of 3 places and three entries
/// asking 2 each: one offer is made, holding 2; the place left fills
/// nobody, and no place is held twice.
#[tokio::test]
async fn offerers_at_once_never_take_more_of_a_listing_than_it_has() {
    let app = testkit::fresh_app_streaming(None).await;
    let (ev, seller) = sold_out_with_a_seller_of_places(&app).await;
    for buyer in ["user:1", "user:2", "user:3"] {
        joined(&app, &ev, buyer, floor(2)).await;
    }
    assert_eq!(list_places(&app, &seller, 3).await.0, 200);
    assert_eq!(offer_free_at_once(&app, &ev, 4).await, 1);
    assert_eq!(listing_counts(&app, &ev, &seller).await, (3, 0, 1));
    assert_eq!(offer_free(&app, &ev).await, 0, "one place fills nobody");
}
