//! A waitlist's positions (`WPOS#{ref}#{generation}`, with copies for
//! readers) and the log of entries leaving WAITING (`WDEPART#…`) that the
//! offerer's tick keeps them from (`domain::waitlist_positions`): keys,
//! attribute names, codec and expressions.

use std::collections::HashMap;

use super::entry::{entry_shard, join_key, parse_join_key};
use crate::domain::waitlist_entry::Entry;
use crate::domain::waitlist_offer_counts::{OfferCounts, OfferEnd};
use crate::domain::waitlist_positions::{Bucket, Departure, Positions};
use crate::domain::{EntryId, EventRef, Millis};
use crate::store::errors::StoreError;
use crate::store::expression::Expression;
use crate::store::schema::{KIND, PK, SK, VERSION};
use crate::store::value::{n, s, Fields, Item};
use aws_sdk_dynamodb::types::AttributeValue;

pub const POSITIONS_PK_PREFIX: &str = "WPOS#";
pub const DEPARTURE_PK_PREFIX: &str = "WDEPART#";
pub const OFFER_END_PK_PREFIX: &str = "WOFFEREND#";

const POSITIONS_SK: &str = "POSITIONS";

/// The positions of generation `generation`: `WPOS#{ref}#{generation}`,
/// and copy `copy` of them at `…#{copy}` (entry statuses read a copy, one
/// per instance about once a second, as the sale reads a waitlist's state).
pub(in crate::store) fn positions_key(event: &EventRef, generation: u64, copy: Option<u8>) -> Item {
    let pk = format!("{POSITIONS_PK_PREFIX}{event}#{generation}");
    let pk = match copy {
        Some(copy) => format!("{pk}#{copy}"),
        None => pk,
    };
    HashMap::from([(PK.into(), s(pk)), (SK.into(), s(POSITIONS_SK))])
}

/// The keys of every copy of generation `generation`'s positions: what the
/// test harness deletes to play an offerer that stopped before copying.
pub fn positions_copy_keys(event: &crate::domain::EventId, generation: u64) -> Vec<Item> {
    let event = EventRef::of(event);
    (0..crate::store::QUEUE_COPIES)
        .map(|copy| positions_key(&event, generation, Some(copy)))
        .collect()
}

/// The partition of the departures of one shard of the entries:
/// `WDEPART#{ref}#{generation}#{shard}` (an entry's shard, as its list
/// place's: a crowd's offers and leaves spread as its joins do).
pub(in crate::store) fn departure_pk(event: &EventRef, generation: u64, shard: u8) -> String {
    format!("{DEPARTURE_PK_PREFIX}{event}#{generation}#{shard}")
}

/// The partition of the offers' ends of one shard of the entries:
/// `WOFFEREND#{ref}#{generation}#{shard}`, as the departures'.
pub(in crate::store) fn offer_end_pk(event: &EventRef, generation: u64, shard: u8) -> String {
    format!("{OFFER_END_PK_PREFIX}{event}#{generation}#{shard}")
}

const JOINED_AT: &str = "joinedAt";
const OFFER_EXPIRES_AT: &str = "offerExpiresAt";
const PURCHASED: &str = "purchased";
const LIVE: &str = "live";
const SETTLED_UNTIL: &str = "settledUntil";
const SETTLED: &str = "settled";
const RECENT: &str = "recent";
const OFFERS_SETTLED: &str = "offersSettled";
const OFFERS_RECENT: &str = "offersRecent";
const PURCHASED_SETTLED: &str = "purchasedSettled";
const PURCHASED_RECENT: &str = "purchasedRecent";

/// `entry` leaving WAITING at `at`: sorted by that instant (as a join key
/// is by its own), naming when it joined, and an offer's expiry
/// (`offer_expires`) when it leaves by an offer.
pub(in crate::store) fn departure_item(
    event: &EventRef,
    entry: &Entry,
    at: Millis,
    offer_expires: Option<Millis>,
) -> Item {
    let shard = entry_shard(&entry.entry_id);
    let mut item = HashMap::from([
        (PK.into(), s(departure_pk(event, entry.generation, shard))),
        (SK.into(), s(join_key(at, &entry.entry_id))),
        (JOINED_AT.into(), n(entry.joined_at.0)),
    ]);
    if let Some(expires) = offer_expires {
        item.insert(OFFER_EXPIRES_AT.into(), n(expires.0));
    }
    item
}

/// A departure as read.
pub(in crate::store) fn parse_departure(item: &Item) -> Result<Departure, StoreError> {
    let f = Fields::new(item);
    Ok(Departure {
        at: stamp_of(item)?,
        joined_at: Millis(f.i64(JOINED_AT)?),
        offer_expires_at: f.opt_i64(OFFER_EXPIRES_AT)?.map(Millis),
    })
}

/// `end`, of `entry`'s offer of generation `generation`.
pub(in crate::store) fn offer_end_item(
    event: &EventRef,
    (entry, generation): (&EntryId, u64),
    end: &OfferEnd,
) -> Item {
    let shard = entry_shard(entry);
    HashMap::from([
        (PK.into(), s(offer_end_pk(event, generation, shard))),
        (SK.into(), s(join_key(end.at, entry))),
        (OFFER_EXPIRES_AT.into(), n(end.expires_at.0)),
        (PURCHASED.into(), AttributeValue::Bool(end.purchased)),
        (LIVE.into(), AttributeValue::Bool(end.live)),
    ])
}

/// An offer's end as read.
pub(in crate::store) fn parse_offer_end(item: &Item) -> Result<OfferEnd, StoreError> {
    let f = Fields::new(item);
    let flag = |attr: &str| item.get(attr).and_then(|v| v.as_bool().ok()).copied();
    Ok(OfferEnd {
        at: stamp_of(item)?,
        expires_at: Millis(f.i64(OFFER_EXPIRES_AT)?),
        purchased: flag(PURCHASED).ok_or_else(|| f.malformed(PURCHASED))?,
        live: flag(LIVE).ok_or_else(|| f.malformed(LIVE))?,
    })
}

/// A list place's or a departure's instant, read from its sort key.
pub(in crate::store) fn stamp_of(item: &Item) -> Result<Millis, StoreError> {
    let f = Fields::new(item);
    let key = parse_join_key(f.str(SK)?);
    key.map(|(at, _)| at).ok_or_else(|| f.malformed(SK))
}

/// The places of a log's partition `pk` stamped at or after `from` (a
/// join key and a departure's key both start with their instant).
pub(in crate::store) fn stamped_from(pk: String, from: Millis) -> Expression {
    Expression::key_condition("#pk = :pk AND #sk >= :from")
        .name("#pk", PK)
        .name("#sk", SK)
        .value(":pk", s(pk))
        .value(":from", s(format!("{:013}", from.0.max(0))))
}

/// The places of a log's partition `pk` stamped within the seconds
/// `first..=last` ('~' sorts after the `#` that follows every instant).
pub(in crate::store) fn stamped_within(pk: String, first: i64, last: i64) -> Expression {
    let from = first.saturating_mul(1_000).max(0);
    let to = last.saturating_mul(1_000).saturating_add(999).max(0);
    Expression::key_condition("#pk = :pk AND #sk BETWEEN :from AND :to")
        .name("#pk", PK)
        .name("#sk", SK)
        .value(":pk", s(pk))
        .value(":from", s(format!("{from:013}")))
        .value(":to", s(format!("{to:013}~")))
}

/// The item of `positions` at `version`, at `key` (the main item or a copy).
pub(in crate::store) fn positions_item(key: Item, positions: &Positions, version: i64) -> Item {
    let mut item = key;
    item.extend([
        (KIND.into(), s("waitlist-positions")),
        (VERSION.into(), n(version)),
        (SETTLED_UNTIL.into(), n(positions.settled_until.0)),
        (SETTLED.into(), s(encode(&positions.settled))),
        (RECENT.into(), s(encode(&positions.recent))),
        (OFFERS_SETTLED.into(), s(encode(&positions.offers.settled))),
        (OFFERS_RECENT.into(), s(encode(&positions.offers.recent))),
        (
            PURCHASED_SETTLED.into(),
            n(positions.offers.purchased_settled),
        ),
        (
            PURCHASED_RECENT.into(),
            n(positions.offers.purchased_recent),
        ),
    ]);
    item
}

/// The positions an item holds, and its version.
pub(in crate::store) fn parse_positions(item: &Item) -> Result<(Positions, i64), StoreError> {
    let f = Fields::new(item);
    let buckets = |attr| decode(f.str(attr)?).ok_or_else(|| f.malformed(attr));
    // Items written before the offers were counted have none.
    let offer_buckets = |attr| match f.opt_s(attr) {
        Some(text) => decode(text).ok_or_else(|| f.malformed(attr)),
        None => Ok(Vec::new()),
    };
    let offers = OfferCounts {
        settled: offer_buckets(OFFERS_SETTLED)?,
        recent: offer_buckets(OFFERS_RECENT)?,
        purchased_settled: f.opt_i64(PURCHASED_SETTLED)?.unwrap_or(0),
        purchased_recent: f.opt_i64(PURCHASED_RECENT)?.unwrap_or(0),
    };
    let positions = Positions {
        settled_until: Millis(f.i64(SETTLED_UNTIL)?),
        settled: buckets(SETTLED)?,
        recent: buckets(RECENT)?,
        offers,
    };
    Ok((positions, f.i64(VERSION)?))
}

/// Buckets as text, `first:span:waiting` each, comma-separated, each
/// `first` after the first counted from the previous bucket's `last`
/// (a second's bucket at one a second costs ~6 bytes).
fn encode(buckets: &[Bucket]) -> String {
    let mut text = String::new();
    let mut last = 0;
    for (i, b) in buckets.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!(
            "{}:{}:{}",
            b.first - last,
            b.last - b.first,
            b.waiting
        ));
        last = b.last;
    }
    text
}

/// [`encode`]'s buckets back (`None`: not such text, or buckets out of
/// order, overlapping or of a negative span).
fn decode(text: &str) -> Option<Vec<Bucket>> {
    let mut buckets = Vec::new();
    let mut last = 0i64;
    for part in text.split(',').filter(|p| !p.is_empty()) {
        let mut fields = part.split(':').map(str::parse::<i64>);
        let (Some(Ok(gap)), Some(Ok(span)), Some(Ok(waiting)), None) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return None;
        };
        if span < 0 || (!buckets.is_empty() && gap < 1) {
            return None;
        }
        let first = last.checked_add(gap)?;
        last = first.checked_add(span)?;
        buckets.push(Bucket {
            first,
            last,
            waiting,
        });
    }
    Some(buckets)
}

/// The positions' main item as it was read (`None`: absent).
pub(in crate::store) use super::as_read;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_read_back_as_written() {
        let buckets = vec![
            Bucket {
                first: 1_800_000_000,
                last: 1_800_000_000,
                waiting: 3,
            },
            Bucket {
                first: 1_800_000_004,
                last: 1_800_000_090,
                waiting: -1,
            },
        ];
        let text = encode(&buckets);
        assert_eq!(text, "1800000000:0:3,4:86:-1");
        assert_eq!(decode(&text), Some(buckets));
        assert_eq!(decode(""), Some(vec![]));
        for bad in [
            "1:2",
            "1:2:3:4",
            "x:0:1",
            "1:0:1,2",
            "5:-1:1",
            "5:2:1,0:0:1",
        ] {
            assert_eq!(decode(bad), None, "{bad}");
        }
    }
}
