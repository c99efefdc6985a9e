//! The claim routes' questions to the instance's memory, and their reports
//! back (docs/API.md, "Under a crowd"; the rules: [`crate::domain::crowd`]
//! for seats, [`crate::domain::buyer_limit`] for buyers). A handler asks
//! one question before a claim's first store call and reports after each:
//! memory only ever refuses, and every success is a real conditional write.

use super::Memory;
use crate::domain::buyer_limit::{BuyerSeen, LimitedBuyer};
use crate::domain::crowd::{refusal_on_read, Recalled, SeatSeen};
use crate::domain::{EventId, Millis, OrderId, SeatId, SeatState};
use crate::error::Error;
use crate::store::{ClaimReport, SeatClaim};

/// What memory says of a get-seat claim before any store call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimQuestion {
    /// This instance keeps refusing the seat and saw it so: refuse, once
    /// the claimant's own order shows it does not hold the seat (it may
    /// have changed hands through another instance).
    RefuseUnlessOwn(SeatSeen),
    /// This instance keeps refusing the claimant's buyer for its limit:
    /// refuse with `counted`, once the order and the seat show that no
    /// other answer comes first.
    RefuseBuyer { counted: u32 },
    /// The exact path: read the seat (a read unit), and if it may be
    /// claimable, the conditional write (write units on its partition).
    Claim,
}

impl Memory {
    /// The one question before `order`'s claim of `seat` at `now` (its
    /// buyer, if the event limits buyers). A refusal it suggests counts
    /// as one (the crowd is still there).
    pub fn before_claim(
        &self,
        event: &EventId,
        seat: &SeatId,
        order: &OrderId,
        buyer: Option<&LimitedBuyer>,
        now: Millis,
    ) -> ClaimQuestion {
        if let Some(seen) = self.crowd.refuse(event, seat, order.as_str(), now) {
            return ClaimQuestion::RefuseUnlessOwn(seen);
        }
        let claimed = [seat.as_str().to_owned()];
        if let Some(counted) = buyer.and_then(|b| self.buyers.refuse(b, order, &claimed, now)) {
            return ClaimQuestion::RefuseBuyer { counted };
        }
        ClaimQuestion::Claim
    }

    /// The report of a strongly consistent read of `seat` (`None`: no such
    /// seat) for `claimant`'s claim: what refuses it, if anything, kept as
    /// an exact refusal. A seat the read shows claimable forgets what was
    /// kept of it: no later answer may rest on an older sight.
    pub fn after_seat_read(
        &self,
        event: &EventId,
        seat: &SeatId,
        claimant: &OrderId,
        state: Option<&SeatState>,
        now: Millis,
    ) -> Option<SeatSeen> {
        let refused = state.and_then(|state| refusal_on_read(state, claimant.as_str(), now));
        let Some((holder, seen)) = refused else {
            self.crowd.forget(event, seat);
            return None;
        };
        self.crowd.refused_exactly(event, seat, &holder, seen, now);
        Some(seen)
    }

    /// What to make of `claimant`'s claim of `seat` at `now` when DynamoDB
    /// throttled the read of it (a crowd on the seat's partition): a
    /// refusal on what this instance saw of the seat within the contract's
    /// bounds (it counts as a refusal), the holder's claim, or nothing.
    pub fn recall_seat(
        &self,
        event: &EventId,
        seat: &SeatId,
        claimant: &OrderId,
        now: Millis,
    ) -> Recalled {
        self.crowd.recall(event, seat, claimant.as_str(), now)
    }

    /// The report of a claim's transaction on `seat`: a hold forgets what
    /// was kept of the seat, an exact refusal is kept, and what it saw of
    /// the buyer's record is learnt.
    pub fn after_claim(&self, event: &EventId, seat: &SeatId, report: &ClaimReport, now: Millis) {
        match &report.claim {
            SeatClaim::Held(_) => self.crowd.forget(event, seat),
            SeatClaim::Refused {
                error: Error::SeatHeld | Error::SeatSold,
                seen: Some((holder, seen)),
            } => self.crowd.refused_exactly(event, seat, holder, *seen, now),
            SeatClaim::Refused { .. }
            | SeatClaim::StaleToken(_)
            | SeatClaim::BuyerMoved
            | SeatClaim::Contested => {}
        }
        self.learn_buyer(&report.buyer, now);
    }

    /// The report of a release of `seat` through this instance: it
    /// remembers no holder of it now, and learns what the release saw of
    /// the buyer.
    pub fn after_release(&self, event: &EventId, seat: &SeatId, buyer: &BuyerSeen, now: Millis) {
        self.crowd.forget(event, seat);
        self.learn_buyer(buyer, now);
    }

    /// The report of any other write that counted against a buyer's limit
    /// (best-available's block, hold-ga's places).
    pub fn learn_buyer(&self, buyer: &BuyerSeen, now: Millis) {
        self.buyers.learn(buyer, now);
    }
}
