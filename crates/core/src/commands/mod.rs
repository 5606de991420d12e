//! Custom slash commands, as Claude Code writes them: a Markdown file per command in
//! `.rein/commands/`, `.claude/commands/` (the project's) and `$REIN_HOME/commands/` (the
//! person's), `name.md` giving `/name` and `dir/name.md` giving `/dir:name`, with optional
//! front matter (`description`, `argument-hint`, `allowed-tools`, `model`).
//!
//! [`available_commands`] is the one list every front-end shows (the REPL's `/help` and Tab,
//! headless `-p "/name args"`, the ACP server's advertised commands), joined by the MCP
//! servers' prompts ([`with_prompts`]); [`prepare`] turns a use of one into the request the
//! model gets ($ARGUMENTS, `$1`…, `` !`cmd` ``, `@file`; or the prompt's messages).

mod expand;
mod prompts;

pub use prompts::{
    PromptMissing, argument_hint, find_prompt, map_arguments, prompt_commands, prompt_request,
};

/// The request `/init` sends: study the project read-only, then write (or improve) its
/// AGENTS.md, which the person approves.
pub fn init_prompt(project_root: &Path) -> String {
    let file = project_root.join("AGENTS.md");
    let action = if file.is_file() {
        format!(
            "An AGENTS.md exists at {}: read it first, keep what is right, correct what the \
             repository contradicts and add what is missing, with edit_file (never rewrite it \
             blindly).",
            file.display()
        )
    } else {
        format!("Write the file {} with write_file.", file.display())
    };
    include_str!("init.md").replace("{action}", &action)
}

use std::path::{Path, PathBuf};

/// The rules `/init` runs under (see `Agent::ask_first`): writing or editing AGENTS.md asks
/// first in every mode, so the person always sees the file before it is written.
pub fn init_ask_rules(project_root: &Path) -> Vec<crate::permissions::Rule> {
    let file = project_root.join("AGENTS.md");
    ["write_file", "edit_file"]
        .iter()
        .filter_map(|tool| {
            crate::permissions::Rule::parse(&format!("{tool}({})", file.display()), None).ok()
        })
        .collect()
}

pub use expand::{Expanded, expand, split_arguments, substitute_arguments};

/// Where a custom command comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandSource {
    /// A Markdown file.
    File(PathBuf),
    /// A prompt of an MCP server (`/mcp__server__prompt`).
    McpPrompt {
        /// The server's name.
        server: String,
        /// The prompt's name.
        prompt: String,
        /// Its arguments, in the server's order.
        arguments: Vec<rein_mcp::PromptArgument>,
    },
}

/// One custom slash command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomCommand {
    /// The name without the slash (`review`, `frontend:test`).
    pub name: String,
    /// What it does, for `/help` (front matter, else the body's first line).
    pub description: String,
    /// What the arguments are (`[file] [focus]`), from `argument-hint`.
    pub argument_hint: Option<String>,
    /// Rules the command's own calls may run under without asking (`allowed-tools`).
    pub allowed_tools: Vec<String>,
    /// The model the command asks for (`model`).
    pub model: Option<String>,
    /// The body: the request, before substitution.
    pub body: String,
    /// Its file, or its MCP server.
    pub source: CommandSource,
}

/// Where commands are looked for, first wins for a name: the project's `.rein/commands`,
/// its `.claude/commands`, then the person's `$REIN_HOME/commands`.
pub fn command_dirs(project_root: &Path, rein_home: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs = vec![
        project_root.join(".rein").join("commands"),
        project_root.join(".claude").join("commands"),
    ];
    dirs.extend(rein_home.map(|home| home.join("commands")));
    dirs
}

/// The built-in slash commands' names (a custom one by such a name is skipped: the built-in
/// one answers).
pub const BUILT_IN_NAMES: [&str; 21] = [
    "help",
    "?",
    "model",
    "tokens",
    "cost",
    "context",
    "compact",
    "diff",
    "sessions",
    "resume",
    "undo",
    "rewind",
    "fork",
    "clear",
    "new",
    "permissions",
    "todos",
    "mcp",
    "exit",
    "quit",
    "init",
];

/// Every custom command of `dirs` (see [`command_dirs`]), sorted by name; warnings name the
/// files skipped and why.
pub fn load_commands(dirs: &[PathBuf]) -> (Vec<CustomCommand>, Vec<String>) {
    let mut commands: Vec<CustomCommand> = Vec::new();
    let mut warnings = Vec::new();
    for dir in dirs {
        let mut files = Vec::new();
        collect_markdown(dir, dir, 0, &mut files);
        files.sort();
        for (name, path) in files {
            if commands.iter().any(|c| c.name == name) {
                continue;
            }
            if BUILT_IN_NAMES.contains(&name.as_str()) {
                warnings.push(format!(
                    "command {} skipped: /{name} is a built-in command",
                    path.display()
                ));
                continue;
            }
            match read_command(&path, name) {
                Ok((command, unknown)) => {
                    warnings.extend(unknown.into_iter().map(|key| {
                        format!(
                            "command {}: front matter key \"{key}\" is not supported and was \
                             ignored (rein reads description, argument-hint, allowed-tools, \
                             model)",
                            path.display()
                        )
                    }));
                    commands.push(command);
                }
                Err(why) => warnings.push(format!("command {} skipped: {why}", path.display())),
            }
        }
    }
    commands.sort_by(|a, b| a.name.cmp(&b.name));
    (commands, warnings)
}

/// How deep subdirectories of a commands directory are read.
const MAX_DEPTH: usize = 4;

/// The `.md` files below `dir`, each with its command name (`sub:name`).
fn collect_markdown(root: &Path, dir: &Path, depth: usize, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() && depth < MAX_DEPTH {
            collect_markdown(root, &path, depth + 1, out);
            continue;
        }
        if path.extension().is_none_or(|ext| ext != "md") || !path.is_file() {
            continue;
        }
        let Ok(relative) = path
            .with_extension("")
            .strip_prefix(root)
            .map(Path::to_path_buf)
        else {
            continue;
        };
        let parts: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let name = parts.join(":");
        if is_command_name(&name) {
            out.push((name, path));
        }
    }
}

/// Names a person can type after `/`: letters, digits, `-`, `_`, `.`, `:`.
fn is_command_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || "-_.:".contains(c))
}

/// Reads one command file (front matter is optional), with the front matter keys rein does
/// not support.
fn read_command(path: &Path, name: String) -> Result<(CustomCommand, Vec<String>), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let (fields, body) = if text.trim_start().starts_with("---") {
        let doc = crate::frontmatter::parse(&text).map_err(|e| e.to_string())?;
        (doc.fields, doc.body)
    } else {
        (Default::default(), text.trim().to_owned())
    };
    let unknown: Vec<String> = (fields.keys())
        .filter(|key| {
            !["description", "argument-hint", "allowed-tools", "model"].contains(&key.as_str())
        })
        .cloned()
        .collect();
    let text = |key: &str| {
        fields
            .get(key)
            .map(crate::frontmatter::Value::text)
            .filter(|t| !t.trim().is_empty())
    };
    let description = text("description").unwrap_or_else(|| {
        let first = body.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        let first = first.trim().trim_start_matches('#').trim();
        match first.char_indices().nth(60) {
            Some((cut, _)) => format!("{}…", &first[..cut]),
            None => first.to_owned(),
        }
    });
    let allowed_tools = fields
        .get("allowed-tools")
        .map(crate::frontmatter::Value::items)
        .unwrap_or_default();
    for rule in &allowed_tools {
        crate::permissions::Rule::parse(rule, None).map_err(|e| format!("allowed-tools: {e}"))?;
    }
    // YAML reads `[file]` as a list; the hint shows it as written.
    let argument_hint = fields.get("argument-hint").map(|value| match value {
        crate::frontmatter::Value::List(items) => (items.iter())
            .map(|item| format!("[{item}]"))
            .collect::<Vec<_>>()
            .join(" "),
        crate::frontmatter::Value::Text(text) => text.clone(),
    });
    let command = CustomCommand {
        name,
        description,
        argument_hint,
        allowed_tools,
        model: text("model"),
        body,
        source: CommandSource::File(path.to_path_buf()),
    };
    Ok((command, unknown))
}

/// The custom commands of a project: the one list the REPL, headless runs and the ACP
/// server offer.
pub fn available_commands(
    project_root: &Path,
    rein_home: Option<&Path>,
) -> (Vec<CustomCommand>, Vec<String>) {
    load_commands(&command_dirs(project_root, rein_home))
}

/// The file commands, then the MCP prompts of `hub` whose names no file command has.
pub fn with_prompts(files: &[CustomCommand], hub: Option<&rein_mcp::McpHub>) -> Vec<CustomCommand> {
    let mut all = files.to_vec();
    for prompt in prompt_commands(hub) {
        if !all.iter().any(|c| c.name == prompt.name) {
            all.push(prompt);
        }
    }
    all
}

/// Why a command use sends nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    /// What was typed does not fit the command (a required argument missing, words left
    /// over): the person can correct it.
    #[error("{0}")]
    Usage(String),
    /// The command could not be carried out (its server down, its prompt refused).
    #[error("{0}")]
    Failed(String),
}

/// The request a use of `command` with `arguments` makes: a file command expanded (its
/// problems in the warnings), an MCP prompt fetched. `Err`: nothing is to be sent, and why
/// (a missing argument, a server down, a prompt that failed).
pub async fn prepare(
    agent: &mut crate::agent::Agent,
    command: &CustomCommand,
    arguments: &str,
    events: &crate::agent::Events,
    cancel: tokio_util::sync::CancellationToken,
) -> Result<Expanded, CommandError> {
    match &command.source {
        CommandSource::File(_) => Ok(expand(agent, command, arguments, events, cancel).await),
        CommandSource::McpPrompt { .. } => {
            prompts::expand_prompt(agent, command, arguments, &cancel).await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_improves_an_existing_agents_md_instead_of_overwriting_it() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(init_prompt(tmp.path()).contains("with write_file"));
        std::fs::write(tmp.path().join("AGENTS.md"), "old").unwrap();
        let prompt = init_prompt(tmp.path());
        assert!(
            prompt.contains("read it first") && prompt.contains("edit_file"),
            "{prompt}"
        );
        assert!(!prompt.contains("{action}"));
    }

    #[test]
    fn files_become_commands_with_front_matter_and_subdirectories() {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path();
        let write = |path: &str, text: &str| {
            let path = project.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            ".claude/commands/review.md",
            "---\ndescription: Review a file\nargument-hint: [file]\nallowed-tools: Bash(git diff:*), Read\nmodel: m1\n---\nReview $ARGUMENTS\n",
        );
        write(
            ".claude/commands/frontend/test.md",
            "# Run the UI tests\nnpm test\n",
        );
        write(".rein/commands/review.md", "Rein's own review of $1\n");
        write(".claude/commands/help.md", "shadowing\n");
        write(".claude/commands/bad.md", "---\ncolour: red\n---\nx\n");
        let (commands, warnings) = load_commands(&command_dirs(project, None));
        let names: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["bad", "frontend:test", "review"]);
        assert_eq!(commands[1].description, "Run the UI tests");
        // The project's .rein wins over its .claude.
        assert_eq!(commands[2].body, "Rein's own review of $1");
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(
            warnings.iter().any(|w| w.contains("built-in")),
            "{warnings:?}"
        );
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("\"colour\" is not supported")),
            "{warnings:?}"
        );

        std::fs::remove_file(project.join(".rein/commands/review.md")).unwrap();
        let (commands, _) = load_commands(&command_dirs(project, None));
        let review = commands.iter().find(|c| c.name == "review").unwrap();
        assert_eq!(review.description, "Review a file");
        assert_eq!(review.argument_hint.as_deref(), Some("[file]"));
        assert_eq!(review.allowed_tools, ["Bash(git diff:*)", "Read"]);
        assert_eq!(review.model.as_deref(), Some("m1"));
    }
}
