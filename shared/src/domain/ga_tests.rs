//! Unit tests of `domain::ga`.

use super::*;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn hold(order: &str, quantity: u32, expires_at: i64) -> Result<PlaceHold, crate::error::Error> {
    Ok(PlaceHold {
        order: OrderId::parse(order)?,
        quantity,
        expires_at: Millis(expires_at),
    })
}

#[test]
fn capacity_is_spread_over_buckets_that_add_up() {
    for capacity in [1, 19, 20, 21, 50, 20_000, 100_000] {
        let count = bucket_count(capacity);
        assert!((1..=MAX_BUCKETS).contains(&count), "{capacity}");
        let total: u32 = (0..count).map(|i| bucket_capacity(capacity, i)).sum();
        assert_eq!(total, capacity);
        assert!((0..count).all(|i| bucket_capacity(capacity, i) >= 1));
    }
    assert_eq!(bucket_count(50), 3, "20 + 20 + 10");
    assert_eq!(bucket_count(20_000), 1000);
    assert_eq!(bucket_count(100_000), 1000, "100 places each");
}

#[test]
fn a_place_hold_is_reclaimable_at_its_exact_expiry() -> TestResult {
    // One boundary (Clocks): live while now < t, another's from now >= t.
    let me = OrderId::parse("me")?;
    let t = 1_000;
    let bucket = Bucket {
        index: 0,
        capacity: 2,
        sold: 0,
        free: 0,
        holds: vec![hold("other", 2, t)?],
    };
    let buckets = std::slice::from_ref(&bucket);
    assert_eq!(bucket.available(Millis(t - 1)), 0);
    assert_eq!(
        plan_take(buckets, &me, 1, Millis(t - 1)),
        None,
        "still live a millisecond before"
    );
    assert_eq!(bucket.available(Millis(t)), 2);
    let take = plan_take(buckets, &me, 2, Millis(t)).ok_or("reclaimable at t")?;
    assert_eq!(take[0].reclaim, vec![hold("other", 2, t)?]);
    assert_eq!(most_holdable(buckets, &me, Millis(t)), 2);
    Ok(())
}

#[test]
fn taking_uses_free_places_then_expired_holds_of_others() -> TestResult {
    let me = OrderId::parse("me")?;
    let now = Millis(1_000);
    let buckets = vec![
        Bucket {
            index: 0,
            capacity: 5,
            sold: 2,
            free: 0,
            holds: vec![hold("live", 2, 5_000)?, hold("late", 1, 900)?],
        },
        Bucket {
            index: 1,
            capacity: 6,
            sold: 0,
            free: 2,
            holds: vec![hold("old", 3, 100)?, hold("me", 1, 5_000)?],
        },
    ];
    assert_eq!(buckets[0].available(now), 1, "the late hold's place");
    assert_eq!(buckets[1].available(now), 5);
    assert_eq!(
        most_holdable(&buckets, &me, now),
        1 + 5 + 1,
        "its own live place counts as holdable for it"
    );
    let takes = plan_take(&buckets, &me, 4, now).ok_or("4 fit")?;
    assert_eq!(
        takes[0],
        Take {
            bucket: 0,
            places: 1,
            reclaim: vec![hold("late", 1, 900)?]
        }
    );
    assert_eq!(
        takes[1],
        Take {
            bucket: 1,
            places: 3,
            reclaim: vec![hold("old", 3, 100)?]
        }
    );
    assert_eq!(takes[0].free_needed(), 0);
    assert_eq!(
        takes[1].free_needed(),
        0,
        "2 free + 3 reclaimed cover 3 (one to spare)"
    );
    assert_eq!(plan_take(&buckets, &me, 2, now).ok_or("2 fit")?.len(), 2);
    assert_eq!(plan_take(&buckets, &me, 6, now).map(|t| t.len()), Some(2));
    assert_eq!(
        plan_take(&buckets, &me, 7, now),
        None,
        "the live holds (its own included) are not takeable"
    );
    Ok(())
}

#[test]
fn a_sale_takes_the_paid_places_and_gives_back_the_rest() -> TestResult {
    let (f, g) = (SectionId::parse("F")?, SectionId::parse("G")?);
    let held = vec![
        HeldPlaces {
            section: f.clone(),
            bucket: 4,
            quantity: 2,
        },
        HeldPlaces {
            section: f.clone(),
            bucket: 1,
            quantity: 2,
        },
        HeldPlaces {
            section: g.clone(),
            bucket: 0,
            quantity: 1,
        },
    ];
    let sale = plan_sale(&held, &f, 3).ok_or("3 of 4 held")?;
    assert_eq!(
        sale.iter()
            .map(|s| (s.bucket, s.held, s.sell))
            .collect::<Vec<_>>(),
        vec![(1, 2, 2), (4, 2, 1)]
    );
    assert_eq!(plan_sale(&held, &f, 5), None);
    assert_eq!(
        plan_sale(&held, &g, 0).ok_or("nothing paid")?,
        vec![PlaceSale {
            section: g.clone(),
            bucket: 0,
            held: 1,
            sell: 0,
            take: None
        }]
    );
    assert_eq!(plan_sale(&held, &SectionId::parse("H")?, 0), Some(vec![]));
    // An offer's listed places are sold before the section's own.
    let mut offered = held.clone();
    offered.push(HeldPlaces {
        section: f.clone(),
        bucket: LISTING_BUCKETS_FROM,
        quantity: 1,
    });
    let sale = plan_sale(&offered, &f, 2).ok_or("2 of 5 held")?;
    assert_eq!(
        sale.iter().map(|s| (s.bucket, s.sell)).collect::<Vec<_>>(),
        vec![(LISTING_BUCKETS_FROM, 1), (1, 1), (4, 0)]
    );
    Ok(())
}

#[test]
fn held_sales_cover_every_section_paid_for_or_held() -> TestResult {
    let (f, g) = (SectionId::parse("F")?, SectionId::parse("G")?);
    let held = vec![
        HeldPlaces {
            section: g.clone(),
            bucket: 3,
            quantity: 2,
        },
        HeldPlaces {
            section: f.clone(),
            bucket: 1,
            quantity: 1,
        },
    ];
    // (paid per section, each sale as (section, bucket, held, sell), or None)
    type Sale<'a> = (&'a str, u32, u32, u32);
    type Case<'a> = (Vec<(SectionId, u32)>, Option<Vec<Sale<'a>>>);
    let cases: [Case; 4] = [
        // G paid 1 of 2; F not paid: all of F goes back.
        (
            vec![(g.clone(), 1)],
            Some(vec![("F", 1, 1, 0), ("G", 3, 2, 1)]),
        ),
        (
            vec![(f.clone(), 1), (g.clone(), 2)],
            Some(vec![("F", 1, 1, 1), ("G", 3, 2, 2)]),
        ),
        // More than held in one section: no sale from holds.
        (vec![(f.clone(), 2)], None),
        // A section paid for and never held.
        (vec![(SectionId::parse("H")?, 1)], None),
    ];
    for (paid, expected) in cases {
        let got = plan_held_sales(&held, &paid).map(|sales| {
            sales
                .iter()
                .map(|s| (s.section.as_str().to_owned(), s.bucket, s.held, s.sell))
                .collect::<Vec<_>>()
        });
        let expected = expected.map(|sales| {
            sales
                .into_iter()
                .map(|(section, bucket, held, sell)| (section.to_owned(), bucket, held, sell))
                .collect::<Vec<_>>()
        });
        assert_eq!(got, expected, "paid {paid:?}");
    }
    Ok(())
}

#[test]
fn a_late_sale_sells_its_own_entries_then_takes_what_anyone_may() -> TestResult {
    let f = SectionId::parse("F")?;
    let me = OrderId::parse("me")?;
    let now = Millis(1_000);
    let buckets = vec![
        // Its own expired entry nobody took over, and one free place.
        Bucket {
            index: 2,
            capacity: 5,
            sold: 1,
            free: 1,
            holds: vec![hold("me", 2, 900)?, hold("live", 1, 5_000)?],
        },
        // An expired hold of another order, and a live one.
        Bucket {
            index: 0,
            capacity: 4,
            sold: 0,
            free: 0,
            holds: vec![hold("old", 2, 100)?, hold("live", 2, 5_000)?],
        },
    ];
    let sale = plan_late_sale(&buckets, &f, &me, 1, now).ok_or("its own entry covers 1")?;
    assert_eq!(
        sale,
        vec![PlaceSale {
            section: f.clone(),
            bucket: 2,
            held: 2,
            sell: 1,
            take: None
        }],
        "the surplus is given back"
    );
    let sale = plan_late_sale(&buckets, &f, &me, 4, now).ok_or("2 own + 1 free + 2 reclaimable")?;
    assert_eq!(sale.iter().map(PlaceSale::sold).sum::<u32>(), 4);
    assert_eq!(sale[0].bucket, 2);
    assert_eq!(
        (
            sale[0].held,
            sale[0].sell,
            sale[0].take.as_ref().map(|t| t.places)
        ),
        (2, 2, Some(1)),
        "own bucket's free place, one item"
    );
    assert_eq!(
        sale[1].take,
        Some(Take {
            bucket: 0,
            places: 1,
            reclaim: vec![hold("old", 2, 100)?]
        })
    );
    assert_eq!(sale[1].held, 0);
    assert_eq!(
        plan_late_sale(&buckets, &f, &me, 5, now)
            .map(|s| s.iter().map(PlaceSale::sold).sum::<u32>()),
        Some(5)
    );
    assert_eq!(
        plan_late_sale(&buckets, &f, &me, 6, now),
        None,
        "live holds of others are never taken"
    );
    // An order whose entries were all taken over takes what is free.
    let other = OrderId::parse("other")?;
    let sale = plan_late_sale(&buckets, &f, &other, 5, now)
        .ok_or("1 free + 2 + 2 reclaimable (me's expired entry too)")?;
    assert!(sale.iter().all(|s| s.held == 0 && s.sell == 0));
    assert_eq!(sale.iter().map(PlaceSale::sold).sum::<u32>(), 5);
    assert_eq!(plan_late_sale(&buckets, &f, &other, 6, now), None);
    Ok(())
}

#[test]
fn releasing_starts_with_the_biggest_holding() -> TestResult {
    let s = SectionId::parse("F")?;
    let held = vec![
        HeldPlaces {
            section: s.clone(),
            bucket: 0,
            quantity: 1,
        },
        HeldPlaces {
            section: s.clone(),
            bucket: 3,
            quantity: 3,
        },
    ];
    assert_eq!(plan_release(&held, 2), vec![(3, 3, 1)]);
    assert_eq!(plan_release(&held, 4), vec![(3, 3, 0), (0, 1, 0)]);
    assert_eq!(plan_release(&held, 0), vec![]);
    Ok(())
}

#[test]
fn a_look_goes_on_from_what_its_takes_left() -> TestResult {
    let me = OrderId::parse("me")?;
    let mut buckets = vec![
        Bucket {
            index: 0,
            capacity: 20,
            sold: 16,
            free: 1,
            holds: vec![hold("gone", 3, 1_000)?],
        },
        Bucket {
            index: 1,
            capacity: 20,
            sold: 18,
            free: 2,
            holds: vec![],
        },
    ];
    let now = Millis(5_000);
    assert_eq!(buckets.iter().map(|b| b.available(now)).sum::<u32>(), 6);
    let takes = plan_take(&buckets, &me, 5, now).ok_or("five fit")?;
    after_takes(&mut buckets, &me, &takes, Millis(65_000));
    // Bucket 0: its free place and the expired hold's three; bucket 1:
    // one of its two.
    assert_eq!(
        buckets
            .iter()
            .map(|b| (b.free, b.available(now)))
            .collect::<Vec<_>>(),
        [(0, 0), (1, 1)]
    );
    assert_eq!(buckets[0].holds, [hold("me", 4, 65_000)?]);
    assert_eq!(buckets[1].holds, [hold("me", 1, 65_000)?]);
    assert_eq!(plan_take(&buckets, &me, 2, now), None, "one place is left");
    Ok(())
}
