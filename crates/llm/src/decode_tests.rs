//! Helpers for the stream tests of both wire formats: decode a body fed in chunks, then
//! assemble the message.

use proptest::prelude::*;

use super::*;
use crate::{AssembledResponse, Assembler};

/// Decodes `body` fed in the given chunks, then assembles the message.
pub(crate) fn decode(
    kind: ProviderKind,
    chunks: &[&[u8]],
) -> Result<(Vec<StreamEvent>, AssembledResponse), LlmError> {
    let mut decoder = StreamDecoder::new(kind);
    let mut events = Vec::new();
    for chunk in chunks {
        decoder.feed(chunk, &mut events)?;
    }
    decoder.finish(&mut events)?;
    let mut assembler = Assembler::new();
    for event in &events {
        assembler.push(event);
    }
    Ok((events, assembler.finish()?))
}

pub(crate) fn whole(kind: ProviderKind, body: &str) -> Result<AssembledResponse, LlmError> {
    decode(kind, &[body.as_bytes()]).map(|(_, r)| r)
}

/// Splits `body` at the given cut points.
pub(crate) fn split<'a>(body: &'a [u8], cuts: &[prop::sample::Index]) -> Vec<&'a [u8]> {
    let mut points: Vec<usize> = cuts.iter().map(|c| c.index(body.len() + 1)).collect();
    points.sort_unstable();
    let mut chunks = Vec::new();
    let mut start = 0;
    for p in points {
        chunks.push(&body[start..p]);
        start = p;
    }
    chunks.push(&body[start..]);
    chunks
}

pub(crate) fn arb_pieces() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec("[a-zA-Z0-9 \"\\\\é日\n]{0,6}", 1..8)
}

proptest! {
    #[test]
    fn arbitrary_bodies_never_panic(body in proptest::collection::vec(any::<u8>(), 0..400)) {
        for kind in [ProviderKind::OpenAi, ProviderKind::Anthropic] {
            let _ = decode(kind, &[&body]);
        }
    }
}
