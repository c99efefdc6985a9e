//! DynamoDB's throughput limits, metered on a clock the caller gives (what
//! DynamoDB Local has none of): per partition, per table (and index), with
//! on-demand's growth. Pure: no I/O, no clock.
//!
//! Rules, as the developer guide gives them:
//! - a partition serves at most 1,000 write units and 3,000 read units a
//!   second, "or a linear combination of both", and every item of one
//!   partition key lives on one partition
//!   (<https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html>);
//!   past it: `ProvisionedThroughputExceededException`, reason
//!   `…KeyRangeThroughputExceeded`
//!   (<https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_ThrottlingReason.html>);
//! - burst capacity keeps up to 300 seconds of unused *provisioned*
//!   capacity (<https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/burst-adaptive-capacity.html>):
//!   seatclaim's table is on demand, which has none to keep, so nothing is
//!   banked, however long a table was idle;
//! - on demand, a new table takes up to 4,000 write or 12,000 read request
//!   units a second, "or a linear combination", and up to double its
//!   previous peak after; past double within 30 minutes it may be
//!   throttled
//!   (<https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/on-demand-capacity-mode.html>);
//! - the per-table quota on demand: 40,000 read and 40,000 write request
//!   units a second by default, each index its own; past it:
//!   `ThrottlingException`, reason `…AccountLimitExceeded`
//!   (<https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html>);
//! - adaptive capacity splits a partition to isolate frequently accessed
//!   items (same page as burst capacity), with no figure for how soon.
//!
//! Modelled, where the guide gives no number: capacity is counted per whole
//! second of the clock; a table (or index) has as many partitions as its
//! allowance needs at a partition's limits (a new table's 4,000 write
//! units: 4), and a key lands on one of them by a hash of its value, so
//! keys share a partition's limit with their neighbours; a key that has
//! used more than half a partition every second for [`SPLIT_FOR_HEAT_S`]
//! seconds is split onto a partition of its own; a peak raises the
//! allowance 30 minutes after it (the guide's "within 30 minutes"); a
//! table above double its peak throttles as a partition would (its
//! partitions have not split yet), counted as its allowance
//! ([`Throttle::TableAllowance`]); the quota is hard, per kind. A request
//! is let in while what it lands on has capacity left, its estimated cost
//! reserved, and settled at what it consumed once answered (DynamoDB
//! cannot know a read's size before it reads; only the difference is
//! charged, so an answer after its second closed or its key split is not
//! paid twice): a second that ends over, by what was in flight, is paid
//! back by the next.

use std::collections::{HashMap, HashSet, VecDeque};

pub use local::faults::Throttle;

use super::{Charge, Target};

/// Use is summed in fractions of a partition-second: full within this.
const ROUNDING: f64 = 1e-9;

/// DynamoDB's numbers (the module's head gives their sources).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    pub partition_write_units: f64,
    pub partition_read_units: f64,
    pub table_write_quota: f64,
    pub table_read_quota: f64,
    /// The previous peak a new on-demand table starts from (it may take
    /// double).
    pub first_peak_write_units: f64,
    pub first_peak_read_units: f64,
    /// Whether the table was warmed (`WarmThroughput`: so many read and so
    /// many write units a second, each kind its own) rather than new (its
    /// 4,000 writes or 12,000 reads "or a linear combination of both").
    pub warm: bool,
}

impl Limits {
    pub const DYNAMODB: Limits = Limits {
        partition_write_units: super::PARTITION_WRITE_UNITS,
        partition_read_units: super::PARTITION_READ_UNITS,
        table_write_quota: 40_000.0,
        table_read_quota: 40_000.0,
        first_peak_write_units: 2_000.0,
        first_peak_read_units: 6_000.0,
        warm: false,
    };

    /// DynamoDB's limits on a table warmed to its per-table quota before
    /// a crowd (on-demand's warm throughput, what docs/SCALE.md says to
    /// set a day ahead): its allowance starts at the quota, each kind its
    /// own, instead of a new table's 4,000 write units.
    pub const WARMED: Limits = Limits::warmed_to(
        Limits::DYNAMODB.table_write_quota,
        Limits::DYNAMODB.table_read_quota,
    );

    /// DynamoDB's limits on a table whose per-table quotas AWS raised to
    /// `write_quota` and `read_quota` units a second (what docs/SCALE.md
    /// says to ask for), warmed to them before the crowd.
    pub const fn warmed_to(write_quota: f64, read_quota: f64) -> Limits {
        Limits {
            table_write_quota: write_quota,
            table_read_quota: read_quota,
            first_peak_write_units: write_quota / 2.0,
            first_peak_read_units: read_quota / 2.0,
            warm: true,
            ..Limits::DYNAMODB
        }
    }
}

/// One partition's (or one key's) second: the share of a partition-second
/// used (writes over 1,000, reads over 3,000), what was in flight when it
/// filled included: the next seconds pay that back.
#[derive(Debug, Clone, Copy)]
struct Partition {
    second: i64,
    used: f64,
}

impl Partition {
    /// Its state in `second` (an earlier one than it has is counted in its
    /// current second: requests of one instant arrive in any order). A
    /// second that ran over leaves its excess to the next.
    fn at(&mut self, second: i64) -> &mut Self {
        if second > self.second {
            let idle = (second - self.second - 1) as f64;
            self.used = (self.used - 1.0 - idle).max(0.0);
            self.second = second;
        }
        self
    }
}

/// Where a key's load lands: a slot among its table's partitions, or a
/// partition of its own once split for heat.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PartitionId {
    Shared { index: Option<String>, slot: u64 },
    Own(Target),
}

/// How one key has run lately: its own share of a partition this second,
/// and since when every second took more than half of one.
#[derive(Debug, Clone, Copy)]
struct Heat {
    load: Partition,
    hot_since: Option<i64>,
}

/// One table's (or index's) second and the peak its allowance doubles.
#[derive(Debug, Clone)]
struct Table {
    second: i64,
    write_units: f64,
    read_units: f64,
    peak_write_units: f64,
    peak_read_units: f64,
    /// Peaks seen, each usable once its 30 minutes have passed: (the
    /// second it becomes usable, write units, read units).
    peaks_to_come: VecDeque<(i64, f64, f64)>,
}

/// A key split onto a partition of its own after it ran hot this long
/// (modelled: the guide gives no figure).
pub const SPLIT_FOR_HEAT_S: i64 = 300;

/// On demand, traffic past double the previous peak "within 30 minutes"
/// may be throttled: a new peak raises the allowance this much later.
const PEAK_SETTLES_S: i64 = 30 * 60;

/// What one run's requests have used, by second.
#[derive(Debug, Clone)]
pub struct Meter {
    limits: Limits,
    partitions: HashMap<PartitionId, Partition>,
    heat: HashMap<Target, Heat>,
    split: HashSet<Target>,
    /// Keyed by index name (`None`: the table).
    tables: HashMap<Option<String>, Table>,
}

impl Meter {
    pub fn new(limits: Limits) -> Self {
        Meter {
            limits,
            partitions: HashMap::new(),
            heat: HashMap::new(),
            split: HashSet::new(),
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
            if table.allowance_used(&limits, write) >= 1.0 - ROUNDING {
                return Err(Throttle::TableAllowance { index, write });
            }
            let id = self.partition_of(&c.target);
            if self.partition_at(&id, second).used >= 1.0 - ROUNDING {
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
    /// place of its `estimate`. Only the difference is charged, where each
    /// key's load lands now: the estimate stays where it was counted. A
    /// second that closed (or a key that split) since the reservation
    /// already paid the estimate; taking it back from the next second, or
    /// from the key's own partition, would pay the request twice.
    pub fn settle(&mut self, now_ms: i64, estimate: &[Charge], actual: &[Charge]) {
        self.apply(now_ms, &difference(estimate, actual), 1.0);
    }

    /// The partition `target`'s load lands on now: a slot its table's
    /// partitions are chosen by a hash of the key's value, or its own.
    pub fn partition_of(&mut self, target: &Target) -> PartitionId {
        if self.split.contains(target) {
            return PartitionId::Own(target.clone());
        }
        let limits = self.limits;
        // Every charge asks: the table is looked at, never copied.
        let partitions = match self.tables.get(&target.index) {
            Some(table) => table.partitions(&limits),
            None => new_table(&limits, 0).partitions(&limits),
        };
        PartitionId::Shared {
            index: target.index.clone(),
            slot: fnv1a(&target.pk) % partitions,
        }
    }

    fn apply(&mut self, now_ms: i64, charges: &[Charge], sign: f64) {
        let second = now_ms.div_euclid(1_000);
        let Limits {
            partition_write_units,
            partition_read_units,
            ..
        } = self.limits;
        for c in charges {
            let share = c.write_units / partition_write_units + c.read_units / partition_read_units;
            let id = self.partition_of(&c.target);
            let partition = self.partition_at(&id, second);
            partition.used = (partition.used + sign * share).max(0.0);
            self.heat_at(&c.target, second).load.used += sign * share;
            let table = self.table_at(&c.target.index, second);
            table.write_units = (table.write_units + sign * c.write_units).max(0.0);
            table.read_units = (table.read_units + sign * c.read_units).max(0.0);
        }
    }

    fn partition_at(&mut self, id: &PartitionId, second: i64) -> &mut Partition {
        self.partitions
            .entry(id.clone())
            .or_insert(Partition { second, used: 0.0 })
            .at(second)
    }

    /// The key's heat in `second`: a second that closed with more than
    /// half a partition on it keeps it hot, any other cools it; hot for
    /// [`SPLIT_FOR_HEAT_S`], it is split onto a partition of its own.
    fn heat_at(&mut self, target: &Target, second: i64) -> &mut Heat {
        let heat = self.heat.entry(target.clone()).or_insert(Heat {
            load: Partition { second, used: 0.0 },
            hot_since: None,
        });
        if second > heat.load.second {
            let closed = heat.load.second;
            heat.hot_since = match (heat.load.used > 0.5, second == closed + 1) {
                (true, true) => heat.hot_since.or(Some(closed)),
                _ => None,
            };
            heat.load = Partition { second, used: 0.0 };
            if heat
                .hot_since
                .is_some_and(|since| second - since >= SPLIT_FOR_HEAT_S)
            {
                self.split.insert(target.clone());
            }
        }
        heat
    }

    /// The table's state in `second`: peaks 30 minutes old raise the
    /// allowance.
    fn table_at(&mut self, index: &Option<String>, second: i64) -> &mut Table {
        let limits = self.limits;
        let table = self
            .tables
            .entry(index.clone())
            .or_insert_with(|| new_table(&limits, second));
        if second > table.second {
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

/// `actual` less `estimate`, per key (in the order keys first appear):
/// what settling a request changes. Keys whose cost was estimated right
/// are left out.
fn difference(estimate: &[Charge], actual: &[Charge]) -> Vec<Charge> {
    let mut by_key: Vec<Charge> = Vec::new();
    let mut at: HashMap<&Target, usize> = HashMap::new();
    let signed = actual.iter().map(|c| (c, 1.0));
    for (c, sign) in signed.chain(estimate.iter().map(|c| (c, -1.0))) {
        let i = *at.entry(&c.target).or_insert_with(|| {
            by_key.push(Charge {
                write_units: 0.0,
                read_units: 0.0,
                ..c.clone()
            });
            by_key.len() - 1
        });
        by_key[i].write_units += sign * c.write_units;
        by_key[i].read_units += sign * c.read_units;
    }
    by_key.retain(|d| d.write_units.abs() > ROUNDING || d.read_units.abs() > ROUNDING);
    by_key
}

/// A table first seen in `second`: its previous peak is the new table's.
fn new_table(limits: &Limits, second: i64) -> Table {
    Table {
        second,
        write_units: 0.0,
        read_units: 0.0,
        peak_write_units: limits.first_peak_write_units,
        peak_read_units: limits.first_peak_read_units,
        peaks_to_come: VecDeque::new(),
    }
}

/// FNV-1a: a stable hash (the standard library's is seeded per process),
/// so a key lands on the same slot in every run.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl Table {
    /// This second's allowance: double the previous peak (the quota is
    /// checked apart, per kind).
    fn allowed(&self) -> (f64, f64) {
        (2.0 * self.peak_write_units, 2.0 * self.peak_read_units)
    }

    /// How many partitions its allowance needs at a partition's limits:
    /// a warm table's both kinds at once, a new table's either.
    fn partitions(&self, limits: &Limits) -> u64 {
        let (write, read) = self.allowed();
        let (writes, reads) = (
            write / limits.partition_write_units,
            read / limits.partition_read_units,
        );
        let needed = match limits.warm {
            true => writes + reads,
            false => writes.max(reads),
        };
        (needed.ceil() as u64).max(1)
    }

    /// The share of this second's allowance used: of the request's kind
    /// (`write`) on a warm table, both as a linear combination on a new one.
    fn allowance_used(&self, limits: &Limits, write: bool) -> f64 {
        let (writes, reads) = self.allowed();
        let (writes, reads) = (self.write_units / writes, self.read_units / reads);
        match (limits.warm, write) {
            (true, true) => writes,
            (true, false) => reads,
            (false, _) => writes + reads,
        }
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
