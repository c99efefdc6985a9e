//! `POST /orders/{orderId}/best-available`: n adjacent seats in one row,
//! chosen by the contract's rules (domain::best_available), claimed in one
//! transaction with get-seat's conditions, in a bounded number of store
//! round trips (docs/API.md, "best-available's bounds"):
//!
//! - the stream-fed summary of each section's free runs (the instance's
//!   copy, at most a second old) rules out the rows, and the sections, that
//!   show no run of n even counting expired holds as free; if it rules out
//!   every one, the answer is `409 not-enough-seats` without reading a seat;
//! - the rows left are read a few at a time, front rows first, until the
//!   rows in hand decide the choice (`rows.rs`), seat by seat for at most
//!   half the bound and the rest of the section from the seat map; a lost race marks the
//!   seats its transaction named taken, and the next choice checks the
//!   blocks it may pick among (one consistent request per 100 seats)
//!   instead of reading the section again;
//! - reading rows, checking and claiming spend at most [`ROUND_TRIPS`]
//!   requests (each send of a claim paid before it is sent; reads leave
//!   room for one where they can, a row at least always read so a refusal
//!   stays reachable): once spent the answer is `503` (nothing was
//!   claimed, so a retry is safe), never a refusal that could be false.

use lambda_http::http::StatusCode;
use lambda_http::{Body, Request, Response};
use serde::{Deserialize, Serialize};

mod candidates;
mod in_hand;
mod rows;

use super::access::read_own_order;
use super::Reply;
use crate::auth::HoldToken;
use crate::domain::best_available::Ask;
use crate::domain::keyed_block::{keyed_answer, KeyedAnswer, KeyedBlock};
use crate::domain::{Event, IdempotencyKey, Millis, OrderId, SeatId, SeatStatus, SectionId};
use crate::error::Error;
use crate::http::{idempotency_key, json, json_body, path_param};
use crate::retry::Rounds;
use crate::store::{BlockClaim, StoredOrder};
use crate::App;
use candidates::{candidate_rows, Candidate};
use in_hand::RowsInHand;
use rows::choose_seats;

/// Store round trips one request may spend reading rows and claiming, on
/// top of its order's read and the instance's copies of the event, its
/// sold-out sections, its run summaries and its waitlist's state
/// (docs/API.md states the sum).
pub const ROUND_TRIPS: usize = 48;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BestAvailableBody {
    quantity: u32,
    #[serde(default)]
    section_id: Option<SectionId>,
    /// Wheelchair spaces asked for among the seats, 0 to `quantity`
    /// (API.md, "Accessible seats").
    #[serde(default)]
    wheelchair: u32,
}

impl BestAvailableBody {
    fn ask(&self) -> Ask {
        Ask {
            n: self.quantity as usize,
            wheelchair: self.wheelchair as usize,
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BestAvailableReply<'a> {
    order_id: &'a OrderId,
    seats: &'a [SeatId],
    status: SeatStatus,
    expires_at: String,
}

/// The route: its order read first (who asks, whether it may hold, and
/// under an `Idempotency-Key` whether this is a retry it already
/// answered), then the sections the summaries leave, then rounds of
/// choosing and claiming.
pub async fn best_available(app: &App, req: &Request) -> Reply {
    let order_id = path_param(req, "orderId", OrderId::parse)?;
    let body: BestAvailableBody = json_body(req, None)?;
    let max = app.config.max_seats_per_order;
    if !(1..=max).contains(&body.quantity) {
        return Err(Error::BadRequest(format!("quantity must be 1 to {max}")));
    }
    check_wheelchair(body.wheelchair, body.quantity)?;
    let key = idempotency_key(req)?;
    let (stored, token) = read_own_order(app, req, &order_id).await?;
    if !stored.order.is_holdable(crate::world::now()) {
        return Err(Error::OrderNotHoldable);
    }
    if let Some(key) = &key {
        if let Some(again) = answered_before(&stored, key, &body)? {
            return Ok(again);
        }
    }
    // The order's own expiry (a token from before an extension carries
    // an older one).
    let token = token.with_expiry(stored.order.expires_at);
    let event = app
        .event(token.event_id())
        .await?
        .ok_or(Error::OrderNotFound)?;
    let candidates = candidate_rows(app, &event, body.section_id.as_ref(), body.ask()).await?;
    if candidates.is_empty() {
        return Err(Error::NotEnoughSeats {
            quantity: body.quantity,
        });
    }
    // A request that would go on to claim asks the waitlist (a refusal on
    // the summaries is true either way and costs no read of it); an offer
    // claims nothing more, from its first second.
    app.refuse_more_for(&stored.order, crate::world::now())
        .await?;
    let asked = Asked {
        order_id: &order_id,
        body: &body,
        key: key.as_ref(),
    };
    choose_and_claim(app, &event, &candidates, &token, asked).await
}

/// Rounds of choosing and claiming one request may take. Each round
/// spends at least one of the [`ROUND_TRIPS`], so the round trips bind
/// first; this only guarantees the loop ends.
const ROUNDS: u32 = ROUND_TRIPS as u32;

/// What a request asks for: its order, its body and its key, if any.
#[derive(Clone, Copy)]
struct Asked<'a> {
    order_id: &'a OrderId,
    body: &'a BestAvailableBody,
    key: Option<&'a IdempotencyKey>,
}

impl Asked<'_> {
    /// What the order records under the request's key once `seats` are
    /// held.
    fn keyed_block(&self, seats: &[SeatId]) -> KeyedBlock {
        KeyedBlock {
            quantity: self.body.quantity,
            section: self.body.section_id.clone(),
            wheelchair: self.body.wheelchair,
            seats: seats.to_vec(),
        }
    }
}

/// The answer of the request's own earlier send, which landed first:
/// the order says what it got (one more read, within the bound). `None`
/// when the order shows no such answer.
async fn earlier_send(
    app: &App,
    asked: Asked<'_>,
    budget: &mut Budget,
) -> Result<Option<Response<Body>>, Error> {
    budget.spend(Spend::Order, 1)?;
    let stored = app.store.get_order(asked.order_id).await?;
    let stored = stored.ok_or(Error::OrderNotFound)?;
    match asked.key {
        Some(key) => answered_before(&stored, key, asked.body),
        None => Ok(None),
    }
}

/// Rounds of choosing on the latest read and claiming, until a block is
/// held, refused, or the round trips are spent.
async fn choose_and_claim(
    app: &App,
    event: &Event,
    candidates: &[Candidate<'_>],
    token: &HoldToken,
    asked: Asked<'_>,
) -> Reply {
    let max = app.config.max_seats_per_order;
    let quantity = asked.body.quantity;
    let mut budget = Budget::new(claim_send_requests(token), asked.key.is_some());
    let mut rounds = Rounds::new("best-available", ROUNDS);
    let ruled_out: Vec<Option<Millis>> = candidates.iter().map(|c| c.until).collect();
    let mut in_hand = RowsInHand::new(&ruled_out);
    let mut token = token.clone();
    let ask = asked.body.ask();
    while rounds.next().await.is_some() {
        let losses = rounds.losses();
        let choice = choose_seats(
            app,
            event,
            candidates,
            ask,
            losses,
            &mut in_hand,
            &mut budget,
        )
        .await?;
        let Some(choice) = choice else {
            if in_hand.is_exact(crate::world::now()) {
                return Err(Error::NotEnoughSeats { quantity });
            }
            // Rows passed over, or a hold seen has lapsed since: a
            // consistent read of them all sees what is left.
            in_hand.read_again(crate::world::now());
            continue;
        };
        let seats = &choice.seats;
        let record = asked.key.map(|key| (key, asked.keyed_block(seats)));
        let keyed = record.as_ref().map(|(key, block)| (*key, block));
        // The token it ended with: an extension meanwhile is paid for once.
        let claimed = claim_block(app, asked.order_id, &token, seats, keyed, max, &mut budget);
        let (claim, current) = claimed.await?;
        token = current;
        match claim {
            BlockClaim::Held(expires_at) => return Ok(held(asked.order_id, seats, expires_at)),
            BlockClaim::Refused(refused) => return Err(refused),
            BlockClaim::KeyUsed => {
                if let Some(again) = earlier_send(app, asked, &mut budget).await? {
                    return Ok(again);
                }
                rounds.lost();
            }
            // The seats the transaction named are a rival's: choose again
            // from the rows in hand, checking the blocks read before.
            BlockClaim::Taken(lost) if !lost.is_empty() => {
                in_hand.race_lost(&choice, &lost);
                rounds.lost();
            }
            // Spent in claim_block, which only ends on another outcome.
            BlockClaim::Taken(_) | BlockClaim::StaleToken(_) => {
                in_hand.read_again_where_runs_were(ask.n);
                rounds.lost();
            }
        }
    }
    Err(rounds.spent())
}

/// The reply to a held block.
fn held(order_id: &OrderId, seats: &[SeatId], expires_at: Millis) -> Response<Body> {
    json(
        StatusCode::OK,
        &BestAvailableReply {
            order_id,
            seats,
            status: SeatStatus::Held,
            expires_at: expires_at.to_rfc3339(),
        },
    )
}

/// A request under `key` the order answered before
/// ([`keyed_answer`]): the same block again, `422
/// idempotency-key-reused`, or `None` (a new key: choose and claim).
fn answered_before(
    stored: &StoredOrder,
    key: &IdempotencyKey,
    body: &BestAvailableBody,
) -> Result<Option<Response<Body>>, Error> {
    let order = &stored.order;
    let kept = stored.keyed_blocks.get(key);
    let asked = (body.quantity, body.section_id.as_ref(), body.wheelchair);
    match keyed_answer(kept, asked, &order.seats) {
        KeyedAnswer::Claim => Ok(None),
        KeyedAnswer::Again(seats) => Ok(Some(held(&order.order_id, &seats, order.expires_at))),
        KeyedAnswer::Reused => Err(Error::IdempotencyKeyReused),
    }
}

/// The requests one send of best-available's transaction makes by
/// `token`: the transaction, after a read of the buyer's record on an
/// event with a buyer limit. A claim sends again (bounded, each send paid
/// before it is sent) while the order's expiry moves under it.
pub fn claim_send_requests(token: &HoldToken) -> usize {
    match token.buyer() {
        Some(_) => 2,
        None => 1,
    }
}

/// best-available's transaction on `seats`, each outcome's buyer reported
/// to the instance's memory, sent again with the order's own expiry each
/// time an extension made the token stale meanwhile (bounded), each send
/// paid from `budget` first: held, taken (choose again) or refused.
async fn claim_block(
    app: &App,
    order: &OrderId,
    token: &HoldToken,
    seats: &[SeatId],
    keyed: Option<(&IdempotencyKey, &KeyedBlock)>,
    max: u32,
    budget: &mut Budget,
) -> Result<(BlockClaim, HoldToken), Error> {
    let mut token = token.clone();
    let mut stale = Rounds::stale_token();
    loop {
        budget.spend(Spend::Claim, claim_send_requests(&token))?;
        let now = crate::world::now();
        let report = app
            .store
            .claim_block(order, &token, seats, keyed, max, now)
            .await?;
        app.memory.learn_buyer(&report.buyer, now);
        match report.claim {
            BlockClaim::StaleToken(current) => {
                stale.next().await.ok_or_else(|| stale.spent())?;
                token = current;
            }
            claim => return Ok((claim, token)),
        }
    }
}

/// best-available's `wheelchair`: 0 to `quantity` (API.md, "Accessible
/// seats").
fn check_wheelchair(wheelchair: u32, quantity: u32) -> Result<(), Error> {
    match wheelchair <= quantity {
        true => Ok(()),
        false => Err(Error::BadRequest(format!(
            "wheelchair must be 0 to quantity ({quantity})"
        ))),
    }
}

/// The store round trips a request has left.
struct Budget {
    left: usize,
    /// What one send of a claim takes: reads leave room for one.
    claim: usize,
    /// What was spent, by [`Spend`]: a 503's log line says where the
    /// round trips went.
    spent: Spent,
}

/// The requests spent, by what on.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Spent {
    reads: usize,
    checks: usize,
    claims: usize,
    order_reads: usize,
}

impl Spent {
    fn on(&mut self, on: Spend) -> &mut usize {
        match on {
            Spend::Read => &mut self.reads,
            Spend::Check => &mut self.checks,
            Spend::Claim => &mut self.claims,
            Spend::Order => &mut self.order_reads,
        }
    }
}

/// What a request spends its round trips on.
#[derive(Debug, Clone, Copy)]
enum Spend {
    /// Reading rows (seat by seat, or from the seat map).
    Read,
    /// Checking blocks after a lost race.
    Check,
    /// A send of the claim (and the buyer record's read before it).
    Claim,
    /// Reading the order again, to see whether an earlier send landed.
    Order,
}

impl Budget {
    /// A request's [`ROUND_TRIPS`], reads leaving room for one claim of
    /// `claim_sends` requests and, under an `Idempotency-Key`, for the
    /// order's read too: a send that finds its own earlier one landed
    /// answers from the order.
    fn new(claim_sends: usize, keyed: bool) -> Self {
        Self {
            left: ROUND_TRIPS,
            claim: claim_sends + usize::from(keyed),
            spent: Spent::default(),
        }
    }

    /// What reads may take and still leave a claim its room.
    fn for_reads(&self) -> usize {
        self.left.saturating_sub(self.claim)
    }

    /// The requests spent on `on` so far.
    fn spent_on(&self, on: Spend) -> usize {
        *self.spent.clone().on(on)
    }

    /// Takes `requests` from what is left, or ends the request with a
    /// `503` (logged) when they would overspend it.
    fn spend(&mut self, on: Spend, requests: usize) -> Result<(), Error> {
        if requests > self.left {
            let Spent {
                reads,
                checks,
                claims,
                order_reads,
            } = self.spent;
            tracing::warn!(
                round_trips = ROUND_TRIPS,
                asked = requests,
                ?on,
                reads,
                checks,
                claims,
                order_reads,
                "best-available: round trips spent before a choice: 503"
            );
            return Err(Error::StoreUnavailable);
        }
        self.left -= requests;
        *self.spent.on(on) += requests;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_leave_room_for_the_claim_and_under_a_key_for_the_orders_read_table() {
        // (what, requests a claim's send takes, keyed)
        let cases = [
            ("no key, no buyer limit", 1, false),
            ("no key, a buyer limit", 2, false),
            ("a key: its twin may have landed", 1, true),
            ("a key and a buyer limit", 2, true),
        ];
        for (what, sends, keyed) in cases {
            let mut budget = Budget::new(sends, keyed);
            // Reads spend all they may, the claim its send...
            assert!(
                budget.spend(Spend::Read, budget.for_reads()).is_ok(),
                "{what}"
            );
            assert!(budget.spend(Spend::Claim, sends).is_ok(), "{what}");
            // ...and a send that finds its twin landed reads the order.
            assert_eq!(budget.spend(Spend::Order, 1).is_ok(), keyed, "{what}");
            assert!(
                budget.spend(Spend::Read, 1).is_err(),
                "{what}: the bound holds"
            );
        }
    }

    #[test]
    fn a_budget_refuses_to_overspend() {
        let mut budget = Budget::new(1, false);
        budget.left = 3;
        assert_eq!(budget.for_reads(), 2);
        assert!(budget.spend(Spend::Read, 2).is_ok());
        assert!(budget.spend(Spend::Check, 1).is_ok());
        let spent = Spent {
            reads: 2,
            checks: 1,
            ..Spent::default()
        };
        assert_eq!(budget.spent, spent, "what was spent, by what on");
        assert!(matches!(
            budget.spend(Spend::Read, 1),
            Err(Error::StoreUnavailable)
        ));
        assert!(budget.spend(Spend::Read, 0).is_ok());
    }
}
