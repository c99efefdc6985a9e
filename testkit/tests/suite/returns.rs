//! Returns to the waitlist against a real DynamoDB Local: a buyer lists
//! seats and places its completed order bought while the waitlist takes
//! returns, and withdraws them; a listed seat stays sold to its owner;
//! listings revert at the cutoff and when the waitlist is deleted, as
//! they are read.

use crate::common;

use common::waitlist::*;
use common::*;
use serde_json::{json, Value};

/// An event of seats A-1-1..4 and 10 places of FLOOR, and an order that
/// bought A-1-1, A-1-2 and 3 places of FLOOR.
pub async fn bought(app: &shared::App) -> (String, TestOrder) {
    let ev = ga_event(app, 4, 10, 300).await;
    let seller = order(app, &ev).await;
    for seat in ["A-1-1", "A-1-2"] {
        assert_eq!(claim(app, &seller, seat).await.0, 200);
    }
    assert_eq!(hold_ga(app, &seller, "FLOOR", json!(3)).await.0, 200);
    let ga = json!([{"sectionId": "FLOOR", "quantity": 3}]);
    let (status, paid) = pay(app, &seller, "pi_seller", &["A-1-1", "A-1-2"], ga).await;
    assert_eq!(status, 200, "{paid}");
    (ev, seller)
}

/// The waitlist open now, taking returns for `seconds` more.
pub async fn taking_returns(app: &shared::App, event: &str, seconds: i64) {
    let close = chrono::Utc::now() + chrono::Duration::seconds(seconds);
    put_waitlist(
        app,
        event,
        json!({"opens": "now", "returnsCloseAt": close.to_rfc3339()}),
    )
    .await;
}

pub async fn list(app: &shared::App, o: &TestOrder, body: Value) -> (u16, Value) {
    let uri = format!("/orders/{}/returns", o.id);
    send(
        app,
        "POST",
        &uri,
        &[("authorization", &o.auth())],
        &body.to_string(),
    )
    .await
}

pub async fn withdraw(app: &shared::App, o: &TestOrder, what: &str) -> (u16, Value) {
    let uri = format!("/orders/{}/returns/{what}", o.id);
    send(app, "DELETE", &uri, &[("authorization", &o.auth())], "").await
}

fn refused(reply: &(u16, Value)) -> (u16, &str) {
    (reply.0, reply.1["error"].as_str().unwrap_or_default())
}

#[tokio::test]
async fn a_buyer_lists_what_it_bought_and_withdraws_it() {
    let app = fresh_app().await;
    let (ev, seller) = bought(&app).await;
    taking_returns(&app, &ev, 3_600).await;
    let ask = json!({"seats": ["A-1-1"], "ga": [{"sectionId": "FLOOR", "quantity": 2}]});
    let (status, listed) = list(&app, &seller, ask.clone()).await;
    assert_eq!(status, 200, "{listed}");
    assert_eq!(
        (&listed["status"], &listed["returns"]),
        (
            &json!("COMPLETED"),
            &json!([
                {"seatId": "A-1-1", "status": "LISTED"},
                {"sectionId": "FLOOR", "quantity": 2, "status": "LISTED"},
            ])
        ),
        "{listed}"
    );
    assert_eq!(
        get_order(&app, &seller).await,
        (200, listed.clone()),
        "get-order shows them"
    );
    // Listed again, not bought, more places than are left: not owned.
    let not_owned = (409, "return-not-owned");
    assert_eq!(refused(&list(&app, &seller, ask).await), not_owned);
    assert_eq!(
        refused(&list(&app, &seller, json!({"seats": ["A-1-3"]})).await),
        not_owned
    );
    let two_more = json!({"ga": [{"sectionId": "FLOOR", "quantity": 2}]});
    assert_eq!(refused(&list(&app, &seller, two_more).await), not_owned);
    let (status, more) = list(
        &app,
        &seller,
        json!({"ga": [{"sectionId": "FLOOR", "quantity": 1}]}),
    )
    .await;
    assert_eq!(
        (status, &more["returns"][1]["quantity"]),
        (200, &json!(3)),
        "{more}"
    );
    // A listed seat stays sold to its owner.
    let seats = common::seats(&app, &ev).await;
    let a11 = seats
        .iter()
        .find(|s| s.spec.seat_id.as_str() == "A-1-1")
        .unwrap();
    assert!(
        matches!(a11.state, shared::domain::SeatState::Sold { .. }),
        "{a11:?}"
    );
    let rival = order(&app, &ev).await;
    assert_eq!(claim(&app, &rival, "A-1-1").await.0, 409);

    // Withdrawn; again the same; listed again.
    let (status, withdrawn) = withdraw(&app, &seller, "A-1-1").await;
    assert_eq!(
        (status, &withdrawn["returns"][0]["status"]),
        (200, &json!("WITHDRAWN")),
        "{withdrawn}"
    );
    assert_eq!(withdraw(&app, &seller, "A-1-1").await, (200, withdrawn));
    let (status, again) = list(&app, &seller, json!({"seats": ["A-1-1"]})).await;
    assert_eq!(
        (status, &again["returns"][0]["status"]),
        (200, &json!("LISTED")),
        "{again}"
    );
    let (status, places) = withdraw(&app, &seller, "ga/FLOOR").await;
    assert_eq!(
        (status, &places["returns"][1]),
        (
            200,
            &json!({"sectionId": "FLOOR", "quantity": 3, "status": "WITHDRAWN"})
        ),
        "{places}"
    );
    // Never listed: nothing to withdraw.
    let (status, same) = withdraw(&app, &seller, "A-1-2").await;
    assert_eq!(
        (status, same["returns"].as_array().map(Vec::len)),
        (200, Some(2)),
        "{same}"
    );
}

/// A listing and a withdrawal, read from DynamoDB Local's real stream and
/// published by publish-events' own code: `return.listed` (a section's
/// with its quantity as listed), `return.withdrawn`, and `return.listed`
/// for the seat listed again, each once, with the seller's order; a
/// redelivery gives the same ids.
#[tokio::test]
async fn a_listing_and_a_withdrawal_are_published_once_each() {
    use common::events::{publish, stream_records};
    let app = testkit::fresh_app_streaming(None).await;
    let (ev, seller) = bought(&app).await;
    taking_returns(&app, &ev, 3_600).await;
    let ask = json!({"seats": ["A-1-1"], "ga": [{"sectionId": "FLOOR", "quantity": 2}]});
    assert_eq!(list(&app, &seller, ask).await.0, 200);
    assert_eq!(withdraw(&app, &seller, "A-1-1").await.0, 200);
    assert_eq!(
        withdraw(&app, &seller, "A-1-1").await.0,
        200,
        "again: nothing written"
    );
    let again = json!({"seats": ["A-1-1"]});
    assert_eq!(list(&app, &seller, again).await.0, 200, "listed again");
    let records = stream_records(&app).await;
    let returns_out = |feed: local::feed::DevFeed| -> Vec<(String, Value)> {
        feed.events()
            .into_iter()
            .filter(|(t, _)| t.starts_with("return."))
            .collect()
    };
    let feed = local::feed::DevFeed::quiet();
    assert_eq!(
        publish(&feed, &records).await.failed_records,
        Vec::<String>::new()
    );
    let events = returns_out(feed);
    let again = local::feed::DevFeed::quiet();
    publish(&again, &records).await;
    assert_eq!(returns_out(again), events, "a redelivery says the same");
    let said: Vec<(String, Value, Value, Value)> = events
        .iter()
        .map(|(t, d)| {
            assert_eq!(
                (&d["orderId"], &d["eventId"]),
                (&json!(seller.id), &json!(ev)),
                "{d}"
            );
            (
                t.clone(),
                d["seatId"].clone(),
                d["sectionId"].clone(),
                d["quantity"].clone(),
            )
        })
        .collect();
    let mut want = vec![
        (
            "return.listed".to_owned(),
            json!("A-1-1"),
            Value::Null,
            Value::Null,
        ),
        (
            "return.listed".to_owned(),
            Value::Null,
            json!("FLOOR"),
            json!(2),
        ),
        (
            "return.withdrawn".to_owned(),
            json!("A-1-1"),
            Value::Null,
            Value::Null,
        ),
        (
            "return.listed".to_owned(),
            json!("A-1-1"),
            Value::Null,
            Value::Null,
        ),
    ];
    let mut got = said.clone();
    got.sort_by_key(|e| format!("{e:?}"));
    want.sort_by_key(|e| format!("{e:?}"));
    assert_eq!(got, want, "{said:?}");
}

#[tokio::test]
async fn listings_revert_at_the_cutoff_and_at_a_delete() {
    let app = fresh_app().await;
    let (ev, seller) = bought(&app).await;
    // No waitlist yet: returns are closed.
    let one = json!({"seats": ["A-1-1"]});
    assert_eq!(
        refused(&list(&app, &seller, one.clone()).await),
        (409, "returns-closed")
    );
    taking_returns(&app, &ev, 3_600).await;
    assert_eq!(list(&app, &seller, one.clone()).await.0, 200);
    // A cutoff put in the past reverts the listing at once (as read), and
    // takes no more.
    let past = (chrono::Utc::now() - chrono::Duration::seconds(1)).to_rfc3339();
    put_waitlist(&app, &ev, json!({"returnsCloseAt": past})).await;
    let reverted = app.new_process();
    let (_, read) = get_order(&reverted, &seller).await;
    assert_eq!(read["returns"][0]["status"], "REVERTED", "{read}");
    let two = json!({"seats": ["A-1-2"]});
    assert_eq!(
        refused(&list(&app, &seller, two).await),
        (409, "returns-closed")
    );
    // Open again: the listing stays reverted, and may be listed again; a
    // delete reverts it.
    taking_returns(&app, &ev, 3_600).await;
    let (_, read) = get_order(&app.new_process(), &seller).await;
    assert_eq!(read["returns"][0]["status"], "REVERTED", "{read}");
    // The reply reads the listing against the waitlist its write checked.
    let (status, relisted) = list(&app, &seller, one).await;
    assert_eq!(
        (status, &relisted["returns"][0]["status"]),
        (200, &json!("LISTED")),
        "{relisted}"
    );
    let (status, _) = send(&app, "DELETE", &format!("/events/{ev}/waitlist"), &[], "").await;
    assert_eq!(status, 200);
    let (_, read) = get_order(&app.new_process(), &seller).await;
    assert_eq!(read["returns"][0]["status"], "REVERTED", "{read}");
}

#[tokio::test]
async fn only_a_completed_orders_own_units_are_listed_and_bad_asks_are_400() {
    let app = fresh_app().await;
    let (ev, seller) = bought(&app).await;
    taking_returns(&app, &ev, 3_600).await;
    let pending = order(&app, &ev).await;
    assert_eq!(claim(&app, &pending, "A-1-3").await.0, 200);
    let (status, body) = list(&app, &pending, json!({"seats": ["A-1-3"]})).await;
    assert_eq!(
        (status, &body["error"]),
        (409, &json!("return-not-owned")),
        "{body}"
    );
    for (ask, want) in [
        (json!({}), (400, "bad-request")),
        (json!({"seats": ["A-1-1", "A-1-1"]}), (400, "bad-request")),
        (
            json!({"ga": [{"sectionId": "FLOOR", "quantity": 0}]}),
            (400, "bad-request"),
        ),
        (json!({"seats": "A-1-1"}), (400, "bad-request")),
        (json!({"seats": ["Z-9-9"]}), (404, "seat-not-found")),
        (
            json!({"ga": [{"sectionId": "A", "quantity": 1}]}),
            (404, "section-not-found"),
        ),
    ] {
        assert_eq!(
            refused(&list(&app, &seller, ask.clone()).await),
            want,
            "{ask}"
        );
    }
    // Another order's token, and none.
    let (status, _) = send(
        &app,
        "POST",
        &format!("/orders/{}/returns", seller.id),
        &[("authorization", &pending.auth())],
        r#"{"seats":["A-1-1"]}"#,
    )
    .await;
    assert_eq!(status, 401);
    assert_eq!(
        refused(&withdraw(&app, &seller.ghost(), "A-1-1").await),
        (404, "order-not-found")
    );
    assert_eq!(
        refused(&withdraw(&app, &seller, "Z-9-9").await),
        (404, "seat-not-found")
    );
}

/// An order with a buyer (a limited event's) is that buyer's to return:
/// its buyer token too, naming that buyer.
#[tokio::test]
async fn an_order_with_a_buyer_needs_that_buyers_token() {
    let app = fresh_app().await;
    let plan = json!({"name": "Limited", "holdSeconds": 300, "buyerLimit": 2,
        "sections": [{"sectionId": "A", "rows": [{"row": "1", "count": 2}]}]});
    let (ev, _) = create_event(&app, "rb", &plan.to_string()).await;
    let seller = buyer_order(&app, &ev, "user:seller").await;
    assert_eq!(claim(&app, &seller, "A-1-1").await.0, 200);
    assert_eq!(confirm(&app, &seller.id, "pi_limited").await.0, 200);
    taking_returns(&app, &ev, 3_600).await;
    let uri = format!("/orders/{}/returns", seller.id);
    let body = r#"{"seats":["A-1-1"]}"#;
    let auth = seller.auth();
    let as_buyer = |buyer: &str| buyer_token(&ev, buyer);
    let (other, own) = (as_buyer("user:other"), as_buyer("user:seller"));
    let cases = [
        (None, 401, "buyer-token-required"),
        (Some(other.as_str()), 401, "buyer-token-invalid"),
        (Some(own.as_str()), 200, ""),
    ];
    for (token, status, error) in cases {
        let mut headers = vec![("authorization", auth.as_str())];
        headers.extend(token.map(|t| ("x-buyer-token", t)));
        let (got, reply) = send(&app, "POST", &uri, &headers, body).await;
        assert_eq!(
            (got, reply["error"].as_str().unwrap_or_default()),
            (status, error),
            "{reply}"
        );
        if status == 401 && token.is_some() {
            assert_eq!(common::reason(&reply), "buyer-not-orders", "{reply}");
        }
    }
}

/// Eight listings of one seat at once, each on its own instance: exactly
/// one lists it, the rest are told it is listed (`409 return-not-owned`)
/// or, past the retries, `503`; never two listings.
#[tokio::test]
async fn concurrent_listings_of_one_seat_list_it_once() {
    let app = fresh_app().await;
    let (ev, seller) = bought(&app).await;
    taking_returns(&app, &ev, 3_600).await;
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let (app, seller) = (app.new_process(), seller.clone());
        tasks.spawn(async move { list(&app, &seller, json!({"seats": ["A-1-1"]})).await });
    }
    let answers = tasks.join_all().await;
    let listed = answers.iter().filter(|(status, _)| *status == 200).count();
    let refused = answers
        .iter()
        .filter(|reply| refused(reply) == (409, "return-not-owned") || reply.0 == 503)
        .count();
    assert_eq!((listed, refused), (1, 7), "{answers:?}");
    let (_, read) = get_order(&app, &seller).await;
    assert_eq!(
        read["returns"],
        json!([{"seatId": "A-1-1", "status": "LISTED"}]),
        "{read}"
    );
}

/// Twenty-four sellers list a seat each at once, each on its own
/// instance, under the capacity meter (which refuses a write to an item a
/// transaction in flight is changing, as DynamoDB does and DynamoDB Local
/// never does): every listing is made, none answered 503, and none
/// checked the waitlist's main item: each checks the copy of its state
/// the order's id picks, so the listings of a return rush spread over the
/// copies rather than queue on one item.
#[tokio::test]
async fn listings_of_different_orders_at_once_are_all_made() {
    use aws_sdk_dynamodb::config::SharedInterceptor;
    use crowdcheck::capacity::{CapacityMeter, CapacityRecorder};
    const SELLERS: u32 = 24;
    let recorder = CapacityRecorder::new();
    let meter = CapacityMeter::enforcing();
    // Production's client settings, every request recorded and metered.
    let interceptors = [SharedInterceptor::new(recorder.clone()), meter.shared()];
    let client = local::faults::production_client(&testkit::dynamodb_endpoint(), interceptors);
    let app = testkit::fresh_app_with(client).await;
    let ev = ga_event(&app, SELLERS, 1, 300).await;
    let mut sellers = Vec::new();
    for n in 1..=SELLERS {
        let (seller, seat) = (order(&app, &ev).await, format!("A-1-{n}"));
        assert_eq!(claim(&app, &seller, &seat).await.0, 200);
        let payment = format!("pi_seller_{n}");
        let (status, paid) = pay(&app, &seller, &payment, &[&seat], json!([])).await;
        assert_eq!(status, 200, "{paid}");
        sellers.push((seller, seat));
    }
    taking_returns(&app, &ev, 3_600).await;
    recorder.set_recording(true);
    let mut tasks = tokio::task::JoinSet::new();
    for (seller, seat) in sellers {
        let app = app.new_process();
        tasks.spawn(async move { list(&app, &seller, json!({"seats": [seat]})).await });
    }
    let answers = tasks.join_all().await;
    let listed = answers.iter().filter(|(status, _)| *status == 200).count();
    assert_eq!(listed, SELLERS as usize, "{answers:?}");
    // The waitlist items the listings' transactions checked.
    let main = format!(
        "WAITLIST#{}",
        shared::domain::EventRef::of(&shared::domain::EventId::parse(&ev).unwrap())
    );
    let checked: std::collections::HashSet<String> = recorder
        .take()
        .iter()
        .filter(|r| r.op == "TransactWriteItems")
        .flat_map(|r| {
            r.request["TransactItems"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|item| {
            item["ConditionCheck"]["Key"]["PK"]["S"]
                .as_str()
                .map(str::to_owned)
        })
        .filter(|pk| pk.starts_with(&main))
        .collect();
    let copies = checked
        .iter()
        .filter(|pk| pk.starts_with(&format!("{main}#")));
    assert_eq!(copies.count(), checked.len(), "only copies: {checked:?}");
    assert!(checked.len() > 1, "spread over copies: {checked:?}");
}

/// A put that closes returns early: the offerer's tick writes each listing
/// made before it `REVERTED` and takes its resale item away, once (a tick
/// again writes nothing), and publish-events says `return.reverted` once
/// for each.
#[tokio::test]
async fn the_tick_writes_each_reverted_listing_once() {
    use common::events::{publish, stream_records};
    let app = testkit::fresh_app_streaming(None).await;
    let (ev, seller) = bought(&app).await;
    taking_returns(&app, &ev, 3_600).await;
    let ask = json!({"seats": ["A-1-1"], "ga": [{"sectionId": "FLOOR", "quantity": 2}]});
    assert_eq!(list(&app, &seller, ask).await.0, 200);
    let event_id = shared::domain::EventId::parse(&ev).unwrap();
    assert_eq!(app.store.listed_units(&event_id).await.unwrap().len(), 2);
    put_waitlist(&app, &ev, json!({"returnsCloseAt": null})).await;

    let mut offerer = shared::offerer::Offerer::default();
    let order = shared::domain::OrderId::parse(&seller.id).unwrap();
    let stored = |app: shared::App| {
        let order = order.clone();
        async move { app.store.read_listings(&order).await.unwrap() }
    };
    offerer
        .tick(&app, &event_id, shared::world::now())
        .await
        .unwrap();
    let written = stored(app.clone()).await;
    assert!(
        written
            .iter()
            .all(|l| l.status == shared::domain::returns::ReturnStatus::Reverted),
        "{written:?}"
    );
    assert!(app.store.listed_units(&event_id).await.unwrap().is_empty());
    offerer
        .tick(&app, &event_id, shared::world::now())
        .await
        .unwrap();
    assert_eq!(
        stored(app.clone()).await,
        written,
        "a tick again writes nothing"
    );
    let (_, read) = get_order(&app, &seller).await;
    assert_eq!(read["returns"][0]["status"], "REVERTED", "{read}");

    let records = stream_records(&app).await;
    let feed = local::feed::DevFeed::quiet();
    publish(&feed, &records).await;
    let reverted: Vec<Value> = feed
        .events()
        .into_iter()
        .filter(|(t, _)| t == "return.reverted")
        .map(|(_, d)| json!([d["orderId"], d["seatId"], d["sectionId"], d["quantity"]]))
        .collect();
    assert_eq!(reverted.len(), 2, "{reverted:?}");
    assert!(
        reverted.contains(&json!([seller.id, "A-1-1", null, null])),
        "{reverted:?}"
    );
    assert!(
        reverted.contains(&json!([seller.id, null, "FLOOR", 2])),
        "{reverted:?}"
    );
}
