//! A payment item's expression (`PAYMENT#…`).

use super::super::codec::s;
use super::super::keys::ORDER_ID;
use super::Expression;
use crate::domain::OrderId;

/// `PAYMENT#{id}` names the order it paid for: it may be written again for
/// the same order, never for another (a payment pays for one order only).
pub(in crate::store) fn for_order_only(order: &OrderId) -> Expression {
    Expression::condition("attribute_not_exists(PK) OR #orderId = :order")
        .name("#orderId", ORDER_ID)
        .value(":order", s(order.as_str()))
}
