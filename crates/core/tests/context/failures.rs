//! When things go wrong: the summariser fails, the provider refuses a request as too long,
//! the window is unknown, or rein may not summarise on its own.

use rein_core::agent::{TurnError, TurnStop};
use rein_core::context::{CompactionLayer, SummaryAuthor};
use rein_llm::LlmError;

use super::model::{Behaviour, SmallModel, all_text, task_prompt};
use super::project::Project;

#[tokio::test]
async fn a_failing_summariser_still_compacts_and_keeps_the_requests() {
    let model = SmallModel::start(Behaviour {
        fail_summaries: true,
        ..Behaviour::window(8192)
    });
    let project = Project::new(3, "");
    let (mut agent, _) = project.agent(&model);
    for task in 1..=3 {
        let outcome = project.turn(&mut agent, &task_prompt(task)).await;
        assert_eq!(outcome.stop(), TurnStop::EndTurn, "{outcome:?}");
    }
    let summaries: Vec<_> = project
        .compactions()
        .into_iter()
        .filter(|c| c.layer != CompactionLayer::Prune)
        .collect();
    assert!(!summaries.is_empty());
    for info in &summaries {
        assert_eq!(info.summary_by, Some(SummaryAuthor::Rein));
        assert!(
            info.summary_error
                .as_deref()
                .is_some_and(|e| e.contains("summaries are broken today")),
            "{info:?}"
        );
        assert!(info.tokens_after < info.tokens_before);
    }
    let warnings = project.warnings();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("rein wrote the summary itself")),
        "{warnings:?}"
    );
    // rein's own summary quotes the requests too, and the request after it fits.
    let last = model.work_requests().pop().unwrap();
    let text = all_text(&last.body);
    for task in 1..=3 {
        assert!(text.contains(&task_prompt(task)), "task {task}");
    }
    assert!(text.contains("(rein wrote this summary itself"), "{text}");
    assert!(!model.seen().iter().any(|s| s.refused));
}

#[tokio::test]
async fn a_refused_request_is_compacted_and_sent_again_and_the_task_finishes() {
    // rein is told the window is 100000 tokens; the model's is 8192 and it says so only by
    // refusing.
    let model = SmallModel::start(Behaviour {
        says_window: None,
        ..Behaviour::window(8192)
    });
    let project = Project::new(3, "context_window = 100000\n");
    let (mut agent, _) = project.agent(&model);
    for task in 1..=3 {
        let outcome = project.turn(&mut agent, &task_prompt(task)).await;
        assert_eq!(outcome.stop(), TurnStop::EndTurn, "{outcome:?}");
    }
    let seen = model.seen();
    let refused = seen.iter().filter(|s| s.refused).count();
    assert_eq!(refused, 1, "once refused, rein knows the window");
    let layers: Vec<CompactionLayer> = project.compactions().iter().map(|c| c.layer).collect();
    assert_eq!(
        layers.first(),
        Some(&CompactionLayer::Reactive),
        "{layers:?}"
    );
    assert!(
        layers[1..]
            .iter()
            .any(|l| matches!(l, CompactionLayer::Summary | CompactionLayer::Prune)),
        "later compactions come before a refusal: {layers:?}"
    );
    let report = agent.context_report().await;
    assert_eq!(report.window.tokens, 8192, "{report}");
    assert!(project.warnings().is_empty(), "{:?}", project.warnings());
}

#[tokio::test]
async fn a_request_too_long_even_compacted_gets_at_most_two_more_tries_then_the_error() {
    // The person pastes more than the whole window holds.
    let model = SmallModel::start(Behaviour {
        says_window: None,
        ..Behaviour::window(3000)
    });
    let project = Project::new(1, "");
    let (mut agent, _) = project.agent(&model);
    for _ in 0..5 {
        let outcome = project.turn(&mut agent, "hello").await;
        assert_eq!(outcome.stop(), TurnStop::EndTurn);
    }
    let before = model.seen().len();
    let pasted = format!(
        "Task 1: look at this log\n{}",
        "error line 42 failed\n".repeat(400)
    );
    let outcome = project.turn(&mut agent, &pasted).await;
    assert_eq!(outcome.stop(), TurnStop::Error);
    assert!(
        matches!(
            outcome.error(),
            Some(TurnError::Model(LlmError::ContextTooLong(_)))
        ),
        "{outcome:?}"
    );
    let work = model.seen()[before..].iter().filter(|s| !s.summary).count();
    assert!(
        (2..=3).contains(&work),
        "the request, and at most twice again: {work}"
    );
    let reactive = project
        .compactions()
        .iter()
        .filter(|c| c.layer == CompactionLayer::Reactive)
        .count();
    assert!((1..=2).contains(&reactive), "{reactive}");
    // Nothing is lost: the request is still there for the person to shorten and resend.
    let last = agent.history().last().unwrap();
    assert!(matches!(&last.parts[0], rein_llm::Part::Text { text } if text == &pasted));
}

#[tokio::test]
async fn auto_compact_off_never_summarises_on_its_own_but_reacts_to_a_refusal() {
    let model = SmallModel::start(Behaviour::window(8192));
    let project = Project::new(4, "auto_compact = false\n");
    let (mut agent, _) = project.agent(&model);
    for task in 1..=4 {
        let outcome = project.turn(&mut agent, &task_prompt(task)).await;
        assert_eq!(outcome.stop(), TurnStop::EndTurn, "{outcome:?}");
    }
    let seen = model.seen();
    let first_refusal = seen
        .iter()
        .position(|s| s.refused)
        .expect("without summaries the context outgrows the window");
    assert!(
        !seen[..first_refusal].iter().any(|s| s.summary),
        "a summary before any refusal"
    );
    let layers: Vec<CompactionLayer> = project.compactions().iter().map(|c| c.layer).collect();
    assert!(layers.contains(&CompactionLayer::Reactive), "{layers:?}");
    assert!(
        !layers
            .iter()
            .any(|l| matches!(l, CompactionLayer::Summary | CompactionLayer::Emergency)),
        "{layers:?}"
    );
    let report = agent.context_report().await;
    assert_eq!(report.next, None);
}

#[tokio::test]
async fn an_unknown_window_is_assumed_small_and_said_once() {
    let model = SmallModel::start(Behaviour {
        says_window: None,
        ..Behaviour::window(100_000)
    });
    let mut project = Project::new(1, "");
    project.model = "my-local-model".into();
    let (mut agent, _) = project.agent(&model);
    project.turn(&mut agent, "hello").await;
    project.turn(&mut agent, "hello again").await;
    let warnings = project.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("my-local-model") && warnings[0].contains("32768"),
        "{warnings:?}"
    );
    let report = agent.context_report().await;
    assert_eq!(report.window.tokens, 32768);
}
