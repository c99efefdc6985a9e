//! The tick's update of an open waitlist's positions
//! (`domain::waitlist_positions`): read them, read what was stamped since
//! they settled, write them back over the version read if they changed.
//! Two offerers at once: the second's write loses and is dropped; its
//! next update reads the first's.

use crate::domain::waitlist_positions::Positions;
use crate::domain::{EventId, Millis};
use crate::error::Error;
use crate::App;

/// Updates generation `generation`'s positions of `event` at `now`:
/// whether it wrote them.
pub(super) async fn update_positions(
    app: &App,
    event: &EventId,
    generation: u64,
    now: Millis,
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
    let next = kept.update(&since, now);
    // Nothing new (only `settled_until` would move): no write. The next
    // update reads from the older instant, which is as right.
    if version.is_some() && next.settled == kept.settled && next.recent == kept.recent {
        return Ok(false);
    }
    app.store
        .write_positions(event, generation, &next, version)
        .await
}
