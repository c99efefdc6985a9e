//! The on-sale queue's races on DynamoDB Local: hundreds of visitors
//! joining at once, a joiner admitted on the spot ahead of one the
//! admitter has not counted yet (or after a failed look), a crowd's
//! joiners racing for an on-the-spot admission on instances whose view of
//! the queue is a second old, and two admitters' runs overlapping while
//! buyers sell the last seats.

use crate::common;

use common::queue::*;
use common::{event, fresh_app};
use serde_json::json;
use shared::admitter::{Admitter, TickSummary};
use shared::domain::EventId;

#[tokio::test]
async fn hundreds_of_visitors_joining_at_once_each_get_one_place() {
    let app = fresh_app().await;
    let ev = event(&app, 5, 300).await;
    let (_, put) = put_queue(&app, &ev, &queue_body(HOUR_MS, 600)).await;
    let opens = millis(&put["opensAt"]);
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..300 {
        let (app, ev) = (app.clone(), ev.clone());
        tasks.spawn(async move { join(&app, &ev).await });
    }
    let visitors = tasks.join_all().await;
    let ids: std::collections::BTreeSet<&str> = visitors.iter().map(|v| v.id.as_str()).collect();
    assert_eq!(ids.len(), 300);
    let mut admitter = Admitter::default();
    let opens =
        shared::domain::Millis(opens.0 + i64::from(shared::domain::queue::DEFAULT_DRAW_SETTLE_MS));
    let summary = tick(&app, &mut admitter, &ev, opens).await;
    assert_eq!((summary.admitted, summary.waiting), (1, 299));
    // Every position is within the contract's bound of the truth (1% and
    // a second's pace: 10), and together they are the queue's order.
    let mut seen = Vec::new();
    for v in &visitors {
        if let (Some(position), _) = view_at(&app, &ev, v, opens).await {
            seen.push(position);
        }
    }
    seen.sort_unstable();
    assert_eq!(seen.len(), 299);
    for (truth, got) in (1..).zip(&seen) {
        assert!(got.abs_diff(truth) <= truth / 100 + 10, "{got} for {truth}");
    }
}

#[tokio::test]
async fn a_joiner_never_passes_one_the_admitter_has_not_counted_yet() {
    let app = fresh_app().await;
    let ev = event(&app, 5, 300).await;
    // One admission every six seconds: a loaded machine took more than
    // two between the first join and the second.
    assert_eq!(put_queue(&app, &ev, &queue_body(-5_000, 10)).await.0, 200);
    let first = join(&app, &ev).await;
    assert_eq!(first.joined["status"], "ADMITTED");
    // An idle tick puts that state on the copies joiners read.
    let mut admitter = Admitter::default();
    tick(&app, &mut admitter, &ev, shared::world::now()).await;
    // Within the spacing: it waits, in the index, and the queue's state
    // does not count it until the admitter's next tick.
    let waiting = join(&app, &ev).await;
    assert_eq!(waiting.joined["status"], "WAITING");
    // The spacing passes with no tick in between (on AWS: a tick slowed
    // down, or an instance's view of the state a second old).
    tokio::time::sleep(std::time::Duration::from_millis(6_100)).await;
    let later = join(&app, &ev).await;
    assert_eq!(
        later.joined["status"], "WAITING",
        "it joined after one who waits: {}",
        later.joined
    );
    let summary = tick(&app, &mut admitter, &ev, shared::world::now()).await;
    assert_eq!((summary.admitted, summary.waiting), (1, 1));
    assert!(is_admitted(&app, &ev, &waiting).await);
    assert!(!is_admitted(&app, &ev, &later).await);
}

#[tokio::test]
async fn an_instance_loses_at_most_one_on_the_spot_race_per_version_of_the_queue() {
    let counter = local::metrics::RequestCounter::default();
    let app = fresh_app().await;
    let ev = event(&app, 5, 300).await;
    assert_eq!(put_queue(&app, &ev, &queue_body(-5_000, 60)).await.0, 200);
    let first = instance(&app, &counter);
    // The crowd's instance keeps its view for a minute here, not a second:
    // what follows takes more than a second on a busy machine, and the
    // test is of a view that is behind, however long it is kept.
    let crowd = {
        let crowd = instance(&app, &counter);
        shared::App {
            memory: crowd.memory.clone().with_state_cache_ms(60_000),
            ..crowd
        }
    };
    // The crowd's join-queue instance reads its copy of the queue: nobody
    // waits.
    let visitors = local::iam::attributed(&crowd, "queue-visitors");
    let _ = visitors
        .queue(&EventId::parse(&ev).unwrap(), shared::world::now())
        .await
        .unwrap();
    // Another instance admits a joiner on the spot: the queue's version
    // moves on its main item, and the crowd's view is now behind.
    assert_eq!(join(&first, &ev).await.joined["status"], "ADMITTED");
    // The admitter's next tick, with nobody waiting and so nothing to write,
    // still brings the copies up to the main item (which only the join wrote).
    let event_id = EventId::parse(&ev).unwrap();
    let main = app.store.read_queue(&event_id).await.unwrap().unwrap();
    tick(&app, &mut Admitter::default(), &ev, shared::world::now()).await;
    let reader = instance(&app, &counter);
    let copy = reader
        .queue(&event_id, shared::world::now())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        copy.version, main.version,
        "the copy caught up with the main item"
    );
    // The crowd's instance still has its older read (a second's cache).
    counter.take();
    let joiners = [
        join(&crowd, &ev).await,
        join(&crowd, &ev).await,
        join(&crowd, &ev).await,
    ];
    for v in &joiners {
        assert_eq!(v.joined["status"], "WAITING", "{}", v.joined);
    }
    let requests = counter.take();
    assert_eq!(
        requests.get("TransactWriteItems"),
        Some(&1),
        "one lost race, then plain joins: {requests:?}"
    );
    assert_eq!(
        requests.get("Query").copied(),
        Some(u64::from(shared::config::QueueShards::DEFAULT.count())),
        "one look at the index (an entry of each shard), before the one try: {requests:?}"
    );
}

#[tokio::test]
async fn a_joiner_whose_look_at_the_index_fails_waits_instead() {
    let faults = local::faults::FaultInjector::default();
    let app = testkit::fresh_app_with(local::faults::production_client(
        &testkit::dynamodb_endpoint(),
        [faults.shared()],
    ))
    .await;
    let ev = event(&app, 5, 300).await;
    assert_eq!(put_queue(&app, &ev, &queue_body(-5_000, 60)).await.0, 200);
    // Idle and open: the join would be admitted at once, but the index
    // is throttled.
    faults.fail("Query", local::faults::Fault::Throttling, None);
    let v = join(&app, &ev).await;
    assert_eq!(v.joined["status"], "WAITING", "{}", v.joined);
    assert!(faults.attempts("Query") >= 1);
    // The same instance does not look again over the same version.
    faults.reset();
    assert_eq!(join(&app, &ev).await.joined["status"], "WAITING");
    assert_eq!(faults.attempts("Query"), 0);
}

/// Two admitters' ticks at one instant, at once (their runs overlap for
/// a moment every minute on AWS), each on its own instance; which one
/// writes first alternates from round to round.
async fn overlapping_ticks(
    instances: [&shared::App; 2],
    admitters: &mut [Admitter; 2],
    ev: &str,
    round: usize,
) -> [TickSummary; 2] {
    let now = shared::world::now();
    let [a, b] = admitters;
    if round.is_multiple_of(2) {
        let (x, y) = tokio::join!(
            tick(instances[0], a, ev, now),
            tick(instances[1], b, ev, now)
        );
        [x, y]
    } else {
        let (y, x) = tokio::join!(
            tick(instances[1], b, ev, now),
            tick(instances[0], a, ev, now)
        );
        [x, y]
    }
}

/// An admitted visitor (`v`: its reply) buys the first seat still free, if any.
async fn buy_a_seat(app: shared::App, ev: String, v: serde_json::Value, seats: u32) -> bool {
    let order = admitted_order(&app, &ev, &v).await;
    for n in 1..=seats {
        let seat = format!("A-1-{n}");
        if common::claim(&app, &order, &seat).await.0 == 200 {
            let (status, body) = common::pay(&app, &order, &order.id, &[&seat], json!([])).await;
            assert_eq!(status, 200, "{body}");
            return true;
        }
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn admissions_racing_a_sell_out_stop_at_it_and_are_counted_exactly() {
    const SEATS: u32 = 8;
    let streaming = testkit::fresh_app_streaming(None).await;
    let app = shared::App {
        memory: streaming.memory.clone().with_seat_map_cache_ms(0),
        ..streaming.clone()
    };
    let endpoint = testkit::dynamodb_endpoint();
    let ev = event(&app, SEATS, 300).await;
    assert_eq!(put_queue(&app, &ev, &queue_body(-5_000, 600)).await.0, 200);
    let first = join(&app, &ev).await;
    assert_eq!(first.joined["status"], "ADMITTED");
    let mut waiting = Vec::new();
    for _ in 0..60 {
        waiting.push(join(&app, &ev).await);
    }
    // Two admitters admit ten a second while each admitted visitor buys a
    // seat at once: the last seats sell while admissions are being given.
    let mut buyers = tokio::task::JoinSet::new();
    let mut buy = |v: &serde_json::Value| {
        buyers.spawn(buy_a_seat(app.clone(), ev.clone(), v.clone(), SEATS));
    };
    buy(&first.joined);
    // The second admitter's instance reuses a seat-map read for a second,
    // as on AWS: it may see seats left after the first saw the sell-out.
    let counter = local::metrics::RequestCounter::default();
    let lagging = {
        let instance = instance(&app, &counter);
        shared::App {
            memory: instance
                .memory
                .clone()
                .with_seat_map_cache_ms(shared::store::SEAT_MAP_CACHE_MS),
            ..instance
        }
    };
    let mut admitters = [Admitter::default(), Admitter::default()];
    let mut rounds: Vec<[TickSummary; 2]> = Vec::new();
    let mut after_sold_out = 0;
    while after_sold_out < 3 {
        assert!(rounds.len() < 2_000, "never sold out: {:?}", rounds.last());
        local::streams::project_now(&app, &endpoint).await.unwrap();
        let round = overlapping_ticks([&app, &lagging], &mut admitters, &ev, rounds.len()).await;
        if round.iter().any(|s| s.admitted > 0) {
            let mut still = Vec::new();
            for v in waiting {
                let (_, status) = visitor_status(&app, &ev, &v).await;
                if status["status"] == "ADMITTED" {
                    buy(&status);
                } else {
                    still.push(v);
                }
            }
            waiting = still;
        }
        if rounds
            .iter()
            .flatten()
            .chain(&round)
            .any(|s| s.status == "SOLD_OUT")
        {
            after_sold_out += 1;
        }
        rounds.push(round);
    }
    let bought = buyers.join_all().await.into_iter().filter(|b| *b).count();

    // From the round whose tick wrote SOLD_OUT on, nobody is admitted (the
    // other admitter's tick of that round, at the same version, could not
    // write), and every later tick, whatever its map says, sees SOLD_OUT.
    let flat: Vec<&TickSummary> = rounds.iter().flatten().collect();
    let sold_round = rounds
        .iter()
        .position(|r| r.iter().any(|s| s.status == "SOLD_OUT" && s.committed))
        .unwrap_or_else(|| panic!("no tick wrote SOLD_OUT: {flat:?}"));
    for (i, round) in rounds.iter().enumerate().skip(sold_round) {
        for s in round {
            assert_eq!(s.admitted, 0, "round {i}: {flat:?}");
            if i > sold_round {
                assert_eq!(s.status, "SOLD_OUT", "round {i}: {flat:?}");
            }
        }
    }
    // Whoever still waits is told SOLD_OUT, and the queue's count is
    // exactly the admissions given: the overlapping admitter's stale view
    // of the waiting never leaves a slot empty or counts one twice.
    for v in &waiting {
        assert_eq!(visitor_status(&app, &ev, v).await.1["status"], "SOLD_OUT");
    }
    let admitted = 61 - waiting.len() as u64;
    let given: u64 = flat.iter().map(|s| s.admitted).sum();
    assert_eq!((admitted, bought), (given + 1, SEATS as usize));
    let (_, queue) = get_queue(&app, &ev).await;
    assert_eq!(
        (&queue["status"], &queue["admitted"], &queue["waiting"]),
        (&json!("SOLD_OUT"), &json!(admitted), &json!(0))
    );
    assert!(
        admitted >= u64::from(SEATS) && admitted < 61,
        "the sell-out came while visitors still waited: {admitted} admitted"
    );
}
