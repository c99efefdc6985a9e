//! The stream's counts for an event while its waitlist is open
//! (`WFREED#{ref}`): the batches that freed its seats or places, and per
//! part of its rows (`domain::map_parts`) the batches that changed them;
//! its key, its expression and its reading. The projector adds to them
//! per batch; the offerer's tick reads them at every visit.

use std::collections::{BTreeSet, HashMap};

use crate::domain::map_parts::{Noted, MAP_PARTS};
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

/// Each part's count is `p{part}`: top-level numbers, so one `ADD` counts
/// a part whether or not it has been counted before.
const PART_PREFIX: &str = "p";

/// One more batch that changed `parts`' rows, and freed something if
/// `freed` (`None`: nothing to count). Names: `#noted`, `#p{part}`;
/// values: `:one`. At most [`MAP_PARTS`] names, far inside the 4 KB
/// expression limit.
pub(in crate::store) fn one_more(freed: bool, parts: &BTreeSet<u8>) -> Option<Expression> {
    let mut names: Vec<(String, String)> = parts
        .iter()
        .map(|part| (format!("#p{part}"), format!("{PART_PREFIX}{part}")))
        .collect();
    if freed {
        names.push(("#noted".into(), NOTED.into()));
    }
    if names.is_empty() {
        return None;
    }
    let adds: Vec<String> = names
        .iter()
        .map(|(name, _)| format!("{name} :one"))
        .collect();
    let expression = Expression::update(format!("ADD {}", adds.join(", ")));
    let expression = names
        .into_iter()
        .fold(expression, |e, (name, attribute)| e.name(&name, &attribute));
    Some(expression.value(":one", n(1)))
}

/// The counts an item read holds (none: nothing counted yet).
pub(in crate::store) fn noted(item: Option<&Item>) -> Result<Noted, StoreError> {
    let Some(item) = item else {
        return Ok(Noted::default());
    };
    let fields = Fields::new(item);
    let count = |name: &str| {
        let count = fields.i64(name)?;
        u64::try_from(count).map_err(|_| fields.malformed(name))
    };
    let frees = if item.contains_key(NOTED) {
        count(NOTED)?
    } else {
        0
    };
    let mut parts = HashMap::new();
    for name in item.keys() {
        let part = name
            .strip_prefix(PART_PREFIX)
            .and_then(|p| p.parse::<u8>().ok());
        if let Some(part) = part.filter(|p| *p < MAP_PARTS) {
            parts.insert(part, count(name)?);
        }
    }
    Ok(Noted { frees, parts })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_counts_what_it_did_and_a_read_gives_it_back(
    ) -> Result<(), Box<dyn std::error::Error>> {
        assert!(
            one_more(false, &BTreeSet::new()).is_none(),
            "nothing to count"
        );
        let names = |freed, parts: &[u8]| {
            let parts = parts.iter().copied().collect();
            one_more(freed, &parts).map(|e| e.attribute_names())
        };
        let want = |names: &[&str]| Some(names.iter().map(|n| n.to_string()).collect());
        assert_eq!(names(true, &[]), want(&["noted"]));
        assert_eq!(names(false, &[3, 63]), want(&["p3", "p63"]));
        assert_eq!(names(true, &[0]), want(&["noted", "p0"]));
        let mut item = frees_key(&EventRef::of(&crate::domain::EventId::parse("ev")?));
        assert_eq!(noted(Some(&item))?, Noted::default(), "nothing counted");
        item.insert("noted".into(), n(4));
        item.insert("p3".into(), n(2));
        item.insert("p63".into(), n(1));
        let read = noted(Some(&item))?;
        let parts = HashMap::from([(3, 2), (63, 1)]);
        assert_eq!(
            read,
            Noted { frees: 4, parts },
            "the key's own attributes ignored"
        );
        item.insert("p5".into(), s("x"));
        assert!(noted(Some(&item)).is_err(), "a count that is no number");
        Ok(())
    }
}
