//! Writes held to an item's own attributes: each grant that writes buyer
//! records, visitors or new orders names exactly the attributes the store
//! declares for that item (itself held to the code that writes it), so a
//! new attribute fails here, not only in AWS.

use std::collections::BTreeSet;

use testkit::iam::granted;

/// Every grant that lets a function write a buyer's record (`BUYER#…`)
/// names exactly the attributes a record has, as the store declares them
/// (`store::BUYER_RECORD_ATTRIBUTES`), and nothing else under the grant:
/// a function that may update records may not set another attribute on
/// one, nor write another item under that grant.
#[test]
fn buyer_record_writes_are_limited_to_the_records_attributes() {
    let want: Vec<String> = shared::store::BUYER_RECORD_ATTRIBUTES
        .iter()
        .map(|a| (*a).to_owned())
        .collect();
    let mut writers = BTreeSet::new();
    for (function, grants) in granted() {
        for grant in grants {
            let writes = grant
                .actions
                .iter()
                .any(|a| a == "dynamodb:UpdateItem" || a == "dynamodb:PutItem");
            let buyer = grant
                .leading_keys
                .as_ref()
                .is_some_and(|keys| keys.iter().any(|k| k.starts_with("BUYER#")));
            if !(writes && buyer) {
                continue;
            }
            assert_eq!(
                grant.leading_keys.as_deref(),
                Some(&["BUYER#*".to_owned()][..]),
                "{function}: a buyer-record grant covers no other item"
            );
            assert_eq!(
                grant.attributes.as_ref(),
                Some(&want),
                "{function}: a buyer-record grant names the record's attributes"
            );
            writers.insert(function.clone());
        }
    }
    // The claims' and releases' eight, the waitlist's offerer (an offer on
    // a limited event counts in its buyer's record) and its two routes
    // that decline an offer (the count goes back).
    assert_eq!(writers.len(), 11, "{writers:?}");
}

/// The one grant of `function` for `action` on keys starting `keys`, and
/// its attribute list, sorted; and `declared`, sorted, to compare it with.
fn attribute_grant(
    function: &str,
    action: &str,
    keys: &str,
    declared: &[&str],
) -> (Vec<String>, Vec<String>) {
    let grants = &granted()[function];
    let matching: Vec<_> = grants
        .iter()
        .filter(|g| g.actions.iter().any(|a| a == action))
        .filter(|g| g.leading_keys.as_deref() == Some(&[keys.to_owned()][..]))
        .collect();
    assert_eq!(matching.len(), 1, "{function}: {matching:?}");
    let mut named = matching[0].attributes.clone().expect("an attribute list");
    named.sort();
    let mut want: Vec<String> = declared.iter().map(|a| (*a).to_owned()).collect();
    want.sort();
    (named, want)
}

/// queue-visitors may put a visitor's item with only the attributes a
/// visitor has, as the store declares them (`store::VISITOR_ITEM_ATTRIBUTES`,
/// itself held to the codec), and nothing else under that grant.
#[test]
fn visitor_puts_are_limited_to_a_visitors_attributes() {
    let (named, want) = attribute_grant(
        "queue-visitors",
        "dynamodb:PutItem",
        "VISITOR#*",
        &shared::store::VISITOR_ITEM_ATTRIBUTES,
    );
    assert_eq!(named, want);
    let puts = granted()["queue-visitors"]
        .iter()
        .filter(|g| g.actions.iter().any(|a| a == "dynamodb:PutItem"))
        .count();
    assert_eq!(puts, 1, "its only put");
}

/// create-order's grant to write a new order names exactly the attributes
/// a new order has, as the store declares them
/// (`store::ORDER_CREATE_ATTRIBUTES`, itself held to the write).
#[test]
fn create_orders_order_write_names_a_new_orders_attributes() {
    let (named, want) = attribute_grant(
        "create-order",
        "dynamodb:UpdateItem",
        "ORDER#*",
        &shared::store::ORDER_CREATE_ATTRIBUTES,
    );
    assert_eq!(named, want);
}

/// order-returns may write a listing with only the attributes a listing
/// has (`store::RETURN_ATTRIBUTES`, itself held to the writes), and the
/// seller's order only to mark it as having listings.
#[test]
fn listing_writes_are_limited_to_a_listings_attributes() {
    let (named, want) = attribute_grant(
        "order-returns",
        "dynamodb:UpdateItem",
        "RETURN#*",
        &shared::store::RETURN_ATTRIBUTES,
    );
    assert_eq!(named, want);
    let (named, want) = attribute_grant(
        "order-returns",
        "dynamodb:UpdateItem",
        "ORDER#*",
        &["PK", "SK", "hasReturns"],
    );
    assert_eq!(named, want);
}

/// order-returns may write a resale item with only its attributes
/// (`store::RESALE_ATTRIBUTES`), and a payment's functions may mark a
/// listing resold with only a resale's (`store::RESOLD_ATTRIBUTES`),
/// each list itself held to the writes.
#[test]
fn resale_writes_are_limited_to_their_items_attributes() {
    let (named, want) = attribute_grant(
        "order-returns",
        "dynamodb:UpdateItem",
        "RESALE#*",
        &shared::store::RESALE_ATTRIBUTES,
    );
    assert_eq!(named, want);
    for function in ["confirm", "stripe-payment"] {
        let (named, want) = attribute_grant(
            function,
            "dynamodb:UpdateItem",
            "RETURN#*",
            &shared::store::RESOLD_ATTRIBUTES,
        );
        assert_eq!(named, want, "{function}");
    }
}

/// offer-waitlists may write a listing's revert with only a revert's
/// attributes (`store::REVERT_ATTRIBUTES`, itself held to the write).
#[test]
fn the_ticks_reverts_are_limited_to_a_reverts_attributes() {
    let (named, want) = attribute_grant(
        "offer-waitlists",
        "dynamodb:UpdateItem",
        "RETURN#*",
        &shared::store::REVERT_ATTRIBUTES,
    );
    assert_eq!(named, want);
}
