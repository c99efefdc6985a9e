//! Least privilege, proven (see local::iam): every DynamoDB and
//! EventBridge request a handler sends is recorded under its function, and
//! template.yaml's policies are held against the record. The first test
//! walks each function's success and error paths and checks its own
//! calls; the second, which `make test` runs after the whole suite, checks
//! every call of every test both ways: nothing sent that is not granted,
//! nothing granted that no test sent.

use crate::common;

#[path = "proof_resale.rs"]
mod resale;

use std::collections::BTreeSet;

use common::*;
use local::iam::{recorded, Call, RECORD_ENV};
use local::router::request;
use shared::handlers::SESSION_COMPLETED;
use testkit::iam::{granted, read_record, ungranted, unused};

/// Runs requests through the router, which records each handler's calls
/// under its function.
struct Observer {
    app: shared::App,
}

impl Observer {
    async fn run(
        &mut self,
        method: &str,
        uri: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, serde_json::Value) {
        read(
            local::router::dispatch(&self.app, request(method, uri, headers, body.to_owned()))
                .await,
        )
    }

    /// Creates event `id` of `plan` and an order holding `seats`: the
    /// order's id and its `Authorization` value.
    async fn holding(&mut self, id: &str, plan: &str, seats: &[&str]) -> (String, String) {
        assert_eq!(
            self.run("PUT", &format!("/events/{id}"), &[], plan).await.0,
            201
        );
        let (order, auth) = self.order(id).await;
        for seat in seats {
            let claim = format!("/orders/{order}/seats/{seat}");
            let headers = [("authorization", auth.as_str())];
            assert_eq!(self.run("POST", &claim, &headers, "").await.0, 200);
        }
        (order, auth)
    }

    /// confirm's signed payment `body` (a `confirm_body`) for `order`:
    /// its status.
    async fn confirm(&mut self, order: &str, body: &str) -> u16 {
        let confirm = format!("/orders/{order}/confirm");
        self.run("POST", &confirm, &as_refs(&signed(body)), body)
            .await
            .0
    }

    /// `event`'s waitlist put open now, taking returns for an hour.
    async fn taking_returns(&mut self, event: &str) {
        let close = (chrono::Utc::now() + chrono::Duration::hours(1)).to_rfc3339();
        let put = serde_json::json!({"opens": "now", "returnsCloseAt": close}).to_string();
        let uri = format!("/events/{event}/waitlist");
        assert_eq!(self.run("PUT", &uri, &[], &put).await.0, 200);
    }

    /// Joins `event`'s waitlist as `buyer` with `body`: the entry (`201`).
    async fn join(&mut self, event: &str, buyer: &str, body: &str) -> serde_json::Value {
        let token = common::buyer_token(event, buyer);
        let entries = format!("/events/{event}/waitlist/entries");
        let headers = [("x-buyer-token", token.as_str())];
        let (status, entry) = self.run("POST", &entries, &headers, body).await;
        assert_eq!(status, 201, "{entry}");
        entry
    }

    /// A Stripe checkout paying for `seat` of `order`, answered 200 with
    /// `outcome`.
    async fn pay_through_stripe(&mut self, order: &str, seat: &str, outcome: &str) {
        let metadata = stripe::paid_for(order, &[seat], serde_json::Value::Null);
        let event =
            stripe::checkout_event(SESSION_COMPLETED, &stripe::session_id(), "paid", metadata);
        let signature = stripe::stripe_signature(&event);
        let headers = [("stripe-signature", signature.as_str())];
        let (status, receipt) = self
            .run("POST", stripe::STRIPE_PATH, &headers, &event)
            .await;
        assert_eq!(
            (status, &receipt["outcome"]),
            (200, &outcome.into()),
            "{receipt}"
        );
    }

    /// `method` on `entry`'s own route of `event`, with its entry token.
    async fn as_entry(
        &mut self,
        method: &str,
        event: &str,
        entry: &serde_json::Value,
    ) -> serde_json::Value {
        let id = entry["entryId"].as_str().unwrap();
        let uri = format!("/events/{event}/waitlist/entries/{id}");
        let bearer = format!("Bearer {}", entry["entryToken"].as_str().unwrap());
        self.run(method, &uri, &[("authorization", &bearer)], "")
            .await
            .1
    }

    /// The organiser's removal of `entry` of `event`: the entry, `removed`.
    async fn remove(&mut self, event: &str, entry: &serde_json::Value) {
        let removal = format!("{{\"entryId\":{}}}", entry["entryId"]);
        let removals = format!("/events/{event}/waitlist/removals");
        let (_, removed) = self.run("POST", &removals, &[], &removal).await;
        assert_eq!(removed["reason"], "removed", "{removed}");
    }

    /// An order of `event` opened by `buyer` (its buyer token): the
    /// order's id and its `Authorization` value.
    async fn buyer_order(&mut self, event: &str, buyer: &str) -> (String, String) {
        let token = common::buyer_token(event, buyer);
        let orders = format!("/events/{event}/orders");
        let headers = [("x-buyer-token", token.as_str())];
        let (status, opened) = self.run("POST", &orders, &headers, "{}").await;
        assert_eq!(status, 201, "{opened}");
        (
            opened["orderId"].as_str().unwrap().to_owned(),
            format!("Bearer {}", opened["holdToken"].as_str().unwrap()),
        )
    }

    async fn order(&mut self, event: &str) -> (String, String) {
        let (_, o) = self
            .run("POST", &format!("/events/{event}/orders"), &[], "{}")
            .await;
        (
            o["orderId"].as_str().unwrap().to_owned(),
            format!("Bearer {}", o["holdToken"].as_str().unwrap()),
        )
    }
}

/// Fails with every call no statement allows.
fn assert_granted(calls: &BTreeSet<Call>) {
    let granted = granted();
    let bad = ungranted(&granted, calls);
    assert!(
        bad.is_empty(),
        "calls template.yaml does not grant:\n{}",
        bad.iter()
            .map(|c| format!("{c:?}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[tokio::test]
async fn each_function_is_granted_what_its_code_uses_on_every_path() {
    local::iam::record_in_process();
    let app = testkit::fresh_app_streaming(None).await;
    let mut ob = Observer { app };

    // Each function over its success and error paths.
    let ev = "iam-event";
    let plan = plan(&[("A", "1", 3)], Some(1));
    for body in [plan.as_str(), plan.as_str(), "{\"name\": 1}"] {
        ob.run("PUT", &format!("/events/{ev}"), &[], body).await;
    }
    ob.run("GET", &format!("/events/{ev}/seats"), &[], "").await;
    ob.run("GET", &format!("/events/{ev}/seats?section=Z"), &[], "")
        .await;
    ob.run("GET", "/events/nope/seats?section=A", &[], "").await;
    ob.run("POST", "/events/nope/orders", &[], "{}").await;
    let (id, auth) = ob.order(ev).await;
    let a = [("authorization", auth.as_str())];
    ob.run("GET", &format!("/orders/{id}"), &a, "").await;
    ob.run("GET", "/orders/ghost", &a, "").await;
    ob.run("POST", &format!("/orders/{id}/seats/A-1-1"), &a, "")
        .await;
    ob.run("POST", &format!("/orders/{id}/seats/A-1-9"), &a, "")
        .await;
    ob.run("POST", &format!("/orders/{id}/seats/A-1-1"), &[], "")
        .await;
    ob.run("DELETE", &format!("/orders/{id}/seats/A-1-1"), &a, "")
        .await;
    ob.run("DELETE", &format!("/orders/{id}/seats/A-1-1"), &[], "")
        .await;
    ob.run("POST", &format!("/orders/{id}/seats/A-1-2"), &a, "")
        .await;
    // best-available: a block, none left of that size, a stranger.
    ob.run(
        "POST",
        &format!("/orders/{id}/best-available"),
        &a,
        "{\"quantity\": 1}",
    )
    .await;
    ob.run(
        "POST",
        &format!("/orders/{id}/best-available"),
        &a,
        "{\"quantity\": 3, \"sectionId\": \"A\"}",
    )
    .await;
    ob.run(
        "POST",
        &format!("/orders/{id}/best-available"),
        &[],
        "{\"quantity\": 1}",
    )
    .await;
    ob.run("DELETE", &format!("/orders/{id}/seats/A-1-1"), &a, "")
        .await;
    // extend-order (on an event of a longer hold, so a loaded machine
    // cannot let the order expire first): a move, an unchanged answer, a
    // stranger.
    assert_eq!(
        ob.run(
            "PUT",
            "/events/iam-long",
            &[],
            &common::plan(&[("C", "1", 2)], Some(60))
        )
        .await
        .0,
        201
    );
    let (long, long_auth) = ob.order("iam-long").await;
    let l = [("authorization", long_auth.as_str())];
    assert_eq!(
        ob.run("POST", &format!("/orders/{long}/seats/C-1-1"), &l, "")
            .await
            .0,
        200
    );
    assert_eq!(
        ob.run(
            "POST",
            &format!("/orders/{long}/extend"),
            &l,
            "{\"seconds\": 600}"
        )
        .await
        .0,
        200
    );
    ob.run(
        "POST",
        &format!("/orders/{long}/extend"),
        &l,
        "{\"seconds\": 1}",
    )
    .await;
    ob.run("POST", &format!("/orders/{long}/extend"), &[], "")
        .await;
    // cancel-order: a live order holding a seat, then again; a stranger.
    let (gone, gone_auth) = ob.order(ev).await;
    let g = [("authorization", gone_auth.as_str())];
    ob.run("POST", &format!("/orders/{gone}/seats/A-1-3"), &g, "")
        .await;
    assert_eq!(
        ob.run("DELETE", &format!("/orders/{gone}"), &g, "").await.0,
        200
    );
    ob.run("DELETE", &format!("/orders/{gone}"), &g, "").await;
    ob.run("DELETE", &format!("/orders/{gone}"), &[], "").await;
    // hold-ga on a general-admission section: take, sold out (every bucket
    // read), give back, a stranger.
    let ga_plan = r#"{"name":"GA","holdSeconds":60,"sections":[{"sectionId":"F","capacity":30}]}"#;
    assert_eq!(ob.run("PUT", "/events/iam-ga", &[], ga_plan).await.0, 201);
    let (fan, fan_auth) = ob.order("iam-ga").await;
    let f = [("authorization", fan_auth.as_str())];
    assert_eq!(
        ob.run(
            "PUT",
            &format!("/orders/{fan}/ga/F"),
            &f,
            "{\"quantity\": 10}"
        )
        .await
        .0,
        200
    );
    let (rival, rival_auth) = ob.order("iam-ga").await;
    let r = [("authorization", rival_auth.as_str())];
    assert_eq!(
        ob.run(
            "PUT",
            &format!("/orders/{rival}/ga/F"),
            &r,
            "{\"quantity\": 10}"
        )
        .await
        .0,
        200
    );
    let (third, third_auth) = ob.order("iam-ga").await;
    let t = [("authorization", third_auth.as_str())];
    assert_eq!(
        ob.run(
            "PUT",
            &format!("/orders/{third}/ga/F"),
            &t,
            "{\"quantity\": 10}"
        )
        .await
        .0,
        200
    );
    let (late, late_auth) = ob.order("iam-ga").await;
    assert_eq!(
        ob.run(
            "PUT",
            &format!("/orders/{late}/ga/F"),
            &[("authorization", late_auth.as_str())],
            "{\"quantity\": 1}"
        )
        .await
        .0,
        409
    );
    assert_eq!(
        ob.run(
            "PUT",
            &format!("/orders/{rival}/ga/F"),
            &r,
            "{\"quantity\": 4}"
        )
        .await
        .0,
        200
    );
    ob.run(
        "PUT",
        &format!("/orders/{fan}/ga/F"),
        &[],
        "{\"quantity\": 1}",
    )
    .await;
    ob.run("GET", "/events/iam-ga/availability", &[], "").await;
    // confirm's general-admission paths: places it holds; more than it
    // holds (the late path reads the buckets); a cancelled order's payment.
    let paid_places = |order: &str, payment: &str, quantity: u32| {
        serde_json::json!({"orderId": order, "paymentId": payment, "seats": [], "ga": [{"sectionId": "F", "quantity": quantity}]}).to_string()
    };
    let held = paid_places(&fan, "pi_ga", 10);
    assert_eq!(
        ob.run(
            "POST",
            &format!("/orders/{fan}/confirm"),
            &as_refs(&signed(&held)),
            &held
        )
        .await
        .0,
        200
    );
    let over = paid_places(&rival, "pi_over", 6);
    assert_eq!(
        ob.run(
            "POST",
            &format!("/orders/{rival}/confirm"),
            &as_refs(&signed(&over)),
            &over
        )
        .await
        .0,
        200
    );
    assert_eq!(
        ob.run("DELETE", &format!("/orders/{third}"), &t, "")
            .await
            .0,
        200
    );
    let cancelled = paid_places(&third, "pi_cancelled", 2);
    assert_eq!(
        ob.run(
            "POST",
            &format!("/orders/{third}/confirm"),
            &as_refs(&signed(&cancelled)),
            &cancelled
        )
        .await
        .0,
        200
    );
    let pay = confirm_body(&id, "pi_1", &["A-1-2".to_owned()]);
    let headers = signed(&pay);
    assert_eq!(
        ob.run(
            "POST",
            &format!("/orders/{id}/confirm"),
            &as_refs(&headers),
            &pay
        )
        .await
        .0,
        200
    );
    ob.run(
        "POST",
        &format!("/orders/{id}/confirm"),
        &as_refs(&headers),
        &pay,
    )
    .await;
    // A late payment for a taken seat (REFUND_DUE), then a second payment.
    let (late, late_auth) = ob.order(ev).await;
    ob.run(
        "POST",
        &format!("/orders/{late}/seats/A-1-3"),
        &[("authorization", late_auth.as_str())],
        "",
    )
    .await;
    let_holds_expire(1).await;
    // The rival's hold outlives the late payment however slow the machine
    // (the event's own is 1 s); the sweep at the end releases it.
    let rival_order = order_expiring_in(&ob.app, ev, 3).await;
    let (rival, rival_auth) = (rival_order.id.clone(), rival_order.auth());
    ob.run(
        "POST",
        &format!("/orders/{rival}/seats/A-1-3"),
        &[("authorization", rival_auth.as_str())],
        "",
    )
    .await;
    let late_pay = confirm_body(&late, "pi_late", &["A-1-3".to_owned()]);
    assert_eq!(
        ob.run(
            "POST",
            &format!("/orders/{late}/confirm"),
            &as_refs(&signed(&late_pay)),
            &late_pay
        )
        .await
        .0,
        409
    );
    let pay2 = confirm_body(&late, "pi_2", &["A-1-3".to_owned()]);
    ob.run(
        "POST",
        &format!("/orders/{late}/confirm"),
        &as_refs(&signed(&pay2)),
        &pay2,
    )
    .await;
    // The same order paid again through Stripe: confirm's path, its own role.
    ob.pay_through_stripe(&late, "A-1-3", "not-sold").await;
    // The seat map: a new process (its event cache empty) serves it; the
    // stream's records are folded into the projection.
    let fresh = ob.app.new_process();
    let app = std::mem::replace(&mut ob.app, fresh);
    assert_eq!(
        ob.run("GET", &format!("/events/{ev}/availability"), &[], "")
            .await
            .0,
        200
    );
    ob.run("GET", "/events/nope/availability", &[], "").await;
    ob.app = app;
    // The stream's records folded into the projection, and published
    // through the real EventBridge client (against the dev server's
    // PutEvents). Finding the stream is the event source mapping's work.
    assert!(
        local::streams::project_now(&ob.app, &testkit::dynamodb_endpoint())
            .await
            .unwrap()
            > 0
    );
    publish_stream(&ob.app).await;

    queue_paths(&mut ob).await;
    waitlist_paths(&mut ob, ev).await;
    returns_paths(&mut ob).await;
    resale::resale_paths(&mut ob).await;
    offer_end_paths(&mut ob).await;

    // An event create-event leaves to the sweep (202), which the sweep finishes.
    ob.app.config.create_event_budget_ms = 0;
    let later = common::plan(&[("B", "1", 2)], None);
    assert_eq!(ob.run("PUT", "/events/iam-later", &[], &later).await.0, 202);
    assert_eq!(ob.run("GET", "/events/iam-later", &[], "").await.0, 200);
    assert_eq!(ob.run("GET", "/events/nope", &[], "").await.0, 404);
    let_expire(&rival_order).await;
    let sweeper = local::iam::attributed(&ob.app, "expire-holds");
    let summary = shared::sweep::run(&sweeper.store, shared::world::now(), None).await;
    assert!(
        summary.expired_orders >= 1 && summary.released_seats >= 1 && summary.completed_events == 1,
        "{summary:?}"
    );

    let calls = recorded();
    let functions: BTreeSet<&str> = calls.iter().map(|c| c.function.as_str()).collect();
    assert_eq!(functions, with_grants(), "every function was exercised");
    assert!(
        calls
            .iter()
            .any(|c| c.function == "confirm" && c.action == "dynamodb:BatchGetItem"),
        "the late GA path ran"
    );
    assert_granted(&calls);
}

/// The functions template.yaml grants anything (admission-keys, which
/// serves the JWKS from its environment, is granted nothing and calls
/// nothing).
fn with_grants() -> BTreeSet<&'static str> {
    granted()
        .into_iter()
        .filter(|(_, grants)| !grants.is_empty())
        .map(|(function, _)| &*function.leak())
        .collect()
}

/// The waitlist's routes: a put, a put again, a refused one, a read, a
/// delete and one of none; and the projector's opening at a sell-out.
async fn waitlist_paths(ob: &mut Observer, ev: &str) {
    let uri = format!("/events/{ev}/waitlist");
    assert_eq!(ob.run("GET", &uri, &[], "").await.0, 404);
    assert_eq!(ob.run("PUT", &uri, &[], r#"{"opens":"now"}"#).await.0, 200);
    assert_eq!(
        ob.run("PUT", &uri, &[], r#"{"maxQuantity":2}"#).await.0,
        200
    );
    assert_eq!(
        ob.run("PUT", &uri, &[], r#"{"opens":"sold-out"}"#).await.0,
        409
    );
    assert_eq!(ob.run("GET", &uri, &[], "").await.0, 200);
    entry_paths(ob, ev).await;
    assert_eq!(ob.run("DELETE", &uri, &[], "").await.0, 200);
    assert_eq!(
        ob.run("DELETE", "/events/nope/waitlist", &[], "").await.0,
        404
    );
    // One armed for a sell-out, which the projector opens once its one
    // seat and its one place are held (it reads both kinds).
    let sold = "iam-sellout";
    let plan = r#"{"name":"W","sections":[{"sectionId":"S","rows":[{"row":"1","count":1}]},{"sectionId":"F","capacity":1}]}"#;
    let created = ob.run("PUT", &format!("/events/{sold}"), &[], plan).await;
    assert_eq!(created.0, 201);
    let uri = format!("/events/{sold}/waitlist");
    let armed = ob.run("PUT", &uri, &[], r#"{"opens":"sold-out"}"#).await;
    assert_eq!(armed.1["status"], "ARMED");
    let (order, auth) = ob.order(sold).await;
    let auth = [("authorization", auth.as_str())];
    let claim = format!("/orders/{order}/seats/S-1-1");
    assert_eq!(ob.run("POST", &claim, &auth, "").await.0, 200);
    let place = format!("/orders/{order}/ga/F");
    assert_eq!(
        ob.run("PUT", &place, &auth, r#"{"quantity":1}"#).await.0,
        200
    );
    local::streams::project_now(&ob.app, &testkit::dynamodb_endpoint())
        .await
        .unwrap();
    assert_eq!(ob.run("GET", &uri, &[], "").await.1["status"], "OPEN");
}

/// A waitlist's entries on `ev`'s open waitlist: a join (new, again), its
/// status, the organiser's list and removal, a leave; and a join on an
/// event with a buyer limit (the buyer's record read).
async fn entry_paths(ob: &mut Observer, ev: &str) {
    let uri = format!("/events/{ev}/waitlist/entries");
    let token = common::buyer_token(ev, "user:iam");
    let buyer = [("x-buyer-token", token.as_str())];
    let (status, entry) = ob.run("POST", &uri, &buyer, "{}").await;
    assert_eq!(status, 201, "{entry}");
    assert_eq!(ob.run("POST", &uri, &buyer, "{}").await.0, 200);
    let id = entry["entryId"].as_str().unwrap();
    let auth = format!("Bearer {}", entry["entryToken"].as_str().unwrap());
    let auth = [("authorization", auth.as_str())];
    let entry_uri = format!("{uri}/{id}");
    assert_eq!(ob.run("GET", &entry_uri, &auth, "").await.0, 200);
    assert_eq!(ob.run("GET", &uri, &[], "").await.0, 200);
    let removal = format!("{{\"entryId\":\"{id}\"}}");
    let removals = format!("/events/{ev}/waitlist/removals");
    assert_eq!(ob.run("POST", &removals, &[], &removal).await.0, 200);
    assert_eq!(ob.run("DELETE", &entry_uri, &auth, "").await.0, 200);
    let (_, again) = ob.run("POST", &uri, &buyer, "{}").await;
    let again_uri = format!("{uri}/{}", again["entryId"].as_str().unwrap());
    let again_auth = format!("Bearer {}", again["entryToken"].as_str().unwrap());
    assert_eq!(
        ob.run("DELETE", &again_uri, &[("authorization", &again_auth)], "")
            .await
            .1["reason"],
        "left"
    );
    let limited = "iam-limited-waitlist";
    let plan = r#"{"name":"L","buyerLimit":2,"sections":[{"sectionId":"S","rows":[{"row":"1","count":2}]}]}"#;
    assert_eq!(
        ob.run("PUT", &format!("/events/{limited}"), &[], plan)
            .await
            .0,
        201
    );
    let put = format!("/events/{limited}/waitlist");
    assert_eq!(ob.run("PUT", &put, &[], r#"{"opens":"now"}"#).await.0, 200);
    let token = common::buyer_token(limited, "user:iam");
    let joined = ob
        .run(
            "POST",
            &format!("{put}/entries"),
            &[("x-buyer-token", &token)],
            "{}",
        )
        .await;
    assert_eq!(joined.0, 201, "{}", joined.1);
    offer_paths(ob).await;
    tick_paths(ob).await;
    limited_offer_paths(ob).await;
    over_limit_paths(ob).await;
}

/// The offerer told by the projector: two seats held before a waitlist
/// opens, two entries, the seats dropped and projected (the batch counted
/// for the tick), so the tick offers both entries; an offer's status (its order and token), a decline by a
/// leave, a removal of the other offer, the organiser's list of offers.
async fn offer_paths(ob: &mut Observer) {
    let ev = "iam-offers";
    let plan = r#"{"name":"O","sections":[{"sectionId":"S","rows":[{"row":"1","count":2}]}]}"#;
    let (order, auth) = ob.holding(ev, plan, &["S-1-1", "S-1-2"]).await;
    let auth = [("authorization", auth.as_str())];
    let put = format!("/events/{ev}/waitlist");
    assert_eq!(ob.run("PUT", &put, &[], r#"{"opens":"now"}"#).await.0, 200);
    let entries = format!("{put}/entries");
    let mut joined = Vec::new();
    for buyer in ["user:a", "user:b"] {
        joined.push(ob.join(ev, buyer, "{}").await);
    }
    for seat in ["S-1-1", "S-1-2"] {
        let drop = format!("/orders/{order}/seats/{seat}");
        assert_eq!(ob.run("DELETE", &drop, &auth, "").await.0, 200);
    }
    local::streams::project_now(&ob.app, &testkit::dynamodb_endpoint())
        .await
        .unwrap();
    assert_eq!(tick_now(ob, ev).await, Some(2));
    let holder = |entry: &serde_json::Value| {
        let uri = format!("{entries}/{}", entry["entryId"].as_str().unwrap());
        let auth = format!("Bearer {}", entry["entryToken"].as_str().unwrap());
        (uri, auth)
    };
    let (uri, bearer) = holder(&joined[0]);
    let (status, offered) = ob.run("GET", &uri, &[("authorization", &bearer)], "").await;
    assert_eq!(
        (status, &offered["status"]),
        (200, &"OFFERED".into()),
        "{offered}"
    );
    assert_eq!(ob.run("GET", &entries, &[], "").await.0, 200);
    let (other, other_bearer) = holder(&joined[1]);
    let (_, offered) = ob
        .run("GET", &other, &[("authorization", &other_bearer)], "")
        .await;
    assert_eq!(offered["status"], "OFFERED", "{offered}");
    decline_then_remove(ob, ev, &joined).await;
}

/// The first of `joined` (two offered entries of `ev`) declines its offer
/// (waitlist-entries) and the organiser removes the second (waitlist-admin).
async fn decline_then_remove(ob: &mut Observer, ev: &str, joined: &[serde_json::Value]) {
    let declined = ob.as_entry("DELETE", ev, &joined[0]).await;
    assert_eq!(declined["reason"], "declined", "{declined}");
    ob.remove(ev, &joined[1]).await;
}

/// Offers' ends logged for the waitlist's counts, under each writer's
/// role: four seats and two places freed, projected, and offered by the
/// tick; one offer cancelled with cancel-order, one paid through Stripe,
/// one through confirm, one emptied by drop-seat and one by hold-ga 0;
/// then the waitlist deleted, counted on, and taken off the registry.
async fn offer_end_paths(ob: &mut Observer) {
    let ev = "iam-offer-ends";
    let plan = r#"{"name":"E","sections":[{"sectionId":"S","rows":[{"row":"1","count":4}]},{"sectionId":"G","capacity":2}]}"#;
    let seats = ["S-1-1", "S-1-2", "S-1-3", "S-1-4"];
    let (holder, auth) = ob.holding(ev, plan, &seats).await;
    let places = format!("/orders/{holder}/ga/G");
    let holder_auth = [("authorization", auth.as_str())];
    let two = r#"{"quantity":2}"#;
    assert_eq!(ob.run("PUT", &places, &holder_auth, two).await.0, 200);
    let put = format!("/events/{ev}/waitlist");
    assert_eq!(ob.run("PUT", &put, &[], r#"{"opens":"now"}"#).await.0, 200);
    let mut entries = Vec::new();
    for buyer in ["user:cancels", "user:stripe", "user:confirms", "user:drops"] {
        entries.push(ob.join(ev, buyer, "{}").await);
    }
    let gives_back = ob
        .join(
            ev,
            "user:gives-back",
            r#"{"quantity":2,"sectionIds":["G"]}"#,
        )
        .await;
    let none = r#"{"quantity":0}"#;
    assert_eq!(ob.run("PUT", &places, &holder_auth, none).await.0, 200);
    for seat in seats {
        let drop = format!("/orders/{holder}/seats/{seat}");
        assert_eq!(
            ob.run("DELETE", &drop, &[("authorization", &auth)], "")
                .await
                .0,
            200
        );
    }
    local::streams::project_now(&ob.app, &testkit::dynamodb_endpoint())
        .await
        .unwrap();
    let offerer_app = local::iam::attributed(&ob.app, "offer-waitlists");
    let mut offerer = shared::offerer::Offerer::default();
    let now = shared::world::now().0;
    assert_eq!(ticked(&mut offerer, &offerer_app, ev, now).await, Some(5));
    let mut offers = Vec::new();
    for entry in &entries {
        let status = ob.as_entry("GET", ev, entry).await;
        assert_eq!(status["status"], "OFFERED", "{status}");
        offers.push(status["offer"].clone());
    }
    let bearer =
        |offer: &serde_json::Value| format!("Bearer {}", offer["holdToken"].as_str().unwrap());
    let id = |offer: &serde_json::Value| offer["orderId"].as_str().unwrap().to_owned();
    let cancel = format!("/orders/{}", id(&offers[0]));
    assert_eq!(
        ob.run(
            "DELETE",
            &cancel,
            &[("authorization", &bearer(&offers[0]))],
            ""
        )
        .await
        .0,
        200
    );
    let seat = |offer: &serde_json::Value| offer["seats"][0].as_str().unwrap().to_owned();
    ob.pay_through_stripe(&id(&offers[1]), &seat(&offers[1]), "sold")
        .await;
    let pay = confirm_body(&id(&offers[2]), "pi_offer_end", &[seat(&offers[2])]);
    assert_eq!(ob.confirm(&id(&offers[2]), &pay).await, 200);
    let drop = format!("/orders/{}/seats/{}", id(&offers[3]), seat(&offers[3]));
    let dropper = [("authorization", bearer(&offers[3]))];
    assert_eq!(ob.run("DELETE", &drop, &as_refs(&dropper), "").await.0, 200);
    let offer = ob.as_entry("GET", ev, &gives_back).await["offer"].clone();
    let places = format!("/orders/{}/ga/G", id(&offer));
    let giver = [("authorization", bearer(&offer))];
    assert_eq!(ob.run("PUT", &places, &as_refs(&giver), none).await.0, 200);
    // Deleted: counted on, then off the registry once its offers are done
    // (this event's visits alone: an hour on, others' holds would lapse).
    assert_eq!(ob.run("DELETE", &put, &[], "").await.0, 200);
    let event = shared::domain::EventId::parse(ev).unwrap();
    let deleted = shared::world::now();
    let visit = offerer.tick(&offerer_app, &event, deleted).await.unwrap();
    assert_eq!(visit.map(|look| look.made), None);
    let listed = ob.app.store.waitlisted_events().await.unwrap();
    assert!(listed.contains(&event), "counted on: {listed:?}");
    let done = deleted.0 + shared::domain::offer_tick::COUNTED_AFTER_DELETE_MS;
    let done = shared::domain::Millis(done);
    let visit = offerer.tick(&offerer_app, &event, done).await.unwrap();
    assert_eq!(visit.map(|look| look.made), None);
    let listed = ob.app.store.waitlisted_events().await.unwrap();
    assert!(!listed.contains(&event), "{listed:?}");
}

/// Returns (order-returns): a buyer's completed order of a seat and
/// places; refused while no waitlist takes returns; listed (the seat and
/// the places), read back (get-order reads its listings), withdrawn.
async fn returns_paths(ob: &mut Observer) {
    let ev = "iam-returns";
    let plan = r#"{"name":"R","sections":[{"sectionId":"S","rows":[{"row":"1","count":2}]},{"sectionId":"G","capacity":5}]}"#;
    let (order, auth) = ob.holding(ev, plan, &["S-1-1"]).await;
    let auth = [("authorization", auth.as_str())];
    let places = format!("/orders/{order}/ga/G");
    assert_eq!(
        ob.run("PUT", &places, &auth, r#"{"quantity":2}"#).await.0,
        200
    );
    let pay = serde_json::json!({"orderId": order, "paymentId": "pi_returns", "seats": ["S-1-1"], "ga": [{"sectionId": "G", "quantity": 2}]}).to_string();
    assert_eq!(ob.confirm(&order, &pay).await, 200);
    let returns = format!("/orders/{order}/returns");
    let ask = r#"{"seats":["S-1-1"],"ga":[{"sectionId":"G","quantity":2}]}"#;
    assert_eq!(
        ob.run("POST", &returns, &auth, ask).await.0,
        409,
        "no waitlist"
    );
    ob.taking_returns(ev).await;
    assert_eq!(ob.run("POST", &returns, &auth, ask).await.0, 200);
    let (_, read) = ob.run("GET", &format!("/orders/{order}"), &auth, "").await;
    assert_eq!(read["returns"][0]["status"], "LISTED", "{read}");
    for unit in ["S-1-1", "ga/G"] {
        let (status, left) = ob
            .run("DELETE", &format!("{returns}/{unit}"), &auth, "")
            .await;
        assert_eq!(status, 200, "{left}");
    }
}

/// The queue's functions over their paths: put (new, again, refused),
/// get, joins (admitted on the spot, waiting), a visitor's status, the
/// JWKS, create-order under an admission (and its retry), an admitter
/// tick, delete.
async fn queue_paths(ob: &mut Observer) {
    let ev = "iam-queue";
    // Seats and places: the admitter reads both kinds to know what is left.
    let both = r#"{"name":"Q","holdSeconds":60,"sections":[{"sectionId":"Q","rows":[{"row":"1","count":2}]},{"sectionId":"F","capacity":10}]}"#;
    assert_eq!(
        ob.run("PUT", &format!("/events/{ev}"), &[], both).await.0,
        201
    );
    let queue = common::queue::queue_body(-5_000, 60);
    assert_eq!(
        ob.run("PUT", &format!("/events/{ev}/queue"), &[], &queue)
            .await
            .0,
        200
    );
    assert_eq!(
        ob.run("PUT", &format!("/events/{ev}/queue"), &[], &queue)
            .await
            .0,
        200
    );
    ob.run(
        "PUT",
        &format!("/events/{ev}/queue"),
        &[],
        &common::queue::queue_body(3_600_000, 60),
    )
    .await;
    assert_eq!(
        ob.run("GET", &format!("/events/{ev}/queue"), &[], "")
            .await
            .0,
        200
    );
    let (_, admitted) = ob
        .run("POST", &format!("/events/{ev}/queue/visitors"), &[], "")
        .await;
    let (_, waiting) = ob
        .run("POST", &format!("/events/{ev}/queue/visitors"), &[], "")
        .await;
    assert_eq!(
        (&admitted["status"], &waiting["status"]),
        (&"ADMITTED".into(), &"WAITING".into())
    );
    let auth = format!("Bearer {}", waiting["visitorToken"].as_str().unwrap());
    let uri = format!(
        "/events/{ev}/queue/visitors/{}",
        waiting["visitorId"].as_str().unwrap()
    );
    assert_eq!(
        ob.run("GET", &uri, &[("authorization", &auth)], "").await.0,
        200
    );
    assert_eq!(
        ob.run("GET", "/.well-known/jwks.json", &[], "").await.0,
        200
    );
    let admission = format!("Bearer {}", admitted["admissionToken"].as_str().unwrap());
    let keyed = [
        ("authorization", admission.as_str()),
        ("idempotency-key", "k1"),
    ];
    for _ in 0..2 {
        assert_eq!(
            ob.run("POST", &format!("/events/{ev}/orders"), &keyed, "{}")
                .await
                .0,
            201
        );
    }
    let admitter = local::iam::attributed(&ob.app, "admit-visitors");
    let later = shared::domain::Millis(shared::world::now().0 + 1_500);
    shared::admitter::Admitter::default()
        .tick_all(&admitter, later)
        .await
        .unwrap();
    assert_eq!(
        ob.run("DELETE", &format!("/events/{ev}/queue"), &[], "")
            .await
            .0,
        200
    );
}

/// The offerer's tick (offer-waitlists): two of three seats held and
/// projected before the waitlist opens, a pair waiting that the free seat
/// cannot fill, and the tick offers it two of section G's five places. An
/// entry for four places waits; the pair's decline (waitlist-entries)
/// gives its places back, the tick offers them to the four, and the
/// organiser's removal (waitlist-admin) gives them back again. A
/// join check finds a single's join and offers it the seat; the order
/// extends unseen by the map, so at the old expiry the tick's offer of
/// the "lapsed" seats to a pair asking for them loses and reads them.
async fn tick_paths(ob: &mut Observer) {
    let ev = "iam-tick";
    let plan = r#"{"name":"T","sections":[{"sectionId":"S","rows":[{"row":"1","count":3}]},{"sectionId":"G","capacity":5}]}"#;
    let (order, auth) = ob.holding(ev, plan, &["S-1-1", "S-1-2"]).await;
    let auth = [("authorization", auth.as_str())];
    local::streams::project_now(&ob.app, &testkit::dynamodb_endpoint())
        .await
        .unwrap();
    let put = format!("/events/{ev}/waitlist");
    assert_eq!(ob.run("PUT", &put, &[], r#"{"opens":"now"}"#).await.0, 200);
    let pair = ob.join(ev, "user:pair", r#"{"quantity":2}"#).await;
    let offerer_app = local::iam::attributed(&ob.app, "offer-waitlists");
    let mut offerer = shared::offerer::Offerer::default();
    let now = shared::world::now().0;
    assert_eq!(ticked(&mut offerer, &offerer_app, ev, now).await, Some(1));
    let four = ob
        .join(ev, "user:four", r#"{"quantity":4,"sectionIds":["G"]}"#)
        .await;
    let declined = ob.as_entry("DELETE", ev, &pair).await;
    assert_eq!(declined["reason"], "declined", "{declined}");
    local::streams::project_now(&ob.app, &testkit::dynamodb_endpoint())
        .await
        .unwrap();
    // The decline's frees, counted by the projector, make a look due.
    let made = ticked(&mut offerer, &offerer_app, ev, now + 1_000).await;
    assert_eq!(made, Some(1), "the four get their places");
    let offered = ob.as_entry("GET", ev, &four).await;
    assert_eq!(offered["offer"]["ga"][0]["quantity"], 4, "{offered}");
    ob.remove(ev, &four).await;
    ob.join(ev, "user:one", r#"{"quantity":1}"#).await;
    // A join check is due 2 s after the last; a second more, since each
    // visit of tick_all runs on the clock as it starts (the first visit
    // may have started later in its tick than this one does).
    let made = ticked(&mut offerer, &offerer_app, ev, now + 4_000).await;
    assert_eq!(made, Some(1), "the single gets the free seat");
    let (_, read) = ob.run("GET", &format!("/orders/{order}"), &auth, "").await;
    let lapse = chrono::DateTime::parse_from_rfc3339(read["expiresAt"].as_str().unwrap())
        .unwrap()
        .timestamp_millis();
    let extend = format!("/orders/{order}/extend");
    assert_eq!(ob.run("POST", &extend, &auth, "{}").await.0, 200);
    // Only the two held seats could fill this entry: the tick tries them.
    let held = ob
        .join(ev, "user:held", r#"{"quantity":2,"sectionIds":["S"]}"#)
        .await;
    let made = ticked(&mut offerer, &offerer_app, ev, lapse).await;
    assert_eq!(made, Some(0), "the held seats are not offered");
    assert_eq!(ob.as_entry("GET", ev, &held).await["status"], "WAITING");
}

/// Offers on an event with a buyer limit, each counted in its buyer's
/// record: the tick offers the free seat to the first of two waiting; a
/// holder's drop frees another, which the tick offers to the second once
/// the projector counted it;
/// the first declines and the organiser removes the second (each gives
/// its count back).
async fn limited_offer_paths(ob: &mut Observer) {
    let ev = "iam-limited";
    let plan = r#"{"name":"L","buyerLimit":1,"sections":[{"sectionId":"S","rows":[{"row":"1","count":2}]}]}"#;
    assert_eq!(
        ob.run("PUT", &format!("/events/{ev}"), &[], plan).await.0,
        201
    );
    let (order, auth) = ob.buyer_order(ev, "user:holder").await;
    let seat = format!("/orders/{order}/seats/S-1-1");
    let auth = [("authorization", auth.as_str())];
    assert_eq!(ob.run("POST", &seat, &auth, "").await.0, 200);
    let put = format!("/events/{ev}/waitlist");
    assert_eq!(ob.run("PUT", &put, &[], r#"{"opens":"now"}"#).await.0, 200);
    let mut joined = Vec::new();
    for buyer in ["user:first", "user:second"] {
        joined.push(ob.join(ev, buyer, "{}").await);
    }
    let offerer_app = local::iam::attributed(&ob.app, "offer-waitlists");
    let mut offerer = shared::offerer::Offerer::default();
    let now = shared::world::now().0;
    assert_eq!(ticked(&mut offerer, &offerer_app, ev, now).await, Some(1));
    assert_eq!(ob.run("DELETE", &seat, &auth, "").await.0, 200);
    local::streams::project_now(&ob.app, &testkit::dynamodb_endpoint())
        .await
        .unwrap();
    let made = ticked(&mut offerer, &offerer_app, ev, now + 1_000).await;
    assert_eq!(made, Some(1), "the freed seat goes to the second");
    local::streams::project_now(&ob.app, &testkit::dynamodb_endpoint())
        .await
        .unwrap();
    let (_, map) = ob.run("GET", &format!("/events/{ev}/seats"), &[], "").await;
    let held = map["seats"].as_array().unwrap();
    assert!(
        held.iter().all(|s| s["status"] == "HELD"),
        "both seats offered: {map}"
    );
    decline_then_remove(ob, ev, &joined).await;
}

/// An entry whose offer would take its buyer over the limit, under each
/// offerer's role: its buyer joined, then claimed its one seat itself
/// (the waitlist opening a minute ahead, the sale is not waitlist-only
/// yet). The tick ends that entry, with a check that the record has not
/// moved, and offers the seat left to the next; on a second event another
/// holder's drop, counted by the projector, makes the tick look, and end
/// the entry likewise.
async fn over_limit_paths(ob: &mut Observer) {
    let ev = "iam-over-limit";
    let (over, _) = joined_then_at_limit(ob, ev, &["user:over", "user:next"]).await;
    let offerer_app = local::iam::attributed(&ob.app, "offer-waitlists");
    let mut offerer = shared::offerer::Offerer::default();
    let now = shared::world::now().0;
    assert_eq!(ticked(&mut offerer, &offerer_app, ev, now).await, Some(1));
    ended_at_limit(ob, &over).await;

    let ev = "iam-over-limit-projected";
    let (over, other) = joined_then_at_limit(ob, ev, &["user:over"]).await;
    let drop = format!("/orders/{}/seats/S-1-2", other.0);
    let auth = [("authorization", other.1.as_str())];
    assert_eq!(ob.run("DELETE", &drop, &auth, "").await.0, 200);
    local::streams::project_now(&ob.app, &testkit::dynamodb_endpoint())
        .await
        .unwrap();
    let made = ticked(&mut offerer, &offerer_app, ev, now + 1_000).await;
    assert_eq!(made, Some(0), "the entry ends rather than be offered");
    ended_at_limit(ob, &over).await;
}

/// Reads the entry at `route` with its `Authorization`: ended, `buyer-limit`.
async fn ended_at_limit(ob: &mut Observer, (route, auth): &(String, String)) {
    let (status, ended) = ob.run("GET", route, &[("authorization", auth)], "").await;
    assert_eq!(
        (status, &ended["reason"]),
        (200, &"buyer-limit".into()),
        "{ended}"
    );
}

/// A limited event (`buyerLimit` 1, seats S-1-1 to S-1-3) whose
/// waitlist opens a minute ahead: `user:other` holds S-1-2, `buyers` join
/// in turn, then the first claims S-1-1 and is at its limit. The first's
/// entry (its route, `Authorization`), and the other's order (its id,
/// `Authorization`).
async fn joined_then_at_limit(
    ob: &mut Observer,
    ev: &str,
    buyers: &[&str],
) -> ((String, String), (String, String)) {
    let plan = r#"{"name":"L","buyerLimit":1,"sections":[{"sectionId":"S","rows":[{"row":"1","count":3}]}]}"#;
    assert_eq!(
        ob.run("PUT", &format!("/events/{ev}"), &[], plan).await.0,
        201
    );
    let mut orders = Vec::new();
    for buyer in [buyers[0], "user:other"] {
        orders.push(ob.buyer_order(ev, buyer).await);
    }
    let claim = |(order, auth): &(String, String), seat: &str| {
        (format!("/orders/{order}/seats/{seat}"), auth.clone())
    };
    let (uri, auth) = claim(&orders[1], "S-1-2");
    assert_eq!(
        ob.run("POST", &uri, &[("authorization", &auth)], "")
            .await
            .0,
        200
    );
    common::waitlist::opened_ago(&ob.app, ev, -60_000).await;
    let entries = format!("/events/{ev}/waitlist/entries");
    let mut first = None;
    for buyer in buyers {
        let entry = ob.join(ev, buyer, "{}").await;
        let route = format!("{entries}/{}", entry["entryId"].as_str().unwrap());
        let bearer = format!("Bearer {}", entry["entryToken"].as_str().unwrap());
        first.get_or_insert((route, bearer));
    }
    let (uri, auth) = claim(&orders[0], "S-1-1");
    assert_eq!(
        ob.run("POST", &uri, &[("authorization", &auth)], "")
            .await
            .0,
        200
    );
    let first = first.expect("one buyer at least");
    (first, orders.swap_remove(1))
}

/// One tick of every waitlist at `at`: the offers `event`'s look made, if
/// it looked (a look that failed is logged and leaves none).
/// A fresh offerer's tick (offer-waitlists) now: what it offered `ev`.
async fn tick_now(ob: &Observer, ev: &str) -> Option<u32> {
    let app = local::iam::attributed(&ob.app, "offer-waitlists");
    let mut offerer = shared::offerer::Offerer::default();
    ticked(&mut offerer, &app, ev, shared::world::now().0).await
}

async fn ticked(
    offerer: &mut shared::offerer::Offerer,
    app: &shared::App,
    event: &str,
    at: i64,
) -> Option<u32> {
    let looks = offerer
        .tick_all(app, shared::domain::Millis(at))
        .await
        .unwrap();
    // The positions' updates run beside the visits: their calls too.
    offerer.finish().await;
    let mut of_event = looks.iter().filter(|(e, _)| e.as_str() == event);
    of_event.next().map(|(_, look)| look.made)
}

/// Publishes `app`'s stream (from its start) through the EventBridge
/// client publish-events uses, recorded as its calls.
async fn publish_stream(app: &shared::App) {
    let feed = local::feed::DevFeed::quiet();
    let (bus, server) = testkit::bus_on_dev_server(app, &feed, None).await;
    let follower = local::streams::StreamFollower::attach(
        &testkit::dynamodb_endpoint(),
        app.store.client(),
        app.store.table_name(),
    )
    .await
    .unwrap();
    let bus = &bus;
    follower
        .catch_up(|batch| async move {
            let out = shared::outbox::publish_records(bus, &batch, shared::world::now()).await;
            assert!(out.failed_records.is_empty(), "{out:?}");
        })
        .await
        .unwrap();
    assert!(!feed.events().is_empty(), "the flow's events went out");
    server.stop().await;
}

/// The whole suite's record (`make test` runs the suite with
/// `SEATCLAIM_IAM_RECORD` set, then this): every call any test made
/// through a handler is granted to its function, and every grant (each
/// action of each statement, on each of its key prefixes) was used by
/// some test. A grant no test can reach is removed, not kept "just in case".
#[test]
#[ignore = "make test runs it after the whole suite, whose record it reads"]
fn every_call_of_the_suite_is_granted_and_every_grant_is_used() {
    let dir = std::env::var_os(RECORD_ENV)
        .unwrap_or_else(|| panic!("{RECORD_ENV} must name the suite's record (make test sets it)"));
    let calls = read_record(std::path::Path::new(&dir));
    let all = granted();
    let functions: BTreeSet<&str> = calls.iter().map(|c| c.function.as_str()).collect();
    assert_eq!(
        functions,
        with_grants(),
        "every function's calls were recorded"
    );
    assert_granted(&calls);
    let unused = unused(&all, &calls);
    assert!(
        unused.is_empty(),
        "granted, but no test sends it (remove it, or add the test):\n{}",
        unused.join("\n")
    );
    eprintln!(
        "IAM: {} distinct calls of {} functions, all granted; every grant used",
        calls.len(),
        functions.len()
    );
}
