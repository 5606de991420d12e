//! How a run looks: progress on stderr, the answer on stdout, or JSON for programs.

mod diff;
mod result;
mod safe;
mod stream_json;
mod style;
mod text;

use std::io::Write;

pub(crate) use safe::neutralize;
pub(crate) use stream_json::{StreamJson, session_line};
pub(crate) use style::Style;
pub(crate) use text::TextProgress;

/// Writes a warning to stderr.
pub(crate) fn warning(message: &str) {
    let style = Style::for_stderr();
    let _ = writeln!(
        std::io::stderr().lock(),
        "{}",
        style.warn(&format!("rein: warning: {}", neutralize(message)))
    );
}

/// Prints an error for the person, on stderr. Server text inside it is made harmless.
pub(crate) fn error(message: &str) {
    let style = Style::for_stderr();
    let _ = writeln!(
        std::io::stderr().lock(),
        "{}",
        style.error(&format!("rein: {}", neutralize(message)))
    );
}

/// Prints a plain message on stderr (usage text, notices), made harmless.
pub(crate) fn notice(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{}", neutralize(message));
}

/// Prints the model's final answer on stdout, made harmless to show.
pub(crate) fn answer(text: &str) {
    stdout_line(&neutralize(text));
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
