//! Every Lambda function and every HTTP route, in one table: the name, the
//! method and path API Gateway routes, the handler, what the function
//! needs at start-up and the errors each route can answer.
//!
//! Everything else is derived from it or checked against it: the Lambda
//! entry points ([`crate::lambda`]) and the dev server's router route
//! through it; the tests hold template.yaml, docs/openapi.yaml, events/,
//! the Makefile and the cold-start script to it. Adding a route is one
//! entry here (docs/CONTRIBUTING.md, "Adding a route").

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;

use lambda_http::{Body, Request, Response};

use crate::config::Needs;
use crate::error::{Error, ErrorKind as E};
use crate::handlers;
use crate::http::{request_deadline, serve};
use crate::App;

/// What a handler's work comes to before the one wrapper ([`answer`])
/// turns it into the contract's reply.
pub type HandlerFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Response<Body>, Error>> + Send + 'a>>;

/// A route's handler: the app and the request in, the reply or an error out.
pub type Handler = for<'a> fn(&'a App, &'a Request) -> HandlerFuture<'a>;

/// One HTTP API route.
#[derive(Debug)]
pub struct Route {
    /// Its name in logs and metrics (`route` dimension): the function's
    /// own, or for a function serving several routes, the route's.
    pub name: &'static str,
    pub method: &'static str,
    /// The path template as API Gateway has it: `/orders/{orderId}`.
    pub path: &'static str,
    /// The errors it can answer besides [`EVERY_ROUTE_ERRORS`].
    pub errors: &'static [E],
    pub handler: Handler,
}

/// What every route can answer: a bad request, no such route (the dev
/// router; API Gateway's own 404 in AWS), a busy store, and a failure of
/// ours.
pub const EVERY_ROUTE_ERRORS: &[E] = &[
    E::BadRequest,
    E::RouteNotFound,
    E::StoreUnavailable,
    E::Internal,
];

impl Route {
    /// Every error this route can answer.
    pub fn all_errors(&self) -> impl Iterator<Item = E> + '_ {
        EVERY_ROUTE_ERRORS.iter().chain(self.errors).copied()
    }
}

/// What starts a function.
#[derive(Debug)]
pub enum Trigger {
    /// API Gateway, on these routes.
    Http(&'static [Route]),
    /// An EventBridge schedule, every minute.
    Schedule,
    /// The table's DynamoDB stream.
    Stream,
}

/// One Lambda function: one binary (`functions/src/bin/<name>.rs`), one
/// `<Name>Function` resource in template.yaml, one `events/<name>.json`.
#[derive(Debug)]
pub struct Function {
    pub name: &'static str,
    /// What it reads at start-up; `None`: no store (it publishes events).
    pub needs: Option<Needs>,
    pub trigger: Trigger,
}

impl Function {
    /// Its HTTP routes (none for a scheduled or stream function).
    pub fn routes(&self) -> &'static [Route] {
        match self.trigger {
            Trigger::Http(routes) => routes,
            Trigger::Schedule | Trigger::Stream => &[],
        }
    }
}

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
    Needs::Store,
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
    Needs::Store,
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
    Needs::Store,
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
    Needs::Store,
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
    Needs::StoreAndVerifyKeys,
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
            E::AdmissionUsed,
        ],
        handler: handler!(handlers::orders::create_order),
    }],
);

pub const GET_ORDER: Function = http(
    "get-order",
    Needs::Store,
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
    Needs::Store,
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
    Needs::Store,
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
    Needs::Store,
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
            E::OrderNotHoldable,
            E::SeatLimit,
            NOT_ALLOWED,
        ],
        handler: handler!(handlers::seats::best_available),
    }],
);

pub const HOLD_GA: Function = http(
    "hold-ga",
    Needs::Store,
    &[Route {
        name: "hold-ga",
        method: "PUT",
        path: "/orders/{orderId}/ga/{sectionId}",
        errors: &[
            E::Unauthorized,
            E::OrderNotFound,
            E::SectionNotFound,
            E::SoldOut,
            E::OrderNotHoldable,
            E::SeatLimit,
            TOO_LARGE,
            NOT_ALLOWED,
        ],
        handler: handler!(handlers::places::hold_ga),
    }],
);

pub const GET_SEAT: Function = http(
    "get-seat",
    Needs::Store,
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
            E::OrderNotHoldable,
            E::SeatLimit,
            NOT_ALLOWED,
        ],
        handler: handler!(handlers::seats::get_seat),
    }],
);

pub const DROP_SEAT: Function = http(
    "drop-seat",
    Needs::Store,
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
    Needs::StoreAndConfirmSecret,
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

pub const QUEUE_ADMIN: Function = http(
    "queue-admin",
    Needs::Store,
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
    Needs::Store,
    &[Route {
        name: "get-queue",
        method: "GET",
        path: "/events/{eventId}/queue",
        errors: &[E::EventNotFound, E::QueueNotFound],
        handler: handler!(handlers::queue::get_queue),
    }],
);

pub const QUEUE_VISITORS: Function = http(
    "queue-visitors",
    Needs::StoreAndSigningKeys,
    &[
        Route {
            name: "join-queue",
            method: "POST",
            path: "/events/{eventId}/queue/visitors",
            errors: &[E::EventNotFound, E::QueueNotFound, TOO_LARGE, NOT_ALLOWED],
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
    Needs::StoreAndVerifyKeys,
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
    needs: Some(Needs::Store),
    trigger: Trigger::Schedule,
};

pub const ADMIT_VISITORS: Function = Function {
    name: "admit-visitors",
    needs: Some(Needs::Store),
    trigger: Trigger::Schedule,
};

pub const PROJECT_SEAT_MAP: Function = Function {
    name: "project-seat-map",
    needs: Some(Needs::Store),
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
    &EXPIRE_HOLDS,
    &PROJECT_SEAT_MAP,
    &PUBLISH_EVENTS,
    &QUEUE_ADMIN,
    &GET_QUEUE,
    &QUEUE_VISITORS,
    &ADMISSION_KEYS,
    &ADMIT_VISITORS,
];

const fn http(name: &'static str, needs: Needs, routes: &'static [Route]) -> Function {
    Function {
        name,
        needs: Some(needs),
        trigger: Trigger::Http(routes),
    }
}

/// The function named `name`, found at compile time: a binary names its
/// function by its own name (`env!("CARGO_BIN_NAME")`), so a binary
/// without an entry here does not build.
pub const fn function(name: &str) -> &'static Function {
    let mut i = 0;
    while i < FUNCTIONS.len() {
        if same(FUNCTIONS[i].name, name) {
            return FUNCTIONS[i];
        }
        i += 1;
    }
    panic!("no function of this name in shared::routes::FUNCTIONS")
}

const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Every HTTP route with its function.
pub fn routes() -> impl Iterator<Item = (&'static Function, &'static Route)> {
    FUNCTIONS
        .iter()
        .flat_map(|f| f.routes().iter().map(move |r| (*f, r)))
}

/// Matches a path against a template, returning its parameters.
fn match_path(template: &str, path: &str) -> Option<HashMap<String, String>> {
    let mut params = HashMap::new();
    let mut want = template.split('/');
    let mut got = path.split('/');
    loop {
        match (want.next(), got.next()) {
            (None, None) => return Some(params),
            (Some(w), Some(g)) => {
                if let Some(name) = w.strip_prefix('{').and_then(|w| w.strip_suffix('}')) {
                    if g.is_empty() {
                        return None;
                    }
                    params.insert(name.to_owned(), g.to_owned());
                } else if w != g {
                    return None;
                }
            }
            _ => return None,
        }
    }
}

/// A route the request matched, with its path parameters.
pub struct Matched {
    pub function: &'static Function,
    pub route: &'static Route,
    pub params: HashMap<String, String>,
}

/// The route of `candidates` for a request, as API Gateway matches it:
/// `404` for an unknown path, `405` for a known path with another method.
fn find(
    candidates: impl Iterator<Item = (&'static Function, &'static Route)>,
    method: &str,
    path: &str,
) -> Result<Matched, Error> {
    let mut allowed = Vec::new();
    for (function, route) in candidates {
        if let Some(params) = match_path(route.path, path) {
            if route.method.eq_ignore_ascii_case(method) {
                return Ok(Matched {
                    function,
                    route,
                    params,
                });
            }
            allowed.push(route.method);
        }
    }
    if allowed.is_empty() {
        Err(Error::RouteNotFound {
            method: method.to_owned(),
            path: path.to_owned(),
        })
    } else {
        Err(Error::MethodNotAllowed {
            method: method.to_owned(),
            allow: allowed.join(", "),
        })
    }
}

/// The route of any function for a request (the dev server's router).
pub fn resolve(method: &str, path: &str) -> Result<Matched, Error> {
    find(routes(), method, path)
}

/// The route of `function` for a request (its Lambda entry point: API
/// Gateway sends a function only its own routes).
pub fn resolve_in(function: &'static Function, method: &str, path: &str) -> Result<Matched, Error> {
    find(
        function.routes().iter().map(move |r| (function, r)),
        method,
        path,
    )
}

/// One request through its route's handler and the one wrapper every route
/// shares ([`serve`]): the request's deadline, the error's reply and
/// status, one log line and the request's metrics.
pub async fn answer(route: &'static Route, app: &App, req: Request) -> Response<Body> {
    let deadline = request_deadline(&req, app.config.request_budget_ms);
    serve(route.name, &req, deadline, (route.handler)(app, &req)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_routes_and_parameters() {
        let found = resolve("POST", "/orders/o1/seats/A-1-2").unwrap();
        assert_eq!(found.route.name, "get-seat");
        assert_eq!(found.function.name, "get-seat");
        assert_eq!(found.params["orderId"], "o1");
        assert_eq!(found.params["seatId"], "A-1-2");
        let found = resolve("DELETE", "/orders/o1/seats/A-1-2").unwrap();
        assert_eq!(found.route.name, "drop-seat");
        let found = resolve("DELETE", "/events/e1/queue").unwrap();
        assert_eq!(
            (found.function.name, found.route.name),
            ("queue-admin", "delete-queue")
        );
        assert!(matches!(
            resolve("PATCH", "/orders/o1"),
            Err(Error::MethodNotAllowed { allow, .. }) if allow == "GET, DELETE"
        ));
        for path in ["/nope", "/orders/", "/orders/o1/extra"] {
            assert!(
                matches!(resolve("GET", path), Err(Error::RouteNotFound { .. })),
                "{path}"
            );
        }
    }

    #[test]
    fn a_function_resolves_only_its_own_routes() {
        let found = resolve_in(&QUEUE_VISITORS, "GET", "/events/e1/queue/visitors/v1").unwrap();
        assert_eq!(found.route.name, "visitor-status");
        assert_eq!(found.params["visitorId"], "v1");
        assert!(matches!(
            resolve_in(&QUEUE_VISITORS, "GET", "/events/e1/queue"),
            Err(Error::RouteNotFound { .. })
        ));
        assert!(matches!(
            resolve_in(&GET_QUEUE, "PUT", "/events/e1/queue"),
            Err(Error::MethodNotAllowed { .. })
        ));
    }

    #[test]
    fn names_are_unique_and_found_at_compile_time() {
        let mut functions = std::collections::BTreeSet::new();
        let mut routes_seen = std::collections::BTreeSet::new();
        let mut names = std::collections::BTreeSet::new();
        for f in FUNCTIONS {
            assert!(functions.insert(f.name), "{}", f.name);
            assert_eq!(function(f.name).name, f.name);
            for route in f.routes() {
                assert!(
                    routes_seen.insert((route.method, route.path)),
                    "{}",
                    route.name
                );
                assert!(names.insert(route.name), "{}", route.name);
            }
        }
        const FOUND: &Function = function("hold-ga");
        assert_eq!(FOUND.routes()[0].path, "/orders/{orderId}/ga/{sectionId}");
    }

    #[test]
    fn every_route_lists_each_error_once() {
        for (function, route) in routes() {
            let errors: Vec<E> = route.all_errors().collect();
            let unique: std::collections::BTreeSet<E> = errors.iter().copied().collect();
            assert_eq!(
                errors.len(),
                unique.len(),
                "{} {}",
                function.name,
                route.name
            );
        }
    }
}
