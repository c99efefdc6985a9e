//! A listing's resale item (API.md, "Returns"): one per seat an event's
//! buyers have listed, `RESALE#{eventRef}` / `{seatId}`, and one per
//! section a seller listed places of, `/ ga:{section}#{orderId}`, so the
//! offerer finds every seat it may offer in one strongly consistent Query
//! of the event's partition (and the tick every listing to revert at the
//! cutoff), and the offer holding a seat is on the item itself (who and
//! until when), where a withdrawal's condition sees it.
//! The seller's own record stays its listing (`items/returns.rs`); the
//! seat item stays `SOLD` to the seller until the resale moves it. Its
//! key, attribute names, codec and expressions.

use std::collections::HashMap;

use crate::domain::buyer::BuyerId;
use crate::domain::buyer_limit::BuyerRef;
use crate::domain::ga::Bucket;
use crate::domain::returns::{
    ListedPlaces, ListedSeat, ListedUnit, PlacesItemRead, PlacesResale, ReturnUnit, Seller,
};
use crate::domain::{EventRef, Millis, Order, OrderId, SeatId, SectionId};
use crate::store::errors::StoreError;
use crate::store::expression::Expression;
use crate::store::schema::{CHANGED_AT, KIND, PK, SK};
use crate::store::value::{n, s, Fields, Item};
use aws_sdk_dynamodb::types::AttributeValue;

use super::bucket::{ga_bucket_key, hold_attribute, parse_holds, CAPACITY, FREE, SOLD};

pub const RESALE_PK_PREFIX: &str = "RESALE#";
const SELLER_ORDER_ID: &str = "orderId";
const UNIT: &str = "unit";
const SELLER_BUYER_ID: &str = "buyerId";
const SELLER_BUYER_REF: &str = "buyerRef";
const GENERATION: &str = "generation";
const LISTED_AT: &str = "listedAt";
const HELD_BY: &str = "heldBy";
const HELD_UNTIL: &str = "heldUntil";
/// A places item's version: every write of it adds one, and a listing's,
/// a withdrawal's and a revert's are conditioned on the one read.
const PLACES_VERSION: &str = "v";

/// Every attribute a resale item's writes name (IAM's
/// `dynamodb:Attributes` for the functions that write them).
/// An offer's hold on a listing of places, `hold#{orderId}` (the
/// bucket's own attribute): named under IAM's `StringLike`, a listing
/// made again removes those an earlier one left.
const ANY_HOLD: &str = "hold#*";

pub const RESALE_ATTRIBUTES: [&str; 17] = [
    PK,
    SK,
    KIND,
    UNIT,
    SELLER_ORDER_ID,
    SELLER_BUYER_ID,
    SELLER_BUYER_REF,
    GENERATION,
    LISTED_AT,
    HELD_BY,
    HELD_UNTIL,
    CAPACITY,
    SOLD,
    FREE,
    PLACES_VERSION,
    ANY_HOLD,
    CHANGED_AT,
];

/// The partition of `event`'s listed seats.
fn resale_pk(event: &EventRef) -> String {
    format!("{RESALE_PK_PREFIX}{event}")
}

/// `seat`'s resale item.
pub(in crate::store) fn resale_key(event: &EventRef, seat: &SeatId) -> Item {
    HashMap::from([
        (PK.into(), s(resale_pk(event))),
        (SK.into(), s(seat.as_str())),
    ])
}

/// The resale item of `seller`'s listing of `unit`: a seat's own, or the
/// seller's of a section's places (several sellers list one section).
pub(in crate::store) fn unit_resale_key(
    event: &EventRef,
    seller: &OrderId,
    unit: &ReturnUnit,
) -> Item {
    let sk = match unit {
        ReturnUnit::Seat(seat) => seat.as_str().to_owned(),
        ReturnUnit::Places(_) => format!("{}#{seller}", unit.key()),
    };
    HashMap::from([(PK.into(), s(resale_pk(event))), (SK.into(), s(sk))])
}

/// The resale item of `seller`'s listed places of `section`, for the test
/// harness's raw looks and writes (the store's go through [`Store`]).
///
/// [`Store`]: crate::store::Store
pub fn listed_places_item_key(
    event: &crate::domain::EventId,
    seller: &OrderId,
    section: &SectionId,
) -> Item {
    let unit = ReturnUnit::Places(section.clone());
    unit_resale_key(&EventRef::of(event), seller, &unit)
}

/// Every listed seat of `event` (a key condition).
pub(in crate::store) fn listed_seats_of(event: &EventRef) -> Expression {
    Expression::key_condition("#pk = :pk")
        .name("#pk", PK)
        .value(":pk", s(resale_pk(event)))
}

/// What every listing's write sets on its resale item: whose listing of
/// what, under which generation, since `now`.
fn listing_attributes(
    seller: &Seller,
    unit: &ReturnUnit,
    generation: u64,
    now: Millis,
) -> Vec<(String, AttributeValue)> {
    let mut set = vec![
        (KIND.to_owned(), s("resale")),
        (UNIT.to_owned(), s(unit.key())),
        (SELLER_ORDER_ID.to_owned(), s(seller.order_id.as_str())),
        (GENERATION.to_owned(), n(generation)),
        (LISTED_AT.to_owned(), n(now.0)),
    ];
    if let Some(buyer) = &seller.buyer_id {
        set.push((SELLER_BUYER_ID.to_owned(), s(buyer.as_str())));
    }
    if let Some(buyer) = &seller.buyer_ref {
        set.push((SELLER_BUYER_REF.to_owned(), s(buyer.as_str())));
    }
    set
}

/// `SET` clauses for `set` (placeholders `#r{i}`/`:r{i}`), bound.
fn set_clauses(set: Vec<(String, AttributeValue)>) -> (Vec<String>, Expression) {
    let mut clauses = Vec::new();
    let mut expression = Expression::default();
    for (i, (name, value)) in set.into_iter().enumerate() {
        clauses.push(format!("#r{i} = :r{i}"));
        expression = expression
            .name(&format!("#r{i}"), name)
            .value(&format!(":r{i}"), value);
    }
    (clauses, expression)
}

/// `seat` listed by `seller` under `generation` at `now`: the whole item,
/// unheld (a listing made again after a withdrawal or a revert replaces
/// what an older one left), if no live offer holds it (one made before a
/// revert may hold it until it expires).
pub(in crate::store) fn list(
    seller: &Seller,
    seat: &SeatId,
    generation: u64,
    now: Millis,
) -> Expression {
    let unit = ReturnUnit::Seat(seat.clone());
    let (clauses, expression) = set_clauses(listing_attributes(seller, &unit, generation, now));
    let text = format!("SET {} REMOVE #heldBy, #heldUntil", clauses.join(", "));
    let mut update = Expression::update(text).name("#heldBy", HELD_BY);
    update = update.and(expression).and(unheld(now));
    update.stamped(now)
}

/// `section`'s places listed by `seller` under `generation` at `now`, as
/// `resale` says (`domain::returns::places_resale`): a new item, more
/// places on the live one (its holds kept), or an earlier listing's item
/// replaced (its expired holds removed); each over the item as read.
pub(in crate::store) fn list_places(
    seller: &Seller,
    section: &SectionId,
    resale: &PlacesResale,
    generation: u64,
    now: Millis,
) -> Expression {
    let unit = ReturnUnit::Places(section.clone());
    let mut set = listing_attributes(seller, &unit, generation, now);
    let (count, read, stale) = match resale {
        PlacesResale::New { quantity } => (Some(*quantity), PlacesItemRead::Absent, &[][..]),
        PlacesResale::More { version, .. } => (None, PlacesItemRead::At(*version), &[][..]),
        PlacesResale::Remade {
            quantity,
            read,
            stale,
        } => (Some(*quantity), *read, &stale[..]),
    };
    if let Some(quantity) = count {
        let version = match read {
            PlacesItemRead::At(version) => version + 1,
            PlacesItemRead::Absent | PlacesItemRead::Uncounted => 1,
        };
        set.extend([
            (CAPACITY.to_owned(), n(quantity)),
            (SOLD.to_owned(), n(0)),
            (FREE.to_owned(), n(quantity)),
            (PLACES_VERSION.to_owned(), n(version)),
        ]);
    }
    let (clauses, mut expression) = set_clauses(set);
    let mut text = format!("SET {}", clauses.join(", "));
    if let PlacesResale::More { added, .. } = resale {
        text.push_str(" ADD #capacity :added, #free :added, #v :one");
        expression = expression
            .name("#capacity", CAPACITY)
            .name("#free", FREE)
            .value(":added", n(*added))
            .value(":one", n(1));
    }
    if !stale.is_empty() {
        let removes: Vec<String> = (0..stale.len()).map(|i| format!("#x{i}")).collect();
        text.push_str(&format!(" REMOVE {}", removes.join(", ")));
        for (i, order) in stale.iter().enumerate() {
            expression = expression.name(&format!("#x{i}"), hold_attribute(order));
        }
    }
    Expression::update(text)
        .and(expression)
        .and(places_as_read(read))
        .stamped(now)
}

/// `write` (a bucket's: a take, a give-back, an extension, a sale) on a
/// listing of places' resale item: still `seller`'s listing, its version
/// one more, so a listing, a withdrawal or a revert over the version read
/// before refuses.
pub(in crate::store) fn on_listing(write: Expression, seller: &OrderId) -> Expression {
    write
        .also_set("#listingV = if_not_exists(#listingV, :listingZero) + :listingOne")
        .and(Expression::condition("#listingSeller = :listingSeller"))
        .name("#listingV", PLACES_VERSION)
        .name("#listingSeller", SELLER_ORDER_ID)
        .value(":listingZero", n(0))
        .value(":listingOne", n(1))
        .value(":listingSeller", s(seller.as_str()))
}

/// Where `order`'s places of `section` recorded under `bucket` are, and
/// `write` (a bucket's) as it applies there: the section's bucket, or for
/// an offer's listed places their listing's resale item
/// ([`on_listing`]). Every write of an order's places goes
/// through here.
pub(in crate::store) fn places_write(
    event: &EventRef,
    order: &Order,
    section: &SectionId,
    bucket: u32,
    write: Expression,
) -> (Item, Expression) {
    match order.place_resale_of(section, bucket) {
        Some(resale) => {
            let unit = ReturnUnit::Places(section.clone());
            let key = unit_resale_key(event, &resale.seller, &unit);
            (key, on_listing(write, &resale.seller))
        }
        None => (ga_bucket_key(event, section, bucket), write),
    }
}

/// A places item as `read`: none, one from before places were counted,
/// or one at its version.
pub(in crate::store) fn places_as_read(read: PlacesItemRead) -> Expression {
    match read {
        PlacesItemRead::Absent => Expression::new_item(),
        PlacesItemRead::Uncounted => {
            Expression::condition("attribute_exists(PK) AND attribute_not_exists(#v)")
                .name("#v", PLACES_VERSION)
        }
        PlacesItemRead::At(version) => Expression::condition("#v = :read")
            .name("#v", PLACES_VERSION)
            .value(":read", n(version)),
    }
}

/// No live offer holds it at `now` (or there is no item: a listing of
/// places, or one from before resale items).
pub(in crate::store) fn unheld(now: Millis) -> Expression {
    Expression::condition("(attribute_not_exists(#heldUntil) OR #heldUntil <= :now)")
        .name("#heldUntil", HELD_UNTIL)
        .value(":now", n(now.0))
}

/// Held by `order`'s offer until `until` from `now`: the item is still
/// `seller`'s listing under the waitlist's `generation`, and no live offer
/// holds it.
pub(in crate::store) fn hold(
    order: &OrderId,
    until: Millis,
    seller: &OrderId,
    generation: u64,
    now: Millis,
) -> Expression {
    Expression::update("SET #heldBy = :order, #heldUntil = :until")
        .and(Expression::condition(
            "#seller = :seller AND #generation = :generation",
        ))
        .and(unheld(now))
        .name("#heldBy", HELD_BY)
        .name("#seller", SELLER_ORDER_ID)
        .name("#generation", GENERATION)
        .value(":order", s(order.as_str()))
        .value(":until", n(until.0))
        .value(":seller", s(seller.as_str()))
        .value(":generation", n(generation))
        .stamped(now)
}

/// `order`'s offer holds it (a resale's delete, a let-go's update).
pub(in crate::store) fn held_by(order: &OrderId) -> Expression {
    Expression::condition("#heldBy = :order")
        .name("#heldBy", HELD_BY)
        .value(":order", s(order.as_str()))
}

/// `order`'s offer lets go of it at `now` (a drop, a cancel, a confirm
/// that does not sell it): offered again at once.
pub(in crate::store) fn let_go(order: &OrderId, now: Millis) -> Expression {
    Expression::update("REMOVE #heldBy, #heldUntil")
        .and(held_by(order))
        .name("#heldUntil", HELD_UNTIL)
        .stamped(now)
}

/// The event of a resale item's stream record that leaves its seat free
/// to offer (a listing, an offer's let-go: no holder in its new image),
/// with the record's sequence number: the offerer looks then. Pure.
pub fn resale_offerable(record: &serde_json::Value) -> Option<(EventRef, String)> {
    let data = &record["dynamodb"];
    let pk = data["Keys"][PK]["S"].as_str()?;
    let event = EventRef::from_hex(pk.strip_prefix(RESALE_PK_PREFIX)?)?;
    let image = data.get("NewImage")?;
    if image.get(HELD_BY).is_some() {
        return None;
    }
    // A listing of places: made (again), or more of them free (more
    // places, an offer's give-back); not an offer's take or a sale.
    let number = |image: Option<&serde_json::Value>, attr: &str| {
        let value = image?.get(attr)?.get("N")?.as_str()?;
        value.parse::<i64>().ok()
    };
    let old = data.get("OldImage");
    if let Some(now_free) = number(Some(image), FREE) {
        let relisted = number(old, LISTED_AT) != number(Some(image), LISTED_AT);
        if !relisted && number(old, FREE).is_some_and(|was| was >= now_free) {
            return None;
        }
    }
    let sequence = data["SequenceNumber"].as_str().unwrap_or_default();
    Some((event, sequence.to_owned()))
}

/// Still the listing made at `listed_at` (not one made again since).
pub(in crate::store) fn listed_at(listed_at: Millis) -> Expression {
    Expression::condition("#listedAt = :listedAt")
        .name("#listedAt", LISTED_AT)
        .value(":listedAt", n(listed_at.0))
}

/// Any listing's resale item, as the tick's revert reads it.
pub(in crate::store) fn parse_listed_unit(item: &Item) -> Result<ListedUnit, StoreError> {
    let f = Fields::new(item);
    let unit = ReturnUnit::from_key(f.str(UNIT)?).ok_or_else(|| f.malformed(UNIT))?;
    let (held_until, version) = match &unit {
        ReturnUnit::Seat(_) => (f.opt_i64(HELD_UNTIL)?.map(Millis), None),
        ReturnUnit::Places(_) => {
            let holds = parse_holds(item)?;
            let latest = holds.iter().map(|h| h.expires_at).max();
            (latest, places_version(&f)?)
        }
    };
    Ok(ListedUnit {
        unit,
        seller: OrderId::parse(f.str(SELLER_ORDER_ID)?)
            .map_err(|_| f.malformed(SELLER_ORDER_ID))?,
        generation: u64::try_from(f.i64(GENERATION)?).map_err(|_| f.malformed(GENERATION))?,
        listed_at: Millis(f.i64(LISTED_AT)?),
        held_until,
        version,
    })
}

/// A places item's version (`None`: an item from before places were
/// counted, which no offer holds).
fn places_version(f: &Fields) -> Result<Option<u64>, StoreError> {
    f.opt_i64(PLACES_VERSION)?
        .map(|v| u64::try_from(v).map_err(|_| f.malformed(PLACES_VERSION)))
        .transpose()
}

/// A section's listed places as their resale item counts them.
pub(in crate::store) fn parse_listed_places(item: &Item) -> Result<ListedPlaces, StoreError> {
    let f = Fields::new(item);
    let unit = ReturnUnit::from_key(f.str(UNIT)?).ok_or_else(|| f.malformed(UNIT))?;
    let ReturnUnit::Places(section) = unit else {
        return Err(f.malformed(UNIT));
    };
    let count = |attr: &str| Ok::<_, StoreError>(f.opt_i64(attr)?.unwrap_or(0));
    let count = |attr: &str| u32::try_from(count(attr)?).map_err(|_| f.malformed(attr));
    Ok(ListedPlaces {
        section,
        seller: parse_seller(&f)?,
        generation: u64::try_from(f.i64(GENERATION)?).map_err(|_| f.malformed(GENERATION))?,
        listed_at: Millis(f.i64(LISTED_AT)?),
        places: Bucket {
            index: 0,
            capacity: count(CAPACITY)?,
            sold: count(SOLD)?,
            free: count(FREE)?,
            holds: parse_holds(item)?,
        },
        version: places_version(&f)?,
    })
}

/// A resale item as the offerer reads it: a listed seat, or a seller's
/// listed places of a section.
pub(in crate::store) enum OnOffer {
    Seat(ListedSeat),
    Places(ListedPlaces),
}

pub(in crate::store) fn parse_on_offer(item: &Item) -> Result<OnOffer, StoreError> {
    let f = Fields::new(item);
    match ReturnUnit::from_key(f.str(UNIT)?) {
        Some(ReturnUnit::Seat(_)) => Ok(OnOffer::Seat(parse_listed_seat(item)?)),
        Some(ReturnUnit::Places(_)) => Ok(OnOffer::Places(parse_listed_places(item)?)),
        None => Err(f.malformed(UNIT)),
    }
}

/// A seat's resale item as the offerer reads it (`None`: a section's).
pub(in crate::store) fn parse_seat_item(item: &Item) -> Result<Option<ListedSeat>, StoreError> {
    let is_seat = Fields::new(item)
        .opt_s(UNIT)
        .is_some_and(|unit| matches!(ReturnUnit::from_key(unit), Some(ReturnUnit::Seat(_))));
    is_seat.then(|| parse_listed_seat(item)).transpose()
}

pub(in crate::store) fn parse_listed_seat(item: &Item) -> Result<ListedSeat, StoreError> {
    let f = Fields::new(item);
    let held = match f.opt_s(HELD_BY) {
        Some(order) => Some((
            OrderId::parse(order).map_err(|_| f.malformed(HELD_BY))?,
            Millis(f.i64(HELD_UNTIL)?),
        )),
        None => None,
    };
    Ok(ListedSeat {
        seat: SeatId::parse(f.str(SK)?).map_err(|_| f.malformed(SK))?,
        seller: parse_seller(&f)?,
        generation: u64::try_from(f.i64(GENERATION)?).map_err(|_| f.malformed(GENERATION))?,
        listed_at: Millis(f.i64(LISTED_AT)?),
        held,
    })
}

/// Whose listing a resale item is.
fn parse_seller(f: &Fields) -> Result<Seller, StoreError> {
    Ok(Seller {
        order_id: OrderId::parse(f.str(SELLER_ORDER_ID)?)
            .map_err(|_| f.malformed(SELLER_ORDER_ID))?,
        buyer_id: f
            .opt_s(SELLER_BUYER_ID)
            .map(|b| BuyerId::parse(b).ok_or_else(|| f.malformed(SELLER_BUYER_ID)))
            .transpose()?,
        buyer_ref: f
            .opt_s(SELLER_BUYER_REF)
            .map(|r| BuyerRef::from_hex(r).ok_or_else(|| f.malformed(SELLER_BUYER_REF)))
            .transpose()?,
    })
}

#[cfg(test)]
#[path = "resale_tests.rs"]
mod tests;
