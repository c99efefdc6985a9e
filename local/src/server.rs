//! The dev HTTP server: hyper in front of the router.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::ops::ControlFlow;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use lambda_http::Body;
use shared::http::{error_response, MAX_BODY_BYTES};
use shared::{App, Error};

use crate::feed::DevFeed;
use crate::secrets::GET_SECRET_VALUE_TARGET;
use tokio::net::TcpListener;

/// Serves until `shutdown` completes.
pub async fn run(listener: TcpListener, app: App, shutdown: impl Future<Output = ()>) {
    run_with_feed(listener, app, None, shutdown).await
}

/// [`run`], with the dev-only routes when there is a `feed`: the live
/// seat-map page at `/`, `GET /_dev/events?after=<n>` over `feed`,
/// EventBridge's `PutEvents` into it, Secrets Manager's `GetSecretValue`
/// of the development secrets (`crate::secrets`), `GET /_dev/catalog` and
/// `POST /_dev/pay/{orderId}` and `POST /_dev/buyer-token` (see
/// `dev_routes`).
pub async fn run_with_feed(
    listener: TcpListener,
    app: App,
    feed: Option<DevFeed>,
    shutdown: impl Future<Output = ()>,
) {
    tokio::pin!(shutdown);
    loop {
        let (stream, _peer): (_, SocketAddr) = tokio::select! {
            _ = &mut shutdown => return,
            accepted = listener.accept() => match accepted {
                Ok(conn) => conn,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    continue;
                }
            },
        };
        let (app, feed) = (app.clone(), feed.clone());
        tokio::spawn(async move {
            let service = service_fn(move |req| {
                let (app, feed) = (app.clone(), feed.clone());
                async move { Ok::<_, Infallible>(handle(&app, feed.as_ref(), req).await) }
            });
            if let Err(e) = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await
            {
                tracing::debug!(error = %e, "connection closed with an error");
            }
        });
    }
}

/// The API's OpenAPI document, as this binary was built with it.
pub const OPENAPI_YAML: &str = include_str!("../../docs/openapi.yaml");

/// EventBridge's JSON protocol target for `PutEvents`.
const PUT_EVENTS_TARGET: &str = "AWSEvents.PutEvents";

/// Serves one request: a dev-only route when there is a `feed` and the
/// request is one, the OpenAPI document, or the router.
async fn handle(
    app: &App,
    feed: Option<&DevFeed>,
    req: hyper::Request<Incoming>,
) -> hyper::Response<Full<Bytes>> {
    let req = match feed {
        Some(feed) => match dev_route(app, feed, req).await {
            ControlFlow::Break(response) => return response,
            ControlFlow::Continue(req) => req,
        },
        None => req,
    };
    if req.method() == hyper::Method::GET && req.uri().path() == "/openapi.yaml" {
        let mut response =
            hyper::Response::new(Full::new(Bytes::from_static(OPENAPI_YAML.as_bytes())));
        response.headers_mut().insert(
            hyper::header::CONTENT_TYPE,
            hyper::header::HeaderValue::from_static("application/yaml"),
        );
        return response;
    }
    let (parts, body) = req.into_parts();
    let Some(bytes) = collect_body(body).await else {
        return payload_too_large();
    };
    let body = if bytes.is_empty() {
        Body::Empty
    } else {
        match String::from_utf8(bytes.to_vec()) {
            Ok(text) => Body::Text(text),
            Err(e) => Body::Binary(e.into_bytes()),
        }
    };
    let req = lambda_http::http::Request::from_parts(parts, body);
    to_hyper(crate::router::dispatch(app, req).await)
}

/// The dev-only routes over `feed`: the page's files, the catalog, a
/// payment, the events and EventBridge's `PutEvents`. Any other request
/// comes back, to be served as on AWS.
async fn dev_route(
    app: &App,
    feed: &DevFeed,
    req: hyper::Request<Incoming>,
) -> ControlFlow<hyper::Response<Full<Bytes>>, hyper::Request<Incoming>> {
    let path = req.uri().path().to_owned();
    if req.method() == hyper::Method::GET {
        if let Some(file) = crate::dev_routes::page_file(&path) {
            return ControlFlow::Break(to_hyper(file));
        }
        if path == "/_dev/catalog" {
            return ControlFlow::Break(json_response(
                hyper::StatusCode::OK,
                &feed.catalog(),
                "application/json",
            ));
        }
    }
    if path == "/_dev/buyer-token" && req.method() == hyper::Method::POST {
        let Some(bytes) = collect_body(req.into_body()).await else {
            return ControlFlow::Break(payload_too_large());
        };
        return ControlFlow::Break(to_hyper(crate::dev_routes::buyer_token(app, &bytes)));
    }
    if let Some(order) = path
        .strip_prefix("/_dev/pay/")
        .filter(|_| req.method() == hyper::Method::POST)
    {
        let order = order.to_owned();
        let Some(bytes) = collect_body(req.into_body()).await else {
            return ControlFlow::Break(payload_too_large());
        };
        return ControlFlow::Break(to_hyper(crate::dev_routes::pay(app, &order, &bytes).await));
    }
    if req.method() == hyper::Method::GET && req.uri().path() == "/_dev/events" {
        return ControlFlow::Break(match after_param(req.uri().query()) {
            Ok(after) => json_response(
                hyper::StatusCode::OK,
                &feed.after(after),
                "application/json",
            ),
            Err(e) => to_hyper(error_response(&e)),
        });
    }
    let target = req
        .headers()
        .get("x-amz-target")
        .and_then(|v| v.to_str().ok());
    if req.method() == hyper::Method::POST && target == Some(PUT_EVENTS_TARGET) {
        return ControlFlow::Break(put_events(feed, req).await);
    }
    if req.method() == hyper::Method::POST && target == Some(GET_SECRET_VALUE_TARGET) {
        let Some(bytes) = collect_body(req.into_body()).await else {
            return ControlFlow::Break(payload_too_large());
        };
        let (status, body) = crate::secrets::get_secret_value(&bytes);
        let status = hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::BAD_REQUEST);
        return ControlFlow::Break(json_response(status, &body, "application/x-amz-json-1.1"));
    }
    ControlFlow::Continue(req)
}

/// EventBridge's `PutEvents` into `feed`, answered as EventBridge would.
async fn put_events(feed: &DevFeed, req: hyper::Request<Incoming>) -> hyper::Response<Full<Bytes>> {
    let Some(bytes) = collect_body(req.into_body()).await else {
        return payload_too_large();
    };
    let (status, body) = match feed.put_events(&bytes) {
        Ok(reply) => (hyper::StatusCode::OK, reply),
        Err(message) => (
            hyper::StatusCode::BAD_REQUEST,
            serde_json::json!({"__type": "ValidationException", "message": message}),
        ),
    };
    json_response(status, &body, "application/x-amz-json-1.1")
}

/// A request's body, or `None` if it is over [`MAX_BODY_BYTES`] (or
/// could not be read).
async fn collect_body(body: Incoming) -> Option<Bytes> {
    Limited::new(body, MAX_BODY_BYTES)
        .collect()
        .await
        .ok()
        .map(|collected| collected.to_bytes())
}

/// The answer to a body over [`MAX_BODY_BYTES`].
fn payload_too_large() -> hyper::Response<Full<Bytes>> {
    to_hyper(error_response(&Error::PayloadTooLarge {
        limit: MAX_BODY_BYTES,
    }))
}

fn to_hyper(response: lambda_http::Response<Body>) -> hyper::Response<Full<Bytes>> {
    let (parts, body) = response.into_parts();
    let bytes = match body {
        Body::Empty => Bytes::new(),
        Body::Text(t) => Bytes::from(t),
        Body::Binary(b) => Bytes::from(b),
        _ => Bytes::new(),
    };
    hyper::Response::from_parts(parts, Full::new(bytes))
}

/// `after` of `/_dev/events` (0 when absent).
fn after_param(query: Option<&str>) -> Result<u64, Error> {
    let after = form_urlencoded::parse(query.unwrap_or_default().as_bytes())
        .find(|(k, _)| k == "after")
        .map(|(_, v)| v.into_owned());
    match after {
        None => Ok(0),
        Some(v) => v.parse().map_err(|_| {
            Error::BadRequest("after must be a whole number (the last seq seen)".into())
        }),
    }
}

fn json_response(
    status: hyper::StatusCode,
    body: &serde_json::Value,
    content_type: &'static str,
) -> hyper::Response<Full<Bytes>> {
    let mut response = hyper::Response::new(Full::new(Bytes::from(body.to_string())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(content_type),
    );
    response
}
