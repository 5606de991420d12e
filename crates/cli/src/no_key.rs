//! The message for a run with no API key: what to set, with examples, and the demo.

/// What to tell a person who has no API key configured.
pub(crate) fn message(variables: &[String]) -> String {
    let searched = if variables.is_empty() {
        "REIN_API_KEY, OPENAI_API_KEY, DEEPSEEK_API_KEY or ANTHROPIC_API_KEY".to_owned()
    } else {
        variables.join(", ")
    };
    format!(
        "rein: no API key found (looked for {searched}).\n\
         \n\
         Set one for your provider, for example:\n\
         \n\
         \x20 OpenAI      export OPENAI_API_KEY=sk-...            (model gpt-4o by default)\n\
         \x20 DeepSeek    export DEEPSEEK_API_KEY=sk-...          (base URL and model deepseek-chat set for you)\n\
         \x20 Anthropic   export ANTHROPIC_API_KEY=sk-ant-...     (model claude-sonnet-4-5 by default)\n\
         \x20 Any OpenAI-compatible server:\n\
         \x20             export REIN_API_KEY=... REIN_BASE_URL=https://host/v1 REIN_MODEL=name\n\
         \x20 Ollama      rein --base-url http://localhost:11434/v1 -m qwen2.5-coder -p \"...\"   (no key needed)\n\
         \n\
         A .env file in this directory or above is read too.\n\
         To watch rein work offline with no key at all, run: rein --demo"
    )
}
