//! Rule 2, restated text keeps the file's bytes: new_string is lined up with old_string (a
//! line diff); where it repeats a line or a blank run of old_string unchanged, the file's own
//! text for it is written (its quotes, no-break spaces, trailing whitespace, blank-line count).
//! Only the lines the model changed are written as given, re-indented when the match ignored
//! indentation.

use std::time::{Duration, Instant};

use similar::{Algorithm, DiffOp, capture_diff_slices_deadline};

use super::indent::{Reindent, indentation};
use super::lines::{FileText, ModelText, Token};
use super::place::Place;

/// How long lining up old_string with new_string may take before settling for a coarser
/// alignment (a long replacement then keeps fewer of the file's bytes, never wrong ones).
const ALIGN_TIMEOUT: Duration = Duration::from_millis(100);

/// A replacement for one place.
#[derive(Debug)]
pub(crate) struct Restated {
    pub text: String,
    /// Whether a repeated line kept file text that differs from the model's beyond
    /// indentation (so the model learns what the file really says).
    pub kept_file_text: bool,
}

/// What identifies a token when lining the strings up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key<'a> {
    Line(&'a str),
    Blank(usize),
}

fn keys<'a>(text: &ModelText<'a>) -> Vec<Key<'a>> {
    text.tokens
        .iter()
        .map(|token| match *token {
            Token::Line(i) => Key::Line(text.lines[i]),
            Token::Blank { count, .. } => Key::Blank(count),
        })
        .collect()
}

/// The text to write at `place` (line endings still the model's `\n`).
pub(crate) fn restate(
    file: &FileText,
    place: &Place,
    old: &ModelText,
    new: &ModelText,
) -> Restated {
    let text = file.text;
    let pairs: Vec<(&str, &str)> = old
        .tokens
        .iter()
        .zip(&place.segments)
        .filter_map(|(token, segment)| match *token {
            Token::Line(i) => Some((
                indentation(old.lines[i]),
                indentation(&text[segment.range.clone()]),
            )),
            Token::Blank { .. } => None,
        })
        .collect();
    let reindent = if place.ignored.indentation {
        Reindent::new(&pairs, &new.lines, file.unit())
    } else {
        None
    };
    let mut out = Writer {
        text: String::with_capacity(text.len().min(1 << 16)),
        kept_file_text: false,
    };
    let deadline = Instant::now() + ALIGN_TIMEOUT;
    let ops =
        capture_diff_slices_deadline(Algorithm::Myers, &keys(old), &keys(new), Some(deadline));
    for op in ops {
        match op {
            DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => {
                for k in 0..len {
                    let segment = &place.segments[old_index + k];
                    let ending = if text[segment.range.end..].starts_with("\r\n") {
                        "\r\n"
                    } else {
                        "\n"
                    };
                    out.file_token(
                        &text[segment.range.clone()],
                        segment.lines,
                        ending,
                        new,
                        new.tokens[new_index + k],
                    );
                }
            }
            DiffOp::Delete { .. } => {}
            DiffOp::Insert {
                new_index, new_len, ..
            }
            | DiffOp::Replace {
                new_index, new_len, ..
            } => {
                for token in &new.tokens[new_index..new_index + new_len] {
                    out.model_token(new, *token, reindent.as_ref());
                }
            }
        }
    }
    Restated {
        text: out.text,
        kept_file_text: out.kept_file_text,
    }
}

struct Writer {
    text: String,
    kept_file_text: bool,
}

impl Writer {
    fn line(&mut self, line: &str, ending: Option<&str>) {
        self.text.push_str(line);
        if let Some(ending) = ending {
            self.text.push_str(ending);
        }
    }

    /// The file's text for a token new_string repeats, with the file's own line endings (a
    /// file with mixed endings keeps them). Each line keeps whether new_string ends it, so a
    /// blank run the file lacks leaves the lines around it as they were. `ending` is what
    /// follows `found` in the file when it is a line ending.
    fn file_token(
        &mut self,
        found: &str,
        lines: usize,
        ending: &str,
        new: &ModelText,
        token: Token,
    ) {
        match token {
            Token::Line(i) => {
                let model = new.lines[i];
                self.kept_file_text |= trim_indent(found) != trim_indent(model);
                self.line(found, new.terminated(i).then_some(ending));
            }
            Token::Blank { first, count } => {
                self.kept_file_text |= lines != count;
                if lines == 0 {
                    return;
                }
                // A gap between two lines is followed by a line: every blank line in it ends.
                let last_terminated = count == 0 || new.terminated(first + count - 1);
                for (k, line) in found.split('\n').enumerate() {
                    let last = k + 1 == lines;
                    let (line, own) = match line.strip_suffix('\r') {
                        Some(line) if !last => (line, "\r\n"),
                        _ => (line, if last { ending } else { "\n" }),
                    };
                    self.line(line, (!last || last_terminated).then_some(own));
                }
            }
        }
    }

    /// A token the model changed, as given or re-indented.
    fn model_token(&mut self, new: &ModelText, token: Token, reindent: Option<&Reindent>) {
        let (first, count) = match token {
            Token::Line(i) => (i, 1),
            Token::Blank { first, count } => (first, count),
        };
        for i in first..first + count {
            let line = new.lines[i];
            match reindent {
                Some(reindent) => {
                    let line = reindent.line(line);
                    self.line(&line, new.terminated(i).then_some("\n"));
                }
                None => self.line(line, new.terminated(i).then_some("\n")),
            }
        }
    }
}

fn trim_indent(line: &str) -> &str {
    line.trim_start_matches([' ', '\t'])
}
