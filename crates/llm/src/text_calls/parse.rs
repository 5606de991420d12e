//! Finding tool calls a model wrote as text, in the formats open models are trained on.
//!
//! Two kinds of evidence count. A marker at the start of a line outside a code block
//! (`<tool_call>`, `[TOOL_CALLS]`, `<|python_tag|>`, DeepSeek's `<｜tool▁calls▁begin｜>`) says
//! the rest is a call whatever it holds: what does not parse becomes a call with the raw text
//! as its arguments, which the agent answers with an error the model can correct. Without a
//! marker, only an answer that is nothing but a call object (bare, or alone in a ```json
//! block) is one, and only when it has a `name` and `arguments` or `parameters`: a JSON
//! answer or an example inside an explanation is text.

use serde_json::Value;

use crate::assemble::UNNAMED_TOOL;

/// One tool call found in a model's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextCall {
    /// The tool's name as written ([`UNNAMED_TOOL`] when none could be read).
    pub name: String,
    /// The arguments as JSON text (possibly invalid, exactly as written).
    pub arguments: String,
}

/// The calls a response's text holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundCalls {
    /// Where the markup starts: the text before it is the model's narration.
    pub narration_end: usize,
    /// The calls, in order.
    pub calls: Vec<TextCall>,
}

/// A marker that starts tool-call markup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Marker {
    /// Hermes, Qwen: `<tool_call>{...}</tool_call>`, one or several.
    Hermes,
    /// Mistral: `[TOOL_CALLS][{...}]`, or `[TOOL_CALLS]name[ARGS]{...}`.
    Mistral,
    /// Llama 3: `<|python_tag|>{"name": ..., "parameters": ...}`.
    PythonTag,
    /// DeepSeek: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>...`.
    DeepSeek,
}

/// Every marker with its text; DeepSeek's single-call opener too, which some templates use.
pub(crate) const MARKERS: &[(&str, Marker)] = &[
    ("<tool_call>", Marker::Hermes),
    ("[TOOL_CALLS]", Marker::Mistral),
    ("<|python_tag|>", Marker::PythonTag),
    ("<｜tool▁calls▁begin｜>", Marker::DeepSeek),
    ("<｜tool▁call▁begin｜>", Marker::DeepSeek),
];

const HERMES_CLOSE: &str = "</tool_call>";
const DEEPSEEK_CALL_BEGIN: &str = "<｜tool▁call▁begin｜>";
const DEEPSEEK_CALL_END: &str = "<｜tool▁call▁end｜>";
const DEEPSEEK_CALLS_END: &str = "<｜tool▁calls▁end｜>";
const DEEPSEEK_SEP: &str = "<｜tool▁sep｜>";
const FENCE: &str = "```";

/// The tool calls `text` holds, when it holds any (see the module's doc for what counts).
pub fn find_text_calls(text: &str) -> Option<FoundCalls> {
    if let Some(calls) = whole_answer_calls(text) {
        return Some(FoundCalls {
            narration_end: 0,
            calls,
        });
    }
    let (at, marker) = first_marker(text)?;
    let calls = match marker {
        Marker::Hermes => hermes(&text[at..]),
        Marker::Mistral => mistral(&text[at..]),
        Marker::PythonTag => python_tag(&text[at..]),
        Marker::DeepSeek => deepseek(&text[at..]),
    }?;
    Some(FoundCalls {
        narration_end: at,
        calls,
    })
}

/// The marker at the start of `line` (after indentation), if one is.
pub(crate) fn marker_at_line_start(line: &str) -> Option<Marker> {
    let line = line.trim_start();
    MARKERS
        .iter()
        .find(|(m, _)| line.starts_with(m))
        .map(|&(_, marker)| marker)
}

/// Whether `line` (after indentation) may still grow into a marker.
pub(crate) fn may_become_marker(line: &str) -> bool {
    let line = line.trim_start();
    MARKERS.iter().any(|(m, _)| m.starts_with(line))
}

/// Whether `line` opens or closes a code block.
pub(crate) fn is_fence(line: &str) -> bool {
    line.trim_start().starts_with(FENCE)
}

/// The first marker at a line start outside code blocks: its byte offset and kind.
fn first_marker(text: &str) -> Option<(usize, Marker)> {
    let mut in_code = false;
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        if is_fence(line) {
            in_code = !in_code;
        } else if !in_code && let Some(marker) = marker_at_line_start(line) {
            let indent = line.len() - line.trim_start().len();
            return Some((start + indent, marker));
        }
        start += line.len();
    }
    None
}

/// An answer that is nothing but call objects: bare, or alone in a ```json block.
pub(crate) fn whole_answer_calls(text: &str) -> Option<Vec<TextCall>> {
    let text = text.trim();
    let json = match text.strip_prefix(FENCE) {
        Some(fenced) => fenced_json(fenced)?,
        None => text,
    };
    if !json.starts_with(['{', '[']) {
        return None;
    }
    let value: Value = serde_json::from_str(json).ok()?;
    let objects = match value {
        Value::Array(items) if !items.is_empty() => items,
        object @ Value::Object(_) => vec![object],
        _ => return None,
    };
    objects.iter().map(strict_call).collect()
}

/// The inside of a code block that is the whole text (after its opening backticks), when its
/// language is JSON or unnamed.
fn fenced_json(fenced: &str) -> Option<&str> {
    let (info, body) = fenced.split_once('\n')?;
    let info = info.trim().to_ascii_lowercase();
    if !matches!(info.as_str(), "" | "json" | "tool_call" | "tool_code") {
        return None;
    }
    let body = body.trim_end().strip_suffix(FENCE)?;
    // Another block inside means this was not one block.
    (!body.contains(FENCE)).then_some(body.trim())
}

/// A call object without a marker: it must say which tool and with what.
fn strict_call(value: &Value) -> Option<TextCall> {
    let object = value.as_object()?;
    let (name, arguments) = match object.get("function") {
        Some(function) if object.get("name").is_none() => {
            (function.get("name")?, function.get("arguments")?)
        }
        _ => (
            object.get("name")?,
            object
                .get("arguments")
                .or_else(|| object.get("parameters"))?,
        ),
    };
    Some(TextCall {
        name: name.as_str()?.to_owned(),
        arguments: arguments_text(arguments),
    })
}

/// A call after a marker: whatever it holds is one, so the model hears what was wrong.
fn loose_call(body: &str) -> TextCall {
    let body = strip_fence(body.trim());
    if let Ok(value) = serde_json::from_str::<Value>(body)
        && let Some(call) = strict_call(&value)
    {
        return call;
    }
    if let Ok(Value::Object(object)) = serde_json::from_str::<Value>(body)
        && let Some(name) = object.get("name").and_then(Value::as_str)
    {
        // A name without arguments: a call with none.
        return TextCall {
            name: name.to_owned(),
            arguments: "{}".to_owned(),
        };
    }
    TextCall {
        name: name_in_broken_json(body).unwrap_or_else(|| UNNAMED_TOOL.to_owned()),
        arguments: body.to_owned(),
    }
}

/// Arguments as JSON text: a string is taken as already being JSON text (some templates
/// write it so), anything else is serialised.
fn arguments_text(arguments: &Value) -> String {
    match arguments {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// `"name": "read_file"` in text that is not valid JSON, to say which tool was meant.
fn name_in_broken_json(body: &str) -> Option<String> {
    let after = &body[body.find("\"name\"")? + "\"name\"".len()..];
    let after = after.trim_start().strip_prefix(':')?.trim_start();
    let after = after.strip_prefix('"')?;
    let name = &after[..after.find('"')?];
    let plausible = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    plausible.then(|| name.to_owned())
}

/// `body` without a code block around it.
fn strip_fence(body: &str) -> &str {
    let Some(inner) = body.strip_prefix(FENCE) else {
        return body;
    };
    let inner = inner.split_once('\n').map_or(inner, |(_, rest)| rest);
    inner.trim_end().strip_suffix(FENCE).unwrap_or(inner).trim()
}

fn hermes(markup: &str) -> Option<Vec<TextCall>> {
    let mut calls = Vec::new();
    for piece in markup.split("<tool_call>").skip(1) {
        let body = piece.split(HERMES_CLOSE).next().unwrap_or_default();
        if body.trim().is_empty() {
            continue;
        }
        calls.push(loose_call(body));
    }
    (!calls.is_empty()).then_some(calls)
}

fn mistral(markup: &str) -> Option<Vec<TextCall>> {
    let mut calls = Vec::new();
    for piece in markup.split("[TOOL_CALLS]").skip(1) {
        let piece = piece.trim();
        if piece.starts_with(['[', '{']) {
            // `[{...}, {...}]`, or objects one after another.
            let mut values = serde_json::Deserializer::from_str(piece).into_iter::<Value>();
            match values.next() {
                Some(Ok(Value::Array(items))) => {
                    calls.extend(items.iter().map(|item| loose_call(&item.to_string())));
                }
                Some(Ok(value)) => {
                    calls.push(loose_call(&value.to_string()));
                    for value in values.map_while(Result::ok) {
                        calls.push(loose_call(&value.to_string()));
                    }
                }
                Some(Err(_)) | None => calls.push(loose_call(piece)),
            }
        } else if let Some((name, arguments)) = piece.split_once("[ARGS]") {
            // The newer template: `name[ARGS]{...}`, perhaps `name[CALL_ID]id[ARGS]{...}`.
            let name = name.split("[CALL_ID]").next().unwrap_or(name).trim();
            calls.push(TextCall {
                name: name.to_owned(),
                arguments: first_json_text(arguments),
            });
        } else {
            // The marker followed by prose: not a call.
            return None;
        }
    }
    (!calls.is_empty()).then_some(calls)
}

/// The first JSON value at the start of `text`, as written; the whole text when it does not
/// parse (the model is told why).
fn first_json_text(text: &str) -> String {
    let text = text.trim();
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    match values.next() {
        Some(Ok(_)) => text[..values.byte_offset()].to_owned(),
        Some(Err(_)) | None => text.to_owned(),
    }
}

fn python_tag(markup: &str) -> Option<Vec<TextCall>> {
    let body = markup.strip_prefix("<|python_tag|>")?;
    let body = ["<|eom_id|>", "<|eot_id|>"]
        .iter()
        .fold(body, |body, end| body.split(end).next().unwrap_or(body))
        .trim();
    let mut calls = Vec::new();
    // Several calls are separated by `;`.
    let mut rest = body;
    while !rest.is_empty() {
        let mut values = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        match values.next() {
            Some(Ok(value)) => {
                calls.push(loose_call(&value.to_string()));
                rest = rest[values.byte_offset()..].trim_start_matches([';', ' ', '\n', '\t']);
            }
            Some(Err(_)) | None => {
                calls.push(loose_call(rest));
                break;
            }
        }
    }
    (!calls.is_empty()).then_some(calls)
}

fn deepseek(markup: &str) -> Option<Vec<TextCall>> {
    let markup = markup.split(DEEPSEEK_CALLS_END).next().unwrap_or(markup);
    let mut calls = Vec::new();
    for piece in markup.split(DEEPSEEK_CALL_BEGIN).skip(1) {
        let piece = piece.split(DEEPSEEK_CALL_END).next().unwrap_or(piece);
        let Some((head, tail)) = piece.split_once(DEEPSEEK_SEP) else {
            calls.push(loose_call(piece));
            continue;
        };
        if head.trim() == "function" {
            // R1: `function<sep>NAME\n```json\n{...}\n````.
            let (name, arguments) = tail.split_once('\n').unwrap_or((tail, "{}"));
            calls.push(TextCall {
                name: name.trim().to_owned(),
                arguments: strip_fence(arguments.trim()).to_owned(),
            });
        } else {
            // V3.1: `NAME<sep>{...}`.
            calls.push(TextCall {
                name: head.trim().to_owned(),
                arguments: strip_fence(tail.trim()).to_owned(),
            });
        }
    }
    (!calls.is_empty()).then_some(calls)
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
