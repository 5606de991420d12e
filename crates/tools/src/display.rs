//! What a person sees of a tool call, beside the text the model gets: a typed payload the
//! front-ends render (they never parse the model's text), the preview an approval shows, and
//! the files a call changed, identified so an undo can be built.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

/// The facts a renderer shows for a finished call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Display {
    /// Plain text: show the result's content as it is (errors, and tools without a better
    /// payload).
    #[default]
    Text,
    /// Lines of a file were shown to the model.
    FileRead {
        /// The file, as the model named it back.
        path: String,
        /// The first line shown (from 1; 0 for an empty file).
        first_line: u64,
        /// How many lines were shown.
        lines_shown: u64,
        /// How many lines the file has, when rein counted them (a huge file is not read to
        /// its end).
        #[serde(skip_serializing_if = "Option::is_none")]
        total_lines: Option<u64>,
        /// Whether more of the file follows the lines shown, or lines were cut.
        truncated: bool,
    },
    /// A file was written or edited.
    FileEdit {
        /// The file, as the model named it back.
        path: String,
        /// The change as a unified diff (empty when the old content was too big to compare).
        diff: String,
        /// Lines added.
        added: u64,
        /// Lines removed.
        removed: u64,
        /// Whether the file was created.
        created: bool,
    },
    /// A command ran.
    Command {
        /// The command.
        command: String,
        /// Its exit code; `None` when it was stopped by a signal or rein stopped it.
        #[serde(skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
        /// How long it ran.
        #[serde(rename = "duration_ms", serialize_with = "as_millis")]
        duration: Duration,
        /// Whether rein stopped it at its time limit.
        timed_out: bool,
        /// The end of its output (at most a few lines), for a glance.
        output_tail: String,
        /// How many lines it printed in all.
        output_lines: u64,
        /// Its whole output when rein held all of it, for a person to page through; empty
        /// when `saved_to` holds it. Not in the JSON events, which stay small.
        #[serde(skip)]
        output: String,
        /// The file holding the whole output, when it was too big to show.
        #[serde(skip_serializing_if = "Option::is_none")]
        saved_to: Option<String>,
        /// What the OS sandbox refused the command ("the sandbox refused a write to
        /// /home/u/.bashrc"), when its failure points there.
        #[serde(skip_serializing_if = "Option::is_none")]
        sandbox_refusal: Option<String>,
        /// The connections the person refused this command when rein's sandbox proxy asked
        /// about them (a headless run lists each in `permission_denials`).
        #[serde(skip_serializing_if = "Vec::is_empty")]
        hosts_refused: Vec<HostPort>,
    },
    /// A search ran.
    Search {
        /// Matching lines (or, counting files, matching files).
        matches: u64,
        /// Files with a match.
        files: u64,
    },
    /// Files were listed.
    Listing {
        /// How many.
        count: u64,
        /// Whether the list was cut at its limit.
        truncated: bool,
    },
    /// A web page was fetched.
    WebPage {
        /// The URL the page came from (after redirects).
        url: String,
        /// The HTTP status.
        status: u16,
        /// The content type the server named.
        content_type: String,
        /// Bytes downloaded.
        bytes: u64,
        /// Whether the page was bigger than rein downloads.
        truncated: bool,
    },
    /// An image was given to the model.
    Image {
        /// The file (or source) it came from.
        path: String,
        /// Its media type as sent (`image/png`).
        media_type: String,
        /// Its size as sent, in pixels.
        width: u32,
        /// Its height as sent, in pixels.
        height: u32,
        /// Bytes sent.
        bytes: u64,
        /// Set when it was scaled down to fit the provider's limits: the original size.
        #[serde(skip_serializing_if = "Option::is_none")]
        resized_from: Option<(u32, u32)>,
    },
}

/// What a call would do, shown before the person approves it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Preview {
    /// The change an edit or a write would make.
    Diff {
        /// The file, as the model named it.
        path: String,
        /// The unified diff.
        diff: String,
        /// Whether the file would be created.
        created: bool,
    },
    /// The whole command a shell call would run, and where.
    Command {
        /// The command.
        command: String,
        /// The directory it would run in.
        cwd: String,
    },
    /// A connection a sandboxed command wants to make through rein's network proxy.
    Connection {
        /// The host, as the command named it.
        host: String,
        /// The port.
        port: u16,
    },
}

/// A file a call changed, with its content before and after identified by hash, so an undo
/// can find (or refuse to clobber) the right version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileChange {
    /// The file (absolute).
    pub path: PathBuf,
    /// The content before the change (`None`: the file did not exist).
    pub before: Option<ContentId>,
    /// The content after the change.
    pub after: ContentId,
}

/// A content hash: `xxh3:` and 16 hex digits; for a file too big to hash whole, `sample:`
/// and the hash of its size, time and sampled blocks (see read_file's stamps).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct ContentId(String);

impl ContentId {
    /// The identity of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        ContentId(format!("xxh3:{:016x}", xxhash_rust::xxh3::xxh3_64(bytes)))
    }

    /// The identity of a file too big to hash whole, from its sampled stamp.
    pub(crate) fn sampled(stamp_hash: u64) -> Self {
        ContentId(format!("sample:{stamp_hash:016x}"))
    }

    /// The identity as written (`xxh3:0123456789abcdef`).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Lines added and removed by a unified diff. The `---`/`+++` file headers come before the
/// first hunk; inside a hunk, a removed `-- comment` reads `--- comment` and is counted.
pub(crate) fn diff_counts(diff: &str) -> (u64, u64) {
    let mut added = 0;
    let mut removed = 0;
    let mut in_hunk = false;
    for line in diff.lines() {
        if line.starts_with("@@") {
            in_hunk = true;
        } else if !in_hunk {
            continue;
        } else if line.starts_with('+') {
            added += 1;
        } else if line.starts_with('-') {
            removed += 1;
        }
    }
    (added, removed)
}

fn as_millis<S: serde::Serializer>(duration: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX))
}

/// A host and the port a command reached it on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostPort {
    /// The host as the command named it.
    pub host: String,
    /// The port.
    pub port: u16,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_serialise_with_a_kind() {
        let read = Display::FileRead {
            path: "a.rs".into(),
            first_line: 1,
            lines_shown: 0,
            total_lines: Some(0),
            truncated: false,
        };
        assert_eq!(
            serde_json::to_value(&read).unwrap(),
            serde_json::json!({"kind": "file_read", "path": "a.rs", "first_line": 1, "lines_shown": 0, "total_lines": 0, "truncated": false})
        );
        assert_eq!(
            serde_json::to_value(Display::Text).unwrap(),
            serde_json::json!({"kind": "text"})
        );
    }

    #[test]
    fn content_ids_and_diff_counts() {
        assert_eq!(ContentId::of(b"x"), ContentId::of(b"x"));
        assert_ne!(ContentId::of(b"x"), ContentId::of(b"y"));
        assert!(ContentId::of(b"").as_str().starts_with("xxh3:"));
        assert_eq!(
            diff_counts("--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new\n+more\n"),
            (2, 1)
        );
        // SQL comments and C increments look like headers but are changed lines.
        assert_eq!(
            diff_counts("--- q.sql\n+++ q.sql\n@@ -1,2 +1,2 @@\n--- old note\n+++i;\n x\n"),
            (1, 1)
        );
    }
}
