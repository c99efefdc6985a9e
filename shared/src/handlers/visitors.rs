//! The queue's visitor routes: join-queue and visitor-status. They
//! share a function: the only one that holds the admission signing keys.

use std::sync::Arc;

use lambda_http::http::StatusCode;
use lambda_http::Request;
use serde::{Deserialize, Serialize};

use super::generation::{draw_seed, event_queue, generation_secret, retired_key};
use super::reads::fresh_id;
use super::Reply;
use crate::admission::{AdmissionClaims, ISSUER};
use crate::auth::{HoldTokenKeys, VisitorToken};
use crate::domain::buyer::{BuyerId, Buyers};
use crate::domain::queue::{
    admission_expires_at, drawn_rank, poll_before_opening_ms, poll_spread, queue_rank, QueueRank,
    QueueStatus,
};
use crate::domain::queue_state::{visitor_view, Admission, QueueState, Visitor, VisitorView};
use crate::domain::{EventId, Millis, VisitorId};
use crate::error::Error;
use crate::http::{header, json, json_body, path_param};
use crate::reason::Reason;
use crate::App;

#[derive(Deserialize, Default)]
struct JoinBody {}

/// visitor-status's reply; join-queue's adds `visitorToken` and `joinedAt`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StatusReply<'a> {
    visitor_id: &'a VisitorId,
    event_id: &'a EventId,
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    position: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    estimated_admission_at: Option<String>,
    /// (An addition to the contract) when a waiting visitor should ask
    /// again: sooner as its turn nears.
    #[serde(skip_serializing_if = "Option::is_none")]
    poll_after_seconds: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    admission_token: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    admission_expires_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    visitor_token: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    joined_at: Option<String>,
    /// The buyer whose one place this is (a verified queue).
    #[serde(skip_serializing_if = "Option::is_none")]
    buyer_id: Option<&'a str>,
    /// What its draw key is derived from: the buyer id, else the visitor id.
    draw_id: &'a str,
    /// join-queue's: what the queue committed its draw to.
    #[serde(skip_serializing_if = "Option::is_none")]
    draw_commitment: Option<String>,
    /// Where to join the event's waitlist, while only it sells the event
    /// (the queue reads `WAITLIST` and admits nobody).
    #[serde(skip_serializing_if = "Option::is_none")]
    waitlist: Option<String>,
}

/// The signed token of `admission`, given to `visitor` of `event`: the
/// same claims every time it is asked for.
fn admission_token(
    app: &App,
    event: &EventId,
    visitor: &Visitor,
    admission: &Admission,
) -> Result<String, Error> {
    let keys = app
        .config
        .admission_signing
        .as_ref()
        .ok_or_else(|| Error::Corrupt("ADMISSION_SIGNING_KEYS is not configured".into()))?;
    let issued = admission.given_at.0.div_euclid(1_000);
    keys.sign(&AdmissionClaims {
        iss: ISSUER.into(),
        aud: event.as_str().into(),
        sub: visitor.visitor_id.as_str().into(),
        jti: admission.admission_id.clone(),
        iat: issued,
        nbf: issued,
        exp: admission.expires_at.0.div_euclid(1_000),
        orders: Some(admission.orders_allowed),
        slot: Some(admission.slot_us),
    })
}

/// What a visitor is told, at `now`.
fn status_reply<'a>(
    app: &App,
    event: &'a EventId,
    visitor: &'a Visitor,
    state: &QueueState,
    now: Millis,
) -> Result<StatusReply<'a>, Error> {
    let mut reply = StatusReply {
        visitor_id: &visitor.visitor_id,
        event_id: event,
        status: "WAITING",
        position: None,
        estimated_admission_at: None,
        poll_after_seconds: None,
        admission_token: None,
        admission_expires_at: None,
        visitor_token: None,
        joined_at: None,
        buyer_id: visitor.buyer.as_ref().map(BuyerId::as_str),
        draw_id: visitor.visitor_id.as_str(),
        draw_commitment: None,
        waitlist: (state.status(now) == QueueStatus::Waitlist)
            .then(|| crate::domain::waitlist::entries_path(event)),
    };
    match visitor_view(visitor.rank, visitor.admission.as_ref(), state, now) {
        VisitorView::BeforeOpening { opens_at } => {
            let spread = poll_spread(&visitor.visitor_id);
            let poll_after_ms = poll_before_opening_ms(opens_at, now, spread);
            reply.poll_after_seconds = Some((poll_after_ms + 999) / 1_000);
        }
        VisitorView::Waiting {
            position,
            estimated_at,
            poll_after_ms,
        } => {
            reply.position = position;
            reply.estimated_admission_at = estimated_at.map(Millis::to_rfc3339);
            reply.poll_after_seconds = Some((poll_after_ms + 999) / 1_000);
        }
        VisitorView::Admitted(admission) => {
            reply.status = "ADMITTED";
            reply.admission_token = Some(admission_token(app, event, visitor, admission)?);
            reply.admission_expires_at = Some(admission.expires_at.to_rfc3339());
        }
        VisitorView::Expired => reply.status = "EXPIRED",
        VisitorView::SoldOut => reply.status = "SOLD_OUT",
    }
    Ok(reply)
}

/// The keys visitor tokens are MACs under.
fn visitor_keys(app: &App) -> Result<&HoldTokenKeys, Error> {
    app.config.token_keys()
}

/// Who joins `state`'s queue: a fresh visitor, or in a verified queue the
/// one visitor of the buyer the request's buyer token names (`401`s
/// before anything is written).
fn joiner(
    app: &App,
    req: &Request,
    event_id: &EventId,
    state: &QueueState,
    now: Millis,
) -> Result<(VisitorId, Option<BuyerId>), Error> {
    if state.settings.buyers == Buyers::Anonymous {
        return Ok((fresh_id(VisitorId::parse)?, None));
    }
    let buyer = app
        .config
        .buyer_verify_keys()?
        .buyer_of(req, event_id, now)?;
    let (secrets, version) = generation_secret(app, state)?;
    let visitor = secrets
        .buyer_visitor(&version, event_id, state.generation, &buyer)
        .ok_or_else(retired_key)?;
    Ok((visitor, Some(buyer)))
}

/// `POST /events/{eventId}/queue/visitors`: `201` with a new visitor, or
/// `200` with the buyer's own visitor when a verified queue has it already.
pub async fn join_queue(app: &App, req: &Request) -> Reply {
    let _: JoinBody = json_body(req, Some(JoinBody::default()))?;
    let now = crate::world::now();
    let (event_id, state) = event_queue(app, req, now).await?;
    let (visitor_id, buyer) = joiner(app, req, &event_id, &state, now)?;
    let token = visitor_keys(app)?.visitor_token(&event_id, &visitor_id);
    let seed = draw_seed(app, &event_id, &state)?;
    let mut visitor = Visitor {
        rank: QueueRank::default(),
        visitor_id,
        generation: state.generation,
        joined_at: now,
        token_hash: token.hash(),
        admission: None,
        buyer,
        draw_key: None,
    };
    // A visitor who joins before the opening is drawn: its place is its
    // draw key's; a later one's, its join time's (the draw bits break
    // ties within a millisecond, so random ones do). A generation put
    // before draws existed keeps drawing at random, as it began.
    visitor.rank = match &seed {
        Some(seed) if now < state.settings.opens_at => {
            // The draw id is the visitor id: in a verified queue keyed
            // by the generation's DRAW_SECRET key from the buyer id, so
            // the buyer (told it) and the server can link it to a key
            // of the disclosed list, and nobody guessing buyer ids can.
            let key = seed.key(visitor.visitor_id.as_str());
            visitor.draw_key = Some(key);
            drawn_rank(key.rank_bits())
        }
        _ => queue_rank(now, state.settings.opens_at, crate::world::random_u64()),
    };
    let (visitor, seen, status) = match place(app, &event_id, &state, visitor, now).await? {
        Placed::New(visitor, seen) => {
            crate::metrics::queue_join(visitor.admission.is_some());
            (visitor, seen, StatusCode::CREATED)
        }
        Placed::Existing(visitor) => (visitor, state, StatusCode::OK),
    };
    let mut reply = status_reply(app, &event_id, &visitor, &seen, now)?;
    reply.visitor_token = Some(token.as_str());
    reply.draw_commitment = seed.as_ref().map(|seed| seed.commitment());
    let joined_at = visitor.joined_at.to_rfc3339();
    reply.joined_at = Some(joined_at);
    Ok(json(status, &reply))
}

/// Where a join put its visitor.
enum Placed {
    /// A new visitor, and the queue's state it was placed in (changed
    /// when it was admitted on the spot).
    New(Visitor, Arc<QueueState>),
    /// The buyer's visitor of an earlier join, as stored.
    Existing(Visitor),
}

/// Writes a joiner: admitted on the spot if it may be, else waiting; a
/// write that finds the id taken (a buyer's earlier join) answers with
/// the visitor stored there.
async fn place(
    app: &App,
    event_id: &EventId,
    state: &Arc<QueueState>,
    mut visitor: Visitor,
    now: Millis,
) -> Result<Placed, Error> {
    if let Some(slot) = spot_for(app, event_id, state, now).await {
        let after = state.admitted_on_join(slot);
        visitor.admission = Some(Admission {
            admission_id: fresh_id(|id: &str| Ok(id.to_owned()))?,
            slot_us: slot,
            given_at: now,
            expires_at: admission_expires_at(slot, now, state.settings.admission_seconds),
            orders_allowed: state.settings.orders_per_admission,
        });
        if app
            .store
            .join_admitted(event_id, &visitor, &after, state.version)
            .await?
        {
            let after = Arc::new(after);
            app.memory
                .remember_queue(event_id, now, Some(after.clone()));
            return Ok(Placed::New(visitor, after));
        }
        // The queue moved on, or (a buyer's) the visitor exists already.
        app.memory.refuse_admit_on_join(event_id, state.version);
        visitor.admission = None;
    }
    if app
        .store
        .join_queue(event_id, &visitor, state.visitor_items())
        .await?
    {
        return Ok(Placed::New(visitor, state.clone()));
    }
    if visitor.buyer.is_none() {
        return Err(Error::Corrupt("a fresh visitor id was taken".into()));
    }
    app.store
        .read_visitor_consistent(event_id, &visitor.visitor_id)
        .await?
        .map(Placed::Existing)
        // Taken a moment ago and gone already: only a delete of the
        // queue removes a visitor that soon.
        .ok_or(Error::QueueNotFound)
}

/// The slot of a joiner admitted on the spot, if it may be: the state
/// allows it, this instance has not lost a race over that version, and
/// nobody the admitter has yet to count is waiting (a joiner a moment ago,
/// held back by the spacing, is in the index before it is in the state:
/// admitting this one would put it ahead of them). Finding someone waiting
/// counts as a lost race, so an instance asks the index once per version;
/// so does a failed look (throttled, say): the joiner then simply waits.
async fn spot_for(app: &App, event_id: &EventId, state: &QueueState, now: Millis) -> Option<i64> {
    let slot = state.admits_on_join(now)?;
    if !app.memory.may_admit_on_join(event_id, state.version) {
        return None;
    }
    match app
        .store
        .anyone_waiting(event_id, (state.generation, state.shards))
        .await
    {
        Ok(false) => Some(slot),
        Ok(true) => {
            app.memory.refuse_admit_on_join(event_id, state.version);
            None
        }
        Err(e) => {
            tracing::warn!(event = %event_id, error = %e, "the look for waiting visitors failed; joining without it");
            app.memory.refuse_admit_on_join(event_id, state.version);
            None
        }
    }
}

/// `GET /events/{eventId}/queue/visitors/{visitorId}`
pub async fn visitor_status(app: &App, req: &Request) -> Reply {
    let visitor_id = path_param(req, "visitorId", VisitorId::parse)?;
    let token = VisitorToken::required(
        header(req, "authorization"),
        Reason::VisitorTokenMissing,
        Reason::VisitorTokenMalformed,
    )?;
    let now = crate::world::now();
    let (event_id, state) = match event_queue(app, req, now).await {
        // The queue is gone, and its visitors with it.
        Err(Error::QueueNotFound) => return Err(Error::VisitorNotFound),
        other => other?,
    };
    let visitor = app
        .store
        .read_visitor(&event_id, &visitor_id)
        .await?
        .ok_or(Error::VisitorNotFound)?;
    let keys = visitor_keys(app)?;
    if !token.matches(&visitor.token_hash) && !keys.is_visitor_token(&token, &event_id, &visitor_id)
    {
        return Err(Error::Unauthorized(Reason::VisitorTokenOtherVisitor));
    }
    // A cached state of another generation: the queue was put again
    // a moment ago, or the visitor is of an older one.
    let state = if visitor.generation == state.generation {
        state
    } else {
        app.store
            .read_queue(&event_id)
            .await?
            .and_then(|q| q.state)
            .filter(|q| q.generation == visitor.generation)
            .map(Arc::new)
            .ok_or(Error::VisitorNotFound)?
    };
    let reply = status_reply(app, &event_id, &visitor, &state, now)?;
    Ok(json(StatusCode::OK, &reply))
}
