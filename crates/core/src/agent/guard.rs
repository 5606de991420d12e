//! The loop guard: a model that repeats a failing call is told to change approach.

use std::collections::HashMap;

use rein_llm::ToolCall;

/// Failures of the same call in a row after which the model gets the note.
pub(crate) const REPEATED_FAILURE_LIMIT: u32 = 3;

const NOTE: &str = "\n\nNote from rein: this exact call (same tool, same arguments) has now \
failed 3 times in a row. Do not send it again. Change your approach: re-read the file or the \
error above, check the path and the arguments, or use another tool.";

/// Counts consecutive failures per distinct call (tool name and canonical arguments).
#[derive(Debug, Default)]
pub(crate) struct LoopGuard {
    failures: HashMap<String, u32>,
}

impl LoopGuard {
    /// Records the outcome of `call`; returns the note to append when it keeps failing.
    pub(crate) fn observe(&mut self, call: &ToolCall, is_error: bool) -> Option<&'static str> {
        let key = signature(call);
        if !is_error {
            self.failures.remove(&key);
            return None;
        }
        let count = self.failures.entry(key).or_insert(0);
        *count += 1;
        (*count >= REPEATED_FAILURE_LIMIT).then_some(NOTE)
    }
}

/// Tool name plus arguments; serde_json's maps are sorted, so equal arguments give equal text.
fn signature(call: &ToolCall) -> String {
    let args = match &call.arguments {
        rein_llm::ToolArguments::Json { value } => value.to_string(),
        rein_llm::ToolArguments::Invalid { raw, .. } => raw.clone(),
    };
    format!("{}\u{0}{args}", call.name)
}

#[cfg(test)]
mod tests {
    use rein_llm::ToolArguments;
    use serde_json::json;

    use super::*;

    fn call(name: &str, args: serde_json::Value) -> ToolCall {
        ToolCall {
            id: "x".into(),
            name: name.into(),
            arguments: ToolArguments::Json { value: args },
        }
    }

    #[test]
    fn third_failure_of_the_same_call_gets_the_note() {
        let mut guard = LoopGuard::default();
        let c = call("edit_file", json!({"file_path": "a", "old_string": "x"}));
        assert_eq!(guard.observe(&c, true), None);
        assert_eq!(guard.observe(&c, true), None);
        assert!(guard.observe(&c, true).is_some());
        assert!(
            guard.observe(&c, true).is_some(),
            "keeps telling while it keeps failing"
        );
    }

    #[test]
    fn success_or_other_arguments_do_not_count() {
        let mut guard = LoopGuard::default();
        let a = call("bash", json!({"command": "make"}));
        let b = call("bash", json!({"command": "make test"}));
        guard.observe(&a, true);
        guard.observe(&a, true);
        assert_eq!(guard.observe(&b, true), None);
        guard.observe(&a, false);
        assert_eq!(guard.observe(&a, true), None, "a success resets the count");
    }

    #[test]
    fn argument_order_does_not_matter() {
        let mut guard = LoopGuard::default();
        let a = call(
            "grep",
            serde_json::from_str(r#"{"pattern":"x","path":"src"}"#).unwrap(),
        );
        let b = call(
            "grep",
            serde_json::from_str(r#"{"path":"src","pattern":"x"}"#).unwrap(),
        );
        guard.observe(&a, true);
        guard.observe(&b, true);
        assert!(guard.observe(&a, true).is_some());
    }
}
