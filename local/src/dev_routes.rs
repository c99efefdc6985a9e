//! The dev server's own routes, never deployed: the live seat-map page
//! (static files in `web/`) and a payment that signs a confirm exactly as
//! a payment backend would. (The events feed and the catalogue of events
//! for the page's picker are `feed::DevFeed`'s, from the table's stream.)

use lambda_http::http::StatusCode;
use lambda_http::{Body, Response};
use serde_json::{json, Value};
use shared::domain::OrderId;
use shared::http::error_response;
use shared::{App, Error};

/// The page's files: (path, file in `web/`, content type).
const PAGE_FILES: [(&str, &str, &str); 9] = [
    ("/", "index.html", "text/html; charset=utf-8"),
    ("/access.js", "access.js", "text/javascript; charset=utf-8"),
    ("/app.js", "app.js", "text/javascript; charset=utf-8"),
    ("/canvas.js", "canvas.js", "text/javascript; charset=utf-8"),
    ("/list.js", "list.js", "text/javascript; charset=utf-8"),
    ("/order.js", "order.js", "text/javascript; charset=utf-8"),
    ("/queue.js", "queue.js", "text/javascript; charset=utf-8"),
    (
        "/waitlist.js",
        "waitlist.js",
        "text/javascript; charset=utf-8",
    ),
    ("/style.css", "style.css", "text/css; charset=utf-8"),
];

/// One of the page's files, read from the repository at each request (an
/// edit shows on reload), or `None` for another path.
pub fn page_file(path: &str) -> Option<Response<Body>> {
    let (_, file, content_type) = PAGE_FILES.iter().find(|(p, _, _)| *p == path)?;
    let reply = match std::fs::read(crate::paths::repo_root().join("web").join(file)) {
        Ok(bytes) => Response::builder()
            .status(StatusCode::OK)
            .header("content-type", *content_type)
            .header("cache-control", "no-store")
            .body(Body::Binary(bytes)),
        Err(e) => {
            tracing::error!(file, error = %e, "the page's file cannot be read");
            Ok(error_response(&Error::Corrupt(format!(
                "web/{file} cannot be read"
            ))))
        }
    };
    // Building a response from a status and two static headers cannot fail.
    Some(reply.unwrap_or_else(|_| error_response(&Error::Corrupt("response".into()))))
}

/// `POST /_dev/pay/{orderId}`: pays as a payment backend would. The body
/// may name `seats`, `ga` and `paymentId`; by default it pays for what the
/// order holds now, with a new payment id. The confirm is signed with the
/// dev server's `CONFIRM_SECRET` (Standard Webhooks headers, now) and goes
/// through the confirm route; its answer is the reply.
pub async fn pay(app: &App, order: &str, body: &[u8]) -> Response<Body> {
    let Some(secrets) = app.config.confirm_secrets.as_ref() else {
        return error_response(&Error::Unauthorized(
            shared::reason::Reason::KeysNotConfigured,
        ));
    };
    let order_id = match OrderId::parse(order) {
        Ok(id) => id,
        Err(e) => return error_response(&e),
    };
    let asked: Value = if body.is_empty() {
        json!({})
    } else {
        match serde_json::from_slice(body) {
            Ok(v @ Value::Object(_)) => v,
            _ => {
                return error_response(&Error::BadRequest("the body must be a JSON object".into()))
            }
        }
    };
    let (seats, ga) = if asked.get("seats").is_some() || asked.get("ga").is_some() {
        let or_none = |v: &Value| if v.is_null() { json!([]) } else { v.clone() };
        (or_none(&asked["seats"]), or_none(&asked["ga"]))
    } else {
        let stored = match app.store.get_order(&order_id).await {
            Ok(Some(stored)) => stored,
            Ok(None) => return error_response(&Error::OrderNotFound),
            Err(e) => return error_response(&e),
        };
        let order = stored.order;
        let mut ga: Vec<(String, u32)> = Vec::new();
        for held in &order.places {
            match ga.iter_mut().find(|(s, _)| s == held.section.as_str()) {
                Some((_, q)) => *q += held.quantity,
                None => ga.push((held.section.to_string(), held.quantity)),
            }
        }
        let ga: Vec<Value> = ga
            .into_iter()
            .map(|(s, q)| json!({"sectionId": s, "quantity": q}))
            .collect();
        (json!(order.seats), json!(ga))
    };
    let payment = asked["paymentId"].as_str().map_or_else(
        || format!("pi_dev_{}", uuid::Uuid::new_v4().simple()),
        str::to_owned,
    );
    let confirm =
        json!({"orderId": order_id, "paymentId": payment, "seats": seats, "ga": ga}).to_string();
    let headers = match crate::payment_backend::webhook_headers(secrets, &confirm) {
        Ok(headers) => headers,
        Err(e) => return error_response(&e),
    };
    let mut refs: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    refs.push(("content-type", "application/json"));
    let request = crate::router::request(
        "POST",
        &format!("/orders/{order_id}/confirm"),
        &refs,
        confirm,
    );
    crate::router::dispatch(app, request).await
}

/// `POST /_dev/buyer-token`: a buyer token as a seller's sign-in would
/// sign it, with the development buyer key. Body `{"eventId", "buyerId",
/// "seconds"?}` (default and most 3,600). Only while the dev server
/// verifies buyers with that key, its own: with `BUYER_VERIFY_KEYS` set
/// (even to a set holding it), `404`.
pub fn buyer_token(app: &App, body: &[u8]) -> Response<Body> {
    let signing = crate::apps::dev_buyer_signing_keys();
    let told_keys = std::env::var_os(shared::buyer::BUYER_VERIFY_KEYS).is_some();
    let dev_key_trusted = !told_keys
        && app.config.buyer_keys.as_ref().is_some_and(|keys| {
            let dev: Vec<&str> = signing.public_xs().collect();
            keys.keys().public_xs().any(|x| dev.contains(&x))
        });
    if !dev_key_trusted {
        return error_response(&Error::RouteNotFound {
            method: "POST".into(),
            path: "/_dev/buyer-token".into(),
        });
    }
    match buyer_token_reply(&signing, body) {
        Ok(token) => shared::http::json(StatusCode::OK, &json!({ "buyerToken": token })),
        Err(e) => error_response(&e),
    }
}

fn buyer_token_reply(
    signing: &shared::admission::SigningKeys,
    body: &[u8],
) -> Result<String, Error> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    struct Asked {
        event_id: shared::domain::EventId,
        buyer_id: String,
        seconds: Option<i64>,
    }
    let asked: Asked = serde_json::from_slice(body).map_err(|_| {
        Error::BadRequest("the body must be {\"eventId\", \"buyerId\", \"seconds\"?}".into())
    })?;
    let most = crate::apps::DEV_BUYER_TOKEN_SECONDS;
    let seconds = asked.seconds.unwrap_or(most);
    if !(1..=most).contains(&seconds) {
        return Err(Error::BadRequest(format!("seconds must be 1 to {most}")));
    }
    if shared::domain::buyer::BuyerId::parse(&asked.buyer_id).is_none() {
        return Err(Error::BadRequest(
            "buyerId must be 1-128 characters of A-Z, a-z, 0-9, '.', '_', ':', '|', '-'".into(),
        ));
    }
    let now_s = shared::world::now().0.div_euclid(1_000);
    crate::apps::dev_buyer_token(
        signing,
        asked.event_id.as_str(),
        &asked.buyer_id,
        now_s,
        seconds,
    )
}
