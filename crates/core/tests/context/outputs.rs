//! Big command outputs in a small window: a request never outgrows the window, a short
//! conversation with one huge result is still rescued when the provider refuses it, and a
//! long one-turn task survives any number of refusals, as long as each is cured.

use rein_core::agent::{AgentEvent, TurnStop};
use rein_core::context::CompactionLayer;
use rein_tools::context::DEFAULT_OUTPUT_BUDGET_CHARS;

use super::model::{
    Behaviour, OUTPUTS_DONE, Play, SmallModel, all_text, calls_answered, task_prompt, write_outputs,
};
use super::project::Project;

/// Every request the model saw fitted its window with the answer's room, and kept every tool
/// call with its result.
fn assert_every_request_fits(model: &SmallModel, window: usize) {
    for request in model.seen() {
        let answer = request.body["max_tokens"].as_u64().unwrap_or(0) as usize;
        assert!(
            !request.refused && request.tokens + answer <= window,
            "a request of {} tokens and {answer} for the answer, in a window of {window}",
            request.tokens
        );
        calls_answered(&request.body).unwrap();
    }
}

#[tokio::test]
async fn fourteen_outputs_of_6_kb_in_an_8000_token_window_never_overflow_it() {
    const WINDOW: usize = 8000;
    let model = SmallModel::start(Behaviour {
        play: Play::Outputs { calls: 14 },
        ..Behaviour::window(WINDOW)
    });
    let mut project = Project::new(0, "context_window = 8000\n");
    project.output_budget_chars = DEFAULT_OUTPUT_BUDGET_CHARS;
    write_outputs(&project.work, 14, 6000);
    let (mut agent, _) = project.agent(&model);
    let outcome = project.turn(&mut agent, "Read the 14 build logs.").await;
    assert_eq!(outcome.stop(), TurnStop::EndTurn, "{outcome:?}");
    assert_eq!(outcome.text, OUTPUTS_DONE);
    assert_every_request_fits(&model, WINDOW);
    // Each result entered within a quarter of the usable window, its whole saved.
    let work = model.work_requests();
    let last = all_text(&work.last().unwrap().body);
    assert!(last.contains("read_file, file_path=\""), "{last}");
    assert!(!project.compactions().is_empty());
    assert!(project.warnings().is_empty(), "{:?}", project.warnings());
    // No compaction started from a context over the window.
    for event in project.events() {
        if let AgentEvent::CompactionStarted {
            tokens,
            usable_window,
            ..
        } = event
        {
            assert!(tokens <= usable_window, "{tokens} > {usable_window}");
        }
    }
}

/// One call printing 29 KB, to a model whose window is 8000 while rein assumes its table's
/// (gpt-4o: 128000): the request is refused, and there is nothing older to summarise.
async fn one_huge_output_refused(names_limit: bool) {
    let model = SmallModel::start(Behaviour {
        says_window: None,
        names_limit,
        play: Play::Outputs { calls: 1 },
        ..Behaviour::window(8000)
    });
    let mut project = Project::new(0, "");
    project.output_budget_chars = DEFAULT_OUTPUT_BUDGET_CHARS;
    write_outputs(&project.work, 1, 29_000);
    let (mut agent, _) = project.agent(&model);
    let outcome = project.turn(&mut agent, "Read the build log.").await;
    assert_eq!(outcome.stop(), TurnStop::EndTurn, "{outcome:?}");
    assert_eq!(outcome.text, OUTPUTS_DONE);
    let seen = model.seen();
    assert_eq!(seen.iter().filter(|s| s.refused).count(), 1, "refused once");
    let compactions = project.compactions();
    assert_eq!(compactions.len(), 1, "{compactions:?}");
    let cut = &compactions[0];
    assert_eq!(cut.layer, CompactionLayer::Reactive);
    assert_eq!(
        (cut.summarised_messages, cut.pruned_results),
        (0, 1),
        "{cut:?}"
    );
    assert!(cut.tokens_after < cut.tokens_before / 2, "{cut:?}");
    assert!(cut.last_request_kept);
    // The result the model gets names the file holding the whole output.
    let answered = seen.iter().rfind(|s| !s.refused).unwrap();
    let text = all_text(&answered.body);
    assert!(text.contains("read_file, file_path=\""), "{text}");
    let report = agent.context_report().await;
    // A refusal that names the limit teaches the window; one that does not is not believed
    // enough to shrink it to a sixteenth.
    let expected = if names_limit { 8000 } else { 128_000 };
    assert_eq!(report.window.tokens, expected, "{report}");
}

#[tokio::test]
async fn one_huge_output_refused_naming_the_limit_is_cut_and_the_task_finishes() {
    one_huge_output_refused(true).await;
}

#[tokio::test]
async fn one_huge_output_refused_naming_no_limit_is_cut_and_the_task_finishes() {
    one_huge_output_refused(false).await;
}

#[tokio::test]
async fn a_one_turn_task_survives_a_refusal_every_few_requests() {
    // Every fourth request is refused as too long, whatever its size: more than two in the
    // one turn, never two in a row.
    let model = SmallModel::start(Behaviour {
        refuse_every: Some(4),
        ..Behaviour::window(100_000)
    });
    let project = Project::new(1, "");
    let (mut agent, _) = project.agent(&model);
    let outcome = project.turn(&mut agent, &task_prompt(1)).await;
    assert_eq!(outcome.stop(), TurnStop::EndTurn, "{outcome:?}");
    assert_eq!(outcome.text, "Task 1 is done.");
    let refused = model.seen().iter().filter(|s| s.refused).count();
    assert!(refused >= 3, "{refused}");
    let reactive = project
        .compactions()
        .iter()
        .filter(|c| c.layer == CompactionLayer::Reactive)
        .count();
    assert_eq!(reactive, refused);
    // Refusals of requests far smaller than the window do not shrink it.
    let report = agent.context_report().await;
    assert_eq!(report.window.tokens, 100_000, "{report}");
}

#[tokio::test]
async fn a_configured_max_tokens_is_lowered_so_the_prompt_and_the_answer_fit() {
    const WINDOW: usize = 8192;
    // 4000 for the answer, while the usable window keeps a fifth (1638) for it.
    let model = SmallModel::start(Behaviour::window(WINDOW));
    let project = Project::new(3, "max_tokens = 4000\n");
    let (mut agent, _) = project.agent(&model);
    for task in 1..=3 {
        let outcome = project.turn(&mut agent, &task_prompt(task)).await;
        assert_eq!(outcome.stop(), TurnStop::EndTurn, "{outcome:?}");
    }
    assert_every_request_fits(&model, WINDOW);
    let asked: Vec<u64> = model
        .work_requests()
        .iter()
        .map(|s| s.body["max_tokens"].as_u64().unwrap())
        .collect();
    assert!(asked.contains(&4000), "{asked:?}");
    assert!(asked.iter().any(|&m| m < 4000), "{asked:?}");
    assert!(asked.iter().all(|&m| m >= 1024), "{asked:?}");
}
