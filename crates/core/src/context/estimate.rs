//! Token estimates from bytes, for what the provider has not counted yet.
//!
//! The provider's count of the last request is the truth (see [`super::Ledger`]); only the
//! messages added since are estimated, each once, when it is added. The estimate reads the
//! text's bytes once and weighs them by kind, with weights fitted to OpenAI's o200k_base
//! tokenizer on code, prose, JSON and Chinese and Japanese text (see
//! `tests/context/estimate.rs` for the measured error): a word start costs half a token,
//! each further letter a fifth, a digit 0.4 (numbers split into groups of three), a
//! punctuation mark 0.35, a line break and the indentation after it one each, a CJK
//! character 0.75. Tokenizers of other models differ by some tenths; the estimate leans a
//! little high, and the next response's count corrects it.

use rein_llm::{Message, Part, ToolArguments, ToolSpec};

/// Thousandths of a token per kind of byte.
const LETTER_MILLI: u64 = 180;
const DIGIT_MILLI: u64 = 400;
const WORD_START_MILLI: u64 = 500;
const PUNCT_MILLI: u64 = 350;
const NEWLINE_MILLI: u64 = 1000;
const INDENT_MILLI: u64 = 1000;
/// Characters of two UTF-8 bytes (accented Latin, Cyrillic, Greek, Hebrew, Arabic).
const TWO_BYTE_CHAR_MILLI: u64 = 600;
/// Characters of three (CJK, kana, hangul, most symbols).
const THREE_BYTE_CHAR_MILLI: u64 = 750;
/// Characters of four (emoji, rare CJK).
const FOUR_BYTE_CHAR_MILLI: u64 = 1500;

/// What chat templates add around each message (role, separators).
pub const MESSAGE_OVERHEAD_TOKENS: u64 = 4;
/// What a tool call adds besides its name and arguments (id, type, wrappers).
pub const TOOL_CALL_OVERHEAD_TOKENS: u64 = 8;
/// What a tool result adds besides its content (the call's id, wrappers).
pub const TOOL_RESULT_OVERHEAD_TOKENS: u64 = 6;
/// What each tool description adds besides its JSON (wrappers the provider renders).
const TOOL_SPEC_OVERHEAD_TOKENS: u64 = 10;

/// What a byte is, as far as the estimate cares.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Class {
    Letter,
    Digit,
    Space,
    Newline,
    Punct,
    /// A UTF-8 continuation byte: counted with its character's first byte.
    Continuation,
    Lead2,
    Lead3,
    Lead4,
}

/// Each class's weight, in thousandths of a token (indexed by `Class as usize`).
const WEIGHTS_MILLI: [u64; 9] = [
    LETTER_MILLI,
    DIGIT_MILLI,
    0,
    NEWLINE_MILLI,
    PUNCT_MILLI,
    0,
    TWO_BYTE_CHAR_MILLI,
    THREE_BYTE_CHAR_MILLI,
    FOUR_BYTE_CHAR_MILLI,
];

const CLASSES: [Class; 256] = {
    let mut table = [Class::Punct; 256];
    let mut b = 0;
    while b < 256 {
        let byte = b as u8;
        table[b] = match byte {
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => Class::Letter,
            b'0'..=b'9' => Class::Digit,
            b' ' | b'\t' | b'\r' => Class::Space,
            b'\n' => Class::Newline,
            0x80..=0xBF => Class::Continuation,
            0xC0..=0xDF => Class::Lead2,
            0xE0..=0xEF => Class::Lead3,
            0xF0..=0xFF => Class::Lead4,
            _ => Class::Punct,
        };
        b += 1;
    }
    table
};

/// What the byte before counts as, for the one after: a word start needs a byte that is no
/// letter or digit before it, and indentation a line break.
#[derive(Clone, Copy)]
#[repr(u8)]
enum Before {
    Word,
    LineBreak,
    Other,
}

const BEFORE: [Before; 256] = {
    let mut table = [Before::Other; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = match CLASSES[b] {
            Class::Letter | Class::Digit => Before::Word,
            Class::Newline => Before::LineBreak,
            _ => Before::Other,
        };
        b += 1;
    }
    table
};

/// What a byte adds after a byte of each kind, in thousandths of a token: its weight, a
/// word start, the indentation a line's first space begins.
const MILLI_AFTER: [[u16; 256]; 3] = {
    let mut table = [[0; 256]; 3];
    let mut before = 0;
    while before < 3 {
        let mut b = 0;
        while b < 256 {
            let class = CLASSES[b];
            let mut milli = WEIGHTS_MILLI[class as usize];
            let word = matches!(class, Class::Letter | Class::Digit);
            if word && before != Before::Word as usize {
                milli += WORD_START_MILLI;
            }
            if matches!(class, Class::Space) && before == Before::LineBreak as usize {
                milli += INDENT_MILLI;
            }
            table[before][b] = milli as u16;
            b += 1;
        }
        before += 1;
    }
    table
};

/// The estimated tokens of `text`: one pass over its bytes, each weighed by what it is and
/// what came before it (no state carried from byte to byte, so the loop runs fast).
pub fn text_tokens(text: &str) -> u64 {
    let bytes = text.as_bytes();
    let first = bytes.first().map_or(0, |&b| {
        u64::from(MILLI_AFTER[Before::LineBreak as usize][usize::from(b)])
    });
    let rest: u64 = bytes
        .windows(2)
        .map(|pair| {
            let before = BEFORE[usize::from(pair[0])] as usize;
            u64::from(MILLI_AFTER[before][usize::from(pair[1])])
        })
        .sum();
    (first + rest).div_ceil(1000)
}

/// The estimated tokens `message` adds to a request.
pub fn message_tokens(message: &Message) -> u64 {
    MESSAGE_OVERHEAD_TOKENS + message.parts.iter().map(part_tokens).sum::<u64>()
}

/// The estimated tokens of one part of a message.
pub fn part_tokens(part: &Part) -> u64 {
    match part {
        Part::Text { text } => text_tokens(text),
        // Providers that send reasoning back count it; an estimate too high is safer.
        Part::Reasoning { text, .. } => text_tokens(text),
        Part::ToolCall(call) => {
            let arguments = match &call.arguments {
                ToolArguments::Json { value } => {
                    text_tokens(&serde_json::to_string(value).unwrap_or_default())
                }
                ToolArguments::Invalid { raw, .. } => text_tokens(raw),
            };
            TOOL_CALL_OVERHEAD_TOKENS + text_tokens(&call.name) + arguments
        }
        Part::ToolResult(result) => TOOL_RESULT_OVERHEAD_TOKENS + text_tokens(&result.content),
    }
}

/// The estimated tokens of the tool descriptions a request carries.
pub fn tools_tokens(tools: &[ToolSpec]) -> u64 {
    tools
        .iter()
        .map(|spec| {
            TOOL_SPEC_OVERHEAD_TOKENS
                + text_tokens(&spec.name)
                + text_tokens(&spec.description)
                + text_tokens(&spec.parameters.to_string())
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_add_up_as_documented() {
        assert_eq!(text_tokens(""), 0);
        // One word start and four letters: 0.5 + 0.72, rounded up.
        assert_eq!(text_tokens("word"), 2);
        // Ten CJK characters: 7.5.
        assert_eq!(text_tokens("上下文窗口的管理很重要"), 9);
        // A line break and its indentation count once each, however deep.
        assert_eq!(text_tokens("\n        "), text_tokens("\n  "));
    }

    #[test]
    fn the_estimate_grows_with_the_text() {
        let one = text_tokens("fn main() { println!(\"hello\"); }\n");
        let ten = text_tokens(&"fn main() { println!(\"hello\"); }\n".repeat(10));
        assert!(ten >= 9 * one && ten <= 11 * one, "{one} {ten}");
    }
}
