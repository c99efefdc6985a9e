//! What the waitlist's entry routes share, the buyer's and the
//! organiser's: an entry's status as it reads now, its reply, and its end
//! (a leave's, a removal's).

use serde::Serialize;

use crate::domain::waitlist::{entry_status_at, EndReason, EntryStatus, Waitlist};
use crate::domain::waitlist_entry::{ending, Ending, Entry};
use crate::domain::{EntryId, EventId, Millis, SectionId};
use crate::error::Error;
use crate::retry::{Rounds, QUEUE_WRITE_ROUNDS};
use crate::App;

/// How soon a waiting entry's holder should ask again: what it is told
/// lags by up to this much anyway (API.md, "Entries").
const WAITING_POLL_SECONDS: u32 = 5;

/// An entry as its status route answers it; join adds `entryToken`, and
/// the organiser's list leaves it out.
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
    #[serde(skip_serializing_if = "Option::is_none")]
    poll_after_seconds: Option<u32>,
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

/// `entry`'s status at `now`, computed where no write is needed.
pub(super) fn status_now(entry: &Entry, waitlist: &Waitlist, now: Millis) -> EntryStatus {
    entry_status_at(entry.stored, None, generation_ended(waitlist, entry), now)
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

/// The reply of `entry` of `event` at `status`.
pub(super) fn entry_reply<'a>(
    event: &'a EventId,
    entry: &'a Entry,
    status: EntryStatus,
) -> EntryReply<'a> {
    EntryReply {
        entry_id: &entry.entry_id,
        event_id: event,
        buyer_id: entry.buyer.as_str(),
        status: status.as_str(),
        quantity: entry.request.quantity,
        section_ids: &entry.request.section_ids,
        together: entry.request.together,
        wheelchair: entry.request.wheelchair,
        joined_at: entry.joined_at.to_rfc3339(),
        poll_after_seconds: (status == EntryStatus::Waiting).then_some(WAITING_POLL_SECONDS),
        reason: status.reason().map(|r| r.as_str()),
        entry_token: None,
    }
}

/// Ends `entry` for `reason` if it is waiting, and returns it as it is
/// after, with its status: ended by this call, or as it stood (a write
/// that finds it no longer waiting reads it again). The waitlist is read
/// strongly consistently: a waiting entry of a generation deleted a
/// moment ago reads `closed`, and nothing is written.
pub(super) async fn end(
    app: &App,
    event: &EventId,
    mut entry: Entry,
    reason: EndReason,
) -> Result<(Entry, EntryStatus), Error> {
    let mut rounds = Rounds::new("end-entry", QUEUE_WRITE_ROUNDS);
    while rounds.next().await.is_some() {
        let now = crate::world::now();
        let waitlist = stored_waitlist(app, event).await?;
        let status = status_now(&entry, &waitlist, now);
        let Ending::End(reason) = ending(status, reason) else {
            return Ok((entry, status));
        };
        if app.store.end_entry(event, &entry, reason, now).await? {
            entry.stored = EntryStatus::Ended(reason);
            return Ok((entry, EntryStatus::Ended(reason)));
        }
        // Ended or moved meanwhile: read it again.
        let again = app.store.read_entry(event, &entry.entry_id, true).await?;
        entry = again.ok_or(Error::EntryNotFound)?;
        rounds.lost();
    }
    Err(rounds.spent())
}
