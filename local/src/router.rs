//! The API's routes as API Gateway has them (template.yaml), mapped to the
//! shared handlers: the dev server and the tests route through here.

use std::collections::HashMap;

use lambda_http::{Body, Request, RequestExt, Response};
use shared::http::{error_response, request_deadline, serve};
use shared::{handlers, App, Error};

/// One HttpApi route: method, path template and the function serving it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    pub method: &'static str,
    pub path: &'static str,
    pub function: &'static str,
}

pub const ROUTES: &[Route] = &[
    Route {
        method: "PUT",
        path: "/events/{eventId}",
        function: "create-event",
    },
    Route {
        method: "GET",
        path: "/events/{eventId}",
        function: "get-event",
    },
    Route {
        method: "GET",
        path: "/events/{eventId}/seats",
        function: "list-seats",
    },
    Route {
        method: "GET",
        path: "/events/{eventId}/availability",
        function: "availability",
    },
    Route {
        method: "POST",
        path: "/events/{eventId}/orders",
        function: "create-order",
    },
    Route {
        method: "GET",
        path: "/orders/{orderId}",
        function: "get-order",
    },
    Route {
        method: "DELETE",
        path: "/orders/{orderId}",
        function: "cancel-order",
    },
    Route {
        method: "POST",
        path: "/orders/{orderId}/extend",
        function: "extend-order",
    },
    Route {
        method: "POST",
        path: "/orders/{orderId}/best-available",
        function: "best-available",
    },
    Route {
        method: "PUT",
        path: "/orders/{orderId}/ga/{sectionId}",
        function: "hold-ga",
    },
    Route {
        method: "POST",
        path: "/orders/{orderId}/seats/{seatId}",
        function: "get-seat",
    },
    Route {
        method: "DELETE",
        path: "/orders/{orderId}/seats/{seatId}",
        function: "drop-seat",
    },
    Route {
        method: "POST",
        path: "/orders/{orderId}/confirm",
        function: "confirm",
    },
    Route {
        method: "PUT",
        path: "/events/{eventId}/queue",
        function: "queue-admin",
    },
    Route {
        method: "DELETE",
        path: "/events/{eventId}/queue",
        function: "queue-admin",
    },
    Route {
        method: "GET",
        path: "/events/{eventId}/queue",
        function: "get-queue",
    },
    Route {
        method: "POST",
        path: "/events/{eventId}/queue/visitors",
        function: "queue-visitors",
    },
    Route {
        method: "GET",
        path: "/events/{eventId}/queue/visitors/{visitorId}",
        function: "queue-visitors",
    },
    Route {
        method: "GET",
        path: "/.well-known/jwks.json",
        function: "admission-keys",
    },
];

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

/// The route for a request, with its path parameters; 404 for an unknown
/// path, 405 for a known path with another method.
pub fn resolve(method: &str, path: &str) -> Result<(Route, HashMap<String, String>), Error> {
    let mut allowed = Vec::new();
    for route in ROUTES {
        if let Some(params) = match_path(route.path, path) {
            if route.method.eq_ignore_ascii_case(method) {
                return Ok((*route, params));
            }
            allowed.push(route.method);
        }
    }
    if !allowed.is_empty() {
        Err(Error::MethodNotAllowed {
            method: method.to_owned(),
            allow: allowed.join(", "),
        })
    } else {
        Err(Error::RouteNotFound {
            method: method.to_owned(),
            path: path.to_owned(),
        })
    }
}

/// Calls the handler of `function`, exactly as its Lambda binary does.
pub async fn call(function: &'static str, app: &App, req: Request) -> Response<Body> {
    // Each function runs as its own instance (caches of its own, as its
    // own Lambda has); in tests its requests are recorded as its own.
    let app = &crate::iam::attributed(app, function);
    let reply = match function {
        "create-event" => handlers::create_event(app, req).await,
        "get-event" => handlers::get_event(app, req).await,
        "list-seats" => handlers::list_seats(app, req).await,
        "availability" => handlers::availability(app, req).await,
        "create-order" => handlers::create_order(app, req).await,
        "get-order" => handlers::get_order(app, req).await,
        "cancel-order" => handlers::cancel_order(app, req).await,
        "extend-order" => handlers::extend_order(app, req).await,
        "best-available" => handlers::best_available(app, req).await,
        "hold-ga" => handlers::hold_ga(app, req).await,
        "get-seat" => handlers::get_seat(app, req).await,
        "drop-seat" => handlers::drop_seat(app, req).await,
        "confirm" => handlers::confirm(app, req).await,
        "queue-admin" => handlers::queue_admin(app, req).await,
        "get-queue" => handlers::get_queue(app, req).await,
        "queue-visitors" => handlers::queue_visitors(app, req).await,
        "admission-keys" => handlers::admission_keys(app, req).await,
        other => {
            return error_response(&Error::RouteNotFound {
                method: String::new(),
                path: other.to_owned(),
            })
        }
    };
    match reply {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

/// Routes a request as API Gateway would: path parameters and query
/// string parameters filled in, then the function's handler.
pub async fn dispatch(app: &App, req: Request) -> Response<Body> {
    let (route, params) = match resolve(req.method().as_str(), req.uri().path()) {
        Ok(found) => found,
        Err(err) => {
            return serve(
                "unmatched",
                &req,
                request_deadline(&req, shared::config::DEFAULT_REQUEST_BUDGET_MS),
                async { Err(err) },
            )
            .await
        }
    };
    let query: HashMap<String, Vec<String>> = req
        .uri()
        .query()
        .map(|q| {
            let mut map: HashMap<String, Vec<String>> = HashMap::new();
            for (k, v) in form_urlencoded::parse(q.as_bytes()) {
                map.entry(k.into_owned()).or_default().push(v.into_owned());
            }
            map
        })
        .unwrap_or_default();
    let req = req
        .with_path_parameters(params)
        .with_query_string_parameters(query);
    // Boxed: the handlers' futures together are large, and a test that
    // awaits many requests in one async fn would carry them on its stack.
    Box::pin(call(route.function, app, req)).await
}

/// Builds a request as a client would send it (tests, benchmarks, and the
/// dev server's pay route).
pub fn request(
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
    body: impl Into<Body>,
) -> Request {
    let mut builder = lambda_http::http::Request::builder()
        .method(method)
        .uri(uri);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    // The methods, paths and header names come from literals and validated
    // ids; header values are ASCII (tokens, signatures, numbers).
    builder.body(body.into()).expect("a well-formed request")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_routes_and_parameters() {
        let (route, params) = resolve("POST", "/orders/o1/seats/A-1-2").unwrap();
        assert_eq!(route.function, "get-seat");
        assert_eq!(params["orderId"], "o1");
        assert_eq!(params["seatId"], "A-1-2");
        assert_eq!(
            resolve("DELETE", "/orders/o1/seats/A-1-2")
                .unwrap()
                .0
                .function,
            "drop-seat"
        );
        assert!(matches!(
            resolve("PATCH", "/orders/o1"),
            Err(Error::MethodNotAllowed { .. })
        ));
        assert!(matches!(
            resolve("GET", "/nope"),
            Err(Error::RouteNotFound { .. })
        ));
        assert!(matches!(
            resolve("GET", "/orders/"),
            Err(Error::RouteNotFound { .. })
        ));
        assert!(matches!(
            resolve("GET", "/orders/o1/extra"),
            Err(Error::RouteNotFound { .. })
        ));
    }
}
