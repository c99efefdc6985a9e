//! Cold start and footprint under the Lambda RIE (scripts/bench_cold_start.py).

use crate::kit::unique;
use crate::{serve, Bound, ColdStartPass, Goal};
use shared::App;

/// The cold-start scenario's outcome.
#[derive(Debug, Default)]
pub enum ColdStart {
    #[default]
    NotRun,
    /// Not run, and why (bench-smoke without the Python tools).
    Skipped(String),
    /// The script's tables (markdown), whether every invocation succeeded,
    /// and each function's targets.
    Measured {
        markdown: String,
        ok: bool,
        goals: Vec<Goal>,
    },
}

/// The last scenario: scripts/bench_cold_start.py, which runs every
/// function's binary under the Lambda Runtime Interface Emulator. It sets
/// up through a dev server this process serves on a fresh table of the
/// same (warm) DynamoDB Local, and measures the function binaries next to
/// this benchmark's own executable (so `--release` measures release).
pub(super) async fn cold_start(
    app: App,
    endpoint: &str,
    pass: ColdStartPass,
) -> Result<ColdStart, String> {
    let root = local::repo_root();
    let python = root.join(".tools/venv/bin/python");
    if !python.exists() {
        let why = format!("{} is missing (`make python-tools` installs it with the SAM CLI, which ships the emulator)", python.display());
        return match pass {
            ColdStartPass::Smoke => Ok(ColdStart::Skipped(why)),
            ColdStartPass::Full => Err(format!("cold start: {why}")),
        };
    }
    let exe =
        std::env::current_exe().map_err(|e| format!("cold start: this executable's path: {e}"))?;
    let bin_dir = exe
        .parent()
        .ok_or("cold start: this executable has no folder")?
        .to_owned();
    let fragment = std::env::temp_dir().join(format!("{}.md", unique("seatclaim-cold-start")));
    let goals_file = fragment.with_extension("goals.json");

    let table = app.config.table_name.clone();
    let (port, stop_tx, server) = serve(app).await?;
    let mut command = tokio::process::Command::new(&python);
    command
        .current_dir(&root)
        .arg("scripts/bench_cold_start.py")
        .arg("--server")
        .arg(format!("http://127.0.0.1:{port}"))
        .args(["--ddb-endpoint", endpoint, "--table", &table])
        .arg("--bin-dir")
        .arg(&bin_dir)
        .arg("--fragment")
        .arg(&fragment)
        .arg("--goals")
        .arg(&goals_file);
    if pass == ColdStartPass::Smoke {
        command.args([
            "--smoke", "--only", "get-seat", "--runs", "2", "--warm", "0",
        ]);
    }
    // The script's progress goes to stderr as it runs; its exit status says
    // whether every invocation answered (a missed target is in its doc and its summary).
    let status = command
        .status()
        .await
        .map_err(|e| format!("cold start: {}: {e}", python.display()));
    let _ = stop_tx.send(());
    let _ = server.await;
    let status = status?;
    let markdown = std::fs::read_to_string(&fragment);
    let goals = std::fs::read_to_string(&goals_file);
    let _ = std::fs::remove_file(&fragment);
    let _ = std::fs::remove_file(&goals_file);
    match markdown {
        Ok(markdown) => Ok(ColdStart::Measured {
            markdown,
            ok: status.success(),
            goals: goals
                .map_err(|e| format!("cold start: no goals file: {e}"))
                .and_then(|text| parse_goals(&text))?,
        }),
        Err(e) => Err(format!(
            "cold start: scripts/bench_cold_start.py ({status}) wrote no summary: {e}"
        )),
    }
}

/// The script's targets (`--goals`): a figure never measured (null) is
/// missed.
fn parse_goals(text: &str) -> Result<Vec<Goal>, String> {
    #[derive(serde::Deserialize)]
    struct Written {
        figure: String,
        value: Option<f64>,
        at_most: f64,
        source: String,
    }
    let written: Vec<Written> =
        serde_json::from_str(text).map_err(|e| format!("cold start: goals file: {e}"))?;
    Ok(written
        .into_iter()
        .map(|w| Goal::seen(w.figure, w.value, Bound::AtMost(w.at_most), w.source))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scripts_goals_read_as_written_and_a_null_figure_is_missed() {
        let text = r#"[{"figure": "cold start, get-seat: INIT p50 ms", "value": 12.5, "at_most": 30.0, "source": "s"},
                       {"figure": "cold start, get-seat: peak RSS bytes", "value": null, "at_most": 33554432, "source": "s"}]"#;
        let goals = parse_goals(text).unwrap();
        assert_eq!(goals.len(), 2);
        assert!(goals[0].met());
        assert_eq!(goals[0].bound, Bound::AtMost(30.0));
        assert!(!goals[1].met());
    }
}
