//! Unit tests of `history::place_resales`.

use super::*;

fn sale(order: &str, quantity: u32, from: Option<&str>, at: Micros) -> PlacesSale {
    PlacesSale {
        section: "FLOOR".into(),
        order: order.into(),
        quantity,
        from: from.map(str::to_owned),
        at,
    }
}

fn record(from: &str, to: &str, quantity: u32) -> PlacesResaleRecord {
    PlacesResaleRecord {
        section: "FLOOR".into(),
        from: from.into(),
        to: to.into(),
        quantity,
    }
}

#[test]
fn a_listing_resold_in_parts_each_recorded_once_passes() {
    let sales = [
        sale("a", 3, None, 1),
        sale("b", 2, Some("a"), 2),
        sale("c", 1, Some("a"), 3),
        sale("d", 1, Some("c"), 4),
    ];
    let records = [
        record("a", "b", 2),
        record("a", "c", 1),
        record("c", "d", 1),
    ];
    assert_eq!(
        check_place_resales(&sales, &records).violations,
        Vec::<String>::new()
    );
}

#[test]
fn places_resold_twice_from_one_owner_and_bad_records_are_caught() {
    let oversold = [
        sale("a", 3, None, 1),
        sale("b", 2, Some("a"), 2),
        sale("c", 2, Some("a"), 3),
    ];
    let records = [record("a", "b", 2), record("a", "c", 2)];
    assert_eq!(check_place_resales(&oversold, &records).violations.len(), 1);
    let stranger = [sale("a", 1, None, 1), sale("c", 1, Some("b"), 2)];
    assert_eq!(
        check_place_resales(&stranger, &[record("b", "c", 1)])
            .violations
            .len(),
        1
    );
    let sold_on = [sale("a", 2, None, 1), sale("b", 2, Some("a"), 2)];
    let doubled = [record("a", "b", 2), record("a", "b", 2)];
    assert!(!check_place_resales(&sold_on, &doubled)
        .violations
        .is_empty());
    assert_eq!(check_place_resales(&sold_on, &[]).violations.len(), 1);
    let wrong = [record("a", "b", 1)];
    assert_eq!(check_place_resales(&sold_on, &wrong).violations.len(), 1);
}
