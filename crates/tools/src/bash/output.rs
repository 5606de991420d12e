//! A command's output as kept in memory: the start and the end, with a count of what was
//! left out between them, so a command that prints gigabytes cannot exhaust rein's memory.
//! (The whole output goes to a file as it arrives: see `spool.rs`.)

use std::collections::VecDeque;

/// Bytes kept from the start of the output.
pub(crate) const OUTPUT_HEAD_BYTES: usize = 1024 * 1024;
/// Bytes kept from the end of the output (errors are usually there).
pub(crate) const OUTPUT_TAIL_BYTES: usize = 1024 * 1024;

/// Output bytes in arrival order, capped at a head and a tail.
#[derive(Debug)]
pub(crate) struct CappedOutput {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    omitted_bytes: u64,
    head_limit: usize,
    tail_limit: usize,
}

impl Default for CappedOutput {
    fn default() -> Self {
        CappedOutput::with_limits(OUTPUT_HEAD_BYTES, OUTPUT_TAIL_BYTES)
    }
}

impl CappedOutput {
    /// An empty buffer keeping at most `head_limit` + `tail_limit` bytes.
    pub(crate) fn with_limits(head_limit: usize, tail_limit: usize) -> Self {
        CappedOutput {
            head: Vec::new(),
            tail: VecDeque::new(),
            omitted_bytes: 0,
            head_limit,
            tail_limit,
        }
    }

    /// Appends a chunk as it arrived.
    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        if self.head.len() < self.head_limit {
            let take = bytes.len().min(self.head_limit - self.head.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        if bytes.len() >= self.tail_limit {
            self.omitted_bytes += (self.tail.len() + bytes.len() - self.tail_limit) as u64;
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - self.tail_limit..]);
            return;
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.tail_limit);
        self.tail.drain(..overflow);
        self.omitted_bytes += overflow as u64;
        self.tail.extend(bytes);
    }

    /// Whether nothing was printed.
    pub(crate) fn is_empty(&self) -> bool {
        self.head.is_empty()
    }

    /// The start of the output: all of it while it is no longer than the head limit.
    pub(crate) fn head_bytes(&self) -> &[u8] {
        &self.head
    }

    /// Whether bytes between the head and the tail were left out.
    pub(crate) fn has_gap(&self) -> bool {
        self.omitted_bytes > 0
    }

    /// The start and the end as text (invalid UTF-8 shown lossily; a character the gap split
    /// is dropped from either side).
    pub(crate) fn ends(&self) -> (String, String) {
        let head = String::from_utf8_lossy(&self.head);
        let head = match head.strip_suffix('\u{fffd}') {
            Some(whole) if self.has_gap() => whole.to_owned(),
            _ => head.into_owned(),
        };
        (
            head,
            String::from_utf8_lossy(&self.tail_bytes()).into_owned(),
        )
    }

    /// The last `lines` lines of the output (each at most `line_chars` characters), for a
    /// glance at how the command ended.
    pub(crate) fn last_lines(&self, lines: usize, line_chars: usize) -> String {
        // Enough of the end for a few lines: the tail, and the head's end when no gap
        // separates them.
        const GLANCE_BYTES: usize = 64 * 1024;
        let mut end = Vec::new();
        if !self.has_gap() {
            let from = self.head.len().saturating_sub(GLANCE_BYTES);
            end.extend_from_slice(&self.head[from..]);
        }
        end.extend_from_slice(&self.tail_bytes());
        let text = String::from_utf8_lossy(&end);
        if text.trim().is_empty() {
            return String::new();
        }
        let kept: Vec<&str> = text
            .trim_end_matches('\n')
            .rsplit('\n')
            .take(lines)
            .collect();
        let mut out = String::new();
        for line in kept.into_iter().rev() {
            let shown: String = line.chars().take(line_chars).collect();
            out.push_str(&shown);
            if shown.len() < line.len() {
                out.push('…');
            }
            out.push('\n');
        }
        out
    }

    /// The kept tail, starting at a whole character when the cut may have split one.
    fn tail_bytes(&self) -> Vec<u8> {
        let (front, back) = self.tail.as_slices();
        let mut tail = Vec::with_capacity(front.len() + back.len());
        tail.extend_from_slice(front);
        tail.extend_from_slice(back);
        if self.omitted_bytes > 0 {
            let skip = tail
                .iter()
                .take(3)
                .take_while(|b| (**b & 0b1100_0000) == 0b1000_0000)
                .count();
            tail.drain(..skip);
        }
        tail
    }

    /// The output as text (invalid UTF-8 shown lossily), with a notice where bytes were left out.
    pub(crate) fn render(&self) -> String {
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        if self.omitted_bytes > 0 {
            let kept_mib = (self.head_limit + self.tail_limit) / (1024 * 1024);
            text.push_str(&format!(
                "\n[... {} bytes omitted here: the command printed more than the {kept_mib} MiB rein keeps \
                 in memory; redirect its output to a file to see all of it ...]\n",
                self.omitted_bytes
            ));
        }
        text.push_str(&String::from_utf8_lossy(&self.tail_bytes()));
        if self.omitted_bytes > 0 {
            // Said again at the end: a long result reaches the model as its head and tail,
            // so the notice in the middle may never be seen.
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!(
                "[rein kept only the start and the end of this output; {} bytes between them \
                 are lost. Redirect the command's output to a file to keep all of it.]\n",
                self.omitted_bytes
            ));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_output_is_kept_whole() {
        let mut out = CappedOutput::with_limits(4, 4);
        out.push(b"abc");
        out.push(b"def");
        assert_eq!(out.render(), "abcdef");
    }

    #[test]
    fn large_output_keeps_head_and_tail_with_a_count() {
        let mut out = CappedOutput::with_limits(4, 4);
        for chunk in [&b"0123"[..], b"45", b"6789", b"abcdefgh", b"XY"] {
            out.push(chunk);
        }
        let text = out.render();
        assert!(
            text.starts_with("0123\n[... 12 bytes omitted here"),
            "{text}"
        );
        assert!(text.contains("ghXY\n[rein kept only"), "{text}");
        assert!(text.ends_with("12 bytes between them are lost. Redirect the command's output to a file to keep all of it.]\n"), "{text}");
    }

    #[test]
    fn empty_output() {
        let out = CappedOutput::default();
        assert!(out.is_empty());
        assert_eq!(out.render(), "");
    }
}
