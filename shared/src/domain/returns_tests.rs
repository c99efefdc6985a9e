//! Unit tests of `domain::returns`.

use super::*;
use crate::domain::ga::{Bucket, HeldPlaces};
use crate::domain::waitlist::{Opens, WaitlistSettings};

type TestResult<T = ()> = Result<T, Box<dyn std::error::Error>>;

const CLOSE: i64 = 100_000;

fn waitlist(generation: u64, returns_close_at: Option<i64>, ended: bool) -> Waitlist {
    Waitlist {
        generation,
        settings: WaitlistSettings {
            opens: Opens::Now,
            offer_seconds: 600,
            max_quantity: 4,
            returns_close_at: returns_close_at.map(Millis),
        },
        opened_at: Some(Millis(0)),
        ended_at: ended.then_some(Millis(50_000)),
        returns_reverted_at: None,
    }
}

/// A completed order of seats A-1-1 and A-1-2 and 3 places of F.
fn bought() -> Result<Order, Box<dyn std::error::Error>> {
    let mut order = crate::domain::tests::pending(&["A-1-1", "A-1-2"], Millis(0))?;
    order.status = OrderStatus::Completed;
    order.places = vec![
        HeldPlaces {
            section: SectionId::parse("F")?,
            bucket: 0,
            quantity: 2,
        },
        HeldPlaces {
            section: SectionId::parse("F")?,
            bucket: 3,
            quantity: 1,
        },
    ];
    Ok(order)
}

fn listing(unit: ReturnUnit, quantity: u32, status: ReturnStatus) -> Listing {
    Listing {
        unit,
        quantity,
        status,
        generation: 2,
        listed_at: Millis(1_000),
        closes_at: Millis(CLOSE),
        version: 4,
        resale: None,
    }
}

fn seat(id: &str) -> Result<ReturnUnit, Box<dyn std::error::Error>> {
    Ok(ReturnUnit::Seat(SeatId::parse(id)?))
}

fn places(section: &str) -> Result<ReturnUnit, Box<dyn std::error::Error>> {
    Ok(ReturnUnit::Places(SectionId::parse(section)?))
}

#[test]
fn a_unit_is_named_by_its_key() -> TestResult {
    for unit in [seat("A-1-1")?, places("F")?] {
        assert_eq!(ReturnUnit::from_key(&unit.key()), Some(unit));
    }
    assert_eq!(places("F")?.key(), "ga:F");
    assert_eq!(ReturnUnit::from_key("ga:"), None);
    Ok(())
}

#[test]
fn a_listing_reverts_at_its_cutoff_or_when_its_generation_ends() -> TestResult {
    let listed = listing(seat("A-1-1")?, 1, ReturnStatus::Listed);
    let open = waitlist(2, Some(CLOSE), false);
    let cases = [
        (Some(&open), CLOSE - 1, ReturnStatus::Listed),
        (Some(&open), CLOSE, ReturnStatus::Reverted),
        (None, 10, ReturnStatus::Reverted),
    ];
    for (w, now, want) in cases {
        assert_eq!(listed.status_at(w, Millis(now)), want, "{now}");
    }
    let deleted = waitlist(2, Some(CLOSE), true);
    let next = waitlist(3, Some(CLOSE), false);
    let ended = waitlist(2, None, false);
    let earlier = waitlist(2, Some(5_000), false);
    let later = waitlist(2, Some(CLOSE * 2), false);
    for (w, want) in [
        (&deleted, ReturnStatus::Reverted),
        (&next, ReturnStatus::Reverted),
        (&ended, ReturnStatus::Reverted),
        (&earlier, ReturnStatus::Reverted),
        // A cutoff moved later while still ahead: the waitlist's decides.
        (&later, ReturnStatus::Listed),
    ] {
        assert_eq!(listed.status_at(Some(w), Millis(10_000)), want, "{w:?}");
    }
    assert_eq!(
        listed.status_at(Some(&later), Millis(CLOSE)),
        ReturnStatus::Listed,
        "listed until the later cutoff"
    );
    assert_eq!(
        listed.status_at(Some(&later), Millis(CLOSE * 2)),
        ReturnStatus::Reverted
    );
    // A put that closed returns after it was listed reverted it for good;
    // one listed after such a put is not.
    let closed_since = Waitlist {
        returns_reverted_at: Some(Millis(2_000)),
        ..later
    };
    assert_eq!(
        listed.status_at(Some(&closed_since), Millis(10_000)),
        ReturnStatus::Reverted
    );
    let relisted = Listing {
        listed_at: Millis(3_000),
        ..listed.clone()
    };
    assert_eq!(
        relisted.status_at(Some(&closed_since), Millis(10_000)),
        ReturnStatus::Listed
    );
    // Other statuses are as stored.
    let resold = listing(seat("A-1-1")?, 1, ReturnStatus::Resold);
    assert_eq!(resold.status_at(None, Millis(0)), ReturnStatus::Resold);
    Ok(())
}

#[test]
fn only_what_the_order_owns_and_has_not_listed_is_listed() -> TestResult {
    let order = bought()?;
    let open = waitlist(2, Some(CLOSE), false);
    let now = Millis(10_000);
    let ask = |seats: &[&str],
               places: &[(&str, u32)]|
     -> Result<ReturnRequest, Box<dyn std::error::Error>> {
        Ok(ReturnRequest {
            seats: seats
                .iter()
                .map(|s| SeatId::parse(s))
                .collect::<Result<_, _>>()?,
            places: places
                .iter()
                .map(|(s, q)| SectionId::parse(s).map(|s| (s, *q)))
                .collect::<Result<_, _>>()?,
        })
    };
    // A new seat listing, and places added to a section's listing.
    let listings = [listing(places("F")?, 1, ReturnStatus::Listed)];
    let (generation, writes) = plan_listings(
        &order,
        &listings,
        &ask(&["A-1-2"], &[("F", 2)])?,
        Some(&open),
        now,
    )
    .map_err(|r| format!("{r:?}"))?;
    assert_eq!(generation, 2);
    assert_eq!(
        writes,
        [
            ListingWrite {
                unit: seat("A-1-2")?,
                quantity: 1,
                replaces: None,
                places: None,
            },
            ListingWrite {
                unit: places("F")?,
                quantity: 3,
                replaces: Some(4),
                places: None,
            },
        ]
    );
    let refused =
        |order: &Order, listings: &[Listing], request: ReturnRequest, w: Option<&Waitlist>| {
            plan_listings(order, listings, &request, w, now).err()
        };
    let not_owned = Some(ListRefusal::NotOwned);
    // A seat it did not buy; one listed now; one resold; too many places
    // (three bought, one resold).
    assert_eq!(
        refused(&order, &[], ask(&["A-1-3"], &[])?, Some(&open)),
        not_owned
    );
    let listed = [listing(seat("A-1-1")?, 1, ReturnStatus::Listed)];
    assert_eq!(
        refused(&order, &listed, ask(&["A-1-1"], &[])?, Some(&open)),
        not_owned
    );
    let resold = [listing(seat("A-1-1")?, 1, ReturnStatus::Resold)];
    assert_eq!(
        refused(&order, &resold, ask(&["A-1-1"], &[])?, Some(&open)),
        not_owned
    );
    let one_resold = [listing(places("F")?, 1, ReturnStatus::Resold)];
    assert_eq!(
        refused(&order, &one_resold, ask(&[], &[("F", 3)])?, Some(&open)),
        not_owned
    );
    assert!(refused(&order, &one_resold, ask(&[], &[("F", 2)])?, Some(&open)).is_none());
    // Withdrawn, or reverted (another generation), may be listed again.
    for status in [ReturnStatus::Withdrawn, ReturnStatus::Reverted] {
        let again = [listing(seat("A-1-1")?, 1, status)];
        assert!(refused(&order, &again, ask(&["A-1-1"], &[])?, Some(&open)).is_none());
    }
    let next = waitlist(3, Some(CLOSE), false);
    assert!(refused(&order, &listed, ask(&["A-1-1"], &[])?, Some(&next)).is_none());
    // A pending order owns nothing yet.
    let mut pending = order.clone();
    pending.status = OrderStatus::Pending;
    assert_eq!(
        refused(&pending, &[], ask(&["A-1-1"], &[])?, Some(&open)),
        not_owned
    );
    // Returns closed: no waitlist, none open, none taking returns, past
    // the cutoff.
    let closed = Some(ListRefusal::Closed);
    let armed = Waitlist {
        opened_at: None,
        ..open
    };
    for w in [
        None,
        Some(&armed),
        Some(&waitlist(2, None, false)),
        Some(&waitlist(2, Some(CLOSE), true)),
    ] {
        assert_eq!(
            refused(&order, &[], ask(&["A-1-1"], &[])?, w),
            closed,
            "{w:?}"
        );
    }
    assert_eq!(
        plan_listings(
            &order,
            &[],
            &ask(&["A-1-1"], &[])?,
            Some(&open),
            Millis(CLOSE)
        )
        .err(),
        closed
    );
    Ok(())
}

#[test]
fn a_withdrawal_withdraws_only_what_reads_listed() -> TestResult {
    let open = waitlist(2, Some(CLOSE), false);
    let now = Millis(10_000);
    let section = places("F")?;
    let of = |status| listing(section.clone(), 2, status);
    assert_eq!(
        plan_withdrawal(Some(&of(ReturnStatus::Listed)), false, Some(&open), now),
        Withdrawal::Withdraw { version: 4 }
    );
    assert_eq!(
        plan_withdrawal(Some(&of(ReturnStatus::Resold)), false, Some(&open), now),
        Withdrawal::Resold
    );
    for listing in [
        Some(of(ReturnStatus::Withdrawn)),
        Some(of(ReturnStatus::Reverted)),
        None,
    ] {
        assert_eq!(
            plan_withdrawal(listing.as_ref(), false, Some(&open), now),
            Withdrawal::Unchanged
        );
    }
    // Past its cutoff it has reverted: nothing to withdraw.
    assert_eq!(
        plan_withdrawal(
            Some(&of(ReturnStatus::Listed)),
            false,
            Some(&open),
            Millis(CLOSE)
        ),
        Withdrawal::Unchanged
    );
    // A live offer holds it: refused, whatever its version.
    assert_eq!(
        plan_withdrawal(Some(&of(ReturnStatus::Listed)), true, Some(&open), now),
        Withdrawal::Offered
    );
    Ok(())
}

fn listed_seat(
    listed_at: i64,
    held: Option<i64>,
) -> Result<ListedSeat, Box<dyn std::error::Error>> {
    Ok(ListedSeat {
        seat: SeatId::parse("A-1-1")?,
        seller: Seller {
            order_id: OrderId::parse("o-seller")?,
            buyer_id: None,
            buyer_ref: None,
        },
        generation: 2,
        listed_at: Millis(listed_at),
        held: held
            .map(|until| {
                Ok::<_, Box<dyn std::error::Error>>((OrderId::parse("o-offer")?, Millis(until)))
            })
            .transpose()?,
    })
}

#[test]
fn a_listed_seat_is_offered_while_listed_unheld_and_a_minute_before_its_cutoff() -> TestResult {
    let open = waitlist(2, Some(CLOSE), false);
    let last = CLOSE - LAST_RESALE_OFFER_BEFORE_CLOSE_MS;
    let mut reverted = open;
    reverted.returns_reverted_at = Some(Millis(2_000));
    let cases = [
        (listed_seat(1_000, None)?, &open, last - 1, true),
        (listed_seat(1_000, None)?, &open, last, false),
        (listed_seat(1_000, Some(20_000))?, &open, 19_999, false),
        (listed_seat(1_000, Some(20_000))?, &open, 20_000, true),
        (listed_seat(1_000, None)?, &reverted, 10_000, false),
        (listed_seat(3_000, None)?, &reverted, 10_000, true),
        (
            listed_seat(1_000, None)?,
            &waitlist(3, Some(CLOSE), false),
            10_000,
            false,
        ),
        (
            listed_seat(1_000, None)?,
            &waitlist(2, Some(CLOSE), true),
            10_000,
            false,
        ),
    ];
    for (i, (seat, waitlist, now, offerable)) in cases.iter().enumerate() {
        assert_eq!(
            seat.offerable(waitlist, Millis(*now)),
            *offerable,
            "case {i}"
        );
    }
    Ok(())
}

#[test]
fn an_offer_holding_a_listing_expires_by_the_cutoff() {
    let open = waitlist(2, Some(CLOSE), false);
    assert_eq!(offer_expiry(Millis(10_000), 600, &open, false), 600);
    assert_eq!(offer_expiry(Millis(10_000), 600, &open, true), 90);
    assert_eq!(offer_expiry(Millis(10_000), 60, &open, true), 60);
    assert_eq!(
        offer_expiry(Millis(10_000), 600, &waitlist(2, None, false), true),
        600
    );
}

#[test]
fn the_tick_writes_reverts_once_per_closing_and_never_under_a_live_offer() -> TestResult {
    let open = waitlist(2, Some(CLOSE), false);
    let key = (Some(Millis(CLOSE)), None, true);
    assert_eq!(reverts_due(&open, None, Millis(CLOSE - 1)), None);
    assert_eq!(reverts_due(&open, None, Millis(CLOSE)), Some(key));
    assert_eq!(reverts_due(&open, Some(key), Millis(CLOSE + 5)), None);
    // A put that closed returns early: due at once, and again for a new
    // cutoff put after it, when that one passes too.
    let mut closed = open;
    closed.returns_reverted_at = Some(Millis(5_000));
    let early = (Some(Millis(CLOSE)), Some(Millis(5_000)), false);
    assert_eq!(reverts_due(&closed, Some(key), Millis(6_000)), Some(early));
    assert_eq!(reverts_due(&closed, Some(early), Millis(7_000)), None);
    assert_eq!(
        reverts_due(&closed, Some(early), Millis(CLOSE)),
        Some((Some(Millis(CLOSE)), Some(Millis(5_000)), true))
    );
    let (section, seller) = (places("F")?, OrderId::parse("o")?);
    let unit = |listed_at, held_until: Option<i64>| ListedUnit {
        unit: section.clone(),
        seller: seller.clone(),
        generation: 2,
        listed_at: Millis(listed_at),
        held_until: held_until.map(Millis),
        version: Some(3),
    };
    assert!(!unit(1_000, None).reverts(&open, Millis(CLOSE - 1)));
    assert!(unit(1_000, None).reverts(&open, Millis(CLOSE)));
    assert!(!unit(1_000, Some(CLOSE + 10)).reverts(&open, Millis(CLOSE)));
    assert!(unit(1_000, Some(CLOSE)).reverts(&open, Millis(CLOSE)));
    // Closed early: what was listed before reverts, what came after not.
    assert!(unit(1_000, None).reverts(&closed, Millis(6_000)));
    assert!(!unit(5_500, None).reverts(&closed, Millis(6_000)));
    Ok(())
}

#[test]
fn a_live_offer_of_a_listing_is_paid_unless_returns_closed_after_it_was_listed() -> TestResult {
    let hold = |listed_at| -> Result<ResaleHold, Box<dyn std::error::Error>> {
        Ok(ResaleHold {
            seat: SeatId::parse("A-1-1")?,
            seller: OrderId::parse("o")?,
            seller_ref: None,
            generation: 2,
            listed_at: Millis(listed_at),
        })
    };
    let open = waitlist(2, Some(CLOSE), false);
    assert!(hold(1_000)?.still_listed(Some(&open), Millis(CLOSE - 1)));
    assert!(!hold(1_000)?.still_listed(Some(&open), Millis(CLOSE)));
    assert!(!hold(1_000)?.still_listed(Some(&waitlist(2, None, false)), Millis(10)));
    let mut closed_early = open;
    closed_early.returns_reverted_at = Some(Millis(5_000));
    assert!(!hold(1_000)?.still_listed(Some(&closed_early), Millis(6_000)));
    assert!(hold(5_500)?.still_listed(Some(&closed_early), Millis(6_000)));
    // A delete (or a generation since, or no item) keeps a live offer.
    assert!(hold(1_000)?.still_listed(Some(&waitlist(2, Some(CLOSE), true)), Millis(6_000)));
    assert!(hold(1_000)?.still_listed(Some(&waitlist(3, Some(CLOSE), false)), Millis(6_000)));
    assert!(hold(1_000)?.still_listed(None, Millis(6_000)));
    Ok(())
}

/// A seller's listed places of F as their resale item counts them:
/// `listed` places, `sold` resold, one hold per `(order, places, until)`.
fn places_item(listed: u32, sold: u32, holds: &[(&str, u32, i64)]) -> TestResult<ListedPlaces> {
    let holds = holds
        .iter()
        .map(|(order, quantity, until)| {
            Ok(crate::domain::ga::PlaceHold {
                order: OrderId::parse(order)?,
                quantity: *quantity,
                expires_at: Millis(*until),
            })
        })
        .collect::<TestResult<Vec<_>>>()?;
    let held: u32 = holds.iter().map(|h| h.quantity).sum();
    Ok(ListedPlaces {
        section: SectionId::parse("F")?,
        seller: Seller::of(&bought()?),
        generation: 2,
        listed_at: Millis(1_000),
        places: Bucket {
            index: 0,
            capacity: listed,
            sold,
            free: listed - sold - held,
            holds,
        },
        version: Some(7),
    })
}

/// How a listing of places writes their resale item: a new one, more on
/// the live listing's (its holds kept, even live ones), an earlier
/// listing's replaced with its expired holds removed, or refused while a
/// live offer holds some of an earlier listing's.
#[test]
fn a_listing_of_places_writes_their_item_as_read() -> TestResult {
    let open = waitlist(2, Some(CLOSE), false);
    let now = Millis(2_000);
    let f = places("F")?;
    let write = |quantity| ListingWrite {
        unit: f.clone(),
        quantity,
        replaces: Some(4),
        places: None,
    };
    let listing = |status| listing(f.clone(), 1, status);
    let (listed, withdrawn) = (
        listing(ReturnStatus::Listed),
        listing(ReturnStatus::Withdrawn),
    );
    let live = places_item(3, 1, &[("p", 1, 9_000)])?;
    let expired = places_item(3, 0, &[("p", 1, 1_500), ("q", 2, 1_900)])?;
    // An item from before places were counted: rewritten whole.
    let uncounted = ListedPlaces {
        version: None,
        ..places_item(0, 0, &[])?
    };
    let cases = [
        (None, None, Some(PlacesResale::New { quantity: 3 })),
        (Some(&listed), None, Some(PlacesResale::New { quantity: 3 })),
        (
            Some(&listed),
            Some(&live),
            Some(PlacesResale::More {
                added: 2,
                version: 7,
            }),
        ),
        (Some(&withdrawn), Some(&live), None),
        (None, Some(&live), None),
        (
            Some(&withdrawn),
            Some(&expired),
            Some(PlacesResale::Remade {
                quantity: 3,
                read: PlacesItemRead::At(7),
                stale: vec![OrderId::parse("p")?, OrderId::parse("q")?],
            }),
        ),
        (
            Some(&listed),
            Some(&uncounted),
            Some(PlacesResale::Remade {
                quantity: 3,
                read: PlacesItemRead::Uncounted,
                stale: vec![],
            }),
        ),
    ];
    for (i, (listing, item, expected)) in cases.into_iter().enumerate() {
        let planned = places_resale(&write(3), listing, item, Some(&open), now);
        assert_eq!(planned, expected, "case {i}");
    }
    assert_eq!(live.held_until(now), Some(Millis(9_000)));
    assert_eq!(expired.held_until(now), None);
    Ok(())
}
