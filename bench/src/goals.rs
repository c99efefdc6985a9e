//! The bench's targets. Every figure the docs hold to a bound is a [`Goal`]:
//! its value, the bound and where the bound comes from. The sentence that
//! publishes the figure prints the goal's own verdict, and the run's exit
//! status comes from the same goals: `make bench` fails when one is
//! missed; `make bench-smoke` (CI's) prints them and fails only on a wrong
//! correctness count, so a noisy machine never blocks a landing.

use std::fmt;

/// Figures are sums of per-request fractions: a bound is met within this.
const ROUNDING: f64 = 1e-6;

/// Which side of its bound a figure must stay on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    AtMost(f64),
    Below(f64),
    AtLeast(f64),
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bound::AtMost(b) => write!(f, "≤ {}", plain(*b)),
            Bound::Below(b) => write!(f, "< {}", plain(*b)),
            Bound::AtLeast(b) => write!(f, "≥ {}", plain(*b)),
        }
    }
}

/// A figure held to a bound.
#[derive(Debug, Clone, PartialEq)]
pub struct Goal {
    /// What the figure is, as the docs name it.
    pub figure: String,
    /// The run's figure; NaN when the run never saw it (always missed).
    pub value: f64,
    pub bound: Bound,
    /// Where the bound comes from: a contract line or a named constant.
    pub source: String,
}

impl Goal {
    pub fn new(
        figure: impl Into<String>,
        value: f64,
        bound: Bound,
        source: impl Into<String>,
    ) -> Self {
        Goal {
            figure: figure.into(),
            value,
            bound,
            source: source.into(),
        }
    }

    /// A crowd's `503` answers: none where every buyer must get a seat or
    /// a clear no.
    pub fn no_503(what: &str, answered_503: usize) -> Self {
        Goal::new(
            format!("{what}: answers 503"),
            answered_503 as f64,
            Bound::AtMost(0.0),
            "issue 44: every buyer an answer",
        )
    }

    /// A figure the run may not have seen at all (a lag that never ended).
    pub fn seen(
        figure: impl Into<String>,
        value: Option<f64>,
        bound: Bound,
        source: impl Into<String>,
    ) -> Self {
        Goal::new(figure, value.unwrap_or(f64::NAN), bound, source)
    }

    /// Whether the figure keeps its bound (a NaN never does).
    pub fn met(&self) -> bool {
        match self.bound {
            Bound::AtMost(b) => self.value <= b + ROUNDING,
            Bound::Below(b) => self.value < b,
            Bound::AtLeast(b) => self.value >= b - ROUNDING,
        }
    }

    pub fn verdict(&self) -> &'static str {
        if self.met() {
            "met"
        } else {
            "**missed**"
        }
    }

    /// The figure as the table prints it ("never" for one not seen).
    pub fn value_text(&self) -> String {
        if self.value.is_nan() {
            "never".to_owned()
        } else {
            plain(self.value)
        }
    }

    /// "target ≤ 2: met", for the figure's own sentence.
    pub fn judged(&self) -> String {
        format!("target {}: {}", self.bound, self.verdict())
    }
}

/// The goals a run missed.
pub fn missed<'a>(goals: impl IntoIterator<Item = &'a Goal>) -> Vec<&'a Goal> {
    goals.into_iter().filter(|g| !g.met()).collect()
}

/// The targets table of docs/BENCHMARKS.md: every goal of the run.
pub fn markdown<'a>(goals: impl IntoIterator<Item = &'a Goal>) -> String {
    use std::fmt::Write as _;
    let mut out = String::from(
        "## Targets\n\nEvery figure this run holds to a bound, with the bound's source. \
         `make bench` exits non-zero when one is missed; `make bench-smoke` judges correctness only.\n\n\
         | figure | value | target | verdict | source |\n|---|---:|---|---|---|\n",
    );
    for g in goals {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            g.figure,
            g.value_text(),
            g.bound,
            g.verdict(),
            g.source
        );
    }
    out.push('\n');
    out
}

/// A number as a person writes it: whole numbers and anything from 100 up
/// rounded, with thousands commas; smaller ones to two decimals.
fn plain(v: f64) -> String {
    if v.is_finite() && (v.fract() == 0.0 || v.abs() >= 100.0) && v.abs() < 1e15 {
        let digits = format!("{}", v.abs().round() as u64);
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        if v < 0.0 {
            out.insert(0, '-');
        }
        out
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_bound_judges_its_side_and_a_figure_never_seen_is_missed() {
        let cases = [
            (Bound::AtMost(2.0), 2.0, true),
            (Bound::AtMost(2.0), 2.0 + 1e-9, true),
            (Bound::AtMost(2.0), 2.01, false),
            (Bound::Below(1_000.0), 999.9, true),
            (Bound::Below(1_000.0), 1_000.0, false),
            (Bound::AtLeast(0.9), 0.9, true),
            (Bound::AtLeast(0.9), 0.89, false),
            (Bound::AtMost(5_000.0), f64::NAN, false),
            (Bound::AtLeast(1.0), f64::NAN, false),
        ];
        for (bound, value, met) in cases {
            let goal = Goal::new("figure", value, bound, "test");
            assert_eq!(goal.met(), met, "{value} against {bound}");
        }
    }

    #[test]
    fn the_table_and_the_sentence_say_missed_where_the_exit_status_does() {
        let goals = [
            Goal::new("a", 1.0, Bound::AtMost(2.0), "s"),
            Goal::seen("lag", None, Bound::AtMost(5_000.0), "API.md"),
        ];
        let names: Vec<&str> = missed(&goals).iter().map(|g| g.figure.as_str()).collect();
        assert_eq!(names, ["lag"]);
        assert_eq!(goals[0].judged(), "target ≤ 2: met");
        assert_eq!(goals[1].judged(), "target ≤ 5,000: **missed**");
        let table = markdown(&goals);
        assert!(table.contains("| lag | never | ≤ 5,000 | **missed** | API.md |"));
        assert!(table.contains("| a | 1 | ≤ 2 | met | s |"));
        let big = Goal::new("b", 1_818.18, Bound::AtLeast(45_417_376.0), "s");
        assert_eq!(big.value_text(), "1,818");
        assert_eq!(big.judged(), "target ≥ 45,417,376: **missed**");
        assert_eq!(
            Goal::new("c", 0.555, Bound::AtMost(1.0), "s").value_text(),
            "0.56"
        );
    }
}
