//! What a tool call runs in: the workspace, the current directory, cancellation and the
//! record of files read and changed.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use crate::bash::{BackgroundShells, ProcessTracker};
use crate::sandbox::Sandbox;

/// Tool results above this many characters are offloaded to a file (see the output budget).
pub const DEFAULT_OUTPUT_BUDGET_CHARS: usize = 30_000;
/// The largest file a tool result is saved to (64 MiB); past it the file says where it was cut.
pub const DEFAULT_OFFLOAD_MAX_BYTES: u64 = 64 * 1024 * 1024;
/// How long a bash command may run when the model does not say.
pub const BASH_DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// What rein knew about a file when the model last read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    /// A hash of the whole content at read time.
    pub content_hash: u64,
    /// The modification time at read time.
    pub mtime: Option<SystemTime>,
}

/// Settings a tool context is built from.
#[derive(Debug, Clone)]
pub struct ToolConfig {
    /// The directory the agent works in; file tools refuse paths outside it.
    pub workspace_root: PathBuf,
    /// Directories outside the workspace that file tools may still touch.
    pub extra_allowed_dirs: Vec<PathBuf>,
    /// Where large tool outputs are written in full.
    pub offload_dir: PathBuf,
    /// Tool results above this many characters are offloaded.
    pub output_budget_chars: usize,
    /// The most bytes saved of one tool result (a command's output is saved as it arrives);
    /// what comes after is not saved, and the file ends with a line saying so.
    pub offload_max_bytes: u64,
    /// The bash timeout when the model gives none.
    pub bash_default_timeout: Duration,
    /// The home directory, for `~` expansion (passed in, never read from the environment here).
    pub home_dir: Option<PathBuf>,
    /// Variables removed from the environment of the commands the tools run (secrets).
    pub env_remove: Vec<String>,
    /// Variables commands get besides rein's environment (a settings file's `env`).
    pub env_set: Vec<(String, String)>,
    /// The OS sandbox commands run in.
    pub sandbox: Sandbox,
    /// Files a search must not read on its own (rules protect them: reading them asks or is
    /// refused); `None` protects nothing.
    pub read_guard: Option<ReadGuard>,
    /// Masks the secrets in command outputs saved to disk (background commands' files);
    /// `None` saves them as printed.
    pub output_mask: Option<crate::mask::SharedMask>,
    /// Whether the model takes images: read_file then gives it pictures, not a refusal.
    pub vision: bool,
    /// Where read_file, edit_file and write_file read and write text files instead of the
    /// disk (an editor's buffers, over ACP); `None`: the disk.
    pub client_files: Option<Arc<dyn ClientFiles>>,
}

/// Text files as a front-end holds them (an editor's open buffers, unsaved changes
/// included). The file tools go through it only after their own checks: the path is
/// confined to the workspace (or approved) and the permission decision is rein's either way.
/// Called from a blocking thread.
pub trait ClientFiles: Send + Sync + std::fmt::Debug {
    /// The text of `path` (absolute) as the front-end has it.
    fn read(&self, path: &Path) -> std::io::Result<String>;
    /// Replaces the text of `path` (absolute), creating the file when it does not exist.
    fn write(&self, path: &Path, content: &str) -> std::io::Result<()>;
}

/// Says which files rules protect from being read without asking (`.env`, keys, what a deny
/// rule names): tools that read many files at once (grep) skip them and say so.
#[derive(Clone)]
pub struct ReadGuard(std::sync::Arc<dyn Fn(&Path) -> bool + Send + Sync>);

impl ReadGuard {
    /// A guard protecting the files for which `protects` (given an absolute path) is true.
    pub fn new(protects: impl Fn(&Path) -> bool + Send + Sync + 'static) -> Self {
        ReadGuard(std::sync::Arc::new(protects))
    }

    /// Whether `path` (absolute) is protected.
    pub fn protects(&self, path: &Path) -> bool {
        (self.0)(path)
    }
}

impl std::fmt::Debug for ReadGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReadGuard")
    }
}

impl ToolConfig {
    /// Settings with the defaults: no extra allowed directories, the default output budget,
    /// offload file size and bash timeout, and no home directory (so `~` is not expanded).
    pub fn new(workspace_root: impl Into<PathBuf>, offload_dir: impl Into<PathBuf>) -> Self {
        ToolConfig {
            workspace_root: workspace_root.into(),
            extra_allowed_dirs: Vec::new(),
            offload_dir: offload_dir.into(),
            output_budget_chars: DEFAULT_OUTPUT_BUDGET_CHARS,
            offload_max_bytes: DEFAULT_OFFLOAD_MAX_BYTES,
            bash_default_timeout: BASH_DEFAULT_TIMEOUT,
            home_dir: None,
            env_remove: Vec::new(),
            env_set: Vec::new(),
            sandbox: Sandbox::off(),
            read_guard: None,
            output_mask: None,
            vision: false,
            client_files: None,
        }
    }
}

/// How a running call is getting on, for the person (never for the model).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Progress {
    /// A command is still running and printing.
    Output {
        /// Bytes printed so far.
        bytes: u64,
        /// Lines printed so far.
        lines: u64,
        /// The latest line, shortened.
        last_line: String,
        /// The last few lines, each shortened, for a live view of the output's end (the
        /// person's; not in the JSON events, which carry `last_line`).
        #[serde(skip)]
        tail: String,
    },
    /// A tool that reports how far it has got (an MCP server's progress notifications).
    Steps {
        /// How far, in the tool's own unit.
        progress: f64,
        /// Out of how much, when the tool says.
        #[serde(skip_serializing_if = "Option::is_none")]
        total: Option<f64>,
        /// What it is doing now, when it says.
        #[serde(skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
}

/// Where a call reports its progress; set per call by the agent.
pub type ProgressSink = Arc<dyn Fn(Progress) + Send + Sync>;

/// Shared state for the tool calls of one agent. Cheap to clone: clones share the state.
#[derive(Clone)]
pub struct ToolContext {
    config: Arc<ToolConfig>,
    /// The directories file tools may touch, resolved once (see [`crate::paths`]).
    allowed_dirs: Arc<std::sync::OnceLock<Vec<PathBuf>>>,
    cwd: Arc<Mutex<PathBuf>>,
    reads: Arc<Mutex<HashMap<PathBuf, FileStamp>>>,
    changed: Arc<Mutex<BTreeSet<PathBuf>>>,
    cancel: CancellationToken,
    processes: ProcessTracker,
    background: BackgroundShells,
    progress: Option<ProgressSink>,
    approved: Option<Arc<PathBuf>>,
    scope: Arc<CallScope>,
    /// The person let this one call run outside the sandbox.
    outside_sandbox: bool,
}

/// What the agent hands one call: who it is, and what was already worked out about it.
#[derive(Debug, Clone, Default)]
pub struct CallScope {
    /// The call's id, as the model gave it (a sub-agent's events name it).
    pub call_id: String,
    /// A `bash` call's command line as the permission decision analysed it: the tool uses
    /// it rather than analysing the line a second time.
    pub shell: Option<Arc<rein_shell::Analyzed>>,
}

impl std::fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("config", &self.config)
            .field("cwd", &self.cwd())
            .finish_non_exhaustive()
    }
}

impl ToolContext {
    /// A fresh context: current directory at the workspace root, nothing read or changed.
    pub fn new(config: ToolConfig) -> Self {
        let cwd = config.workspace_root.clone();
        ToolContext {
            config: Arc::new(config),
            allowed_dirs: Arc::default(),
            cwd: Arc::new(Mutex::new(cwd)),
            reads: Arc::default(),
            changed: Arc::default(),
            cancel: CancellationToken::new(),
            processes: ProcessTracker::new(),
            background: BackgroundShells::new(),
            progress: None,
            approved: None,
            scope: Arc::default(),
            outside_sandbox: false,
        }
    }

    /// A context for a helper agent: the same settings, processes, background commands and
    /// record of changed files (so they are stopped and reported with this one's), but its
    /// own current directory (starting at this one's) and record of reads (it has read
    /// nothing yet).
    pub fn for_helper(&self) -> Self {
        ToolContext {
            cwd: Arc::new(Mutex::new(self.cwd())),
            reads: Arc::default(),
            progress: None,
            approved: None,
            scope: Arc::default(),
            ..self.clone()
        }
    }

    /// The same shared state, for the one call that `scope` describes.
    pub fn with_scope(&self, scope: CallScope) -> Self {
        ToolContext {
            scope: Arc::new(scope),
            ..self.clone()
        }
    }

    /// What the agent handed this call (empty outside a call).
    pub fn scope(&self) -> &CallScope {
        &self.scope
    }

    /// The same shared state with another cancellation token (one per turn).
    pub fn with_cancel(&self, cancel: CancellationToken) -> Self {
        ToolContext {
            cancel,
            ..self.clone()
        }
    }

    /// The same shared state, for one call whose progress goes to `sink`.
    pub fn with_progress(&self, sink: ProgressSink) -> Self {
        ToolContext {
            progress: Some(sink),
            ..self.clone()
        }
    }

    /// The same shared state, for one call the person (or a rule) let touch `path`, a file
    /// outside the workspace.
    pub fn with_approved_path(&self, path: PathBuf) -> Self {
        ToolContext {
            approved: Some(Arc::new(path)),
            ..self.clone()
        }
    }

    /// The same shared state, for one call the person let run outside the sandbox.
    pub fn outside_sandbox(&self) -> Self {
        ToolContext {
            outside_sandbox: true,
            ..self.clone()
        }
    }

    /// The sandbox this call's commands run in: the configured one, or none for a call the
    /// person let out.
    pub fn sandbox(&self) -> Option<&Sandbox> {
        (!self.outside_sandbox).then_some(&self.config.sandbox)
    }

    /// The file outside the workspace this call may touch, if any.
    pub fn approved_path(&self) -> Option<&Path> {
        self.approved.as_deref().map(PathBuf::as_path)
    }

    /// Reports how the running call is getting on (nothing happens when no one listens).
    /// Where this call's progress goes, for work that reports from elsewhere (an MCP
    /// server's notifications).
    pub fn progress_sink(&self) -> Option<ProgressSink> {
        self.progress.clone()
    }

    pub fn report(&self, progress: Progress) {
        if let Some(sink) = &self.progress {
            sink(progress);
        }
    }

    /// Whether anyone listens to progress (so a tool can skip the work of reporting).
    pub fn wants_progress(&self) -> bool {
        self.progress.is_some()
    }

    /// The settings this context was built from.
    pub fn config(&self) -> &ToolConfig {
        &self.config
    }

    /// The canonical directories file tools may touch, worked out by `resolve` the first
    /// time they are asked for and kept: the session's settings do not change.
    pub(crate) fn allowed_dirs(&self, resolve: impl FnOnce() -> Vec<PathBuf>) -> &[PathBuf] {
        self.allowed_dirs.get_or_init(resolve)
    }

    /// The workspace root.
    pub fn workspace_root(&self) -> &Path {
        &self.config.workspace_root
    }

    /// The token that cancels the running call.
    pub fn cancel_token(&self) -> &CancellationToken {
        &self.cancel
    }

    /// The process groups bash commands started; end them all with
    /// [`ProcessTracker::kill_all`] when a turn is cancelled or rein exits.
    pub fn processes(&self) -> &ProcessTracker {
        &self.processes
    }

    /// The commands started with `run_in_background`; stopped when the session ends (with
    /// [`BackgroundShells::stop_all`]), not when a turn is cancelled.
    pub fn background(&self) -> &BackgroundShells {
        &self.background
    }

    /// The current directory (changed by `cd` in bash).
    pub fn cwd(&self) -> PathBuf {
        self.cwd.lock().clone()
    }

    /// Sets the current directory.
    pub fn set_cwd(&self, dir: PathBuf) {
        *self.cwd.lock() = dir;
    }

    /// Records that the model has read `path` (canonical) as it is now.
    pub fn record_read(&self, path: PathBuf, stamp: FileStamp) {
        self.reads.lock().insert(path, stamp);
    }

    /// What rein knew of `path` (canonical) when the model last read it.
    pub fn read_stamp(&self, path: &Path) -> Option<FileStamp> {
        self.reads.lock().get(path).copied()
    }

    /// Records that a tool wrote or edited `path`.
    pub fn record_change(&self, path: PathBuf) {
        self.changed.lock().insert(path);
    }

    /// Every file written or edited through this context, sorted.
    pub fn changed_files(&self) -> Vec<PathBuf> {
        self.changed.lock().iter().cloned().collect()
    }
}
