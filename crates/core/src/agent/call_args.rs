//! A call's arguments as the pipeline's steps read them: for hooks, for events, as checked
//! JSON, and the message for arguments that were not JSON.

use rein_llm::{ToolArguments, ToolCall};
use serde_json::Value;

use crate::hooks::HookCall;

/// A call as hooks see it.
pub(super) fn hook_call(call: &ToolCall) -> HookCall<'_> {
    HookCall {
        id: &call.id,
        tool: &call.name,
        arguments: json_arguments(call),
    }
}

/// The checked JSON arguments of a call (only calls that passed step 1 get here; others
/// read as `null`).
pub(super) fn json_arguments(call: &ToolCall) -> &Value {
    match &call.arguments {
        ToolArguments::Json { value } => value,
        ToolArguments::Invalid { .. } => &Value::Null,
    }
}

/// The arguments as events show them: the JSON the model sent, or its raw text.
pub(super) fn arguments_value(call: &ToolCall) -> Value {
    match &call.arguments {
        ToolArguments::Json { value } => value.clone(),
        ToolArguments::Invalid { raw, .. } => Value::String(raw.clone()),
    }
}

/// What the model is told when its arguments were not JSON.
pub(super) fn invalid_arguments_message(tool: &str, raw: &str, error: &str) -> String {
    const SHOWN_CHARS: usize = 2_000;
    let shown: String = raw.chars().take(SHOWN_CHARS).collect();
    let cut = if shown.len() < raw.len() {
        " …(cut)"
    } else {
        ""
    };
    format!(
        "The arguments for `{tool}` were not valid JSON ({error}), so the tool did not run.\n\
         You sent: {shown}{cut}\n\
         Send the call again with the arguments as one JSON object."
    )
}
