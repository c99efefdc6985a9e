//! The store's expressions, every one: bound exactly, conditions on time
//! through the shared helpers, and written only in the items' modules.

use super::super::items::{
    bucket, buyer, event, order, payment, queue, registry, seat, seat_map, visitor,
};
use crate::auth::HoldToken;
use crate::domain::ga::{PlaceHold, PlaceSale, Take};
use crate::domain::waitlist::EndReason;
use crate::domain::{
    hold_is_live, EventId, Millis, OrderId, OrderStatus, PaymentId, RefundReason, SectionId,
};
use aws_sdk_dynamodb::types::AttributeValue;
use std::collections::BTreeSet;

/// Evaluates `<expiry> <op> :now`, the only shape `live!` and
/// `expired!` build, as DynamoDB would for numbers.
fn holds(condition: &str, expiry: Millis, now: Millis) -> bool {
    let (_, rest) = condition.split_once(' ').unwrap_or(("", ""));
    match rest {
        "> :now" => expiry > now,
        "<= :now" => expiry <= now,
        other => panic!("not a boundary comparison: {other}"),
    }
}

#[test]
fn the_store_boundary_is_the_domains_at_the_exact_millisecond() {
    let t = Millis(1_700_000_000_000);
    for now in [Millis(t.0 - 1), t, Millis(t.0 + 1)] {
        assert_eq!(
            holds(live!("#holdExp"), t, now),
            hold_is_live(t, now),
            "live at {now:?}"
        );
        assert_eq!(
            holds(expired!("#holdExp"), t, now),
            !hold_is_live(t, now),
            "expired at {now:?}"
        );
    }
    // At now = expiresAt a seat is claimable, and no longer its holder's.
    assert!(holds(expired!("#holdExp"), t, t) && !holds(live!("#holdExp"), t, t));
}

/// Every store file outside `items/` (and this one): none writes an
/// expression or binds a placeholder itself, so none can compare with
/// `:now` by hand (a second boundary rule) or bind `#status` a second way.
const STORE_SOURCES: [(&str, &str); 21] = [
    ("best_available.rs", include_str!("best_available.rs")),
    ("confirm.rs", include_str!("confirm.rs")),
    ("errors.rs", include_str!("errors.rs")),
    ("event_reads.rs", include_str!("event_reads.rs")),
    ("events.rs", include_str!("events.rs")),
    ("failures.rs", include_str!("failures.rs")),
    ("ga.rs", include_str!("ga.rs")),
    ("holds.rs", include_str!("holds.rs")),
    ("items/mod.rs", include_str!("items/mod.rs")),
    ("buyers.rs", include_str!("buyers.rs")),
    ("mod.rs", include_str!("mod.rs")),
    ("orders.rs", include_str!("orders.rs")),
    ("queue.rs", include_str!("queue.rs")),
    ("schema.rs", include_str!("schema.rs")),
    ("seat_map.rs", include_str!("seat_map.rs")),
    ("seeding.rs", include_str!("seeding.rs")),
    ("sold_out.rs", include_str!("sold_out.rs")),
    ("stream.rs", include_str!("stream.rs")),
    ("sweep.rs", include_str!("sweep.rs")),
    ("value.rs", include_str!("value.rs")),
    ("visitors.rs", include_str!("visitors.rs")),
];
/// The item modules, where expressions are written (this file defines
/// the boundary itself, in `live!` and `expired!`).
const EXPRESSION_SOURCES: [(&str, &str); 8] = [
    ("items/bucket.rs", include_str!("items/bucket.rs")),
    ("items/event.rs", include_str!("items/event.rs")),
    ("items/order.rs", include_str!("items/order.rs")),
    ("items/payment.rs", include_str!("items/payment.rs")),
    ("items/queue.rs", include_str!("items/queue.rs")),
    ("items/seat.rs", include_str!("items/seat.rs")),
    ("items/seat_map.rs", include_str!("items/seat_map.rs")),
    ("items/visitor.rs", include_str!("items/visitor.rs")),
];

/// The placeholders (`#x`, `:x`) a text uses.
fn placeholders(text: &str, sigil: char) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find(sigil) {
        let tail = &rest[at + 1..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        found.insert(format!("{sigil}{}", &tail[..end]));
        rest = &tail[end..];
    }
    found
}

/// DynamoDB rejects a request that binds a placeholder its expressions
/// do not use, or uses one it does not bind: every expression the
/// store builds, in each of its shapes, binds exactly what it uses.
#[test]
fn every_expression_binds_exactly_what_it_uses() -> Result<(), Box<dyn std::error::Error>> {
    let order = OrderId::parse("ord-1")?;
    let other = OrderId::parse("ord-2")?;
    let payment = PaymentId::parse("pay-1")?;
    let token = HoldToken::from_secret(
        &crate::domain::EventId::parse("gala")?,
        Millis(1_795_300_000_000),
        [0xab; 32],
    );
    let now = Millis(1_700_000_000_000);
    let hold = PlaceHold {
        order: other,
        quantity: 2,
        expires_at: now,
    };
    let take = Take {
        bucket: 0,
        places: 3,
        reclaim: vec![hold],
    };
    let section = SectionId::parse("FLOOR")?;
    let sale = |held, sell, take: Option<Take>| PlaceSale {
        section: section.clone(),
        bucket: 0,
        held,
        sell,
        take,
    };
    let key = crate::domain::IdempotencyKey::parse("retry-1").unwrap();
    let keyed = crate::domain::keyed_block::KeyedBlock {
        quantity: 2,
        section: Some(crate::domain::SectionId::parse("A").unwrap()),
        wheelchair: 0,
        seats: vec![],
    };
    let mut all = vec![
        (
            "seat::claim",
            seat::claim(&order, now, seat::FreeFor::Order, now),
        ),
        (
            "seat::claim another",
            seat::claim(&order, now, seat::FreeFor::Another, now),
        ),
        ("seat::take_paid", seat::take_paid(&order, &payment, now)),
        ("seat::sell_held", seat::sell_held(&order, &payment, now)),
        ("seat::release_held", seat::release_held(&order, now)),
        ("seat::extend_held", seat::extend_held(&order, now, now)),
        ("order::add_seat", order::add_seat(&token, "A-1-1", 8, now)),
        (
            "order::add_block",
            order::add_block(&token, &["A-1-1", "A-1-2"], 6, None, now),
        ),
        (
            "order::add_block under a key",
            order::add_block(&token, &["A-1-1", "A-1-2"], 6, Some((&key, &keyed)), now),
        ),
        ("order::drop_seat", order::drop_seat(&token, "A-1-1", now)),
        (
            "order::drop_offers_last",
            order::drop_offers_last(&token, "A-1-1", 3, now),
        ),
        (
            "order::change_places add",
            order::change_places(&token, order::Places::Add, &["p"], 3, now),
        ),
        (
            "order::change_places remove",
            order::change_places(&token, order::Places::Remove, &["p"], 3, now),
        ),
        (
            "order::change_places empty",
            order::change_places(&token, order::Places::Empty, &["p"], 3, now),
        ),
        ("order::extend", order::extend(3, now, now, 1, now)),
        (
            "order::cancel",
            order::cancel(OrderStatus::Pending, 3, now, None),
        ),
        (
            "order::cancel offer",
            order::cancel(OrderStatus::Pending, 3, now, Some(EndReason::Removed)),
        ),
        ("order::expire", order::expire(3, now)),
        (
            "order::leave_index",
            order::leave_index(OrderStatus::Completed, 3),
        ),
        (
            "order::refund_due",
            order::refund_due(
                &payment,
                RefundReason::OrderExpired,
                OrderStatus::Pending,
                3,
                now,
            ),
        ),
        (
            "order::add_refund_payment",
            order::add_refund_payment(&payment, OrderStatus::Completed, now),
        ),
        (
            "bucket::take first",
            bucket::take(
                &order,
                &Take {
                    bucket: 0,
                    places: 1,
                    reclaim: vec![],
                },
                0,
                now,
                now,
            ),
        ),
        (
            "bucket::take more",
            bucket::take(&order, &take, 2, now, now),
        ),
        ("bucket::give all", bucket::give(&order, 2, 0, now)),
        ("bucket::give some", bucket::give(&order, 2, 1, now)),
        ("bucket::extend", bucket::extend(&order, 2, now, now)),
        (
            "bucket::sell held live",
            bucket::sell(&order, &payment, &sale(2, 1, None), Some(now), now),
        ),
        (
            "bucket::sell held late",
            bucket::sell(&order, &payment, &sale(2, 2, None), None, now),
        ),
        (
            "bucket::sell taken",
            bucket::sell(&order, &payment, &sale(0, 0, Some(take.clone())), None, now),
        ),
        (
            "bucket::sell nothing",
            bucket::sell(&order, &payment, &sale(0, 0, None), None, now),
        ),
        ("event::ready", event::ready(10)),
        ("event::seats_written", event::seats_written(10)),
        ("event::due_in_shard", event::due_in_shard("0".into(), now)),
        ("event::partition", event::partition("EVENT#x")),
        ("payment::for_order_only", payment::for_order_only(&order)),
        (
            "seat_map::project",
            seat_map::project(vec![
                ("s1".into(), Some(AttributeValue::S("S".into()))),
                ("s2".into(), None),
            ]),
        ),
        ("seat_map::full_part", seat_map::full_part("A-1#0")),
        (
            "seat_map::rows_runs",
            seat_map::rows_runs(&[
                seat_map::NotedRuns {
                    row: "A-1".into(),
                    version: 3,
                    runs: crate::domain::RowRuns {
                        longest: 4,
                        clear: Some(2),
                        until: Some(now),
                    },
                },
                seat_map::NotedRuns {
                    row: "A-9".into(),
                    version: 7,
                    runs: crate::domain::RowRuns {
                        longest: 0,
                        clear: None,
                        until: None,
                    },
                },
            ]),
        ),
        ("seat_map::sold_out", seat_map::sold_out("A")),
        ("queue::as_read", queue::as_read(Some(3))),
        (
            "queue::admitted_on_join",
            queue::admitted_on_join(
                &crate::domain::queue_state::QueueState::new(
                    1,
                    crate::domain::queue::QueueSettings::new(now, 60, None, None)?,
                ),
                3,
            ),
        ),
        (
            "order::create",
            order::create(&crate::domain::Order {
                order_id: order.clone(),
                event_id: crate::domain::EventId::parse("gala")?,
                status: crate::domain::OrderStatus::Pending,
                expires_at: now,
                holder_deadline: now,
                created_at: now,
                token_hash: "h".into(),
                seats: Vec::new(),
                places: Vec::new(),
                payment_id: None,
                refund_payment_ids: Vec::new(),
                refund_reason: None,
                user_id: Some("u".into()),
                visitor_id: None,
                buyer: None,
                offer: None,
            }),
        ),
        ("queue::as_read new", queue::as_read(None)),
        ("queue::older_copy", queue::older_copy(4)),
        (
            "registry::list_event",
            registry::list_event(&EventId::parse("gala")?, true),
        ),
        (
            "registry::unlist_event",
            registry::list_event(&EventId::parse("gala")?, false),
        ),
        (
            "visitor::admit",
            visitor::admit(
                &crate::domain::queue_state::Admission {
                    admission_id: "a".into(),
                    slot_us: 1,
                    given_at: now,
                    expires_at: now,
                    orders_allowed: 1,
                },
                2,
                9,
            ),
        ),
        ("visitor::open_under", visitor::open_under(2, 9)),
        (
            "visitor::joined_since",
            visitor::joined_since("QWAIT#e#1#0".into(), 5),
        ),
        (
            "visitor::joined_between",
            visitor::joined_between("QWAIT#e#1#0".into(), 5, 9),
        ),
        (
            "visitor::ranked_after",
            visitor::ranked_after("QWAIT#e#1#0".into(), Some("00ff")),
        ),
        (
            "visitor::ranked_after first",
            visitor::ranked_after("QWAIT#e#1#0".into(), None),
        ),
    ];
    let first = crate::domain::buyer_limit::BuyerCount::default();
    let read = crate::domain::buyer_limit::BuyerCount {
        version: 3,
        sold: 1,
        orders: vec![crate::domain::buyer_limit::OrderUnits {
            order: "ord-2".into(),
            members: ["A-1-9".to_owned()].into(),
            expires_at: Millis(now.0 - 1),
        }],
    };
    let members: std::collections::BTreeSet<String> = ["A-1-1".to_owned()].into();
    let kept = ["A-1-2".to_owned()];
    all.extend([
        (
            "buyer::claim first",
            buyer::claim(&first, &order, &members, now, now),
        ),
        (
            "buyer::claim pruning",
            buyer::claim(&read, &order, &members, now, now),
        ),
        ("buyer::refuse", buyer::refuse()),
        ("buyer::release", buyer::release(&order, &["A-1-1"])),
        ("buyer::release_order", buyer::release_order(&order)),
        ("buyer::extend", buyer::extend(&order, now)),
        ("buyer::sell", buyer::sell(&order, 2, None, &[])),
        (
            "buyer::sell as read keeping",
            buyer::sell(&order, 2, Some(&read), &kept),
        ),
        (
            "buyer::sell first",
            buyer::sell(&order, 2, Some(&first), &[]),
        ),
    ]);
    for when in [
        order::Completion::Exact { count: 2, now },
        order::Completion::AsReadLive { version: 3, now },
        order::Completion::AsRead {
            seen: OrderStatus::Expired,
            version: 3,
        },
    ] {
        all.push((
            "order::complete",
            order::complete(&payment, &["A-1-1"], when, now),
        ));
    }
    // Every write the events out tell carries its own time, once.
    let told = [
        "seat::",
        "bucket::",
        "order::extend",
        "order::cancel",
        "order::expire",
        "order::refund_due",
        "order::add_refund_payment",
        "order::complete",
    ];
    for (what, e) in &all {
        let stamps = e
            .update
            .as_deref()
            .unwrap_or_default()
            .matches("#changedAt = :changedAt")
            .count();
        let stamped_now = e.values.get(":changedAt") == Some(&AttributeValue::N(now.0.to_string()));
        let expected = told.iter().any(|t| what.starts_with(t));
        assert_eq!(
            (stamps == 1 && stamped_now, stamps),
            (expected, usize::from(expected)),
            "{what}"
        );
    }
    for (what, e) in all {
        let text = [&e.update, &e.condition, &e.key_condition]
            .into_iter()
            .flatten()
            .cloned()
            .collect::<Vec<_>>()
            .join(" ");
        let names: BTreeSet<String> = e.names.keys().cloned().collect();
        let values: BTreeSet<String> = e.values.keys().cloned().collect();
        assert_eq!(placeholders(&text, '#'), names, "{what}: names in {text}");
        assert_eq!(placeholders(&text, ':'), values, "{what}: values in {text}");
    }
    Ok(())
}

#[test]
fn no_store_file_outside_the_items_writes_or_binds_one() {
    for (file, source) in STORE_SOURCES {
        let code = source.split("#[cfg(test)]").next().unwrap_or(source);
        for (i, line) in code.lines().enumerate() {
            for call in [
                "condition_expression(",
                "update_expression(",
                "key_condition_expression(",
                "expression_attribute_names(",
                "expression_attribute_values(",
                "live!(",
                "expired!(",
            ] {
                assert!(
                    !line.contains(call),
                    "{file}:{}: `{call}` outside store/items",
                    i + 1
                );
            }
        }
    }
}

#[test]
fn no_store_condition_compares_with_now_by_hand() {
    for (file, source) in STORE_SOURCES.into_iter().chain(EXPRESSION_SOURCES) {
        for (i, line) in source.lines().enumerate() {
            for op in ["< :now", "> :now", "= :now", "<> :now", "BETWEEN :now"] {
                assert!(
                    !line.contains(op),
                    "{file}:{}: `{op}` by hand; use live! or expired!",
                    i + 1
                );
            }
        }
    }
}

/// The stamp joins an update's one `SET` clause, wherever it is, or
/// brings its own: DynamoDB refuses a second `SET`.
#[test]
fn a_stamp_joins_the_set_clause_or_brings_one() {
    let now = Millis(1_234);
    let cases = [
        (
            "SET #a = :a REMOVE #b",
            "SET #changedAt = :changedAt, #a = :a REMOVE #b",
        ),
        ("ADD #v :one", "SET #changedAt = :changedAt ADD #v :one"),
        (
            "ADD #v :one SET #k = :k",
            "ADD #v :one SET #changedAt = :changedAt, #k = :k",
        ),
        (
            "DELETE #s :s ADD #v :one",
            "SET #changedAt = :changedAt DELETE #s :s ADD #v :one",
        ),
    ];
    for (text, stamped) in cases {
        let e = super::Expression::update(text).stamped(now);
        assert_eq!(e.update.as_deref(), Some(stamped));
        assert_eq!(
            e.names.get("#changedAt").map(String::as_str),
            Some("changedAt")
        );
    }
}
