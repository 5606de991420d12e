//! Tool calls written as text, for servers that do not parse them out of the model's output
//! (Ollama, llama.cpp or vLLM without a tool parser) or refuse `tools` altogether.
//!
//! Two halves: [`find_text_calls`] and the stream adapter recognise a call in a response
//! that carries no native one; the text mode ([`ToolFormat::Text`]) describes the tools in
//! the system prompt and writes calls and results back as text, for a server that takes no
//! `tools`. The session keeps calls and results in the provider-neutral form either way.

mod parse;
mod prompt;
mod stream;

pub use parse::{FoundCalls, TextCall, find_text_calls};
pub(crate) use prompt::{call_as_text, result_as_text, system_with_tools};
pub(crate) use stream::recognise_text_calls;

/// How tools reach the model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolFormat {
    /// The request's `tools` field and `tool` messages (switching to text if the server
    /// refuses them).
    #[default]
    Native,
    /// Tools described in the system prompt, calls and results written as text.
    Text,
}

impl std::str::FromStr for ToolFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "native" => Ok(ToolFormat::Native),
            "text" => Ok(ToolFormat::Text),
            other => Err(format!(
                "unknown tool format {other:?}: expected \"native\" or \"text\""
            )),
        }
    }
}
