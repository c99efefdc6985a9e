//! One event's look (API.md, "Offers"). Free seats go to the
//! earliest-joined waiting entry they can fill, as an ordinary order
//! already holding them, made in one transaction with the entry's move
//! (`Store::make_offer`); the look repeats until nothing fits, or its
//! bounds. The tick calls [`offer_free`] (tests too).

use crate::auth::HoldToken;
use crate::domain::map_parts::Noted;
use crate::domain::offer::{fill, fillable_indexes, offered, OfferUnits, Offered};
use crate::domain::offer_tick::next_lapse;
use crate::domain::returns::{
    offer_expiry, ListedPlaces, ListedSeat, LAST_RESALE_OFFER_BEFORE_CLOSE_MS,
};
use crate::domain::waitlist::{Waitlist, WaitlistStatus};
use crate::domain::waitlist_entry::Entry;
use crate::domain::{Event, EventId, Millis, OfferOf, Order, OrderBuyer, OrderId};
use crate::error::Error;
use crate::store::{OfferWrite, MAX_TRANSACTION_ITEMS};
use crate::App;

use super::heads::{waiting, Heads, NewestJoins};
use super::known::Known;
use super::map_memory::{after_look, map_for_look, MapMemory};

/// The most offers one look makes: what is left waits for the next look.
pub const OFFERS_PER_LOOK: u32 = 32;

/// The most offers one look loses to a seat or an entry that moved
/// meanwhile before it leaves the rest to the next.
const LOST_OFFERS_PER_LOOK: u32 = 8;

/// How long one event's look may go on starting offers: the tick's other
/// visits wait for a free slot meanwhile.
const LOOK_BUDGET_MS: i64 = 2_000;

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
    offer_free_after(app, event_id, None, None, now).await
}

/// The offerer's memory of an event's map for a look, and the stream's
/// counts read before it.
pub(super) struct MapKept<'a> {
    pub memory: &'a mut Option<Box<MapMemory>>,
    pub noted: &'a Noted,
}

/// [`offer_free`], after the list's newest `joins` were read (strongly
/// consistent) by the caller, from the map `kept` if any.
pub(super) async fn offer_free_after(
    app: &App,
    event_id: &EventId,
    joins: Option<NewestJoins>,
    kept: Option<MapKept<'_>>,
    now: Millis,
) -> Result<OfferLook, Error> {
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
    // The map, brought up to date once a look, strongly consistent: what
    // frees a seat meanwhile starts a look of its own.
    let (mut none, noted) = (None, kept.as_ref().map(|k| k.noted));
    let memory = kept.map_or(&mut none, |k| k.memory);
    let read = map_for_look(app, &event, waitlist.opened_at, memory, noted, now).await?;
    let (listed, listed_places) = listings_on_offer(app, &waitlist, event_id, now).await?;
    // A listing's offer ends with no write: offered again then.
    let lapse = listed.iter().filter_map(|l| l.held.as_ref());
    let lapse = lapse.map(|(_, until)| *until);
    let places_lapse = listed_places.iter().flat_map(|l| &l.places.holds);
    let lapse = lapse
        .chain(places_lapse.map(|h| h.expires_at))
        .filter(|until| *until > now);
    let look = OfferLook {
        next_lapse: next_lapse(&read.rows, &read.buckets, now)
            .into_iter()
            .chain(lapse)
            .min(),
        ..OfferLook::default()
    };
    let listings = (listed, listed_places);
    let mut known = Known::at_start(&event, &waitlist, read, listings, now);
    let look = offer_from(app, &event, &waitlist, &mut known, joins, look, now).await;
    after_look(memory, look.is_ok(), &event, &known.taken, &known.held);
    look
}

/// The seats and places of `event` listed for resale, with the offers
/// holding them, while its waitlist still offers listings (until a minute
/// before `returnsCloseAt`); none otherwise, without a read.
async fn listings_on_offer(
    app: &App,
    waitlist: &Waitlist,
    event: &EventId,
    now: Millis,
) -> Result<(Vec<ListedSeat>, Vec<ListedPlaces>), Error> {
    let offers_listings = waitlist
        .settings
        .returns_close_at
        .is_some_and(|close| now.0 < close.0 - LAST_RESALE_OFFER_BEFORE_CLOSE_MS);
    if !offers_listings {
        return Ok((Vec::new(), Vec::new()));
    }
    app.store.listings_on_offer(event).await
}

/// The look's offers from what it `known`s at `now`, from the line as
/// this instance remembers it (and the newest `joins` read before, if
/// any); what it read of the line is remembered for the next look.
async fn offer_from(
    app: &App,
    event: &Event,
    waitlist: &Waitlist,
    known: &mut Known,
    joins: Option<NewestJoins>,
    look: OfferLook,
    now: Millis,
) -> Result<OfferLook, Error> {
    let mut heads = Heads::recalled(app, &event.event_id, waitlist.generation, joins).await?;
    let offered = offer_each(app, event, waitlist, known, look, &mut heads, now).await;
    heads.remember(app, &event.event_id, crate::world::now());
    offered
}

/// The look's offers, one after another until nothing fits or the
/// bounds, into `look`.
async fn offer_each(
    app: &App,
    event: &Event,
    waitlist: &Waitlist,
    known: &mut Known,
    mut look: OfferLook,
    heads: &mut Heads,
    now: Millis,
) -> Result<OfferLook, Error> {
    let clock = std::time::Instant::now();
    let mut lost = 0;
    loop {
        let elapsed = i64::try_from(clock.elapsed().as_millis()).unwrap_or(i64::MAX);
        if look.made >= OFFERS_PER_LOOK || lost >= LOST_OFFERS_PER_LOOK || elapsed > LOOK_BUDGET_MS
        {
            look.more = true;
            return Ok(look);
        }
        let at = Millis(now.0.saturating_add(elapsed));
        let next = next_offer(app, &event.event_id, waitlist, known, heads, at);
        let (entry, units) = match next.await? {
            Next::Offer(entry, units) => (entry, units),
            Next::Nothing => {
                // Out of reads past sellers: the entries behind them may fit,
                // so the tick looks again soon.
                look.more |= heads.out_of_passes();
                return Ok(look);
            }
            Next::Stale => {
                // It cost reads: the look counts it against its bound on
                // lost writes.
                lost += 1;
                continue;
            }
        };
        let Some((order, token, offered)) =
            offer_order(app, event, waitlist, &entry, &units, known, at)?
        else {
            // The buckets as the look knows them no longer hold the
            // places its count of them promised: read them again, as a
            // lost write would. (Seats always fit their own count.)
            let OfferUnits::Places { section, .. } = &units else {
                return Ok(look);
            };
            lost += 1;
            known.read_buckets(app, event, section).await?;
            continue;
        };
        if !fits_confirm(&order, &offered) {
            // Its payment could not be one transaction: this look offers
            // those listings to nobody, so the entry and those behind it
            // are served from the rest.
            known
                .listed
                .retain(|seat, _| !offered.seats().contains(seat));
            let offered_places = known.place_resales(&offered);
            let kept = known.listed_places.iter().filter(|l| {
                !offered_places
                    .iter()
                    .any(|r| (&r.section, &r.seller) == (&l.section, &l.seller.order_id))
            });
            known.know_listed_places(kept.cloned().collect());
            lost += 1;
            continue;
        }
        let write = app
            .store
            .make_offer(&entry, &order, &offered, &token, waitlist.generation, at);
        match write.await? {
            OfferWrite::Made => {
                heads.left(&entry);
                look.made += 1;
                let lapse = look
                    .next_lapse
                    .map_or(order.expires_at, |l| l.min(order.expires_at));
                look.next_lapse = Some(lapse);
                known.took(&order, &offered);
                tracing::info!(event_id = %event.event_id, order_id = %order.order_id, seats = order.seats.len(), places = order.places.iter().map(|p| p.quantity).sum::<u32>(), "waitlist offer made");
            }
            OfferWrite::Lost(loss) if loss.waitlist_moved && !order.holds_listings() => {
                // A delete or a new generation: every other offer would
                // fail on it too. The next visit reads the waitlist again
                // and looks if it is still open.
                look.more = true;
                return Ok(look);
            }
            OfferWrite::Lost(loss) => {
                if loss.waitlist_moved {
                    // An offer of listed seats also checks that returns
                    // still take them (a put may have closed them): this
                    // look offers no more listings, and the rest go on (a
                    // delete or a new generation fails the next offer too,
                    // and ends the look).
                    known.forget_listings();
                }
                lost += 1;
                // A seat refused for another transaction on it is taken
                // for this look; if that transaction fails, nothing
                // announces the seat: the next visit looks again.
                look.more |= !loss.unsure.is_empty();
                if loss.entry_left {
                    heads.left(&entry);
                } else if loss.entry_unsure {
                    heads.forget(&entry);
                }
                if loss.units() {
                    known.lost(app, event, &offered, &loss, at).await?;
                }
            }
            OfferWrite::OverLimit => {
                // The entry has ended (its index places with it): the next
                // round's heads go past it. Each costs a read and a write,
                // so the look counts it against its bound on lost writes.
                heads.left(&entry);
                lost += 1;
                tracing::info!(entry_id = %entry.entry_id, "a waitlist entry ended at its buyer's limit");
            }
        }
    }
}

/// What the heads say the next offer is.
enum Next {
    Offer(Box<Entry>, OfferUnits),
    /// Nobody waiting can be filled.
    Nothing,
    /// A head had stopped waiting by the time its entry was read (another
    /// offerer's offer, a leave, in between): the entries behind it in its
    /// shards were not read, so they are read again rather than an entry
    /// that joined later served first.
    Stale,
}

/// The earliest waiting entry the free units (`sections`: what the look
/// knows free) can fill, and what it would hold, from the heads of just
/// the indexes they could fill (as the look has read them), earliest
/// first, until one fills.
async fn next_offer(
    app: &App,
    event_id: &EventId,
    waitlist: &Waitlist,
    known: &Known,
    heads: &mut Heads,
    at: Millis,
) -> Result<Next, Error> {
    let sections = known.free(at);
    let indexes = fillable_indexes(&sections, waitlist.settings.max_quantity);
    if indexes.is_empty() {
        return Ok(Next::Nothing);
    }
    'read: loop {
        let earliest = heads.earliest(app, event_id, &indexes).await?;
        for (i, head) in earliest.iter().enumerate() {
            let Some(entry) = heads.entry(app, event_id, &earliest, i).await? else {
                continue;
            };
            if !waiting(entry) {
                // A place is taken off in the transaction that ends its
                // wait, so a head no longer waiting was read just before.
                let entry = entry.clone();
                heads.forget(&entry);
                return Ok(Next::Stale);
            }
            // A seller is never offered what it listed itself.
            let own = known.free_for(&entry.buyer, at);
            if let Some(units) = fill(&entry.request, own.as_deref().unwrap_or(&sections)) {
                return Ok(Next::Offer(Box::new(entry.clone()), units));
            }
            // Passed over: who waits behind it may come before every
            // other head.
            if let Some(shard) = head.ends.first() {
                if heads.read_past(app, event_id, shard).await? {
                    continue 'read;
                }
            }
        }
        return Ok(Next::Nothing);
    }
}

/// The order offering `units` to `entry`, its hold token, and what it
/// holds (places taken from the buckets as the look `known`s them): its
/// id and token secret derived from the entry under the hold token key
/// (the entry's status derives the same to hand its holder the token),
/// holding them for `offerSeconds`, counted under the event's buyer limit
/// as create-order's order would be (the token names the buyer then).
/// `None`: what the look knows cannot hold `units` after all.
fn offer_order(
    app: &App,
    event: &Event,
    waitlist: &Waitlist,
    entry: &Entry,
    units: &OfferUnits,
    known: &Known,
    now: Millis,
) -> Result<Option<(Order, HoldToken, Offered)>, Error> {
    let event_id = &event.event_id;
    let (random, secret) = app
        .config
        .token_keys()?
        .offer_order(&entry.entry_id, event_id);
    let order_id = OrderId::from_random(event_id, random);
    // A seller is never offered what it listed itself.
    let buckets = known.buckets_for(&entry.buyer);
    let buckets = buckets.as_ref().unwrap_or(&known.buckets);
    let Some(holds) = offered(event, units, buckets, &order_id, now) else {
        return Ok(None);
    };
    let resales = known.resales(holds.seats());
    let place_resales = known.place_resales(&holds);
    let buyer = offer_buyer(event, entry)?;
    let offer_seconds = offer_expiry(
        now,
        waitlist.settings.offer_seconds,
        waitlist,
        !resales.is_empty() || !place_resales.is_empty(),
    );
    let token = HoldToken::from_secret(event_id, now.plus_seconds(offer_seconds), secret)
        .for_buyer(buyer.as_ref().map(OrderBuyer::limited));
    let mut order = Order::new_offer(
        event_id,
        now,
        offer_seconds,
        app.config.expiry_guard_ms,
        order_id,
        token.hash(),
        &holds,
        OfferOf {
            entry_id: entry.entry_id.clone(),
            buyer_id: entry.buyer.clone(),
            cancelled_as: None,
            generation: Some(waitlist.generation),
            resales,
            place_resales,
            emptied_at: None,
        },
    );
    order.buyer = buyer;
    Ok(Some((order, token, holds)))
}

/// Whose record counts `entry`'s offer on a limited event: the entry
/// keeps it (the join counted it there), so the offerer derives no ref
/// and needs no key.
fn offer_buyer(event: &Event, entry: &Entry) -> Result<Option<OrderBuyer>, Error> {
    match (event.buyer_limit, &entry.limited) {
        (None, _) => Ok(None),
        (Some(_), Some(limited)) => Ok(Some(OrderBuyer {
            buyer_id: entry.buyer.clone(),
            limit: limited.limit,
            buyer_ref: limited.buyer.clone(),
        })),
        (Some(_), None) => Err(Error::Corrupt(
            "an entry of a limited event without its buyer's record".into(),
        )),
    }
}

/// Whether the confirm of `order`'s offer of `offered` fits one
/// transaction: three items per listed seat (the seat, the seller's
/// listing, its resale item) and per listing of places (its resale item,
/// the seller's listing, the resale's own record), one per other seat and
/// per bucket, one per seller's record on a limited event, and at most
/// eight more (the order, its payment, its buyer's record, its offer's
/// end, and room to spare). Only an offer of many listings from as many
/// limited sellers comes near.
fn fits_confirm(order: &Order, offered: &Offered) -> bool {
    let Some(offer) = &order.offer else {
        return true;
    };
    let (resales, place_resales) = (&offer.resales, &offer.place_resales);
    let mut sellers: Vec<_> = resales
        .iter()
        .filter_map(|r| r.seller_ref.as_ref())
        .chain(place_resales.iter().filter_map(|r| r.seller_ref.as_ref()))
        .collect();
    sellers.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    sellers.dedup();
    let seats = offered.seats().len();
    let buckets = offered.places().len();
    let items = 3 * resales.len()
        + (seats - resales.len())
        + 3 * place_resales.len()
        + (buckets - place_resales.len())
        + sellers.len()
        + 8;
    items <= MAX_TRANSACTION_ITEMS
}
