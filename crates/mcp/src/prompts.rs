//! MCP prompts, which front-ends offer as slash commands `/mcp__<server>__<prompt>` (Claude
//! Code's naming). A server whose capabilities include prompts has them listed when it
//! connects and again after it sends `notifications/prompts/list_changed`; `prompts/get`
//! gives a prompt's messages, their content made into text the way tool results are
//! (images given to a model that sees, resources inlined or described).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rein_tools::image::ImageData;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::hub::McpHub;

/// How long listing a server's changed prompts may take.
pub(crate) const PROMPT_LIST_LIMIT: Duration = Duration::from_secs(5);

/// One prompt of one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpPrompt {
    /// The server's name (as configured).
    pub server: String,
    /// The prompt's own name (what `prompts/get` takes).
    pub name: String,
    /// The slash command's name, without the slash: `mcp__<server>__<prompt>`, made of
    /// characters a person can type.
    pub command: String,
    /// What it does, as the server describes it (its title when it has no description).
    pub description: Option<String>,
    /// Its arguments, in the order the server lists them.
    pub arguments: Vec<PromptArgument>,
}

/// One argument of a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptArgument {
    /// Its name.
    pub name: String,
    /// What it is, as the server describes it.
    pub description: Option<String>,
    /// Whether the prompt needs it.
    pub required: bool,
}

/// Who speaks a message of a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptRole {
    /// The person.
    User,
    /// The assistant (an example answer, or a conversation the prompt sets up).
    Assistant,
}

/// One message of a prompt, as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptMessage {
    /// Who speaks it.
    pub role: PromptRole,
    /// Its content as the model gets it.
    pub text: String,
}

/// What `prompts/get` gave.
#[derive(Debug, Clone)]
pub struct PromptContent {
    /// The messages, in order.
    pub messages: Vec<PromptMessage>,
    /// Pictures among them, for a model that sees (described in the text otherwise).
    pub images: Vec<ImageData>,
}

/// A server's side of prompt-list changes: set stale by the notification, bumped whenever its
/// list is (re)listed, so front-ends can show the new list.
#[derive(Debug, Clone)]
pub(crate) struct PromptSignal {
    pub(crate) stale: Arc<AtomicBool>,
    pub(crate) listed: Arc<watch::Sender<u64>>,
}

impl Default for PromptSignal {
    fn default() -> Self {
        PromptSignal {
            stale: Arc::new(AtomicBool::new(false)),
            listed: Arc::new(watch::channel(0).0),
        }
    }
}

impl PromptSignal {
    /// The server said its prompts changed.
    pub(crate) fn note_stale(&self) {
        self.stale.store(true, Ordering::SeqCst);
        // Wakes watchers, who list again.
        self.listed.send_modify(|n| *n += 1);
    }

    /// A new list was taken.
    pub(crate) fn note_listed(&self) {
        self.listed.send_modify(|n| *n += 1);
    }
}

/// Waits for any server's prompt list to change (see [`McpHub::prompt_watch`]).
#[derive(Debug)]
pub struct PromptWatch {
    receivers: Vec<watch::Receiver<u64>>,
}

impl PromptWatch {
    /// Returns once some server's prompts may have changed since the last call (or since the
    /// watch was made); never, for a hub without servers.
    pub async fn changed(&mut self) {
        if self.receivers.is_empty() {
            return std::future::pending().await;
        }
        let waits = self
            .receivers
            .iter_mut()
            .map(|r| Box::pin(async move { r.changed().await.is_ok() }));
        let (changed, _, _) = futures::future::select_all(waits).await;
        if !changed {
            // A closed channel never changes again: do not spin on it.
            std::future::pending::<()>().await;
        }
    }
}

impl McpHub {
    /// The prompts of every server that has listed them, sorted by command name (a second
    /// prompt whose command name is taken is left out).
    pub fn prompts(&self) -> Vec<McpPrompt> {
        let mut prompts: Vec<McpPrompt> = Vec::new();
        for server in &self.servers {
            for prompt in server.prompts() {
                let command = format!(
                    "{}{}__{}",
                    crate::naming::PREFIX,
                    crate::naming::sanitize(&server.config.name),
                    crate::naming::sanitize(&prompt.name)
                );
                if prompts.iter().any(|p| p.command == command) {
                    continue;
                }
                prompts.push(McpPrompt {
                    server: server.config.name.clone(),
                    command,
                    description: prompt.description.clone().or(prompt.title.clone()),
                    arguments: (prompt.arguments.iter().flatten())
                        .map(|a| PromptArgument {
                            name: a.name.clone(),
                            description: a.description.clone().or(a.title.clone()),
                            required: a.required == Some(true),
                        })
                        .collect(),
                    name: prompt.name,
                });
            }
        }
        prompts.sort_by(|a, b| a.command.cmp(&b.command));
        prompts
    }

    /// Lists again the prompts of servers that said theirs changed.
    pub async fn refresh_prompts(&self) {
        let relists = self
            .servers
            .iter()
            .map(|s| s.refresh_prompts(PROMPT_LIST_LIMIT));
        futures::future::join_all(relists).await;
    }

    /// A watch that wakes when a server's prompts are listed or said to have changed.
    pub fn prompt_watch(&self) -> PromptWatch {
        PromptWatch {
            receivers: (self.servers.iter())
                .map(|s| s.prompt_signal().listed.subscribe())
                .collect(),
        }
    }

    /// Gets `prompt` of `server` with `arguments` (`prompts/get`), within the server's call
    /// timeout; the error says why it could not be had, for the person.
    pub async fn get_prompt(
        &self,
        server: &str,
        prompt: &str,
        arguments: &[(String, String)],
        vision: bool,
        cancel: &CancellationToken,
    ) -> Result<PromptContent, String> {
        let found = self
            .servers
            .iter()
            .find(|s| s.config.name == server)
            .ok_or_else(|| format!("there is no MCP server `{server}`"))?;
        let arguments: rmcp::model::JsonObject = arguments
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
            .collect();
        let result = found.get_prompt(prompt, arguments, cancel).await?;
        let mut images = Vec::new();
        let messages = result
            .messages
            .iter()
            .map(|message| PromptMessage {
                role: match message.role {
                    rmcp::model::Role::User => PromptRole::User,
                    rmcp::model::Role::Assistant => PromptRole::Assistant,
                },
                text: crate::content::shown(&message.content, vision, &mut images),
            })
            .collect();
        Ok(PromptContent { messages, images })
    }
}
