//! What the model is told: how old_string was found when an edit lands (so it learns), and
//! why when it is refused (with the places, or the region most like what it sent).

use std::fmt::Write as _;

use super::decode::Decoding;
use super::engine::{Edited, How, Refusal, Rung};
use crate::ToolError;

/// The first line of a successful edit's answer.
pub(super) fn summary(edited: &Edited, display: &str) -> String {
    let count = edited.changes.len();
    let what = if count == 1 {
        "1 occurrence".to_owned()
    } else {
        format!("{count} occurrences")
    };
    let mut out = format!("Edited {display}: replaced {what}");
    let notes = notes(&edited.how);
    if !notes.is_empty() {
        let _ = write!(out, " ({})", notes.join("; "));
    }
    out.push('\n');
    out
}

fn notes(how: &How) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(decoding) = how.decoding {
        notes.push(format!("{} in both strings", decoded(decoding)));
    }
    let ignored = &how.ignored;
    let mut items: Vec<&str> = Vec::new();
    let pairs = [
        (ignored.trailing_whitespace, "trailing whitespace"),
        (ignored.indentation, "indentation"),
        (ignored.look_alikes.quotes, "typographic quotes"),
        (ignored.look_alikes.dashes, "typographic dashes"),
        (ignored.look_alikes.spaces, "no-break spaces"),
        (ignored.blank_lines, "the number of blank lines"),
    ];
    items.extend(pairs.iter().filter(|(on, _)| *on).map(|(_, item)| *item));
    match (items.is_empty(), ignored.line_endings) {
        (true, true) => notes.push("old_string matched with line endings normalised".to_owned()),
        (false, line_endings) => {
            if line_endings {
                items.insert(0, "line endings");
            }
            notes.push(format!("old_string matched ignoring {}", join(&items)));
        }
        (true, false) if how.rung != Rung::Exact && how.cut_line.is_none() => {
            notes.push(format!("old_string matched {}", how.rung.describe()));
        }
        (true, false) => {}
    }
    if let Some(line) = how.cut_line {
        notes.push(format!(
            "its last line matched the start of line {line}, whose rest was kept"
        ));
    }
    if ignored.indentation {
        notes.push("new_string was re-indented to the file's".to_owned());
    }
    if how.kept_file_text {
        notes.push("lines you repeated unchanged kept the file's own text".to_owned());
    }
    notes
}

/// "a, b and c".
fn join(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

fn decoded(decoding: Decoding) -> &'static str {
    match decoding {
        Decoding::LineNumbers => "read_file line numbers were removed",
        Decoding::DiffMarkers => "diff markers (+, -, space, @@) were removed",
        Decoding::JsonEscapes => "one level of JSON escaping (\\n, \\t, \\\") was undone",
    }
}

fn undoing(decoding: Decoding) -> &'static str {
    match decoding {
        Decoding::LineNumbers => "read_file line numbers are removed",
        Decoding::DiffMarkers => "diff markers are removed",
        Decoding::JsonEscapes => "one level of JSON escaping is undone",
    }
}

/// The refusal as the model sees it.
pub(super) fn refusal(refusal: Refusal, display: &str) -> ToolError {
    let message = match refusal {
        Refusal::Identical => {
            "old_string and new_string are the same; there is nothing to change.".to_owned()
        }
        Refusal::Unchanged { how } => format!(
            "Nothing to change: {display} already reads as new_string says ({}). The file was \
             left as it is.",
            notes(&how).join("; ")
        ),
        Refusal::Ambiguous {
            rung,
            decoding,
            count,
            lines,
        } => {
            let how = match rung {
                Rung::Exact => String::new(),
                _ => format!(" {}", rung.describe()),
            };
            let decoded = decoding
                .map(|d| format!(" (after {})", after(d)))
                .unwrap_or_default();
            let more = if count > lines.len() { ", ..." } else { "" };
            let lines: Vec<String> = lines.iter().map(ToString::to_string).collect();
            format!(
                "old_string matches {count} places in {display}{how}{decoded}, starting on lines {}{more}. \
                 Include more surrounding lines so it matches exactly one place, or set replace_all \
                 to true to change every occurrence.",
                lines.join(", ")
            )
        }
        Refusal::Inconsistent {
            decoding,
            problem,
            line,
        } => format!(
            "old_string matches {display} at line {line} once {}, but {problem}. Nothing was \
             changed; send both strings as plain text, exactly as the file has it.",
            undoing(decoding)
        ),
        Refusal::NotFound {
            closest,
            nested_differently,
        } => {
            let mut message = format!(
                "old_string was not found in {display}, not even with line endings normalised, \
                 whitespace at line ends, indentation, typographic quotes and dashes or blank \
                 lines ignored, or read_file line numbers, diff markers or JSON escaping removed."
            );
            if let Some((first, last)) = nested_differently {
                let _ = write!(
                    message,
                    " Lines {first}-{last} have old_string's text but nest differently: a line \
                     that is inside a block in one is outside it in the other, and rein never \
                     moves a line in or out of a block. Copy those lines with their indentation."
                );
            }
            match closest {
                Some(region) => {
                    let last = region.first_line + region.lines.len() - 1;
                    let width = last.to_string().len();
                    let _ = writeln!(
                        message,
                        " The most similar part is lines {}-{last}:",
                        region.first_line
                    );
                    for (i, line) in region.lines.iter().enumerate() {
                        let _ = writeln!(message, "{:>width$}\t{line}", region.first_line + i);
                    }
                    message.push_str("Copy the text exactly as it is in the file (without the line numbers) and retry.");
                }
                None => message.push_str(
                    " Nothing in the file resembles it; read the file again with read_file.",
                ),
            }
            message
        }
    };
    ToolError::Model(message)
}

fn after(decoding: Decoding) -> &'static str {
    match decoding {
        Decoding::LineNumbers => "removing read_file line numbers",
        Decoding::DiffMarkers => "removing diff markers",
        Decoding::JsonEscapes => "undoing one level of JSON escaping",
    }
}
