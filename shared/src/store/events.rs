//! Events and their seats: retry-safe creation, reads, seat listing.

use super::*;

impl Store {
    // ----- events -------------------------------------------------------

    /// Creates an event and its seats, safe to retry and to run twice at
    /// once. The event item is written first with `ready = false` under
    /// `attribute_not_exists`, then each seat under `attribute_not_exists`
    /// (a retry never overwrites a seat, so a seat held or sold meanwhile
    /// stays so), then `ready = true`; nothing reads a not-ready event.
    /// The same plan again (same fingerprint) resumes an interrupted
    /// creation, or finds it complete and writes nothing; another plan under
    /// a taken id is `event-exists`.
    pub async fn create_event(&self, event: &Event, seats: &[SeatSpec]) -> Result<(), Error> {
        let fingerprint = plan_fingerprint(event, seats);
        let mut item = event_key(&event.event_id);
        item.extend([
            (KIND.into(), s("event")),
            (EVENT_ID.into(), s(event.event_id.as_str())),
            (NAME.into(), s(&event.name)),
            (HOLD_SECONDS.into(), n(event.hold_seconds)),
            (SEAT_COUNT.into(), n(event.seat_count)),
            (SECTIONS.into(), AttributeValue::L(event.sections.iter().map(|x| s(x.as_str())).collect())),
            (PLAN_HASH.into(), s(&fingerprint)),
            (READY.into(), AttributeValue::Bool(false)),
            (CREATED_AT.into(), n(Millis::now().0)),
        ]);
        let put = self
            .client
            .put_item()
            .table_name(&*self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(PK)")
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .send()
            .await;
        if let Err(err) = put {
            let existing = match err.as_service_error() {
                Some(aws_sdk_dynamodb::operation::put_item::PutItemError::ConditionalCheckFailedException(c)) => {
                    c.item().cloned()
                }
                _ => return Err(sdk_error("PutItem", err).into()),
            };
            let Some(existing) = existing.filter(|old| Fields::new(old).opt_s(PLAN_HASH) == Some(fingerprint.as_str())) else {
                return Err(Error::EventExists);
            };
            if event_is_ready(&existing) {
                return Ok(());
            }
            tracing::info!(event_id = %event.event_id, "resuming an unfinished event creation");
        }
        self.write_seats(&EventRef::of(&event.event_id), seats).await?;
        self.client
            .update_item()
            .table_name(&*self.table)
            .set_key(Some(event_key(&event.event_id)))
            .update_expression("SET #ready = :true")
            .expression_attribute_names("#ready", READY)
            .expression_attribute_values(":true", AttributeValue::Bool(true))
            .send()
            .await
            .map_err(|e| sdk_error("UpdateItem", e))?;
        Ok(())
    }

    /// Writes each seat that does not exist yet (`attribute_not_exists`), a
    /// bounded number at once. A seat that exists is left as it is.
    async fn write_seats(&self, event: &EventRef, seats: &[SeatSpec]) -> Result<(), Error> {
        let mut pending = seats.iter();
        let mut in_flight = tokio::task::JoinSet::new();
        loop {
            while in_flight.len() < SEAT_WRITES_IN_FLIGHT {
                let Some(seat) = pending.next() else { break };
                let mut item = seat_key(event, &seat.seat_id);
                item.extend([
                    (KIND.into(), s("seat")),
                    (SEAT_ID.into(), s(seat.seat_id.as_str())),
                    (SECTION_ID.into(), s(seat.section_id.as_str())),
                    (ROW.into(), s(seat.row.as_str())),
                    (NUMBER.into(), n(seat.number)),
                    (ORDINAL.into(), n(seat.ordinal)),
                    (STATUS.into(), s(SEAT_AVAILABLE)),
                ]);
                let put = self
                    .client
                    .put_item()
                    .table_name(&*self.table)
                    .set_item(Some(item))
                    .condition_expression("attribute_not_exists(PK)");
                in_flight.spawn(async move { conditional(put.send().await, "PutItem") });
            }
            match in_flight.join_next().await {
                None => return Ok(()),
                // Written, or there already: either way the seat exists.
                Some(Ok(result)) => {
                    result?;
                }
                Some(Err(join)) => {
                    return Err(StoreError::Sdk { op: "PutItem", unavailable: false, source: Box::new(join) }.into())
                }
            }
        }
    }

    /// A ready event, or `None`.
    pub async fn get_event(&self, event: &EventId) -> Result<Option<Event>, Error> {
        match self.get_consistent(event_key(event)).await? {
            Some(item) if event_is_ready(&item) => Ok(Some(parse_event(&item)?)),
            _ => Ok(None),
        }
    }

    /// An event's seats (one section's, if given) in plan order: the event
    /// item, then one `Query` per page. `None` if the event does not exist
    /// or is still being created.
    pub async fn list_seats(&self, event: &EventId, section: Option<&SectionId>) -> Result<Option<Vec<Seat>>, Error> {
        let Some(found) = self.get_event(event).await? else { return Ok(None) };
        if section.is_some_and(|sec| !found.sections.contains(sec)) {
            return Err(Error::SectionNotFound);
        }
        let mut seats = Vec::with_capacity(found.seat_count as usize);
        let mut start: Option<Item> = None;
        loop {
            let q = self
                .client
                .query()
                .table_name(&*self.table)
                .consistent_read(true)
                .set_exclusive_start_key(start.take())
                .key_condition_expression("PK = :pk AND begins_with(SK, :prefix)")
                .expression_attribute_values(":pk", event_pk(&EventRef::of(event)));
            let q = match section {
                None => q.expression_attribute_values(":prefix", s(SEAT_SK_PREFIX)),
                // `begins_with` on `SEAT#{section}-` may also match a section
                // whose id extends this one (`A` vs `A-1`), so the section is
                // filtered exactly as well.
                Some(sec) => q
                    .filter_expression("#section = :section")
                    .expression_attribute_names("#section", SECTION_ID)
                    .expression_attribute_values(":prefix", s(format!("{SEAT_SK_PREFIX}{sec}-")))
                    .expression_attribute_values(":section", s(sec.as_str())),
            };
            let out = q.send().await.map_err(|e| sdk_error("Query", e))?;
            for item in out.items.unwrap_or_default() {
                seats.push(parse_seat(&item)?);
            }
            match out.last_evaluated_key {
                Some(k) => start = Some(k),
                None => break,
            }
        }
        seats.sort_by_key(|seat| seat.spec.ordinal);
        Ok(Some(seats))
    }
}

/// Identifies an event's plan, so a retried create-event can resume.
pub(super) fn plan_fingerprint(event: &Event, seats: &[SeatSpec]) -> String {
    let mut h = Sha256::new();
    h.update(event.name.as_bytes());
    h.update([0]);
    h.update(event.hold_seconds.to_be_bytes());
    for seat in seats {
        h.update(seat.seat_id.as_str().as_bytes());
        h.update([0]);
        h.update(seat.section_id.as_str().as_bytes());
        h.update([0]);
        h.update(seat.row.as_str().as_bytes());
        h.update([0]);
    }
    hex::encode(h.finalize())
}
