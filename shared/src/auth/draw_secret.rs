//! `DRAW_SECRET`: the server secret each queue generation's draw seed is
//! derived from (`crate::domain::draw`). One or more base64 keys, the first
//! current: a generation keeps the key it was put with (its item names the
//! key's version), so a rotation applies to generations put after it, and
//! a retired key stays in the set while a generation put with it lives.

use std::fmt;

use sha2::{Digest, Sha256};

use super::hold_token::parse_mac_keys;
use super::HoldKeyError;
use crate::domain::buyer::{visitor_of_buyer, BuyerId};
use crate::domain::buyer_limit::BuyerRef;
use crate::domain::draw::{secret_version, DrawSeed};
use crate::domain::{EventId, VisitorId};

#[derive(Clone)]
pub struct DrawSecrets(Vec<Vec<u8>>);

impl fmt::Debug for DrawSecrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DrawSecrets({} x <redacted>)", self.0.len())
    }
}

impl DrawSecrets {
    /// Parses `DRAW_SECRET`: standard base64 keys of at least 32 bytes,
    /// separated by spaces.
    pub fn parse(value: &str) -> Result<Self, HoldKeyError> {
        parse_mac_keys(value).map(Self)
    }

    /// The version new generations are put with: the first key's.
    pub fn current_version(&self) -> String {
        self.0
            .first()
            .map(|k| secret_version(k))
            .unwrap_or_default()
    }

    /// The key of `version`, if it is still in the set.
    fn key(&self, version: &str) -> Option<&[u8]> {
        self.0
            .iter()
            .find(|k| secret_version(k) == version)
            .map(Vec::as_slice)
    }

    /// The seed of `generation` of `event`, under the key of `version`;
    /// `None` if that key is no longer in the set.
    pub fn seed(&self, version: &str, event: &EventId, generation: u64) -> Option<DrawSeed> {
        self.key(version)
            .map(|k| DrawSeed::of(k, event, generation))
    }

    /// Whose record counts `buyer` on `event`, under the key of `version`
    /// (the event's, fixed at its creation); `None` if that key is no
    /// longer in the set.
    pub fn buyer_ref(&self, version: &str, event: &EventId, buyer: &BuyerId) -> Option<BuyerRef> {
        self.key(version).map(|k| BuyerRef::keyed(k, event, buyer))
    }

    /// The visitor `buyer` is in `generation` of `event`'s verified queue,
    /// under the key of `version` (the generation's); `None` if that key is
    /// no longer in the set.
    pub fn buyer_visitor(
        &self,
        version: &str,
        event: &EventId,
        generation: u64,
        buyer: &BuyerId,
    ) -> Option<VisitorId> {
        visitor_of_buyer(self.key(version)?, event, generation, buyer)
    }

    /// The SHA-256 of each key (hex): what tells a key apart without it.
    pub fn key_fingerprints(&self) -> impl Iterator<Item = String> + '_ {
        self.0.iter().map(|key| hex::encode(Sha256::digest(key)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generation_keeps_the_key_it_was_put_with() -> Result<(), Box<dyn std::error::Error>> {
        let (old, new) = (
            "c2VhdGNsYWltLXRlc3QtaG9sZC1rZXktQS0zMi1ieXQ=",
            "c2VhdGNsYWltLXRlc3QtaG9sZC1rZXktQi0zMi1ieXQ=",
        );
        let before = DrawSecrets::parse(old)?;
        let after = DrawSecrets::parse(&format!("{new} {old}"))?;
        let gala = EventId::parse("gala")?;
        let version = before.current_version();
        assert_ne!(
            after.current_version(),
            version,
            "the rotation is the new key"
        );
        assert_eq!(
            before.seed(&version, &gala, 1),
            after.seed(&version, &gala, 1)
        );
        assert!(DrawSecrets::parse(new)?.seed(&version, &gala, 1).is_none());
        assert!(DrawSecrets::parse("").is_err() && DrawSecrets::parse("c2hvcnQ=").is_err());
        Ok(())
    }
}
