//! The waitlist's test helpers: an open waitlist, joins, an entry's own
//! routes with its token, the organiser's list, and raw looks at the
//! indexes.

use super::*;
use serde_json::{json, Value};
use shared::domain::waitlist_entry::WaitingIndex;
use shared::domain::{EventId, SectionId};

pub fn entries(event: &str) -> String {
    format!("/events/{event}/waitlist/entries")
}

pub async fn put_waitlist(app: &shared::App, event: &str, body: Value) -> Value {
    let uri = format!("/events/{event}/waitlist");
    let (status, reply) = send(app, "PUT", &uri, &[], &body.to_string()).await;
    assert_eq!(status, 200, "{reply}");
    reply
}

/// An event with seated sections A and B (one row of 4 each) and an open
/// waitlist taking up to 4 a entry.
pub async fn open_event(app: &shared::App) -> String {
    let plan = plan(&[("A", "1", 4), ("B", "1", 4)], Some(300));
    let (ev, _) = create_event(app, "wl", &plan).await;
    put_waitlist(app, &ev, json!({"opens": "now", "maxQuantity": 4})).await;
    ev
}

pub async fn join(app: &shared::App, event: &str, buyer: &str, body: Value) -> (u16, Value) {
    let token = buyer_token(event, buyer);
    let headers = [("x-buyer-token", token.as_str())];
    send(app, "POST", &entries(event), &headers, &body.to_string()).await
}

/// A join that makes a new entry (`201`): the entry.
pub async fn joined(app: &shared::App, event: &str, buyer: &str, ask: Value) -> Value {
    let (status, entry) = join(app, event, buyer, ask).await;
    assert_eq!(status, 201, "{entry}");
    entry
}

pub fn entry_uri(event: &str, entry: &Value) -> String {
    format!("{}/{}", entries(event), entry["entryId"].as_str().unwrap())
}

pub fn bearer(entry: &Value) -> String {
    format!("Bearer {}", entry["entryToken"].as_str().unwrap())
}

/// `method` on the entry's own route with its token: the `200` reply.
pub async fn as_holder(app: &shared::App, method: &str, event: &str, entry: &Value) -> Value {
    let auth = bearer(entry);
    let headers = [("authorization", auth.as_str())];
    let (status, reply) = send(app, method, &entry_uri(event, entry), &headers, "").await;
    assert_eq!(status, 200, "{reply}");
    reply
}

pub async fn status_of(app: &shared::App, event: &str, entry: &Value) -> Value {
    as_holder(app, "GET", event, entry).await
}

pub async fn leave(app: &shared::App, event: &str, entry: &Value) -> Value {
    as_holder(app, "DELETE", event, entry).await
}

/// Every page of the organiser's list for `query`, following `next`.
pub async fn every_page(app: &shared::App, event: &str, query: &str) -> Vec<Vec<Value>> {
    let mut pages = Vec::new();
    let mut cursor = String::new();
    loop {
        let (status, page) = list(app, event, &format!("?{query}{cursor}")).await;
        assert_eq!(status, 200, "{page}");
        pages.push(page["entries"].as_array().unwrap().clone());
        match page["next"].as_str() {
            Some(next) => cursor = format!("&cursor={next}"),
            None => return pages,
        }
    }
}

pub async fn list(app: &shared::App, event: &str, query: &str) -> (u16, Value) {
    send(app, "GET", &format!("{}{query}", entries(event)), &[], "").await
}

/// How many places index `index` of generation 1 holds, read raw.
pub async fn index_places(app: &shared::App, event: &str, index: &WaitingIndex) -> usize {
    let event = EventId::parse(event).unwrap();
    let mut places = 0;
    for pk in shared::store::waiting_index_partitions(&event, 1, index) {
        places += partition_items(app, pk).await.len();
    }
    places
}

pub fn index(section: Option<&str>, quantity: u32, together: bool) -> WaitingIndex {
    WaitingIndex {
        section: section.map(|s| SectionId::parse(s).unwrap()),
        quantity,
        together,
        wheelchair: 0,
    }
}

/// Opens `event`'s waitlist (put with `opens: "now"`) and moves its
/// opening `ago_ms` into the past, as if it had opened then: the gate
/// starts a second after the opening, and a test does not sleep for it.
pub async fn opened_ago(app: &shared::App, event: &str, ago_ms: i64) {
    put_waitlist(app, event, json!({"opens": "now"})).await;
    let id = shared::domain::EventId::parse(event).unwrap();
    let stored = app.store.read_waitlist(&id).await.unwrap().unwrap();
    let opened_at = shared::domain::Millis(shared::world::now().0 - ago_ms);
    let waitlist = shared::domain::waitlist::Waitlist {
        opened_at: Some(opened_at),
        ..stored.waitlist
    };
    let keep = shared::store::Listing::Keep;
    let written = app
        .store
        .put_waitlist(&id, &waitlist, Some(stored.version), keep);
    assert!(written.await.unwrap());
}

/// An entry of `buyer` (one seat, any section) in `event`'s open waitlist
/// as if it had joined at `joined_at`, written by the join's own store
/// transaction (the route stamps the clock; a test of join order needs
/// joins seconds apart without sleeping): `{entryId, entryToken}`, as the
/// join's reply names it.
pub async fn seeded_entry(
    app: &shared::App,
    event: &str,
    buyer: &str,
    joined_at: shared::domain::Millis,
) -> Value {
    let one = shared::domain::waitlist::EntryRequest {
        quantity: 1,
        section_ids: Vec::new(),
        together: false,
        wheelchair: 0,
    };
    seeded_asking(app, event, buyer, joined_at, one).await
}

/// [`seeded_entry`] asking for `request`.
pub async fn seeded_asking(
    app: &shared::App,
    event: &str,
    buyer: &str,
    joined_at: shared::domain::Millis,
    request: shared::domain::waitlist::EntryRequest,
) -> Value {
    use shared::domain::waitlist::EntryStatus;
    use shared::domain::waitlist_entry::Entry;
    let event_id = EventId::parse(event).unwrap();
    let stored = app.store.read_waitlist(&event_id).await.unwrap().unwrap();
    let entry_id = shared::domain::EntryId::parse(&uuid::Uuid::new_v4().to_string()).unwrap();
    let token = app
        .config
        .token_keys()
        .unwrap()
        .entry_token(&event_id, &entry_id);
    let entry = Entry {
        entry_id: entry_id.clone(),
        generation: stored.waitlist.generation,
        buyer: shared::domain::buyer::BuyerId::parse(buyer).unwrap(),
        request,
        joined_at,
        token_hash: token.hash(),
        stored: EntryStatus::Waiting,
        offer_order: None,
        // Seeded on events without a buyer limit.
        limited: None,
    };
    let joined = app.store.join_waitlist(&event_id, &entry, None).await;
    assert!(joined.unwrap(), "a fresh buyer's join is written");
    json!({"entryId": entry_id.as_str(), "entryToken": token.as_str()})
}

/// One look at `event`'s free seats now: the offers it made.
pub async fn offer_free(app: &shared::App, event: &str) -> u32 {
    let now = shared::world::now();
    shared::offerer::offer_free(app, &EventId::parse(event).unwrap(), now)
        .await
        .unwrap()
        .made
}

/// The offerer's tick (offer-waitlists) now, as a fresh instance: what it
/// offered `event` (the stream's frees reach offers this way: the
/// projector counts them, the tick offers).
pub async fn tick_now(app: &shared::App, event: &str) -> u32 {
    let app = local::iam::attributed(app, "offer-waitlists");
    let id = EventId::parse(event).unwrap();
    let mut offerer = shared::offerer::Offerer::default();
    let look = offerer.tick(&app, &id, shared::world::now()).await.unwrap();
    look.map_or(0, |l| l.made)
}

/// `offerers` looks at `event` at once, each its own task: the offers
/// they made in all.
pub async fn offer_free_at_once(app: &shared::App, event: &str, offerers: usize) -> u32 {
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..offerers {
        let (app, event) = (app.clone(), event.to_owned());
        tasks.spawn(async move { offer_free(&app, &event).await });
    }
    tasks.join_all().await.into_iter().sum()
}

/// The first `offered` of `entries` (in join order) read `OFFERED`, the
/// rest `WAITING`: nobody overtook.
pub async fn the_first_offered(app: &shared::App, event: &str, entries: &[Value], offered: usize) {
    for (i, entry) in entries.iter().enumerate() {
        let expected = if i < offered { "OFFERED" } else { "WAITING" };
        let status = status_of(app, event, entry).await;
        assert_eq!(status["status"], expected, "entry {i}: {status}");
    }
}

/// The offer an offered entry's status shows, as an order its holder can use.
pub fn offered_order(status: &Value) -> TestOrder {
    let offer = &status["offer"];
    TestOrder {
        id: offer["orderId"].as_str().unwrap().to_owned(),
        token: offer["holdToken"].as_str().unwrap().to_owned(),
        expires_at: offer["expiresAt"].as_str().unwrap().to_owned(),
        created_at: String::new(),
    }
}

/// Waits until `sent` has counted more than `before` attempts of
/// `operation` (a request the test slowed is on its way), polling every
/// few milliseconds; fails after 10 s.
pub async fn until_sent(sent: &local::faults::FaultInjector, operation: &str, before: u64) {
    let waited = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        while sent.attempts(operation) <= before {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    });
    assert!(waited.await.is_ok(), "no {operation} sent within 10 s");
}

/// From now, the next offer's transaction is refused on the waitlist's
/// check alone (a delete, a new generation, or returns closed since the
/// look read it), with DynamoDB's cancellation reasons; the counts start
/// again.
pub fn refuse_next_offer_on_the_waitlists_check(faults: &local::faults::FaultInjector) {
    faults.reset();
    // The offer's items: its order, its entry, then the waitlist's check.
    let reasons = vec!["None", "None", "ConditionalCheckFailed"];
    let refusal = local::faults::Fault::TransactionCanceled(reasons);
    faults.fail("TransactWriteItems", refusal, Some(1));
}
