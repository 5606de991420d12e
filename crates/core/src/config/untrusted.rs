//! What a project's own files may not decide until the person trusts the project: where
//! requests (with the API key) go, and what could loosen rein's caution.
//!
//! A cloned repository ships its `.rein/config.toml` and its `.env`, and a command run in the
//! workspace can write either. From an untrusted project (or a `.env` the trust does not
//! cover, below the project root) rein ignores, with one warning naming each:
//!
//! - in `.rein/config.toml`: allow rules, `[secrets] pass_env`, `api_key_env`, `ca_file`, and
//!   `base_url`;
//! - in `.env`: `REIN_BASE_URL`, `OPENAI_BASE_URL`, `REIN_PROVIDER` and `SSL_CERT_FILE`.
//!
//! One exception, so that a project's local model server (Ollama, llama.cpp) still works: a
//! base URL on this machine (`localhost`, `127.x`, `::1`) is used when the person configured
//! none themselves, but never with the person's API key. The only key sent there is one from
//! that same `.env` file (the project's own, which tells it nothing new).

use super::check::check_base_url;
use super::dotenv::{DotEnvOwner, ENDPOINT_VARS, Env};
use super::layer::{Layer, Sourced};
use super::{ProviderKind, Source};

const BASE_URL_VARS: [&str; 2] = ["REIN_BASE_URL", "OPENAI_BASE_URL"];

/// What an untrusted project's files set that does not apply as set.
#[derive(Debug, Default)]
pub(crate) struct Withheld {
    /// From its `.rein/config.toml`: its allow rules and `[secrets] pass_env`, key by key.
    pub(crate) tables: Vec<super::LeftOut>,
    /// From its files: the settings' names (`base_url`, `allow rules (...)`).
    pub(crate) config_items: Vec<String>,
    /// From its `.env`: each variable and its file (`REIN_BASE_URL in /src/app/.env`).
    pub(crate) dotenv_items: Vec<String>,
    /// Base URLs on this machine it named, in the order they would apply: used without the
    /// person's key, and only when the person configured no base URL.
    pub(crate) local_urls: Vec<Sourced<String>>,
}

impl Withheld {
    /// Takes the endpoint variables out of `env`'s `.env` when it is a project's and the
    /// trust does not cover it as it is.
    pub(crate) fn from_dotenv(env: &mut Env<'_>, trusted: bool) -> Self {
        let mut withheld = Withheld::default();
        let why = match env.dotenv_owner() {
            DotEnvOwner::Person | DotEnvOwner::Project { covered: true } if trusted => {
                return withheld;
            }
            DotEnvOwner::Person => return withheld,
            DotEnvOwner::Project { covered: true } => "",
            DotEnvOwner::Project { covered: false } => {
                " (below the project root, where the trust does not reach)"
            }
        };
        for var in ENDPOINT_VARS {
            let Some(found) = env.take_dotenv_var(var) else {
                continue;
            };
            let local = (check_base_url(&found.value).ok())
                .filter(|url| BASE_URL_VARS.contains(&var) && rein_llm::is_loopback_url(url));
            match local {
                Some(url) => withheld.local_urls.push(Sourced::new(url, found.source)),
                None => withheld.dotenv_items.push(format!("{}{why}", found.source)),
            }
        }
        withheld
    }

    /// Takes out of an untrusted project's config file what a cloned repository could use
    /// against the person: rules that let calls run without asking, secrets passed to
    /// commands, where requests go and what certificates vouch for them. Its deny and ask
    /// rules stay: they only add caution.
    pub(crate) fn withhold_from_config_file(&mut self, layer: &mut Layer, source: &Source) {
        let mut withhold = |key: &str, written: String| {
            self.config_items.push(written.clone());
            self.tables.push(super::LeftOut {
                key: key.to_owned(),
                written,
                source: source.clone(),
                reason: "the project is not trusted (`rein trust` trusts it)".to_owned(),
                whole: true,
            });
        };
        let allow = std::mem::take(&mut layer.tables.rules.allow);
        if !allow.is_empty() {
            let rules: Vec<&str> = allow.iter().map(|rule| rule.text.as_str()).collect();
            withhold(
                "permissions.allow",
                format!("allow rules ({})", rules.join(", ")),
            );
        }
        if !layer.tables.pass_env.is_empty() {
            let names = std::mem::take(&mut layer.tables.pass_env).join(", ");
            withhold("secrets.pass_env", format!("[secrets] pass_env ({names})"));
        }
        if let Some(url) = layer.values.remove("base_url") {
            // A server on this machine gets nothing the person's machine does not already
            // hold, and is used without the person's key.
            let local = (url.value.as_str())
                .and_then(|text| check_base_url(text).ok())
                .filter(|checked| rein_llm::is_loopback_url(checked));
            match local {
                Some(checked) => self.local_urls.push(Sourced::new(checked, url.source)),
                None => self.config_items.push("base_url".to_owned()),
            }
        }
        for key in ["api_key_env", "ca_file"] {
            if layer.values.remove(key).is_some() {
                self.config_items.push(key.to_owned());
            }
        }
    }

    /// Takes out of an untrusted project's Claude Code settings file what could loosen
    /// rein's caution: its allow rules and its `env` (its hooks do not run untrusted either;
    /// deny and ask rules stay).
    pub(crate) fn withhold_from_settings_file(
        &mut self,
        layer: &mut Layer,
        path: &std::path::Path,
    ) {
        let allow = std::mem::take(&mut layer.tables.rules.allow);
        if !allow.is_empty() {
            let rules: Vec<&str> = allow.iter().map(|rule| rule.text.as_str()).collect();
            self.config_items.push(format!(
                "allow rules ({}) of {}",
                rules.join(", "),
                path.display()
            ));
        }
        let env = std::mem::take(&mut layer.tables.env);
        if !env.is_empty() {
            let names: Vec<&str> = env.iter().map(|e| e.name.as_str()).collect();
            self.config_items
                .push(format!("env ({}) of {}", names.join(", "), path.display()));
        }
    }

    /// The local base URL to use when the person configured none: the `.env`'s
    /// `REIN_BASE_URL`, its `OPENAI_BASE_URL` (OpenAI only), then the config file's.
    pub(crate) fn local_fallback(&self, provider: ProviderKind) -> Option<&Sourced<String>> {
        self.local_urls.iter().find(|url| match &url.source {
            Source::DotEnv { var, .. } if var == "OPENAI_BASE_URL" => {
                matches!(
                    provider,
                    ProviderKind::OpenAi | ProviderKind::OpenAiResponses
                )
            }
            _ => true,
        })
    }

    /// Reports the local URLs that did not apply (the person's own base URL won).
    pub(crate) fn unused_local_urls(&mut self, used: Option<&Sourced<String>>) {
        for url in std::mem::take(&mut self.local_urls) {
            if used.is_some_and(|used| *used == url) {
                continue;
            }
            match &url.source {
                Source::DotEnv { .. } => self.dotenv_items.push(url.source.to_string()),
                _ => self.config_items.push("base_url".to_owned()),
            }
        }
    }
}

/// Whether a key from `key_source` may go to a base URL an untrusted project named at
/// `url_source`: only a key from that same `.env` file.
pub(crate) fn key_may_follow(key_source: &Source, url_source: &Source) -> bool {
    match (key_source, url_source) {
        (Source::DotEnv { file: key_file, .. }, Source::DotEnv { file: url_file, .. }) => {
            key_file == url_file
        }
        _ => false,
    }
}

/// What to tell the person when an untrusted project's local base URL is used.
pub(crate) fn keyless_note(url: &Sourced<String>, key_withheld: bool, own_key: bool) -> String {
    let key = match (key_withheld, own_key) {
        (true, _) => "without your API key",
        (false, true) => "with the API key from that same file",
        (false, false) => "with no API key",
    };
    format!(
        "using the base URL {} from {} {key}: this project is not trusted (`rein trust` \
         lets its endpoint settings apply)",
        url.value, url.source
    )
}
