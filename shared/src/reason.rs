//! Which rule refused a request: the `reason` field beside `error` in every
//! 401, 403 and 422 body (and in a 409 that a buyer limit caused), and in
//! the request's log line. A seller's code can branch on it; API.md ("Why
//! a request was refused") lists every one. A reason names a rule, never a
//! value: no token, secret or claim the caller sent is echoed.

/// Declares [`Reason`] with its codes and sentences, so a reason cannot be
/// added without both or be left out of [`Reason::ALL`].
macro_rules! reasons {
    ($($reason:ident => $code:literal, $sentence:literal,)*) => {
        /// A refused request's rule (the body's `reason`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Reason {
            $($reason,)*
        }

        impl Reason {
            /// Every reason, in declaration order (API.md's list).
            pub const ALL: &'static [Reason] = &[$(Reason::$reason,)*];

            /// The stable `reason` field.
            pub const fn code(self) -> &'static str {
                match self {
                    $(Reason::$reason => $code,)*
                }
            }

            /// What the rule is, for the body's `message`: fixed text.
            pub const fn sentence(self) -> &'static str {
                match self {
                    $(Reason::$reason => $sentence,)*
                }
            }
        }
    };
}

reasons! {
    // Any credential.
    KeysNotConfigured => "keys-not-configured",
        "this function has no keys to check this credential with",
    // Hold tokens (order routes).
    HoldTokenMissing => "hold-token-missing",
        "send the order's hold token as Authorization: Bearer <token>",
    HoldTokenMalformed => "hold-token-malformed",
        "the hold token is not shaped like one seatclaim issues",
    HoldTokenMac => "hold-token-mac",
        "the hold token was not issued for this order: its MAC does not verify (another order's token, an altered one, or one signed with a key since removed)",
    HoldTokenOtherOrder => "hold-token-other-order",
        "the hold token verifies for this order id but is not the stored order's",
    // Visitor tokens (a queue's visitor).
    VisitorTokenMissing => "visitor-token-missing",
        "send the visitor token join gave as Authorization: Bearer <token>",
    VisitorTokenMalformed => "visitor-token-malformed",
        "the visitor token is not vt_ followed by 64 hex digits",
    VisitorTokenOtherVisitor => "visitor-token-other-visitor",
        "the visitor token is not this visitor's",
    // Entry tokens (a waitlist's entry).
    EntryTokenMissing => "entry-token-missing",
        "send the entry token join gave as Authorization: Bearer <token>",
    EntryTokenMalformed => "entry-token-malformed",
        "the entry token is not et_ followed by 64 hex digits",
    EntryTokenOtherEntry => "entry-token-other-entry",
        "the entry token is not this entry's",
    // Payment signatures (confirm: Standard Webhooks; the Stripe route:
    // Stripe-Signature).
    SignatureHeaderMissing => "signature-header-missing",
        "the signature headers are required: webhook-id, webhook-timestamp and webhook-signature (confirm), Stripe-Signature (the Stripe route)",
    SignatureMalformed => "signature-malformed",
        "the timestamp must be unix seconds, and the signature one or more v1,<base64 of 32 bytes> (confirm) or t=<seconds>,v1=<64 hex> (Stripe)",
    SignatureTimestamp => "signature-timestamp",
        "the signature's timestamp is further from the server's clock than the tolerance allows",
    SignatureMismatch => "signature-mismatch",
        "no v1 signature matches: sign the exact bytes sent (confirm: id.timestamp.body with a CONFIRM_SECRET key; Stripe: t.body with the endpoint's signing secret as written)",
    // Signed tokens: buyer tokens and admissions (ES256 JWTs).
    TokenMalformed => "token-malformed",
        "the token is not a compact JWS: three base64url parts, the first two JSON",
    TokenAlgorithm => "token-algorithm",
        "the token's alg must be ES256",
    TokenType => "token-type",
        "the token's typ must be seatclaim-buyer+jwt",
    TokenKeyUnknown => "token-key-unknown",
        "the token's kid names none of the keys configured",
    TokenSignature => "token-signature",
        "the token's signature does not verify under the key its kid names",
    TokenClaimMissing => "token-claim-missing",
        "the token lacks a required claim (buyer tokens: iss, aud, sub, iat, exp; admissions: iss, aud, sub, jti, iat, nbf, exp)",
    TokenClaimInvalid => "token-claim-invalid",
        "a claim of the token has the wrong type (times are numbers of seconds, aud one string)",
    TokenIssuer => "token-issuer",
        "the token's iss is not the issuer configured (BUYER_ISSUER for buyer tokens)",
    TokenAudience => "token-audience",
        "the token's aud is not this event's id",
    TokenExpired => "token-expired",
        "the token has expired: now is at or past its exp",
    TokenNotYetValid => "token-not-yet-valid",
        "the token's iat or nbf is ahead of the server's clock by more than the skew allowed",
    TokenLifetime => "token-lifetime",
        "the token's exp is further after its iat than a buyer token may live",
    TokenSubject => "token-subject",
        "the token's sub breaks its rule (a buyer id: 1-128 of A-Z a-z 0-9 . _ : | -)",
    // Buyers and admissions.
    BuyerTokenMissing => "buyer-token-missing",
        "this needs a buyer: send the seller's buyer token in X-Buyer-Token",
    BuyerNotAdmitted => "buyer-not-admitted",
        "the buyer token names another buyer than the one the queue admitted",
    BuyerNotOrders => "buyer-not-orders",
        "the buyer token names another buyer than the order's own",
    AdmissionRequired => "admission-required",
        "this event sells through its queue: join it, and open orders with the admission it gives",
    AdmissionVisitorUnknown => "admission-visitor-unknown",
        "the admission's visitor is not one the verified queue stored",
    AdmissionOrderExists => "admission-order-exists",
        "an order opened under this admission and Idempotency-Key exists with another token: send another Idempotency-Key",
    // Limits and repeats.
    SeatLimit => "seat-limit",
        "the order would hold more seats than one order may",
    BuyerLimit => "buyer-limit",
        "what was asked would take the buyer over the event's buyer limit",
    IdempotencyKeyReused => "idempotency-key-reused",
        "this Idempotency-Key came before with another request",
    Waitlist => "waitlist",
        "the event sells only through its waitlist now, so a payment outside a live hold takes nothing",
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_distinct_lowercase_words() {
        let mut seen = std::collections::BTreeSet::new();
        for reason in Reason::ALL {
            let code = reason.code();
            assert!(seen.insert(code), "{code} twice");
            assert!(
                code.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'),
                "{code}"
            );
            assert!(!reason.sentence().is_empty(), "{code}");
        }
    }
}
