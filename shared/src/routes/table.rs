//! The table itself: each function's entry, with its routes, handlers,
//! needs and errors (see the module above for what each field means).

use super::{Function, Route, Trigger};
use crate::config::Needs;
use crate::error::ErrorKind as E;
use crate::handlers;

/// A route's handler as a [`Handler`]: the async fn, boxed.
macro_rules! handler {
    ($f:path) => {
        |app, req| Box::pin($f(app, req))
    };
}

/// `405` and `413` are answered by most routes that take a body or share a
/// path with another method; listed per route as docs/openapi.yaml has them.
const NOT_ALLOWED: E = E::MethodNotAllowed;
const TOO_LARGE: E = E::PayloadTooLarge;

pub const CREATE_EVENT: Function = http(
    "create-event",
    Needs::EVENT_CREATION,
    &[Route {
        name: "create-event",
        method: "PUT",
        path: "/events/{eventId}",
        errors: &[E::EventExists, TOO_LARGE],
        handler: handler!(handlers::events::create_event),
    }],
);

pub const GET_EVENT: Function = http(
    "get-event",
    Needs::STORE,
    &[Route {
        name: "get-event",
        method: "GET",
        path: "/events/{eventId}",
        errors: &[E::EventNotFound, NOT_ALLOWED],
        handler: handler!(handlers::events::get_event),
    }],
);

pub const LIST_SEATS: Function = http(
    "list-seats",
    Needs::STORE,
    &[Route {
        name: "list-seats",
        method: "GET",
        path: "/events/{eventId}/seats",
        errors: &[E::EventNotFound, E::SectionNotFound, NOT_ALLOWED],
        handler: handler!(handlers::events::list_seats),
    }],
);

pub const AVAILABILITY: Function = http(
    "availability",
    Needs::STORE,
    &[Route {
        name: "availability",
        method: "GET",
        path: "/events/{eventId}/availability",
        errors: &[E::EventNotFound, NOT_ALLOWED],
        handler: handler!(handlers::events::availability),
    }],
);

pub const CREATE_ORDER: Function = http(
    "create-order",
    Needs::ORDER_OPENING,
    &[Route {
        name: "create-order",
        method: "POST",
        path: "/events/{eventId}/orders",
        errors: &[
            E::EventNotFound,
            TOO_LARGE,
            NOT_ALLOWED,
            E::Unauthorized,
            E::QueueRequired,
            E::WaitlistOnly,
            E::AdmissionUsed,
            E::IdempotencyKeyReused,
            E::BuyerTokenRequired,
            E::BuyerTokenInvalid,
        ],
        handler: handler!(handlers::orders::create_order),
    }],
);

pub const GET_ORDER: Function = http(
    "get-order",
    Needs::HOLDER,
    &[Route {
        name: "get-order",
        method: "GET",
        path: "/orders/{orderId}",
        errors: &[E::Unauthorized, E::OrderNotFound],
        handler: handler!(handlers::orders::get_order),
    }],
);

pub const CANCEL_ORDER: Function = http(
    "cancel-order",
    Needs::HOLDER,
    &[Route {
        name: "cancel-order",
        method: "DELETE",
        path: "/orders/{orderId}",
        errors: &[
            E::Unauthorized,
            E::OrderNotFound,
            E::OrderNotCancellable,
            NOT_ALLOWED,
        ],
        handler: handler!(handlers::orders::cancel_order),
    }],
);

pub const EXTEND_ORDER: Function = http(
    "extend-order",
    Needs::HOLDER,
    &[Route {
        name: "extend-order",
        method: "POST",
        path: "/orders/{orderId}/extend",
        errors: &[
            E::Unauthorized,
            E::OrderNotFound,
            E::HoldLimit,
            E::OrderNotHoldable,
            NOT_ALLOWED,
        ],
        handler: handler!(handlers::orders::extend_order),
    }],
);

pub const BEST_AVAILABLE: Function = http(
    "best-available",
    Needs::HOLDER,
    &[Route {
        name: "best-available",
        method: "POST",
        path: "/orders/{orderId}/best-available",
        errors: &[
            TOO_LARGE,
            E::Unauthorized,
            E::OrderNotFound,
            E::SectionNotFound,
            E::NotEnoughSeats,
            E::WaitlistOnly,
            E::OrderNotHoldable,
            E::SeatLimit,
            E::BuyerLimit,
            E::IdempotencyKeyReused,
            NOT_ALLOWED,
        ],
        handler: handler!(handlers::best_available::best_available),
    }],
);

pub const HOLD_GA: Function = http(
    "hold-ga",
    Needs::HOLDER,
    &[Route {
        name: "hold-ga",
        method: "PUT",
        path: "/orders/{orderId}/ga/{sectionId}",
        errors: &[
            E::Unauthorized,
            E::OrderNotFound,
            E::SectionNotFound,
            E::SoldOut,
            E::WaitlistOnly,
            E::OrderNotHoldable,
            E::SeatLimit,
            E::BuyerLimit,
            TOO_LARGE,
            NOT_ALLOWED,
        ],
        handler: handler!(handlers::places::hold_ga),
    }],
);

pub const GET_SEAT: Function = http(
    "get-seat",
    Needs::HOLDER,
    &[Route {
        name: "get-seat",
        method: "POST",
        path: "/orders/{orderId}/seats/{seatId}",
        errors: &[
            E::Unauthorized,
            E::OrderNotFound,
            E::SeatNotFound,
            E::SeatHeld,
            E::SeatSold,
            E::WaitlistOnly,
            E::OrderNotHoldable,
            E::SeatLimit,
            E::BuyerLimit,
            NOT_ALLOWED,
        ],
        handler: handler!(handlers::seats::get_seat),
    }],
);

pub const DROP_SEAT: Function = http(
    "drop-seat",
    Needs::HOLDER,
    &[Route {
        name: "drop-seat",
        method: "DELETE",
        path: "/orders/{orderId}/seats/{seatId}",
        errors: &[
            E::Unauthorized,
            E::OrderNotFound,
            E::SeatNotFound,
            E::SeatNotHeld,
            E::OrderNotHoldable,
            NOT_ALLOWED,
        ],
        handler: handler!(handlers::seats::drop_seat),
    }],
);

pub const CONFIRM: Function = http(
    "confirm",
    Needs::CONFIRM,
    &[Route {
        name: "confirm",
        method: "POST",
        path: "/orders/{orderId}/confirm",
        errors: &[
            E::Unauthorized,
            E::OrderNotFound,
            E::AlreadyCompleted,
            E::OrderExpired,
            E::SeatsUnavailable,
            E::PaymentReused,
            TOO_LARGE,
            NOT_ALLOWED,
        ],
        handler: handler!(handlers::confirm::confirm),
    }],
);

/// Stripe's webhook: the same sale as confirm's, so a seller paid through
/// Stripe Checkout runs no relay. Its final answers are `200` receipts
/// (Stripe retries anything else), so confirm's `409`s and an unknown
/// order's `404` are not among its errors.
pub const STRIPE_PAYMENT: Function = http(
    "stripe-payment",
    Needs::STRIPE_PAYMENT,
    &[Route {
        name: "stripe-payment",
        method: "POST",
        path: "/payments/stripe",
        errors: &[E::Unauthorized, TOO_LARGE, NOT_ALLOWED],
        handler: handler!(handlers::stripe::stripe_payment),
    }],
);

/// The waitlist's operator routes (IAM in AWS, as put-queue).
pub const WAITLIST_ADMIN: Function = http(
    "waitlist-admin",
    Needs::STORE,
    &[
        Route {
            name: "put-waitlist",
            method: "PUT",
            path: "/events/{eventId}/waitlist",
            errors: &[E::EventNotFound, E::WaitlistOpen, TOO_LARGE, NOT_ALLOWED],
            handler: handler!(handlers::waitlist::put_waitlist),
        },
        Route {
            name: "delete-waitlist",
            method: "DELETE",
            path: "/events/{eventId}/waitlist",
            errors: &[E::EventNotFound, NOT_ALLOWED],
            handler: handler!(handlers::waitlist::delete_waitlist),
        },
        Route {
            name: "list-entries",
            method: "GET",
            path: "/events/{eventId}/waitlist/entries",
            errors: &[E::EventNotFound, E::WaitlistNotFound, NOT_ALLOWED],
            handler: handler!(handlers::waitlist::list_entries),
        },
        Route {
            name: "remove-entry",
            method: "POST",
            path: "/events/{eventId}/waitlist/removals",
            errors: &[E::EventNotFound, E::EntryNotFound, TOO_LARGE, NOT_ALLOWED],
            handler: handler!(handlers::waitlist::remove_entry),
        },
    ],
);

/// The waitlist's buyer routes (public): the only function that derives
/// entry tokens.
pub const WAITLIST_ENTRIES: Function = http(
    "waitlist-entries",
    Needs::WAITLIST_ENTRIES,
    &[
        Route {
            name: "join-waitlist",
            method: "POST",
            path: "/events/{eventId}/waitlist/entries",
            errors: &[
                E::BuyerTokenRequired,
                E::BuyerTokenInvalid,
                E::EventNotFound,
                E::WaitlistNotFound,
                E::SectionNotFound,
                E::WaitlistNotOpen,
                E::WaitlistEnded,
                E::BuyerLimit,
                TOO_LARGE,
                NOT_ALLOWED,
            ],
            handler: handler!(handlers::waitlist_entries::join_waitlist),
        },
        Route {
            name: "entry-status",
            method: "GET",
            path: "/events/{eventId}/waitlist/entries/{entryId}",
            errors: &[E::Unauthorized, E::EntryNotFound, NOT_ALLOWED],
            handler: handler!(handlers::waitlist_entries::entry_status),
        },
        Route {
            name: "leave-waitlist",
            method: "DELETE",
            path: "/events/{eventId}/waitlist/entries/{entryId}",
            errors: &[E::Unauthorized, E::EntryNotFound, NOT_ALLOWED],
            handler: handler!(handlers::waitlist_entries::leave_waitlist),
        },
    ],
);

/// A buyer's returns to the waitlist: list, and withdraw a seat's or a
/// section's listing.
pub const ORDER_RETURNS: Function = http(
    "order-returns",
    Needs::RETURNS,
    &[
        Route {
            name: "list-returns",
            method: "POST",
            path: "/orders/{orderId}/returns",
            errors: &[
                E::Unauthorized,
                E::BuyerTokenRequired,
                E::BuyerTokenInvalid,
                E::OrderNotFound,
                E::SeatNotFound,
                E::SectionNotFound,
                E::ReturnsClosed,
                E::ReturnNotOwned,
                E::ReturnOffered,
                TOO_LARGE,
                NOT_ALLOWED,
            ],
            handler: handler!(handlers::returns::list_returns),
        },
        Route {
            name: "withdraw-return",
            method: "DELETE",
            path: "/orders/{orderId}/returns/{seatId}",
            errors: &[
                E::Unauthorized,
                E::BuyerTokenRequired,
                E::BuyerTokenInvalid,
                E::OrderNotFound,
                E::SeatNotFound,
                E::ReturnNotOwned,
                E::ReturnOffered,
                NOT_ALLOWED,
            ],
            handler: handler!(handlers::returns::withdraw_seat),
        },
        Route {
            name: "withdraw-return-ga",
            method: "DELETE",
            path: "/orders/{orderId}/returns/ga/{sectionId}",
            errors: &[
                E::Unauthorized,
                E::BuyerTokenRequired,
                E::BuyerTokenInvalid,
                E::OrderNotFound,
                E::SectionNotFound,
                E::ReturnNotOwned,
                E::ReturnOffered,
                NOT_ALLOWED,
            ],
            handler: handler!(handlers::returns::withdraw_places),
        },
    ],
);

pub const GET_WAITLIST: Function = http(
    "get-waitlist",
    Needs::STORE,
    &[Route {
        name: "get-waitlist",
        method: "GET",
        path: "/events/{eventId}/waitlist",
        errors: &[E::WaitlistNotFound, NOT_ALLOWED],
        handler: handler!(handlers::waitlist::get_waitlist),
    }],
);

pub const QUEUE_ADMIN: Function = http(
    "queue-admin",
    Needs::QUEUE_READS,
    &[
        Route {
            name: "put-queue",
            method: "PUT",
            path: "/events/{eventId}/queue",
            errors: &[E::EventNotFound, E::QueueOpen, TOO_LARGE, NOT_ALLOWED],
            handler: handler!(handlers::queue::put_queue),
        },
        Route {
            name: "delete-queue",
            method: "DELETE",
            path: "/events/{eventId}/queue",
            errors: &[E::EventNotFound],
            handler: handler!(handlers::queue::delete_queue),
        },
    ],
);

pub const GET_QUEUE: Function = http(
    "get-queue",
    Needs::QUEUE_READS,
    &[
        Route {
            name: "get-queue",
            method: "GET",
            path: "/events/{eventId}/queue",
            errors: &[E::EventNotFound, E::QueueNotFound],
            handler: handler!(handlers::queue::get_queue),
        },
        Route {
            name: "draw-list",
            method: "GET",
            path: "/events/{eventId}/queue/draw",
            errors: &[E::EventNotFound, E::QueueNotFound, E::DrawNotDisclosed],
            handler: handler!(handlers::draw::draw_list),
        },
    ],
);

pub const QUEUE_VISITORS: Function = http(
    "queue-visitors",
    Needs::VISITORS,
    &[
        Route {
            name: "join-queue",
            method: "POST",
            path: "/events/{eventId}/queue/visitors",
            errors: &[
                E::BuyerTokenRequired,
                E::BuyerTokenInvalid,
                E::EventNotFound,
                E::QueueNotFound,
                TOO_LARGE,
                NOT_ALLOWED,
            ],
            handler: handler!(handlers::visitors::join_queue),
        },
        Route {
            name: "visitor-status",
            method: "GET",
            path: "/events/{eventId}/queue/visitors/{visitorId}",
            errors: &[
                E::Unauthorized,
                E::EventNotFound,
                E::VisitorNotFound,
                NOT_ALLOWED,
            ],
            handler: handler!(handlers::visitors::visitor_status),
        },
    ],
);

pub const ADMISSION_KEYS: Function = http(
    "admission-keys",
    Needs::ADMISSION_VERIFY,
    &[Route {
        name: "admission-keys",
        method: "GET",
        path: "/.well-known/jwks.json",
        errors: &[NOT_ALLOWED],
        handler: handler!(handlers::queue::admission_keys),
    }],
);

pub const EXPIRE_HOLDS: Function = Function {
    name: "expire-holds",
    needs: Some(Needs::STORE),
    trigger: Trigger::Schedule,
};

pub const ADMIT_VISITORS: Function = Function {
    name: "admit-visitors",
    needs: Some(Needs::STORE),
    trigger: Trigger::Schedule,
};

pub const OFFER_WAITLISTS: Function = Function {
    name: "offer-waitlists",
    needs: Some(Needs::OFFERER),
    trigger: Trigger::Schedule,
};

pub const PROJECT_SEAT_MAP: Function = Function {
    name: "project-seat-map",
    needs: Some(Needs::STORE),
    trigger: Trigger::Stream,
};

pub const PUBLISH_EVENTS: Function = Function {
    name: "publish-events",
    needs: None,
    trigger: Trigger::Stream,
};

/// Every function, in the order the docs list them.
pub const FUNCTIONS: &[&Function] = &[
    &CREATE_EVENT,
    &GET_EVENT,
    &LIST_SEATS,
    &AVAILABILITY,
    &CREATE_ORDER,
    &GET_ORDER,
    &EXTEND_ORDER,
    &CANCEL_ORDER,
    &BEST_AVAILABLE,
    &HOLD_GA,
    &GET_SEAT,
    &DROP_SEAT,
    &CONFIRM,
    &STRIPE_PAYMENT,
    &EXPIRE_HOLDS,
    &PROJECT_SEAT_MAP,
    &PUBLISH_EVENTS,
    &QUEUE_ADMIN,
    &GET_QUEUE,
    &QUEUE_VISITORS,
    &ADMISSION_KEYS,
    &ADMIT_VISITORS,
    &WAITLIST_ADMIN,
    &GET_WAITLIST,
    &WAITLIST_ENTRIES,
    &OFFER_WAITLISTS,
    &ORDER_RETURNS,
];

const fn http(name: &'static str, needs: Needs, routes: &'static [Route]) -> Function {
    Function {
        name,
        needs: Some(needs),
        trigger: Trigger::Http(routes),
    }
}
