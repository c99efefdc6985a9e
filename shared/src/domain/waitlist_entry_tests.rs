//! Unit tests of `waitlist_entry`: the indexes an entry stands in, a
//! join's answer for a buyer with an entry, a leave's and the list's
//! filter, as tables.

use super::*;

fn section(id: &str) -> SectionId {
    match SectionId::parse(id) {
        Ok(section) => section,
        Err(_) => panic!("a test section id: {id}"),
    }
}

fn entry_id(id: &str) -> EntryId {
    match EntryId::parse(id) {
        Ok(entry) => entry,
        Err(_) => panic!("a test entry id: {id}"),
    }
}

fn request(quantity: u32, sections: &[&str], together: bool, wheelchair: u32) -> EntryRequest {
    EntryRequest {
        quantity,
        section_ids: sections.iter().map(|s| section(s)).collect(),
        together,
        wheelchair,
    }
}

#[test]
fn an_entry_stands_in_one_index_per_section_it_names_or_the_any_one() {
    let cases: [(EntryRequest, &[&str]); 4] = [
        (request(1, &[], true, 0), &["*|1|t|0"]),
        // Asking for wheelchair spaces: the one index of such entries.
        (request(4, &[], false, 1), &["*|0|f|1"]),
        (request(2, &["A"], true, 0), &["A|2|t|0"]),
        (request(3, &["B", "A"], false, 2), &["B|0|f|1", "A|0|f|1"]),
    ];
    for (asked, labels) in cases {
        let got: Vec<String> = entry_indexes(&asked).iter().map(|i| i.label()).collect();
        assert_eq!(got, labels, "{asked:?}");
    }
}

#[test]
fn a_join_answers_with_a_live_entry_and_replaces_an_ended_one() {
    let e = entry_id("e1");
    let cases = [
        (None, JoinAs::New { replacing: None }),
        (Some(EntryStatus::Waiting), JoinAs::Existing),
        (Some(EntryStatus::Offered), JoinAs::Existing),
        (
            Some(EntryStatus::Purchased),
            JoinAs::New {
                replacing: Some(e.clone()),
            },
        ),
        (
            Some(EntryStatus::Ended(EndReason::Left)),
            JoinAs::New {
                replacing: Some(e.clone()),
            },
        ),
        (
            Some(EntryStatus::Ended(EndReason::OfferExpired)),
            JoinAs::New {
                replacing: Some(e.clone()),
            },
        ),
    ];
    for (status, expected) in cases {
        assert_eq!(join_as(status.map(|s| (&e, s))), expected, "{status:?}");
    }
}

#[test]
fn a_leave_or_a_removal_ends_a_waiting_entry_and_declines_an_offer() {
    let cases = [
        (
            EntryStatus::Waiting,
            EndReason::Left,
            Ending::End(EndReason::Left),
        ),
        (
            EntryStatus::Waiting,
            EndReason::Removed,
            Ending::End(EndReason::Removed),
        ),
        (
            EntryStatus::Ended(EndReason::Left),
            EndReason::Removed,
            Ending::AsItStands,
        ),
        (
            EntryStatus::Ended(EndReason::Closed),
            EndReason::Left,
            Ending::AsItStands,
        ),
        (EntryStatus::Purchased, EndReason::Left, Ending::AsItStands),
        (EntryStatus::Offered, EndReason::Left, Ending::Decline),
        (EntryStatus::Offered, EndReason::Removed, Ending::Decline),
    ];
    for (status, reason, expected) in cases {
        assert_eq!(ending(status, reason), expected, "{status:?} {reason:?}");
    }
}

#[test]
fn the_list_filters_by_each_status_and_refuses_others() {
    let statuses = [
        EntryStatus::Waiting,
        EntryStatus::Offered,
        EntryStatus::Purchased,
        EntryStatus::Ended(EndReason::Declined),
    ];
    for name in ["WAITING", "OFFERED", "PURCHASED", "ENDED"] {
        let Some(keep) = parse_status_filter(name) else {
            panic!("{name} is a status")
        };
        let kept: Vec<&str> = statuses
            .iter()
            .filter(|s| keep(**s))
            .map(|s| s.as_str())
            .collect();
        assert_eq!(kept, [name]);
    }
    for refused in ["waiting", "", "ADMITTED"] {
        assert!(parse_status_filter(refused).is_none(), "{refused}");
    }
}
