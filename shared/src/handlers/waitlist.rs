//! The waitlist's operator routes: put-waitlist, get-waitlist,
//! delete-waitlist, the organiser's list of entries and removal (API.md,
//! "The waitlist"). The buyer's routes are `waitlist_entries`.

use lambda_http::http::StatusCode;
use lambda_http::Request;
use serde::{Deserialize, Deserializer, Serialize};

use super::entries::{end, entry_reply, status_now, with_offer, EntryReply, Reader};
use super::opening::{open_if_sold_out, Look};
use super::reads::{ended_reply, ready_event};
use super::Reply;
use crate::domain::waitlist::{
    waitlist_after_put, EndReason, EntryStatus, Opens, PutRefusal, Waitlist, WaitlistPut,
    WaitlistStatus,
};
use crate::domain::waitlist_entry::{parse_status_filter, DEFAULT_LIST_LIMIT, LIST_LIMIT_RANGE};
use crate::domain::waitlist_positions::Positions;
use crate::domain::{EntryId, EventId, EventRef, Millis};
use crate::error::Error;
use crate::http::{json, json_body, path_param, query_param};
use crate::retry::{Rounds, QUEUE_WRITE_ROUNDS};
use crate::store::Listing;
use crate::App;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PutWaitlistBody {
    #[serde(default)]
    opens: Option<String>,
    #[serde(default)]
    offer_seconds: Option<u32>,
    #[serde(default)]
    max_quantity: Option<u32>,
    /// Left out (`None`) is no change; `null` (`Some(None)`) ends returns.
    #[serde(default, deserialize_with = "present")]
    returns_close_at: Option<Option<String>>,
}

/// A field that was sent, `null` included: `Some(None)` for `null`.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(d).map(Some)
}

impl PutWaitlistBody {
    /// The put as the rules read it, or a `400` naming the field.
    fn read(self) -> Result<WaitlistPut, Error> {
        let opens = self
            .opens
            .map(|opens| {
                Opens::parse(&opens).ok_or_else(|| {
                    Error::BadRequest("opens must be \"sold-out\" or \"now\"".into())
                })
            })
            .transpose()?;
        let returns_close_at = self
            .returns_close_at
            .map(|at| at.map(|at| rfc3339(&at)).transpose())
            .transpose()?;
        Ok(WaitlistPut {
            opens,
            offer_seconds: self.offer_seconds,
            max_quantity: self.max_quantity,
            returns_close_at,
        })
    }
}

fn rfc3339(at: &str) -> Result<Millis, Error> {
    chrono::DateTime::parse_from_rfc3339(at)
        .map(|at| Millis::from(at.with_timezone(&chrono::Utc)))
        .map_err(|_| Error::BadRequest("returnsCloseAt must be an RFC 3339 time or null".into()))
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WaitlistReply<'a> {
    event_id: &'a EventId,
    status: &'static str,
    opens: &'static str,
    offer_seconds: u32,
    max_quantity: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    returns_close_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    opened_at: Option<String>,
    generation: u64,
    waiting: u64,
    offered: u64,
    purchased: u64,
    unoffered: u64,
}

/// The counts get-waitlist and put-waitlist answer with.
struct Counts {
    waiting: u64,
    offered: u64,
    purchased: u64,
    unoffered: u64,
}

/// The waitlist as get-waitlist and put-waitlist answer it, with `counts`.
fn waitlist_reply(event_id: &EventId, waitlist: &Waitlist, counts: Counts) -> Reply {
    let settings = &waitlist.settings;
    Ok(json(
        StatusCode::OK,
        &WaitlistReply {
            event_id,
            status: waitlist.status().as_str(),
            opens: settings.opens.as_str(),
            offer_seconds: settings.offer_seconds,
            max_quantity: settings.max_quantity,
            returns_close_at: settings.returns_close_at.map(Millis::to_rfc3339),
            opened_at: waitlist.opened_at.map(Millis::to_rfc3339),
            generation: waitlist.generation,
            waiting: counts.waiting,
            offered: counts.offered,
            purchased: counts.purchased,
            unoffered: counts.unoffered,
        },
    ))
}

/// `PUT /events/{eventId}/waitlist`
pub async fn put_waitlist(app: &App, req: &Request) -> Reply {
    let put = json_body::<PutWaitlistBody>(req, None)?.read()?;
    let event_id = ready_event(app, req).await?;
    let mut rounds = Rounds::new("put-waitlist", QUEUE_WRITE_ROUNDS);
    while rounds.next().await.is_some() {
        let now = crate::world::now();
        let stored = app.store.read_waitlist(&event_id).await?;
        let current = stored.as_ref().map(|s| &s.waitlist);
        let waitlist = waitlist_after_put(current, put, app.config.max_seats_per_order, now)
            .map_err(|refused| match refused {
                PutRefusal::Invalid(said) => Error::BadRequest(said),
                PutRefusal::Open => Error::WaitlistOpen,
            })?;
        let previous = stored.as_ref().map(|s| s.version);
        if app
            .store
            .put_waitlist(&event_id, &waitlist, previous, Listing::List)
            .await?
        {
            // Armed: the event may be sold out already (no write of a seat
            // will come for the projector), or the projector may have
            // looked before this put showed: the put looks too, over its
            // own write.
            let waitlist = match waitlist.opens_at_sell_out() {
                true => open_if_sold_out(&app.store, &EventRef::of(&event_id), Look::Item)
                    .await?
                    .unwrap_or(waitlist),
                false => waitlist,
            };
            return waitlist_reply(
                &event_id,
                &waitlist,
                counts(app, &event_id, &waitlist).await?,
            );
        }
        // Another write came first: read again, after a jittered pause.
        rounds.lost();
    }
    Err(rounds.spent())
}

/// `GET /events/{eventId}/waitlist`: `404 waitlist-not-found` when none was
/// ever put.
pub async fn get_waitlist(app: &App, req: &Request) -> Reply {
    let event_id = path_param(req, "eventId", EventId::parse)?;
    let stored = app.store.read_waitlist(&event_id).await?;
    let stored = stored.ok_or(Error::WaitlistNotFound)?;
    let counts = counts(app, &event_id, &stored.waitlist).await?;
    waitlist_reply(&event_id, &stored.waitlist, counts)
}

/// The waitlist's counts, from the positions the offerer keeps (as an
/// entry's position is): its WAITING entries (none once deleted: they all
/// read ENDED), its live offers and its purchases (an offer past its
/// expiry drops out as it is read; after a delete the offerer keeps them
/// until the offers made before it have ended: `COUNTED_AFTER_DELETE_MS`),
/// and [`unoffered`].
async fn counts(app: &App, event_id: &EventId, waitlist: &Waitlist) -> Result<Counts, Error> {
    let now = crate::world::now();
    let kept = match waitlist.status() {
        WaitlistStatus::Open | WaitlistStatus::Ended => {
            app.positions(event_id, waitlist.generation, now).await?
        }
        WaitlistStatus::Armed => None,
    };
    let open = waitlist.status() == WaitlistStatus::Open;
    let of = |count: fn(&Positions, Millis) -> u64| kept.as_deref().map_or(0, |p| count(p, now));
    Ok(Counts {
        waiting: if open { of(|p, _| p.waiting()) } else { 0 },
        offered: of(|p, now| p.offers.offered(now)),
        purchased: of(|p, _| p.offers.purchased()),
        unoffered: unoffered(app, event_id).await?,
    })
}

/// The free seats and places no waiting entry fits, from the seat map (at
/// most its cache's age old, within the contract's 5 s): with no entries
/// yet, every free unit.
async fn unoffered(app: &App, event_id: &EventId) -> Result<u64, Error> {
    let Some(event) = app.event(event_id).await? else {
        return Ok(0);
    };
    let (_, read) = app.seat_map(&event).await?;
    let map = crate::domain::seat_map(&event, &read.rows, &read.buckets, crate::world::now());
    Ok(map.available_units())
}

/// `DELETE /events/{eventId}/waitlist`: `ENDED`, also when there was none
/// (nothing is written then).
pub async fn delete_waitlist(app: &App, req: &Request) -> Reply {
    let event_id = ready_event(app, req).await?;
    let ended = ended_reply(&event_id, "ENDED");
    let mut rounds = Rounds::new("delete-waitlist", QUEUE_WRITE_ROUNDS);
    while rounds.next().await.is_some() {
        let now = crate::world::now();
        let Some(stored) = app.store.read_waitlist(&event_id).await? else {
            return Ok(ended);
        };
        if stored.waitlist.ended_at.is_some() {
            return Ok(ended);
        }
        let waitlist = stored.waitlist.ended(now);
        if app
            .store
            .put_waitlist(&event_id, &waitlist, Some(stored.version), Listing::Keep)
            .await?
        {
            return Ok(ended);
        }
        rounds.lost();
    }
    Err(rounds.spent())
}

/// The most list pages one request reads looking for entries of the
/// status asked for: a page may then hold fewer than `limit`, with `next`.
const LIST_READS: usize = 5;

type StatusFilter = fn(EntryStatus) -> bool;

fn status_filter(value: &str) -> Result<StatusFilter, Error> {
    parse_status_filter(value).ok_or_else(|| {
        Error::BadRequest("status must be WAITING, OFFERED, PURCHASED or ENDED".into())
    })
}

fn list_limit(value: &str) -> Result<u32, Error> {
    value
        .parse()
        .ok()
        .filter(|limit| LIST_LIMIT_RANGE.contains(limit))
        .ok_or_else(|| {
            Error::BadRequest(format!(
                "limit must be {} to {}",
                LIST_LIMIT_RANGE.start(),
                LIST_LIMIT_RANGE.end()
            ))
        })
}

/// A cursor is the generation listed and the join key its page ended at,
/// `{generation}/{join key}` in base64url: opaque to the organiser,
/// checked here (another generation's is refused once it is read).
fn list_cursor(value: &str) -> Result<(u64, String), Error> {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(value)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .and_then(|text| {
            let (generation, key) = text.split_once('/')?;
            let generation = generation.parse().ok()?;
            crate::store::is_join_key(key).then(|| (generation, key.to_owned()))
        })
        .ok_or_else(refused_cursor)
}

fn refused_cursor() -> Error {
    Error::BadRequest("cursor is not one this list gave".into())
}

fn encode_cursor(generation: u64, key: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{generation}/{key}"))
}

#[derive(Serialize)]
struct EntryList<'a> {
    entries: Vec<EntryReply<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    next: Option<String>,
}

/// `GET /events/{eventId}/waitlist/entries?status=&limit=&cursor=`: the
/// current generation's entries in join order, without tokens.
pub async fn list_entries(app: &App, req: &Request) -> Reply {
    let event_id = ready_event(app, req).await?;
    let keep = query_param(req, "status", status_filter)?;
    let limit = query_param(req, "limit", list_limit)?.unwrap_or(DEFAULT_LIST_LIMIT);
    let cursor = query_param(req, "cursor", list_cursor)?;
    let stored = app.store.read_waitlist(&event_id).await?;
    let waitlist = stored.ok_or(Error::WaitlistNotFound)?.waitlist;
    let mut after = match cursor {
        Some((generation, _)) if generation != waitlist.generation => return Err(refused_cursor()),
        cursor => cursor.map(|(_, key)| key),
    };
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let now = crate::world::now();
    let mut listed = Vec::new();
    for _ in 0..LIST_READS {
        let page = app
            .store
            .entry_page(
                &event_id,
                waitlist.generation,
                after.as_deref(),
                limit - listed.len(),
            )
            .await?;
        for entry in page.entries {
            let read = with_offer(app, entry).await?;
            let status = status_now(&read, &waitlist, now);
            if keep.is_none_or(|keep| keep(status)) {
                listed.push((read, status));
            }
        }
        after = page.next;
        if after.is_none() || listed.len() >= limit {
            break;
        }
    }
    let mut entries = Vec::with_capacity(listed.len());
    for (read, status) in &listed {
        entries.push(entry_reply(app, &event_id, read, *status, Reader::Organiser, now).await?);
    }
    let reply = EntryList {
        entries,
        next: after
            .as_deref()
            .map(|key| encode_cursor(waitlist.generation, key)),
    };
    Ok(json(StatusCode::OK, &reply))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RemovalBody {
    entry_id: EntryId,
}

/// `POST /events/{eventId}/waitlist/removals`: the organiser ends an entry
/// (`removed`); again, or once it has ended, the same `200`.
pub async fn remove_entry(app: &App, req: &Request) -> Reply {
    let body: RemovalBody = json_body(req, None)?;
    let event_id = ready_event(app, req).await?;
    let entry = app
        .store
        .read_entry(&event_id, &body.entry_id, true)
        .await?;
    let read = with_offer(app, entry.ok_or(Error::EntryNotFound)?).await?;
    let (read, status) = end(app, &event_id, read, EndReason::Removed).await?;
    let reply = entry_reply(
        app,
        &event_id,
        &read,
        status,
        Reader::Organiser,
        crate::world::now(),
    )
    .await?;
    Ok(json(StatusCode::OK, &reply))
}
