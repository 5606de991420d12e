//! The forms a secret value takes once a command has transformed it: the masking looks for
//! each of them, not only the value as it is.
//!
//! Literal forms (matched as they are): the value; its base64 (standard and URL-safe) at each
//! of the three alignments a value can have inside a longer encoded text; its hex in lower
//! and upper case; its URL-encoding (`%2F` and `%2f`, strict or leaving `!*'()` as
//! JavaScript does, a space as `%20` or `+`); and the value reversed. The value
//! written with a separator between its characters (`s k - 1`, `s,k,-,1`, `'s', 'k'`) is
//! found apart, by [`super::matcher`].

/// Every literal form of `value` worth looking for (the value first), without repeats.
pub(crate) fn literal_forms(value: &str) -> Vec<String> {
    let bytes = value.as_bytes();
    let mut forms = vec![value.to_owned()];
    for alignment in 0..3 {
        let inner = base64_inner(bytes, alignment);
        let url_safe = inner.replace('+', "-").replace('/', "_");
        forms.push(inner);
        forms.push(url_safe);
    }
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    forms.push(hex.to_ascii_uppercase());
    forms.push(hex);
    // RFC 3986 (Python's `quote`), JavaScript's `encodeURIComponent` and jq's `@uri` (which
    // leave `!*'()` as they are), and HTML forms (a space as `+`).
    for keep in [&b""[..], b"!*'()"] {
        let url = url_encode(bytes, keep);
        forms.push(url.replace("%20", "+"));
        forms.push(url.to_ascii_lowercase_escapes());
        forms.push(url);
    }
    forms.push(value.chars().rev().collect());
    let mut unique: Vec<String> = Vec::with_capacity(forms.len());
    for form in forms {
        if !form.is_empty() && !unique.contains(&form) {
            unique.push(form);
        }
    }
    unique
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// The base64 characters that `value` alone decides when it starts `alignment` bytes (0, 1
/// or 2) into a 3-byte group of a longer text: the characters shared with the bytes before
/// and after it depend on those, so they are left out.
fn base64_inner(value: &[u8], alignment: usize) -> String {
    let mut padded = vec![0u8; alignment];
    padded.extend_from_slice(value);
    let mut encoded = String::with_capacity(padded.len() * 4 / 3 + 4);
    for chunk in padded.chunks(3) {
        let group = match *chunk {
            [a, b, c] => (u32::from(a) << 16) | (u32::from(b) << 8) | u32::from(c),
            [a, b] => (u32::from(a) << 16) | (u32::from(b) << 8),
            [a] => u32::from(a) << 16,
            _ => 0,
        };
        let chars = (chunk.len() * 8).div_ceil(6);
        for i in 0..chars {
            let index = (group >> (18 - 6 * i)) & 0x3f;
            encoded.push(char::from(BASE64[index as usize]));
        }
    }
    // Characters before the value's first full 6 bits, and the last one when the value's
    // bits end inside it, depend on its neighbours.
    let skip = (alignment * 8).div_ceil(6);
    let decided = padded.len() * 8 / 6;
    encoded.get(skip..decided).unwrap_or("").to_owned()
}

/// Percent-encodes every byte but the unreserved ones (RFC 3986) and those in `keep`, with
/// upper-case hex.
fn url_encode(value: &[u8], keep: &[u8]) -> String {
    let mut out = String::with_capacity(value.len() * 3);
    for &b in value {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') || keep.contains(&b)
        {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `%2F` written `%2f`, as some encoders do.
trait LowercaseEscapes {
    fn to_ascii_lowercase_escapes(&self) -> String;
}

impl LowercaseEscapes for String {
    fn to_ascii_lowercase_escapes(&self) -> String {
        let mut out = String::with_capacity(self.len());
        let mut escape = 0;
        for c in self.chars() {
            if c == '%' {
                escape = 2;
                out.push(c);
            } else if escape > 0 {
                escape -= 1;
                out.push(c.to_ascii_lowercase());
            } else {
                out.push(c);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn std_base64(bytes: &[u8]) -> String {
        let out = std::process::Command::new("base64")
            .arg("-w0")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write as _;
                child.stdin.take().unwrap().write_all(bytes)?;
                child.wait_with_output()
            })
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    }

    #[test]
    fn each_alignment_is_found_inside_a_longer_encoded_text() {
        let secret = "sk-live-0123456789abcdef";
        let forms = literal_forms(secret);
        for before in ["", "x", "xy", "KEY=", "TOKEN=\"", "a longer prefix\n"] {
            for after in ["", "\n", "\"\nOTHER=1\n"] {
                let text = std_base64(format!("{before}{secret}{after}").as_bytes());
                assert!(
                    forms.iter().any(|form| text.contains(form.as_str())),
                    "{before:?}{after:?}: {text}"
                );
            }
        }
    }

    #[test]
    fn hex_url_and_reversed_forms() {
        let forms = literal_forms("ab/c d+e!");
        for form in [
            "ab/c d+e!",
            "61622f6320642b6521",
            "61622F6320642B6521",
            "ab%2Fc%20d%2Be%21",
            "ab%2fc%20d%2be%21",
            "ab%2Fc%20d%2Be!",
            "ab%2Fc+d%2Be!",
            "!e+d c/ba",
        ] {
            assert!(forms.contains(&form.to_owned()), "{form} in {forms:?}");
        }
    }
}
