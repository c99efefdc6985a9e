//! Every bounded retry in one place: how many rounds each loop may take,
//! and the one jittered back-off between rounds that lost a race. A loop
//! that runs out of rounds answers `503 store-unavailable` (retry later),
//! never a refusal that could be false. The SDK's own retries of throttled
//! and failed calls are its standard mode, set where the client is built
//! (`store::Store::connect`).

use std::time::Duration;

/// best-available and hold-ga: choices one request may try after losing
/// each to a rival. A section this contended is in a stampede; the client
/// is told to retry, never that there are no seats or places.
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

/// `BatchGetItem` rounds for the keys DynamoDB left unprocessed (it does
/// under throttling), each after a back-off; then the read is unavailable.
pub const UNPROCESSED_KEYS_ROUNDS: u32 = 5;

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
pub async fn back_off(losses: u32) {
    let pause = crate::world::random_u64() % (backoff_ceiling_ms(losses) + 1);
    tokio::time::sleep(Duration::from_millis(pause)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_back_off_doubles_from_its_base_up_to_its_cap() {
        let ceilings: Vec<u64> = (0..8).map(backoff_ceiling_ms).collect();
        assert_eq!(ceilings, [5, 10, 20, 40, 80, 160, 200, 200]);
        assert_eq!(backoff_ceiling_ms(u32::MAX), MAX_BACKOFF_MS);
    }
}
