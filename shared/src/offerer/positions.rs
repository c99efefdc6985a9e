//! The offerer's updates of open waitlists' positions
//! (`domain::waitlist_positions`): read them, read what was stamped since
//! they settled, count again any merged span the head has drained up to,
//! and write them back over the version read if they changed (then the
//! copies). Each runs as its own task ([`Keeper`]), every
//! [`UPDATE_MS`] per waitlist at most, so a crowd's long read never holds
//! up the tick's visits (an expiry's offer is due within a second). Two
//! offerers at once: the second's write loses and is dropped; its next
//! update reads the first's.

use std::collections::HashMap;
use std::time::Duration;

use tokio::task::{Id, JoinError, JoinSet};

use crate::domain::waitlist_positions::{update_due, Positions};
use crate::domain::{EventId, Millis};
use crate::error::Error;
use crate::store::PositionsWrite;
use crate::App;

/// How long one update may run: the offer-waitlists function waits for
/// those running at the end of its minute, within its timeout.
const UPDATE_TIMEOUT: Duration = Duration::from_secs(8);

/// The updates running, and what each waitlist's last one left.
#[derive(Debug, Default)]
pub(super) struct Keeper {
    running: JoinSet<Option<bool>>,
    /// The waitlist and generation each running task updates.
    tasks: HashMap<Id, (EventId, u64)>,
    kept: HashMap<EventId, Kept>,
    /// No update starts from then on: a run's last ones end within it.
    starts_until: Option<tokio::time::Instant>,
}

#[derive(Debug)]
struct Kept {
    generation: u64,
    last: Option<Millis>,
    running: bool,
    /// A copy may be older than the main item: the next update copies
    /// again even if nothing changed (an instance starts so: the last
    /// writer may have stopped between the main item and its copies).
    copies_behind: bool,
}

impl Kept {
    fn new(generation: u64) -> Self {
        Self {
            generation,
            last: None,
            running: false,
            copies_behind: true,
        }
    }
}

impl Keeper {
    /// Starts an update of `event`'s generation `generation` if one is due
    /// at `now` and none is running.
    pub(super) fn start_if_due(
        &mut self,
        app: &App,
        event: &EventId,
        generation: u64,
        now: Millis,
    ) {
        self.reap();
        let late = self
            .starts_until
            .is_some_and(|until| tokio::time::Instant::now() >= until);
        let kept = self
            .kept
            .entry(event.clone())
            .or_insert_with(|| Kept::new(generation));
        if kept.generation != generation {
            *kept = Kept::new(generation);
        }
        if late || kept.running || !update_due(kept.last, now) {
            return;
        }
        kept.running = true;
        kept.last = Some(now);
        let (app, task_event, behind) = (app.clone(), event.clone(), kept.copies_behind);
        let task = self.running.spawn(async move {
            let update = update_positions(&app, &task_event, generation, now, behind);
            match tokio::time::timeout(UPDATE_TIMEOUT, update).await {
                Ok(Ok(copies)) => Some(copies),
                Ok(Err(e)) => {
                    tracing::warn!(event = %task_event, error = %crate::error::chain(&e), "a waitlist's positions were not updated");
                    None
                }
                Err(_) => {
                    tracing::warn!(event = %task_event, "a waitlist's positions update ran out of time");
                    None
                }
            }
        });
        self.tasks.insert(task.id(), (event.clone(), generation));
    }

    /// Starts no update from [`UPDATE_TIMEOUT`] before `end` on: each runs
    /// that long at most, so a run's last ones finish within it.
    pub(super) fn start_none_after(&mut self, end: tokio::time::Instant) {
        self.starts_until = Some(end.checked_sub(UPDATE_TIMEOUT).unwrap_or(end));
    }

    /// Forgets the waitlists `open` no longer names (a delete, or closed).
    pub(super) fn keep_only(&mut self, open: impl Fn(&EventId) -> bool) {
        self.kept.retain(|event, kept| kept.running || open(event));
    }

    /// Takes in the updates that have finished.
    fn reap(&mut self) {
        while let Some(done) = self.running.try_join_next_with_id() {
            self.record(done);
        }
    }

    /// Waits for every update running: a test's tick, and the end of a run.
    pub(super) async fn finish(&mut self) {
        while let Some(done) = self.running.join_next_with_id().await {
            self.record(done);
        }
    }

    fn record(&mut self, done: Result<(Id, Option<bool>), JoinError>) {
        let (id, outcome) = match done {
            Ok((id, outcome)) => (id, outcome),
            Err(e) => {
                tracing::warn!(error = %e, "a waitlist's positions update failed");
                (e.id(), None)
            }
        };
        let Some((event, generation)) = self.tasks.remove(&id) else {
            return;
        };
        // An update of a generation since replaced says nothing of this one.
        let kept = self.kept.get_mut(&event);
        let Some(kept) = kept.filter(|k| k.generation == generation) else {
            return;
        };
        kept.running = false;
        // A failed update may have stopped anywhere, between the main item
        // and its copies too: copy again next time.
        kept.copies_behind = outcome.is_none_or(|copies| !copies);
    }
}

/// Updates generation `generation`'s positions of `event` at `now`
/// (`copies_behind`: copy them even if nothing changed): whether every
/// copy has them now.
async fn update_positions(
    app: &App,
    event: &EventId,
    generation: u64,
    now: Millis,
    copies_behind: bool,
) -> Result<bool, Error> {
    let stored = app.store.read_positions(event, generation, None).await?;
    let (kept, version) = match stored {
        Some(stored) => (stored.positions, Some(stored.version)),
        None => (Positions::default(), None),
    };
    let since = app
        .store
        .stamped_since(event, generation, kept.settled_until)
        .await?;
    let mut next = kept.update(&since, now);
    // Best effort: a recount that fails leaves its span merged until the
    // next update, and the count goes on.
    for span in next.to_recount() {
        let as_of = next.settled_until;
        match app
            .store
            .waiting_by_second(event, generation, span, as_of)
            .await
        {
            Ok(seconds) => next = next.recounted(span.0, span.1, &seconds),
            Err(e) => {
                tracing::warn!(event = %event, error = %crate::error::chain(&e), "a merged span of a waitlist's positions was not counted again");
                break;
            }
        }
    }
    match version {
        // Nothing new (only `settled_until` would move): no write; the
        // next update reads from the older instant, which is as right.
        Some(version)
            if next.settled == kept.settled
                && next.recent == kept.recent
                && next.offers == kept.offers =>
        {
            Ok(!copies_behind
                || app
                    .store
                    .copy_positions(event, generation, &kept, version)
                    .await)
        }
        _ => {
            let write = app.store.write_positions(event, generation, &next, version);
            Ok(match write.await? {
                PositionsWrite::Written { copies } => copies,
                // The other writer's copies are its own: copy at the next
                // update all the same, in case it stopped before them.
                PositionsWrite::Lost => false,
            })
        }
    }
}
