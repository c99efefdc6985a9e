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
    GET_ORDER, GET_QUEUE, GET_SEAT, HOLD_GA, LIST_SEATS, PROJECT_SEAT_MAP, PUBLISH_EVENTS,
    QUEUE_ADMIN, QUEUE_VISITORS,
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
