//! An offer's resales on its order item (`offerResales`): the listed
//! seats it holds, each with whose listing it is, written when the offer
//! is made and read by whatever lets its holds go or sells them.

use std::collections::HashMap;

use crate::domain::buyer_limit::BuyerRef;
use crate::domain::returns::ResaleHold;
use crate::domain::{Millis, OrderId, SeatId};
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

/// An offer's resales as its item stores them.
pub(in crate::store) fn resales_value(resales: &[ResaleHold]) -> AttributeValue {
    let map = resales.iter().map(|r| {
        let mut seller = HashMap::from([
            (RESALE_SELLER.to_owned(), s(r.seller.as_str())),
            (RESALE_GENERATION.to_owned(), n(r.generation)),
            (RESALE_LISTED_AT.to_owned(), n(r.listed_at.0)),
        ]);
        if let Some(buyer) = &r.seller_ref {
            seller.insert(RESALE_SELLER_REF.to_owned(), s(buyer.as_str()));
        }
        (r.seat.as_str().to_owned(), AttributeValue::M(seller))
    });
    AttributeValue::M(map.collect())
}

/// An offer's resales as read from its item.
pub(in crate::store) fn parse_resales(f: &Fields) -> Result<Vec<ResaleHold>, StoreError> {
    let Some(map) = f.opt_map(OFFER_RESALES)? else {
        return Ok(Vec::new());
    };
    let mut resales = Vec::with_capacity(map.len());
    for (seat, seller) in map {
        let seller = seller.as_m().map_err(|_| f.malformed(OFFER_RESALES))?;
        let g = Fields::new(seller);
        resales.push(ResaleHold {
            seat: SeatId::parse(seat).map_err(|_| f.malformed(OFFER_RESALES))?,
            seller: OrderId::parse(g.str(RESALE_SELLER)?)
                .map_err(|_| f.malformed(OFFER_RESALES))?,
            seller_ref: g
                .opt_s(RESALE_SELLER_REF)
                .map(|r| BuyerRef::from_hex(r).ok_or_else(|| f.malformed(OFFER_RESALES)))
                .transpose()?,
            generation: u64::try_from(g.i64(RESALE_GENERATION)?)
                .map_err(|_| f.malformed(OFFER_RESALES))?,
            listed_at: Millis(g.i64(RESALE_LISTED_AT)?),
        });
    }
    resales.sort_by(|a, b| a.seat.cmp(&b.seat));
    Ok(resales)
}
