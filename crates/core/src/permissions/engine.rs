//! The decision for one call, with the rule or reason that made it. In order:
//!
//! 1. **The hard deny list** (destructive shell commands): refused in every mode, whatever
//!    the rules say.
//! 2. **Deny rules**: a shell call is refused when any of its simple commands is named.
//! 3. **Ask rules** the person wrote: asked (firm: a hook's allow cannot wave them).
//!    A shell line whose files cannot be known (`cat $F`) asks when any deny or ask rule
//!    names files.
//! 4. **Writes outside the workspace** ask in every mode (firm), unless an allow rule names
//!    that path explicitly; so do edits of `.git` (at any depth) and `.rein`, and (but in
//!    yolo mode) a shell line's redirections there. (Reads outside ask too, but in yolo.)
//!    What a shell line reads is judged before any rule for its commands: a sensitive file
//!    asks, and (but in yolo mode) so does a file outside the workspace or one known only
//!    when the line runs. A rule allowing `npm test` does not vouch for `cat .env`.
//! 5. **Allow rules** (configured, and "yes for the session"): a shell call runs when every
//!    one of its simple commands is named by one, or is provably read-only.
//! 6. **Sensitive files** (`.env`, keys, certificates, other processes' environments):
//!    reading them asks by default; an allow rule for the file lifts it.
//! 7. **The mode**: plan only reads; default runs reads and provably read-only commands;
//!    accept-edits also edits inside the workspace; auto also runs commands, in the OS
//!    sandbox (what the sandbox refuses asks afterwards, in the agent); yolo runs everything.

use std::fmt;

use super::{CallView, Decision, PathTarget, Pattern, Rule, ShellFacts};

/// Where a rule came from, for explanations.
#[derive(Debug, Clone, PartialEq, Eq, strum::Display)]
pub enum RuleOrigin {
    /// rein's own default (the sensitive files).
    #[strum(to_string = "rein's defaults")]
    Default,
    /// A config file or a flag (as `Source` prints it).
    #[strum(to_string = "{0}")]
    Configured(String),
    /// The person said "yes for the rest of the session".
    #[strum(to_string = "this session")]
    Session,
}

/// A rule and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourcedRule {
    /// The rule.
    pub rule: Rule,
    /// Where it came from.
    pub origin: RuleOrigin,
}

impl fmt::Display for SourcedRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (from {})", self.rule, self.origin)
    }
}

/// The allow, ask and deny lists the engine applies.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    /// Calls that run without asking.
    pub allow: Vec<SourcedRule>,
    /// Calls that ask.
    pub ask: Vec<SourcedRule>,
    /// Calls that never run.
    pub deny: Vec<SourcedRule>,
}

/// Files whose reading asks by default: they hold secrets more often than not.
pub const SENSITIVE_FILES: [&str; 12] = [
    "read_file(**/.env)",
    "read_file(**/.env.*)",
    "read_file(**/*.pem)",
    "read_file(**/*.key)",
    "read_file(**/id_rsa*)",
    "read_file(**/id_ed25519*)",
    "read_file(**/id_ecdsa*)",
    "read_file(**/.netrc)",
    "read_file(**/.npmrc)",
    "read_file(**/credentials*)",
    // Another process's environment and memory: rein's own hold the API key.
    "read_file(/proc/*/environ)",
    "read_file(/proc/*/mem)",
];

/// A decision and what made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// What happens.
    pub decision: Decision,
    /// The rule or reason, in words (`deny rule bash(git push:*) (from ~/.rein/config.toml)`).
    pub because: String,
    /// For a call that asks: what the person can do so it runs without asking (`add the
    /// rule ... with --allow`), when something better than a mode change is known.
    pub lift: Option<String>,
}

/// A verdict without a way to lift it.
pub(super) fn verdict(decision: Decision, because: String) -> Verdict {
    Verdict {
        decision,
        because,
        lift: None,
    }
}

impl Verdict {
    pub(super) fn lifted_by(mut self, how: String) -> Self {
        self.lift = Some(how);
        self
    }
}

/// A sensitive file a shell line reads that no allow rule names explicitly: it asks.
pub(super) fn sensitive_read(
    sensitive: &[SourcedRule],
    allow: &[SourcedRule],
    shell: &ShellFacts,
    call: &CallView<'_>,
) -> Option<Verdict> {
    let (file, rule) = shell.files.iter().filter(|f| !f.write).find_map(|file| {
        let rule = sensitive.iter().find(|r| {
            r.rule
                .names_path(&file.absolute, file.in_workspace.as_deref())
        })?;
        (!explicitly_allowed(allow, file)).then_some((file, rule))
    })?;
    Some(
        verdict(
            Decision::ask(format!(
                "{} may hold secrets ({})",
                file.absolute.display(),
                rule.rule
            )),
            format!("rein's default ask rule {}", rule.rule),
        )
        .lifted_by(format!(
            "allow the file with `--allow 'read_file({})'`{}",
            file.absolute.display(),
            exact_rule(call).map_or_else(String::new, |r| format!(
                " and the command with `--allow '{r}'`"
            ))
        )),
    )
}

/// A read a shell line makes that rein cannot vouch for: a file outside the workspace (as
/// read_file's reads there ask), or a file known only when the line runs.
pub(super) fn unprovable_read(allow: &[SourcedRule], shell: &ShellFacts) -> Option<Verdict> {
    if let Some(file) = shell.files.iter().find(|f| {
        !f.write
            && f.outside
            && !is_device(f)
            && !explicitly_allowed(allow, f)
            // A path that does not exist cannot be read: `grep -r "/api/v1" src`.
            && f.absolute.exists()
    }) {
        return Some(
            verdict(
                Decision::ask(format!(
                    "it reads {}, outside the workspace, and reads there ask",
                    file.absolute.display()
                )),
                "a read outside the workspace (asks but in yolo)".to_owned(),
            )
            .lifted_by(format!(
                "allow the place with `--allow 'read_file({}/**)'`",
                file.absolute.parent().unwrap_or(&file.absolute).display()
            )),
        );
    }
    let why = shell.unknown_files.as_deref()?;
    Some(verdict(
        Decision::ask(format!("{why}: it could be a file that holds secrets")),
        "a file rein cannot know before the command runs".to_owned(),
    ))
}

/// An allow rule that names `file` by its path (not a rule naming a command).
pub(super) fn explicitly_allowed(allow: &[SourcedRule], file: &PathTarget) -> bool {
    allow.iter().any(|r| {
        matches!(r.rule.pattern, Some(Pattern::Path { .. }))
            && r.rule
                .names_path(&file.absolute, file.in_workspace.as_deref())
    })
}

/// The place inside the workspace whose files only the person changes on their own: the
/// repositories' own files (`.git`, at any depth: a nested repository's config names
/// programs git runs) and rein's project config (`.rein`).
pub(super) fn protected_place(path: &PathTarget) -> Option<&'static str> {
    let inside = path.in_workspace.as_deref()?;
    let mut components = inside.components().map(|c| c.as_os_str());
    if inside.starts_with(".rein") {
        return Some("rein's project directory .rein");
    }
    components
        .any(|c| c == ".git")
        .then_some("a repository's own .git directory")
}

/// `/dev/null`, `/dev/stderr` and the like: writing or reading them touches no file.
pub(super) fn is_device(path: &PathTarget) -> bool {
    path.absolute.starts_with("/dev")
}

/// Whether `rule` is a file rule (`read_file(**/.env)`) naming a file a shell call's
/// commands use (`cat .env`): what a rule keeps from the file tools it keeps from bash too.
pub(super) fn names_a_file(rule: &SourcedRule, call: &CallView<'_>) -> bool {
    let Some(shell) = call.shell else {
        return false;
    };
    matches!(rule.rule.pattern, Some(Pattern::Path { .. }))
        && shell.files.iter().any(|file| {
            rule.rule
                .names_path(&file.absolute, file.in_workspace.as_deref())
        })
}

/// The narrowest rule that names `call`: its file (`edit_file(src/a.rs)`, absolute outside
/// the workspace), or its one simple command (`bash(cargo test)`); `None` for a command
/// line of several (a rule per command would be needed) or a call with nothing to name.
pub(super) fn exact_rule(call: &CallView<'_>) -> Option<String> {
    if let Some(path) = call.path {
        let shown = match (&path.in_workspace, path.outside) {
            (Some(inside), false) => inside.display().to_string(),
            _ => path.absolute.display().to_string(),
        };
        return Some(format!("{}({shown})", call.tool));
    }
    if call.tool == "web_fetch" {
        return super::rule::url_host(call.arguments)
            .map(|host| format!("web_fetch(domain:{host})"));
    }
    match call.shell?.simple_commands.as_slice() {
        [one] if !one.contains(['\'', ')']) => Some(format!("{}({one})", call.tool)),
        _ => None,
    }
}
