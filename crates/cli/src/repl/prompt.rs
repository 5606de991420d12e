//! Reading the prompt's line: on a thread of its own (rustyline blocks), with what Ctrl+C,
//! Ctrl+O and a paste recalled from an earlier session mean there.

use rein_core::agent::Agent;
use rustyline::error::ReadlineError;

use super::{Repl, editor, pager};

impl Repl {
    /// Ctrl+O (the last output in the pager, the prompt again with what was typed in
    /// `prefill`) or Ctrl+C at the prompt: the first stops the background commands and says
    /// how to leave, a second in a row (`warned`) leaves. Whether to leave.
    pub(super) async fn interrupted(
        &mut self,
        agent: &Agent,
        warned: &mut bool,
        prefill: &mut String,
    ) -> bool {
        if let Some(typed) = self.output_view() {
            let last = self.live.last_output();
            pager::show(self.style, last.as_ref(), self.live.width());
            *prefill = typed;
            return false;
        }
        if *warned {
            return true;
        }
        *warned = true;
        let stopped = agent.tool_context().background().stop_all().await;
        if stopped > 0 {
            self.say_dim(&format!(
                "(stopped {stopped} background command{})",
                if stopped == 1 { "" } else { "s" }
            ));
        }
        self.say_dim("(press Ctrl+C again to leave, or Ctrl+D)");
        false
    }

    /// Whether `input` holds a placeholder recalled from an earlier session, standing for a
    /// paste rein no longer holds (sent, the paste would be lost without a word); says so.
    pub(super) fn lost_paste(&self, input: &str) -> bool {
        let missing = self
            .editor
            .as_ref()
            .and_then(|e| e.helper())
            .and_then(|h| h.missing_paste(input));
        if let Some(missing) = &missing {
            self.say_warn(&format!(
                "{missing} is from an earlier session and rein no longer has its text: \
                 paste it again in its place"
            ));
        }
        missing.is_some()
    }

    /// What was typed when Ctrl+O ended the input, when it did.
    fn output_view(&self) -> Option<String> {
        self.editor
            .as_ref()
            .and_then(|e| e.helper())
            .and_then(editor::ReplHelper::take_output_view)
    }

    /// Reads one input, on a thread of its own (rustyline blocks).
    pub(super) async fn read_line(&mut self, initial: String) -> Result<String, ReadlineError> {
        let Some(mut editor) = self.editor.take() else {
            return Err(ReadlineError::Eof);
        };
        let read = tokio::task::spawn_blocking(move || {
            let line = if initial.is_empty() {
                editor.readline(editor::PROMPT)
            } else {
                editor.readline_with_initial(editor::PROMPT, (&initial, ""))
            };
            (editor, line)
        })
        .await;
        match read {
            Ok((editor, line)) => {
                self.editor = Some(editor);
                line
            }
            Err(_) => Err(ReadlineError::Eof),
        }
    }
}
