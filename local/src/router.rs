//! The API's routes as API Gateway has them: the dev server and the tests
//! route through here to the handlers of `shared::routes`.

use std::collections::HashMap;

use lambda_http::aws_lambda_events::apigw::ApiGatewayV2httpRequestContext;
use lambda_http::request::RequestContext;
use lambda_http::{Body, Request, RequestExt, Response};
use shared::http::{request_deadline, serve};
use shared::routes::{resolve, route_key};
use shared::App;

/// Routes a request as API Gateway would (`shared::routes`): path
/// parameters and query string parameters filled in, then its route's
/// handler, exactly as its function's Lambda binary calls it. The reply is
/// recorded for the spec check when the tests ask ([`crate::replies`]).
pub async fn dispatch(app: &App, req: Request) -> Response<Body> {
    let (method, uri) = (req.method().as_str().to_owned(), req.uri().to_string());
    let reply = route(app, req).await;
    crate::replies::record(&method, &uri, &reply);
    reply
}

async fn route(app: &App, req: Request) -> Response<Body> {
    let matched = match resolve(req.method().as_str(), req.uri().path()) {
        Ok(matched) => matched,
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
    // The route's key, as API Gateway names the route it matched: the
    // function then picks it exactly as its Lambda binary does.
    let mut context = ApiGatewayV2httpRequestContext::default();
    context.route_key = Some(route_key(matched.route));
    let req = req
        .with_path_parameters(matched.params)
        .with_query_string_parameters(query)
        .with_request_context(RequestContext::ApiGatewayV2(context));
    // Each function runs as its own instance (caches of its own, as its
    // own Lambda has); in tests its requests are recorded as its own.
    let app = &crate::iam::attributed(app, matched.function.name);
    // Boxed: the handlers' futures together are large, and a test that
    // awaits many requests in one async fn would carry them on its stack.
    Box::pin(shared::lambda::answer_as(matched.function, app, req)).await
}

/// A request as its function's Lambda binary receives it (path parameters
/// set, as in events/*.json), answered as that binary answers it.
pub async fn call(function: &'static str, app: &App, req: Request) -> Response<Body> {
    let (method, uri) = (req.method().as_str().to_owned(), req.uri().to_string());
    let function = shared::routes::function(function);
    let app = &crate::iam::attributed(app, function.name);
    let reply = Box::pin(shared::lambda::answer_as(function, app, req)).await;
    crate::replies::record(&method, &uri, &reply);
    reply
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
