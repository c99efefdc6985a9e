//! What the edge reads from the world: the wall clock and the operating
//! system's randomness. The domain reads neither: handlers, the sweep and
//! the stream consumers take the values here and pass them in, so every
//! rule can be tested at an exact instant with chosen "random" numbers.

use chrono::Utc;

use crate::domain::Millis;

/// The wall clock, in the unit expiries are stored in.
pub fn now() -> Millis {
    Millis::from(Utc::now())
}

/// A random number for spreading choices and pauses; without randomness,
/// 0: the first choice and no pause, slower under a stampede, never wrong.
pub fn random_u64() -> u64 {
    let mut random = [0u8; 8];
    getrandom::fill(&mut random).map_or(0, |()| u64::from_le_bytes(random))
}

/// 128 random bits for an id that must not be guessed or collide (an
/// order id); `None` when the system has no randomness to give.
pub fn random_u128() -> Option<u128> {
    let mut random = [0u8; 16];
    getrandom::fill(&mut random)
        .ok()
        .map(|()| u128::from_le_bytes(random))
}
