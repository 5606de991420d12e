//! Syntax highlighting of fenced code, with syntect's pure-Rust regex engine. The colours
//! are the terminal's own sixteen (its theme decides how they look), so code reads well on
//! dark and light backgrounds alike. The syntax definitions load on first use (or in the
//! background once the prompt is up): never on the start-up path.

use std::str::FromStr;
use std::sync::OnceLock;

use syntect::easy::HighlightLines;
use syntect::highlighting::{
    Color, ScopeSelectors, StyleModifier, Theme, ThemeItem, ThemeSettings,
};
use syntect::parsing::SyntaxSet;

/// Scopes and the ANSI colour (30 + n) they get.
const SCOPE_COLOURS: &[(&str, u8)] = &[
    ("comment", 8),
    ("string, constant.character", 2),
    ("constant.numeric, constant.language", 3),
    ("keyword, storage", 5),
    ("entity.name.function, support.function", 4),
    (
        "entity.name.type, entity.name.class, support.type, support.class",
        6,
    ),
    ("variable.parameter, entity.other.attribute-name", 3),
];

/// The syntaxes, loaded once.
fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_nonewlines)
}

/// The theme: each colour is stored as its ANSI number in `r`, with `a == 0` marking it as
/// such (the way `bat` encodes terminal colours in a syntect theme).
fn theme() -> &'static Theme {
    static THEME: OnceLock<Theme> = OnceLock::new();
    THEME.get_or_init(|| Theme {
        settings: ThemeSettings {
            foreground: Some(Color {
                r: 255,
                g: 0,
                b: 0,
                a: 1,
            }),
            ..ThemeSettings::default()
        },
        scopes: SCOPE_COLOURS
            .iter()
            .filter_map(|(scope, colour)| {
                Some(ThemeItem {
                    scope: ScopeSelectors::from_str(scope).ok()?,
                    style: StyleModifier {
                        foreground: Some(Color {
                            r: *colour,
                            g: 0,
                            b: 0,
                            a: 0,
                        }),
                        background: None,
                        font_style: None,
                    },
                })
            })
            .collect(),
        ..Theme::default()
    })
}

/// Loads the syntaxes now, on a thread of their own, so the first code block does not wait.
pub(crate) fn warm_up() {
    let _ = std::thread::Builder::new()
        .name("syntaxes".into())
        .spawn(|| {
            let _ = syntaxes();
        });
}

/// Highlights the lines of one code block, in order.
pub(crate) struct CodeHighlighter {
    lines: Option<HighlightLines<'static>>,
}

impl CodeHighlighter {
    /// A highlighter for code in `language` (a fence's info string); plain when unknown.
    pub(crate) fn new(language: &str) -> Self {
        let language = language.split([' ', ',', '{']).next().unwrap_or_default();
        if language.is_empty() {
            return CodeHighlighter { lines: None };
        }
        let set = syntaxes();
        let syntax = set
            .find_syntax_by_token(language)
            .or_else(|| set.find_syntax_by_extension(language));
        CodeHighlighter {
            lines: syntax.map(|syntax| HighlightLines::new(syntax, theme())),
        }
    }

    /// `line` (already made safe) with colour codes around its tokens.
    pub(crate) fn line(&mut self, line: &str) -> String {
        let Some(lines) = self.lines.as_mut() else {
            return line.to_owned();
        };
        let Ok(regions) = lines.highlight_line(line, syntaxes()) else {
            return line.to_owned();
        };
        let mut out = String::with_capacity(line.len() + 32);
        for (style, text) in regions {
            let colour = style.foreground;
            if colour.a == 0 && !text.trim().is_empty() {
                let code = if colour.r >= 8 {
                    // Bright black reads as grey on both backgrounds.
                    "90".to_owned()
                } else {
                    format!("3{}", colour.r)
                };
                out.push_str(&format!("\x1b[{code}m{text}\x1b[0m"));
            } else {
                out.push_str(text);
            }
        }
        out
    }
}

impl std::fmt::Debug for CodeHighlighter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CodeHighlighter")
            .field("known", &self.lines.is_some())
            .finish()
    }
}
