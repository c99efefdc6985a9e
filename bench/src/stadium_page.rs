//! The stadium page: the live seat map in a real headless Chromium
//! over a large event (scripts/bench_stadium_page.mjs), and the time the
//! page takes to apply one refresh of the availability reply.

use crate::{create_event_from, serve, unique, Bound, Goal, Row, Timing, HOLD_SECONDS};
use shared::App;
use std::time::Instant;

/// The goal for applying one refresh, ms.
pub const APPLY_GOAL_MS: f64 = 100.0;

/// The stadium's plan (sections of rows of seats) and how many refreshes
/// are timed.
#[derive(Debug, Clone, Copy)]
pub struct StadiumPageSize {
    pub sections: u32,
    pub rows: u32,
    pub seats_per_row: u32,
    pub refreshes: u32,
}

impl StadiumPageSize {
    fn seats(&self) -> u64 {
        u64::from(self.sections) * u64::from(self.rows) * u64::from(self.seats_per_row)
    }

    fn plan(&self) -> serde_json::Value {
        let rows: Vec<serde_json::Value> = (1..=self.rows)
            .map(|r| serde_json::json!({"row": r.to_string(), "count": self.seats_per_row}))
            .collect();
        let sections: Vec<serde_json::Value> = (1..=self.sections)
            .map(|s| serde_json::json!({"sectionId": format!("S{s}"), "rows": rows}))
            .collect();
        serde_json::json!({"name": "Stadium", "holdSeconds": HOLD_SECONDS, "sections": sections})
    }
}

/// The scenario's row: each refresh's apply time as its latencies, the
/// seats drawn against the plan's as its correctness.
pub(super) async fn stadium_page(app: App, size: StadiumPageSize) -> Result<Row, String> {
    let event = unique("stadium");
    create_event_from(&app, &event, &size.plan()).await?;
    let (port, stop, server) = serve(app).await?;
    let started = Instant::now();
    let output = tokio::process::Command::new("node")
        .current_dir(local::repo_root())
        .arg("scripts/bench_stadium_page.mjs")
        .args(["--server", &format!("http://127.0.0.1:{port}")])
        .args(["--event", &event])
        .args(["--refreshes", &size.refreshes.to_string()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .map_err(|e| format!("stadium page: node: {e}"));
    // Its stderr (why it failed, if it did) goes straight to ours.
    let output = match output {
        Ok(child) => child
            .wait_with_output()
            .await
            .map_err(|e| format!("stadium page: node: {e}")),
        Err(e) => Err(e),
    };
    let wall = started.elapsed();
    let _ = stop.send(());
    let _ = server.await;
    let output = output?;
    if !output.status.success() {
        return Err(format!(
            "stadium page: scripts/bench_stadium_page.mjs failed ({})",
            output.status
        ));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let measured: serde_json::Value = stdout
        .lines()
        .last()
        .and_then(|line| serde_json::from_str(line).ok())
        .ok_or_else(|| format!("stadium page: no figures in {stdout:?}"))?;
    let apply_ms: Vec<f64> = measured["applyMs"]
        .as_array()
        .map(|a| a.iter().filter_map(serde_json::Value::as_f64).collect())
        .unwrap_or_default();
    // Cells of 2×2 pixels: a fractional count is a seat partly drawn.
    let drawn = measured["seats"].as_f64().unwrap_or(0.0);
    let timing = Timing {
        latencies_ms: apply_ms,
        wall,
    };
    let goal = Goal::new(
        format!(
            "stadium page: one refresh of a {}-seat map applied, p50 ms",
            size.seats()
        ),
        timing.p50(),
        Bound::AtMost(APPLY_GOAL_MS),
        "`stadium_page::APPLY_GOAL_MS`",
    );
    Ok(Row {
        scenario: format!(
            "stadium page: one refresh of a {}-seat map applied (headless Chromium; p50 {:.1} ms, max {:.1} ms, {})",
            size.seats(),
            timing.p50(),
            timing.max(),
            goal.judged(),
        ),
        correctness: format!("{drawn} of {} seats drawn", size.seats()),
        ok: drawn == size.seats() as f64 && timing.latencies_ms.len() == size.refreshes as usize,
        timing,
        goals: vec![goal],
    })
}
