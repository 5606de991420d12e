use serde_json::json;

use super::*;
use strum::VariantArray as _;

fn ran(ended: Ended, stdout: &str, stderr: &str) -> Ran {
    Ran {
        command: "./hook.sh".to_owned(),
        ended,
        stdout: stdout.to_owned(),
        stderr: stderr.to_owned(),
    }
}

fn exit0(stdout: &str) -> Ran {
    ran(Ended::Exited(0), stdout, "")
}

/// What `ran` means for `event`, and the warnings it gave.
fn said(event: HookEvent, ran: &Ran) -> (Said, Vec<String>) {
    let mut warnings = Vec::new();
    let said = interpret(event, ran, &mut warnings);
    (said, warnings)
}

fn allow(reason: Option<&str>) -> HookDecision {
    HookDecision::Allow {
        reason: reason.map(str::to_owned),
    }
}

fn deny(reason: &str) -> HookDecision {
    HookDecision::Deny {
        reason: reason.to_owned(),
    }
}

fn ask(reason: &str) -> HookDecision {
    HookDecision::Ask {
        reason: reason.to_owned(),
    }
}

#[test]
fn exit_0_with_nothing_says_nothing() {
    for &event in HookEvent::VARIANTS {
        assert_eq!(said(event, &exit0("")), (Said::default(), vec![]));
        assert_eq!(said(event, &exit0(" \n")), (Said::default(), vec![]));
    }
}

#[test]
fn plain_stdout_is_context_only_where_claude_code_makes_it_one() {
    let (prompt, _) = said(HookEvent::UserPromptSubmit, &exit0("today is Tuesday\n"));
    assert_eq!(prompt.context.as_deref(), Some("today is Tuesday"));
    let (start, _) = said(HookEvent::SessionStart, &exit0("branch: main"));
    assert_eq!(start.context.as_deref(), Some("branch: main"));
    for event in [
        HookEvent::Stop,
        HookEvent::SessionEnd,
        HookEvent::PreCompact,
    ] {
        assert_eq!(said(event, &exit0("logged")), (Said::default(), vec![]));
    }
}

#[test]
fn permission_decisions_in_hook_specific_output() {
    let out = |decision: &str| {
        json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": "policy 7",
        }})
        .to_string()
    };
    for (decision, expected) in [
        ("allow", allow(Some("policy 7"))),
        ("ask", ask("policy 7")),
        ("deny", deny("policy 7")),
    ] {
        let (said, warnings) = said(HookEvent::PreToolUse, &exit0(&out(decision)));
        assert_eq!(said.decision, Some(expected));
        assert!(warnings.is_empty(), "{warnings:?}");
    }
    // Without a reason, a refusal still says who refused.
    let (said, _) = said(
        HookEvent::PreToolUse,
        &exit0(r#"{"hookSpecificOutput":{"permissionDecision":"deny"}}"#),
    );
    assert_eq!(
        said.decision,
        Some(deny("the PreToolUse hook `./hook.sh` gave no reason"))
    );
}

#[test]
fn the_older_top_level_decision_still_works_and_the_newer_wins() {
    let (approve, _) = said(HookEvent::PreToolUse, &exit0(r#"{"decision":"approve"}"#));
    assert_eq!(approve.decision, Some(allow(None)));
    let (block, _) = said(
        HookEvent::PreToolUse,
        &exit0(r#"{"decision":"block","reason":"no rm"}"#),
    );
    assert_eq!(block.decision, Some(deny("no rm")));
    let (both, _) = said(
        HookEvent::PreToolUse,
        &exit0(
            r#"{"decision":"approve","hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"check"}}"#,
        ),
    );
    assert_eq!(both.decision, Some(ask("check")));
}

#[test]
fn updated_input_and_context_from_either_place() {
    let (nested, _) = said(
        HookEvent::PreToolUse,
        &exit0(
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"ls -a"},"additionalContext":"ran ls instead"}}"#,
        ),
    );
    assert_eq!(nested.updated_input, Some(json!({"command": "ls -a"})));
    assert_eq!(nested.context.as_deref(), Some("ran ls instead"));
    let (top, _) = said(
        HookEvent::PreToolUse,
        &exit0(r#"{"updatedInput":{"command":"pwd"}}"#),
    );
    assert_eq!(top.updated_input, Some(json!({"command": "pwd"})));
    assert_eq!(top.decision, None);
    let (bad, warnings) = said(HookEvent::PreToolUse, &exit0(r#"{"updatedInput":"pwd"}"#));
    assert_eq!(bad.updated_input, None);
    assert!(
        warnings[0].contains("`updatedInput` is not an object"),
        "{warnings:?}"
    );
    // Elsewhere, only PreToolUse replaces arguments.
    let (post, _) = said(
        HookEvent::PostToolUse,
        &exit0(r#"{"updatedInput":{"a":1},"hookSpecificOutput":{"additionalContext":"lint ok"}}"#),
    );
    assert_eq!(post.updated_input, None);
    assert_eq!(post.context.as_deref(), Some("lint ok"));
}

#[test]
fn exit_2_blocks_with_stderr_where_blocking_means_something() {
    for event in [
        HookEvent::PostToolUse,
        HookEvent::UserPromptSubmit,
        HookEvent::Stop,
        HookEvent::SubagentStop,
        HookEvent::PreToolUse,
    ] {
        let (said, warnings) = said(event, &ran(Ended::Exited(2), "ignored", "not now\n"));
        assert_eq!(said.block.as_deref(), Some("not now"), "{event}");
        assert!(warnings.is_empty());
    }
    for event in [
        HookEvent::SessionStart,
        HookEvent::SessionEnd,
        HookEvent::PreCompact,
    ] {
        let (said, warnings) = said(event, &ran(Ended::Exited(2), "", "nope"));
        assert_eq!(said, Said::default());
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].ends_with("exited 2: nope"), "{warnings:?}");
    }
    let (silent, _) = said(HookEvent::Stop, &ran(Ended::Exited(2), "", ""));
    assert!(silent.block.unwrap().contains("wrote no reason"));
}

#[test]
fn json_is_read_only_after_exit_0() {
    let (said, _) = said(
        HookEvent::PreToolUse,
        &ran(Ended::Exited(2), r#"{"decision":"approve"}"#, "blocked"),
    );
    assert_eq!(said.decision, None);
    assert_eq!(said.block.as_deref(), Some("blocked"));
}

#[test]
fn other_endings_are_warnings_and_say_nothing() {
    let cases = [
        (Ended::Exited(1), "failed (exit status 1): oops"),
        (Ended::Signalled, "was ended by a signal: oops"),
        (
            Ended::TimedOut(Duration::from_secs(3)),
            "did not finish within 3 s and was stopped",
        ),
        (
            Ended::NotStarted("no bash".into()),
            "could not be started: no bash",
        ),
    ];
    for (ended, expected) in cases {
        let (said, warnings) = said(
            HookEvent::PreToolUse,
            &ran(ended, r#"{"decision":"block"}"#, "oops"),
        );
        assert_eq!(said, Said::default());
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].starts_with("the PreToolUse hook `./hook.sh` "),
            "{warnings:?}"
        );
        assert!(warnings[0].contains(expected), "{warnings:?}");
    }
}

#[test]
fn bad_json_and_bad_fields_are_warnings() {
    let (bad, warnings) = said(HookEvent::PreToolUse, &exit0("{not json"));
    assert_eq!(bad, Said::default());
    assert!(warnings[0].contains("printed invalid JSON"), "{warnings:?}");
    let (_, warnings) = said(
        HookEvent::PreToolUse,
        &exit0(r#"{"hookSpecificOutput":{"permissionDecision":"maybe"}}"#),
    );
    assert!(
        warnings[0].contains("unknown `permissionDecision`"),
        "{warnings:?}"
    );
    let (other, warnings) = said(
        HookEvent::PreToolUse,
        &exit0(
            r#"{"hookSpecificOutput":{"hookEventName":"PostToolUse","permissionDecision":"deny"}}"#,
        ),
    );
    assert_eq!(other.decision, None, "output meant for another event");
    assert!(warnings[0].contains("is for PostToolUse"), "{warnings:?}");
    let (_, warnings) = said(HookEvent::Stop, &exit0(r#"{"systemMessage":"tests pass"}"#));
    assert_eq!(warnings, ["the Stop hook `./hook.sh`: tests pass"]);
}

#[test]
fn continue_false_halts_with_its_stop_reason() {
    let (said, _) = said(
        HookEvent::UserPromptSubmit,
        &exit0(r#"{"continue":false,"stopReason":"out of budget"}"#),
    );
    assert_eq!(said.halt.as_deref(), Some("out of budget"));
    assert_eq!(
        user_prompt_submit(vec![said]),
        PromptCheck::Block {
            reason: "out of budget".into()
        }
    );
}

#[test]
fn a_deny_from_any_hook_wins_over_ask_over_allow() {
    let with = |decision: HookDecision| Said {
        decision: Some(decision),
        ..Said::default()
    };
    let mut warnings = Vec::new();
    let merged = pre_tool_use(
        vec![
            with(allow(None)),
            with(ask("check")),
            with(deny("no")),
            with(allow(Some("fine"))),
        ],
        &mut warnings,
    );
    assert_eq!(merged.decision, Some(deny("no")));
    let merged = pre_tool_use(vec![with(allow(None)), with(ask("check"))], &mut warnings);
    assert_eq!(merged.decision, Some(ask("check")));
    let merged = pre_tool_use(vec![with(deny("a")), with(deny("b"))], &mut warnings);
    assert_eq!(merged.decision, Some(deny("a; b")), "every reason is told");
    // Exit 2 is a deny.
    let blocked = Said {
        block: Some("exit 2".into()),
        ..Said::default()
    };
    let merged = pre_tool_use(vec![with(allow(None)), blocked], &mut warnings);
    assert_eq!(merged.decision, Some(deny("exit 2")));
    assert!(warnings.is_empty());
}

#[test]
fn contexts_are_joined_and_the_first_replacement_is_used() {
    let hook = |context: &str, input: Option<Value>| Said {
        context: Some(context.to_owned()),
        updated_input: input,
        ..Said::default()
    };
    let merged = pre_tool_use(
        vec![
            hook("one", None),
            hook("two", Some(json!({"command": "a"}))),
            hook("three", Some(json!({"command": "b"}))),
        ],
        &mut Vec::new(),
    );
    assert_eq!(merged.updated_input, Some(json!({"command": "a"})));
    assert_eq!(
        merged.context.as_deref(),
        Some("PreToolUse hook context:\none\ntwo\nthree")
    );
    let post = post_tool_use(vec![
        Said {
            block: Some("lint failed".into()),
            ..Said::default()
        },
        hook("coverage 80%", None),
    ]);
    assert_eq!(
        post.context.as_deref(),
        Some("PostToolUse hook feedback:\nlint failed\n\nPostToolUse hook context:\ncoverage 80%")
    );
    assert_eq!(post_tool_use(vec![Said::default()]).context, None);
}

#[test]
fn stop_hooks_continue_unless_one_halts() {
    let block = |reason: &str| Said {
        block: Some(reason.to_owned()),
        ..Said::default()
    };
    assert_eq!(stop(vec![Said::default()]), StopCheck::End);
    assert_eq!(
        stop(vec![block("run the tests"), Said::default()]),
        StopCheck::Continue {
            reason: "Stop hook feedback:\nrun the tests".into()
        }
    );
    let halt = Said {
        halt: Some("enough".into()),
        ..Said::default()
    };
    assert_eq!(stop(vec![block("more"), halt]), StopCheck::End);
}

#[test]
fn prompt_blocks_join_and_contexts_go_with_the_prompt() {
    let context = |text: &str| Said {
        context: Some(text.to_owned()),
        ..Said::default()
    };
    assert_eq!(
        user_prompt_submit(vec![context("a"), context("b")]),
        PromptCheck::Send {
            context: Some("UserPromptSubmit hook context:\na\nb".into())
        }
    );
    let block = Said {
        block: Some("no secrets in prompts".into()),
        ..Said::default()
    };
    assert_eq!(
        user_prompt_submit(vec![context("a"), block]),
        PromptCheck::Block {
            reason: "no secrets in prompts".into()
        }
    );
    assert_eq!(
        session_start(vec![context("on main")]).as_deref(),
        Some("SessionStart hook context:\non main")
    );
}
