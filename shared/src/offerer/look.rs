//! One event's look (API.md, "Offers"). Free seats go to the
//! earliest-joined waiting entry they can fill, as an ordinary order
//! already holding them, made in one transaction with the entry's move
//! (`Store::make_offer`); the look repeats until nothing fits, or its
//! bounds. What starts a look (the stream's frees, the tick) calls
//! [`offer_free`].

use std::collections::HashSet;

use crate::auth::HoldToken;
use crate::domain::offer::{
    choose_offer, fillable_indexes, offered_seats, seated_free, SectionFree,
};
use crate::domain::offer_tick::next_lapse;
use crate::domain::waitlist::{EntryStatus, Waitlist, WaitlistStatus};
use crate::domain::waitlist_entry::Entry;
use crate::domain::{
    Event, EventId, Millis, OfferOf, Order, OrderBuyer, OrderId, SeatId, SeatMap, SeatStatus,
};
use crate::error::Error;
use crate::store::{OfferWrite, SeatRead};
use crate::App;

/// The most offers one look makes: what is left waits for the next look.
pub const OFFERS_PER_LOOK: u32 = 32;

/// The most offers one look loses to a seat or an entry that moved
/// meanwhile before it leaves the rest to the next.
const LOST_OFFERS_PER_LOOK: u32 = 8;

/// How long one event's look may go on starting offers: the projector's
/// batch waits for it, within the function's timeout.
const LOOK_BUDGET_MS: i64 = 2_000;

/// How many heads' entries one read takes (a BatchGetItem's most).
const ENTRIES_PER_READ: usize = 100;

/// What one look did and saw: the offerer's tick keeps it to know when
/// to look again.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OfferLook {
    pub made: u32,
    /// It stopped at its bounds: there may be more to offer.
    pub more: bool,
    /// The earliest expiry of a hold live at the look (its own offers'
    /// included).
    pub next_lapse: Option<Millis>,
}

/// Offers `event`'s free seats at `now` (the look's start; its clock runs
/// on from there) to its waiting entries until none fits, or the look's
/// bounds. An event with no open waitlist is offered nothing. On an event
/// with a buyer limit each offer counts toward its buyer's limit in its
/// own transaction, and an entry whose offer would take its buyer over
/// the limit ends (`buyer-limit`): the next is served.
pub async fn offer_free(app: &App, event_id: &EventId, now: Millis) -> Result<OfferLook, Error> {
    let Some(stored) = app.store.read_waitlist(event_id).await? else {
        return Ok(OfferLook::default());
    };
    let waitlist = stored.waitlist;
    let Some(event) = app.event(event_id).await? else {
        return Ok(OfferLook::default());
    };
    if waitlist.status() != WaitlistStatus::Open {
        return Ok(OfferLook::default());
    }
    // The map, read once a look, strongly consistent: what frees a seat
    // meanwhile starts a look of its own.
    let read = app.store.seat_map_rows(&event, true).await?;
    let map = crate::domain::seat_map(&event, &read.rows, &read.buckets, now);
    let look = OfferLook {
        next_lapse: next_lapse(&read.rows, now),
        ..OfferLook::default()
    };
    offer_from(app, &event, &waitlist, &map, look, now).await
}

/// The look's offers from `map` (read at `now`), one after another until
/// nothing fits or the bounds, into `look`.
async fn offer_from(
    app: &App,
    event: &Event,
    waitlist: &Waitlist,
    map: &SeatMap,
    mut look: OfferLook,
    now: Millis,
) -> Result<OfferLook, Error> {
    let clock = std::time::Instant::now();
    let mut lost = 0;
    // Seats the map still shows free (it follows the stream) that this
    // look has seen taken: its own offers, and seats a lost offer found
    // held or sold when it read them.
    let mut taken = HashSet::new();
    loop {
        let elapsed = i64::try_from(clock.elapsed().as_millis()).unwrap_or(i64::MAX);
        if look.made >= OFFERS_PER_LOOK || lost >= LOST_OFFERS_PER_LOOK || elapsed > LOOK_BUDGET_MS
        {
            look.more = true;
            return Ok(look);
        }
        let at = Millis(now.0.saturating_add(elapsed));
        let sections = seated_free(map, &taken);
        let Some((entry, seats)) = next_offer(app, event, waitlist, &sections).await? else {
            return Ok(look);
        };
        let (order, token) = offer_order(app, event, waitlist, &entry, seats, at)?;
        let write = app
            .store
            .make_offer(&entry, &order, &token, waitlist.generation, at);
        match write.await? {
            OfferWrite::Made => {
                look.made += 1;
                let lapse = look
                    .next_lapse
                    .map_or(order.expires_at, |l| l.min(order.expires_at));
                look.next_lapse = Some(lapse);
                taken.extend(order.seats.iter().cloned());
                tracing::info!(event_id = %event.event_id, order_id = %order.order_id, seats = order.seats.len(), "waitlist offer made");
            }
            OfferWrite::Lost { seats } => {
                lost += 1;
                if seats {
                    taken.extend(taken_since(app, &event.event_id, &order.seats, at).await?);
                }
            }
            OfferWrite::OverLimit => {
                // The entry has ended (its index places with it): the next
                // round's heads go past it. Each costs a read and a write,
                // so the look counts it against its bound on lost writes.
                lost += 1;
                tracing::info!(entry_id = %entry.entry_id, "a waitlist entry ended at its buyer's limit");
            }
        }
    }
}

/// Which of `seats`, read strongly consistently, are not free at `now`:
/// what an offer lost to a seat learns.
async fn taken_since(
    app: &App,
    event: &EventId,
    seats: &[SeatId],
    now: Millis,
) -> Result<Vec<SeatId>, Error> {
    let mut taken = Vec::new();
    for seat in seats {
        let free = match app.store.seat_state(event, seat).await? {
            SeatRead::Seen(Some(state)) => state.visible_status(now) == SeatStatus::Available,
            SeatRead::Seen(None) => false,
            SeatRead::Throttled => return Err(Error::StoreUnavailable),
        };
        if !free {
            taken.push(seat.clone());
        }
    }
    Ok(taken)
}

/// The earliest waiting entry the free seats (`sections`: the look's map
/// less what it saw taken) can fill, and the seats: the heads of just the
/// indexes they could fill, and their entries, a batch at a time,
/// earliest first, until one fills.
async fn next_offer(
    app: &App,
    event: &Event,
    waitlist: &Waitlist,
    sections: &[SectionFree],
) -> Result<Option<(Entry, Vec<SeatId>)>, Error> {
    let indexes = fillable_indexes(sections, waitlist.settings.max_quantity);
    if indexes.is_empty() {
        return Ok(None);
    }
    let heads = app
        .store
        .waiting_heads(&event.event_id, waitlist.generation, &indexes)
        .await?;
    let ids: Vec<_> = heads.into_iter().map(|head| head.entry).collect();
    for batch in ids.chunks(ENTRIES_PER_READ) {
        let entries = app.store.read_entries(&event.event_id, batch).await?;
        // A place is taken off in the transaction that ends its wait.
        let waiting = entries.iter().filter(|e| e.stored == EntryStatus::Waiting);
        let chosen = choose_offer(waiting.map(|e| (e, &e.request)), sections);
        if let Some((entry, units)) = chosen {
            return Ok(offered_seats(event, &units).map(|seats| (entry.clone(), seats)));
        }
    }
    Ok(None)
}

/// The order offering `seats` to `entry`, and its hold token: its id and
/// token secret derived from the entry under the hold token key (the
/// entry's status derives the same to hand its holder the token), holding
/// them for `offerSeconds`, counted under the event's buyer limit as
/// create-order's order would be (the token names the buyer then).
fn offer_order(
    app: &App,
    event: &Event,
    waitlist: &Waitlist,
    entry: &Entry,
    seats: Vec<SeatId>,
    now: Millis,
) -> Result<(Order, HoldToken), Error> {
    let event_id = &event.event_id;
    // On a limited event the entry keeps whose record counts it (the join
    // counted it there), so the offerer derives no ref and needs no key.
    let buyer = match (event.buyer_limit, &entry.limited) {
        (None, _) => None,
        (Some(_), Some(limited)) => Some(OrderBuyer {
            buyer_id: entry.buyer.clone(),
            limit: limited.limit,
            buyer_ref: limited.buyer.clone(),
        }),
        (Some(_), None) => {
            return Err(Error::Corrupt(
                "an entry of a limited event without its buyer's record".into(),
            ))
        }
    };
    let (random, secret) = app
        .config
        .token_keys()?
        .offer_order(&entry.entry_id, event_id);
    let offer_seconds = waitlist.settings.offer_seconds;
    let token = HoldToken::from_secret(event_id, now.plus_seconds(offer_seconds), secret)
        .for_buyer(buyer.as_ref().map(OrderBuyer::limited));
    let mut order = Order::new_offer(
        event_id,
        now,
        offer_seconds,
        app.config.expiry_guard_ms,
        OrderId::from_random(event_id, random),
        token.hash(),
        seats,
        OfferOf {
            entry_id: entry.entry_id.clone(),
            buyer_id: entry.buyer.clone(),
            cancelled_as: None,
        },
    );
    order.buyer = buyer;
    Ok((order, token))
}
