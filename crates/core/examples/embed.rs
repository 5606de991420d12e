//! Embedding rein: build an agent for an OpenAI-compatible endpoint, run one turn in the
//! current directory, and print what happens as it happens.
//!
//! Run: `cargo run -p rein-core --example embed -- http://127.0.0.1:8080/v1 my-model "list the files"`
//! (`OPENAI_API_KEY` is sent when set). Calls that would change anything are refused: nobody
//! is there to approve them.

#![expect(clippy::print_stdout, reason = "an example prints what the agent does")]

use rein_core::face::{
    AgentBuilder, AgentEvent, Events, ProviderConfig, ProviderKind, build_provider,
};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(url), Some(model)) = (args.next(), args.next()) else {
        return Err("usage: embed BASE_URL MODEL [REQUEST]".into());
    };
    let request = args
        .next()
        .unwrap_or_else(|| "What is in this directory?".to_owned());
    let mut endpoint = ProviderConfig::new(ProviderKind::OpenAi);
    endpoint.base_url = Some(url);
    endpoint.api_key = std::env::var("OPENAI_API_KEY").ok();
    let mut agent = AgentBuilder::new(
        std::env::current_dir()?.canonicalize()?,
        model,
        ProviderKind::OpenAi,
    )
    .provider(build_provider(&endpoint)?)
    .build()?;
    let events = Events::new(|event: AgentEvent| match event {
        AgentEvent::TextDelta { text } => print!("{text}"),
        other => println!("\n[{other:?}]"),
    });
    let outcome = agent.run_turn(&request, &events, Default::default()).await;
    println!(
        "\n{:?}, {} tokens in, {} out",
        outcome.stop(),
        outcome.usage.prompt_tokens,
        outcome.usage.completion_tokens
    );
    Ok(())
}
