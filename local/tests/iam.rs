//! Least privilege, proven: each function's IAM policy in template.yaml
//! grants exactly the DynamoDB actions its code sends (observed by an SDK
//! interceptor over its success and error paths), on only the table or the
//! index it uses.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::*;
use local::metrics::RequestCounter;
use local::router::request;
use serde_yaml_ng::Value;

/// IAM actions for a DynamoDB operation the code sends. IAM authorises
/// each item of a transaction by the item's own action (an `Update` item
/// needs `dynamodb:UpdateItem`, a `Put` item `dynamodb:PutItem`), not
/// TransactWriteItems; `items` are the kinds the transactions carried.
fn iam_actions(operation: &str, items: &BTreeSet<String>) -> Vec<String> {
    match operation {
        "TransactWriteItems" => items.iter().map(|kind| format!("dynamodb:{kind}Item")).collect(),
        other => vec![format!("dynamodb:{other}")],
    }
}

/// (function, action, resource) as the template grants them.
fn granted() -> BTreeMap<String, BTreeSet<(String, String)>> {
    let text = std::fs::read_to_string(local::repo_root().join("template.yaml")).unwrap();
    let doc: Value = serde_yaml_ng::from_str(&text).unwrap();
    let mut out = BTreeMap::new();
    for (_, res) in doc["Resources"].as_mapping().unwrap() {
        if res["Type"].as_str() != Some("AWS::Serverless::Function") {
            continue;
        }
        let function = res["Properties"]["CodeUri"].as_str().unwrap().trim_start_matches("functions/").to_owned();
        let mut grants = BTreeSet::new();
        for policy in res["Properties"]["Policies"].as_sequence().unwrap() {
            for statement in policy["Statement"].as_sequence().unwrap() {
                assert_eq!(statement["Effect"].as_str(), Some("Allow"));
                let resource = match &statement["Resource"] {
                    Value::Tagged(t) => format!("{} {}", t.tag, t.value.as_str().unwrap_or("?")),
                    other => panic!("{function}: resource must be the table or its index, got {other:?}"),
                };
                for action in statement["Action"].as_sequence().unwrap() {
                    grants.insert((action.as_str().unwrap().to_owned(), resource.clone()));
                }
            }
        }
        out.insert(function, grants);
    }
    out
}

const TABLE: &str = "!GetAtt SeatsTable.Arn";
const EVENT_BUS: &str = "!GetAtt EventBus.Arn";
const INDEX: &str = "!Sub ${SeatsTable.Arn}/index/PendingByExpiry";

/// Runs requests through the router and records, per function, the IAM
/// actions its DynamoDB requests need.
struct Observer {
    app: shared::App,
    counter: RequestCounter,
    used: BTreeMap<String, BTreeSet<(String, String)>>,
}

impl Observer {
    fn record(&mut self, function: &str) {
        let items = self.counter.take_transaction_items();
        for op in self.counter.take().into_keys() {
            let resource = if function == "expire-holds" && op == "Query" { INDEX } else { TABLE };
            for action in iam_actions(&op, &items) {
                self.used.entry(function.to_owned()).or_default().insert((action, resource.to_owned()));
            }
        }
    }

    async fn run(&mut self, method: &str, uri: &str, headers: &[(&str, &str)], body: &str) -> (u16, serde_json::Value) {
        let path = uri.split('?').next().unwrap();
        let (route, _) = local::router::resolve(method, path).unwrap();
        let reply = read(local::router::dispatch(&self.app, request(method, uri, headers, body.to_owned())).await);
        self.record(route.function);
        reply
    }

    async fn order(&mut self, event: &str) -> (String, String) {
        let (_, o) = self.run("POST", &format!("/events/{event}/orders"), &[], "{}").await;
        (o["orderId"].as_str().unwrap().to_owned(), format!("Bearer {}", o["holdToken"].as_str().unwrap()))
    }
}

#[tokio::test]
async fn each_function_is_granted_exactly_what_its_code_uses() {
    let counter = RequestCounter::default();
    let app = local::testing::fresh_app_streaming(Some(counter.clone())).await;
    counter.take();
    let mut ob = Observer { app, counter, used: BTreeMap::new() };

    // Each function over its success and error paths.
    let ev = "iam-event";
    let plan = plan(&[("A", "1", 3)], Some(1));
    for body in [plan.as_str(), plan.as_str(), "{\"name\": 1}"] {
        ob.run("PUT", &format!("/events/{ev}"), &[], body).await;
    }
    ob.run("GET", &format!("/events/{ev}/seats"), &[], "").await;
    ob.run("GET", &format!("/events/{ev}/seats?section=Z"), &[], "").await;
    ob.run("GET", "/events/nope/seats?section=A", &[], "").await;
    ob.run("POST", "/events/nope/orders", &[], "{}").await;
    let (id, auth) = ob.order(ev).await;
    let a = [("authorization", auth.as_str())];
    ob.run("GET", &format!("/orders/{id}"), &a, "").await;
    ob.run("GET", "/orders/ghost", &a, "").await;
    ob.run("POST", &format!("/orders/{id}/seats/A-1-1"), &a, "").await;
    ob.run("POST", &format!("/orders/{id}/seats/A-1-9"), &a, "").await;
    ob.run("POST", &format!("/orders/{id}/seats/A-1-1"), &[], "").await;
    ob.run("DELETE", &format!("/orders/{id}/seats/A-1-1"), &a, "").await;
    ob.run("DELETE", &format!("/orders/{id}/seats/A-1-1"), &[], "").await;
    ob.run("POST", &format!("/orders/{id}/seats/A-1-2"), &a, "").await;
    // best-available: a block, none left of that size, a stranger.
    ob.run("POST", &format!("/orders/{id}/best-available"), &a, "{\"quantity\": 1}").await;
    ob.run("POST", &format!("/orders/{id}/best-available"), &a, "{\"quantity\": 3, \"sectionId\": \"A\"}").await;
    ob.run("POST", &format!("/orders/{id}/best-available"), &[], "{\"quantity\": 1}").await;
    ob.run("DELETE", &format!("/orders/{id}/seats/A-1-1"), &a, "").await;
    // extend-order (on an event of a longer hold, so a loaded machine
    // cannot let the order expire first): a move, an unchanged answer, a
    // stranger.
    assert_eq!(ob.run("PUT", "/events/iam-long", &[], &common::plan(&[("C", "1", 2)], Some(60))).await.0, 201);
    let (long, long_auth) = ob.order("iam-long").await;
    let l = [("authorization", long_auth.as_str())];
    assert_eq!(ob.run("POST", &format!("/orders/{long}/seats/C-1-1"), &l, "").await.0, 200);
    assert_eq!(ob.run("POST", &format!("/orders/{long}/extend"), &l, "{\"seconds\": 600}").await.0, 200);
    ob.run("POST", &format!("/orders/{long}/extend"), &l, "{\"seconds\": 1}").await;
    ob.run("POST", &format!("/orders/{long}/extend"), &[], "").await;
    // cancel-order: a live order holding a seat, then again; a stranger.
    let (gone, gone_auth) = ob.order(ev).await;
    let g = [("authorization", gone_auth.as_str())];
    ob.run("POST", &format!("/orders/{gone}/seats/A-1-3"), &g, "").await;
    assert_eq!(ob.run("DELETE", &format!("/orders/{gone}"), &g, "").await.0, 200);
    ob.run("DELETE", &format!("/orders/{gone}"), &g, "").await;
    ob.run("DELETE", &format!("/orders/{gone}"), &[], "").await;
    // hold-ga on a general-admission section: take, sold out (every bucket
    // read), give back, a stranger.
    let ga_plan = r#"{"name":"GA","holdSeconds":60,"sections":[{"sectionId":"F","capacity":30}]}"#;
    assert_eq!(ob.run("PUT", "/events/iam-ga", &[], ga_plan).await.0, 201);
    let (fan, fan_auth) = ob.order("iam-ga").await;
    let f = [("authorization", fan_auth.as_str())];
    assert_eq!(ob.run("PUT", &format!("/orders/{fan}/ga/F"), &f, "{\"quantity\": 10}").await.0, 200);
    let (rival, rival_auth) = ob.order("iam-ga").await;
    let r = [("authorization", rival_auth.as_str())];
    assert_eq!(ob.run("PUT", &format!("/orders/{rival}/ga/F"), &r, "{\"quantity\": 10}").await.0, 200);
    let (third, third_auth) = ob.order("iam-ga").await;
    let t = [("authorization", third_auth.as_str())];
    assert_eq!(ob.run("PUT", &format!("/orders/{third}/ga/F"), &t, "{\"quantity\": 10}").await.0, 200);
    let (late, late_auth) = ob.order("iam-ga").await;
    assert_eq!(ob.run("PUT", &format!("/orders/{late}/ga/F"), &[("authorization", late_auth.as_str())], "{\"quantity\": 1}").await.0, 409);
    assert_eq!(ob.run("PUT", &format!("/orders/{rival}/ga/F"), &r, "{\"quantity\": 4}").await.0, 200);
    ob.run("PUT", &format!("/orders/{fan}/ga/F"), &[], "{\"quantity\": 1}").await;
    ob.run("GET", "/events/iam-ga/availability", &[], "").await;
    let pay = confirm_body(&id, "pi_1", &["A-1-2".to_owned()]);
    let headers = signed(&pay);
    assert_eq!(ob.run("POST", &format!("/orders/{id}/confirm"), &as_refs(&headers), &pay).await.0, 200);
    ob.run("POST", &format!("/orders/{id}/confirm"), &as_refs(&headers), &pay).await;
    // A late payment for a taken seat (REFUND_DUE), then a second payment.
    let (late, late_auth) = ob.order(ev).await;
    ob.run("POST", &format!("/orders/{late}/seats/A-1-3"), &[("authorization", late_auth.as_str())], "").await;
    let_holds_expire(1).await;
    let (rival, rival_auth) = ob.order(ev).await;
    ob.run("POST", &format!("/orders/{rival}/seats/A-1-3"), &[("authorization", rival_auth.as_str())], "").await;
    let late_pay = confirm_body(&late, "pi_late", &["A-1-3".to_owned()]);
    assert_eq!(ob.run("POST", &format!("/orders/{late}/confirm"), &as_refs(&signed(&late_pay)), &late_pay).await.0, 409);
    let pay2 = confirm_body(&late, "pi_2", &["A-1-3".to_owned()]);
    ob.run("POST", &format!("/orders/{late}/confirm"), &as_refs(&signed(&pay2)), &pay2).await;
    // The seat map: a new process (its event cache empty) serves it; the
    // stream's records are folded into the projection.
    let fresh = shared::App { store: shared::Store::new(ob.app.store.client().clone(), ob.app.store.table_name()), config: ob.app.config.clone() };
    let app = std::mem::replace(&mut ob.app, fresh);
    assert_eq!(ob.run("GET", &format!("/events/{ev}/availability"), &[], "").await.0, 200);
    ob.run("GET", "/events/nope/availability", &[], "").await;
    ob.app = app;
    // (Finding the stream is the event source mapping's work, not the function's.)
    let follower = local::streams::StreamFollower::attach(&local::testing::dynamodb_endpoint(), ob.app.store.client(), ob.app.store.table_name()).await.unwrap();
    ob.counter.take();
    let store = ob.app.store.clone();
    let read = follower.catch_up(|batch| { let store = store.clone(); async move { shared::project_records(&store, &batch).await; } }).await.unwrap();
    assert!(read > 0);
    ob.record("project-seat-map");
    // publish-events: the same records out through the real EventBridge
    // client (against the dev server's PutEvents), its requests counted.
    ob.used.insert("publish-events".into(), publish_events_actions(&ob.app).await);
    // (Its follower's DescribeTable is the event source mapping's, not a function's.)
    ob.counter.take();

    // An event create-event leaves to the sweep (202), which the sweep finishes.
    ob.app.config.create_event_budget_ms = 0;
    let later = common::plan(&[("B", "1", 2)], None);
    assert_eq!(ob.run("PUT", "/events/iam-later", &[], &later).await.0, 202);
    assert_eq!(ob.run("GET", "/events/iam-later", &[], "").await.0, 200);
    assert_eq!(ob.run("GET", "/events/nope", &[], "").await.0, 404);
    let_holds_expire(1).await;
    let summary = shared::sweep::run(&ob.app.store, shared::domain::Millis::now(), None).await;
    assert!(summary.expired_orders >= 1 && summary.released_seats >= 1 && summary.completed_events == 1, "{summary:?}");
    ob.record("expire-holds");

    let granted = granted();
    assert_eq!(granted.keys().collect::<Vec<_>>(), ob.used.keys().collect::<Vec<_>>(), "every function was exercised");
    for (function, grants) in &granted {
        assert_eq!(grants, &ob.used[function], "{function}: template grants (left) vs code uses (right)");
    }
}

/// The IAM actions publish-events needs: it publishes `app`'s stream
/// (from its start) through an EventBridge client that counts its
/// requests, every one on the bus.
async fn publish_events_actions(app: &shared::App) -> BTreeSet<(String, String)> {
    let feed = local::feed::DevFeed::quiet();
    let counter = RequestCounter::default();
    let (bus, server) = local::testing::bus_on_dev_server(app, &feed, Some(counter.clone())).await;
    let follower = local::streams::StreamFollower::attach(&local::testing::dynamodb_endpoint(), app.store.client(), app.store.table_name()).await.unwrap();
    let bus = &bus;
    follower
        .catch_up(|batch| async move {
            let out = shared::outbox::publish_records(bus, &batch, shared::domain::Millis::now()).await;
            assert!(out.failed_records.is_empty(), "{out:?}");
        })
        .await
        .unwrap();
    assert!(!feed.events().is_empty(), "the flow's events went out");
    server.stop().await;
    counter.take().into_keys().map(|op| (format!("events:{op}"), EVENT_BUS.to_owned())).collect()
}
