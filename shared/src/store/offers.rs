//! A waitlist's offer, written in one transaction (API.md, "Offers"): the
//! new order already holding its seats or places, each seat's claim or
//! each bucket's take, the entry's
//! move from WAITING to OFFERED with all that leaving WAITING writes
//! (`Store::leaving_waiting`), and a check that the waitlist is still the
//! open generation the offerer read, on a copy of its state. No seat is
//! in two offers and no
//! entry has two: any of them moved since the offerer's look cancels the
//! whole, and it looks again.

use super::expression::Expression;
use super::failures::{unavailable_in, ItemFailure};
use super::items;
use super::items::entry::{end_waiting, entry_copy, entry_key, offer_made};
use super::items::order::{create_offer, held_members, order_key};
use super::items::positions::offer_end_item;
use super::items::resale::places_write;
use super::items::seat::{seat_key, FreeFor};
use super::items::waitlist::{keeping_listings, offering, waitlist_copy_key};
use super::{Store, Txn};
use crate::auth::HoldToken;
use crate::domain::offer::Offered;
use crate::domain::waitlist::EndReason;
use crate::domain::waitlist_entry::Entry;
use crate::domain::waitlist_offer_counts::OfferEnd;
use crate::domain::{EventRef, Millis, Order};
use crate::error::Error;
use crate::store::buyers::BuyerClaim;
use aws_sdk_dynamodb::types::TransactWriteItem;

/// What an offer's transaction checks on a copy of the waitlist's state
/// (`entry_copy`): still the open generation the look read (a delete or
/// a new generation during the look stops it), and for an offer of listed
/// seats, that their listings still read listed (a put that closed returns
/// during the look makes it lose, rather than offer what its buyer could
/// not pay).
fn offered_under(order: &Order, generation: u64, now: Millis) -> Expression {
    let Some(offer) = &order.offer else {
        return offering(generation);
    };
    let seats = offer.resales.iter().map(|r| r.listed_at);
    let places = offer.place_resales.iter().map(|r| r.listed_at);
    match seats.chain(places).min() {
        Some(listed_at) => keeping_listings(generation, listed_at, now),
        None => offering(generation),
    }
}

/// How an offer's transaction ended, short of a fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OfferWrite {
    Made,
    /// A seat or a bucket's places were taken, or the entry moved (left,
    /// removed, offered by another offerer) or the waitlist ended, since
    /// the look: what the refusal showed of which.
    Lost(OfferLoss),
    /// The offer would take its buyer over the event's limit: nothing
    /// offered, and the entry ended (`buyer-limit`), in one transaction
    /// with checks that the record is still as read and the waitlist the
    /// open generation (either moved: `Lost`, and the look reads again).
    OverLimit,
}

/// What a lost offer's transaction showed of what moved since the look.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OfferLoss {
    /// The entry no longer waits: its condition failed, or its offer's
    /// order exists (the order's id is the entry's own, so another
    /// offerer's offer to it came first). Its places are off the index.
    pub entry_left: bool,
    /// The entry, or its order, was in another transaction at the time:
    /// whether it still waits is unknown.
    pub entry_unsure: bool,
    /// The waitlist's check failed: a delete or a new generation since
    /// the look read it (every other offer of the look would fail on it
    /// too), or, for an offer of listed seats, a put that closed returns.
    pub waitlist_moved: bool,
    /// The offered units (by their place in the offer: its seats, or its
    /// bucket takes) whose condition failed: taken since the look read
    /// them.
    pub taken: Vec<usize>,
    /// The offered units refused for another reason (a transaction in
    /// flight on them): free or not, unknown.
    pub unsure: Vec<usize>,
}

impl OfferLoss {
    /// Whether any offered unit was refused.
    pub fn units(&self) -> bool {
        !self.taken.is_empty() || !self.unsure.is_empty()
    }
}

/// Where an offer's transaction checks the waitlist: after its order (0)
/// and its entry (1).
const WAITLIST_CHECK_AT: usize = 2;

/// The loss an offer's refusal shows, from its per-item `reasons`: the
/// order first, then the entry, the waitlist's check
/// ([`WAITLIST_CHECK_AT`]), and the units from `first_unit` on.
fn offer_loss(reasons: &[Option<ItemFailure>], first_unit: usize) -> OfferLoss {
    let failed = |i: usize| reasons.get(i).and_then(Option::as_ref);
    let condition = |i: usize| matches!(failed(i), Some(ItemFailure::Condition(_)));
    let entry_left = condition(0) || condition(1);
    let mut loss = OfferLoss {
        entry_left,
        entry_unsure: !entry_left && (failed(0).is_some() || failed(1).is_some()),
        waitlist_moved: condition(WAITLIST_CHECK_AT),
        ..OfferLoss::default()
    };
    for (unit, reason) in reasons.iter().skip(first_unit).enumerate() {
        match reason {
            Some(ItemFailure::Condition(_)) => loss.taken.push(unit),
            Some(_) => loss.unsure.push(unit),
            None => {}
        }
    }
    loss
}

impl Store {
    /// Offers `order` (a new PENDING order of `entry`'s buyer holding
    /// `offered`, its seats or places; `token`, its hold token) to the waiting `entry` of the
    /// waitlist's `generation` at `now`, in one transaction. On an event
    /// with a buyer limit (the token names the buyer) the buyer's record is
    /// read first and the offer counted in it in the same transaction, as
    /// a claim is, over the version read; over the limit, the entry ends.
    pub async fn make_offer(
        &self,
        entry: &Entry,
        order: &Order,
        offered: &Offered,
        token: &HoldToken,
        generation: u64,
        now: Millis,
    ) -> Result<OfferWrite, Error> {
        let event = EventRef::of(&order.event_id);
        let claimed = held_members(&order.seats, &order.places);
        let buyer = self
            .buyer_claim(token, &order.order_id, &claimed, now)
            .await?;
        if let Some(over) = buyer.as_ref().filter(|b| b.is_over()) {
            return self
                .end_at_limit(&event, entry, over, generation, now)
                .await;
        }
        // In this order: `offer_loss` reads the reasons by place.
        let mut writes = vec![
            self.txn_update(order_key(&order.order_id), create_offer(order))?,
            self.txn_update(
                entry_key(&event, &entry.entry_id),
                offer_made(&order.order_id, now),
            )?,
            self.txn_check(
                waitlist_copy_key(&event, entry_copy(&entry.entry_id)),
                offered_under(order, generation, now),
            )?,
        ];
        writes.extend(self.leaving_waiting(&event, entry, now, Some(order.expires_at))?);
        if let Some(buyer) = &buyer {
            let expires_at = order.expires_at;
            writes.push(self.buyer_item(buyer, token, &order.order_id, expires_at, now)?);
        }
        let first_unit = writes.len();
        writes.extend(self.offered_units(&event, order, offered, generation, now)?);
        let reasons = match self.transact(writes).await? {
            Txn::Committed => return Ok(OfferWrite::Made),
            Txn::Cancelled(reasons) => reasons,
        };
        if let Some(e) = unavailable_in("offer", &reasons) {
            return Err(e);
        }
        let loss = offer_loss(&reasons, first_unit);
        // The buyer's record, where there is one, sits just before the units.
        let buyer_moved =
            buyer.is_some() && matches!(reasons.get(first_unit.wrapping_sub(1)), Some(Some(_)));
        tracing::info!(entry_id = %entry.entry_id, entry_left = loss.entry_left, units = loss.units(), buyer_moved, "a waitlist offer lost to a move since its look");
        Ok(OfferWrite::Lost(loss))
    }

    /// The offer's holds: each seat's claim under get-seat's own condition
    /// (free, or its hold expired), a listed seat's on its resale item
    /// (still its seller's listing of this generation, unheld), or each
    /// bucket's take under hold-ga's (room for the places once the expired
    /// holds it reclaims are gone, each still as read).
    fn offered_units(
        &self,
        event: &EventRef,
        order: &Order,
        offered: &Offered,
        generation: u64,
        now: Millis,
    ) -> Result<Vec<TransactWriteItem>, Error> {
        let (id, expires_at) = (&order.order_id, order.expires_at);
        match offered {
            Offered::Seats(seats) => seats
                .iter()
                .map(|seat| match order.resale_of(seat) {
                    Some(resale) => {
                        let hold =
                            items::resale::hold(id, expires_at, &resale.seller, generation, now);
                        self.txn_update(items::resale::resale_key(event, seat), hold)
                    }
                    None => {
                        let claim = items::seat::claim(id, expires_at, FreeFor::Another, now);
                        self.txn_update(seat_key(event, seat), claim)
                    }
                })
                .collect(),
            Offered::Places(taken) => taken
                .takes
                .iter()
                .map(|take| {
                    let write = items::bucket::take(id, take, 0, expires_at, now);
                    let (key, write) =
                        places_write(event, order, &taken.section, take.bucket, write);
                    self.txn_update(key, write)
                })
                .collect(),
        }
    }

    /// The end of `order`'s offer by the write being built, logged in its
    /// transaction for get-waitlist's counts (`domain::
    /// waitlist_offer_counts`): `purchased` or not, and whether the offer
    /// was `live` then (a late sale of one already ended counts its
    /// purchase only; one its holder emptied logged its end then). `None`
    /// for an order that is no offer, an offer made before its generation
    /// was recorded, or an end that changes no count.
    pub(super) fn offer_end(
        &self,
        order: &Order,
        purchased: bool,
        live: bool,
    ) -> Result<Option<TransactWriteItem>, Error> {
        let Some(entry) = order.offer_entry() else {
            return Ok(None);
        };
        let live = live && order.offer.as_ref().is_some_and(|o| o.emptied_at.is_none());
        if !purchased && !live {
            return Ok(None);
        }
        // Stamped now, just before the transaction is sent: the counts
        // read an end again until `SETTLE_MS` after its stamp, and a
        // confirm may have read for seconds since its round began.
        let stamp = crate::world::now();
        let end = OfferEnd {
            at: stamp,
            expires_at: order.expires_at,
            purchased,
            live,
        };
        let item = offer_end_item(&EventRef::of(&order.event_id), entry, &end);
        // Its key is the stamp and the entry: nothing to condition on.
        Ok(Some(self.txn_put(item, Expression::default())?))
    }

    /// Ends `entry` (`buyer-limit`) at `now`, its buyer's record as `over`
    /// read it refusing the offer, in one transaction with what leaving
    /// WAITING writes and checks that the record has not moved (a drop or
    /// an expiry since may leave room) and that the waitlist is still the
    /// open generation (a delete ends it `closed`, not here).
    async fn end_at_limit(
        &self,
        event: &EventRef,
        entry: &Entry,
        over: &BuyerClaim,
        generation: u64,
        now: Millis,
    ) -> Result<OfferWrite, Error> {
        // In this order: the waitlist's check is read by its place.
        let mut writes = vec![
            self.txn_update(
                entry_key(event, &entry.entry_id),
                end_waiting(EndReason::BuyerLimit, now),
            )?,
            self.txn_check(
                waitlist_copy_key(event, entry_copy(&entry.entry_id)),
                offering(generation),
            )?,
            self.buyer_unmoved(event, over)?,
        ];
        writes.extend(self.leaving_waiting(event, entry, now, None)?);
        let reasons = match self.transact(writes).await? {
            Txn::Committed => return Ok(OfferWrite::OverLimit),
            Txn::Cancelled(reasons) => reasons,
        };
        if let Some(e) = unavailable_in("offer", &reasons) {
            return Err(e);
        }
        Ok(OfferWrite::Lost(limit_loss(&reasons)))
    }
}

/// Where an entry's end at its buyer's limit checks the waitlist: after
/// the entry (0).
const LIMIT_WAITLIST_CHECK_AT: usize = 1;

/// The loss an entry's end at its buyer's limit shows, from its per-item
/// `reasons`: the waitlist moved (a delete, a new generation: the look
/// ends, as an offer's loss on it ends it), or the entry or its buyer's
/// record did (whether it still waits is unknown).
fn limit_loss(reasons: &[Option<ItemFailure>]) -> OfferLoss {
    let failed = |i: usize| reasons.get(i).and_then(Option::as_ref);
    let waitlist_moved = matches!(
        failed(LIMIT_WAITLIST_CHECK_AT),
        Some(ItemFailure::Condition(_))
    );
    OfferLoss {
        entry_unsure: !waitlist_moved,
        waitlist_moved,
        ..OfferLoss::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn condition() -> Option<ItemFailure> {
        Some(ItemFailure::Condition(None))
    }

    #[test]
    fn an_end_at_the_limit_refused_on_the_waitlist_ends_the_look() {
        let moved = limit_loss(&[None, condition(), None]);
        assert!(moved.waitlist_moved && !moved.entry_unsure);
        let entry = limit_loss(&[condition(), None, None]);
        assert!(!entry.waitlist_moved && entry.entry_unsure);
        let buyer = limit_loss(&[None, None, condition()]);
        assert!(!buyer.waitlist_moved && buyer.entry_unsure);
    }

    #[test]
    fn a_refusal_says_what_moved() {
        let conflict = || Some(ItemFailure::Conflict);
        // (reasons: order, entry, check, two more, then two units)
        let table: [(Vec<Option<ItemFailure>>, OfferLoss); 6] = [
            (
                vec![condition(), condition(), None, None, None, None, None],
                OfferLoss {
                    entry_left: true,
                    ..OfferLoss::default()
                },
            ),
            (
                vec![None, condition(), None, None, None, None, condition()],
                OfferLoss {
                    entry_left: true,
                    taken: vec![1],
                    ..OfferLoss::default()
                },
            ),
            (
                vec![None, None, None, None, None, condition(), conflict()],
                OfferLoss {
                    taken: vec![0],
                    unsure: vec![1],
                    ..OfferLoss::default()
                },
            ),
            (
                vec![None, conflict(), None, None, None, None, None],
                OfferLoss {
                    entry_unsure: true,
                    ..OfferLoss::default()
                },
            ),
            // The waitlist's check alone: nothing of the entry or the
            // units, and the look ends.
            (
                vec![None, None, condition(), None, None, None, None],
                OfferLoss {
                    waitlist_moved: true,
                    ..OfferLoss::default()
                },
            ),
            // Another transaction on the waitlist's copy: nothing decided.
            (
                vec![None, None, conflict(), None, None, None, None],
                OfferLoss::default(),
            ),
        ];
        for (reasons, loss) in table {
            assert_eq!(offer_loss(&reasons, 5), loss);
            assert_eq!(
                loss.units(),
                !loss.taken.is_empty() || !loss.unsure.is_empty()
            );
        }
    }
}
