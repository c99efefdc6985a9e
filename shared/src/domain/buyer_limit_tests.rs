use super::*;

fn order(n: u128) -> OrderId {
    let event = EventId::parse("e").expect("a valid event id");
    OrderId::from_random(&event, n)
}

fn units(o: &OrderId, members: &[&str], expires_at: i64) -> OrderUnits {
    OrderUnits {
        order: o.as_str().to_owned(),
        members: members.iter().map(|m| (*m).to_owned()).collect(),
        expires_at: Millis(expires_at),
    }
}

fn claim(members: &[&str]) -> Vec<String> {
    members.iter().map(|m| (*m).to_owned()).collect()
}

#[test]
fn limits_from_one_to_fifty_are_accepted() {
    assert!(check_limit(0).is_err());
    assert!(check_limit(1).is_ok());
    assert!(check_limit(50).is_ok());
    assert!(check_limit(51).is_err());
}

#[test]
fn a_hold_counts_until_its_expiry_to_the_millisecond() {
    let (a, b) = (order(1), order(2));
    let count = BuyerCount {
        version: 3,
        sold: 2,
        orders: vec![units(&a, &["s1", "s2"], 1_000), units(&b, &["s3"], 2_000)],
    };
    let table = [(0, 5), (999, 5), (1_000, 3), (1_999, 3), (2_000, 2)];
    for (now, counted) in table {
        assert_eq!(count.counted(Millis(now)), counted, "at {now}");
    }
    assert_eq!(count.stale(Millis(1_000)).collect::<Vec<_>>(), [a.as_str()]);
    let emptied = BuyerCount {
        orders: vec![units(&a, &[], 9_000), units(&b, &["s3"], 9_000)],
        ..count.clone()
    };
    assert_eq!(emptied.stale(Millis(0)).collect::<Vec<_>>(), [a.as_str()]);
    assert!(count.live_order(&a, Millis(1_000)).is_none());
    assert!(count.live_order(&b, Millis(1_000)).is_some());
}

#[test]
fn claims_are_decided_against_everything_the_buyer_holds_and_owns() {
    let (a, b) = (order(1), order(2));
    let count = BuyerCount {
        version: 1,
        sold: 1,
        orders: vec![units(&a, &["s1", "s2"], 1_000), units(&b, &["s3"], 5_000)],
    };
    // (order, claimed, limit, now, expected: Ok(members after) or Err(counted))
    type Row<'a> = (
        &'a OrderId,
        &'a [&'a str],
        u32,
        i64,
        Result<&'a [&'a str], u32>,
    );
    let table: [Row; 8] = [
        // 4 counted, one more fits a limit of 5.
        (&b, &["s4"], 5, 0, Ok(&["s3", "s4"])),
        // Not two.
        (&b, &["s4", "s5"], 5, 0, Err(4)),
        // A re-claim takes no unit: never refused.
        (&a, &["s1"], 4, 0, Ok(&["s1", "s2"])),
        // Part re-claim, part new: only the new part counts.
        (&a, &["s1", "s9"], 5, 0, Ok(&["s1", "s2", "s9"])),
        (&a, &["s1", "s9"], 4, 0, Err(4)),
        // At a's expiry its two stop counting: room for two more.
        (&b, &["s4", "s5"], 4, 1_000, Ok(&["s3", "s4", "s5"])),
        // An expired entry is no longer the order's: its members are new.
        (&a, &["s1"], 3, 1_000, Ok(&["s1"])),
        (&a, &["s1"], 2, 1_000, Err(2)),
    ];
    for (o, claimed, limit, now, expected) in table {
        let decision = decide_claim(&count, o, &claim(claimed), limit, Millis(now));
        let expected = match expected {
            Ok(members) => LimitDecision::Within {
                members: members.iter().map(|m| (*m).to_owned()).collect(),
            },
            Err(counted) => LimitDecision::Over { counted },
        };
        assert_eq!(decision, expected, "{claimed:?} at {now} under {limit}");
    }
}

#[test]
fn a_first_claim_over_the_limit_is_refused_with_nothing_counted() {
    let decision = decide_claim(
        &BuyerCount::default(),
        &order(1),
        &claim(&["a", "b", "c"]),
        2,
        Millis(0),
    );
    assert_eq!(decision, LimitDecision::Over { counted: 0 });
}

#[test]
fn confirm_takes_units_only_within_the_limit_less_its_own() {
    let (a, b) = (order(1), order(2));
    let count = BuyerCount {
        version: 1,
        sold: 2,
        orders: vec![units(&a, &["s1", "s2"], 1_000), units(&b, &["s3"], 5_000)],
    };
    // (order, paid, limit, now, within)
    let table = [
        (&a, 2, 5, 0, true),     // exactly what it holds: 5 - 2 + 2
        (&a, 3, 5, 0, false),    // 5 - 2 + 3 = 6
        (&a, 2, 4, 0, false),    // 5 - 2 + 2 = 5 > 4
        (&a, 2, 5, 1_000, true), // late: a counts no more, 3 + 2 = 5
        (&a, 3, 5, 1_000, false),
        (&b, 1, 5, 0, true),
    ];
    for (o, paid, limit, now, within) in table {
        assert_eq!(
            confirm_within(&count, o, paid, limit, Millis(now)),
            within,
            "{paid} paid under {limit} at {now}"
        );
    }
}

#[test]
fn buyer_refs_are_stable_hex_per_event_and_buyer() {
    let e = EventId::parse("e").expect("a valid event id");
    let f = EventId::parse("f").expect("a valid event id");
    let b = BuyerId::parse("user:42").expect("a valid buyer id");
    let c = BuyerId::parse("user:43").expect("a valid buyer id");
    let r = BuyerRef::unkeyed(&e, &b);
    assert_eq!(r, BuyerRef::unkeyed(&e, &b));
    assert_ne!(r, BuyerRef::unkeyed(&f, &b));
    assert_ne!(r, BuyerRef::unkeyed(&e, &c));
    assert_eq!(BuyerRef::from_hex(r.as_str()), Some(r.clone()));
    // Keyed: stable per key, event and buyer, never the plain hash, and
    // another key gives another ref.
    let (k1, k2) = ([1u8; 32], [2u8; 32]);
    let keyed = BuyerRef::keyed(&k1, &e, &b);
    assert_eq!(keyed, BuyerRef::keyed(&k1, &e, &b));
    assert_ne!(keyed, r);
    assert_ne!(keyed, BuyerRef::keyed(&k2, &e, &b));
    assert_ne!(keyed, BuyerRef::keyed(&k1, &f, &b));
    assert_ne!(keyed, BuyerRef::keyed(&k1, &e, &c));
    assert_eq!(BuyerRef::from_hex(keyed.as_str()), Some(keyed.clone()));
    assert!(BuyerRef::from_hex(&r.as_str().to_uppercase()).is_none());
    assert!(BuyerRef::from_hex(&r.as_str()[1..]).is_none());
}

#[test]
fn a_buyer_refused_three_times_within_a_second_is_refused_from_memory() {
    let (a, b) = (order(1), order(2));
    let event = EventId::parse("e").expect("a valid event id");
    let id = BuyerId::parse("u").expect("a valid buyer id");
    let buyer = LimitedBuyer {
        buyer: BuyerRef::unkeyed(&event, &id),
        limit: 2,
    };
    let count = BuyerCount {
        version: 5,
        sold: 1,
        orders: vec![units(&a, &["s1"], 3_000)],
    };
    let mut memory = BuyerRefusals::default();
    let new = claim(&["s9"]);
    assert_eq!(
        memory.refuse(&buyer, &b, &new, Millis(0)),
        None,
        "nothing seen yet"
    );
    memory.refused(&buyer.buyer, count.clone(), Millis(0));
    memory.refused(&buyer.buyer, count.clone(), Millis(100));
    assert_eq!(
        memory.refuse(&buyer, &b, &new, Millis(150)),
        None,
        "two refusals: not yet"
    );
    memory.refused(&buyer.buyer, count.clone(), Millis(200));
    assert_eq!(memory.refuse(&buyer, &b, &new, Millis(250)), Some(2));
    // A re-claim of what an order holds is never refused from memory.
    assert_eq!(
        memory.refuse(&buyer, &a, &claim(&["s1"]), Millis(260)),
        None
    );
    // Refusals from memory keep a buyer clicking contended, and no
    // expiry is missed: at a's expiry its seat stops counting.
    for now in (550..3_000).step_by(300) {
        assert_eq!(
            memory.refuse(&buyer, &b, &new, Millis(now)),
            Some(2),
            "at {now}"
        );
    }
    assert_eq!(memory.refuse(&buyer, &b, &new, Millis(3_000)), None);
    // A buyer refused less often is not contended.
    assert_eq!(memory.refuse(&buyer, &b, &new, Millis(5_000)), None);
    memory.refused(&buyer.buyer, count.clone(), Millis(3_000));
    memory.refused(&buyer.buyer, count.clone(), Millis(3_001));
    memory.refused(&buyer.buyer, count.clone(), Millis(3_002));
    let full = BuyerCount {
        sold: 2,
        ..count.clone()
    };
    memory.refused(&buyer.buyer, full, Millis(3_003));
    for now in (3_100..8_003).step_by(300) {
        assert_eq!(
            memory.refuse(&buyer, &b, &new, Millis(now)),
            Some(2),
            "at {now}"
        );
    }
    assert_eq!(
        memory.refuse(&buyer, &b, &new, Millis(8_003)),
        None,
        "the read is 5 s old"
    );
    memory.forget(&buyer.buyer);
    assert_eq!(
        memory.refuse(&buyer, &b, &new, Millis(3_004)),
        None,
        "forgotten"
    );
}
