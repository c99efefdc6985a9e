//! The items' images as the table's stream shows them (decoded by
//! `store::stream`): what the events out are computed from.

use crate::domain::buyer::BuyerId;
use crate::domain::ga::{HeldPlaces, PlaceHold};
use crate::domain::returns::{ReturnStatus, ReturnUnit};
use crate::domain::waitlist::{EndReason, EntryStatus};
use crate::domain::{
    EntryId, EventId, Millis, OrderId, OrderStatus, PaymentId, SeatId, SeatStatus, SectionId,
};

/// An order item as the stream shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderImage {
    pub order_id: OrderId,
    pub event_id: EventId,
    pub status: OrderStatus,
    pub expires_at: Millis,
    pub payment_id: Option<PaymentId>,
    /// Further payments recorded for refund.
    pub refund_payment_ids: Vec<PaymentId>,
    /// The seats it holds, or, once completed, bought.
    pub seats: Vec<SeatId>,
    /// Its general-admission places per bucket, held or bought.
    pub places: Vec<HeldPlaces>,
    pub user_id: Option<String>,
    pub buyer_id: Option<BuyerId>,
    /// The waitlist entry it was offered to, if it is an offer.
    pub offer: Option<OfferImage>,
}

/// An offer's order's tie to its waitlist entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OfferImage {
    pub entry_id: EntryId,
    pub buyer_id: BuyerId,
    /// Why its cancel ended its entry, as the cancel recorded.
    pub cancelled_as: Option<EndReason>,
}

/// A waitlist's state item as the stream shows it (its main item: the
/// copies repeat its writes and tell nothing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitlistImage {
    pub event_id: EventId,
    pub generation: u64,
    pub opened: bool,
    pub ended: bool,
}

/// A waitlist entry as the stream shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryImage {
    pub event_id: EventId,
    pub entry_id: EntryId,
    pub buyer_id: BuyerId,
    /// As stored: an offered entry's end is its order's.
    pub status: EntryStatus,
}

/// A seat item as the stream shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatImage {
    pub event_id: EventId,
    pub seat_id: SeatId,
    pub status: SeatStatus,
    /// The holder, or the buyer of a sold seat.
    pub holder: Option<OrderId>,
    pub hold_expires_at: Option<Millis>,
    /// The payment that bought a sold seat.
    pub payment_id: Option<PaymentId>,
}

/// A general-admission bucket as the stream shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BucketImage {
    pub event_id: EventId,
    pub section_id: SectionId,
    pub sold: u32,
    pub holds: Vec<PlaceHold>,
    /// The order (and its payment) whose sale wrote this image, if the
    /// write was a sale: a bucket's sale may take free places the order
    /// never held there, so its hold alone cannot say who bought.
    pub sale: Option<(OrderId, Option<PaymentId>)>,
}

/// A seller's listing (a return) as the stream shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReturnImage {
    pub event_id: EventId,
    pub order_id: OrderId,
    pub unit: ReturnUnit,
    pub quantity: u32,
    pub status: ReturnStatus,
    /// When it was last listed: every listing write sets it, so a listing
    /// again (after a revert computed at read time, which writes nothing)
    /// shows as a change.
    pub listed_at: Millis,
    /// Its resale, once resold.
    pub resale: Option<crate::domain::returns::Resale>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ItemImage {
    Order(OrderImage),
    Seat(SeatImage),
    Bucket(BucketImage),
    Waitlist(WaitlistImage),
    Entry(EntryImage),
    Return(ReturnImage),
}

/// One stream record: an item's images before and after one write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemChange {
    /// The record's id (stable across redelivery).
    pub record_id: String,
    /// When the write happened, to the millisecond: the item's own stamp
    /// (`store::stream`).
    pub at: Millis,
    pub old: Option<ItemImage>,
    pub new: Option<ItemImage>,
}
