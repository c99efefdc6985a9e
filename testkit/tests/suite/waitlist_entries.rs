//! A waitlist's entries against a real DynamoDB Local: join, an entry's
//! status and its token, leave, one live entry per buyer under a race,
//! every refusal (nothing written), the buyer limit, a delete that closes
//! the generation's entries without a write per entry, and the organiser's
//! paged list and removal.

use crate::common;

use common::waitlist::*;
use common::*;
use serde_json::{json, Value};
use shared::domain::{EventId, SectionId};

#[tokio::test]
async fn a_join_waits_in_its_indexes_answers_to_its_token_and_leaves() {
    let app = fresh_app().await;
    let ev = open_event(&app).await;
    let (status, joined) = join(
        &app,
        &ev,
        "user:1",
        json!({"quantity": 2, "sectionIds": ["B", "A"]}),
    )
    .await;
    assert_eq!(status, 201, "{joined}");
    assert_eq!(
        (
            &joined["status"],
            &joined["quantity"],
            &joined["sectionIds"],
            &joined["together"],
            &joined["wheelchair"],
            &joined["buyerId"],
            &joined["pollAfterSeconds"]
        ),
        (
            &json!("WAITING"),
            &json!(2),
            &json!(["B", "A"]),
            &json!(true),
            &json!(0),
            &json!("user:1"),
            &json!(5)
        ),
        "{joined}"
    );
    assert!(joined["entryToken"].as_str().unwrap().starts_with("et_"));
    // Written in the join's transaction: a place in each section's index.
    for section in ["A", "B"] {
        assert_eq!(
            index_places(&app, &ev, &index(Some(section), 2, true)).await,
            1,
            "{section}"
        );
    }
    let read = status_of(&app, &ev, &joined).await;
    let mut expected = joined.clone();
    expected.as_object_mut().unwrap().remove("entryToken");
    assert_eq!(
        read, expected,
        "the status is the join's reply without the token"
    );

    // Tokens: none, not ours, another entry's, an unknown entry.
    let uri = entry_uri(&ev, &joined);
    let (_, other) = join(&app, &ev, "user:2", json!({})).await;
    let refusals = [
        (None, "entry-token-missing"),
        (Some("Bearer vt_00".to_owned()), "entry-token-malformed"),
        (Some(bearer(&other)), "entry-token-other-entry"),
    ];
    for (auth, reason) in refusals {
        let headers: Vec<(&str, &str)> =
            auth.iter().map(|a| ("authorization", a.as_str())).collect();
        let (status, body) = send(&app, "GET", &uri, &headers, "").await;
        assert_eq!(
            (status, &body["error"], &body["reason"]),
            (401, &json!("unauthorized"), &json!(reason))
        );
        let (status, _) = send(&app, "DELETE", &uri, &headers, "").await;
        assert_eq!(status, 401, "{reason}: a leave is refused alike");
    }
    let unknown = format!("{}/0123456789abcdef0123456789abcdef", entries(&ev));
    let auth = bearer(&joined);
    let (status, body) = send(&app, "GET", &unknown, &[("authorization", &auth)], "").await;
    assert_eq!((status, &body["error"]), (404, &json!("entry-not-found")));

    // Leave: ended, off its indexes; again the same.
    let left = leave(&app, &ev, &joined).await;
    assert_eq!(
        (
            &left["status"],
            &left["reason"],
            left.get("pollAfterSeconds")
        ),
        (&json!("ENDED"), &json!("left"), None),
        "{left}"
    );
    for section in ["A", "B"] {
        assert_eq!(
            index_places(&app, &ev, &index(Some(section), 2, true)).await,
            0,
            "{section}"
        );
    }
    assert_eq!(leave(&app, &ev, &joined).await, left);
    assert_eq!(status_of(&app, &ev, &joined).await, left);
    // The other entry, of any section, waits in the any-section index.
    assert_eq!(index_places(&app, &ev, &index(None, 1, true)).await, 1);
}

#[tokio::test]
async fn a_buyer_has_one_live_entry_however_many_join_at_once() {
    let app = fresh_app().await;
    let ev = open_event(&app).await;
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..12 {
        let (app, ev) = (app.clone(), ev.clone());
        tasks.spawn(async move { join(&app, &ev, "user:race", json!({"quantity": 1})).await });
    }
    let replies = tasks.join_all().await;
    let created = replies.iter().filter(|(s, _)| *s == 201).count();
    assert_eq!(created, 1, "{replies:?}");
    assert!(
        replies.iter().all(|(s, _)| *s == 200 || *s == 201),
        "{replies:?}"
    );
    let ids: std::collections::BTreeSet<&str> = replies
        .iter()
        .map(|(_, b)| b["entryId"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 1, "every join answers with the one entry");
    // Every token it gave works.
    for (_, reply) in &replies {
        assert_eq!(status_of(&app, &ev, reply).await["status"], "WAITING");
    }
    // A join while it waits does not use its body (over this waitlist's
    // maxQuantity, an unknown section); after a leave, a new entry at the
    // back, one however many join at once again.
    let ignored = json!({"quantity": 5, "sectionIds": ["Z"]});
    let (status, again) = join(&app, &ev, "user:race", ignored).await;
    assert_eq!((status, &again["quantity"]), (200, &json!(1)), "{again}");
    let (_, rival) = join(&app, &ev, "user:rival", json!({})).await;
    leave(&app, &ev, &again).await;
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let (app, ev) = (app.clone(), ev.clone());
        tasks.spawn(async move { join(&app, &ev, "user:race", json!({"quantity": 3})).await });
    }
    let replies = tasks.join_all().await;
    let created: Vec<&Value> = replies
        .iter()
        .filter(|(s, _)| *s == 201)
        .map(|(_, b)| b)
        .collect();
    assert_eq!(created.len(), 1, "{replies:?}");
    let back = created[0].clone();
    assert!(
        replies.iter().all(|(_, b)| b["entryId"] == back["entryId"]),
        "{replies:?}"
    );
    assert_eq!(back["quantity"], json!(3), "{back}");
    assert_ne!(back["entryId"], again["entryId"]);
    let (_, listed) = list(&app, &ev, "").await;
    let order: Vec<(&Value, &Value)> = listed["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (&e["entryId"], &e["status"]))
        .collect();
    assert_eq!(
        order,
        [
            (&again["entryId"], &json!("ENDED")),
            (&rival["entryId"], &json!("WAITING")),
            (&back["entryId"], &json!("WAITING")),
        ],
        "join order: {listed}"
    );
}

#[tokio::test]
async fn refused_joins_say_why_and_write_nothing() {
    let app = fresh_app().await;
    let ev = open_event(&app).await;
    let bad = [
        json!({"quantity": 0}),
        json!({"quantity": 5}),
        json!({"quantity": "2"}),
        json!({"sectionIds": []}),
        json!({"sectionIds": ["A", "A"]}),
        json!({"sectionIds": ["A","B","C","D","E","F","G","H","I","J","K"]}),
        json!({"quantity": 2, "wheelchair": 3}),
        json!({"together": "yes"}),
    ];
    for body in &bad {
        let (status, reply) = join(&app, &ev, "user:1", body.clone()).await;
        assert_eq!(
            (status, &reply["error"]),
            (400, &json!("bad-request")),
            "{body}: {reply}"
        );
    }
    let (status, reply) = join(&app, &ev, "user:1", json!({"sectionIds": ["A", "Z"]})).await;
    assert_eq!(
        (status, &reply["error"]),
        (404, &json!("section-not-found")),
        "{reply}"
    );
    let (status, reply) = send(&app, "POST", &entries(&ev), &[], "{}").await;
    assert_eq!(
        (status, &reply["error"]),
        (401, &json!("buyer-token-required")),
        "{reply}"
    );
    let elsewhere = buyer_token("another-event", "user:1");
    let (status, reply) = send(
        &app,
        "POST",
        &entries(&ev),
        &[("x-buyer-token", &elsewhere)],
        "{}",
    )
    .await;
    assert_eq!(
        (status, &reply["error"]),
        (401, &json!("buyer-token-invalid")),
        "{reply}"
    );
    // The body's ranges come first, before the buyer's token and the event.
    let (status, _) = send(
        &app,
        "POST",
        &entries("no-such-event"),
        &[],
        r#"{"quantity":0}"#,
    )
    .await;
    assert_eq!(status, 400);
    let (_, listed) = list(&app, &ev, "").await;
    assert_eq!(listed, json!({"entries": []}), "nothing was written");
    assert_eq!(index_places(&app, &ev, &index(None, 1, true)).await, 0);
    assert_eq!(index_places(&app, &ev, &index(Some("A"), 1, true)).await, 0);

    let (status, reply) = join(&app, "no-such-event", "user:1", json!({})).await;
    assert_eq!((status, &reply["error"]), (404, &json!("event-not-found")));
    let bare = event(&app, 2, 300).await;
    let (status, reply) = join(&app, &bare, "user:1", json!({})).await;
    assert_eq!(
        (status, &reply["error"]),
        (404, &json!("waitlist-not-found"))
    );
    put_waitlist(&app, &bare, json!({"opens": "sold-out"})).await;
    let (status, reply) = join(&app, &bare, "user:1", json!({})).await;
    assert_eq!(
        (status, &reply["error"], &reply["opens"]),
        (409, &json!("waitlist-not-open"), &json!("sold-out")),
        "{reply}"
    );
    let (status, _) = send(&app, "DELETE", &format!("/events/{bare}/waitlist"), &[], "").await;
    assert_eq!(status, 200);
    let (status, reply) = join(&app, &bare, "user:1", json!({})).await;
    assert_eq!(
        (status, &reply["error"]),
        (409, &json!("waitlist-ended")),
        "{reply}"
    );
}

#[tokio::test]
async fn a_join_counts_what_the_buyer_holds_against_its_limit() {
    let app = fresh_app().await;
    let plan = json!({"name": "Limited", "holdSeconds": 300, "buyerLimit": 2,
                      "sections": [{"sectionId": "A", "rows": [{"row": "1", "count": 4}]}]});
    let (ev, _) = create_event(&app, "wl", &plan.to_string()).await;
    let order = buyer_order(&app, &ev, "user:9").await;
    let (status, _) = send(
        &app,
        "POST",
        &format!("/orders/{}/seats/A-1-1", order.id),
        &[("authorization", &order.auth())],
        "",
    )
    .await;
    assert_eq!(status, 200);
    put_waitlist(&app, &ev, json!({"opens": "now"})).await;
    let (status, reply) = join(&app, &ev, "user:9", json!({"quantity": 2})).await;
    assert_eq!(
        (
            status,
            &reply["error"],
            &reply["limit"],
            &reply["counted"],
            &reply["reason"]
        ),
        (
            409,
            &json!("buyer-limit"),
            &json!(2),
            &json!(1),
            &json!("buyer-limit")
        ),
        "{reply}"
    );
    let (status, reply) = join(&app, &ev, "user:9", json!({"quantity": 1})).await;
    assert_eq!(status, 201, "{reply}");
}

#[tokio::test]
async fn a_delete_closes_the_generations_entries_as_they_are_read() {
    let app = fresh_app().await;
    let ev = open_event(&app).await;
    let (_, waiting) = join(&app, &ev, "user:1", json!({})).await;
    let (_, left) = join(&app, &ev, "user:2", json!({})).await;
    leave(&app, &ev, &left).await;
    let (status, _) = send(&app, "DELETE", &format!("/events/{ev}/waitlist"), &[], "").await;
    assert_eq!(status, 200);
    let closed = status_of(&app, &ev, &waiting).await;
    assert_eq!(
        (&closed["status"], &closed["reason"]),
        (&json!("ENDED"), &json!("closed")),
        "{closed}"
    );
    assert_eq!(
        leave(&app, &ev, &waiting).await,
        closed,
        "nothing left to end"
    );
    assert_eq!(
        status_of(&app, &ev, &left).await["reason"],
        "left",
        "an end stays its own"
    );
    let (_, listed) = list(&app, &ev, "?status=ENDED").await;
    assert_eq!(listed["entries"].as_array().unwrap().len(), 2, "{listed}");
    // Still written as waiting: the close was computed, not written.
    assert_eq!(index_places(&app, &ev, &index(None, 1, true)).await, 1);
    // A new generation: no entries, and the buyer joins it afresh.
    put_waitlist(&app, &ev, json!({"opens": "now"})).await;
    assert_eq!(list(&app, &ev, "").await.1, json!({"entries": []}));
    let (status, fresh) = join(&app, &ev, "user:1", json!({})).await;
    assert_eq!(
        (status, &fresh["status"]),
        (201, &json!("WAITING")),
        "{fresh}"
    );
}

#[tokio::test]
async fn the_organiser_pages_filters_and_removes() {
    let app = fresh_app().await;
    let ev = open_event(&app).await;
    let mut joined = Vec::new();
    for i in 0..7 {
        let (status, entry) = join(&app, &ev, &format!("user:{i}"), json!({})).await;
        assert_eq!(status, 201);
        joined.push(entry);
    }
    let ids: Vec<&Value> = joined.iter().map(|e| &e["entryId"]).collect();
    for limit in [1, 3, 7] {
        let pages = every_page(&app, &ev, &format!("limit={limit}")).await;
        // Full pages but the last, and no empty one: `next` only when more.
        assert_eq!(pages.len(), 7_usize.div_ceil(limit), "limit {limit}");
        let seen: Vec<&Value> = pages.iter().flatten().map(|e| &e["entryId"]).collect();
        assert_eq!(seen, ids, "limit {limit}: every entry once, in join order");
        assert!(pages
            .iter()
            .flatten()
            .all(|e| e.get("entryToken").is_none()));
    }

    let remove = |entry: &Value| json!({"entryId": entry["entryId"]}).to_string();
    let removals = format!("/events/{ev}/waitlist/removals");
    let (status, removed) = send(&app, "POST", &removals, &[], &remove(&joined[1])).await;
    assert_eq!(
        (status, &removed["status"], &removed["reason"]),
        (200, &json!("ENDED"), &json!("removed")),
        "{removed}"
    );
    assert_eq!(
        send(&app, "POST", &removals, &[], &remove(&joined[1])).await,
        (200, removed)
    );
    // A removed entry's buyer sees it, and its leave changes nothing.
    assert_eq!(leave(&app, &ev, &joined[1]).await["reason"], "removed");
    let (status, reply) = send(&app, "POST", &removals, &[], r#"{"entryId":"nobody"}"#).await;
    assert_eq!((status, &reply["error"]), (404, &json!("entry-not-found")));

    // One ended entry, not the first: a filtered page reads on to it.
    let ended = every_page(&app, &ev, "status=ENDED&limit=1").await;
    let ended: Vec<&Value> = ended.iter().flatten().map(|e| &e["entryId"]).collect();
    assert_eq!(ended, [&joined[1]["entryId"]]);
    let (_, waiting) = list(&app, &ev, "?status=WAITING&limit=100").await;
    assert_eq!(waiting["entries"].as_array().unwrap().len(), 6, "{waiting}");
    assert!(waiting.get("next").is_none());
    // A cursor of the generation before is refused once another is put.
    let (_, first) = list(&app, &ev, "?limit=1").await;
    let stale = format!("?cursor={}", first["next"].as_str().unwrap());
    let (status, _) = send(&app, "DELETE", &format!("/events/{ev}/waitlist"), &[], "").await;
    assert_eq!(status, 200);
    put_waitlist(&app, &ev, json!({"opens": "now"})).await;
    for bad in [
        "?limit=0",
        "?limit=101",
        "?status=waiting",
        "?cursor=nope",
        "?cursor=MTIz",
        stale.as_str(),
    ] {
        let (status, reply) = list(&app, &ev, bad).await;
        assert_eq!(
            (status, &reply["error"]),
            (400, &json!("bad-request")),
            "{bad}: {reply}"
        );
    }
    let (status, reply) = list(&app, &event(&app, 1, 300).await, "").await;
    assert_eq!(
        (status, &reply["error"]),
        (404, &json!("waitlist-not-found"))
    );
}

#[tokio::test]
async fn an_offers_look_reads_the_heads_of_what_the_free_units_fill() {
    use shared::domain::offer::{choose_offer, fillable_indexes, Free, OfferUnits, SectionFree};
    let app = fresh_app().await;
    let ev = open_event(&app).await;
    let asks = [
        ("user:1", json!({"quantity": 2, "sectionIds": ["B"]})),
        ("user:2", json!({"quantity": 1})),
        (
            "user:3",
            json!({"quantity": 3, "together": false, "sectionIds": ["B", "A"]}),
        ),
        ("user:4", json!({"quantity": 2, "sectionIds": ["A"]})),
    ];
    let mut joined = Vec::new();
    for (buyer, ask) in asks {
        let (status, entry) = join(&app, &ev, buyer, ask).await;
        assert_eq!(status, 201, "{entry}");
        joined.push(entry);
    }
    // A has a run of two and three seats free; B nothing.
    let free = |pictures: [&str; 2]| -> Vec<SectionFree> {
        ["A", "B"]
            .iter()
            .zip(pictures)
            .map(|(section, row)| SectionFree {
                section: SectionId::parse(section).unwrap(),
                free: Free::rows(vec![row.chars().map(|c| c == '.').collect()]),
            })
            .collect()
    };
    let sections = free(["..x.", "xxxx"]);
    let event_id = EventId::parse(&ev).unwrap();
    let look = |sections: Vec<SectionFree>| {
        let (app, event_id) = (app.clone(), event_id.clone());
        async move {
            let indexes = fillable_indexes(&sections, 4);
            let heads = app
                .store
                .waiting_heads(&event_id, 1, &indexes, 1)
                .await
                .unwrap();
            let mut waiting = Vec::new();
            for head in &heads {
                let entry = app
                    .store
                    .read_entry(&event_id, &head.entry, true)
                    .await
                    .unwrap();
                waiting.push(entry.unwrap());
            }
            let chosen = choose_offer(
                waiting.iter().map(|e| (e.entry_id.clone(), &e.request)),
                &sections,
            );
            (
                heads
                    .iter()
                    .map(|h| h.entry.to_string())
                    .collect::<Vec<_>>(),
                chosen,
            )
        }
    };
    let id = |i: usize| joined[i]["entryId"].as_str().unwrap().to_owned();
    // The heads the free seats could fill, in join order: not user:1's
    // (B only); user:2's, of any section, gets the offer: best-available's
    // block of one, the lone seat, which leaves the pair whole.
    let (heads, chosen) = look(sections.clone()).await;
    assert_eq!(heads, [id(1), id(2), id(3)]);
    let seat = |s: usize| (0, s);
    assert_eq!(
        chosen.map(|(entry, units)| (entry.to_string(), units)),
        Some((
            id(1),
            OfferUnits::Seats {
                section: SectionId::parse("A").unwrap(),
                seats: vec![seat(3)]
            }
        ))
    );
    // Once it leaves, user:3's three seats apart.
    leave(&app, &ev, &joined[1]).await;
    let (heads, chosen) = look(sections).await;
    assert_eq!(heads, [id(2), id(3)]);
    assert_eq!(chosen.map(|(entry, _)| entry.to_string()), Some(id(2)));
    // With B free too, user:1 joined first and is filled from B.
    let (heads, chosen) = look(free(["..x.", "...."])).await;
    assert_eq!(heads, [id(0), id(2), id(3)]);
    assert_eq!(chosen.map(|(entry, _)| entry.to_string()), Some(id(0)));
}
