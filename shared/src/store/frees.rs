//! The stream's word to the offerer (API.md, "Offers", when): one offerer
//! per waitlist makes its offers, the tick. The seat-map projector, which
//! reads the table's stream, counts each batch that freed seats or places
//! of an event with an open waitlist on one small item; the tick reads
//! the count at every visit, and a count it has not looked since makes a
//! look due. (When the projector made offers itself, its looks and the
//! tick's read the same free seats and heads, and one lost every write the
//! other made first: about four offers in ten on the waitlist bench.)

use super::items::frees::{frees_key, noted, one_more};
use super::Store;
use crate::domain::EventRef;
use crate::error::Error;

impl Store {
    /// Counts one more batch that freed seats or places of `event`.
    pub async fn note_frees(&self, event: &EventRef) -> Result<(), Error> {
        self.update_if(frees_key(event), one_more()).await?;
        Ok(())
    }

    /// How many batches have freed seats or places of `event`, strongly
    /// consistent (a batch's count shows at the tick's next visit).
    pub async fn frees_noted(&self, event: &EventRef) -> Result<u64, Error> {
        let item = self.get_consistent(frees_key(event)).await?;
        Ok(noted(item.as_ref())?)
    }
}
