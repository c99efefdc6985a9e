//! The seat-side condition and update expressions, one place each, with the
//! names and values they bind (`#status`, `#holder`, `#holdExp`; `:order`,
//! `:now`, `:sold`, `:held`, `:available`).

use super::*;

/// The claim condition (invariants 1–3): the seat exists, is not sold, and
/// is unheld, already this order's, or held by a hold that has expired —
/// compared with the writer's clock, so no sweep is needed first.
pub(super) const SEAT_IS_FREE_FOR_ORDER: &str = "attribute_exists(PK) AND #status <> :sold AND \
     (attribute_not_exists(#holder) OR #holder = :order OR #holdExp < :now)";
/// best-available's seat condition: like [`SEAT_IS_FREE_FOR_ORDER`] but not
/// a seat the order holds already (its own holds count as unavailable: a
/// stale read must not turn into a "claim" of a seat it has).
pub(super) const SEAT_IS_FREE_FOR_ANOTHER: &str =
    "attribute_exists(PK) AND #status <> :sold AND (attribute_not_exists(#holder) OR (#holder <> :order AND #holdExp < :now))";
/// Only the holding order's hold can be released (drop-seat, the sweep).
const SEAT_HELD_BY_ORDER: &str = "#holder = :order AND #status = :held";
/// The paid seats' condition in confirm's common and live paths: still
/// held by the order and unexpired (the order's own condition carries the
/// guard margin).
pub(super) const SEAT_HELD_BY_ORDER_LIVE: &str = "#holder = :order AND #status = :held AND #holdExp > :now";
/// The order's condition on its holder's claims (get-seat, best-available):
/// the token's hash, PENDING, the expiry the token carries, and outside the
/// guard margin (`holderDeadline`). Binds `#tokenHash`, `#status`,
/// `#expiresAt`, `#deadline`; `:tokenHash`, `:pending`, `:exp`, `:now`.
pub(super) const HOLDER_ORDER_IS_HOLDABLE: &str =
    "attribute_exists(PK) AND #tokenHash = :tokenHash AND #status = :pending AND #expiresAt = :exp AND #deadline > :now";
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
fn on_seat_held_by(order: &OrderId, update: &'static str, extra: [(&str, AttributeValue); 1]) -> Bound {
    let mut values = HashMap::from([(":held".to_owned(), s(SEAT_HELD)), (":order".to_owned(), s(order.as_str()))]);
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
    pub(super) fn on_update(self, b: aws_sdk_dynamodb::types::builders::UpdateBuilder) -> aws_sdk_dynamodb::types::builders::UpdateBuilder {
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
