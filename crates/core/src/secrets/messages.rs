//! A message as the session file keeps it: every text the model or a tool wrote, masked.

use rein_llm::{Message, Part, ToolArguments};

use super::Secrets;
use super::events::mask_value;

/// What to do with a reasoning block that holds a secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reasoning {
    /// Keep it as it is (the conversation sent back to the provider that wrote it: a signed
    /// block must go back unchanged).
    Keep,
    /// Mask it, dropping its signature: the provider would refuse it changed, so on a resume
    /// it stays local (the session file).
    Mask,
}

/// `message` with its secrets masked, or `None` when it holds none.
pub(crate) fn masked_message(
    secrets: &Secrets,
    message: &Message,
    reasoning: Reasoning,
) -> Option<Message> {
    if !secrets.any() {
        return None;
    }
    let mut masked = message.clone();
    for part in &mut masked.parts {
        match part {
            Part::Text { text } => secrets.redact_in_place(text),
            Part::Reasoning {
                text, signature, ..
            } if reasoning == Reasoning::Mask => {
                if let std::borrow::Cow::Owned(shown) = secrets.redact(text) {
                    *text = shown;
                    *signature = None;
                }
            }
            Part::ToolCall(call) => match &mut call.arguments {
                ToolArguments::Json { value } => mask_value(secrets, value),
                ToolArguments::Invalid { raw, error } => {
                    secrets.redact_in_place(raw);
                    secrets.redact_in_place(error);
                }
            },
            // Pictures are not text: a secret in a screenshot is the person's to see.
            Part::Reasoning { .. } | Part::Image(_) => {}
            Part::ToolResult(result) => secrets.redact_in_place(&mut result.content),
        }
    }
    (masked != *message).then_some(masked)
}
