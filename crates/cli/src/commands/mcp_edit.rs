//! `rein mcp add` and `rein mcp remove`: a server's table written into (or taken out of) your
//! config file or the project's, comments and layout kept (see `rein_core::mcp_edit`).

use std::path::PathBuf;

use rein_core::config;
use rein_core::mcp_edit::{self, NewServer};

use crate::args::McpScope;
use crate::exit::Exit;
use crate::render;
use crate::setup::process_env;

/// The config file of `scope`.
fn config_file(scope: McpScope) -> Result<PathBuf, String> {
    match scope {
        McpScope::User => {
            let home = std::env::home_dir();
            config::default_rein_home(&process_env, home.as_deref())
                .map(|home| home.join("config.toml"))
                .ok_or_else(|| "cannot find the home directory: set REIN_HOME".to_owned())
        }
        McpScope::Project => std::env::current_dir()
            .map(|dir| {
                config::find_project_root(&dir)
                    .dir
                    .join(".rein/config.toml")
            })
            .map_err(|e| format!("cannot determine the working directory: {e}")),
    }
}

/// `KEY=VALUE` pairs; the error names the one without `=`.
fn pairs(items: &[String], flag: &str) -> Result<Vec<(String, String)>, String> {
    items
        .iter()
        .map(|item| match item.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_owned(), v.to_owned())),
            _ => Err(format!("{flag} {item:?}: write it as NAME=VALUE")),
        })
        .collect()
}

/// Runs `rein mcp add`.
pub(crate) fn add(
    name: &str,
    url: Option<&str>,
    scope: McpScope,
    env: &[String],
    header: &[String],
    command: &[String],
) -> Exit {
    let server = match (url, command.split_first()) {
        (Some(url), None) => match pairs(header, "--header") {
            Ok(headers) => NewServer::Http {
                url: url.to_owned(),
                headers,
            },
            Err(e) => return usage(&e),
        },
        (None, Some((program, args))) => match pairs(env, "--env") {
            Ok(env) => NewServer::Stdio {
                command: program.clone(),
                args: args.to_vec(),
                env,
            },
            Err(e) => return usage(&e),
        },
        (Some(_), Some(_)) => return usage("give either --url URL or -- CMD ARGS, not both"),
        (None, None) => {
            return usage(&format!(
                "say how to reach `{name}`: rein mcp add {name} -- CMD ARGS, or rein mcp add \
                 {name} --url URL"
            ));
        }
    };
    let path = match config_file(scope) {
        Ok(path) => path,
        Err(e) => {
            render::error(&e);
            return Exit::Runtime;
        }
    };
    match mcp_edit::add_server(&path, name, &server) {
        Ok(()) => {
            let mut note = format!("added MCP server `{name}` to {}", path.display());
            if scope == McpScope::Project {
                note.push_str("; a project's servers start once it is trusted (rein trust)");
            }
            render::notice(&note);
            Exit::Done
        }
        Err(
            e @ (mcp_edit::McpEditError::Exists { .. }
            | mcp_edit::McpEditError::NoName
            | mcp_edit::McpEditError::BadUrl(_)),
        ) => usage(&e.to_string()),
        Err(e) => {
            render::error(&e.to_string());
            Exit::Runtime
        }
    }
}

/// Runs `rein mcp remove`.
pub(crate) fn remove(name: &str, scope: Option<McpScope>) -> Exit {
    let scopes = match scope {
        Some(scope) => vec![scope],
        None => vec![McpScope::Project, McpScope::User],
    };
    let mut looked = Vec::new();
    for scope in scopes {
        let path = match config_file(scope) {
            Ok(path) => path,
            Err(e) => {
                render::error(&e);
                return Exit::Runtime;
            }
        };
        match mcp_edit::remove_server(&path, name) {
            Ok(true) => {
                render::notice(&format!(
                    "removed MCP server `{name}` from {}",
                    path.display()
                ));
                return Exit::Done;
            }
            Ok(false) => looked.push(path.display().to_string()),
            Err(e) => {
                render::error(&e.to_string());
                return Exit::Runtime;
            }
        }
    }
    let mut message = format!("no MCP server `{name}` in {}", looked.join(" nor in "));
    if let Ok(dir) = std::env::current_dir() {
        let json = config::find_project_root(&dir)
            .dir
            .join(rein_core::mcp::MCP_JSON);
        if rein_core::mcp::read_mcp_json(&json)
            .servers
            .iter()
            .any(|s| s.name == name)
        {
            message.push_str(&format!(
                " (it is in {}, Claude Code's file, which rein reads but does not edit)",
                json.display()
            ));
        }
    }
    usage(&message)
}

fn usage(message: &str) -> Exit {
    render::error(message);
    Exit::Usage
}
