//! The table's stream records (DynamoDB's wire JSON, as Lambda and the
//! Streams API deliver them) decoded into the domain's item images, for
//! publish-events (`domain::outbox`). Pure: the images go through the same
//! codec as the store's reads.

use super::errors::StoreError;
use super::items::bucket::{parse_bucket, GA_PK_PREFIX, SALE_ORDER_ID, SALE_PAYMENT_ID};
use super::items::entry::{parse_entry, ENTRY_PK_PREFIX, ENTRY_TIMES};
use super::items::order::{parse_order, ORDER_PK_PREFIX};
use super::items::returns::{parse_listing, RETURN_ORDER_ID, RETURN_PK_PREFIX};
use super::items::seat::{parse_seat, SEAT_PK_PREFIX};
use super::items::waitlist::{is_copy_pk, parse_waitlist, WAITLIST_PK_PREFIX, WAITLIST_TIMES};
use super::schema::{CHANGED_AT, CREATED_AT, EVENT_ID, PAYMENT_ID, PK, SECTION_ID};
use super::value::{Fields, Item};
use crate::domain::{EventId, Millis, OrderId, PaymentId, SeatState, SeatStatus, SectionId};
use aws_sdk_dynamodb::types::AttributeValue;
use serde_json::Value;

use crate::domain::outbox::{
    BucketImage, EntryImage, ItemChange, ItemImage, OfferImage, OrderImage, ReturnImage, SeatImage,
    WaitlistImage,
};

/// Why a stream record could not be decoded (it is then reported as a
/// batch item failure, and after retries lands in the dead-letter queue).
#[derive(Debug, thiserror::Error)]
#[error("stream record {record}: {reason}")]
pub struct RecordError {
    pub record: String,
    pub reason: String,
}

/// The change a stream record describes, or `None` for an item no event is
/// about (events, plan chunks, the seat map, payment records, a waitlist's
/// copies, buyer records, list and indexes). `now` stands in for a record
/// without its creation time.
pub fn item_change(record: &Value, now: Millis) -> Result<Option<ItemChange>, RecordError> {
    let data = &record["dynamodb"];
    let record_id = record["eventID"]
        .as_str()
        .or_else(|| data["SequenceNumber"].as_str())
        .unwrap_or_default()
        .to_owned();
    let fail = |reason: String| RecordError {
        record: record_id.clone(),
        reason,
    };
    let Some(pk) = data["Keys"][PK]["S"].as_str() else {
        return Err(fail("no PK in its keys".into()));
    };
    type Decode = fn(&Item) -> Result<ItemImage, StoreError>;
    // Each kind's decoder, and the instants its writes carry (for a write
    // with no `changedAt`).
    let (decode, times): (Decode, &[&str]) = if pk.starts_with(ORDER_PK_PREFIX) {
        (order_image, &[])
    } else if pk.starts_with(SEAT_PK_PREFIX) {
        (seat_image, &[])
    } else if pk.starts_with(GA_PK_PREFIX) {
        (bucket_image, &[])
    } else if is_copy_pk(pk) {
        // The waitlist's copies repeat its main item's writes: only the
        // main item's tell.
        return Ok(None);
    } else if pk.starts_with(WAITLIST_PK_PREFIX) {
        (waitlist_image, &WAITLIST_TIMES)
    } else if pk.starts_with(ENTRY_PK_PREFIX) {
        (entry_image, &ENTRY_TIMES)
    } else if pk.starts_with(RETURN_PK_PREFIX) {
        (return_image, &[])
    } else {
        return Ok(None);
    };
    let image = |name: &str| -> Result<Option<ItemImage>, RecordError> {
        match &data[name] {
            Value::Null => Ok(None),
            wire => {
                let item = wire_item(wire)
                    .ok_or_else(|| fail(format!("{name} is not a DynamoDB item")))?;
                decode(&item)
                    .map(Some)
                    .map_err(|e| fail(format!("{name}: {e}")))
            }
        }
    };
    let at = change_time(data, times).unwrap_or_else(|| {
        data["ApproximateCreationDateTime"]
            .as_f64()
            .map_or(now, |secs| Millis((secs * 1000.0) as i64))
    });
    Ok(Some(ItemChange {
        old: image("OldImage")?,
        new: image("NewImage")?,
        record_id,
        at,
    }))
}

/// When the write happened, to the millisecond, from the new image: its
/// `changedAt` (every write of an order, seat or bucket stamps it), or
/// for an item just created (an order) its `createdAt`, or the first of
/// its kind's own instants it carries (`times`: a waitlist's or an
/// entry's). `None` for an item written before the stamp: the stream
/// record's approximate time stands in (to the minute on DynamoDB
/// Streams).
fn change_time(data: &Value, times: &[&str]) -> Option<Millis> {
    let number = |name: &str| {
        data["NewImage"][name]["N"]
            .as_str()
            .and_then(|n| n.parse::<i64>().ok())
            .map(Millis)
    };
    number(CHANGED_AT)
        .or_else(|| data["OldImage"].is_null().then(|| number(CREATED_AT))?)
        .or_else(|| times.iter().find_map(|name| number(name)))
}

fn order_image(item: &Item) -> Result<ItemImage, StoreError> {
    let order = parse_order(item)?.order;
    Ok(ItemImage::Order(OrderImage {
        order_id: order.order_id,
        event_id: order.event_id,
        status: order.status,
        expires_at: order.expires_at,
        payment_id: order.payment_id,
        refund_payment_ids: order.refund_payment_ids,
        seats: order.seats,
        places: order.places,
        user_id: order.user_id,
        buyer_id: order.buyer.map(|b| b.buyer_id),
        offer: order.offer.map(|offer| OfferImage {
            entry_id: offer.entry_id,
            buyer_id: offer.buyer_id,
            cancelled_as: offer.cancelled_as,
        }),
    }))
}

fn waitlist_image(item: &Item) -> Result<ItemImage, StoreError> {
    let stored = parse_waitlist(item)?;
    Ok(ItemImage::Waitlist(WaitlistImage {
        event_id: stored.event_id,
        generation: stored.waitlist.generation,
        opened: stored.waitlist.opened_at.is_some(),
        ended: stored.waitlist.ended_at.is_some(),
    }))
}

fn return_image(item: &Item) -> Result<ItemImage, StoreError> {
    let listing = parse_listing(item)?;
    let f = Fields::new(item);
    Ok(ItemImage::Return(ReturnImage {
        event_id: f.id(EVENT_ID, EventId::parse)?,
        order_id: f.id(RETURN_ORDER_ID, OrderId::parse)?,
        unit: listing.unit,
        quantity: listing.quantity,
        status: listing.status,
        listed_at: listing.listed_at,
        resale: listing.resale,
    }))
}

fn entry_image(item: &Item) -> Result<ItemImage, StoreError> {
    let entry = parse_entry(item)?;
    Ok(ItemImage::Entry(EntryImage {
        event_id: Fields::new(item).id(EVENT_ID, EventId::parse)?,
        entry_id: entry.entry_id,
        buyer_id: entry.buyer,
        status: entry.stored,
    }))
}

fn seat_image(item: &Item) -> Result<ItemImage, StoreError> {
    let seat = parse_seat(item)?;
    let f = Fields::new(item);
    let (status, holder, hold_expires_at) = match seat.state {
        SeatState::Available => (SeatStatus::Available, None, None),
        SeatState::Held { order, expires_at } => (SeatStatus::Held, Some(order), Some(expires_at)),
        SeatState::Sold { order } => (SeatStatus::Sold, Some(order), None),
    };
    Ok(ItemImage::Seat(SeatImage {
        event_id: f.id(EVENT_ID, EventId::parse)?,
        seat_id: seat.spec.seat_id,
        status,
        holder,
        hold_expires_at,
        payment_id: f
            .opt_s(PAYMENT_ID)
            .map(PaymentId::parse)
            .transpose()
            .map_err(|_| f.malformed(PAYMENT_ID))?,
    }))
}

fn bucket_image(item: &Item) -> Result<ItemImage, StoreError> {
    let bucket = parse_bucket(item)?;
    let f = Fields::new(item);
    let sale = match f.opt_s(SALE_ORDER_ID) {
        None => None,
        Some(order) => Some((
            OrderId::parse(order).map_err(|_| f.malformed(SALE_ORDER_ID))?,
            f.opt_s(SALE_PAYMENT_ID)
                .map(PaymentId::parse)
                .transpose()
                .map_err(|_| f.malformed(SALE_PAYMENT_ID))?,
        )),
    };
    Ok(ItemImage::Bucket(BucketImage {
        event_id: f.id(EVENT_ID, EventId::parse)?,
        section_id: f.id(SECTION_ID, SectionId::parse)?,
        sold: bucket.sold,
        holds: bucket.holds,
        sale,
    }))
}

/// An item in DynamoDB's wire JSON (`{"attr": {"S": "…"}, …}`) as the SDK's
/// values; `None` if it is not one.
fn wire_item(wire: &Value) -> Option<Item> {
    wire.as_object()?
        .iter()
        .map(|(k, v)| Some((k.clone(), wire_value(v)?)))
        .collect()
}

fn wire_value(wire: &Value) -> Option<AttributeValue> {
    let (kind, v) = wire.as_object().filter(|o| o.len() == 1)?.iter().next()?;
    let strings = |v: &Value| -> Option<Vec<String>> {
        v.as_array()?
            .iter()
            .map(|x| x.as_str().map(str::to_owned))
            .collect()
    };
    Some(match kind.as_str() {
        "S" => AttributeValue::S(v.as_str()?.to_owned()),
        "N" => AttributeValue::N(v.as_str()?.to_owned()),
        "BOOL" => AttributeValue::Bool(v.as_bool()?),
        "NULL" => AttributeValue::Null(v.as_bool()?),
        "SS" => AttributeValue::Ss(strings(v)?),
        "NS" => AttributeValue::Ns(strings(v)?),
        "M" => AttributeValue::M(wire_item(v)?),
        "L" => AttributeValue::L(
            v.as_array()?
                .iter()
                .map(wire_value)
                .collect::<Option<_>>()?,
        ),
        // Binary values: none of ours; kept as opaque text, never decoded.
        "B" | "BS" => AttributeValue::Null(true),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::outbox::state_events;
    use crate::domain::EventRef;
    use crate::store::items::waitlist::waitlist_pk;
    use serde_json::json;

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    fn seat(status: &str, holder: Option<&str>) -> Value {
        let mut image = json!({
            "PK": {"S": "SEATS#0123456789abcdef#A-1#0"}, "SK": {"S": "SEAT#A-1-1"}, "kind": {"S": "seat"},
            "eventId": {"S": "ev-1"}, "seatId": {"S": "A-1-1"}, "sectionId": {"S": "A"}, "row": {"S": "1"},
            "number": {"N": "1"}, "ordinal": {"N": "0"}, "status": {"S": status},
        });
        if let Some(h) = holder {
            image["holderOrderId"] = json!({"S": h});
            image["holdExpiresAt"] = json!({"N": "1700000000000"});
        }
        image
    }

    #[test]
    fn a_seat_record_decodes_and_becomes_its_event() -> TestResult {
        let record = json!({
            "eventID": "e-42", "eventName": "MODIFY",
            "dynamodb": {
                "Keys": {"PK": {"S": "SEATS#0123456789abcdef#A-1#0"}, "SK": {"S": "SEAT#A-1-1"}},
                "ApproximateCreationDateTime": 1700000000.0,
                "OldImage": seat("AVAILABLE", None),
                "NewImage": seat("HELD", Some("0123456789abcdef-o1")),
                "SequenceNumber": "100",
            },
        });
        let change = item_change(&record, Millis(0))?.ok_or("a seat's record")?;
        assert_eq!(change.at, Millis(1_700_000_000_000));
        let events = state_events(&change);
        assert_eq!(events.len(), 1);
        let detail = serde_json::to_value(&events[0].detail)?;
        assert_eq!(
            detail,
            json!({"id": "e-42.0", "eventId": "ev-1", "orderId": "0123456789abcdef-o1", "seatId": "A-1-1",
                   "expiresAt": "2023-11-14T22:13:20.000Z", "at": "2023-11-14T22:13:20.000Z"})
        );
        Ok(())
    }

    /// An event's `at` is the write's own stamp, to the millisecond; a new
    /// item without one gives its `createdAt`; an item written before the
    /// stamp, the record's approximate time (DynamoDB rounds it to the
    /// minute).
    #[test]
    fn the_time_is_the_items_own_to_the_millisecond() -> TestResult {
        let record = |old: Value, new: Value| {
            json!({"eventID": "e-7", "dynamodb": {
                "Keys": {"PK": {"S": "SEATS#0123456789abcdef#A-1#0"}, "SK": {"S": "SEAT#A-1-1"}},
                "ApproximateCreationDateTime": 1700000040.0, "OldImage": old, "NewImage": new}})
        };
        let mut stamped = seat("HELD", Some("0123456789abcdef-o1"));
        stamped["changedAt"] = json!({"N": "1700000061499"});
        let mut created = seat("HELD", Some("0123456789abcdef-o1"));
        created["createdAt"] = json!({"N": "1700000012345"});
        for (old, new, at) in [
            (seat("AVAILABLE", None), stamped, 1_700_000_061_499),
            (Value::Null, created.clone(), 1_700_000_012_345),
            (seat("AVAILABLE", None), created, 1_700_000_040_000),
            (
                seat("AVAILABLE", None),
                seat("HELD", Some("0123456789abcdef-o1")),
                1_700_000_040_000,
            ),
        ] {
            let change = item_change(&record(old, new), Millis(0))?.ok_or("a change")?;
            assert_eq!(change.at, Millis(at));
        }
        Ok(())
    }

    /// A waitlist's main item tells its opening, at its own `openedAt`;
    /// a copy's record of the same write tells nothing.
    #[test]
    fn a_waitlists_main_item_tells_its_opening_and_its_copies_nothing() -> TestResult {
        let main = waitlist_pk(&EventRef::of(&EventId::parse("ev-1")?));
        let image = |pk: &str, opened: bool| {
            let mut image = json!({
                "PK": {"S": pk}, "SK": {"S": "WAITLIST"}, "kind": {"S": "waitlist"},
                "eventId": {"S": "ev-1"}, "version": {"N": "2"}, "generation": {"N": "1"},
                "opens": {"S": "now"}, "offerSeconds": {"N": "600"}, "maxQuantity": {"N": "4"},
            });
            if opened {
                image["openedAt"] = json!({"N": "1700000005000"});
            }
            image
        };
        let record = |pk: &str| {
            json!({"eventID": "w-1", "dynamodb": {
                "Keys": {"PK": {"S": pk}, "SK": {"S": "WAITLIST"}},
                "ApproximateCreationDateTime": 1700000040.0,
                "OldImage": image(pk, false), "NewImage": image(pk, true)}})
        };
        let change = item_change(&record(&main), Millis(0))?.ok_or("the main item's")?;
        assert_eq!(change.at, Millis(1_700_000_005_000));
        let events = state_events(&change);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].detail_type.as_str(), "waitlist.opened");
        assert_eq!(
            serde_json::to_value(&events[0].detail)?,
            json!({"id": "w-1.0", "eventId": "ev-1", "generation": 1, "at": "2023-11-14T22:13:25.000Z"})
        );
        let copy = format!("{main}#3");
        assert!(item_change(&record(&copy), Millis(0))?.is_none(), "a copy");
        Ok(())
    }

    /// An entry's join is said at its own `joinedAt`, its end at its
    /// `endedAt`; the waitlist's other items (the buyer's record, the
    /// list, the indexes) and the registry say nothing.
    #[test]
    fn an_entrys_record_tells_its_join_and_its_end_at_their_instants() -> TestResult {
        let pk = "WENTRY#0123456789abcdef#e-1";
        let entry = |status: &str| {
            let mut image = json!({
                "PK": {"S": pk}, "SK": {"S": "ENTRY"}, "kind": {"S": "waitlist-entry"},
                "eventId": {"S": "ev-1"}, "entryId": {"S": "e-1"}, "generation": {"N": "1"},
                "buyerId": {"S": "user:1"}, "quantity": {"N": "2"}, "together": {"BOOL": true},
                "wheelchair": {"N": "0"}, "joinedAt": {"N": "1700000001000"},
                "tokenHash": {"S": "h"}, "entryStatus": {"S": status},
            });
            if status == "ENDED" {
                image["endReason"] = json!({"S": "left"});
                image["endedAt"] = json!({"N": "1700000009000"});
            }
            image
        };
        let record = |old: Value, new: Value| {
            json!({"eventID": "x", "dynamodb": {"Keys": {"PK": {"S": pk}, "SK": {"S": "ENTRY"}},
                "ApproximateCreationDateTime": 1700000040.0, "OldImage": old, "NewImage": new}})
        };
        for (old, new, kind, at) in [
            (
                Value::Null,
                entry("WAITING"),
                "waitlist.joined",
                1_700_000_001_000,
            ),
            (
                entry("WAITING"),
                entry("ENDED"),
                "waitlist.ended",
                1_700_000_009_000,
            ),
        ] {
            let change = item_change(&record(old, new), Millis(0))?.ok_or("an entry's")?;
            assert_eq!(change.at, Millis(at));
            let events = state_events(&change);
            assert_eq!(events.len(), 1);
            assert_eq!(events[0].detail_type.as_str(), kind);
        }
        let of = |pk: &str| json!({"eventID": "e", "dynamodb": {"Keys": {"PK": {"S": pk}}, "NewImage": {}}});
        for other in [
            "WBUYER#x#1#h",
            "WLIST#x#1#0",
            "WINDEX#x#1#*|1|t|0#0",
            "WAITLISTS",
        ] {
            assert!(item_change(&of(other), Millis(0))?.is_none(), "{other}");
        }
        Ok(())
    }

    #[test]
    fn other_items_carry_no_events_and_broken_images_are_errors() -> TestResult {
        let of = |pk: &str, new: Value| json!({"eventID": "e", "dynamodb": {"Keys": {"PK": {"S": pk}}, "NewImage": new}});
        assert!(item_change(&of("MAP#x", json!({})), Millis(0))?.is_none());
        assert!(item_change(&of("PAYMENT#p", json!({})), Millis(0))?.is_none());
        let broken = item_change(
            &of(
                "SEATS#0123456789abcdef#A-1#0",
                json!({"status": {"S": "HELD"}}),
            ),
            Millis(0),
        );
        assert!(broken.is_err_and(|e| e.record == "e"));
        assert!(item_change(&of("ORDER#o", json!({"x": {"Q": "?"}})), Millis(0)).is_err());
        assert!(
            item_change(&json!({"eventID": "e", "dynamodb": {}}), Millis(0)).is_err(),
            "no keys"
        );
        Ok(())
    }
}
