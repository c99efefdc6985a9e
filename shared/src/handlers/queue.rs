//! The queue's operator routes: put-queue, get-queue, delete-queue;
//! and the admission keys (the JWKS), which anyone may read.

use lambda_http::http::StatusCode;
use lambda_http::Request;
use serde::{Deserialize, Serialize};

use super::generation::{draw_seed, event_queue};
use super::reads::{ended_reply, ready_event};
use super::Reply;
use crate::domain::buyer::Buyers;
use crate::domain::draw::{is_disclosed, DrawSeed};
use crate::domain::queue::{QueueSettings, QueueStatus};
use crate::domain::queue_life::{generation_end, latest_opening, MAX_OPENS_AHEAD_MS};
use crate::domain::queue_state::{settings_after_put, QueueState};
use crate::domain::{EventId, Millis};
use crate::error::Error;
use crate::http::{cacheable_json, json, json_body};
use crate::retry::{Rounds, QUEUE_WRITE_ROUNDS};
use crate::App;

/// The JWKS may be cached this long (DESIGN.md): a new key is added to the
/// verify set before it signs, so a cached set always covers it.
const JWKS_MAX_AGE_SECONDS: u32 = 300;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PutQueueBody {
    opens_at: String,
    admit_per_minute: u32,
    #[serde(default)]
    admission_seconds: Option<u32>,
    #[serde(default)]
    orders_per_admission: Option<u32>,
    /// `anonymous` or `verified`; left out, a new queue is anonymous and
    /// an existing one keeps its own.
    #[serde(default)]
    buyers: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct QueueReply<'a> {
    event_id: &'a EventId,
    opens_at: String,
    admit_per_minute: u32,
    admission_seconds: u32,
    orders_per_admission: u32,
    buyers: &'static str,
    status: &'static str,
    waiting: u64,
    admitted: u64,
    generation: u64,
    /// Drawn visitors the admitter first saw after someone drawn behind
    /// them had a slot (0 when the join index kept up).
    late_drawn: u64,
    /// Absent on a generation put before draws existed (`draw_seed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    draw_commitment: Option<String>,
    /// From the opening plus 5 s on.
    #[serde(skip_serializing_if = "Option::is_none")]
    draw_seed: Option<String>,
}

fn queue_reply(app: &App, event_id: &EventId, state: &QueueState, now: Millis) -> Reply {
    let q = &state.settings;
    let seed = draw_seed(app, event_id, state)?;
    Ok(json(
        StatusCode::OK,
        &QueueReply {
            event_id,
            opens_at: q.opens_at.to_rfc3339(),
            admit_per_minute: q.admit_per_minute,
            admission_seconds: q.admission_seconds,
            orders_per_admission: q.orders_per_admission,
            buyers: q.buyers.as_str(),
            status: state.status(now).as_str(),
            waiting: state.waiting,
            admitted: state.admitted,
            generation: state.generation,
            late_drawn: state.late_drawn,
            draw_commitment: seed.as_ref().map(DrawSeed::commitment),
            draw_seed: seed
                .filter(|_| is_disclosed(q.opens_at, now))
                .map(|seed| seed.disclosed()),
        },
    ))
}

/// A new generation of a queue, its draw committed under the current
/// `DRAW_SECRET` key, its visitors spread over `QUEUE_SHARDS` shards.
fn new_generation(
    app: &App,
    generation: u64,
    settings: QueueSettings,
    now: Millis,
) -> Result<QueueState, Error> {
    Ok(QueueState {
        draw_secret: app.config.draw_secrets()?.current_version(),
        shards: app.config.queue_shards,
        ends_at: Some(generation_end(now)),
        ..QueueState::new(generation, settings)
    })
}

/// A put's state, if its opening is within its generation's life
/// ([`latest_opening`]); else `400`.
fn within_life(state: QueueState) -> Result<QueueState, Error> {
    match state.ends_at.map(latest_opening) {
        Some(latest) if state.settings.opens_at > latest => Err(Error::BadRequest(format!(
            "opensAt must be at most {} days after the queue was first put (by {})",
            MAX_OPENS_AHEAD_MS / 86_400_000,
            latest.to_rfc3339()
        ))),
        _ => Ok(state),
    }
}

/// put-queue's `buyers`, if given, or a `400`.
fn buyers_of(body: &PutQueueBody) -> Result<Option<Buyers>, Error> {
    body.buyers
        .as_deref()
        .map(|b| {
            Buyers::parse(b).ok_or_else(|| {
                Error::BadRequest("buyers must be \"anonymous\" or \"verified\"".into())
            })
        })
        .transpose()
}

/// put-queue's body as settings (anonymous until [`put_buyers`] says),
/// or a `400` naming what is wrong.
fn settings_of(body: &PutQueueBody) -> Result<QueueSettings, Error> {
    let opens_at = chrono::DateTime::parse_from_rfc3339(&body.opens_at)
        .map_err(|_| Error::BadRequest("opensAt must be an RFC 3339 time".into()))?;
    QueueSettings::new(
        Millis::from(opens_at.with_timezone(&chrono::Utc)),
        body.admit_per_minute,
        body.admission_seconds,
        body.orders_per_admission,
    )
    .map_err(Error::BadRequest)
}

/// `PUT /events/{eventId}/queue`
pub async fn put_queue(app: &App, req: &Request) -> Reply {
    let body: PutQueueBody = json_body(req, None)?;
    let settings = settings_of(&body)?.with_draw_settle_ms(app.config.draw_settle_ms);
    let buyers = buyers_of(&body)?;
    let event_id = ready_event(app, req).await?;
    let mut rounds = Rounds::new("put-queue", QUEUE_WRITE_ROUNDS);
    while rounds.next().await.is_some() {
        let now = crate::world::now();
        let stored = app.store.read_queue(&event_id).await?;
        let state = match stored.as_ref() {
            Some(stored) => match stored.state.as_ref().filter(|old| !old.has_ended(now)) {
                Some(old) => {
                    let buyers = put_buyers(app, &event_id, old, buyers, now).await?;
                    let settings =
                        settings_after_put(Some(&old.settings), settings.with_buyers(buyers), now)
                            .ok_or(Error::QueueOpen)?;
                    if buyers == old.settings.buyers {
                        old.put(settings)
                    } else {
                        // Who may join changed: a new generation, so a join
                        // that slipped past the check under the old rule
                        // (an instance's cached state, an index entry not
                        // shown yet) stays in the old one, gone with it.
                        QueueState {
                            version: old.version + 1,
                            ..new_generation(app, old.generation + 1, settings, now)?
                        }
                    }
                }
                // A queue put again after a delete, or after its
                // generation ended, starts empty.
                None => QueueState {
                    version: stored.version + 1,
                    ..new_generation(
                        app,
                        stored.generation + 1,
                        settings.with_buyers(buyers.unwrap_or_default()),
                        now,
                    )?
                },
            },
            None => new_generation(
                app,
                1,
                settings.with_buyers(buyers.unwrap_or_default()),
                now,
            )?,
        };
        let state = within_life(state)?;
        let previous = stored.as_ref().map(|s| s.version);
        if app.store.put_queue(&event_id, &state, previous).await? {
            app.memory
                .remember_queue(&event_id, now, Some(std::sync::Arc::new(state.clone())));
            return queue_reply(app, &event_id, &state, now);
        }
    }
    Err(rounds.spent())
}

/// Who may join `old` after a put asking for `asked` (`None`: as now).
/// A change is `409 queue-open` unless the queue is still `SCHEDULED` and
/// nobody has joined: not counted, nobody admitted, and nobody in the join
/// index. A join that slips past (the index's last second or so, or an
/// instance's state from before this put) lands in the generation the
/// change leaves behind (docs/DESIGN.md, "Who may join").
async fn put_buyers(
    app: &App,
    event_id: &EventId,
    old: &QueueState,
    asked: Option<Buyers>,
    now: Millis,
) -> Result<Buyers, Error> {
    let current = old.settings.buyers;
    let Some(asked) = asked.filter(|a| *a != current) else {
        return Ok(current);
    };
    let untouched = old.status(now) == QueueStatus::Scheduled
        && old.waiting == 0
        && old.admitted == 0
        && !app
            .store
            .anyone_waiting(event_id, (old.generation, old.shards))
            .await?;
    untouched.then_some(asked).ok_or(Error::QueueOpen)
}

/// `GET /events/{eventId}/queue`
pub async fn get_queue(app: &App, req: &Request) -> Reply {
    let now = crate::world::now();
    let (event_id, state) = event_queue(app, req, now).await?;
    queue_reply(app, &event_id, &state, now)
}

/// `DELETE /events/{eventId}/queue`: the same `200` when there is none.
pub async fn delete_queue(app: &App, req: &Request) -> Reply {
    let event_id = ready_event(app, req).await?;
    let removed = ended_reply(&event_id, "REMOVED");
    let mut rounds = Rounds::new("delete-queue", QUEUE_WRITE_ROUNDS);
    while rounds.next().await.is_some() {
        let now = crate::world::now();
        let stored = match app.store.read_queue(&event_id).await? {
            Some(stored) if stored.state.is_some() => stored,
            _ => {
                app.memory.remember_queue(&event_id, now, None);
                return Ok(removed);
            }
        };
        if app.store.remove_queue(&event_id, &stored).await? {
            app.memory.remember_queue(&event_id, now, None);
            return Ok(removed);
        }
    }
    Err(rounds.spent())
}

/// `GET /.well-known/jwks.json`: every key admissions may be signed with.
pub async fn admission_keys(app: &App, _req: &Request) -> Reply {
    let keys = app
        .config
        .admission_verify
        .as_ref()
        .ok_or_else(|| Error::Corrupt("ADMISSION_VERIFY_KEYS is not configured".into()))?;
    Ok(cacheable_json(&keys.jwks(), JWKS_MAX_AGE_SECONDS, false))
}
