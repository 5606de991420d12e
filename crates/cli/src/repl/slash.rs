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

impl Command {
    const fn new(name: &'static str, argument: &'static str, about: &'static str) -> Self {
        Command {
            name,
            argument,
            about,
        }
    }
}

/// Every slash command rein knows, in /help's order: what the REPL completes and what `rein
/// acp` advertises to editors. Commands defined in files join here.
pub(crate) fn available() -> Vec<Command> {
    COMMANDS.to_vec()
}

/// Every built-in slash command, in /help's order.
pub(crate) const COMMANDS: &[Command] = &[
    Command::new("/help", "", "this list"),
    Command::new(
        "/model",
        "[name]",
        "show or switch the model (the provider follows)",
    ),
    Command::new("/tokens", "", "tokens used in this session"),
    Command::new(
        "/cost",
        "",
        "what this session cost, when the price is known",
    ),
    Command::new(
        "/context",
        "",
        "how much of the context window is used, and by what",
    ),
    Command::new(
        "/init",
        "",
        "have the model study the project and write AGENTS.md",
    ),
    Command::new(
        "/compact",
        "[focus]",
        "summarise older turns now, [focus] kept in detail",
    ),
    Command::new(
        "/diff",
        "",
        "files changed in this session, with their diffs",
    ),
    Command::new("/sessions", "", "the 20 newest sessions in this directory"),
    Command::new(
        "/resume",
        "[ID]",
        "continue another session (no id: pick one)",
    ),
    Command::new(
        "/undo",
        "",
        "undo the last turn's file changes (shows the diff, asks)",
    ),
    Command::new(
        "/rewind",
        "[N]",
        "list turns; restore code and/or talk to before turn N",
    ),
    Command::new(
        "/fork",
        "[N]",
        "a new session from this one (from before turn N)",
    ),
    Command::new("/clear", "", "start a new session"),
    Command::new(
        "/permissions",
        "[mode]",
        "the permission mode and rules; change the mode",
    ),
    Command::new("/todos", "", "the model's todo list"),
    Command::new("/mcp", "", "the MCP servers: state, tools, last error, log"),
    Command::new("/exit", "", "leave rein (also /quit, Ctrl+D)"),
    Command::new("/quit", "", "leave rein"),
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

/// Where the descriptions of /help start, at least (two columns of indent before it).
const HELP_MIN_COLUMN: usize = 22;
/// A command wider than this has its description on the next line, so that one long MCP
/// prompt does not push every description off a narrow terminal.
const HELP_MAX_COLUMN: usize = 40;

/// The text of /help, the custom commands after the built-in ones; every command's
/// description in one column, measured in display width over all of them.
pub(crate) fn help(s: Style, custom: &[CustomCommand]) -> String {
    use unicode_width::UnicodeWidthStr;
    let is_prompt = |c: &&CustomCommand| {
        matches!(
            c.source,
            rein_core::commands::CommandSource::McpPrompt { .. }
        )
    };
    let (prompts, files): (Vec<&CustomCommand>, Vec<&CustomCommand>) =
        custom.iter().partition(is_prompt);
    let usage_of = |command: &CustomCommand| {
        let usage = match &command.argument_hint {
            Some(hint) => format!("/{} {hint}", command.name),
            None => format!("/{}", command.name),
        };
        crate::render::neutralize(&usage).into_owned()
    };
    // `/quit` is named on `/exit`'s line; it stays in COMMANDS for Tab.
    let built_in: Vec<(String, String)> = COMMANDS
        .iter()
        .filter(|command| command.name != "/quit")
        .map(|command| {
            let usage = if command.argument.is_empty() {
                command.name.to_owned()
            } else {
                format!("{} {}", command.name, command.argument)
            };
            (usage, command.about.to_owned())
        })
        .collect();
    let listed = |list: &[&CustomCommand]| -> Vec<(String, String)> {
        list.iter()
            .map(|c| {
                (
                    usage_of(c),
                    crate::render::neutralize(&c.description).into_owned(),
                )
            })
            .collect()
    };
    let sections = [
        ("Commands:", built_in),
        ("Custom commands:", listed(&files)),
        ("MCP prompts:", listed(&prompts)),
    ];
    // Two spaces at least between a command and its description.
    let column = (sections.iter())
        .flat_map(|(_, lines)| lines.iter().map(|(usage, _)| usage.width() + 2))
        .filter(|width| *width <= HELP_MAX_COLUMN)
        .fold(HELP_MIN_COLUMN, usize::max);
    let mut out = String::new();
    for (title, lines) in &sections {
        if lines.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!("{}\n", s.bold(title)));
        for (usage, about) in lines {
            let width = usage.width();
            if width + 2 > column {
                out.push_str(&format!(
                    "  {}\n  {}{about}\n",
                    s.bold(usage),
                    " ".repeat(column)
                ));
            } else {
                out.push_str(&format!(
                    "  {}{}{about}\n",
                    s.bold(usage),
                    " ".repeat(column - width)
                ));
            }
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

    fn command(name: &str, hint: Option<&str>, about: &str, prompt: bool) -> CustomCommand {
        CustomCommand {
            name: name.into(),
            description: about.into(),
            argument_hint: hint.map(str::to_owned),
            allowed_tools: Vec::new(),
            model: None,
            body: String::new(),
            source: if prompt {
                rein_core::commands::CommandSource::McpPrompt {
                    server: "srv".into(),
                    prompt: name.into(),
                    arguments: Vec::new(),
                }
            } else {
                rein_core::commands::CommandSource::File("x.md".into())
            },
        }
    }

    #[test]
    fn mcp_prompts_line_up_with_the_commands_by_display_width() {
        let custom = [
            command("review", Some("[file]"), "review a file", false),
            command(
                "mcp__srv__greet",
                Some("<name> [style]"),
                "Greets someone",
                true,
            ),
            command("mcp__srv__été", Some("<名前>"), "wide characters", true),
            command(
                "mcp__srv__a_prompt_with_a_very_long_name",
                Some("<first> <second> [third]"),
                "too wide to share the column",
                true,
            ),
        ];
        let help = help(Style::plain(), &custom);
        insta::assert_snapshot!(help);
        // Every description starts in the same display column.
        let column = |line: &str, about: &str| {
            let at = line.find(about).unwrap();
            unicode_width::UnicodeWidthStr::width(&line[..at])
        };
        let line = |start: &str| help.lines().find(|l| l.starts_with(start)).unwrap();
        let expected = column(line("  /help "), "this list");
        assert_eq!(column(line("  /review"), "review a file"), expected);
        assert_eq!(
            column(line("  /mcp__srv__greet"), "Greets someone"),
            expected
        );
        assert_eq!(
            column(line("  /mcp__srv__été"), "wide characters"),
            expected
        );
        let long = help
            .lines()
            .position(|l| l.contains("very_long_name"))
            .unwrap();
        let next = help.lines().nth(long + 1).unwrap();
        assert_eq!(column(next, "too wide"), expected);
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
