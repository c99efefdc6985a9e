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
use crate::http::{request_deadline, serve};
use crate::App;

mod table;
pub use table::{
    ADMISSION_KEYS, ADMIT_VISITORS, AVAILABILITY, BEST_AVAILABLE, CANCEL_ORDER, CONFIRM,
    CREATE_EVENT, CREATE_ORDER, DROP_SEAT, EXPIRE_HOLDS, EXTEND_ORDER, FUNCTIONS, GET_EVENT,
    GET_ORDER, GET_QUEUE, GET_SEAT, GET_WAITLIST, HOLD_GA, LIST_SEATS, OFFER_WAITLISTS,
    ORDER_RETURNS, PROJECT_SEAT_MAP, PUBLISH_EVENTS, QUEUE_ADMIN, QUEUE_VISITORS, STRIPE_PAYMENT,
    WAITLIST_ADMIN, WAITLIST_ENTRIES,
};

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
/// router; API Gateway's own 404 in AWS), a busy store, secrets past their
/// age (a function that reads some; `crate::live`), and a failure of ours.
pub const EVERY_ROUTE_ERRORS: &[E] = &[
    E::BadRequest,
    E::RouteNotFound,
    E::StoreUnavailable,
    E::SecretsUnavailable,
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
/// `<Name>Function` resource in template.yaml, and in events/ one sample
/// per route, or one `events/<name>.json` when it is not on HTTP
/// ([`sample_names`]).
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

/// API Gateway's name of a route, `GET /events/{eventId}/queue/draw`: the
/// `routeKey` it sends with each request it routes.
pub fn route_key(route: &Route) -> String {
    format!("{} {}", route.method, route.path)
}

/// The route of `function` a request is for. API Gateway names it in the
/// request's `routeKey`, so a function of several routes on one method
/// (get-queue's two GETs) still reaches the right one. Without a key (a
/// hand-written invoke, or `$default`), the method and path choose as API
/// Gateway would, the path perhaps behind a stage's prefix; a function of
/// one route then takes any request (API Gateway sends it no other).
pub fn route_of(
    function: &'static Function,
    route_key: Option<&str>,
    method: &str,
    path: &str,
) -> Result<&'static Route, Error> {
    let routes = function.routes();
    if let Some(key) = route_key.filter(|k| !k.is_empty() && *k != "$default") {
        return routes
            .iter()
            .find(|r| self::route_key(r) == key)
            .ok_or_else(|| Error::RouteNotFound {
                method: method.to_owned(),
                path: path.to_owned(),
            });
    }
    let of_function = || routes.iter().map(|r| (function, r));
    let unstaged = path
        .strip_prefix('/')
        .and_then(|p| p.find('/').map(|at| &p[at..]));
    let found = match (find(of_function(), method, path), unstaged) {
        (Err(Error::RouteNotFound { .. }), Some(rest)) => find(of_function(), method, rest),
        (found, _) => found,
    };
    found.map(|m| m.route).or_else(|err| match (routes, err) {
        ([only], Error::RouteNotFound { .. }) => Ok(only),
        (_, err) => Err(err),
    })
}

/// The name of each file in events/: one sample request per HTTP route
/// (the route's name), one sample event per other function (its name).
pub fn sample_names() -> impl Iterator<Item = (&'static Function, &'static str)> {
    FUNCTIONS.iter().flat_map(|f| {
        let names: Vec<&'static str> = match f.trigger {
            Trigger::Http(routes) => routes.iter().map(|r| r.name).collect(),
            Trigger::Schedule | Trigger::Stream => vec![f.name],
        };
        names.into_iter().map(move |name| (*f, name))
    })
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

    /// Tests use `?` rather than unwrap: a failure reports the error.
    type TestResult = Result<(), Box<dyn std::error::Error>>;

    #[test]
    fn resolves_routes_and_parameters() -> TestResult {
        let found = resolve("POST", "/orders/o1/seats/A-1-2")?;
        assert_eq!(found.route.name, "get-seat");
        assert_eq!(found.function.name, "get-seat");
        assert_eq!(found.params["orderId"], "o1");
        assert_eq!(found.params["seatId"], "A-1-2");
        let found = resolve("DELETE", "/orders/o1/seats/A-1-2")?;
        assert_eq!(found.route.name, "drop-seat");
        let found = resolve("DELETE", "/events/e1/queue")?;
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
        Ok(())
    }

    /// Get-queue's two GET routes, told apart by API Gateway's route key;
    /// without one, by the path (a stage's prefix allowed).
    #[test]
    fn a_function_picks_its_route_by_route_key_then_by_path() {
        let name = |r: Result<&Route, Error>| r.map(|r| r.name).map_err(|e| e.kind());
        let draw = "/events/e1/queue/draw";
        /// A function, the key sent, the method and path, and the route.
        type Case<'a> = (
            &'a Function,
            Option<&'a str>,
            &'a str,
            &'a str,
            Result<&'a str, E>,
        );
        let cases: &[Case] = &[
            (
                &GET_QUEUE,
                Some("GET /events/{eventId}/queue/draw"),
                "GET",
                draw,
                Ok("draw-list"),
            ),
            (
                &GET_QUEUE,
                Some("GET /events/{eventId}/queue"),
                "GET",
                "/events/e1/queue",
                Ok("get-queue"),
            ),
            // The key decides, whatever the path says.
            (
                &GET_QUEUE,
                Some("GET /events/{eventId}/queue/draw"),
                "GET",
                "/x",
                Ok("draw-list"),
            ),
            (&GET_QUEUE, None, "GET", draw, Ok("draw-list")),
            (&GET_QUEUE, Some("$default"), "GET", draw, Ok("draw-list")),
            (
                &GET_QUEUE,
                None,
                "GET",
                "/prod/events/e1/queue/draw",
                Ok("draw-list"),
            ),
            (&GET_QUEUE, None, "GET", "/events/e1/queue", Ok("get-queue")),
            (&GET_QUEUE, None, "POST", draw, Err(E::MethodNotAllowed)),
            (&GET_QUEUE, None, "GET", "/events/e1", Err(E::RouteNotFound)),
            // Another function's key is not this function's route.
            (
                &GET_QUEUE,
                Some("PUT /events/{eventId}/queue"),
                "PUT",
                "/events/e1/queue",
                Err(E::RouteNotFound),
            ),
            (
                &QUEUE_ADMIN,
                Some("DELETE /events/{eventId}/queue"),
                "DELETE",
                "/",
                Ok("delete-queue"),
            ),
            (
                &QUEUE_ADMIN,
                None,
                "DELETE",
                "/events/e1/queue",
                Ok("delete-queue"),
            ),
            (
                &QUEUE_VISITORS,
                None,
                "GET",
                "/events/e1/queue/visitors/v1",
                Ok("visitor-status"),
            ),
            // One route: any request API Gateway sends it.
            (&GET_EVENT, None, "GET", "/anything", Ok("get-event")),
            (
                &GET_EVENT,
                Some("GET /events/{eventId}"),
                "GET",
                "/events/e1",
                Ok("get-event"),
            ),
        ];
        for (function, key, method, path, want) in cases {
            assert_eq!(
                name(route_of(function, *key, method, path)),
                *want,
                "{} {key:?} {method} {path}",
                function.name
            );
        }
    }

    #[test]
    fn every_route_and_other_function_has_one_sample_name() {
        let names: Vec<&str> = sample_names().map(|(_, n)| n).collect();
        let unique: std::collections::BTreeSet<&str> = names.iter().copied().collect();
        assert_eq!(names.len(), unique.len());
        assert_eq!(names.len(), routes().count() + 5, "5 functions not on HTTP");
        assert!(names.contains(&"draw-list") && names.contains(&"expire-holds"));
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
