//! Every bounded retry in one place: how many rounds each loop may take,
//! the one loop that runs them ([`Rounds`]) and the one jittered back-off
//! between rounds that lost a race. A loop that runs out of rounds answers
//! `503 store-unavailable` (retry later), never a refusal that could be
//! false. The SDK's own retries of throttled and failed calls are its
//! standard mode, set where the client is built (`store::Store::connect`).

use std::time::Duration;

use crate::error::Error;

/// A bounded retry loop's bookkeeping, the one every loop uses: how many
/// rounds it has left, the jittered back-off after a round lost to a
/// rival, and the `503` once every round is spent.
///
/// ```text
/// let mut rounds = Rounds::new("extend-order", ORDER_ROUNDS);
/// while rounds.next().await.is_some() {
///     // read, decide, write; on a lost race:
///     rounds.lost();
///     continue;
/// }
/// Err(rounds.spent())
/// ```
#[derive(Debug)]
pub struct Rounds {
    what: &'static str,
    limit: u32,
    started: u32,
    losses: u32,
    pause: bool,
}

impl Rounds {
    /// A loop of at most `limit` rounds, named `what` in the log.
    pub fn new(what: &'static str, limit: u32) -> Self {
        Self {
            what,
            limit,
            started: 0,
            losses: 0,
            pause: false,
        }
    }

    /// Starts the next round, after a back-off if the last one was lost:
    /// its number (from 0), or `None` once every round is spent.
    pub async fn next(&mut self) -> Option<u32> {
        if self.started == self.limit {
            return None;
        }
        if std::mem::take(&mut self.pause) {
            back_off(self.losses).await;
        }
        self.started += 1;
        Some(self.started - 1)
    }

    /// A claim's retries after an extension made its token stale
    /// meanwhile (for a loop that counts its first try apart).
    pub fn stale_token() -> Self {
        Self::new(
            "a claim whose order's expiry kept moving",
            STALE_TOKEN_RETRIES,
        )
    }

    /// The rounds of a claim or release whose buyer's record may move
    /// under it: each lost round follows another claim, release or sale of
    /// the same buyer (a buyer clicking in several tabs), so a few suffice
    /// before a 503.
    pub fn buyer_moved() -> Self {
        Self::new("a claim whose buyer's record kept moving", BUYER_ROUNDS)
    }

    /// The rounds of a claim whose seat another transaction was writing at
    /// the same instant: each reads the seat, which shows the rival's hold
    /// once it committed; a seat still free after that many is a crowd
    /// the store cannot settle now.
    pub fn contested() -> Self {
        Self::new(
            "a claim whose seat kept meeting rivals in flight",
            CONTESTED_ROUNDS,
        )
    }

    /// How many rounds were lost so far.
    pub fn losses(&self) -> u32 {
        self.losses
    }

    /// Whether the round running is the last one.
    pub fn is_last(&self) -> bool {
        self.started == self.limit
    }

    /// The round running lost to a rival (or to a change it made): the next
    /// one follows a back-off, longer after each loss. A round that simply
    /// goes again (it knows more now) needs no call.
    pub fn lost(&mut self) {
        self.losses += 1;
        self.pause = true;
    }

    /// The answer once every round is spent, logged: `503
    /// store-unavailable`, never a refusal that could be false.
    pub fn spent(&self) -> Error {
        tracing::warn!(
            what = self.what,
            rounds = self.limit,
            "every round lost to a rival or a change: 503"
        );
        Error::StoreUnavailable
    }
}

/// hold-ga: choices one request may try after losing each to a rival. A
/// section this contended is in a stampede; the client is told to retry,
/// never that there are no places.
pub const CLAIM_ATTEMPTS: u32 = 20;

/// extend-order and cancel-order: reads of an order whose transaction
/// failed because the order changed under it (its holder's own claims
/// racing it).
pub const ORDER_ROUNDS: u32 = 10;

/// confirm: reads of an order that changed under its transaction. Orders
/// only move forward (PENDING → EXPIRED or CANCELLED → COMPLETED or
/// REFUND_DUE), so this converges in two or three.
pub const CONFIRM_ROUNDS: u32 = 4;

/// confirm: re-plans of general-admission places when rivals keep taking
/// the places it planned on. Not the order changing, so they spend none of
/// [`CONFIRM_ROUNDS`]; then `503` (the payment backend retries the
/// webhook), never a refund while places may still be free.
pub const PLACE_REPLANS: u32 = 10;

/// A holder's claim whose token carried an expiry the order has moved past
/// (extend-order meanwhile): retried with the order's own; more in a row
/// means the holder keeps extending meanwhile.
pub const STALE_TOKEN_RETRIES: u32 = 3;

/// Rounds of a claim whose seat another transaction was writing at the
/// same instant (a rival's claim commits within milliseconds).
pub const CONTESTED_ROUNDS: u32 = 3;

/// Rounds of a claim whose buyer's record moved under it (another claim,
/// release or sale of the same buyer): each lost round means another of
/// the buyer's requests landed, and a buyer's requests are few.
pub const BUYER_ROUNDS: u32 = 12;

/// Times a batch's unprocessed keys or items (DynamoDB leaves some under
/// throttling) are sent again, each after a back-off; then the request is
/// unavailable.
pub const UNPROCESSED_KEYS_ROUNDS: u32 = 5;

/// put-queue and delete-queue: writes of the queue's state that lost to
/// another write of it (the admitter's tick, a join admitted on the spot).
pub const QUEUE_WRITE_ROUNDS: u32 = 4;

/// A back-off of up to this times 2^losses, at most [`MAX_BACKOFF_MS`]:
/// every buyer of a stampede wants the same thing, and without the spread
/// they would keep colliding, round after round, one winner a round.
const BACKOFF_BASE_MS: u64 = 5;
const MAX_BACKOFF_MS: u64 = 200;

/// The longest pause before the round after `losses` lost ones: full
/// jitter draws uniformly from `0..=backoff_ceiling_ms(losses)`.
pub fn backoff_ceiling_ms(losses: u32) -> u64 {
    (BACKOFF_BASE_MS << losses.min(10)).min(MAX_BACKOFF_MS)
}

/// Pauses before the next round, after `losses` lost ones (full jitter).
async fn back_off(losses: u32) {
    let pause = crate::world::random_u64() % (backoff_ceiling_ms(losses) + 1);
    tokio::time::sleep(Duration::from_millis(pause)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn rounds_run_to_their_limit_pausing_only_after_a_loss() {
        let mut rounds = Rounds::new("test", 3);
        let mut seen = Vec::new();
        while let Some(i) = rounds.next().await {
            seen.push((i, rounds.is_last()));
            rounds.lost();
        }
        assert_eq!(seen, [(0, false), (1, false), (2, true)]);
        assert_eq!(rounds.losses, 3);
        assert!(rounds.next().await.is_none(), "spent stays spent");
        assert!(matches!(rounds.spent(), Error::StoreUnavailable));
        let mut again = Rounds::new("test", 2);
        assert_eq!(again.next().await, Some(0));
        assert!(!again.pause, "no pause without a loss");
        assert_eq!(again.next().await, Some(1));
    }

    #[test]
    fn the_back_off_doubles_from_its_base_up_to_its_cap() {
        let ceilings: Vec<u64> = (0..8).map(backoff_ceiling_ms).collect();
        assert_eq!(ceilings, [5, 10, 20, 40, 80, 160, 200, 200]);
        assert_eq!(backoff_ceiling_ms(u32::MAX), MAX_BACKOFF_MS);
    }
}
