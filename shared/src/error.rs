//! The one error type of the API. It knows the contract's error codes and
//! sentences, not HTTP: the status of each is `crate::http::status_of`.

use crate::reason::Reason;
use crate::refund::{RefundCause, RefundReason};

/// Declares [`ErrorKind`] with its codes and the list of all of them, so a
/// kind cannot be added without its code or be left out of the list.
macro_rules! error_kinds {
    ($($kind:ident => $code:literal,)*) => {
        /// The contract's error codes, without their details: what a route
        /// can answer is listed by kind (`crate::routes`), and the HTTP
        /// status of each is `crate::http::status_of`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum ErrorKind {
            $($kind,)*
        }

        impl ErrorKind {
            /// Every kind, in declaration order.
            pub const ALL: &'static [ErrorKind] = &[$(ErrorKind::$kind,)*];

            /// The `error` field of the body.
            pub const fn code(self) -> &'static str {
                match self {
                    $(ErrorKind::$kind => $code,)*
                }
            }
        }
    };
}

error_kinds! {
    BadRequest => "bad-request",
    PayloadTooLarge => "payload-too-large",
    Unauthorized => "unauthorized",
    BuyerTokenRequired => "buyer-token-required",
    BuyerTokenInvalid => "buyer-token-invalid",
    RouteNotFound => "not-found",
    MethodNotAllowed => "method-not-allowed",
    EventNotFound => "event-not-found",
    EventExists => "event-exists",
    OrderNotFound => "order-not-found",
    SeatNotFound => "seat-not-found",
    SeatHeld => "seat-held",
    SeatSold => "seat-sold",
    SeatNotHeld => "seat-not-held",
    OrderNotHoldable => "order-not-holdable",
    SeatLimit => "seat-limit",
    BuyerLimit => "buyer-limit",
    AlreadyCompleted => "already-completed",
    OrderExpired => "order-expired",
    SeatsUnavailable => "seats-unavailable",
    PaymentReused => "payment-reused",
    SectionNotFound => "section-not-found",
    HoldLimit => "hold-limit",
    OrderNotCancellable => "order-not-cancellable",
    NotEnoughSeats => "not-enough-seats",
    SoldOut => "sold-out",
    QueueNotFound => "queue-not-found",
    VisitorNotFound => "visitor-not-found",
    DrawNotDisclosed => "draw-not-disclosed",
    QueueOpen => "queue-open",
    QueueRequired => "queue-required",
    WaitlistNotFound => "waitlist-not-found",
    WaitlistOpen => "waitlist-open",
    WaitlistOnly => "waitlist-only",
    WaitlistNotOpen => "waitlist-not-open",
    WaitlistEnded => "waitlist-ended",
    EntryNotFound => "entry-not-found",
    ReturnsClosed => "returns-closed",
    ReturnNotOwned => "return-not-owned",
    ReturnOffered => "return-offered",
    AdmissionUsed => "admission-used",
    IdempotencyKeyReused => "idempotency-key-reused",
    StoreUnavailable => "store-unavailable",
    SecretsUnavailable => "secrets-unavailable",
    Internal => "internal-error",
}

/// Everything a request can end in other than success. Each variant is one
/// contract error code ([`Error::code`]).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    BadRequest(String),
    #[error("the request body is larger than {limit} bytes")]
    PayloadTooLarge { limit: usize },
    /// A credential is missing or refused; the reason names the rule.
    #[error("missing or invalid credentials: {}", .0.sentence())]
    Unauthorized(Reason),
    #[error("this needs a buyer: send the seller's buyer token in X-Buyer-Token")]
    BuyerTokenRequired,
    #[error("the buyer token is not valid: {}", .0.sentence())]
    BuyerTokenInvalid(Reason),
    #[error("no route matches {method} {path}")]
    RouteNotFound { method: String, path: String },
    #[error("{method} is not allowed on this route; allowed: {allow}")]
    MethodNotAllowed { method: String, allow: String },
    #[error("no event has this id")]
    EventNotFound,
    #[error("an event with this id exists already")]
    EventExists,
    #[error("no order has this id")]
    OrderNotFound,
    #[error("the event has no seat with this id")]
    SeatNotFound,
    #[error("another order holds this seat")]
    SeatHeld,
    #[error("this seat is sold")]
    SeatSold,
    #[error("this order does not hold this seat")]
    SeatNotHeld,
    #[error("the order is no longer a live pending order")]
    OrderNotHoldable,
    #[error("an order holds at most {max} seats")]
    SeatLimit { max: u32 },
    #[error(
        "a buyer holds and owns at most {limit} seats and places of this event; {counted} counted"
    )]
    BuyerLimit { limit: u32, counted: u32 },
    #[error("the order was completed with a different payment")]
    AlreadyCompleted,
    /// A payment that sold nothing and is recorded on the order for refund.
    #[error("{}", refund_sentence(*.0))]
    Refund(RefundReason),
    #[error("this payment id was already used for another order")]
    PaymentReused,
    #[error("the event has no section with this id")]
    SectionNotFound,
    #[error("the order already expires at the end of its longest lifetime")]
    HoldLimit,
    #[error("a completed order, or one due a refund, cannot be cancelled")]
    OrderNotCancellable,
    #[error("no row of the section has {quantity} adjacent available seats")]
    NotEnoughSeats { quantity: u32 },
    #[error("not that many places are free; this order could hold {available}")]
    SoldOut { available: u32 },
    #[error("the event has no queue")]
    QueueNotFound,
    #[error("no visitor of this queue has this id")]
    VisitorNotFound,
    #[error("the draw is disclosed 5 s after the queue opens")]
    DrawNotDisclosed,
    #[error("the queue has opened: opensAt can no longer change")]
    QueueOpen,
    #[error("the event has no waitlist")]
    WaitlistNotFound,
    #[error("the waitlist has opened: opens can no longer change")]
    WaitlistOpen,
    #[error("this event sells only through its waitlist now: join it, and buy what it offers")]
    WaitlistOnly { waitlist: String },
    /// A join before an armed waitlist opens; `opens` says on what.
    #[error("the waitlist is not open yet: it opens {}", opens_sentence(.opens))]
    WaitlistNotOpen { opens: &'static str },
    #[error("the waitlist has ended: it takes no new entries")]
    WaitlistEnded,
    #[error("this waitlist has no entry with this id")]
    EntryNotFound,
    #[error("returns are closed: the event has no open waitlist taking them now")]
    ReturnsClosed,
    #[error("this order does not own what was named, or has listed or resold it already")]
    ReturnNotOwned,
    #[error("a live waitlist offer holds this listing: it can be withdrawn once the offer ends")]
    ReturnOffered,
    #[error(
        "this event sells through its queue: join it, and open orders with the admission it gives"
    )]
    QueueRequired { queue: String },
    #[error("this admission has opened every order it allows")]
    AdmissionUsed,
    #[error("this Idempotency-Key was sent before with another request")]
    IdempotencyKeyReused,
    #[error("the store is busy or unreachable; retry shortly")]
    StoreUnavailable,
    /// This instance could not read its secrets for longer than it may
    /// answer with the ones it has (`crate::live`).
    #[error("this function's keys could not be read lately; retry shortly")]
    SecretsUnavailable,
    /// A store failure that no retry will mend (its source is the store's
    /// typed error, for the log).
    #[error("store failure")]
    Store(#[source] Box<dyn std::error::Error + Send + Sync>),
    #[error("inconsistent data: {0}")]
    Corrupt(String),
}

impl Error {
    /// A failure of ours, not the caller's: its body says only "internal
    /// error" and the log gets the chain.
    pub fn is_internal(&self) -> bool {
        matches!(self, Error::Store(_) | Error::Corrupt(_))
    }

    /// The contract error code this error is (several variants may share
    /// one: every internal failure is `internal-error`).
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::BadRequest(_) => ErrorKind::BadRequest,
            Error::PayloadTooLarge { .. } => ErrorKind::PayloadTooLarge,
            Error::Unauthorized(_) => ErrorKind::Unauthorized,
            Error::BuyerTokenRequired => ErrorKind::BuyerTokenRequired,
            Error::BuyerTokenInvalid(_) => ErrorKind::BuyerTokenInvalid,
            Error::RouteNotFound { .. } => ErrorKind::RouteNotFound,
            Error::MethodNotAllowed { .. } => ErrorKind::MethodNotAllowed,
            Error::EventNotFound => ErrorKind::EventNotFound,
            Error::EventExists => ErrorKind::EventExists,
            Error::OrderNotFound => ErrorKind::OrderNotFound,
            Error::SeatNotFound => ErrorKind::SeatNotFound,
            Error::SeatHeld => ErrorKind::SeatHeld,
            Error::SeatSold => ErrorKind::SeatSold,
            Error::SeatNotHeld => ErrorKind::SeatNotHeld,
            Error::OrderNotHoldable => ErrorKind::OrderNotHoldable,
            Error::SeatLimit { .. } => ErrorKind::SeatLimit,
            Error::BuyerLimit { .. } => ErrorKind::BuyerLimit,
            Error::AlreadyCompleted => ErrorKind::AlreadyCompleted,
            Error::Refund(reason) if reason.order_expired() => ErrorKind::OrderExpired,
            Error::Refund(_) => ErrorKind::SeatsUnavailable,
            Error::PaymentReused => ErrorKind::PaymentReused,
            Error::SectionNotFound => ErrorKind::SectionNotFound,
            Error::HoldLimit => ErrorKind::HoldLimit,
            Error::OrderNotCancellable => ErrorKind::OrderNotCancellable,
            Error::NotEnoughSeats { .. } => ErrorKind::NotEnoughSeats,
            Error::SoldOut { .. } => ErrorKind::SoldOut,
            Error::QueueNotFound => ErrorKind::QueueNotFound,
            Error::VisitorNotFound => ErrorKind::VisitorNotFound,
            Error::DrawNotDisclosed => ErrorKind::DrawNotDisclosed,
            Error::QueueOpen => ErrorKind::QueueOpen,
            Error::WaitlistNotFound => ErrorKind::WaitlistNotFound,
            Error::WaitlistOpen => ErrorKind::WaitlistOpen,
            Error::WaitlistOnly { .. } => ErrorKind::WaitlistOnly,
            Error::WaitlistNotOpen { .. } => ErrorKind::WaitlistNotOpen,
            Error::WaitlistEnded => ErrorKind::WaitlistEnded,
            Error::EntryNotFound => ErrorKind::EntryNotFound,
            Error::ReturnsClosed => ErrorKind::ReturnsClosed,
            Error::ReturnNotOwned => ErrorKind::ReturnNotOwned,
            Error::ReturnOffered => ErrorKind::ReturnOffered,
            Error::QueueRequired { .. } => ErrorKind::QueueRequired,
            Error::AdmissionUsed => ErrorKind::AdmissionUsed,
            Error::IdempotencyKeyReused => ErrorKind::IdempotencyKeyReused,
            Error::StoreUnavailable => ErrorKind::StoreUnavailable,
            Error::SecretsUnavailable => ErrorKind::SecretsUnavailable,
            Error::Store(_) => ErrorKind::Internal,
            Error::Corrupt(_) => ErrorKind::Internal,
        }
    }

    pub fn code(&self) -> &'static str {
        self.kind().code()
    }

    /// The rule that refused the request: every 401, 403 and 422 has one
    /// (`http::tests` holds every kind of those statuses to it), as does a
    /// 409 a buyer limit caused.
    pub fn reason(&self) -> Option<Reason> {
        match self {
            Error::Unauthorized(reason) | Error::BuyerTokenInvalid(reason) => Some(*reason),
            Error::BuyerTokenRequired => Some(Reason::BuyerTokenMissing),
            Error::QueueRequired { .. } => Some(Reason::AdmissionRequired),
            Error::SeatLimit { .. } => Some(Reason::SeatLimit),
            Error::IdempotencyKeyReused => Some(Reason::IdempotencyKeyReused),
            Error::BuyerLimit { .. } => Some(Reason::BuyerLimit),
            Error::Refund(reason) => reason.because().map(|cause| match cause {
                RefundCause::BuyerLimit => Reason::BuyerLimit,
                RefundCause::Waitlist => Reason::Waitlist,
            }),
            _ => None,
        }
    }

    /// A payment's refusal that leaves money to give back: it arrived,
    /// sold nothing, and is recorded on the order for refund.
    pub fn is_refund(&self) -> bool {
        matches!(self, Error::Refund(_) | Error::AlreadyCompleted)
    }

    /// The JSON body: the code and a sentence. A 5xx says only "internal
    /// error"; the details go to the log, never to the client.
    pub fn body(&self) -> serde_json::Value {
        let message = if self.is_internal() {
            "internal error".to_owned()
        } else {
            self.to_string()
        };
        let mut body = serde_json::json!({ "error": self.code(), "message": message });
        if self.is_refund() {
            body["refund"] = serde_json::Value::Bool(true);
        }
        if let Some(reason) = self.reason() {
            body["reason"] = reason.code().into();
        }
        // The most the order could set, so the buyer can take that instead.
        if let Error::SoldOut { available } = self {
            body["available"] = (*available).into();
        }
        // What the refusal saw, so the page can show it.
        if let Error::BuyerLimit { limit, counted } = self {
            body["limit"] = (*limit).into();
            body["counted"] = (*counted).into();
        }
        // Where to get the admission it asks for.
        if let Error::QueueRequired { queue } = self {
            body["queue"] = queue.as_str().into();
        }
        // Where to join the waitlist that sells the event now.
        if let Error::WaitlistOnly { waitlist } = self {
            body["waitlist"] = waitlist.as_str().into();
        }
        // What an armed waitlist waits for.
        if let Error::WaitlistNotOpen { opens } = self {
            body["opens"] = (*opens).into();
        }
        body
    }
}

/// When an armed waitlist opens, in a sentence.
fn opens_sentence(opens: &str) -> &'static str {
    match opens {
        "now" => "at once",
        _ => "when the event sells out",
    }
}

/// What a refund's body says: which paid seat could not be had, and the
/// rule that kept it, if one did.
fn refund_sentence(reason: RefundReason) -> &'static str {
    match reason {
        RefundReason::OrderExpired => "the order expired or was cancelled and a paid seat is no longer free; the payment is recorded for refund",
        RefundReason::SeatsUnavailable => "a paid seat is neither held by this order nor free; the payment is recorded for refund",
        RefundReason::OrderExpiredOverLimit => "the order expired or was cancelled, and what was paid for would take its buyer over the event's limit; the payment is recorded for refund",
        RefundReason::SeatsUnavailableOverLimit => "a paid seat is not held by this order, and taking it would take its buyer over the event's limit; the payment is recorded for refund",
        RefundReason::OrderExpiredWaitlist => "the order expired or was cancelled, and the event now sells only through its waitlist; the payment is recorded for refund",
        RefundReason::SeatsUnavailableWaitlist => "a paid seat or place is not held by this order, and the event now sells only through its waitlist; the payment is recorded for refund",
    }
}

/// An error and all its sources on one line, for logs.
pub fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut next = e.source();
    while let Some(s) = next {
        out.push_str(": ");
        out.push_str(&s.to_string());
        next = s.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_errors_hide_details() {
        let e = Error::Corrupt("order item without status".into());
        assert!(e.is_internal());
        assert_eq!(e.body()["message"], "internal error");
        assert_eq!(e.body()["error"], "internal-error");
        assert!(!Error::StoreUnavailable.is_internal());
        assert_ne!(
            Error::StoreUnavailable.body()["message"],
            "internal error",
            "a 503 says why"
        );
    }

    #[test]
    fn refusals_of_money_say_refund() {
        for e in [
            Error::Refund(RefundReason::OrderExpired),
            Error::Refund(RefundReason::SeatsUnavailable),
            Error::AlreadyCompleted,
        ] {
            assert_eq!(e.body()["refund"], true, "{}", e.code());
        }
        assert_eq!(
            Error::Refund(RefundReason::OrderExpired).body()["error"],
            "order-expired"
        );
        assert!(
            Error::PaymentReused.body().get("refund").is_none(),
            "a reused payment id is not this order's money"
        );
        assert!(Error::SeatHeld.body().get("refund").is_none());
    }
}
