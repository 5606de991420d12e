//! Rules that name calls: `bash(npm test)`, `bash(npm test:*)`, `edit_file(src/**)`,
//! `edit_file` (every call of the tool).

use std::fmt;

use serde::Serialize;

use super::CallView;

/// A tool, and optionally which of its calls.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// The tool's name.
    pub tool: String,
    /// For bash, the command (`prefix:*` for every command that starts with `prefix`); for
    /// file tools, a glob over the path relative to the workspace. `None`: every call.
    pub pattern: Option<String>,
}

impl Rule {
    /// The rule "yes for the rest of the session" adds for `call`: the exact command for
    /// bash; for a tool that names a file, every file inside the workspace (`tool(**)`: a
    /// yes to an edit in the project never lets edits elsewhere through); every call of
    /// any other tool.
    pub fn for_session(call: &CallView<'_>) -> Rule {
        let pattern = match call.tool {
            "bash" => call
                .arguments
                .get("command")
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned),
            _ if call.arguments.get("file_path").is_some() => Some("**".to_owned()),
            _ => None,
        };
        Rule {
            tool: call.tool.to_owned(),
            pattern,
        }
    }

    /// Whether `call` is one this rule names.
    pub fn matches(&self, call: &CallView<'_>) -> bool {
        if self.tool != call.tool {
            return false;
        }
        let Some(pattern) = &self.pattern else {
            return true;
        };
        if let Some(command) = call.arguments.get("command").and_then(|v| v.as_str()) {
            return match pattern.strip_suffix(":*") {
                Some(prefix) => command
                    .strip_prefix(prefix)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with(char::is_whitespace)),
                None => command == pattern,
            };
        }
        match call.path.and_then(|p| p.in_workspace.as_deref()) {
            Some(relative) => globset::Glob::new(pattern)
                .map(|g| g.compile_matcher().is_match(relative))
                .unwrap_or(false),
            None => false,
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.pattern {
            Some(pattern) => write!(f, "{}({pattern})", self.tool),
            None => f.write_str(&self.tool),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use rein_tools::ToolKind;
    use serde_json::json;

    use super::super::PathTarget;
    use super::*;

    fn bash(command: &str) -> serde_json::Value {
        json!({ "command": command })
    }

    fn view<'a>(
        tool: &'a str,
        args: &'a serde_json::Value,
        path: Option<&'a PathTarget>,
    ) -> CallView<'a> {
        CallView {
            tool,
            kind: ToolKind::Execute,
            arguments: args,
            path,
        }
    }

    #[test]
    fn command_rules_match_exactly_or_by_prefix_at_a_word_boundary() {
        let exact = Rule {
            tool: "bash".into(),
            pattern: Some("npm test".into()),
        };
        let prefix = Rule {
            tool: "bash".into(),
            pattern: Some("npm test:*".into()),
        };
        let (a, b, c) = (
            bash("npm test"),
            bash("npm test -- --watch"),
            bash("npm testx"),
        );
        assert!(exact.matches(&view("bash", &a, None)));
        assert!(!exact.matches(&view("bash", &b, None)));
        assert!(prefix.matches(&view("bash", &a, None)));
        assert!(prefix.matches(&view("bash", &b, None)));
        assert!(!prefix.matches(&view("bash", &c, None)));
        assert_eq!(prefix.to_string(), "bash(npm test:*)");
    }

    #[test]
    fn path_rules_glob_the_workspace_relative_path() {
        let rule = Rule {
            tool: "edit_file".into(),
            pattern: Some("src/**".into()),
        };
        let args = json!({"file_path": "x"});
        let inside = PathTarget {
            absolute: PathBuf::from("/w/src/a/b.rs"),
            in_workspace: Some(PathBuf::from("src/a/b.rs")),
        };
        let other = PathTarget {
            absolute: PathBuf::from("/w/docs/a.md"),
            in_workspace: Some(PathBuf::from("docs/a.md")),
        };
        assert!(rule.matches(&view("edit_file", &args, Some(&inside))));
        assert!(!rule.matches(&view("edit_file", &args, Some(&other))));
        assert!(!rule.matches(&view("write_file", &args, Some(&inside))));
    }

    #[test]
    fn the_session_rule_is_the_exact_command_or_the_whole_tool() {
        let args = bash("cargo test");
        assert_eq!(
            Rule::for_session(&view("bash", &args, None)).to_string(),
            "bash(cargo test)"
        );
        let args = json!({"file_path": "a"});
        let rule = Rule::for_session(&view("edit_file", &args, None));
        assert_eq!(rule.to_string(), "edit_file(**)");
        let inside = PathTarget {
            absolute: PathBuf::from("/w/src/deep/a.rs"),
            in_workspace: Some(PathBuf::from("src/deep/a.rs")),
        };
        let outside = PathTarget {
            absolute: PathBuf::from("/home/me/.bashrc"),
            in_workspace: None,
        };
        assert!(rule.matches(&view("edit_file", &args, Some(&inside))));
        assert!(
            !rule.matches(&view("edit_file", &args, Some(&outside))),
            "a yes inside the workspace lets nothing through outside it"
        );
        let args = json!({"query": "x"});
        assert_eq!(
            Rule::for_session(&view("mcp__docs__search", &args, None)).to_string(),
            "mcp__docs__search"
        );
    }
}
