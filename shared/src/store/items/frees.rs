//! The count of the stream's batches that freed an event's seats or
//! places while its waitlist was open (`WFREED#{ref}`): its key, its
//! expression and its reading. The projector adds one per batch; the
//! offerer's tick reads it at every visit.

use std::collections::HashMap;

use crate::domain::EventRef;
use crate::store::errors::StoreError;
use crate::store::expression::Expression;
use crate::store::schema::{PK, SK};
use crate::store::value::{n, s, Fields, Item};

const FREES_PK_PREFIX: &str = "WFREED#";

const FREES_SK: &str = "FREED";

/// How many batches have freed something.
const NOTED: &str = "noted";

/// The event's count: `WFREED#{ref}`.
pub(in crate::store) fn frees_key(event: &EventRef) -> Item {
    HashMap::from([
        (PK.into(), s(format!("{FREES_PK_PREFIX}{event}"))),
        (SK.into(), s(FREES_SK)),
    ])
}

/// One more batch that freed something. Names: `#noted`; values: `:one`.
pub(in crate::store) fn one_more() -> Expression {
    Expression::update("ADD #noted :one")
        .name("#noted", NOTED)
        .value(":one", n(1))
}

/// The count an item read holds (none: nothing freed yet).
pub(in crate::store) fn noted(item: Option<&Item>) -> Result<u64, StoreError> {
    let Some(item) = item else {
        return Ok(0);
    };
    let fields = Fields::new(item);
    let count = fields.i64(NOTED)?;
    u64::try_from(count).map_err(|_| fields.malformed(NOTED))
}
