//! Ctrl+O at the prompt: the last command's whole output in a pager-like view, on the
//! terminal's alternate screen (the scrollback is left as it was). Lines are wrapped to the
//! window, never cut; ↑/↓ (j/k), PgUp/PgDn (b/space), g/G (Home/End) move; q, Esc, Ctrl+O
//! or Ctrl+C close it.

use std::io::{Read, Write};

use rustix::termios;

use crate::render::{LastOutput, Style, fit, neutralize, wrap_words};

/// Rows assumed when the terminal does not say.
const DEFAULT_ROWS: usize = 24;

/// What a key does in the view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Move {
    Down(usize),
    Up(usize),
    PageDown,
    PageUp,
    Top,
    Bottom,
    Close,
    Nothing,
}

/// Shows `last` until the person closes the view, then puts the cursor back on the row of
/// the prompt Ctrl+O ended, for the prompt to come back there. The terminal is in rein's
/// keys mode between inputs, so keys are read straight from stdin.
pub(crate) fn show(style: Style, last: Option<&LastOutput>, width: usize) {
    let mut stdout = std::io::stdout();
    let Some(last) = last else {
        let _ = writeln!(stdout, "{}", style.dim("(no command output to show yet)"));
        return;
    };
    view(&mut stdout, style, last, width);
    let _ = stdout.write_all(b"\x1b[1A\r\x1b[J");
    let _ = stdout.flush();
}

fn view(stdout: &mut std::io::Stdout, style: Style, last: &LastOutput, width: usize) {
    let text = match &last.saved_to {
        Some(path) => std::fs::read_to_string(path)
            .unwrap_or_else(|e| format!("(cannot read the saved output {path}: {e})")),
        None => last.text.clone(),
    };
    let lines = laid_out(&text, width);
    let mut stdin = std::io::stdin();
    let _ = write!(stdout, "\x1b[?1049h\x1b[?25l");
    let mut top = 0;
    let mut buf = [0_u8; 64];
    loop {
        let height = rows().saturating_sub(1).max(1);
        let last_top = lines.len().saturating_sub(height);
        top = top.min(last_top);
        draw(stdout, style, &last.command, &lines, top, height, width);
        let Ok(n) = stdin.read(&mut buf) else { break };
        if n == 0 {
            break;
        }
        top = match key(&buf[..n]) {
            Move::Down(k) => top + k,
            Move::Up(k) => top.saturating_sub(k),
            Move::PageDown => top + height,
            Move::PageUp => top.saturating_sub(height),
            Move::Top => 0,
            Move::Bottom => last_top,
            Move::Close => break,
            Move::Nothing => top,
        };
    }
    let _ = write!(stdout, "\x1b[?25h\x1b[?1049l");
    let _ = stdout.flush();
}

/// The output's lines, made safe and wrapped to `width` columns.
fn laid_out(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for line in text.lines() {
        let safe = neutralize(&line.replace('\t', "    ")).into_owned();
        lines.extend(
            wrap_words(&safe, width.max(10))
                .split('\n')
                .map(str::to_owned),
        );
    }
    if lines.is_empty() {
        lines.push("(no output)".to_owned());
    }
    lines
}

fn draw(
    out: &mut impl Write,
    s: Style,
    command: &str,
    lines: &[String],
    top: usize,
    height: usize,
    width: usize,
) {
    let mut frame = String::from("\x1b[H\x1b[2J");
    for line in lines.iter().skip(top).take(height) {
        frame.push_str(line);
        frame.push_str("\r\n");
    }
    let end = (top + height).min(lines.len());
    // The position and keys first: a long command is what gets cut.
    let status = format!(
        "lines {}-{end} of {} · ↑↓ PgUp PgDn g G · q to close · {}",
        top + 1,
        lines.len(),
        neutralize(command.lines().next().unwrap_or_default()),
    );
    frame.push_str(&format!(
        "\x1b[{};1H{}",
        height + 1,
        s.dim(&fit(&status, width.saturating_sub(1)))
    ));
    let _ = out.write_all(frame.as_bytes());
    let _ = out.flush();
}

/// What the bytes of one key do.
fn key(bytes: &[u8]) -> Move {
    match bytes {
        b"q" | b"Q" | b"\x1b" | b"\x0f" | b"\x03" => Move::Close,
        b"j" | b"\r" | b"\n" | b"\x1b[B" | b"\x1bOB" => Move::Down(1),
        b"k" | b"\x1b[A" | b"\x1bOA" => Move::Up(1),
        b" " | b"f" | b"\x1b[6~" => Move::PageDown,
        b"b" | b"\x1b[5~" => Move::PageUp,
        b"g" | b"<" | b"\x1b[H" | b"\x1b[1~" | b"\x1bOH" => Move::Top,
        b"G" | b">" | b"\x1b[F" | b"\x1b[4~" | b"\x1bOF" => Move::Bottom,
        _ => Move::Nothing,
    }
}

/// The terminal's height in rows.
fn rows() -> usize {
    match termios::tcgetwinsize(std::io::stdout()) {
        Ok(size) if size.ws_row > 0 => usize::from(size.ws_row),
        _ => DEFAULT_ROWS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_wrap_and_escapes_are_made_safe() {
        let lines = laid_out(&format!("{}\n\x1b[31mred\n", "x".repeat(25)), 10);
        assert_eq!(lines[..3], ["xxxxxxxxxx", "xxxxxxxxxx", "xxxxx"]);
        assert!(!lines[3].contains('\x1b'), "{:?}", lines[3]);
    }

    #[test]
    fn keys_move_and_close() {
        assert_eq!(key(b"q"), Move::Close);
        assert_eq!(key(b"\x0f"), Move::Close);
        assert_eq!(key(b"\x1b[B"), Move::Down(1));
        assert_eq!(key(b"\x1b[6~"), Move::PageDown);
        assert_eq!(key(b"G"), Move::Bottom);
        assert_eq!(key(b"z"), Move::Nothing);
    }
}
