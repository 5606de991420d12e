//! Progress while a suite runs: on a terminal, one line rewritten in place; otherwise a line
//! per finished attempt, so a CI log shows each as it ends.

use std::io::{IsTerminal, Write};

use super::record::Record;
use crate::render::{self, Style};

/// Counts finished attempts and shows them.
#[derive(Debug)]
pub(crate) struct Progress {
    total: usize,
    finished: usize,
    passed: usize,
    cost: f64,
    terminal: bool,
    style: Style,
}

impl Progress {
    /// `total` attempts to go.
    pub(crate) fn new(total: usize) -> Progress {
        Progress {
            total,
            finished: 0,
            passed: 0,
            cost: 0.0,
            terminal: std::io::stderr().is_terminal(),
            style: Style::for_stderr(),
        }
    }

    /// One more attempt ended.
    pub(crate) fn finished(&mut self, record: &Record) {
        self.finished += 1;
        self.passed += usize::from(record.passed);
        self.cost += record.cost_usd.unwrap_or(0.0);
        let mark = if record.passed {
            self.style.added("✓")
        } else {
            self.style.error("✗")
        };
        let line = format!(
            "{mark} {} #{} · {} · {:.1} s",
            render::neutralize(&record.task),
            record.attempt,
            record.reason.as_str(),
            record.duration_ms as f64 / 1000.0
        );
        let mut err = std::io::stderr().lock();
        if self.terminal {
            let _ = write!(err, "\r\x1b[2K{line}\n{}", self.bar());
        } else {
            let _ = writeln!(err, "{line}");
        }
        let _ = err.flush();
    }

    /// `[#####-----] 5/10 · 4 passed · $0.0123`.
    fn bar(&self) -> String {
        const WIDTH: usize = 20;
        let filled = (self.finished * WIDTH)
            .checked_div(self.total)
            .unwrap_or(WIDTH);
        format!(
            "[{}{}] {}/{} · {} passed · ${:.4}",
            "#".repeat(filled),
            "-".repeat(WIDTH - filled),
            self.finished,
            self.total,
            self.passed,
            self.cost
        )
    }

    /// Takes the bar away before the summary.
    pub(crate) fn clear(&self) {
        if self.terminal {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
        }
    }
}
