//! The token estimate against a real tokenizer (OpenAI's o200k_base) on the four kinds of
//! text a session holds. Run with `--nocapture` to see the figures:
//! `cargo test -p rein-core --test all estimate -- --nocapture`.

use rein_core::context::estimate::text_tokens;

/// Texts of one kind, from rein's own tree (none of them used to fit the weights).
fn samples() -> Vec<(&'static str, Vec<String>)> {
    let tools: Vec<serde_json::Value> = rein_tools::ToolRegistry::builtin()
        .infos()
        .into_iter()
        .map(|info| {
            serde_json::json!({
                "type": "function",
                "function": {"name": info.name, "description": info.description, "parameters": info.parameters},
            })
        })
        .collect();
    vec![
        (
            "code",
            vec![
                include_str!("../../src/build.rs").to_owned(),
                include_str!("../../../tools/src/budget.rs").to_owned(),
                include_str!("../../../llm/src/sse.rs").to_owned(),
                include_str!("../../../cli/demo/project/utils.py").to_owned(),
            ],
        ),
        (
            "prose",
            vec![
                include_str!("../../src/prompt/system.md").to_owned(),
                include_str!("../../../../docs/output-format.md").to_owned(),
            ],
        ),
        (
            "json",
            vec![
                serde_json::to_string(&tools).unwrap(),
                serde_json::to_string_pretty(&tools).unwrap(),
                include_str!("../../../testkit/scripts/tool-round.json").to_owned(),
            ],
        ),
        (
            "cjk",
            vec![include_str!("../fixtures/estimate/cjk.txt").to_owned()],
        ),
    ]
}

/// `text` in pieces of about `size` bytes, cut at line ends: a message's worth each.
fn pieces(text: &str, size: usize) -> Vec<String> {
    let mut out = vec![String::new()];
    for line in text.split_inclusive('\n') {
        if out.last().unwrap().len() + line.len() > size && !out.last().unwrap().is_empty() {
            out.push(String::new());
        }
        out.last_mut().unwrap().push_str(line);
    }
    out
}

#[test]
#[allow(
    clippy::print_stderr,
    reason = "the measured error is the point of this test: --nocapture shows it"
)]
fn the_estimate_is_within_a_few_tenths_of_o200k_on_every_kind_of_text() {
    let bpe = tiktoken_rs::o200k_base().unwrap();
    eprintln!("kind    pieces  o200k tokens  estimate  total error  worst piece");
    for (kind, texts) in samples() {
        let mut real_total = 0_i64;
        let mut estimated_total = 0_i64;
        let mut worst = 0.0_f64;
        let mut count = 0;
        for text in &texts {
            for piece in pieces(text, 1000) {
                let real = bpe.encode_ordinary(&piece).len() as i64;
                let estimated = text_tokens(&piece) as i64;
                if real < 20 {
                    continue;
                }
                count += 1;
                real_total += real;
                estimated_total += estimated;
                let error = (estimated - real) as f64 / real as f64;
                if error.abs() > worst.abs() {
                    worst = error;
                }
            }
        }
        let total = (estimated_total - real_total) as f64 / real_total as f64;
        eprintln!(
            "{kind:<7} {count:>6}  {real_total:>12}  {estimated_total:>8}  {:>+10.1}%  {:>+10.1}%",
            total * 100.0,
            worst * 100.0
        );
        assert!(total.abs() <= 0.15, "{kind}: {:.1}% overall", total * 100.0);
        assert!(
            worst.abs() <= 0.35,
            "{kind}: {:.1}% on one piece",
            worst * 100.0
        );
    }
}
