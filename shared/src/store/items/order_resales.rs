//! An offer's resales on its order item (`offerResales`): the listed
//! seats and places it holds, each with whose listing it is, written when the offer
//! is made and read by whatever lets its holds go or sells them.

use std::collections::HashMap;

use super::PLACE_SEPARATOR;
use crate::domain::buyer_limit::BuyerRef;
use crate::domain::returns::{PlacesResaleHold, ResaleHold};
use crate::domain::{Millis, OrderId, SeatId, SectionId};
use crate::store::errors::StoreError;
use crate::store::value::{n, s, Fields};
use aws_sdk_dynamodb::types::AttributeValue;

/// Per listed seat, its seller's order (`o`), the listing's generation
/// (`g`) and `listedAt` (`l`), and on a limited event the seller's record
/// (`r`).
pub(in crate::store) const OFFER_RESALES: &str = "offerResales";
const RESALE_SELLER: &str = "o";
const RESALE_SELLER_REF: &str = "r";
const RESALE_GENERATION: &str = "g";
const RESALE_LISTED_AT: &str = "l";

/// A listing's seller as an offer's resales store it.
fn seller_value(
    seller: &OrderId,
    seller_ref: Option<&BuyerRef>,
    generation: u64,
    listed_at: Millis,
) -> AttributeValue {
    let mut map = HashMap::from([
        (RESALE_SELLER.to_owned(), s(seller.as_str())),
        (RESALE_GENERATION.to_owned(), n(generation)),
        (RESALE_LISTED_AT.to_owned(), n(listed_at.0)),
    ]);
    if let Some(buyer) = seller_ref {
        map.insert(RESALE_SELLER_REF.to_owned(), s(buyer.as_str()));
    }
    AttributeValue::M(map)
}

/// An offer's resales as its item stores them: per listed seat by its id,
/// per listing of places by `{section}#{bucket}` (a seat id never holds a
/// `#`, as the order's `seats` set's members tell places from seats).
pub(in crate::store) fn resales_value(
    resales: &[ResaleHold],
    place_resales: &[PlacesResaleHold],
) -> AttributeValue {
    let seats = resales.iter().map(|r| {
        let seller = seller_value(&r.seller, r.seller_ref.as_ref(), r.generation, r.listed_at);
        (r.seat.as_str().to_owned(), seller)
    });
    let places = place_resales.iter().map(|r| {
        let seller = seller_value(&r.seller, r.seller_ref.as_ref(), r.generation, r.listed_at);
        (
            format!("{}{PLACE_SEPARATOR}{}", r.section, r.bucket),
            seller,
        )
    });
    AttributeValue::M(seats.chain(places).collect())
}

/// A listing's seller as an offer's resales store it, read.
struct SellerRead {
    seller: OrderId,
    seller_ref: Option<BuyerRef>,
    generation: u64,
    listed_at: Millis,
}

fn parse_seller(f: &Fields, value: &AttributeValue) -> Result<SellerRead, StoreError> {
    let seller = value.as_m().map_err(|_| f.malformed(OFFER_RESALES))?;
    let g = Fields::new(seller);
    Ok(SellerRead {
        seller: OrderId::parse(g.str(RESALE_SELLER)?).map_err(|_| f.malformed(OFFER_RESALES))?,
        seller_ref: g
            .opt_s(RESALE_SELLER_REF)
            .map(|r| BuyerRef::from_hex(r).ok_or_else(|| f.malformed(OFFER_RESALES)))
            .transpose()?,
        generation: u64::try_from(g.i64(RESALE_GENERATION)?)
            .map_err(|_| f.malformed(OFFER_RESALES))?,
        listed_at: Millis(g.i64(RESALE_LISTED_AT)?),
    })
}

/// An offer's resales as read from its item: of seats, and of places.
pub(in crate::store) fn parse_resales(
    f: &Fields,
) -> Result<(Vec<ResaleHold>, Vec<PlacesResaleHold>), StoreError> {
    let Some(map) = f.opt_map(OFFER_RESALES)? else {
        return Ok((Vec::new(), Vec::new()));
    };
    let (mut resales, mut place_resales) = (Vec::new(), Vec::new());
    for (unit, seller) in map {
        let read = parse_seller(f, seller)?;
        match unit.split_once(PLACE_SEPARATOR) {
            Some((section, bucket)) => place_resales.push(PlacesResaleHold {
                section: SectionId::parse(section).map_err(|_| f.malformed(OFFER_RESALES))?,
                bucket: bucket.parse().map_err(|_| f.malformed(OFFER_RESALES))?,
                seller: read.seller,
                seller_ref: read.seller_ref,
                generation: read.generation,
                listed_at: read.listed_at,
            }),
            None => resales.push(ResaleHold {
                seat: SeatId::parse(unit).map_err(|_| f.malformed(OFFER_RESALES))?,
                seller: read.seller,
                seller_ref: read.seller_ref,
                generation: read.generation,
                listed_at: read.listed_at,
            }),
        }
    }
    resales.sort_by(|a, b| a.seat.cmp(&b.seat));
    place_resales.sort_by(|a, b| (&a.section, a.bucket).cmp(&(&b.section, b.bucket)));
    Ok((resales, place_resales))
}
