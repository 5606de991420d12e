//! Approvals in the REPL: the question shows the tool, its whole argument (the full
//! command, the diff an edit would make) and why rein asks; one key answers it.

use std::sync::Arc;

use parking_lot::Mutex;
use rein_core::face::{Preview, async_trait};
use rein_core::interaction::{Approval, ApprovalRequest, Interaction};
use rein_core::permissions::Rule;

use super::keys::KeyShared;
use crate::render::{Live, Style, fit, full_diff, neutralize, wrap_parts};

/// Lines of a diff or argument shown in a question; a longer one says how many more.
const QUESTION_SHOWN_LINES: usize = 60;
/// The most lines the reason of a question takes.
const WHY_SHOWN_LINES: usize = 4;

/// Answers approvals with the person's keys.
pub(crate) struct ReplInteraction {
    live: Arc<Live>,
    keys: Arc<KeyShared>,
    /// What "yes for the session" allowed so far.
    granted: Mutex<Vec<Rule>>,
}

impl ReplInteraction {
    /// Questions shown through `live`, answered through `keys`.
    pub(crate) fn new(live: Arc<Live>, keys: Arc<KeyShared>) -> Self {
        ReplInteraction {
            live,
            keys,
            granted: Mutex::default(),
        }
    }

    /// The rules the person allowed for the session.
    pub(crate) fn granted(&self) -> Vec<Rule> {
        self.granted.lock().clone()
    }

    /// Forgets them (a new session).
    pub(crate) fn forget_granted(&self) {
        self.granted.lock().clear();
    }
}

#[async_trait]
impl Interaction for ReplInteraction {
    async fn approve(&self, request: ApprovalRequest) -> Approval {
        self.live.pause();
        let style = self.live.style();
        self.live
            .write(&question(style, self.live.width(), &request));
        // Listening before the keys are shown: a key pressed as soon as they are answers.
        let asked = self.keys.ask();
        let keys = keys_line(style, self.live.width(), request.line_rule.is_some());
        self.live.write_inline(&keys);
        let answer = match asked {
            Some(receiver) => receiver.await.unwrap_or(Approval::Cancelled),
            None => Approval::No,
        };
        // The answer replaces the keys' lines (and a reason typed there).
        self.live.replace_inline(
            keys.matches('\n').count(),
            &answered(style, &answer, &request),
        );
        let granted = match answer {
            Approval::YesForSession => Some(request.session_rule),
            Approval::YesForLine => Some(request.line_rule.unwrap_or(request.session_rule)),
            Approval::Yes | Approval::No | Approval::NoBecause(_) | Approval::Cancelled => None,
        };
        if let Some(rule) = granted {
            self.granted.lock().push(rule);
        }
        self.live.resume();
        answer
    }
}

/// The question, before its keys line.
pub(crate) fn question(s: Style, width: usize, request: &ApprovalRequest) -> String {
    let bar = s.warn("│");
    let mut out = String::new();
    let who = match &request.agent {
        Some(agent) => format!(" (from {})", neutralize(agent)),
        None => String::new(),
    };
    out.push_str(&format!(
        "{} {}{who}\n",
        s.warn("╭"),
        s.bold(&format!(
            "{} needs your approval",
            neutralize(&request.tool)
        ))
    ));
    let mut body: Vec<String> = match &request.preview {
        Some(Preview::Command { command, cwd }) => {
            // The whole command, wrapped: nothing of it may hide past the edge.
            let room = width.saturating_sub(2).max(20);
            let mut lines: Vec<String> = command
                .lines()
                .flat_map(|line| hard_wrap(&neutralize(line), room))
                .map(|line| s.bold(&line))
                .collect();
            lines.push(s.dim(&format!("in {}", neutralize(cwd))));
            lines
        }
        Some(Preview::Diff {
            path,
            diff,
            created,
        }) => {
            let verb = if *created { "create" } else { "change" };
            let mut lines = vec![s.bold(&format!("{verb} {}", neutralize(path)))];
            lines.extend(full_diff(s, diff));
            lines
        }
        None => serde_json::to_string_pretty(&request.arguments)
            .unwrap_or_default()
            .lines()
            .map(|line| neutralize(line).into_owned())
            .collect(),
    };
    if body.len() > QUESTION_SHOWN_LINES {
        let more = body.len() - QUESTION_SHOWN_LINES;
        body.truncate(QUESTION_SHOWN_LINES);
        body.push(s.dim(&format!("… {more} more lines")));
    }
    for line in body {
        out.push_str(&fit(&format!("{bar} {line}"), width));
        out.push('\n');
    }
    let reason = request
        .reason
        .lines()
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ");
    // The reason whole (it may say the command leaves the sandbox), in a few lines.
    let room = width.saturating_sub(2).max(20);
    let why = word_wrap(&format!("why: {}", neutralize(&reason)), room);
    let shown = why.len().min(WHY_SHOWN_LINES);
    for (i, line) in why.iter().take(shown).enumerate() {
        let line = if i + 1 == shown && why.len() > shown {
            format!("{line}…")
        } else {
            line.clone()
        };
        out.push_str(&fit(&format!("{bar} {}", s.dim(&line)), width));
        out.push('\n');
    }
    let mut choices = vec![format!(
        "a: allow {} for the rest of the session",
        neutralize(&request.session_rule.to_string())
    )];
    if let Some(line) = &request.line_rule {
        choices.push(format!(
            "l: allow only this line, {}, for the rest of the session",
            neutralize(&line.to_string())
        ));
    }
    // Wrapped whole: the rule is what the person agrees to.
    for choice in choices {
        for line in word_wrap(&choice, room) {
            out.push_str(&format!("{bar} {}\n", s.dim(&line)));
        }
    }
    out
}

/// `text` in lines of at most `width` columns, broken between words where it can be.
fn word_wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    let mut used = 0;
    for word in text.split_whitespace() {
        let w = unicode_width::UnicodeWidthStr::width(word);
        if used > 0 && used + 1 + w > width {
            lines.push(std::mem::take(&mut line));
            used = 0;
        }
        if w > width {
            let mut pieces = hard_wrap(word, width);
            let last = pieces.pop().unwrap_or_default();
            lines.extend(pieces);
            used = unicode_width::UnicodeWidthStr::width(last.as_str());
            line = last;
            continue;
        }
        if used > 0 {
            line.push(' ');
            used += 1;
        }
        line.push_str(word);
        used += w;
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// `text` in pieces of at most `width` columns.
fn hard_wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    let mut used = 0;
    for c in text.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > width {
            lines.push(String::new());
            used = 0;
        }
        used += w;
        if let Some(line) = lines.last_mut() {
            line.push(c);
        }
    }
    lines
}

/// The keys that answer it (`narrow`: with the exact line's), broken between keys in a
/// narrow window.
pub(crate) fn keys_line(s: Style, width: usize, narrow: bool) -> String {
    let line_key = if narrow {
        format!("{} this line for the session · ", s.bold("l"))
    } else {
        String::new()
    };
    let line = format!(
        "{} {} yes · {} yes for the session · {line_key}{} no · {} no, say why · {}",
        s.warn("╰"),
        s.bold("y"),
        s.bold("a"),
        s.bold("n"),
        s.bold("r"),
        s.dim("Esc no ›")
    );
    // One column is left for the cursor after the last key.
    let mut wrapped = wrap_parts(&line, " · ", width.saturating_sub(1)).replace('\n', "\n  ");
    wrapped.push(' ');
    wrapped
}

/// The line that replaces the keys once answered. A refusal has none: the call's own line
/// (`✗ not allowed: declined: why`) follows at once and says it, with the reason.
fn answered(s: Style, answer: &Approval, request: &ApprovalRequest) -> String {
    let line = match answer {
        Approval::Yes => s.added("  ✓ yes"),
        Approval::YesForSession => s.added(&format!(
            "  ✓ yes, {} for the rest of the session",
            neutralize(&request.session_rule.to_string())
        )),
        Approval::YesForLine => s.added(&format!(
            "  ✓ yes, {} for the rest of the session",
            neutralize(
                &request
                    .line_rule
                    .as_ref()
                    .unwrap_or(&request.session_rule)
                    .to_string()
            )
        )),
        Approval::No | Approval::NoBecause(_) => return String::new(),
        Approval::Cancelled => s.error("  ✗ interrupted"),
    };
    format!("{line}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(preview: Option<Preview>) -> ApprovalRequest {
        ApprovalRequest {
            call_id: "c1".into(),
            tool: "bash".into(),
            arguments: serde_json::json!({"command": "cargo test --workspace && rm -rf target/debug/incremental"}),
            preview,
            reason: "this command may change files".into(),
            session_rule: Rule::parse("bash(cargo test:*)", None).unwrap(),
            line_rule: None,
            agent: None,
        }
    }

    fn shown(width: usize, request: &ApprovalRequest) -> String {
        let s = Style::plain();
        format!(
            "{}{}",
            question(s, width, request),
            keys_line(s, width, request.line_rule.is_some())
        )
    }

    #[test]
    fn a_command_question_at_80_and_120_columns() {
        let request = request(Some(Preview::Command {
            command: "cargo test --workspace && rm -rf target/debug/incremental && echo done with all of it".into(),
            cwd: "/home/me/project".into(),
        }));
        insta::assert_snapshot!("command_80", shown(80, &request));
        insta::assert_snapshot!("command_120", shown(120, &request));
    }

    #[test]
    fn an_edit_question_shows_its_diff() {
        let mut request = request(Some(Preview::Diff {
            path: "src/main.py".into(),
            diff: "--- src/main.py\n+++ src/main.py\n@@ -1,3 +1,3 @@\n-import utils\n+import helpers\n \n def main():\n".into(),
            created: false,
        }));
        request.tool = "edit_file".into();
        request.session_rule = Rule::parse("edit_file(src/**)", None).unwrap();
        insta::assert_snapshot!("edit_80", shown(80, &request));
        insta::assert_snapshot!("edit_120", shown(120, &request));
    }

    #[test]
    fn a_long_reason_is_wrapped_whole_not_cut() {
        let mut request = request(Some(Preview::Command {
            command: "echo out > /home/me/notes/out.txt".into(),
            cwd: "/home/me/project".into(),
        }));
        request.reason = "it writes /home/me/notes/out.txt (a place outside the workspace), and \
                          writes there always ask; the sandbox would refuse the write to \
                          /home/me/notes/out.txt, so if you allow it, it runs outside the \
                          sandbox (with your rights)"
            .into();
        insta::assert_snapshot!("long_reason_80", shown(80, &request));
    }

    #[test]
    fn word_wrap_keeps_every_word_and_the_width() {
        let text = "why: a b ccc ddddddddddddddddddddddd e";
        let lines = word_wrap(text, 10);
        assert!(lines.iter().all(|l| l.chars().count() <= 10), "{lines:?}");
        assert_eq!(lines.concat().replace(' ', ""), text.replace(' ', ""));
        assert_eq!(word_wrap("", 10), [""]);
    }
}
