//! Decoding and assembling recorded streams: SSE bytes in, the assistant message out.

#![allow(
    clippy::unwrap_used,
    reason = "a benchmark whose setup fails should stop, loudly"
)]

use divan::counter::BytesCount;
use divan::{Bencher, black_box};
use rein_llm::sse::SseParser;
use rein_llm::{Assembler, ProviderKind, StreamDecoder, StreamEvent};

fn main() {
    divan::main();
}

/// The size of the recorded stream.
const STREAM_BYTES: usize = 1024 * 1024;
/// The size of one network read fed to the decoder.
const READ_BYTES: usize = 16 * 1024;

/// About 1 MB of OpenAI chunks as a real server sends them: short text deltas (with some
/// escapes and non-ASCII), then tool calls whose arguments stream in small fragments.
fn openai_recording() -> Vec<u8> {
    let head = r#"{"id":"chatcmpl-AbC123","object":"chat.completion.chunk","created":1731000000,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_1234567890","choices":[{"index":0,"delta":"#;
    let tail = r#","logprobs":null,"finish_reason":null}]}"#;
    let words = [
        "The",
        " import",
        " of",
        " `os`",
        " is",
        " unused",
        ";",
        " fix",
        " it",
        "\\n",
        " caf\u{e9}",
        " \\\"ok\\\"",
    ];
    let mut out = Vec::with_capacity(STREAM_BYTES + 4096);
    let push = |delta: &str, out: &mut Vec<u8>| {
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(head.as_bytes());
        out.extend_from_slice(delta.as_bytes());
        out.extend_from_slice(tail.as_bytes());
        out.extend_from_slice(b"\n\n");
    };
    push(r#"{"role":"assistant","content":""}"#, &mut out);
    let mut i = 0;
    while out.len() < STREAM_BYTES * 6 / 10 {
        push(
            &format!(r#"{{"content":"{}"}}"#, words[i % words.len()]),
            &mut out,
        );
        i += 1;
    }
    let mut index = 0;
    while out.len() < STREAM_BYTES {
        push(
            &format!(
                r#"{{"tool_calls":[{{"index":{index},"id":"call_{index}","type":"function","function":{{"name":"edit_file","arguments":""}}}}]}}"#
            ),
            &mut out,
        );
        push(
            &format!(
                r#"{{"tool_calls":[{{"index":{index},"function":{{"arguments":"{{\"file_path\": \"src/main.rs\", "}}}}]}}"#
            ),
            &mut out,
        );
        for _ in 0..40 {
            push(
                &format!(
                    r#"{{"tool_calls":[{{"index":{index},"function":{{"arguments":"line {index} \\n"}}}}]}}"#
                ),
                &mut out,
            );
        }
        push(
            &format!(
                r#"{{"tool_calls":[{{"index":{index},"function":{{"arguments":"\", \"x\": 1}}"}}}}]}}"#
            ),
            &mut out,
        );
        index += 1;
    }
    out.extend_from_slice(br#"data: {"id":"chatcmpl-AbC123","object":"chat.completion.chunk","created":1731000000,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#);
    out.extend_from_slice(b"\n\n");
    out.extend_from_slice(br#"data: {"id":"chatcmpl-AbC123","choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":900,"prompt_tokens_details":{"cached_tokens":500}}}"#);
    out.extend_from_slice(b"\n\ndata: [DONE]\n\n");
    out
}

/// About 1 MB of Anthropic events: text deltas, then tool_use blocks with JSON deltas.
fn anthropic_recording() -> Vec<u8> {
    let mut out = Vec::with_capacity(STREAM_BYTES + 4096);
    let event = |name: &str, data: &str, out: &mut Vec<u8>| {
        out.extend_from_slice(format!("event: {name}\ndata: {data}\n\n").as_bytes());
    };
    event(
        "message_start",
        r#"{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","usage":{"input_tokens":1000,"output_tokens":1}}}"#,
        &mut out,
    );
    event(
        "content_block_start",
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        &mut out,
    );
    while out.len() < STREAM_BYTES * 6 / 10 {
        event(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" unused import"}}"#,
            &mut out,
        );
    }
    event(
        "content_block_stop",
        r#"{"type":"content_block_stop","index":0}"#,
        &mut out,
    );
    let mut index = 1;
    while out.len() < STREAM_BYTES {
        event(
            "content_block_start",
            &format!(
                r#"{{"type":"content_block_start","index":{index},"content_block":{{"type":"tool_use","id":"toolu_{index}","name":"edit_file","input":{{}}}}}}"#
            ),
            &mut out,
        );
        event(
            "content_block_delta",
            &format!(
                r#"{{"type":"content_block_delta","index":{index},"delta":{{"type":"input_json_delta","partial_json":"{{\"file_path\": \"a\", \"t\": \""}}}}"#
            ),
            &mut out,
        );
        for _ in 0..40 {
            event(
                "content_block_delta",
                &format!(
                    r#"{{"type":"content_block_delta","index":{index},"delta":{{"type":"input_json_delta","partial_json":"line \\n"}}}}"#
                ),
                &mut out,
            );
        }
        event(
            "content_block_delta",
            &format!(
                r#"{{"type":"content_block_delta","index":{index},"delta":{{"type":"input_json_delta","partial_json":"\"}}"}}}}"#
            ),
            &mut out,
        );
        event(
            "content_block_stop",
            &format!(r#"{{"type":"content_block_stop","index":{index}}}"#),
            &mut out,
        );
        index += 1;
    }
    event(
        "message_delta",
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":900}}"#,
        &mut out,
    );
    event("message_stop", r#"{"type":"message_stop"}"#, &mut out);
    out
}

fn decode_and_assemble(kind: ProviderKind, body: &[u8]) -> usize {
    let mut decoder = StreamDecoder::new(kind);
    let mut assembler = Assembler::new();
    let mut events: Vec<StreamEvent> = Vec::new();
    let mut early = 0;
    for read in body.chunks(READ_BYTES) {
        decoder.feed(read, &mut events).unwrap();
        for event in events.drain(..) {
            early += assembler.push(&event).len();
        }
    }
    decoder.finish(&mut events).unwrap();
    for event in events.drain(..) {
        early += assembler.push(&event).len();
    }
    let response = assembler.finish().unwrap();
    assert!(early > 0);
    response.message.parts.len()
}

#[divan::bench]
fn openai_decode_and_assemble_1mb(bencher: Bencher<'_, '_>) {
    let body = openai_recording();
    bencher
        .counter(BytesCount::of_slice(&body))
        .bench(|| decode_and_assemble(ProviderKind::OpenAi, black_box(&body)));
}

#[divan::bench]
fn anthropic_decode_and_assemble_1mb(bencher: Bencher<'_, '_>) {
    let body = anthropic_recording();
    bencher
        .counter(BytesCount::of_slice(&body))
        .bench(|| decode_and_assemble(ProviderKind::Anthropic, black_box(&body)));
}

#[divan::bench]
fn sse_parse_only_1mb(bencher: Bencher<'_, '_>) {
    let body = openai_recording();
    bencher.counter(BytesCount::of_slice(&body)).bench(|| {
        let mut parser = SseParser::new();
        let mut events = 0usize;
        for read in black_box(&body).chunks(READ_BYTES) {
            parser
                .feed(read, &mut |_| {
                    events += 1;
                    Ok(())
                })
                .unwrap();
        }
        events
    });
}
