//! Pure domain types and rules: ids that validate on parse, seat and order
//! states, expiry, the event layout. Nothing here performs I/O.

use std::collections::HashSet;
use std::fmt;

use chrono::{DateTime, SecondsFormat, TimeZone, Utc};
use serde::{Deserialize, Serialize};

use crate::error::Error;

/// Longest id the contract allows (eventId, sectionId, row, orderId, paymentId).
pub const MAX_ID_LEN: usize = 64;
/// A seat id is `{sectionId}-{row}-{number}`: two ids, a number up to 20,000
/// and two dashes.
pub const MAX_SEAT_ID_LEN: usize = 2 * MAX_ID_LEN + 2 + 5;
/// Most seats one event may have.
pub const MAX_EVENT_SEATS: u32 = 20_000;
/// Bounds of an event's hold time.
pub const HOLD_SECONDS_RANGE: std::ops::RangeInclusive<u32> = 1..=7200;
/// Bounds of `MAX_SEATS_PER_ORDER`. A confirm sells every seat and completes
/// the order in one transaction, and a transaction holds at most 100 items.
pub const SEATS_PER_ORDER_RANGE: std::ops::RangeInclusive<u32> = 1..=99;
/// Longest event name accepted.
pub const MAX_EVENT_NAME_LEN: usize = 200;
/// Longest free-form `userId` accepted on create-order.
pub const MAX_USER_ID_LEN: usize = 256;

fn is_id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

/// Checks the contract's id rule: 1–`max` chars of `[A-Za-z0-9_.-]`. Keeping
/// everything else out keeps key delimiters (`#`) out of user input.
fn validate_id(field: &str, value: &str, max: usize) -> Result<(), Error> {
    if value.is_empty() || value.len() > max || !value.chars().all(is_id_char) {
        return Err(Error::BadRequest(format!(
            "{field} must be 1-{max} characters of A-Z, a-z, 0-9, '_', '.', '-'"
        )));
    }
    Ok(())
}

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $field:literal, $max:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// Parses and validates; the error names the field.
            pub fn parse(value: &str) -> Result<Self, Error> {
                validate_id($field, value, $max)?;
                Ok(Self(value.to_owned()))
            }
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let raw = String::deserialize(d)?;
                Self::parse(&raw).map_err(serde::de::Error::custom)
            }
        }
    };
}

id_type!(/** An event's id, chosen by the organiser. */ EventId, "eventId", MAX_ID_LEN);
id_type!(/** A section of an event's seating plan. */ SectionId, "sectionId", MAX_ID_LEN);
id_type!(/** A row label inside a section. */ RowId, "row", MAX_ID_LEN);
id_type!(/** An order's id (server generated, a UUID). */ OrderId, "orderId", MAX_ID_LEN);
id_type!(/** The payment provider's id of a payment. */ PaymentId, "paymentId", MAX_ID_LEN);
id_type!(/** `{sectionId}-{row}-{number}`. */ SeatId, "seatId", MAX_SEAT_ID_LEN);

impl OrderId {
    /// A fresh random order id.
    pub fn generate() -> Self {
        Self(uuid::Uuid::new_v4().to_string())
    }
}

impl SeatId {
    pub fn compose(section: &SectionId, row: &RowId, number: u32) -> Self {
        Self(format!("{section}-{row}-{number}"))
    }
}

/// Milliseconds since the Unix epoch: how instants are stored and compared
/// in conditions (numbers compare exactly; strings would need one format).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Millis(pub i64);

impl Millis {
    pub fn now() -> Self {
        Self::from(Utc::now())
    }
    pub fn plus_seconds(self, seconds: u32) -> Self {
        Self(self.0 + i64::from(seconds) * 1000)
    }
    pub fn to_datetime(self) -> DateTime<Utc> {
        // Every Millis we build comes from a DateTime or from one we stored,
        // all far inside chrono's range; the epoch is a harmless fallback.
        Utc.timestamp_millis_opt(self.0).single().unwrap_or_default()
    }
    /// RFC 3339 UTC with milliseconds, as every time in the API is written.
    pub fn to_rfc3339(self) -> String {
        self.to_datetime().to_rfc3339_opts(SecondsFormat::Millis, true)
    }
}

impl From<DateTime<Utc>> for Millis {
    fn from(t: DateTime<Utc>) -> Self {
        Self(t.timestamp_millis())
    }
}

/// A hold is live until its expiry instant, exclusive: at `expires_at` the
/// seat is claimable by anyone (the store's condition is `expiresAt < :now`
/// for the claimer and `expiresAt > :now` for the holder, the same boundary).
pub fn hold_is_live(expires_at: Millis, now: Millis) -> bool {
    expires_at > now
}

/// A seat as the public sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SeatStatus {
    Available,
    Held,
    Sold,
}

impl SeatStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Available => "AVAILABLE",
            Self::Held => "HELD",
            Self::Sold => "SOLD",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "AVAILABLE" => Some(Self::Available),
            "HELD" => Some(Self::Held),
            "SOLD" => Some(Self::Sold),
            _ => None,
        }
    }
}

/// The seat's status as stored: a hold carries its expiry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SeatState {
    Available,
    Held { order: OrderId, expires_at: Millis },
    Sold { order: OrderId },
}

impl SeatState {
    /// What list-seats shows: a hold past its expiry is `AVAILABLE`.
    pub fn visible_status(&self, now: Millis) -> SeatStatus {
        match self {
            Self::Available => SeatStatus::Available,
            Self::Held { expires_at, .. } if hold_is_live(*expires_at, now) => SeatStatus::Held,
            Self::Held { .. } => SeatStatus::Available,
            Self::Sold { .. } => SeatStatus::Sold,
        }
    }
}

/// An order's lifecycle as stored. `Pending` past its expiry is reported as
/// `Expired` (see [`OrderStatus::effective`]) even before the sweep ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum OrderStatus {
    Pending,
    Completed,
    Expired,
    RefundDue,
}

impl OrderStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "PENDING",
            Self::Completed => "COMPLETED",
            Self::Expired => "EXPIRED",
            Self::RefundDue => "REFUND_DUE",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "PENDING" => Some(Self::Pending),
            "COMPLETED" => Some(Self::Completed),
            "EXPIRED" => Some(Self::Expired),
            "REFUND_DUE" => Some(Self::RefundDue),
            _ => None,
        }
    }
    /// The status the API reports at `now`.
    pub fn effective(self, expires_at: Millis, now: Millis) -> Self {
        match self {
            Self::Pending if !hold_is_live(expires_at, now) => Self::Expired,
            other => other,
        }
    }
}

/// An order as stored (the token only as its hash).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Order {
    pub order_id: OrderId,
    pub event_id: EventId,
    pub status: OrderStatus,
    pub expires_at: Millis,
    pub token_hash: String,
    pub seats: Vec<SeatId>,
    pub payment_id: Option<PaymentId>,
    pub user_id: Option<String>,
}

impl Order {
    /// A new PENDING order holding nothing yet, and its hold token (the
    /// only copy: the order keeps just the token's hash).
    pub fn new_pending(
        event_id: EventId,
        expires_at: Millis,
        user_id: Option<String>,
    ) -> Result<(Self, crate::auth::HoldToken), Error> {
        let token = crate::auth::HoldToken::generate(&event_id, expires_at)?;
        let order = Order {
            order_id: OrderId::generate(),
            event_id,
            status: OrderStatus::Pending,
            expires_at,
            token_hash: token.hash(),
            seats: Vec::new(),
            payment_id: None,
            user_id,
        };
        Ok((order, token))
    }

    pub fn effective_status(&self, now: Millis) -> OrderStatus {
        self.status.effective(self.expires_at, now)
    }
    /// A live PENDING order: one whose holds count.
    pub fn is_holdable(&self, now: Millis) -> bool {
        self.effective_status(now) == OrderStatus::Pending
    }
}

/// An event's metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub event_id: EventId,
    pub name: String,
    pub hold_seconds: u32,
    pub seat_count: u32,
}

/// One seat of an event's plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatSpec {
    pub seat_id: SeatId,
    pub section_id: SectionId,
    pub row: RowId,
    pub number: u32,
}

/// A seat with its state, as read for list-seats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seat {
    pub spec: SeatSpec,
    pub state: SeatState,
}

/// create-event's body, as sent.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventPlan {
    pub name: String,
    #[serde(default)]
    pub hold_seconds: Option<u32>,
    pub sections: Vec<SectionPlan>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SectionPlan {
    pub section_id: SectionId,
    pub rows: Vec<RowPlan>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RowPlan {
    pub row: RowId,
    pub count: u32,
}

impl EventPlan {
    /// Checks the plan and expands it into its seats, in plan order.
    /// Rejects what would make two seats share an id: a repeated section,
    /// a repeated row in a section, or ids that collide through the dashes
    /// (section `A` row `1-2` and section `A-1` row `2` both give `A-1-2-n`).
    pub fn seats(&self) -> Result<Vec<SeatSpec>, Error> {
        let name = self.name.trim();
        if name.is_empty() || self.name.chars().count() > MAX_EVENT_NAME_LEN {
            return Err(Error::BadRequest(format!(
                "name must be 1-{MAX_EVENT_NAME_LEN} characters"
            )));
        }
        if let Some(h) = self.hold_seconds {
            check_hold_seconds(h)?;
        }
        if self.sections.is_empty() {
            return Err(Error::BadRequest("sections must not be empty".into()));
        }
        let mut total: u64 = 0;
        for section in &self.sections {
            if section.rows.is_empty() {
                return Err(Error::BadRequest(format!(
                    "section {} has no rows",
                    section.section_id
                )));
            }
            for row in &section.rows {
                if row.count == 0 {
                    return Err(Error::BadRequest(format!(
                        "row {} of section {} must have a count of at least 1",
                        row.row, section.section_id
                    )));
                }
                total += u64::from(row.count);
            }
        }
        if total > u64::from(MAX_EVENT_SEATS) {
            return Err(Error::BadRequest(format!(
                "an event has at most {MAX_EVENT_SEATS} seats; this plan has {total}"
            )));
        }
        let mut seats = Vec::with_capacity(total as usize);
        let mut ids = HashSet::with_capacity(total as usize);
        for section in &self.sections {
            for row in &section.rows {
                for number in 1..=row.count {
                    let seat_id = SeatId::compose(&section.section_id, &row.row, number);
                    if !ids.insert(seat_id.clone()) {
                        return Err(Error::BadRequest(format!(
                            "seat id {seat_id} occurs twice: sections and rows must be unique and must not collide through '-'"
                        )));
                    }
                    seats.push(SeatSpec {
                        seat_id,
                        section_id: section.section_id.clone(),
                        row: row.row.clone(),
                        number,
                    });
                }
            }
        }
        Ok(seats)
    }
}

pub fn check_hold_seconds(h: u32) -> Result<(), Error> {
    if HOLD_SECONDS_RANGE.contains(&h) {
        Ok(())
    } else {
        Err(Error::BadRequest(format!(
            "holdSeconds must be between {} and {}",
            HOLD_SECONDS_RANGE.start(),
            HOLD_SECONDS_RANGE.end()
        )))
    }
}

/// Order for list-seats: section, then row, then seat number, comparing
/// numeric labels as numbers so row 10 follows row 9.
pub fn seat_display_order(a: &SeatSpec, b: &SeatSpec) -> std::cmp::Ordering {
    natural(a.section_id.as_str(), b.section_id.as_str())
        .then_with(|| natural(a.row.as_str(), b.row.as_str()))
        .then_with(|| a.number.cmp(&b.number))
}

fn natural(a: &str, b: &str) -> std::cmp::Ordering {
    match (a.parse::<u64>(), b.parse::<u64>()) {
        (Ok(x), Ok(y)) => x.cmp(&y).then_with(|| a.cmp(b)),
        _ => a.cmp(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tests use `?` rather than unwrap: a failure reports the error.
    type TestResult = Result<(), Box<dyn std::error::Error>>;

    fn plan(json: &str) -> Result<EventPlan, serde_json::Error> {
        serde_json::from_str(json)
    }

    #[test]
    fn ids_accept_the_contract_charset_and_reject_the_rest() {
        assert!(EventId::parse("gala-2026_v1.0").is_ok());
        assert!(EventId::parse(&"a".repeat(64)).is_ok());
        for bad in ["", "a#b", "a b", "ä", "a/b", "a~b"] {
            assert!(EventId::parse(bad).is_err(), "{bad:?} must be rejected");
        }
        assert!(EventId::parse(&"a".repeat(65)).is_err());
        let err = PaymentId::parse("pi#1").unwrap_err();
        assert!(err.to_string().contains("paymentId"));
    }

    #[test]
    fn ids_validate_when_deserialized() -> TestResult {
        let r: Result<PaymentId, _> = serde_json::from_str("\"pi#1\"");
        assert!(r.is_err());
        let r: PaymentId = serde_json::from_str("\"pi_1\"")?;
        assert_eq!(r.as_str(), "pi_1");
        Ok(())
    }

    #[test]
    fn plan_expands_into_seat_ids_in_order() -> TestResult {
        let p = plan(r#"{"name":"Gala","sections":[{"sectionId":"A","rows":[{"row":"1","count":2},{"row":"2","count":1}]}]}"#)?;
        let ids: Vec<_> = p.seats()?.into_iter().map(|s| s.seat_id.to_string()).collect();
        assert_eq!(ids, ["A-1-1", "A-1-2", "A-2-1"]);
        Ok(())
    }

    #[test]
    fn plan_rejects_colliding_and_repeated_seats() -> TestResult {
        let p = plan(r#"{"name":"G","sections":[{"sectionId":"A","rows":[{"row":"1-2","count":1}]},{"sectionId":"A-1","rows":[{"row":"2","count":1}]}]}"#)?;
        assert!(p.seats().is_err());
        let p = plan(r#"{"name":"G","sections":[{"sectionId":"A","rows":[{"row":"1","count":1},{"row":"1","count":1}]}]}"#)?;
        assert!(p.seats().is_err());
        Ok(())
    }

    #[test]
    fn plan_bounds() -> TestResult {
        let too_many = r#"{"name":"G","sections":[{"sectionId":"A","rows":[{"row":"1","count":20001}]}]}"#;
        assert!(plan(too_many)?.seats().is_err());
        let exactly = r#"{"name":"G","sections":[{"sectionId":"A","rows":[{"row":"1","count":20000}]}]}"#;
        assert_eq!(plan(exactly)?.seats()?.len(), 20_000);
        for bad in [
            r#"{"name":"","sections":[{"sectionId":"A","rows":[{"row":"1","count":1}]}]}"#,
            r#"{"name":"G","sections":[]}"#,
            r#"{"name":"G","sections":[{"sectionId":"A","rows":[]}]}"#,
            r#"{"name":"G","sections":[{"sectionId":"A","rows":[{"row":"1","count":0}]}]}"#,
            r#"{"name":"G","holdSeconds":0,"sections":[{"sectionId":"A","rows":[{"row":"1","count":1}]}]}"#,
            r#"{"name":"G","holdSeconds":7201,"sections":[{"sectionId":"A","rows":[{"row":"1","count":1}]}]}"#,
        ] {
            assert!(plan(bad)?.seats().is_err(), "{bad}");
        }
        // Wrong types never reach the rules: serde refuses them.
        assert!(plan(r#"{"name":"G","sections":[{"sectionId":"A","rows":[{"row":"1","count":-1}]}]}"#).is_err());
        assert!(plan(r#"{"name":"G","sections":[{"sectionId":"A#","rows":[{"row":"1","count":1}]}]}"#).is_err());
        Ok(())
    }

    #[test]
    fn expiry_boundary_is_exclusive() {
        let t = Millis(1_000);
        assert!(hold_is_live(t, Millis(999)));
        assert!(!hold_is_live(t, Millis(1_000)));
        assert_eq!(OrderStatus::Pending.effective(t, Millis(1_000)), OrderStatus::Expired);
        assert_eq!(OrderStatus::Pending.effective(t, Millis(999)), OrderStatus::Pending);
        assert_eq!(OrderStatus::Completed.effective(t, Millis(5_000)), OrderStatus::Completed);
    }

    #[test]
    fn expired_holds_list_as_available() -> TestResult {
        let order = OrderId::parse("o1")?;
        let held = SeatState::Held { order: order.clone(), expires_at: Millis(10) };
        assert_eq!(held.visible_status(Millis(9)), SeatStatus::Held);
        assert_eq!(held.visible_status(Millis(10)), SeatStatus::Available);
        assert_eq!(SeatState::Sold { order }.visible_status(Millis(10)), SeatStatus::Sold);
        Ok(())
    }

    #[test]
    fn times_are_rfc3339_utc_millis() {
        assert_eq!(Millis(1_795_300_000_123).to_rfc3339(), "2026-11-21T22:26:40.123Z");
    }

    #[test]
    fn rows_sort_naturally() -> TestResult {
        let s = |row: &str, n| -> Result<SeatSpec, Error> {
            Ok(SeatSpec { seat_id: SeatId::parse("x")?, section_id: SectionId::parse("A")?, row: RowId::parse(row)?, number: n })
        };
        let mut v = [s("10", 1)?, s("9", 2)?, s("9", 1)?];
        v.sort_by(seat_display_order);
        let got: Vec<_> = v.iter().map(|x| (x.row.to_string(), x.number)).collect();
        assert_eq!(got, [("9".into(), 1), ("9".into(), 2), ("10".into(), 1)]);
        Ok(())
    }
}
