//! Keys pressed while a turn runs. A thread reads stdin (the terminal stays in keys mode for
//! the whole session, see `terminal.rs`) and
//! routes each key: to the open approval question (`y`, `a`, `n`, `r` then a reason, Esc),
//! or to the type-ahead kept for after the turn; Ctrl+C cancels the turn either way.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::Mutex;
use rein_core::interaction::Approval;
use rustix::event::{PollFd, PollFlags, Timespec};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::render::Live;

/// How often the reader looks whether it should stop.
const STOP_CHECK: Duration = Duration::from_millis(40);
const CTRL_C: u8 = 0x03;
const CTRL_D: u8 = 0x04;
const ESC: u8 = 0x1b;
const BACKSPACE: u8 = 0x7f;
const CTRL_H: u8 = 0x08;

/// What the key reader shares with the REPL and its approvals.
pub(crate) struct KeyShared {
    live: Arc<Live>,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// The running turn's cancellation, while one runs.
    cancel: Option<CancellationToken>,
    /// What the person typed during the turn.
    typeahead: String,
    /// Ctrl+D on nothing typed: leave once the turn is over.
    leave: bool,
    /// Bytes of a character split between two reads.
    partial: Vec<u8>,
    /// The question waiting for a key.
    question: Option<Question>,
}

struct Question {
    answer: oneshot::Sender<Approval>,
    /// The keys that answer it besides y, n, Esc and Ctrl+C.
    offered: Offered,
    /// `Some` while the person types why they refuse.
    reason: Option<String>,
}

/// The keys a question takes besides y, n, Esc and Ctrl+C: only the choices that mean
/// something for it (leaving the sandbox has no "for the session").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Offered {
    /// `a`: yes for the rest of the session.
    pub(crate) session: bool,
    /// `l`: this exact line for the rest of the session.
    pub(crate) line: bool,
    /// `r`: no, and say why.
    pub(crate) reason: bool,
}

impl Offered {
    /// Every key.
    #[cfg(test)]
    pub(crate) const ALL: Offered = Offered {
        session: true,
        line: true,
        reason: true,
    };
}

impl KeyShared {
    /// Keys shown through `live`.
    pub(crate) fn new(live: Arc<Live>) -> Arc<Self> {
        Arc::new(KeyShared {
            live,
            inner: Mutex::new(Inner::default()),
        })
    }

    /// Opens a question; the answer comes when the person presses a key. `None` when no
    /// turn is reading keys.
    pub(crate) fn ask(&self, offered: Offered) -> Option<oneshot::Receiver<Approval>> {
        let mut inner = self.inner.lock();
        inner.cancel.as_ref()?;
        let (answer, receiver) = oneshot::channel();
        inner.question = Some(Question {
            answer,
            offered,
            reason: None,
        });
        Some(receiver)
    }

    /// Starts reading keys for a turn cancelled by `cancel`.
    pub(crate) fn start(self: &Arc<Self>, cancel: CancellationToken) -> TurnKeys {
        {
            let mut inner = self.inner.lock();
            inner.cancel = Some(cancel);
            inner.typeahead.clear();
            inner.partial.clear();
            inner.leave = false;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Arc::clone(self);
        let stopping = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("keys".into())
            .spawn(move || read_keys(&shared, &stopping))
            .ok();
        TurnKeys {
            shared: Arc::clone(self),
            stop,
            thread,
        }
    }

    fn keys(&self, bytes: &[u8]) {
        let mut inner = self.inner.lock();
        if let Some(question) = inner.question.as_mut() {
            match question.reason.as_mut() {
                None => {
                    let offered = question.offered;
                    // Keys pressed together may come in one read: an answer key this
                    // question does not take is passed over, the next key decides; any other
                    // key ends the read unanswered (typed text must not answer by a letter).
                    let mut answer = None;
                    for &byte in bytes {
                        answer = match byte {
                            b'y' | b'Y' => Some(Approval::Yes),
                            b'a' | b'A' if offered.session => Some(Approval::YesForSession),
                            b'l' | b'L' if offered.line => Some(Approval::YesForLine),
                            b'n' | b'N' => Some(Approval::No),
                            ESC if bytes.len() == 1 => Some(Approval::No),
                            // A key's escape sequence (an arrow): nothing in it answers.
                            ESC => break,
                            CTRL_C => Some(Approval::Cancelled),
                            b'r' | b'R' if offered.reason => {
                                question.reason = Some(String::new());
                                self.live.write_inline("\r\x1b[K  why not? ");
                                break;
                            }
                            b'a' | b'A' | b'l' | b'L' | b'r' | b'R' => None,
                            _ => break,
                        };
                        if answer.is_some() {
                            break;
                        }
                    }
                    if let Some(answer) = answer {
                        self.answer(&mut inner, answer);
                    }
                }
                Some(reason) => {
                    let mut answer = None;
                    for c in String::from_utf8_lossy(bytes).chars() {
                        match c {
                            '\r' | '\n' => {
                                let why = reason.trim().to_owned();
                                answer = Some(if why.is_empty() {
                                    Approval::No
                                } else {
                                    Approval::NoBecause(why)
                                });
                                break;
                            }
                            '\u{3}' => {
                                answer = Some(Approval::Cancelled);
                                break;
                            }
                            '\u{1b}' if bytes.len() == 1 => {
                                answer = Some(Approval::No);
                                break;
                            }
                            '\u{7f}' | '\u{8}' if reason.pop().is_some() => {
                                self.live.write_inline("\x08 \x08");
                            }
                            c if !c.is_control() => {
                                reason.push(c);
                                let mut echo = [0; 4];
                                self.live.write_inline(c.encode_utf8(&mut echo));
                            }
                            _ => {}
                        }
                    }
                    // The answer line replaces the reason's: it is shown once.
                    if let Some(answer) = answer {
                        self.answer(&mut inner, answer);
                    }
                }
            }
            return;
        }
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                CTRL_C => {
                    if let Some(cancel) = &inner.cancel {
                        cancel.cancel();
                    }
                }
                CTRL_D if inner.typeahead.is_empty() => inner.leave = true,
                BACKSPACE | CTRL_H => {
                    inner.typeahead.pop();
                }
                b'\r' | b'\n' => inner.typeahead.push('\n'),
                // Esc alone stops the turn, as Ctrl+C does (a key's sequence comes whole).
                ESC if i + 1 == bytes.len() => {
                    if let Some(cancel) = &inner.cancel {
                        cancel.cancel();
                    }
                }
                ESC => {
                    // An escape sequence (arrows and the like) is not text.
                    i += 1;
                    if bytes.get(i) == Some(&b'[') || bytes.get(i) == Some(&b'O') {
                        i += 1;
                        while i < bytes.len() && !bytes[i].is_ascii_alphabetic() && bytes[i] != b'~'
                        {
                            i += 1;
                        }
                    }
                }
                b if b < 0x20 && b != b'\t' => {}
                _ => {
                    inner.partial.push(bytes[i]);
                    let partial = std::mem::take(&mut inner.partial);
                    match std::str::from_utf8(&partial) {
                        Ok(text) => inner.typeahead.push_str(text),
                        Err(e) if e.error_len().is_none() => inner.partial = partial,
                        Err(_) => inner.typeahead.push('\u{FFFD}'),
                    }
                }
            }
            i += 1;
        }
        let mut shown = inner.typeahead.clone();
        if inner.leave {
            shown.push_str(" (then leave)");
        }
        drop(inner);
        self.live.set_queued(&shown);
    }

    fn answer(&self, inner: &mut Inner, answer: Approval) {
        let cancelled = answer == Approval::Cancelled;
        if let Some(question) = inner.question.take() {
            let _ = question.answer.send(answer);
        }
        if cancelled && let Some(cancel) = &inner.cancel {
            cancel.cancel();
        }
    }
}

/// What the person typed while a turn ran.
#[derive(Debug, Default)]
pub(crate) struct Typed {
    /// The text, `\n` where Enter was pressed.
    pub(crate) text: String,
    /// Ctrl+D was pressed on nothing typed: leave.
    pub(crate) leave: bool,
}

impl Typed {
    /// The whole lines typed (each to run in turn, blank ones left out) and the rest, which
    /// waits at the prompt.
    pub(crate) fn split(self) -> (Vec<String>, String) {
        let (lines, rest) = match self.text.rfind('\n') {
            Some(end) => (&self.text[..end], &self.text[end + 1..]),
            None => ("", self.text.as_str()),
        };
        let lines = lines
            .split('\n')
            .filter(|l| !l.trim().is_empty())
            .map(str::to_owned)
            .collect();
        (lines, rest.to_owned())
    }
}

/// An input that was not sent (refused, or an attachment failed): the text to edit again,
/// and the keys typed while it was being prepared.
#[derive(Debug)]
pub(crate) struct NotSent {
    /// The input as typed.
    pub(crate) line: String,
    /// What the person typed meanwhile.
    pub(crate) typed: Typed,
}

/// Keys being read for one turn.
pub(crate) struct TurnKeys {
    shared: Arc<KeyShared>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl TurnKeys {
    /// Stops reading and returns what was typed ahead.
    pub(crate) fn finish(mut self) -> Typed {
        self.stop_reading();
        let mut inner = self.shared.inner.lock();
        inner.cancel = None;
        inner.question = None;
        Typed {
            text: std::mem::take(&mut inner.typeahead),
            leave: std::mem::take(&mut inner.leave),
        }
    }

    fn stop_reading(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for TurnKeys {
    fn drop(&mut self) {
        self.stop_reading();
    }
}

/// Reads stdin until told to stop (or it ends), passing keys on.
fn read_keys(shared: &KeyShared, stop: &AtomicBool) {
    let stdin = std::io::stdin();
    let mut buffer = [0u8; 1024];
    let timeout = Timespec {
        tv_sec: 0,
        tv_nsec: i64::from(STOP_CHECK.subsec_nanos()),
    };
    while !stop.load(Ordering::SeqCst) {
        let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
        match rustix::event::poll(&mut fds, Some(&timeout)) {
            Ok(0) => continue,
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return,
        }
        if fds[0].revents().intersects(PollFlags::HUP | PollFlags::ERR)
            && !fds[0].revents().contains(PollFlags::IN)
        {
            return;
        }
        match rustix::io::read(&stdin, &mut buffer) {
            Ok(0) => return,
            Ok(n) => shared.keys(&buffer[..n]),
            Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::{LiveOptions, Style};

    fn shared() -> (Arc<KeyShared>, CancellationToken) {
        let live = Arc::new(Live::new(
            std::io::sink(),
            LiveOptions {
                style: Style::plain(),
                width: 80,
                spinner: false,
                show_reasoning: true,
                interactive: true,
            },
        ));
        let keys = KeyShared::new(live);
        let cancel = CancellationToken::new();
        keys.inner.lock().cancel = Some(cancel.clone());
        (keys, cancel)
    }

    #[test]
    fn typing_during_a_turn_is_kept_with_its_edits() {
        let (keys, cancel) = shared();
        keys.keys(b"abc\x7fd\x1b[A\re");
        keys.keys("é".as_bytes().split_at(1).0);
        keys.keys("é".as_bytes().split_at(1).1);
        assert_eq!(keys.inner.lock().typeahead, "abd\neé");
        assert!(!cancel.is_cancelled());
        keys.keys(b"\x03");
        assert!(cancel.is_cancelled());
    }

    #[test]
    fn esc_alone_stops_the_turn_and_an_arrow_does_not() {
        let (keys, cancel) = shared();
        keys.keys(b"\x1b[A");
        assert!(!cancel.is_cancelled());
        keys.keys(b"\x1b");
        assert!(cancel.is_cancelled());
    }

    #[test]
    fn ctrl_d_on_nothing_typed_leaves_after_the_turn() {
        let (keys, _) = shared();
        keys.keys(b"\x04");
        assert!(keys.inner.lock().leave);
    }

    #[test]
    fn a_question_takes_one_key_or_a_reason() {
        let (keys, cancel) = shared();
        for (pressed, expected) in [
            (&b"y"[..], Approval::Yes),
            (b"a", Approval::YesForSession),
            (b"l", Approval::YesForLine),
            (b"N", Approval::No),
            (b"\x1b", Approval::No),
        ] {
            let mut answer = keys.ask(Offered::ALL).unwrap();
            keys.keys(b"x");
            assert!(answer.try_recv().is_err(), "other keys do not answer");
            keys.keys(pressed);
            assert_eq!(answer.try_recv().unwrap(), expected);
        }
        let mut answer = keys.ask(Offered::ALL).unwrap();
        keys.keys(b"r");
        keys.keys(b"not thaX\x7ft\r");
        assert_eq!(
            answer.try_recv().unwrap(),
            Approval::NoBecause("not that".into())
        );
        assert!(
            keys.inner.lock().typeahead.is_empty(),
            "answers are not type-ahead"
        );
        let mut answer = keys.ask(Offered::ALL).unwrap();
        keys.keys(b"\x03");
        assert_eq!(answer.try_recv().unwrap(), Approval::Cancelled);
        assert!(cancel.is_cancelled());
    }

    #[test]
    fn keys_not_offered_do_not_answer() {
        let (keys, _) = shared();
        let once = Offered {
            session: false,
            line: false,
            reason: false,
        };
        let mut answer = keys.ask(once).unwrap();
        for key in [&b"a"[..], b"l", b"r", b"\x1b[A"] {
            keys.keys(key);
            assert!(answer.try_recv().is_err(), "{key:?} is not offered");
        }
        keys.keys(b"y");
        assert_eq!(answer.try_recv().unwrap(), Approval::Yes);
        // Pressed together: the key not offered is passed over, the next one answers.
        let mut answer = keys.ask(once).unwrap();
        keys.keys(b"an");
        assert_eq!(answer.try_recv().unwrap(), Approval::No);
        // Typed text is not read for a letter that answers.
        let mut answer = keys.ask(Offered::ALL).unwrap();
        keys.keys(b"please");
        assert!(answer.try_recv().is_err());
    }
}
