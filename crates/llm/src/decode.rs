//! Turning a response body, streamed SSE or one JSON document, into [`StreamEvent`]s.

use crate::anthropic::stream::AnthropicStream;
use crate::emit::Emit;
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
                let mut emit = Emit::new(out);
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
        let mut emit = Emit::new(out);
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

#[cfg(test)]
mod tests {
    use super::*;

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
