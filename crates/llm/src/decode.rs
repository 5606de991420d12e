//! Turning a response body, streamed SSE or one JSON document, into [`StreamEvent`]s.

use crate::anthropic::stream::AnthropicStream;
use crate::openai::stream::OpenAiStream;
use crate::responses::stream::ResponsesStream;
use crate::sse::{SseEvent, SseParser};
use crate::{LlmError, ProviderKind, StreamEvent};

/// The largest non-streaming JSON reply accepted.
const JSON_BODY_MAX_BYTES: usize = 64 * 1024 * 1024;

/// Decodes one response body of either wire format, fed in chunks as they arrive.
///
/// Whether the body is SSE or a single JSON reply is decided from its first byte, so a server
/// that ignores `stream: true` (or labels its content type wrongly) still works. Adjacent text,
/// reasoning and argument pieces are merged into one event per [`feed`](Self::feed), which
/// saves an allocation per SSE event without changing what an assembler builds.
#[derive(Debug)]
pub struct StreamDecoder {
    body: Body,
    sse: SseParser,
    format: Format,
}

#[derive(Debug)]
enum Body {
    Unknown,
    Sse,
    Json(Vec<u8>),
}

#[derive(Debug)]
enum Format {
    OpenAi(OpenAiStream),
    Anthropic(AnthropicStream),
    Responses(ResponsesStream),
}

impl StreamDecoder {
    /// A decoder for a response in `kind`'s wire format.
    pub fn new(kind: ProviderKind) -> Self {
        let format = match kind {
            ProviderKind::OpenAi => Format::OpenAi(OpenAiStream::default()),
            ProviderKind::Anthropic => Format::Anthropic(AnthropicStream::default()),
            ProviderKind::OpenAiResponses => Format::Responses(ResponsesStream::default()),
        };
        Self {
            body: Body::Unknown,
            sse: SseParser::new(),
            format,
        }
    }

    /// Decodes the next piece of the body, appending the events it completes to `out`.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        if let Body::Unknown = self.body {
            match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
                None => return Ok(()),
                Some(b'{') => self.body = Body::Json(Vec::new()),
                Some(_) => self.body = Body::Sse,
            }
        }
        match &mut self.body {
            Body::Unknown => Ok(()),
            Body::Json(buf) => {
                if buf.len() + bytes.len() > JSON_BODY_MAX_BYTES {
                    return Err(LlmError::Protocol(format!(
                        "the JSON reply exceeded {JSON_BODY_MAX_BYTES} bytes"
                    )));
                }
                buf.extend_from_slice(bytes);
                Ok(())
            }
            Body::Sse => {
                let format = &mut self.format;
                let mut emit = Emit { events: out };
                self.sse
                    .feed(bytes, &mut |event: SseEvent<'_>| match format {
                        Format::OpenAi(s) => s.event(event, &mut emit),
                        Format::Anthropic(s) => s.event(event, &mut emit),
                        Format::Responses(s) => s.event(event, &mut emit),
                    })
            }
        }
    }

    /// Whether any of the body (beyond white space) has come.
    pub fn has_body(&self) -> bool {
        !matches!(self.body, Body::Unknown)
    }

    /// Whether the body has said it is finished, so the rest need not be read.
    pub fn is_complete(&self) -> bool {
        match (&self.body, &self.format) {
            (Body::Sse, Format::OpenAi(s)) => s.is_complete(),
            (Body::Sse, Format::Anthropic(s)) => s.is_complete(),
            (Body::Sse, Format::Responses(s)) => s.is_complete(),
            (Body::Unknown | Body::Json(_), _) => false,
        }
    }

    /// Ends the body: emits the closing events, or an error when the body stopped early.
    pub fn finish(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        let mut emit = Emit { events: out };
        if let Body::Sse = self.body
            && !self.is_complete()
        {
            // A last event whose blank line never came is still the server's last word: the
            // format decides below whether the stream was complete with it.
            let format = &mut self.format;
            self.sse.finish(&mut |event: SseEvent<'_>| match format {
                Format::OpenAi(s) => s.event(event, &mut emit),
                Format::Anthropic(s) => s.event(event, &mut emit),
                Format::Responses(s) => s.event(event, &mut emit),
            })?;
        }
        match (&mut self.body, &mut self.format) {
            (Body::Unknown, _) => Err(LlmError::Connection(
                "the server closed the connection without sending a reply".into(),
            )),
            (Body::Json(buf), Format::OpenAi(s)) => s.whole_reply(buf, &mut emit),
            (Body::Json(buf), Format::Anthropic(s)) => s.whole_reply(buf, &mut emit),
            (Body::Json(buf), Format::Responses(s)) => s.whole_reply(buf, &mut emit),
            (Body::Sse, Format::OpenAi(s)) => s.finish(&mut emit),
            (Body::Sse, Format::Anthropic(s)) => s.finish(&mut emit),
            (Body::Sse, Format::Responses(s)) => s.finish(&mut emit),
        }
    }
}

/// Appends events, merging a piece into the previous event when they continue each other.
#[derive(Debug)]
pub(crate) struct Emit<'a> {
    events: &'a mut Vec<StreamEvent>,
}

impl Emit<'_> {
    pub(crate) fn text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        if let Some(StreamEvent::TextDelta { text: last }) = self.events.last_mut() {
            last.push_str(text);
        } else {
            self.events
                .push(StreamEvent::TextDelta { text: text.into() });
        }
    }

    pub(crate) fn reasoning(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        if let Some(StreamEvent::ReasoningDelta { text: last }) = self.events.last_mut() {
            last.push_str(text);
        } else {
            self.events
                .push(StreamEvent::ReasoningDelta { text: text.into() });
        }
    }

    pub(crate) fn tool_fragment(
        &mut self,
        index: usize,
        id: Option<&str>,
        name: Option<&str>,
        fragment: &str,
    ) {
        if id.is_none()
            && name.is_none()
            && let Some(StreamEvent::ToolCallDelta {
                index: last_index,
                arguments_fragment,
                ..
            }) = self.events.last_mut()
            && *last_index == index
        {
            arguments_fragment.push_str(fragment);
            return;
        }
        self.events.push(StreamEvent::ToolCallDelta {
            index,
            id: id.map(str::to_owned),
            name: name.map(str::to_owned),
            arguments_fragment: fragment.into(),
        });
    }

    pub(crate) fn push(&mut self, event: StreamEvent) {
        self.events.push(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_adjacent_pieces_of_the_same_kind() {
        let mut events = Vec::new();
        let mut emit = Emit {
            events: &mut events,
        };
        emit.text("He");
        emit.text("llo");
        emit.reasoning("hm");
        emit.tool_fragment(2, Some("c"), Some("f"), "{\"a\"");
        emit.tool_fragment(2, None, None, ":1}");
        emit.tool_fragment(3, None, None, "{}");
        assert_eq!(
            events,
            vec![
                StreamEvent::TextDelta {
                    text: "Hello".into()
                },
                StreamEvent::ReasoningDelta { text: "hm".into() },
                StreamEvent::ToolCallDelta {
                    index: 2,
                    id: Some("c".into()),
                    name: Some("f".into()),
                    arguments_fragment: "{\"a\":1}".into()
                },
                StreamEvent::ToolCallDelta {
                    index: 3,
                    id: None,
                    name: None,
                    arguments_fragment: "{}".into()
                },
            ]
        );
    }

    #[test]
    fn an_empty_body_is_a_connection_error() {
        let mut decoder = StreamDecoder::new(ProviderKind::OpenAi);
        let mut out = Vec::new();
        decoder.feed(b"  \n", &mut out).unwrap();
        assert!(matches!(
            decoder.finish(&mut out),
            Err(LlmError::Connection(_))
        ));
    }
}

#[cfg(test)]
#[path = "decode_tests.rs"]
pub(crate) mod test_support;
