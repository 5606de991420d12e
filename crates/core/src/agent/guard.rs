//! The loop guard: a model that keeps making the same call and getting the same result is
//! told to change approach, and after a few more times the turn stops.
//!
//! "The same" means the same tool, the same arguments and the same result: a command polled
//! while its output grows, or a file re-read after a command changed it, is progress, not a
//! loop. A successful edit changes the workspace, so it starts every count again.

use std::collections::HashMap;

use rein_llm::ToolCall;
use rein_tools::ToolKind;
use xxhash_rust::xxh3::xxh3_64;

/// Identical calls with identical results after which the model gets a note.
pub(crate) const REPEAT_NOTE_AT: u32 = 3;
/// Identical calls with identical results after which the turn stops.
pub(crate) const REPEAT_STOP_AT: u32 = 8;

/// What the guard makes of a call that just finished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Nothing to say.
    Fine,
    /// Append this note to the call's result.
    Note(String),
    /// Append this note, and end the turn after this response's calls.
    Stop(String),
}

/// Counts repeats per distinct call (tool name and canonical arguments).
#[derive(Debug, Default)]
pub(crate) struct LoopGuard {
    /// Call signature → (hash of its last result, how many times in a row it gave it).
    repeats: HashMap<u64, (u64, u32)>,
}

impl LoopGuard {
    /// Records the outcome of `call` (of a tool of `kind`, when known).
    pub(crate) fn observe(
        &mut self,
        call: &ToolCall,
        kind: Option<ToolKind>,
        content: &str,
        is_error: bool,
    ) -> Verdict {
        if kind == Some(ToolKind::Edit) && !is_error {
            self.repeats.clear();
            return Verdict::Fine;
        }
        let result = xxh3_64(content.as_bytes()) ^ u64::from(is_error);
        let entry = self.repeats.entry(signature(call)).or_insert((result, 0));
        if entry.0 == result {
            entry.1 += 1;
        } else {
            *entry = (result, 1);
        }
        let times = entry.1;
        if times >= REPEAT_STOP_AT {
            Verdict::Stop(format!(
                "\n\nNote from rein: this exact call (same tool, same arguments) has now been made \
                 {times} times with the same result. rein stops the turn here so it does not loop; \
                 the person will decide how to go on."
            ))
        } else if times >= REPEAT_NOTE_AT && is_error {
            Verdict::Note(format!(
                "\n\nNote from rein: this exact call (same tool, same arguments) has now failed \
                 {times} times in a row. Do not send it again. Change your approach: re-read the \
                 file or the error above, check the path and the arguments, or use another tool."
            ))
        } else if times >= REPEAT_NOTE_AT {
            Verdict::Note(format!(
                "\n\nNote from rein: you have made this exact call (same tool, same arguments) \
                 {times} times and got the same result each time; you already have it above. Do \
                 not repeat it: use that result, or change your approach."
            ))
        } else {
            Verdict::Fine
        }
    }
}

/// A hash of the tool name and arguments; the arguments' keys are sorted first, so equal
/// arguments give equal text whatever their order (serde_json keeps the order they came in
/// when its `preserve_order` feature is on, as it is in the rein binary).
fn signature(call: &ToolCall) -> u64 {
    let args = match &call.arguments {
        rein_llm::ToolArguments::Json { value } => {
            let mut text = String::new();
            canonical(value, &mut text);
            text
        }
        rein_llm::ToolArguments::Invalid { raw, .. } => raw.clone(),
    };
    xxh3_64(format!("{}\u{0}{args}", call.name).as_bytes())
}

/// `value` as JSON text with every object's keys sorted.
fn canonical(value: &serde_json::Value, out: &mut String) {
    match value {
        serde_json::Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            out.push('{');
            for (n, key) in keys.into_iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::Value::String(key.clone()).to_string());
                out.push(':');
                if let Some(item) = map.get(key) {
                    canonical(item, out);
                }
            }
            out.push('}');
        }
        serde_json::Value::Array(items) => {
            out.push('[');
            for (n, item) in items.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
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

    const READ: Option<ToolKind> = Some(ToolKind::ReadOnly);

    #[test]
    fn the_third_failure_of_the_same_call_gets_the_failure_note() {
        let mut guard = LoopGuard::default();
        let c = call("edit_file", json!({"file_path": "a", "old_string": "x"}));
        let edit = Some(ToolKind::Edit);
        assert_eq!(guard.observe(&c, edit, "not found", true), Verdict::Fine);
        assert_eq!(guard.observe(&c, edit, "not found", true), Verdict::Fine);
        assert!(
            matches!(guard.observe(&c, edit, "not found", true), Verdict::Note(n) if n.contains("failed 3 times"))
        );
        assert!(
            matches!(guard.observe(&c, edit, "not found", true), Verdict::Note(n) if n.contains("failed 4 times")),
            "keeps telling while it keeps failing"
        );
    }

    #[test]
    fn the_same_successful_read_is_noted_at_three_and_stopped_at_eight() {
        let mut guard = LoopGuard::default();
        let c = call("read_file", json!({"file_path": "a"}));
        let verdicts: Vec<Verdict> = (0..8)
            .map(|_| guard.observe(&c, READ, "1\tfn main() {}", false))
            .collect();
        assert_eq!(verdicts[..2], [Verdict::Fine, Verdict::Fine]);
        for v in &verdicts[2..7] {
            assert!(
                matches!(v, Verdict::Note(n) if n.contains("already have it")),
                "{v:?}"
            );
        }
        assert!(matches!(&verdicts[7], Verdict::Stop(n) if n.contains("8 times")));
    }

    #[test]
    fn a_changing_result_is_progress_not_a_loop() {
        let mut guard = LoopGuard::default();
        let poll = call("bash", json!({"command": "tail -1 build.log"}));
        for i in 0..20 {
            let out = format!("step {i}");
            assert_eq!(
                guard.observe(&poll, Some(ToolKind::Execute), &out, false),
                Verdict::Fine
            );
        }
    }

    #[test]
    fn a_successful_edit_starts_every_count_again() {
        let mut guard = LoopGuard::default();
        let read = call("read_file", json!({"file_path": "a"}));
        let edit = call("edit_file", json!({"file_path": "a"}));
        guard.observe(&read, READ, "same", false);
        guard.observe(&read, READ, "same", false);
        guard.observe(&edit, Some(ToolKind::Edit), "edited", false);
        assert_eq!(guard.observe(&read, READ, "same", false), Verdict::Fine);
        // A failed edit changed nothing.
        guard.observe(&read, READ, "same", false);
        guard.observe(&edit, Some(ToolKind::Edit), "not found", true);
        assert!(matches!(
            guard.observe(&read, READ, "same", false),
            Verdict::Note(_)
        ));
    }

    #[test]
    fn other_arguments_are_another_call_and_order_does_not_matter() {
        let mut guard = LoopGuard::default();
        let a = call("bash", json!({"command": "make"}));
        let b = call("bash", json!({"command": "make test"}));
        guard.observe(&a, None, "e", true);
        guard.observe(&a, None, "e", true);
        assert_eq!(guard.observe(&b, None, "e", true), Verdict::Fine);
        let x: serde_json::Value = serde_json::from_str(r#"{"pattern":"x","path":"src"}"#).unwrap();
        let y: serde_json::Value = serde_json::from_str(r#"{"path":"src","pattern":"x"}"#).unwrap();
        guard.observe(&call("grep", x.clone()), READ, "r", false);
        guard.observe(&call("grep", y), READ, "r", false);
        assert!(matches!(
            guard.observe(&call("grep", x), READ, "r", false),
            Verdict::Note(_)
        ));
    }
}
