//! The seat map's projection: seat changes read from the table's stream
//! are folded into one small item per row (per 1,000 seats of a row), which
//! the availability route reads with eventually consistent batch reads
//! instead of every seat item.
//!
//! A projection item holds an attribute `s{number}` per seat that is not
//! available: `S` (sold) or `H{expiresAt ms}` (held; the reader shows an
//! expired hold as available at once). An available seat has none. It
//! also keeps its row's free-runs item (`eventRunsItem`), once a change
//! naming it is projected (see `free_runs.rs`).

use super::errors::{sdk_error, StoreError};
use super::fan_out::FanOut;
use super::items;
use super::items::seat::{
    HOLD_EXPIRES_AT, RUNS_ITEM, SEAT_AVAILABLE, SEAT_HELD, SEAT_PK_PREFIX, SEAT_SOLD,
};
use super::items::seat_map::{seat_map_key, MAP_VERSION, SEAT_MAP_ITEM_SEATS};
use super::schema::{PK, SEAT_ID, STATUS};
use super::sold_out::PartShape;
use super::value::{s, Fields, Item};
use super::Store;
use crate::domain::ga::Bucket;
use crate::domain::{Event, EventId, EventRef, Millis, RowPlan, SeatId, SectionId};
use crate::error::Error;
use crate::retry::Rounds;
use aws_sdk_dynamodb::types::{AttributeValue, KeysAndAttributes, ReturnValue};
use std::collections::HashMap;

use crate::domain::{ProjectedSeat, RowId, RowProjection};

/// Batch reads in flight for one map.
const MAP_READS_IN_FLIGHT: usize = 8;
/// Seats per projection `UpdateItem`: keeps its expression far inside
/// DynamoDB's 4 KB expression limit (each seat adds ~20 bytes).
pub(super) const SEATS_PER_UPDATE: usize = 100;
/// Keys per BatchGetItem (DynamoDB's limit).
pub(super) const BATCH_GET_KEYS: usize = 100;

/// How long one process reuses a seat map it read: with the CDN's own
/// second and the stream's lag (about a second), a change shows within the
/// contract's 5 s.
pub const SEAT_MAP_CACHE_MS: i64 = 1000;

/// An event's row projections by section and row.
pub type Rows = HashMap<(SectionId, RowId), RowProjection>;

/// What availability reads: the seat-map projection's rows and the
/// general-admission buckets, per section.
#[derive(Debug, Default)]
pub struct MapRead {
    pub rows: Rows,
    pub buckets: HashMap<SectionId, Vec<Bucket>>,
}

/// One seat's new state, from a stream record of its item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatChange {
    pub event: EventRef,
    pub seat: SeatId,
    /// `None`: available.
    pub state: Option<ProjectedSeat>,
    /// The record's stream sequence number (for batch item failures).
    pub sequence: String,
    /// Its seat-map part's place in its section, for the sold-out signal
    /// (`None` for a seat created before it).
    pub shape: Option<PartShape>,
}

/// The seat change a stream record (DynamoDB's wire JSON, as Lambda and
/// the Streams API deliver it) describes, or `None` for a record that is
/// not a seat's, or that changes nothing on the map (a seat created
/// available). Pure.
pub fn seat_change(record: &serde_json::Value) -> Option<SeatChange> {
    let data = &record["dynamodb"];
    let pk = data["Keys"][PK]["S"].as_str()?;
    let event = EventRef::from_hex(pk.strip_prefix(SEAT_PK_PREFIX)?.split('#').next()?)?;
    let sequence = data["SequenceNumber"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let image = &data["NewImage"];
    let seat = SeatId::parse(image[SEAT_ID]["S"].as_str()?).ok()?;
    let state = match image[STATUS]["S"].as_str()? {
        SEAT_AVAILABLE if record["eventName"] == "INSERT" => return None,
        SEAT_AVAILABLE => None,
        SEAT_SOLD => Some(ProjectedSeat::Sold),
        SEAT_HELD => Some(ProjectedSeat::Held {
            expires_at: Millis(image[HOLD_EXPIRES_AT]["N"].as_str()?.parse().ok()?),
        }),
        _ => return None,
    };
    Some(SeatChange {
        event,
        seat,
        state,
        sequence,
        shape: PartShape::of_image(image),
    })
}

/// The keys of a row's projection items, one per 1,000 seats.
fn row_map_keys<'a>(
    event: &'a EventRef,
    section: &SectionId,
    row: &'a RowPlan,
) -> impl Iterator<Item = Item> + 'a {
    let row_key = SeatId::row_key(section, &row.row);
    (1..=row.count)
        .step_by(SEAT_MAP_ITEM_SEATS as usize)
        .map(move |first| seat_map_key(event, &row_key, first))
}

fn seat_attr(number: u32) -> String {
    format!("s{number}")
}

/// The seats a projection item shows taken (held or sold), by number.
pub(super) fn row_projection(item: &Item) -> RowProjection {
    item.iter()
        .filter_map(|(name, value)| {
            let number = name.strip_prefix('s')?.parse::<u32>().ok()?;
            let state = match value.as_s().ok()?.as_str() {
                "S" => ProjectedSeat::Sold,
                held => ProjectedSeat::Held {
                    expires_at: Millis(held.strip_prefix('H')?.parse().ok()?),
                },
            };
            Some((number, state))
        })
        .collect()
}

/// A projection item just before and just after one write to it.
pub(super) struct Written {
    pub before: Item,
    pub after: Item,
}

impl Written {
    /// Whether the write changed every seat it set (a batch delivered
    /// again sets some seats as they are already).
    pub(super) fn changed_every_seat(&self, seats: &[u32]) -> bool {
        seats.iter().all(|number| {
            let attribute = seat_attr(*number);
            self.before.get(&attribute) != self.after.get(&attribute)
        })
    }
}

/// A projection item as `items::seat_map::project(seats)` leaves it, from
/// the item just before (`before`, empty if there was none, then `key`
/// is its key). Pure: one `UpdateItem` is atomic, so the item after it is
/// exactly the one before with its attributes (seats, and the summary
/// item) set and removed and its version one more.
fn projected(key: &Item, before: &Item, seats: Vec<(String, Option<AttributeValue>)>) -> Item {
    let mut after = if before.is_empty() {
        key.clone()
    } else {
        before.clone()
    };
    for (attribute, value) in seats {
        match value {
            Some(value) => after.insert(attribute, value),
            None => after.remove(&attribute),
        };
    }
    let version = Fields::new(before)
        .opt_i64(MAP_VERSION)
        .ok()
        .flatten()
        .unwrap_or(0);
    after.insert(
        MAP_VERSION.into(),
        AttributeValue::N((version + 1).to_string()),
    );
    after
}

impl Store {
    /// One `UpdateItem` of a projection item: `SET` the seats now held or
    /// sold, `REMOVE` those available again, and `SET` the row's summary
    /// item when a change named it. Returns the item before it and after
    /// it.
    pub(super) async fn project_part(
        &self,
        key: Item,
        seats: &[(u32, (Option<ProjectedSeat>, &str))],
        runs_item: Option<u32>,
    ) -> Result<Written, StoreError> {
        let mut seats: Vec<(String, Option<AttributeValue>)> = seats
            .iter()
            .map(|(number, (state, _))| {
                let value = state.map(|state| match state {
                    ProjectedSeat::Sold => s("S"),
                    ProjectedSeat::Held { expires_at } => s(format!("H{}", expires_at.0)),
                });
                (seat_attr(*number), value)
            })
            .collect();
        // Kept on the projection item: a row whose seats were created
        // across a deploy has seats that do not name it, and a later batch
        // of only those still finds its summary (`free_runs.rs`).
        if let Some(item) = runs_item {
            seats.push((
                RUNS_ITEM.to_owned(),
                Some(AttributeValue::N(item.to_string())),
            ));
        }
        let request = self
            .client
            .update_item()
            .table_name(&*self.table)
            .set_key(Some(key.clone()))
            .return_values(ReturnValue::AllOld);
        let out = items::seat_map::project(seats.clone())
            .on_update_item(request)
            .send()
            .await
            .map_err(|e| sdk_error("UpdateItem", e))?;
        let before = out.attributes.unwrap_or_default();
        let after = projected(&key, &before, seats);
        Ok(Written { before, after })
    }

    /// The projection of every row of `event` and its general-admission
    /// buckets (an instance reuses it for [`SEAT_MAP_CACHE_MS`]).
    pub async fn seat_map_rows(&self, event: &Event, consistent: bool) -> Result<MapRead, Error> {
        Ok(MapRead {
            buckets: self.event_buckets(event, consistent).await?,
            rows: self.read_seat_map(event, consistent).await?,
        })
    }

    /// The general-admission buckets of every section of `event` that has
    /// them.
    pub async fn event_buckets(
        &self,
        event: &Event,
        consistent: bool,
    ) -> Result<HashMap<SectionId, Vec<Bucket>>, Error> {
        let mut buckets = HashMap::new();
        for (section, capacity) in event.ga_sections() {
            let indexes: Vec<u32> = (0..crate::domain::ga::bucket_count(capacity)).collect();
            buckets.insert(
                section.clone(),
                self.read_buckets(&event.event_id, section, &indexes, consistent)
                    .await?,
            );
        }
        Ok(buckets)
    }

    /// The projection of every row of `event` (eventually consistent
    /// unless `consistent`: the map may lag a little; a seat's hold expiry
    /// is exact regardless).
    pub async fn read_seat_map(&self, event: &Event, consistent: bool) -> Result<Rows, Error> {
        self.read_seat_map_of(event, |_, _| true, consistent).await
    }

    /// The projection of the rows of `event` that `wanted` picks (an
    /// absent row has every seat available).
    pub async fn read_seat_map_of(
        &self,
        event: &Event,
        wanted: impl Fn(&SectionId, &RowId) -> bool,
        consistent: bool,
    ) -> Result<Rows, Error> {
        let event_ref = EventRef::of(&event.event_id);
        let mut keys = Vec::new();
        for section in &event.sections {
            let rows = section.rows.iter();
            for row in rows.filter(|row| wanted(&section.section_id, &row.row)) {
                let id = (section.section_id.clone(), row.row.clone());
                let items = row_map_keys(&event_ref, &section.section_id, row);
                keys.extend(items.map(|key| (id.clone(), key)));
            }
        }
        self.read_maps(keys, consistent).await
    }

    /// The projection of `rows` of `section`, in their order (eventually
    /// consistent, one BatchGetItem per 100 projection items of 1,000
    /// seats): best-available reads its long rows this way
    /// ([`Store::map_read_round_trips`]).
    pub async fn read_row_maps(
        &self,
        event: &EventId,
        section: &SectionId,
        rows: &[RowPlan],
    ) -> Result<Vec<RowProjection>, Error> {
        let event_ref = EventRef::of(event);
        let keys = rows
            .iter()
            .enumerate()
            .flat_map(|(i, row)| row_map_keys(&event_ref, section, row).map(move |key| (i, key)));
        let mut read = self.read_maps(keys.collect(), false).await?;
        Ok((0..rows.len())
            .map(|i| read.remove(&i).unwrap_or_default())
            .collect())
    }

    /// The projection items `keys` name, each row's folded into one (a
    /// row of 1,000 seats or more has several items), by the row each key
    /// is for: [`MAP_READS_IN_FLIGHT`] BatchGetItems at a time.
    async fn read_maps<R>(
        &self,
        keys: Vec<(R, Item)>,
        consistent: bool,
    ) -> Result<HashMap<R, RowProjection>, Error>
    where
        R: Clone + Eq + std::hash::Hash,
    {
        let rows_of: HashMap<String, R> = keys
            .iter()
            .filter_map(|(row, key)| Some((key.get(PK)?.as_s().ok()?.clone(), row.clone())))
            .collect();
        let mut batches = keys
            .chunks(BATCH_GET_KEYS)
            .map(|chunk| chunk.iter().map(|(_, key)| key.clone()).collect::<Vec<_>>());
        let mut fan = FanOut::new(MAP_READS_IN_FLIGHT, "BatchGetItem");
        let mut map: HashMap<R, RowProjection> = HashMap::new();
        let read = |batch| {
            let store = self.clone();
            async move { store.batch_get(batch, consistent).await }
        };
        while let Some(read) = fan.next(|| batches.next().map(read)).await {
            for item in read?? {
                let row = item.get(PK).and_then(|v| v.as_s().ok());
                if let Some(row) = row.and_then(|pk| rows_of.get(pk)) {
                    map.entry(row.clone())
                        .or_default()
                        .extend(row_projection(&item));
                }
            }
        }
        Ok(map)
    }

    /// The requests [`Store::read_row_maps`] makes for `rows`.
    pub fn map_read_round_trips(rows: &[RowPlan]) -> usize {
        Self::map_requests(rows.iter().map(Self::map_items).sum())
    }

    /// The projection items of `row`: one per 1,000 seats.
    pub fn map_items(row: &RowPlan) -> usize {
        row.count.div_ceil(SEAT_MAP_ITEM_SEATS) as usize
    }

    /// The batched reads `items` projection items take.
    pub fn map_requests(items: usize) -> usize {
        items.div_ceil(BATCH_GET_KEYS)
    }

    /// Every item of `keys` that exists (any order); unprocessed keys are
    /// retried, then the read fails as unavailable.
    pub(super) async fn batch_get(
        &self,
        keys: Vec<Item>,
        consistent: bool,
    ) -> Result<Vec<Item>, Error> {
        let mut found = Vec::new();
        let mut wanted = keys;
        if wanted.is_empty() {
            return Ok(found);
        }
        let mut rounds = Rounds::new(
            "BatchGetItem's unprocessed keys",
            crate::retry::UNPROCESSED_KEYS_ROUNDS + 1,
        );
        while rounds.next().await.is_some() {
            let request = KeysAndAttributes::builder()
                .set_keys(Some(std::mem::take(&mut wanted)))
                .consistent_read(consistent)
                .build()
                .map_err(|e| StoreError::Sdk {
                    op: "BatchGetItem",
                    unavailable: false,
                    throttled: false,
                    source: Box::new(e),
                })?;
            let out = self
                .client
                .batch_get_item()
                .request_items(&*self.table, request)
                .send()
                .await
                .map_err(|e| sdk_error("BatchGetItem", e))?;
            found.extend(
                out.responses
                    .unwrap_or_default()
                    .remove(&*self.table)
                    .unwrap_or_default(),
            );
            wanted = out
                .unprocessed_keys
                .unwrap_or_default()
                .remove(&*self.table)
                .map(|k| k.keys)
                .unwrap_or_default();
            if wanted.is_empty() {
                return Ok(found);
            }
            // Throttled: what is left waits a jittered back-off.
            rounds.lost();
        }
        Err(rounds.spent())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(name: &str, image: serde_json::Value) -> serde_json::Value {
        let r =
            EventRef::of(&crate::domain::EventId::parse("gala").unwrap_or_else(|_| unreachable!()));
        json!({
            "eventName": name,
            "dynamodb": {"Keys": {"PK": {"S": format!("SEATS#{r}#A-1#0")}, "SK": {"S": "SEAT#A-1-3"}}, "NewImage": image, "SequenceNumber": "42"},
        })
    }

    #[test]
    fn a_projection_write_is_the_item_before_it_with_its_seats_and_one_more_version() {
        let key: Item = HashMap::from([("PK".into(), s("MAP#x#A-1#0")), ("SK".into(), s("MAP"))]);
        let changes = || vec![("s3".to_owned(), Some(s("S"))), ("s4".to_owned(), None)];
        // No item yet: the key, the seats set, version 1.
        let first = projected(&key, &HashMap::new(), changes());
        assert_eq!(first.get("s3"), Some(&s("S")));
        assert!(!first.contains_key("s4"));
        assert_eq!(first.get("PK"), key.get("PK"));
        assert_eq!(first.get(MAP_VERSION), Some(&AttributeValue::N("1".into())));
        // An item with s4 held and s7 sold at version 6.
        let mut before = key.clone();
        before.insert("s4".into(), s("H1700"));
        before.insert("s7".into(), s("S"));
        before.insert(MAP_VERSION.into(), AttributeValue::N("6".into()));
        let after = projected(&key, &before, changes());
        let seats: Vec<_> = ["s3", "s4", "s7"].iter().map(|a| after.get(*a)).collect();
        assert_eq!(seats, vec![Some(&s("S")), None, Some(&s("S"))]);
        assert_eq!(after.get(MAP_VERSION), Some(&AttributeValue::N("7".into())));
    }

    #[test]
    fn stream_records_become_seat_changes() {
        let held = record(
            "MODIFY",
            json!({"seatId": {"S": "A-1-3"}, "status": {"S": "HELD"}, "holdExpiresAt": {"N": "1700"}}),
        );
        let change = seat_change(&held).unwrap_or_else(|| unreachable!());
        assert_eq!(
            (change.seat.as_str(), change.state, change.sequence.as_str()),
            (
                "A-1-3",
                Some(ProjectedSeat::Held {
                    expires_at: Millis(1700)
                }),
                "42"
            )
        );
        let sold = record(
            "MODIFY",
            json!({"seatId": {"S": "A-1-3"}, "status": {"S": "SOLD"}}),
        );
        assert_eq!(
            seat_change(&sold).map(|c| c.state),
            Some(Some(ProjectedSeat::Sold))
        );
        let released = record(
            "MODIFY",
            json!({"seatId": {"S": "A-1-3"}, "status": {"S": "AVAILABLE"}}),
        );
        assert_eq!(seat_change(&released).map(|c| c.state), Some(None));
        // A seat created available changes nothing on the map.
        assert_eq!(
            seat_change(&record(
                "INSERT",
                json!({"seatId": {"S": "A-1-3"}, "status": {"S": "AVAILABLE"}})
            )),
            None
        );
        // Other items, and malformed records, are skipped.
        let order = json!({"eventName": "MODIFY", "dynamodb": {"Keys": {"PK": {"S": "ORDER#x"}}, "NewImage": {}}});
        assert_eq!(seat_change(&order), None);
        assert_eq!(seat_change(&json!({})), None);
        let no_expiry = record(
            "MODIFY",
            json!({"seatId": {"S": "A-1-3"}, "status": {"S": "HELD"}}),
        );
        assert_eq!(seat_change(&no_expiry), None);
    }
}
