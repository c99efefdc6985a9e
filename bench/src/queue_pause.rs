//! The queue's pause and resume lag, in real time on a small event of its
//! own (part of [`super::queue`]).

use std::time::{Duration, Instant};

use shared::admitter::{Admitter, TICK_MS};
use shared::domain::{EventId, Millis};
use shared::App;

use super::queue_model::{join_queue, put_queue, QueueModel};
use crate::kit::{reply, unique};
use crate::{create_event, HOLD_SECONDS};

/// A small event of its own, sold out of what is available (held) and
/// refilled (one seat dropped), in real time: how long the admitter takes
/// to pause after the last hold, and to admit again after the drop. The
/// seat map follows the table's stream, projected here as often as the
/// dev server does.
pub(super) async fn pause_and_resume(
    endpoint: &str,
    model: QueueModel,
) -> Result<(Option<i64>, Option<i64>), String> {
    let client = local::local_client(endpoint);
    let table = unique("bench-pause");
    local::table::TableSpec::from_repo()
        .map_err(|e| e.to_string())?
        .create(&client, &table)
        .await
        .map_err(|e| e.to_string())?;
    let app = local::apps::app_on(client, &table);
    let event = unique("pause");
    create_event(&app, &event, model.pause_seats, HOLD_SECONDS).await?;
    // Orders opened before the queue (a presale) hold every seat.
    let mut holders = Vec::new();
    for seat in 1..=model.pause_seats {
        let (status, order) =
            reply(&app, "POST", &format!("/events/{event}/orders"), None, "{}").await;
        if status != 201 {
            return Err(format!("create-order: {status} {order}"));
        }
        let (id, token) = (
            order["orderId"].as_str().unwrap_or_default().to_owned(),
            order["holdToken"].as_str().unwrap_or_default().to_owned(),
        );
        holders.push((id, token, seat));
    }
    put_queue(&app, &event, Millis(shared::world::now().0 - 5_000), 600).await?;
    for _ in 0..3 {
        join_queue(&app, &event).await;
    }
    for (id, token, seat) in &holders {
        let (status, body) = reply(
            &app,
            "POST",
            &format!("/orders/{id}/seats/A-1-{seat}"),
            Some(token),
            "",
        )
        .await;
        if status != 200 {
            return Err(format!("get-seat: {status} {body}"));
        }
    }
    let held = Instant::now();
    let admitter_app = local::iam::attributed(&app, "admit-visitors");
    let event_id = EventId::parse(&event).map_err(|e| e.to_string())?;
    let mut admitter = Admitter::default();
    let lag = Lag {
        app: &app,
        admitter_app: &admitter_app,
        event: &event_id,
        endpoint,
    };
    let paused = lag
        .until(&mut admitter, "PAUSED")
        .await?
        .then(|| held.elapsed().as_millis() as i64);
    let (id, token, seat) = &holders[0];
    let (status, body) = reply(
        &app,
        "DELETE",
        &format!("/orders/{id}/seats/A-1-{seat}"),
        Some(token),
        "",
    )
    .await;
    if status != 200 {
        return Err(format!("drop-seat: {status} {body}"));
    }
    let dropped = Instant::now();
    let resumed = lag
        .until(&mut admitter, "OPEN")
        .await?
        .then(|| dropped.elapsed().as_millis() as i64);
    Ok((paused, resumed))
}

/// What the pause scenario's waits share.
struct Lag<'a> {
    app: &'a App,
    admitter_app: &'a App,
    event: &'a EventId,
    endpoint: &'a str,
}

impl Lag<'_> {
    /// Projects the stream and ticks, every [`TICK_MS`], until the queue
    /// is `want` (and, for `OPEN`, admits someone): `false` after 20 s.
    async fn until(&self, admitter: &mut Admitter, want: &str) -> Result<bool, String> {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(20) {
            local::streams::project_now(self.app, self.endpoint).await?;
            tokio::time::sleep(Duration::from_millis(TICK_MS)).await;
            let summary = admitter
                .tick(self.admitter_app, self.event, shared::world::now())
                .await
                .map_err(|e| e.to_string())?;
            if summary.status == want && (want != "OPEN" || summary.admitted > 0) {
                return Ok(true);
            }
        }
        Ok(false)
    }
}
