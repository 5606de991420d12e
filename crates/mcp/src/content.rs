//! A tool call's result as the model sees it: text content as is, images given to a model
//! that takes them (through the same checks and scaling as read_file's) and described to one
//! that does not, audio and binary resources described, structured content as JSON,
//! `isError` as an error result.
//!
//! Servers usually send the same data twice, as text and as `structuredContent` (the Python
//! SDK wraps it as `{"result": ...}`, server-filesystem as `{"content": ...}`, server-memory
//! as `{"entities": ...}`). The model gets one copy: the text, unless the text is empty or
//! only sums the structured data up ("Found 3 entities"); both only when they hold
//! different things. A doubled result would also spend the output budget twice and get cut.

use rein_tools::ToolOutput;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

/// The output for `result`; the runner applies the output budget afterwards.
pub(crate) fn tool_output(result: &CallToolResult, vision: bool) -> ToolOutput {
    let mut images = Vec::new();
    let mut parts: Vec<String> = result
        .content
        .iter()
        .map(|block| shown(block, vision, &mut images))
        .collect();
    if let Some(structured) = &result.structured_content {
        let text: String = result
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text(text) => Some(text.text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        let json =
            serde_json::to_string_pretty(structured).unwrap_or_else(|_| structured.to_string());
        match one_copy(&text, structured, &json) {
            Copy::Text => {}
            Copy::Structured => {
                parts.retain(|part| !result_text_blocks(result).any(|t| t == part));
                parts.push(json);
            }
            Copy::Both => parts.push(json),
        }
    }
    let text = if parts.is_empty() {
        "(the tool returned no content)".to_owned()
    } else {
        parts.join("\n")
    };
    let mut output = if result.is_error == Some(true) {
        ToolOutput::error(text)
    } else {
        ToolOutput::success(text)
    };
    output.images = images;
    output
}

/// One content block as the model gets it: text as is, an image given (pushed on `images`)
/// to a model that sees and described to one that does not, the rest described. Tool results
/// and prompts (`prompts/get`) both go through it.
pub(crate) fn shown(
    block: &ContentBlock,
    vision: bool,
    images: &mut Vec<rein_tools::image::ImageData>,
) -> String {
    match block {
        ContentBlock::Image(image) if vision => match rein_tools::image::from_base64(&image.data) {
            Ok(ready) => {
                let text = format!(
                    "[image: {}, {}×{}, attached]",
                    ready.media_type, ready.width, ready.height
                );
                images.push(ready);
                text
            }
            Err(why) => format!("[image: {}, not shown: {why}]", image.mime_type),
        },
        _ => describe(block),
    }
}

/// Which copy of a result the model gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Copy {
    /// The text blocks carry the data.
    Text,
    /// The text is empty or a summary: the JSON instead.
    Structured,
    /// They hold different things.
    Both,
}

fn one_copy(text: &str, structured: &serde_json::Value, json: &str) -> Copy {
    if text.trim().is_empty() {
        return Copy::Structured;
    }
    if same_json(text, structured) || wraps(structured, text) || covers(text, structured) {
        return Copy::Text;
    }
    // Much shorter than the data and not holding it: a summary of it.
    if text.len() * 2 < json.len() {
        return Copy::Structured;
    }
    Copy::Both
}

/// `{"result": X}`, `{"content": X}`: one key whose value is the text, as a string or JSON.
fn wraps(structured: &serde_json::Value, text: &str) -> bool {
    let Some(object) = structured.as_object() else {
        return false;
    };
    let mut values = object.values();
    match (values.next(), values.next()) {
        (Some(serde_json::Value::String(inner)), None) => inner.trim() == text.trim(),
        (Some(inner), None) => same_json(text, inner),
        _ => false,
    }
}

/// Whether nearly every string and number in `value` appears in `text` (the text is the data
/// written another way).
fn covers(text: &str, value: &serde_json::Value) -> bool {
    let mut leaves = Vec::new();
    collect_leaves(value, &mut leaves);
    if leaves.is_empty() {
        return false;
    }
    let found = leaves
        .iter()
        .filter(|leaf| text.contains(leaf.as_str()))
        .count();
    found * 10 >= leaves.len() * 9
}

/// Up to a few hundred of the strings (3 characters or more) and numbers in `value`.
fn collect_leaves(value: &serde_json::Value, leaves: &mut Vec<String>) {
    const MAX_LEAVES: usize = 400;
    if leaves.len() >= MAX_LEAVES {
        return;
    }
    match value {
        serde_json::Value::String(s) if s.chars().count() >= 3 => leaves.push(s.clone()),
        serde_json::Value::Number(n) => leaves.push(n.to_string()),
        serde_json::Value::Array(items) => {
            for item in items {
                collect_leaves(item, leaves);
            }
        }
        serde_json::Value::Object(map) => {
            for item in map.values() {
                collect_leaves(item, leaves);
            }
        }
        _ => {}
    }
}

fn result_text_blocks(result: &CallToolResult) -> impl Iterator<Item = &String> {
    result.content.iter().filter_map(|block| match block {
        ContentBlock::Text(text) => Some(&text.text),
        _ => None,
    })
}

/// Whether `text` is `value` written as JSON.
fn same_json(text: &str, value: &serde_json::Value) -> bool {
    serde_json::from_str::<serde_json::Value>(text).is_ok_and(|parsed| &parsed == value)
}

/// One content block, in words where it is not text.
fn describe(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => format!(
            "[image: {}, {} bytes of base64, not shown]",
            image.mime_type,
            image.data.len()
        ),
        ContentBlock::Audio(audio) => format!(
            "[audio: {}, {} bytes of base64, not shown]",
            audio.mime_type,
            audio.data.len()
        ),
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => {
                format!("[resource {uri}]\n{text}")
            }
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => format!(
                "[resource {uri}: {}, {} bytes of base64, not shown]",
                mime_type.as_deref().unwrap_or("binary"),
                blob.len()
            ),
            // rmcp's enum is non-exhaustive: a later kind of resource is named, not dropped.
            other => format!("[resource of a kind rein does not show: {other:?}]"),
        },
        ContentBlock::ResourceLink(link) => {
            let about = link
                .description
                .as_deref()
                .map(|d| format!(": {d}"))
                .unwrap_or_default();
            format!("[resource link {} ({}){about}]", link.uri, link.name)
        }
        other => format!("[content of a kind rein does not show: {other:?}]"),
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::ContentBlock as Content;
    use serde_json::json;

    use super::*;

    #[test]
    fn a_model_that_sees_gets_the_image_itself() {
        const PIXEL: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
        let result = CallToolResult::success(vec![
            Content::text("a screenshot"),
            Content::image(PIXEL, "image/png"),
            Content::image("aGVsbG8=", "image/png"),
        ]);
        let out = tool_output(&result, true);
        assert_eq!(out.images.len(), 1);
        assert_eq!(out.images[0].media_type, "image/png");
        assert_eq!(
            out.content,
            "a screenshot\n[image: image/png, 1×1, attached]\n[image: image/png, not shown: it \
             is not a PNG, JPEG, GIF or WebP picture]"
        );
    }

    #[test]
    fn text_is_kept_and_images_described() {
        let result = CallToolResult::success(vec![
            Content::text("hello"),
            Content::image("aGVsbG8=", "image/png"),
        ]);
        let out = tool_output(&result, false);
        assert!(!out.is_error);
        assert_eq!(
            out.content,
            "hello\n[image: image/png, 8 bytes of base64, not shown]"
        );
    }

    #[test]
    fn structured_content_is_json_once() {
        let value = json!({"sum": 3});
        let mut result = CallToolResult::success(vec![Content::text(value.to_string())]);
        result.structured_content = Some(value.clone());
        assert_eq!(tool_output(&result, false).content, value.to_string());
        let mut bare = CallToolResult::success(vec![]);
        bare.structured_content = Some(value);
        assert_eq!(tool_output(&bare, false).content, "{\n  \"sum\": 3\n}");
    }

    #[test]
    fn a_wrapped_copy_of_the_text_is_not_sent_again() {
        let file = "line 1\nline 2\n".repeat(2000);
        // server-filesystem: {"content": <the text>}.
        let mut result = CallToolResult::success(vec![Content::text(file.clone())]);
        result.structured_content = Some(json!({"content": file}));
        assert_eq!(tool_output(&result, false).content, file);
        // The Python SDK: {"result": <the value>}.
        let mut result = CallToolResult::success(vec![Content::text("[1, 2, 3]")]);
        result.structured_content = Some(json!({"result": [1, 2, 3]}));
        assert_eq!(tool_output(&result, false).content, "[1, 2, 3]");
        // server-memory: the entities as text, and again under "entities".
        let entities = json!([{"name": "ada", "entityType": "person", "observations": ["wrote the first program"]}]);
        let text = serde_json::to_string_pretty(&json!({"entities": entities})).unwrap();
        let mut result = CallToolResult::success(vec![Content::text(text.clone())]);
        result.structured_content = Some(json!({"entities": entities}));
        assert_eq!(tool_output(&result, false).content, text);
    }

    #[test]
    fn a_summary_gives_way_to_the_structured_data() {
        let data = json!({"entities": [
            {"name": "ada lovelace", "entityType": "person", "observations": ["first program", "notes on the engine"]},
            {"name": "grace hopper", "entityType": "person", "observations": ["compilers", "COBOL"]}
        ]});
        let mut result = CallToolResult::success(vec![Content::text("Found 2 entities.")]);
        result.structured_content = Some(data.clone());
        let out = tool_output(&result, false).content;
        assert!(!out.contains("Found 2 entities."), "{out}");
        assert!(out.contains("grace hopper"), "{out}");
        // Different data in each: both.
        let long = "A report that says other things at length. ".repeat(20);
        let mut result = CallToolResult::success(vec![Content::text(long.clone())]);
        result.structured_content = Some(json!({"n": 1}));
        let out = tool_output(&result, false).content;
        assert!(out.starts_with(&long) && out.contains("\"n\": 1"), "{out}");
    }

    #[test]
    fn is_error_is_an_error() {
        let out = tool_output(
            &CallToolResult::error(vec![Content::text("bad input")]),
            false,
        );
        assert!(out.is_error);
        assert_eq!(out.content, "bad input");
    }
}
