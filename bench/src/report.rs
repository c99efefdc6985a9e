//! What one `make bench` run measured, gathered as the scenarios finish:
//! the page writers read it, and its goals are the run's verdict.

use std::time::Duration;

use crate::cold_start::ColdStart;
use crate::crowd::StampedeRun;
use crate::goals::Goal;
use crate::kit::Row;
use crate::onsale_run::OnSale;
use crate::ops;
use crate::queue_model::QueueRun;

/// Everything one run measured.
#[derive(Debug, Default)]
pub struct Report {
    pub rows: Vec<Row>,
    pub round_trips: Vec<ops::TripRow>,
    pub sweep: Vec<(String, Duration, u64, u64)>,
    pub concurrency: Vec<(usize, f64, f64)>,
    pub stampede_latencies: Vec<f64>,
    pub handler_over_bare: f64,
    /// Requests sent to warm DynamoDB Local up, and how long they took.
    pub warm_up: (usize, Duration),
    pub on_sale: OnSale,
    pub cold_start: ColdStart,
    /// The one-seat stampede over many instances, one run per count.
    pub one_seat: Vec<StampedeRun>,
    /// The on-sale queue under a crowd.
    pub queue: QueueRun,
    /// Goals of figures that have no row of their own (handler ÷ bare,
    /// the sweep's scaling).
    pub goals: Vec<Goal>,
}

impl Report {
    pub fn all_ok(&self) -> bool {
        self.rows.iter().all(|r| r.ok)
            && self.one_seat.iter().all(StampedeRun::ok)
            && self.on_sale.ok
            && !matches!(self.cold_start, ColdStart::Measured { ok: false, .. })
    }

    /// Every goal of the run, in the order the page shows its figures.
    pub fn goals(&self) -> Vec<Goal> {
        let rows = self.rows.iter().flat_map(|r| r.goals.iter().cloned());
        let one_seat = self.one_seat.iter().flat_map(StampedeRun::goals);
        let cold_start = match &self.cold_start {
            ColdStart::Measured { goals, .. } => goals.clone(),
            _ => Vec::new(),
        };
        rows.chain(self.goals.iter().cloned())
            .chain(one_seat)
            .chain(self.on_sale.goals())
            .chain(self.queue.goals())
            .chain(cold_start)
            .collect()
    }
}
