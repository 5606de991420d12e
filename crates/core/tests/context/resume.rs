//! A resume after compactions sends the request the run before the restart would have.

use rein_core::agent::{AgentEvent, TurnStop};

use super::model::{Behaviour, SmallModel, task_prompt};
use super::project::Project;

#[tokio::test]
async fn a_resumed_session_sends_the_request_the_run_would_have_sent() {
    let project = Project::new(4, "");
    let first = SmallModel::start(Behaviour::window(8192));
    let (mut agent, id) = project.agent(&first);
    for task in 1..=3 {
        let outcome = project.turn(&mut agent, &task_prompt(task)).await;
        assert_eq!(outcome.stop(), TurnStop::EndTurn);
    }
    let compacted = project
        .events()
        .iter()
        .filter(|e| matches!(e, AgentEvent::Compaction(_)))
        .count();
    assert!(compacted >= 3, "the session was compacted ({compacted})");

    // The machine stops here: the other one has the session file as it is now.
    let elsewhere = project.fork("rein-home-elsewhere");
    let before = agent.context_report().await;
    let went_on = first.seen().len();
    project.turn(&mut agent, &task_prompt(4)).await;
    let would_have = first.seen()[went_on].body.clone();
    drop(agent);

    let second = SmallModel::start(Behaviour::window(8192));
    let mut resumed = elsewhere.resume(&second, &id);
    // The same accounting: the provider's last count carries over, not just the messages.
    let after = resumed.context_report().await;
    assert!(before.measured && after.measured);
    assert_eq!(
        (after.used, after.message_count),
        (before.used, before.message_count)
    );
    elsewhere.turn(&mut resumed, &task_prompt(4)).await;
    let sent = second.seen()[0].body.clone();
    assert_eq!(sent["messages"], would_have["messages"]);
    assert_eq!(sent["tools"], would_have["tools"]);
}
