//! Tools that require MCP tasks (`execution.taskSupport = "required"`, such as
//! server-everything's `simulate-research-query`): every plain call to one fails (-32601),
//! and rein does not drive the tasks protocol the servers speak (rmcp's model follows a
//! different draft and drops the tool's `execution`), so such tools are not offered and
//! `rein mcp list` says why. rmcp does not pass the raw `tools/list` on, so a stdio server's
//! output is read on its way to rmcp ([`TaskSniffer`]) for the tools that say so.

use std::collections::HashSet;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use parking_lot::Mutex;
use tokio::io::{AsyncRead, ReadBuf};

/// Why a tool that requires tasks is not offered, for `rein mcp list`.
pub(crate) const TASKS_REQUIRED: &str =
    "it requires MCP tasks (execution.taskSupport = \"required\"), which rein does not run yet";

/// The longest line inspected: a longer one is passed on unread (no tool list is that big).
const LINE_LIMIT_BYTES: usize = 16 * 1024 * 1024;

/// The names of a server's tools that require tasks, as its last `tools/list` said.
#[derive(Debug, Clone, Default)]
pub(crate) struct TaskRequired(Arc<Mutex<HashSet<String>>>);

impl TaskRequired {
    /// Whether tool `name` requires tasks.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.0.lock().contains(name)
    }

    /// Notes what one JSON-RPC message says, when it answers `tools/list`.
    fn note(&self, message: &serde_json::Value) {
        let Some(tools) = message
            .get("result")
            .and_then(|r| r.get("tools"))
            .and_then(serde_json::Value::as_array)
        else {
            return;
        };
        let mut set = self.0.lock();
        for tool in tools {
            let Some(name) = tool.get("name").and_then(serde_json::Value::as_str) else {
                continue;
            };
            let required = tool
                .pointer("/execution/taskSupport")
                .and_then(serde_json::Value::as_str)
                == Some("required");
            if required {
                set.insert(name.to_owned());
            } else {
                set.remove(name);
            }
        }
    }
}

/// A stdio server's output on its way to rmcp: each line (one JSON-RPC message) that may
/// answer `tools/list` is parsed for the tools requiring tasks before rmcp gets its end.
pub(crate) struct TaskSniffer<R> {
    inner: R,
    line: Vec<u8>,
    /// The current line grew past [`LINE_LIMIT_BYTES`]: skipped until its end.
    skipping: bool,
    found: TaskRequired,
}

impl<R> TaskSniffer<R> {
    pub(crate) fn new(inner: R, found: TaskRequired) -> Self {
        TaskSniffer {
            inner,
            line: Vec::new(),
            skipping: false,
            found,
        }
    }

    fn take(&mut self, bytes: &[u8]) {
        for chunk in bytes.split_inclusive(|b| *b == b'\n') {
            let ends = chunk.ends_with(b"\n");
            if !self.skipping {
                self.line.extend_from_slice(chunk);
                if self.line.len() > LINE_LIMIT_BYTES {
                    self.skipping = true;
                    self.line = Vec::new();
                }
            }
            if ends {
                if !self.skipping && self.line.len() > 1 {
                    // Only a list that mentions tasks is worth parsing twice.
                    let mentions = self.line.windows(11).any(|w| w == b"taskSupport");
                    if mentions
                        && let Ok(message) = serde_json::from_slice::<serde_json::Value>(&self.line)
                    {
                        self.found.note(&message);
                    }
                }
                self.line.clear();
                self.skipping = false;
            }
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for TaskSniffer<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            let new = buf.filled()[before..].to_vec();
            self.take(&new);
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    #[tokio::test]
    async fn tools_requiring_tasks_are_noted_across_reads_and_lists() {
        let found = TaskRequired::default();
        let list = |required: bool| {
            let execution = if required { "required" } else { "optional" };
            format!(
                "{}\n",
                serde_json::json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": [
                    {"name": "plain", "inputSchema": {"type": "object"}},
                    {"name": "research", "inputSchema": {"type": "object"},
                     "execution": {"taskSupport": execution}}
                ]}})
            )
        };
        let text = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{}}}}\n{}",
            list(true)
        );
        // Read in small pieces: a message split across reads still counts.
        let (mut writer, reader) = tokio::io::duplex(7);
        let write = tokio::spawn(async move {
            tokio::io::AsyncWriteExt::write_all(&mut writer, text.as_bytes())
                .await
                .unwrap();
        });
        let mut sniffer = TaskSniffer::new(reader, found.clone());
        let mut out = String::new();
        sniffer.read_to_string(&mut out).await.unwrap();
        write.await.unwrap();
        assert!(out.ends_with("}]}}\n"), "passed on whole: {out}");
        assert!(found.contains("research") && !found.contains("plain"));
        // A later list where it no longer requires tasks.
        let later = list(false);
        let mut sniffer = TaskSniffer::new(later.as_bytes(), found.clone());
        sniffer.read_to_string(&mut out).await.unwrap();
        assert!(!found.contains("research"));
    }
}
