//! Large pastes: a paste of more than a few lines shows in the input as one placeholder
//! (`[pasted 2000 lines]`), so the input line, the scrollback and the history stay short and
//! editing does not redraw thousands of lines per key; the request is sent with the paste in
//! full. rustyline reads a bracketed paste whole and inserts it; rein takes the paste's keys
//! itself (between the paste's start and end markers) and inserts the placeholder instead.

use std::sync::Arc;

use parking_lot::Mutex;
use rustyline::{
    Cmd, ConditionalEventHandler, Event, EventContext, KeyCode, KeyEvent, Modifiers, RepeatCount,
};

/// A paste of more lines than this is shown as a placeholder.
const PASTE_SHOWN_LINES: usize = 3;
/// A paste of more characters than this too (one long line is as hard to edit).
const PASTE_SHOWN_CHARS: usize = 1_000;

/// The pastes of the session, and the one being read.
#[derive(Debug, Default)]
pub(crate) struct Pastes {
    /// The paste being read, between its markers.
    reading: Option<String>,
    /// Each placeholder shown so far, with the text it stands for. Kept for the session, so
    /// an input recalled from the history is sent whole again.
    stored: Vec<(String, String)>,
}

/// The pastes, shared by the editor's key handlers and the REPL.
pub(crate) type SharedPastes = Arc<Mutex<Pastes>>;

impl Pastes {
    /// `input` with each placeholder replaced by the paste it stands for.
    pub(crate) fn expand(&self, input: &str) -> String {
        let mut out = input.to_owned();
        for (placeholder, text) in &self.stored {
            if out.contains(placeholder.as_str()) {
                out = out.replacen(placeholder.as_str(), text, 1);
            }
        }
        out
    }

    /// A placeholder in `input` whose paste rein does not hold (recalled from the history
    /// of an earlier session): sent as it reads, it would lose the paste.
    pub(crate) fn missing(&self, input: &str) -> Option<String> {
        let mut rest = input;
        while let Some(start) = rest.find("[pasted ") {
            let candidate = &rest[start..];
            let end = candidate.find(']').map_or(candidate.len(), |i| i + 1);
            let placeholder = &candidate[..end];
            if is_placeholder(placeholder) && !self.stored.iter().any(|(p, _)| p == placeholder) {
                return Some(placeholder.to_owned());
            }
            rest = &candidate[end.min(candidate.len())..];
        }
        None
    }

    /// What a finished paste inserts: the text itself when short, else a placeholder.
    fn finish(&mut self, text: String) -> String {
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        let lines = text.trim_end_matches('\n').lines().count();
        if lines <= PASTE_SHOWN_LINES && text.chars().count() <= PASTE_SHOWN_CHARS {
            return text;
        }
        let what = if lines > 1 {
            format!("{lines} lines")
        } else {
            format!("{} characters", text.chars().count())
        };
        // A label of its own: each placeholder names one paste.
        let taken = self
            .stored
            .iter()
            .filter(|(p, _)| p.starts_with(&format!("[pasted {what}")))
            .count();
        let placeholder = if taken == 0 {
            format!("[pasted {what}]")
        } else {
            format!("[pasted {what} #{}]", taken + 1)
        };
        self.stored.push((placeholder.clone(), text));
        placeholder
    }
}

/// Whether `text` reads as a placeholder: `[pasted 12 lines]`, `[pasted 5000 characters #2]`.
fn is_placeholder(text: &str) -> bool {
    let Some(inner) = text
        .strip_prefix("[pasted ")
        .and_then(|t| t.strip_suffix(']'))
    else {
        return false;
    };
    let mut words = inner.split(' ');
    let count = words.next().is_some_and(|n| n.parse::<u64>().is_ok());
    let unit = matches!(words.next(), Some("lines" | "characters"));
    let number = match words.next() {
        None => true,
        Some(n) => n
            .strip_prefix('#')
            .is_some_and(|n| n.parse::<u64>().is_ok()),
    };
    count && unit && number && words.next().is_none()
}

/// Binds the paste's keys in `editor` to `pastes`.
pub(crate) fn bind<H: rustyline::Helper, I: rustyline::history::History>(
    editor: &mut rustyline::Editor<H, I>,
    pastes: &SharedPastes,
) {
    let handler = |pastes: &SharedPastes| {
        rustyline::EventHandler::Conditional(Box::new(PasteKeys(Arc::clone(pastes))))
    };
    for code in [KeyCode::BracketedPasteStart, KeyCode::BracketedPasteEnd] {
        editor.bind_sequence(KeyEvent(code, Modifiers::NONE), handler(pastes));
    }
    editor.bind_sequence(Event::Any, handler(pastes));
}

/// Takes a paste's keys: starts at its start marker, keeps every key until its end marker,
/// then inserts the paste or its placeholder. Other keys are left to rustyline.
struct PasteKeys(SharedPastes);

impl ConditionalEventHandler for PasteKeys {
    fn handle(
        &self,
        event: &Event,
        _count: RepeatCount,
        _positive: bool,
        _ctx: &EventContext<'_>,
    ) -> Option<Cmd> {
        let mut pastes = self.0.lock();
        let key = event.get(0)?;
        match key {
            KeyEvent(KeyCode::BracketedPasteStart, _) => {
                pastes.reading = Some(String::new());
                Some(Cmd::Noop)
            }
            KeyEvent(KeyCode::BracketedPasteEnd, _) => {
                let text = pastes.reading.take()?;
                let inserted = pastes.finish(text);
                Some(Cmd::Insert(1, inserted))
            }
            _ => {
                let reading = pastes.reading.as_mut()?;
                if let Some(c) = pasted_char(key) {
                    reading.push(c);
                }
                Some(Cmd::Noop)
            }
        }
    }
}

/// The character a key of a paste stands for; `None` for keys that are not text.
fn pasted_char(key: &KeyEvent) -> Option<char> {
    match key {
        KeyEvent(KeyCode::Char(c), Modifiers::NONE | Modifiers::SHIFT) => Some(*c),
        KeyEvent(KeyCode::Enter, _) => Some('\n'),
        KeyEvent(KeyCode::Char('J' | 'M'), Modifiers::CTRL) => Some('\n'),
        KeyEvent(KeyCode::Tab, _) => Some('\t'),
        KeyEvent(KeyCode::Char('I'), Modifiers::CTRL) => Some('\t'),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_paste_is_kept_and_a_long_one_becomes_a_placeholder() {
        let mut pastes = Pastes::default();
        assert_eq!(pastes.finish("one\ntwo".into()), "one\ntwo");
        let long: String = (1..=2000).map(|i| format!("line {i}\n")).collect();
        assert_eq!(pastes.finish(long.clone()), "[pasted 2000 lines]");
        assert_eq!(pastes.finish(long.clone()), "[pasted 2000 lines #2]");
        let wide = "x".repeat(5000);
        assert_eq!(pastes.finish(wide.clone()), "[pasted 5000 characters]");
        let sent = pastes.expand("look: [pasted 2000 lines] and [pasted 5000 characters]");
        assert_eq!(sent, format!("look: {long} and {wide}"));
        // A placeholder the person typed over is sent as it reads.
        assert_eq!(pastes.expand("[pasted 2000 line]"), "[pasted 2000 line]");
    }

    #[test]
    fn a_placeholder_whose_paste_is_gone_is_found() {
        let mut pastes = Pastes::default();
        let held = pastes.finish("a\nb\nc\nd\n".into());
        assert_eq!(pastes.missing(&format!("see {held}")), None);
        assert_eq!(
            pastes.missing("see [pasted 2000 lines #3] and more"),
            Some("[pasted 2000 lines #3]".to_owned())
        );
        assert_eq!(pastes.missing("[pasted my notes] [pasted 3 apples]"), None);
    }

    #[test]
    fn carriage_returns_become_newlines() {
        let mut pastes = Pastes::default();
        assert_eq!(pastes.finish("a\r\nb\rc".into()), "a\nb\nc");
    }
}
