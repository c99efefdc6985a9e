//! The stream's word to the offerer (API.md, "Offers", when): one offerer
//! per waitlist makes its offers, the tick. The seat-map projector, which
//! reads the table's stream, counts each batch that freed seats or places
//! of an event with an open waitlist on one small item; the tick reads
//! the count at every visit, and a count it has not looked since makes a
//! look due. Beside it, per part of the rows (`domain::map_parts`), the
//! batches that changed them: the offerer keeps the map between looks
//! and reads again only the parts whose count moved. (When the projector
//! made offers itself, its looks and the tick's read the same free seats
//! and heads, and one lost every write the other made first: about four
//! offers in ten on the waitlist bench.)

use std::collections::BTreeSet;

use super::items::frees::{frees_key, noted, one_more};
use super::Store;
use crate::domain::map_parts::Noted;
use crate::domain::EventRef;
use crate::error::Error;

impl Store {
    /// Counts one more batch that changed `parts`' rows of `event`, and
    /// freed seats or places if `freed` (nothing to count: no write).
    pub async fn note_changes(
        &self,
        event: &EventRef,
        freed: bool,
        parts: &BTreeSet<u8>,
    ) -> Result<(), Error> {
        if let Some(expression) = one_more(freed, parts) {
            self.update_if(frees_key(event), expression).await?;
        }
        Ok(())
    }

    /// The counts for `event`, strongly consistent (a batch's count shows
    /// at the tick's next visit).
    pub async fn frees_noted(&self, event: &EventRef) -> Result<Noted, Error> {
        let item = self.get_consistent(frees_key(event)).await?;
        Ok(noted(item.as_ref())?)
    }
}
