//! The pre-opening draw anyone can check (docs/API.md, "A draw anyone can
//! check"): a seed per queue generation, committed to before anyone joins
//! and disclosed after the opening, and each drawn visitor's key from it.
//! Pure: the secret is passed in.

use std::fmt;

use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

use super::{EventId, Millis};

/// The seed is disclosed this long after the opening.
pub const DISCLOSE_AFTER_MS: i64 = 5_000;

/// HMAC-SHA-256 of `message` under `key`.
fn hmac(key: &[u8], message: &[u8]) -> [u8; 32] {
    // HMAC takes a key of any length: `new_from_slice` cannot fail.
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key) else {
        return [0; 32];
    };
    mac.update(message);
    mac.finalize().into_bytes().into()
}

/// A queue generation's seed: HMAC-SHA-256 under `DRAW_SECRET` over
/// `"{eventId}\n{generation}"`. Never stored, logged or put on the stream;
/// disclosed from [`DISCLOSE_AFTER_MS`] after the opening.
#[derive(Clone, PartialEq, Eq)]
pub struct DrawSeed([u8; 32]);

impl fmt::Debug for DrawSeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DrawSeed(redacted)")
    }
}

impl DrawSeed {
    /// The seed of `generation` of `event`'s queue under `secret`: the
    /// same for every put that computes it (concurrent first puts agree).
    pub fn of(secret: &[u8], event: &EventId, generation: u64) -> Self {
        Self(hmac(
            secret,
            format!("{}\n{generation}", event.as_str()).as_bytes(),
        ))
    }

    /// What the queue commits to before anyone joins: lowercase hex of
    /// SHA-256(seed).
    pub fn commitment(&self) -> String {
        hex::encode(Sha256::digest(self.0))
    }

    /// The seed as disclosed: lowercase hex.
    pub fn disclosed(&self) -> String {
        hex::encode(self.0)
    }

    /// The draw key of `draw_id` (the visitor id; in a verified queue one
    /// keyed from the buyer id): HMAC-SHA-256 under the seed, an unsigned
    /// 256-bit big-endian number.
    pub fn key(&self, draw_id: &str) -> DrawKey {
        DrawKey(hmac(&self.0, draw_id.as_bytes()))
    }
}

/// A drawn visitor's key: smaller is served first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct DrawKey(pub [u8; 32]);

impl DrawKey {
    /// The key's first 127 bits: what a drawn visitor's queue rank
    /// carries (`queue::drawn_rank`), all the drawn band holds. Two keys
    /// equal there (for a million drawn visitors, odds of about one in
    /// 10^26) would share a rank.
    pub fn rank_bits(&self) -> u128 {
        let mut first = [0u8; 16];
        first.copy_from_slice(&self.0[..16]);
        u128::from_be_bytes(first) >> 1
    }

    pub fn hex(&self) -> String {
        hex::encode(self.0)
    }
}

/// Whether the seed of a queue opening at `opens_at` is disclosed at `now`.
pub fn is_disclosed(opens_at: Millis, now: Millis) -> bool {
    now.0 >= opens_at.0.saturating_add(DISCLOSE_AFTER_MS)
}

/// The version a secret is known by on a queue's item: the first 16 hex
/// digits of SHA-256 of the key (of a key of 256 random bits or more, it
/// tells nothing of the key).
pub fn secret_version(secret: &[u8]) -> String {
    hex::encode(&Sha256::digest(secret)[..8])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known answers, computed apart from this code (Python's hmac and
    /// hashlib over the same bytes): the buyer's check in docs/API.md
    /// reproduces exactly these.
    #[test]
    fn seed_commitment_and_keys_match_the_documented_arithmetic(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let seed = DrawSeed::of(
            b"0123456789abcdef0123456789abcdef",
            &EventId::parse("gala")?,
            3,
        );
        assert_eq!(seed.disclosed(), SEED_HEX);
        assert_eq!(seed.commitment(), COMMITMENT_HEX);
        let key = seed.key("user:42");
        assert_eq!(key.hex(), KEY_HEX);
        assert_eq!(
            key.rank_bits(),
            u128::from_str_radix(&KEY_HEX[..32], 16)? >> 1
        );
        assert_ne!(
            seed,
            DrawSeed::of(
                b"0123456789abcdef0123456789abcdef",
                &EventId::parse("gala")?,
                4
            )
        );
        assert_eq!(format!("{seed:?}"), "DrawSeed(redacted)");
        Ok(())
    }

    #[test]
    fn the_seed_is_disclosed_five_seconds_after_the_opening() {
        assert!(!is_disclosed(Millis(10_000), Millis(14_999)));
        assert!(is_disclosed(Millis(10_000), Millis(15_000)));
        assert_eq!(secret_version(b"k").len(), 16);
    }

    const SEED_HEX: &str = "d7187bfc98dfa28d6a105a2a6ab872ccd890f217a6358dabf60f9cc807201ae7";
    const COMMITMENT_HEX: &str = "f2fd615ac26da5a8ba61d5feedb21a681e7ce39b9ca68efc66426c7295df1cf9";
    const KEY_HEX: &str = "55a11b0413fc6db31c8a793e1417b941621191275f4eb1caae826d501e7c76f9";
}
