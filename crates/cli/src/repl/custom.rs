//! A custom slash command used at the prompt: expanded (its commands run, its files read,
//! each through the permission pipeline, with the spinner and Ctrl+C) and sent as a request.

use rein_core::agent::Agent;
use rein_core::commands::CustomCommand;

use super::Repl;
use super::keys::Typed;
use crate::render;

impl Repl {
    /// The custom command named `/name`, if there is one.
    pub(super) fn custom_command(&self, name: &str) -> Option<CustomCommand> {
        let name = name.strip_prefix('/').unwrap_or(name);
        self.custom_commands
            .iter()
            .find(|c| c.name == name)
            .cloned()
    }

    /// Runs `command` with `arguments`: what was typed ahead, or (as the error) the input to
    /// edit again when it was not sent.
    pub(super) async fn custom(
        &mut self,
        agent: &mut Agent,
        command: &CustomCommand,
        arguments: &str,
    ) -> Result<Typed, String> {
        if let Some(model) = &command.model
            && model != agent.model()
        {
            self.say(&self.style.dim(&format!(
                "(/{} asks for the model {model}; this session keeps {} — /model {model} \
                 switches)",
                command.name,
                agent.model()
            )));
        }
        let running = self.begin("preparing");
        let expanded = rein_core::commands::expand(
            agent,
            command,
            arguments,
            &self.events,
            running.cancel.clone(),
        )
        .await;
        let cancelled = running.cancel.is_cancelled();
        let typed = self.end(running);
        for warning in &expanded.warnings {
            self.say(&self.style.warn(&render::neutralize(warning)));
        }
        if cancelled {
            return Err(format!("/{} {arguments}", command.name)
                .trim_end()
                .to_owned());
        }
        let mut sent = self.turn(agent, &expanded.prompt).await?;
        sent.text.insert_str(0, &typed.text);
        sent.leave |= typed.leave;
        Ok(sent)
    }
}
