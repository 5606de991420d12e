//! A conversation with pictures sent to a model that takes none (a session resumed with
//! another model): the pictures become a line of text, or the request would fail whole.

use rein_llm::{Part, Request};

/// What stands where a picture was.
const WITHHELD: &str = "[an image was here; the model in use does not take images]";

/// `request` without its pictures, or `None` when it has none.
pub(in crate::agent) fn without_images(request: &Request) -> Option<Request> {
    let has_images = request
        .messages
        .iter()
        .flat_map(|m| &m.parts)
        .any(|p| match p {
            Part::Image(_) => true,
            Part::ToolResult(result) => !result.images.is_empty(),
            Part::Text { .. } | Part::Reasoning { .. } | Part::ToolCall(_) => false,
        });
    if !has_images {
        return None;
    }
    let mut blind = request.clone();
    for message in &mut blind.messages {
        for part in &mut message.parts {
            match part {
                Part::Image(_) => {
                    *part = Part::Text {
                        text: WITHHELD.to_owned(),
                    };
                }
                Part::ToolResult(result) if !result.images.is_empty() => {
                    result.images.clear();
                    result.content.push('\n');
                    result.content.push_str(WITHHELD);
                }
                Part::ToolResult(_)
                | Part::Text { .. }
                | Part::Reasoning { .. }
                | Part::ToolCall(_) => {}
            }
        }
    }
    Some(blind)
}
