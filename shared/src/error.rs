//! The one error type of the API, mapped to HTTP in one place.

use lambda_http::http::StatusCode;

use crate::store::StoreError;

/// Everything a request can end in other than success. Each variant is one
/// contract error code; [`Error::status`] and [`Error::code`] are the only
/// mapping to HTTP.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    BadRequest(String),
    #[error("the request body is larger than {limit} bytes")]
    PayloadTooLarge { limit: usize },
    #[error("missing or invalid credentials")]
    Unauthorized,
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
    #[error("the order was completed with a different payment")]
    AlreadyCompleted,
    #[error("the order expired or was cancelled and a paid seat is no longer free; the payment is recorded for refund")]
    OrderExpired,
    #[error("a paid seat is neither held by this order nor free; the payment is recorded for refund")]
    SeatsUnavailable,
    #[error("this payment id was already used for another order")]
    PaymentReused,
    #[error("the event has no section with this id")]
    SectionNotFound,
    #[error("the store is busy or unreachable; retry shortly")]
    StoreUnavailable,
    #[error("store failure")]
    Store(#[source] StoreError),
    #[error("inconsistent data: {0}")]
    Corrupt(String),
}

impl From<StoreError> for Error {
    fn from(e: StoreError) -> Self {
        if e.is_unavailable() {
            // Kept out of the body; the handler logs the source chain.
            tracing::warn!(error = %crate::error::chain(&e), "store unavailable");
            Error::StoreUnavailable
        } else {
            Error::Store(e)
        }
    }
}

impl Error {
    pub fn status(&self) -> StatusCode {
        use Error::*;
        match self {
            BadRequest(_) => StatusCode::BAD_REQUEST,
            PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Unauthorized => StatusCode::UNAUTHORIZED,
            RouteNotFound { .. } | EventNotFound | OrderNotFound | SeatNotFound | SectionNotFound => {
                StatusCode::NOT_FOUND
            }
            MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            EventExists | SeatHeld | SeatSold | SeatNotHeld | OrderNotHoldable
            | AlreadyCompleted | OrderExpired | SeatsUnavailable | PaymentReused => StatusCode::CONFLICT,
            SeatLimit { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            StoreUnavailable => StatusCode::SERVICE_UNAVAILABLE,
            Store(_) | Corrupt(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub fn code(&self) -> &'static str {
        use Error::*;
        match self {
            BadRequest(_) => "bad-request",
            PayloadTooLarge { .. } => "payload-too-large",
            Unauthorized => "unauthorized",
            RouteNotFound { .. } => "not-found",
            MethodNotAllowed { .. } => "method-not-allowed",
            EventNotFound => "event-not-found",
            EventExists => "event-exists",
            OrderNotFound => "order-not-found",
            SeatNotFound => "seat-not-found",
            SeatHeld => "seat-held",
            SeatSold => "seat-sold",
            SeatNotHeld => "seat-not-held",
            OrderNotHoldable => "order-not-holdable",
            SeatLimit { .. } => "seat-limit",
            AlreadyCompleted => "already-completed",
            OrderExpired => "order-expired",
            SeatsUnavailable => "seats-unavailable",
            PaymentReused => "payment-reused",
            SectionNotFound => "section-not-found",
            StoreUnavailable => "store-unavailable",
            Store(_) | Corrupt(_) => "internal-error",
        }
    }

    /// The JSON body: the code and a sentence. A 5xx says only "internal
    /// error"; the details go to the log, never to the client.
    pub fn body(&self) -> serde_json::Value {
        let message = if self.status().is_server_error() && !matches!(self, Error::StoreUnavailable)
        {
            "internal error".to_owned()
        } else {
            self.to_string()
        };
        let mut body = serde_json::json!({ "error": self.code(), "message": message });
        // Money arrived and was not used: the payment backend must refund.
        if matches!(self, Error::OrderExpired | Error::SeatsUnavailable | Error::AlreadyCompleted) {
            body["refund"] = serde_json::Value::Bool(true);
        }
        body
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
    fn server_errors_hide_details() {
        let e = Error::Corrupt("order item without status".into());
        assert_eq!(e.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(e.body()["message"], "internal error");
        assert_eq!(e.body()["error"], "internal-error");
    }

    #[test]
    fn order_expired_says_refund() {
        let b = Error::OrderExpired.body();
        assert_eq!(b["error"], "order-expired");
        assert_eq!(b["refund"], true);
        assert_eq!(Error::OrderExpired.status(), StatusCode::CONFLICT);
        assert_eq!(Error::SeatsUnavailable.body()["refund"], true);
        assert_eq!(Error::AlreadyCompleted.body()["refund"], true);
        assert!(Error::PaymentReused.body().get("refund").is_none(), "a reused payment id is not this order's money");
    }

    #[test]
    fn contract_codes() {
        assert_eq!(Error::SeatLimit { max: 10 }.status(), StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(Error::SeatHeld.code(), "seat-held");
        assert_eq!(Error::Unauthorized.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(Error::StoreUnavailable.status(), StatusCode::SERVICE_UNAVAILABLE);
    }
}
