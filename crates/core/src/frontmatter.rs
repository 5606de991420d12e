//! Markdown files with YAML front matter, as Claude Code writes agents and skills:
//!
//! ```text
//! ---
//! name: reviewer
//! description: Reviews a diff
//! tools: Read, Grep
//! ---
//! The body.
//! ```
//!
//! Only the YAML these files use is read: `key: value` (plain, single- or double-quoted),
//! block scalars (`|`, `>`), and lists (`[a, b]` or `- item` lines). Anything else is an
//! error naming the line, so a bad file is skipped with a warning, never misread.

use std::collections::BTreeMap;

/// A value of the front matter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A string (numbers and booleans are read as their text).
    Text(String),
    /// A list of strings.
    List(Vec<String>),
}

impl Value {
    /// The items: a list's, or a text's comma-separated parts (`Read, Grep`).
    pub fn items(&self) -> Vec<String> {
        match self {
            Value::List(items) => items.clone(),
            Value::Text(text) => text
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
        }
    }

    /// The text, or a list's items joined with `, `.
    pub fn text(&self) -> String {
        match self {
            Value::Text(text) => text.clone(),
            Value::List(items) => items.join(", "),
        }
    }
}

/// A parsed file: its front matter's fields and the body after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// The fields, by key.
    pub fields: BTreeMap<String, Value>,
    /// What follows the front matter, trimmed.
    pub body: String,
}

/// Why a file's front matter could not be read: what is wrong (no front matter, a line it
/// cannot read).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FrontmatterError(String);

/// Parses `text`; the error says what is wrong (no front matter, a line it cannot read).
pub fn parse(text: &str) -> Result<Document, FrontmatterError> {
    parse_text(text).map_err(FrontmatterError)
}

fn parse_text(text: &str) -> Result<Document, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return Err("it does not start with front matter (a `---` line)".to_owned());
    }
    let mut header = Vec::new();
    let mut closed = false;
    for line in lines.by_ref() {
        if line.trim_end() == "---" {
            closed = true;
            break;
        }
        header.push(line);
    }
    if !closed {
        return Err("its front matter has no closing `---` line".to_owned());
    }
    let body = lines.collect::<Vec<_>>().join("\n").trim().to_owned();
    Ok(Document {
        fields: fields(&header)?,
        body,
    })
}

fn fields(lines: &[&str]) -> Result<BTreeMap<String, Value>, String> {
    let mut fields = BTreeMap::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            return Err(format!(
                "front matter line {i} is indented where a key was expected"
            ));
        }
        let Some((key, rest)) = line.split_once(':') else {
            return Err(format!("front matter line {i} is not `key: value`"));
        };
        let key = key.trim().to_owned();
        let rest = rest.trim();
        // The lines indented under the key: a block scalar or a list.
        let start = i;
        while i < lines.len() && (lines[i].trim().is_empty() || lines[i].starts_with([' ', '\t'])) {
            i += 1;
        }
        let nested = &lines[start..i];
        let value = match rest {
            "|" | "|-" | ">" | ">-" => Value::Text(block(nested, rest.starts_with('>'))),
            "" if nested.iter().any(|l| l.trim().starts_with("- ")) => Value::List(
                nested
                    .iter()
                    .filter_map(|l| l.trim().strip_prefix("- "))
                    .map(|item| unquote(item.trim()))
                    .collect(),
            ),
            _ if rest.starts_with('[') && rest.ends_with(']') => Value::List(
                rest[1..rest.len() - 1]
                    .split(',')
                    .map(|item| unquote(item.trim()))
                    .filter(|item| !item.is_empty())
                    .collect(),
            ),
            // A plain scalar may go on over indented lines.
            _ => {
                let more: Vec<&str> = nested
                    .iter()
                    .map(|l| l.trim())
                    .filter(|l| !l.is_empty())
                    .collect();
                let mut text = unquote(rest);
                for part in more {
                    text.push(' ');
                    text.push_str(part);
                }
                Value::Text(text)
            }
        };
        fields.insert(key, value);
    }
    Ok(fields)
}

/// A block scalar's lines, their common indent removed; folded (`>`) joins them with spaces.
fn block(lines: &[&str], folded: bool) -> String {
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let kept: Vec<&str> = lines
        .iter()
        .map(|l| l.get(indent..).unwrap_or("").trim_end())
        .collect();
    let joined = if folded {
        kept.join(" ")
    } else {
        kept.join("\n")
    };
    joined.trim().to_owned()
}

fn unquote(text: &str) -> String {
    let quoted = |q: char| text.len() >= 2 && text.starts_with(q) && text.ends_with(q);
    if quoted('"') {
        text[1..text.len() - 1]
            .replace("\\\"", "\"")
            .replace("\\n", "\n")
    } else if quoted('\'') {
        text[1..text.len() - 1].replace("''", "'")
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_agent_and_skill_files_use() {
        let doc = parse(
            "---\nname: reviewer\ndescription: \"Reviews: diffs\"\ntools: Read, Grep\nmodel: inherit\n\
             list:\n  - a\n  - 'b c'\ninline: [x, \"y\"]\nlong: >\n  one\n  two\n---\n\nBody here.\n",
        )
        .unwrap();
        assert_eq!(doc.fields["name"], Value::Text("reviewer".into()));
        assert_eq!(doc.fields["description"].text(), "Reviews: diffs");
        assert_eq!(doc.fields["tools"].items(), ["Read", "Grep"]);
        assert_eq!(doc.fields["list"].items(), ["a", "b c"]);
        assert_eq!(doc.fields["inline"].items(), ["x", "y"]);
        assert_eq!(doc.fields["long"].text(), "one two");
        assert_eq!(doc.body, "Body here.");
    }

    #[test]
    fn files_without_front_matter_are_refused() {
        assert!(parse("# Title\n").unwrap_err().0.contains("does not start"));
        assert!(
            parse("---\nname: x\n")
                .unwrap_err()
                .0
                .contains("no closing")
        );
        assert!(
            parse("---\njust text\n---\n")
                .unwrap_err()
                .0
                .contains("key: value")
        );
    }
}
