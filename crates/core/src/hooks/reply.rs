//! What a hook's exit and output mean, with Claude Code's conventions, and what the hooks of
//! one event decide together.
//!
//! - Exit 0: go on. stdout may hold one JSON object: `decision` (`"block"`, or `"approve"` for
//!   PreToolUse) with `reason`; `continue: false` with `stopReason`; `systemMessage` (shown
//!   to the person); `hookSpecificOutput` with `hookEventName`, `permissionDecision`
//!   (`allow` / `ask` / `deny`, PreToolUse) and `permissionDecisionReason`,
//!   `additionalContext`, `updatedInput` (PreToolUse; also accepted at the top level). Plain
//!   text is context for UserPromptSubmit and SessionStart, and ignored elsewhere.
//! - Exit 2: block, with stderr as the reason: PreToolUse refuses the call (the model is told),
//!   PostToolUse tells the model, Stop makes the model go on, UserPromptSubmit drops the
//!   prompt (the person is told). Events that cannot be blocked show it as a warning.
//! - Anything else (another status, a signal, a timeout, a hook that would not start): a
//!   warning, and the run goes on as if the hook had said nothing.

use std::time::Duration;

use serde_json::{Map, Value};

use super::{HookDecision, HookWarnings, PostToolUse, PreToolUse, PromptCheck, StopCheck};
use crate::config::HookEvent;

/// Characters of a hook's command quoted in a warning.
const COMMAND_SHOWN_CHARS: usize = 60;
/// Characters of a failed hook's stderr quoted in a warning.
const STDERR_SHOWN_CHARS: usize = 400;

/// How a hook's process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ended {
    /// It exited with this status.
    Exited(i32),
    /// A signal ended it (not rein's timeout).
    Signalled,
    /// It ran past its timeout and was stopped with its process group.
    TimedOut(Duration),
    /// It could not be started.
    NotStarted(String),
}

/// One hook's run.
#[derive(Debug, Clone)]
pub(crate) struct Ran {
    /// Its command, as configured.
    pub(crate) command: String,
    /// How it ended.
    pub(crate) ended: Ended,
    /// What it printed (capped).
    pub(crate) stdout: String,
    /// What it printed to stderr (capped).
    pub(crate) stderr: String,
}

/// What one hook said, whatever the event.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Said {
    /// It blocked (exit 2, `decision: "block"`), for this reason.
    pub(crate) block: Option<String>,
    /// Its permission decision (PreToolUse).
    pub(crate) decision: Option<HookDecision>,
    /// Arguments to run the call with instead (PreToolUse).
    pub(crate) updated_input: Option<Value>,
    /// Text for the model.
    pub(crate) context: Option<String>,
    /// `continue: false`, with its `stopReason`.
    pub(crate) halt: Option<String>,
}

/// Whether exit 2 (or `decision: "block"`) means something for `event`.
fn can_block(event: HookEvent) -> bool {
    match event {
        HookEvent::PreToolUse
        | HookEvent::PostToolUse
        | HookEvent::UserPromptSubmit
        | HookEvent::Stop
        | HookEvent::SubagentStop => true,
        HookEvent::SessionStart | HookEvent::SessionEnd | HookEvent::PreCompact => false,
    }
}

/// Whether `event` passes `additionalContext` (or plain stdout) on to the model.
fn takes_context(event: HookEvent) -> bool {
    match event {
        HookEvent::PreToolUse
        | HookEvent::PostToolUse
        | HookEvent::UserPromptSubmit
        | HookEvent::SessionStart => true,
        HookEvent::Stop
        | HookEvent::SubagentStop
        | HookEvent::SessionEnd
        | HookEvent::PreCompact => false,
    }
}

/// What `ran` means for `event`; problems go to `warnings`.
pub(crate) fn interpret(event: HookEvent, ran: &Ran, warnings: &mut HookWarnings) -> Said {
    let who = who(event, &ran.command);
    match &ran.ended {
        Ended::Exited(0) => from_stdout(event, &ran.stdout, &who, warnings),
        Ended::Exited(2) => {
            let reason = match ran.stderr.trim() {
                "" => format!("{who} exited 2 and wrote no reason to stderr"),
                reason => reason.to_owned(),
            };
            if can_block(event) {
                Said {
                    block: Some(reason),
                    ..Said::default()
                }
            } else {
                warnings.push(format!("{who} exited 2: {reason}"));
                Said::default()
            }
        }
        Ended::Exited(status) => {
            warnings.push(format!(
                "{who} failed (exit status {status}){}; going on without it",
                excerpt(&ran.stderr)
            ));
            Said::default()
        }
        Ended::Signalled => {
            warnings.push(format!(
                "{who} was ended by a signal{}; going on without it",
                excerpt(&ran.stderr)
            ));
            Said::default()
        }
        Ended::TimedOut(limit) => {
            warnings.push(format!(
                "{who} did not finish within {} s and was stopped with its processes; going on \
                 without it",
                limit.as_secs()
            ));
            Said::default()
        }
        Ended::NotStarted(error) => {
            warnings.push(format!("{who} could not be started: {error}"));
            Said::default()
        }
    }
}

fn from_stdout(event: HookEvent, stdout: &str, who: &str, warnings: &mut HookWarnings) -> Said {
    let text = stdout.trim();
    if text.is_empty() {
        return Said::default();
    }
    if !text.starts_with('{') {
        return Said {
            context: takes_context(event).then(|| text.to_owned()),
            ..Said::default()
        };
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(object)) => from_object(event, &object, who, warnings),
        Ok(_) => {
            warnings.push(format!(
                "{who} printed JSON that is not an object; its output was ignored"
            ));
            Said::default()
        }
        Err(error) => {
            warnings.push(format!(
                "{who} printed invalid JSON ({error}); its output was ignored"
            ));
            Said::default()
        }
    }
}

/// The text at `key`, if it holds some; anything but a string is ignored with a warning.
fn text(
    map: &Map<String, Value>,
    key: &str,
    who: &str,
    warnings: &mut HookWarnings,
) -> Option<String> {
    match map.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.trim().is_empty() => None,
        Some(Value::String(s)) => Some(s.trim().to_owned()),
        Some(_) => {
            warnings.push(format!("{who}: `{key}` is not a string; ignored"));
            None
        }
    }
}

fn from_object(
    event: HookEvent,
    object: &Map<String, Value>,
    who: &str,
    warnings: &mut HookWarnings,
) -> Said {
    let mut said = Said::default();
    let reason = text(object, "reason", who, warnings);
    let stop_reason = text(object, "stopReason", who, warnings);
    let system_message = text(object, "systemMessage", who, warnings);
    let specific = match object.get("hookSpecificOutput") {
        None | Some(Value::Null) => None,
        Some(Value::Object(specific)) => match specific.get("hookEventName") {
            Some(Value::String(name)) if name != <&str>::from(event) => {
                warnings.push(format!(
                    "{who}: `hookSpecificOutput` is for {name}, not {event}; ignored"
                ));
                None
            }
            _ => Some(specific),
        },
        Some(_) => {
            warnings.push(format!(
                "{who}: `hookSpecificOutput` is not an object; ignored"
            ));
            None
        }
    };
    let decision_reason = specific.and_then(|s| text(s, "permissionDecisionReason", who, warnings));
    let context = specific.and_then(|s| text(s, "additionalContext", who, warnings));

    if object.get("continue") == Some(&Value::Bool(false)) {
        said.halt = Some(stop_reason.unwrap_or_else(|| format!("{who} stopped the turn")));
    }
    if let Some(message) = system_message {
        warnings.push(format!("{who}: {message}"));
    }
    let no_reason = || format!("{who} gave no reason");
    match object.get("decision") {
        None | Some(Value::Null) => {}
        Some(Value::String(d)) if d == "block" => match event {
            // Claude Code's older form of a deny.
            HookEvent::PreToolUse => {
                said.decision = Some(HookDecision::Deny {
                    reason: reason.unwrap_or_else(no_reason),
                });
            }
            _ if can_block(event) => said.block = Some(reason.unwrap_or_else(no_reason)),
            _ => warnings.push(format!("{who}: {event} cannot be blocked; ignored")),
        },
        // Claude Code's older form of an allow; nothing to approve elsewhere.
        Some(Value::String(d)) if d == "approve" => {
            if event == HookEvent::PreToolUse {
                said.decision = Some(HookDecision::Allow { reason });
            }
        }
        Some(other) => warnings.push(format!(
            "{who}: unknown `decision` {other} (expected \"block\" or \"approve\"); ignored"
        )),
    }
    if event == HookEvent::PreToolUse {
        // The current form wins over the older one.
        match specific.and_then(|s| s.get("permissionDecision")) {
            None | Some(Value::Null) => {}
            Some(Value::String(d)) if d == "allow" => {
                said.decision = Some(HookDecision::Allow {
                    reason: decision_reason,
                });
            }
            Some(Value::String(d)) if d == "ask" => {
                said.decision = Some(HookDecision::Ask {
                    reason: decision_reason.unwrap_or_else(no_reason),
                });
            }
            Some(Value::String(d)) if d == "deny" => {
                said.decision = Some(HookDecision::Deny {
                    reason: decision_reason.unwrap_or_else(no_reason),
                });
            }
            Some(other) => warnings.push(format!(
                "{who}: unknown `permissionDecision` {other} (expected \"allow\", \"ask\" or \
                 \"deny\"); ignored"
            )),
        }
        let updated = specific
            .and_then(|s| s.get("updatedInput"))
            .or_else(|| object.get("updatedInput"));
        match updated {
            None | Some(Value::Null) => {}
            Some(input @ Value::Object(_)) => said.updated_input = Some(input.clone()),
            Some(_) => warnings.push(format!(
                "{who}: `updatedInput` is not an object of arguments; ignored"
            )),
        }
    }
    if takes_context(event) {
        said.context = context;
    }
    said
}

/// How a hook is named in messages: its event and the start of its command.
fn who(event: HookEvent, command: &str) -> String {
    let line = command.lines().next().unwrap_or_default().trim();
    let mut shown: String = line.chars().take(COMMAND_SHOWN_CHARS).collect();
    if shown.len() < command.trim().len() {
        shown.push('…');
    }
    format!("the {event} hook `{shown}`")
}

/// The start of a failed hook's stderr, for a warning.
fn excerpt(stderr: &str) -> String {
    let text = stderr.trim();
    if text.is_empty() {
        return String::new();
    }
    let mut shown: String = text.chars().take(STDERR_SHOWN_CHARS).collect();
    if shown.len() < text.len() {
        shown.push('…');
    }
    format!(": {shown}")
}

/// How strict a decision is: a deny wins over an ask, which wins over an allow.
fn rank(decision: &HookDecision) -> u8 {
    match decision {
        HookDecision::Allow { .. } => 0,
        HookDecision::Ask { .. } => 1,
        HookDecision::Deny { .. } => 2,
    }
}

/// The decision of two hooks: the stricter; two refusals (or questions) give both reasons.
fn stricter(held: HookDecision, new: HookDecision) -> HookDecision {
    match (held, new) {
        (HookDecision::Deny { reason: a }, HookDecision::Deny { reason: b }) => {
            HookDecision::Deny {
                reason: format!("{a}; {b}"),
            }
        }
        (HookDecision::Ask { reason: a }, HookDecision::Ask { reason: b }) => HookDecision::Ask {
            reason: format!("{a}; {b}"),
        },
        (held, new) if rank(&new) > rank(&held) => new,
        (held, _) => held,
    }
}

/// Joins texts under a heading, when there are any.
fn labelled(heading: &str, texts: &[String]) -> Option<String> {
    (!texts.is_empty()).then(|| format!("{heading}\n{}", texts.join("\n")))
}

/// What the PreToolUse hooks of one call decide together.
pub(crate) fn pre_tool_use(said: Vec<Said>, warnings: &mut HookWarnings) -> PreToolUse {
    let mut decision: Option<HookDecision> = None;
    let mut updated_input = None;
    let mut contexts = Vec::new();
    for said in said {
        let says = if let Some(why) = said.halt {
            warnings.push(format!(
                "a PreToolUse hook asked to stop ({why}); rein refuses the call instead"
            ));
            Some(HookDecision::Deny { reason: why })
        } else if let Some(reason) = said.block {
            Some(HookDecision::Deny { reason })
        } else {
            said.decision
        };
        if let Some(says) = says {
            decision = Some(match decision.take() {
                None => says,
                Some(held) => stricter(held, says),
            });
        }
        if updated_input.is_none() {
            updated_input = said.updated_input;
        }
        contexts.extend(said.context);
    }
    PreToolUse {
        decision,
        updated_input,
        context: labelled("PreToolUse hook context:", &contexts),
    }
}

/// What the PostToolUse hooks of one call add for the model.
pub(crate) fn post_tool_use(said: Vec<Said>) -> PostToolUse {
    let mut feedback = Vec::new();
    let mut contexts = Vec::new();
    for said in said {
        feedback.extend(said.halt);
        feedback.extend(said.block);
        contexts.extend(said.context);
    }
    let parts: Vec<String> = [
        labelled("PostToolUse hook feedback:", &feedback),
        labelled("PostToolUse hook context:", &contexts),
    ]
    .into_iter()
    .flatten()
    .collect();
    PostToolUse {
        context: (!parts.is_empty()).then(|| parts.join("\n\n")),
    }
}

/// Whether the person's request goes to the model, and what goes with it.
pub(crate) fn user_prompt_submit(said: Vec<Said>) -> PromptCheck {
    let mut blocks = Vec::new();
    let mut contexts = Vec::new();
    for said in said {
        blocks.extend(said.halt);
        blocks.extend(said.block);
        contexts.extend(said.context);
    }
    if blocks.is_empty() {
        PromptCheck::Send {
            context: labelled("UserPromptSubmit hook context:", &contexts),
        }
    } else {
        PromptCheck::Block {
            reason: blocks.join("; "),
        }
    }
}

/// Whether the turn ends. `continue: false` from any hook ends it, whatever the others say.
pub(crate) fn stop(said: Vec<Said>) -> StopCheck {
    if said.iter().any(|s| s.halt.is_some()) {
        return StopCheck::End;
    }
    let reasons: Vec<String> = said.into_iter().filter_map(|s| s.block).collect();
    match labelled("Stop hook feedback:", &reasons) {
        Some(reason) => StopCheck::Continue { reason },
        None => StopCheck::End,
    }
}

/// What the SessionStart hooks give the model.
pub(crate) fn session_start(said: Vec<Said>) -> Option<String> {
    let contexts: Vec<String> = said.into_iter().filter_map(|s| s.context).collect();
    labelled("SessionStart hook context:", &contexts)
}

#[cfg(test)]
#[path = "reply_tests.rs"]
mod tests;
