//! `rein explain-permission 'tool(argument)'`: what would happen to such a call here, with
//! these flags and this directory's configuration, and which rule or reason decides, for
//! people debugging their configuration.

use rein_core::build::ExplainError;
use rein_core::permissions::Decision;

use crate::args::Args;
use crate::exit::Exit;
use crate::render;
use crate::setup;

/// Runs `rein explain-permission`.
pub(crate) fn run(args: &Args, call: &str) -> Exit {
    let builder = match setup::configured_builder(args) {
        Ok(builder) => builder,
        Err(error) => return error.report(),
    };
    for warning in builder.warnings() {
        render::warning(warning);
    }
    let verdict = match builder.explain(call) {
        Ok(verdict) => verdict,
        Err(ExplainError::UnknownTool(message)) => {
            render::error(&message);
            return Exit::Usage;
        }
        Err(ExplainError::Rule(message)) => {
            // The rule itself does not parse.
            render::error(&format!("cannot explain {call}: {message}"));
            return Exit::Usage;
        }
        Err(ExplainError::Tool(message)) => {
            render::stdout_line(&format!(
                "{call} is refused by the tool itself, before any permission check\n  because: {message}"
            ));
            return Exit::Done;
        }
    };
    let what = match &verdict.decision {
        Decision::Allow => "runs without asking".to_owned(),
        Decision::Ask { reason, .. } => {
            format!("asks first ({reason}); a one-shot run, which cannot ask, refuses it")
        }
        Decision::Deny { reason } => format!("is refused ({reason})"),
    };
    let mut text = format!(
        "{call} {what}\n  decided by: {}\n  permission mode: {}",
        verdict.because,
        args.mode()
    );
    if call.starts_with("bash(") && !matches!(verdict.decision, Decision::Deny { .. }) {
        let level = builder.sandbox_level_wanted();
        let sandbox = match builder.sandbox_warning() {
            None if level == rein_core::face::SandboxLevel::Off => "off".to_owned(),
            None => format!("{level}, enforced (`rein sandbox --explain` for the details)"),
            Some(_) => format!("{level} asked for, but not enforced on this machine"),
        };
        text.push_str(&format!("\n  sandbox: {sandbox}"));
    }
    if let Some(lift) = &verdict.lift {
        text.push_str(&format!("\n  to let it run without asking: {lift}"));
    }
    render::stdout_line(&text);
    Exit::Done
}
