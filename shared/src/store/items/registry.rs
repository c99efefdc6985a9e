//! The registries a scheduled function walks: one item each (`QUEUES`,
//! the admitter's; `WAITLISTS`, the offerer's), a string set of event ids
//! added and removed in the transaction that writes the state they list.
//! One item, written only when a queue or a waitlist is put or removed:
//! never on a buyer's path.

use std::collections::HashMap;

use crate::domain::EventId;
use crate::store::expression::Expression;
use crate::store::schema::{PK, SK};
use crate::store::value::{s, ss, Item};

/// A registry of events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::store) enum Registry {
    /// The events that have (or had) a queue, for the admitter to visit.
    Queues,
    /// The events with a waitlist not deleted, or deleted and still
    /// counted, for the offerer to visit.
    Waitlists,
}

impl Registry {
    /// The registry's item key: its name, as partition and sort key.
    pub(in crate::store) fn key(self) -> Item {
        let name = match self {
            Self::Queues => "QUEUES",
            Self::Waitlists => "WAITLISTS",
        };
        HashMap::from([(PK.into(), s(name)), (SK.into(), s(name))])
    }
}

/// The registry's set of event ids.
pub(in crate::store) const EVENTS: &str = "events";

/// Lists (or unlists) `event`. Names: `#events`; values: `:event`.
pub(in crate::store) fn list_event(event: &EventId, listed: bool) -> Expression {
    let text = if listed {
        "ADD #events :event"
    } else {
        "DELETE #events :event"
    };
    Expression::update(text)
        .name("#events", EVENTS)
        .value(":event", ss(&[event.as_str()]))
}
