//! Masking what arrives in pieces (the model's streamed text, a command's output copied to a
//! file) without letting a secret through because it was cut in two.
//!
//! Each piece is searched together with what was held back before it. What is final goes
//! out masked; what is held back is the end that could still become a secret once the next
//! piece comes:
//!
//! the longest end of the text that is the start of some form (usually nothing: a line
//! that ends in a line break starts no secret), so the person sees the model's words as they
//! come, and a background command's file has all a waiting server printed.
//!
//! A form found whole that reaches into the held-back end moves the cut past it: it is
//! complete and cannot change.

use std::sync::Arc;

use super::Secrets;
use super::matcher::{Found, Matcher};

/// Masks text that arrives in pieces, holding back as little as it can.
#[derive(Debug)]
pub struct TextMasker {
    secrets: Arc<Secrets>,
    pending: String,
}

impl TextMasker {
    /// A masker of one stream of text.
    pub fn new(secrets: Arc<Secrets>) -> Self {
        TextMasker {
            secrets,
            pending: String::new(),
        }
    }

    /// Takes `piece`; returns the masked text that is final (possibly empty).
    pub fn push(&mut self, piece: &str) -> String {
        let Some(matcher) = self.secrets.matcher() else {
            return piece.to_owned();
        };
        self.pending.push_str(piece);
        let text = self.pending.as_bytes();
        let found = matcher.find(text);
        let cut = shortest_hold(matcher, text, &found, |i| self.pending.is_char_boundary(i));
        let mut out = Vec::with_capacity(cut);
        self.secrets.write_masked(&text[..cut], &found, &mut out);
        self.pending.drain(..cut);
        String::from_utf8(out).unwrap_or_default()
    }

    /// Ends the stream: what was held back, masked.
    pub fn finish(&mut self) -> String {
        let rest = std::mem::take(&mut self.pending);
        self.secrets.redact(&rest).into_owned()
    }

    /// Forgets what was held back (the stream is being discarded).
    pub fn discard(&mut self) {
        self.pending.clear();
    }

    /// Whether text is held back.
    pub fn holds(&self) -> bool {
        !self.pending.is_empty()
    }
}

/// Masks bytes that arrive in pieces (a command's output on its way to a file).
#[derive(Debug)]
pub struct ByteMasker {
    secrets: Arc<Secrets>,
    pending: Vec<u8>,
}

impl ByteMasker {
    /// A masker of one stream of bytes.
    pub fn new(secrets: Arc<Secrets>) -> Self {
        ByteMasker {
            secrets,
            pending: Vec::new(),
        }
    }

    /// Takes `piece`; appends to `out` the masked bytes that are final.
    pub fn push(&mut self, piece: &[u8], out: &mut Vec<u8>) {
        let Some(matcher) = self.secrets.matcher() else {
            out.extend_from_slice(piece);
            return;
        };
        self.pending.extend_from_slice(piece);
        let found = matcher.find(&self.pending);
        let cut = shortest_hold(matcher, &self.pending, &found, |_| true);
        self.secrets.write_masked(&self.pending[..cut], &found, out);
        self.pending.drain(..cut);
    }

    /// Ends the stream: appends what was held back, masked.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        let rest = std::mem::take(&mut self.pending);
        match self.secrets.matcher() {
            Some(matcher) => {
                let found = matcher.find(&rest);
                self.secrets.write_masked(&rest, &found, out);
            }
            None => out.extend_from_slice(&rest),
        }
    }
}

/// The secrets as the tools' masker of saved outputs.
pub(crate) struct SecretsMask(pub(crate) Arc<Secrets>);

impl rein_tools::OutputMask for SecretsMask {
    fn stream(&self) -> Box<dyn rein_tools::MaskStream> {
        Box::new(ByteMasker::new(Arc::clone(&self.0)))
    }
}

impl rein_tools::MaskStream for ByteMasker {
    fn push(&mut self, piece: &[u8], out: &mut Vec<u8>) {
        ByteMasker::push(self, piece, out);
    }

    fn finish(&mut self, out: &mut Vec<u8>) {
        ByteMasker::finish(self, out);
    }
}

/// Where to cut `bytes` so that what comes before is final: before the earliest end that
/// may begin a form (at a `boundary`), past any form found across that point.
fn shortest_hold(
    matcher: &Matcher,
    bytes: &[u8],
    found: &[Found],
    boundary: impl Fn(usize) -> bool,
) -> usize {
    let mut floor = 0;
    loop {
        let from = bytes.len().saturating_sub(matcher.longest()).max(floor);
        let cut = (from..bytes.len())
            .find(|&i| boundary(i) && matcher.may_continue(&bytes[i..]))
            .unwrap_or(bytes.len());
        match found.iter().find(|f| f.start < cut && f.end > cut) {
            Some(across) => floor = across.end,
            None => return cut,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secrets::SecretValues;

    fn secrets() -> Arc<Secrets> {
        Arc::new(Secrets::gather(
            [("API_TOKEN", "tok-0123456789")],
            &SecretValues::default(),
            None,
            &[],
        ))
    }

    #[test]
    fn a_secret_cut_across_pieces_is_masked_and_the_rest_flows() {
        let mut masker = TextMasker::new(secrets());
        let mut shown = String::new();
        for piece in ["Here: to", "k-01234", "56789 and", " more tok", "ens."] {
            shown.push_str(&masker.push(piece));
        }
        assert!(shown.starts_with("Here: "), "{shown}");
        shown.push_str(&masker.finish());
        assert_eq!(shown, "Here: [REDACTED:API_TOKEN] and more tokens.");
    }

    #[test]
    fn only_an_end_that_may_start_a_secret_is_held_back() {
        let mut masker = TextMasker::new(secrets());
        assert_eq!(masker.push("hello world.\n"), "hello world.\n");
        assert!(!masker.holds());
        // `d` may start the secret's base64 (`dG9r...`): it waits for the next piece.
        assert_eq!(masker.push("a word"), "a wor");
        assert_eq!(masker.push("y day."), "dy day.");
    }

    #[test]
    fn bytes_in_any_pieces_are_masked_like_the_whole() {
        let secrets = secrets();
        let text = format!(
            "a tok-0123456789 b {} c t o k - 0 1 2 3 4 5 6 7 8 9 d {}\n",
            "tok-0123456789".chars().rev().collect::<String>(),
            "746f6b2d30313233343536373839",
        );
        let whole = secrets.redact(&text).into_owned();
        assert_eq!(whole.matches("[REDACTED:API_TOKEN]").count(), 4, "{whole}");
        for size in [1, 2, 3, 7, 64] {
            let mut masker = ByteMasker::new(Arc::clone(&secrets));
            let mut out = Vec::new();
            for piece in text.as_bytes().chunks(size) {
                masker.push(piece, &mut out);
            }
            masker.finish(&mut out);
            assert_eq!(String::from_utf8(out).unwrap(), whole, "pieces of {size}");
        }
    }
}
