//! Events out, read from DynamoDB Local's real stream (NEW_AND_OLD_IMAGES,
//! as template.yaml declares it) and published by publish-events' own code:
//! a whole flow gives exactly the expected events per order, in order per
//! seat, section and order; reading the same records again gives the same
//! ids; a refused put reports exactly the records whose events were
//! refused, through a sink and through the real EventBridge client.

use crate::common;

use std::collections::BTreeMap;

use common::events::{publish, stream_records};
use common::*;
use local::feed::DevFeed;
use serde_json::{json, Value};
use shared::domain::Millis;

/// What each order went through, as the events say: per order, its events
/// (`detailType subject quantity`) in publishing order.
fn by_order(events: &[(String, Value)]) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    // A waitlist's events may name no order (publish_waitlist.rs).
    let of_orders = events.iter().filter(|(_, d)| d["orderId"].is_string());
    for (detail_type, d) in of_orders {
        let subject = d["seatId"]
            .as_str()
            .or(d["sectionId"].as_str())
            .unwrap_or("order");
        let quantity = d["quantity"]
            .as_u64()
            .map(|q| format!(" {q}"))
            .unwrap_or_default();
        out.entry(d["orderId"].as_str().unwrap().to_owned())
            .or_default()
            .push(format!("{detail_type} {subject}{quantity}"));
    }
    out
}

/// `events` of one subject (a seat, a section, or the order itself), in order.
fn of_subject<'a>(events: &'a [String], subject: &str) -> Vec<&'a str> {
    events
        .iter()
        .filter(|e| e.split(' ').nth(1) == Some(subject))
        .map(String::as_str)
        .collect()
}

/// The flow: a buyer (claims, a drop, best-available, GA held then
/// lowered, an extension, a payment), a cancelled order, and on a short
/// hold an order that expires, whose places a rival takes over before the
/// sweep expires it.
struct Flow {
    app: shared::App,
    buyer: TestOrder,
    best_seats: Vec<String>,
    cancelled: TestOrder,
    expired: TestOrder,
    rival: TestOrder,
    /// Just before the payment was sent and just after it was answered.
    paid_at: (Millis, Millis),
}

/// The flow's buyer's create-order body: its `userId` comes back on
/// `order.completed`.
const BUYER_BODY: &str = r#"{"userId": "fan-7"}"#;

async fn run_flow() -> Flow {
    let app = testkit::fresh_app_streaming(None).await;
    let plan = json!({"name": "Out", "holdSeconds": 60, "sections": [
        {"sectionId": "A", "rows": [{"row": "1", "count": 8}]}, {"sectionId": "FLOOR", "capacity": 10}]});
    assert_eq!(
        call(&app, "PUT", "/events/out", &[], &plan.to_string())
            .await
            .0,
        201
    );
    let (status, opened) = send(&app, "POST", "/events/out/orders", &[], BUYER_BODY).await;
    assert_eq!(status, 201, "{opened}");
    let buyer = TestOrder::from_reply(&opened);
    local::invariants::remember_order(&app, &buyer.id);
    assert_eq!(claim(&app, &buyer, "A-1-1").await.0, 200);
    assert_eq!(claim(&app, &buyer, "A-1-2").await.0, 200);
    assert_eq!(drop_seat(&app, &buyer, "A-1-2").await.0, 200);
    let (status, body) = best(&app, &buyer, json!({"quantity": 2})).await;
    assert_eq!(status, 200, "{body}");
    let best_seats: Vec<String> = body["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(hold_ga(&app, &buyer, "FLOOR", json!(3)).await.0, 200);
    assert_eq!(hold_ga(&app, &buyer, "FLOOR", json!(1)).await.0, 200);
    assert_eq!(extend(&app, &buyer, r#"{"seconds": 600}"#).await.0, 200);
    let mut paid: Vec<&str> = vec!["A-1-1"];
    paid.extend(best_seats.iter().map(String::as_str));
    let paying = shared::world::now();
    let (status, body) = pay(
        &app,
        &buyer,
        "pay-out-1",
        &paid,
        json!([{"sectionId": "FLOOR", "quantity": 1}]),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let paid_at = (paying, shared::world::now());

    let cancelled = order(&app, "out").await;
    assert_eq!(claim(&app, &cancelled, "A-1-8").await.0, 200);
    assert_eq!(cancel(&app, &cancelled).await.0, 200);

    let short = json!({"name": "Short", "holdSeconds": 1, "sections": [
        {"sectionId": "B", "rows": [{"row": "1", "count": 1}]}, {"sectionId": "PIT", "capacity": 10}]});
    assert_eq!(
        call(&app, "PUT", "/events/short", &[], &short.to_string())
            .await
            .0,
        201
    );
    let expired = order(&app, "short").await;
    assert_eq!(claim(&app, &expired, "B-1-1").await.0, 200);
    assert_eq!(hold_ga(&app, &expired, "PIT", json!(2)).await.0, 200);
    let_holds_expire(1).await;
    let rival = order_expiring_in(&app, "short", 60).await;
    assert_eq!(
        hold_ga(&app, &rival, "PIT", json!(9)).await.0,
        200,
        "9 of 10: the expired order's 2 reclaimed"
    );
    let summary = sweep(&app).await;
    assert_eq!(
        (summary.expired_orders, summary.released_seats),
        (1, 1),
        "{summary:?}"
    );
    Flow {
        app,
        buyer,
        best_seats,
        cancelled,
        expired,
        rival,
        paid_at,
    }
}

#[tokio::test]
async fn a_whole_flow_gives_exactly_the_expected_events_and_the_same_ids_when_read_again() {
    let flow = run_flow().await;
    let records = stream_records(&flow.app).await;
    let feed = DevFeed::quiet();
    let out = publish(&feed, &records).await;
    assert_eq!(out.failed_records, Vec::<String>::new());
    let events = feed.events();
    assert_eq!(out.events, events.len(), "every event published once");

    // Every event stands alone: its ids, a time, the source's detail-types.
    for (detail_type, d) in &events {
        assert!(d["id"].as_str().is_some_and(|id| !id.is_empty()), "{d}");
        assert!(d["eventId"] == "out" || d["eventId"] == "short", "{d}");
        assert!(d["at"].as_str().is_some_and(|at| at.ends_with('Z')), "{d}");
        match detail_type.as_str() {
            "seat.held" | "seat.released" | "seat.sold" => {
                assert!(d["seatId"].is_string() && d["sectionId"].is_null(), "{d}")
            }
            "ga.held" | "ga.released" | "ga.sold" => assert!(
                d["sectionId"].is_string() && d["quantity"].as_u64() > Some(0),
                "{d}"
            ),
            _ => assert!(d["seatId"].is_null() && d["sectionId"].is_null(), "{d}"),
        }
        if detail_type == "seat.sold"
            || detail_type == "ga.sold"
            || detail_type == "order.completed"
        {
            assert_eq!(d["paymentId"], "pay-out-1", "{d}");
        }
    }

    // order.completed says what was bought and for whom, as confirm did.
    let completed: Vec<&Value> = events
        .iter()
        .filter(|(t, _)| t == "order.completed")
        .map(|(_, d)| d)
        .collect();
    assert_eq!(completed.len(), 1);
    let mut bought: Vec<&str> = completed[0]["seats"]
        .as_array()
        .expect("order.completed carries seats")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    bought.sort();
    let mut paid: Vec<&str> = vec!["A-1-1"];
    paid.extend(flow.best_seats.iter().map(String::as_str));
    paid.sort();
    assert_eq!(bought, paid);
    assert_eq!(
        completed[0]["ga"],
        json!([{"sectionId": "FLOOR", "quantity": 1}])
    );
    assert_eq!(completed[0]["userId"], "fan-7");
    assert!(completed[0].get("buyerId").is_none(), "no limit, no buyer");
    // Its time is the completion's own, to the millisecond: between the
    // payment's send and its answer (the stream record's time is cut to
    // the minute, so it would fall before the send).
    let at = completed[0]["at"].as_str().expect("at");
    let at = chrono::DateTime::parse_from_rfc3339(at)
        .expect("RFC 3339")
        .timestamp_millis();
    let (sent, answered) = flow.paid_at;
    assert!(
        (sent.0..=answered.0).contains(&at),
        "{at} not in {sent:?}..{answered:?}"
    );

    let orders = by_order(&events);
    let (b1, b2) = (&flow.best_seats[0], &flow.best_seats[1]);
    let buyer = &orders[&flow.buyer.id];
    assert_eq!(
        of_subject(buyer, "order"),
        [
            "order.created order",
            "order.extended order",
            "order.completed order"
        ]
    );
    assert_eq!(
        of_subject(buyer, "A-1-1"),
        ["seat.held A-1-1", "seat.sold A-1-1"]
    );
    assert_eq!(
        of_subject(buyer, "A-1-2"),
        ["seat.held A-1-2", "seat.released A-1-2"]
    );
    assert_eq!(
        of_subject(buyer, b1),
        [format!("seat.held {b1}"), format!("seat.sold {b1}")]
    );
    assert_eq!(
        of_subject(buyer, b2),
        [format!("seat.held {b2}"), format!("seat.sold {b2}")]
    );
    assert_eq!(
        of_subject(buyer, "FLOOR"),
        ["ga.held FLOOR 3", "ga.released FLOOR 2", "ga.sold FLOOR 1"]
    );
    assert_eq!(
        buyer.len(),
        3 + 2 + 2 + 2 + 2 + 3,
        "nothing else: {buyer:?}"
    );

    let cancelled = &orders[&flow.cancelled.id];
    assert_eq!(cancelled.len(), 4, "{cancelled:?}");
    assert_eq!(
        of_subject(cancelled, "order"),
        ["order.created order", "order.cancelled order"]
    );
    assert_eq!(
        of_subject(cancelled, "A-1-8"),
        ["seat.held A-1-8", "seat.released A-1-8"]
    );

    let expired = &orders[&flow.expired.id];
    assert_eq!(
        of_subject(expired, "order"),
        ["order.created order", "order.expired order"]
    );
    assert_eq!(
        of_subject(expired, "B-1-1"),
        ["seat.held B-1-1", "seat.released B-1-1"]
    );
    assert_eq!(
        of_subject(expired, "PIT"),
        ["ga.held PIT 2", "ga.released PIT 2"],
        "reclaimed by the rival, before the sweep"
    );
    assert_eq!(expired.len(), 6, "{expired:?}");
    // The rival was written to the store directly: no order.created through the API's route,
    // but its order item's INSERT is on the stream all the same.
    assert_eq!(
        orders[&flow.rival.id],
        ["order.created order", "ga.held PIT 9"]
    );
    assert_eq!(orders.len(), 4, "{orders:?}");

    // Ids are unique, and reading the same records again gives the same events.
    let mut ids: Vec<&str> = events
        .iter()
        .map(|(_, d)| d["id"].as_str().unwrap())
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), events.len(), "ids are unique");
    let again = DevFeed::quiet();
    let reread = stream_records(&flow.app).await;
    assert_eq!(reread.len(), records.len());
    publish(&again, &reread).await;
    assert_eq!(
        again.events(),
        events,
        "a redelivery gives the same ids and details"
    );
    // Delivered twice into one feed, each event is kept once.
    publish(&feed, &reread).await;
    assert_eq!(feed.events().len(), events.len());
}

/// The records whose events name `seat`.
fn records_of_seat(records: &[Value], seat: &str) -> Vec<String> {
    records
        .iter()
        .filter(|r| r["eventName"] == "MODIFY" && r["dynamodb"]["NewImage"]["seatId"]["S"] == seat)
        .map(|r| r["dynamodb"]["SequenceNumber"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_refused_put_reports_exactly_its_records_through_a_sink_and_through_eventbridge() {
    let flow = run_flow().await;
    let records = stream_records(&flow.app).await;
    let refused_seats = ["A-1-2", "A-1-8"];
    let mut expected: Vec<String> = refused_seats
        .iter()
        .flat_map(|s| records_of_seat(&records, s))
        .collect();
    expected.sort();
    assert_eq!(
        expected.len(),
        4,
        "A-1-2 held and released, A-1-8 held and released"
    );
    let refuse = move |_: &str, d: &Value| refused_seats.iter().any(|s| d["seatId"] == *s);

    // Through a sink.
    let feed = DevFeed::refusing(refuse);
    let out = publish(&feed, &records).await;
    let mut failed = out.failed_records.clone();
    failed.sort();
    assert_eq!(failed, expected);
    assert!(feed
        .events()
        .iter()
        .all(|(_, d)| !refused_seats.iter().any(|s| d["seatId"] == *s)));

    // Through the real EventBridge client, against the dev server's PutEvents.
    let receiving = DevFeed::refusing(refuse);
    let (bus, server) = testkit::bus_on_dev_server(&flow.app, &receiving, None).await;
    let through_bus = publish(&bus, &records).await;
    let mut failed = through_bus.failed_records.clone();
    failed.sort();
    assert_eq!(
        failed, expected,
        "EventBridge's per-entry ErrorCode marks exactly those records"
    );
    assert_eq!(
        receiving.events(),
        feed.events(),
        "the bus carried the same events"
    );
    server.stop().await;
}

/// An order with a buyer: its `order.completed`, read from the stream,
/// names the buyer its token named (the seller's own bus may carry it).
#[tokio::test]
async fn a_buyers_completed_order_names_the_buyer() {
    let app = testkit::fresh_app_streaming(None).await;
    let plan = json!({"name": "Limited", "holdSeconds": 60, "buyerLimit": 2, "sections": [
        {"sectionId": "A", "rows": [{"row": "1", "count": 2}]}]});
    assert_eq!(
        call(&app, "PUT", "/events/bought", &[], &plan.to_string())
            .await
            .0,
        201
    );
    let buyer = buyer_order(&app, "bought", "user:77").await;
    assert_eq!(claim(&app, &buyer, "A-1-1").await.0, 200);
    let (status, body) = pay(&app, &buyer, "pay-buyer-1", &["A-1-1"], json!([])).await;
    assert_eq!(status, 200, "{body}");
    let feed = DevFeed::quiet();
    let out = publish(&feed, &stream_records(&app).await).await;
    assert_eq!(out.failed_records, Vec::<String>::new());
    let completed: Vec<Value> = feed
        .events()
        .into_iter()
        .filter(|(t, d)| t == "order.completed" && d["orderId"] == buyer.id.as_str())
        .map(|(_, d)| d)
        .collect();
    assert_eq!(completed.len(), 1);
    assert_eq!(
        (&completed[0]["buyerId"], &completed[0]["seats"]),
        (&json!("user:77"), &json!(["A-1-1"]))
    );
    assert!(
        !completed[0].to_string().contains(&buyer.token),
        "no token on the bus"
    );
}
