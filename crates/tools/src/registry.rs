//! The set of tools the model may call: their descriptions for the request, looked up by
//! name. Running a call (checks, permissions, the output budget) is the agent's pipeline.

use std::sync::{Arc, OnceLock};

use crate::{DynTool, ToolKind};

/// How a tool presents itself, with the kind of effect it has. rein-core turns it into a
/// `rein_llm::ToolSpec` for the request: the two crates do not know each other (DESIGN.md),
/// so each has its own type and core joins them.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    /// The name the model calls the tool by.
    pub name: String,
    /// What the tool does.
    pub description: String,
    /// JSON Schema of the parameters object, shared with every agent that offers the tool.
    pub parameters: Arc<serde_json::Value>,
    /// What kind of effect the tool has.
    pub kind: ToolKind,
}

/// A tool and its description, shared: registries are filtered and copied per agent and
/// sub-agent, the schemas never change.
#[derive(Clone)]
struct Entry {
    tool: Arc<dyn DynTool>,
    spec: Arc<ToolInfo>,
}

/// The tools of one agent, in registration order (stable, so requests stay cache-friendly).
#[derive(Default)]
pub struct ToolRegistry {
    entries: Vec<Entry>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.entries.iter().map(|e| &e.spec.name))
            .finish()
    }
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        ToolRegistry::default()
    }

    /// Every built-in tool: read_file, write_file, edit_file, glob, grep, bash, bash_output,
    /// kill_shell.
    pub fn builtin() -> Self {
        // Their schemas are derived once per process (a third of a million instructions
        // each time), however many agents and checks ask for the set.
        static BUILTIN: OnceLock<Vec<Entry>> = OnceLock::new();
        let entries = BUILTIN.get_or_init(|| {
            let mut registry = ToolRegistry::new();
            registry.register(crate::read_file::ReadFile);
            registry.register(crate::write_file::WriteFile);
            registry.register(crate::edit::EditFile);
            registry.register(crate::glob::Glob);
            registry.register(crate::grep::Grep);
            registry.register(crate::bash::BashTool);
            registry.register(crate::bash::BashOutputTool);
            registry.register(crate::bash::KillShellTool);
            registry.entries
        });
        ToolRegistry {
            entries: entries.clone(),
        }
    }

    /// Adds a tool; one with the same name is replaced in place.
    pub fn register(&mut self, tool: impl DynTool + 'static) {
        self.register_arc(Arc::new(tool));
    }

    /// Adds a shared tool; one with the same name is replaced in place.
    pub fn register_arc(&mut self, tool: Arc<dyn DynTool>) {
        // The schema is built once here, not on every request.
        let spec = Arc::new(ToolInfo {
            name: tool.name().to_owned(),
            description: tool.description().to_owned(),
            parameters: tool.parameters(),
            kind: tool.kind(),
        });
        let entry = Entry { tool, spec };
        match self
            .entries
            .iter_mut()
            .find(|e| e.spec.name == entry.spec.name)
        {
            Some(existing) => *existing = entry,
            None => self.entries.push(entry),
        }
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn DynTool>> {
        self.entries
            .iter()
            .find(|e| e.spec.name == name)
            .map(|e| &e.tool)
    }

    /// The descriptions of every tool, in registration order, for the request.
    pub fn infos(&self) -> Vec<ToolInfo> {
        self.info_refs().cloned().collect()
    }

    /// The descriptions of every tool, borrowed, in registration order.
    pub fn info_refs(&self) -> impl Iterator<Item = &ToolInfo> {
        self.entries.iter().map(|e| &*e.spec)
    }

    /// The tools whose kind `offer` accepts, in the same order (plan mode offers only
    /// read-only ones).
    pub fn offered(&self, offer: impl Fn(ToolKind) -> bool) -> ToolRegistry {
        ToolRegistry {
            entries: self
                .entries
                .iter()
                .filter(|e| offer(e.spec.kind))
                .cloned()
                .collect(),
        }
    }

    /// The same tools but those named, in the same order.
    pub fn without(&self, names: &[&str]) -> ToolRegistry {
        ToolRegistry {
            entries: self
                .entries
                .iter()
                .filter(|e| !names.contains(&e.spec.name.as_str()))
                .cloned()
                .collect(),
        }
    }

    /// The names of every tool, in registration order.
    pub fn names(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.spec.name.as_str()).collect()
    }
}
