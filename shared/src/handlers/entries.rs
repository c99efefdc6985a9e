//! What the waitlist's entry routes share, the buyer's and the
//! organiser's: an entry as read with its offer's order, its status as it
//! reads now, its reply (with the offer), and its end (a leave's, a
//! removal's; an offer's is a decline).

use serde::Serialize;

use super::cancel::cancel_as_read;
use super::reads::places_by_section;
use super::GaEntry;
use crate::auth::HoldToken;
use crate::domain::waitlist::{entry_status_at, EndReason, EntryStatus, OfferOrder, Waitlist};
use crate::domain::waitlist_entry::{ending, Ending, Entry};
use crate::domain::{EntryId, EventId, Millis, Order, OrderId, SeatId, SectionId};
use crate::error::Error;
use crate::retry::{Rounds, QUEUE_WRITE_ROUNDS};
use crate::store::StoredOrder;
use crate::App;

/// How soon a waiting entry's holder should ask again: what it is told
/// lags by up to this much anyway (API.md, "Entries").
const WAITING_POLL_SECONDS: u32 = 5;

/// An entry as read, with its offer's order if it was offered (and the
/// order's places per section).
pub(super) struct ReadEntry {
    pub entry: Entry,
    pub offer: Option<StoredOrder>,
    pub ga: Vec<GaEntry>,
}

/// `entry` with its offer's order, read strongly consistently (an offer
/// whose order is gone, past its retention, reads as run out).
pub(super) async fn with_offer(app: &App, entry: Entry) -> Result<ReadEntry, Error> {
    let offer = match &entry.offer_order {
        Some(order) => app.store.get_order(order).await?,
        None => None,
    };
    let ga = match &offer {
        Some(stored) => places_by_section(app, &stored.order).await?,
        None => Vec::new(),
    };
    Ok(ReadEntry { entry, offer, ga })
}

/// An offer as the entry's status shows it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct OfferReply<'a> {
    order_id: &'a OrderId,
    /// The buyer's own routes only: the organiser's list shows no token.
    #[serde(skip_serializing_if = "Option::is_none")]
    hold_token: Option<String>,
    seats: &'a [SeatId],
    ga: &'a [GaEntry],
    expires_at: String,
}

/// An entry as its status route answers it; join adds `entryToken`, and
/// the organiser's list leaves it out (and the offer's token).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct EntryReply<'a> {
    entry_id: &'a EntryId,
    event_id: &'a EventId,
    buyer_id: &'a str,
    status: &'static str,
    quantity: u32,
    #[serde(skip_serializing_if = "<[SectionId]>::is_empty")]
    section_ids: &'a [SectionId],
    together: bool,
    wheelchair: u32,
    joined_at: String,
    /// A WAITING entry's, once the offerer keeps its generation's positions.
    #[serde(skip_serializing_if = "Option::is_none")]
    position: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    poll_after_seconds: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    offer: Option<OfferReply<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) entry_token: Option<String>,
}

/// Whether `entry`'s generation has ended, by the waitlist as read: a
/// later one put since, or this one deleted. A waitlist read of an older
/// generation than the entry's says nothing of it ([`waitlist_of`] reads
/// the item then).
fn generation_ended(waitlist: &Waitlist, entry: &Entry) -> bool {
    waitlist.generation > entry.generation
        || (waitlist.generation == entry.generation && waitlist.ended_at.is_some())
}

/// The entry's status at `now`, computed where no write is needed.
pub(super) fn status_now(read: &ReadEntry, waitlist: &Waitlist, now: Millis) -> EntryStatus {
    let offer = read.offer.as_ref().map(|stored| {
        let order = &stored.order;
        OfferOrder {
            status: order.status,
            expires_at: order.expires_at,
            holds_anything: !order.offer_emptied(),
            cancelled_as: order.offer.as_ref().and_then(|o| o.cancelled_as),
        }
    });
    let ended = generation_ended(waitlist, &read.entry);
    entry_status_at(read.entry.stored, offer, ended, now)
}

/// The waitlist `entry` is read against: this instance's copy (a second
/// old at most), unless that is of an older generation than the entry's
/// (a put a moment ago), then the item itself, strongly consistent.
pub(super) async fn waitlist_of(
    app: &App,
    event: &EventId,
    entry: &Entry,
    now: Millis,
) -> Result<Waitlist, Error> {
    match app.waitlist(event, now).await? {
        Some(kept) if kept.generation >= entry.generation => Ok(*kept),
        _ => stored_waitlist(app, event).await,
    }
}

/// The event's waitlist item, strongly consistent: an entry's event has one.
async fn stored_waitlist(app: &App, event: &EventId) -> Result<Waitlist, Error> {
    let stored = app.store.read_waitlist(event).await?;
    stored
        .map(|s| s.waitlist)
        .ok_or_else(|| Error::Corrupt("an entry of an event with no waitlist".into()))
}

/// A WAITING entry's position, from its generation's positions as this
/// instance keeps them (a second old at most); `None` at any other status,
/// or before the offerer's tick first keeps them.
async fn position_of(
    app: &App,
    event: &EventId,
    entry: &Entry,
    status: EntryStatus,
    now: Millis,
) -> Result<Option<u64>, Error> {
    if status != EntryStatus::Waiting {
        return Ok(None);
    }
    let positions = app.positions(event, entry.generation, now).await?;
    Ok(positions.map(|p| p.position(entry.joined_at)))
}

/// Who a reply is for: the entry's holder sees its offer's hold token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reader {
    Holder,
    Organiser,
}

/// The reply of `read` of `event` at `status` at `now`: a waiting entry's
/// with its position.
pub(super) async fn entry_reply<'a>(
    app: &App,
    event: &'a EventId,
    read: &'a ReadEntry,
    status: EntryStatus,
    reader: Reader,
    now: Millis,
) -> Result<EntryReply<'a>, Error> {
    let entry = &read.entry;
    let position = position_of(app, event, entry, status, now).await?;
    let offer = match (&read.offer, status) {
        (Some(stored), EntryStatus::Offered) => {
            Some(offer_reply(app, read, &stored.order, reader)?)
        }
        _ => None,
    };
    Ok(EntryReply {
        entry_id: &entry.entry_id,
        event_id: event,
        buyer_id: entry.buyer.as_str(),
        status: status.as_str(),
        quantity: entry.request.quantity,
        section_ids: &entry.request.section_ids,
        together: entry.request.together,
        wheelchair: entry.request.wheelchair,
        joined_at: entry.joined_at.to_rfc3339(),
        position,
        poll_after_seconds: (status == EntryStatus::Waiting).then_some(WAITING_POLL_SECONDS),
        offer,
        reason: status.reason().map(|r| r.as_str()),
        entry_token: None,
    })
}

/// The offer `order` as `entry`'s status shows it: for its holder with
/// the order's hold token, derived from the entry as the offerer derived
/// it (under whichever kept key the order's token hash says).
fn offer_reply<'a>(
    app: &App,
    read: &'a ReadEntry,
    order: &'a Order,
    reader: Reader,
) -> Result<OfferReply<'a>, Error> {
    let entry = &read.entry;
    let hold_token = match reader {
        Reader::Organiser => None,
        Reader::Holder => {
            let keys = app.config.token_keys()?;
            let event = &order.event_id;
            let token = keys
                .offer_secrets(&entry.entry_id, event)
                .into_iter()
                .map(|secret| {
                    HoldToken::from_secret(event, order.expires_at, secret)
                        .for_buyer(order.limited_buyer())
                })
                .find(|token| token.matches(&order.token_hash))
                .ok_or_else(|| {
                    // The offerer's instance may hold a key this one has
                    // yet to read (a rotation): a retry, or the next
                    // read of the keys, answers.
                    tracing::warn!(order_id = %order.order_id, "an offer's token under no key this instance keeps");
                    Error::SecretsUnavailable
                })?;
            Some(keys.encode(&order.order_id, &token))
        }
    };
    Ok(OfferReply {
        order_id: &order.order_id,
        hold_token,
        seats: &order.seats,
        ga: &read.ga,
        expires_at: order.expires_at.to_rfc3339(),
    })
}

/// Ends `read`'s entry for `reason` if it is waiting, or declines its live
/// offer (the order cancelled, its seats going on at once, recording why),
/// and returns it as it is after, with its
/// status; as it stands if it had ended or its offer completed. The
/// waitlist is read strongly consistently: a waiting entry of a generation
/// deleted a moment ago reads `closed`, and nothing is written.
pub(super) async fn end(
    app: &App,
    event: &EventId,
    mut read: ReadEntry,
    reason: EndReason,
) -> Result<(ReadEntry, EntryStatus), Error> {
    let mut rounds = Rounds::new("end-entry", QUEUE_WRITE_ROUNDS);
    while rounds.next().await.is_some() {
        let now = crate::world::now();
        let waitlist = stored_waitlist(app, event).await?;
        let status = status_now(&read, &waitlist, now);
        let done = match ending(status, reason) {
            Ending::AsItStands => return Ok((read, status)),
            Ending::End(reason) => app.store.end_entry(event, &read.entry, reason, now).await?,
            Ending::Decline => decline(app, &read, reason).await?,
        };
        if !done {
            rounds.lost();
        }
        // Read again: what this round wrote, or what moved it meanwhile.
        let again = app
            .store
            .read_entry(event, &read.entry.entry_id, true)
            .await?;
        read = with_offer(app, again.ok_or(Error::EntryNotFound)?).await?;
        if done {
            let waitlist = stored_waitlist(app, event).await?;
            let status = status_now(&read, &waitlist, crate::world::now());
            return Ok((read, status));
        }
    }
    Err(rounds.spent())
}

/// Declines `read`'s live offer: its order cancelled as read, one write
/// recording why the entry ended (`declined`, `removed`, or
/// `offer-expired` if the expiry came first), which the entry reads.
/// `false`: something moved first.
async fn decline(app: &App, read: &ReadEntry, reason: EndReason) -> Result<bool, Error> {
    let Some(stored) = &read.offer else {
        return Err(Error::Corrupt("an offered entry without its order".into()));
    };
    let removal = reason == EndReason::Removed;
    Ok(cancel_as_read(app, stored, removal).await?.is_some())
}
