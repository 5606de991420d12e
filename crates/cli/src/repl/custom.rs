//! A custom slash command used at the prompt: expanded (its commands run, its files read,
//! each through the permission pipeline, with the spinner and Ctrl+C) and sent as a request;
//! or an MCP server's prompt, fetched with the arguments typed and sent the same way.

use rein_core::agent::Agent;
use rein_core::commands::CustomCommand;

use super::Repl;
use super::keys::{NotSent, Typed};
use crate::render;

impl Repl {
    /// The custom command or MCP prompt named `/name`, if there is one (the prompts listed
    /// again first when a server said they changed).
    pub(super) async fn custom_command(&self, agent: &Agent, name: &str) -> Option<CustomCommand> {
        let name = name.strip_prefix('/').unwrap_or(name);
        if let Some(command) = self.custom_commands.iter().find(|c| c.name == name) {
            return Some(command.clone());
        }
        let hub = agent.mcp_hub()?;
        hub.refresh_prompts().await;
        rein_core::commands::prompt_commands(Some(hub.as_ref()))
            .into_iter()
            .find(|c| c.name == name)
    }

    /// Every custom command and MCP prompt, for /help.
    pub(super) async fn all_custom_commands(&self, agent: &Agent) -> Vec<CustomCommand> {
        if let Some(hub) = agent.mcp_hub() {
            hub.refresh_prompts().await;
        }
        rein_core::commands::with_prompts(&self.custom_commands, agent.mcp_hub().map(|h| &**h))
    }

    /// Runs `command` with `arguments`: what was typed ahead, or (as the error) the input to
    /// edit again when it was not sent, with what was typed while it was prepared.
    pub(super) async fn custom(
        &mut self,
        agent: &mut Agent,
        command: &CustomCommand,
        arguments: &str,
    ) -> Result<Typed, NotSent> {
        if let Some(model) = &command.model
            && model != agent.model()
        {
            self.say_dim(&format!(
                "(/{} asks for the model {model}; this session keeps {} — /model {model} \
                 switches)",
                command.name,
                agent.model()
            ));
        }
        let running = self.begin("preparing");
        let expanded = rein_core::commands::prepare(
            agent,
            command,
            arguments,
            &self.events,
            running.cancel.clone(),
        )
        .await;
        let cancelled = running.cancel.is_cancelled();
        let typed = self.end(running);
        let as_typed = || {
            format!("/{} {arguments}", command.name)
                .trim_end()
                .to_owned()
        };
        let expanded = match expanded {
            Ok(expanded) => expanded,
            Err(why) => {
                // Nothing was sent: the line comes back to be corrected.
                if !cancelled {
                    self.say_error(&render::neutralize(&why.to_string()));
                }
                return Err(NotSent {
                    line: as_typed(),
                    typed,
                });
            }
        };
        for warning in &expanded.warnings {
            self.say_warn(&render::neutralize(warning));
        }
        if cancelled {
            return Err(NotSent {
                line: as_typed(),
                typed,
            });
        }
        let mut sent = match self.turn(agent, &expanded.prompt).await {
            Ok(sent) => sent,
            Err(mut not_sent) => {
                not_sent.typed.text.insert_str(0, &typed.text);
                not_sent.typed.leave |= typed.leave;
                return Err(not_sent);
            }
        };
        sent.text.insert_str(0, &typed.text);
        sent.leave |= typed.leave;
        Ok(sent)
    }
}
