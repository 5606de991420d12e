//! What a run adds up to: pass@1 and pass@k, cost, tokens and time, per task and in all; as
//! a terminal table, a Markdown report, and the difference between two runs.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::record::Record;

/// One task's attempts, added up.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct TaskLine {
    pub(crate) attempts: u32,
    pub(crate) passed: u32,
    /// Each reason that was not a pass, with how often.
    pub(crate) failures: BTreeMap<&'static str, u32>,
    pub(crate) rounds: u64,
    pub(crate) tokens: u64,
    pub(crate) cost_usd: Option<f64>,
    pub(crate) duration_ms: u64,
    pub(crate) retried: u32,
}

/// A whole run, added up.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Summary {
    pub(crate) tasks: BTreeMap<String, TaskLine>,
    /// The k of pass@k: the most attempts any task had.
    pub(crate) k: u32,
}

impl Summary {
    /// Adds up `records`.
    pub(crate) fn of(records: &[Record]) -> Summary {
        let mut tasks: BTreeMap<String, TaskLine> = BTreeMap::new();
        for record in records {
            let line = tasks.entry(record.task.clone()).or_default();
            line.attempts += 1;
            if record.passed {
                line.passed += 1;
            } else {
                *line.failures.entry(record.reason.as_str()).or_default() += 1;
            }
            line.rounds += record.rounds.unwrap_or(0);
            line.tokens += record.tokens().unwrap_or(0);
            if let Some(cost) = record.cost_usd {
                line.cost_usd = Some(line.cost_usd.unwrap_or(0.0) + cost);
            }
            line.duration_ms += record.duration_ms;
            line.retried += u32::from(record.retried);
        }
        let k = tasks.values().map(|t| t.attempts).max().unwrap_or(0);
        Summary { tasks, k }
    }

    /// The mean over tasks of the chance that one attempt passes.
    pub(crate) fn pass_at_1(&self) -> f64 {
        self.mean(|line| pass_at_k(line.attempts, line.passed, 1))
    }

    /// The mean over tasks of the unbiased pass@k estimate (Chen et al., 2021).
    pub(crate) fn pass_at_k(&self) -> f64 {
        self.mean(|line| pass_at_k(line.attempts, line.passed, self.k))
    }

    fn mean(&self, of: impl Fn(&TaskLine) -> f64) -> f64 {
        if self.tasks.is_empty() {
            return 0.0;
        }
        self.tasks.values().map(of).sum::<f64>() / self.tasks.len() as f64
    }

    fn total_cost(&self) -> Option<f64> {
        self.tasks
            .values()
            .filter_map(|t| t.cost_usd)
            .fold(None, |sum, c| Some(sum.unwrap_or(0.0) + c))
    }

    /// The table for the terminal.
    pub(crate) fn table(&self) -> String {
        let width = self
            .tasks
            .keys()
            .map(|id| id.chars().count())
            .max()
            .unwrap_or(4)
            .max(4);
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{:width$}  {:>7}  {:>6}  {:>9}  {:>10}  {:>8}  result",
            "task", "passed", "rounds", "tokens", "cost", "time"
        );
        for (id, line) in &self.tasks {
            let _ = writeln!(
                out,
                "{id:width$}  {:>7}  {:>6}  {:>9}  {:>10}  {:>8}  {}",
                format!("{}/{}", line.passed, line.attempts),
                line.rounds,
                line.tokens,
                money(line.cost_usd),
                seconds(line.duration_ms),
                outcome(line)
            );
        }
        let _ = write!(out, "{}", self.totals());
        out
    }

    /// The closing lines: pass rates and totals.
    fn totals(&self) -> String {
        let attempts: u32 = self.tasks.values().map(|t| t.attempts).sum();
        let passed: u32 = self.tasks.values().map(|t| t.passed).sum();
        let tokens: u64 = self.tasks.values().map(|t| t.tokens).sum();
        let time: u64 = self.tasks.values().map(|t| t.duration_ms).sum();
        let mut out = format!(
            "\n{} tasks, {attempts} attempts, {passed} passed · pass@1 {:.1}%",
            self.tasks.len(),
            self.pass_at_1() * 100.0
        );
        if self.k > 1 {
            let _ = write!(out, " · pass@{} {:.1}%", self.k, self.pass_at_k() * 100.0);
        }
        let _ = writeln!(
            out,
            " · {} · {tokens} tokens · {} of agent time",
            money(self.total_cost()),
            seconds(time)
        );
        out
    }

    /// A Markdown report, for CI.
    pub(crate) fn markdown(&self, title: &str) -> String {
        let mut out = format!("# {title}\n\n");
        let _ = writeln!(
            out,
            "| task | passed | rounds | tokens | cost | time | result |\n|---|---:|---:|---:|---:|---:|---|"
        );
        for (id, line) in &self.tasks {
            let _ = writeln!(
                out,
                "| {} | {}/{} | {} | {} | {} | {} | {} |",
                id.replace('|', "\\|"),
                line.passed,
                line.attempts,
                line.rounds,
                line.tokens,
                money(line.cost_usd),
                seconds(line.duration_ms),
                outcome(line)
            );
        }
        let _ = write!(out, "\n{}", self.totals().trim_start());
        out
    }
}

/// The unbiased estimate of passing at least once in `k` draws from `n` attempts of which
/// `c` passed: 1 - C(n-c, k) / C(n, k), computed as a product to stay exact enough.
pub(crate) fn pass_at_k(n: u32, c: u32, k: u32) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let k = k.min(n);
    if n - c < k {
        return 1.0;
    }
    let mut none = 1.0;
    for i in (n - c + 1)..=n {
        none *= 1.0 - f64::from(k) / f64::from(i);
    }
    1.0 - none
}

/// A task's pass rate in a run, with its line.
fn rate<'a>(summary: &'a Summary, id: &str) -> Option<(f64, &'a TaskLine)> {
    summary
        .tasks
        .get(id)
        .map(|t| (f64::from(t.passed) / f64::from(t.attempts.max(1)), t))
}

fn outcome(line: &TaskLine) -> String {
    let mut parts: Vec<String> = line
        .failures
        .iter()
        .map(|(reason, n)| {
            if line.attempts > 1 {
                format!("{reason} ×{n}")
            } else {
                (*reason).to_owned()
            }
        })
        .collect();
    if parts.is_empty() {
        parts.push("passed".to_owned());
    }
    if line.retried > 0 {
        parts.push(format!("retried ×{}", line.retried));
    }
    parts.join(", ")
}

fn money(cost: Option<f64>) -> String {
    cost.map_or_else(|| "unknown".to_owned(), |c| format!("${c:.4}"))
}

fn seconds(ms: u64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

/// Per-task differences between two runs, `a` then `b`.
pub(crate) fn compare(a: &Summary, b: &Summary, a_name: &str, b_name: &str) -> String {
    let ids: std::collections::BTreeSet<&String> = a.tasks.keys().chain(b.tasks.keys()).collect();
    let width = ids
        .iter()
        .map(|id| id.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    let mut out = format!("A: {a_name}\nB: {b_name}\n\n");
    let _ = writeln!(
        out,
        "{:width$}  {:>7}  {:>7}  {:>10}  {:>10}  change",
        "task", "A", "B", "A cost", "B cost"
    );
    let (mut fixed, mut broke) = (0, 0);
    for id in ids {
        let (ra, rb) = (rate(a, id), rate(b, id));
        let cell = |r: Option<(f64, &TaskLine)>| {
            r.map_or_else(
                || "—".to_owned(),
                |(_, t)| format!("{}/{}", t.passed, t.attempts),
            )
        };
        let change = match (ra, rb) {
            (Some((x, _)), Some((y, _))) if y > x => {
                fixed += 1;
                "better"
            }
            (Some((x, _)), Some((y, _))) if y < x => {
                broke += 1;
                "worse"
            }
            (Some(_), Some(_)) => "",
            (None, Some(_)) => "only in B",
            (Some(_), None) => "only in A",
            (None, None) => "",
        };
        let _ = writeln!(
            out,
            "{id:width$}  {:>7}  {:>7}  {:>10}  {:>10}  {change}",
            cell(ra),
            cell(rb),
            money(ra.and_then(|(_, t)| t.cost_usd)),
            money(rb.and_then(|(_, t)| t.cost_usd)),
        );
    }
    let _ = writeln!(
        out,
        "\npass@1: A {:.1}% · B {:.1}% · {fixed} better, {broke} worse",
        a.pass_at_1() * 100.0,
        b.pass_at_1() * 100.0
    );
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::record::Reason;
    use super::*;

    fn record(task: &str, attempt: u32, reason: Reason) -> Record {
        let mut r = Record::new(task, attempt, Path::new("/w"), 0);
        r.reason = reason;
        r.passed = reason == Reason::Passed;
        r
    }

    #[test]
    fn pass_at_k_is_the_unbiased_estimate() {
        // n=3, c=1: pass@1 = 1/3, pass@3 = 1.
        assert!((pass_at_k(3, 1, 1) - 1.0 / 3.0).abs() < 1e-12);
        assert!((pass_at_k(3, 1, 3) - 1.0).abs() < 1e-12);
        // n=3, c=1, k=2: 1 - C(2,2)/C(3,2) = 1 - 1/3.
        assert!((pass_at_k(3, 1, 2) - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(pass_at_k(3, 0, 3), 0.0);
        assert_eq!(pass_at_k(0, 0, 1), 0.0);
    }

    #[test]
    fn a_summary_counts_each_task_and_its_failures() {
        let records = [
            record("a", 1, Reason::Passed),
            record("a", 2, Reason::ValidateFailed),
            record("a", 3, Reason::Passed),
            record("b", 1, Reason::Timeout),
            record("b", 2, Reason::Timeout),
            record("b", 3, Reason::AgentError),
        ];
        let summary = Summary::of(&records);
        assert_eq!(summary.k, 3);
        assert!((summary.pass_at_1() - (2.0 / 3.0) / 2.0).abs() < 1e-12);
        assert!((summary.pass_at_k() - 0.5).abs() < 1e-12);
        let table = summary.table();
        assert!(
            table.contains("timeout ×2, agent error ×1")
                || table.contains("agent error ×1, timeout ×2"),
            "{table}"
        );
        assert!(table.contains("pass@3 50.0%"), "{table}");
        let md = summary.markdown("smoke");
        assert!(md.contains("| a | 2/3 |"), "{md}");
    }

    #[test]
    fn compare_names_what_got_better_and_worse() {
        let a = Summary::of(&[
            record("x", 1, Reason::Passed),
            record("y", 1, Reason::Passed),
        ]);
        let b = Summary::of(&[
            record("x", 1, Reason::ValidateFailed),
            record("y", 1, Reason::Passed),
        ]);
        let out = compare(&a, &b, "a.jsonl", "b.jsonl");
        assert!(out.contains("worse"), "{out}");
        assert!(out.contains("0 better, 1 worse"), "{out}");
    }
}
