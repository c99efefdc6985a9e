//! The waitlist's operator routes: put-waitlist, get-waitlist and
//! delete-waitlist (API.md, "The waitlist"). Entries and offers come with
//! their own routes.

use lambda_http::http::StatusCode;
use lambda_http::Request;
use serde::{Deserialize, Deserializer, Serialize};

use super::opening::{open_if_sold_out, Look};
use super::reads::{ended_reply, ready_event};
use super::Reply;
use crate::domain::waitlist::{waitlist_after_put, Opens, PutRefusal, Waitlist, WaitlistPut};
use crate::domain::{EventId, EventRef, Millis};
use crate::error::Error;
use crate::http::{json, json_body, path_param};
use crate::retry::{Rounds, QUEUE_WRITE_ROUNDS};
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

/// The waitlist as get-waitlist and put-waitlist answer it, with
/// `unoffered` free units. The entries' counts are 0: none can join yet.
fn waitlist_reply(event_id: &EventId, waitlist: &Waitlist, unoffered: u64) -> Reply {
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
            waiting: 0,
            offered: 0,
            purchased: 0,
            unoffered,
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
            .put_waitlist(&event_id, &waitlist, previous)
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
            return waitlist_reply(&event_id, &waitlist, unoffered(app, &event_id).await?);
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
    waitlist_reply(
        &event_id,
        &stored.waitlist,
        unoffered(app, &event_id).await?,
    )
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
            .put_waitlist(&event_id, &waitlist, Some(stored.version))
            .await?
        {
            return Ok(ended);
        }
        rounds.lost();
    }
    Err(rounds.spent())
}
