//! Why a payment sold nothing and was recorded for refund: stored on the
//! order (REFUND_DUE) and answered again to the same payment. Its own
//! module, below both the domain (the order carries it) and the error type
//! (each is one `409` with `"refund": true`), which depend on it and not on
//! each other through it.

/// Why a paid order could not be completed (it is then REFUND_DUE); a
/// further payment for it gets the same answer. Each is one of two
/// refusals (`order-expired` or `seats-unavailable`, [`RefundReason::order_expired`]), for the plain reason or for a
/// rule that kept the sale from taking what was free
/// ([`RefundReason::because`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefundReason {
    /// The order had expired or was cancelled, and a paid seat was taken.
    OrderExpired,
    /// The order was live, but a paid seat was neither its own nor free.
    SeatsUnavailable,
    /// As `OrderExpired`, but what was paid for would have taken the
    /// order's buyer over the event's limit.
    OrderExpiredOverLimit,
    /// As `SeatsUnavailable`, over the buyer's limit.
    SeatsUnavailableOverLimit,
    /// As `OrderExpired`, while only the waitlist's offers take seats.
    OrderExpiredWaitlist,
    /// As `SeatsUnavailable`, while only the waitlist's offers take seats.
    SeatsUnavailableWaitlist,
}

/// The rule behind a refund other than the seats themselves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefundCause {
    /// The buyer's limit.
    BuyerLimit,
    /// The waitlist-only sale.
    Waitlist,
}

impl RefundReason {
    const ALL: [Self; 6] = [
        Self::OrderExpired,
        Self::SeatsUnavailable,
        Self::OrderExpiredOverLimit,
        Self::SeatsUnavailableOverLimit,
        Self::OrderExpiredWaitlist,
        Self::SeatsUnavailableWaitlist,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OrderExpired => "order-expired",
            Self::SeatsUnavailable => "seats-unavailable",
            Self::OrderExpiredOverLimit => "order-expired/buyer-limit",
            Self::SeatsUnavailableOverLimit => "seats-unavailable/buyer-limit",
            Self::OrderExpiredWaitlist => "order-expired/waitlist",
            Self::SeatsUnavailableWaitlist => "seats-unavailable/waitlist",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|reason| reason.as_str() == s)
    }
    /// Whether the order had expired (or was cancelled): the
    /// `order-expired` refusal, else `seats-unavailable`.
    pub fn order_expired(self) -> bool {
        matches!(
            self,
            Self::OrderExpired | Self::OrderExpiredOverLimit | Self::OrderExpiredWaitlist
        )
    }
    /// The rule behind it, if one was.
    pub fn because(self) -> Option<RefundCause> {
        match self {
            Self::OrderExpired | Self::SeatsUnavailable => None,
            Self::OrderExpiredOverLimit | Self::SeatsUnavailableOverLimit => {
                Some(RefundCause::BuyerLimit)
            }
            Self::OrderExpiredWaitlist | Self::SeatsUnavailableWaitlist => {
                Some(RefundCause::Waitlist)
            }
        }
    }
    /// The same refusal, because of `cause`.
    pub fn because_of(self, cause: RefundCause) -> Self {
        match (self.order_expired(), cause) {
            (true, RefundCause::BuyerLimit) => Self::OrderExpiredOverLimit,
            (false, RefundCause::BuyerLimit) => Self::SeatsUnavailableOverLimit,
            (true, RefundCause::Waitlist) => Self::OrderExpiredWaitlist,
            (false, RefundCause::Waitlist) => Self::SeatsUnavailableWaitlist,
        }
    }
}
