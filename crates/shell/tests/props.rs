//! Properties of the analysis that no table can cover: a refused command stays refused
//! wherever the line hides it, and a command's rule text does not depend on the wrappers
//! around it.

use proptest::prelude::*;
use rein_shell::{DangerKind, analyze};

use crate::analysis::places;

/// Commands that are harmless on their own.
fn harmless() -> impl Strategy<Value = &'static str> {
    proptest::sample::select(vec![
        "ls -la",
        "git status",
        "cat a.txt",
        "echo hi",
        "cargo test",
        "true",
        "npm run build",
    ])
}

/// Deletes the deny list refuses in every mode.
fn destructive() -> impl Strategy<Value = &'static str> {
    proptest::sample::select(vec![
        "rm -rf /",
        "rm -rf ~",
        "rm -rf /home/tester",
        "rm -fr /usr",
    ])
}

/// Ways a command line can hold another command.
fn wrap(shape: usize, before: &str, inner: &str) -> String {
    match shape {
        0 => format!("{before} && {inner}"),
        1 => format!("{before}; {inner}"),
        2 => format!("{before} || {inner}"),
        3 => format!("{before} | {inner}"),
        4 => format!("({before}; {inner})"),
        5 => format!("{{ {before}; {inner}; }}"),
        6 => format!("echo \"$({inner})\" && {before}"),
        7 => format!("bash -c '{before}; {inner}'"),
        8 => format!("if {before}; then {inner}; fi"),
        9 => format!("for f in a b; do {before}; {inner}; done"),
        _ => format!("sudo {inner}"),
    }
}

proptest! {
    #[test]
    fn a_refused_delete_is_refused_wherever_it_stands(
        before in harmless(),
        inner in destructive(),
        shape in 0usize..11,
    ) {
        let line = wrap(shape, before, inner);
        let analysis = analyze(&line, &places());
        let danger = analysis.danger.as_ref().map(|d| d.kind);
        prop_assert_eq!(danger, Some(DangerKind::RecursiveDelete), "{}", line);
        prop_assert!(analysis.read_only.is_err());
    }

    #[test]
    fn wrappers_do_not_change_the_rule_text(
        command in harmless(),
        wrapper in proptest::sample::select(vec!["timeout 5", "nice -n 5", "env A=1", "command", "nohup"]),
    ) {
        let plain = analyze(command, &places());
        let wrapped = analyze(&format!("{wrapper} {command}"), &places());
        let rule = |a: &rein_shell::CommandAnalysis| {
            a.simple_commands.last().and_then(|c| c.rule_text.clone())
        };
        prop_assert_eq!(rule(&plain), rule(&wrapped));
        prop_assert!(wrapped.danger.is_none());
    }

    #[test]
    fn the_same_line_gets_the_same_analysis(command in "[a-z0-9 $'\"(){};|&<>*~/=.-]{0,80}") {
        prop_assert_eq!(analyze(&command, &places()), analyze(&command, &places()));
    }
}

/// An analysis is handed on only for the line and places it was made of.
#[test]
fn an_analysis_answers_only_for_its_own_line_and_places() {
    let analyzed = rein_shell::Analyzed::new("rm -rf build", places());
    assert_eq!(
        analyzed.of("rm -rf build", &places()),
        Some(&analyze("rm -rf build", &places()))
    );
    assert_eq!(analyzed.of("rm -rf /", &places()), None);
    let mut elsewhere = places();
    elsewhere.cwd = Some("/".into());
    assert_eq!(analyzed.of("rm -rf build", &elsewhere), None);
}
