//! MCP servers' prompts as slash commands: `/mcp__<server>__<prompt>` (Claude Code's
//! naming), listed with the file commands, their arguments taken from the words typed.
//!
//! The rule for arguments: a word `key=value` whose key is one of the prompt's arguments sets
//! that argument; the other words fill the arguments not set that way, one word each, in the
//! order the server lists them, and the last of those takes the rest of the line (so a
//! one-argument prompt gets the whole text). Quotes group words (`"New York"`). A required
//! argument left without a value stops the command before anything is sent.
//!
//! What `prompts/get` returns becomes the turn's request: the messages' text in order (a
//! resource inlined or described, an image attached for a model that sees, as for tool
//! results); an assistant-role message is kept in its place, wrapped in
//! `<assistant-message>` tags, since a request is one user message.

use rein_mcp::{McpHub, McpPrompt, PromptArgument, PromptMessage, PromptRole};
use tokio_util::sync::CancellationToken;

use super::{CommandError, CommandSource, CustomCommand, Expanded};
use crate::agent::Agent;

/// The commands of the prompts `hub`'s servers have listed.
pub fn prompt_commands(hub: Option<&McpHub>) -> Vec<CustomCommand> {
    hub.map(McpHub::prompts)
        .unwrap_or_default()
        .into_iter()
        .map(command_of)
        .collect()
}

/// Why a `/mcp__…` name is no prompt to use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptMissing {
    /// The server the name points to is not ready: why.
    ServerDown(String),
    /// No server lists such a prompt: the message, with the closest name when there is one.
    Unknown(String),
}

/// The prompt command `name` (`mcp__server__prompt`, no slash), once the servers have
/// started (each within its `startup_timeout`); for headless runs, which have no second try.
pub async fn find_prompt(
    hub: Option<&McpHub>,
    name: &str,
    cancel: &CancellationToken,
) -> Result<CustomCommand, PromptMissing> {
    let Some(hub) = hub else {
        return Err(PromptMissing::Unknown(format!(
            "unknown command /{name}: no MCP servers are configured"
        )));
    };
    hub.wait_started(cancel).await;
    hub.refresh_prompts().await;
    let commands = prompt_commands(Some(hub));
    if let Some(found) = commands.iter().find(|c| c.name == name) {
        return Ok(found.clone());
    }
    for status in hub.statuses() {
        let prefix = format!(
            "{}{}__",
            rein_mcp::naming::PREFIX,
            rein_mcp::naming::sanitize(&status.name)
        );
        if name.starts_with(&prefix) && status.state != rein_mcp::ServerState::Ready {
            return Err(PromptMissing::ServerDown(format!(
                "/{name} cannot be used: MCP server `{}` is not available ({}{})",
                status.name,
                <&str>::from(&status.state),
                status
                    .last_error
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default()
            )));
        }
    }
    let names: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
    let hint = match crate::suggest::closest(name, names.iter().copied()) {
        Some(close) => format!("; did you mean /{close}?"),
        None if names.is_empty() => "; the MCP servers list no prompts".to_owned(),
        None => format!("; the MCP prompts are: /{}", names.join(", /")),
    };
    Err(PromptMissing::Unknown(format!(
        "unknown command /{name}{hint}"
    )))
}

fn command_of(prompt: McpPrompt) -> CustomCommand {
    let description = prompt
        .description
        .clone()
        .unwrap_or_else(|| format!("prompt `{}` of MCP server `{}`", prompt.name, prompt.server));
    CustomCommand {
        name: prompt.command,
        description,
        argument_hint: argument_hint(&prompt.arguments),
        allowed_tools: Vec::new(),
        model: None,
        body: String::new(),
        source: CommandSource::McpPrompt {
            server: prompt.server,
            prompt: prompt.name,
            arguments: prompt.arguments,
        },
    }
}

/// `<name> [style]`: required arguments in angle brackets, optional ones in square brackets.
pub fn argument_hint(arguments: &[PromptArgument]) -> Option<String> {
    let words: Vec<String> = arguments
        .iter()
        .map(|a| {
            if a.required {
                format!("<{}>", a.name)
            } else {
                format!("[{}]", a.name)
            }
        })
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// One word of what was typed: where it starts, and its text without quotes.
struct Word {
    start: usize,
    text: String,
}

fn words(text: &str) -> Vec<Word> {
    let mut words = Vec::new();
    let mut current: Option<Word> = None;
    let mut quote: Option<char> = None;
    for (at, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => current
                .get_or_insert(Word {
                    start: at,
                    text: String::new(),
                })
                .text
                .push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                current.get_or_insert(Word {
                    start: at,
                    text: String::new(),
                });
            }
            (None, c) if c.is_whitespace() => words.extend(current.take()),
            (None, c) => current
                .get_or_insert(Word {
                    start: at,
                    text: String::new(),
                })
                .text
                .push(c),
        }
    }
    words.extend(current);
    words
}

/// The prompt's arguments from `typed` (see the module's rule), or why the command cannot
/// be sent, naming what is missing.
pub fn map_arguments(
    command: &str,
    arguments: &[PromptArgument],
    typed: &str,
) -> Result<Vec<(String, String)>, String> {
    let typed = typed.trim();
    let usage = match argument_hint(arguments) {
        Some(hint) => format!("/{command} {hint}"),
        None => format!("/{command}"),
    };
    let mut named: Vec<(String, String)> = Vec::new();
    let mut positional: Vec<Word> = Vec::new();
    for word in words(typed) {
        let by_name = word.text.split_once('=').filter(|(key, _)| {
            arguments.iter().any(|a| a.name == *key) && !named.iter().any(|(k, _)| k == key)
        });
        match by_name {
            Some((key, value)) => named.push((key.to_owned(), value.to_owned())),
            None => positional.push(word),
        }
    }
    let open: Vec<&PromptArgument> = arguments
        .iter()
        .filter(|a| !named.iter().any(|(k, _)| *k == a.name))
        .collect();
    let mut values = named;
    let mut words = positional.into_iter();
    for (index, argument) in open.iter().enumerate() {
        let last = index + 1 == open.len();
        let Some(first) = words.next() else { break };
        let rest: Vec<Word> = if last {
            words.by_ref().collect()
        } else {
            Vec::new()
        };
        let value = match rest.last() {
            // The rest of the line as typed, from this word on (named words come first).
            Some(_) if rest_is_tail(typed, first.start, &rest) => typed[first.start..].to_owned(),
            Some(_) => std::iter::once(first.text)
                .chain(rest.into_iter().map(|w| w.text))
                .collect::<Vec<_>>()
                .join(" "),
            None => first.text,
        };
        values.push((argument.name.clone(), value));
    }
    let extra: Vec<String> = words.map(|w| w.text).collect();
    if !extra.is_empty() {
        let takes = match arguments.len() {
            0 => "no arguments".to_owned(),
            1 => "one argument".to_owned(),
            n => format!("{n} arguments"),
        };
        return Err(format!(
            "/{command} takes {takes}: `{}` is left over (usage: {usage})",
            extra.join(" ")
        ));
    }
    let missing: Vec<String> = arguments
        .iter()
        .filter(|a| a.required && !values.iter().any(|(k, v)| *k == a.name && !v.is_empty()))
        .map(|a| match &a.description {
            Some(about) => format!("`{}` ({about})", a.name),
            None => format!("`{}`", a.name),
        })
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "/{command} needs the argument{} {}: nothing was sent (usage: {usage}; or name it: {}=...)",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", "),
            arguments
                .iter()
                .find(|a| a.required)
                .map_or("name", |a| a.name.as_str()),
        ));
    }
    Ok(values)
}

/// Whether the words after `start` in `typed` are just `rest` (no named word among them),
/// so the raw text can be kept as typed.
fn rest_is_tail(typed: &str, start: usize, rest: &[Word]) -> bool {
    let tail_words = words(&typed[start..]);
    tail_words.len() == rest.len() + 1
}

/// The request a prompt's messages make (see the module's documentation).
pub fn prompt_request(messages: &[PromptMessage]) -> String {
    messages
        .iter()
        .map(|m| match m.role {
            PromptRole::User => m.text.clone(),
            PromptRole::Assistant => {
                format!("<assistant-message>\n{}\n</assistant-message>", m.text)
            }
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Gets the prompt of `command` with the arguments typed and makes it the request; images
/// go with it to a model that sees. The error (nothing sent) is for the person.
pub(super) async fn expand_prompt(
    agent: &mut Agent,
    command: &CustomCommand,
    typed: &str,
    cancel: &CancellationToken,
) -> Result<Expanded, CommandError> {
    let CommandSource::McpPrompt {
        server,
        prompt,
        arguments,
    } = &command.source
    else {
        return Err(CommandError::Failed(format!(
            "/{} is no MCP prompt",
            command.name
        )));
    };
    let values = map_arguments(&command.name, arguments, typed).map_err(CommandError::Usage)?;
    let hub = agent.mcp_hub().cloned().ok_or_else(|| {
        CommandError::Failed(format!(
            "/{}: this session has no MCP servers",
            command.name
        ))
    })?;
    let vision = agent.tool_context().config().vision;
    let content = hub
        .get_prompt(server, prompt, &values, vision, cancel)
        .await
        .map_err(|why| CommandError::Failed(format!("/{} was not sent: {why}", command.name)))?;
    let request = prompt_request(&content.messages);
    if request.trim().is_empty() {
        return Err(CommandError::Failed(format!(
            "/{} was not sent: MCP server `{server}` gave prompt `{prompt}` with no text",
            command.name
        )));
    }
    agent.attach_images(crate::agent::llm_images(content.images));
    Ok(Expanded {
        prompt: request,
        warnings: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> Vec<PromptArgument> {
        let arg = |name: &str, required: bool| PromptArgument {
            name: name.into(),
            description: Some(format!("the {name}")),
            required,
        };
        vec![arg("city", true), arg("state", false), arg("notes", false)]
    }

    fn mapped(typed: &str) -> Result<Vec<(String, String)>, String> {
        map_arguments("mcp__s__weather", &args(), typed)
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn words_fill_the_arguments_in_order_and_the_last_takes_the_rest() {
        assert_eq!(mapped("Paris").unwrap(), pairs(&[("city", "Paris")]));
        assert_eq!(
            mapped("\"New York\" NY bring an umbrella, \"maybe\"").unwrap(),
            pairs(&[
                ("city", "New York"),
                ("state", "NY"),
                ("notes", "bring an umbrella, \"maybe\"")
            ])
        );
    }

    #[test]
    fn key_value_words_name_their_argument_and_the_rest_fill_the_others() {
        assert_eq!(
            mapped("state=Texas Austin").unwrap(),
            pairs(&[("state", "Texas"), ("city", "Austin")])
        );
        assert_eq!(
            mapped("notes=\"a b\" city=Rome").unwrap(),
            pairs(&[("notes", "a b"), ("city", "Rome")])
        );
        // A key that is no argument is a value like any other.
        assert_eq!(mapped("x=1").unwrap(), pairs(&[("city", "x=1")]));
    }

    #[test]
    fn a_missing_required_argument_is_named() {
        let why = mapped("").unwrap_err();
        assert!(
            why.contains("needs the argument `city` (the city)"),
            "{why}"
        );
        assert!(
            why.contains("/mcp__s__weather <city> [state] [notes]"),
            "{why}"
        );
        let why = mapped("state=TX").unwrap_err();
        assert!(why.contains("`city`"), "{why}");
    }

    #[test]
    fn words_for_a_prompt_without_arguments_are_refused() {
        let why = map_arguments("mcp__s__plain", &[], "extra words").unwrap_err();
        assert!(why.contains("`extra words` is left over"), "{why}");
        assert!(
            map_arguments("mcp__s__plain", &[], "  ")
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn assistant_messages_keep_their_place_marked() {
        let m = |role, text: &str| PromptMessage {
            role,
            text: text.into(),
        };
        assert_eq!(
            prompt_request(&[
                m(PromptRole::User, "2+2?"),
                m(PromptRole::Assistant, "4"),
                m(PromptRole::User, "times 3?")
            ]),
            "2+2?\n\n<assistant-message>\n4\n</assistant-message>\n\ntimes 3?"
        );
    }
}
