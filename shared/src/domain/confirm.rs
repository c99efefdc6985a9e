//! confirm's rules as a pure function of the order as read, the payment and
//! the seats paid for (docs/API.md, "Payment confirmation").

use super::{Millis, Order, OrderStatus, PaymentId, RefundCause, RefundReason, SeatId};

/// What confirm does with a paid order, decided from the order as read
/// (the common case, a live order holding exactly what was paid, never
/// gets here: it is one transaction with no read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfirmDecision {
    /// This payment completed the order already: the same 200.
    AlreadyCompleted,
    /// A different payment for a COMPLETED order: record it for refund and
    /// answer `already-completed` with `refund: true`.
    RecordForRefund { refused: ConfirmRefusal },
    /// This payment is the one a REFUND_DUE order records: the same 409.
    Refused(ConfirmRefusal),
    /// A holdable order that holds every paid seat and place: sell those and
    /// release `release` (the other seats it holds; its other places too) in
    /// the same transaction.
    SellHeld { release: Vec<SeatId> },
    /// Take nothing: the order becomes REFUND_DUE for `reason` and lets go
    /// of what it holds (`holds_are_live`: whether those holds still
    /// count). A payment outside a live hold while only the waitlist's
    /// offers take seats.
    Refund {
        reason: RefundReason,
        holds_are_live: bool,
    },
    /// Take every paid seat that is free (unheld, this order's, or held by
    /// an expired hold) and complete; if one cannot be had, the order
    /// becomes REFUND_DUE for `on_failure`. `release`: the rest it held;
    /// `holds_are_live`: whether those holds still count (then they are
    /// released in the transaction, else right after it).
    TakeFree {
        release: Vec<SeatId>,
        holds_are_live: bool,
        on_failure: RefundReason,
    },
}

/// Which read of the order a decision is made on. Each time a transaction
/// finds the order changed, confirm reads it again; on the `Last` read (see
/// `retry::CONFIRM_ROUNDS`) no condition on what the order holds may keep
/// the payment from being recorded: a sale of held seats takes them as a
/// late payment would, and holds are let go of after the transaction
/// rather than in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfirmRound {
    Ordinary,
    Last,
}

/// How a confirm that does not complete its order is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfirmRefusal {
    AlreadyCompleted,
    Refund(RefundReason),
}

/// What else than the order and the payment a decision rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfirmContext {
    pub now: Millis,
    pub round: ConfirmRound,
    /// Whether only the waitlist's offers take seats at `now`: then a
    /// payment outside a live hold takes nothing.
    pub waitlist_only: bool,
}

/// The confirm rules of the contract as a function of the order, the
/// payment, the seats paid for, whether it holds at least the places paid
/// for in every paid section (`places_held`; true when none were paid
/// for), and the context (the instant, which read of the order this is,
/// and whether the sale is waitlist-only).
pub fn decide_confirm(
    order: &Order,
    payment: &PaymentId,
    paid: &[SeatId],
    places_held: bool,
    context: ConfirmContext,
) -> ConfirmDecision {
    let ConfirmContext {
        now,
        round,
        waitlist_only,
    } = context;
    let decision = match decide_on_read(order, payment, paid, places_held, now) {
        ConfirmDecision::TakeFree {
            holds_are_live,
            on_failure,
            ..
        } if waitlist_only => ConfirmDecision::Refund {
            reason: on_failure.because_of(RefundCause::Waitlist),
            holds_are_live,
        },
        decision => decision,
    };
    match (round, decision) {
        (ConfirmRound::Ordinary, decision) => decision,
        // Taking free seats is what the waitlist-only sale forbids: there a
        // sale of held seats stays conditioned on the holds, and a last
        // round that loses is a 503 the payment backend retries.
        (ConfirmRound::Last, ConfirmDecision::SellHeld { release }) if !waitlist_only => {
            ConfirmDecision::TakeFree {
                release,
                holds_are_live: false,
                on_failure: RefundReason::SeatsUnavailable,
            }
        }
        (
            ConfirmRound::Last,
            ConfirmDecision::TakeFree {
                release,
                on_failure,
                ..
            },
        ) => ConfirmDecision::TakeFree {
            release,
            holds_are_live: false,
            on_failure,
        },
        (ConfirmRound::Last, ConfirmDecision::Refund { reason, .. }) => ConfirmDecision::Refund {
            reason,
            holds_are_live: false,
        },
        (ConfirmRound::Last, decision) => decision,
    }
}

/// [`decide_confirm`] on any read but the last.
fn decide_on_read(
    order: &Order,
    payment: &PaymentId,
    paid: &[SeatId],
    places_held: bool,
    now: Millis,
) -> ConfirmDecision {
    let same_payment = order.payment_id.as_ref() == Some(payment);
    let not_paid = |seat: &&SeatId| !paid.contains(seat);
    match order.status {
        OrderStatus::Completed if same_payment => ConfirmDecision::AlreadyCompleted,
        OrderStatus::Completed => ConfirmDecision::RecordForRefund {
            refused: ConfirmRefusal::AlreadyCompleted,
        },
        OrderStatus::RefundDue => {
            let reason =
                ConfirmRefusal::Refund(order.refund_reason.unwrap_or(RefundReason::OrderExpired));
            if same_payment {
                ConfirmDecision::Refused(reason)
            } else {
                ConfirmDecision::RecordForRefund { refused: reason }
            }
        }
        OrderStatus::Pending if order.is_holdable(now) => {
            let release: Vec<SeatId> = order.seats.iter().filter(not_paid).cloned().collect();
            if places_held && paid.iter().all(|seat| order.seats.contains(seat)) {
                ConfirmDecision::SellHeld { release }
            } else {
                ConfirmDecision::TakeFree {
                    release,
                    holds_are_live: true,
                    on_failure: RefundReason::SeatsUnavailable,
                }
            }
        }
        // Expired (or within the guard margin), cancelled: a late payment.
        OrderStatus::Pending | OrderStatus::Expired | OrderStatus::Cancelled => {
            ConfirmDecision::TakeFree {
                release: order.seats.iter().filter(not_paid).cloned().collect(),
                holds_are_live: false,
                on_failure: RefundReason::OrderExpired,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::tests::pending;

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    /// A decision on an ordinary read of the order.
    fn decide(
        order: &Order,
        payment: &PaymentId,
        paid: &[SeatId],
        places_held: bool,
        now: Millis,
    ) -> ConfirmDecision {
        decide_confirm(
            order,
            payment,
            paid,
            places_held,
            ConfirmContext {
                now,
                round: ConfirmRound::Ordinary,
                waitlist_only: false,
            },
        )
    }

    fn ids(seats: &[&str]) -> Vec<SeatId> {
        seats.iter().filter_map(|s| SeatId::parse(s).ok()).collect()
    }

    #[test]
    fn confirm_decisions_follow_the_contract() -> TestResult {
        let t0 = Millis(1_000_000);
        let pay = PaymentId::parse("pi_1")?;
        let other = PaymentId::parse("pi_2")?;
        let order = pending(&["A-1-1", "A-1-2"], t0)?;
        let live = Millis(t0.0 + 1000);
        let in_guard = Millis(order.expires_at.0 - 1000);
        let expired = order.expires_at;

        // A live order holding what was paid: sell it, release the rest.
        assert_eq!(
            decide(&order, &pay, &ids(&["A-1-1"]), true, live),
            ConfirmDecision::SellHeld {
                release: ids(&["A-1-2"])
            }
        );
        assert_eq!(
            decide(&order, &pay, &ids(&["A-1-1", "A-1-2"]), true, live),
            ConfirmDecision::SellHeld { release: vec![] }
        );
        // Paid places it does not hold: not a sale of what it holds.
        assert!(matches!(
            decide(&order, &pay, &ids(&["A-1-1"]), false, live),
            ConfirmDecision::TakeFree {
                holds_are_live: true,
                ..
            }
        ));
        // Paid for a seat it does not hold: take it if free, else seats-unavailable.
        assert_eq!(
            decide(&order, &pay, &ids(&["A-1-1", "A-1-3"]), true, live),
            ConfirmDecision::TakeFree {
                release: ids(&["A-1-2"]),
                holds_are_live: true,
                on_failure: RefundReason::SeatsUnavailable
            }
        );
        // Within the guard margin or past expiry: a late payment.
        for now in [in_guard, expired] {
            assert_eq!(
                decide(&order, &pay, &ids(&["A-1-1"]), true, now),
                ConfirmDecision::TakeFree {
                    release: ids(&["A-1-2"]),
                    holds_are_live: false,
                    on_failure: RefundReason::OrderExpired
                }
            );
        }
        for status in [OrderStatus::Expired, OrderStatus::Cancelled] {
            let o = Order {
                status,
                ..order.clone()
            };
            assert!(matches!(
                decide(&o, &pay, &ids(&["A-1-1"]), true, live),
                ConfirmDecision::TakeFree {
                    on_failure: RefundReason::OrderExpired,
                    ..
                }
            ));
        }
        // Completed: the same payment is a replay, another is recorded for refund.
        let done = Order {
            status: OrderStatus::Completed,
            payment_id: Some(pay.clone()),
            ..order.clone()
        };
        assert_eq!(
            decide(&done, &pay, &ids(&["A-1-1"]), true, expired),
            ConfirmDecision::AlreadyCompleted
        );
        assert_eq!(
            decide(&done, &other, &ids(&["A-1-1"]), true, live),
            ConfirmDecision::RecordForRefund {
                refused: ConfirmRefusal::AlreadyCompleted
            }
        );
        // Refund due: the same answer, and another payment is recorded too.
        let due = Order {
            status: OrderStatus::RefundDue,
            payment_id: Some(pay.clone()),
            refund_reason: Some(RefundReason::SeatsUnavailable),
            ..order
        };
        let refused = ConfirmRefusal::Refund(RefundReason::SeatsUnavailable);
        assert_eq!(
            decide(&due, &pay, &ids(&["A-1-1"]), true, live),
            ConfirmDecision::Refused(refused)
        );
        assert_eq!(
            decide(&due, &other, &ids(&["A-1-1"]), true, live),
            ConfirmDecision::RecordForRefund { refused }
        );
        Ok(())
    }

    /// While only the waitlist's offers take seats, a payment its live
    /// holds cover sells as ever, on the last read too (still conditioned
    /// on the holds); every payment that would take free seats takes
    /// nothing and is refunded with the waitlist as its cause. What is
    /// decided without taking anything is unchanged.
    #[test]
    fn under_the_waitlist_only_sale_a_payment_outside_a_live_hold_takes_nothing() -> TestResult {
        let t0 = Millis(1_000_000);
        let pay = PaymentId::parse("pi_1")?;
        let order = pending(&["A-1-1", "A-1-2"], t0)?;
        let live = Millis(t0.0 + 1000);
        let expired = order.expires_at;
        let done = Order {
            status: OrderStatus::Completed,
            payment_id: Some(pay.clone()),
            ..order.clone()
        };
        let under = |order: &Order, paid: &[&str], held: bool, now: Millis, round| {
            let context = ConfirmContext {
                now,
                round,
                waitlist_only: true,
            };
            decide_confirm(order, &pay, &ids(paid), held, context)
        };
        let ordinary = ConfirmRound::Ordinary;
        let cases = [
            (
                under(&order, &["A-1-1"], true, live, ordinary),
                ConfirmDecision::SellHeld {
                    release: ids(&["A-1-2"]),
                },
            ),
            (
                under(&order, &["A-1-1", "A-1-3"], true, live, ordinary),
                ConfirmDecision::Refund {
                    reason: RefundReason::SeatsUnavailableWaitlist,
                    holds_are_live: true,
                },
            ),
            (
                under(&order, &["A-1-1"], false, live, ordinary),
                ConfirmDecision::Refund {
                    reason: RefundReason::SeatsUnavailableWaitlist,
                    holds_are_live: true,
                },
            ),
            (
                under(&order, &["A-1-1"], true, expired, ordinary),
                ConfirmDecision::Refund {
                    reason: RefundReason::OrderExpiredWaitlist,
                    holds_are_live: false,
                },
            ),
            (
                under(&order, &["A-1-1"], true, live, ConfirmRound::Last),
                ConfirmDecision::SellHeld {
                    release: ids(&["A-1-2"]),
                },
            ),
            (
                under(&order, &["A-1-1", "A-1-3"], true, live, ConfirmRound::Last),
                ConfirmDecision::Refund {
                    reason: RefundReason::SeatsUnavailableWaitlist,
                    holds_are_live: false,
                },
            ),
            (
                under(&done, &["A-1-1"], true, live, ordinary),
                ConfirmDecision::AlreadyCompleted,
            ),
        ];
        for (i, (decided, expected)) in cases.into_iter().enumerate() {
            assert_eq!(decided, expected, "case {i}");
        }
        Ok(())
    }

    /// The last read of the order: whatever the order holds, the payment
    /// is recorded, and holds are let go of after the transaction. Every
    /// other decision is the ordinary one.
    #[test]
    fn on_the_last_read_no_hold_condition_can_keep_a_payment_out() -> TestResult {
        let t0 = Millis(1_000_000);
        let pay = PaymentId::parse("pi_1")?;
        let other = PaymentId::parse("pi_2")?;
        let order = pending(&["A-1-1", "A-1-2"], t0)?;
        let live = Millis(t0.0 + 1000);
        let done = Order {
            status: OrderStatus::Completed,
            payment_id: Some(pay.clone()),
            ..order.clone()
        };
        let last = |order: &Order, payment: &PaymentId, paid: &[&str], held: bool| {
            let context = ConfirmContext {
                now: live,
                round: ConfirmRound::Last,
                waitlist_only: false,
            };
            decide_confirm(order, payment, &ids(paid), held, context)
        };
        let cases = [
            // (what the ordinary read decides, what the last read decides)
            (
                decide(&order, &pay, &ids(&["A-1-1"]), true, live),
                last(&order, &pay, &["A-1-1"], true),
                ConfirmDecision::TakeFree {
                    release: ids(&["A-1-2"]),
                    holds_are_live: false,
                    on_failure: RefundReason::SeatsUnavailable,
                },
            ),
            (
                decide(&order, &pay, &ids(&["A-1-1", "A-1-3"]), true, live),
                last(&order, &pay, &["A-1-1", "A-1-3"], true),
                ConfirmDecision::TakeFree {
                    release: ids(&["A-1-2"]),
                    holds_are_live: false,
                    on_failure: RefundReason::SeatsUnavailable,
                },
            ),
            (
                decide(&done, &pay, &ids(&["A-1-1"]), true, live),
                last(&done, &pay, &["A-1-1"], true),
                ConfirmDecision::AlreadyCompleted,
            ),
            (
                decide(&done, &other, &ids(&["A-1-1"]), true, live),
                last(&done, &other, &["A-1-1"], true),
                ConfirmDecision::RecordForRefund {
                    refused: ConfirmRefusal::AlreadyCompleted,
                },
            ),
        ];
        for (ordinary, on_last, expected) in cases {
            assert_eq!(on_last, expected, "after the ordinary {ordinary:?}");
        }
        let expired = Order {
            status: OrderStatus::Expired,
            ..order.clone()
        };
        assert_eq!(
            last(&expired, &pay, &["A-1-1"], true),
            decide(&expired, &pay, &ids(&["A-1-1"]), true, live),
            "a late payment is decided alike on every read"
        );
        Ok(())
    }
}
