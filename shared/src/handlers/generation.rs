//! What the queue routes (queue, visitors, draw) share: a route's queue,
//! and the draw secret of its generation (create-event and create-order
//! take `DRAW_SECRET` from here too: buyers' refs are keyed under it). Route files import only from
//! here, `access` and `reads`, never from each other.

use std::sync::Arc;

use lambda_http::Request;

use crate::auth::DrawSecrets;
use crate::domain::draw::DrawSeed;
use crate::domain::queue_state::QueueState;
use crate::domain::{EventId, Millis};
use crate::error::Error;
use crate::http::path_param;
use crate::App;

/// The queue of a route's event: `404 event-not-found`, then
/// `404 queue-not-found`.
pub(super) async fn event_queue(
    app: &App,
    req: &Request,
    now: Millis,
) -> Result<(EventId, Arc<QueueState>), Error> {
    let event_id = path_param(req, "eventId", EventId::parse)?;
    app.event_head(&event_id)
        .await?
        .ok_or(Error::EventNotFound)?;
    let state = app
        .queue(&event_id, now)
        .await?
        .ok_or(Error::QueueNotFound)?;
    Ok((event_id, state))
}

/// The `DRAW_SECRET` keys and the version `state`'s generation was put
/// with. A generation put before draws names none and has no key: every
/// one of those was anonymous (a change of who may join starts a new
/// generation, with a key), so asking for its key is a fault, not a
/// reason to take the current one, which a rotation would change.
pub(super) fn generation_secret<'a>(
    app: &'a App,
    state: &QueueState,
) -> Result<(&'a DrawSecrets, String), Error> {
    if state.draw_secret.is_empty() {
        return Err(Error::Corrupt(
            "this queue generation names no DRAW_SECRET key".into(),
        ));
    }
    Ok((app.config.draw_secrets()?, state.draw_secret.clone()))
}

/// A generation whose `DRAW_SECRET` key left the set (see OPERATIONS.md,
/// "The draw secret": a key stays while a queue put with it lives).
pub(super) fn retired_key() -> Error {
    Error::Corrupt("the DRAW_SECRET key of this queue generation was retired".into())
}

/// The draw seed of `state`'s generation, under the key it was put with;
/// `None` for a generation put before draws existed (its item names no
/// key): its early joiners were ranked at random, with nothing committed,
/// so it has no draw to commit to, disclose or list, whatever keys the set
/// holds now.
pub(super) fn draw_seed(
    app: &App,
    event_id: &EventId,
    state: &QueueState,
) -> Result<Option<DrawSeed>, Error> {
    if state.draw_secret.is_empty() {
        return Ok(None);
    }
    let (secrets, version) = generation_secret(app, state)?;
    secrets
        .seed(&version, event_id, state.generation)
        .map(Some)
        .ok_or_else(retired_key)
}
