//! How a run looks: progress on stderr, the answer on stdout, or JSON for programs.

mod diff;
mod highlight;
mod live;
mod markdown;
mod result;
mod safe;
mod stats;
mod stream_json;
mod style;
mod text;
mod width;

use std::io::Write;

pub(crate) use diff::full_diff;
pub(crate) use highlight::warm_up as warm_up_highlighting;
pub(crate) use live::{LastOutput, Live, LiveOptions, SPINNER_TICK};
pub(crate) use safe::neutralize;
pub(crate) use stats::{TurnFigures, closing_line, dollars, tokens, turn_line};
pub(crate) use stream_json::{StreamJson, session_line};
pub(crate) use style::{ColorChoice, Style, set_color_choice};
pub(crate) use text::TextProgress;
pub(crate) use width::{fit, wrap_parts, wrap_words};

/// The width of the terminal on stderr (80 when it does not say).
pub(crate) fn terminal_width() -> usize {
    match rustix::termios::tcgetwinsize(std::io::stderr()) {
        Ok(size) if size.ws_col > 0 => usize::from(size.ws_col),
        _ => 80,
    }
}

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
