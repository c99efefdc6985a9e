//! The waitlist's offers after a sell-out (issue 48, item 2), on a
//! DynamoDB Local of its own with the stream: a sold-out event, a long
//! line of WAITING entries, and seats freed over a minute by drops,
//! cancels, expiries and returns, each offered by the offerer as it runs
//! in AWS: the seat-map projector reading the table's stream (polled
//! every quarter second, as Lambda polls a shard), which counts the
//! frees, and the offer-waitlists tick, which offers them, each with an
//! instance's memory of its own (two functions on AWS). The buyers and the offerer each have their own
//! client, metered by one capacity meter (DynamoDB's limits on a warmed
//! table, throttling as DynamoDB would); the offerer's requests are
//! recorded, so its store requests and units per offer are priced from
//! what it sent.
//!
//! An offer's latency is measured from the freeing write's request (the
//! drop, cancel or listing sent; the earliest the write can have landed)
//! or from the hold's expiry instant, to the end of the offer's
//! transaction as the offerer's client saw it (the latest it can have
//! landed): never shorter than it was. Then the history checker judges
//! every offer against the line.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::capacity::meter::Limits;
use crate::capacity::{metered_client, CapacityMeter, CapacityRecorder};
use crate::goals::{Bound, Goal};
use crate::kit::{app_on_table, new_app, reply, Rng, Row};
use crate::waitlist_seen::{Freed, PerOffer};
use crate::waitlist_setup::{hold_to_expire, seat_id, sold_out, Holder, SoldOut, Unit, Way};
use crate::Sizes;
use shared::domain::{EventId, Millis};
use shared::App;

pub use crate::waitlist_setup::WaitlistOffers;

/// How long the run goes on after the last free: the longest an offer
/// may take, and a second.
const TAIL_MS: i64 = crate::waitlist_seen::OFFER_MAX_GOAL_MS as i64 + 1_000;

/// From the holds meant to expire being made to the first free: their
/// writes, a catch-up of the stream, and more than the expiry guard (a
/// claim's order must outlive it).
const LEAD_MS: i64 = 15_000;

/// How often the projector reads the stream: Lambda polls a stream shard
/// about four times a second (assumed: AWS's documented polling rate).
const STREAM_POLL_MS: u64 = 250;

/// One free of the run: when (from the run's start), which holder, and
/// which of its seats (a drop frees one; every other way both).
struct Free {
    offset_ms: i64,
    holder: usize,
    seat: Option<usize>,
}

/// When the crowd clicks a freed seat, from the free's answer (an
/// expiry's instant): at once, and on through the first second and past
/// it, racing the offer.
const CLICKS_AFTER_MS: [u64; 4] = [0, 100, 400, 1_200];

/// How many times the cost per offer may grow when the line is ten times
/// as long (issue 48, item 2): it must not grow with the line.
pub const LONG_OVER_SHORT: f64 = 2.0;

/// The waitlist's rows: the line of `sizes.waitlist`, then one of
/// `sizes.waitlist_long_line` entries, its cost per offer held to
/// [`LONG_OVER_SHORT`] times the first's.
pub async fn waitlist_rows(sizes: Sizes) -> Result<Vec<Row>, String> {
    let (short, short_cost) = waitlist_offers(sizes, sizes.waitlist).await?;
    // A long run's first half, printed as it ends.
    let t = &short.timing;
    eprintln!(
        "bench: {}\nbench: {}\nbench: offer latency p50 {:.0} ms, p99 {:.0} ms, max {:.0} ms",
        short.scenario,
        short.correctness,
        t.p50(),
        t.p99(),
        t.max()
    );
    let long_size = WaitlistOffers {
        entries: sizes.waitlist_long_line,
        ..sizes.waitlist
    };
    let (mut long, long_cost) = waitlist_offers(sizes, long_size).await?;
    let ratio = |f: fn(&PerOffer) -> f64| f(&long_cost) / f(&short_cost).max(1e-9);
    let figures: [(&str, PerOfferFigure); 2] = [
        ("store requests", |c| c.requests),
        ("read units", |c| c.read_units),
    ];
    for (figure, of) in figures {
        long.goals.push(Goal::new(
            format!(
                "waitlist offers: {figure} per offer, {} ÷ {} WAITING",
                long_size.entries, sizes.waitlist.entries
            ),
            ratio(of),
            Bound::AtMost(LONG_OVER_SHORT),
            "`waitlist::LONG_OVER_SHORT` (issue 48, item 2)",
        ));
    }
    Ok(vec![short, long])
}

/// One figure of what an offer cost.
type PerOfferFigure = fn(&PerOffer) -> f64;

/// One waitlist row at `size`, and what the offerer spent per offer.
async fn waitlist_offers(sizes: Sizes, size: WaitlistOffers) -> Result<(Row, PerOffer), String> {
    let dynamodb = crate::alone::own_dynamodb(sizes)?;
    let endpoint = dynamodb.endpoint();
    // Made without its stream: the line is seeded first ([`sold_out`]).
    let setup = new_app(&endpoint, None, None, false).await?;
    let table = setup.store.table_name().to_owned();
    let meter = CapacityMeter::enforcing_with(Limits::WARMED);
    let recorder = CapacityRecorder::new();
    let buyers = metered_client(&endpoint, CapacityRecorder::new(), meter.clone());
    let buyers = app_on_table(buyers, &table);
    let offerer = metered_client(&endpoint, recorder.clone(), meter.clone());
    let offerer = app_on_table(offerer, &table);

    let clock = Instant::now();
    let (mut event, to_expire) = sold_out(&setup, size).await?;
    let event_id = EventId::parse(&event.event).map_err(|e| e.to_string())?;
    let follower =
        local::streams::StreamFollower::attach(&endpoint, offerer.store.client(), &table).await?;
    local::streams::project_new(&follower, &offerer).await?;
    let start = shared::world::now().0 + LEAD_MS;
    let frees = schedule(&event.holders, to_expire.len(), size);
    // Made soonest-expiring first, each the holder its free numbers.
    let first = event.holders.len();
    let mut expiring: Vec<(i64, usize)> = frees
        .iter()
        .filter(|f| f.holder >= first)
        .map(|f| (f.offset_ms, f.holder - first))
        .collect();
    expiring.sort();
    let mut made: Vec<Option<Holder>> = (0..to_expire.len()).map(|_| None).collect();
    for (offset, k) in expiring {
        let at = Millis(start + offset);
        let hold = hold_to_expire(&setup, &event_id, to_expire[k].clone(), at);
        made[k] = Some(hold.await?);
    }
    event.holders.extend(made.into_iter().flatten());
    let setup_took = clock.elapsed();
    local::streams::project_new(&follower, &offerer).await?;

    let done = Arc::new(AtomicBool::new(false));
    let projector = project_until(&offerer, follower, done.clone());
    let until = start + size.spread_ms + TAIL_MS;
    let offering = {
        // The tick is a function of its own: another instance's memory.
        let app = App {
            memory: offerer.memory.fresh(),
            ..offerer.clone()
        };
        let run_ms = until - shared::world::now().0;
        let run = Duration::from_millis(u64::try_from(run_ms).unwrap_or(0));
        tokio::spawn(async move { shared::offerer::Offerer::default().run_for(&app, run).await })
    };
    // The offerer's requests from the first free on: the lead's idle
    // ticks are not the frees' cost.
    let lead_left = u64::try_from(start - shared::world::now().0).unwrap_or(0);
    tokio::time::sleep(Duration::from_millis(lead_left)).await;
    recorder.set_recording(true);
    let freed = free_all(&buyers, &event, frees, start).await?;
    let wait_ms = u64::try_from(until - shared::world::now().0).unwrap_or(0);
    tokio::time::sleep(Duration::from_millis(wait_ms)).await;
    done.store(true, Ordering::SeqCst);
    let run = offering.await.map_err(|e| e.to_string())?;
    projector.await.map_err(|e| e.to_string())?;
    recorder.set_recording(false);

    let seen = crate::waitlist_seen::Seen {
        app: &setup,
        event: &event_id,
        holders: &event.holders,
        entries: &event.entries,
    };
    seen.row(
        size,
        freed,
        recorder.take(),
        meter.metered(),
        run,
        setup_took,
    )
    .await
}

/// The frees in order: each drop holder's seats one at a time, every
/// other holder's at once, and the holds still to be made (`to_expire`,
/// numbered after the holders) at their expiry; shuffled, then spread
/// evenly over `size.spread_ms`.
fn schedule(holders: &[Holder], to_expire: usize, size: WaitlistOffers) -> Vec<Free> {
    let mut frees = Vec::new();
    for (i, h) in holders.iter().enumerate() {
        match h.way {
            Way::Drop => frees.extend((0..2).map(|s| (i, Some(s)))),
            _ => frees.push((i, None)),
        }
    }
    frees.extend((0..to_expire).map(|k| (holders.len() + k, None)));
    let mut rng = Rng(0xF4EE_5EED);
    for i in (1..frees.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        frees.swap(i, j);
    }
    let spacing = size.spread_ms / frees.len().max(1) as i64;
    frees
        .into_iter()
        .enumerate()
        .map(|(k, (holder, seat))| Free {
            offset_ms: k as i64 * spacing,
            holder,
            seat,
        })
        .collect()
}

/// The projector reading the stream until `done`, as project-seat-map
/// does (each batch's frees counted for the tick).
fn project_until(
    app: &App,
    follower: local::streams::StreamFollower,
    done: Arc<AtomicBool>,
) -> tokio::task::JoinHandle<()> {
    let app = app.clone();
    tokio::spawn(async move {
        while !done.load(Ordering::SeqCst) {
            // A batch that fails is read again on the next pass.
            let _ = local::streams::project_new(&follower, &app).await;
            tokio::time::sleep(Duration::from_millis(STREAM_POLL_MS)).await;
        }
    })
}

/// Every free at its instant from `start` (wall-clock ms), each in a task
/// of its own, the crowd clicking its seats after it: what each freed.
async fn free_all(
    app: &App,
    event: &SoldOut,
    frees: Vec<Free>,
    start: i64,
) -> Result<Vec<Freed>, String> {
    let mut tasks = tokio::task::JoinSet::new();
    for (n, free) in frees.into_iter().enumerate() {
        let h = &event.holders[free.holder];
        let crowd: Vec<(String, String)> = (0..CLICKS_AFTER_MS.len())
            .filter_map(|c| {
                event
                    .crowd
                    .get((n * CLICKS_AFTER_MS.len() + c) % event.crowd.len().max(1))
            })
            .map(|o| (o.id.clone(), o.token.clone()))
            .collect();
        let seats: Vec<Unit> = match free.seat {
            Some(s) => vec![h.seats[s].clone()],
            None => h.seats.to_vec(),
        };
        let (app, way, id, token) = (
            app.clone(),
            h.way,
            h.order.id.clone(),
            h.order.token.clone(),
        );
        let expires_ms = h.order.expires / 1_000;
        let at = start + free.offset_ms;
        tasks.spawn(async move {
            let wait = u64::try_from(at - shared::world::now().0).unwrap_or(0);
            tokio::time::sleep(Duration::from_millis(wait)).await;
            let at_ms = shared::world::now().0;
            let (method, uri, body) = match way {
                Way::Expiry => {
                    let clicks = click(&app, &crowd, &seats).await;
                    return Freed {
                        way,
                        seats,
                        at_ms: expires_ms,
                        status: 0,
                        error: String::new(),
                        clicks,
                    };
                }
                Way::Drop => (
                    "DELETE",
                    format!("/orders/{id}/seats/{}", seat_id(&seats[0])),
                    String::new(),
                ),
                Way::Cancel => ("DELETE", format!("/orders/{id}"), String::new()),
                Way::Return => {
                    let listed: Vec<String> = seats.iter().map(seat_id).collect();
                    let body = serde_json::json!({ "seats": listed }).to_string();
                    ("POST", format!("/orders/{id}/returns"), body)
                }
            };
            let (status, answer) = reply(&app, method, &uri, Some(&token), &body).await;
            let clicks = click(&app, &crowd, &seats).await;
            Freed {
                way,
                seats,
                at_ms,
                status,
                error: answer["error"].as_str().unwrap_or_default().to_owned(),
                clicks,
            }
        });
    }
    let mut freed = Vec::new();
    while let Some(done) = tasks.join_next().await {
        freed.push(done.map_err(|e| e.to_string())?);
    }
    Ok(freed)
}

/// The crowd's orders each claiming every seat of `seats` through
/// get-seat at its instant of [`CLICKS_AFTER_MS`]: each answer.
async fn click(app: &App, crowd: &[(String, String)], seats: &[Unit]) -> Vec<(u16, String)> {
    let started = tokio::time::Instant::now();
    let mut answers = Vec::new();
    for ((id, token), after) in crowd.iter().zip(CLICKS_AFTER_MS) {
        tokio::time::sleep_until(started + Duration::from_millis(after)).await;
        for seat in seats {
            let uri = format!("/orders/{id}/seats/{}", seat_id(seat));
            let (status, body) = reply(app, "POST", &uri, Some(token), "").await;
            let code = body["error"].as_str().unwrap_or_default().to_owned();
            answers.push((status, code));
        }
    }
    answers
}
