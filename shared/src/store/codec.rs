//! The item codec: attribute values in, typed domain values out; a missing
//! or mistyped attribute is a `Malformed` error naming the item.

use super::*;

pub(super) type Item = HashMap<String, AttributeValue>;

pub(super) fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}
pub(super) fn n(v: impl ToString) -> AttributeValue {
    AttributeValue::N(v.to_string())
}
pub(super) fn ss(values: &[&str]) -> AttributeValue {
    AttributeValue::Ss(values.iter().map(|v| (*v).to_owned()).collect())
}


/// Typed reads of item attributes; a missing or mistyped attribute is a
/// `Malformed` store error naming the item and the attribute.
pub(super) struct Fields<'a> {
    item: &'a Item,
}

impl<'a> Fields<'a> {
    pub(super) fn new(item: &'a Item) -> Self {
        Self { item }
    }
    pub(super) fn key(&self) -> String {
        let get = |k| self.item.get(k).and_then(|v: &AttributeValue| v.as_s().ok()).map(String::as_str);
        format!("{}/{}", get(PK).unwrap_or("?"), get(SK).unwrap_or("?"))
    }
    pub(super) fn malformed(&self, attr: &str) -> StoreError {
        StoreError::Malformed { key: self.key(), problem: format!("{attr} missing or mistyped") }
    }
    pub(super) fn opt_s(&self, attr: &str) -> Option<&'a str> {
        self.item.get(attr).and_then(|v| v.as_s().ok()).map(String::as_str)
    }
    pub(super) fn str(&self, attr: &str) -> Result<&'a str, StoreError> {
        self.opt_s(attr).ok_or_else(|| self.malformed(attr))
    }
    pub(super) fn opt_i64(&self, attr: &str) -> Result<Option<i64>, StoreError> {
        match self.item.get(attr) {
            None => Ok(None),
            Some(v) => v
                .as_n()
                .ok()
                .and_then(|x| x.parse().ok())
                .map(Some)
                .ok_or_else(|| self.malformed(attr)),
        }
    }
    pub(super) fn i64(&self, attr: &str) -> Result<i64, StoreError> {
        self.opt_i64(attr)?.ok_or_else(|| self.malformed(attr))
    }
    pub(super) fn u32(&self, attr: &str) -> Result<u32, StoreError> {
        u32::try_from(self.i64(attr)?).map_err(|_| self.malformed(attr))
    }
    pub(super) fn string_set(&self, attr: &str) -> Result<Vec<String>, StoreError> {
        match self.item.get(attr) {
            None => Ok(Vec::new()),
            Some(AttributeValue::Ss(v)) => Ok(v.clone()),
            Some(_) => Err(self.malformed(attr)),
        }
    }
    pub(super) fn string_list(&self, attr: &str) -> Result<Vec<String>, StoreError> {
        match self.item.get(attr) {
            None => Ok(Vec::new()),
            Some(AttributeValue::L(v)) => {
                v.iter().map(|x| x.as_s().cloned().map_err(|_| self.malformed(attr))).collect()
            }
            Some(_) => Err(self.malformed(attr)),
        }
    }
    pub(super) fn id<T>(&self, attr: &str, parse: fn(&str) -> Result<T, Error>) -> Result<T, StoreError> {
        parse(self.str(attr)?).map_err(|_| self.malformed(attr))
    }
}

pub(super) fn parse_event(item: &Item) -> Result<Event, StoreError> {
    let f = Fields::new(item);
    Ok(Event {
        event_id: f.id(EVENT_ID, EventId::parse)?,
        name: f.str(NAME)?.to_owned(),
        hold_seconds: f.u32(HOLD_SECONDS)?,
        seat_count: f.u32(SEAT_COUNT)?,
        sections: f.string_list(SECTIONS)?.iter().map(|x| SectionId::parse(x).map_err(|_| f.malformed(SECTIONS))).collect::<Result<_, _>>()?,
    })
}

pub(super) fn event_is_ready(item: &Item) -> bool {
    matches!(item.get(READY), Some(AttributeValue::Bool(true)))
}

pub(super) fn parse_seat(item: &Item) -> Result<Seat, StoreError> {
    let f = Fields::new(item);
    let spec = SeatSpec {
        seat_id: f.id(SEAT_ID, SeatId::parse)?,
        section_id: f.id(SECTION_ID, SectionId::parse)?,
        row: f.id(ROW, RowId::parse)?,
        number: f.u32(NUMBER)?,
        ordinal: f.u32(ORDINAL)?,
    };
    let state = match f.str(STATUS)? {
        SEAT_AVAILABLE => SeatState::Available,
        SEAT_HELD => SeatState::Held {
            order: f.id(HOLDER, OrderId::parse)?,
            expires_at: Millis(f.i64(HOLD_EXPIRES_AT)?),
        },
        SEAT_SOLD => SeatState::Sold { order: f.id(HOLDER, OrderId::parse)? },
        _ => return Err(f.malformed(STATUS)),
    };
    Ok(Seat { spec, state })
}

/// An order as read, with its optimistic-concurrency version.
#[derive(Debug, Clone)]
pub struct StoredOrder {
    pub order: Order,
    pub version: i64,
}

pub(crate) fn parse_order(item: &Item) -> Result<StoredOrder, StoreError> {
    let f = Fields::new(item);
    let ids = |attr| -> Result<Vec<String>, StoreError> {
        let mut v = f.string_set(attr)?;
        v.sort();
        Ok(v)
    };
    let seats = ids(SEATS)?.iter().map(|x| SeatId::parse(x).map_err(|_| f.malformed(SEATS))).collect::<Result<_, _>>()?;
    let refund_payment_ids = ids(EXTRA_PAYMENT_IDS)?
        .iter()
        .map(|x| PaymentId::parse(x).map_err(|_| f.malformed(EXTRA_PAYMENT_IDS)))
        .collect::<Result<_, _>>()?;
    let expires_at = Millis(f.i64(EXPIRES_AT)?);
    let order = Order {
        order_id: f.id(ORDER_ID, OrderId::parse)?,
        event_id: f.id(EVENT_ID, EventId::parse)?,
        status: OrderStatus::parse(f.str(STATUS)?).ok_or_else(|| f.malformed(STATUS))?,
        expires_at,
        holder_deadline: Millis(f.i64(HOLDER_DEADLINE)?),
        created_at: Millis(f.i64(CREATED_AT)?),
        token_hash: f.str(TOKEN_HASH)?.to_owned(),
        seats,
        payment_id: f.opt_s(PAYMENT_ID).map(PaymentId::parse).transpose().map_err(|_| f.malformed(PAYMENT_ID))?,
        refund_payment_ids,
        refund_reason: f.opt_s(REFUND_REASON).map(|r| RefundReason::parse(r).ok_or_else(|| f.malformed(REFUND_REASON))).transpose()?,
        user_id: f.opt_s(USER_ID).map(str::to_owned),
    };
    Ok(StoredOrder { order, version: f.opt_i64(VERSION)?.unwrap_or(0) })
}
