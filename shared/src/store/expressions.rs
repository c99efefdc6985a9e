//! The seat-side condition and update expressions, one place each, with the
//! names and values they bind (`#status`, `#holder`, `#holdExp`; `:order`,
//! `:now`, `:sold`, `:held`, `:available`).

use super::codec::{n, s};
use super::keys::{HOLDER, HOLD_EXPIRES_AT, SEAT_AVAILABLE, SEAT_HELD, STATUS};
use crate::domain::{Millis, OrderId};
use aws_sdk_dynamodb::types::AttributeValue;
use std::collections::HashMap;

/// The one expiry boundary (docs/API.md, Clocks; the domain's
/// [`crate::domain::hold_is_live`]): a hold or an order with expiry `t` is
/// live while `now < t` and expired from `now >= t`. Every condition that
/// compares an expiry (or a deadline) with `:now` is written with
/// `live!` or `expired!`, so the store cannot drift from the domain; the
/// tests below check both against the domain at the exact millisecond and
/// that no store file compares with `:now` by hand.
macro_rules! live {
    ($expiry:literal) => {
        concat!($expiry, " > :now")
    };
}
/// See [`live!`]: the complement, `now >= expiry`.
macro_rules! expired {
    ($expiry:literal) => {
        concat!($expiry, " <= :now")
    };
}

/// The claim condition (invariants 1–3): the seat exists, is not sold, and
/// is unheld, already this order's, or held by a hold that has expired —
/// compared with the writer's clock, so no sweep is needed first.
pub(super) const SEAT_IS_FREE_FOR_ORDER: &str = concat!(
    "attribute_exists(PK) AND #status <> :sold AND (attribute_not_exists(#holder) OR #holder = :order OR ",
    expired!("#holdExp"),
    ")"
);
/// best-available's seat condition: like [`SEAT_IS_FREE_FOR_ORDER`] but not
/// a seat the order holds already (its own holds count as unavailable: a
/// stale read must not turn into a "claim" of a seat it has).
pub(super) const SEAT_IS_FREE_FOR_ANOTHER: &str = concat!(
    "attribute_exists(PK) AND #status <> :sold AND (attribute_not_exists(#holder) OR (#holder <> :order AND ",
    expired!("#holdExp"),
    "))"
);
/// Only the holding order's hold can be released (drop-seat, the sweep).
const SEAT_HELD_BY_ORDER: &str = "#holder = :order AND #status = :held";
/// The paid seats' condition in confirm's common and live paths: still
/// held by the order and unexpired (the order's own condition carries the
/// guard margin).
pub(super) const SEAT_HELD_BY_ORDER_LIVE: &str = concat!(
    "#holder = :order AND #status = :held AND ",
    live!("#holdExp")
);
/// The order's condition on its holder's claims (get-seat, best-available):
/// the token's hash, PENDING, the expiry the token carries, and outside the
/// guard margin (`holderDeadline`). Binds `#tokenHash`, `#status`,
/// `#expiresAt`, `#deadline`; `:tokenHash`, `:pending`, `:exp`, `:now`.
pub(super) const HOLDER_ORDER_IS_HOLDABLE: &str = concat!(
    "attribute_exists(PK) AND #tokenHash = :tokenHash AND #status = :pending AND #expiresAt = :exp AND ",
    live!("#deadline")
);
const RELEASE_SEAT: &str = "SET #status = :available REMOVE #holder, #holdExp";
const EXTEND_HOLD: &str = "SET #holdExp = :exp";

/// An expression with its bindings, to set on an `UpdateItem` request or a
/// transaction's `Update` item alike.
pub(super) struct Bound {
    pub update: &'static str,
    pub condition: &'static str,
    pub names: HashMap<String, String>,
    pub values: HashMap<String, AttributeValue>,
}

/// `update` on a seat only while `order` holds it ([`SEAT_HELD_BY_ORDER`]),
/// with the condition's bindings and `extra` values of the update.
fn on_seat_held_by(
    order: &OrderId,
    update: &'static str,
    extra: [(&str, AttributeValue); 1],
) -> Bound {
    let mut values = HashMap::from([
        (":held".to_owned(), s(SEAT_HELD)),
        (":order".to_owned(), s(order.as_str())),
    ]);
    values.extend(extra.map(|(k, v)| (k.to_owned(), v)));
    Bound {
        update,
        condition: SEAT_HELD_BY_ORDER,
        names: HashMap::from([
            ("#status".to_owned(), STATUS.to_owned()),
            ("#holder".to_owned(), HOLDER.to_owned()),
            ("#holdExp".to_owned(), HOLD_EXPIRES_AT.to_owned()),
        ]),
        values,
    }
}

/// Releases a seat only if `order` still holds it (drop-seat, confirm's
/// unpaid holds, the sweep).
pub(super) fn release_held_seat(order: &OrderId) -> Bound {
    on_seat_held_by(order, RELEASE_SEAT, [(":available", s(SEAT_AVAILABLE))])
}

/// Moves the expiry of a hold `order` still has (extend-order).
pub(super) fn extend_held_seat(order: &OrderId, expires_at: Millis) -> Bound {
    on_seat_held_by(order, EXTEND_HOLD, [(":exp", n(expires_at.0))])
}

impl Bound {
    pub(super) fn on_update(
        self,
        b: aws_sdk_dynamodb::types::builders::UpdateBuilder,
    ) -> aws_sdk_dynamodb::types::builders::UpdateBuilder {
        b.update_expression(self.update)
            .condition_expression(self.condition)
            .set_expression_attribute_names(Some(self.names))
            .set_expression_attribute_values(Some(self.values))
    }
    pub(super) fn on_update_item(
        self,
        b: aws_sdk_dynamodb::operation::update_item::builders::UpdateItemFluentBuilder,
    ) -> aws_sdk_dynamodb::operation::update_item::builders::UpdateItemFluentBuilder {
        b.update_expression(self.update)
            .condition_expression(self.condition)
            .set_expression_attribute_names(Some(self.names))
            .set_expression_attribute_values(Some(self.values))
    }
}

#[cfg(test)]
mod tests {
    use crate::domain::{hold_is_live, Millis};

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

    /// Every store file, so a comparison with `:now` written by hand (a
    /// second boundary rule) fails here.
    const STORE_SOURCES: [(&str, &str); 14] = [
        ("best_available.rs", include_str!("best_available.rs")),
        ("codec.rs", include_str!("codec.rs")),
        ("confirm.rs", include_str!("confirm.rs")),
        ("errors.rs", include_str!("errors.rs")),
        ("events.rs", include_str!("events.rs")),
        ("expiry.rs", include_str!("expiry.rs")),
        ("failures.rs", include_str!("failures.rs")),
        ("ga.rs", include_str!("ga.rs")),
        ("holds.rs", include_str!("holds.rs")),
        ("keys.rs", include_str!("keys.rs")),
        ("lifecycle.rs", include_str!("lifecycle.rs")),
        ("mod.rs", include_str!("mod.rs")),
        ("seat_map.rs", include_str!("seat_map.rs")),
        ("stream.rs", include_str!("stream.rs")),
    ];

    #[test]
    fn no_store_condition_compares_with_now_by_hand() {
        for (file, source) in STORE_SOURCES {
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
}
