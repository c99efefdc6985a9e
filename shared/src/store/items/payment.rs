//! The payment item (`PAYMENT#{paymentId}`): a payment id recorded for one
//! order only.

use crate::domain::{OrderId, PaymentId};
use crate::store::expression::Expression;
use crate::store::schema::{ORDER_ID, PK, SK};
use crate::store::value::{s, Item};
use std::collections::HashMap;

pub(in crate::store) fn payment_key(payment: &PaymentId) -> Item {
    HashMap::from([
        (PK.into(), s(format!("PAYMENT#{payment}"))),
        (SK.into(), s("PAYMENT")),
    ])
}

// ----- expressions ---------------------------------------------------------
// A payment item's expression (`PAYMENT#…`).

/// `PAYMENT#{id}` names the order it paid for: it may be written again for
/// the same order, never for another (a payment pays for one order only).
pub(in crate::store) fn for_order_only(order: &OrderId) -> Expression {
    Expression::condition("attribute_not_exists(PK) OR #orderId = :order")
        .name("#orderId", ORDER_ID)
        .value(":order", s(order.as_str()))
}
