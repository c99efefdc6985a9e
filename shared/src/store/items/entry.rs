//! A waitlist's entries: the entry (`WENTRY#{ref}#{entryId}`), its
//! buyer's record of it (`WBUYER#…`), its place in the organiser's list
//! (`WLIST#…`) and in each index it waits in (`WINDEX#…`): their keys,
//! attribute names, codec and expressions. Every one is a base-table item
//! written in the join's transaction, so a strongly consistent read sees
//! a join the moment it is answered (an index's head included).

use std::collections::HashMap;

use sha2::{Digest, Sha256};

use crate::domain::buyer::BuyerId;
use crate::domain::buyer_limit::{BuyerRef, LimitedBuyer};
use crate::domain::waitlist::{EndReason, EntryRequest, EntryStatus};
use crate::domain::waitlist_entry::{Entry, WaitingIndex};
use crate::domain::{EntryId, EventId, EventRef, Millis, OrderId, SectionId};
use crate::store::errors::StoreError;
use crate::store::expression::Expression;
use crate::store::schema::{EVENT_ID, KIND, PK, SK};
use crate::store::value::{n, s, Fields, Item};
use aws_sdk_dynamodb::types::AttributeValue;

pub const ENTRY_PK_PREFIX: &str = "WENTRY#";
pub const ENTRY_BUYER_PK_PREFIX: &str = "WBUYER#";
pub const ENTRY_LIST_PK_PREFIX: &str = "WLIST#";
pub const WAITING_INDEX_PK_PREFIX: &str = "WINDEX#";

/// Each index, and the organiser's list, is spread over this many
/// partitions: a crowd joining at once asking alike (one seat, any
/// section) writes one index, and one partition takes about 1,000 writes
/// a second (a transaction's write counts twice). Whoever reads an
/// index's head reads one item of each.
pub const ENTRY_SHARDS: u8 = 4;

/// An entry: `WENTRY#{ref}#{entryId}`.
pub(in crate::store) fn entry_key(event: &EventRef, entry: &EntryId) -> Item {
    HashMap::from([
        (PK.into(), s(format!("{ENTRY_PK_PREFIX}{event}#{entry}"))),
        (SK.into(), s("ENTRY")),
    ])
}

/// A buyer's record of its entry in generation `generation`:
/// `WBUYER#{ref}#{generation}#{buyer's plain ref}`. One per buyer and
/// generation, so a conditional write of it makes one live entry.
pub(in crate::store) fn entry_buyer_key(event: &EventId, generation: u64, buyer: &BuyerId) -> Item {
    let buyer = BuyerRef::unkeyed(event, buyer);
    let event = EventRef::of(event);
    HashMap::from([
        (
            PK.into(),
            s(format!(
                "{ENTRY_BUYER_PK_PREFIX}{event}#{generation}#{}",
                buyer.as_str()
            )),
        ),
        (SK.into(), s("WBUYER")),
    ])
}

/// An entry's shard, from its id's hash.
pub(in crate::store) fn entry_shard(entry: &EntryId) -> u8 {
    Sha256::digest(entry.as_str().as_bytes())[0] % ENTRY_SHARDS
}

/// The copy of the waitlist's state an offer to `entry` checks: every
/// write of the state writes every copy in its transaction, so a copy's
/// check is the main item's.
pub(in crate::store) fn entry_copy(entry: &EntryId) -> u8 {
    crate::store::items::waitlist::copy_for(entry.as_str())
}

/// The order of joins, as text: the join instant (13 digits) then the id.
pub(in crate::store) fn join_key(joined_at: Millis, entry: &EntryId) -> String {
    format!("{:013}#{entry}", joined_at.0.max(0))
}

/// A join key's instant and entry (`None`: not one). A departure's key
/// has the same form: its instant, then the entry.
pub fn parse_join_key(text: &str) -> Option<(Millis, EntryId)> {
    let (at, entry) = text.split_once('#')?;
    if at.len() != 13 || !at.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((Millis(at.parse().ok()?), EntryId::parse(entry).ok()?))
}

/// Whether `text` is a join key (what a page of the organiser's list
/// continues after).
pub fn is_join_key(text: &str) -> bool {
    parse_join_key(text).is_some()
}

/// The partition of the organiser's list: `WLIST#{ref}#{generation}#{shard}`.
pub(in crate::store) fn entry_list_pk(event: &EventRef, generation: u64, shard: u8) -> String {
    format!("{ENTRY_LIST_PK_PREFIX}{event}#{generation}#{shard}")
}

/// The partition of an index: `WINDEX#{ref}#{generation}#{label}#{shard}`.
pub(in crate::store) fn waiting_index_pk(
    event: &EventRef,
    generation: u64,
    index: &WaitingIndex,
    shard: u8,
) -> String {
    format!(
        "{WAITING_INDEX_PK_PREFIX}{event}#{generation}#{}#{shard}",
        index.label()
    )
}

/// Every partition of one index of `event`'s generation `generation`: what
/// the test harness reads raw, to see an entry's places come and go.
pub fn waiting_index_partitions(
    event: &EventId,
    generation: u64,
    index: &WaitingIndex,
) -> Vec<String> {
    let event = EventRef::of(event);
    (0..ENTRY_SHARDS)
        .map(|shard| waiting_index_pk(&event, generation, index, shard))
        .collect()
}

/// The item at `pk` and the entry's join key, naming the entry.
fn pointer(pk: String, entry: &Entry) -> Item {
    HashMap::from([
        (PK.into(), s(pk)),
        (SK.into(), s(join_key(entry.joined_at, &entry.entry_id))),
        (ENTRY_ID.into(), s(entry.entry_id.as_str())),
    ])
}

/// The entry's place in the organiser's list.
pub(in crate::store) fn list_item(event: &EventRef, entry: &Entry) -> Item {
    let shard = entry_shard(&entry.entry_id);
    pointer(entry_list_pk(event, entry.generation, shard), entry)
}

/// The key of the entry's place in the organiser's list.
pub(in crate::store) fn list_key(event: &EventRef, entry: &Entry) -> Item {
    let mut key = list_item(event, entry);
    key.remove(ENTRY_ID);
    key
}

/// On a list place: when its entry left WAITING (absent: it has not). A
/// recount of a span of the list counts the entries waiting as of an
/// instant from it (`store::positions`).
pub(in crate::store) const LEFT_AT: &str = "leftAt";

/// A list place marked as its entry leaving WAITING at `at` (the place is
/// there: the join wrote it). Names: `#leftAt`, `#pk`; values: `:leftAt`.
pub(in crate::store) fn left_list(at: Millis) -> Expression {
    Expression::update("SET #leftAt = :leftAt")
        .name("#leftAt", LEFT_AT)
        .value(":leftAt", n(at.0))
        .and(Expression::condition("attribute_exists(#pk)").name("#pk", PK))
}

/// The keys of the entry's places in the indexes it waits in.
pub(in crate::store) fn index_keys(event: &EventRef, entry: &Entry) -> Vec<Item> {
    let shard = entry_shard(&entry.entry_id);
    crate::domain::waitlist_entry::entry_indexes(&entry.request)
        .iter()
        .map(|index| {
            let mut item = pointer(
                waiting_index_pk(event, entry.generation, index, shard),
                entry,
            );
            item.remove(ENTRY_ID);
            item
        })
        .collect()
}

/// What a join writes: the buyer's record naming the entry, and the
/// entry's own items (the entry, its list place, its index places), each
/// new.
pub(in crate::store) struct JoinItems {
    pub buyer: Item,
    pub new: Vec<Item>,
}

pub(in crate::store) fn join_items(event: &EventId, entry: &Entry) -> JoinItems {
    let event_ref = EventRef::of(event);
    let mut new = vec![entry_item(event, entry), list_item(&event_ref, entry)];
    new.extend(index_items(&event_ref, entry));
    JoinItems {
        buyer: entry_buyer_item(event, entry),
        new,
    }
}

/// The entry's places in the indexes it waits in.
pub(in crate::store) fn index_items(event: &EventRef, entry: &Entry) -> Vec<Item> {
    index_keys(event, entry)
        .into_iter()
        .map(|mut item| {
            item.insert(ENTRY_ID.into(), s(entry.entry_id.as_str()));
            item
        })
        .collect()
}

/// The buyer's record naming `entry`.
pub(in crate::store) fn entry_buyer_item(event: &EventId, entry: &Entry) -> Item {
    let mut item = entry_buyer_key(event, entry.generation, &entry.buyer);
    item.insert(ENTRY_ID.into(), s(entry.entry_id.as_str()));
    item
}

pub(in crate::store) const ENTRY_ID: &str = "entryId";
const BUYER_ID: &str = "buyerId";
const GENERATION: &str = "generation";
const QUANTITY: &str = "quantity";
/// The sections as asked, comma-separated (a section id holds no comma);
/// absent: any section.
const SECTION_IDS: &str = "sectionIds";
const TOGETHER: &str = "together";
const WHEELCHAIR: &str = "wheelchair";
const JOINED_AT: &str = "joinedAt";
const TOKEN_HASH: &str = "tokenHash";
/// `WAITING`, `OFFERED` (with `offerOrderId` and `offeredAt`) or `ENDED`
/// (with `endReason` and `endedAt`).
const ENTRY_STATUS: &str = "entryStatus";
const END_REASON: &str = "endReason";
const ENDED_AT: &str = "endedAt";

/// The instants an entry's write may carry, latest kind first: the time
/// its events out (joined, ended) happened.
pub(in crate::store) const ENTRY_TIMES: [&str; 2] = [ENDED_AT, JOINED_AT];
const OFFER_ORDER_ID: &str = "offerOrderId";
const OFFERED_AT: &str = "offeredAt";
/// On a limited event: the buyer's keyed ref its offer counts under, and
/// the limit (both set at the join).
const BUYER_REF: &str = "buyerRef";
const BUYER_LIMIT: &str = "buyerLimit";

const WAITING: &str = "WAITING";
const OFFERED: &str = "OFFERED";
const ENDED: &str = "ENDED";

/// The item of a new entry of `event`.
pub(in crate::store) fn entry_item(event: &EventId, entry: &Entry) -> Item {
    let mut item = entry_key(&EventRef::of(event), &entry.entry_id);
    let request = &entry.request;
    item.extend([
        (KIND.into(), s("waitlist-entry")),
        (EVENT_ID.into(), s(event.as_str())),
        (ENTRY_ID.into(), s(entry.entry_id.as_str())),
        (BUYER_ID.into(), s(entry.buyer.as_str())),
        (GENERATION.into(), n(entry.generation)),
        (QUANTITY.into(), n(request.quantity)),
        (TOGETHER.into(), AttributeValue::Bool(request.together)),
        (WHEELCHAIR.into(), n(request.wheelchair)),
        (JOINED_AT.into(), n(entry.joined_at.0)),
        (TOKEN_HASH.into(), s(&entry.token_hash)),
        (ENTRY_STATUS.into(), s(WAITING)),
    ]);
    if !request.section_ids.is_empty() {
        let ids: Vec<&str> = request.section_ids.iter().map(SectionId::as_str).collect();
        item.insert(SECTION_IDS.into(), s(ids.join(",")));
    }
    if let Some(limited) = &entry.limited {
        item.insert(BUYER_REF.into(), s(limited.buyer.as_str()));
        item.insert(BUYER_LIMIT.into(), n(limited.limit));
    }
    item
}

/// The entry an item holds.
pub(in crate::store) fn parse_entry(item: &Item) -> Result<Entry, StoreError> {
    let f = Fields::new(item);
    let section_ids = match f.opt_s(SECTION_IDS) {
        None => Vec::new(),
        Some(ids) => ids
            .split(',')
            .map(SectionId::parse)
            .collect::<Result<_, _>>()
            .map_err(|_| f.malformed(SECTION_IDS))?,
    };
    let together = item
        .get(TOGETHER)
        .and_then(|v| v.as_bool().ok())
        .copied()
        .ok_or_else(|| f.malformed(TOGETHER))?;
    let stored = match f.str(ENTRY_STATUS)? {
        WAITING => EntryStatus::Waiting,
        OFFERED => EntryStatus::Offered,
        ENDED => EntryStatus::Ended(
            end_reason(f.str(END_REASON)?).ok_or_else(|| f.malformed(END_REASON))?,
        ),
        _ => return Err(f.malformed(ENTRY_STATUS)),
    };
    Ok(Entry {
        entry_id: f.id(ENTRY_ID, EntryId::parse)?,
        generation: u64::try_from(f.i64(GENERATION)?).map_err(|_| f.malformed(GENERATION))?,
        buyer: BuyerId::parse(f.str(BUYER_ID)?).ok_or_else(|| f.malformed(BUYER_ID))?,
        request: EntryRequest {
            quantity: f.u32(QUANTITY)?,
            section_ids,
            together,
            wheelchair: f.u32(WHEELCHAIR)?,
        },
        joined_at: Millis(f.i64(JOINED_AT)?),
        token_hash: f.str(TOKEN_HASH)?.to_owned(),
        stored,
        offer_order: f
            .opt_s(OFFER_ORDER_ID)
            .map(OrderId::parse)
            .transpose()
            .map_err(|_| f.malformed(OFFER_ORDER_ID))?,
        limited: match f.opt_s(BUYER_REF) {
            None => None,
            Some(text) => Some(LimitedBuyer {
                buyer: BuyerRef::from_hex(text).ok_or_else(|| f.malformed(BUYER_REF))?,
                limit: f.u32(BUYER_LIMIT)?,
            }),
        },
    })
}

/// The entry id a buyer's record, a list item or an index item names.
pub(in crate::store) fn named_entry(item: &Item) -> Result<EntryId, StoreError> {
    Fields::new(item).id(ENTRY_ID, EntryId::parse)
}

fn end_reason(text: &str) -> Option<EndReason> {
    EndReason::parse(text)
}

// ----- expressions ---------------------------------------------------------
// An entry (`WENTRY#…`) and its buyer's record (`WBUYER#…`). Names:
// `#entry`, `#status`, …; values: `:old`, `:waiting`, ….

/// The buyer's record is written only where it names no entry, or the
/// ended one the join read (`replacing`): two joins at once make one entry.
pub(in crate::store) fn replaces_record(replacing: Option<&EntryId>) -> Expression {
    match replacing {
        None => Expression::new_item(),
        Some(old) => Expression::condition("#entry = :old")
            .name("#entry", ENTRY_ID)
            .value(":old", s(old.as_str())),
    }
}

/// Ends a waiting entry for `reason` at `at`. (An offered entry's end is
/// its order's: cancelled, completed or run out.)
pub(in crate::store) fn end_waiting(reason: EndReason, at: Millis) -> Expression {
    moved(
        WAITING,
        ENDED,
        [(END_REASON, s(reason.as_str())), (ENDED_AT, n(at.0))],
    )
}

/// A waiting entry offered `order` at `at`.
pub(in crate::store) fn offer_made(order: &OrderId, at: Millis) -> Expression {
    let set = [(OFFER_ORDER_ID, s(order.as_str())), (OFFERED_AT, n(at.0))];
    moved(WAITING, OFFERED, set)
}

/// An entry's move from status `from` to `to`, with the two attributes
/// that say why or how. Names: `#status`, `#a0`, `#a1`; values: `:from`,
/// `:to`, `:a0`, `:a1`.
fn moved(from: &str, to: &str, set: [(&str, AttributeValue); 2]) -> Expression {
    let [(first, first_value), (second, second_value)] = set;
    Expression::update("SET #status = :to, #a0 = :a0, #a1 = :a1")
        .name("#status", ENTRY_STATUS)
        .name("#a0", first)
        .name("#a1", second)
        .value(":to", s(to))
        .value(":a0", first_value)
        .value(":a1", second_value)
        .and(Expression::condition("#status = :from").value(":from", s(from)))
}

/// The organiser's list, one shard, from after join key `after` on.
pub(in crate::store) fn listed_after(pk: String, after: Option<&str>) -> Expression {
    match after {
        Some(after) => Expression::key_condition("#pk = :pk AND #sk > :after")
            .name("#sk", SK)
            .value(":after", s(after)),
        None => Expression::key_condition("#pk = :pk"),
    }
    .name("#pk", PK)
    .value(":pk", s(pk))
}
