//! The model call that writes a summary of older turns, with rein's own summary when the
//! model cannot give one: only the person interrupting stops a compaction.

use futures::StreamExt;
use rein_llm::assemble::Assembler;
use rein_llm::{LlmError, Part, Usage};
use tokio_util::sync::CancellationToken;

use super::compaction::Interrupted;
use crate::agent::spend::CallKind;
use crate::agent::{Agent, Events};
use crate::context::{self, SUMMARY_MAX_TOKENS, SummaryAuthor, Window};

/// What a summary call gave.
pub(in crate::agent) struct Summary {
    pub(in crate::agent) text: String,
    pub(in crate::agent) author: SummaryAuthor,
    pub(in crate::agent) error: Option<String>,
    pub(in crate::agent) usage: Option<Usage>,
}

impl Agent {
    /// The summary of messages `..split`: the model's, or rein's own when the model cannot
    /// give one. Only the person interrupting stops it.
    pub(in crate::agent) async fn ask_for_summary(
        &mut self,
        split: usize,
        focus: Option<&str>,
        window: &Window,
        usable: u64,
        events: &Events,
        cancel: &CancellationToken,
    ) -> Result<Summary, Interrupted> {
        let answer_tokens = SUMMARY_MAX_TOKENS.min(window.tokens / 5);
        // The summary request must fit too, with a tenth to spare for the estimate's error.
        let mut budget = usable.saturating_sub(answer_tokens + usable / 10);
        let head = &self.request.messages[..split];
        let mut error = None;
        for _ in 0..2 {
            let request = context::summary_request(
                &self.settings.model,
                head,
                focus,
                budget,
                u32::try_from(answer_tokens).unwrap_or(u32::MAX),
            );
            match ask(&*self.provider, &request, cancel).await {
                Ok((text, usage)) if !text.trim().is_empty() => {
                    if let Some(usage) = usage {
                        self.usage += usage;
                        self.context.unreported_usage += usage;
                        self.spend
                            .record(CallKind::Compaction, &self.settings.model, &usage);
                    }
                    return Ok(Summary {
                        text,
                        author: SummaryAuthor::Model,
                        error: None,
                        usage,
                    });
                }
                Ok(_) => {
                    error = Some("the model's answer was empty".to_owned());
                    break;
                }
                Err(AskError::Interrupted) => return Err(Interrupted),
                // The summariser's input was still too long: once more with half of it.
                Err(AskError::Model(LlmError::ContextTooLong(message))) => {
                    error = Some(format!(
                        "the conversation is too long for the model: {message}"
                    ));
                    budget /= 2;
                }
                Err(AskError::Model(e)) => {
                    error = Some(e.to_string());
                    break;
                }
            }
        }
        let why = error.unwrap_or_else(|| "the model could not be asked".to_owned());
        events.warn(format!(
            "the model could not summarise the conversation ({why}); rein wrote the summary \
                 itself from the messages"
        ));
        Ok(Summary {
            text: context::summary_without_model(
                head,
                &format!("the model could not write it ({why})"),
            ),
            author: SummaryAuthor::Rein,
            error: Some(why),
            usage: None,
        })
    }
}

enum AskError {
    Interrupted,
    Model(LlmError),
}

/// One model call, its text and usage.
async fn ask(
    provider: &dyn rein_llm::Provider,
    request: &rein_llm::Request,
    cancel: &CancellationToken,
) -> Result<(String, Option<Usage>), AskError> {
    let mut stream = provider.stream(request);
    let mut assembler = Assembler::new();
    loop {
        let next = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(AskError::Interrupted),
            next = stream.next() => next,
        };
        match next {
            None => break,
            Some(Ok(event)) => {
                assembler.push(&event);
            }
            Some(Err(error)) => return Err(AskError::Model(error)),
        }
    }
    let response = assembler.finish().map_err(AskError::Model)?;
    let text = response
        .message
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    Ok((text, response.usage))
}
