//! The resale's paths for the IAM proof (`proof.rs`): a seller's eight
//! listed seats offered by the tick (offer-waitlists) to six entries, a
//! withdrawal refused while offered (order-returns), a confirm and a
//! Stripe payment each buying one of two offered seats and letting the
//! other go, a drop, a cancel-order, a decline and a removal of offers
//! holding listed seats, the tick's offer of what they let go (counted
//! by the projector), a
//! withdrawal of a listing nobody holds, and the tick's written reverts
//! once returns close.

use super::{ticked, Observer};
use crate::common::*;

/// The seats an entry's offer holds, and the offer (its order id and
/// `Authorization`).
async fn offer(
    ob: &mut Observer,
    ev: &str,
    entry: &serde_json::Value,
) -> (Vec<String>, String, String) {
    let status = ob.as_entry("GET", ev, entry).await;
    assert_eq!(status["status"], "OFFERED", "{status}");
    let offer = &status["offer"];
    let seats = offer["seats"].as_array().unwrap().iter();
    let seats = seats.map(|s| s.as_str().unwrap().to_owned()).collect();
    let auth = format!("Bearer {}", offer["holdToken"].as_str().unwrap());
    (seats, offer["orderId"].as_str().unwrap().to_owned(), auth)
}

pub(super) async fn resale_paths(ob: &mut Observer) {
    let ev = "iam-resale";
    let plan = r#"{"name":"R","sections":[{"sectionId":"S","rows":[{"row":"1","count":8}]}]}"#;
    let seats: Vec<String> = (1..=8).map(|n| format!("S-1-{n}")).collect();
    let all: Vec<&str> = seats.iter().map(String::as_str).collect();
    let (seller, auth) = ob.holding(ev, plan, &all).await;
    let pay = confirm_body(&seller, "pi_seller", &seats);
    assert_eq!(ob.confirm(&seller, &pay).await, 200);
    ob.taking_returns(ev).await;
    let returns = format!("/orders/{seller}/returns");
    let seller_auth = [("authorization", auth.as_str())];
    let listed = serde_json::json!({ "seats": seats }).to_string();
    assert_eq!(ob.run("POST", &returns, &seller_auth, &listed).await.0, 200);

    let mut entries = Vec::new();
    for (buyer, body) in [
        ("user:confirms", r#"{"quantity":2}"#),
        ("user:stripe", r#"{"quantity":2}"#),
        ("user:drops", "{}"),
        ("user:cancels", "{}"),
        ("user:declines", "{}"),
        ("user:removed", "{}"),
    ] {
        entries.push(ob.join(ev, buyer, body).await);
    }
    let offerer_app = local::iam::attributed(&ob.app, "offer-waitlists");
    let mut offerer = shared::offerer::Offerer::default();
    let now = shared::world::now().0;
    assert_eq!(ticked(&mut offerer, &offerer_app, ev, now).await, Some(6));

    let (held, order, _) = offer(ob, ev, &entries[0]).await;
    let withdraw = format!("{returns}/{}", held[0]);
    let (status, refused) = ob.run("DELETE", &withdraw, &seller_auth, "").await;
    assert_eq!(
        (status, &refused["error"]),
        (409, &"return-offered".into()),
        "{refused}"
    );
    let pay = confirm_body(&order, "pi_resale", &held[..1]);
    assert_eq!(ob.confirm(&order, &pay).await, 200);
    let (held, order, _) = offer(ob, ev, &entries[1]).await;
    ob.pay_through_stripe(&order, &held[0], "sold").await;

    let (held, order, bearer_drop) = offer(ob, ev, &entries[2]).await;
    let drop = format!("/orders/{order}/seats/{}", held[0]);
    let (status, dropped) = ob
        .run("DELETE", &drop, &[("authorization", &bearer_drop)], "")
        .await;
    assert_eq!(
        (status, &dropped["status"]),
        (200, &"SOLD".into()),
        "{dropped}"
    );
    let (_, order, bearer_cancel) = offer(ob, ev, &entries[3]).await;
    let cancel = format!("/orders/{order}");
    assert_eq!(
        ob.run("DELETE", &cancel, &[("authorization", &bearer_cancel)], "")
            .await
            .0,
        200
    );
    let declined = ob.as_entry("DELETE", ev, &entries[4]).await;
    assert_eq!(declined["reason"], "declined", "{declined}");
    ob.remove(ev, &entries[5]).await;

    // What they let go of goes on: the projector counts it, and the tick
    // offers one to the next.
    let next = ob.join(ev, "user:next", "{}").await;
    local::streams::project_now(&ob.app, &testkit::dynamodb_endpoint())
        .await
        .unwrap();
    let made = ticked(&mut offerer, &offerer_app, ev, now + 1_000).await;
    assert!(made.is_some_and(|made| made > 0), "{made:?}");
    let (taken, _, _) = offer(ob, ev, &next).await;
    let (_, read) = ob
        .run("GET", &format!("/orders/{seller}"), &seller_auth, "")
        .await;
    let returns_read = read["returns"].as_array().unwrap();
    let unheld = returns_read
        .iter()
        .filter(|r| r["status"] == "LISTED")
        .map(|r| r["seatId"].as_str().unwrap().to_owned())
        .find(|seat| !taken.contains(seat))
        .expect("a listing nobody holds");
    let withdraw = format!("{returns}/{unheld}");
    let (status, withdrawn) = ob.run("DELETE", &withdraw, &seller_auth, "").await;
    assert_eq!(status, 200, "{withdrawn}");

    // Returns closed early: the tick writes the listings' reverts.
    let close = r#"{"returnsCloseAt":null}"#;
    assert_eq!(
        ob.run("PUT", &format!("/events/{ev}/waitlist"), &[], close)
            .await
            .0,
        200
    );
    let later = shared::world::now().0 + 1_000;
    ticked(&mut offerer, &offerer_app, ev, later).await;
    // Written, not only read so: the stored listings (get-order computes
    // a revert as it reads).
    let order = shared::domain::OrderId::parse(&seller).unwrap();
    let stored = ob.app.store.read_listings(&order).await.unwrap();
    let reverted = shared::domain::returns::ReturnStatus::Reverted;
    let written = stored.iter().filter(|l| l.status == reverted).count();
    assert!(written >= 4, "{stored:?}");
}
