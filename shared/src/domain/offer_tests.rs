use super::*;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn id(s: &str) -> Result<SectionId, crate::error::Error> {
    SectionId::parse(s)
}

fn ask(
    quantity: u32,
    sections: &[&str],
    together: bool,
) -> Result<EntryRequest, crate::error::Error> {
    Ok(EntryRequest {
        quantity,
        section_ids: sections.iter().map(|s| id(s)).collect::<Result<_, _>>()?,
        together,
        wheelchair: 0,
    })
}

/// A row from a picture: `.` free, `x` taken.
fn row(picture: &str) -> Vec<bool> {
    picture.chars().map(|c| c == '.').collect()
}

fn seated(section: &str, rows: &[&str]) -> Result<SectionFree, crate::error::Error> {
    Ok(SectionFree {
        section: id(section)?,
        free: Free::rows(rows.iter().map(|r| row(r)).collect()),
    })
}

fn places(section: &str, free: u32) -> Result<SectionFree, crate::error::Error> {
    Ok(SectionFree {
        section: id(section)?,
        free: Free::Places(free),
    })
}

fn seats(section: &str, seats: &[(usize, usize)]) -> Result<OfferUnits, crate::error::Error> {
    Ok(OfferUnits::Seats {
        section: id(section)?,
        seats: seats.to_vec(),
    })
}

#[test]
fn an_entry_is_filled_from_the_first_of_its_sections_that_can() -> TestResult {
    // Plan order: A (seated), B (seated), FLOOR (places).
    let event = [
        seated("A", &["x..x", "xxxx"])?,
        seated("B", &["....", "...."])?,
        places("FLOOR", 3)?,
    ];
    let cases = [
        // Two together: A's only run of two is in its first row.
        (ask(2, &[], true)?, Some(seats("A", &[(0, 1), (0, 2)])?)),
        // Three together: A has none, B does: in a row of four every block
        // of three leaves an orphan, so the one nearest the centre, ties to
        // the lower seats.
        (
            ask(3, &[], true)?,
            Some(seats("B", &[(0, 0), (0, 1), (0, 2)])?),
        ),
        // The entry names B only: its first row's orphan-free block,
        // nearest the centre, ties to the lower seats.
        (ask(2, &["B"], true)?, Some(seats("B", &[(0, 0), (0, 1)])?)),
        // Named in another order than the plan's: the plan's order wins.
        (
            ask(2, &["B", "A"], true)?,
            Some(seats("A", &[(0, 1), (0, 2)])?),
        ),
        // Places: enough of them in FLOOR.
        (
            ask(3, &["FLOOR"], true)?,
            Some(OfferUnits::Places {
                section: id("FLOOR")?,
                quantity: 3,
            }),
        ),
        (ask(4, &["FLOOR"], true)?, None),
        // Five together fit no row anywhere; five apart fit B.
        (ask(5, &["A", "B"], true)?, None),
        (
            ask(5, &["A", "B"], false)?,
            Some(seats("B", &[(0, 0), (0, 1), (0, 2), (0, 3), (1, 1)])?),
        ),
    ];
    for (i, (request, expected)) in cases.iter().enumerate() {
        assert_eq!(&fill(request, &event), expected, "case {i}: {request:?}");
    }
    Ok(())
}

#[test]
fn seats_apart_are_the_best_row_first_then_nearest_its_centre() -> TestResult {
    let event = [seated("A", &["x.x.x", "....."])?];
    let cases = [
        // Row 0's two free seats first (index 1 and 3 are equally near the
        // centre: the lower first), then row 1's centre seat.
        (1, vec![(0, 1)]),
        (2, vec![(0, 1), (0, 3)]),
        (3, vec![(0, 1), (0, 3), (1, 2)]),
        (4, vec![(0, 1), (0, 3), (1, 1), (1, 2)]),
        (
            7,
            vec![(0, 1), (0, 3), (1, 0), (1, 1), (1, 2), (1, 3), (1, 4)],
        ),
    ];
    for (quantity, expected) in cases {
        let request = ask(quantity, &[], false)?;
        assert_eq!(
            fill(&request, &event),
            Some(seats("A", &expected)?),
            "{quantity}"
        );
    }
    assert_eq!(fill(&ask(8, &[], false)?, &event), None, "only 7 are free");
    Ok(())
}

#[test]
fn the_earliest_entry_that_can_be_filled_gets_the_offer() -> TestResult {
    let event = [seated("A", &["..x.."])?, places("FLOOR", 1)?];
    let (big, floor_two, floor_one, any_two) = (
        ask(3, &[], true)?,
        ask(2, &["FLOOR"], true)?,
        ask(1, &["FLOOR"], true)?,
        ask(2, &[], true)?,
    );
    // The first two cannot be filled: they keep their places, the third
    // is served.
    let waiting = [
        ("first", &big),
        ("second", &floor_two),
        ("third", &floor_one),
        ("fourth", &any_two),
    ];
    assert_eq!(
        choose_offer(waiting, &event),
        Some((
            "third",
            OfferUnits::Places {
                section: id("FLOOR")?,
                quantity: 1,
            }
        ))
    );
    // Nobody fits: no offer.
    assert_eq!(
        choose_offer([("first", &big), ("second", &floor_two)], &event),
        None
    );
    assert_eq!(
        choose_offer(Vec::<(&str, &EntryRequest)>::new(), &event),
        None
    );
    Ok(())
}

/// A section's rows from pictures: `.` free, `x` taken, `W` and `C` a
/// free wheelchair space and companion seat, `w` and `c` taken ones.
fn accessible(section: &str, rows: &[&str]) -> Result<SectionFree, crate::error::Error> {
    let free = rows
        .iter()
        .map(|r| r.chars().map(|c| ".WC".contains(c)).collect())
        .collect();
    let access = rows
        .iter()
        .map(|r| RowAccess::new(Some(seats_of_symbols(&r.to_uppercase()))));
    Ok(SectionFree {
        section: id(section)?,
        free: Free::Rows {
            free,
            access: access.collect(),
        },
    })
}

#[test]
fn a_wheelchair_request_is_filled_with_exactly_its_spaces() -> TestResult {
    let event = [accessible("A", &["W....", ".CWC."])?];
    let with = |quantity, together, wheelchair| -> Result<EntryRequest, crate::error::Error> {
        Ok(EntryRequest {
            wheelchair,
            ..ask(quantity, &[], together)?
        })
    };
    let cases = [
        (
            with(2, true, 1)?,
            Some(&[(1, 1), (1, 2)][..]),
            "a space and a companion seat first",
        ),
        (
            with(2, true, 0)?,
            Some(&[(0, 3), (0, 4)]),
            "no space, and no orphan",
        ),
        (with(2, true, 2)?, None, "no two spaces side by side"),
        (
            with(3, false, 1)?,
            Some(&[(0, 0), (0, 1), (0, 2)]),
            "the best space, then the best seats",
        ),
        (
            with(2, false, 0)?,
            Some(&[(0, 1), (0, 2)]),
            "no space apart either",
        ),
        (
            with(4, false, 0)?,
            Some(&[(0, 1), (0, 2), (0, 3), (0, 4)]),
            "the best row's",
        ),
        (
            with(6, false, 0)?,
            Some(&[(0, 1), (0, 2), (0, 3), (0, 4), (1, 0), (1, 4)]),
            "companion seats last, though nearer the centre",
        ),
        (
            with(3, false, 2)?,
            Some(&[(0, 0), (0, 2), (1, 2)]),
            "both spaces, the best other seat",
        ),
        (with(3, false, 3)?, None, "only two spaces"),
    ];
    for (request, expected, rule) in cases {
        let offered = fill(&request, &event);
        let expected = expected.map(|seats| OfferUnits::Seats {
            section: SectionId::parse("A").unwrap_or_else(|_| unreachable!()),
            seats: seats.to_vec(),
        });
        assert_eq!(offered, expected, "{rule}");
    }
    // Places have no wheelchair spaces.
    assert_eq!(fill(&with(1, true, 1)?, &[places("FLOOR", 10)?]), None);
    Ok(())
}

/// The labels of what `sections` could fill, sorted.
fn labels(sections: &[SectionFree], max_quantity: u32) -> Vec<String> {
    let mut labels: Vec<String> = fillable_indexes(sections, max_quantity)
        .iter()
        .map(WaitingIndex::label)
        .collect();
    labels.sort();
    labels
}

#[test]
fn free_units_fill_the_indexes_of_every_quantity_up_to_what_they_hold() -> TestResult {
    // A run of two and one seat apart: two together at most, three apart.
    assert_eq!(
        labels(&[seated("A", &["..x", "x.x"])?], 10),
        [
            "*|1|f|0", "*|1|t|0", "*|2|f|0", "*|2|t|0", "*|3|f|0", "A|1|f|0", "A|1|t|0", "A|2|f|0",
            "A|2|t|0", "A|3|f|0",
        ]
    );
    // maxQuantity caps them; places fill either way.
    assert_eq!(
        labels(&[places("F", 5)?], 2),
        ["*|1|f|0", "*|1|t|0", "*|2|f|0", "*|2|t|0", "F|1|f|0", "F|1|t|0", "F|2|f|0", "F|2|t|0"]
    );
    // A free wheelchair space: the index of entries asking for spaces
    // too; a request for none never counts it.
    assert_eq!(
        labels(&[accessible("A", &["W.x"])?], 2),
        ["*|0|f|1", "*|1|f|0", "*|1|t|0", "A|0|f|1", "A|1|f|0", "A|1|t|0"]
    );
    // Two sections share the any-section indexes, once each.
    assert_eq!(
        labels(&[seated("A", &["x.x"])?, places("F", 1)?], 10),
        ["*|1|f|0", "*|1|t|0", "A|1|f|0", "A|1|t|0", "F|1|f|0", "F|1|t|0"]
    );
    // Nothing free, nothing to read.
    assert!(labels(&[seated("A", &["xx"])?, places("F", 0)?], 10).is_empty());
    Ok(())
}

#[test]
fn places_free_are_what_anyone_may_take_and_an_offer_takes_them() -> TestResult {
    use crate::domain::ga::{Bucket, PlaceHold};
    use crate::domain::seat_map::SectionMap;
    let section =
        |name: &str, rows: Option<Vec<RowMap>>| -> Result<SectionMap, crate::error::Error> {
            Ok(SectionMap {
                section_id: id(name)?,
                kind: if rows.is_some() { "seated" } else { "ga" },
                capacity: rows.is_none().then_some(20),
                available: None,
                rows,
            })
        };
    let row_a = RowMap {
        row: crate::domain::RowId::parse("1")?,
        statuses: "AHA".into(),
        access: None,
    };
    let map = SeatMap {
        event_id: "ev".into(),
        as_of: String::new(),
        sections: vec![
            section("A", Some(vec![row_a]))?,
            section("F", None)?,
            section("G", None)?,
        ],
    };
    let hold =
        |order: &str, quantity: u32, expires_at: i64| -> Result<PlaceHold, crate::error::Error> {
            Ok(PlaceHold {
                order: OrderId::parse(order)?,
                quantity,
                expires_at: Millis(expires_at),
            })
        };
    let bucket = Bucket {
        index: 0,
        capacity: 20,
        sold: 10,
        free: 5,
        holds: vec![hold("gone", 2, 1_000)?, hold("live", 3, 9_000)?],
    };
    let buckets = HashMap::from([(id("F")?, vec![bucket])]);
    let taken = HashSet::from([SeatId::parse("A-1-3")?]);
    let now = Millis(5_000);
    // The expired hold's places are free; G's buckets were not read, so
    // it offers nothing; a seat known taken is not free.
    let listed = HashSet::new();
    let known = SeatsKnown {
        listed: &listed,
        taken: &taken,
    };
    assert_eq!(
        free_units(&map, &known, &buckets, now),
        [seated("A", &[".xx"])?, places("F", 7)?, places("G", 0)?]
    );
    // A listed seat is free to offer, whatever the map shows of it.
    let listed = HashSet::from([SeatId::parse("A-1-2")?]);
    let known = SeatsKnown {
        listed: &listed,
        taken: &taken,
    };
    assert_eq!(
        free_units(&map, &known, &buckets, now)[0],
        seated("A", &["..x"])?
    );
    let plan = r#"{"name":"P","sections":[{"sectionId":"F","capacity":20}]}"#;
    let event = Event {
        event_id: crate::domain::EventId::parse("ev")?,
        name: "P".into(),
        hold_seconds: 60,
        seat_count: 0,
        buyer_limit: None,
        buyer_key: None,
        sections: serde_json::from_str::<crate::domain::EventPlan>(plan)?.sections,
    };
    let me = OrderId::parse("me")?;
    let ask = |quantity| -> Result<OfferUnits, crate::error::Error> {
        Ok(OfferUnits::Places {
            section: id("F")?,
            quantity,
        })
    };
    let Some(Offered::Places(took)) = offered(&event, &ask(7)?, &buckets, &me, now) else {
        return Err("seven places fit".into());
    };
    assert_eq!(
        (
            took.takes.len(),
            took.takes[0].places,
            took.takes[0].reclaim.len()
        ),
        (1, 7, 1),
        "the five free and the expired hold's two"
    );
    assert_eq!(offered(&event, &ask(8)?, &buckets, &me, now), None);
    Ok(())
}

#[test]
fn a_wheelchair_space_is_offered_only_to_an_entry_asking_for_one() -> TestResult {
    let row = RowMap {
        row: crate::domain::RowId::parse("1")?,
        statuses: "AAAH".into(),
        access: Some("W.C.".into()),
    };
    let map = SeatMap {
        event_id: "ev".into(),
        as_of: String::new(),
        sections: vec![SectionMap {
            section_id: id("A")?,
            kind: "seated",
            rows: Some(vec![row]),
            capacity: None,
            available: None,
        }],
    };
    let (listed, taken) = (HashSet::new(), HashSet::new());
    let known = SeatsKnown {
        listed: &listed,
        taken: &taken,
    };
    // The map's spaces and companion seats travel with what is free.
    let free = free_units(&map, &known, &HashMap::new(), Millis(0));
    assert_eq!(free, [accessible("A", &["W.Cx"])?]);
    let one = ask(1, &[], false)?;
    let seat = |i| OfferUnits::Seats {
        section: SectionId::parse("A").unwrap_or_else(|_| unreachable!()),
        seats: vec![(0, i)],
    };
    assert_eq!(
        fill(&one, &free),
        Some(seat(1)),
        "neither a space nor a companion seat"
    );
    let space = EntryRequest {
        wheelchair: 1,
        ..one
    };
    assert_eq!(fill(&space, &free), Some(seat(0)));
    assert_eq!(
        fill(&ask(3, &[], true)?, &free),
        None,
        "every three hold the space"
    );
    Ok(())
}
