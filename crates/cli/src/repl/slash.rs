//! Slash commands: typed at the prompt, handled by rein, never sent to the model.

use rein_core::commands::CustomCommand;

use crate::render::Style;

/// One slash command, for /help and completion.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Command {
    /// `/name`.
    pub(crate) name: &'static str,
    /// What follows it, as /help shows it (empty: nothing).
    pub(crate) argument: &'static str,
    /// What it does.
    pub(crate) about: &'static str,
}

/// Every slash command rein knows, in /help's order: what the REPL completes and what `rein
/// acp` advertises to editors. Commands defined in files join here.
pub(crate) fn available() -> Vec<Command> {
    COMMANDS.to_vec()
}

/// Every built-in slash command, in /help's order.
pub(crate) const COMMANDS: &[Command] = &[
    Command {
        name: "/help",
        argument: "",
        about: "this list",
    },
    Command {
        name: "/model",
        argument: "[name]",
        about: "show or switch the model (the provider follows)",
    },
    Command {
        name: "/tokens",
        argument: "",
        about: "tokens used in this session",
    },
    Command {
        name: "/cost",
        argument: "",
        about: "what this session cost, when the price is known",
    },
    Command {
        name: "/context",
        argument: "",
        about: "how much of the context window is used, and by what",
    },
    Command {
        name: "/init",
        argument: "",
        about: "have the model study the project and write AGENTS.md",
    },
    Command {
        name: "/compact",
        argument: "[focus]",
        about: "summarise older turns now, [focus] kept in detail",
    },
    Command {
        name: "/diff",
        argument: "",
        about: "files changed in this session, with their diffs",
    },
    Command {
        name: "/sessions",
        argument: "",
        about: "the 20 newest sessions in this directory",
    },
    Command {
        name: "/resume",
        argument: "[ID]",
        about: "continue another session (no id: pick one)",
    },
    Command {
        name: "/undo",
        argument: "",
        about: "undo the last turn's file changes (shows the diff, asks)",
    },
    Command {
        name: "/rewind",
        argument: "[N]",
        about: "list turns; restore code and/or talk to before turn N",
    },
    Command {
        name: "/fork",
        argument: "[N]",
        about: "a new session from this one (from before turn N)",
    },
    Command {
        name: "/clear",
        argument: "",
        about: "start a new session",
    },
    Command {
        name: "/permissions",
        argument: "[mode]",
        about: "the permission mode and rules; change the mode",
    },
    Command {
        name: "/todos",
        argument: "",
        about: "the model's todo list",
    },
    Command {
        name: "/mcp",
        argument: "",
        about: "the MCP servers: state, tools, last error, log",
    },
    Command {
        name: "/exit",
        argument: "",
        about: "leave rein (also /quit, Ctrl+D)",
    },
    Command {
        name: "/quit",
        argument: "",
        about: "leave rein",
    },
];

/// The permission modes `/permissions` takes.
pub(crate) const MODES: &[&str] = &["default", "accept-edits", "plan", "auto", "yolo"];

/// A slash command as typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Slash {
    Help,
    Model(Option<String>),
    Tokens,
    Cost,
    Context,
    Compact(Option<String>),
    Init,
    Diff,
    Sessions,
    Resume(Option<String>),
    Undo,
    Rewind(Option<String>),
    Fork(Option<String>),
    Clear,
    Permissions(Option<String>),
    Todos,
    Mcp,
    Exit,
    /// Not a command rein knows.
    Unknown(String),
}

/// The command in `input`, or `None` when it is a request (a path like `/usr/bin/x` is one).
pub(crate) fn parse(input: &str) -> Option<Slash> {
    let input = input.trim();
    let rest = input.strip_prefix('/')?;
    let (name, argument) = match rest.split_once(char::is_whitespace) {
        Some((name, argument)) => (
            name,
            Some(argument.trim().to_owned()).filter(|a| !a.is_empty()),
        ),
        None => (rest, None),
    };
    if name.is_empty() || name.contains('/') {
        return None;
    }
    Some(match name {
        "help" | "?" => Slash::Help,
        "model" => Slash::Model(argument),
        "tokens" => Slash::Tokens,
        "cost" => Slash::Cost,
        "context" => Slash::Context,
        "compact" => Slash::Compact(argument),
        "init" => Slash::Init,
        "diff" => Slash::Diff,
        "sessions" => Slash::Sessions,
        "resume" => Slash::Resume(argument),
        "undo" => Slash::Undo,
        "rewind" => Slash::Rewind(argument),
        "fork" => Slash::Fork(argument),
        "clear" | "new" => Slash::Clear,
        "permissions" => Slash::Permissions(argument),
        "todos" => Slash::Todos,
        "mcp" => Slash::Mcp,
        "exit" | "quit" => Slash::Exit,
        other => Slash::Unknown(format!("/{other}")),
    })
}

/// The text of /help, the custom commands after the built-in ones.
pub(crate) fn help(s: Style, custom: &[CustomCommand]) -> String {
    let mut out = String::from("Commands:\n");
    let line = |out: &mut String, usage: &str, about: &str| {
        out.push_str(&format!(
            "  {}{}{}\n",
            s.bold(usage),
            " ".repeat(22usize.saturating_sub(usage.chars().count()).max(1)),
            about
        ));
    };
    for command in COMMANDS {
        let usage = if command.argument.is_empty() {
            command.name.to_owned()
        } else {
            format!("{} {}", command.name, command.argument)
        };
        line(&mut out, &usage, command.about);
    }
    let is_prompt = |c: &&CustomCommand| {
        matches!(
            c.source,
            rein_core::commands::CommandSource::McpPrompt { .. }
        )
    };
    let (prompts, files): (Vec<&CustomCommand>, Vec<&CustomCommand>) =
        custom.iter().partition(is_prompt);
    for (title, list) in [("Custom commands:", files), ("MCP prompts:", prompts)] {
        if list.is_empty() {
            continue;
        }
        out.push_str(&format!("\n{}\n", s.bold(title)));
        for command in list {
            let usage = match &command.argument_hint {
                Some(hint) => format!("/{} {hint}", command.name),
                None => format!("/{}", command.name),
            };
            line(
                &mut out,
                &usage,
                &crate::render::neutralize(&command.description),
            );
        }
    }
    out.push_str(&format!("\n{}\n", s.bold("Input:")));
    for (keys, about) in [
        (
            "@path",
            "attach a file to the request (Tab completes paths)",
        ),
        (
            "!command",
            "run a command; the output goes with the next request",
        ),
        (
            "Alt+Enter, \\ at the end",
            "a new line; a paste keeps its lines",
        ),
        ("Ctrl+R", "search the history"),
        ("Ctrl+O", "the last command's whole output"),
        ("Ctrl+C", "stop the turn; on an empty line twice: leave"),
        ("Ctrl+D", "leave"),
    ] {
        out.push_str(&format!(
            "  {}{}{about}\n",
            s.bold(keys),
            " ".repeat(26usize.saturating_sub(keys.chars().count()))
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_and_their_arguments() {
        assert_eq!(parse("/help"), Some(Slash::Help));
        assert_eq!(
            parse(" /model  gpt-4o "),
            Some(Slash::Model(Some("gpt-4o".into())))
        );
        assert_eq!(parse("/model"), Some(Slash::Model(None)));
        assert_eq!(
            parse("/compact keep the API"),
            Some(Slash::Compact(Some("keep the API".into())))
        );
        assert_eq!(parse("/quit"), Some(Slash::Exit));
        assert_eq!(parse("/mcp"), Some(Slash::Mcp));
        assert_eq!(parse("/x"), Some(Slash::Unknown("/x".into())));
        assert_eq!(parse("hello /help"), None);
        assert_eq!(parse("/usr/bin/env is broken"), None);
    }

    #[test]
    fn help_at_80_and_120_columns() {
        // The list is narrower than 80 columns: both widths show the same text.
        let help = help(Style::plain(), &[]);
        assert!(help.lines().all(|l| l.chars().count() <= 80), "{help}");
        insta::assert_snapshot!("help_80", help);
        insta::assert_snapshot!("help_120", help);
    }
}
