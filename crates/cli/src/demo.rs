//! `rein --demo`: rein fixes a small Python project in a temporary directory, with the model's
//! side played back from a recording shipped in the binary. No network, no key.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use rein_core::agent::Events;
use rein_core::build::AgentBuilder;
use rein_core::face::ReplayProvider;
use rein_core::permissions::PermissionMode;
use tokio_util::sync::CancellationToken;

use crate::exit::Exit;
use crate::{interrupt, render};

/// The sample project, copied into a fresh directory for each demo.
const PROJECT: [(&str, &str); 2] = [
    ("main.py", include_str!("../demo/project/main.py")),
    ("utils.py", include_str!("../demo/project/utils.py")),
];
/// The model's recorded replies.
const CASSETTE: &str = include_str!("../demo/fix-import.jsonl");
/// The request the recording answers.
const REQUEST: &str = "read main.py and fix the broken import";

/// The program the demo's recording runs to check its fix.
const PYTHON: &str = "python3";

/// Runs the demo.
pub(crate) async fn run() -> Exit {
    // The recording ends by quoting what `python3 main.py` printed: without python3 the
    // replayed answer would claim output the command never gave.
    if !on_path(PYTHON, std::env::var_os("PATH").as_deref()) {
        render::error(&format!(
            "the demo needs {PYTHON} on PATH: it fixes a small Python program and runs it to check \
             the fix. Install Python 3 (e.g. `apt install python3` or `brew install python`) and \
             run `rein --demo` again."
        ));
        return Exit::Runtime;
    }
    let dir = match tempfile::Builder::new().prefix("rein-demo-").tempdir() {
        Ok(dir) => dir.keep(),
        Err(e) => {
            render::error(&format!("cannot create a directory for the demo: {e}"));
            return Exit::Runtime;
        }
    };
    let workspace = match write_project(&dir) {
        Ok(workspace) => workspace,
        Err(e) => {
            render::error(&format!(
                "cannot write the demo project to {}: {e}",
                dir.display()
            ));
            return Exit::Runtime;
        }
    };
    let provider = match ReplayProvider::parse(CASSETTE, "the demo recording") {
        Ok(provider) => provider,
        Err(e) => {
            render::error(&e.to_string());
            return Exit::Runtime;
        }
    };
    let style = render::Style::for_stderr();
    // Styled text is rein's own: only the path (foreign text) is made harmless, so the
    // styling's escapes reach the terminal instead of turning into visible `␛`.
    let _ = writeln!(
        std::io::stderr().lock(),
        "{}\nA copy of a small Python project is in {}; its main.py has a broken import.\n\
         The model's side is played back from a recording (offline, no API key), but every tool\n\
         call is real: rein reads, edits and runs the files there.\n\n{} {REQUEST}\n",
        style.bold("rein demo"),
        render::neutralize(&workspace.display().to_string()),
        style.bold(">"),
    );

    // The demo shows rein editing and running code, as the person asked it to.
    let built = AgentBuilder::new(&workspace, "demo", rein_core::face::ProviderKind::OpenAi)
        .provider(Arc::new(provider))
        .mode(PermissionMode::Yolo)
        .settings(|s| s.max_rounds = 10)
        // A recording has no window of its own; the demo's conversation is short.
        .context(|c| c.window_tokens = Some(128_000))
        .build();
    let mut agent = match built {
        Ok(agent) => agent,
        Err(e) => {
            render::error(&e.to_string());
            return Exit::Runtime;
        }
    };
    let cancel = CancellationToken::new();
    let interrupts = interrupt::install(
        cancel.clone(),
        agent.tool_context().processes().clone(),
        None,
    );
    let events = Events::new(render::TextProgress::new());
    let outcome = agent.run_turn(REQUEST, &events, cancel).await;
    if let Some(error) = outcome.error() {
        render::error(&error.to_string());
    }
    render::notice("");
    render::answer(&outcome.text);
    render::notice(&format!(
        "\nThe fixed project is in {} (try: cd {} && python3 main.py).\n\
         To use rein on your own code, set an API key (see rein --help) and run: rein -p \"your request\"",
        workspace.display(),
        workspace.display()
    ));
    agent.tool_context().processes().kill_all().await;
    interrupts
        .exit()
        .unwrap_or_else(|| Exit::for_stop(outcome.stop()))
}

/// Whether an executable file named `program` is in one of the directories of `path`.
fn on_path(program: &str, path: Option<&std::ffi::OsStr>) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.is_some_and(|path| {
        std::env::split_paths(path).any(|dir| {
            std::fs::metadata(dir.join(program))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// Writes the sample project into `dir`, returning its canonical path.
fn write_project(dir: &Path) -> std::io::Result<std::path::PathBuf> {
    for (name, content) in PROJECT {
        std::fs::write(dir.join(name), content)?;
    }
    dir.canonicalize()
}
