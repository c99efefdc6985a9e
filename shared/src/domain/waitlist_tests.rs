//! Unit tests of `waitlist`: each rule of the contract's part 1 that needs
//! no store, as a table.

use super::*;

const T: Millis = Millis(1_800_000_000_000);

fn at(seconds: i64) -> Millis {
    Millis(T.0 + seconds * 1_000)
}

fn section(id: &str) -> SectionId {
    match SectionId::parse(id) {
        Ok(section) => section,
        Err(_) => panic!("a test section id: {id}"),
    }
}

fn put(opens: Option<Opens>) -> WaitlistPut {
    WaitlistPut {
        opens,
        ..WaitlistPut::default()
    }
}

fn first(opens: Opens) -> Waitlist {
    match waitlist_after_put(None, put(Some(opens)), 10, T) {
        Ok(waitlist) => waitlist,
        Err(refused) => panic!("a first put: {refused:?}"),
    }
}

#[test]
fn a_first_put_needs_opens_and_takes_the_defaults() {
    assert_eq!(
        waitlist_after_put(None, WaitlistPut::default(), 10, T),
        Err(PutRefusal::Invalid(
            "opens is required on a waitlist's first put".into()
        ))
    );
    let armed = first(Opens::SoldOut);
    assert_eq!(
        (armed.generation, armed.status(), armed.opened_at),
        (1, WaitlistStatus::Armed, None)
    );
    assert_eq!(
        armed.settings,
        WaitlistSettings {
            opens: Opens::SoldOut,
            offer_seconds: 600,
            max_quantity: 10,
            returns_close_at: None,
        }
    );
    let open = first(Opens::Now);
    assert_eq!(
        (open.status(), open.opened_at),
        (WaitlistStatus::Open, Some(T))
    );
}

#[test]
fn max_quantity_is_capped_by_the_order_limit_and_32() {
    for (seats_per_order, cap) in [(1, 1), (10, 10), (32, 32), (98, 32)] {
        assert_eq!(quantity_cap(seats_per_order), cap);
        let made = waitlist_after_put(None, put(Some(Opens::Now)), seats_per_order, T);
        assert_eq!(made.map(|w| w.settings.max_quantity), Ok(cap));
        let over = WaitlistPut {
            max_quantity: Some(cap + 1),
            ..put(Some(Opens::Now))
        };
        assert_eq!(
            waitlist_after_put(None, over, seats_per_order, T),
            Err(PutRefusal::Invalid(format!(
                "maxQuantity must be 1 to {cap}"
            )))
        );
    }
}

#[test]
fn out_of_range_values_are_refused_and_change_nothing() {
    let open = first(Opens::Now);
    let cases = [
        (Some(59), None, "offerSeconds must be 60 to 3600"),
        (Some(3601), None, "offerSeconds must be 60 to 3600"),
        (None, Some(0), "maxQuantity must be 1 to 10"),
        (None, Some(11), "maxQuantity must be 1 to 10"),
    ];
    for (offer_seconds, max_quantity, said) in cases {
        let bad = WaitlistPut {
            offer_seconds,
            max_quantity,
            ..WaitlistPut::default()
        };
        for current in [None, Some(&open)] {
            let refused = waitlist_after_put(
                current,
                WaitlistPut {
                    opens: Some(Opens::Now),
                    ..bad
                },
                10,
                T,
            );
            assert_eq!(refused, Err(PutRefusal::Invalid(said.into())), "{bad:?}");
        }
    }
}

#[test]
fn a_put_again_keeps_what_it_leaves_out() {
    let close = at(3_600);
    let start = WaitlistPut {
        offer_seconds: Some(300),
        max_quantity: Some(4),
        returns_close_at: Some(Some(close)),
        ..put(Some(Opens::SoldOut))
    };
    let Ok(armed) = waitlist_after_put(None, start, 10, T) else {
        panic!("the first put");
    };
    let cases = [
        (WaitlistPut::default(), (300, 4, Some(close))),
        (
            WaitlistPut {
                offer_seconds: Some(900),
                ..WaitlistPut::default()
            },
            (900, 4, Some(close)),
        ),
        (
            WaitlistPut {
                max_quantity: Some(2),
                ..WaitlistPut::default()
            },
            (300, 2, Some(close)),
        ),
        // `null` ends returns; left out keeps them.
        (
            WaitlistPut {
                returns_close_at: Some(None),
                ..WaitlistPut::default()
            },
            (300, 4, None),
        ),
    ];
    for (again, (offer_seconds, max_quantity, returns_close_at)) in cases {
        let Ok(after) = waitlist_after_put(Some(&armed), again, 10, at(5)) else {
            panic!("{again:?} is a valid put");
        };
        assert_eq!(
            (
                after.settings.offer_seconds,
                after.settings.max_quantity,
                after.settings.returns_close_at
            ),
            (offer_seconds, max_quantity, returns_close_at),
            "{again:?}"
        );
        assert_eq!(
            (after.generation, after.status()),
            (1, WaitlistStatus::Armed)
        );
    }
}

#[test]
fn opens_changes_only_while_armed() {
    let armed = first(Opens::SoldOut);
    // Armed: opening now opens it at the put.
    let now = waitlist_after_put(Some(&armed), put(Some(Opens::Now)), 10, at(7));
    assert_eq!(
        now.map(|w| (w.status(), w.opened_at)),
        Ok((WaitlistStatus::Open, Some(at(7))))
    );
    // Open (at once, or at a sell-out): the same value is no change, another is 409.
    let open_now = first(Opens::Now);
    let sold_out_opened = armed.opened(at(9));
    for open in [open_now, sold_out_opened] {
        let same = waitlist_after_put(Some(&open), put(Some(open.settings.opens)), 10, at(20));
        assert_eq!(same, Ok(open));
        let other = match open.settings.opens {
            Opens::Now => Opens::SoldOut,
            Opens::SoldOut => Opens::Now,
        };
        let changed = waitlist_after_put(Some(&open), put(Some(other)), 10, at(20));
        assert_eq!(changed, Err(PutRefusal::Open));
    }
}

#[test]
fn a_put_after_a_delete_starts_a_new_generation_and_needs_opens() {
    let ended = first(Opens::Now).ended(at(30));
    assert_eq!(ended.status(), WaitlistStatus::Ended);
    assert_eq!(ended.ended(at(90)).ended_at, Some(at(30)), "ended once");
    let refused = waitlist_after_put(Some(&ended), WaitlistPut::default(), 10, at(60));
    assert!(matches!(refused, Err(PutRefusal::Invalid(_))));
    let again = waitlist_after_put(Some(&ended), put(Some(Opens::SoldOut)), 10, at(60));
    assert_eq!(
        again.map(|w| (w.generation, w.status(), w.ended_at)),
        Ok((2, WaitlistStatus::Armed, None))
    );
}

#[test]
fn the_sale_is_waitlist_only_from_a_second_after_the_opening_until_the_delete() {
    let armed = first(Opens::SoldOut);
    let open = armed.opened(at(10));
    assert_eq!(open.opened(at(50)).opened_at, Some(at(10)), "opens once");
    let cases = [
        (armed, at(100), false),
        (open, at(10), false),
        (open, Millis(at(11).0 - 1), false),
        (open, at(11), true),
        (open, at(1_000), true),
        (open.ended(at(500)), at(1_000), false),
    ];
    for (waitlist, now, only) in cases {
        assert_eq!(
            waitlist.is_waitlist_only(now),
            only,
            "{waitlist:?} at {now:?}"
        );
    }
}

/// A queue on the event reads `WAITLIST` while only the waitlist sells,
/// and a sell-out is not final while a waitlist can still take what comes
/// free; without one, or after its delete, the map's inventory stands.
#[test]
fn a_queue_sees_the_waitlist_only_sale_and_no_final_sell_out_beside_a_waitlist() {
    use Inventory::{AllSold, Available, NoneAvailable, WaitlistOnly};
    let armed = first(Opens::SoldOut);
    let open = armed.opened(at(10));
    let ended = open.ended(at(500));
    let cases = [
        (None, Available, at(20), Available),
        (None, AllSold, at(20), AllSold),
        (Some(armed), Available, at(20), Available),
        (Some(armed), AllSold, at(20), NoneAvailable),
        (Some(open), AllSold, at(10), NoneAvailable),
        (Some(open), Available, at(11), WaitlistOnly),
        (Some(open), AllSold, at(11), WaitlistOnly),
        (Some(ended), AllSold, at(600), AllSold),
        (Some(ended), Available, at(600), Available),
    ];
    for (i, (waitlist, seen, now, expected)) in cases.into_iter().enumerate() {
        assert_eq!(
            queue_inventory(waitlist.as_ref(), seen, now),
            expected,
            "case {i}"
        );
    }
}

#[test]
fn returns_are_taken_while_open_and_before_the_cutoff() {
    let close = at(100);
    let with_returns = |w: Waitlist| Waitlist {
        settings: WaitlistSettings {
            returns_close_at: Some(close),
            ..w.settings
        },
        ..w
    };
    let open = with_returns(first(Opens::Now));
    let cases = [
        (open, at(99), true),
        (open, close, false),
        (with_returns(first(Opens::SoldOut)), at(1), false),
        (open.ended(at(50)), at(60), false),
        (first(Opens::Now), at(1), false),
    ];
    for (waitlist, now, takes) in cases {
        assert_eq!(
            waitlist.takes_returns(now),
            takes,
            "{waitlist:?} at {now:?}"
        );
    }
}

#[test]
fn a_join_asks_within_the_rules() {
    let (a, b) = (section("A"), section("B"));
    let ok = |ask: EntryAsk| EntryRequest::checked(ask, 4);
    assert_eq!(
        ok(EntryAsk::default()),
        Ok(EntryRequest {
            quantity: 1,
            section_ids: vec![],
            together: true,
            wheelchair: 0
        })
    );
    assert_eq!(
        ok(EntryAsk {
            quantity: Some(4),
            section_ids: Some(vec![b.clone(), a.clone()]),
            together: Some(false),
            wheelchair: Some(1),
        }),
        Ok(EntryRequest {
            quantity: 4,
            section_ids: vec![b.clone(), a.clone()],
            together: false,
            wheelchair: 1
        })
    );
    let eleven: Vec<SectionId> = (0..11).map(|i| section(&format!("S{i}"))).collect();
    let refused = [
        (Some(0), None, None, "quantity must be 1 to 4"),
        (Some(5), None, None, "quantity must be 1 to 4"),
        (
            None,
            Some(vec![]),
            None,
            "sectionIds must name 1 to 10 sections (leave it out for any)",
        ),
        (
            None,
            Some(eleven),
            None,
            "sectionIds must name 1 to 10 sections (leave it out for any)",
        ),
        (
            None,
            Some(vec![a.clone(), a.clone()]),
            None,
            "section A is named twice in sectionIds",
        ),
        (
            Some(2),
            None,
            Some(3),
            "wheelchair must be 0 to quantity (2)",
        ),
    ];
    for (quantity, section_ids, wheelchair, said) in refused {
        let ask = EntryAsk {
            quantity,
            section_ids,
            together: None,
            wheelchair,
        };
        assert_eq!(ok(ask.clone()), Err(said.to_owned()), "{ask:?}");
    }
}

#[test]
fn an_entrys_status_is_read_from_its_offers_order() {
    use EndReason::{Closed, Declined, Left, OfferExpired, Refunded, Removed};
    use EntryStatus::{Ended, Offered, Purchased, Waiting};
    let order = |status, expires_in: i64, holds_anything| {
        Some(OfferOrder {
            status,
            expires_at: at(expires_in),
            holds_anything,
            cancelled_as: None,
        })
    };
    let cancelled = |reason| {
        Some(OfferOrder {
            status: OrderStatus::Cancelled,
            expires_at: at(60),
            holds_anything: true,
            cancelled_as: Some(reason),
        })
    };
    let now = at(0);
    let cases = [
        (Waiting, None, false, Waiting),
        (Waiting, None, true, Ended(Closed)),
        (
            Offered,
            order(OrderStatus::Pending, 60, true),
            false,
            Offered,
        ),
        // A live offer outlives the delete: it may still be paid.
        (
            Offered,
            order(OrderStatus::Pending, 60, true),
            true,
            Offered,
        ),
        (
            Offered,
            order(OrderStatus::Pending, 0, true),
            false,
            Ended(OfferExpired),
        ),
        (
            Offered,
            order(OrderStatus::Pending, 60, false),
            false,
            Ended(Declined),
        ),
        // Emptied, then run out (or expired by the sweep): still declined.
        (
            Offered,
            order(OrderStatus::Pending, 0, false),
            false,
            Ended(Declined),
        ),
        (
            Offered,
            order(OrderStatus::Expired, -5, false),
            false,
            Ended(Declined),
        ),
        (
            Offered,
            order(OrderStatus::Expired, -5, true),
            false,
            Ended(OfferExpired),
        ),
        (
            Offered,
            order(OrderStatus::Cancelled, 60, false),
            false,
            Ended(Declined),
        ),
        // The cancel recorded why: the organiser's removal, or an offer
        // past its expiry, which had run out already.
        (Offered, cancelled(Removed), false, Ended(Removed)),
        (Offered, cancelled(OfferExpired), false, Ended(OfferExpired)),
        (Offered, cancelled(Declined), false, Ended(Declined)),
        (
            Offered,
            order(OrderStatus::Completed, -5, true),
            false,
            Purchased,
        ),
        (
            Offered,
            order(OrderStatus::RefundDue, 60, false),
            false,
            Ended(Refunded),
        ),
        (Offered, None, false, Ended(OfferExpired)),
        (Purchased, None, true, Purchased),
        (Ended(Left), None, true, Ended(Left)),
    ];
    for (stored, offer, ended, want) in cases {
        assert_eq!(
            entry_status_at(stored, offer, ended, now),
            want,
            "{stored:?} {offer:?} {ended}"
        );
    }
    assert_eq!(
        (
            Ended(OfferExpired).as_str(),
            Ended(OfferExpired).reason().map(EndReason::as_str)
        ),
        ("ENDED", Some("offer-expired"))
    );
}

#[test]
fn an_offers_cancel_records_the_first_end_of_its_entry() {
    // (removal, holds anything, live) -> why the entry ended.
    let cases = [
        (true, true, true, EndReason::Removed),
        // A removal after the entry had ended keeps the first end.
        (true, false, true, EndReason::Declined),
        (true, true, false, EndReason::OfferExpired),
        (false, true, true, EndReason::Declined),
        // Emptied first: declined already, whenever the cancel comes.
        (false, false, true, EndReason::Declined),
        (false, false, false, EndReason::Declined),
        // Past its expiry: it had run out.
        (false, true, false, EndReason::OfferExpired),
    ];
    for (removal, holds, live, want) in cases {
        assert_eq!(
            offer_cancel_reason(removal, holds, live),
            want,
            "{removal} {holds} {live}"
        );
    }
}

#[test]
fn a_put_that_closes_returns_reverts_the_listings_made_before_it() {
    let taking = |close: Option<Millis>| Waitlist {
        settings: WaitlistSettings {
            returns_close_at: close,
            ..first(Opens::Now).settings
        },
        ..first(Opens::Now)
    };
    let put_close = |close: Option<Millis>| WaitlistPut {
        returns_close_at: Some(close),
        ..WaitlistPut::default()
    };
    let now = at(50);
    let reverted =
        |old: Waitlist, close| match waitlist_after_put(Some(&old), put_close(close), 10, now) {
            Ok(w) => w.returns_reverted_at,
            Err(refused) => panic!("{refused:?}"),
        };
    // Ended, or put in the past, while ahead: reverted now.
    assert_eq!(reverted(taking(Some(at(100))), None), Some(now));
    assert_eq!(reverted(taking(Some(at(100))), Some(at(10))), Some(now));
    // Moved, still ahead: nothing reverts.
    assert_eq!(reverted(taking(Some(at(100))), Some(at(200))), None);
    assert_eq!(reverted(taking(Some(at(100))), Some(at(60))), None);
    // A cutoff that had passed reverted its listings then, for good.
    assert_eq!(reverted(taking(Some(at(40))), Some(at(200))), Some(at(40)));
    // No returns before: nothing to revert.
    assert_eq!(reverted(taking(None), Some(at(200))), None);
    // The latest revert stands.
    let earlier = Waitlist {
        returns_reverted_at: Some(at(30)),
        ..taking(Some(at(100)))
    };
    assert_eq!(reverted(earlier, None), Some(now));
    let left_out = waitlist_after_put(Some(&earlier), WaitlistPut::default(), 10, now);
    assert_eq!(left_out.map(|w| w.returns_reverted_at), Ok(Some(at(30))));
}
