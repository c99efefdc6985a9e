//! The scale model's inputs, shared by docs/SCALE.md's parts
//! (scale_doc, scale_limits, scale_queue), the on-sale's figures (scale)
//! and the queue's projection: published prices and limits, the
//! assumptions the projections make (stated as such where they are used),
//! template.yaml as read, and the figures kept per function at the
//! crowd's peak. It depends on nothing above it.

use crate::capacity::KeyLoad;

/// Published on-demand prices, us-east-1, checked 2026-11.
pub(super) const USD_PER_MILLION_WRITE_UNITS: f64 = 0.625;
pub(super) const USD_PER_MILLION_READ_UNITS: f64 = 0.125;
pub(super) const USD_PER_MILLION_LAMBDA_REQUESTS: f64 = 0.20;
pub(super) const USD_PER_LAMBDA_GB_SECOND_ARM: f64 = 0.000_013_333_4;
pub(super) const USD_PER_MILLION_HTTP_API_REQUESTS: f64 = 1.00;
pub(super) const USD_PER_MILLION_EVENTBRIDGE_EVENTS: f64 = 1.00;
pub(super) const USD_PER_GB_CLOUDWATCH_LOGS: f64 = 0.50;
pub(super) const USD_PER_10K_CLOUDFRONT_REQUESTS: f64 = 0.0100;
pub(super) const USD_PER_GB_CLOUDFRONT_OUT: f64 = 0.085;

/// A new on-demand table's own throughput (developer guide, "warm
/// throughput").
pub(super) const NEW_TABLE_WRITE_UNITS: f64 = 4_000.0;

/// Assumptions, stated as such where they are used.
/// A DynamoDB (or EventBridge) request's latency on AWS.
pub const AWS_REQUEST_MS: f64 = 10.0;
/// Seat-map views per buyer.
pub(super) const MAP_VIEWS_PER_BUYER: f64 = 10.0;
/// Log bytes per invocation: Lambda's START, END and REPORT lines and one
/// EMF metrics document.
pub(super) const LOG_BYTES_PER_INVOCATION: f64 = 1_000.0;

/// template.yaml, parsed (an empty document if it cannot be read).
pub(super) fn template() -> serde_yaml_ng::Value {
    let text =
        std::fs::read_to_string(local::repo_root().join("template.yaml")).unwrap_or_default();
    serde_yaml_ng::from_str(&text).unwrap_or_default()
}

/// The most time an API function has in AWS: template.yaml's global
/// `Timeout` less the margin `request_deadline` keeps back to reply
/// (docs/OPERATIONS.md: 9.5 s).
pub fn aws_deadline_ms() -> f64 {
    let timeout_s = template()["Globals"]["Function"]["Timeout"]
        .as_f64()
        .unwrap_or(f64::NAN);
    timeout_s * 1000.0 - shared::http::REPLY_MARGIN_MS as f64
}

/// How many of `timing`'s answers took longer than [`aws_deadline_ms`],
/// said beside a crowd's 503s: the emulator's pace, so printed, not judged.
pub(crate) fn past_aws_deadline(timing: &crate::Timing) -> String {
    let deadline = aws_deadline_ms();
    let slow = timing
        .latencies_ms
        .iter()
        .filter(|&&ms| deadline.is_nan() || ms > deadline)
        .count();
    format!(
        "{slow} answered after the {:.1} s an API function has in AWS (the emulator's pace: printed, not judged)",
        deadline / 1000.0
    )
}

/// One function at the crowd's peak.
pub(super) struct FunctionAtPeak {
    pub(super) name: &'static str,
    pub(super) peak_rps: f64,
    pub(super) requests_per_buyer: f64,
    pub(super) round_trips: f64,
    pub(super) emulator_ms: Option<f64>,
}

impl FunctionAtPeak {
    pub(super) fn real_ms(&self) -> f64 {
        self.round_trips * AWS_REQUEST_MS
    }
}

/// A key as the tables show it: an index's with the index's name.
pub(super) fn key_label(k: &KeyLoad) -> String {
    crate::kit::target_label(&k.target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_past_aws_deadline_only_after_the_templates_timeout_less_the_margin() {
        // docs/OPERATIONS.md: 9.5 s on the 10 s functions.
        assert_eq!(aws_deadline_ms(), 9_500.0);
        let timing = crate::Timing {
            latencies_ms: vec![10.0, 9_500.0, 9_500.5, 120_000.0],
            ..crate::Timing::default()
        };
        assert!(past_aws_deadline(&timing).starts_with("2 answered after the 9.5 s"));
    }
}
