//! Markdown tables: columns aligned, and fitted to the window: the widest columns are
//! narrowed until the table fits, and a cell too wide for its column wraps onto more rows
//! (between words where it can), so nothing of it is cut.

use super::{Attrs, MarkdownStream, inline};
use crate::render::width::visible_width;

/// The narrowest a column is made to fit the window.
const MIN_COLUMN_WIDTH: usize = 3;

/// A cell: its characters with their attributes.
type Cell = Vec<(char, Attrs)>;

impl MarkdownStream {
    /// A table with its columns aligned; rows that are not a table are shown as text.
    pub(super) fn table(&mut self, rows: &[String], out: &mut String) {
        let is_table = rows.len() >= 2 && is_delimiter_row(&rows[1]);
        if !is_table {
            for row in rows {
                self.wrap(&inline(row.trim()), "", "", out);
            }
            return;
        }
        let aligns: Vec<Align> = cells_of(&rows[1])
            .iter()
            .map(|cell| {
                let cell = cell.trim();
                match (cell.starts_with(':'), cell.ends_with(':')) {
                    (true, true) => Align::Center,
                    (false, true) => Align::Right,
                    _ => Align::Left,
                }
            })
            .collect();
        let body: Vec<Vec<Cell>> = rows
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != 1)
            .map(|(i, row)| {
                cells_of(row)
                    .iter()
                    .map(|cell| {
                        let mut spans = inline(cell.trim());
                        if i == 0 {
                            for (_, attrs) in &mut spans {
                                attrs.bold = true;
                            }
                        }
                        spans
                            .iter()
                            .flat_map(|(t, a)| t.chars().map(move |c| (c, *a)))
                            .collect()
                    })
                    .collect()
            })
            .collect();
        let widths = self.column_widths(&body);
        let s = self.style;
        let bar = s.dim(" │ ");
        for (r, row) in body.iter().enumerate() {
            let cells: Vec<Vec<String>> = (0..widths.len())
                .map(|i| match row.get(i) {
                    Some(cell) => self.wrap_cell(cell, widths[i]),
                    None => Vec::new(),
                })
                .collect();
            let height = cells.iter().map(Vec::len).max().unwrap_or(0).max(1);
            for k in 0..height {
                let line: Vec<String> = cells
                    .iter()
                    .enumerate()
                    .map(|(i, lines)| {
                        let piece = lines.get(k).map_or("", String::as_str);
                        pad(
                            piece,
                            widths[i],
                            aligns.get(i).copied().unwrap_or(Align::Left),
                        )
                    })
                    .collect();
                out.push_str(line.join(&bar).trim_end());
                out.push('\n');
            }
            if r == 0 {
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                out.push_str(&s.dim(&rule.join("─┼─")));
                out.push('\n');
            }
        }
    }

    /// Each column's width: its widest cell, the widest columns narrowed until the table
    /// fits the window.
    fn column_widths(&self, body: &[Vec<Cell>]) -> Vec<usize> {
        let columns = body.iter().map(Vec::len).max().unwrap_or(0);
        let mut widths = vec![0; columns];
        for row in body {
            for (i, cell) in row.iter().enumerate() {
                widths[i] = widths[i].max(self.shown_width(cell));
            }
        }
        let separators = 3 * columns.saturating_sub(1);
        while widths.iter().sum::<usize>() + separators > self.width {
            let Some(widest) = widths.iter_mut().max() else {
                break;
            };
            if *widest <= MIN_COLUMN_WIDTH {
                break;
            }
            *widest -= 1;
        }
        widths
    }

    /// The columns `cell` takes once painted (plain text marks code with backticks).
    fn shown_width(&self, cell: &[(char, Attrs)]) -> usize {
        visible_width(&self.paint(cell))
    }

    /// `cell` painted in rows of at most `width` columns, broken between words, a word
    /// longer than a row broken where the row ends.
    fn wrap_cell(&self, cell: &[(char, Attrs)], width: usize) -> Vec<String> {
        let mut rows: Vec<String> = Vec::new();
        let mut row: Cell = Vec::new();
        for word in cell.split(|(c, _)| *c == ' ').filter(|w| !w.is_empty()) {
            let mut joined = row.clone();
            if !joined.is_empty() {
                joined.push((' ', word[0].1));
            }
            joined.extend_from_slice(word);
            if self.shown_width(&joined) <= width {
                row = joined;
                continue;
            }
            if !row.is_empty() {
                rows.push(self.paint(&row));
            }
            row = Vec::new();
            for &piece in word {
                row.push(piece);
                if self.shown_width(&row) > width && row.len() > 1 {
                    let last = row.pop().unwrap_or(piece);
                    rows.push(self.paint(&row));
                    row = vec![last];
                }
            }
        }
        if !row.is_empty() {
            rows.push(self.paint(&row));
        }
        rows
    }
}

#[derive(Debug, Clone, Copy)]
enum Align {
    Left,
    Right,
    Center,
}

fn pad(cell: &str, width: usize, align: Align) -> String {
    let room = width.saturating_sub(visible_width(cell));
    match align {
        Align::Left => format!("{cell}{}", " ".repeat(room)),
        Align::Right => format!("{}{cell}", " ".repeat(room)),
        Align::Center => format!(
            "{}{cell}{}",
            " ".repeat(room / 2),
            " ".repeat(room - room / 2)
        ),
    }
}

/// The cells of a table row, without its outer pipes; `\|` stays in its cell.
fn cells_of(row: &str) -> Vec<String> {
    let row = row.trim();
    let row = row.strip_prefix('|').unwrap_or(row);
    let row = row.strip_suffix('|').unwrap_or(row);
    let mut cells = vec![String::new()];
    let mut chars = row.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                if let Some(cell) = cells.last_mut() {
                    cell.push('|');
                }
                chars.next();
            }
            '|' => cells.push(String::new()),
            c => {
                if let Some(cell) = cells.last_mut() {
                    cell.push(c);
                }
            }
        }
    }
    cells
}

/// `|---|:--:|`.
pub(super) fn is_delimiter_row(row: &str) -> bool {
    let cells = cells_of(row);
    !cells.is_empty()
        && cells.iter().all(|cell| {
            let cell = cell.trim();
            cell.contains('-') && cell.chars().all(|c| matches!(c, '-' | ':'))
        })
}
