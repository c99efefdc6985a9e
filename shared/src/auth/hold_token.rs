//! Hold tokens: an order's bearer secret, self-authenticating.
//!
//! On the wire: `{eventId}~{expiresAtMs}~{secret: 64 hex}~{mac: 64 hex}`,
//! and on an event with a buyer limit
//! `{eventId}~{expiresAtMs}~{secret}~{limit}.{buyerRef}~{mac}`: the buyer's
//! record and the limit ride along too, so a claim reads that record and
//! nothing else before its transaction.
//! The random secret is the order's (only its SHA-256 is stored). The MAC
//! is HMAC-SHA-256 under the first of `HOLD_TOKEN_KEYS`, over the order id
//! of the route and the token's other parts, so a token made up for an
//! order (or lifted to another) is refused in memory, before any request
//! to the store: a forged token costs the table nothing.
//!
//! The event id and expiry ride along in the clear so that get-seat and
//! drop-seat can build the seat's key and the hold's expiry without reading
//! the order first: one round trip. The clear parts are covered by the MAC
//! and checked against the order itself (the expiry by the store's
//! condition `expiresAt = :exp`). extend-order hands out the same secret
//! with the new expiry and a new MAC; every token the order was given keeps
//! working: one whose expiry is out of date fails that condition, and the
//! store retries once with the order's own expiry.

use std::fmt;

use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::key_list::KeyListError;
use super::{bearer_value, random_secret, EntryToken, VisitorToken, TOKEN_SECRET_BYTES};
use crate::domain::buyer_limit::{BuyerRef, LimitedBuyer};
use crate::domain::{EntryId, EventId, Millis, OrderId, VisitorId};
use crate::error::Error;
use crate::reason::Reason;

const TOKEN_SEPARATOR: char = '~';
const BUYER_SEPARATOR: char = '.';
/// HMAC-SHA-256's output.
const MAC_BYTES: usize = 32;
/// The shortest `HOLD_TOKEN_KEYS` key: HMAC-SHA-256's own block of
/// strength (RFC 2104 recommends at least the hash's output length).
pub const MIN_HOLD_KEY_BYTES: usize = 32;

/// Domain separation: the same key never MACs two kinds of message alike.
const HOLD_TOKEN_LABEL: &str = "seatclaim hold token v1";
const IDEMPOTENT_ORDER_ID_LABEL: &str = "seatclaim order id under an admission v2";
const IDEMPOTENT_SECRET_LABEL: &str = "seatclaim hold token under an admission v2";
const BUYERS_ORDER_ID_LABEL: &str = "seatclaim order id under a buyer's key v1";
const BUYERS_SECRET_LABEL: &str = "seatclaim hold token under a buyer's key v1";
const BARE_ORDER_ID_LABEL: &str = "seatclaim order id under a bare key v1";
const BARE_SECRET_LABEL: &str = "seatclaim hold token under a bare key v1";
const OFFER_ORDER_ID_LABEL: &str = "seatclaim order id of a waitlist offer v1";
const OFFER_SECRET_LABEL: &str = "seatclaim hold token of a waitlist offer v1";

/// Whose an `Idempotency-Key` is: the order it names is derived from the
/// scope and the key, so the same key in two scopes names two orders and
/// nobody can replay another's.
#[derive(Debug, Clone, Copy)]
pub enum IdempotencyScope<'a> {
    /// An admission's `jti`: its holder's.
    Admission(&'a str),
    /// A buyer's record on the event (an order with a buyer, no queue).
    Buyer(&'a BuyerRef),
    /// Nobody's: the key's own randomness keeps it apart (no queue, no
    /// buyer; [`MIN_BARE_IDEMPOTENCY_KEY_LEN`] characters at least).
    Bare,
    /// A waitlist's offer: the key is the entry's id (an entry is offered
    /// at most once).
    Offer,
}

/// The shortest `Idempotency-Key` that may stand alone: 22 characters of
/// its 64 symbols carry 128 random bits.
pub const MIN_BARE_IDEMPOTENCY_KEY_LEN: usize = 22;
const VISITOR_TOKEN_LABEL: &str = "seatclaim visitor token v1";
const ENTRY_TOKEN_LABEL: &str = "seatclaim waitlist entry token v1";

/// One order's hold token, its MAC already checked (or about to be made
/// by [`HoldTokenKeys::encode`]): what the handlers and the store use.
#[derive(Clone, PartialEq, Eq)]
pub struct HoldToken {
    event_id: EventId,
    expires_at: Millis,
    secret: [u8; TOKEN_SECRET_BYTES],
    buyer: Option<LimitedBuyer>,
}

impl fmt::Debug for HoldToken {
    // Never print the secret, not even in debug output.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HoldToken")
            .field("event_id", &self.event_id)
            .finish_non_exhaustive()
    }
}

impl HoldToken {
    pub fn generate(event_id: &EventId, expires_at: Millis) -> Result<Self, Error> {
        Ok(Self::from_secret(
            event_id,
            expires_at,
            random_secret("hold token")?,
        ))
    }

    /// The token of `secret` (an order opened under an admission with an
    /// `Idempotency-Key` derives it: [`HoldTokenKeys::idempotent_order`]).
    pub fn from_secret(
        event_id: &EventId,
        expires_at: Millis,
        secret: [u8; TOKEN_SECRET_BYTES],
    ) -> Self {
        Self {
            event_id: event_id.clone(),
            expires_at,
            secret,
            buyer: None,
        }
    }

    /// The same token naming the order's buyer and the event's limit.
    pub fn for_buyer(self, buyer: Option<LimitedBuyer>) -> Self {
        Self { buyer, ..self }
    }
    /// The order's buyer and the event's limit, on a limited event.
    pub fn buyer(&self) -> Option<&LimitedBuyer> {
        self.buyer.as_ref()
    }

    /// The same secret carrying another expiry: what extend-order hands
    /// out, and what the store uses when a presented token's expiry is out
    /// of date.
    pub fn with_expiry(&self, expires_at: Millis) -> Self {
        Self {
            expires_at,
            ..self.clone()
        }
    }
    pub fn event_id(&self) -> &EventId {
        &self.event_id
    }
    pub fn expires_at(&self) -> Millis {
        self.expires_at
    }
    /// What the order stores: the hash of the random part. A fast hash
    /// suffices: it is 256 random bits, so there is nothing to brute-force.
    pub fn hash(&self) -> String {
        hex::encode(Sha256::digest(hex::encode(self.secret).as_bytes()))
    }
    /// Constant-time comparison with a stored hash.
    pub fn matches(&self, stored_hash: &str) -> bool {
        self.hash().as_bytes().ct_eq(stored_hash.as_bytes()).into()
    }
    /// The parts the MAC covers, before the MAC.
    fn unsigned(&self) -> String {
        let mut unsigned = format!(
            "{}{TOKEN_SEPARATOR}{}{TOKEN_SEPARATOR}{}",
            self.event_id,
            self.expires_at.0,
            hex::encode(self.secret)
        );
        if let Some(buyer) = &self.buyer {
            unsigned.push_str(&format!(
                "{TOKEN_SEPARATOR}{}{BUYER_SEPARATOR}{}",
                buyer.limit,
                buyer.buyer.as_str()
            ));
        }
        unsigned
    }
}

/// Why `HOLD_TOKEN_KEYS` was refused (the value itself is never shown).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HoldKeyError {
    #[error("it must hold one or more base64 keys separated by spaces")]
    Format,
    #[error("key {index} is not base64")]
    NotBase64 { index: usize },
    #[error("key {index} has {bytes} bytes; at least {MIN_HOLD_KEY_BYTES} are required")]
    ShortKey { index: usize, bytes: usize },
}

/// A set of MAC keys as `HOLD_TOKEN_KEYS` and `DRAW_SECRET` hold them:
/// standard base64 keys of at least [`MIN_HOLD_KEY_BYTES`], separated by
/// spaces, at least one.
pub(crate) fn parse_mac_keys(value: &str) -> Result<Vec<Vec<u8>>, HoldKeyError> {
    let list = super::key_list::KeyList {
        prefix: "",
        min_bytes: MIN_HOLD_KEY_BYTES,
    };
    list.parse(value).map_err(|e| match e {
        KeyListError::Empty => HoldKeyError::Format,
        KeyListError::NotBase64 { index } => HoldKeyError::NotBase64 { index },
        KeyListError::Short { index, bytes } => HoldKeyError::ShortKey { index, bytes },
    })
}

/// The server keys of hold tokens: the first signs, every one verifies,
/// so a key is rotated by putting the new one first and keeping the old
/// one for `MAX_ORDER_LIFETIME_SECONDS` (docs/OPERATIONS.md).
#[derive(Clone)]
pub struct HoldTokenKeys {
    signing: Vec<u8>,
    retired: Vec<Vec<u8>>,
}

impl fmt::Debug for HoldTokenKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HoldTokenKeys({} x <redacted>)", 1 + self.retired.len())
    }
}

impl HoldTokenKeys {
    /// Parses `HOLD_TOKEN_KEYS`: standard base64 keys separated by spaces.
    pub fn parse(value: &str) -> Result<Self, HoldKeyError> {
        let mut keys = parse_mac_keys(value)?.into_iter();
        let signing = keys.next().ok_or(HoldKeyError::Format)?;
        Ok(Self {
            signing,
            retired: keys.collect(),
        })
    }

    /// The SHA-256 of each key (hex): what tells a key apart without it.
    pub fn key_fingerprints(&self) -> impl Iterator<Item = String> + '_ {
        std::iter::once(&self.signing)
            .chain(&self.retired)
            .map(|key| hex::encode(Sha256::digest(key)))
    }

    fn mac(key: &[u8], parts: &[&str]) -> [u8; MAC_BYTES] {
        // HMAC takes a key of any length: `new_from_slice` cannot fail.
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key) else {
            return [0; MAC_BYTES];
        };
        for part in parts {
            mac.update(part.as_bytes());
            mac.update(&[0]);
        }
        mac.finalize().into_bytes().into()
    }

    fn token_mac(key: &[u8], order: &OrderId, unsigned: &str) -> [u8; MAC_BYTES] {
        Self::mac(key, &[HOLD_TOKEN_LABEL, order.as_str(), unsigned])
    }

    /// The wire form of `token` for `order`, signed by the first key.
    pub fn encode(&self, order: &OrderId, token: &HoldToken) -> String {
        let unsigned = token.unsigned();
        let mac = Self::token_mac(&self.signing, order, &unsigned);
        format!("{unsigned}{TOKEN_SEPARATOR}{}", hex::encode(mac))
    }

    /// The token of a presented `raw` for `order`: `None` unless it is
    /// shaped like ours and its MAC verifies under one of the keys.
    pub fn decode(&self, order: &OrderId, raw: &str) -> Option<HoldToken> {
        self.check(order, raw).ok()
    }

    /// [`Self::decode`], saying which rule `raw` broke: its shape (checked
    /// first: it holds no secret), then its MAC. Every key is tried, in
    /// constant time, so the time taken tells nothing.
    pub fn check(&self, order: &OrderId, raw: &str) -> Result<HoldToken, Reason> {
        let (unsigned, mac) = raw
            .rsplit_once(TOKEN_SEPARATOR)
            .ok_or(Reason::HoldTokenMalformed)?;
        let mac = hex_bytes::<MAC_BYTES>(mac).ok_or(Reason::HoldTokenMalformed)?;
        let token = parse_unsigned(unsigned).ok_or(Reason::HoldTokenMalformed)?;
        let mut verified = subtle::Choice::from(0);
        for key in std::iter::once(&self.signing).chain(&self.retired) {
            verified |= Self::token_mac(key, order, unsigned)
                .as_slice()
                .ct_eq(mac.as_slice());
        }
        if bool::from(verified) {
            Ok(token)
        } else {
            Err(Reason::HoldTokenMac)
        }
    }

    /// The token of an `Authorization: Bearer <token>` header value: none
    /// is `hold-token-missing`, another scheme `hold-token-malformed`.
    pub fn from_authorization(
        &self,
        order: &OrderId,
        header: Option<&str>,
    ) -> Result<HoldToken, Reason> {
        let header = header.ok_or(Reason::HoldTokenMissing)?;
        let raw = bearer_value(Some(header)).ok_or(Reason::HoldTokenMalformed)?;
        self.check(order, raw)
    }

    /// The id (its random part) and token secret of the order opened
    /// under an `Idempotency-Key` in `scope`: keyed by the signing key, so
    /// a retry after a lost reply finds the same order while nobody
    /// without the key can compute either from what they can read (an
    /// admission's `jti`, a buyer's id) and a guessed key.
    pub fn idempotent_order(
        &self,
        scope: IdempotencyScope<'_>,
        key: &str,
        event: &EventId,
    ) -> (u128, [u8; TOKEN_SECRET_BYTES]) {
        Self::derived_order(&self.signing, scope, key, event)
    }

    /// The order offered to waitlist entry `entry` of `event`: its id's
    /// random part and its token secret, under the signing key.
    pub fn offer_order(
        &self,
        entry: &EntryId,
        event: &EventId,
    ) -> (u128, [u8; TOKEN_SECRET_BYTES]) {
        self.idempotent_order(IdempotencyScope::Offer, entry.as_str(), event)
    }

    /// The token secrets of the order offered to `entry` under every key
    /// kept, the signing key's first: the entry's status hands the holder
    /// the one whose hash the order stores, a rotation since included.
    pub fn offer_secrets(&self, entry: &EntryId, event: &EventId) -> Vec<[u8; TOKEN_SECRET_BYTES]> {
        std::iter::once(&self.signing)
            .chain(&self.retired)
            .map(|key| Self::derived_order(key, IdempotencyScope::Offer, entry.as_str(), event).1)
            .collect()
    }

    fn derived_order(
        signing: &[u8],
        scope: IdempotencyScope<'_>,
        key: &str,
        event: &EventId,
    ) -> (u128, [u8; TOKEN_SECRET_BYTES]) {
        let (id_label, secret_label, whose) = match scope {
            IdempotencyScope::Admission(jti) => {
                (IDEMPOTENT_ORDER_ID_LABEL, IDEMPOTENT_SECRET_LABEL, jti)
            }
            IdempotencyScope::Buyer(buyer) => {
                (BUYERS_ORDER_ID_LABEL, BUYERS_SECRET_LABEL, buyer.as_str())
            }
            IdempotencyScope::Bare => (BARE_ORDER_ID_LABEL, BARE_SECRET_LABEL, ""),
            IdempotencyScope::Offer => (OFFER_ORDER_ID_LABEL, OFFER_SECRET_LABEL, ""),
        };
        let derive = |label| Self::mac(signing, &[label, whose, key, event.as_str()]);
        let id = derive(id_label);
        let mut id_bytes = [0u8; 16];
        id_bytes.copy_from_slice(&id[..16]);
        (u128::from_le_bytes(id_bytes), derive(secret_label))
    }
}

impl HoldTokenKeys {
    /// The MAC of `subject` of `event` under `key`, labelled by its kind.
    fn subject_mac(key: &[u8], label: &str, event: &EventId, subject: &str) -> [u8; MAC_BYTES] {
        Self::mac(key, &[label, event.as_str(), subject])
    }

    /// Whether `token` (as text) is the MAC token of `subject` under any
    /// of the keys (every key is tried, in constant time): a later join's
    /// token while its key is kept.
    fn is_subject_token(
        &self,
        token: &str,
        label: &str,
        event: &EventId,
        subject: &str,
        as_text: fn(&[u8; MAC_BYTES]) -> String,
    ) -> bool {
        let mut verified = subtle::Choice::from(0);
        for key in std::iter::once(&self.signing).chain(&self.retired) {
            let expected = as_text(&Self::subject_mac(key, label, event, subject));
            verified |= expected.as_bytes().ct_eq(token.as_bytes());
        }
        verified.into()
    }

    /// The token of `visitor` of `event`'s queue: a MAC under the first
    /// key, so every join of one buyer's visitor gives a token that works
    /// without writing it anywhere (the visitor's item keeps the hash of
    /// the first, which works whatever the keys become).
    pub fn visitor_token(&self, event: &EventId, visitor: &VisitorId) -> VisitorToken {
        let mac = Self::subject_mac(&self.signing, VISITOR_TOKEN_LABEL, event, visitor.as_str());
        VisitorToken::of_secret(&mac)
    }

    /// Whether `token` is `visitor`'s under any of the keys.
    pub fn is_visitor_token(
        &self,
        token: &VisitorToken,
        event: &EventId,
        visitor: &VisitorId,
    ) -> bool {
        let text = |mac: &[u8; MAC_BYTES]| VisitorToken::of_secret(mac).as_str().to_owned();
        self.is_subject_token(
            token.as_str(),
            VISITOR_TOKEN_LABEL,
            event,
            visitor.as_str(),
            text,
        )
    }

    /// The token of waitlist entry `entry` of `event`, as
    /// [`HoldTokenKeys::visitor_token`] is a visitor's: a join that finds
    /// the buyer's live entry answers with a working one.
    pub fn entry_token(&self, event: &EventId, entry: &EntryId) -> EntryToken {
        let mac = Self::subject_mac(&self.signing, ENTRY_TOKEN_LABEL, event, entry.as_str());
        EntryToken::of_secret(&mac)
    }

    /// Whether `token` is `entry`'s under any of the keys.
    pub fn is_entry_token(&self, token: &EntryToken, event: &EventId, entry: &EntryId) -> bool {
        let text = |mac: &[u8; MAC_BYTES]| EntryToken::of_secret(mac).as_str().to_owned();
        self.is_subject_token(
            token.as_str(),
            ENTRY_TOKEN_LABEL,
            event,
            entry.as_str(),
            text,
        )
    }
}

/// A token's parts before its MAC: event, expiry, secret and, for a
/// buyer-limited order, its buyer.
fn parse_unsigned(unsigned: &str) -> Option<HoldToken> {
    let mut parts = unsigned.split(TOKEN_SEPARATOR);
    let (event, expires, secret) = (parts.next()?, parts.next()?, parts.next()?);
    let buyer = parts.next().map(parse_buyer_part);
    if parts.next().is_some() {
        return None;
    }
    Some(HoldToken {
        event_id: EventId::parse(event).ok()?,
        expires_at: Millis(expires.parse().ok()?),
        secret: hex_bytes::<TOKEN_SECRET_BYTES>(secret)?,
        buyer: buyer.map_or(Some(None), |b| b.map(Some))?,
    })
}

/// A token's `{limit}.{buyerRef}` part.
fn parse_buyer_part(part: &str) -> Option<LimitedBuyer> {
    let (limit, buyer) = part.split_once(BUYER_SEPARATOR)?;
    Some(LimitedBuyer {
        buyer: BuyerRef::from_hex(buyer)?,
        limit: limit.parse().ok()?,
    })
}

/// Exactly `N` bytes of lowercase or uppercase hex.
fn hex_bytes<const N: usize>(text: &str) -> Option<[u8; N]> {
    let mut bytes = [0u8; N];
    hex::decode_to_slice(text, &mut bytes).ok()?;
    Some(bytes)
}

#[cfg(test)]
#[path = "hold_token_tests.rs"]
mod tests;
