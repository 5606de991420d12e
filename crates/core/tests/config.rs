//! Configuration: layers, `.env`, API keys, provider inference and errors.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rein_core::config::{
    ApiKey, Config, ConfigError, ConfigInputs, Overrides, ProviderKind, Source, load_config,
};
use tempfile::TempDir;

/// A home directory with rein's home in it and a git project whose subdirectory is the
/// working directory.
struct Fixture {
    _tmp: TempDir,
    home: PathBuf,
    rein_home: PathBuf,
    project: PathBuf,
    cwd: PathBuf,
    env: HashMap<String, String>,
    flags: Overrides,
}

impl Fixture {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let project = home.join("src/app");
        let cwd = project.join("crates/web");
        std::fs::create_dir_all(&cwd).unwrap();
        std::fs::create_dir(project.join(".git")).unwrap();
        Fixture {
            rein_home: home.join(".rein"),
            home,
            project,
            cwd,
            env: HashMap::new(),
            flags: Overrides::default(),
            _tmp: tmp,
        }
    }

    fn set(&mut self, var: &str, value: &str) -> &mut Self {
        self.env.insert(var.to_owned(), value.to_owned());
        self
    }

    fn unset(&mut self, var: &str) -> &mut Self {
        self.env.remove(var);
        self
    }

    fn write(&self, path: &Path, text: &str) -> PathBuf {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        path.to_path_buf()
    }

    fn user_file(&self, text: &str) -> PathBuf {
        self.write(&self.rein_home.join("config.toml"), text)
    }

    /// Writes the project's config file and trusts the project (an untrusted project's file
    /// loses what could be used against the person: see `untrusted_project_file`).
    fn project_file(&self, text: &str) -> PathBuf {
        let path = self.untrusted_project_file(text);
        rein_core::trust::TrustStore::new(&self.rein_home, Some(&self.home))
            .trust(&self.project)
            .unwrap();
        path
    }

    /// Trusts the project with its files as they are now.
    fn trust(&self) {
        rein_core::trust::TrustStore::new(&self.rein_home, Some(&self.home))
            .trust(&self.project)
            .unwrap();
    }

    fn untrusted_project_file(&self, text: &str) -> PathBuf {
        self.write(&self.project.join(".rein/config.toml"), text)
    }

    fn try_load(&self) -> Result<Config, ConfigError> {
        let env = |var: &str| self.env.get(var).cloned();
        load_config(&ConfigInputs {
            rein_home: &self.rein_home,
            cwd: &self.cwd,
            home_dir: Some(&self.home),
            env: &env,
            overrides: &self.flags,
        })
    }

    fn load(&self) -> Config {
        self.try_load().unwrap()
    }

    fn error(&self) -> String {
        self.try_load().unwrap_err().to_string()
    }
}

#[test]
fn with_nothing_configured_the_defaults_apply() {
    let config = Fixture::new().load();
    assert_eq!(config.provider, ProviderKind::OpenAi);
    assert_eq!(config.model, "gpt-4o");
    assert_eq!(config.base_url, "https://api.openai.com/v1");
    assert_eq!(config.api_key(), None);
    assert_eq!(config.temperature, None);
    assert_eq!(config.max_tokens, None);
    // The window is left to the server and rein's table (see tests/context).
    assert_eq!(config.context_window_tokens, None);
    assert!(config.auto_compact);
    assert_eq!(config.compact_threshold, 0.8);
    assert_eq!(config.max_rounds, 50);
    assert_eq!(config.retries, 4);
    assert_eq!(config.tool_output_budget_chars, 30_000);
    assert_eq!(config.tool_output_file_max_bytes, 64 * 1024 * 1024);
    assert_eq!(config.bash_default_timeout, Duration::from_secs(120));
    assert!(config.is_git_repo);
    assert!(config.files.is_empty() && config.dotenv_file.is_none());
    assert_eq!(config.source("model"), &Source::Default);
}

#[test]
fn each_layer_overrides_the_one_before_and_flags_come_last() {
    let mut fx = Fixture::new();
    let user =
        fx.user_file("model = \"from-user\"\nmax_rounds = 10\nretries = 1\ntemperature = 0.5\n");
    let config = fx.load();
    assert_eq!(config.model, "from-user");
    assert_eq!(config.source("model"), &Source::UserFile(user.clone()));

    let project = fx.project_file("model = \"from-project\"\nmax_rounds = 20\n");
    let config = fx.load();
    assert_eq!(
        (config.model.as_str(), config.max_rounds),
        ("from-project", 20)
    );
    assert_eq!(
        config.source("model"),
        &Source::ProjectFile(project.clone())
    );
    // What the project does not set still comes from the user's file.
    assert_eq!((config.retries, config.temperature), (1, Some(0.5)));
    assert_eq!(config.source("retries"), &Source::UserFile(user.clone()));
    assert_eq!(config.files, [user, project]);

    fx.set("REIN_MODEL", "from-env");
    let config = fx.load();
    assert_eq!(config.model, "from-env");
    assert_eq!(config.source("model"), &Source::Env("REIN_MODEL".into()));
    assert_eq!(config.max_rounds, 20);

    fx.flags = Overrides {
        model: Some("from-flag".into()),
        max_rounds: Some(3),
        ..Overrides::default()
    };
    let config = fx.load();
    assert_eq!(config.model, "from-flag");
    assert_eq!(config.source("model"), &Source::Flag("--model"));
    assert_eq!(config.max_rounds, 3);
    assert_eq!(config.source("max_rounds"), &Source::Flag("--max-rounds"));
    assert_eq!(config.retries, 1);
}

#[test]
fn the_project_config_is_found_at_the_git_root_and_not_above_a_plain_directory() {
    let mut fx = Fixture::new();
    fx.project_file("max_rounds = 7\n");
    assert_eq!(fx.load().max_rounds, 7);
    assert_eq!(fx.load().project_root, fx.project);

    // Without `.git`, the working directory is the project: a parent's .rein is not read.
    std::fs::remove_dir(fx.project.join(".git")).unwrap();
    let config = fx.load();
    assert_eq!(config.max_rounds, 50);
    assert_eq!(config.project_root, fx.cwd);
    assert!(!config.is_git_repo);
    fx.cwd = fx.project.clone();
    assert_eq!(fx.load().max_rounds, 7);
}

#[test]
fn dotenv_is_found_upward_and_never_overrides_a_set_variable() {
    let mut fx = Fixture::new();
    let dotenv = fx.write(
        &fx.home.join(".env"),
        "REIN_MODEL=from-dotenv\nOPENAI_API_KEY=key-from-dotenv\nREIN_MAX=1\n",
    );
    fx.set("OPENAI_API_KEY", "key-from-env");
    let config = fx.load();
    assert_eq!(config.dotenv_file.as_deref(), Some(dotenv.as_path()));
    assert_eq!(config.model, "from-dotenv");
    assert_eq!(
        config.source("model"),
        &Source::DotEnv {
            var: "REIN_MODEL".into(),
            file: dotenv.clone()
        }
    );
    assert_eq!(config.api_key(), Some("key-from-env"));
    assert_eq!(
        config.source("api_key"),
        &Source::Env("OPENAI_API_KEY".into())
    );

    // An empty variable counts as unset, so the .env fills it.
    fx.set("OPENAI_API_KEY", "");
    assert_eq!(fx.load().api_key(), Some("key-from-dotenv"));

    // The nearest .env wins; only one is read.
    let nearer = fx.write(&fx.project.join(".env"), "REIN_MODEL=nearer\n");
    let config = fx.load();
    assert_eq!(config.model, "nearer");
    assert_eq!(config.dotenv_file, Some(nearer));
    assert_eq!(config.api_key(), None);
}

#[test]
fn dotenv_outside_home_is_not_searched_above_the_project() {
    let mut fx = Fixture::new();
    // The working directory is outside the home directory.
    let outside = fx.home.parent().unwrap().join("srv");
    let project = outside.join("repo");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    fx.write(&outside.join(".env"), "REIN_MODEL=stray\n");
    fx.cwd = project.clone();
    assert_eq!(fx.load().model, "gpt-4o");
    fx.write(&project.join(".env"), "REIN_MODEL=mine\n");
    assert_eq!(fx.load().model, "mine");
}

#[test]
fn a_broken_dotenv_is_an_error_naming_the_file() {
    let fx = Fixture::new();
    let path = fx.write(
        &fx.cwd.join(".env"),
        "GOOD=1\nOPENAI_API_KEY='sk-unclosed\n",
    );
    let err = fx.error();
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(err.contains("line 2"), "{err}");
    assert!(!err.contains("sk-unclosed"), "the value leaked: {err}");
}

#[test]
fn an_unknown_key_names_the_key_and_the_file() {
    let fx = Fixture::new();
    let path = fx.project_file("model = \"m\"\nmodle = \"x\"\n");
    assert_eq!(
        fx.error(),
        format!(
            "unknown key \"modle\" in {} (line 2); did you mean \"model\"?",
            path.display()
        )
    );
}

#[test]
fn bad_toml_and_bad_values_name_the_file_and_line() {
    let fx = Fixture::new();
    let path = fx.user_file("model = \"m\"\ntemperature = \n");
    let err = fx.error();
    assert!(
        err.starts_with(&format!("invalid TOML in {} at line 2", path.display())),
        "{err}"
    );

    fx.user_file("max_tokens = 100\ntemperature = \"hot\"\n");
    assert_eq!(
        fx.error(),
        format!(
            "invalid value for \"temperature\" in {} (line 2): expected a number, found string \"hot\"",
            path.display()
        )
    );
    fx.user_file("base_url = \"localhost:8080\"\n");
    assert!(
        fx.error().contains("not an http:// or https:// URL"),
        "{}",
        fx.error()
    );
}

#[test]
fn bad_environment_values_name_the_variable() {
    let mut fx = Fixture::new();
    fx.set("REIN_PROVIDER", "gemini");
    let err = fx.error();
    assert!(
        err.starts_with(
            "invalid value for \"REIN_PROVIDER\" in environment variable REIN_PROVIDER"
        ),
        "{err}"
    );
    fx.unset("REIN_PROVIDER").set("REIN_BASE_URL", "ftp://x");
    assert!(fx.error().contains("REIN_BASE_URL"), "{}", fx.error());
}

#[test]
fn the_provider_is_inferred_from_model_and_url_then_keys() {
    let mut fx = Fixture::new();
    fx.set("ANTHROPIC_API_KEY", "a");
    fx.flags.model = Some("gpt-4.1".into());
    assert_eq!(fx.load().provider, ProviderKind::OpenAi);

    fx.flags.model = Some("claude-opus-4-1".into());
    assert_eq!(fx.load().provider, ProviderKind::Anthropic);

    // A claude model means Anthropic whatever the URL (the rule); a proxy that
    // serves Claude over the OpenAI format is chosen with --provider openai.
    fx.flags.base_url = Some("http://127.0.0.1:4000/".into());
    let config = fx.load();
    assert_eq!(config.provider, ProviderKind::Anthropic);
    assert_eq!(config.base_url, "http://127.0.0.1:4000");
    fx.flags.model = Some("qwen2.5-coder".into());
    assert_eq!(fx.load().provider, ProviderKind::OpenAi);

    fx.flags.base_url = Some("https://api.anthropic.com".into());
    fx.flags.model = None;
    assert_eq!(fx.load().provider, ProviderKind::Anthropic);

    // A generic key of Anthropic's shape means Anthropic.
    let mut fx = Fixture::new();
    fx.set("REIN_API_KEY", "sk-ant-api03-x");
    assert_eq!(fx.load().provider, ProviderKind::Anthropic);
}

#[test]
fn openai_base_url_applies_to_openai_only_and_yields_to_rein_base_url() {
    let mut fx = Fixture::new();
    fx.project_file("base_url = \"http://127.0.0.1:1/v1\"\n");
    fx.set("OPENAI_BASE_URL", "http://127.0.0.1:2/v1");
    let config = fx.load();
    assert_eq!(config.base_url, "http://127.0.0.1:2/v1");
    assert_eq!(
        config.source("base_url"),
        &Source::Env("OPENAI_BASE_URL".into())
    );

    fx.set("REIN_BASE_URL", "http://127.0.0.1:3/v1");
    assert_eq!(fx.load().base_url, "http://127.0.0.1:3/v1");

    fx.unset("REIN_BASE_URL");
    fx.flags.provider = Some(ProviderKind::Anthropic);
    assert_eq!(fx.load().base_url, "http://127.0.0.1:1/v1");
}

#[test]
fn base_urls_are_read_by_host_so_look_alikes_do_not_pass_for_deepseek_or_anthropic() {
    let fx = Fixture::new();
    fx.user_file("base_url = \"https://API.DeepSeek.com/v1/\"\n");
    let config = fx.load();
    assert_eq!(config.base_url, "https://api.deepseek.com/v1");
    assert_eq!(config.model, "deepseek-chat");

    for look_alike in [
        "https://api.deepseek.com.evil.example/v1",
        // Credentials before the host: the request goes to 127.0.0.1.
        "http://api.deepseek.com@127.0.0.1:8080/v1",
        "http://api.anthropic.com@127.0.0.1:8080/v1",
    ] {
        fx.user_file(&format!("base_url = \"{look_alike}\"\n"));
        let config = fx.load();
        assert_eq!(
            (config.provider, config.model.as_str()),
            (ProviderKind::OpenAi, "gpt-4o"),
            "{look_alike}"
        );
    }
    fx.user_file("base_url = \"https://eu.api.anthropic.com\"\n");
    assert_eq!(fx.load().provider, ProviderKind::Anthropic);
}

#[test]
fn explicit_context_window_and_max_tokens_are_kept() {
    let fx = Fixture::new();
    fx.user_file("model = \"claude-sonnet-4-5\"\ncontext_window = 50000\nmax_tokens = 1000\n");
    let config = fx.load();
    assert_eq!(config.provider, ProviderKind::Anthropic);
    assert_eq!(
        (config.context_window_tokens, config.max_tokens),
        (Some(50_000), Some(1000))
    );
    let file = fx.project_file("max_tokens = 0\n");
    assert_eq!(
        fx.error(),
        format!(
            "invalid value for \"max_tokens\" in {} (line 1): 0 is less than 1",
            file.display()
        )
    );
}

#[test]
fn an_unreadable_config_is_an_error_but_a_missing_one_is_not() {
    let fx = Fixture::new();
    // A directory where the file should be cannot be read as a file.
    std::fs::create_dir_all(fx.rein_home.join("config.toml")).unwrap();
    let err = fx.error();
    assert!(
        err.starts_with(&format!(
            "cannot read {}",
            fx.rein_home.join("config.toml").display()
        )),
        "{err}"
    );
}

#[test]
fn ca_file_comes_from_a_file_relative_to_it_or_from_ssl_cert_file() {
    let mut fx = Fixture::new();
    assert_eq!(fx.load().ca_file, None);

    let file = fx.project_file("ca_file = \"certs/corp.pem\"\n");
    let config = fx.load();
    assert_eq!(
        config.ca_file,
        Some(fx.project.join(".rein/certs/corp.pem")),
        "relative to the config file's directory"
    );
    assert_eq!(config.source("ca_file"), &Source::ProjectFile(file));

    // The environment is a later layer than the files.
    fx.set("SSL_CERT_FILE", "/etc/ssl/corp.pem");
    let config = fx.load();
    assert_eq!(config.ca_file, Some(PathBuf::from("/etc/ssl/corp.pem")));
    assert_eq!(
        config.source("ca_file"),
        &Source::Env("SSL_CERT_FILE".into())
    );

    fx.unset("SSL_CERT_FILE");
    fx.project_file("ca_file = \"\"\n");
    assert!(fx.error().contains("ca_file"), "{}", fx.error());
}

/// The settings of the model client: the key's origin, thinking, time limits.
#[path = "config/model_client.rs"]
mod model_client;

/// The settings of the tools: output budget, saved-output cap, bash timeout.
#[path = "config/tools.rs"]
mod tools;

/// API keys: the order of the variables, the flag, the key kept out of debug output.
#[path = "config/keys.rs"]
mod keys;

/// Permission rules, hooks and passed variables from files and flags.
#[path = "config/tables.rs"]
mod tables;

#[path = "config/endpoints.rs"]
mod endpoints;
