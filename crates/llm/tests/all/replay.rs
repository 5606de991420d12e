//! Recording a live run to a cassette and playing it back offline.

use std::sync::Arc;

use rein_llm::{RecordingProvider, ReplayProvider, StreamEvent};
use rein_testkit::{MockServer, MockToolCall, MockUsage, Reply, Script, Turn};

use crate::support::{openai, request, run};

#[tokio::test]
async fn a_recorded_run_replays_to_the_same_messages() {
    let server = MockServer::start(
        Script::new()
            .reply(Reply::server_error())
            .reply(
                Turn::new()
                    .chunks(["Let me ", "read it."])
                    .tool_call(
                        MockToolCall::new("call_1", "read_file", r#"{"file_path":"a.txt"}"#)
                            .split_every(4),
                    )
                    .usage(MockUsage::new(50, 9)),
            )
            .reply(Turn::text("Done.").usage(MockUsage::new(80, 2).cached(50))),
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let recorder = RecordingProvider::create(openai(&server.openai_base_url()), &path).unwrap();

    let live_1 = run(&recorder, &request("m")).await;
    assert_eq!(live_1.retries().len(), 1);
    let live_2 = run(&recorder, &request("m")).await;

    let cassette = std::fs::read_to_string(&path).unwrap();
    assert_eq!(cassette.lines().count(), 2, "{cassette}");
    assert!(
        !cassette.contains("\"retry\""),
        "retried attempts are not recorded"
    );

    let replay: Arc<ReplayProvider> = Arc::new(ReplayProvider::from_path(&path).unwrap());
    let offline_1 = run(&*replay, &request("m")).await;
    let offline_2 = run(&*replay, &request("m")).await;
    assert_eq!(offline_1.response(), live_1.response());
    assert_eq!(offline_2.response(), live_2.response());
    let live_events: Vec<&StreamEvent> = live_1
        .events
        .iter()
        .skip_while(|e| !matches!(e, StreamEvent::Retry { .. }))
        .skip(1)
        .collect();
    let offline_events: Vec<&StreamEvent> = offline_1.events.iter().collect();
    assert_eq!(offline_events, live_events);

    let past_the_end = run(&*replay, &request("m")).await;
    assert!(past_the_end.error().to_string().contains("run.jsonl"));
}
