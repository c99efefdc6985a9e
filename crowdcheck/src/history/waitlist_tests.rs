//! Unit tests of the waitlist's history checker: each rule catches what it
//! is for, and a fair history passes.

use super::*;

const S: Micros = 1_000_000;

fn entry(id: &str, joined_s: i64, quantity: u32, sections: &[&str], together: bool) -> WaitEntry {
    WaitEntry {
        entry: id.into(),
        buyer: format!("user:{id}"),
        joined_at: joined_s * S,
        quantity,
        sections: sections.iter().map(|s| (*s).to_owned()).collect(),
        together,
        left_at: None,
    }
}

fn seats(list: &[(&str, u32)]) -> OfferedUnits {
    OfferedUnits::Seats(
        list.iter()
            .map(|(row, n)| ("A".to_owned(), (*row).to_owned(), *n))
            .collect(),
    )
}

fn offer(entry: &str, at_s: i64, until_s: i64, units: OfferedUnits) -> MadeOffer {
    MadeOffer {
        entry: entry.into(),
        order: format!("o-{entry}"),
        at: at_s * S,
        until: until_s * S,
        units,
        listed: Vec::new(),
    }
}

#[test]
fn a_fair_history_passes() {
    let entries = [
        entry("pair", 10, 2, &[], true),
        entry("one", 12, 1, &[], true),
        entry("late", 14, 1, &["A"], false),
    ];
    // The pair cannot be filled by one seat: the single is served first;
    // then two apart do not fill the pair either, and go to the next.
    let offers = [
        offer("one", 20, 80, seats(&[("1", 1)])),
        offer("late", 30, 90, seats(&[("1", 3)])),
    ];
    let verdict = check_waitlist(&entries, &offers);
    assert_eq!(
        (verdict.operations, verdict.violations),
        (5, Vec::<String>::new())
    );
}

#[test]
fn each_rule_catches_its_violation() {
    let entries = [
        entry("first", 10, 1, &[], true),
        entry("second", 12, 1, &[], true),
        entry("tie", 10, 1, &[], true),
    ];
    let cases: Vec<(Vec<MadeOffer>, &str)> = vec![
        // The second served while the first, a second and more earlier,
        // waits and fits.
        (
            vec![offer("second", 20, 80, seats(&[("1", 1)]))],
            "passed over first",
        ),
        // One seat in two live offers.
        (
            vec![
                offer("first", 20, 80, seats(&[("1", 1)])),
                offer("second", 50, 90, seats(&[("1", 1)])),
            ],
            "in offers",
        ),
        // Two offers to one entry.
        (
            vec![
                offer("first", 20, 30, seats(&[("1", 1)])),
                offer("first", 40, 50, seats(&[("1", 2)])),
            ],
            "has two offers",
        ),
    ];
    for (offers, said) in cases {
        let verdict = check_waitlist(&entries, &offers);
        assert!(
            verdict.violations.iter().any(|v| v.contains(said)),
            "{said}: {:?}",
            verdict.violations
        );
    }
    // Within a second of each other either may go first; after its offer
    // ends, a seat may be offered again.
    let fine = [
        offer("tie", 20, 30, seats(&[("1", 1)])),
        offer("first", 31, 80, seats(&[("1", 1)])),
        offer("second", 31, 80, seats(&[("1", 2)])),
    ];
    assert_eq!(
        check_waitlist(&entries, &fine).violations,
        Vec::<String>::new()
    );
    // An entry that left before the offer is not passed over.
    let mut left = entries[..2].to_vec();
    left[0].left_at = Some(15 * S);
    let later = [offer("second", 20, 80, seats(&[("1", 1)]))];
    assert_eq!(
        check_waitlist(&left, &later).violations,
        Vec::<String>::new()
    );
}

#[test]
fn what_fills_a_request() {
    let pair = entry("p", 0, 2, &[], true);
    let apart = entry("a", 0, 2, &[], false);
    let b_only = entry("b", 0, 1, &["B"], false);
    assert!(fits(&pair, &seats(&[("1", 3), ("1", 4)])));
    assert!(!fits(&pair, &seats(&[("1", 3), ("1", 5)])), "not adjacent");
    assert!(!fits(&pair, &seats(&[("1", 3), ("2", 4)])), "two rows");
    assert!(fits(&apart, &seats(&[("1", 3), ("2", 9)])));
    assert!(!fits(&b_only, &seats(&[("1", 3)])), "another section");
    let places = |section: &str, quantity| OfferedUnits::Places {
        section: section.into(),
        quantity,
    };
    assert!(fits(&pair, &places("F", 3)));
    assert!(!fits(&pair, &places("F", 1)));
    assert!(fits(&b_only, &places("B", 1)));
    assert!(!fits(&b_only, &places("F", 1)));
}

#[test]
fn a_buyer_passed_over_for_its_own_listing_is_not_a_violation() {
    let entries = [
        entry("seller", 10, 1, &[], true),
        entry("next", 20, 1, &[], true),
    ];
    let mut resale = offer("next", 30, 90, seats(&[("1", 1)]));
    assert_eq!(
        check_waitlist(&entries, &[resale.clone()]).violations.len(),
        1
    );
    let own = (
        "user:seller".to_owned(),
        ("A".to_owned(), "1".to_owned(), 1),
    );
    resale.listed = vec![own.clone()];
    assert_eq!(
        check_waitlist(&entries, &[resale]).violations,
        Vec::<String>::new()
    );
    // Its own listing beside a seat it could have had: passed over.
    let mut both = offer("next", 30, 90, seats(&[("1", 1), ("1", 2)]));
    both.listed = vec![own];
    assert_eq!(check_waitlist(&entries, &[both]).violations.len(), 1);
}
