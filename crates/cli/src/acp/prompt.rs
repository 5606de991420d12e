//! A `session/prompt`'s content blocks as the text of one rein turn: the person's words, the
//! files they attached (embedded resources, inline) and the ones they linked (resource links,
//! named so the model reads them with its tools).

use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource};

/// The prompt's text for the model.
pub(crate) fn prompt_text(blocks: &[ContentBlock]) -> String {
    let mut text = String::new();
    let separate = |text: &mut String| {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
    };
    for block in blocks {
        match block {
            ContentBlock::Text(t) => text.push_str(&t.text),
            ContentBlock::ResourceLink(link) => {
                separate(&mut text);
                text.push_str(&format!(
                    "[attached: {} at {}; read it with the tools if needed]\n",
                    link.name,
                    path_of(&link.uri)
                ));
            }
            ContentBlock::Resource(embedded) => {
                separate(&mut text);
                match &embedded.resource {
                    EmbeddedResourceResource::TextResourceContents(file) => {
                        text.push_str(&format!(
                            "<attached file=\"{}\">\n{}\n</attached>\n",
                            path_of(&file.uri),
                            file.text.trim_end_matches('\n')
                        ));
                    }
                    EmbeddedResourceResource::BlobResourceContents(blob) => {
                        text.push_str(&format!(
                            "[attached binary content {} omitted: rein reads text only]\n",
                            path_of(&blob.uri)
                        ));
                    }
                    // The protocol's enum is non-exhaustive.
                    _ => {}
                }
            }
            ContentBlock::Image(_) | ContentBlock::Audio(_) => {
                separate(&mut text);
                text.push_str("[an image or audio clip was attached; rein passes text only]\n");
            }
            // The protocol's enum is non-exhaustive.
            _ => {}
        }
    }
    text
}

/// A `file://` URI as the path it names; any other URI as it is.
fn path_of(uri: &str) -> &str {
    uri.strip_prefix("file://").unwrap_or(uri)
}

#[cfg(test)]
mod tests {
    use agent_client_protocol::v1::schema::{
        EmbeddedResource, ResourceLink, TextContent, TextResourceContents,
    };

    use super::*;

    #[test]
    fn attachments_join_the_words() {
        let blocks = vec![
            ContentBlock::Text(TextContent::new("fix this")),
            ContentBlock::ResourceLink(ResourceLink::new("main.py", "file:///w/main.py")),
            ContentBlock::Resource(EmbeddedResource::new(
                EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(
                    "x = 1\n",
                    "file:///w/util.py",
                )),
            )),
        ];
        assert_eq!(
            prompt_text(&blocks),
            "fix this\n[attached: main.py at /w/main.py; read it with the tools if needed]\n\
             <attached file=\"/w/util.py\">\nx = 1\n</attached>\n"
        );
    }
}
