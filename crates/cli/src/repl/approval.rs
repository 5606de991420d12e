//! Approvals in the REPL: the question shows the tool, its whole argument (the full
//! command, the diff an edit would make) and why rein asks; one key answers it.

use std::sync::Arc;

use parking_lot::Mutex;
use rein_core::face::{Preview, async_trait};
use rein_core::interaction::{AnswerScope, Approval, ApprovalRequest, Interaction};
use rein_core::permissions::Rule;

use super::keys::{KeyShared, Offered};
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
        let style = self.live.style();
        // Listening before the keys are shown: a key pressed as soon as they are answers.
        let Some(asked) = self.keys.ask(offered(&request.scope)) else {
            // Between turns no one reads keys (a background command's connection, say):
            // refused this time and nothing decided, so the next time asks again.
            self.live.write(&format!(
                "  {}\n",
                style.warn(&format!("! {}", unasked(&request)))
            ));
            return Approval::Cancelled;
        };
        self.live.pause();
        self.live
            .write(&question(style, self.live.width(), &request));
        let keys = keys_line(style, self.live.width(), &request.scope);
        self.live.write_inline(&keys);
        let answer = asked.await.unwrap_or(Approval::Cancelled);
        // The answer replaces the keys' lines (and a reason typed there).
        self.live.replace_inline(
            keys.matches('\n').count(),
            &answered(style, &answer, &request),
        );
        if let Some(rule) = request.scope.granted(&answer) {
            self.granted.lock().push(rule.clone());
        }
        self.live.resume();
        answer
    }
}

/// What was refused because no turn was there to ask in.
fn unasked(request: &ApprovalRequest) -> String {
    let what = match &request.preview {
        Some(Preview::Connection { host, port }) => format!(
            "a background command's connection to {}:{port}",
            neutralize(host)
        ),
        Some(Preview::Diff { .. } | Preview::Command { .. }) | None => {
            neutralize(&request.tool).into_owned()
        }
    };
    format!(
        "{what} was refused: questions are asked during a turn, and nothing was decided for \
         the session (the next time, during a turn, asks)"
    )
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
        Some(Preview::Connection { host, port }) => {
            vec![s.bold(&format!("{}:{port}", neutralize(host)))]
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
    let mut choices = Vec::new();
    if let AnswerScope::Call {
        session_rule,
        line_rule,
    } = &request.scope
    {
        choices.push(format!(
            "a: allow {} for the rest of the session",
            neutralize(&session_rule.to_string())
        ));
        if let Some(line) = line_rule {
            choices.push(format!(
                "l: allow only this line, {}, for the rest of the session",
                neutralize(&line.to_string())
            ));
        }
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

/// The keys a question of `scope` takes besides y, n, Esc and Ctrl+C.
fn offered(scope: &AnswerScope) -> Offered {
    match scope {
        AnswerScope::Call { line_rule, .. } => Offered {
            session: true,
            line: line_rule.is_some(),
            reason: true,
        },
        AnswerScope::Once => Offered {
            session: false,
            line: false,
            reason: true,
        },
        // The one who asked keeps a yes or a no, never a reason.
        AnswerScope::Session { .. } => Offered {
            session: false,
            line: false,
            reason: false,
        },
    }
}

/// The keys that answer a question of `scope` (only those it takes), broken between keys in
/// a narrow window.
pub(crate) fn keys_line(s: Style, width: usize, scope: &AnswerScope) -> String {
    let offered = offered(scope);
    let (yes, no) = match scope {
        AnswerScope::Call { .. } => ("yes", "no"),
        AnswerScope::Once => ("yes, once", "no"),
        AnswerScope::Session { .. } => ("yes for the session", "no for the session"),
    };
    let mut keys = vec![format!("{} {} {yes}", s.warn("╰"), s.bold("y"))];
    if offered.session {
        keys.push(format!("{} yes for the session", s.bold("a")));
    }
    if offered.line {
        keys.push(format!("{} this line for the session", s.bold("l")));
    }
    keys.push(format!("{} {no}", s.bold("n")));
    if offered.reason {
        keys.push(format!("{} no, say why", s.bold("r")));
    }
    keys.push(s.dim("Esc no ›"));
    let line = keys.join(" · ");
    // One column is left for the cursor after the last key.
    let mut wrapped = wrap_parts(&line, " · ", width.saturating_sub(1)).replace('\n', "\n  ");
    wrapped.push(' ');
    wrapped
}

/// The line that replaces the keys once answered. A refusal has none: the call's own line
/// (`✗ not allowed: declined: why`) follows at once and says it, with the reason.
fn answered(s: Style, answer: &Approval, request: &ApprovalRequest) -> String {
    let line = match (answer, &request.scope) {
        (Approval::Cancelled, _) => s.error("  ✗ interrupted"),
        // A no to a question whose answer holds for the session: nothing else will say it.
        (Approval::No | Approval::NoBecause(_), AnswerScope::Session { after_no }) => {
            s.error(&format!("  ✗ no: {}", neutralize(after_no)))
        }
        (Approval::No | Approval::NoBecause(_), AnswerScope::Call { .. } | AnswerScope::Once) => {
            return String::new();
        }
        (Approval::Yes | Approval::YesForSession | Approval::YesForLine, scope) => {
            match (scope.granted(answer), scope) {
                (Some(rule), _) => s.added(&format!(
                    "  ✓ yes, {} for the rest of the session",
                    neutralize(&rule.to_string())
                )),
                (None, AnswerScope::Call { .. }) => s.added("  ✓ yes"),
                (None, AnswerScope::Once) => s.added("  ✓ yes, once"),
                (None, AnswerScope::Session { .. }) => {
                    s.added("  ✓ yes, for the rest of the session")
                }
            }
        }
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
            scope: AnswerScope::Call {
                session_rule: Rule::parse("bash(cargo test:*)", None).unwrap(),
                line_rule: None,
            },
            agent: None,
        }
    }

    fn shown(width: usize, request: &ApprovalRequest) -> String {
        let s = Style::plain();
        format!(
            "{}{}",
            question(s, width, request),
            keys_line(s, width, &request.scope)
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
        request.scope = AnswerScope::Call {
            session_rule: Rule::parse("edit_file(src/**)", None).unwrap(),
            line_rule: None,
        };
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

    /// Leaving the sandbox is once only: the question shows the command line and offers
    /// yes (once) and no, nothing for the session.
    #[test]
    fn a_once_only_question_offers_no_session_choice() {
        let mut request = request(Some(Preview::Command {
            command: "python3 -c \"open('/home/me/notes.txt', 'w')\"".into(),
            cwd: "/home/me/project".into(),
        }));
        request.scope = AnswerScope::Once;
        let shown = shown(80, &request);
        insta::assert_snapshot!("once_80", shown);
        assert!(
            !shown.contains("session") && !shown.contains("{"),
            "{shown}"
        );
        let s = Style::plain();
        assert_eq!(answered(s, &Approval::Yes, &request), "  ✓ yes, once\n");
        assert_eq!(answered(s, &Approval::No, &request), "");
    }

    /// A host's question: either answer holds for the session, and a no says so, with how
    /// to allow the host later.
    #[test]
    fn a_session_question_says_what_a_no_means() {
        let mut request = request(Some(Preview::Connection {
            host: "pypi.org".into(),
            port: 443,
        }));
        request.tool = "network".into();
        request.arguments = serde_json::json!({"host": "pypi.org", "port": 443});
        request.reason = "a sandboxed command wants to reach pypi.org (port 443) through \
                          rein's network proxy, and pypi.org is not in [sandbox] allow_domains; \
                          your answer holds for the rest of the session"
            .into();
        request.scope = AnswerScope::Session {
            after_no: "pypi.org (port 443) is refused for the rest of the session; to allow \
                       it, add it to [sandbox] allow_domains"
                .into(),
        };
        insta::assert_snapshot!("session_80", shown(80, &request));
        let s = Style::plain();
        assert_eq!(
            answered(s, &Approval::No, &request),
            "  ✗ no: pypi.org (port 443) is refused for the rest of the session; to allow it, \
             add it to [sandbox] allow_domains\n"
        );
        assert_eq!(
            answered(s, &Approval::Yes, &request),
            "  ✓ yes, for the rest of the session\n"
        );
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
