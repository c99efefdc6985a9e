//! Returns to the waitlist (API.md, "Returns"), pure: what a buyer may
//! list, what a listing reads as, and what a withdrawal does. A listing is
//! one item per seat, or per general-admission section (its quantity), of
//! the seller's order; it stays sold to its owner until resold. Its status
//! is computed where no write is needed: a listing whose generation is no
//! longer the open one, or whose cutoff has passed, reads `REVERTED`.

use super::buyer::BuyerId;
use super::buyer_limit::BuyerRef;
use super::waitlist::{Waitlist, WaitlistStatus};
use super::{Millis, Order, OrderId, OrderStatus, PaymentId, SeatId, SectionId};

/// How long before `returnsCloseAt` the waitlist stops offering listed
/// units: an offer needs time to be paid before its listing reverts.
pub const LAST_RESALE_OFFER_BEFORE_CLOSE_MS: i64 = 60_000;

/// What one listing returns.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReturnUnit {
    Seat(SeatId),
    /// Places of a general-admission section (the listing's quantity).
    Places(SectionId),
}

/// Marks a section's listing among an order's listings: a seat id never
/// holds a `:` (API.md, "Conventions").
const PLACES_PREFIX: &str = "ga:";

impl ReturnUnit {
    /// The unit as its listing's key names it.
    pub fn key(&self) -> String {
        match self {
            ReturnUnit::Seat(seat) => seat.as_str().to_owned(),
            ReturnUnit::Places(section) => format!("{PLACES_PREFIX}{section}"),
        }
    }

    /// The unit a listing's key names.
    pub fn from_key(key: &str) -> Option<Self> {
        match key.strip_prefix(PLACES_PREFIX) {
            Some(section) => SectionId::parse(section).ok().map(ReturnUnit::Places),
            None => SeatId::parse(key).ok().map(ReturnUnit::Seat),
        }
    }
}

/// A listing's stored status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReturnStatus {
    Listed,
    Resold,
    Withdrawn,
    Reverted,
}

impl ReturnStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Listed => "LISTED",
            Self::Resold => "RESOLD",
            Self::Withdrawn => "WITHDRAWN",
            Self::Reverted => "REVERTED",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Listed, Self::Resold, Self::Withdrawn, Self::Reverted]
            .into_iter()
            .find(|status| status.as_str() == s)
    }
}

/// One listing of a seller's order, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    pub unit: ReturnUnit,
    /// 1 for a seat; the places listed for a section.
    pub quantity: u32,
    pub status: ReturnStatus,
    /// The waitlist generation it was listed under.
    pub generation: u64,
    pub listed_at: Millis,
    /// The waitlist's `returnsCloseAt` when it was listed (a record: the
    /// waitlist's current one decides).
    pub closes_at: Millis,
    /// Its item's version, which every write of it is conditioned on.
    pub version: u64,
    /// Its resale, once `RESOLD`.
    pub resale: Option<Resale>,
}

/// A listing's resale: the order it was sold to, its payment and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resale {
    pub order_id: OrderId,
    pub payment_id: PaymentId,
    pub at: Millis,
}

/// A listed seat as the waitlist's offers see it: whose it is, and the
/// offer holding it, if any (its resale item, beside the seller's
/// listing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedSeat {
    pub seat: SeatId,
    pub seller: Seller,
    pub generation: u64,
    pub listed_at: Millis,
    /// The offer that last held it, and until when.
    pub held: Option<(OrderId, Millis)>,
}

/// Any listing as its resale item has it: what the tick reverts at the
/// cutoff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedUnit {
    pub unit: ReturnUnit,
    pub seller: OrderId,
    pub generation: u64,
    pub listed_at: Millis,
    /// Until when an offer holds it (a seat's), or the latest of the
    /// offers holding some of it (places'), if one ever did.
    pub held_until: Option<Millis>,
    /// A places item's version, which its revert is conditioned on
    /// (`None`: a seat's, conditioned on its hold instead).
    pub version: Option<u64>,
}

impl ListedUnit {
    /// Whether it is due to be written `REVERTED` at `now`, `waitlist` as
    /// it stands (open: the tick's): it reads reverted (its cutoff has
    /// passed, a put closed returns after it was listed, or its generation
    /// ended) and no live offer holds it (one made before a put that closed
    /// returns early: its payment is refunded, and its let-go or expiry
    /// comes first, so the resale item it holds stays for it until then).
    pub fn reverts(&self, waitlist: &Waitlist, now: Millis) -> bool {
        let listing = Listing {
            unit: self.unit.clone(),
            quantity: 0,
            status: ReturnStatus::Listed,
            generation: self.generation,
            listed_at: self.listed_at,
            closes_at: Millis(0),
            version: 0,
            resale: None,
        };
        let held = self.held_until.is_some_and(|until| until > now);
        listing.status_at(Some(waitlist), now) == ReturnStatus::Reverted && !held
    }
}

/// What a round of written reverts was for: the waitlist's cutoff, its
/// `returnsRevertedAt` then, and whether the cutoff had passed (a put that
/// moves either, or the cutoff passing, may revert more).
pub type RevertsFor = (Option<Millis>, Option<Millis>, bool);

/// Whether the tick writes `waitlist`'s reverts at `now` (`Some`: what
/// for), `done` being what it last wrote them for: once its cutoff has
/// passed, or a put closed returns early, and not for that already.
pub fn reverts_due(
    waitlist: &Waitlist,
    done: Option<RevertsFor>,
    now: Millis,
) -> Option<RevertsFor> {
    let close = waitlist.settings.returns_close_at;
    let passed = close.is_some_and(|close| now >= close);
    let key = (close, waitlist.returns_reverted_at, passed);
    ((passed || key.1.is_some()) && done != Some(key)).then_some(key)
}

/// Who sells a listed seat: the order that bought it, its buyer when it
/// has one (never offered what it listed), and the record its buyer limit
/// counts it in, on a limited event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seller {
    pub order_id: OrderId,
    pub buyer_id: Option<BuyerId>,
    pub buyer_ref: Option<BuyerRef>,
}

impl Seller {
    /// The seller of `order`'s listings.
    pub fn of(order: &Order) -> Self {
        let buyer_id = order
            .buyer
            .as_ref()
            .map(|b| b.buyer_id.clone())
            .or(order.offer.as_ref().map(|o| o.buyer_id.clone()));
        Self {
            order_id: order.order_id.clone(),
            buyer_id,
            buyer_ref: order.buyer.as_ref().map(|b| b.buyer_ref.clone()),
        }
    }
}

/// A listed seat an offer holds: the seat, and whose it is until paid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResaleHold {
    pub seat: SeatId,
    pub seller: OrderId,
    /// The seller's record on a limited event: the resale moves the seat
    /// out of its count.
    pub seller_ref: Option<BuyerRef>,
    /// The listing it holds: its waitlist generation and when it was
    /// listed (a payment sells it only while it still reads listed).
    pub generation: u64,
    pub listed_at: Millis,
}

impl ResaleHold {
    /// Whether a live offer holding it may still be paid at `now`,
    /// `waitlist` as it stands ([`still_listed`]).
    pub fn still_listed(&self, waitlist: Option<&Waitlist>, now: Millis) -> bool {
        still_listed(self.generation, self.listed_at, waitlist, now)
    }
}

/// Whether a live offer holding some of a listing of `generation` made at
/// `listed_at` may still be paid at `now`, `waitlist` as it stands: its
/// generation's returns have not closed (the cutoff, or a put that closed
/// them after it was listed), so the listing has not reverted to its
/// seller. A delete does not close them for it: a live offer outlives the
/// delete and may be paid (its listing reverts only if it ends unpaid).
pub(super) fn still_listed(
    generation: u64,
    listed_at: Millis,
    waitlist: Option<&Waitlist>,
    now: Millis,
) -> bool {
    let Some(waitlist) = waitlist else {
        return true;
    };
    if waitlist.generation != generation || waitlist.status() == WaitlistStatus::Ended {
        return true;
    }
    let closed = waitlist
        .settings
        .returns_close_at
        .is_none_or(|close| now >= close);
    let reverted = waitlist
        .returns_reverted_at
        .is_some_and(|at| listed_at < at);
    !closed && !reverted
}

/// Whether an offer made at `now` may take listed units of `generation`
/// listed at `listed_at`, `waitlist` as it stands: they still read listed
/// and the cutoff is at least [`LAST_RESALE_OFFER_BEFORE_CLOSE_MS`] away.
pub(super) fn offers_listing(
    generation: u64,
    listed_at: Millis,
    waitlist: &Waitlist,
    now: Millis,
) -> bool {
    let reverted = waitlist
        .returns_reverted_at
        .is_some_and(|at| listed_at < at);
    let open = returns_close_at(waitlist, generation)
        .is_some_and(|close| now.0 < close.0 - LAST_RESALE_OFFER_BEFORE_CLOSE_MS);
    open && !reverted
}

impl ListedSeat {
    /// The offer holding it at `now`, if its hold is live.
    pub fn held_at(&self, now: Millis) -> Option<&OrderId> {
        self.held
            .as_ref()
            .filter(|(_, until)| *until > now)
            .map(|(order, _)| order)
    }

    /// Whether an offer made at `now` may take it, `waitlist` as it
    /// stands: it still reads listed, nobody's offer holds it, and the
    /// cutoff is at least [`LAST_RESALE_OFFER_BEFORE_CLOSE_MS`] away.
    pub fn offerable(&self, waitlist: &Waitlist, now: Millis) -> bool {
        offers_listing(self.generation, self.listed_at, waitlist, now)
            && self.held_at(now).is_none()
    }

    /// The hold an offer of it records.
    pub fn hold(&self) -> ResaleHold {
        ResaleHold {
            seat: self.seat.clone(),
            seller: self.seller.order_id.clone(),
            seller_ref: self.seller.buyer_ref.clone(),
            generation: self.generation,
            listed_at: self.listed_at,
        }
    }
}

/// When an offer made at `now` for `offer_seconds` expires: at its
/// seconds, or at `returnsCloseAt` when it holds a listed seat and that
/// comes first (listings revert then, and offers holding them expire).
pub fn offer_expiry(
    now: Millis,
    offer_seconds: u32,
    waitlist: &Waitlist,
    holds_listings: bool,
) -> u32 {
    let close = waitlist
        .settings
        .returns_close_at
        .filter(|_| holds_listings);
    match close {
        Some(close) => {
            let left = (close.0 - now.0).max(0) / 1_000;
            u32::try_from(left).unwrap_or(u32::MAX).min(offer_seconds)
        }
        None => offer_seconds,
    }
}

impl Listing {
    /// Its status at `now` with `waitlist` as it stands (`None`: none, or
    /// deleted for good): a `LISTED` one reads `REVERTED` once its
    /// generation has ended or been replaced, the waitlist's
    /// `returnsCloseAt` has passed, or a put closed returns after it was
    /// listed (`returnsRevertedAt`: a put that moves a cutoff that had
    /// passed stamps that cutoff, so a later one never brings it back).
    pub fn status_at(&self, waitlist: Option<&Waitlist>, now: Millis) -> ReturnStatus {
        if self.status != ReturnStatus::Listed {
            return self.status;
        }
        let Some(waitlist) = waitlist else {
            return ReturnStatus::Reverted;
        };
        let reverted_since = waitlist
            .returns_reverted_at
            .is_some_and(|at| self.listed_at < at);
        match returns_close_at(waitlist, self.generation) {
            Some(close) if now < close && !reverted_since => ReturnStatus::Listed,
            _ => ReturnStatus::Reverted,
        }
    }
}

/// When `waitlist` stops taking and keeping returns of `generation`: its
/// `returnsCloseAt` while it is that generation and open.
fn returns_close_at(waitlist: &Waitlist, generation: u64) -> Option<Millis> {
    (waitlist.generation == generation && waitlist.status() == WaitlistStatus::Open)
        .then_some(waitlist.settings.returns_close_at)
        .flatten()
}

/// What a buyer asks to list: seats, and places per section.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReturnRequest {
    pub seats: Vec<SeatId>,
    pub places: Vec<(SectionId, u32)>,
}

/// Why a listing is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListRefusal {
    /// No open waitlist, or at or after its `returnsCloseAt`.
    Closed,
    /// A unit the order does not own, or one listed or resold now.
    NotOwned,
}

/// One listing to write: its unit, its quantity after the write, and the
/// version of the item it replaces (`None`: a new item).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListingWrite {
    pub unit: ReturnUnit,
    pub quantity: u32,
    pub replaces: Option<u64>,
    /// A listing of places: how it writes their resale item
    /// ([`places_resale`], from the item as read; `None` until then).
    pub places: Option<PlacesResale>,
}

/// The listings `request` makes of `order` (its `listings` as read), with
/// `waitlist` as it stands at `now`, or why not. A seat must be one the
/// order bought and not listed or resold now; a section's places at most
/// what the order bought there less what it has resold or listed now (a
/// listing asking for more places of a section adds to its listing).
pub fn plan_listings(
    order: &Order,
    listings: &[Listing],
    request: &ReturnRequest,
    waitlist: Option<&Waitlist>,
    now: Millis,
) -> Result<(u64, Vec<ListingWrite>), ListRefusal> {
    let generation = match waitlist {
        Some(w) if returns_close_at(w, w.generation).is_some_and(|close| now < close) => {
            w.generation
        }
        _ => return Err(ListRefusal::Closed),
    };
    if order.status != OrderStatus::Completed {
        return Err(ListRefusal::NotOwned);
    }
    let current = |unit: &ReturnUnit| listings.iter().find(|l| &l.unit == unit);
    let mut writes = Vec::new();
    for seat in &request.seats {
        let unit = ReturnUnit::Seat(seat.clone());
        let listing = current(&unit);
        let taken = listing.map_or(0, |l| held_back(l, waitlist, now));
        if !order.seats.contains(seat) || taken > 0 {
            return Err(ListRefusal::NotOwned);
        }
        let replaces = listing.map(|l| l.version);
        writes.push(ListingWrite {
            unit,
            quantity: 1,
            replaces,
            places: None,
        });
    }
    for (section, quantity) in &request.places {
        let unit = ReturnUnit::Places(section.clone());
        // A section's resales are listings of their own beside it.
        let listing = listings
            .iter()
            .find(|l| l.unit == unit && l.status != ReturnStatus::Resold);
        let bought: u32 = order
            .places
            .iter()
            .filter(|p| &p.section == section)
            .map(|p| p.quantity)
            .sum();
        let resold = resold_places(listings, section);
        let listed = listing.map_or(0, |l| held_back(l, waitlist, now));
        let total = listed.saturating_add(*quantity);
        if total.saturating_add(resold) > bought {
            return Err(ListRefusal::NotOwned);
        }
        let replaces = listing.map(|l| l.version);
        writes.push(ListingWrite {
            unit,
            quantity: total,
            replaces,
            places: None,
        });
    }
    Ok((generation, writes))
}

/// What `listing` keeps from being listed again at `now`: its quantity
/// while it reads `LISTED` or `RESOLD`, else nothing.
fn held_back(listing: &Listing, waitlist: Option<&Waitlist>, now: Millis) -> u32 {
    match listing.status_at(waitlist, now) {
        ReturnStatus::Listed | ReturnStatus::Resold => listing.quantity,
        ReturnStatus::Withdrawn | ReturnStatus::Reverted => 0,
    }
}

/// The places of `section` the order has resold (each resale is its own
/// `RESOLD` listing item, beside the section's listing).
fn resold_places(listings: &[Listing], section: &SectionId) -> u32 {
    listings
        .iter()
        .filter(|l| l.status == ReturnStatus::Resold)
        .filter(|l| matches!(&l.unit, ReturnUnit::Places(s) if s == section))
        .map(|l| l.quantity)
        .sum()
}

/// What a withdrawal of `unit` does, given its listing as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Withdrawal {
    /// It reads `LISTED`: written `WITHDRAWN` over the version read.
    Withdraw { version: u64 },
    /// Nothing to withdraw (never listed, withdrawn or reverted already):
    /// the order as it stands.
    Unchanged,
    /// Resold: the order no longer owns it (`409 return-not-owned`).
    Resold,
    /// A live offer holds it (`409 return-offered`).
    Offered,
}

/// The withdrawal of `listing` (`None`: never listed) at `now`;
/// `offered`: a live offer holds it, as its resale item was read.
pub fn plan_withdrawal(
    listing: Option<&Listing>,
    offered: bool,
    waitlist: Option<&Waitlist>,
    now: Millis,
) -> Withdrawal {
    match listing.map(|l| (l, l.status_at(waitlist, now))) {
        // A listing of places all resold: the order no longer owns them.
        Some((l, ReturnStatus::Listed)) if l.quantity == 0 => Withdrawal::Resold,
        Some((_, ReturnStatus::Listed)) if offered => Withdrawal::Offered,
        Some((l, ReturnStatus::Listed)) => Withdrawal::Withdraw { version: l.version },
        Some((_, ReturnStatus::Resold)) => Withdrawal::Resold,
        _ => Withdrawal::Unchanged,
    }
}

#[path = "returns_places.rs"]
mod places;
pub use places::{places_resale, ListedPlaces, PlacesItemRead, PlacesResale, PlacesResaleHold};

#[cfg(test)]
#[path = "returns_tests.rs"]
mod tests;
