//! The model's answer as Markdown, rendered while it streams: each line is written once it is
//! complete and never redrawn, so the terminal's scrollback stays whole and nothing flickers.
//! Block structure (headings, lists, quotes, rules, fences) is read from the line's start;
//! inline structure (emphasis, code, links) by pulldown-cmark. A table is held until its last
//! row has come, since its columns need every row. Everything from the model is made safe
//! before rein's own colour codes are put around it.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use unicode_width::UnicodeWidthChar;

use super::Style;
use super::highlight::CodeHighlighter;
use super::neutralize;
use super::width::visible_width;

/// Columns a tab in code takes.
const TAB_COLUMNS: usize = 4;

/// Renders a stream of Markdown text into terminal lines.
#[derive(Debug)]
pub(crate) struct MarkdownStream {
    style: Style,
    width: usize,
    /// The incomplete last line.
    partial: String,
    block: Block,
}

#[derive(Debug)]
enum Block {
    /// Ordinary lines.
    Text,
    /// Inside a fenced code block opened by `marker`.
    Fence {
        marker: String,
        code: Box<CodeHighlighter>,
    },
    /// Rows of a table, held until it ends.
    Table(Vec<String>),
}

/// Text attributes of one character.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Attrs {
    bold: bool,
    italic: bool,
    underline: bool,
    strike: bool,
    dim: bool,
    code: bool,
    link: bool,
    heading: bool,
}

/// A run of text with one set of attributes.
type Span = (String, Attrs);

impl MarkdownStream {
    /// A renderer for lines at most `width` columns wide.
    pub(crate) fn new(style: Style, width: usize) -> Self {
        MarkdownStream {
            style,
            width: width.max(20),
            partial: String::new(),
            block: Block::Text,
        }
    }

    /// Lays the lines to come out at `width` columns (the window was resized).
    pub(crate) fn set_width(&mut self, width: usize) {
        self.width = width.max(20);
    }

    /// Adds streamed text; what became complete lines is appended to `out`.
    pub(crate) fn push(&mut self, text: &str, out: &mut String) {
        if !text.contains('\n') {
            self.partial.push_str(text);
            return;
        }
        self.partial.push_str(text);
        let mut start = 0;
        let whole = std::mem::take(&mut self.partial);
        while let Some(offset) = whole[start..].find('\n') {
            let line = whole[start..start + offset].trim_end_matches('\r');
            self.line(line, out);
            start += offset + 1;
        }
        self.partial = whole[start..].to_owned();
    }

    /// Ends the text: the last line and any table held back are written.
    pub(crate) fn finish(&mut self, out: &mut String) {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.line(line.trim_end_matches('\r'), out);
        }
        if let Block::Table(rows) = std::mem::replace(&mut self.block, Block::Text) {
            self.table(&rows, out);
        }
        self.block = Block::Text;
    }

    fn line(&mut self, line: &str, out: &mut String) {
        let s = self.style;
        match &mut self.block {
            Block::Fence { marker, code } => {
                let trimmed = line.trim();
                if trimmed.starts_with(marker.as_str())
                    && trimmed.chars().all(|c| marker.starts_with(c))
                {
                    // The fence itself is not shown: it gets in the way of copying the code.
                    self.block = Block::Text;
                } else {
                    let safe = neutralize(&expand_tabs(line)).into_owned();
                    if s.is_colored() {
                        out.push_str(&code.line(&safe));
                    } else {
                        out.push_str(&safe);
                    }
                    out.push('\n');
                }
                return;
            }
            Block::Table(rows) => {
                if line.trim_start().starts_with('|') {
                    rows.push(line.to_owned());
                    return;
                }
                let rows = std::mem::take(rows);
                self.block = Block::Text;
                self.table(&rows, out);
            }
            Block::Text => {}
        }
        self.text_line(line, out);
    }

    fn text_line(&mut self, line: &str, out: &mut String) {
        let s = self.style;
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if trimmed.is_empty() {
            out.push('\n');
            return;
        }
        if let Some(marker) = fence_marker(trimmed) {
            let language = trimmed[marker.len()..].trim();
            self.block = Block::Fence {
                code: Box::new(CodeHighlighter::new(language)),
                marker,
            };
            return;
        }
        if trimmed.starts_with('|') {
            self.block = Block::Table(vec![line.to_owned()]);
            return;
        }
        if is_rule(trimmed) {
            out.push_str(&s.dim(&"─".repeat(self.width.min(40))));
            out.push('\n');
            return;
        }
        if let Some((level, text)) = heading(trimmed) {
            let mut spans = inline(text);
            for (_, attrs) in &mut spans {
                attrs.bold = true;
                attrs.heading = true;
                attrs.underline |= level == 1;
            }
            self.wrap(&spans, "", "", out);
            return;
        }
        if let Some(text) = trimmed.strip_prefix('>') {
            let text = text.strip_prefix(' ').unwrap_or(text);
            let bar = s.dim("│ ");
            let mut spans = inline(text);
            for (_, attrs) in &mut spans {
                attrs.italic = true;
            }
            self.wrap(&spans, &bar, &bar, out);
            return;
        }
        let pad = " ".repeat(indent.min(16));
        if let Some((marker, text)) = list_item(trimmed) {
            let first = format!("{pad}{marker} ");
            let rest = " ".repeat(visible_width(&first));
            let first = if s.is_colored() {
                format!("{pad}{} ", s.dim(&marker))
            } else {
                first
            };
            self.wrap(&inline(text), &first, &rest, out);
            return;
        }
        self.wrap(&inline(trimmed), &pad, &pad, out);
    }

    /// Lays `spans` out in lines of at most the width, breaking between words.
    fn wrap(&self, spans: &[Span], first: &str, rest: &str, out: &mut String) {
        let cells: Vec<(char, Attrs)> = spans
            .iter()
            .flat_map(|(text, attrs)| text.chars().map(move |c| (c, *attrs)))
            .collect();
        let mut prefix = first;
        let mut start = 0;
        while start < cells.len() {
            let room = self.width.saturating_sub(visible_width(prefix)).max(10);
            let mut used = 0;
            let mut end = start;
            let mut last_space = None;
            while end < cells.len() {
                let w = cells[end].0.width().unwrap_or(0);
                if used + w > room {
                    break;
                }
                if cells[end].0 == ' ' {
                    last_space = Some(end);
                }
                used += w;
                end += 1;
            }
            let (line_end, next) = if end == cells.len() {
                (end, end)
            } else {
                match last_space {
                    Some(space) if space > start => (space, space + 1),
                    _ => (end.max(start + 1), end.max(start + 1)),
                }
            };
            out.push_str(prefix);
            out.push_str(&self.paint(&cells[start..line_end]));
            out.push('\n');
            prefix = rest;
            start = next;
        }
    }

    /// Characters with their attributes, as text with colour codes.
    fn paint(&self, cells: &[(char, Attrs)]) -> String {
        let mut out = String::new();
        let mut i = 0;
        while i < cells.len() {
            let attrs = cells[i].1;
            let mut text = String::new();
            while i < cells.len() && cells[i].1 == attrs {
                text.push(cells[i].0);
                i += 1;
            }
            out.push_str(&self.styled(&text, attrs));
        }
        out
    }

    fn styled(&self, text: &str, attrs: Attrs) -> String {
        if !self.style.is_colored() {
            let text = if attrs.code {
                format!("`{text}`")
            } else {
                text.to_owned()
            };
            // NO_COLOR forbids colour, not emphasis: headings stay bold and underlined.
            return if attrs.heading && self.style.has_emphasis() {
                format!("\x1b[1;4m{text}\x1b[0m")
            } else {
                text
            };
        }
        let mut codes = Vec::new();
        if attrs.bold {
            codes.push("1");
        }
        if attrs.dim {
            codes.push("2");
        }
        if attrs.italic {
            codes.push("3");
        }
        if attrs.underline || attrs.link {
            codes.push("4");
        }
        if attrs.strike {
            codes.push("9");
        }
        if attrs.code {
            codes.push("36");
        } else if attrs.link {
            codes.push("34");
        } else if attrs.heading {
            codes.push("35");
        }
        if codes.is_empty() {
            text.to_owned()
        } else {
            format!("\x1b[{}m{text}\x1b[0m", codes.join(";"))
        }
    }
}

/// The fence that opens a code block: three or more backticks or tildes.
fn fence_marker(line: &str) -> Option<String> {
    let first = line.chars().next()?;
    if first != '`' && first != '~' {
        return None;
    }
    let run = line.chars().take_while(|c| *c == first).count();
    if run < 3 || (first == '`' && line[run..].contains('`')) {
        return None;
    }
    Some(first.to_string().repeat(run))
}

/// `---`, `***`, `___` (spaces allowed between).
fn is_rule(line: &str) -> bool {
    let marks: Vec<char> = line.chars().filter(|c| !c.is_whitespace()).collect();
    marks.len() >= 3 && matches!(marks[0], '-' | '*' | '_') && marks.iter().all(|c| *c == marks[0])
}

/// `## Title` → (2, "Title").
fn heading(line: &str) -> Option<(usize, &str)> {
    let level = line.chars().take_while(|c| *c == '#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &line[level..];
    if rest.is_empty() {
        return Some((level, ""));
    }
    let text = rest.strip_prefix([' ', '\t'])?;
    Some((level, text.trim().trim_end_matches('#').trim_end()))
}

/// A list item's marker as shown (`•`, `3.`, `☐`) and its text.
fn list_item(line: &str) -> Option<(String, &str)> {
    let bullet = ["- ", "* ", "+ "].iter().find(|m| line.starts_with(**m));
    if let Some(marker) = bullet {
        let text = &line[marker.len()..];
        for (task, shown) in [("[ ] ", "☐"), ("[x] ", "☑"), ("[X] ", "☑")] {
            if let Some(rest) = text.strip_prefix(task) {
                return Some((shown.to_owned(), rest));
            }
        }
        return Some(("•".to_owned(), text));
    }
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    if (1..=9).contains(&digits) {
        let rest = &line[digits..];
        for delimiter in [". ", ") "] {
            if let Some(text) = rest.strip_prefix(delimiter) {
                return Some((format!("{}.", &line[..digits]), text));
            }
        }
    }
    None
}

/// The inline structure of one line of text, made safe.
fn inline(text: &str) -> Vec<Span> {
    let mut spans: Vec<Span> = Vec::new();
    let mut attrs = Attrs::default();
    let mut links: Vec<String> = Vec::new();
    let mut link_text = String::new();
    let options = Options::ENABLE_STRIKETHROUGH;
    // Leading spaces or a marker-like start would make the parser see a block of its own.
    for event in Parser::new_ext(text.trim_start(), options) {
        match event {
            Event::Text(t) => {
                if !links.is_empty() {
                    link_text.push_str(&t);
                }
                spans.push((neutralize(&t).into_owned(), attrs));
            }
            Event::Code(t) => {
                let code = Attrs {
                    code: true,
                    ..attrs
                };
                spans.push((neutralize(&t).into_owned(), code));
            }
            Event::Html(t)
            | Event::InlineHtml(t)
            | Event::InlineMath(t)
            | Event::DisplayMath(t) => {
                spans.push((neutralize(&t).into_owned(), attrs));
            }
            Event::SoftBreak | Event::HardBreak => spans.push((" ".to_owned(), attrs)),
            Event::FootnoteReference(t) => spans.push((format!("[^{}]", neutralize(&t)), attrs)),
            Event::TaskListMarker(done) => {
                spans.push((if done { "☑ " } else { "☐ " }.to_owned(), attrs));
            }
            Event::Rule => spans.push(("───".to_owned(), attrs)),
            Event::Start(tag) => match tag {
                Tag::Emphasis => attrs.italic = true,
                Tag::Strong => attrs.bold = true,
                Tag::Strikethrough => attrs.strike = true,
                Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                    attrs.link = true;
                    link_text.clear();
                    links.push(dest_url.into_string());
                }
                _ => {}
            },
            Event::End(tag) => match tag {
                TagEnd::Emphasis => attrs.italic = false,
                TagEnd::Strong => attrs.bold = false,
                TagEnd::Strikethrough => attrs.strike = false,
                TagEnd::Link | TagEnd::Image => {
                    attrs.link = false;
                    if let Some(url) = links.pop() {
                        // An autolink shows its address already.
                        if url != link_text && !url.is_empty() {
                            let dim = Attrs { dim: true, ..attrs };
                            spans.push((format!(" ({})", neutralize(&url)), dim));
                        }
                    }
                }
                _ => {}
            },
        }
    }
    spans
}

/// Tabs in code as spaces, so widths add up.
fn expand_tabs(line: &str) -> String {
    if !line.contains('\t') {
        return line.to_owned();
    }
    let mut out = String::with_capacity(line.len() + 8);
    let mut column = 0;
    for c in line.chars() {
        if c == '\t' {
            let n = TAB_COLUMNS - column % TAB_COLUMNS;
            out.push_str(&" ".repeat(n));
            column += n;
        } else {
            out.push(c);
            column += c.width().unwrap_or(0);
        }
    }
    out
}

#[path = "markdown_table.rs"]
mod table;

#[cfg(test)]
#[path = "markdown_tests.rs"]
mod tests;
