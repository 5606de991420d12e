//! `rein config --show`: the configuration in effect in this directory, each part with
//! where it came from (built-in default, a file, the environment, a flag).

use crate::args::Args;
use crate::exit::Exit;
use crate::render;
use crate::setup;

/// Prints the merged configuration.
pub(crate) fn show(args: &Args) -> Exit {
    let (config, _) = match setup::configuration(args) {
        Ok(found) => found,
        Err(error) => return error.report(),
    };
    let mut out = String::from("Files read, in order (later ones win):\n");
    for file in &config.files {
        out.push_str(&format!("  {}\n", file.display()));
    }
    if let Some(file) = &config.dotenv_file {
        out.push_str(&format!(
            "  {} (fills gaps in the environment)\n",
            file.display()
        ));
    }
    out.push_str("\nSettings:\n");
    for (key, value, source) in config.settings_shown() {
        out.push_str(&format!("  {key} = {value}  ({source})\n"));
    }
    let key = match config.api_key_origin() {
        Some(origin) => format!("set, from {origin}"),
        None => "not set".to_owned(),
    };
    out.push_str(&format!("  api key: {key}\n"));
    out.push_str("\nPermission rules:\n");
    let lists = [
        ("deny", &config.rules.deny),
        ("ask", &config.rules.ask),
        ("allow", &config.rules.allow),
    ];
    let mut any = false;
    for (list, rules) in lists {
        for rule in rules {
            any = true;
            out.push_str(&format!("  {list:5} {}  ({})\n", rule.text, rule.source));
        }
    }
    if !any {
        out.push_str("  (none)\n");
    }
    if !config.hooks.is_empty() {
        out.push_str("\nHooks:\n");
        for hook in &config.hooks {
            let matcher = hook.matcher.as_deref().unwrap_or("*");
            out.push_str(&format!(
                "  {} [{matcher}] {}  ({})\n",
                hook.event, hook.command, hook.source
            ));
        }
    }
    if !config.env.is_empty() {
        out.push_str("\nVariables for commands and hooks:\n");
        for entry in &config.env {
            out.push_str(&format!(
                "  {}={}  ({})\n",
                entry.name, entry.value, entry.source
            ));
        }
    }
    let table_keys = config.table_keys();
    if !table_keys.is_empty() {
        out.push_str("\nTable keys, each with the value in effect and where it comes from:\n");
        for shown in &table_keys {
            let sources: Vec<String> = shown.sources.iter().map(ToString::to_string).collect();
            match &shown.value {
                Some(value) => out.push_str(&format!(
                    "  {} = {value}  ({})\n",
                    shown.key,
                    sources.join(", ")
                )),
                None => out.push_str(&format!(
                    "  {}: not set (rein's default applies)\n",
                    shown.key
                )),
            }
            for left in &shown.left_out {
                out.push_str(&format!(
                    "    ignored: {} in {}: {}\n",
                    left.written, left.source, left.reason
                ));
            }
        }
    }
    if !config.mcp_servers.is_empty() {
        out.push_str("\nMCP servers:\n");
        for server in &config.mcp_servers {
            out.push_str(&format!("  {}  ({})\n", server.name, server.source));
        }
    }
    // Table keys left out are marked beside their key above.
    let mut left_out: Vec<String> = config.claude_ignored.clone();
    left_out.extend(rein_core::build::untrusted_warning_besides_tables(&config));
    if !left_out.is_empty() {
        out.push_str("\nLeft out:\n");
        for line in left_out {
            out.push_str(&format!("  {line}\n"));
        }
    }
    render::stdout_line(out.trim_end());
    Exit::Done
}
