use super::*;
use crate::domain::buyer::BuyerId;
use crate::domain::buyer_limit::BuyerRef;
use crate::domain::{EventId, VisitorId};

/// An order of a limited event as stored, with `buyer_ref` if given.
fn item(buyer_ref: Option<&str>) -> Item {
    let mut item: Item = HashMap::from([
        (ORDER_ID.into(), s("o1")),
        (EVENT_ID.into(), s("gala")),
        (STATUS.into(), s("PENDING")),
        (EXPIRES_AT.into(), n(2_000)),
        (HOLDER_DEADLINE.into(), n(1_500)),
        (CREATED_AT.into(), n(1_000)),
        (TOKEN_HASH.into(), s("h")),
        (BUYER_ID.into(), s("user:42")),
        (BUYER_LIMIT.into(), n(2)),
    ]);
    if let Some(r) = buyer_ref {
        item.insert(BUYER_REF.into(), s(r));
    }
    item
}

/// A new order with every optional part names exactly the declared
/// attributes, with its key.
#[test]
fn a_new_order_names_exactly_the_declared_attributes() -> Result<(), Box<dyn std::error::Error>> {
    let head = crate::domain::EventHead {
        event_id: EventId::parse("gala")?,
        hold_seconds: 60,
        seat_count: 1,
        buyer_limit: Some(2),
        buyer_key: None,
    };
    let buyer = BuyerId::parse("user:42").ok_or("a buyer id")?;
    let mut order = Order::new_pending(
        &head,
        Millis(1_000),
        0,
        Some("u".into()),
        OrderId::parse("o1")?,
        "h".into(),
    );
    order.visitor_id = Some(VisitorId::parse("v1")?);
    order.buyer = Some(crate::domain::OrderBuyer {
        buyer_ref: BuyerRef::unkeyed(&head.event_id, &buyer),
        buyer_id: buyer,
        limit: 2,
    });
    let mut named = create(&order).attribute_names();
    named.extend([PK.to_owned(), SK.to_owned()]);
    assert_eq!(named, super::super::declared(&ORDER_CREATE_ATTRIBUTES));
    Ok(())
}

/// An order stored before refs were (no `buyerRef`) counts on its
/// event's plain ref, as it always did; one with a ref counts on it;
/// a ref that is not 32 hex digits is malformed, never a silent plain.
#[test]
fn an_orders_buyer_ref_is_as_stored_or_the_plain_one_of_before(
) -> Result<(), Box<dyn std::error::Error>> {
    let event = EventId::parse("gala")?;
    let buyer = BuyerId::parse("user:42").ok_or("a buyer id")?;
    let plain = BuyerRef::unkeyed(&event, &buyer);
    let old = parse_order(&item(None))?.order.buyer;
    assert_eq!(old.map(|b| b.buyer_ref), Some(plain));
    let keyed = "0123456789abcdef0123456789abcdef";
    let new = parse_order(&item(Some(keyed)))?.order.buyer;
    assert_eq!(
        new.map(|b| b.buyer_ref.as_str().to_owned()).as_deref(),
        Some(keyed)
    );
    assert!(parse_order(&item(Some("not-hex"))).is_err());
    Ok(())
}
