//! A tool call's result as the model sees it: text content as is, images, audio and
//! resources described (the model gets no binary data through a tool result), structured
//! content as JSON, `isError` as an error result.

use rein_tools::ToolOutput;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

/// The output for `result`; the runner applies the output budget afterwards.
pub(crate) fn tool_output(result: &CallToolResult) -> ToolOutput {
    let mut parts: Vec<String> = result.content.iter().map(describe).collect();
    if let Some(structured) = &result.structured_content {
        // Servers often repeat the structured result as text; the JSON is what is exact.
        let json =
            serde_json::to_string_pretty(structured).unwrap_or_else(|_| structured.to_string());
        let already_there = parts.iter().any(|p| same_json(p, structured));
        if !already_there {
            parts.push(json);
        }
    }
    let text = if parts.is_empty() {
        "(the tool returned no content)".to_owned()
    } else {
        parts.join("\n")
    };
    if result.is_error == Some(true) {
        ToolOutput::error(text)
    } else {
        ToolOutput::success(text)
    }
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
    fn text_is_kept_and_images_described() {
        let result = CallToolResult::success(vec![
            Content::text("hello"),
            Content::image("aGVsbG8=", "image/png"),
        ]);
        let out = tool_output(&result);
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
        assert_eq!(tool_output(&result).content, value.to_string());
        let mut bare = CallToolResult::success(vec![]);
        bare.structured_content = Some(value);
        assert_eq!(tool_output(&bare).content, "{\n  \"sum\": 3\n}");
    }

    #[test]
    fn is_error_is_an_error() {
        let out = tool_output(&CallToolResult::error(vec![Content::text("bad input")]));
        assert!(out.is_error);
        assert_eq!(out.content, "bad input");
    }
}
