//! HTTP glue shared by every API handler: reading path ids, headers and
//! bodies; writing JSON replies and errors; one log line per request.

use std::future::Future;
use std::time::{Duration, Instant};

use lambda_http::http::header::{ALLOW, CONTENT_TYPE, RETRY_AFTER};
use lambda_http::http::{HeaderValue, StatusCode};
use lambda_http::{Body, Request, RequestExt, Response};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::{chain, Error, ErrorKind};

/// Largest request body accepted. A 20,000-seat plan of one-seat rows is
/// well under this; API Gateway itself stops at 10 MB.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// A JSON reply.
pub fn json<T: Serialize>(status: StatusCode, value: &T) -> Response<Body> {
    let text = serde_json::to_string(value).unwrap_or_else(|e| {
        // Our reply types are plain structs of strings and numbers; this
        // cannot fail, but a broken reply must not panic the function.
        tracing::error!(error = %e, "could not serialise a reply");
        r#"{"error":"internal-error","message":"internal error"}"#.to_owned()
    });
    let mut response = Response::new(Body::Text(text));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// The HTTP status of each contract error code: the one mapping to HTTP.
pub fn status_of(kind: ErrorKind) -> StatusCode {
    use ErrorKind as K;
    match kind {
        K::BadRequest => StatusCode::BAD_REQUEST,
        K::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        K::Unauthorized | K::BuyerTokenRequired | K::BuyerTokenInvalid => StatusCode::UNAUTHORIZED,
        K::RouteNotFound
        | K::EventNotFound
        | K::OrderNotFound
        | K::SeatNotFound
        | K::SectionNotFound
        | K::QueueNotFound
        | K::WaitlistNotFound
        | K::VisitorNotFound
        | K::EntryNotFound
        | K::DrawNotDisclosed => StatusCode::NOT_FOUND,
        K::QueueRequired => StatusCode::FORBIDDEN,
        K::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
        K::EventExists
        | K::SeatHeld
        | K::SeatSold
        | K::SeatNotHeld
        | K::OrderNotHoldable
        | K::AlreadyCompleted
        | K::OrderExpired
        | K::SeatsUnavailable
        | K::PaymentReused
        | K::HoldLimit
        | K::OrderNotCancellable
        | K::NotEnoughSeats
        | K::SoldOut
        | K::QueueOpen
        | K::WaitlistOpen
        | K::WaitlistOnly
        | K::WaitlistNotOpen
        | K::WaitlistEnded
        | K::ReturnsClosed
        | K::ReturnNotOwned
        | K::ReturnOffered
        | K::BuyerLimit
        | K::AdmissionUsed => StatusCode::CONFLICT,
        K::SeatLimit | K::IdempotencyKeyReused => StatusCode::UNPROCESSABLE_ENTITY,
        K::StoreUnavailable | K::SecretsUnavailable => StatusCode::SERVICE_UNAVAILABLE,
        K::Internal => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// The HTTP status of an error.
pub fn status(err: &Error) -> StatusCode {
    status_of(err.kind())
}

/// The contract's error body, with `Retry-After` on 503.
pub fn error_response(err: &Error) -> Response<Body> {
    let mut response = json(status(err), &err.body());
    if status(err) == StatusCode::SERVICE_UNAVAILABLE {
        response
            .headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from_static("1"));
    }
    if let Error::MethodNotAllowed { allow, .. } = err {
        if let Ok(value) = HeaderValue::from_str(allow) {
            response.headers_mut().insert(ALLOW, value);
        }
    }
    response
}

/// Time kept back from a Lambda invocation's deadline to send the reply.
pub const REPLY_MARGIN_MS: u64 = 500;

/// When a request must have its answer: `budget_ms` from now
/// (`REQUEST_BUDGET_MS`), or its Lambda invocation's deadline less
/// [`REPLY_MARGIN_MS`] if that is sooner (a 10 s function's).
pub fn request_deadline(req: &Request, budget_ms: u32) -> Instant {
    let now = Instant::now();
    let by_budget = now + Duration::from_millis(u64::from(budget_ms));
    let by_lambda = req
        .lambda_context_ref()
        .filter(|ctx| ctx.deadline > 0)
        .map(|ctx| {
            let now_ms = u64::try_from(chrono::Utc::now().timestamp_millis()).unwrap_or(0);
            now + Duration::from_millis(
                ctx.deadline
                    .saturating_sub(now_ms)
                    .saturating_sub(REPLY_MARGIN_MS),
            )
        });
    by_lambda.map_or(by_budget, |lambda| lambda.min(by_budget))
}

/// Runs one request's work until `deadline`, turns its error into the
/// contract's reply and logs one JSON line: route, method, path, status,
/// error code, the refusal's reason where it has one, latency. Never logs headers or bodies (tokens and
/// signatures live there).
///
/// Work still running at the deadline (a slow store, a chain of calls) is
/// dropped and answered `503 store-unavailable` with `Retry-After`, before
/// the Lambda or API Gateway times out with a body of its own. A store
/// call in flight then may or may not land; every write is one conditional
/// request or transaction and every route is safe to retry (the same
/// payment, plan or claim again finishes what landed), so a retry finishes
/// the work, and an event whose creation stopped is the sweep's to finish.
pub async fn serve<F>(
    route: &'static str,
    req: &Request,
    deadline: Instant,
    work: F,
) -> Response<Body>
where
    F: Future<Output = Result<Response<Body>, Error>>,
{
    let started = Instant::now();
    let result = match tokio::time::timeout_at(deadline.into(), work).await {
        Ok(result) => result,
        Err(_) => {
            tracing::warn!(
                route,
                budget_ms = deadline.saturating_duration_since(started).as_millis() as u64,
                "request deadline reached"
            );
            Err(Error::StoreUnavailable)
        }
    };
    let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    let method = req.method().as_str();
    let path = req.uri().path();
    crate::metrics::request(route, result.as_ref().map_or_else(Error::code, |_| "ok"));
    // One invocation is one request: its metrics go out with its log line.
    crate::metrics::flush();
    match result {
        Ok(response) => {
            tracing::info!(
                route,
                method,
                path,
                status = response.status().as_u16(),
                elapsed_ms,
                "request"
            );
            response
        }
        Err(err) => {
            let status = status(&err).as_u16();
            if err.is_internal() {
                tracing::error!(route, method, path, status, code = err.code(), error = %chain(&err), elapsed_ms, "request failed");
            } else {
                tracing::info!(
                    route,
                    method,
                    path,
                    status,
                    code = err.code(),
                    reason = err.reason().map(crate::reason::Reason::code),
                    elapsed_ms,
                    "request"
                );
            }
            error_response(&err)
        }
    }
}

/// A path parameter, validated by `parse` (a 400 names the field).
pub fn path_param<T>(
    req: &Request,
    name: &str,
    parse: fn(&str) -> Result<T, Error>,
) -> Result<T, Error> {
    let params = req.path_parameters();
    let raw = params
        .first(name)
        .ok_or_else(|| Error::BadRequest(format!("missing path parameter {name}")))?;
    parse(raw)
}

/// A query string parameter, validated by `parse` if present.
pub fn query_param<T>(
    req: &Request,
    name: &str,
    parse: fn(&str) -> Result<T, Error>,
) -> Result<Option<T>, Error> {
    let params = req.query_string_parameters();
    params.first(name).map(parse).transpose()
}

/// Whether an `Accept-Encoding` value admits gzip (`gzip` or `*`, with any
/// q-value but 0).
pub fn accepts_gzip(accept_encoding: Option<&str>) -> bool {
    accept_encoding
        .unwrap_or_default()
        .split(',')
        .any(|coding| {
            let mut parts = coding.split(';').map(str::trim);
            let name = parts.next().unwrap_or_default();
            let refused = parts.any(|p| {
                p.strip_prefix("q=")
                    .is_some_and(|q| q.parse::<f32>().is_ok_and(|q| q == 0.0))
            });
            (name.eq_ignore_ascii_case("gzip") || name == "*") && !refused
        })
}

/// A cacheable JSON reply (`Cache-Control: public, max-age=N`), gzipped
/// when the client accepts it.
pub fn cacheable_json<T: Serialize>(value: &T, max_age_seconds: u32, gzip: bool) -> Response<Body> {
    use std::io::Write;
    let mut response = json(StatusCode::OK, value);
    let headers = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&format!("public, max-age={max_age_seconds}")) {
        headers.insert(lambda_http::http::header::CACHE_CONTROL, v);
    }
    headers.insert(
        lambda_http::http::header::VARY,
        HeaderValue::from_static("Accept-Encoding"),
    );
    if gzip {
        let text = match response.body() {
            Body::Text(text) => text.clone(),
            _ => return response,
        };
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        // Writing to a Vec cannot fail; if it ever did, the plain reply stands.
        if encoder.write_all(text.as_bytes()).is_ok() {
            if let Ok(bytes) = encoder.finish() {
                *response.body_mut() = Body::Binary(bytes);
                response.headers_mut().insert(
                    lambda_http::http::header::CONTENT_ENCODING,
                    HeaderValue::from_static("gzip"),
                );
            }
        }
    }
    response
}

/// A header as text; a non-text header reads as absent.
pub fn header<'r>(req: &'r Request, name: &str) -> Option<&'r str> {
    req.headers().get(name).and_then(|v| v.to_str().ok())
}

/// The request's `Idempotency-Key`, if any (create-order, best-available):
/// `400` unless 1-64 characters of `[A-Za-z0-9_.-]`.
pub fn idempotency_key(req: &Request) -> Result<Option<crate::domain::IdempotencyKey>, Error> {
    header(req, "idempotency-key")
        .map(|key| {
            crate::domain::IdempotencyKey::parse(key).map_err(|_| {
                Error::BadRequest(
                    "Idempotency-Key must be 1-64 characters of A-Z, a-z, 0-9, _, . and -".into(),
                )
            })
        })
        .transpose()
}

/// The token of the request's `Authorization: Bearer <token>`, if any.
pub fn bearer(req: &Request) -> Option<&str> {
    crate::auth::bearer_value(header(req, "authorization"))
}

/// The raw body bytes, capped at [`MAX_BODY_BYTES`].
pub fn raw_body(req: &Request) -> Result<&[u8], Error> {
    let bytes: &[u8] = req.body().as_ref();
    if bytes.len() > MAX_BODY_BYTES {
        return Err(Error::PayloadTooLarge {
            limit: MAX_BODY_BYTES,
        });
    }
    Ok(bytes)
}

/// The body as JSON of type `T`. `empty` is what an absent body means
/// (`None`: a body is required).
pub fn json_body<T: DeserializeOwned>(req: &Request, empty: Option<T>) -> Result<T, Error> {
    let bytes = raw_body(req)?;
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        None => return empty.ok_or_else(|| Error::BadRequest("a JSON body is required".into())),
        // serde would also read a struct from an array of its fields;
        // the contract's bodies are objects, so only an object is accepted.
        Some(b'{') => {}
        Some(_) => return Err(Error::BadRequest("the body must be a JSON object".into())),
    }
    serde_json::from_slice(bytes).map_err(|e| Error::BadRequest(format!("invalid JSON body: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reason::Reason;

    #[test]
    fn a_request_deadline_is_the_budget_or_the_invocations_less_a_margin() {
        let req = || {
            lambda_http::http::Request::builder()
                .body(Body::Empty)
                .unwrap_or_default()
        };
        // Each deadline is bracketed by the instants before and after it
        // was computed, so a slow machine cannot move the verdict; 2 ms
        // cover the whole milliseconds of the wall clock.
        let ms = Duration::from_millis;
        let within = |d: Instant, before: Instant, after: Instant, want: Duration| {
            d + ms(2) >= before + want && d <= after + want + ms(2)
        };
        // No Lambda context (the dev server, tests): the budget.
        let before = Instant::now();
        let d = request_deadline(&req(), 1_500);
        assert!(within(d, before, Instant::now(), ms(1_500)));
        // An invocation due in 3 s: its deadline less the margin binds.
        let before = Instant::now();
        let now_ms = u64::try_from(chrono::Utc::now().timestamp_millis()).unwrap_or(0);
        let mut ctx = lambda_runtime::Context::default();
        ctx.deadline = now_ms + 3_000;
        let d = request_deadline(&req().with_lambda_context(ctx.clone()), 29_000);
        let want = ms(3_000 - REPLY_MARGIN_MS);
        assert!(within(d, before, Instant::now(), want));
        // A budget sooner than the invocation's deadline wins.
        let before = Instant::now();
        let d = request_deadline(&req().with_lambda_context(ctx), 1_000);
        assert!(within(d, before, Instant::now(), ms(1_000)));
    }

    #[tokio::test]
    async fn work_past_its_deadline_is_a_503_with_retry_after() {
        let req = lambda_http::http::Request::builder()
            .uri("/x")
            .body(Body::Empty)
            .unwrap_or_default();
        let deadline = Instant::now() + Duration::from_millis(50);
        let slow = async {
            tokio::time::sleep(Duration::from_secs(5)).await;
            Ok(json(StatusCode::OK, &"late"))
        };
        let started = Instant::now();
        let response = serve("test", &req, deadline, slow).await;
        assert!(started.elapsed() < Duration::from_secs(1));
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(
            response
                .headers()
                .get(RETRY_AFTER)
                .and_then(|v| v.to_str().ok()),
            Some("1")
        );
        let body: serde_json::Value =
            serde_json::from_slice(response.body().as_ref()).unwrap_or_default();
        assert_eq!(body["error"], "store-unavailable");
    }

    #[test]
    fn gzip_is_used_when_accepted() {
        for yes in [
            "gzip",
            "gzip, deflate, br",
            "br;q=1.0, gzip;q=0.8",
            "*",
            "GZIP",
        ] {
            assert!(accepts_gzip(Some(yes)), "{yes}");
        }
        for no in ["", "br", "gzip;q=0", "identity", "gzipx"] {
            assert!(!accepts_gzip(Some(no)), "{no}");
        }
        assert!(!accepts_gzip(None));
    }

    #[test]
    fn contract_statuses() {
        assert_eq!(
            status(&Error::SeatLimit { max: 10 }),
            StatusCode::UNPROCESSABLE_ENTITY
        );
        assert_eq!(status(&Error::SeatHeld), StatusCode::CONFLICT);
        assert_eq!(status(&Error::PaymentReused), StatusCode::CONFLICT);
        assert_eq!(status(&Error::SectionNotFound), StatusCode::NOT_FOUND);
        assert_eq!(status(&Error::HoldLimit), StatusCode::CONFLICT);
        assert_eq!(status(&Error::OrderNotCancellable), StatusCode::CONFLICT);
        assert_eq!(
            status(&Error::NotEnoughSeats { quantity: 2 }),
            StatusCode::CONFLICT
        );
        assert_eq!(
            status(&Error::Unauthorized(Reason::HoldTokenMac)),
            StatusCode::UNAUTHORIZED
        );
        assert_eq!(
            status(&Error::Corrupt(String::new())),
            StatusCode::INTERNAL_SERVER_ERROR
        );
    }

    /// One error of each variant a 401, 403 or 422 comes from: each names
    /// its rule in `reason`, and only the credential refusals put it in
    /// the message.
    #[test]
    fn every_401_403_and_422_names_its_rule() {
        let refusals = [
            Error::Unauthorized(Reason::SignatureMismatch),
            Error::BuyerTokenInvalid(Reason::TokenIssuer),
            Error::BuyerTokenRequired,
            Error::QueueRequired {
                queue: "/events/e/queue/visitors".into(),
            },
            Error::SeatLimit { max: 10 },
            Error::IdempotencyKeyReused,
        ];
        let kinds: std::collections::BTreeSet<_> = refusals.iter().map(Error::kind).collect();
        let refusing: std::collections::BTreeSet<_> = crate::error::ErrorKind::ALL
            .iter()
            .copied()
            .filter(|k| {
                matches!(
                    status_of(*k),
                    StatusCode::UNAUTHORIZED
                        | StatusCode::FORBIDDEN
                        | StatusCode::UNPROCESSABLE_ENTITY
                )
            })
            .collect();
        assert_eq!(kinds, refusing, "a sample of every such kind");
        for err in &refusals {
            let body = err.body();
            let reason = err.reason().map(Reason::code);
            assert!(reason.is_some(), "{} has no reason", err.code());
            assert_eq!(body["reason"].as_str(), reason, "{}", err.code());
        }
        let message = Error::BuyerTokenInvalid(Reason::TokenIssuer).body()["message"].to_string();
        assert!(
            message.contains(Reason::TokenIssuer.sentence()),
            "{message}"
        );
        assert!(
            !message.contains("event"),
            "a wrong issuer is not the event's fault"
        );
        assert!(Error::SeatHeld.body().get("reason").is_none());
    }

    #[test]
    fn a_503_says_when_to_retry_and_a_500_says_nothing() {
        let unavailable = error_response(&Error::StoreUnavailable);
        assert_eq!(unavailable.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(unavailable.headers()[RETRY_AFTER], "1");
        let internal = error_response(&Error::Corrupt("seat item without status".into()));
        let body: serde_json::Value =
            serde_json::from_slice(internal.body().as_ref()).unwrap_or_default();
        assert_eq!(
            body,
            serde_json::json!({"error": "internal-error", "message": "internal error"})
        );
    }
}
