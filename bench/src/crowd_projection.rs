//! A million buyers, four times oversubscribed, projected from the two
//! phases the bench measured: the selling phase (the demand model's buyers
//! while there is something to sell) and the sold-out phase (the crowd
//! refused once nothing is left). Each phase's recorded requests, priced
//! per key, are scaled to one buyer; the crowd is then so many buyers a
//! second in each phase. The phases follow each other, so a key's load
//! is a phase's, never their sum: the phase whose hottest key fills first
//! sets the on-sale's ceiling. Throughput and cost weight the phases by
//! their share of the crowd.

use std::collections::BTreeMap;

use super::onsale_run::OnSale;
use super::pricing::old_layout;
use crate::capacity::{self, Charge, KeyLoad, Target, PARTITION_READ_UNITS, PARTITION_WRITE_UNITS};

/// The scale model's crowd: 1,000,000 buyers in 10 minutes.
pub const CROWD_BUYERS: f64 = 1_000_000.0;
pub const CROWD_SECONDS: f64 = 600.0;
/// Demand over supply (the "four times oversubscribed"): a
/// quarter of the crowd arrives while there is something to sell, the
/// rest after the sell-out.
pub const OVERSUBSCRIBED: f64 = 4.0;
/// How much hotter an on-sale's peak minute is than its ten-minute
/// average, for sizing limits: an assumption, stated as one.
pub const PEAK_OVER_AVERAGE: f64 = 4.0;
/// Keys shown per layout and phase.
const HOTTEST_SHOWN: usize = 3;

/// One phase's traffic, per buyer.
#[derive(Debug, Clone, Default)]
pub struct PhaseLoad {
    pub name: &'static str,
    /// Share of the crowd's buyers that arrive in this phase.
    pub share: f64,
    /// Claim attempts (get-seat, best-available, hold-ga) per buyer.
    pub attempts_per_buyer: f64,
    pub requests_per_buyer: BTreeMap<&'static str, f64>,
    /// DynamoDB requests per buyer, by the function that made them.
    pub round_trips_per_buyer: BTreeMap<&'static str, f64>,
    /// Every priced request, scaled to one buyer.
    pub charges: Vec<Charge>,
}

/// Where one phase's load lands under one key layout, at the crowd's rate.
#[derive(Debug, Clone, Default)]
pub struct LayoutFigures {
    pub layout: &'static str,
    /// Hottest keys for writes and for reads, in units per second.
    pub hottest_writes: Vec<KeyLoad>,
    pub hottest_reads: Vec<KeyLoad>,
    /// Claim attempts/s at which the first key reaches a partition's limit.
    pub ceiling: f64,
}

#[derive(Debug, Clone, Default)]
pub struct PhaseFigures {
    pub name: &'static str,
    pub share: f64,
    pub attempts_per_s: f64,
    pub write_units_per_s: f64,
    pub read_units_per_s: f64,
    /// Write and read units/s on the table or index nearest its quota
    /// (`crowdcheck::capacity::units_nearest_quota`: each has its own).
    pub quota_units_per_s: (f64, f64),
    pub requests_per_s: BTreeMap<&'static str, f64>,
    pub new_keys: LayoutFigures,
    pub old_keys: LayoutFigures,
}

#[derive(Debug, Clone, Default)]
pub struct CrowdProjection {
    pub buyers_per_s: f64,
    pub phases: Vec<PhaseFigures>,
    /// Units per buyer, the phases weighted by their share.
    pub write_units_per_buyer: f64,
    pub read_units_per_buyer: f64,
    pub requests_per_buyer: BTreeMap<&'static str, f64>,
    pub round_trips_per_buyer: BTreeMap<&'static str, f64>,
}

impl CrowdProjection {
    /// The on-sale's ceiling under a layout: the lower of its phases'.
    pub fn ceiling(&self, old: bool) -> f64 {
        self.phases
            .iter()
            .map(|p| {
                if old {
                    p.old_keys.ceiling
                } else {
                    p.new_keys.ceiling
                }
            })
            .fold(f64::INFINITY, f64::min)
    }

    /// Each function's busiest phase, in requests/s at the crowd's average.
    pub fn busiest_requests_per_s(&self) -> BTreeMap<&'static str, f64> {
        let mut busiest = BTreeMap::new();
        for phase in &self.phases {
            for (function, rate) in &phase.requests_per_s {
                let best: &mut f64 = busiest.entry(*function).or_default();
                *best = best.max(*rate);
            }
        }
        busiest
    }

    /// The hottest key of either phase for writes (per s), and for reads.
    pub fn hottest(&self, old: bool) -> (Option<&KeyLoad>, Option<&KeyLoad>) {
        let layouts = || {
            self.phases
                .iter()
                .map(move |p| if old { &p.old_keys } else { &p.new_keys })
        };
        let writes = layouts()
            .filter_map(|l| l.hottest_writes.first())
            .max_by(|a, b| a.write_units.total_cmp(&b.write_units));
        let reads = layouts()
            .filter_map(|l| l.hottest_reads.first())
            .max_by(|a, b| a.read_units.total_cmp(&b.read_units));
        (writes, reads)
    }
}

/// `charges` scaled by `factor` (to one buyer, or to a second).
fn scaled(charges: &[Charge], factor: f64) -> impl Iterator<Item = Charge> + '_ {
    charges.iter().map(move |c| Charge {
        write_units: c.write_units * factor,
        read_units: c.read_units * factor,
        ..c.clone()
    })
}

fn layout_figures(
    layout: &'static str,
    per_second: &[Charge],
    attempts_per_s: f64,
    map: &dyn Fn(&Target) -> Target,
) -> LayoutFigures {
    let mut loads = capacity::totals(per_second, map);
    let fill = loads.iter().fold(0.0f64, |fill, k| {
        fill.max(k.write_units / PARTITION_WRITE_UNITS)
            .max(k.read_units / PARTITION_READ_UNITS)
    });
    let hottest_writes = loads.iter().take(HOTTEST_SHOWN).cloned().collect();
    loads.sort_by(|a, b| b.read_units.total_cmp(&a.read_units));
    LayoutFigures {
        layout,
        hottest_writes,
        hottest_reads: loads.into_iter().take(HOTTEST_SHOWN).collect(),
        ceiling: attempts_per_s / fill.max(1e-12),
    }
}

/// The crowd over `phases` (their shares summing to 1).
pub fn project(phases: &[PhaseLoad]) -> CrowdProjection {
    let buyers_per_s = CROWD_BUYERS / CROWD_SECONDS;
    let mut out = CrowdProjection {
        buyers_per_s,
        ..CrowdProjection::default()
    };
    for phase in phases {
        let per_second: Vec<Charge> = scaled(&phase.charges, buyers_per_s).collect();
        let attempts_per_s = phase.attempts_per_buyer * buyers_per_s;
        let write_units: f64 = phase.charges.iter().map(|c| c.write_units).sum();
        let read_units: f64 = phase.charges.iter().map(|c| c.read_units).sum();
        out.write_units_per_buyer += phase.share * write_units;
        out.read_units_per_buyer += phase.share * read_units;
        for (function, n) in &phase.requests_per_buyer {
            *out.requests_per_buyer.entry(function).or_default() += phase.share * n;
        }
        for (function, n) in &phase.round_trips_per_buyer {
            *out.round_trips_per_buyer.entry(function).or_default() += phase.share * n;
        }
        out.phases.push(PhaseFigures {
            name: phase.name,
            share: phase.share,
            attempts_per_s,
            write_units_per_s: write_units * buyers_per_s,
            read_units_per_s: read_units * buyers_per_s,
            quota_units_per_s: crowdcheck::capacity::units_nearest_quota(&per_second),
            requests_per_s: phase
                .requests_per_buyer
                .iter()
                .map(|(f, n)| (*f, n * buyers_per_s))
                .collect(),
            new_keys: layout_figures("new keys", &per_second, attempts_per_s, &|t| t.clone()),
            old_keys: layout_figures("old keys", &per_second, attempts_per_s, &old_layout),
        });
    }
    out
}

/// The two phases as the bench measured them.
pub fn phases(run: &OnSale) -> Vec<PhaseLoad> {
    let buyers = run.model.map_or(1, |m| m.buyers).max(1) as f64;
    let attempts_per_buyer = run.attempts as f64 / buyers;
    let selling = PhaseLoad {
        name: "selling",
        share: 1.0 / OVERSUBSCRIBED,
        attempts_per_buyer,
        requests_per_buyer: run
            .functions
            .iter()
            .map(|(f, (n, _))| (*f, *n as f64 / buyers))
            .collect(),
        round_trips_per_buyer: run
            .functions
            .keys()
            .map(|f| {
                (
                    *f,
                    run.round_trips.get(*f).copied().unwrap_or(0) as f64 / buyers,
                )
            })
            .collect(),
        charges: scaled(&run.charges, 1.0 / buyers).collect(),
    };
    let Some(sold_out) = &run.sold_out else {
        return vec![PhaseLoad {
            share: 1.0,
            ..selling
        }];
    };
    // A refused buyer makes an order and tries as often as a selling buyer
    // did, each try priced as the sold-out crowd's refusals were.
    let refusals: u64 = sold_out.functions.values().map(|f| f.requests).sum();
    let per_refusal = attempts_per_buyer / refusals.max(1) as f64;
    let mut requests_per_buyer: BTreeMap<&'static str, f64> = sold_out
        .functions
        .iter()
        .map(|(f, cost)| (*f, cost.requests as f64 * per_refusal))
        .collect();
    requests_per_buyer.insert("create-order", 1.0);
    let mut round_trips_per_buyer: BTreeMap<&'static str, f64> = sold_out
        .functions
        .iter()
        .map(|(f, cost)| (*f, cost.round_trips as f64 * per_refusal))
        .collect();
    round_trips_per_buyer.insert(
        "create-order",
        sold_out.order_round_trips as f64 / sold_out.orders.max(1) as f64,
    );
    let charges = scaled(&sold_out.order_charges, 1.0 / sold_out.orders.max(1) as f64)
        .chain(scaled(&sold_out.refusal_charges, per_refusal))
        .collect();
    vec![
        selling,
        PhaseLoad {
            name: "sold out",
            share: 1.0 - 1.0 / OVERSUBSCRIBED,
            attempts_per_buyer,
            requests_per_buyer,
            round_trips_per_buyer,
            charges,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn charge(pk: &str, write_units: f64, read_units: f64) -> Charge {
        Charge {
            target: Target::table(pk.to_owned()),
            op: "PutItem".into(),
            write_units,
            read_units,
        }
    }

    #[test]
    fn the_phase_whose_hottest_key_fills_first_sets_the_ceiling() {
        // Selling: 2 attempts a buyer, a seat key written 0.01 units a
        // buyer. Sold out: the same attempts, a plan key read 0.1 a buyer.
        let phases = [
            PhaseLoad {
                name: "selling",
                share: 0.25,
                attempts_per_buyer: 2.0,
                requests_per_buyer: BTreeMap::from([("get-seat", 2.0)]),
                round_trips_per_buyer: BTreeMap::from([("get-seat", 2.0)]),
                charges: vec![charge("SEATS#e#1", 0.01, 0.0), charge("ORDER#x", 4.0, 1.0)],
            },
            PhaseLoad {
                name: "sold out",
                share: 0.75,
                attempts_per_buyer: 2.0,
                requests_per_buyer: BTreeMap::from([("get-seat", 1.0)]),
                round_trips_per_buyer: BTreeMap::from([("get-seat", 2.0)]),
                charges: vec![charge("PLAN#e#0", 0.0, 0.1)],
            },
        ];
        let crowd = project(&phases);
        let rate = CROWD_BUYERS / CROWD_SECONDS;
        let selling = &crowd.phases[0];
        // The order key is the hottest here (4 units a buyer).
        assert_eq!(selling.new_keys.hottest_writes[0].target.pk, "ORDER#x");
        assert!((selling.new_keys.ceiling - 2.0 * PARTITION_WRITE_UNITS / 4.0).abs() < 1e-6);
        let sold_out = &crowd.phases[1];
        assert_eq!(sold_out.new_keys.hottest_reads[0].target.pk, "PLAN#e#0");
        assert!((sold_out.new_keys.hottest_reads[0].read_units - 0.1 * rate).abs() < 1e-6);
        assert!((sold_out.new_keys.ceiling - 2.0 * PARTITION_READ_UNITS / 0.1).abs() < 1e-6);
        assert_eq!(crowd.ceiling(false), selling.new_keys.ceiling);
        // Weighted by share: a quarter of 1 read unit, three quarters of 0.1.
        assert!((crowd.read_units_per_buyer - (0.25 * 1.0 + 0.75 * 0.1)).abs() < 1e-9);
        assert!((crowd.write_units_per_buyer - 0.25 * 4.01).abs() < 1e-9);
        assert_eq!(
            crowd.requests_per_buyer["get-seat"],
            0.25 * 2.0 + 0.75 * 1.0
        );
        assert_eq!(crowd.busiest_requests_per_s()["get-seat"], 2.0 * rate);
        assert_eq!(crowd.round_trips_per_buyer["get-seat"], 2.0);
        // The old layout puts every seat of an event on the event's key.
        assert_eq!(selling.old_keys.hottest_writes[0].target.pk, "ORDER#x");
        assert!(selling
            .old_keys
            .hottest_writes
            .iter()
            .any(|k| k.target.pk == "EVENT#e"));
    }
}
