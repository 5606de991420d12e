//! The steps of [`judge`], one method each, in the order the engine's documentation gives:
//! the first step that decides the call decides it.

use rein_tools::ToolKind;

use super::engine::{
    RuleSet, SourcedRule, Verdict, exact_rule, explicitly_allowed, is_device, names_a_file,
    protected_place, sensitive_read, unprovable_read, verdict,
};
use super::{CallView, Decision, Pattern, PermissionMode, ShellFacts};

/// The rules a call is judged by besides the configured ones: the sensitive-file defaults,
/// the session's "yes for the session" rules, and ask rules a command set for its own run.
pub(super) struct Extra<'a> {
    pub(super) sensitive: &'a [SourcedRule],
    pub(super) session: &'a [SourcedRule],
    pub(super) asked: &'a [SourcedRule],
}

/// Decides `call` under `mode`, with `rules` and the `extra` ones.
pub(super) fn judge(
    mode: PermissionMode,
    rules: &RuleSet,
    extra: &Extra<'_>,
    call: &CallView<'_>,
) -> Verdict {
    let judging = Judging {
        mode,
        rules,
        sensitive: extra.sensitive,
        session: extra.session,
        asked: extra.asked,
        call,
    };
    judging
        .hard_deny_list()
        .or_else(|| judging.deny_rules())
        .or_else(|| judging.ask_rules())
        .or_else(|| judging.unknowns_under_rules())
        .or_else(|| judging.the_exact_line_allowed())
        .or_else(|| judging.protected_writes())
        .or_else(|| judging.what_the_line_reads())
        .or_else(|| judging.allow_rules())
        .or_else(|| judging.sensitive_files())
        .unwrap_or_else(|| judging.the_mode())
}

/// One call being judged, and what it is judged by.
struct Judging<'a, 'c> {
    mode: PermissionMode,
    rules: &'a RuleSet,
    sensitive: &'a [SourcedRule],
    session: &'a [SourcedRule],
    asked: &'a [SourcedRule],
    call: &'a CallView<'c>,
}

impl Judging<'_, '_> {
    /// Whether `rule` names the call, or a file the call names.
    fn names(&self, rule: &SourcedRule) -> bool {
        rule.rule.names_call(self.call) || names_a_file(rule, self.call)
    }

    /// The configured allow rules, then the session's.
    fn allows(&self) -> impl Iterator<Item = &SourcedRule> {
        self.rules.allow.iter().chain(self.session)
    }

    /// 1. The hard deny list.
    fn hard_deny_list(&self) -> Option<Verdict> {
        let danger = self.call.shell.and_then(|s| s.danger.as_deref())?;
        Some(verdict(
            Decision::deny(format!(
                "the hard deny list refuses it: {danger}. rein never runs commands that could \
                     destroy the system, the person's files or the workspace, in any mode; use a \
                     narrower command, or ask the person to run it themselves"
            )),
            format!("the hard deny list: {danger}"),
        ))
    }

    /// 2. Deny rules.
    fn deny_rules(&self) -> Option<Verdict> {
        let rule = self.rules.deny.iter().find(|r| self.names(r))?;
        Some(verdict(
            Decision::deny(format!("a deny rule names it: {}", rule.rule)),
            format!("deny rule {rule}"),
        ))
    }

    /// 3. Ask rules, in every mode: the configured ones, then those a running command set
    ///    (`/init`'s for AGENTS.md).
    fn ask_rules(&self) -> Option<Verdict> {
        let rule = (self.rules.ask.iter().chain(self.asked)).find(|r| self.names(r))?;
        Some(
            verdict(
                Decision::firm_ask(format!("an ask rule names it: {}", rule.rule)),
                format!("ask rule {rule}"),
            )
            .lifted_by(format!(
                "take the ask rule {} out of {} (a rule the person wrote)",
                rule.rule, rule.origin
            )),
        )
    }

    /// 3b. Rules about commands cannot vouch for a command known only when it runs
    /// (`$CMD push`), nor a rule naming a program for that program with arguments known only
    /// when it runs (`npm $X` under `npm publish:*`); rules about files cannot vouch for a
    /// command line whose files are unknown.
    fn unknowns_under_rules(&self) -> Option<Verdict> {
        let shell = self.call.shell?;
        let deny_or_ask = || self.rules.deny.iter().chain(&self.rules.ask);
        if let Some(rule) =
            deny_or_ask().find(|r| r.rule.names_tool(self.call.tool) && dynamic_under(r, shell))
        {
            return Some(verdict(
                Decision::firm_ask(format!(
                    "a command or argument in it is known only when it runs, and the rule {} \
                         names commands",
                    rule.rule
                )),
                format!("an unknown command under the rule {rule}"),
            ));
        }
        let why = shell.unknown_files.as_deref()?;
        let rule = deny_or_ask().find(|r| matches!(r.rule.pattern, Some(Pattern::Path { .. })))?;
        Some(verdict(
            Decision::firm_ask(format!("{why}, and the rule {} protects files", rule.rule)),
            format!("an unknown file under the rule {rule}"),
        ))
    }

    /// 3c. An exact rule for the whole line (what "yes for the session" records) covers it,
    /// its files included: the person allowed this very line. A prefix rule never does
    /// (`npm test:*` must not cover `npm test; rm -rf .`).
    fn the_exact_line_allowed(&self) -> Option<Verdict> {
        self.call.shell?;
        let line = self
            .call
            .arguments
            .get("command")
            .and_then(serde_json::Value::as_str);
        let names_line = |r: &&SourcedRule| {
            r.rule.names_tool(self.call.tool)
                && matches!(r.rule.pattern, Some(Pattern::Command { prefix: false, .. }))
                && line.is_some_and(|line| r.rule.names_command(line))
        };
        let rule = self.allows().find(names_line)?;
        Some(verdict(Decision::Allow, format!("allow rule {rule}")))
    }

    /// 4. Writes outside the workspace, and into the repository's or rein's own files.
    fn protected_writes(&self) -> Option<Verdict> {
        let call = self.call;
        let explicit = || {
            self.rules
                .allow
                .iter()
                .find(|r| r.rule.pattern.is_some() && self.names(r))
        };
        if call.kind == ToolKind::Edit
            && let Some(path) = call.path
            && !path.outside
            && let Some(place) = protected_place(path)
        {
            return Some(match explicit() {
                Some(rule) => verdict(Decision::Allow, format!("allow rule {rule}")),
                None => verdict(
                    Decision::firm_ask(format!(
                        "the file is in {place}, and edits there always ask"
                    )),
                    format!("an edit in {place} (always asks)"),
                )
                .lifted_by(format!(
                    "allow this file explicitly with `--allow '{}'`",
                    exact_rule(call).unwrap_or_default()
                )),
            });
        }
        if let Some(shell) = call.shell
            && self.mode != PermissionMode::Yolo
            && let Some(file) = shell.files.iter().find(|f| {
                f.write
                    && !is_device(f)
                    && (f.outside || protected_place(f).is_some())
                    && !explicitly_allowed(&self.rules.allow, f)
            })
        {
            let place = protected_place(file).unwrap_or("a place outside the workspace");
            return Some(verdict(
                Decision::firm_ask(format!(
                    "it writes {} ({place}), and writes there always ask",
                    file.absolute.display()
                )),
                format!("a write in {place} (always asks)"),
            ));
        }
        if !(call.kind == ToolKind::Edit && call.path.is_some_and(|p| p.outside)) {
            return None;
        }
        Some(match explicit() {
            Some(rule) => verdict(Decision::Allow, format!("allow rule {rule}")),
            None => verdict(
                Decision::firm_ask(
                    "the file is outside the workspace, and writes there always ask",
                ),
                "a write outside the workspace (always asks)".to_owned(),
            )
            .lifted_by(match exact_rule(call) {
                Some(rule) => format!(
                    "allow this file explicitly with `--allow '{rule}'` (no mode lets writes \
                     outside the workspace run on its own)"
                ),
                None => "allow the file explicitly with `--allow 'TOOL(PATH)'`".to_owned(),
            }),
        })
    }

    /// 4b. What a shell line reads: a rule allowing a command does not vouch for its files.
    fn what_the_line_reads(&self) -> Option<Verdict> {
        let shell = self.call.shell?;
        sensitive_read(self.sensitive, &self.rules.allow, shell, self.call).or_else(|| {
            (self.mode != PermissionMode::Yolo)
                .then(|| unprovable_read(&self.rules.allow, shell))
                .flatten()
        })
    }

    /// 5. Allow rules.
    fn allow_rules(&self) -> Option<Verdict> {
        let Some(shell) = self.call.shell else {
            let rule = self.allows().find(|r| self.names(r))?;
            return Some(verdict(Decision::Allow, format!("allow rule {rule}")));
        };
        let covered = |command: &String| {
            self.allows()
                .any(|r| r.rule.names_tool(self.call.tool) && r.rule.names_command(command))
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
        if !(all_fine && any_covered) {
            return None;
        }
        let first = self
            .allows()
            .find(|r| {
                shell
                    .simple_commands
                    .iter()
                    .any(|c| r.rule.names_command(c))
            })
            .map_or_else(String::new, ToString::to_string);
        Some(verdict(Decision::Allow, format!("allow rule {first}")))
    }

    /// 6. Sensitive files.
    fn sensitive_files(&self) -> Option<Verdict> {
        let rule = self
            .sensitive
            .iter()
            .find(|r| r.rule.names_call(self.call) || names_a_file(r, self.call))?;
        Some(
            verdict(
                Decision::ask(format!("the file may hold secrets ({})", rule.rule)),
                format!("rein's default ask rule {}", rule.rule),
            )
            .lifted_by(format!(
                "allow it with `--allow '{}'` (or an allow rule in the config)",
                exact_rule(self.call).unwrap_or_else(|| rule.rule.to_string())
            )),
        )
    }

    /// 7. The mode.
    fn the_mode(&self) -> Verdict {
        let (mode, call) = (self.mode, self.call);
        let decision = mode.decide(call);
        let because = match (&decision, call.shell) {
            (Decision::Allow, Some(_)) if mode == PermissionMode::Auto => {
                "the auto permission mode: commands run in the OS sandbox, which keeps them to \
                 the workspace"
                    .to_owned()
            }
            (Decision::Allow, Some(_)) if mode != PermissionMode::Yolo => {
                "a provably read-only command".to_owned()
            }
            (Decision::Allow, _) if call.kind == ToolKind::ReadOnly => {
                "a read-only tool".to_owned()
            }
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
}

/// Whether `rule` names commands whose program `shell` runs with something known only when
/// it runs: the program itself (`$CMD push`), or its arguments (`npm $X`).
fn dynamic_under(rule: &SourcedRule, shell: &ShellFacts) -> bool {
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
}
