//! One module per item type, each holding its key, its codec and its
//! expressions (the conditions and updates that write it, with their names
//! and values): what an item is, in one place. The reads and writes that
//! use them are the store's files by concern.

pub(super) mod bucket;
pub(super) mod buyer;
pub(super) mod entry;
pub(super) mod event;
pub(super) mod frees;
pub(super) mod keyed_block;
pub(super) mod order;
pub(super) mod payment;
pub(super) mod positions;
pub(super) mod queue;
pub(super) mod registry;
pub(super) mod resale;
pub(super) mod returns;
pub(super) mod seat;
pub(super) mod seat_map;
pub(super) mod visitor;
pub(super) mod waitlist;

/// A whole-item write's condition: the item as it was read, at `version`
/// (its `version` attribute), or absent (`None`). Names: `#version`;
/// values: `:read`.
pub(super) fn as_read(version: Option<i64>) -> crate::store::expression::Expression {
    use crate::store::expression::Expression;
    match version {
        Some(version) => Expression::condition("#version = :read")
            .name("#version", crate::store::schema::VERSION)
            .value(":read", crate::store::value::n(version)),
        None => Expression::condition("attribute_not_exists(PK)"),
    }
}

/// A copy of a state item (a queue's, a waitlist's) is written only over
/// an older one (or none): a late write never puts an older state back.
/// Names: `#version`; values: `:version`.
pub(super) fn older_copy(version: i64) -> crate::store::expression::Expression {
    crate::store::expression::Expression::condition(
        "attribute_not_exists(PK) OR #version < :version",
    )
    .name("#version", crate::store::schema::VERSION)
    .value(":version", crate::store::value::n(version))
}

/// What a test compares an item's names with: `declared`, as a set.
#[cfg(test)]
pub(in crate::store) fn declared(names: &[&str]) -> std::collections::BTreeSet<String> {
    names.iter().map(|a| (*a).to_owned()).collect()
}

#[cfg(test)]
mod tests {
    use super::event::{event_key, event_pk};
    use super::order::{pending_shard, PENDING_SHARDS};
    use super::seat::{seat_block_pk, seat_key};
    use crate::domain::{EventId, EventRef, OrderId, SeatId};
    use crate::store::schema::{PK, SK};
    use crate::store::value::s;

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    #[test]
    fn keys_and_shards() -> TestResult {
        let e = EventId::parse("gala")?;
        let seat = SeatId::parse("A-1-1")?;
        let r = EventRef::of(&e);
        assert_eq!(seat_key(&r, &seat)[SK], s("SEAT#A-1-1"));
        assert_eq!(seat_key(&r, &seat)[PK], s(format!("SEATS#{r}#A-1#0")));
        assert_eq!(event_key(&e)[PK], s(format!("EVENT#{r}")));
        // Seats 1-10 of a row share a block key, 11 starts the next; the
        // row part is everything before the last dash.
        let pk = |id: &str| -> Result<String, Box<dyn std::error::Error>> {
            Ok(seat_block_pk(&r, &SeatId::parse(id)?))
        };
        assert_eq!(pk("A-1-10")?, pk("A-1-1")?);
        assert_eq!(pk("A-1-11")?, format!("SEATS#{r}#A-1#1"));
        assert_eq!(pk("A-1-2-25")?, format!("SEATS#{r}#A-1-2#2"));
        assert_ne!(pk("A-2-1")?, pk("A-1-1")?);
        // Ids no plan makes still get a key (where nothing exists).
        assert_eq!(pk("A")?, format!("SEATS#{r}#A#-"));
        assert_eq!(pk("A-1-0")?, format!("SEATS#{r}#A-1-0#-"));
        assert_eq!(pk("A-x")?, format!("SEATS#{r}#A-x#-"));
        let order = OrderId::from_random(&e, 42);
        assert_eq!(
            order.event_ref().map(|r| event_pk(&r)),
            Some(event_key(&e)[PK].clone()),
            "an order id names its event's partition"
        );
        // The event item sorts before its seats, so a partition query
        // meets it first.
        assert!("EVENT" < "SEAT#");
        let shards: std::collections::HashSet<_> = (0..2000)
            .map(|_| {
                pending_shard(&OrderId::from_random(
                    &e,
                    crate::world::random_u128().unwrap_or_default(),
                ))
            })
            .collect();
        assert_eq!(
            shards.len(),
            PENDING_SHARDS as usize,
            "orders spread over every shard"
        );
        Ok(())
    }
}
