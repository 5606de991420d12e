//! A 60-round session against a model whose window is 8192 tokens: it never hits the wall
//! and never loses the thread.

use rein_core::agent::{AgentEvent, TurnStop};
use rein_core::context::{CompactionLayer, SUMMARY_SECTIONS, SummaryAuthor};

use super::model::{
    Behaviour, ROUNDS_PER_TASK, SmallModel, all_text, calls_answered, content_text, position,
    task_prompt,
};
use super::project::{Project, TODO_TEXT};

const TASKS: usize = 6;
const WINDOW: usize = 8192;

#[tokio::test]
async fn sixty_rounds_in_an_8k_window_fit_every_request_and_keep_the_thread() {
    let model = SmallModel::start(Behaviour::window(WINDOW));
    let project = Project::new(TASKS, "");
    let (mut agent, id) = project.agent(&model);
    let mut rounds = 0;
    for task in 1..=TASKS {
        let outcome = project.turn(&mut agent, &task_prompt(task)).await;
        assert_eq!(
            outcome.stop(),
            TurnStop::EndTurn,
            "task {task}: {outcome:?}"
        );
        assert_eq!(outcome.text, format!("Task {task} is done."));
        rounds += outcome.rounds as usize;
    }
    assert_eq!(rounds, TASKS * ROUNDS_PER_TASK);

    // No error and no warning reached the person.
    let events = project.events();
    let warnings: Vec<&AgentEvent> = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::Warning { .. }))
        .collect();
    assert!(warnings.is_empty(), "{warnings:#?}");

    // Every request fitted: the model refused none.
    let seen = model.seen();
    for request in &seen {
        assert!(
            !request.refused,
            "a request of {} tokens was refused",
            request.tokens
        );
        let answer = request.body["max_tokens"].as_u64().unwrap_or(0) as usize;
        assert!(request.tokens + answer <= WINDOW);
        calls_answered(&request.body).unwrap();
    }

    // It took every layer to get there.
    let done = project.compactions();
    for c in &done {
        eprintln!(
            "{:?} {} -> {} kept {} summarised {} pruned {}",
            c.layer,
            c.tokens_before,
            c.tokens_after,
            c.kept_messages,
            c.summarised_messages,
            c.pruned_results
        );
    }
    eprintln!(
        "max tokens {}",
        seen.iter().map(|s| s.tokens).max().unwrap()
    );
    eprintln!(
        "requests {} summaries {}",
        seen.len(),
        seen.iter().filter(|s| s.summary).count()
    );
    let layers: Vec<CompactionLayer> = done.iter().map(|c| c.layer).collect();
    assert!(layers.contains(&CompactionLayer::Prune), "{layers:?}");
    assert!(layers.contains(&CompactionLayer::Summary), "{layers:?}");
    for info in &done {
        assert!(info.tokens_after < info.tokens_before, "{info:?}");
        assert!(info.last_request_kept);
        if info.layer != CompactionLayer::Prune {
            assert_eq!(info.summary_by, Some(SummaryAuthor::Model));
            assert_eq!(info.pinned, ["todo list"]);
            assert!(info.kept_messages >= 4, "{info:?}");
        }
    }
    // Each summary request follows the template, carries no tools and says what it asks.
    let summaries: Vec<_> = seen.iter().filter(|s| s.summary).collect();
    assert!(summaries.len() >= 2);
    for request in summaries {
        let body = &request.body;
        assert!(body["tools"].as_array().is_none_or(Vec::is_empty));
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(
            messages.len(),
            2,
            "the summariser's system prompt and one request"
        );
        let asked = content_text(&messages[1]);
        assert!(
            asked.contains("This message asks you for a summary"),
            "{asked}"
        );
        for section in SUMMARY_SECTIONS {
            assert!(asked.contains(section), "{section}");
        }
        assert!(asked.contains("quoted word for word"));
    }

    // A pruned result that had been saved whole names its file, so the model can read it.
    let named = seen.iter().any(|s| {
        all_text(&s.body)
            .contains("The whole output is saved: read it with read_file, file_path=\"")
    });
    assert!(named, "no pruned result names its saved file");

    // After the first summary, every request holds the person's current request, every
    // earlier one (quoted or whole), AGENTS.md and the todo list.
    let work = model.work_requests();
    let first_summary = work
        .iter()
        .position(|s| {
            s.body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| content_text(m).starts_with("[rein: context summary]"))
        })
        .expect("a request after a summary");
    for request in &work[first_summary..] {
        let text = all_text(&request.body);
        let system = content_text(&request.body["messages"][0]);
        assert!(system.contains("make check-all"), "AGENTS.md is gone");
        let (current, _) = position(&request.body);
        for task in 1..=current {
            assert!(
                text.contains(&task_prompt(task)),
                "request for task {current} lost the request of task {task}: {}",
                serde_json::to_string_pretty(&request.body["messages"]).unwrap()
            );
        }
        assert!(text.contains(TODO_TEXT), "the todo list is gone");
        // Turns alternate: the summary (the person's side) is followed by the model's.
        let messages = request.body["messages"].as_array().unwrap();
        if content_text(&messages[1]).starts_with("[rein: context summary]") {
            assert_eq!(messages[2]["role"], "assistant");
        }
    }

    // The session file: a line per compaction, and every message as it was.
    let file = std::fs::read_to_string(project.session_file(&id)).unwrap();
    let recorded = file
        .lines()
        .filter(|l| l.contains(r#""kind":"compaction""#))
        .count();
    assert_eq!(recorded, done.len());
    let store = project.store();
    let whole = store.load_whole(&id).unwrap();
    assert_eq!(
        whole.messages.len(),
        TASKS * (1 + ROUNDS_PER_TASK + ROUNDS_PER_TASK - 1)
    );
    let everything = serde_json::to_string(&whole.messages).unwrap();
    // What pruning cut from the context is still in the file.
    for task in 1..=TASKS {
        assert!(
            everything.contains(&format!("note 20 of task {task}:")),
            "task {task}"
        );
    }
    let replayed = store.load(&id).unwrap();
    assert_eq!(
        replayed.messages,
        agent.history(),
        "a resume rebuilds the same context"
    );
    assert_eq!(replayed.compactions, done.len());
}
