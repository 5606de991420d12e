//! A project in a temp directory (its own REIN_HOME, an AGENTS.md), and an agent built for it
//! from the configuration, as `rein` builds one, talking to the small model.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rein_core::agent::{Agent, AgentEvent, Events, TurnOutcome};
use rein_core::build::AgentBuilder;
use rein_core::config::{self, ConfigInputs, Overrides, ProviderKind};
use rein_core::context::{CompactionInfo, PinnedState};
use rein_core::permissions::PermissionMode;
use rein_core::session::{LoadedSession, NewSession, Session, SessionStore};
use rein_llm::{ProviderConfig, RetryPolicy, build_provider};
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

use super::model::{SmallModel, write_project};

/// The todo list, as the feature that builds it will pin it.
pub(crate) struct TodoStandIn;

/// What the stand-in's list says.
pub(crate) const TODO_TEXT: &str = "- [x] Task 1\n- [ ] Task 6: the last one, with tabs";

impl PinnedState for TodoStandIn {
    fn name(&self) -> &str {
        "todo list"
    }

    fn render(&self) -> Option<String> {
        Some(TODO_TEXT.to_owned())
    }
}

pub(crate) struct Project {
    tmp: Arc<TempDir>,
    pub(crate) home: PathBuf,
    pub(crate) rein_home: PathBuf,
    pub(crate) work: PathBuf,
    pub(crate) events: Arc<Mutex<Vec<AgentEvent>>>,
    /// The model's name (`gpt-4o`, in rein's table).
    pub(crate) model: String,
    /// The tool output budget, in characters (small, so that the tasks prune).
    pub(crate) output_budget_chars: usize,
}

impl Project {
    /// A git project with the files of `tasks` tasks, and `config` as the user's config file.
    pub(crate) fn new(tasks: usize, config: &str) -> Self {
        let tmp = TempDir::new().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let home = base.join("home");
        let rein_home = base.join("rein-home");
        let work = home.join("project");
        std::fs::create_dir_all(work.join(".git")).unwrap();
        std::fs::create_dir_all(&rein_home).unwrap();
        std::fs::write(rein_home.join("config.toml"), config).unwrap();
        write_project(&work, tasks);
        Project {
            tmp: Arc::new(tmp),
            home,
            rein_home,
            work,
            events: Arc::default(),
            model: "gpt-4o".to_owned(),
            output_budget_chars: 4000,
        }
    }

    pub(crate) fn store(&self) -> SessionStore {
        SessionStore::new(&self.rein_home)
    }

    pub(crate) fn builder(&self, model: &SmallModel) -> AgentBuilder {
        let env = |_: &str| None;
        let config = config::load_config(&ConfigInputs {
            rein_home: &self.rein_home,
            cwd: &self.work,
            home_dir: Some(&self.home),
            env: &env,
            overrides: &Overrides {
                model: Some(self.model.clone()),
                base_url: Some(model.server.openai_base_url()),
                ..Overrides::default()
            },
        })
        .unwrap();
        let mut provider = ProviderConfig::new(ProviderKind::OpenAi);
        provider.base_url = Some(model.server.openai_base_url());
        provider.api_key = Some("test-key".into());
        provider.retry = RetryPolicy {
            max_retries: 1,
            base_delay: Duration::from_millis(5),
            ..RetryPolicy::default()
        };
        let budget = self.output_budget_chars;
        AgentBuilder::from_config(&config, &self.work, Some(&self.home), &env)
            .environment(Vec::new())
            .provider(build_provider(&provider).unwrap())
            .mode(PermissionMode::Yolo)
            .tool_config(move |tools| tools.output_budget_chars = budget)
            .pin(Arc::new(TodoStandIn))
    }

    /// An agent recording a new session; returns it with the session's id.
    pub(crate) fn agent(&self, model: &SmallModel) -> (Agent, String) {
        let session = self.new_session();
        let id = session.id().to_owned();
        let agent = self
            .builder(model)
            .session(session, Vec::new())
            .build()
            .unwrap();
        (agent, id)
    }

    /// An agent going on with session `id`, as `rein -r ID` does.
    pub(crate) fn resume(&self, model: &SmallModel, id: &str) -> Agent {
        let (session, loaded): (Session, LoadedSession) = self.store().open(id).unwrap();
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        self.builder(model).resume(session, loaded).build().unwrap()
    }

    fn new_session(&self) -> Session {
        self.store()
            .create(NewSession {
                model: &self.model,
                provider: ProviderKind::OpenAi,
                cwd: &self.work,
                parent: None,
            })
            .unwrap()
    }

    pub(crate) async fn turn(&self, agent: &mut Agent, prompt: &str) -> TurnOutcome {
        let events = Arc::clone(&self.events);
        let sink = Events::new(move |e: AgentEvent| events.lock().unwrap().push(e));
        agent
            .run_turn(prompt, &sink, CancellationToken::new())
            .await
    }

    pub(crate) fn events(&self) -> Vec<AgentEvent> {
        self.events.lock().unwrap().clone()
    }

    /// The compactions so far.
    pub(crate) fn compactions(&self) -> Vec<CompactionInfo> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                AgentEvent::Compaction(info) => Some(info),
                _ => None,
            })
            .collect()
    }

    /// The warnings so far.
    pub(crate) fn warnings(&self) -> Vec<String> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                AgentEvent::Warning { message } => Some(message),
                _ => None,
            })
            .collect()
    }

    /// The session file of `id`.
    pub(crate) fn session_file(&self, id: &str) -> PathBuf {
        self.rein_home.join("sessions").join(format!("{id}.jsonl"))
    }

    /// The same project with a copy of its rein home as it is now (config and sessions): a
    /// machine where the run stopped here, to resume it there.
    pub(crate) fn fork(&self, name: &str) -> Project {
        let rein_home = self.rein_home.with_file_name(name);
        copy_dir(&self.rein_home, &rein_home);
        Project {
            tmp: Arc::clone(&self.tmp),
            home: self.home.clone(),
            rein_home,
            work: self.work.clone(),
            events: Arc::default(),
            model: self.model.clone(),
            output_budget_chars: self.output_budget_chars,
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}
