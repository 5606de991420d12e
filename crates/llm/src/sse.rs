//! Server-sent events, parsed straight from the bytes of the response body.
//!
//! Hand-written rather than `eventsource-stream`: that crate works on `String`s and allocates
//! per event, while this parser reuses two buffers for the whole stream and finds line ends
//! with `memchr`, which is what lets a recorded stream decode at hundreds of MB/s.

use crate::LlmError;

/// The largest event (or unfinished line) accepted before the stream is declared broken.
pub const SSE_MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// One dispatched event: its type (empty when the stream gave none) and its data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseEvent<'a> {
    /// The `event:` field, or empty.
    pub event: &'a [u8],
    /// The `data:` lines, joined by `\n`.
    pub data: &'a [u8],
}

/// An incremental SSE parser: feed it the body in chunks of any size, in order.
#[derive(Debug, Default)]
pub struct SseParser {
    /// The unfinished last line of the previous chunk.
    partial: Vec<u8>,
    event: Vec<u8>,
    data: Vec<u8>,
    has_data: bool,
    /// The previous chunk ended in `\r`; a `\n` starting the next one ends the same line.
    after_cr: bool,
    seen_first_line: bool,
}

impl SseParser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses `bytes`, calling `on_event` for every event completed by them.
    pub fn feed(
        &mut self,
        mut bytes: &[u8],
        on_event: &mut impl FnMut(SseEvent<'_>) -> Result<(), LlmError>,
    ) -> Result<(), LlmError> {
        if self.after_cr && !bytes.is_empty() {
            self.after_cr = false;
            if let [b'\n', rest @ ..] = bytes {
                bytes = rest;
            }
        }
        while let Some(end) = memchr::memchr2(b'\n', b'\r', bytes) {
            let line = &bytes[..end];
            if self.partial.is_empty() {
                self.line(line, on_event)?;
            } else {
                let mut joined = std::mem::take(&mut self.partial);
                joined.extend_from_slice(line);
                let result = self.line(&joined, on_event);
                joined.clear();
                self.partial = joined;
                result?;
            }
            let mut next = end + 1;
            if bytes[end] == b'\r' {
                match bytes.get(next) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            bytes = &bytes[next..];
        }
        if !bytes.is_empty() {
            if self.partial.len() + bytes.len() > SSE_MAX_EVENT_BYTES {
                return Err(too_large());
            }
            self.partial.extend_from_slice(bytes);
        }
        Ok(())
    }

    /// Ends the stream: dispatches an event whose lines all arrived but whose closing blank
    /// line did not, as some servers end their last event. An unterminated last line is
    /// dropped, as the specification says: it may have been cut anywhere.
    pub fn finish(
        &mut self,
        on_event: &mut impl FnMut(SseEvent<'_>) -> Result<(), LlmError>,
    ) -> Result<(), LlmError> {
        self.partial.clear();
        self.after_cr = false;
        self.dispatch(on_event)
    }

    /// Whether bytes of an event that was never finished are held back.
    #[cfg(test)]
    pub(crate) fn has_unfinished_event(&self) -> bool {
        !self.partial.is_empty() || self.has_data
    }

    fn line(
        &mut self,
        mut line: &[u8],
        on_event: &mut impl FnMut(SseEvent<'_>) -> Result<(), LlmError>,
    ) -> Result<(), LlmError> {
        if !self.seen_first_line {
            self.seen_first_line = true;
            line = line.strip_prefix(UTF8_BOM).unwrap_or(line);
        }
        if line.is_empty() {
            return self.dispatch(on_event);
        }
        if line[0] == b':' {
            return Ok(());
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if self.data.len() + value.len() + 1 > SSE_MAX_EVENT_BYTES {
                    return Err(too_large());
                }
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
            b"event" => {
                self.event.clear();
                self.event.extend_from_slice(value);
            }
            // `id` and `retry` steer browser reconnection, which rein does not do; anything
            // else is not SSE and is ignored, as the specification says.
            _ => {}
        }
        Ok(())
    }

    fn dispatch(
        &mut self,
        on_event: &mut impl FnMut(SseEvent<'_>) -> Result<(), LlmError>,
    ) -> Result<(), LlmError> {
        let result = if self.has_data {
            on_event(SseEvent {
                event: &self.event,
                data: &self.data,
            })
        } else {
            Ok(())
        };
        self.data.clear();
        self.event.clear();
        self.has_data = false;
        result
    }
}

fn too_large() -> LlmError {
    LlmError::Protocol(format!(
        "a server-sent event exceeded {SSE_MAX_EVENT_BYTES} bytes; the stream is not valid SSE"
    ))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    type Collected = Vec<(String, String)>;

    fn parse_chunks<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> Collected {
        let mut parser = SseParser::new();
        let mut out = Vec::new();
        for chunk in chunks {
            parser
                .feed(chunk, &mut |ev| {
                    out.push((
                        String::from_utf8_lossy(ev.event).into_owned(),
                        String::from_utf8_lossy(ev.data).into_owned(),
                    ));
                    Ok(())
                })
                .unwrap();
        }
        out
    }

    fn parse(bytes: &[u8]) -> Collected {
        parse_chunks([bytes])
    }

    fn pair(event: &str, data: &str) -> (String, String) {
        (event.to_owned(), data.to_owned())
    }

    #[test]
    fn parses_data_and_event_fields() {
        let got = parse(b"data: {\"a\":1}\n\nevent: ping\ndata: {}\n\n");
        assert_eq!(got, vec![pair("", "{\"a\":1}"), pair("ping", "{}")]);
    }

    #[test]
    fn joins_multi_line_data_with_newlines() {
        assert_eq!(
            parse(b"data: a\ndata:b\ndata:  c\n\n"),
            vec![pair("", "a\nb\n c")]
        );
    }

    #[test]
    fn accepts_crlf_and_cr_line_ends() {
        let expected = vec![pair("x", "1"), pair("", "2")];
        assert_eq!(
            parse(b"event: x\r\ndata: 1\r\n\r\ndata: 2\r\n\r\n"),
            expected
        );
        assert_eq!(parse(b"event: x\rdata: 1\r\rdata: 2\r\r"), expected);
    }

    #[test]
    fn crlf_split_between_chunks_is_one_line_end() {
        let got = parse_chunks([&b"data: 1\r"[..], b"\n\r", b"\ndata: 2\n\n"]);
        assert_eq!(got, vec![pair("", "1"), pair("", "2")]);
        let got = parse_chunks([&b"data: 1\r"[..], b"", b"\n\r\n"]);
        assert_eq!(got, vec![pair("", "1")]);
    }

    #[test]
    fn ignores_comments_unknown_fields_and_events_without_data() {
        let got = parse(b": keep-alive\nid: 7\nretry: 10\nnonsense\nevent: lonely\n\ndata: x\n\n");
        assert_eq!(got, vec![pair("", "x")]);
    }

    #[test]
    fn empty_data_line_still_dispatches() {
        assert_eq!(parse(b"data:\n\n"), vec![pair("", "")]);
    }

    #[test]
    fn strips_a_leading_byte_order_mark() {
        assert_eq!(parse(b"\xEF\xBB\xBFdata: 1\n\n"), vec![pair("", "1")]);
    }

    #[test]
    fn unfinished_event_is_held_back_and_reported() {
        let mut parser = SseParser::new();
        let mut count = 0;
        parser
            .feed(b"data: 1\n\ndata: {\"cut", &mut |_| {
                count += 1;
                Ok(())
            })
            .unwrap();
        assert_eq!(count, 1);
        assert!(parser.has_unfinished_event());
    }

    #[test]
    fn finish_dispatches_an_event_missing_its_blank_line_but_not_a_cut_line() {
        let mut parser = SseParser::new();
        let mut got = Vec::new();
        let mut collect = |ev: SseEvent<'_>| {
            got.push(String::from_utf8_lossy(ev.data).into_owned());
            Ok(())
        };
        parser
            .feed(b"data: 1\n\ndata: 2\ndata: 3\n", &mut collect)
            .unwrap();
        parser.finish(&mut collect).unwrap();
        assert_eq!(got, vec!["1", "2\n3"]);

        let mut parser = SseParser::new();
        let mut count = 0;
        let mut counting = |_: SseEvent<'_>| {
            count += 1;
            Ok(())
        };
        parser
            .feed(b"data: 1\n\ndata: {\"cut", &mut counting)
            .unwrap();
        parser.finish(&mut counting).unwrap();
        assert_eq!(count, 1);
    }

    #[test]
    fn an_endless_line_is_a_protocol_error_not_unbounded_memory() {
        let mut parser = SseParser::new();
        let chunk = vec![b'a'; 1024 * 1024];
        let mut result = Ok(());
        for _ in 0..=SSE_MAX_EVENT_BYTES / chunk.len() {
            result = parser.feed(&chunk, &mut |_| Ok(()));
            if result.is_err() {
                break;
            }
        }
        assert!(matches!(result, Err(LlmError::Protocol(_))), "{result:?}");
    }

    #[test]
    fn a_callback_error_stops_parsing() {
        let mut parser = SseParser::new();
        let result = parser.feed(b"data: 1\n\ndata: 2\n\n", &mut |_| {
            Err(LlmError::Protocol("stop".into()))
        });
        assert_eq!(result, Err(LlmError::Protocol("stop".into())));
    }

    fn arb_stream() -> impl Strategy<Value = Vec<u8>> {
        let field = prop_oneof![
            "[a-z {}\":,]{0,12}".prop_map(|v| format!("data: {v}")),
            "[a-z_]{1,8}".prop_map(|v| format!("event: {v}")),
            "[a-z ]{0,8}".prop_map(|v| format!(": {v}")),
            Just(String::new()),
        ];
        let newline = prop_oneof![Just("\n"), Just("\r\n"), Just("\r")];
        proptest::collection::vec((field, newline), 0..40).prop_map(|lines| {
            let mut s = String::new();
            for (line, nl) in lines {
                s.push_str(&line);
                s.push_str(nl);
            }
            s.push_str("\n\n");
            s.into_bytes()
        })
    }

    proptest! {
        #[test]
        fn any_split_yields_the_same_events(
            stream in arb_stream(),
            cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..12),
        ) {
            let whole = parse(&stream);
            let mut points: Vec<usize> = cuts.iter().map(|c| c.index(stream.len() + 1)).collect();
            points.sort_unstable();
            let mut chunks = Vec::new();
            let mut start = 0;
            for p in points {
                chunks.push(&stream[start..p]);
                start = p;
            }
            chunks.push(&stream[start..]);
            prop_assert_eq!(parse_chunks(chunks), whole);
        }

        #[test]
        fn a_missing_final_blank_line_loses_no_event(stream in arb_stream()) {
            let whole = parse(&stream);
            // `arb_stream` ends every line, then adds "\n\n": without those, the last line
            // still has its end and only the blank line after it is missing.
            let unfinished = &stream[..stream.len() - 2];
            let mut parser = SseParser::new();
            let mut got = Vec::new();
            let mut collect = |ev: SseEvent<'_>| {
                got.push((
                    String::from_utf8_lossy(ev.event).into_owned(),
                    String::from_utf8_lossy(ev.data).into_owned(),
                ));
                Ok(())
            };
            parser.feed(unfinished, &mut collect).unwrap();
            parser.finish(&mut collect).unwrap();
            prop_assert_eq!(got, whole);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let mut parser = SseParser::new();
            let _ = parser.feed(&bytes, &mut |_| Ok(()));
        }
    }
}
