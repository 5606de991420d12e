//! grep: a regex search over files, gitignore-aware, with content, files and count output.

mod search;

use std::fmt::Write as _;
use std::path::Path;

use async_trait::async_trait;
use grep_regex::RegexMatcherBuilder;
use schemars::JsonSchema;
use serde::Deserialize;

use search::{Found, Line, Query, Report, search};

use crate::paths::{display_relative, resolve};
use crate::walk::FilePattern;
use crate::{Display, Tool, ToolContext, ToolError, ToolKind, ToolOutput};

/// Matching lines (or files) shown at most.
pub const GREP_MAX_MATCHES: usize = 200;
/// Lines longer than this are cut in the output.
pub const GREP_MAX_LINE_CHARS: usize = 500;
/// Context lines allowed at most.
const GREP_MAX_CONTEXT_LINES: usize = 20;

/// What grep reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    /// `path:line:text` for each matching line.
    #[default]
    Content,
    /// The paths of matching files.
    Files,
    /// Matching lines per file.
    Count,
}

/// Arguments of grep.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepArgs {
    /// Regex.
    pub pattern: String,
    /// File or directory (default: current).
    pub path: Option<String>,
    /// Glob filter, e.g. `*.rs`.
    pub include: Option<String>,
    /// Case-insensitive.
    #[serde(default)]
    pub ignore_case: bool,
    /// Lines around each match.
    pub context: Option<u32>,
    /// content (default), files or count.
    pub output_mode: Option<OutputMode>,
}

/// The grep tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct Grep;

#[async_trait]
impl Tool for Grep {
    type Args = GrepArgs;

    fn name(&self) -> &'static str {
        "grep"
    }

    fn description(&self) -> &'static str {
        "Regex search (ripgrep syntax); skips ignored, hidden and binary files. Max 200 \
         matches."
    }

    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }

    async fn run(&self, args: GrepArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let ctx = ctx.clone();
        crate::blocking::run(move || grep(&args, &ctx)).await
    }
}

fn grep(args: &GrepArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let root = resolve(ctx, args.path.as_deref().unwrap_or("."))?;
    let cwd = std::fs::canonicalize(ctx.cwd()).unwrap_or_else(|_| ctx.cwd());
    if !root.exists() {
        return Err(ToolError::Model(format!(
            "Path not found: {}.",
            display_relative(&cwd, &root)
        )));
    }
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(args.ignore_case)
        .line_terminator(Some(b'\n'))
        .build(&args.pattern)
        .map_err(|err| ToolError::Model(format!("Invalid regex `{}`: {err}", args.pattern)))?;
    let include = args
        .include
        .as_deref()
        .map(|glob| FilePattern::new(glob, "include glob"))
        .transpose()?;
    let mode = args.output_mode.unwrap_or_default();
    let report = match mode {
        OutputMode::Content => {
            let context = args
                .context
                .map_or(0, |c| (c as usize).min(GREP_MAX_CONTEXT_LINES));
            Report::Lines { context }
        }
        OutputMode::Files => Report::Files,
        OutputMode::Count => Report::Count,
    };
    let query = Query {
        root: &root,
        matcher: &matcher,
        include: include.as_ref(),
        report,
        keep: GREP_MAX_MATCHES,
        guard: ctx.config().read_guard.as_ref(),
    };
    let found = search(&query, ctx.cancel_token()).ok_or_else(|| ToolError::Cancelled {
        partial: "(grep was cancelled before it finished)".to_owned(),
    })?;
    if found.total_matches == 0 {
        let mut out = format!(
            "No matches for `{}` in {}",
            args.pattern,
            display_relative(&cwd, &root)
        );
        if let Some(include) = &args.include {
            let _ = write!(out, " (files matching `{include}`)");
        }
        push_unreadable(&mut out, &found);
        return Ok(ToolOutput::success(out).with_display(Display::Search {
            matches: 0,
            files: 0,
        }));
    }
    let mut out = match mode {
        OutputMode::Content => render_lines(&found, &cwd),
        OutputMode::Files => render_files(&found, &cwd),
        OutputMode::Count => render_counts(&found, &cwd),
    };
    push_unreadable(&mut out, &found);
    Ok(ToolOutput::success(out).with_display(Display::Search {
        matches: found.total_matches,
        files: found.total_files,
    }))
}

fn render_lines(found: &Found, cwd: &Path) -> String {
    let mut out = String::new();
    let mut shown = 0usize;
    let mut first_file = true;
    'files: for (path, hits) in &found.files {
        let display = display_relative(cwd, path);
        let has_context = hits.lines.iter().any(|l| matches!(l, Line::Context(..)));
        if has_context && !first_file {
            out.push_str("--\n");
        }
        first_file = false;
        for line in &hits.lines {
            match line {
                Line::Match(number, text) => {
                    if shown == GREP_MAX_MATCHES {
                        break 'files;
                    }
                    shown += 1;
                    push_line(&mut out, &display, ':', *number, text);
                }
                Line::Context(number, text) => push_line(&mut out, &display, '-', *number, text),
                Line::Break => out.push_str("--\n"),
            }
        }
    }
    if found.total_matches > shown as u64 {
        let _ = writeln!(
            out,
            "(showing {shown} of {} matching lines in {} files; narrow the pattern, path or include, or use output_mode \"count\")",
            found.total_matches, found.total_files
        );
    }
    out
}

fn render_files(found: &Found, cwd: &Path) -> String {
    let mut out = String::new();
    for path in found.files.keys().take(GREP_MAX_MATCHES) {
        out.push_str(&display_relative(cwd, path));
        out.push('\n');
    }
    if found.total_files > GREP_MAX_MATCHES as u64 {
        let _ = writeln!(
            out,
            "({} files match; {} more not shown)",
            found.total_files,
            found.total_files - GREP_MAX_MATCHES as u64
        );
    }
    out
}

fn render_counts(found: &Found, cwd: &Path) -> String {
    let mut out = String::new();
    for (path, hits) in found.files.iter().take(GREP_MAX_MATCHES) {
        let _ = writeln!(out, "{}:{}", display_relative(cwd, path), hits.matches);
    }
    if found.total_files > GREP_MAX_MATCHES as u64 {
        let _ = writeln!(
            out,
            "({} more files not shown)",
            found.total_files - GREP_MAX_MATCHES as u64
        );
    }
    let _ = writeln!(
        out,
        "(total: {} matching lines in {} files)",
        found.total_matches, found.total_files
    );
    out
}

fn push_line(out: &mut String, display: &str, sep: char, number: u64, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    let text = text
        .strip_suffix('\n')
        .map_or(&*text, |t| t.strip_suffix('\r').unwrap_or(t));
    let _ = write!(out, "{display}{sep}{number}{sep}");
    match text.char_indices().nth(GREP_MAX_LINE_CHARS) {
        Some((cut, _)) => {
            out.push_str(&text[..cut]);
            out.push_str(" [... line cut]");
        }
        None => out.push_str(text),
    }
    out.push('\n');
}

fn push_unreadable(out: &mut String, found: &Found) {
    if found.unreadable > 0 {
        if !out.ends_with('\n') {
            out.push('\n');
        }
        let _ = writeln!(out, "({} paths could not be read)", found.unreadable);
    }
    if !found.protected.is_empty() {
        if !out.ends_with('\n') {
            out.push('\n');
        }
        let shown: Vec<String> = found
            .protected
            .iter()
            .take(5)
            .map(|p| p.display().to_string())
            .collect();
        let more = found.protected.len().saturating_sub(shown.len());
        let _ = writeln!(
            out,
            "({} file{} not searched: rules protect {} ({}{}); read_file asks the person for \
             such a file)",
            found.protected.len(),
            if found.protected.len() == 1 { "" } else { "s" },
            if found.protected.len() == 1 {
                "it"
            } else {
                "them"
            },
            shown.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        );
    }
}
