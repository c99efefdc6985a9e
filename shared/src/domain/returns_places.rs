//! Listings of general-admission places (API.md, "Returns"): a seller's
//! listed places of a section counted as a bucket of their own, so
//! several offers can each hold some of one listing; how a listing writes
//! them; and what an offer holding some records. Pure.

use super::{offers_listing, still_listed, Listing, ListingWrite, ReturnStatus, Seller};
use crate::domain::buyer_limit::BuyerRef;
use crate::domain::ga::Bucket;
use crate::domain::waitlist::Waitlist;
use crate::domain::{hold_is_live, Millis, OrderId, SectionId};

/// A seller's listed places of a section as their resale item counts
/// them: a general-admission bucket of their own (its capacity the places
/// listed, its sold those resold from it, its holds the offers'), so
/// several offers can each hold some of one listing. Every write of the
/// item is conditioned on its version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedPlaces {
    pub section: SectionId,
    pub seller: Seller,
    pub generation: u64,
    pub listed_at: Millis,
    pub places: Bucket,
    /// `None`: an item from before places were counted (no counts, no
    /// holds), rewritten whole by the next listing of them.
    pub version: Option<u64>,
}

/// A listing of places' resale item as a write of it read it: what the
/// write is conditioned on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlacesItemRead {
    /// No item.
    Absent,
    /// An item from before places were counted: no version.
    Uncounted,
    /// An item at this version.
    At(u64),
}

impl ListedPlaces {
    /// Its item as read.
    pub fn as_read(&self) -> PlacesItemRead {
        self.version
            .map_or(PlacesItemRead::Uncounted, PlacesItemRead::At)
    }

    /// Whether an offer made at `now` may take some of them, `waitlist` as
    /// it stands (what it may take: their bucket's available places).
    pub fn offerable(&self, waitlist: &Waitlist, now: Millis) -> bool {
        offers_listing(self.generation, self.listed_at, waitlist, now)
    }

    /// What an offer's order records of the places it takes of them,
    /// under `bucket`.
    pub fn hold(&self, bucket: u32) -> PlacesResaleHold {
        PlacesResaleHold {
            section: self.section.clone(),
            bucket,
            seller: self.seller.order_id.clone(),
            seller_ref: self.seller.buyer_ref.clone(),
            generation: self.generation,
            listed_at: self.listed_at,
        }
    }

    /// Until when the latest live offer holding some of them holds them
    /// at `now` (`None`: no live offer holds any).
    pub fn held_until(&self, now: Millis) -> Option<Millis> {
        self.places
            .holds
            .iter()
            .map(|h| h.expires_at)
            .filter(|until| hold_is_live(*until, now))
            .max()
    }
}

/// How a listing of places writes its resale item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlacesResale {
    /// No item: a new one of `quantity` places.
    New { quantity: u32 },
    /// The listing reads `LISTED`: `added` more places on the item read
    /// at `version`, whose holds stay.
    More { added: u32, version: u64 },
    /// The item of an earlier listing (withdrawn, reverted) that no live
    /// offer holds, or one from before places were counted: replaced
    /// whole at `quantity`, over the item as `read`, the expired holds it
    /// kept (`stale`) removed with it.
    Remade {
        quantity: u32,
        read: PlacesItemRead,
        stale: Vec<OrderId>,
    },
}

/// How `write` (a listing of places; `listing` the one it replaces, as
/// read) writes the resale item read as `item` at `now`, `waitlist` as it
/// stands; `None` when a live offer still holds places of an earlier
/// listing (`409 return-offered`, as for a seat).
pub fn places_resale(
    write: &ListingWrite,
    listing: Option<&Listing>,
    item: Option<&ListedPlaces>,
    waitlist: Option<&Waitlist>,
    now: Millis,
) -> Option<PlacesResale> {
    let listed_now = listing.filter(|l| l.status_at(waitlist, now) == ReturnStatus::Listed);
    match (item, listed_now) {
        (None, _) => Some(PlacesResale::New {
            quantity: write.quantity,
        }),
        (
            Some(ListedPlaces {
                version: Some(version),
                ..
            }),
            Some(listing),
        ) => Some(PlacesResale::More {
            added: write.quantity.saturating_sub(listing.quantity),
            version: *version,
        }),
        (Some(item), None) if item.held_until(now).is_some() => None,
        (Some(item), _) => Some(PlacesResale::Remade {
            quantity: write.quantity,
            read: item.as_read(),
            stale: item.places.holds.iter().map(|h| h.order.clone()).collect(),
        }),
    }
}

/// Some of a seller's listed places an offer holds: the bucket number its
/// order records them under (from `ga::LISTING_BUCKETS_FROM`), and whose
/// listing they are until paid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlacesResaleHold {
    pub section: SectionId,
    pub bucket: u32,
    pub seller: OrderId,
    /// The seller's record on a limited event: the resale moves the
    /// places out of its count.
    pub seller_ref: Option<BuyerRef>,
    pub generation: u64,
    pub listed_at: Millis,
}

impl PlacesResaleHold {
    /// Whether a live offer holding them may still be paid at `now`,
    /// `waitlist` as it stands ([`still_listed`]).
    pub fn still_listed(&self, waitlist: Option<&Waitlist>, now: Millis) -> bool {
        still_listed(self.generation, self.listed_at, waitlist, now)
    }
}
