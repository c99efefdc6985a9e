//! The waitlist's state item (`WAITLIST#{ref}`): its key, its attribute
//! names, its codec and its expression.

use std::collections::HashMap;

use sha2::{Digest, Sha256};

use crate::domain::waitlist::{Opens, Waitlist, WaitlistSettings};
use crate::domain::{EventId, EventRef, Millis};
use crate::store::errors::StoreError;
use crate::store::schema::{EVENT_ID, KIND, PK, SK, VERSION};
use crate::store::value::{n, s, Fields, Item};

pub const WAITLIST_PK_PREFIX: &str = "WAITLIST#";

const WAITLIST_SK: &str = "WAITLIST";

/// The waitlist's state, as put and deleted: `WAITLIST#{ref}`.
pub(in crate::store) fn waitlist_key(event: &EventRef) -> Item {
    HashMap::from([
        (PK.into(), s(waitlist_pk(event))),
        (SK.into(), s(WAITLIST_SK)),
    ])
}

/// The main item's partition key (a copy's adds `#{copy}`).
pub(in crate::store) fn waitlist_pk(event: &EventRef) -> String {
    format!("{WAITLIST_PK_PREFIX}{event}")
}

/// Whether `pk`, a waitlist state's key, is one of its copies' (an event's
/// reference has no `#`; a copy's key adds one).
pub(in crate::store) fn is_copy_pk(pk: &str) -> bool {
    pk.strip_prefix(WAITLIST_PK_PREFIX)
        .is_some_and(|rest| rest.contains('#'))
}

/// The instants a write of the state may carry, latest kind first: the
/// time its events out (opened, closed) happened.
pub(in crate::store) const WAITLIST_TIMES: [&str; 2] = [ENDED_AT, OPENED_AT];

/// Copy `copy` of the waitlist's state: `WAITLIST#{ref}#{copy}`. The
/// sale's gate reads these, one per instance about once a second, as it
/// reads the queue's: the same readers at the same pace, so as many
/// copies ([`super::queue::QUEUE_COPIES`]), and an instance reads the same copy number
/// of both.
pub(in crate::store) fn waitlist_copy_key(event: &EventRef, copy: u8) -> Item {
    HashMap::from([
        (PK.into(), s(format!("{}#{copy}", waitlist_pk(event)))),
        (SK.into(), s(WAITLIST_SK)),
    ])
}

/// The copy a write for `id` (an entry's offer, an order's listing)
/// checks, from its hash (its second byte: an entry's first picks its
/// shard): writes for different ids spread over the copies rather than
/// all take part in one item (DynamoDB refuses a transaction while
/// another is in flight on any of its items).
pub(in crate::store) fn copy_for(id: &str) -> u8 {
    Sha256::digest(id.as_bytes())[1] % super::queue::QUEUE_COPIES
}

const GENERATION: &str = "generation";
const OPENS: &str = "opens";
const OFFER_SECONDS: &str = "offerSeconds";
const MAX_QUANTITY: &str = "maxQuantity";
/// Absent: no returns.
const RETURNS_CLOSE_AT: &str = "returnsCloseAt";
/// When returns last closed early: listings before it have reverted.
const RETURNS_REVERTED_AT: &str = "returnsRevertedAt";
/// Absent: not open yet.
const OPENED_AT: &str = "openedAt";
/// Absent: not deleted.
const ENDED_AT: &str = "endedAt";

/// A waitlist as read: its event, the generation and the version it was
/// read at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredWaitlist {
    pub event_id: EventId,
    pub waitlist: Waitlist,
    pub version: i64,
}

/// The item of `waitlist` at `version`, at `key` (the main item or a copy).
pub(in crate::store) fn waitlist_item(
    key: Item,
    event: &EventId,
    waitlist: &Waitlist,
    version: i64,
) -> Item {
    let mut item = key;
    let settings = &waitlist.settings;
    item.extend([
        (KIND.into(), s("waitlist")),
        (EVENT_ID.into(), s(event.as_str())),
        (VERSION.into(), n(version)),
        (GENERATION.into(), n(waitlist.generation)),
        (OPENS.into(), s(settings.opens.as_str())),
        (OFFER_SECONDS.into(), n(settings.offer_seconds)),
        (MAX_QUANTITY.into(), n(settings.max_quantity)),
    ]);
    let times = [
        (RETURNS_CLOSE_AT, settings.returns_close_at),
        (OPENED_AT, waitlist.opened_at),
        (ENDED_AT, waitlist.ended_at),
        (RETURNS_REVERTED_AT, waitlist.returns_reverted_at),
    ];
    item.extend(
        times
            .into_iter()
            .filter_map(|(attr, at)| at.map(|at| (attr.to_owned(), n(at.0)))),
    );
    item
}

/// The waitlist an item holds.
pub(in crate::store) fn parse_waitlist(item: &Item) -> Result<StoredWaitlist, StoreError> {
    let f = Fields::new(item);
    let generation = u64::try_from(f.i64(GENERATION)?).map_err(|_| f.malformed(GENERATION))?;
    let opens = Opens::parse(f.str(OPENS)?).ok_or_else(|| f.malformed(OPENS))?;
    let at = |attr| f.opt_i64(attr).map(|at| at.map(Millis));
    let event_id = EventId::parse(f.str(EVENT_ID)?).map_err(|_| f.malformed(EVENT_ID))?;
    Ok(StoredWaitlist {
        event_id,
        waitlist: Waitlist {
            generation,
            settings: WaitlistSettings {
                opens,
                offer_seconds: f.u32(OFFER_SECONDS)?,
                max_quantity: f.u32(MAX_QUANTITY)?,
                returns_close_at: at(RETURNS_CLOSE_AT)?,
            },
            opened_at: at(OPENED_AT)?,
            ended_at: at(ENDED_AT)?,
            returns_reverted_at: at(RETURNS_REVERTED_AT)?,
        },
        version: f.i64(VERSION)?,
    })
}

// ----- expressions ---------------------------------------------------------

/// An offer's check on a copy of the waitlist's state: still generation
/// `generation`, open and not deleted (a delete or a new generation during
/// a look makes its offer lose). Names: `#generation`, `#openedAt`,
/// `#endedAt`; values: `:generation`.
pub(in crate::store) fn offering(generation: u64) -> crate::store::expression::Expression {
    crate::store::expression::Expression::condition(
        "#generation = :generation AND attribute_exists(#openedAt) AND attribute_not_exists(#endedAt)",
    )
    .name("#generation", GENERATION)
    .name("#openedAt", OPENED_AT)
    .name("#endedAt", ENDED_AT)
    .value(":generation", n(generation))
}

/// The offerer's check before it takes a deleted waitlist off its
/// registry: still generation `generation`, deleted.
pub(in crate::store) fn ended(generation: u64) -> crate::store::expression::Expression {
    crate::store::expression::Expression::condition(
        "#generation = :generation AND attribute_exists(#endedAt)",
    )
    .name("#generation", GENERATION)
    .name("#endedAt", ENDED_AT)
    .value(":generation", n(generation))
}

/// A listing's check on a copy of the waitlist's state: still generation
/// `generation`, open, not deleted, and taking returns after `now`.
pub(in crate::store) fn taking_returns(
    generation: u64,
    now: Millis,
) -> crate::store::expression::Expression {
    offering(generation)
        .and(crate::store::expression::Expression::condition(
            "#returnsCloseAt > :now",
        ))
        .name("#returnsCloseAt", RETURNS_CLOSE_AT)
        .value(":now", n(now.0))
}

/// An offer of listed seats' check on a copy of the waitlist's state: listings
/// of `generation` made at `listed_at` (the earliest of the offer's) still
/// read listed at `now`: the generation open, before its cutoff, and no
/// put closed returns after they were listed.
pub(in crate::store) fn keeping_listings(
    generation: u64,
    listed_at: Millis,
    now: Millis,
) -> crate::store::expression::Expression {
    taking_returns(generation, now)
        .and(crate::store::expression::Expression::condition(
            "(attribute_not_exists(#revertedAt) OR #revertedAt <= :listedAt)",
        ))
        .name("#revertedAt", RETURNS_REVERTED_AT)
        .value(":listedAt", n(listed_at.0))
}

/// The waitlist item as it was read (a whole-item write's condition).
pub(in crate::store) use super::as_read;
/// A copy written only over an older one.
pub(in crate::store) use super::older_copy;
