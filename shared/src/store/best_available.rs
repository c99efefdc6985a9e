//! best-available's store calls: a section's rows read cheaply (a Query
//! per block of ten seats, eventually consistent unless asked), and n seats
//! claimed in one transaction with the same conditions as get-seat.

use super::buyers::{BuyerClaim, BuyerVerdict};
use super::errors::StoreError;
use super::failures::{block_claim_error, lost_seats, unavailable_in, ItemFailure};
use super::holds::refreshed_token;
use super::items;
use super::items::keyed_block::records_key;
use super::items::order::order_key;
use super::items::seat::{parse_seat, seat_key, FreeFor, SEAT_BLOCK_SIZE};
use super::seat_map::BATCH_GET_KEYS;
use super::{Store, Txn};
use crate::auth::HoldToken;
use crate::domain::buyer_limit::BuyerSeen;
use crate::domain::crowd::SeatSeen;
use crate::domain::keyed_block::KeyedBlock;
use crate::domain::{
    EventId, EventRef, IdempotencyKey, Millis, OrderId, RowPlan, SeatId, SeatSpec, SeatState,
    SectionId,
};
use crate::error::Error;
use std::collections::HashMap;

/// How one block claim's transaction ended, short of a fault.
#[derive(Debug)]
pub enum BlockClaim {
    /// Every seat is held until this instant.
    Held(Millis),
    /// A rival has (or is taking) the seats at these positions of the
    /// block, each with what the transaction saw of it (`None`: a rival's
    /// transaction in flight); none named: another of the buyer's writes
    /// landed first, or the failure named no seat. Choose again.
    Taken(Vec<(usize, Option<SeatSeen>)>),
    /// The token carried an expiry the order has moved past: go again
    /// with this one ([`crate::retry::Rounds::stale_token`]).
    StaleToken(HoldToken),
    /// Refused for the order or its buyer (the seats did not stop it).
    Refused(Error),
    /// The order already records a block under this claim's key (its own
    /// earlier send landed first): answer from the order.
    KeyUsed,
}

/// A block claim's transaction as the store saw it: how it ended, and what
/// it saw of its buyer's record (for the instance's memory).
#[derive(Debug)]
pub struct BlockReport {
    pub claim: BlockClaim,
    pub buyer: BuyerSeen,
}

impl Store {
    /// The requests [`Store::read_rows`] makes for `rows`: a Query per
    /// block of [`SEAT_BLOCK_SIZE`] seats (a block is far under a page).
    pub fn row_read_round_trips(rows: &[RowPlan]) -> usize {
        rows.iter()
            .map(|row| row.count.div_ceil(SEAT_BLOCK_SIZE) as usize)
            .sum()
    }

    /// The states of `rows` of `section`, seat by seat in number order.
    /// Eventually consistent reads cost half and may lag by a moment: the
    /// caller claims with conditions, and reads consistently to be sure.
    pub async fn read_rows(
        &self,
        event: &EventId,
        section: &SectionId,
        rows: &[RowPlan],
        consistent: bool,
    ) -> Result<Vec<Vec<SeatState>>, Error> {
        let specs: Vec<SeatSpec> = rows
            .iter()
            .flat_map(|row| {
                (1..=row.count).map(move |number| SeatSpec {
                    seat_id: SeatId::compose(section, &row.row, number),
                    section_id: section.clone(),
                    row: row.row.clone(),
                    number,
                    ordinal: 0,
                })
            })
            .collect();
        let mut seats = self.read_seats(event, specs, consistent).await?.into_iter();
        Ok(rows
            .iter()
            .map(|row| {
                seats
                    .by_ref()
                    .take(row.count as usize)
                    .map(|seat| seat.state)
                    .collect()
            })
            .collect())
    }

    /// The seats a request checks in one request before choosing again
    /// after a lost race ([`Store::check_seats`]).
    pub const CHECKED_SEATS: usize = BATCH_GET_KEYS;

    /// The states of `seats` (at most [`Store::CHECKED_SEATS`]) of
    /// `event`, read strongly consistently in one `BatchGetItem` (sent
    /// again only for the keys DynamoDB left unprocessed), in their order:
    /// best-available's check of the blocks it may choose after a lost
    /// race, a request for up to 100 seats where a row's read takes one
    /// per ten.
    pub async fn check_seats(
        &self,
        event: &EventId,
        seats: &[SeatId],
    ) -> Result<Vec<SeatState>, Error> {
        let event_ref = EventRef::of(event);
        let keys = seats
            .iter()
            .map(|seat| seat_key(&event_ref, seat))
            .collect();
        let mut found: HashMap<String, SeatState> = HashMap::with_capacity(seats.len());
        for item in self.batch_get(keys, true).await? {
            let seat = parse_seat(&item)?;
            found.insert(seat.spec.seat_id.to_string(), seat.state);
        }
        seats
            .iter()
            .map(|seat| {
                found.remove(seat.as_str()).ok_or_else(|| {
                    StoreError::Malformed {
                        key: seat.to_string(),
                        problem: "seat item missing".into(),
                    }
                    .into()
                })
            })
            .collect()
    }

    /// best-available's transaction, once: claims every one of `seats` for
    /// the order and records them on it, each seat with get-seat's
    /// condition, the order with the holder's condition and room for all of
    /// them (the chooser never picks a seat the order holds), and on an
    /// event with a buyer limit the buyer's record as read just before.
    /// Under an `Idempotency-Key` (`keyed`: the key, and the request and
    /// block to record under it), the order records it in the same write,
    /// once.
    pub async fn claim_block(
        &self,
        order: &OrderId,
        token: &HoldToken,
        seats: &[SeatId],
        keyed: Option<(&IdempotencyKey, &KeyedBlock)>,
        max_seats: u32,
        now: Millis,
    ) -> Result<BlockReport, Error> {
        let ids: Vec<&str> = seats.iter().map(SeatId::as_str).collect();
        let room = i64::from(max_seats) - ids.len() as i64;
        if room < 0 {
            return Err(Error::SeatLimit { max: max_seats });
        }
        let claimed: Vec<String> = ids.iter().map(|id| (*id).to_owned()).collect();
        let buyer = self.buyer_claim(token, order, &claimed, now).await?;
        let mut items = Vec::with_capacity(seats.len() + 2);
        for seat in seats {
            items.push(self.claim_item(token, order, seat, FreeFor::Another, now)?);
        }
        items.push(self.txn_update(
            order_key(order),
            items::order::add_block(token, &ids, room, keyed, now),
        )?);
        if let Some(buyer) = &buyer {
            items.push(self.buyer_item(buyer, token, order, token.expires_at(), now)?);
        }
        let Txn::Cancelled(reasons) = self.transact(items).await? else {
            let seen = buyer.as_ref().map(BuyerClaim::changed).unwrap_or_default();
            let claim = BlockClaim::Held(token.expires_at());
            return Ok(BlockReport { claim, buyer: seen });
        };
        cancelled_block(reasons, buyer, (seats, keyed), token, (max_seats, now))
    }
}

/// What a cancelled block claim means, from its cancellation reasons (the
/// seats', then the order's, then the buyer's if it had one): the buyer
/// unavailable or over its limit, another of the buyer's writes first
/// (chosen again, as a lost race), the key's earlier send landed, a stale
/// token, the order or a seat refusing it, or the seats lost to a rival
/// (named where they were).
fn cancelled_block(
    mut reasons: Vec<Option<ItemFailure>>,
    buyer: Option<BuyerClaim>,
    (seats, keyed): (&[SeatId], Option<(&IdempotencyKey, &KeyedBlock)>),
    token: &HoldToken,
    (max_seats, now): (u32, Millis),
) -> Result<BlockReport, Error> {
    let report = |claim, buyer| Ok(BlockReport { claim, buyer });
    let buyer_failure = buyer.is_some().then(|| reasons.pop().flatten()).flatten();
    if let Some(e) = unavailable_in("best-available", std::slice::from_ref(&buyer_failure)) {
        return Err(e);
    }
    let order_failure = reasons.last().cloned().flatten();
    if let (Some((key, _)), Some(ItemFailure::Condition(old))) = (keyed, &order_failure) {
        if records_key(old.as_ref(), key) {
            return report(BlockClaim::KeyUsed, BuyerSeen::Nothing);
        }
    }
    if let Some(refreshed) = refreshed_token(order_failure.as_ref(), token, now)? {
        return report(BlockClaim::StaleToken(refreshed), BuyerSeen::Nothing);
    }
    if let (true, Some(buyer)) = (reasons.iter().all(Option::is_none), buyer) {
        match buyer.verdict(buyer_failure.as_ref()) {
            BuyerVerdict::Over { limit, counted } => {
                let refused = BlockClaim::Refused(Error::BuyerLimit { limit, counted });
                return report(refused, buyer.refused_as_read());
            }
            // Another of the buyer's writes landed first: like a
            // lost race, the handler chooses again within its
            // round trips.
            BuyerVerdict::Moved => return report(BlockClaim::Taken(vec![]), BuyerSeen::Nothing),
            BuyerVerdict::NotTheBuyer => {}
        }
    }
    let lost = lost_seats(&reasons, seats.len());
    let claim = match block_claim_error(reasons, token, max_seats, now)? {
        Some(e) => BlockClaim::Refused(e),
        None => BlockClaim::Taken(lost),
    };
    report(claim, BuyerSeen::Nothing)
}
