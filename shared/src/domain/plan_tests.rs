//! Unit tests of `domain::plan`.

use super::*;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn plan(json: &str) -> Result<EventPlan, serde_json::Error> {
    serde_json::from_str(json)
}

#[test]
fn plan_expands_into_seat_ids_in_order() -> TestResult {
    let p = plan(
        r#"{"name":"Gala","sections":[{"sectionId":"A","rows":[{"row":"1","count":2},{"row":"2","count":1}]}]}"#,
    )?;
    let ids: Vec<_> = p
        .seats()?
        .into_iter()
        .map(|s| s.seat_id.to_string())
        .collect();
    assert_eq!(ids, ["A-1-1", "A-1-2", "A-2-1"]);
    Ok(())
}

#[test]
fn plan_rejects_colliding_and_repeated_seats() -> TestResult {
    let p = plan(
        r#"{"name":"G","sections":[{"sectionId":"A","rows":[{"row":"1-2","count":1}]},{"sectionId":"A-1","rows":[{"row":"2","count":1}]}]}"#,
    )?;
    assert!(p.seats().is_err());
    let p = plan(
        r#"{"name":"G","sections":[{"sectionId":"A","rows":[{"row":"1","count":1},{"row":"1","count":1}]}]}"#,
    )?;
    assert!(p.seats().is_err());
    Ok(())
}

#[test]
fn plan_bounds() -> TestResult {
    let too_many = r#"{"name":"G","sections":[{"sectionId":"A","rows":[{"row":"1","count":100000}, {"row":"2","count":1}]}]}"#;
    assert!(plan(too_many)?.seats().is_err());
    let exactly = r#"{"name":"G","sections":[{"sectionId":"A","rows":[{"row":"1","count":60000}, {"row":"2","count":40000}]}]}"#;
    assert_eq!(plan(exactly)?.seats()?.len(), 100_000);
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
    assert!(
        plan(r#"{"name":"G","sections":[{"sectionId":"A","rows":[{"row":"1","count":-1}]}]}"#)
            .is_err()
    );
    assert!(
        plan(r#"{"name":"G","sections":[{"sectionId":"A#","rows":[{"row":"1","count":1}]}]}"#)
            .is_err()
    );
    Ok(())
}

fn event_of(json: &str) -> Result<Event, Box<dyn std::error::Error>> {
    let p = plan(json)?;
    Ok(Event {
        event_id: EventId::parse("e")?,
        name: p.name.clone(),
        hold_seconds: 60,
        seat_count: p.seats()?.len() as u32,
        buyer_limit: None,
        buyer_key: None,
        sections: p.sections,
    })
}

#[test]
fn seat_pages_walk_the_plan_in_order() -> TestResult {
    let event = event_of(
        r#"{"name":"G","sections":[{"sectionId":"B","rows":[{"row":"10","count":3},{"row":"9","count":2}]},{"sectionId":"A","rows":[{"row":"1","count":2}]}]}"#,
    )?;
    let all: Vec<_> = event
        .seat_page(None, None, 1000)?
        .seats
        .into_iter()
        .map(|s| s.seat_id.to_string())
        .collect();
    assert_eq!(
        all,
        ["B-10-1", "B-10-2", "B-10-3", "B-9-1", "B-9-2", "A-1-1", "A-1-2"]
    );
    // Pages of 2 cover the same seats once each, with the right ordinals.
    let (mut seen, mut from) = (Vec::new(), None);
    loop {
        let page = event.seat_page(None, from, 2)?;
        assert!(page.seats.len() <= 2);
        seen.extend(
            page.seats
                .iter()
                .map(|s| (s.seat_id.to_string(), s.ordinal)),
        );
        match page.next {
            Some(next) => from = Some(next),
            None => break,
        }
    }
    let want: Vec<_> = all.iter().cloned().zip(0u32..).collect();
    assert_eq!(seen, want);
    // One section: its span only; the cursor must fall inside it.
    let b = SectionId::parse("B")?;
    let page = event.seat_page(Some(&b), Some(3), 10)?;
    assert_eq!(
        page.seats
            .iter()
            .map(|s| s.seat_id.to_string())
            .collect::<Vec<_>>(),
        ["B-9-1", "B-9-2"]
    );
    assert_eq!(page.next, None);
    let a = SectionId::parse("A")?;
    assert_eq!(event.seat_page(Some(&a), None, 1)?.seats[0].ordinal, 5);
    assert!(
        event.seat_page(Some(&a), Some(2), 1).is_err(),
        "a cursor of another section"
    );
    assert!(event.seat_page(None, Some(8), 1).is_err(), "past the end");
    assert_eq!(
        event.seat_page(None, Some(7), 1)?.seats,
        vec![],
        "at the end: an empty last page"
    );
    assert!(matches!(
        event.seat_page(Some(&SectionId::parse("Z")?), None, 1),
        Err(Error::SectionNotFound)
    ));
    Ok(())
}

#[test]
fn general_admission_sections_have_a_capacity_and_no_seats() -> TestResult {
    let json = r#"{"name":"G","sections":[{"sectionId":"A","rows":[{"row":"1","count":2}]},{"sectionId":"FLOOR","capacity":5000}]}"#;
    let p = plan(json)?;
    assert_eq!(p.seats()?.len(), 2, "places are not seats");
    let event = event_of(json)?;
    assert_eq!(event.ga_capacity(), 5000);
    let floor = SectionId::parse("FLOOR")?;
    assert!(event.section(&floor).is_some_and(SectionPlan::is_ga));
    assert_eq!(
        event.seat_page(Some(&floor), None, 10)?,
        SeatPage {
            seats: vec![],
            next: None
        }
    );
    assert!(event.seat_page(Some(&floor), Some(0), 10).is_err());
    assert_eq!(event.seat_page(None, None, 10)?.seats.len(), 2);
    // Serialised as given: the plan round-trips.
    assert_eq!(
        serde_json::from_str::<Vec<SectionPlan>>(&serde_json::to_string(&event.sections)?)?,
        event.sections
    );
    for bad in [
        r#"{"name":"G","sections":[{"sectionId":"F","capacity":0}]}"#,
        r#"{"name":"G","sections":[{"sectionId":"F","capacity":100001}]}"#,
        r#"{"name":"G","sections":[{"sectionId":"F","capacity":5,"rows":[{"row":"1","count":1}]}]}"#,
        r#"{"name":"G","sections":[{"sectionId":"F","capacity":5},{"sectionId":"F","capacity":5}]}"#,
        r#"{"name":"G","sections":[{"sectionId":"F"}]}"#,
    ] {
        assert!(plan(bad)?.seats().is_err(), "{bad}");
    }
    assert!(plan(r#"{"name":"G","sections":[{"sectionId":"F","capacity":-1}]}"#).is_err());
    assert!(
        plan(r#"{"name":"G","sections":[{"sectionId":"F","capacity":100000}]}"#)?
            .seats()?
            .is_empty()
    );
    // Five sections of 100,000 places fit; a sixth is too many buckets.
    let sections = |n: usize| {
        (0..n)
            .map(|i| format!(r#"{{"sectionId":"F{i}","capacity":100000}}"#))
            .collect::<Vec<_>>()
            .join(",")
    };
    assert!(
        plan(&format!(r#"{{"name":"G","sections":[{}]}}"#, sections(5)))?
            .seats()
            .is_ok()
    );
    assert!(
        plan(&format!(r#"{{"name":"G","sections":[{}]}}"#, sections(6)))?
            .seats()
            .is_err()
    );
    Ok(())
}

#[test]
fn plan_seats_carry_their_plan_order() -> TestResult {
    let p = plan(
        r#"{"name":"G","sections":[{"sectionId":"B","rows":[{"row":"10","count":2},{"row":"9","count":1}]},{"sectionId":"A","rows":[{"row":"1","count":1}]}]}"#,
    )?;
    let got: Vec<_> = p
        .seats()?
        .into_iter()
        .map(|s| (s.seat_id.to_string(), s.ordinal))
        .collect();
    let want: Vec<(String, u32)> = vec![
        ("B-10-1".into(), 0),
        ("B-10-2".into(), 1),
        ("B-9-1".into(), 2),
        ("A-1-1".into(), 3),
    ];
    assert_eq!(got, want);
    Ok(())
}

fn effective_event(json: &str) -> Result<Event, Box<dyn std::error::Error>> {
    let p = plan(json)?;
    let seats = p.seats()?;
    Ok(Event {
        event_id: EventId::parse("e")?,
        name: p.name,
        hold_seconds: p.hold_seconds.unwrap_or(420),
        seat_count: seats.len() as u32,
        buyer_limit: None,
        buyer_key: None,
        sections: p.sections,
    })
}

#[test]
fn plans_that_differ_in_any_one_field_have_different_fingerprints() -> TestResult {
    let base = r#"{"name":"Gala","holdSeconds":420,"sections":[{"sectionId":"A","rows":[{"row":"1","count":20},{"row":"2","count":5}]},{"sectionId":"FLOOR","capacity":100}]}"#;
    let variants = [
        (
            "name",
            r#"{"name":"Gala ","holdSeconds":420,"sections":[{"sectionId":"A","rows":[{"row":"1","count":20},{"row":"2","count":5}]},{"sectionId":"FLOOR","capacity":100}]}"#,
        ),
        (
            "holdSeconds",
            r#"{"name":"Gala","holdSeconds":421,"sections":[{"sectionId":"A","rows":[{"row":"1","count":20},{"row":"2","count":5}]},{"sectionId":"FLOOR","capacity":100}]}"#,
        ),
        (
            "sectionId",
            r#"{"name":"Gala","holdSeconds":420,"sections":[{"sectionId":"B","rows":[{"row":"1","count":20},{"row":"2","count":5}]},{"sectionId":"FLOOR","capacity":100}]}"#,
        ),
        (
            "row",
            r#"{"name":"Gala","holdSeconds":420,"sections":[{"sectionId":"A","rows":[{"row":"1","count":20},{"row":"3","count":5}]},{"sectionId":"FLOOR","capacity":100}]}"#,
        ),
        (
            "count",
            r#"{"name":"Gala","holdSeconds":420,"sections":[{"sectionId":"A","rows":[{"row":"1","count":20},{"row":"2","count":6}]},{"sectionId":"FLOOR","capacity":100}]}"#,
        ),
        (
            "capacity",
            r#"{"name":"Gala","holdSeconds":420,"sections":[{"sectionId":"A","rows":[{"row":"1","count":20},{"row":"2","count":5}]},{"sectionId":"FLOOR","capacity":5}]}"#,
        ),
        (
            "row order",
            r#"{"name":"Gala","holdSeconds":420,"sections":[{"sectionId":"A","rows":[{"row":"2","count":5},{"row":"1","count":20}]},{"sectionId":"FLOOR","capacity":100}]}"#,
        ),
        (
            "section order",
            r#"{"name":"Gala","holdSeconds":420,"sections":[{"sectionId":"FLOOR","capacity":100},{"sectionId":"A","rows":[{"row":"1","count":20},{"row":"2","count":5}]}]}"#,
        ),
        (
            "a row more",
            r#"{"name":"Gala","holdSeconds":420,"sections":[{"sectionId":"A","rows":[{"row":"1","count":20},{"row":"2","count":5},{"row":"3","count":1}]},{"sectionId":"FLOOR","capacity":100}]}"#,
        ),
        (
            "wheelchair",
            r#"{"name":"Gala","holdSeconds":420,"sections":[{"sectionId":"A","rows":[{"row":"1","count":20,"wheelchair":[1]},{"row":"2","count":5}]},{"sectionId":"FLOOR","capacity":100}]}"#,
        ),
        (
            "companion",
            r#"{"name":"Gala","holdSeconds":420,"sections":[{"sectionId":"A","rows":[{"row":"1","count":20,"companion":[1]},{"row":"2","count":5}]},{"sectionId":"FLOOR","capacity":100}]}"#,
        ),
        (
            "seated, not GA",
            r#"{"name":"Gala","holdSeconds":420,"sections":[{"sectionId":"A","rows":[{"row":"1","count":20},{"row":"2","count":5}]},{"sectionId":"FLOOR","rows":[{"row":"1","count":100}]}]}"#,
        ),
    ];
    let fingerprint = effective_event(base)?.plan_fingerprint();
    assert_eq!(
        effective_event(base)?.plan_fingerprint(),
        fingerprint,
        "the same plan, the same fingerprint"
    );
    assert_eq!(fingerprint.len(), 64);
    for (field, other) in variants {
        assert_ne!(
            effective_event(other)?.plan_fingerprint(),
            fingerprint,
            "{field}"
        );
    }
    // A default holdSeconds is the effective one: the same plan as the explicit 420.
    let implicit = r#"{"name":"Gala","sections":[{"sectionId":"A","rows":[{"row":"1","count":20},{"row":"2","count":5}]},{"sectionId":"FLOOR","capacity":100}]}"#;
    assert_eq!(effective_event(implicit)?.plan_fingerprint(), fingerprint);
    // Empty access lists are none: every plan made before them keeps its
    // identity, so a create-event retried with them is the same plan.
    let empty = r#"{"name":"Gala","holdSeconds":420,"sections":[{"sectionId":"A","rows":[{"row":"1","count":20,"wheelchair":[],"companion":[]},{"row":"2","count":5}]},{"sectionId":"FLOOR","capacity":100}]}"#;
    assert_eq!(effective_event(empty)?.plan_fingerprint(), fingerprint);
    let row = serde_json::to_value(RowPlan::plain(RowId::parse("1")?, 20))?;
    assert_eq!(row, serde_json::json!({"row": "1", "count": 20}));
    // The lists as sent: another order is another plan.
    let access = |lists: &str| {
        format!(
            r#"{{"name":"G","sections":[{{"sectionId":"A","rows":[{{"row":"1","count":9,{lists}}}]}}]}}"#
        )
    };
    let one = effective_event(&access(r#""wheelchair":[3,4]"#))?;
    let other = effective_event(&access(r#""wheelchair":[4,3]"#))?;
    assert_ne!(one.plan_fingerprint(), other.plan_fingerprint());
    Ok(())
}

#[test]
fn access_lists_name_seats_of_their_row_once() -> TestResult {
    let with = |lists: &str| {
        let json = format!(
            r#"{{"name":"G","sections":[{{"sectionId":"A","rows":[{{"row":"1","count":4,{lists}}}]}}]}}"#
        );
        plan(&json).map(|p| p.seats().map(|_| ()))
    };
    assert!(with(r#""wheelchair":[1,4],"companion":[2,3]"#)?.is_ok());
    for bad in [
        r#""wheelchair":[0]"#,
        r#""wheelchair":[5]"#,
        r#""companion":[1,1]"#,
        r#""wheelchair":[2],"companion":[2]"#,
    ] {
        let refused = with(bad)?;
        assert!(
            matches!(refused, Err(crate::error::Error::BadRequest(_))),
            "{bad}: {refused:?}"
        );
    }
    // Not numbers: serde refuses them before the rules.
    assert!(with(r#""wheelchair":[-1]"#).is_err());
    assert!(with(r#""wheelchair":null"#).is_err());
    Ok(())
}

#[test]
fn a_row_shows_its_access_seat_by_seat() -> TestResult {
    let row = RowPlan {
        wheelchair: vec![5, 1],
        companion: vec![2],
        ..RowPlan::plain(RowId::parse("1")?, 6)
    };
    assert_eq!(row.access_symbols().as_deref(), Some("WC..W."));
    assert_eq!(RowPlan::plain(RowId::parse("1")?, 6).access_symbols(), None);
    use crate::domain::access::Access::{Companion, Wheelchair};
    let seats = row.seats_access().ok_or("a row with access")?;
    let expected = [
        Some(Wheelchair),
        Some(Companion),
        None,
        None,
        Some(Wheelchair),
        None,
    ];
    assert_eq!(seats, expected);
    Ok(())
}

#[test]
fn the_fingerprint_encoding_is_injective_where_separators_were_not() -> TestResult {
    // Fields that run into each other: the name's end moved into a
    // section id, or a separator byte inside a name.
    let mut a = effective_event(
        r#"{"name":"ab","sections":[{"sectionId":"c","rows":[{"row":"1","count":1}]}]}"#,
    )?;
    let mut b = effective_event(
        r#"{"name":"a","sections":[{"sectionId":"bc","rows":[{"row":"1","count":1}]}]}"#,
    )?;
    assert_ne!(a.plan_fingerprint(), b.plan_fingerprint());
    // Names the API refuses still encode apart (the encoding does not
    // lean on validation): NUL and a quote inside a name.
    a.name = "x\u{0}S".into();
    b.name = "x".into();
    b.sections[0].section_id = SectionId::parse("S")?;
    assert_ne!(a.plan_fingerprint(), b.plan_fingerprint());
    a.name = "x\",\"holdSeconds\":1".into();
    assert_ne!(a.plan_fingerprint(), b.plan_fingerprint());
    Ok(())
}

#[test]
fn names_are_one_to_two_hundred_characters_without_control_characters() -> TestResult {
    for good in [
        "G",
        "Gala – Früh",
        &"é".repeat(200),
        " padded ",
        "tab\u{80}ok",
    ] {
        assert!(check_event_name(good).is_ok(), "{good:?}");
    }
    for bad in [
        "",
        "   ",
        &"a".repeat(201),
        "a\u{0}b",
        "line\nbreak",
        "tab\tname",
        "del\u{7f}",
        "\u{1f}",
    ] {
        let err = check_event_name(bad)
            .err()
            .ok_or(format!("{bad:?} accepted"))?;
        assert_eq!(err.code(), "bad-request", "{bad:?}");
    }
    assert!(plan(
        r#"{"name":"bad\u0007bell","sections":[{"sectionId":"A","rows":[{"row":"1","count":1}]}]}"#
    )?
    .seats()
    .is_err());
    Ok(())
}
