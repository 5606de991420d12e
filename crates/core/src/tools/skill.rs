//! Skills: knowledge the model loads only when it needs it.
//!
//! A skill is a folder with a `SKILL.md` (front matter `name` and `description`; the body is
//! the instructions; other files beside it are resources), found in the project's
//! `.rein/skills/`, then `$REIN_HOME/skills/`, then the project's `.claude/skills/` and
//! `.agents/skills/`; the first of a name wins, a later one is skipped with a warning, as is a
//! `SKILL.md` that cannot be read (no front matter, no name), never a crash.
//!
//! Progressive disclosure: the system prompt lists names and descriptions once, at start (so
//! it stays byte-identical across rounds), within about [`PROMPT_SHARE`] of the context
//! window; past that, skills are listed by name only. The `skill` tool gives the body, and
//! where the resources are, for read_file.

use std::path::{Path, PathBuf};

use rein_tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput, async_trait};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::frontmatter;

/// The tool's name.
pub const SKILL_TOOL: &str = "skill";
/// The share of the context window the skill list in the system prompt may take.
pub const PROMPT_SHARE: f64 = 0.02;
/// Characters per token, to turn the token budget into text.
const CHARS_PER_TOKEN: u64 = 4;
/// Resource files listed with a loaded skill, at most.
const MAX_LISTED_RESOURCES: usize = 50;

/// One skill found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// Its name.
    pub name: String,
    /// When to use it.
    pub description: String,
    /// The instructions.
    pub body: String,
    /// Its folder.
    pub dir: PathBuf,
}

/// The directories skills are read from, first wins.
pub fn skill_dirs(project_root: &Path, rein_home: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs = vec![project_root.join(".rein").join("skills")];
    dirs.extend(rein_home.map(|home| home.join("skills")));
    dirs.push(project_root.join(".claude").join("skills"));
    dirs.push(project_root.join(".agents").join("skills"));
    dirs
}

/// Every skill in `dirs`, in folder-name order within each; warnings name the files skipped.
pub fn load(dirs: &[PathBuf]) -> (Vec<Skill>, Vec<String>) {
    let mut skills: Vec<Skill> = Vec::new();
    let mut warnings = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut folders: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.join("SKILL.md").is_file())
            .collect();
        folders.sort();
        for folder in folders {
            let file = folder.join("SKILL.md");
            match read(&file, &folder) {
                Ok(skill) => match skills.iter().find(|s| s.name == skill.name) {
                    Some(first) => warnings.push(format!(
                        "skill in {} skipped: the name `{}` is taken by {}",
                        file.display(),
                        skill.name,
                        first.dir.join("SKILL.md").display()
                    )),
                    None => skills.push(skill),
                },
                Err(why) => warnings.push(format!("skill in {} skipped: {why}", file.display())),
            }
        }
    }
    (skills, warnings)
}

fn read(file: &Path, folder: &Path) -> Result<Skill, String> {
    let text = std::fs::read_to_string(file).map_err(|e| e.to_string())?;
    let doc = frontmatter::parse(&text).map_err(|e| e.to_string())?;
    let field = |key: &str| {
        doc.fields
            .get(key)
            .map(frontmatter::Value::text)
            .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|t| !t.is_empty())
    };
    let name = field("name").ok_or("its front matter has no `name`")?;
    let description = field("description").ok_or("its front matter has no `description`")?;
    Ok(Skill {
        name,
        description,
        body: doc.body,
        dir: folder.to_path_buf(),
    })
}

/// The system prompt's section on skills, within `window_tokens`' share: `None` when there
/// are none.
pub fn prompt_section(skills: &[Skill], window_tokens: u64) -> Option<String> {
    if skills.is_empty() {
        return None;
    }
    let budget = ((window_tokens as f64 * PROMPT_SHARE) as u64 * CHARS_PER_TOKEN) as usize;
    let mut section = String::from(
        "# Skills\nLoad a skill's instructions with the skill tool when a task matches it:\n",
    );
    let mut listed = 0;
    for skill in skills {
        let line = format!("- {}: {}\n", skill.name, skill.description);
        if section.len() + line.len() > budget {
            break;
        }
        section.push_str(&line);
        listed += 1;
    }
    if listed < skills.len() {
        let rest: Vec<&str> = skills[listed..].iter().map(|s| s.name.as_str()).collect();
        section.push_str(&format!("- Also: {}\n", rest.join(", ")));
    }
    Some(section.trim_end().to_owned())
}

/// The `skill` tool.
#[derive(Debug, Clone)]
pub struct SkillTool {
    skills: Vec<Skill>,
}

impl SkillTool {
    /// The tool, loading `skills`.
    pub fn new(skills: Vec<Skill>) -> Self {
        SkillTool { skills }
    }
}

/// The `skill` tool's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillArgs {
    /// The skill's name.
    pub name: String,
}

#[async_trait]
impl Tool for SkillTool {
    type Args = SkillArgs;

    fn name(&self) -> &'static str {
        SKILL_TOOL
    }

    fn description(&self) -> &str {
        "Load a skill's instructions (the skills are listed in the system prompt)."
    }

    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }

    async fn run(&self, args: SkillArgs, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let name = args.name.trim();
        let Some(skill) = self.skills.iter().find(|s| s.name == name) else {
            let names: Vec<&str> = self.skills.iter().map(|s| s.name.as_str()).collect();
            return Err(ToolError::Model(format!(
                "there is no skill `{name}`; the skills are: {}",
                names.join(", ")
            )));
        };
        // The file may have changed since rein started: the body is read now.
        let body = std::fs::read_to_string(skill.dir.join("SKILL.md"))
            .ok()
            .and_then(|text| frontmatter::parse(&text).ok())
            .map_or_else(|| skill.body.clone(), |doc| doc.body);
        let mut text = format!("# Skill: {}\n\n{body}\n", skill.name);
        let resources = resources(&skill.dir);
        text.push_str(&format!("\n(Skill folder: {}", skill.dir.display()));
        if resources.is_empty() {
            text.push(')');
        } else {
            text.push_str(&format!(
                "; its files, for read_file: {})",
                resources.join(", ")
            ));
        }
        Ok(ToolOutput::success(text))
    }
}

/// The files beside `SKILL.md`, relative to the folder, sorted.
fn resources(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&at) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                pending.push(path);
            } else if path != dir.join("SKILL.md")
                && let Ok(relative) = path.strip_prefix(dir)
            {
                found.push(relative.display().to_string());
            }
            if found.len() >= MAX_LISTED_RESOURCES {
                break;
            }
        }
    }
    found.sort();
    found
}
