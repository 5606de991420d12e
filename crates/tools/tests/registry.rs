//! The registry: lookup, argument checking, schemas and what reaches the model.

use anyhow::Result;
use rein_tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput, ToolRegistry, async_trait};
use serde_json::{Value, json};

use std::sync::Arc;

use crate::support::{Env, run_tool};

#[test]
fn builtin_registers_every_tool_in_a_stable_order() {
    let registry = ToolRegistry::builtin();
    assert_eq!(
        registry.names(),
        [
            "read_file",
            "write_file",
            "edit_file",
            "glob",
            "grep",
            "bash",
            "bash_output",
            "kill_shell"
        ]
    );
    let kinds: Vec<ToolKind> = registry.infos().iter().map(|s| s.kind).collect();
    assert_eq!(
        kinds,
        [
            ToolKind::ReadOnly,
            ToolKind::Edit,
            ToolKind::Edit,
            ToolKind::ReadOnly,
            ToolKind::ReadOnly,
            ToolKind::Execute,
            ToolKind::ReadOnly,
            ToolKind::ReadOnly
        ]
    );
}

#[tokio::test]
async fn bad_arguments_name_the_parameter() -> Result<()> {
    let env = Env::new()?;
    let msg = env.err("read_file", json!({})).await?;
    assert_eq!(
        msg,
        "Invalid arguments for read_file: missing parameter `file_path`"
    );
    let msg = env
        .err("read_file", json!({"file_path": "a", "limit": "10"}))
        .await?;
    assert_eq!(
        msg,
        "Invalid arguments for read_file: `limit`: invalid type: string \"10\", expected a non-negative integer"
    );
    let msg = env.err("read_file", json!({"path": "a"})).await?;
    assert_eq!(
        msg,
        "Invalid arguments for read_file: unknown parameter `path`; accepted parameters: `file_path`, `offset`, `limit`"
    );
    let msg = env
        .err("grep", json!({"pattern": "x", "output_mode": "lines"}))
        .await?;
    assert!(
        msg.contains(
            "`output_mode`: unknown variant `lines`, expected one of `content`, `files`, `count`"
        ),
        "{msg}"
    );
    Ok(())
}

#[test]
fn prepare_checks_without_running() {
    let registry = ToolRegistry::builtin();
    let write = registry.get("write_file").unwrap();
    assert!(
        Arc::clone(write)
            .prepare(&json!({"file_path": "a", "content": ""}))
            .is_ok()
    );
    let err = Arc::clone(write)
        .prepare(&json!({"file_path": "a"}))
        .err()
        .unwrap();
    assert!(err.contains("missing parameter `content`"), "{err}");
    assert!(registry.get("bash2").is_none());
}

/// Every schema is a plain object schema providers accept.
fn assert_clean(value: &Value, at: &str) {
    match value {
        Value::Object(map) => {
            for banned in [
                "$schema",
                "$defs",
                "definitions",
                "$ref",
                "title",
                "format",
                "anyOf",
                "oneOf",
                "additionalProperties",
            ] {
                assert!(!map.contains_key(banned), "{banned} in {at}: {value}");
            }
            if let Some(Value::Array(types)) = map.get("type") {
                panic!("type array {types:?} in {at}");
            }
            for (key, child) in map {
                assert_clean(child, &format!("{at}.{key}"));
            }
        }
        Value::Array(items) => items.iter().for_each(|i| assert_clean(i, at)),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}

#[test]
fn schemas_are_clean_and_match_the_contract() {
    let expected: [(&str, &[&str], &[&str]); 5] = [
        (
            "read_file",
            &["file_path", "limit", "offset"],
            &["file_path"],
        ),
        (
            "write_file",
            &["content", "file_path"],
            &["content", "file_path"],
        ),
        (
            "edit_file",
            &["file_path", "new_string", "old_string", "replace_all"],
            &["file_path", "new_string", "old_string"],
        ),
        ("glob", &["path", "pattern"], &["pattern"]),
        (
            "grep",
            &[
                "context",
                "ignore_case",
                "include",
                "output_mode",
                "path",
                "pattern",
            ],
            &["pattern"],
        ),
    ];
    let specs = ToolRegistry::builtin().infos();
    for ((name, properties, required), spec) in expected.iter().zip(&specs) {
        assert_eq!(spec.name, *name);
        assert!(!spec.description.is_empty());
        let schema = &spec.parameters;
        assert_clean(schema, name);
        assert_eq!(schema["type"], "object");
        // Which properties, not their order: serde_json keeps declaration order when its
        // `preserve_order` feature is on (the ACP crates turn it on), else sorts them.
        let mut props: Vec<&str> = schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        props.sort_unstable();
        assert_eq!(props, *properties, "{name}");
        let mut req: Vec<&str> = schema["required"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        req.sort_unstable();
        assert_eq!(req, *required, "{name}");
        for (prop, def) in schema["properties"].as_object().unwrap() {
            assert!(
                def["description"].as_str().is_some_and(|d| !d.is_empty()),
                "{name}.{prop} has no description"
            );
            assert!(def["type"].is_string(), "{name}.{prop}: {def}");
        }
    }
    let grep = &specs[4].parameters["properties"];
    assert_eq!(
        grep["output_mode"]["enum"],
        json!(["content", "files", "count"])
    );
    assert_eq!(grep["context"]["type"], "integer");
    assert_eq!(
        specs[2].parameters["properties"]["replace_all"]["type"],
        "boolean"
    );
}

#[test]
fn specs_render_into_both_wire_forms_within_the_request_budget() {
    let specs = ToolRegistry::builtin().infos();
    let openai: Vec<Value> = specs
        .iter()
        .map(|s| json!({"type": "function", "function": {"name": s.name, "description": s.description, "parameters": s.parameters}}))
        .collect();
    let anthropic: Vec<Value> = specs
        .iter()
        .map(
            |s| json!({"name": s.name, "description": s.description, "input_schema": s.parameters}),
        )
        .collect();
    assert_eq!(
        openai[0]["function"]["parameters"]["required"],
        json!(["file_path"])
    );
    assert_eq!(
        anthropic[3]["input_schema"]["properties"]["pattern"]["type"],
        "string"
    );
    // The first request (system prompt and every tool) must stay under 6 KB; the tools get
    // well under two thirds of that, leaving the rest to the system prompt.
    let bytes = serde_json::to_string(&openai).unwrap().len();
    assert!(bytes < 3500, "OpenAI form of the tools is {bytes} bytes");
    let bytes = serde_json::to_string(&anthropic).unwrap().len();
    assert!(bytes < 3400, "Anthropic form of the tools is {bytes} bytes");
}

struct Echo;

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct EchoArgs {
    /// What to say.
    text: String,
    /// How often.
    times: Option<usize>,
}

#[async_trait]
impl Tool for Echo {
    type Args = EchoArgs;
    fn name(&self) -> &'static str {
        "echo"
    }
    fn description(&self) -> &'static str {
        "Repeats text."
    }
    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }
    async fn run(&self, args: EchoArgs, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        match args.text.as_str() {
            "refuse" => Err(ToolError::model("no thanks")),
            "cancel" => Err(ToolError::Cancelled {
                partial: "x\n".repeat(args.times.unwrap_or(1)),
            }),
            "crash" => Err(ToolError::Internal("disk gone".to_owned())),
            text => Ok(ToolOutput::success(text.repeat(args.times.unwrap_or(1)))),
        }
    }
}

#[tokio::test]
async fn tool_errors_map_to_results_or_end_the_turn() -> Result<()> {
    let mut env = Env::with_config(|c| c.output_budget_chars = 1000)?;
    env.tools.register(Echo);
    assert_eq!(
        env.ok("echo", json!({"text": "hi", "times": 2})).await?,
        "hihi"
    );
    assert_eq!(
        env.err("echo", json!({"text": "refuse"})).await?,
        "no thanks"
    );
    match run_tool(&env.tools, "echo", json!({"text": "crash"}), &env.ctx).await {
        Err(ToolError::Internal(msg)) => assert_eq!(msg, "disk gone"),
        other => panic!("expected an internal error, got {other:?}"),
    }
    match run_tool(
        &env.tools,
        "echo",
        json!({"text": "cancel", "times": 5000}),
        &env.ctx,
    )
    .await
    {
        Err(ToolError::Cancelled { partial }) => assert_eq!(partial.len(), 10_000),
        other => panic!("expected cancellation, got {other:?}"),
    }
    Ok(())
}

#[tokio::test]
async fn every_result_passes_the_output_budget() -> Result<()> {
    let mut env = Env::with_config(|c| c.output_budget_chars = 2000)?;
    env.tools.register(Echo);
    let out = env
        .ok("echo", json!({"text": "0123456789\n", "times": 1000}))
        .await?;
    assert!(out.chars().count() <= 2000);
    assert!(out.starts_with("0123456789\n"));
    assert!(out.ends_with("0123456789\n"));
    let saved = crate::support::files_containing(&env.offload, "echo-")?;
    assert_eq!(saved.len(), 1);
    Ok(())
}

#[test]
fn registering_a_name_again_replaces_the_tool_in_place() {
    let mut registry = ToolRegistry::builtin();
    registry.register(Echo);
    registry.register(Echo);
    assert_eq!(registry.names().len(), 9);
    assert_eq!(registry.names()[8], "echo");
    assert!(registry.get("echo").is_some());
}
