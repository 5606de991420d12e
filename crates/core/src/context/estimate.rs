//! Token estimates from bytes, for what the provider has not counted yet.
//!
//! The provider's count of the last request is the truth (see [`super::Ledger`]); only the
//! messages added since are estimated, each once, when it is added. The estimate reads the
//! text's bytes once and weighs each by what it is and what came just before, with weights
//! fitted to OpenAI's o200k_base tokenizer on code, prose, JSON, Chinese and Japanese text,
//! hashes in base64 and hex (lockfiles, checksums, data URIs) and minified JavaScript (see
//! `tests/context/estimate.rs` for the measured error): a word start costs half a token,
//! each further letter a fifth, a digit 0.4 (numbers split into groups of three), a
//! punctuation mark 0.35 (0.1 when it repeats the one before: `=====`), a line break and the
//! indentation after it one each, a CJK character 0.75. Where tokenizers split words, a
//! random string costs more: a digit after a letter or a letter after a digit 0.8 more, a
//! capital after a small letter 0.7 more (so base64 and hex weigh what they do, about two
//! characters a token, where words weigh four). Tokenizers of other models differ by some
//! tenths; the estimate leans a little high, and the next response's count corrects it.

use rein_llm::{Message, Part, ToolArguments, ToolSpec};

/// Thousandths of a token per kind of byte.
const LETTER_MILLI: u64 = 180;
const DIGIT_MILLI: u64 = 400;
const WORD_START_MILLI: u64 = 500;
const PUNCT_MILLI: u64 = 350;
/// A punctuation mark that repeats the one before (`----`, `****`): tokenizers merge runs.
const REPEATED_PUNCT_MILLI: u64 = 100;
const NEWLINE_MILLI: u64 = 1000;
const INDENT_MILLI: u64 = 1000;
/// A digit after a letter, or a letter after a digit: a split inside a random string.
const LETTER_DIGIT_SWITCH_MILLI: u64 = 800;
/// A capital after a small letter: a split inside a word (`camelCase`, base64).
const CASE_SWITCH_MILLI: u64 = 700;
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
    Lower,
    Upper,
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
const WEIGHTS_MILLI: [u64; 10] = [
    LETTER_MILLI,
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
            b'a'..=b'z' | b'_' => Class::Lower,
            b'A'..=b'Z' => Class::Upper,
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
/// letter or digit before it, indentation a line break, a split inside a word a switch
/// between letters and digits or from a small letter to a capital.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Before {
    Lower,
    Upper,
    Digit,
    LineBreak,
    Other,
}

const BEFORE: [Before; 256] = {
    let mut table = [Before::Other; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = match CLASSES[b] {
            Class::Lower => Before::Lower,
            Class::Upper => Before::Upper,
            Class::Digit => Before::Digit,
            Class::Newline => Before::LineBreak,
            _ => Before::Other,
        };
        b += 1;
    }
    table
};

/// What a byte adds, in thousandths of a token, after a byte of each kind (`[repeated]`: 1
/// when it is the same byte): its weight, a word start, the indentation a line's first space
/// begins, a split inside a word.
const MILLI_AFTER: [[[u16; 256]; 5]; 2] = {
    let mut table = [[[0; 256]; 5]; 2];
    let mut repeated = 0;
    while repeated < 2 {
        let mut before = 0;
        while before < 5 {
            let mut b = 0;
            while b < 256 {
                let class = CLASSES[b];
                let mut milli = WEIGHTS_MILLI[class as usize];
                let letter = matches!(class, Class::Lower | Class::Upper);
                let digit = matches!(class, Class::Digit);
                let after_letter =
                    before == Before::Lower as usize || before == Before::Upper as usize;
                let after_digit = before == Before::Digit as usize;
                if (letter || digit) && !after_letter && !after_digit {
                    milli += WORD_START_MILLI;
                }
                if (digit && after_letter) || (letter && after_digit) {
                    milli += LETTER_DIGIT_SWITCH_MILLI;
                }
                if matches!(class, Class::Upper) && before == Before::Lower as usize {
                    milli += CASE_SWITCH_MILLI;
                }
                if matches!(class, Class::Space) && before == Before::LineBreak as usize {
                    milli += INDENT_MILLI;
                }
                if matches!(class, Class::Punct) && repeated == 1 {
                    milli = REPEATED_PUNCT_MILLI;
                }
                table[repeated][before][b] = milli as u16;
                b += 1;
            }
            before += 1;
        }
        repeated += 1;
    }
    table
};

/// The most a byte adds, in thousandths of a token.
const MAX_MILLI_PER_BYTE: u64 = {
    let mut max = 0;
    let mut i = 0;
    while i < 2 * 5 * 256 {
        let milli = MILLI_AFTER[i / (5 * 256)][(i / 256) % 5][i % 256] as u64;
        if milli > max {
            max = milli;
        }
        i += 1;
    }
    max
};

/// The estimated tokens of `text`: one pass over its bytes, each weighed by what it is and
/// what came before it (no state carried from byte to byte, so the loop runs fast).
pub fn text_tokens(text: &str) -> u64 {
    let bytes = text.as_bytes();
    let first = bytes.first().map_or(0, |&b| {
        u64::from(MILLI_AFTER[0][Before::LineBreak as usize][usize::from(b)])
    });
    let rest: u64 = bytes
        .windows(2)
        .map(|pair| {
            let repeated = usize::from(pair[0] == pair[1]);
            let before = BEFORE[usize::from(pair[0])] as usize;
            u64::from(MILLI_AFTER[repeated][before][usize::from(pair[1])])
        })
        .sum();
    (first + rest).div_ceil(1000)
}

/// The most [`text_tokens`] can say of a text of `bytes` bytes: a text that short fits any
/// budget this large without being read.
pub fn max_tokens_of_bytes(bytes: usize) -> u64 {
    (bytes as u64)
        .saturating_mul(MAX_MILLI_PER_BYTE)
        .div_ceil(1000)
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
        Part::ToolResult(result) => {
            TOOL_RESULT_OVERHEAD_TOKENS
                + text_tokens(&result.content)
                + IMAGE_TOKENS * result.images.len() as u64
        }
        Part::Image(_) => IMAGE_TOKENS,
    }
}

/// Tokens an image costs at most once scaled to rein's limits (Anthropic counts about
/// width × height / 750: 1568 × 1568 / 750 ≈ 3300 for a square at the edge limit, most
/// pictures far less; OpenAI's high detail tops out near 1100). An estimate too high is safer.
const IMAGE_TOKENS: u64 = 1600;

/// The estimated tokens of the tool descriptions a request carries.
pub fn tools_tokens(tools: &[ToolSpec]) -> u64 {
    tools
        .iter()
        .map(|spec| {
            TOOL_SPEC_OVERHEAD_TOKENS
                + text_tokens(&spec.name)
                + text_tokens(&spec.description)
                // Straight into a buffer: `Value`'s Display goes through a formatter and took
                // twice as long, once per tool at every start.
                + text_tokens(&serde_json::to_string(&*spec.parameters).unwrap_or_default())
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
    fn random_strings_weigh_more_than_words() {
        // About two characters a token, as o200k splits them.
        let hash = "sha512-6hQp7a5tmHSpOy0zNAwonftM1zUmso8/Eqv3UxGb6U7vnU3lp";
        assert!(text_tokens(hash) >= 20, "{}", text_tokens(hash));
        let hex = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        assert!(text_tokens(hex) >= 28, "{}", text_tokens(hex));
        // A rule of dashes is a few tokens, not one a byte.
        assert!(text_tokens(&"-".repeat(60)) <= 8);
    }

    #[test]
    fn no_text_weighs_more_than_its_bounds_say() {
        for text in [
            "a1a1a1a1",
            "\n \n \n ",
            "aAaAaA",
            "1 2 3 4",
            "上下文",
            "😀😀",
            "-=-=-=",
        ] {
            assert!(
                text_tokens(text) <= max_tokens_of_bytes(text.len()),
                "{text}"
            );
        }
        const { assert!(MAX_MILLI_PER_BYTE <= 1500) };
    }

    #[test]
    fn the_estimate_grows_with_the_text() {
        let one = text_tokens("fn main() { println!(\"hello\"); }\n");
        let ten = text_tokens(&"fn main() { println!(\"hello\"); }\n".repeat(10));
        assert!(ten >= 9 * one && ten <= 11 * one, "{one} {ten}");
    }
}
