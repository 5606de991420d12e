//! A custom command's body made into the request: `$ARGUMENTS` and `$1`… replaced, each
//! `` !`cmd` `` run through the permission pipeline (as the person's own `!cmd` is) and
//! replaced by its output, each `@file` read through read_file and attached.

use tokio_util::sync::CancellationToken;

use super::CustomCommand;
use crate::agent::{Agent, Events};

/// The request a command use gives, and what did not go as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expanded {
    /// What the model gets.
    pub prompt: String,
    /// Commands refused or failed, files not attached: one line each, for the person.
    pub warnings: Vec<String>,
}

/// Expands `command` used with `arguments`. Its `allowed-tools` become "yes for the
/// session" rules first (deny rules still win), so its own commands run without asking.
pub async fn expand(
    agent: &Agent,
    command: &CustomCommand,
    arguments: &str,
    events: &Events,
    cancel: CancellationToken,
) -> Expanded {
    let mut warnings = Vec::new();
    let home = agent.tool_context().config().home_dir.clone();
    for text in &command.allowed_tools {
        match crate::permissions::Rule::parse(text, home.as_deref()) {
            Ok(rule) => agent.allow_for_session(rule),
            Err(e) => warnings.push(format!("/{}: allowed-tools {e}", command.name)),
        }
    }
    let text = substitute_arguments(&command.body, arguments);
    let text = run_commands(agent, &command.name, &text, events, &cancel, &mut warnings).await;
    let prompt = attach_files(agent, &command.name, &text, events, &cancel, &mut warnings).await;
    Expanded { prompt, warnings }
}

/// The words of `arguments`, quotes grouping (`"two words"` is one).
pub fn split_arguments(arguments: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in arguments.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (None, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

/// `$ARGUMENTS` becomes the whole argument text, `$1`…`$9` its words (empty when missing).
/// A body that uses none gets the arguments appended, so they are never lost.
pub fn substitute_arguments(body: &str, arguments: &str) -> String {
    let arguments = arguments.trim();
    let words = split_arguments(arguments);
    let mut out = String::with_capacity(body.len() + arguments.len());
    let mut used = false;
    let mut rest = body;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(arguments);
            used = true;
            rest = tail;
        } else if let Some(digit) = after.chars().next().and_then(|c| c.to_digit(10))
            && digit >= 1
        {
            out.push_str(words.get(digit as usize - 1).map_or("", String::as_str));
            used = true;
            rest = &after[1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    if !used && !arguments.is_empty() {
        out.push_str("\n\nArguments: ");
        out.push_str(arguments);
    }
    out
}

/// Each `` !`cmd` `` replaced by what running it gave (its output, or why it did not run).
async fn run_commands(
    agent: &Agent,
    name: &str,
    text: &str,
    events: &Events,
    cancel: &CancellationToken,
    warnings: &mut Vec<String>,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut count = 0;
    while let Some(at) = rest.find("!`") {
        let after = &rest[at + 2..];
        let Some(end) = after.find('`') else { break };
        out.push_str(&rest[..at]);
        let command = after[..end].trim();
        rest = &after[end + 1..];
        if command.is_empty() {
            continue;
        }
        count += 1;
        let outcome = agent
            .run_direct(
                &format!("command_{name}_{count}"),
                "bash",
                serde_json::json!({ "command": command }),
                events,
                cancel.clone(),
            )
            .await;
        if outcome.is_error {
            warnings.push(format!(
                "/{name}: `{command}` did not run cleanly: {}",
                outcome.content.lines().next().unwrap_or("")
            ));
        }
        out.push_str(outcome.content.trim_end());
    }
    out.push_str(rest);
    out
}

/// Characters that end an `@path` mention when they close it (`see @a.rs, then`).
const TRAILING_PUNCTUATION: &[char] = &[',', '.', ';', ':', '!', '?', ')', ']', '}', '"', '\''];

/// Each `@path` naming a file is read with read_file and attached after the text (the
/// mention keeps the path without its `@`); other `@words` stay as written.
async fn attach_files(
    agent: &Agent,
    name: &str,
    text: &str,
    events: &Events,
    cancel: &CancellationToken,
    warnings: &mut Vec<String>,
) -> String {
    let cwd = agent.tool_context().cwd();
    let mut paths: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        let Some(path) = word.strip_prefix('@') else {
            continue;
        };
        let path = path.trim_end_matches(TRAILING_PUNCTUATION);
        if !path.is_empty() && !paths.iter().any(|p| p == path) && cwd.join(path).is_file() {
            paths.push(path.to_owned());
        }
    }
    let mut body = text.to_owned();
    let mut attached = String::new();
    for (i, path) in paths.iter().enumerate() {
        let outcome = agent
            .run_direct(
                &format!("command_{name}_file_{}", i + 1),
                "read_file",
                serde_json::json!({ "file_path": path }),
                events,
                cancel.clone(),
            )
            .await;
        if outcome.is_error {
            warnings.push(format!(
                "/{name}: @{path} was not attached: {}",
                outcome.content.lines().next().unwrap_or("")
            ));
            continue;
        }
        body = body.replace(&format!("@{path}"), path);
        attached.push_str(&format!(
            "\n\n<attached file=\"{path}\">\n{}\n</attached>",
            outcome.content.trim_end()
        ));
    }
    body.push_str(&attached);
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_substituted_whole_and_by_position() {
        assert_eq!(
            substitute_arguments(
                "Fix issue $1 in $2 ($ARGUMENTS), cost $",
                "42 \"src/a b.rs\""
            ),
            "Fix issue 42 in src/a b.rs (42 \"src/a b.rs\"), cost $"
        );
        assert_eq!(substitute_arguments("Use $3.", "a b"), "Use .");
        assert_eq!(
            substitute_arguments("Review the code.", "carefully"),
            "Review the code.\n\nArguments: carefully"
        );
        assert_eq!(substitute_arguments("No args.", ""), "No args.");
    }

    #[test]
    fn words_group_by_quotes() {
        assert_eq!(split_arguments(" a 'b c'  \"\" d"), ["a", "b c", "", "d"]);
    }
}
