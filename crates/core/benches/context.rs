//! Context management's cost per round with a long history: accounting for the round's new
//! messages, taking the provider's count, and deciding whether to compact. It must grow with
//! the new messages only (under 100 µs a round with 2,000 messages behind it), never with
//! the history.

use divan::Bencher;
use rein_core::context::{ContextSettings, Ledger, Limits, PromptAnchor, estimate, next_step};
use rein_llm::{Message, Part, Role, ToolArguments, ToolCall, ToolResult};

fn main() {
    divan::main();
}

/// Messages in the history before the round.
const HISTORY_MESSAGES: usize = 2000;

/// One round: the model's call and its result of `result_bytes` bytes of code.
fn round(index: usize, result_bytes: usize) -> [Message; 2] {
    let id = format!("call_{index}");
    let line = "    let value = parse(input)?; // read the next record\n";
    let content = line.repeat(result_bytes / line.len() + 1);
    [
        Message {
            role: Role::Assistant,
            parts: vec![
                Part::Text {
                    text: "Let me look at the parser next.".into(),
                },
                Part::ToolCall(ToolCall {
                    id: id.clone(),
                    name: "read_file".into(),
                    arguments: ToolArguments::Json {
                        value: serde_json::json!({"file_path": "src/parser.rs", "offset": 120}),
                    },
                }),
            ],
        },
        Message {
            role: Role::Tool,
            parts: vec![Part::ToolResult(ToolResult {
                call_id: id,
                content,
                is_error: false,
                images: Vec::new(),
            })],
        },
    ]
}

fn history() -> Vec<Message> {
    let mut messages = vec![Message {
        role: Role::User,
        parts: vec![Part::Text {
            text: "Make the parser strict and add tests.".into(),
        }],
    }];
    let mut i = 0;
    while messages.len() < HISTORY_MESSAGES {
        messages.extend(round(i, 2000));
        i += 1;
    }
    messages
}

/// A round's context work: the new messages accounted for (each estimated once), the
/// provider's count taken, and the decision for the next request.
#[divan::bench(args = [2_000, 30_000])]
fn round_with_2000_messages_behind(bencher: Bencher, result_bytes: usize) {
    let history = history();
    let system = include_str!("../src/prompt/system.md");
    // The ledger grows by a round each iteration, as in a session.
    let mut ledger = Ledger::new(system, 3000, &history);
    let limits = Limits::new(u64::MAX / 2, &ContextSettings::default());
    let [call, result] = round(HISTORY_MESSAGES, result_bytes);
    bencher.bench_local(|| {
        let sent = ledger.len();
        ledger.observe(PromptAnchor {
            prompt_tokens: 400_000,
            messages: sent,
        });
        ledger.push(&call);
        ledger.push(&result);
        divan::black_box(next_step(&ledger, &limits))
    });
}

/// The decision alone, with 2,000 messages: a few comparisons.
#[divan::bench]
fn decide_with_2000_messages(bencher: Bencher) {
    let ledger = Ledger::new("system", 3000, &history());
    let limits = Limits::new(200_000, &ContextSettings::default());
    bencher.bench_local(|| next_step(divan::black_box(&ledger), &limits));
}

/// Estimating one result at the output budget's size (30,000 characters).
#[divan::bench]
fn estimate_a_30k_result(bencher: Bencher) {
    let [_, result] = round(0, 30_000);
    bencher.bench_local(|| estimate::message_tokens(divan::black_box(&result)));
}
