//! An instance's memory of the buyers it keeps refusing for their limit
//! (the rules: [`crate::domain::buyer_limit::BuyerRefusals`]).

use std::sync::{Arc, Mutex};

use super::lock;

use crate::domain::buyer_limit::{BuyerRefusals, BuyerSeen, LimitedBuyer};
use crate::domain::{Millis, OrderId};

/// Clones share one memory: they are the same instance's.
#[derive(Debug, Default, Clone)]
pub(super) struct BuyerMemory(Arc<Mutex<BuyerRefusals>>);

impl BuyerMemory {
    /// `Some(counted)` when this instance keeps refusing `buyer` and the
    /// claim of `claimed` by `order` is over its limit on the record last
    /// read ([`BuyerRefusals::refuse`]).
    pub(super) fn refuse(
        &self,
        buyer: &LimitedBuyer,
        order: &OrderId,
        claimed: &[String],
        now: Millis,
    ) -> Option<u32> {
        lock(&self.0).refuse(buyer, order, claimed, now)
    }

    /// See [`BuyerRefusals::learn`].
    pub(super) fn learn(&self, seen: &BuyerSeen, now: Millis) {
        lock(&self.0).learn(seen, now);
    }
}
