//! Where the one-shot prompt comes from: the flag, or stdin for `-p -` or a pipe.

use std::io::{IsTerminal, Read};

/// The request to run once, or `None` for an interactive session.
pub(crate) fn one_shot_prompt(flag: Option<&str>) -> Result<Option<String>, String> {
    match flag {
        Some("-") => read_stdin().map(Some),
        // A prompt on the command line: stdin is never waited on.
        Some(text) if text.trim().is_empty() => Err("the prompt given with -p is empty".to_owned()),
        Some(text) => Ok(Some(text.to_owned())),
        None if !std::io::stdin().is_terminal() => read_stdin().map(Some),
        None => Ok(None),
    }
}

fn read_stdin() -> Result<String, String> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read the prompt from stdin: {e}"))?;
    if text.trim().is_empty() {
        return Err("the prompt read from stdin is empty".to_owned());
    }
    Ok(text)
}
