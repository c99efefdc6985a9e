//! The contract's invariants read back from the table, for the tests and
//! the bench: what an event's seats, places and orders must satisfy
//! whatever raced, checked without any handler.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Mutex;

use shared::domain::ga::{bucket_count, Bucket};
use shared::domain::{
    hold_is_live, EventId, Millis, Order, OrderId, OrderStatus, Seat, SeatId, SeatState, SectionId,
};
use shared::store::FanOut;
use shared::App;

/// Orders read back at once: a stampede leaves hundreds of orders.
const ORDER_READS_IN_FLIGHT: usize = 16;

/// What [`check_invariants`] read from the table, and what it found wrong.
#[derive(Debug, Default)]
pub struct TableCheck {
    pub seats: usize,
    pub sold: usize,
    pub live_holds: usize,
    pub orders: usize,
    pub completed: usize,
    pub violations: Vec<String>,
}

/// Checks the contract's invariants 1, 2, 4 and 8 over everything the table
/// holds for `event`, reading it back (consistent reads, no handler):
/// - a SOLD seat belongs to a COMPLETED order that lists it (never sold
///   twice: with the next rule, no other completed order lists it either);
/// - a COMPLETED order lists at least one seat and every seat it lists is
///   SOLD to it (all or nothing);
/// - a live PENDING order's seats are HELD by it, with its expiry; a live
///   hold belongs to a live PENDING order that lists the seat (no half-done
///   claim or release), so no seat is held by two live orders;
/// - general admission, per bucket: see [`check_places`].
///
/// Orders are the ones the tests created ([`remember_order`]) and those the
/// seats name. Call it when nothing else writes to the event.
pub async fn check_invariants(app: &App, event: &str) -> TableCheck {
    let event_id = EventId::parse(event).unwrap_or_else(|e| panic!("event id {event}: {e}"));
    // One instant for every liveness judgement, so a hold expiring while
    // the check reads cannot look like a violation.
    let now = shared::world::now();
    let seats = app
        .store
        .list_all_seats(&event_id, None)
        .await
        .unwrap_or_else(|e| panic!("reading the seats: {}", shared::error::chain(&e)))
        .unwrap_or_else(|| panic!("event {event} not found"));
    let orders = read_orders(app, &event_id, &seats).await;
    let mut check = TableCheck {
        seats: seats.len(),
        orders: orders.len(),
        ..TableCheck::default()
    };
    check_seats(&seats, &orders, now, &mut check);
    check_orders(&seats, &orders, now, &mut check);
    check_places(app, &event_id, &orders, now, &mut check).await;
    check
}

/// The event's orders among those [`order_ids`] names, read back.
async fn read_orders(app: &App, event_id: &EventId, seats: &[Seat]) -> HashMap<OrderId, Order> {
    let mut orders: HashMap<OrderId, Order> = HashMap::new();
    let mut ids = order_ids(app, seats).into_iter();
    let mut reads = FanOut::new(ORDER_READS_IN_FLIGHT, "GetItem");
    let read = |id: OrderId| {
        let store = app.store.clone();
        async move {
            let stored = store.get_order(&id).await;
            (id, stored)
        }
    };
    while let Some(joined) = reads.next(|| ids.next().map(read)).await {
        let (id, stored) = joined.unwrap_or_else(|e| panic!("reading an order: {e}"));
        let stored =
            stored.unwrap_or_else(|e| panic!("reading order {id}: {}", shared::error::chain(&e)));
        // The registry holds the whole table's orders, other events' too.
        if let Some(stored) = stored.filter(|s| &s.order.event_id == event_id) {
            orders.insert(id, stored.order);
        }
    }
    orders
}

/// The seats' side: a SOLD seat's order is COMPLETED and lists it; a
/// live hold's order is live, lists it and expires with it.
fn check_seats(
    seats: &[Seat],
    orders: &HashMap<OrderId, Order>,
    now: Millis,
    check: &mut TableCheck,
) {
    for seat in seats {
        let id = &seat.spec.seat_id;
        match &seat.state {
            SeatState::Available => {}
            SeatState::Sold { order } => {
                check.sold += 1;
                match orders.get(order) {
                    Some(o) if o.status == OrderStatus::Completed && o.seats.contains(id) => {}
                    Some(o) => check.violations.push(format!(
                        "seat {id} is SOLD to order {order}, which is {:?} with seats {:?}",
                        o.status, o.seats
                    )),
                    None => check.violations.push(format!(
                        "seat {id} is SOLD to order {order}, which does not exist"
                    )),
                }
            }
            SeatState::Held { order, expires_at } if hold_is_live(*expires_at, now) => {
                check.live_holds += 1;
                match orders.get(order) {
                    Some(o) if o.is_holdable(now) && o.seats.contains(id) && o.expires_at == *expires_at => {}
                    Some(o) => check.violations.push(format!(
                        "seat {id} has a live hold by order {order}, which is {:?} (expires {:?}, hold {:?}) with seats {:?}",
                        o.effective_status(now),
                        o.expires_at,
                        expires_at,
                        o.seats
                    )),
                    None => check.violations.push(format!("seat {id} is held by order {order}, which does not exist")),
                }
            }
            // An expired hold is a free seat (invariant 3); the sweep may
            // not have tidied it yet.
            SeatState::Held { .. } => {}
        }
    }
}

/// The orders' side: a COMPLETED order lists something and every seat it
/// lists is SOLD to it; a live order's seats are HELD by it, and by no
/// other live order.
fn check_orders(
    seats: &[Seat],
    orders: &HashMap<OrderId, Order>,
    now: Millis,
    check: &mut TableCheck,
) {
    let by_id: HashMap<&SeatId, &SeatState> =
        seats.iter().map(|s| (&s.spec.seat_id, &s.state)).collect();
    let mut live_claims: HashMap<&SeatId, Vec<&OrderId>> = HashMap::new();
    for (id, order) in orders {
        if order.status == OrderStatus::Completed {
            check.completed += 1;
            if order.seats.is_empty() && order.places.is_empty() {
                check
                    .violations
                    .push(format!("order {id} is COMPLETED with no seats or places"));
            }
            for seat in &order.seats {
                match by_id.get(seat) {
                    Some(SeatState::Sold { order: buyer }) if buyer == id => {}
                    // Resold through the waitlist: it moved on, in one write.
                    Some(SeatState::Sold { order: buyer })
                        if resold_from(orders, seat, buyer, id) => {}
                    other => check.violations.push(format!(
                        "COMPLETED order {id} lists {seat}, which is {other:?}"
                    )),
                }
            }
        }
        if order.is_holdable(now) {
            for seat in &order.seats {
                live_claims.entry(seat).or_default().push(id);
                match by_id.get(seat) {
                    Some(SeatState::Held { order: holder, .. }) if holder == id => {}
                    // An offer's listed seat: still sold to its seller.
                    Some(SeatState::Sold { order: seller })
                        if order.resale_of(seat).is_some_and(|r| &r.seller == seller) => {}
                    other => check
                        .violations
                        .push(format!("live order {id} lists {seat}, which is {other:?}")),
                }
            }
        }
    }
    for (seat, holders) in live_claims {
        if holders.len() > 1 {
            check.violations.push(format!(
                "seat {seat} is listed by several live orders: {holders:?}"
            ));
        }
    }
}

/// Whether `seat`, sold to `owner`, reached it from `seller` by resales:
/// each order on the way completed with a resale of it from the one
/// before (as far as the orders read go).
fn resold_from(
    orders: &HashMap<OrderId, Order>,
    seat: &SeatId,
    owner: &OrderId,
    seller: &OrderId,
) -> bool {
    let mut current = owner;
    for _ in 0..orders.len() {
        let Some(order) = orders.get(current) else {
            return false;
        };
        let Some(resale) = order.resale_of(seat) else {
            return false;
        };
        if order.status != OrderStatus::Completed {
            return false;
        }
        if &resale.seller == seller {
            return true;
        }
        current = &resale.seller;
    }
    false
}

/// The places' side of the invariants, per general-admission bucket:
/// sold + live holds within its capacity (8); sold + every recorded hold +
/// free = capacity (its counter is exact); sold = the places COMPLETED
/// orders list there (never sold twice, nor without an order); a live hold
/// belongs to a live PENDING order recording exactly those places, with
/// its expiry, and every live order's places are held so.
async fn check_places(
    app: &App,
    event_id: &EventId,
    orders: &HashMap<OrderId, Order>,
    now: Millis,
    check: &mut TableCheck,
) {
    let event = app
        .event(event_id)
        .await
        .unwrap_or_else(|e| panic!("reading the event: {}", shared::error::chain(&e)))
        .unwrap_or_else(|| panic!("event {event_id} not found"));
    for (section, capacity) in event.ga_sections() {
        let indexes: Vec<u32> = (0..bucket_count(capacity)).collect();
        let buckets = app
            .store
            .read_buckets(event_id, section, &indexes, true)
            .await
            .unwrap_or_else(|e| {
                panic!(
                    "reading section {section}'s buckets: {}",
                    shared::error::chain(&e)
                )
            });
        if buckets.len() != indexes.len() {
            check.violations.push(format!(
                "section {section} has {} of its {} buckets",
                buckets.len(),
                indexes.len()
            ));
        }
        for b in &buckets {
            check_bucket_counts(section, b, orders, now, check);
            check_bucket_holds(section, b, orders, now, check);
        }
    }
}

/// One bucket's counters: sold + live holds within its capacity, sold +
/// recorded holds + free = capacity, sold = what COMPLETED orders list.
fn check_bucket_counts(
    section: &SectionId,
    b: &Bucket,
    orders: &HashMap<OrderId, Order>,
    now: Millis,
    check: &mut TableCheck,
) {
    let at = format!("bucket {section}#{}", b.index);
    let in_orders = |status: &dyn Fn(&Order) -> bool| -> u32 {
        orders
            .values()
            .filter(|o| status(o))
            .flat_map(|o| o.places.iter())
            .filter(|p| &p.section == section && p.bucket == b.index)
            .map(|p| p.quantity)
            .sum()
    };
    if b.sold + b.live_held(now) > b.capacity {
        check
            .violations
            .push(format!("{at} is over capacity: {b:?}"));
    }
    let recorded: u32 = b.holds.iter().map(|h| h.quantity).sum();
    if b.sold + recorded + b.free != b.capacity {
        check
            .violations
            .push(format!("{at} does not add up: {b:?}"));
    }
    let sold_to = in_orders(&|o| o.status == OrderStatus::Completed);
    if sold_to != b.sold {
        check.violations.push(format!(
            "{at} has {} sold, COMPLETED orders list {sold_to} there",
            b.sold
        ));
    }
}

/// One bucket's holds: each live hold recorded by a live order with its
/// quantity and expiry, and every live order's places there held.
fn check_bucket_holds(
    section: &SectionId,
    b: &Bucket,
    orders: &HashMap<OrderId, Order>,
    now: Millis,
    check: &mut TableCheck,
) {
    let at = format!("bucket {section}#{}", b.index);
    for hold in b.holds.iter().filter(|h| hold_is_live(h.expires_at, now)) {
        let recorded = orders
            .get(&hold.order)
            .filter(|o| o.is_holdable(now))
            .and_then(|o| {
                o.places
                    .iter()
                    .find(|p| &p.section == section && p.bucket == b.index)
                    .map(|p| (p.quantity, o.expires_at))
            });
        if recorded != Some((hold.quantity, hold.expires_at)) {
            check.violations.push(format!(
                "{at} has a live hold {hold:?} its order does not record as live ({recorded:?})"
            ));
        }
    }
    for (id, o) in orders.iter().filter(|(_, o)| o.is_holdable(now)) {
        for p in o
            .places
            .iter()
            .filter(|p| &p.section == section && p.bucket == b.index)
        {
            if !b
                .holds
                .iter()
                .any(|h| &h.order == id && h.quantity == p.quantity)
            {
                check.violations.push(format!(
                    "live order {id} lists {} places in {at}, which does not hold them",
                    p.quantity
                ));
            }
        }
    }
}

/// Orders the tests created, per table: [`check_invariants`] reads them
/// besides the seats' holders. Without a Scan (the contract allows none)
/// nothing else can list a table's orders; a created order whose reply was
/// lost is harmless, since nobody has its token to claim or pay with.
static CREATED_ORDERS: Mutex<BTreeMap<String, Vec<OrderId>>> = Mutex::new(BTreeMap::new());

/// Records an order a test created (from create-order's reply, or written
/// to the store directly), so [`check_invariants`] reads it.
pub fn remember_order(app: &App, id: &str) {
    let id = OrderId::parse(id).unwrap_or_else(|e| panic!("order id {id}: {e}"));
    // A poisoned registry only means another test panicked mid-insert.
    let mut created = CREATED_ORDERS.lock().unwrap_or_else(|p| p.into_inner());
    created
        .entry(app.store.table_name().to_owned())
        .or_default()
        .push(id);
}

/// Every order that can matter to `seats`' invariants: the ones the tests
/// created in this table, and every holder or buyer named by a seat.
fn order_ids(app: &App, seats: &[Seat]) -> BTreeSet<OrderId> {
    let created = CREATED_ORDERS.lock().unwrap_or_else(|p| p.into_inner());
    let mut ids: BTreeSet<OrderId> = created
        .get(app.store.table_name())
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    for seat in seats {
        match &seat.state {
            SeatState::Held { order, .. } | SeatState::Sold { order } => {
                ids.insert(order.clone());
            }
            SeatState::Available => {}
        }
    }
    ids
}
