//! Unit tests of `domain::waitlist_offer_counts`.

use super::*;
use crate::domain::waitlist_positions::{Departure, Positions, Since, SETTLE_MS};

const T: i64 = 1_800_000_000_000;

fn offer(at: i64, expires: i64) -> Departure {
    Departure {
        at: Millis(T + at),
        joined_at: Millis(T - 60_000),
        offer_expires_at: Some(Millis(T + expires)),
    }
}

fn end(at: i64, expires: i64, purchased: bool) -> OfferEnd {
    OfferEnd {
        at: Millis(T + at),
        expires_at: Millis(T + expires),
        purchased,
        live: true,
    }
}

fn counts(p: &Positions, now: i64) -> (u64, u64) {
    (p.offers.offered(Millis(T + now)), p.offers.purchased())
}

#[test]
fn offers_count_until_their_end_or_expiry_and_purchases_for_good() {
    let since = Since {
        departures: vec![
            offer(1_000, 121_000),
            offer(2_000, 122_000),
            offer(3_000, 123_000),
            // A leave is no offer.
            Departure {
                at: Millis(T + 4_000),
                joined_at: Millis(T),
                offer_expires_at: None,
            },
        ],
        ends: vec![end(5_000, 121_000, true), end(6_000, 122_000, false)],
        ..Since::default()
    };
    let p = Positions::default().update(&since, Millis(T + 10_000));
    assert_eq!(
        counts(&p, 10_000),
        (1, 1),
        "one live, one bought, one declined"
    );
    // Once settled, the same: counted once whatever the update.
    let later = p.update(&since, Millis(T + 10_000 + SETTLE_MS + 1));
    assert_eq!(counts(&later, 40_001), (1, 1));
    let again = later.update(&Since::default(), Millis(T + 80_000));
    assert_eq!(counts(&again, 80_000), (1, 1), "nothing read twice");
    // Its expiry passes: no write, and it no longer counts.
    let expired = again.update(&Since::default(), Millis(T + 124_000));
    assert_eq!(counts(&expired, 124_000), (0, 1));
    assert!(expired.offers.settled.is_empty(), "past seconds dropped");
}

#[test]
fn an_end_settled_before_its_offer_cancels_it_out() {
    // A writer's clock behind: the end is stamped before the offer's
    // departure, and settles first.
    let first = Since {
        ends: vec![end(1_000, 121_000, true)],
        ..Since::default()
    };
    let p = Positions::default().update(&first, Millis(T + 1_000 + SETTLE_MS + 1));
    assert_eq!(
        counts(&p, 31_001),
        (0, 1),
        "counts gone negative read as none"
    );
    let second = Since {
        departures: vec![offer(32_000, 121_000)],
        ..Since::default()
    };
    let q = p.update(&second, Millis(T + 33_000));
    assert_eq!(counts(&q, 33_000), (0, 1), "made and ended: none live");
}

#[test]
fn a_late_sale_of_an_ended_offer_counts_its_purchase_only() {
    let since = Since {
        departures: vec![offer(1_000, 121_000), offer(2_000, 121_000)],
        // The first declined, then bought by a late payment (no longer
        // live): one live offer stays, one purchase.
        ends: vec![
            end(3_000, 121_000, false),
            OfferEnd {
                live: false,
                ..end(4_000, 121_000, true)
            },
        ],
        ..Since::default()
    };
    let p = Positions::default().update(&since, Millis(T + 10_000));
    assert_eq!(counts(&p, 10_000), (1, 1));
}
