//! What a request brings along: files named with `@path` (read through the read_file tool,
//! so its rules hold: confinement, size limits, permissions) and the output of `!` commands
//! the person ran since the last request.

/// Characters that end an `@path` mention when they close it (`see @a.rs, then`).
const TRAILING_PUNCTUATION: &[char] = &[',', '.', ';', ':', '!', '?', ')', ']', '}', '"', '\''];

/// The paths named with `@` in `input`: words starting with `@` (so `me@host` is not one).
pub(crate) fn mentioned_paths(input: &str) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    for word in input.split_whitespace() {
        let Some(path) = word.strip_prefix('@') else {
            continue;
        };
        let path = path.trim_end_matches(TRAILING_PUNCTUATION);
        if !path.is_empty() && !paths.iter().any(|p| p == path) {
            paths.push(path.to_owned());
        }
    }
    paths
}

/// A file read for the request, as the model gets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Attached {
    /// The path as the person wrote it.
    pub(crate) path: String,
    /// What read_file returned.
    pub(crate) content: String,
}

/// The request the model gets: the shell outputs first (they came first), then what was
/// typed, then the files.
pub(crate) fn request(input: &str, shell_notes: &[String], files: &[Attached]) -> String {
    let mut out = String::new();
    for note in shell_notes {
        out.push_str(note);
        out.push_str("\n\n");
    }
    out.push_str(input);
    for file in files {
        out.push_str(&format!(
            "\n\n<attached file=\"{}\">\n{}\n</attached>",
            file.path,
            file.content.trim_end()
        ));
    }
    out
}

/// What the model is told about a command the person ran.
pub(crate) fn shell_note(command: &str, content: &str) -> String {
    format!(
        "I ran this command myself: `{command}`\n<command-output>\n{}\n</command-output>",
        content.trim_end()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_are_words_starting_with_an_at_sign() {
        assert_eq!(
            mentioned_paths("read @src/main.rs, and @README.md. Mail me@host.com @src/main.rs"),
            ["src/main.rs", "README.md"]
        );
        assert!(mentioned_paths("no @ here").is_empty());
    }

    #[test]
    fn a_request_carries_shell_output_and_files() {
        let text = request(
            "fix it",
            &[shell_note("ls", "a\nb\n")],
            &[Attached {
                path: "a".into(),
                content: "1\tx\n".into(),
            }],
        );
        assert_eq!(
            text,
            "I ran this command myself: `ls`\n<command-output>\na\nb\n</command-output>\n\n\
             fix it\n\n<attached file=\"a\">\n1\tx\n</attached>"
        );
    }
}
