//! best-available's store calls: a section's rows read cheaply (a Query
//! per block of ten seats, eventually consistent unless asked), and n seats
//! claimed in one transaction with the same conditions as get-seat.

use super::buyers::BuyerVerdict;
use super::failures::{block_claim_error, unavailable_in};
use super::items;
use super::items::order::order_key;
use super::items::seat::{FreeFor, SEAT_BLOCK_SIZE};
use super::memory::Memory;
use super::{Store, Txn};
use crate::auth::HoldToken;
use crate::domain::{EventId, Millis, OrderId, RowPlan, SeatId, SeatSpec, SeatState, SectionId};
use crate::error::Error;

/// How a block claim ended, short of an error for the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockClaim {
    /// Every seat is held until this instant.
    Held(Millis),
    /// A rival has (or is taking) one of the seats: choose again.
    Taken,
}

/// The most requests one [`Store::claim_block`] makes: its transaction,
/// sent again for each time the order's expiry moved under it; on an
/// event with a buyer limit, each after a read of the buyer's record
/// ([`claim_block_max_requests`]).
pub const CLAIM_BLOCK_MAX_REQUESTS: usize = crate::retry::STALE_TOKEN_RETRIES as usize + 1;

/// [`CLAIM_BLOCK_MAX_REQUESTS`] for a claim by `token`.
pub fn claim_block_max_requests(token: &HoldToken) -> usize {
    match token.buyer() {
        Some(_) => 2 * CLAIM_BLOCK_MAX_REQUESTS,
        None => CLAIM_BLOCK_MAX_REQUESTS,
    }
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

    /// Claims every one of `seats` for the order and records them on it, in
    /// one transaction: each seat with get-seat's condition, the order with
    /// the holder's condition and room for all of them (the chooser never
    /// picks a seat the order holds). A token from before an extension is
    /// retried once with the order's own expiry.
    pub async fn claim_block(
        &self,
        memory: &Memory,
        order: &OrderId,
        token: &HoldToken,
        seats: &[SeatId],
        max_seats: u32,
        now: Millis,
    ) -> Result<BlockClaim, Error> {
        let ids: Vec<&str> = seats.iter().map(SeatId::as_str).collect();
        let room = i64::from(max_seats) - ids.len() as i64;
        if room < 0 {
            return Err(Error::SeatLimit { max: max_seats });
        }
        let mut token = token.clone();
        let mut stale = super::holds::stale_token_retries();
        let claimed: Vec<String> = ids.iter().map(|id| (*id).to_owned()).collect();
        loop {
            let buyer = self.buyer_claim(&token, order, &claimed, now).await?;
            let mut items = Vec::with_capacity(seats.len() + 2);
            for seat in seats {
                items.push(self.claim_item(&token, order, seat, FreeFor::Another, now)?);
            }
            items.push(self.txn_update(
                order_key(order),
                items::order::add_block(&token, &ids, room, now),
            )?);
            if let Some(buyer) = &buyer {
                items.push(self.buyer_item(buyer, &token, order, token.expires_at(), now)?);
            }
            let Txn::Cancelled(mut reasons) = self.transact(items).await? else {
                if let Some(buyer) = buyer {
                    buyer.remember(memory, false, now);
                }
                return Ok(BlockClaim::Held(token.expires_at()));
            };
            let buyer_failure = buyer.is_some().then(|| reasons.pop().flatten()).flatten();
            if let Some(e) = unavailable_in("best-available", std::slice::from_ref(&buyer_failure))
            {
                return Err(e);
            }
            let order_failure = reasons.last().cloned().flatten();
            if let Some(refreshed) =
                super::holds::refreshed_token(order_failure.as_ref(), &token, now)?
            {
                stale.next().await.ok_or_else(|| stale.spent())?;
                token = refreshed;
                continue;
            }
            if let (true, Some(buyer)) = (reasons.iter().all(Option::is_none), buyer) {
                match buyer.verdict(buyer_failure.as_ref()) {
                    BuyerVerdict::Over { limit, counted } => {
                        buyer.remember(memory, true, now);
                        return Err(Error::BuyerLimit { limit, counted });
                    }
                    // Another of the buyer's writes landed first: like a
                    // lost race, the handler chooses again within its
                    // round trips.
                    BuyerVerdict::Moved => return Ok(BlockClaim::Taken),
                    BuyerVerdict::NotTheBuyer => {}
                }
            }
            return match block_claim_error(reasons, &token, max_seats, now)? {
                Some(e) => Err(e),
                None => Ok(BlockClaim::Taken),
            };
        }
    }
}
