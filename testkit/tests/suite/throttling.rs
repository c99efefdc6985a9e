//! DynamoDB's partition limits, enforced on DynamoDB Local by the capacity
//! meter (local/src/capacity/metering.rs): a seat claimed past its key's
//! 1,000 write units in one second is throttled as DynamoDB would throttle
//! it, and the claimant is told 503 with `Retry-After`, never a 409 that
//! lies. A meter that only records changes no answer.

use crate::common;

use std::sync::Arc;

use common::*;
use local::capacity::{CapacityMeter, Target, PARTITION_WRITE_UNITS};
use local::faults::production_client;
use tokio::sync::Semaphore;

/// Claimants of one seat, each through a function instance of its own
/// (so no instance answers from memory), all within one second of the
/// meter's clock.
const CLAIMANTS: usize = 600;
const IN_FLIGHT: usize = 16;

/// What the stampede was answered.
#[derive(Debug, Default)]
struct Answers {
    won: usize,
    held: usize,
    unavailable: usize,
    /// 503s without a numeric `Retry-After`, and any other answer.
    wrong: Vec<String>,
}

/// `CLAIMANTS` claims of A-1-1 on a fresh event of an app whose client
/// carries `meter`, at one instant of the meter's clock.
async fn stampede(meter: &CapacityMeter) -> (Answers, f64) {
    let client = production_client(&testkit::dynamodb_endpoint(), [meter.shared()]);
    let app = testkit::fresh_app_with(client).await;
    let ev = event(&app, 1, 300).await;
    let mut orders = Vec::new();
    for _ in 0..CLAIMANTS {
        orders.push(order(&app, &ev).await);
    }
    let seat_key = seat_partition(&ev);
    let units_before = meter.metered().units.get(&seat_key).map_or(0.0, |u| u.0);
    let instant = shared::world::now();
    let in_flight = Arc::new(Semaphore::new(IN_FLIGHT));
    let mut tasks = Vec::new();
    for o in orders {
        let (instance, in_flight) = (app.new_process(), in_flight.clone());
        tasks.push(tokio::spawn(async move {
            let _permit = in_flight.acquire().await;
            let (uri, auth) = (format!("/orders/{}/seats/A-1-1", o.id), o.auth());
            let headers = [("authorization", auth.as_str())];
            let claim = call_full(&instance, "POST", &uri, &headers, "");
            local::capacity::at(instant, claim).await
        }));
    }
    let mut answers = Answers::default();
    for task in tasks {
        let reply = task.await.unwrap();
        match (reply.status, reply.code()) {
            (200, _) => answers.won += 1,
            (409, "seat-held") => answers.held += 1,
            (503, "store-unavailable")
                if reply
                    .retry_after
                    .as_deref()
                    .and_then(|s| s.parse::<u64>().ok())
                    >= Some(1) =>
            {
                answers.unavailable += 1
            }
            _ => answers.wrong.push(format!("{reply:?}")),
        }
    }
    testkit::assert_invariants(&app, &ev).await;
    let units = meter.metered().units.get(&seat_key).map_or(0.0, |u| u.0);
    (answers, units - units_before)
}

/// The seat's partition key, as the store keys it.
fn seat_partition(ev: &str) -> Target {
    let event = shared::domain::EventId::parse(ev).unwrap();
    let seat = shared::domain::SeatId::parse("A-1-1").unwrap();
    match shared::store::seat_item_key(&event, &seat).get(shared::store::PK) {
        Some(aws_sdk_dynamodb::types::AttributeValue::S(pk)) => Target::table(pk.clone()),
        other => panic!("a seat key without a string partition key: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_seat_claimed_past_its_partitions_write_units_in_one_second_is_answered_503() {
    let meter = CapacityMeter::enforcing();
    let (answers, seat_units) = stampede(&meter).await;
    eprintln!("enforcing meter: {answers:?}, {seat_units} write units on the seat's key");
    assert!(answers.wrong.is_empty(), "{:?}", answers.wrong);
    assert_eq!(answers.won, 1, "{answers:?}");
    assert_eq!(answers.won + answers.held + answers.unavailable, CLAIMANTS);
    // Each claim's transaction costs the seat's key 2 write units (failed
    // or not), reserved when it is let in: 500 fit in the second, exactly.
    assert_eq!(answers.won + answers.held, 500, "{answers:?}");
    assert_eq!(
        seat_units, PARTITION_WRITE_UNITS,
        "the seat's key's write units in its second"
    );
    let metered = meter.metered();
    assert!(
        metered
            .throttled
            .get("TableWriteKeyRangeThroughputExceeded")
            >= Some(&1),
        "{:?}",
        metered.throttled
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_recording_meter_counts_what_it_would_throttle_and_changes_no_answer() {
    let meter = CapacityMeter::recording();
    let (answers, seat_units) = stampede(&meter).await;
    assert!(answers.wrong.is_empty(), "{:?}", answers.wrong);
    assert_eq!(
        (answers.won, answers.held, answers.unavailable),
        (1, CLAIMANTS - 1, 0)
    );
    assert!(seat_units > PARTITION_WRITE_UNITS, "{seat_units}");
    let would = meter.metered().throttled;
    assert!(
        would.get("TableWriteKeyRangeThroughputExceeded") >= Some(&1),
        "{would:?}"
    );
}
