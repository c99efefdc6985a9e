//! The waitlist judged by the history checker (`crowdcheck::history::
//! check_waitlist`): a small history of entries asking for mixed things,
//! seats freed in rounds, three offerers at once each round, declines, a
//! leave and a payment; every offer, as the client saw it, checked for two
//! offers to one entry, a seat in two holds at once, and an entry passed
//! over for a later one the same units went to.

use crate::common;

use common::waitlist::*;
use common::*;
use crowdcheck::history::{check_waitlist, micros_of, wall_us, MadeOffer, OfferedUnits, WaitEntry};
use serde_json::{json, Value};
use shared::domain::waitlist::EntryRequest;
use shared::domain::{Millis, SectionId};
use std::collections::BTreeMap;

/// What each entry asks: quantity, sections, together.
const ASKS: [(u32, &[&str], bool); 12] = [
    (2, &[], true),
    (1, &["B"], true),
    (3, &[], true),
    (1, &[], false),
    (2, &["A"], false),
    (4, &[], true),
    (1, &["A"], true),
    (2, &[], true),
    (1, &[], true),
    (2, &["B"], true),
    (1, &[], false),
    (3, &["B"], false),
];

/// The history as the client sees it: every entry, and every offer the
/// moment it is seen (an offer's details leave its entry's status when
/// it ends).
struct Seen {
    entries: Vec<(Value, WaitEntry)>,
    offers: BTreeMap<String, (MadeOffer, TestOrder)>,
}

impl Seen {
    /// Each entry's status now: a new offer is recorded with its order's
    /// instant, units and expiry.
    async fn look(&mut self, app: &shared::App, ev: &str) {
        for (entry, waiting) in &self.entries {
            let status = status_of(app, ev, entry).await;
            if status["status"] != "OFFERED" || self.offers.contains_key(&waiting.entry) {
                continue;
            }
            let order = offered_order(&status);
            let (_, read) = get_order(app, &order).await;
            let seats = status["offer"]["seats"].as_array().unwrap();
            let units = OfferedUnits::Seats(
                seats
                    .iter()
                    .map(|s| {
                        let parts: Vec<&str> = s.as_str().unwrap().split('-').collect();
                        (
                            parts[0].to_owned(),
                            parts[1].to_owned(),
                            parts[2].parse().unwrap(),
                        )
                    })
                    .collect(),
            );
            let made = MadeOffer {
                entry: waiting.entry.clone(),
                order: order.id.clone(),
                at: micros_of(read["createdAt"].as_str().unwrap()).unwrap(),
                until: micros_of(&order.expires_at).unwrap(),
                units,
                // Nothing is listed for return in this history.
                listed: Vec::new(),
            };
            self.offers.insert(waiting.entry.clone(), (made, order));
        }
    }

    /// The offer of entry `i`, if it has one.
    fn offer_of(&mut self, i: usize) -> Option<&mut (MadeOffer, TestOrder)> {
        let id = self.entries[i].1.entry.clone();
        self.offers.get_mut(&id)
    }
}

/// The stream projected (the projector's own looks offer too), three
/// offerers at once, then looks until one makes none (a look stops at its
/// bounds), then a look at every entry.
async fn round(app: &shared::App, ev: &str, seen: &mut Seen) {
    local::streams::project_now(app, &testkit::dynamodb_endpoint())
        .await
        .unwrap();
    offer_free_at_once(app, ev, 3).await;
    while offer_free(app, ev).await > 0 {}
    seen.look(app, ev).await;
}

#[tokio::test]
async fn a_waitlists_history_is_fair_and_never_offers_a_seat_twice() {
    let app = testkit::fresh_app_streaming(None).await;
    let (ev, _) = create_event(
        &app,
        "wh",
        &plan(&[("A", "1", 6), ("B", "1", 6)], Some(300)),
    )
    .await;
    let (holder_a, holder_b) = (order(&app, &ev).await, order(&app, &ev).await);
    for n in 1..=6 {
        assert_eq!(claim(&app, &holder_a, &format!("A-1-{n}")).await.0, 200);
        assert_eq!(claim(&app, &holder_b, &format!("B-1-{n}")).await.0, 200);
    }
    // The map shows the holds before any offer is looked for.
    local::streams::project_now(&app, &testkit::dynamodb_endpoint())
        .await
        .unwrap();
    put_waitlist(
        &app,
        &ev,
        json!({"opens": "now", "offerSeconds": 120, "maxQuantity": 4}),
    )
    .await;
    // Twelve entries, two seconds apart in join order.
    let start = shared::world::now().0 - 60_000;
    let mut seen = Seen {
        entries: Vec::new(),
        offers: BTreeMap::new(),
    };
    for (i, (quantity, sections, together)) in ASKS.iter().enumerate() {
        let joined_at = Millis(start + 2_000 * i as i64);
        let request = EntryRequest {
            quantity: *quantity,
            section_ids: sections
                .iter()
                .map(|s| SectionId::parse(s).unwrap())
                .collect(),
            together: *together,
            wheelchair: 0,
        };
        let entry = seeded_asking(&app, &ev, &format!("user:{i}"), joined_at, request).await;
        let waiting = WaitEntry {
            entry: entry["entryId"].as_str().unwrap().to_owned(),
            buyer: format!("user:{i}"),
            joined_at: joined_at.0 * 1_000,
            quantity: *quantity,
            sections: sections.iter().map(|s| (*s).to_owned()).collect(),
            together: *together,
            left_at: None,
        };
        seen.entries.push((entry, waiting));
    }
    let drop_all = |holder: &TestOrder, seats: &[&str]| {
        let (app, holder) = (app.clone(), holder.clone());
        let seats: Vec<String> = seats.iter().map(|s| (*s).to_owned()).collect();
        async move {
            for seat in seats {
                assert_eq!(drop_seat(&app, &holder, &seat).await.0, 200, "{seat}");
            }
        }
    };

    // Round 1: A-1-2, A-1-3 and B-1-6 come free.
    drop_all(&holder_a, &["A-1-2", "A-1-3"]).await;
    drop_all(&holder_b, &["B-1-6"]).await;
    round(&app, &ev, &mut seen).await;
    // Round 2: an entry waiting leaves; the first two offered decline.
    let (entry, _) = &seen.entries[10];
    leave(&app, &ev, entry).await;
    seen.entries[10].1.left_at = Some(wall_us());
    let offered: Vec<usize> = (0..ASKS.len())
        .filter(|&i| seen.offer_of(i).is_some())
        .take(2)
        .collect();
    for &i in &offered {
        let declined = leave(&app, &ev, &seen.entries[i].0).await;
        assert_eq!(declined["reason"], "declined", "{declined}");
        seen.offer_of(i).unwrap().0.until = wall_us();
    }
    round(&app, &ev, &mut seen).await;
    // Round 3: three of row A come free; one offer is paid for.
    drop_all(&holder_a, &["A-1-1", "A-1-5", "A-1-6"]).await;
    round(&app, &ev, &mut seen).await;
    let paid = (0..ASKS.len())
        .find(|&i| !offered.contains(&i) && seen.offer_of(i).is_some())
        .expect("an offer to pay for");
    let (offer, order) = seen.offer_of(paid).unwrap();
    assert_eq!(confirm(&app, &order.id, "pi_history").await.0, 200);
    offer.until = i64::MAX;
    // Round 4: the rest of row B.
    drop_all(&holder_b, &["B-1-1", "B-1-2", "B-1-3"]).await;
    round(&app, &ev, &mut seen).await;

    let entries: Vec<WaitEntry> = seen.entries.iter().map(|(_, w)| w.clone()).collect();
    let offers: Vec<MadeOffer> = seen.offers.values().map(|(o, _)| o.clone()).collect();
    let made = offers.len();
    assert!(made >= 6, "a history worth judging: {made} offers");
    let verdict = check_waitlist(&entries, &offers);
    assert_eq!(verdict.violations, Vec::<String>::new(), "{offers:#?}");
}
