//! DynamoDB's throughput limits, metered on a clock the caller gives (what
//! DynamoDB Local has none of): per partition key, per table (and index),
//! with the burst credit and on-demand's growth. Pure: no I/O, no clock.
//!
//! Rules, as the developer guide gives them:
//! - a partition serves at most 1,000 write units and 3,000 read units a
//!   second, "or a linear combination of both"
//!   (<https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html>);
//!   past it: `ProvisionedThroughputExceededException`, reason
//!   `…KeyRangeThroughputExceeded`
//!   (<https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_ThrottlingReason.html>);
//! - burst capacity: up to 300 seconds of unused capacity is kept and
//!   spent when traffic runs over, within a partition's maximum
//!   (<https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/burst-adaptive-capacity.html>):
//!   here the table's (or index's) allowance banks it, and a partition's
//!   1,000 and 3,000 stay hard;
//! - on demand, a new table takes up to 4,000 write or 12,000 read request
//!   units a second, "or a linear combination", and up to double its
//!   previous peak after
//!   (<https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/on-demand-capacity-mode.html>);
//! - the per-table quota on demand: 40,000 read and 40,000 write request
//!   units a second by default, each index its own; past it:
//!   `ThrottlingException`, reason `…AccountLimitExceeded`
//!   (<https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html>).
//!
//! Modelled, where the guide gives no number: capacity is counted per whole
//! second of the clock; a table (or index) seen for the first time has
//! banked nothing; a peak raises the allowance 30 minutes after it (the
//! guide's "within 30 minutes"); a table above double its peak and its
//! credit throttles as a partition would (its partitions have not split
//! yet), reason `KeyRangeThroughputExceeded`; the quota is hard, per kind.
//! A request is let in while what it lands on has capacity left, its
//! estimated cost reserved, and settled at what it consumed once answered
//! (DynamoDB cannot know a read's size before it reads): a second that
//! ends over, by what was in flight, is paid back by the next.

use std::collections::HashMap;

pub use local::faults::Throttle;

use super::{Charge, Target};

/// Use is summed in fractions of a partition-second: full within this.
const ROUNDING: f64 = 1e-9;

/// DynamoDB's numbers (the module's head gives their sources).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    pub partition_write_units: f64,
    pub partition_read_units: f64,
    /// Seconds of unused partition capacity kept as burst credit.
    pub burst_seconds: f64,
    pub table_write_quota: f64,
    pub table_read_quota: f64,
    /// The previous peak a new on-demand table starts from (it may take
    /// double).
    pub first_peak_write_units: f64,
    pub first_peak_read_units: f64,
}

impl Limits {
    pub const DYNAMODB: Limits = Limits {
        partition_write_units: super::PARTITION_WRITE_UNITS,
        partition_read_units: super::PARTITION_READ_UNITS,
        burst_seconds: 300.0,
        table_write_quota: 40_000.0,
        table_read_quota: 40_000.0,
        first_peak_write_units: 2_000.0,
        first_peak_read_units: 6_000.0,
    };
}

/// One partition key's second: the share of a partition-second used (writes
/// over 1,000, reads over 3,000), what was in flight when it filled
/// included: the next seconds pay that back.
#[derive(Debug, Clone, Copy)]
struct Partition {
    second: i64,
    used: f64,
}

/// One table's (or index's) second, the peak its allowance doubles, and
/// the credit its earlier seconds banked (in seconds of its allowance;
/// negative while it pays back a second that ran over).
#[derive(Debug, Clone)]
struct Table {
    second: i64,
    write_units: f64,
    read_units: f64,
    peak_write_units: f64,
    peak_read_units: f64,
    /// Peaks seen, each usable once its 30 minutes have passed: (the
    /// second it becomes usable, write units, read units).
    peaks_to_come: std::collections::VecDeque<(i64, f64, f64)>,
    banked: f64,
}

/// On demand, traffic past double the previous peak "within 30 minutes"
/// may be throttled: a new peak raises the allowance this much later.
const PEAK_SETTLES_S: i64 = 30 * 60;

/// What one run's requests have used, by second.
#[derive(Debug, Clone)]
pub struct Meter {
    limits: Limits,
    partitions: HashMap<Target, Partition>,
    /// Keyed by index name (`None`: the table).
    tables: HashMap<Option<String>, Table>,
}

impl Meter {
    pub fn new(limits: Limits) -> Self {
        Meter {
            limits,
            partitions: HashMap::new(),
            tables: HashMap::new(),
        }
    }

    /// Whether a request that would cost `estimate` is served at `now_ms`,
    /// and if so its estimate reserved (so requests in flight together do
    /// not all pass a key's last unit): the first limit it meets, if any.
    /// `write`: which kind the request is (the quota it counts against,
    /// and what a throttle reports).
    pub fn admit(&mut self, now_ms: i64, estimate: &[Charge], write: bool) -> Result<(), Throttle> {
        self.check(now_ms, estimate, write)?;
        self.apply(now_ms, estimate, 1.0);
        Ok(())
    }

    /// [`Meter::admit`]'s verdict without reserving anything (a
    /// transaction's items are checked one by one, then reserved together).
    pub fn check(&mut self, now_ms: i64, estimate: &[Charge], write: bool) -> Result<(), Throttle> {
        let second = now_ms.div_euclid(1_000);
        let limits = self.limits;
        for c in estimate {
            let index = c.target.index.clone();
            let table = self.table_at(&index, second);
            if table.quota_used(&limits, write) >= 1.0 - ROUNDING {
                return Err(Throttle::AccountLimit { index, write });
            }
            if table.allowance_used() >= 1.0 + table.banked - ROUNDING {
                return Err(Throttle::KeyRange { index, write });
            }
            if self.partition_at(&c.target, second).used >= 1.0 - ROUNDING {
                return Err(Throttle::KeyRange { index, write });
            }
        }
        Ok(())
    }

    /// Reserves `estimate` at `now_ms` (after [`Meter::check`]).
    pub fn reserve(&mut self, now_ms: i64, estimate: &[Charge]) {
        self.apply(now_ms, estimate, 1.0);
    }

    /// What an admitted request turned out to cost: `actual` charged in
    /// place of its `estimate`.
    pub fn settle(&mut self, now_ms: i64, estimate: &[Charge], actual: &[Charge]) {
        self.apply(now_ms, estimate, -1.0);
        self.apply(now_ms, actual, 1.0);
    }

    fn apply(&mut self, now_ms: i64, charges: &[Charge], sign: f64) {
        let second = now_ms.div_euclid(1_000);
        let Limits {
            partition_write_units,
            partition_read_units,
            ..
        } = self.limits;
        for c in charges {
            let partition = self.partition_at(&c.target, second);
            let share = c.write_units / partition_write_units + c.read_units / partition_read_units;
            partition.used = (partition.used + sign * share).max(0.0);
            let table = self.table_at(&c.target.index, second);
            table.write_units = (table.write_units + sign * c.write_units).max(0.0);
            table.read_units = (table.read_units + sign * c.read_units).max(0.0);
        }
    }

    /// The key's state in `second` (an earlier one than it has is counted
    /// in its current second: requests of one instant arrive in any
    /// order). A second that ran over leaves its excess to the next.
    fn partition_at(&mut self, target: &Target, second: i64) -> &mut Partition {
        let partition = self
            .partitions
            .entry(target.clone())
            .or_insert(Partition { second, used: 0.0 });
        if second > partition.second {
            let idle = (second - partition.second - 1) as f64;
            partition.used = (partition.used - 1.0 - idle).max(0.0);
            partition.second = second;
        }
        partition
    }

    /// The table's state in `second`: the seconds since its last bank what
    /// they left of their allowance (or owe what they ran over), up to the
    /// burst's 300; peaks 30 minutes old raise the allowance.
    fn table_at(&mut self, index: &Option<String>, second: i64) -> &mut Table {
        let limits = self.limits;
        let table = self.tables.entry(index.clone()).or_insert(Table {
            second,
            write_units: 0.0,
            read_units: 0.0,
            peak_write_units: limits.first_peak_write_units,
            peak_read_units: limits.first_peak_read_units,
            peaks_to_come: std::collections::VecDeque::new(),
            banked: 0.0,
        });
        if second > table.second {
            let idle = (second - table.second - 1) as f64;
            let left = 1.0 - table.allowance_used();
            table.banked = (table.banked + left + idle).min(limits.burst_seconds);
            if table.write_units > table.peak_write_units
                || table.read_units > table.peak_read_units
            {
                let usable = table.second + PEAK_SETTLES_S;
                table
                    .peaks_to_come
                    .push_back((usable, table.write_units, table.read_units));
            }
            while let Some(&(usable, w, r)) = table.peaks_to_come.front() {
                if usable > second {
                    break;
                }
                table.peak_write_units = table.peak_write_units.max(w);
                table.peak_read_units = table.peak_read_units.max(r);
                table.peaks_to_come.pop_front();
            }
            table.write_units = 0.0;
            table.read_units = 0.0;
            table.second = second;
        }
        table
    }
}

impl Table {
    /// This second's allowance: double the previous peak (the quota is
    /// checked apart, per kind).
    fn allowed(&self) -> (f64, f64) {
        (2.0 * self.peak_write_units, 2.0 * self.peak_read_units)
    }

    /// The share of this second's allowance used, as a linear combination.
    fn allowance_used(&self) -> f64 {
        let (write, read) = self.allowed();
        self.write_units / write + self.read_units / read
    }

    /// The share of the per-table quota of the request's kind used (a hard
    /// limit: no credit).
    fn quota_used(&self, limits: &Limits, write: bool) -> f64 {
        match write {
            true => self.write_units / limits.table_write_quota,
            false => self.read_units / limits.table_read_quota,
        }
    }
}

#[cfg(test)]
#[path = "meter_tests.rs"]
mod tests;
