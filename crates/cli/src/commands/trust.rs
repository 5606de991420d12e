//! `rein trust [DIR]`: lets a project's hooks and MCP servers run (a headless run cannot
//! ask); `--revoke` withdraws it, `--list` shows the trusted projects.

use std::path::Path;

use rein_core::config;
use rein_core::trust::TrustStore;

use crate::exit::Exit;
use crate::render;
use crate::setup::process_env;

/// Runs `rein trust`.
pub(crate) fn run(dir: Option<&Path>, revoke: bool, list: bool) -> Exit {
    let home = std::env::home_dir();
    let Some(rein_home) = config::default_rein_home(&process_env, home.as_deref()) else {
        render::error("cannot find the home directory: set REIN_HOME");
        return Exit::Runtime;
    };
    let store = TrustStore::new(&rein_home, home.as_deref());
    if list {
        return match store.list() {
            Ok(projects) => {
                for project in projects {
                    render::stdout_line(&project.display().to_string());
                }
                Exit::Done
            }
            Err(e) => {
                render::error(&format!("cannot read the trusted projects: {e}"));
                Exit::Runtime
            }
        };
    }
    let dir = match dir {
        Some(dir) => dir.to_path_buf(),
        None => match std::env::current_dir() {
            Ok(dir) => config::find_project_root(&dir).dir,
            Err(e) => {
                render::error(&format!("cannot determine the working directory: {e}"));
                return Exit::Runtime;
            }
        },
    };
    if revoke {
        return match store.revoke(&dir) {
            Ok(true) => {
                render::notice(&format!("{} is no longer trusted", dir.display()));
                Exit::Done
            }
            Ok(false) => {
                render::notice(&format!("{} was not trusted", dir.display()));
                Exit::Done
            }
            Err(e) => {
                render::error(&format!("cannot update the trusted projects: {e}"));
                Exit::Runtime
            }
        };
    }
    match store.trust(&dir) {
        Ok((project, newly)) => {
            let note = if newly {
                "now trusted"
            } else {
                "already trusted"
            };
            render::notice(&format!(
                "{}: {note}; {}",
                project.display(),
                what_applies(&project)
            ));
            Exit::Done
        }
        Err(e) => {
            render::error(&format!("cannot trust {}: {e}", dir.display()));
            if e.kind() == std::io::ErrorKind::NotFound {
                Exit::Usage
            } else {
                Exit::Runtime
            }
        }
    }
}

/// The project's files that trust lets apply, among those that exist.
const PROJECT_FILES: [(&str, &str); 4] = [
    (
        ".rein/config.toml",
        "hooks, MCP servers, allow rules and endpoint settings",
    ),
    (".claude/settings.json", "hooks and allow rules"),
    (".mcp.json", "MCP servers"),
    (".env", "endpoint settings"),
];

/// What trusting `project` lets apply, naming only the files it has.
fn what_applies(project: &Path) -> String {
    let present: Vec<String> = PROJECT_FILES
        .iter()
        .filter(|(file, _)| project.join(file).is_file())
        .map(|(file, what)| format!("{what} of {}", project.join(file).display()))
        .collect();
    if present.is_empty() {
        "it has no configuration of its own yet; hooks, MCP servers and settings its \
         .rein/config.toml, .claude/settings.json, .mcp.json or .env will hold then apply"
            .to_owned()
    } else {
        format!("these now apply: {}", present.join("; "))
    }
}
