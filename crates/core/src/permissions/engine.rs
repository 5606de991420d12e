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

use rein_tools::ToolKind;

use super::{CallView, Decision, PathTarget, Pattern, PermissionMode, Rule, ShellFacts};

/// Where a rule came from, for explanations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleOrigin {
    /// rein's own default (the sensitive files).
    Default,
    /// A config file or a flag (as `Source` prints it).
    Configured(String),
    /// The person said "yes for the rest of the session".
    Session,
}

impl fmt::Display for RuleOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuleOrigin::Default => f.write_str("rein's defaults"),
            RuleOrigin::Configured(source) => f.write_str(source),
            RuleOrigin::Session => f.write_str("this session"),
        }
    }
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

/// Decides `call` under `mode`, with `rules` and the session's own rules.
pub(super) fn judge(
    mode: PermissionMode,
    rules: &RuleSet,
    sensitive: &[SourcedRule],
    session: &[SourcedRule],
    call: &CallView<'_>,
) -> Verdict {
    let names = |rule: &SourcedRule| rule.rule.names_call(call) || names_a_file(rule, call);
    // 1. The hard deny list.
    if let Some(danger) = call.shell.and_then(|s| s.danger.as_deref()) {
        return verdict(
            Decision::Deny {
                reason: format!(
                    "the hard deny list refuses it: {danger}. rein never runs commands that could \
                     destroy the system, the person's files or the workspace, in any mode; use a \
                     narrower command, or ask the person to run it themselves"
                ),
            },
            format!("the hard deny list: {danger}"),
        );
    }
    // 2. Deny rules.
    if let Some(rule) = rules.deny.iter().find(|r| names(r)) {
        return verdict(
            Decision::Deny {
                reason: format!("a deny rule names it: {}", rule.rule),
            },
            format!("deny rule {rule}"),
        );
    }
    // 3. Ask rules.
    if let Some(rule) = rules.ask.iter().find(|r| names(r)) {
        return verdict(
            Decision::Ask {
                reason: format!("an ask rule names it: {}", rule.rule),
                firm: true,
            },
            format!("ask rule {rule}"),
        )
        .lifted_by(format!(
            "take the ask rule {} out of {} (a rule the person wrote)",
            rule.rule, rule.origin
        ));
    }
    // Rules about commands cannot vouch for a command known only when it runs (`$CMD push`).
    // Nor a rule naming a program for that program with arguments known only when it runs
    // (`npm $X` under `npm publish:*`).
    let dynamic_under = |rule: &SourcedRule, shell: &ShellFacts| {
        let Some(Pattern::Command { text, .. }) = &rule.rule.pattern else {
            return false;
        };
        let program = text.split(' ').next().unwrap_or_default();
        shell
            .rule_texts
            .iter()
            .zip(&shell.dynamic_args)
            .any(|(form, dynamic)| match form {
                None => true,
                Some(form) => *dynamic && form.split(' ').next() == Some(program),
            })
    };
    if let Some(shell) = call.shell
        && let Some(rule) = rules
            .deny
            .iter()
            .chain(&rules.ask)
            .find(|r| r.rule.names_tool(call.tool) && dynamic_under(r, shell))
    {
        return verdict(
            Decision::Ask {
                reason: format!(
                    "a command or argument in it is known only when it runs, and the rule {} \
                     names commands",
                    rule.rule
                ),
                firm: true,
            },
            format!("an unknown command under the rule {rule}"),
        );
    }
    // Rules about files cannot vouch for a command line whose files are unknown.
    if let Some(why) = call.shell.and_then(|s| s.unknown_files.as_deref())
        && let Some(rule) = rules
            .deny
            .iter()
            .chain(&rules.ask)
            .find(|r| matches!(r.rule.pattern, Some(Pattern::Path { .. })))
    {
        return verdict(
            Decision::Ask {
                reason: format!("{why}, and the rule {} protects files", rule.rule),
                firm: true,
            },
            format!("an unknown file under the rule {rule}"),
        );
    }
    let allows = || rules.allow.iter().chain(session);
    // An exact rule for the whole line (what "yes for the session" records) covers it, its
    // files included: the person allowed this very line. A prefix rule never does
    // (`npm test:*` must not cover `npm test; rm -rf .`).
    if call.shell.is_some() {
        let line = call
            .arguments
            .get("command")
            .and_then(serde_json::Value::as_str);
        let names_line = |r: &&SourcedRule| {
            r.rule.names_tool(call.tool)
                && matches!(r.rule.pattern, Some(Pattern::Command { prefix: false, .. }))
                && line.is_some_and(|line| r.rule.names_command(line))
        };
        if let Some(rule) = allows().find(names_line) {
            return verdict(Decision::Allow, format!("allow rule {rule}"));
        }
    }
    // 4. Writes outside the workspace, and into the repository's or rein's own files.
    if call.kind == ToolKind::Edit
        && let Some(path) = call.path
        && !path.outside
        && let Some(place) = protected_place(path)
    {
        return match rules
            .allow
            .iter()
            .find(|r| r.rule.pattern.is_some() && names(r))
        {
            Some(rule) => verdict(Decision::Allow, format!("allow rule {rule}")),
            None => verdict(
                Decision::Ask {
                    reason: format!("the file is in {place}, and edits there always ask"),
                    firm: true,
                },
                format!("an edit in {place} (always asks)"),
            )
            .lifted_by(format!(
                "allow this file explicitly with `--allow '{}'`",
                exact_rule(call).unwrap_or_default()
            )),
        };
    }
    if let Some(shell) = call.shell
        && mode != PermissionMode::Yolo
        && let Some(file) = shell.files.iter().find(|f| {
            f.write
                && !is_device(f)
                && (f.outside || protected_place(f).is_some())
                && !explicitly_allowed(&rules.allow, f)
        })
    {
        let place = protected_place(file).unwrap_or("a place outside the workspace");
        return verdict(
            Decision::Ask {
                reason: format!(
                    "it writes {} ({place}), and writes there always ask",
                    file.absolute.display()
                ),
                firm: true,
            },
            format!("a write in {place} (always asks)"),
        );
    }
    let outside = call.kind == ToolKind::Edit && call.path.is_some_and(|p| p.outside);
    if outside {
        let explicit = rules
            .allow
            .iter()
            .find(|r| r.rule.pattern.is_some() && names(r));
        return match explicit {
            Some(rule) => verdict(Decision::Allow, format!("allow rule {rule}")),
            None => verdict(
                Decision::Ask {
                    reason: "the file is outside the workspace, and writes there always ask"
                        .to_owned(),
                    firm: true,
                },
                "a write outside the workspace (always asks)".to_owned(),
            )
            .lifted_by(match exact_rule(call) {
                Some(rule) => format!(
                    "allow this file explicitly with `--allow '{rule}'` (no mode lets writes \
                     outside the workspace run on its own)"
                ),
                None => "allow the file explicitly with `--allow 'TOOL(PATH)'`".to_owned(),
            }),
        };
    }
    // What a shell line reads: a rule allowing a command does not vouch for its files.
    if let Some(shell) = call.shell {
        if let Some(verdict) = sensitive_read(sensitive, &rules.allow, shell, call) {
            return verdict;
        }
        if mode != PermissionMode::Yolo
            && let Some(verdict) = unprovable_read(&rules.allow, shell)
        {
            return verdict;
        }
    }
    // 5. Allow rules.
    if let Some(shell) = call.shell {
        let covered = |command: &String| {
            allows().any(|r| r.rule.names_tool(call.tool) && r.rule.names_command(command))
        };
        // Every command allowed by a rule or harmless on its own, and at least one allowed
        // (a line of harmless commands only is the mode's to decide).
        let mut any_covered = false;
        let all_fine = shell
            .simple_commands
            .iter()
            .zip(shell.harmless.iter().chain(std::iter::repeat(&false)))
            .all(|(command, harmless)| {
                let by_rule = covered(command);
                any_covered |= by_rule;
                by_rule || *harmless
            });
        if all_fine && any_covered {
            let first = allows()
                .find(|r| {
                    shell
                        .simple_commands
                        .iter()
                        .any(|c| r.rule.names_command(c))
                })
                .map_or_else(String::new, ToString::to_string);
            return verdict(Decision::Allow, format!("allow rule {first}"));
        }
    } else if let Some(rule) = allows().find(|r| names(r)) {
        return verdict(Decision::Allow, format!("allow rule {rule}"));
    }
    // 6. Sensitive files.
    if let Some(rule) = sensitive
        .iter()
        .find(|r| r.rule.names_call(call) || names_a_file(r, call))
    {
        return verdict(
            Decision::Ask {
                reason: format!("the file may hold secrets ({})", rule.rule),
                firm: false,
            },
            format!("rein's default ask rule {}", rule.rule),
        )
        .lifted_by(format!(
            "allow it with `--allow '{}'` (or an allow rule in the config)",
            exact_rule(call).unwrap_or_else(|| rule.rule.to_string())
        ));
    }
    // 7. The mode.
    let decision = mode.decide(call);
    let because = match (&decision, call.shell) {
        (Decision::Allow, Some(_)) if mode == PermissionMode::Auto => {
            "the auto permission mode: commands run in the OS sandbox, which keeps them to the \
             workspace"
                .to_owned()
        }
        (Decision::Allow, Some(_)) if mode != PermissionMode::Yolo => {
            "a provably read-only command".to_owned()
        }
        (Decision::Allow, _) if call.kind == ToolKind::ReadOnly => "a read-only tool".to_owned(),
        (Decision::Ask { .. }, _) if call.path.is_some_and(|p| p.outside) => {
            format!("a read outside the workspace (asks in the {mode} mode; yolo lets it run)")
        }
        (_, _) => format!("the {mode} permission mode"),
    };
    let lift = match (&decision, exact_rule(call)) {
        (Decision::Ask { .. }, Some(rule)) => Some(format!(
            "{}, or allow just this with `--allow '{rule}'`",
            mode.how_to_allow(call)
        )),
        _ => None,
    };
    Verdict {
        decision,
        because,
        lift,
    }
}

fn verdict(decision: Decision, because: String) -> Verdict {
    Verdict {
        decision,
        because,
        lift: None,
    }
}

impl Verdict {
    fn lifted_by(mut self, how: String) -> Self {
        self.lift = Some(how);
        self
    }
}

/// A sensitive file a shell line reads that no allow rule names explicitly: it asks.
fn sensitive_read(
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
            Decision::Ask {
                reason: format!(
                    "{} may hold secrets ({})",
                    file.absolute.display(),
                    rule.rule
                ),
                firm: false,
            },
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
fn unprovable_read(allow: &[SourcedRule], shell: &ShellFacts) -> Option<Verdict> {
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
                Decision::Ask {
                    reason: format!(
                        "it reads {}, outside the workspace, and reads there ask",
                        file.absolute.display()
                    ),
                    firm: false,
                },
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
        Decision::Ask {
            reason: format!("{why}: it could be a file that holds secrets"),
            firm: false,
        },
        "a file rein cannot know before the command runs".to_owned(),
    ))
}

/// An allow rule that names `file` by its path (not a rule naming a command).
fn explicitly_allowed(allow: &[SourcedRule], file: &PathTarget) -> bool {
    allow.iter().any(|r| {
        matches!(r.rule.pattern, Some(Pattern::Path { .. }))
            && r.rule
                .names_path(&file.absolute, file.in_workspace.as_deref())
    })
}

/// The place inside the workspace whose files only the person changes on their own: the
/// repositories' own files (`.git`, at any depth: a nested repository's config names
/// programs git runs) and rein's project config (`.rein`).
fn protected_place(path: &PathTarget) -> Option<&'static str> {
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
fn is_device(path: &PathTarget) -> bool {
    path.absolute.starts_with("/dev")
}

/// Whether `rule` is a file rule (`read_file(**/.env)`) naming a file a shell call's
/// commands use (`cat .env`): what a rule keeps from the file tools it keeps from bash too.
fn names_a_file(rule: &SourcedRule, call: &CallView<'_>) -> bool {
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
fn exact_rule(call: &CallView<'_>) -> Option<String> {
    if let Some(path) = call.path {
        let shown = match (&path.in_workspace, path.outside) {
            (Some(inside), false) => inside.display().to_string(),
            _ => path.absolute.display().to_string(),
        };
        return Some(format!("{}({shown})", call.tool));
    }
    match call.shell?.simple_commands.as_slice() {
        [one] if !one.contains(['\'', ')']) => Some(format!("{}({one})", call.tool)),
        _ => None,
    }
}
