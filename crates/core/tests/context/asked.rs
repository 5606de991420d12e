//! Compaction when asked: by the person (`/compact [focus]`, `Agent::compact`) or by the
//! model (the `compact` tool); and what `/context` reports.

use rein_core::agent::{AgentEvent, CompactOutcome, Events, TurnStop};
use rein_core::context::{CompactionLayer, SummaryAuthor, WindowSource};
use tokio_util::sync::CancellationToken;

use super::model::{Behaviour, SmallModel, content_text, last_user_text, task_prompt};
use super::project::{Project, TODO_TEXT};

#[tokio::test]
async fn the_person_compacts_with_a_focus_and_the_next_request_starts_from_the_summary() {
    let model = SmallModel::start(Behaviour::window(100_000));
    let project = Project::new(2, "");
    let (mut agent, id) = project.agent(&model);
    let events = Events::new(|_| {});
    let cancel = CancellationToken::new();
    assert_eq!(
        agent.compact(None, &events, &cancel).await,
        CompactOutcome::NothingToCompact
    );
    project.turn(&mut agent, &task_prompt(1)).await;
    let before = agent.history().len();
    let outcome = agent.compact(Some("the parser"), &events, &cancel).await;
    let CompactOutcome::Compacted(info) = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(info.layer, CompactionLayer::Manual);
    assert_eq!(info.focus.as_deref(), Some("the parser"));
    assert_eq!(info.summary_by, Some(SummaryAuthor::Model));
    // At least the last 8, moved back so no result is parted from its call.
    assert!((8..=9).contains(&info.kept_messages), "{info:?}");
    assert_eq!(agent.history().len(), info.kept_messages + 1);
    assert_eq!(info.summarised_messages, before - info.kept_messages);
    assert_ne!(agent.history()[1].role, rein_llm::Role::Tool);
    let asked = model.seen().into_iter().rfind(|s| s.summary).unwrap();
    assert!(last_user_text(&asked.body).contains("bears on: the parser"));

    project.turn(&mut agent, &task_prompt(2)).await;
    let next = model.work_requests().pop().unwrap();
    let first = content_text(&next.body["messages"][1]);
    assert!(first.starts_with("[rein: context summary]"), "{first}");
    assert!(first.contains(&task_prompt(1)) && first.contains(TODO_TEXT));
    let store = project.store();
    assert_eq!(store.load(&id).unwrap().messages, agent.history());
}

#[tokio::test]
async fn the_model_compacts_with_its_tool_before_its_next_request() {
    // A window the first task fills to more than a fifth.
    let model = SmallModel::start(Behaviour::window(16_384));
    let project = Project::new(1, "");
    let (mut agent, _) = project.agent(&model);
    project.turn(&mut agent, &task_prompt(1)).await;
    let outcome = project
        .turn(&mut agent, "Compact: the renamed helper")
        .await;
    assert_eq!(outcome.stop(), TurnStop::EndTurn);
    assert_eq!(outcome.text, "Compacted, as you asked.");
    let compactions = project.compactions();
    let info = compactions.last().unwrap();
    assert_eq!(info.layer, CompactionLayer::Tool);
    assert_eq!(info.focus.as_deref(), Some("the renamed helper"));
    // The summary came between the call's result and the model's next request, which holds
    // both.
    let seen = model.seen();
    let summary = seen.iter().rposition(|s| s.summary).unwrap();
    let after = &seen[summary + 1].body;
    assert_eq!(after["messages"].as_array().unwrap().len(), 1 + 1 + 8);
    let last = after["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["tool_call_id"], "compact-1");
    assert!(
        content_text(last).contains("will be compacted before your next request"),
        "{last}"
    );
}

#[tokio::test]
async fn the_models_compact_is_refused_when_it_would_buy_nothing_and_says_why() {
    let model = SmallModel::start(Behaviour::window(100_000));
    let project = Project::new(1, "");
    let (mut agent, _) = project.agent(&model);
    project.turn(&mut agent, "hello").await;
    let outcome = project.turn(&mut agent, "Compact: everything").await;
    assert_eq!(outcome.stop(), TurnStop::EndTurn);
    assert!(project.compactions().is_empty());
    assert!(!model.seen().iter().any(|s| s.summary));
    let result = project
        .events()
        .into_iter()
        .find_map(|e| match e {
            AgentEvent::ToolResult {
                id,
                content,
                is_error,
                ..
            } if id == "compact-1" => Some((content, is_error)),
            _ => None,
        })
        .unwrap();
    assert!(result.1, "{result:?}");
    assert!(
        result
            .0
            .starts_with("Not compacted: the conversation takes")
            && result.0.contains("below 20%"),
        "{result:?}"
    );
}

#[tokio::test]
async fn the_context_report_splits_the_use_and_says_when_the_next_compaction_comes() {
    let model = SmallModel::start(Behaviour::window(8192));
    let project = Project::new(1, "");
    let (mut agent, _) = project.agent(&model);
    let fresh = agent.context_report().await;
    assert_eq!(fresh.window.tokens, 8192);
    assert_eq!(
        fresh.window.source,
        WindowSource::Server {
            said: "llama.cpp /props n_ctx".into()
        }
    );
    assert!(!fresh.measured);
    project.turn(&mut agent, "hello").await;
    let report = agent.context_report().await;
    assert!(report.measured);
    assert_eq!(report.answer_reserve, 1638);
    assert_eq!(report.usable, 8192 - 1638);
    // The provider's count of the last request, plus the estimate of its answer.
    let counted = model.seen().last().unwrap().tokens as u64;
    assert!(
        report.used > counted && report.used < counted + 20,
        "{report:?}"
    );
    assert_eq!(
        report.system_prompt + report.tools + report.messages + report.tool_results,
        report.used
    );
    assert!(report.tools > report.system_prompt, "{report:?}");
    let next = report.next.unwrap();
    assert_eq!(next.layer, CompactionLayer::Summary);
    assert_eq!(next.at_tokens, (report.usable as f64 * 0.8) as u64);
    assert_eq!(report.prune_at, report.usable / 2);
    let shown = report.to_string();
    assert!(
        shown.contains("Context window: 8192 tokens (from the server: llama.cpp /props n_ctx)"),
        "{shown}"
    );
    assert!(
        shown.contains("Next compaction: older turns summarised at"),
        "{shown}"
    );
}

/// Hooks that count the PreCompact calls.
#[derive(Default)]
struct CountCompactions(std::sync::atomic::AtomicUsize);

#[rein_tools::async_trait]
impl rein_core::hooks::Hooks for CountCompactions {
    async fn pre_compact(&self, _warnings: &mut rein_core::hooks::HookWarnings) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

#[tokio::test]
async fn pre_compact_hooks_run_before_each_summary_not_before_pruning() {
    let model = SmallModel::start(Behaviour::window(8192));
    let project = Project::new(2, "");
    let hooks = std::sync::Arc::new(CountCompactions::default());
    let mut agent = project
        .builder(&model)
        .hooks(hooks.clone())
        .build()
        .unwrap();
    for task in 1..=2 {
        project.turn(&mut agent, &task_prompt(task)).await;
    }
    let summaries = project
        .compactions()
        .iter()
        .filter(|c| c.layer != CompactionLayer::Prune)
        .count();
    assert!(summaries > 0);
    assert!(project.compactions().len() > summaries, "pruning too");
    assert_eq!(
        hooks.0.load(std::sync::atomic::Ordering::Relaxed),
        summaries
    );
}
