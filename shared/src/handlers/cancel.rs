//! An order's cancel, as read: cancel-order's, and a waitlist offer's
//! decline (a leave, a removal). The order becomes CANCELLED; while its
//! holds count its seats and places are released in the same
//! transaction, and after its expiry what it still names is released
//! after it (a hold past its expiry is free already).

use crate::domain::waitlist::offer_cancel_reason;
use crate::domain::OrderStatus;
use crate::error::Error;
use crate::store::StoredOrder;
use crate::App;

/// Cancels the order read as `stored` at `now` if it may be: what it was
/// (`Cancelled` as well when it was already), or `None` if it changed
/// since the read (read it again). A COMPLETED or REFUND_DUE order is
/// left as it is and its status answered. An offer's cancel records why
/// its entry ended (`removal`: the organiser's).
pub(super) async fn cancel_as_read(
    app: &App,
    stored: &StoredOrder,
    removal: bool,
) -> Result<Option<OrderStatus>, Error> {
    let order = &stored.order;
    match order.status {
        OrderStatus::Completed | OrderStatus::RefundDue | OrderStatus::Cancelled => {
            return Ok(Some(order.status))
        }
        OrderStatus::Pending | OrderStatus::Expired => {}
    }
    let now = crate::world::now();
    let live = order.is_live(now);
    let offer_end = order
        .offer
        .as_ref()
        .map(|_| offer_cancel_reason(removal, !order.offer_emptied(), live));
    if !app.store.cancel_order(stored, live, now, offer_end).await? {
        return Ok(None);
    }
    if !live {
        app.store
            .release_leftover_holds(order, &order.seats, now)
            .await;
        app.store.release_places(order, now).await;
    }
    Ok(Some(OrderStatus::Cancelled))
}
