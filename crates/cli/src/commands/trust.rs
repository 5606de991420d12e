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
                "{}: {note}; its hooks and MCP servers (in {}) may run, and its .env endpoint settings apply",
                project.display(),
                project.join(".rein/config.toml").display()
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
