//! Rules must name tools that exist: a misspelled deny rule (`Bsh(git push:*)`) would
//! otherwise protect nothing, silently. A rule naming no tool is an error at start with the
//! closest name; one naming an MCP server that is not configured only warns (servers come
//! and go with the configuration, and a rule may wait for one).

use super::rule::claude_tool_names;
use super::{Rule, RuleSet, SourcedRule};

/// The agent's own tools (beside the machine tools of the registry): rules may name them
/// even when this run does not offer them (no skills, a sub-agent).
pub const AGENT_TOOL_NAMES: [&str; 6] = [
    "agent",
    "todo_write",
    "skill",
    "compact",
    "web_fetch",
    "tool_search",
];

/// What the check found: errors end the start, warnings are shown.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct RuleCheck {
    /// One line per rule that names no tool, with the closest name when there is one.
    pub errors: Vec<String>,
    /// One line per rule naming an MCP server that is not configured.
    pub warnings: Vec<String>,
}

/// Checks the tool name of every rule in `rules` against `tools` (rein's names) and the
/// configured MCP `servers`.
pub fn check_rule_tools(rules: &RuleSet, tools: &[&str], servers: &[&str]) -> RuleCheck {
    let mut check = RuleCheck::default();
    let lists = [
        ("allow", &rules.allow),
        ("ask", &rules.ask),
        ("deny", &rules.deny),
    ];
    for (list, sourced) in lists {
        for rule in sourced.iter() {
            judge(&mut check, list, rule, tools, servers);
        }
    }
    check
}

/// Why `name` (a tool name as a person wrote it) names no tool, or `None` when it names one.
pub fn unknown_tool(name: &str, tools: &[&str]) -> Option<String> {
    let rule = Rule::parse(name, None).ok()?;
    if rule.tool.starts_with("mcp__") || names_some(&rule.tool, tools) {
        return None;
    }
    Some(no_such_tool(name_as_written(name), tools))
}

fn judge(
    check: &mut RuleCheck,
    list: &str,
    sourced: &SourcedRule,
    tools: &[&str],
    servers: &[&str],
) {
    let tool = sourced.rule.tool.as_str();
    if let Some(rest) = tool.strip_prefix("mcp__") {
        let server = rest.split("__").next().unwrap_or(rest);
        if !server.contains('*') && !servers.contains(&server) {
            check.warnings.push(format!(
                "the {list} rule {} (from {}) names the MCP server \"{server}\", which is not \
                 configured: it applies once the server is",
                sourced.rule, sourced.origin
            ));
        }
        return;
    }
    if !names_some(tool, tools) {
        check.errors.push(format!(
            "the {list} rule {} (from {}) {}",
            sourced.rule,
            sourced.origin,
            no_such_tool(tool, tools)
        ));
    }
}

/// Whether `tool` (rein's name, maybe with `*`) names at least one of `tools`.
fn names_some(tool: &str, tools: &[&str]) -> bool {
    if !tool.contains('*') {
        return tools.contains(&tool);
    }
    rein_tools::PathGlob::parse(tool)
        .is_ok_and(|glob| tools.iter().any(|known| glob.is_match(known)))
}

/// `names no tool "Bsh"; did you mean Bash?`
fn no_such_tool(written: &str, tools: &[&str]) -> String {
    // Claude Code's names first: a rule written `Bsh(...)` was meant as `Bash(...)`.
    let mut known: Vec<&str> = Vec::new();
    for name in claude_tool_names() {
        known.push(name);
    }
    known.extend_from_slice(tools);
    match crate::suggest::closest(written, known) {
        Some(name) => format!("names no tool \"{written}\"; did you mean {name}?"),
        None => format!(
            "names no tool \"{written}\"; the tools are: {}",
            tools.join(", ")
        ),
    }
}

/// The tool name of a rule as written (`Bsh` of `Bsh(git push:*)`).
fn name_as_written(text: &str) -> &str {
    text.split('(').next().unwrap_or(text).trim()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permissions::RuleOrigin;

    const TOOLS: [&str; 4] = ["bash", "read_file", "edit_file", "mcp__x__y"];

    fn set(deny: &[&str]) -> RuleSet {
        RuleSet {
            deny: deny
                .iter()
                .map(|text| SourcedRule {
                    rule: Rule::parse(text, None).unwrap(),
                    origin: RuleOrigin::Configured("flag --deny".into()),
                })
                .collect(),
            ..RuleSet::default()
        }
    }

    #[test]
    fn a_misspelled_tool_is_an_error_naming_the_rule_and_the_closest_tool() {
        let check = check_rule_tools(&set(&["Bsh(git push:*)", "Reed(**/.env)"]), &TOOLS, &[]);
        assert_eq!(
            check.errors,
            [
                "the deny rule Bsh(git push:*) (from flag --deny) names no tool \"Bsh\"; did you mean Bash?",
                "the deny rule Reed(**/.env) (from flag --deny) names no tool \"Reed\"; did you mean Read?",
            ]
        );
    }

    #[test]
    fn known_tools_aliases_and_globs_pass() {
        let check = check_rule_tools(
            &set(&["Bash(npm test:*)", "read_file", "edit_*", "Write(src/**)"]),
            &["bash", "read_file", "edit_file", "write_file"],
            &[],
        );
        assert_eq!(check, RuleCheck::default());
        let check = check_rule_tools(&set(&["zzz_*"]), &TOOLS, &[]);
        assert_eq!(check.errors.len(), 1, "{check:?}");
    }

    #[test]
    fn rules_for_unconfigured_mcp_servers_only_warn() {
        let check = check_rule_tools(
            &set(&["mcp__github__create_issue", "mcp__fs", "mcp__*"]),
            &TOOLS,
            &["fs"],
        );
        assert!(check.errors.is_empty());
        assert_eq!(check.warnings.len(), 1, "{check:?}");
        assert!(check.warnings[0].contains("\"github\""), "{check:?}");
    }

    #[test]
    fn a_bare_unknown_name_is_reported() {
        assert_eq!(unknown_tool("bash(ls)", &TOOLS), None);
        let why = unknown_tool("bogus", &TOOLS).unwrap();
        assert!(why.starts_with("names no tool \"bogus\""), "{why}");
    }
}
