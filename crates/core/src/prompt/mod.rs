//! The system prompt: a template (`system.md`) filled with the environment, the tools and
//! the project's own instructions.
//!
//! [`build_system_prompt`] is pure, so the same inputs give the same bytes; the caller builds
//! the prompt once per session (date included) and reuses it, so providers can cache it.

mod imports;
mod instructions;

use std::path::Path;
use std::time::SystemTime;

pub use imports::MAX_IMPORT_DEPTH;
pub use instructions::{
    PROJECT_INSTRUCTIONS_LIMIT_BYTES, ProjectInstructions, PromptError, find_project_instructions,
};

const TEMPLATE: &str = include_str!("system.md");

/// Everything the system prompt says about this session.
#[derive(Debug, Clone, Copy)]
pub struct PromptInputs<'a> {
    /// The working directory.
    pub cwd: &'a Path,
    /// The operating system (`std::env::consts::OS`).
    pub os: &'a str,
    /// The user's shell.
    pub shell: &'a str,
    /// Today's date, `YYYY-MM-DD` (see [`utc_date`]).
    pub date: &'a str,
    /// Whether the working directory is inside a git repository.
    pub is_git_repo: bool,
    /// Each tool's name and one-line description.
    pub tools: &'a [(&'a str, &'a str)],
    /// The project's instructions (see [`find_project_instructions`]), if any.
    pub project_instructions: Option<&'a str>,
}

/// Renders the system prompt.
pub fn build_system_prompt(inputs: &PromptInputs<'_>) -> String {
    render(TEMPLATE, inputs)
}

/// Renders a person's own prompt (`--system-prompt-file`) in place of rein's: the same
/// `{placeholders}` are filled, and the project's instructions follow it unless it places
/// them itself with `{project_instructions}`.
pub fn build_custom_system_prompt(template: &str, inputs: &PromptInputs<'_>) -> String {
    if template.contains("{project_instructions}") {
        return render(template, inputs);
    }
    render(&format!("{template}\n{{project_instructions}}"), inputs)
}

fn render(template: &str, inputs: &PromptInputs<'_>) -> String {
    let cwd = inputs.cwd.display().to_string();
    let tools = if inputs.tools.is_empty() {
        "(no tools in this session)".to_owned()
    } else {
        let lines: Vec<String> = inputs
            .tools
            .iter()
            .map(|(name, description)| format!("- {name}: {description}"))
            .collect();
        lines.join("\n")
    };
    let project = match inputs
        .project_instructions
        .map(str::trim)
        .filter(|text| !text.is_empty())
    {
        Some(text) => format!(
            "\n# Project instructions\nThe project's own instructions follow; they take \
             precedence over the rules above.\n\n{text}\n"
        ),
        None => String::new(),
    };
    let git = if inputs.is_git_repo { "yes" } else { "no" };
    let mut prompt = fill(
        template,
        &[
            ("cwd", &cwd),
            ("git", git),
            ("os", inputs.os),
            ("shell", inputs.shell),
            ("date", inputs.date),
            ("tools", &tools),
            ("project_instructions", &project),
        ],
    );
    prompt.truncate(prompt.trim_end().len());
    prompt.push('\n');
    prompt
}

/// Today's date in UTC as `YYYY-MM-DD`, for [`PromptInputs::date`].
pub fn utc_date(now: SystemTime) -> String {
    crate::session::time::UtcTime::from_system(now).date()
}

/// Replaces each `{name}` of `template` in one pass, so text inserted for one placeholder is
/// never scanned for another; unknown `{...}` stays as written.
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out =
        String::with_capacity(template.len() + values.iter().map(|(_, v)| v.len()).sum::<usize>());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let value = after.find('}').and_then(|close| {
            let name = &after[..close];
            values
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (close, *value))
        });
        match value {
            Some((close, value)) => {
                out.push_str(value);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_custom_prompt_gets_the_placeholders_and_the_project_instructions() {
        let inputs = PromptInputs {
            cwd: Path::new("/w"),
            os: "linux",
            shell: "bash",
            date: "2025-01-02",
            is_git_repo: false,
            tools: &[],
            project_instructions: Some("use tabs"),
        };
        let prompt = build_custom_system_prompt("You are terse. Working in {cwd}.", &inputs);
        assert!(
            prompt.starts_with("You are terse. Working in /w.\n"),
            "{prompt}"
        );
        assert!(prompt.contains("use tabs"), "{prompt}");
        assert!(!prompt.contains("You are rein"), "{prompt}");
    }

    #[test]
    fn fill_does_not_rescan_inserted_text() {
        let out = fill("a {x} b {y} {unknown}", &[("x", "{y}"), ("y", "Y")]);
        assert_eq!(out, "a {y} b Y {unknown}");
    }

    #[test]
    fn every_placeholder_of_the_template_is_filled() {
        let prompt = build_system_prompt(&PromptInputs {
            cwd: Path::new("/w"),
            os: "linux",
            shell: "bash",
            date: "2025-01-02",
            is_git_repo: false,
            tools: &[],
            project_instructions: None,
        });
        for name in [
            "{cwd}",
            "{git}",
            "{os}",
            "{shell}",
            "{date}",
            "{tools}",
            "{project_instructions}",
        ] {
            assert!(TEMPLATE.contains(name), "template lacks {name}");
            assert!(!prompt.contains(name), "{name} left in the prompt");
        }
        assert!(prompt.ends_with("path:line.\n"), "{prompt}");
    }
}
