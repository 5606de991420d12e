//! Markdown tables: held until the last row has come, then drawn with their columns aligned
//! and narrowed to the terminal's width.

use super::super::width::{fit, visible_width};
use super::{MarkdownStream, inline};

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
        let aligns = cells_of(&rows[1])
            .iter()
            .map(|cell| {
                let cell = cell.trim();
                match (cell.starts_with(':'), cell.ends_with(':')) {
                    (true, true) => Align::Center,
                    (false, true) => Align::Right,
                    _ => Align::Left,
                }
            })
            .collect::<Vec<_>>();
        let body: Vec<Vec<String>> = rows
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
                        self.paint(
                            &spans
                                .iter()
                                .flat_map(|(t, a)| t.chars().map(move |c| (c, *a)))
                                .collect::<Vec<_>>(),
                        )
                    })
                    .collect()
            })
            .collect();
        let columns = body.iter().map(Vec::len).max().unwrap_or(0);
        let mut widths = vec![0; columns];
        for row in &body {
            for (i, cell) in row.iter().enumerate() {
                widths[i] = widths[i].max(visible_width(cell));
            }
        }
        // Narrow the widest columns until the table fits; their cells are cut with `…`.
        let separators = 3 * columns.saturating_sub(1);
        while widths.iter().sum::<usize>() + separators > self.width {
            let Some(widest) = widths.iter_mut().max() else {
                break;
            };
            if *widest <= 3 {
                break;
            }
            *widest -= 1;
        }
        let s = self.style;
        let bar = s.dim(" │ ");
        for (r, row) in body.iter().enumerate() {
            let cells: Vec<String> = (0..columns)
                .map(|i| {
                    let cell = row.get(i).map_or("", String::as_str);
                    let cell = fit(cell, widths[i]);
                    pad(
                        &cell,
                        widths[i],
                        aligns.get(i).copied().unwrap_or(Align::Left),
                    )
                })
                .collect();
            out.push_str(cells.join(&bar).trim_end());
            out.push('\n');
            if r == 0 {
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                out.push_str(&s.dim(&rule.join("─┼─")));
                out.push('\n');
            }
        }
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
fn is_delimiter_row(row: &str) -> bool {
    let cells = cells_of(row);
    !cells.is_empty()
        && cells.iter().all(|cell| {
            let cell = cell.trim();
            cell.contains('-') && cell.chars().all(|c| matches!(c, '-' | ':'))
        })
}
