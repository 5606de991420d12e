//! How a run looks: progress on stderr, the answer on stdout, or JSON for programs.

mod stream_json;
mod style;
mod text;

use std::io::Write;

pub(crate) use stream_json::{StreamJson, session_line};
pub(crate) use style::Style;
pub(crate) use text::TextProgress;

/// Prints an error for the person, on stderr.
pub(crate) fn error(message: &str) {
    let style = Style::for_stderr();
    let _ = writeln!(
        std::io::stderr().lock(),
        "{}",
        style.error(&format!("rein: {message}"))
    );
}

/// Prints a plain message on stderr (usage text, notices).
pub(crate) fn notice(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{message}");
}

/// Writes `text` to stdout, followed by a newline unless it ends with one.
pub(crate) fn stdout_line(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = out.write_all(b"\n");
    }
    let _ = out.flush();
}
