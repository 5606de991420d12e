//! Running something that may take a while: a turn, a `!command`, a file to attach. Keys are
//! read and the spinner runs until it is over.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use rein_core::agent::{Agent, TurnStop};
use tokio_util::sync::CancellationToken;

use super::keys::{NotSent, Typed};
use super::{Repl, Running, attach, terminal};
use crate::render::SPINNER_TICK;
use crate::render::{self, TurnFigures};

impl Repl {
    /// One request to the model; returns what was typed ahead, or (as the error) the input
    /// to edit again when it was not sent, with what was typed meanwhile.
    pub(super) async fn turn(&mut self, agent: &mut Agent, input: &str) -> Result<Typed, NotSent> {
        let running = self.begin("thinking");
        let mut files = Vec::new();
        let mut images = Vec::new();
        for path in attach::mentioned_paths(input) {
            // `@server:uri`: a resource of an MCP server of the session.
            let resource = path.split_once(':').and_then(|(server, uri)| {
                let hub = agent.mcp_hub()?;
                (hub.has_server(server) && !uri.is_empty())
                    .then(|| (server.to_owned(), uri.to_owned()))
            });
            if let Some((server, uri)) = resource {
                match agent
                    .read_mcp_resource(&server, &uri, &running.cancel)
                    .await
                {
                    Ok(content) => {
                        files.push(attach::Attached { path, content });
                        continue;
                    }
                    Err(why) => {
                        let typed = self.end(running);
                        self.say_error(&format!(
                            "not sent: @{} could not be attached: {} (edit the request and press \
                             Enter)",
                            render::neutralize(&path),
                            render::neutralize(&why)
                        ));
                        return Err(NotSent {
                            line: input.to_owned(),
                            typed,
                        });
                    }
                }
            }
            let outcome = self
                .direct(
                    agent,
                    "read_file",
                    serde_json::json!({ "file_path": path }),
                    &running,
                )
                .await;
            if outcome.is_error || outcome.cancelled {
                let typed = self.end(running);
                self.say_error(&format!(
                    "not sent: @{} could not be attached (edit the request and press Enter)",
                    render::neutralize(&path)
                ));
                return Err(NotSent {
                    line: input.to_owned(),
                    typed,
                });
            }
            images.extend(outcome.images);
            files.push(attach::Attached {
                path,
                content: outcome.content,
            });
        }
        agent.attach_images(images);
        let request = attach::request(input, &self.shell_notes, &files);
        self.shell_notes.clear();
        let outcome = agent
            .run_turn(&request, &self.events, running.cancel.clone())
            .await;
        let elapsed = running.started.elapsed();
        let typed = self.end(running);
        self.tell_stop(agent, &outcome);
        let context = if outcome.rounds > 0 {
            let report = agent.context_report().await;
            Some((report.used, report.usable))
        } else {
            None
        };
        let line = render::turn_line(
            self.style,
            &TurnFigures {
                outcome: &outcome,
                context,
                elapsed,
            },
        );
        // A narrow window breaks the line between its parts, never mid-word.
        self.say(&render::wrap_parts(&line, " · ", terminal::width()));
        Ok(typed)
    }

    /// Says why a turn ended, when it did not simply end; offers a higher limit when one
    /// stopped it.
    fn tell_stop(&self, agent: &mut Agent, outcome: &rein_core::agent::TurnOutcome) {
        match outcome.stop() {
            TurnStop::EndTurn => {}
            TurnStop::MaxTokens => {
                self.say_warn("the answer was cut at the model's output limit");
            }
            TurnStop::MaxRounds => self.say_warn(&format!(
                "stopped after {} rounds (the limit); say \"continue\" to go on",
                outcome.rounds
            )),
            TurnStop::RepeatedCalls => {
                self.say_warn("stopped: the model kept making the same call with the same result");
            }
            TurnStop::Cancelled => self.say_warn("interrupted"),
            TurnStop::MaxCost | TurnStop::MaxSessionTokens => {
                if let rein_core::agent::TurnEnd::SpendingLimit(reached) = &outcome.end {
                    self.offer_a_higher_limit(agent, reached);
                }
            }
            TurnStop::PromptBlocked => {
                if let rein_core::agent::TurnEnd::PromptBlocked { reason } = &outcome.end {
                    self.say_warn(&render::neutralize(&crate::report::blocked_prompt_message(
                        reason,
                    )));
                }
            }
            TurnStop::Error => {
                let message = outcome
                    .error()
                    .map_or_else(|| "the turn failed".to_owned(), ToString::to_string);
                self.say_error(&render::neutralize(&message));
            }
        }
    }

    /// Says which limit stopped the turn and asks whether to double it; the person then says
    /// "continue" to go on.
    fn offer_a_higher_limit(&self, agent: &mut Agent, reached: &rein_core::agent::LimitReached) {
        use rein_core::agent::SpendLimit;
        use std::io::Write;
        self.say_warn(&reached.message());
        let mut limits = agent.limits();
        let raised = match reached.limit {
            SpendLimit::Cost => {
                let usd = reached.allowed * 2.0;
                limits.max_cost = Some(usd);
                format!("${usd:.4}")
            }
            SpendLimit::Tokens => {
                let tokens = (reached.allowed as u64).saturating_mul(2);
                limits.max_tokens = Some(tokens);
                format!("{tokens} tokens")
            }
        };
        let mut out = std::io::stdout();
        let _ = write!(
            out,
            "{}",
            self.style
                .dim(&format!("Raise the limit to {raised}? [y/N] "))
        );
        let _ = out.flush();
        let mut answer = String::new();
        if std::io::stdin().read_line(&mut answer).is_ok()
            && matches!(answer.trim(), "y" | "Y" | "yes")
        {
            agent.set_limits(limits);
            self.say_dim(&format!(
                "The limit is now {raised}: say \"continue\" to go on."
            ));
        } else {
            self.say_dim("The limit stays.");
        }
    }

    /// `!command`: runs it through the permission pipeline; its output goes with the next
    /// request.
    pub(super) async fn shell(&mut self, agent: &Agent, command: &str) -> Typed {
        if command.is_empty() {
            self.say_dim("usage: !command (runs it; its output goes with your next request)");
            return Typed::default();
        }
        let running = self.begin("running");
        let outcome = self
            .direct(
                agent,
                "bash",
                serde_json::json!({ "command": command }),
                &running,
            )
            .await;
        let typed = self.end(running);
        if !outcome.cancelled && outcome.display != rein_core::face::Display::Text {
            self.shell_notes
                .push(attach::shell_note(command, &outcome.content));
            self.say_dim("(the output goes with your next request)");
        }
        typed
    }

    pub(super) async fn direct(
        &mut self,
        agent: &Agent,
        tool: &str,
        arguments: serde_json::Value,
        running: &Running,
    ) -> rein_core::agent::DirectOutcome {
        self.direct_calls += 1;
        let id = format!("person_{}", self.direct_calls);
        agent
            .run_direct(&id, tool, arguments, &self.events, running.cancel.clone())
            .await
    }

    /// Starts reading keys and the spinner, for something that may take a while.
    pub(super) fn begin(&self, label: &str) -> Running {
        let cancel = CancellationToken::new();
        self.signals.set_turn(Some(cancel.clone()));
        self.live.set_width(terminal::width());
        let keys = self.keys.start(cancel.clone());
        self.live.begin(label);
        let live = Arc::clone(&self.live);
        let ticker = tokio::spawn(async move {
            let mut every = tokio::time::interval(SPINNER_TICK);
            loop {
                every.tick().await;
                // The window may be resized mid-turn: its width is read on each tick.
                live.set_width(terminal::width());
                live.tick();
            }
        });
        Running {
            cancel,
            keys,
            ticker,
            started: Instant::now(),
        }
    }

    /// The prompt's text after an input that was not sent. Nothing typed meanwhile: the
    /// input, to correct (the editor puts the cursor after it). Keys typed while it was prepared mean the person went on: they are
    /// kept, and never glued to the input (a command typed ahead would be sent to the model
    /// as part of it): whole lines run in order, the rest waits at the prompt, and the input
    /// is one Up away in the history.
    pub(super) fn refill(&self, not_sent: NotSent, queued: &mut VecDeque<String>) -> String {
        // An Enter pressed while waiting is no new input.
        if not_sent.typed.text.trim().is_empty() {
            return not_sent.line;
        }
        self.say_dim("(kept what you typed meanwhile; Up brings back the line that was not sent)");
        let (lines, rest) = not_sent.typed.split();
        queued.extend(lines);
        rest
    }

    /// Stops the spinner and the key reader; returns what was typed ahead.
    pub(super) fn end(&self, running: Running) -> Typed {
        running.ticker.abort();
        self.live.end();
        self.signals.set_turn(None);
        running.keys.finish()
    }
}
