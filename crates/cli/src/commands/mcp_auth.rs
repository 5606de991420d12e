//! `rein mcp login NAME` and `rein mcp logout NAME`: signing in to a server reached by URL
//! (MCP's OAuth flow, see `rein_mcp::auth`) and forgetting the sign-in.

use std::path::PathBuf;
use std::time::Duration;

use rein_core::mcp::{self, LoginError, ServerConfig};

use crate::args::Args;
use crate::exit::Exit;
use crate::render;
use crate::setup::{self, SetupError, process_env};

/// The server `name` as configured here, and where sign-ins are kept; the error is the
/// message and the exit status.
fn find(args: &Args, name: &str) -> Result<(Option<ServerConfig>, PathBuf, Vec<String>), Exit> {
    let (config, _cwd) = setup::configuration(args).map_err(|e| match e {
        SetupError::Usage(message) => {
            render::notice(&message);
            Exit::Usage
        }
        SetupError::Runtime(message) => {
            render::error(&message);
            Exit::Runtime
        }
    })?;
    let plan = mcp::plan(&config, &process_env);
    let server = plan.servers.into_iter().find(|s| s.name == name);
    Ok((
        server,
        config.rein_home.join(mcp::MCP_AUTH_DIR),
        plan.awaiting_trust,
    ))
}

/// Runs `rein mcp login NAME`.
pub(crate) async fn login(args: &Args, name: &str, wait: Duration) -> Exit {
    let (server, dir, awaiting_trust) = match find(args, name) {
        Ok(found) => found,
        Err(exit) => return exit,
    };
    let Some(server) = server else {
        render::error(&if awaiting_trust.iter().any(|n| n == name) {
            format!(
                "MCP server `{name}` is this project's, which waits for `rein trust`: trust the \
                 project first"
            )
        } else {
            format!(
                "no MCP server `{name}` is configured here (`rein mcp list` shows those that \
                 are; `rein mcp add {name} --url URL` adds one)"
            )
        });
        return Exit::Usage;
    };
    let pending = match mcp::start_login(&server, &dir).await {
        Ok(pending) => pending,
        Err(e) => return failed(&e),
    };
    render::notice(&format!(
        "To sign in to `{name}`, open this address in your browser:\n\n  {}\n",
        pending.url
    ));
    if let Err(why) = open_browser(&pending.url) {
        render::notice(&format!(
            "(no browser was opened: {why}; open the address yourself)"
        ));
    }
    render::notice(&format!(
        "Waiting for the sign-in to come back (up to {} s; Ctrl+C gives up)...",
        wait.as_secs()
    ));
    match pending.finish(wait).await {
        Ok(signed_in) => {
            let scopes = if signed_in.scopes.is_empty() {
                String::new()
            } else {
                format!(" (scopes: {})", signed_in.scopes.join(" "))
            };
            render::notice(&format!(
                "Signed in to `{name}`{scopes}. The tokens are kept in {} (mode 0600); rein \
                 refreshes them when they expire. `rein mcp logout {name}` forgets them.",
                signed_in.path.display()
            ));
            Exit::Done
        }
        Err(e) => failed(&e),
    }
}

/// Says why the login failed; the exit status for it.
fn failed(error: &LoginError) -> Exit {
    render::error(&format!("login failed: {error}"));
    match error {
        LoginError::NotHttp(_) | LoginError::StaticHeader(_) => Exit::Usage,
        _ => Exit::Runtime,
    }
}

/// Opens `url` in the person's browser: `$BROWSER` (`%s` stands for the address, else it
/// is the last argument), else the desktop's opener. Does not wait for it.
fn open_browser(url: &str) -> Result<(), String> {
    let browser = process_env("BROWSER").filter(|b| !b.trim().is_empty());
    let (program, args): (String, Vec<String>) = match &browser {
        // Several may be given, separated by `:`; the first is tried.
        Some(browser) => {
            let first = browser.split(':').next().unwrap_or_default();
            let mut words = first.split_whitespace().map(str::to_owned);
            let program = words.next().ok_or("$BROWSER is empty")?;
            let mut args: Vec<String> = words.collect();
            if args.iter().any(|a| a.contains("%s")) {
                args = args.iter().map(|a| a.replace("%s", url)).collect();
            } else {
                args.push(url.to_owned());
            }
            (program, args)
        }
        None if cfg!(target_os = "macos") => ("open".to_owned(), vec![url.to_owned()]),
        None if std::env::var_os("DISPLAY").is_some()
            || std::env::var_os("WAYLAND_DISPLAY").is_some() =>
        {
            ("xdg-open".to_owned(), vec![url.to_owned()])
        }
        None => return Err("no $BROWSER and no display".to_owned()),
    };
    let mut child = std::process::Command::new(&program)
        .args(&args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run `{program}`: {e}"))?;
    // Reaped in the background: a browser may stay open long after the login.
    std::thread::spawn(move || child.wait());
    Ok(())
}

/// Runs `rein mcp logout NAME`.
pub(crate) fn logout(args: &Args, name: &str) -> Exit {
    // A server removed from the configuration may still have a sign-in: forget it too.
    let dir = match find(args, name) {
        Ok((_, dir, _)) => dir,
        Err(exit) => return exit,
    };
    match mcp::logout(&dir, name) {
        Ok(true) => {
            render::notice(&format!(
                "Signed out of `{name}`: its tokens were removed from {}.",
                mcp::sign_in_path(&dir, name).display()
            ));
            Exit::Done
        }
        Ok(false) => {
            render::notice(&format!(
                "No sign-in was stored for `{name}`: nothing to remove."
            ));
            Exit::Done
        }
        Err(e) => {
            render::error(&format!(
                "cannot remove {}: {e}",
                mcp::sign_in_path(&dir, name).display()
            ));
            Exit::Runtime
        }
    }
}
