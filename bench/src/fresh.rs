//! An on-sale's first seconds (issue 18): Lambda adds up to 1,000
//! instances per function every 10 seconds, and each fresh instance reads
//! what it needs of the event once. One request of each function on a
//! fresh instance, recorded and priced, projects the load per key.

use super::demand::GA_SECTION;
use super::pricing::price;
use crate::capacity::{CapacityRecorder, Target};
use crate::kit::{reply, BenchOrder};
use shared::App;
use std::collections::BTreeMap;

/// New instances per function per second in an on-sale's first seconds.
pub const FRESH_INSTANCES_PER_SECOND: f64 = 100.0;

/// One request of each function on a fresh instance, recorded; projected
/// at [`FRESH_INSTANCES_PER_SECOND`] per function. The order's own key is
/// left out (each buyer's is another), and a plan's copies are counted as
/// one key carrying an even share (each instance picks one at random).
pub(super) async fn fresh_instances(
    app: &App,
    event: &str,
    order: &BenchOrder,
    recorder: &CapacityRecorder,
) -> Result<(BTreeMap<&'static str, f64>, Option<(String, f64)>), String> {
    let mut fresh = BTreeMap::new();
    let o = &order.id;
    let firsts: [(&'static str, &str, String, String); 9] = [
        (
            "create-order",
            "POST",
            format!("/events/{event}/orders"),
            "{}".into(),
        ),
        (
            "get-seat",
            "POST",
            format!("/orders/{o}/seats/S1-1-1"),
            String::new(),
        ),
        (
            "best-available",
            "POST",
            format!("/orders/{o}/best-available"),
            r#"{"quantity":1}"#.into(),
        ),
        (
            "hold-ga",
            "PUT",
            format!("/orders/{o}/ga/{GA_SECTION}"),
            r#"{"quantity":1}"#.into(),
        ),
        (
            "extend-order",
            "POST",
            format!("/orders/{o}/extend"),
            "{}".into(),
        ),
        ("get-order", "GET", format!("/orders/{o}"), String::new()),
        (
            "get-event",
            "GET",
            format!("/events/{event}"),
            String::new(),
        ),
        (
            "list-seats",
            "GET",
            format!("/events/{event}/seats"),
            String::new(),
        ),
        (
            "availability",
            "GET",
            format!("/events/{event}/availability"),
            String::new(),
        ),
    ];
    let mut per_key: BTreeMap<String, f64> = BTreeMap::new();
    for (function, method, path, body) in firsts {
        recorder.take();
        recorder.set_recording(true);
        reply(&app.new_process(), method, &path, Some(&order.token), &body).await;
        recorder.set_recording(false);
        let priced = price(app, &recorder.take()).await?;
        let mut units = 0.0;
        for c in priced.iter().filter(|c| c.target.index.is_none()) {
            if c.target.pk.starts_with("ORDER#") {
                continue;
            }
            units += c.read_units;
            let (key, share) = plan_copies(&c.target);
            *per_key.entry(key).or_default() += c.read_units * share * FRESH_INSTANCES_PER_SECOND;
        }
        fresh.insert(function, units);
    }
    let hottest = per_key.into_iter().max_by(|a, b| a.1.total_cmp(&b.1));
    Ok((fresh, hottest))
}

/// A plan copy's key as the one key all copies stand for, with the share
/// of reads each copy takes; any other key as it is.
fn plan_copies(target: &Target) -> (String, f64) {
    match target.pk.strip_prefix(shared::store::PLAN_PK_PREFIX) {
        Some(rest) => {
            let event = rest.split('#').next().unwrap_or(rest);
            let copies = f64::from(shared::store::PLAN_REPLICAS);
            (
                format!(
                    "{}{event}#(each of {copies})",
                    shared::store::PLAN_PK_PREFIX
                ),
                1.0 / copies,
            )
        }
        None => (target.pk.clone(), 1.0),
    }
}
