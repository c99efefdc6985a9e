//! The dev HTTP server: hyper in front of the router.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;

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
use tokio::net::TcpListener;

/// Serves until `shutdown` completes.
pub async fn run(listener: TcpListener, app: App, shutdown: impl Future<Output = ()>) {
    run_with_feed(listener, app, None, shutdown).await
}

/// [`run`], with the dev-only routes when there is a `feed`: the live
/// seat-map page at `/`, `GET /_dev/events?after=<n>` over `feed`,
/// EventBridge's `PutEvents` into it, `GET /_dev/catalog` and
/// `POST /_dev/pay/{orderId}` (see `dev_routes`).
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

async fn handle(
    app: &App,
    feed: Option<&DevFeed>,
    req: hyper::Request<Incoming>,
) -> hyper::Response<Full<Bytes>> {
    if let Some(feed) = feed {
        let path = req.uri().path().to_owned();
        if req.method() == hyper::Method::GET {
            if let Some(file) = crate::dev_routes::page_file(&path) {
                return to_hyper(file);
            }
            if path == "/_dev/catalog" {
                return json_response(hyper::StatusCode::OK, &feed.catalog(), "application/json");
            }
        }
        if let Some(order) = path
            .strip_prefix("/_dev/pay/")
            .filter(|_| req.method() == hyper::Method::POST)
        {
            let order = order.to_owned();
            let bytes = match Limited::new(req.into_body(), MAX_BODY_BYTES)
                .collect()
                .await
            {
                Ok(collected) => collected.to_bytes(),
                Err(_) => {
                    return to_hyper(error_response(&Error::PayloadTooLarge {
                        limit: MAX_BODY_BYTES,
                    }))
                }
            };
            return to_hyper(crate::dev_routes::pay(app, &order, &bytes).await);
        }
        if req.method() == hyper::Method::GET && req.uri().path() == "/_dev/events" {
            return match after_param(req.uri().query()) {
                Ok(after) => json_response(
                    hyper::StatusCode::OK,
                    &feed.after(after),
                    "application/json",
                ),
                Err(e) => to_hyper(error_response(&e)),
            };
        }
        let target = req
            .headers()
            .get("x-amz-target")
            .and_then(|v| v.to_str().ok());
        if req.method() == hyper::Method::POST && target == Some(PUT_EVENTS_TARGET) {
            let bytes = match Limited::new(req.into_body(), MAX_BODY_BYTES)
                .collect()
                .await
            {
                Ok(collected) => collected.to_bytes(),
                Err(_) => {
                    return to_hyper(error_response(&Error::PayloadTooLarge {
                        limit: MAX_BODY_BYTES,
                    }))
                }
            };
            let (status, body) = match feed.put_events(&bytes) {
                Ok(reply) => (hyper::StatusCode::OK, reply),
                Err(message) => (
                    hyper::StatusCode::BAD_REQUEST,
                    serde_json::json!({"__type": "ValidationException", "message": message}),
                ),
            };
            return json_response(status, &body, "application/x-amz-json-1.1");
        }
    }
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
    let bytes = match Limited::new(body, MAX_BODY_BYTES).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => {
            return to_hyper(error_response(&Error::PayloadTooLarge {
                limit: MAX_BODY_BYTES,
            }))
        }
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
