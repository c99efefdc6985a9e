//! The waitlist bench's sold-out event (issue 48, item 2): every seat
//! sold or held, a long line of WAITING entries asking for mixed things,
//! and the holds and purchases whose seats the run frees, each way the
//! contract names (a drop, a cancel, a hold's expiry, a return).
//!
//! Setup only, none of it measured, in the order production would see
//! it: the event, its waitlist put to open at the sell-out, the line
//! written by the store's seeding call as joins write it, many entries to
//! a request (a million joins through the route measure nothing the row
//! is about, and their stream records would slow DynamoDB Local down for
//! the whole run: the table's stream is turned on after them), an hour
//! before the run, with the positions the tick would have left; then the
//! seats sold at once through the store's seeding call (a late payment's
//! own expressions), the held and bought seats and the crowd's orders
//! through the routes, and the waitlist opened. The holds meant to expire
//! come last, through the store's own order and claim writes: their
//! expiries must fall within the measured minute, and the route refuses a
//! claim once the waitlist is open.

use std::sync::Arc;

use crate::kit::{reply, BenchOrder, Rng};
use crate::setup::{
    create_buyer_orders, create_event_from, create_orders, grid_plan, section_id, seed_sold_seats,
    LOCAL_IN_FLIGHT,
};
use crowdcheck::history::WaitEntry;
use shared::domain::waitlist::{EntryRequest, EntryStatus};
use shared::domain::waitlist_entry::Entry;
use shared::domain::{EntryId, EventId, Millis, OrderId, PaymentId, SeatId, SectionId};
use shared::App;
use tokio::sync::Semaphore;

/// How big the waitlist bench is.
#[derive(Debug, Clone, Copy)]
pub struct WaitlistOffers {
    pub sections: u32,
    pub rows: u32,
    pub seats_per_row: u32,
    /// WAITING entries written before the first seat is freed.
    pub entries: usize,
    /// Pairs of adjacent seats freed by each of the four ways.
    pub pairs_per_way: usize,
    /// How long the frees are spread over, evenly.
    pub spread_ms: i64,
    /// Public orders opened before the waitlist opened, clicking each
    /// freed seat as it comes free (issue 48, item 4).
    pub crowd_orders: usize,
}

impl WaitlistOffers {
    pub fn seats(&self) -> u32 {
        self.sections * self.rows * self.seats_per_row
    }

    /// Seats the run frees.
    pub fn freed(&self) -> usize {
        self.pairs_per_way * WAYS.len() * 2
    }
}

/// How a seat comes free.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Way {
    /// drop-seat, each seat of the pair at its own instant.
    Drop,
    /// cancel-order, both at once.
    Cancel,
    /// The hold's expiry, both at once.
    Expiry,
    /// A purchase listed for return, both in one listing.
    Return,
}

pub const WAYS: [Way; 4] = [Way::Drop, Way::Cancel, Way::Expiry, Way::Return];

impl Way {
    pub fn name(self) -> &'static str {
        match self {
            Way::Drop => "drops",
            Way::Cancel => "cancels",
            Way::Expiry => "expiries",
            Way::Return => "returns",
        }
    }
}

/// A seat as `(section, row, number)`, the history checker's units.
pub type Unit = (String, String, u32);

pub fn seat_id(unit: &Unit) -> String {
    format!("{}-{}-{}", unit.0, unit.1, unit.2)
}

/// Two adjacent seats of one row, held by one order and freed one way.
pub struct Holder {
    pub way: Way,
    pub seats: [Unit; 2],
    pub order: BenchOrder,
}

/// The event as the run starts: the holders whose seats it frees, and the
/// line.
pub struct SoldOut {
    pub event: String,
    pub holders: Vec<Holder>,
    pub entries: Vec<WaitEntry>,
    /// The crowd's orders, opened before the waitlist opened.
    pub crowd: Vec<BenchOrder>,
}

/// `size`'s event sold out (but for the holders' seats, held or bought
/// through the routes), its waitlist open and taking returns, and the
/// line written, on `app`'s table made without its stream: the stream is
/// on from the line's end. The holds meant to expire come later
/// ([`hold_to_expire`]): their instants depend on when the run starts.
pub async fn sold_out(
    app: &App,
    size: WaitlistOffers,
) -> Result<(SoldOut, Vec<[Unit; 2]>), String> {
    let event = crate::kit::unique("wl");
    create_event_from(app, &event, &plan(size)).await?;
    let event_id = EventId::parse(&event).map_err(|e| e.to_string())?;
    put_waitlist(app, &event, "sold-out").await?;
    let entries = seed_entries(app, &event_id, size).await?;
    let spec = local::table::TableSpec::from_repo().map_err(|e| e.to_string())?;
    let table = app.store.table_name();
    let enabled = spec.enable_stream(app.store.client(), table).await;
    enabled.map_err(|e| e.to_string())?;
    let mut rng = Rng(0x5EA7_C1A1);
    let pairs = pairs(size, &mut rng);
    let freed: std::collections::HashSet<String> = pairs.iter().flatten().map(seat_id).collect();
    let sold: Vec<SeatId> = every_seat(size)
        .filter(|u| !freed.contains(&seat_id(u)))
        .filter_map(|u| SeatId::parse(&seat_id(&u)).ok())
        .collect();
    let order = OrderId::from_random(&event_id, 0x5EED);
    let payment = PaymentId::parse("pi_seeded_sold_out").map_err(|e| e.to_string())?;
    seed_sold_seats(app, &event_id, sold, &order, &payment).await?;
    let per_way = size.pairs_per_way;
    let mut held = create_orders(app, &event, 2 * per_way).await?.into_iter();
    let mut bought = create_buyer_orders(app, &event, per_way).await?.into_iter();
    let (mut holders, mut later) = (Vec::new(), Vec::new());
    for (i, seats) in pairs.into_iter().enumerate() {
        let way = WAYS[i % WAYS.len()];
        let order = match way {
            Way::Expiry => {
                later.push(seats);
                continue;
            }
            Way::Return => bought.next(),
            _ => held.next(),
        };
        let order = order.ok_or("fewer orders than pairs")?;
        holders.push(Holder { way, seats, order });
    }
    hold_and_buy(app, &mut holders).await?;
    let crowd = create_orders(app, &event, size.crowd_orders).await?;
    put_waitlist(app, &event, "now").await?;
    let sold_out = SoldOut {
        event,
        holders,
        entries,
        crowd,
    };
    Ok((sold_out, later))
}

/// The plan: sections `S1…` of numbered rows, holds far longer than the
/// setup and the run.
fn plan(size: WaitlistOffers) -> serde_json::Value {
    let (name, hold) = ("Waitlist bench", HOLD_SECONDS);
    grid_plan(name, hold, size.sections, size.rows, size.seats_per_row)
}

/// The holds the routes make last two hours (create-event's most):
/// longer than any setup and run.
const HOLD_SECONDS: u32 = 7_200;

fn every_seat(size: WaitlistOffers) -> impl Iterator<Item = Unit> {
    (1..=size.sections).flat_map(move |s| {
        (1..=size.rows).flat_map(move |r| {
            (1..=size.seats_per_row).map(move |n| (section_id(s), r.to_string(), n))
        })
    })
}

/// Disjoint pairs of adjacent seats, drawn at random over the stadium.
fn pairs(size: WaitlistOffers, rng: &mut Rng) -> Vec<[Unit; 2]> {
    let mut all: Vec<[Unit; 2]> = every_seat(size)
        .filter(|(_, _, n)| n % 2 == 1 && *n < size.seats_per_row)
        .map(|(s, r, n)| [(s.clone(), r.clone(), n), (s, r, n + 1)])
        .collect();
    for i in (1..all.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        all.swap(i, j);
    }
    all.truncate(size.pairs_per_way * WAYS.len());
    all
}

/// Each holder's seats claimed through get-seat; the returns' paid for
/// through a signed confirm.
async fn hold_and_buy(app: &App, holders: &mut [Holder]) -> Result<(), String> {
    let in_flight = Arc::new(Semaphore::new(LOCAL_IN_FLIGHT));
    let mut tasks = tokio::task::JoinSet::new();
    for (i, h) in holders.iter().enumerate() {
        let (app, in_flight) = (app.clone(), in_flight.clone());
        let (id, token, seats) = (h.order.id.clone(), h.order.token.clone(), h.seats.clone());
        let buys = h.way == Way::Return;
        tasks.spawn(async move {
            let _permit = in_flight.acquire().await;
            for seat in &seats {
                let uri = format!("/orders/{id}/seats/{}", seat_id(seat));
                let (status, body) = reply(&app, "POST", &uri, Some(&token), "").await;
                if status != 200 {
                    return Err(format!("get-seat {}: {status} {body}", seat_id(seat)));
                }
            }
            if buys {
                let seats: Vec<String> = seats.iter().map(seat_id).collect();
                let body = serde_json::json!({"orderId": id, "paymentId": format!("pi_wl_{i}"), "seats": seats});
                let status = crate::onsale_buyers::send_confirm(&app, &id, body).await;
                if status != 200 {
                    return Err(format!("confirm {id}: {status}"));
                }
            }
            Ok(())
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.map_err(|e| e.to_string())??;
    }
    Ok(())
}

/// The waitlist put to open `opens` (`sold-out`, then `now`: the line is
/// written while it waits, the sale comes after), offering for an hour and
/// taking returns for two (neither ends within the run).
async fn put_waitlist(app: &App, event: &str, opens: &str) -> Result<(), String> {
    let close = chrono::Utc::now() + chrono::Duration::hours(2);
    let body = serde_json::json!({"opens": opens, "offerSeconds": 3_600, "maxQuantity": 4,
        "returnsCloseAt": close.to_rfc3339()});
    match reply(
        app,
        "PUT",
        &format!("/events/{event}/waitlist"),
        None,
        &body.to_string(),
    )
    .await
    {
        (200, _) => Ok(()),
        (status, body) => Err(format!("put-waitlist: {status} {body}")),
    }
}

/// What entry `i` asks for: mostly one or two seats, a third of them of
/// some sections only, most of the groups together.
fn ask(rng: &mut Rng, sections: u32) -> (u32, Vec<String>, bool) {
    let quantity = match rng.below(100) {
        0..40 => 1,
        40..75 => 2,
        75..85 => 3,
        _ => 4,
    };
    let how_many = match rng.below(10) {
        0..6 => 0,
        6..9 => 1,
        _ => 2,
    };
    let mut chosen: Vec<String> = (0..how_many)
        .map(|_| section_id(1 + rng.below(u64::from(sections)) as u32))
        .collect();
    chosen.sort();
    chosen.dedup();
    let together = quantity > 1 && rng.below(10) < 7;
    (quantity, chosen, together)
}

/// `size.entries` WAITING entries, each its own buyer's, joined a
/// millisecond apart before now (in join order), written by the store's
/// seeding call [`ENTRIES_PER_CALL`] at a time: as the checker sees them.
async fn seed_entries(
    app: &App,
    event: &EventId,
    size: WaitlistOffers,
) -> Result<Vec<WaitEntry>, String> {
    let stored = app
        .store
        .read_waitlist(event)
        .await
        .map_err(|e| e.to_string())?;
    let generation = stored
        .ok_or("the waitlist is not there")?
        .waitlist
        .generation;
    let keys = app.config.token_keys().map_err(|e| e.to_string())?;
    let first = shared::world::now().0 - JOINED_BEFORE_MS - size.entries as i64;
    let mut rng = Rng(0x00FF_E125);
    let mut tasks = tokio::task::JoinSet::new();
    let mut seen = Vec::with_capacity(size.entries);
    let mut batch = Vec::with_capacity(ENTRIES_PER_CALL);
    for i in 0..size.entries {
        let (quantity, sections, together) = ask(&mut rng, size.sections);
        let entry_id =
            EntryId::parse(&uuid::Uuid::new_v4().to_string()).map_err(|e| e.to_string())?;
        let joined_at = Millis(first + i as i64);
        let buyer = format!("w{i}");
        batch.push(Entry {
            token_hash: keys.entry_token(event, &entry_id).hash(),
            entry_id: entry_id.clone(),
            generation,
            buyer: shared::domain::buyer::BuyerId::parse(&buyer).ok_or("a bad buyer id")?,
            request: EntryRequest {
                quantity,
                section_ids: sections
                    .iter()
                    .filter_map(|s| SectionId::parse(s).ok())
                    .collect(),
                together,
                wheelchair: 0,
            },
            joined_at,
            stored: EntryStatus::Waiting,
            offer_order: None,
            limited: None,
        });
        seen.push(WaitEntry {
            entry: entry_id.as_str().to_owned(),
            buyer,
            joined_at: joined_at.0 * 1_000,
            quantity,
            sections,
            together,
            left_at: None,
        });
        if batch.len() == ENTRIES_PER_CALL || i + 1 == size.entries {
            // At most so many tasks at once: a task waiting its turn holds
            // its request's whole future, and a million entries make
            // fifty thousand of them.
            if tasks.len() >= LOCAL_IN_FLIGHT {
                if let Some(done) = tasks.join_next().await {
                    done.map_err(|e| e.to_string())??;
                }
            }
            let entries = std::mem::take(&mut batch);
            let (store, event) = (app.store.clone(), event.clone());
            tasks.spawn(async move {
                let seeded = store.seed_waiting_entries(&event, &entries).await;
                seeded.map_err(|e| shared::error::chain(&e))
            });
        }
    }
    while let Some(done) = tasks.join_next().await {
        done.map_err(|e| e.to_string())??;
    }
    let joins = seen.iter().map(|e| Millis(e.joined_at / 1_000)).collect();
    settle_positions(app, event, generation, joins).await?;
    Ok(seen)
}

/// Entries a task of the line's seeding writes (four requests or so).
const ENTRIES_PER_CALL: usize = 20;

/// How long before the run the line joined: an hour, so that the tick's
/// positions have long settled every join.
const JOINED_BEFORE_MS: i64 = 3_600_000;

/// The positions as the offerer's tick would have left them after the
/// line's joins (`domain::waitlist_positions`, written by its own store
/// call): every join settled, so the run's updates read only what the run
/// stamps, as in production, and not the whole line at every update.
async fn settle_positions(
    app: &App,
    event: &EventId,
    generation: u64,
    joins: Vec<Millis>,
) -> Result<(), String> {
    use shared::domain::waitlist_positions::{Positions, Since};
    let since = Since {
        joins,
        ..Since::default()
    };
    let positions = Positions::default().update(&since, shared::world::now());
    let written = app
        .store
        .write_positions(event, generation, &positions, None);
    match written.await.map_err(|e| shared::error::chain(&e))? {
        shared::store::PositionsWrite::Written { .. } => Ok(()),
        shared::store::PositionsWrite::Lost => Err("the line's positions were there".into()),
    }
}

/// A hold of `seats` that expires at `at` (whole seconds from now, as an
/// order's hold runs), made through the store's own order and claim
/// writes: its holder.
pub async fn hold_to_expire(
    app: &App,
    event: &EventId,
    seats: [Unit; 2],
    at: Millis,
) -> Result<Holder, String> {
    let now = shared::world::now();
    let seconds = u32::try_from((at.0 - now.0 + 999) / 1_000).map_err(|e| e.to_string())?;
    let head = shared::domain::EventHead {
        event_id: event.clone(),
        hold_seconds: seconds.max(1),
        seat_count: 0,
        buyer_limit: None,
        buyer_key: None,
    };
    let guard = app.config.expiry_guard_ms;
    let (order, token) =
        shared::handlers::open_order(&head, now, guard, None).map_err(|e| e.to_string())?;
    app.store
        .create_order(&order)
        .await
        .map_err(|e| e.to_string())?;
    for seat in &seats {
        let id = SeatId::parse(&seat_id(seat)).map_err(|e| e.to_string())?;
        let claim = app
            .store
            .claim_seat(&order.order_id, &token, &id, 2, now)
            .await;
        match claim.map_err(|e| shared::error::chain(&e))?.claim {
            shared::store::SeatClaim::Held(_) => {}
            other => return Err(format!("a hold to expire on {}: {other:?}", seat_id(seat))),
        }
    }
    Ok(Holder {
        way: Way::Expiry,
        seats,
        order: BenchOrder {
            id: order.order_id.to_string(),
            token: local::apps::dev_hold_token_keys().encode(&order.order_id, &token),
            expires: order.expires_at.0 * 1_000,
        },
    })
}
