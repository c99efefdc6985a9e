//! A queue's visitors: a join (one write on the visitor's own key, its
//! entries in the `QueueByJoin` and `QueueByRank` indexes on one of its
//! generation's [`QueueShards`] partitions), a visitor's read, the admitter's reads of
//! each shard (joins to count, the front of the queue), and an admission
//! (the entries leave the indexes).

use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValuesOnConditionCheckFailure};

use super::errors::{conditional, sdk_error, StoreError};
use super::expression::Expression;
use super::items;
use super::items::queue::GENERATION;
use super::items::visitor::{
    draw_shard_key, queue_shard_key, visitor_key, visitor_of_key, visitor_shard,
    ADMISSION_EXPIRES_AT, ADMISSION_GIVEN_AT, ADMISSION_ID, ADMISSION_SLOT_US, BUYER_ID, DRAW_KEY,
    DRAW_SHARD, JOINED_AT, ORDERS_ALLOWED, QUEUE_JOIN, QUEUE_RANK, QUEUE_SHARD, VISITOR_ID,
    VISITOR_RETENTION_SECONDS, WAITING_RETENTION_SECONDS,
};
use super::schema::{
    EVENT_ID, KIND, PK, QUEUE_DRAW_INDEX, QUEUE_INDEX, QUEUE_RANK_INDEX, SK, TOKEN_HASH, TTL,
};
use super::value::{n, s, Fields, Item};
use super::Store;
use crate::domain::buyer::BuyerId;
use crate::domain::draw::DrawKey;
use crate::domain::draw_pages::DrawnEntry;
use crate::domain::queue::QueueRank;
use crate::domain::queue_life::{kept_until, VisitorItems};
use crate::domain::queue_shards::QueueShards;
use crate::domain::queue_state::{Admission, QueueState, Visitor};
use crate::domain::{EventId, EventRef, Millis, VisitorId};
use crate::error::Error;

/// A waiting visitor as the index shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedVisitor {
    pub visitor_id: VisitorId,
    pub rank: QueueRank,
    pub joined_ms: i64,
}

/// A rank as the index keeps it: 32 hex digits, so text order is rank order.
fn rank_text(rank: QueueRank) -> String {
    format!("{:032x}", rank.0)
}

fn parse_rank(text: &str) -> Option<QueueRank> {
    u128::from_str_radix(text, 16).ok().map(QueueRank)
}

/// A draw key as the item keeps it: 64 hex digits.
fn draw_key_of(hex: &str) -> Option<DrawKey> {
    let mut bytes = [0u8; 32];
    hex::decode_to_slice(hex, &mut bytes).ok()?;
    Some(DrawKey(bytes))
}

/// Every attribute a visitor's item has, waiting or admitted: what
/// queue-visitors' grant to put one names (template.yaml, held to this by
/// a test; a test here holds this to [`visitor_item`]).
pub const VISITOR_ITEM_ATTRIBUTES: [&str; 20] = [
    PK,
    SK,
    KIND,
    EVENT_ID,
    VISITOR_ID,
    GENERATION,
    JOINED_AT,
    QUEUE_RANK,
    TOKEN_HASH,
    BUYER_ID,
    DRAW_SHARD,
    DRAW_KEY,
    QUEUE_SHARD,
    QUEUE_JOIN,
    TTL,
    ADMISSION_ID,
    ADMISSION_SLOT_US,
    ADMISSION_GIVEN_AT,
    ADMISSION_EXPIRES_AT,
    ORDERS_ALLOWED,
];

/// The item of a visitor: waiting (with its index entry) or admitted,
/// on one of its generation's shards, kept as long as its generation says
/// ([`VisitorItems::kept_until`]).
pub(super) fn visitor_item(event: &EventId, visitor: &Visitor, items: VisitorItems) -> Item {
    let shards = items.shards;
    let event_ref = EventRef::of(event);
    let mut item = visitor_key(&event_ref, &visitor.visitor_id);
    item.extend([
        (KIND.into(), s("visitor")),
        (EVENT_ID.into(), s(event.as_str())),
        (VISITOR_ID.into(), s(visitor.visitor_id.as_str())),
        (GENERATION.into(), n(visitor.generation)),
        (JOINED_AT.into(), n(visitor.joined_at.0)),
        (QUEUE_RANK.into(), s(rank_text(visitor.rank))),
        (TOKEN_HASH.into(), s(&visitor.token_hash)),
    ]);
    if let Some(buyer) = &visitor.buyer {
        item.insert(BUYER_ID.into(), s(buyer.as_str()));
    }
    if let Some(key) = &visitor.draw_key {
        let shard = visitor_shard(&visitor.visitor_id, shards);
        item.extend([
            (
                DRAW_SHARD.into(),
                s(draw_shard_key(&event_ref, visitor.generation, shard)),
            ),
            (DRAW_KEY.into(), s(key.hex())),
        ]);
    }
    match &visitor.admission {
        None => item.extend([
            (
                QUEUE_SHARD.into(),
                s(queue_shard_key(
                    &event_ref,
                    visitor.generation,
                    visitor_shard(&visitor.visitor_id, shards),
                )),
            ),
            (QUEUE_JOIN.into(), n(visitor.joined_at.0)),
            (
                TTL.into(),
                n(items
                    .kept_until(Millis(
                        visitor.joined_at.0 + WAITING_RETENTION_SECONDS * 1_000,
                    ))
                    .0
                    / 1_000),
            ),
        ]),
        Some(admission) => item.extend([
            (ADMISSION_ID.into(), s(&admission.admission_id)),
            (ADMISSION_SLOT_US.into(), n(admission.slot_us)),
            (ADMISSION_GIVEN_AT.into(), n(admission.given_at.0)),
            (ADMISSION_EXPIRES_AT.into(), n(admission.expires_at.0)),
            (ORDERS_ALLOWED.into(), n(admission.orders_allowed)),
            (TTL.into(), n(admitted_ttl(admission, items.ends_at))),
        ]),
    }
    item
}

/// An admitted visitor's item lives a day past its generation's end, or
/// (a generation put before ends) a day past its admission's.
fn admitted_ttl(admission: &Admission, ends_at: Option<Millis>) -> i64 {
    let past_admission = Millis(admission.expires_at.0 + VISITOR_RETENTION_SECONDS * 1_000);
    kept_until(ends_at, past_admission).0 / 1_000
}

fn parse_visitor(item: &Item) -> Result<Visitor, StoreError> {
    let f = Fields::new(item);
    let admission = match f.opt_s(ADMISSION_ID) {
        Some(id) => Some(Admission {
            admission_id: id.to_owned(),
            slot_us: f.i64(ADMISSION_SLOT_US)?,
            given_at: Millis(f.i64(ADMISSION_GIVEN_AT)?),
            expires_at: Millis(f.i64(ADMISSION_EXPIRES_AT)?),
            orders_allowed: f.u32(ORDERS_ALLOWED)?,
        }),
        None => None,
    };
    Ok(Visitor {
        visitor_id: f.id(VISITOR_ID, VisitorId::parse)?,
        generation: u64::try_from(f.i64(GENERATION)?).map_err(|_| f.malformed(GENERATION))?,
        joined_at: Millis(f.i64(JOINED_AT)?),
        rank: parse_rank(f.str(QUEUE_RANK)?).ok_or_else(|| f.malformed(QUEUE_RANK))?,
        token_hash: f.str(TOKEN_HASH)?.to_owned(),
        admission,
        draw_key: f
            .opt_s(DRAW_KEY)
            .map(|hex| draw_key_of(hex).ok_or_else(|| f.malformed(DRAW_KEY)))
            .transpose()?,
        buyer: match f.opt_s(BUYER_ID) {
            Some(buyer) => Some(BuyerId::parse(buyer).ok_or_else(|| f.malformed(BUYER_ID))?),
            None => None,
        },
    })
}

impl Store {
    /// A visitor joins the queue (whose generation has `shards`),
    /// waiting, unless its id is taken: `false` then. A random id is never
    /// taken; a buyer's is by its first join, so concurrent joins by one
    /// buyer make one visitor.
    pub async fn join_queue(
        &self,
        event: &EventId,
        visitor: &Visitor,
        items: VisitorItems,
    ) -> Result<bool, Error> {
        let put = self
            .client
            .put_item()
            .table_name(&*self.table)
            .set_item(Some(visitor_item(event, visitor, items)));
        let put = Expression::new_item().on_put_item(put).send().await;
        conditional(put, "PutItem")
    }

    /// A visitor's item, strongly consistent: what a join that found its
    /// id taken answers with.
    pub async fn read_visitor_consistent(
        &self,
        event: &EventId,
        visitor: &VisitorId,
    ) -> Result<Option<Visitor>, Error> {
        let key = visitor_key(&EventRef::of(event), visitor);
        let item = self.get_consistent(key).await?;
        Ok(item.as_ref().map(parse_visitor).transpose()?)
    }

    /// A visitor admitted as it joins: its item and the queue's state
    /// `after`, over the version it read, in one transaction. `false` if
    /// the queue changed since (the visitor then joins as anyone else).
    pub async fn join_admitted(
        &self,
        event: &EventId,
        visitor: &Visitor,
        after: &QueueState,
        before_version: i64,
    ) -> Result<bool, Error> {
        let item = visitor_item(event, visitor, after.visitor_items());
        self.admit_with(event, after, before_version, item).await
    }

    /// A visitor's item: eventually consistent, and strongly consistent
    /// when that finds nothing (a join a moment ago).
    pub async fn read_visitor(
        &self,
        event: &EventId,
        visitor: &VisitorId,
    ) -> Result<Option<Visitor>, Error> {
        let key = visitor_key(&EventRef::of(event), visitor);
        let item = self.get_settled(key, false).await?;
        Ok(item.as_ref().map(parse_visitor).transpose()?)
    }

    /// The joins of one shard in `[from_ms, to_ms)`, about a page of
    /// `limit`: the ranks, and the join time up to which (exclusive) they
    /// are every join. A page cut inside a millisecond leaves that
    /// millisecond to the next read, which reads it whole: a shard of 128
    /// takes a join every millisecond at 128,000 joins a second, so a page
    /// never stops inside one in practice, and the mark stays a plain time.
    pub async fn joins_between(
        &self,
        event: &EventId,
        generation: u64,
        shard: u8,
        (from_ms, to_ms): (i64, i64),
        limit: i32,
    ) -> Result<(Vec<QueueRank>, i64), Error> {
        let shard_key = queue_shard_key(&EventRef::of(event), generation, shard);
        let mut found: Vec<IndexedVisitor> = Vec::new();
        let mut start: Option<Item> = None;
        loop {
            let query = self
                .client
                .query()
                .table_name(&*self.table)
                .index_name(QUEUE_INDEX)
                .limit(limit)
                .set_exclusive_start_key(start.take());
            let page = items::visitor::joined_between(shard_key.clone(), from_ms, to_ms)
                .on_query(query)
                .send()
                .await
                .map_err(|e| sdk_error("Query", e))?;
            for item in page.items() {
                found.push(indexed(item)?);
            }
            let last = found.last().map_or(from_ms, |v| v.joined_ms);
            match page.last_evaluated_key {
                // More past a millisecond this page ends in: up to it.
                Some(key) if !key.is_empty() && last == from_ms => start = Some(key),
                Some(key) if !key.is_empty() => {
                    found.retain(|v| v.joined_ms < last);
                    return Ok((found.iter().map(|v| v.rank).collect(), last));
                }
                _ => return Ok((found.iter().map(|v| v.rank).collect(), to_ms)),
            }
        }
    }

    /// Up to `limit` waiting visitors of one shard ranked after `after`
    /// (from the first when `None`), in queue order, and whether the index
    /// has more past them.
    pub async fn waiting_ranked_after(
        &self,
        event: &EventId,
        generation: u64,
        shard: u8,
        after: Option<QueueRank>,
        limit: i32,
    ) -> Result<(Vec<IndexedVisitor>, bool), Error> {
        let shard_key = queue_shard_key(&EventRef::of(event), generation, shard);
        let query = self
            .client
            .query()
            .table_name(&*self.table)
            .index_name(QUEUE_RANK_INDEX)
            .limit(limit);
        let after = after.map(rank_text);
        let page = items::visitor::ranked_after(shard_key, after.as_deref())
            .on_query(query)
            .send()
            .await
            .map_err(|e| sdk_error("Query", e))?;
        let found = page.items().iter().map(indexed).collect::<Result<_, _>>()?;
        let more = page.last_evaluated_key.is_some_and(|k| !k.is_empty());
        Ok((found, more))
    }

    /// Up to `limit` drawn visitors of one shard keyed from `from` to
    /// `to` (both included), in key order, and whether the index has more
    /// past them (DynamoDB says so whenever the limit stopped the read).
    pub async fn drawn_between(
        &self,
        event: &EventId,
        generation: u64,
        shard: u8,
        (from, to): (&str, &str),
        limit: i32,
    ) -> Result<(Vec<DrawnEntry>, bool), Error> {
        let shard_key = draw_shard_key(&EventRef::of(event), generation, shard);
        let query = self
            .client
            .query()
            .table_name(&*self.table)
            .index_name(QUEUE_DRAW_INDEX)
            .limit(limit);
        let page = items::visitor::drawn_between(shard_key, from, to)
            .on_query(query)
            .send()
            .await
            .map_err(|e| sdk_error("Query", e))?;
        let found = page
            .items()
            .iter()
            .map(|item| {
                let f = Fields::new(item);
                Ok(DrawnEntry {
                    draw_key: f.str(DRAW_KEY)?.to_owned(),
                    slot_us: f.opt_i64(ADMISSION_SLOT_US)?,
                })
            })
            .collect::<Result<_, StoreError>>()?;
        let more = page.last_evaluated_key.is_some_and(|k| !k.is_empty());
        Ok((found, more))
    }

    /// Whether anyone waits in `generation` (of `shards`), as the index
    /// shows it: one entry read from each shard, at once. A joiner the
    /// admitter has not counted yet is in the index, not yet in the
    /// queue's state.
    pub async fn anyone_waiting(
        &self,
        event: &EventId,
        (generation, shards): (u64, QueueShards),
    ) -> Result<bool, Error> {
        let reads = shards.all().map(|shard| {
            let query = self
                .client
                .query()
                .table_name(&*self.table)
                .index_name(QUEUE_INDEX)
                .limit(1);
            let shard_key = queue_shard_key(&EventRef::of(event), generation, shard);
            items::visitor::joined_since(shard_key, 0)
                .on_query(query)
                .send()
        });
        for page in futures_util::future::join_all(reads).await {
            let page = page.map_err(|e| sdk_error("Query", e))?;
            if !page.items().is_empty() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Admits a visitor still waiting in `generation`: `false` if it is
    /// not (admitted already, or of another queue).
    pub async fn admit_visitor(
        &self,
        event: &EventId,
        visitor: &VisitorId,
        (generation, ends_at): (u64, Option<Millis>),
        admission: &Admission,
    ) -> Result<bool, Error> {
        let update = self
            .client
            .update_item()
            .table_name(&*self.table)
            .set_key(Some(visitor_key(&EventRef::of(event), visitor)))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        let sent = items::visitor::admit(admission, generation, admitted_ttl(admission, ends_at))
            .on_update_item(update)
            .send()
            .await;
        match sent {
            Ok(_) => Ok(true),
            // Admitted already at this very slot: this admission's own
            // write (a retry after a lost reply) or another admitter's
            // writing the same pending slot. Given, not refused.
            Err(SdkError::ServiceError(ctx))
                if matches!(ctx.err(), UpdateItemError::ConditionalCheckFailedException(c)
                    if c.item().is_some_and(|old| at_slot(old, admission.slot_us))) =>
            {
                Ok(true)
            }
            other => conditional(other, "UpdateItem"),
        }
    }
}

/// Whether the visitor item `old` holds an admission at `slot_us`.
fn at_slot(old: &Item, slot_us: i64) -> bool {
    Fields::new(old).opt_i64(ADMISSION_SLOT_US).ok().flatten() == Some(slot_us)
}

fn indexed(item: &Item) -> Result<IndexedVisitor, StoreError> {
    let f = Fields::new(item);
    let pk = f.str(PK)?;
    Ok(IndexedVisitor {
        visitor_id: visitor_of_key(pk).ok_or_else(|| f.malformed(PK))?,
        rank: parse_rank(f.str(QUEUE_RANK)?).ok_or_else(|| f.malformed(QUEUE_RANK))?,
        joined_ms: match item.get(QUEUE_JOIN) {
            Some(AttributeValue::N(_)) => f.i64(QUEUE_JOIN)?,
            _ => return Err(f.malformed(QUEUE_JOIN)),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_visitor_round_trips_waiting_and_admitted() -> Result<(), Box<dyn std::error::Error>> {
        let event = EventId::parse("gala")?;
        let mut visitor = Visitor {
            visitor_id: VisitorId::parse("v1")?,
            generation: 2,
            joined_at: Millis(1_000),
            rank: QueueRank(u128::MAX - 5),
            token_hash: "h".into(),
            admission: None,
            buyer: BuyerId::parse("user:42"),
            draw_key: Some(DrawKey([7; 32])),
        };
        let no_end = VisitorItems::without_end(QueueShards::DEFAULT);
        let waiting = visitor_item(&event, &visitor, no_end);
        let shard = visitor_shard(&visitor.visitor_id, QueueShards::DEFAULT);
        let key = |shard: u8| s(format!("QWAIT#{}#2#{shard}", EventRef::of(&event)));
        assert_eq!(waiting.get(QUEUE_SHARD), Some(&key(shard)));
        // The shard is the generation's: the same visitor on a legacy
        // generation's 32 shards.
        let legacy = visitor_item(
            &event,
            &visitor,
            VisitorItems::without_end(QueueShards::LEGACY),
        );
        let legacy_count = QueueShards::LEGACY.count();
        assert_eq!(legacy.get(QUEUE_SHARD), Some(&key(shard % legacy_count)));
        assert_eq!(parse_visitor(&waiting)?, visitor);
        let entry = indexed(&waiting)?;
        assert_eq!((entry.rank, entry.joined_ms), (visitor.rank, 1_000));
        assert_eq!(entry.visitor_id, visitor.visitor_id);
        visitor.admission = Some(Admission {
            admission_id: "a".into(),
            slot_us: 1_500_000,
            given_at: Millis(2_000),
            expires_at: Millis(602_000),
            orders_allowed: 2,
        });
        let admitted = visitor_item(&event, &visitor, no_end);
        assert!(!admitted.contains_key(QUEUE_SHARD), "not in the index");
        assert_eq!(parse_visitor(&admitted)?, visitor);
        assert!(rank_text(QueueRank(2)) < rank_text(QueueRank(10)));
        Ok(())
    }

    /// The attributes a visitor's item can have are exactly the declared
    /// list: a waiting one with a buyer and a draw key, and an admitted one,
    /// together name every one.
    #[test]
    fn a_visitors_item_names_exactly_the_declared_attributes(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let event = EventId::parse("gala")?;
        let mut visitor = Visitor {
            visitor_id: VisitorId::parse("v1")?,
            generation: 2,
            joined_at: Millis(1_000),
            rank: QueueRank(5),
            token_hash: "h".into(),
            admission: None,
            buyer: BuyerId::parse("user:42"),
            draw_key: Some(DrawKey([7; 32])),
        };
        let items = VisitorItems::without_end(QueueShards::DEFAULT);
        let mut named: std::collections::BTreeSet<String> =
            visitor_item(&event, &visitor, items).into_keys().collect();
        visitor.admission = Some(Admission {
            admission_id: "a".into(),
            slot_us: 1,
            given_at: Millis(2),
            expires_at: Millis(3),
            orders_allowed: 1,
        });
        named.extend(visitor_item(&event, &visitor, items).into_keys());
        assert_eq!(named, items::declared(&VISITOR_ITEM_ATTRIBUTES));
        Ok(())
    }

    /// A generation with an end keeps every visitor's item a day past it,
    /// waiting or admitted, whenever it joined; one without keeps the old
    /// rules (two days past the join, a day past the admission).
    #[test]
    fn a_visitors_item_lives_as_long_as_its_generation() -> Result<(), Box<dyn std::error::Error>> {
        let event = EventId::parse("gala")?;
        let mut visitor = Visitor {
            visitor_id: VisitorId::parse("v1")?,
            generation: 2,
            joined_at: Millis(1_000_000),
            rank: QueueRank(5),
            token_hash: "h".into(),
            admission: None,
            buyer: None,
            draw_key: None,
        };
        let end = Millis(90 * 86_400_000);
        let ending = VisitorItems {
            shards: QueueShards::DEFAULT,
            ends_at: Some(end),
        };
        let ttl = |item: &Item| item[TTL].as_n().ok().and_then(|v| v.parse::<i64>().ok());
        let past_end = Some(end.0 / 1_000 + 86_400);
        assert_eq!(ttl(&visitor_item(&event, &visitor, ending)), past_end);
        let no_end = VisitorItems::without_end(QueueShards::DEFAULT);
        assert_eq!(
            ttl(&visitor_item(&event, &visitor, no_end)),
            Some(1_000 + WAITING_RETENTION_SECONDS)
        );
        visitor.admission = Some(Admission {
            admission_id: "a".into(),
            slot_us: 2_000_000_000,
            given_at: Millis(2_000_000),
            expires_at: Millis(2_600_000),
            orders_allowed: 1,
        });
        assert_eq!(ttl(&visitor_item(&event, &visitor, ending)), past_end);
        assert_eq!(
            ttl(&visitor_item(&event, &visitor, no_end)),
            Some(2_600 + VISITOR_RETENTION_SECONDS)
        );
        Ok(())
    }
}
