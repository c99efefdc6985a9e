//! A buyer's record of one event (`BUYER#{eventRef}#{buyerRef}`): what the
//! buyer limit counts. Per order that holds something, the members it
//! holds (the same seat ids and place members as the order's `seats` set)
//! as `o:{orderId}` and its expiry as `x:{orderId}`; the units sold for
//! good as `sold`; a `version` every write moves.
//!
//! A claim reads the record, decides (`domain::buyer_limit`) and writes it
//! in its own transaction, conditioned on the version it read: two claims
//! that read the same record cannot both land. Releases (drop-seat, a
//! give-back, cancel) take members out without a read, moving the version,
//! so a claim that read before them reads again. Holds stop counting at
//! their expiry with no write: a later write drops such entries.

use std::collections::{BTreeSet, HashMap};

use super::super::expression::Expression;
use crate::domain::buyer_limit::{BuyerCount, BuyerRef, LimitedBuyer, OrderUnits};
use crate::domain::{EventRef, Millis, OrderId};
use crate::store::errors::StoreError;
use crate::store::schema::{KIND, PK, SK, TTL, VERSION};
use crate::store::value::{n, s, Fields, Item};
use aws_sdk_dynamodb::types::AttributeValue;

pub const BUYER_PK_PREFIX: &str = "BUYER#";
/// Every buyer's record has this sort key.
pub const BUYER_SK: &str = "BUYER";

const SOLD: &str = "sold";
const MEMBERS_PREFIX: &str = "o:";
const EXPIRY_PREFIX: &str = "x:";

/// Every attribute a write of a buyer's record names, as IAM patterns
/// (`dynamodb:Attributes` under `StringLike`): the grants of the functions
/// that write records (template.yaml) are held to this list by a test, so
/// a write of another attribute fails in the suite, not only in AWS.
pub const BUYER_RECORD_ATTRIBUTES: [&str; 8] = [PK, SK, KIND, VERSION, SOLD, TTL, "o:*", "x:*"];

/// How long a record without sales outlives every hold it can have: no
/// order expires later than the longest `MAX_ORDER_LIFETIME_SECONDS` after
/// a claim, and a day more keeps it for a late confirm's check. A record
/// with sales never expires.
const UNSOLD_RECORD_SECONDS: i64 =
    *crate::domain::MAX_ORDER_LIFETIME_SECONDS_RANGE.end() as i64 + 86_400;

/// Most expired entries one write drops (the update expression stays small).
const PRUNED_PER_WRITE: usize = 32;

pub(in crate::store) fn buyer_key(event: &EventRef, buyer: &LimitedBuyer) -> Item {
    record_key(event, &buyer.buyer)
}

/// The record `buyer` names.
pub(in crate::store) fn record_key(event: &EventRef, buyer: &BuyerRef) -> Item {
    HashMap::from([
        (
            PK.into(),
            s(format!("{BUYER_PK_PREFIX}{event}#{}", buyer.as_str())),
        ),
        (SK.into(), s(BUYER_SK)),
    ])
}

fn members_of(order: &str) -> String {
    format!("{MEMBERS_PREFIX}{order}")
}

fn expiry_of(order: &str) -> String {
    format!("{EXPIRY_PREFIX}{order}")
}

/// The record as read (`None`: there is none yet).
pub(in crate::store) fn parse_buyer(item: Option<&Item>) -> Result<BuyerCount, StoreError> {
    let Some(item) = item else {
        return Ok(BuyerCount::default());
    };
    let f = Fields::new(item);
    // By expiry: an entry whose members were all released (DynamoDB drops
    // an emptied set) is still there to be dropped once it expires.
    let mut orders = Vec::new();
    for name in item.keys() {
        let Some(order) = name.strip_prefix(EXPIRY_PREFIX) else {
            continue;
        };
        orders.push(OrderUnits {
            order: order.to_owned(),
            members: f.string_set(&members_of(order))?.into_iter().collect(),
            expires_at: Millis(f.i64(name)?),
        });
    }
    orders.sort_by(|a, b| a.order.cmp(&b.order));
    Ok(BuyerCount {
        version: u64::try_from(f.i64(VERSION)?).map_err(|_| f.malformed(VERSION))?,
        sold: f.opt_i64(SOLD)?.map_or(Ok(0), |sold| {
            u32::try_from(sold).map_err(|_| f.malformed(SOLD))
        })?,
        orders,
    })
}

/// The record still as read: its version, or still absent.
pub(in crate::store) fn as_read(read: &BuyerCount) -> Expression {
    if read.version == 0 {
        return Expression::condition("attribute_not_exists(#pk)").name("#pk", PK);
    }
    Expression::condition("#version = :read")
        .name("#version", VERSION)
        .value(":read", n(read.version))
}

/// A claim within the limit: `order`'s entry becomes `members` until
/// `expires_at`, entries that count no more are dropped, and a record
/// without sales expires well after every hold it has.
pub(in crate::store) fn claim(
    read: &BuyerCount,
    order: &OrderId,
    members: &BTreeSet<String>,
    expires_at: Millis,
    now: Millis,
) -> Expression {
    let mut set =
        String::from("SET #kind = :kind, #members = :members, #expiry = :expiry, #version = :next");
    let mut expression = Expression::default();
    if read.sold == 0 {
        set.push_str(", #ttl = :ttl");
        expression = expression
            .name("#ttl", TTL)
            .value(":ttl", n(now.0 / 1_000 + UNSOLD_RECORD_SECONDS));
    }
    let pruned: Vec<&str> = read
        .stale(now)
        .filter(|o| *o != order.as_str())
        .take(PRUNED_PER_WRITE)
        .collect();
    let mut remove = Vec::new();
    for (i, old) in pruned.iter().enumerate() {
        remove.push(format!("#om{i}, #ox{i}"));
        expression = expression
            .name(&format!("#om{i}"), members_of(old))
            .name(&format!("#ox{i}"), expiry_of(old));
    }
    if !remove.is_empty() {
        set.push_str(&format!(" REMOVE {}", remove.join(", ")));
    }
    let members: Vec<String> = members.iter().cloned().collect();
    Expression::update(set)
        .and(as_read(read))
        .and(expression)
        .name("#kind", KIND)
        .name("#version", VERSION)
        .name("#members", members_of(order.as_str()))
        .name("#expiry", expiry_of(order.as_str()))
        .value(":kind", s("buyer"))
        .value(":members", AttributeValue::Ss(members))
        .value(":expiry", n(expires_at.0))
        .value(":next", n(read.version + 1))
}

/// A claim over the limit, refused by the transaction itself: a check of
/// a condition that never holds, so the claim's other items answer first
/// (a sold seat is `seat-sold`, not `buyer-limit`) and the record's
/// version at that moment comes back to tell a refusal as read from a
/// record that moved. A `ConditionCheck`, never an update: nothing is
/// written, whatever the record holds.
pub(in crate::store) fn refuse() -> Expression {
    Expression::condition("attribute_exists(#pk) AND attribute_not_exists(#pk)").name("#pk", PK)
}

/// `members` of `order` no longer held (drop-seat, places given back): no
/// read, no condition; the version moves so a claim that read before
/// reads again.
pub(in crate::store) fn release(order: &OrderId, members: &[&str]) -> Expression {
    Expression::update("DELETE #members :gone ADD #version :one")
        .name("#members", members_of(order.as_str()))
        .name("#version", VERSION)
        .value(
            ":gone",
            AttributeValue::Ss(members.iter().map(|m| (*m).to_owned()).collect()),
        )
        .value(":one", n(1))
}

/// Everything `order` holds stops counting (cancel-order, a confirm that
/// releases it): its entry goes.
pub(in crate::store) fn release_order(order: &OrderId) -> Expression {
    Expression::update("REMOVE #members, #expiry ADD #version :one")
        .name("#members", members_of(order.as_str()))
        .name("#expiry", expiry_of(order.as_str()))
        .name("#version", VERSION)
        .value(":one", n(1))
}

/// extend-order: `order`'s units count until `expires_at`. Only for an
/// order that holds something (so the record and its entry exist).
pub(in crate::store) fn extend(order: &OrderId, expires_at: Millis) -> Expression {
    Expression::update("SET #expiry = :expiry ADD #version :one")
        .name("#expiry", expiry_of(order.as_str()))
        .name("#version", VERSION)
        .value(":expiry", n(expires_at.0))
        .value(":one", n(1))
}

/// A confirm sells `units` of `order`: they count for good, and the
/// record never expires. The order's entry goes, or keeps exactly `kept`
/// (holds the confirm lets go of only after its transaction: they count
/// until then). `read`: the record as a confirm that takes units it did
/// not hold read it (the sale is then conditioned on it); `None` for a
/// sale of what a live order holds, which always completes.
pub(in crate::store) fn sell(
    order: &OrderId,
    units: u32,
    read: Option<&BuyerCount>,
    kept: &[String],
) -> Expression {
    let entry = if kept.is_empty() {
        Expression::update(
            "SET #kind = :kind REMOVE #members, #expiry, #ttl ADD #sold :units, #version :one",
        )
        .name("#expiry", expiry_of(order.as_str()))
    } else {
        Expression::update(
            "SET #kind = :kind, #members = :kept REMOVE #ttl ADD #sold :units, #version :one",
        )
        .value(":kept", AttributeValue::Ss(kept.to_vec()))
    };
    let update = entry
        .name("#kind", KIND)
        .name("#members", members_of(order.as_str()))
        .name("#ttl", TTL)
        .name("#sold", SOLD)
        .name("#version", VERSION)
        .value(":kind", s("buyer"))
        .value(":units", n(units))
        .value(":one", n(1));
    match read {
        Some(read) => update.and(as_read(read)),
        None => update,
    }
}

/// A seller's `units` resold: they no longer count toward its limit (the
/// buyer's record counts them now, in the same transaction). No condition:
/// the seller's sales only ever included them.
pub(in crate::store) fn resold_away(units: u32) -> Expression {
    Expression::update("ADD #sold :gone, #version :one")
        .name("#sold", SOLD)
        .name("#version", VERSION)
        .value(":gone", n(-i64::from(units)))
        .value(":one", n(1))
}

/// The version a failed condition saw (`None`: no record).
pub(in crate::store) fn version_of(old: Option<&Item>) -> Option<u64> {
    let old = old?;
    Fields::new(old)
        .opt_i64(VERSION)
        .ok()
        .flatten()
        .and_then(|v| u64::try_from(v).ok())
}
