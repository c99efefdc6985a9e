//! best-available's store calls: a section's rows read cheaply (a Query
//! per block of ten seats, eventually consistent unless asked), and n seats
//! claimed in one transaction with the same conditions as get-seat.

use super::failures::block_claim_error;
use super::items;
use super::items::order::order_key;
use super::items::seat::{FreeFor, SEAT_BLOCK_SIZE};
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
/// sent again for each time the order's expiry moved under it.
pub const CLAIM_BLOCK_MAX_REQUESTS: usize = crate::retry::STALE_TOKEN_RETRIES as usize + 1;

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
        let mut rounds = super::holds::stale_token_rounds();
        while rounds.next().await.is_some() {
            let mut items = Vec::with_capacity(seats.len() + 1);
            for seat in seats {
                items.push(self.claim_item(&token, order, seat, FreeFor::Another, now)?);
            }
            items.push(self.txn_update(
                order_key(order),
                items::order::add_block(&token, &ids, room, now),
            )?);
            let Txn::Cancelled(reasons) = self.transact(items).await? else {
                return Ok(BlockClaim::Held(token.expires_at()));
            };
            let order_failure = reasons.last().cloned().flatten();
            if let Some(refreshed) =
                super::holds::refreshed_token(order_failure.as_ref(), &token, now)?
            {
                token = refreshed;
                continue;
            }
            return match block_claim_error(reasons, &token, max_seats, now)? {
                Some(e) => Err(e),
                None => Ok(BlockClaim::Taken),
            };
        }
        Err(rounds.spent())
    }
}
