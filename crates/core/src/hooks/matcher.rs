//! Which hooks an event runs. A matcher is a regular expression that must match a whole name:
//! for tool events the tool's name, rein's or one of its Claude Code aliases (`Bash`,
//! `Edit|Write`, `mcp__github__.*`); for SessionStart the source (`startup`, `resume`).
//! `*` or an empty matcher, like none, matches everything.

use regex_lite::Regex;

use crate::permissions::canonical_tool_name;

/// Claude Code's tool names rein knows as aliases (see `permissions::canonical_tool_name`), in
/// the order in which the first alias of a tool is the name hooks are told.
const CLAUDE_CODE_NAMES: [&str; 10] = [
    "Bash",
    "Read",
    "Edit",
    "MultiEdit",
    "Write",
    "Glob",
    "Grep",
    "LS",
    "Task",
    "TodoWrite",
];

/// Claude Code's names for rein's tool `tool`.
fn claude_code_names(tool: &str) -> impl Iterator<Item = &'static str> + '_ {
    CLAUDE_CODE_NAMES
        .into_iter()
        .filter(move |alias| canonical_tool_name(alias) == tool)
}

/// The name a hook is told for rein's tool `tool`: Claude Code's where it has one, so that
/// hooks written for it (`if tool_name == "Bash"`) work unchanged; rein's otherwise.
pub(crate) fn hook_tool_name(tool: &str) -> &str {
    claude_code_names(tool).next().unwrap_or(tool)
}

/// A compiled matcher.
#[derive(Debug, Clone)]
pub(crate) enum Matcher {
    /// Every name.
    All,
    /// Names the expression matches whole.
    Pattern(Regex),
    /// Only this name (a matcher that is no valid expression: compared as written).
    Exact(String),
}

impl Matcher {
    /// The matcher of a configured hook.
    pub(crate) fn new(matcher: Option<&str>) -> Matcher {
        match matcher.map(str::trim) {
            None | Some("" | "*") => Matcher::All,
            Some(text) => match Regex::new(&format!("^(?:{text})$")) {
                Ok(regex) => Matcher::Pattern(regex),
                Err(_) => Matcher::Exact(text.to_owned()),
            },
        }
    }

    /// Whether it matches `name` as it is.
    pub(crate) fn matches(&self, name: &str) -> bool {
        match self {
            Matcher::All => true,
            Matcher::Pattern(regex) => regex.is_match(name),
            Matcher::Exact(text) => text == name,
        }
    }

    /// Whether it matches rein's tool `tool`, by rein's name or a Claude Code alias.
    pub(crate) fn matches_tool(&self, tool: &str) -> bool {
        self.matches(tool) || claude_code_names(tool).any(|alias| self.matches(alias))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_claude_code_name_is_an_alias_rein_knows() {
        for name in CLAUDE_CODE_NAMES {
            assert_ne!(canonical_tool_name(name), name, "{name}");
        }
    }

    #[test]
    fn hooks_are_told_claude_codes_names() {
        assert_eq!(hook_tool_name("bash"), "Bash");
        assert_eq!(hook_tool_name("edit_file"), "Edit");
        assert_eq!(hook_tool_name("glob"), "Glob");
        assert_eq!(hook_tool_name("bash_output"), "bash_output");
        assert_eq!(hook_tool_name("mcp__github__list"), "mcp__github__list");
    }

    #[test]
    fn matchers_match_whole_names_rein_s_or_aliases() {
        let bash = Matcher::new(Some("Bash"));
        assert!(bash.matches_tool("bash"));
        assert!(!bash.matches_tool("bash_output"), "whole names only");
        assert!(Matcher::new(Some("bash")).matches_tool("bash"));
        assert!(!Matcher::new(Some("bash")).matches_tool("bash_output"));

        let edits = Matcher::new(Some("Edit|Write"));
        assert!(edits.matches_tool("edit_file"));
        assert!(edits.matches_tool("write_file"));
        assert!(!edits.matches_tool("read_file"));
        assert!(Matcher::new(Some("MultiEdit")).matches_tool("edit_file"));

        let mcp = Matcher::new(Some("mcp__github__.*"));
        assert!(mcp.matches_tool("mcp__github__create_issue"));
        assert!(!mcp.matches_tool("mcp__gitlab__x"));

        for all in [None, Some(""), Some("*")] {
            assert!(Matcher::new(all).matches_tool("anything"));
        }
        assert!(Matcher::new(Some("startup")).matches("startup"));
        assert!(!Matcher::new(Some("startup")).matches("resume"));
        assert!(
            Matcher::new(Some("a(")).matches("a("),
            "no expression: as written"
        );
    }
}
