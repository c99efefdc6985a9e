//! Living with rivals: jittered
//! pauses between attempts that lost a race, shared by the routes that
//! retry (best-available, hold-ga, extend, cancel, confirm).

/// After a lost race, a random pause of up to this times 2^losses (at most
/// [`MAX_BACKOFF_MS`]) before trying again: every buyer of a stampede wants
/// the same thing, and without the spread they would keep colliding, round
/// after round, one winner a round.
const BACKOFF_BASE_MS: u64 = 5;
const MAX_BACKOFF_MS: u64 = 200;

/// Full jitter: uniformly random in `0..=min(cap, base * 2^losses)`.
pub(super) async fn back_off(losses: u32) {
    let ceiling = (BACKOFF_BASE_MS << losses.min(10)).min(MAX_BACKOFF_MS);
    tokio::time::sleep(std::time::Duration::from_millis(
        crate::world::random_u64() % (ceiling + 1),
    ))
    .await;
}
