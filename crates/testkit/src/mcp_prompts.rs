//! The fake MCP server's prompts: `greet` (a required and an optional argument), `review`
//! (one argument, for text with spaces), `conversation` (several messages, an assistant one
//! and an embedded resource among them), `picture` (text and a 1×1 PNG), `fails` (always
//! refused), `fails_when` (refused once the file its argument names exists, so a test holds
//! it while it types ahead), and `late_prompt`, listed
//! only after the `change_tools` tool ran (with `prompts/list_changed` sent).

use rmcp::ErrorData as McpError;
use rmcp::model::{
    ContentBlock, GetPromptResult, JsonObject, Prompt, PromptArgument, PromptMessage, Role,
};
use serde_json::Value;

/// A 1×1 PNG, base64.
const PIXEL_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/// The prompts listed; `grown`: `change_prompts` ran.
pub(crate) fn prompts(grown: bool) -> Vec<Prompt> {
    let argument = |name: &str, about: &str, required: bool| {
        PromptArgument::new(name)
            .with_description(about)
            .with_required(required)
    };
    let mut prompts = vec![
        Prompt::new(
            "greet",
            Some("Greets someone by name"),
            Some(vec![
                argument("name", "who to greet", true),
                argument("style", "how (formal, pirate...)", false),
            ]),
        ),
        Prompt::new(
            "review",
            Some("Reviews a piece of code"),
            Some(vec![argument("code", "the code to review", true)]),
        ),
        Prompt::new(
            "conversation",
            Some("A conversation with an example answer"),
            None::<Vec<PromptArgument>>,
        ),
        Prompt::new(
            "picture",
            Some("Asks about a picture"),
            None::<Vec<PromptArgument>>,
        ),
        Prompt::new(
            "fails",
            Some("Always refused by the server"),
            None::<Vec<PromptArgument>>,
        ),
        Prompt::new(
            "fails_when",
            Some("Refused once the file exists"),
            Some(vec![argument("file", "the file to wait for", true)]),
        ),
    ];
    if grown {
        prompts.push(Prompt::new(
            "late_prompt",
            Some("Listed after a change"),
            None::<Vec<PromptArgument>>,
        ));
    }
    prompts
}

/// `prompts/get` for `name` with `args`.
pub(crate) fn get(name: &str, args: &JsonObject) -> Result<GetPromptResult, McpError> {
    let arg = |key: &str| args.get(key).and_then(Value::as_str).map(str::to_owned);
    let user = |text: String| PromptMessage::new_text(Role::User, text);
    let messages = match name {
        "greet" => {
            let who = arg("name")
                .ok_or_else(|| McpError::invalid_params("argument `name` is required", None))?;
            let style = arg("style").unwrap_or_else(|| "plain".to_owned());
            vec![user(format!("Say hello to {who} in a {style} style."))]
        }
        "review" => {
            let code = arg("code").unwrap_or_default();
            vec![user(format!("Review this code:\n{code}"))]
        }
        "conversation" => vec![
            user("What is 2 + 2?".to_owned()),
            PromptMessage::new_text(Role::Assistant, "2 + 2 is 4."),
            PromptMessage::new(
                Role::User,
                ContentBlock::embedded_text("fake://notes/7", "note 7: multiply by three"),
            ),
            user("Now apply the note.".to_owned()),
        ],
        "picture" => vec![
            user("Describe this picture.".to_owned()),
            PromptMessage::new(Role::User, ContentBlock::image(PIXEL_PNG, "image/png")),
        ],
        "late_prompt" => vec![user("The late prompt's text.".to_owned())],
        "fails" | "fails_when" => {
            return Err(McpError::internal_error(
                "the fake prompt failed on purpose",
                None,
            ));
        }
        other => return Err(McpError::invalid_params(format!("no prompt {other}"), None)),
    };
    Ok(GetPromptResult::new(messages))
}

/// Waits until `path` exists (at most a minute, so a test that never creates it does not
/// hang the server).
pub(crate) async fn wait_for_file(path: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !std::path::Path::new(path).exists() && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}
