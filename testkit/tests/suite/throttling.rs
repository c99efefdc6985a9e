//! DynamoDB's partition limits, enforced on DynamoDB Local by the capacity
//! meter (crowdcheck/src/capacity/metering.rs): a seat claimed past its partition's
//! 1,000 write units in one second is throttled as DynamoDB would throttle
//! it, and the claimant is told 503 with `Retry-After`, never a 409 that
//! lies. A meter that only records changes no answer.

use crate::common;

use std::sync::Arc;

use common::*;
use crowdcheck::capacity::{CapacityMeter, Target, PARTITION_READ_UNITS, PARTITION_WRITE_UNITS};
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

/// Write units a stampede put on the seat's key, and the share of a
/// partition-second it put on the seat's partition (every key there:
/// the meter places keys on a new table's partitions by a hash, so the
/// orders beside the seat share its limit; writes over 1,000 plus reads
/// over 3,000, as DynamoDB combines them).
#[derive(Debug)]
struct SeatLoad {
    key: f64,
    partition: f64,
}

/// `CLAIMANTS` claims of A-1-1 on a fresh event of an app whose client
/// carries `meter`, at one instant of the meter's clock.
async fn stampede(meter: &CapacityMeter) -> (Answers, SeatLoad) {
    let client = production_client(&testkit::dynamodb_endpoint(), [meter.shared()]);
    let app = testkit::fresh_app_with(client).await;
    let ev = event(&app, 1, 300).await;
    let mut orders = Vec::new();
    for _ in 0..CLAIMANTS {
        orders.push(order(&app, &ev).await);
    }
    let seat_key = seat_partition(&ev);
    let partition = meter.partition_of(&seat_key);
    let write_units = |meter: &CapacityMeter| {
        let (mut key, mut partition_share) = (0.0, 0.0);
        for (target, (write, read)) in meter.metered().units {
            if target == seat_key {
                key += write;
            }
            if meter.partition_of(&target) == partition {
                partition_share += write / PARTITION_WRITE_UNITS + read / PARTITION_READ_UNITS;
            }
        }
        (key, partition_share)
    };
    let before = write_units(meter);
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
            crowdcheck::capacity::at(instant, claim).await
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
    let after = write_units(meter);
    let load = SeatLoad {
        key: after.0 - before.0,
        partition: after.1 - before.1,
    };
    (answers, load)
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
    let (answers, load) = stampede(&meter).await;
    eprintln!("enforcing meter: {answers:?}, {load:?} write units");
    assert!(answers.wrong.is_empty(), "{:?}", answers.wrong);
    assert_eq!(answers.won, 1, "{answers:?}");
    assert_eq!(answers.won + answers.held + answers.unavailable, CLAIMANTS);
    // Each claim's transaction costs the seat's key 2 write units (failed,
    // conflicting or not), reserved when it is let in; the partition's
    // other keys share its 1,000 in the second: it fills, and the rest
    // were throttled.
    assert!(answers.unavailable > 0, "{answers:?}");
    // Full, and over only by what was in flight when it filled (a read is
    // let in at its least cost and settled at what it read; the meter has
    // the next second pay that back).
    assert!(load.partition <= 1.1, "{load:?}");
    assert!(
        load.partition >= 1.0 - 8.0 / PARTITION_WRITE_UNITS,
        "full but for a claim's units: {load:?}"
    );
    assert!(
        load.key > 0.0 && load.key <= load.partition * PARTITION_WRITE_UNITS,
        "{load:?}"
    );
    let metered = meter.metered();
    // Claims in flight together on one seat: DynamoDB cancels all but
    // one with TransactionConflict, and the meter does too.
    assert!(metered.conflicts > 0, "{metered:?}");
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
    let (answers, load) = stampede(&meter).await;
    assert!(answers.wrong.is_empty(), "{:?}", answers.wrong);
    assert_eq!(
        (answers.won, answers.held, answers.unavailable),
        (1, CLAIMANTS - 1, 0)
    );
    assert!(load.key > PARTITION_WRITE_UNITS, "{load:?}");
    let would = meter.metered().throttled;
    assert!(
        would.get("TableWriteKeyRangeThroughputExceeded") >= Some(&1),
        "{would:?}"
    );
}

/// A key read past its 3,000 read units in one second of the meter's
/// clock: a batch asking for it and another key is answered 200 with the
/// other item and the first key unprocessed, as DynamoDB answers; a batch
/// of that key alone is refused with DynamoDB's throttling error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_past_one_keys_read_units_serves_the_rest_and_leaves_it_unprocessed() {
    use aws_sdk_dynamodb::error::ProvideErrorMetadata;
    use aws_sdk_dynamodb::types::{AttributeValue, KeysAndAttributes};
    use std::collections::HashMap;

    let meter = CapacityMeter::enforcing();
    let client = production_client(&testkit::dynamodb_endpoint(), [meter.shared()]);
    let app = testkit::fresh_app_with(client.clone()).await;
    let table = app.store.table_name().to_owned();
    let key = |pk: &str| {
        HashMap::from([
            (
                shared::store::PK.to_owned(),
                AttributeValue::S(pk.to_owned()),
            ),
            (shared::store::SK.to_owned(), AttributeValue::S("X".into())),
        ])
    };
    // 390,018 bytes: 96 read units a consistent read (4 KB each).
    let mut big = key("BATCH#big");
    big.insert("blob".into(), AttributeValue::S("x".repeat(390_000)));
    for item in [big, key("BATCH#small")] {
        let put = client.put_item().table_name(&table).set_item(Some(item));
        put.send().await.unwrap();
    }
    let batch = |pks: &[&str]| {
        let keys = KeysAndAttributes::builder()
            .set_keys(Some(pks.iter().map(|pk| key(pk)).collect()))
            .consistent_read(true)
            .build()
            .unwrap();
        client.batch_get_item().request_items(&table, keys).send()
    };
    // The second after the puts: the big key's write units are not in it.
    let next_second = shared::domain::Millis((shared::world::now().0 / 1_000 + 1) * 1_000);
    crowdcheck::capacity::at(next_second, async {
        let mut served = 0;
        let refused = loop {
            let read = client
                .get_item()
                .table_name(&table)
                .set_key(Some(key("BATCH#big")));
            match read.consistent_read(true).send().await {
                Ok(_) => served += 1,
                Err(e) => break e,
            }
            assert!(served <= 40, "never throttled");
        };
        // A read is let in while the key has units left: the 32nd takes
        // the second to 3,072 of its 3,000.
        assert_eq!(served, 32, "3,000 read units in 96-unit reads");
        assert_eq!(
            refused.code(),
            Some("ProvisionedThroughputExceededException")
        );

        let both = batch(&["BATCH#big", "BATCH#small"]).await.unwrap();
        let got = &both.responses().unwrap()[&table];
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(
            got[0].get(shared::store::PK),
            key("BATCH#small").get(shared::store::PK)
        );
        let left = both.unprocessed_keys().unwrap()[&table].keys();
        assert_eq!(left, [key("BATCH#big")]);

        let alone = batch(&["BATCH#big"]).await.unwrap_err();
        assert_eq!(alone.code(), Some("ProvisionedThroughputExceededException"));
    })
    .await;
    assert!(
        meter.metered().throttled.values().sum::<u64>() >= 3,
        "{:?}",
        meter.metered().throttled
    );
}
