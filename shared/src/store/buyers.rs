//! The buyer limit in a claim's own transaction: one consistent read of
//! the buyer's record, the decision (`domain::buyer_limit`), and the
//! record's item in the claim's transaction, conditioned on the version
//! read. A claim that finds the record moved reads it again.

use aws_sdk_dynamodb::types::TransactWriteItem;

use super::confirm::BuyerChange;
use super::expression::Expression;
use super::failures::ItemFailure;
use super::items;
use super::items::buyer::{buyer_key, parse_buyer, version_of};
use super::Store;
use crate::auth::HoldToken;
use crate::domain::buyer_limit::{
    decide_claim, BuyerCount, BuyerSeen, LimitDecision, LimitedBuyer,
};
use crate::domain::{EventRef, Millis, Order, OrderId};
use crate::error::Error;

/// A claim's view of its buyer's record: the record as read and what the
/// limit makes of the claim.
#[derive(Debug)]
pub struct BuyerClaim {
    buyer: LimitedBuyer,
    read: BuyerCount,
    decision: LimitDecision,
}

/// What a cancelled claim's transaction says of the buyer's side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BuyerVerdict {
    /// The record did not stop the claim.
    NotTheBuyer,
    /// Refused as read: the buyer is at its limit (`409 buyer-limit`).
    Over { limit: u32, counted: u32 },
    /// The record moved since it was read: read it again.
    Moved,
}

impl BuyerClaim {
    /// Whether the record as read refuses the claim for the limit.
    pub(crate) fn is_over(&self) -> bool {
        matches!(self.decision, LimitDecision::Over { .. })
    }

    /// The buyer's side of a cancelled claim: the record's condition
    /// failed with the version read, so the refusal stands; failed with
    /// another version (or a conflict with another writer), it moved.
    pub(crate) fn verdict(&self, failure: Option<&ItemFailure>) -> BuyerVerdict {
        match (failure, &self.decision) {
            (None, _) => BuyerVerdict::NotTheBuyer,
            (Some(ItemFailure::Condition(old)), LimitDecision::Over { counted })
                if version_of(old.as_ref()).unwrap_or(0) == self.read.version =>
            {
                BuyerVerdict::Over {
                    limit: self.buyer.limit,
                    counted: *counted,
                }
            }
            (Some(_), _) => BuyerVerdict::Moved,
        }
    }
}

impl BuyerClaim {
    /// What a committed claim teaches memory: the record changed through
    /// this instance.
    pub(crate) fn changed(&self) -> BuyerSeen {
        BuyerSeen::Changed(self.buyer.buyer.clone())
    }

    /// What a claim refused for the limit as read teaches memory: the
    /// record as read.
    pub(crate) fn refused_as_read(&self) -> BuyerSeen {
        BuyerSeen::RefusedAsRead(self.buyer.buyer.clone(), self.read.clone())
    }
}

/// What a committed write by the order of `token` (a release, a change of
/// places) teaches memory of its buyer: its record changed.
pub(crate) fn changed_through(token: &HoldToken) -> BuyerSeen {
    token
        .buyer()
        .map_or(BuyerSeen::Nothing, |b| BuyerSeen::Changed(b.buyer.clone()))
}

impl Store {
    /// One strongly consistent read of a buyer's record.
    pub async fn buyer_count(
        &self,
        event: &EventRef,
        buyer: &LimitedBuyer,
    ) -> Result<BuyerCount, Error> {
        let item = self.get_consistent(buyer_key(event, buyer)).await?;
        Ok(parse_buyer(item.as_ref())?)
    }

    /// A claim by the order of `token` of `claimed` (seat ids or place
    /// members): its buyer's record read and decided, or `None` when the
    /// event has no limit.
    pub(crate) async fn buyer_claim(
        &self,
        token: &HoldToken,
        order: &OrderId,
        claimed: &[String],
        now: Millis,
    ) -> Result<Option<BuyerClaim>, Error> {
        let Some(buyer) = token.buyer() else {
            return Ok(None);
        };
        let event = EventRef::of(token.event_id());
        let read = self.buyer_count(&event, buyer).await?;
        let decision = decide_claim(&read, order, claimed, buyer.limit, now);
        Ok(Some(BuyerClaim {
            buyer: buyer.clone(),
            read,
            decision,
        }))
    }

    /// A check in a transaction that `claim`'s record of `event` is still
    /// as it read it (what refused the claim still stands).
    pub(crate) fn buyer_unmoved(
        &self,
        event: &EventRef,
        claim: &BuyerClaim,
    ) -> Result<TransactWriteItem, Error> {
        let key = buyer_key(event, &claim.buyer);
        self.txn_check(key, items::buyer::as_read(&claim.read))
    }

    /// The record's item in the claim's transaction: the order's entry
    /// until `expires_at` within the limit, or a refusal the transaction
    /// itself makes (so the claim's other refusals come first).
    pub(crate) fn buyer_item(
        &self,
        claim: &BuyerClaim,
        token: &HoldToken,
        order: &OrderId,
        expires_at: Millis,
        now: Millis,
    ) -> Result<TransactWriteItem, Error> {
        let key = buyer_key(&EventRef::of(token.event_id()), &claim.buyer);
        match &claim.decision {
            LimitDecision::Within { members } => self.txn_update(
                key,
                items::buyer::claim(&claim.read, order, members, expires_at, now),
            ),
            LimitDecision::Over { .. } => self.txn_check(key, items::buyer::refuse()),
        }
    }

    /// The record's item changing the entry of `order` (read: its buyer,
    /// what it holds) by `expression`: `None` when it has no buyer or holds
    /// nothing (then it has no entry).
    /// Also `None` once the order's holds count no more (its expiry has
    /// passed): its entry then counts nothing, and a write could bring back
    /// a record that expired.
    pub(super) fn buyer_order_item(
        &self,
        order: &Order,
        now: Millis,
        expression: impl FnOnce(&OrderId) -> Expression,
    ) -> Result<Option<TransactWriteItem>, Error> {
        let Some(buyer) = order.limited_buyer() else {
            return Ok(None);
        };
        let holds_count = order.expires_at > now;
        if !holds_count || (order.seats.is_empty() && order.places.is_empty()) {
            return Ok(None);
        }
        let key = buyer_key(&EventRef::of(&order.event_id), &buyer);
        Ok(Some(self.txn_update(key, expression(&order.order_id))?))
    }

    /// The record's item of a confirm of `order` (`None` without a
    /// buyer): a sale of units (they count for good; `read`: the record as
    /// read and checked, for units the order may not hold, conditioned on
    /// it), or a refund's release. Holds let go of only after the
    /// transaction stay in the entry (`kept`) until then.
    pub(super) fn buyer_confirm_item(
        &self,
        order: &Order,
        change: BuyerChange<'_>,
        kept: &[String],
        now: Millis,
    ) -> Result<Option<TransactWriteItem>, Error> {
        let Some(buyer) = order.limited_buyer() else {
            return Ok(None);
        };
        let key = buyer_key(&EventRef::of(&order.event_id), &buyer);
        let expression = match change {
            BuyerChange::Sell { units, read } => {
                let units = u32::try_from(units).unwrap_or(u32::MAX);
                items::buyer::sell(&order.order_id, units, read, kept)
            }
            // Its entry as it is, until its holds are let go of.
            BuyerChange::Release if !kept.is_empty() => return Ok(None),
            BuyerChange::Release => {
                return self.buyer_order_item(order, now, items::buyer::release_order)
            }
        };
        Ok(Some(self.txn_update(key, expression)?))
    }

    /// Takes `members` of `order` out of its buyer's record once they were
    /// let go of after a confirm's transaction; a failure is logged (they
    /// stop counting at the order's expiry anyway).
    pub(super) async fn release_buyer_members(&self, order: &Order, members: &[String]) {
        let Some(buyer) = order.limited_buyer() else {
            return;
        };
        if members.is_empty() {
            return;
        }
        let members: Vec<&str> = members.iter().map(String::as_str).collect();
        let request = self
            .client
            .update_item()
            .table_name(&*self.table)
            .set_key(Some(buyer_key(&EventRef::of(&order.event_id), &buyer)));
        let sent = items::buyer::release(&order.order_id, &members)
            .on_update_item(request)
            .send()
            .await;
        if let Err(e) = sent {
            let e = super::errors::sdk_error("UpdateItem", e);
            tracing::warn!(order_id = %order.order_id, error = %crate::error::chain(&e), "buyer's record not updated after a confirm; its holds stop counting at the order's expiry");
        }
    }

    /// The record's item releasing `members` of an order whose token names
    /// a buyer.
    pub(crate) fn buyer_release_item(
        &self,
        token: &HoldToken,
        order: &OrderId,
        members: &[&str],
    ) -> Result<Option<TransactWriteItem>, Error> {
        let Some(buyer) = token.buyer() else {
            return Ok(None);
        };
        let key = buyer_key(&EventRef::of(token.event_id()), buyer);
        Ok(Some(
            self.txn_update(key, items::buyer::release(order, members))?,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::buyer_limit::BuyerRef;
    use crate::domain::EventId;
    use crate::store::value::{n, s};
    use std::collections::HashMap;

    fn claim(version: u64, decision: LimitDecision) -> Result<BuyerClaim, Error> {
        let event = EventId::parse("e")?;
        let buyer = crate::domain::buyer::BuyerId::parse("b").ok_or(Error::BuyerTokenRequired)?;
        Ok(BuyerClaim {
            buyer: LimitedBuyer {
                buyer: BuyerRef::unkeyed(&event, &buyer),
                limit: 4,
            },
            read: BuyerCount {
                version,
                ..BuyerCount::default()
            },
            decision,
        })
    }

    #[test]
    fn a_refusal_stands_only_on_the_record_as_read() -> Result<(), Error> {
        let old = |v: i64| {
            Some(ItemFailure::Condition(Some(HashMap::from([
                ("PK".to_owned(), s("BUYER#x")),
                ("version".to_owned(), n(v)),
            ]))))
        };
        let over = LimitDecision::Over { counted: 4 };
        let within = LimitDecision::Within {
            members: ["A-1-1".to_owned()].into(),
        };
        let refused = BuyerVerdict::Over {
            limit: 4,
            counted: 4,
        };
        let table = [
            (claim(3, over.clone())?, None, BuyerVerdict::NotTheBuyer),
            (claim(3, over.clone())?, old(3), refused.clone()),
            (claim(3, over.clone())?, old(4), BuyerVerdict::Moved),
            (
                claim(0, over.clone())?,
                Some(ItemFailure::Condition(None)),
                refused,
            ),
            (
                claim(3, over)?,
                Some(ItemFailure::Conflict),
                BuyerVerdict::Moved,
            ),
            (claim(3, within.clone())?, old(4), BuyerVerdict::Moved),
            (claim(0, within)?, old(1), BuyerVerdict::Moved),
        ];
        for (i, (claim, failure, expected)) in table.into_iter().enumerate() {
            assert_eq!(claim.verdict(failure.as_ref()), expected, "row {i}");
        }
        Ok(())
    }
}
