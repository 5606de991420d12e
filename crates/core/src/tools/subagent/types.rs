//! Agent types: Markdown files with front matter (`name`, `description`, `tools`, `model`,
//! `max_rounds`; the body is the sub-agent's instructions), Claude Code's format. Read from
//! the project's `.rein/agents/` and `.claude/agents/`, then `$REIN_HOME/agents/`; the first
//! of a name wins. A file that cannot be read is skipped with a warning naming it. The
//! built-in `explore` type only reads.

use std::path::{Path, PathBuf};

use crate::frontmatter;

/// The built-in read-only type.
pub const EXPLORE: &str = "explore";

/// One kind of sub-agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentType {
    /// The name the model gives as `agent_type`.
    pub name: String,
    /// What it is for, listed in the tool's description.
    pub description: String,
    /// The tools it may use, by rein's names (`None`: all but `agent`).
    pub tools: Option<Vec<String>>,
    /// Only read-only tools (the built-in `explore`).
    pub read_only: bool,
    /// The model it runs on (`None`: the parent's).
    pub model: Option<String>,
    /// Its round limit (`None`: the default).
    pub max_rounds: Option<u32>,
    /// Its instructions, added to the sub-agent's system prompt.
    pub prompt: String,
    /// The file it came from (`None` for the built-in one).
    pub source: Option<PathBuf>,
}

impl AgentType {
    /// The built-in `explore` type.
    pub fn explore() -> Self {
        AgentType {
            name: EXPLORE.to_owned(),
            description: "read-only search of the code".to_owned(),
            tools: None,
            read_only: true,
            model: None,
            max_rounds: None,
            prompt: "You explore a codebase to answer a question. Search broadly, read what \
                     matters, and answer with the facts found and where (path:line). You \
                     cannot change anything."
                .to_owned(),
            source: None,
        }
    }
}

/// The directories agent types are read from, first wins.
pub fn agent_dirs(project_root: &Path, rein_home: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs = vec![
        project_root.join(".rein").join("agents"),
        project_root.join(".claude").join("agents"),
    ];
    dirs.extend(rein_home.map(|home| home.join("agents")));
    dirs
}

/// Every agent type in `dirs` (in file-name order within each), after the built-in one;
/// warnings name the files skipped.
pub fn load(dirs: &[PathBuf]) -> (Vec<AgentType>, Vec<String>) {
    let mut types = vec![AgentType::explore()];
    let mut warnings = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "md") && p.is_file())
            .collect();
        files.sort();
        for file in files {
            match read(&file) {
                Ok(found) if types.iter().any(|t| t.name == found.name) => {
                    // A project's type shadows the user's of the same name, quietly; two in
                    // one place are a mistake.
                    let earlier = types.iter().find(|t| t.name == found.name);
                    let same_dir = earlier
                        .and_then(|t| t.source.as_deref())
                        .and_then(Path::parent)
                        == file.parent();
                    if same_dir || found.name == EXPLORE {
                        warnings.push(format!(
                            "agent type in {} skipped: the name `{}` is taken",
                            file.display(),
                            found.name
                        ));
                    }
                }
                Ok(found) => types.push(found),
                Err(why) => {
                    warnings.push(format!("agent type in {} skipped: {why}", file.display()));
                }
            }
        }
    }
    (types, warnings)
}

fn read(file: &Path) -> Result<AgentType, String> {
    let text = std::fs::read_to_string(file).map_err(|e| e.to_string())?;
    let doc = frontmatter::parse(&text).map_err(|e| e.to_string())?;
    let field = |key: &str| doc.fields.get(key).map(frontmatter::Value::text);
    let name = field("name")
        .filter(|n| !n.trim().is_empty())
        .ok_or("its front matter has no `name`")?;
    let name = name.trim().to_owned();
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(format!(
            "the name `{name}` may hold only letters, digits, `-` and `_`"
        ));
    }
    let description = field("description")
        .filter(|d| !d.trim().is_empty())
        .ok_or("its front matter has no `description`")?;
    let tools = doc.fields.get("tools").map(|v| {
        v.items()
            .iter()
            .map(|t| crate::permissions::canonical_tool_name(t).to_owned())
            .collect()
    });
    // Claude Code's model aliases name its own models, not this endpoint's.
    let model = field("model")
        .map(|m| m.trim().to_owned())
        .filter(|m| !matches!(m.as_str(), "" | "inherit" | "sonnet" | "opus" | "haiku"));
    let max_rounds = match field("max_rounds") {
        Some(text) => Some(
            text.trim()
                .parse::<u32>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("`max_rounds: {text}` is not a positive number"))?,
        ),
        None => None,
    };
    Ok(AgentType {
        name,
        description: description.split_whitespace().collect::<Vec<_>>().join(" "),
        tools,
        read_only: false,
        model,
        max_rounds,
        prompt: doc.body,
        source: Some(file.to_path_buf()),
    })
}
