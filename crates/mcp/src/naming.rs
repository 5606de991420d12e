//! The names the model calls MCP tools by: `mcp__<server>__<tool>`, made of what every
//! provider accepts (`[A-Za-z0-9_-]`, at most 64 characters), and unique.

use std::collections::HashSet;

/// The longest tool name providers accept (OpenAI's limit; Anthropic's is the same).
pub const MAX_TOOL_NAME_CHARS: usize = 64;
/// What every MCP tool's name starts with.
pub const PREFIX: &str = "mcp__";

/// `name` with every character a provider would reject replaced by `_`.
pub fn sanitize(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if cleaned.is_empty() {
        "_".to_owned()
    } else {
        cleaned
    }
}

/// The name for `tool` of `server`, not in `taken` (which it joins): sanitised, cut to
/// [`MAX_TOOL_NAME_CHARS`], and given a numbered suffix when another tool already has it.
pub fn tool_name(server: &str, tool: &str, taken: &mut HashSet<String>) -> String {
    let base = format!("{PREFIX}{}__{}", sanitize(server), sanitize(tool));
    let mut candidate = cut(&base, MAX_TOOL_NAME_CHARS);
    let mut n = 2;
    while taken.contains(&candidate) {
        let suffix = format!("_{n}");
        candidate = format!("{}{suffix}", cut(&base, MAX_TOOL_NAME_CHARS - suffix.len()));
        n += 1;
    }
    taken.insert(candidate.clone());
    candidate
}

/// The first `max` characters of `text` (all ASCII after [`sanitize`]).
fn cut(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_prefixed_and_sanitised() {
        let mut taken = HashSet::new();
        assert_eq!(
            tool_name("git hub", "search.issues/v2", &mut taken),
            "mcp__git_hub__search_issues_v2"
        );
        assert_eq!(tool_name("é", "", &mut taken), "mcp______");
    }

    #[test]
    fn long_names_are_cut_to_64() {
        let mut taken = HashSet::new();
        let long = "x".repeat(100);
        let name = tool_name("server", &long, &mut taken);
        assert_eq!(name.len(), MAX_TOOL_NAME_CHARS);
        assert!(name.starts_with("mcp__server__xxx"));
    }

    #[test]
    fn collisions_get_numbered_suffixes() {
        let mut taken = HashSet::new();
        let a = tool_name("s", "do.it", &mut taken);
        let b = tool_name("s", "do/it", &mut taken);
        let c = tool_name("s", "do_it", &mut taken);
        assert_eq!(
            (a.as_str(), b.as_str(), c.as_str()),
            ("mcp__s__do_it", "mcp__s__do_it_2", "mcp__s__do_it_3")
        );
        let long = "y".repeat(80);
        let first = tool_name("s", &long, &mut taken);
        let second = tool_name("s", &format!("{long}z"), &mut taken);
        assert_ne!(first, second);
        assert!(second.len() <= MAX_TOOL_NAME_CHARS && second.ends_with("_2"));
    }
}
