//! The mock server, seen from a raw TCP client: exact bytes, framing and misbehaviour.

// Helpers outside `#[test]` functions are still test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod anthropic;
mod binary;
mod capture;
mod client;
mod errors;
mod interruptions;
mod openai;
