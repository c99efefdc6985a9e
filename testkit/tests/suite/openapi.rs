//! docs/openapi.yaml agrees with the code: the same routes as the router
//! (and so as template.yaml), every error a handler can return documented
//! with its status, nothing documented that the code cannot say, and the
//! dev server serving the very file.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use serde_yaml_ng::Value;
use shared::domain::RefundReason;
use shared::error::ErrorKind;
use shared::routes::routes;
use shared::Error;

fn spec() -> Value {
    let text = std::fs::read_to_string(local::repo_root().join("docs/openapi.yaml")).unwrap();
    serde_yaml_ng::from_str(&text).unwrap()
}

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "patch", "head", "options", "trace",
];

/// Each operation as ((METHOD, path), operation).
fn operations(doc: &Value) -> BTreeMap<(String, String), Value> {
    let mut ops = BTreeMap::new();
    for (path, item) in doc["paths"].as_mapping().unwrap() {
        for (key, op) in item.as_mapping().unwrap() {
            let key = key.as_str().unwrap();
            if METHODS.contains(&key) {
                ops.insert(
                    (key.to_uppercase(), path.as_str().unwrap().to_owned()),
                    op.clone(),
                );
            }
        }
    }
    ops
}

/// Follows a local `$ref` (`#/components/...`).
fn resolve<'a>(doc: &'a Value, value: &'a Value) -> &'a Value {
    match value.get("$ref").and_then(Value::as_str) {
        Some(reference) => {
            let mut target = doc;
            for part in reference.trim_start_matches("#/").split('/') {
                target = &target[part];
            }
            assert!(!target.is_null(), "dangling $ref {reference}");
            resolve(doc, target)
        }
        None => value,
    }
}

/// Every `error` code a response schema allows (its `enum`s, through
/// `allOf`/`oneOf`/`anyOf` and `$ref`s).
fn error_codes(doc: &Value, schema: &Value, out: &mut BTreeSet<String>) {
    let schema = resolve(doc, schema);
    if let Some(codes) = schema["properties"]["error"]["enum"].as_sequence() {
        out.extend(codes.iter().map(|c| c.as_str().unwrap().to_owned()));
    }
    for key in ["allOf", "oneOf", "anyOf"] {
        for sub in schema[key].as_sequence().into_iter().flatten() {
            error_codes(doc, sub, out);
        }
    }
}

/// (status, code) pairs an operation documents.
fn documented_errors(doc: &Value, op: &Value) -> BTreeSet<(u16, String)> {
    let mut pairs = BTreeSet::new();
    for (status, response) in op["responses"].as_mapping().unwrap() {
        let status: u16 = status.as_str().unwrap().parse().unwrap();
        if status < 400 {
            continue;
        }
        let response = resolve(doc, response);
        let schema = &response["content"]["application/json"]["schema"];
        assert!(!schema.is_null(), "{status} has a JSON schema");
        let mut codes = BTreeSet::new();
        error_codes(doc, schema, &mut codes);
        assert!(!codes.is_empty(), "{status} names its error codes");
        pairs.extend(codes.into_iter().map(|c| (status, c)));
    }
    pairs
}

#[test]
fn the_spec_lists_exactly_the_routers_routes() {
    let doc = spec();
    assert_eq!(doc["openapi"].as_str(), Some("3.0.3"));
    let documented: BTreeSet<_> = operations(&doc).into_keys().collect();
    let routed: BTreeSet<_> = routes()
        .map(|(_, r)| (r.method.to_owned(), r.path.to_owned()))
        .collect();
    assert_eq!(
        documented, routed,
        "docs/openapi.yaml paths vs shared::routes (= template.yaml)"
    );
}

#[test]
fn every_operation_documents_its_success_and_every_error_its_handler_returns() {
    let doc = spec();
    let ops = operations(&doc);
    let mut ids = BTreeSet::new();
    for (function, route) in routes() {
        let op = &ops[&(route.method.to_owned(), route.path.to_owned())];
        let what = format!("{} {} ({})", route.method, route.path, route.name);
        assert!(
            ids.insert(op["operationId"].as_str().unwrap().to_owned()),
            "{what}: unique operationId"
        );
        let statuses: Vec<u16> = op["responses"]
            .as_mapping()
            .unwrap()
            .keys()
            .map(|k| k.as_str().unwrap().parse().unwrap())
            .collect();
        // Three have two: create-event (201 READY, 202 CREATING),
        // join-queue (201 joined, 200 a verified queue's buyer again) and
        // join-waitlist (201 a new entry, 200 the buyer's live one).
        let successes = if function.name == "create-event"
            || route.name == "join-queue"
            || route.name == "join-waitlist"
        {
            2
        } else {
            1
        };
        assert_eq!(
            statuses.iter().filter(|s| (200..300).contains(*s)).count(),
            successes,
            "{what}: its success statuses"
        );
        assert!(
            statuses.iter().any(|s| (400..500).contains(s)),
            "{what}: documents 4xx responses"
        );

        let documented = documented_errors(&doc, op);
        for kind in route.all_errors() {
            let pair = (
                shared::http::status_of(kind).as_u16(),
                kind.code().to_owned(),
            );
            assert!(
                documented.contains(&pair),
                "{what}: {pair:?} is missing from docs/openapi.yaml"
            );
        }
    }
}

#[test]
fn every_documented_error_code_exists_with_that_status() {
    let real: BTreeSet<(u16, String)> = ErrorKind::ALL
        .iter()
        .map(|k| (shared::http::status_of(*k).as_u16(), k.code().to_owned()))
        .collect();
    let doc = spec();
    for ((method, path), op) in operations(&doc) {
        for pair in documented_errors(&doc, &op) {
            assert!(
                real.contains(&pair),
                "{method} {path} documents {pair:?}, which no Error produces"
            );
        }
    }
}

#[test]
fn special_error_bodies_and_headers_are_documented() {
    let doc = spec();
    let ops = operations(&doc);
    // 409 order-expired carries "refund": true.
    let confirm = &ops[&("POST".to_owned(), "/orders/{orderId}/confirm".to_owned())];
    let conflict = resolve(&doc, &confirm["responses"]["409"]);
    let text =
        serde_yaml_ng::to_string(&conflict["content"]["application/json"]["schema"]).unwrap();
    let refund = resolve(&doc, &doc["components"]["schemas"]["RefundError"]);
    assert!(
        text.contains("RefundError"),
        "confirm's 409 allows the refund body"
    );
    assert_eq!(
        refund["properties"]["error"]["enum"][0].as_str(),
        Some(Error::Refund(RefundReason::OrderExpired).code())
    );
    assert!(refund["required"]
        .as_sequence()
        .unwrap()
        .iter()
        .any(|r| r.as_str() == Some("refund")));
    let refund_codes: BTreeSet<&str> = refund["properties"]["error"]["enum"]
        .as_sequence()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    for e in [
        Error::Refund(RefundReason::OrderExpired),
        Error::Refund(RefundReason::SeatsUnavailable),
        Error::AlreadyCompleted,
    ] {
        assert_eq!(e.body()["refund"], true);
        assert!(
            refund_codes.contains(e.code()),
            "{} is documented with refund: true",
            e.code()
        );
    }
    // 409 sold-out carries "available" (found by make fuzz-long: the
    // generic Error schema allows no other field).
    let hold_ga = &ops[&(
        "PUT".to_owned(),
        "/orders/{orderId}/ga/{sectionId}".to_owned(),
    )];
    let conflict = resolve(&doc, &hold_ga["responses"]["409"]);
    let text =
        serde_yaml_ng::to_string(&conflict["content"]["application/json"]["schema"]).unwrap();
    assert!(
        text.contains("SoldOutError"),
        "hold-ga's 409 allows the sold-out body"
    );
    let sold_out = resolve(&doc, &doc["components"]["schemas"]["SoldOutError"]);
    let body = Error::SoldOut { available: 1 }.body();
    for field in body.as_object().unwrap().keys() {
        assert!(
            !sold_out["properties"][field.as_str()].is_null(),
            "sold-out's field {field} is in SoldOutError"
        );
    }
    // 409 buyer-limit carries "limit" and "counted" on every claim route,
    // and a refund over the limit its "reason".
    let buyer_limit = resolve(&doc, &doc["components"]["schemas"]["BuyerLimitError"]);
    let body = Error::BuyerLimit {
        limit: 2,
        counted: 2,
    }
    .body();
    for field in body.as_object().unwrap().keys() {
        assert!(
            !buyer_limit["properties"][field.as_str()].is_null(),
            "buyer-limit's field {field} is in BuyerLimitError"
        );
    }
    for (method, path) in [
        ("POST", "/orders/{orderId}/seats/{seatId}"),
        ("POST", "/orders/{orderId}/best-available"),
        ("PUT", "/orders/{orderId}/ga/{sectionId}"),
    ] {
        let op = &ops[&(method.to_owned(), path.to_owned())];
        let conflict = resolve(&doc, &op["responses"]["409"]);
        let text =
            serde_yaml_ng::to_string(&conflict["content"]["application/json"]["schema"]).unwrap();
        assert!(
            text.contains("BuyerLimitError"),
            "{method} {path}'s 409 allows buyer-limit"
        );
    }
    for (reason, said) in [
        (RefundReason::OrderExpiredOverLimit, "buyer-limit"),
        (RefundReason::SeatsUnavailableOverLimit, "buyer-limit"),
        (RefundReason::OrderExpiredWaitlist, "waitlist"),
        (RefundReason::SeatsUnavailableWaitlist, "waitlist"),
    ] {
        let body = Error::Refund(reason).body();
        assert_eq!(
            (body["refund"].as_bool(), body["reason"].as_str()),
            (Some(true), Some(said))
        );
        for field in body.as_object().unwrap().keys() {
            assert!(
                !refund["properties"][field.as_str()].is_null(),
                "{field} is in RefundError"
            );
        }
    }
    // The Standard Webhooks headers, and the hold token on the order routes.
    let params: Vec<_> = confirm["parameters"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|p| resolve(&doc, p))
        .collect();
    for header in [
        shared::auth::HEADER_WEBHOOK_ID,
        shared::auth::HEADER_WEBHOOK_TIMESTAMP,
        shared::auth::HEADER_WEBHOOK_SIGNATURE,
    ] {
        assert!(
            params.iter().any(|p| p["name"].as_str() == Some(header)
                && p["in"].as_str() == Some("header")
                && p["required"].as_bool() == Some(true)),
            "confirm documents the {header} header"
        );
    }
    for (_, route) in
        routes().filter(|(f, r)| r.path.starts_with("/orders/") && f.name != "confirm")
    {
        let op = &ops[&(route.method.to_owned(), route.path.to_owned())];
        assert!(
            op["security"][0]["holdToken"].is_sequence(),
            "{} {} requires the hold token",
            route.method,
            route.path
        );
    }
    assert_eq!(
        doc["components"]["securitySchemes"]["holdToken"]["scheme"].as_str(),
        Some("bearer")
    );
    // 503 says when to retry.
    let unavailable = resolve(&doc, &doc["components"]["responses"]["StoreUnavailable"]);
    assert!(!unavailable["headers"]["Retry-After"].is_null());
    // Ids as the domain checks them.
    let id = &doc["components"]["schemas"]["Id"];
    assert_eq!(id["pattern"].as_str(), Some("^[A-Za-z0-9_.-]{1,64}$"));
    assert_eq!(
        id["maxLength"].as_u64(),
        Some(shared::domain::MAX_ID_LEN as u64)
    );
    let seat = &doc["components"]["schemas"]["SeatId"];
    assert_eq!(
        seat["maxLength"].as_u64(),
        Some(shared::domain::MAX_SEAT_ID_LEN as u64)
    );
    assert_eq!(
        seat["pattern"].as_str(),
        Some(format!("^[A-Za-z0-9_.-]{{1,{}}}$", shared::domain::MAX_SEAT_ID_LEN).as_str())
    );
}

#[tokio::test]
async fn the_dev_server_serves_the_spec() {
    use std::io::{Read, Write};

    let on_disk = std::fs::read_to_string(local::repo_root().join("docs/openapi.yaml")).unwrap();
    assert_eq!(
        local::server::OPENAPI_YAML,
        on_disk,
        "the binary embeds docs/openapi.yaml"
    );

    let app = common::fresh_app().await;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(local::server::run(listener, app, async {
        let _ = stopped.await;
    }));
    // A plain blocking client, off the runtime's threads.
    let reply = tokio::task::spawn_blocking(move || {
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        stream
            .write_all(
                b"GET /openapi.yaml HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
            )
            .unwrap();
        let mut reply = Vec::new();
        stream.read_to_end(&mut reply).unwrap();
        reply
    })
    .await
    .unwrap();
    let reply = String::from_utf8(reply).unwrap();
    let (head, body) = reply.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/yaml"),
        "{head}"
    );
    assert_eq!(body, on_disk);
    let _ = stop.send(());
    server.await.unwrap();
}

/// The cells of a markdown table under the `## {heading}` section of a
/// document: one `Vec` of trimmed cells per body row (header and rule
/// skipped).
fn table_rows(doc: &str, heading: &str) -> Vec<Vec<String>> {
    let start = doc
        .find(&format!("\n## {heading}\n"))
        .unwrap_or_else(|| panic!("a '## {heading}' section"));
    doc[start + heading.len() + 5..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_owned())
                .collect()
        })
        .collect()
}

fn unquote(cell: &str) -> &str {
    cell.trim_matches('`')
}

/// docs/API.md, the contract in the project's words, and docs/openapi.yaml
/// say the same: the same operations, and the same (status, error code)
/// pairs.
#[test]
fn the_api_doc_lists_the_specs_routes_and_error_codes() {
    let doc = spec();
    let api = std::fs::read_to_string(local::repo_root().join("docs/API.md")).unwrap();

    let documented: BTreeSet<(String, String)> = table_rows(&api, "Routes")
        .iter()
        .map(|row| {
            let (method, path) = unquote(&row[0]).split_once(' ').unwrap();
            (method.to_owned(), path.to_owned())
        })
        .collect();
    let specified: BTreeSet<_> = operations(&doc).into_keys().collect();
    assert_eq!(
        documented, specified,
        "docs/API.md Routes vs docs/openapi.yaml"
    );

    let listed: BTreeSet<(u16, String)> = table_rows(&api, "Error codes")
        .iter()
        .map(|row| (row[0].parse().unwrap(), unquote(&row[1]).to_owned()))
        .collect();
    let allowed: BTreeSet<(u16, String)> = operations(&doc)
        .values()
        .flat_map(|op| documented_errors(&doc, op))
        .collect();
    assert_eq!(
        listed, allowed,
        "docs/API.md Error codes vs docs/openapi.yaml"
    );
}

/// The reasons a refusal can name are one list: the code's, the spec's
/// `Reason` schema and API.md's table, in the same order.
#[test]
fn the_reasons_are_the_same_in_the_code_the_spec_and_the_api_doc() {
    let code: Vec<String> = shared::reason::Reason::ALL
        .iter()
        .map(|r| r.code().to_owned())
        .collect();
    let doc = spec();
    let specified: Vec<String> = doc["components"]["schemas"]["Reason"]["enum"]
        .as_sequence()
        .expect("a Reason schema with an enum")
        .iter()
        .map(|v| v.as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(specified, code, "docs/openapi.yaml Reason vs the code");
    let api = std::fs::read_to_string(local::repo_root().join("docs/API.md")).unwrap();
    let listed: Vec<String> = table_rows(&api, "Why a request was refused")
        .iter()
        .map(|row| unquote(&row[0]).to_owned())
        .collect();
    assert_eq!(listed, code, "docs/API.md's reasons vs the code");
}

/// Every kind of hold token create-order hands out matches the spec's
/// `HoldToken` pattern, so a client generated strictly from the spec
/// accepts it: a plain order's, and one on an event with a buyer limit
/// (its fifth part, the limit and the buyer's ref).
#[test]
fn every_kind_of_hold_token_matches_the_specs_pattern() {
    use shared::domain::buyer_limit::{BuyerRef, LimitedBuyer};
    use shared::domain::{EventId, Millis, OrderId};
    let doc = spec();
    let pattern = doc["components"]["schemas"]["HoldToken"]["pattern"]
        .as_str()
        .expect("HoldToken has a pattern");
    let pattern = regex_lite::Regex::new(pattern).expect("the pattern compiles");
    let keys = local::apps::dev_hold_token_keys();
    let event = EventId::parse("gala-2026.v2_x").unwrap();
    let order = OrderId::from_random(&event, u128::MAX);
    let plain = shared::auth::HoldToken::generate(&event, Millis(1_767_225_600_000)).unwrap();
    let limited = plain.clone().for_buyer(Some(LimitedBuyer {
        buyer: BuyerRef::from_hex(&"0a".repeat(16)).unwrap(),
        limit: 10,
    }));
    for (what, token) in [("plain", plain), ("buyer-limited", limited)] {
        let wire = keys.encode(&order, &token);
        assert!(
            pattern.is_match(&wire),
            "a {what} token {wire} fails the spec's pattern"
        );
        assert!(keys.decode(&order, &wire).is_some(), "{what}");
    }
    // The pattern still refuses what no order is given.
    for wrong in ["gala~1~ab~cd", "gala~1~{64}~10.{32}~{64}~x"] {
        let wrong = wrong
            .replace("{64}", &"a".repeat(64))
            .replace("{32}", &"b".repeat(32));
        assert!(!pattern.is_match(&wrong), "{wrong}");
    }
}
