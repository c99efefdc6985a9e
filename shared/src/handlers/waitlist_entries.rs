//! The waitlist's buyer routes: join, an entry's status, and leave (API.md,
//! "Entries"). One function serves them: the only one that derives entry
//! tokens.

use lambda_http::http::StatusCode;
use lambda_http::Request;
use serde::Deserialize;

use super::entries::{end, entry_reply, status_now, waitlist_of, with_offer, ReadEntry, Reader};
use super::reads::fresh_id;
use super::Reply;
use crate::auth::EntryToken;
use crate::domain::buyer::BuyerId;
use crate::domain::buyer_limit::LimitedBuyer;
use crate::domain::waitlist::{
    EndReason, EntryAsk, EntryRequest, EntryStatus, Waitlist, WaitlistStatus, MAX_ENTRY_QUANTITY,
};
use crate::domain::waitlist_entry::{join_as, Entry, JoinAs};
use crate::domain::{EntryId, Event, EventId, EventRef, Millis, SectionId};
use crate::error::Error;
use crate::http::{header, json, json_body, path_param};
use crate::reason::Reason;
use crate::retry::{Rounds, QUEUE_WRITE_ROUNDS};
use crate::App;

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct JoinBody {
    quantity: Option<u32>,
    section_ids: Option<Vec<SectionId>>,
    together: Option<bool>,
    wheelchair: Option<u32>,
}

/// The event's waitlist, if a buyer may join it: `404 waitlist-not-found`
/// when there is none, `409 waitlist-not-open` while armed,
/// `409 waitlist-ended` after a delete.
async fn joinable(app: &App, event: &EventId, now: Millis) -> Result<Waitlist, Error> {
    let waitlist = app.waitlist(event, now).await?;
    let waitlist = waitlist.ok_or(Error::WaitlistNotFound)?;
    match waitlist.status() {
        WaitlistStatus::Open => Ok(*waitlist),
        WaitlistStatus::Armed => Err(Error::WaitlistNotOpen {
            opens: waitlist.settings.opens.as_str(),
        }),
        WaitlistStatus::Ended => Err(Error::WaitlistEnded),
    }
}

/// `request` checked against the plan: every section it names exists.
fn in_plan(event: &Event, request: &EntryRequest) -> Result<(), Error> {
    match request
        .section_ids
        .iter()
        .all(|id| event.section(id).is_some())
    {
        true => Ok(()),
        false => Err(Error::SectionNotFound),
    }
}

/// `POST /events/{eventId}/waitlist/entries`: `201` with a new entry at
/// the back, or `200` with the buyer's live entry as it stands (its body,
/// once well formed, not used). A body outside any waitlist's ranges is a
/// `400` first; the waitlist's own `maxQuantity` and the plan's sections
/// are checked once the buyer has no live entry.
pub async fn join_waitlist(app: &App, req: &Request) -> Reply {
    let body: JoinBody = json_body(req, Some(JoinBody::default()))?;
    let ask = EntryAsk {
        quantity: body.quantity,
        section_ids: body.section_ids,
        together: body.together,
        wheelchair: body.wheelchair,
    };
    EntryRequest::checked(ask.clone(), MAX_ENTRY_QUANTITY).map_err(Error::BadRequest)?;
    let event_id = path_param(req, "eventId", EventId::parse)?;
    let event = app.event(&event_id).await?.ok_or(Error::EventNotFound)?;
    let waitlist = joinable(app, &event_id, crate::world::now()).await?;
    let buyer = app
        .config
        .buyer_verify_keys()?
        .buyer_of(req, &event_id, crate::world::now())?;
    let keys = app.config.token_keys()?;
    let mut rounds = Rounds::new("join-waitlist", QUEUE_WRITE_ROUNDS);
    while rounds.next().await.is_some() {
        let now = crate::world::now();
        let current = buyers_entry(app, &event_id, &waitlist, &buyer, now).await?;
        let named = current.as_ref().map(|(read, s)| (&read.entry.entry_id, *s));
        let replacing = match join_as(named) {
            JoinAs::Existing => {
                let Some((read, status)) = current else {
                    return Err(Error::Corrupt("a live entry that is not there".into()));
                };
                let mut reply =
                    entry_reply(app, &event_id, &read, status, Reader::Holder, now).await?;
                let token = keys.entry_token(&event_id, &read.entry.entry_id);
                reply.entry_token = Some(token.as_str().into());
                return Ok(json(StatusCode::OK, &reply));
            }
            JoinAs::New { replacing } => replacing,
        };
        let request = EntryRequest::checked(ask.clone(), waitlist.settings.max_quantity)
            .map_err(Error::BadRequest)?;
        in_plan(&event, &request)?;
        let limited = refuse_over_limit(app, &event_id, &buyer, request.quantity, now).await?;
        let entry_id = fresh_id(EntryId::parse)?;
        let token = keys.entry_token(&event_id, &entry_id);
        // Its place in join order is the instant of the write's round, so
        // a page of the organiser's list handed out meanwhile is behind it.
        let entry = Entry {
            entry_id,
            generation: waitlist.generation,
            buyer: buyer.clone(),
            request,
            joined_at: crate::world::now(),
            token_hash: token.hash(),
            stored: EntryStatus::Waiting,
            offer_order: None,
            limited,
        };
        if app
            .store
            .join_waitlist(&event_id, &entry, replacing.as_ref())
            .await?
        {
            let read = ReadEntry {
                entry,
                offer: None,
                ga: Vec::new(),
            };
            let waiting = EntryStatus::Waiting;
            let mut reply =
                entry_reply(app, &event_id, &read, waiting, Reader::Holder, now).await?;
            reply.entry_token = Some(token.as_str().into());
            return Ok(json(StatusCode::CREATED, &reply));
        }
        // Another join of this buyer came first: read its record again.
        rounds.lost();
    }
    Err(rounds.spent())
}

/// The entry the buyer's record names in `waitlist`'s generation, and its
/// status now (`None`: the buyer has not joined it).
async fn buyers_entry(
    app: &App,
    event: &EventId,
    waitlist: &Waitlist,
    buyer: &BuyerId,
    now: Millis,
) -> Result<Option<(ReadEntry, EntryStatus)>, Error> {
    let named = app
        .store
        .buyer_entry(event, waitlist.generation, buyer)
        .await?;
    let Some(entry_id) = named else {
        return Ok(None);
    };
    let entry = app.store.read_entry(event, &entry_id, true).await?;
    let entry = entry
        .filter(|entry| &entry.buyer == buyer)
        .ok_or_else(|| Error::Corrupt("a buyer's record names no entry of the buyer".into()))?;
    let read = with_offer(app, entry).await?;
    let status = status_now(&read, waitlist, now);
    Ok(Some((read, status)))
}

/// `409 buyer-limit` if the event limits its buyers and `quantity` is more
/// than `buyer` may still buy (what its record counts now, held and sold);
/// else, on a limited event, whose record counts it (the entry keeps it:
/// its offer counts there).
async fn refuse_over_limit(
    app: &App,
    event: &EventId,
    buyer: &BuyerId,
    quantity: u32,
    now: Millis,
) -> Result<Option<LimitedBuyer>, Error> {
    let head = app.event_head(event).await?.ok_or(Error::EventNotFound)?;
    let Some(limit) = head.buyer_limit else {
        return Ok(None);
    };
    let buyer_ref = crate::buyer::buyer_ref(app.config.draw_secrets()?, &head, buyer)?;
    let limited = LimitedBuyer {
        buyer: buyer_ref,
        limit,
    };
    let counted = app
        .store
        .buyer_count(&EventRef::of(event), &limited)
        .await?
        .counted(now);
    match quantity <= limit.saturating_sub(counted) {
        true => Ok(Some(limited)),
        false => Err(Error::BuyerLimit { limit, counted }),
    }
}

/// The entry the request names, once its entry token is checked: `401`
/// without it or with another's, `404 entry-not-found` for none.
async fn held_entry(app: &App, req: &Request, consistent: bool) -> Result<(EventId, Entry), Error> {
    let event_id = path_param(req, "eventId", EventId::parse)?;
    let entry_id = path_param(req, "entryId", EntryId::parse)?;
    let token = EntryToken::required(
        header(req, "authorization"),
        Reason::EntryTokenMissing,
        Reason::EntryTokenMalformed,
    )?;
    let entry = app
        .store
        .read_entry(&event_id, &entry_id, consistent)
        .await?;
    let entry = entry.ok_or(Error::EntryNotFound)?;
    let keys = app.config.token_keys()?;
    if !token.matches(&entry.token_hash) && !keys.is_entry_token(&token, &event_id, &entry_id) {
        return Err(Error::Unauthorized(Reason::EntryTokenOtherEntry));
    }
    Ok((event_id, entry))
}

/// `GET /events/{eventId}/waitlist/entries/{entryId}`
pub async fn entry_status(app: &App, req: &Request) -> Reply {
    let (event_id, entry) = held_entry(app, req, false).await?;
    let now = crate::world::now();
    let waitlist = waitlist_of(app, &event_id, &entry, now).await?;
    let read = with_offer(app, entry).await?;
    let status = status_now(&read, &waitlist, now);
    let reply = entry_reply(app, &event_id, &read, status, Reader::Holder, now).await?;
    Ok(json(StatusCode::OK, &reply))
}

/// `DELETE /events/{eventId}/waitlist/entries/{entryId}`: a waiting entry
/// ends (`left`); again, or once it has ended, the same `200`.
pub async fn leave_waitlist(app: &App, req: &Request) -> Reply {
    let (event_id, entry) = held_entry(app, req, true).await?;
    let read = with_offer(app, entry).await?;
    let (read, status) = end(app, &event_id, read, EndReason::Left).await?;
    let reply = entry_reply(
        app,
        &event_id,
        &read,
        status,
        Reader::Holder,
        crate::world::now(),
    )
    .await?;
    Ok(json(StatusCode::OK, &reply))
}
