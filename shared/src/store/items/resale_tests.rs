//! Unit tests of `store::items::resale`.

use super::*;

#[test]
fn a_listing_or_a_let_go_starts_a_look_and_a_hold_or_a_take_does_not(
) -> Result<(), crate::error::Error> {
    let event = EventRef::of(&crate::domain::EventId::parse("ev")?);
    let record = |new: serde_json::Value| {
        serde_json::json!({"dynamodb": {
            "Keys": {"PK": {"S": format!("{RESALE_PK_PREFIX}{event}")}, "SK": {"S": "A-1-1"}},
            "SequenceNumber": "7",
            "NewImage": new,
        }})
    };
    let unheld = record(serde_json::json!({"orderId": {"S": "o"}}));
    assert_eq!(
        resale_offerable(&unheld),
        Some((event.clone(), "7".to_owned()))
    );
    let held = record(serde_json::json!({"heldBy": {"S": "p"}}));
    assert_eq!(resale_offerable(&held), None);
    let listed_at = |old: i64, new: i64, at: i64| {
        serde_json::json!({"dynamodb": {
            "Keys": {"PK": {"S": format!("{RESALE_PK_PREFIX}{event}")}, "SK": {"S": "ga:F#o"}},
            "SequenceNumber": "8",
            "OldImage": {"free": {"N": old.to_string()}, "listedAt": {"N": "5"}},
            "NewImage": {"free": {"N": new.to_string()}, "listedAt": {"N": at.to_string()}},
        }})
    };
    let listed = |old: i64, new: i64| listed_at(old, new, 5);
    assert_eq!(
        resale_offerable(&listed_at(4, 4, 9)),
        Some((event.clone(), "8".to_owned())),
        "listed again over an earlier listing's item, as many free"
    );
    assert_eq!(
        resale_offerable(&listed(1, 2)),
        Some((event.clone(), "8".to_owned())),
        "places given back or listed"
    );
    assert_eq!(resale_offerable(&listed(2, 1)), None, "an offer's take");
    assert_eq!(resale_offerable(&listed(1, 1)), None, "a sale");
    // A resale's delete has no new image: the seat is sold on.
    let deleted = serde_json::json!({"dynamodb": {
        "Keys": {"PK": {"S": format!("{RESALE_PK_PREFIX}{event}")}},
    }});
    assert_eq!(resale_offerable(&deleted), None);
    Ok(())
}

/// What the writes name is exactly what IAM's grant lists.
#[test]
fn a_resale_items_writes_name_exactly_its_declared_attributes() -> Result<(), crate::error::Error> {
    let seller = Seller {
        order_id: OrderId::parse("o")?,
        buyer_id: BuyerId::parse("b"),
        buyer_ref: BuyerRef::from_hex(&"ab".repeat(16)),
    };
    let order = OrderId::parse("p")?;
    let seat = SeatId::parse("A-1-1")?;
    let mut named = list(&seller, &seat, 1, Millis(1)).attribute_names();
    let section = SectionId::parse("F")?;
    for resale in [
        PlacesResale::New { quantity: 2 },
        PlacesResale::More {
            added: 1,
            version: 3,
        },
        PlacesResale::Remade {
            quantity: 2,
            read: PlacesItemRead::At(4),
            stale: vec![order.clone()],
        },
    ] {
        let names = list_places(&seller, &section, &resale, 1, Millis(1)).attribute_names();
        // An offer's hold is named by its pattern.
        let hold = hold_attribute(&order);
        let pattern = |name: String| {
            if name == hold {
                ANY_HOLD.to_owned()
            } else {
                name
            }
        };
        named.extend(names.into_iter().map(pattern));
    }
    assert_eq!(ANY_HOLD, format!("{}*", super::super::bucket::HOLD_PREFIX));
    named.extend(hold(&order, Millis(9), &seller.order_id, 1, Millis(2)).attribute_names());
    named.extend(let_go(&order, Millis(3)).attribute_names());
    named.extend([PK.to_owned(), SK.to_owned()]);
    assert_eq!(named, crate::store::items::declared(&RESALE_ATTRIBUTES));
    Ok(())
}
