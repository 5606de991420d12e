use super::*;

fn call(name: &str, arguments: &str) -> TextCall {
    TextCall {
        name: name.into(),
        arguments: arguments.into(),
    }
}

fn calls(text: &str) -> Vec<TextCall> {
    find_text_calls(text).map(|f| f.calls).unwrap_or_default()
}

#[test]
fn each_format_gives_its_calls() {
    let read = call("read_file", r#"{"file_path":"a.txt"}"#);
    for text in [
        "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"file_path\": \"a.txt\"}}\n</tool_call>",
        "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"file_path\": \"a.txt\"}}",
        "[TOOL_CALLS][{\"name\": \"read_file\", \"arguments\": {\"file_path\": \"a.txt\"}}]",
        "[TOOL_CALLS]read_file[ARGS]{\"file_path\":\"a.txt\"}",
        "<|python_tag|>{\"name\": \"read_file\", \"parameters\": {\"file_path\": \"a.txt\"}}<|eom_id|>",
        "{\"name\": \"read_file\", \"parameters\": {\"file_path\": \"a.txt\"}}",
        "  {\"name\": \"read_file\", \"arguments\": \"{\\\"file_path\\\":\\\"a.txt\\\"}\"}\n",
        "```json\n{\"name\": \"read_file\", \"arguments\": {\"file_path\": \"a.txt\"}}\n```",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read_file\n```json\n{\"file_path\":\"a.txt\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read_file<｜tool▁sep｜>{\"file_path\":\"a.txt\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
    ] {
        assert_eq!(calls(text), vec![read.clone()], "{text}");
    }
}

#[test]
fn several_calls_and_narration() {
    let text = "I will read both.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"file_path\": \"a\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"glob\", \"arguments\": {\"pattern\": \"*\"}}\n</tool_call>";
    let found = find_text_calls(text).unwrap();
    assert_eq!(&text[..found.narration_end], "I will read both.\n");
    assert_eq!(
        found.calls,
        vec![
            call("read_file", r#"{"file_path":"a"}"#),
            call("glob", r#"{"pattern":"*"}"#)
        ]
    );
    assert_eq!(
        calls(
            "[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {}}, {\"name\": \"b\", \"arguments\": {\"x\": 1}}]"
        ),
        vec![call("a", "{}"), call("b", r#"{"x":1}"#)]
    );
    assert_eq!(
        calls(
            "<|python_tag|>{\"name\": \"a\", \"parameters\": {}}; {\"name\": \"b\", \"parameters\": {}}"
        ),
        vec![call("a", "{}"), call("b", "{}")]
    );
}

#[test]
fn broken_markup_is_a_call_the_model_hears_about() {
    let found = calls(
        "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"file_path\": }\n</tool_call>",
    );
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].name, "read_file");
    assert!(serde_json::from_str::<Value>(&found[0].arguments).is_err());
    let found = calls("<tool_call>\nnot json at all\n</tool_call>");
    assert_eq!(found[0].name, UNNAMED_TOOL);
}

#[test]
fn prose_that_mentions_a_call_is_not_one() {
    for text in [
        "To call a tool, write:\n```\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {}}\n</tool_call>\n```\nas shown.",
        "Here is the JSON:\n```json\n{\"name\": \"read_file\", \"arguments\": {}}\n```\nThat is what a call looks like.",
        "{\"name\": \"read_file\", \"arguments\": {}} is a call.",
        "The marker is `<tool_call>`, closed by `</tool_call>`.",
        "{\"name\": \"Ada\", \"age\": 36}",
        "[1, 2, 3]",
        "[TOOL_CALLS] is what Mistral writes before its calls.",
        "```python\nprint({\"name\": \"x\", \"arguments\": {}})\n```",
    ] {
        assert_eq!(find_text_calls(text), None, "{text}");
    }
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Any text: no panic, and the narration ends on a character boundary.
        #[test]
        fn never_panics(text in "\\PC{0,200}") {
            if let Some(found) = find_text_calls(&text) {
                prop_assert!(text.is_char_boundary(found.narration_end));
            }
        }

        /// A call written in any format, with any narration before it, is found whole.
        #[test]
        fn a_written_call_is_found(
            narration in "[a-zA-Z .,]{0,40}",
            name in "[a-z_]{1,12}",
            key in "[a-z]{1,8}",
            value in "[a-zA-Z0-9 ./]{0,20}",
            format in 0usize..4,
        ) {
            let arguments = serde_json::json!({ key: value }).to_string();
            let markup = match format {
                0 => format!("<tool_call>\n{{\"name\": \"{name}\", \"arguments\": {arguments}}}\n</tool_call>"),
                1 => format!("[TOOL_CALLS][{{\"name\": \"{name}\", \"arguments\": {arguments}}}]"),
                2 => format!("<|python_tag|>{{\"name\": \"{name}\", \"parameters\": {arguments}}}"),
                _ => format!("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>{name}<｜tool▁sep｜>{arguments}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"),
            };
            let text = if narration.trim().is_empty() { markup } else { format!("{narration}\n{markup}") };
            let found = find_text_calls(&text).unwrap();
            prop_assert_eq!(found.calls, vec![call(&name, &arguments)]);
        }
    }
}
