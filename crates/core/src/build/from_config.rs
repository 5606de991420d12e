//! An agent as a resolved configuration describes it: the endpoint, settings, rules, hooks,
//! skills, agent types, MCP servers and sandbox.

use std::path::Path;
use std::sync::Arc;

use rein_llm::{NetworkConfig, ProviderConfig, ProviderKind, RetryPolicy};

use crate::config::{Config, ConfiguredRule, LeftOut, RuleLists};
use crate::context::ContextSettings;
use crate::permissions::{Rule, RuleOrigin, RuleSet, SourcedRule};
use crate::prompt::{self, PROJECT_INSTRUCTIONS_LIMIT_BYTES};
use crate::sandboxing::SandboxPlan;
use crate::secrets::SecretValues;
use crate::tools::skill::{load as load_skills, skill_dirs};
use crate::tools::subagent::types::agent_dirs;

use super::{AgentBuilder, HookPlan, SecretSources};

impl AgentBuilder {
    /// An agent as `config` describes it, working in `cwd`: its model endpoint (built when
    /// the agent is), settings, tool limits and the project's instructions. `env` supplies
    /// proxy variables; `home_dir` is where `~` points for the tools.
    pub fn from_config(
        config: &Config,
        cwd: &Path,
        home_dir: Option<&Path>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Self {
        let mut builder = AgentBuilder::new(cwd, config.model.clone(), config.provider);
        builder.settings.temperature = config.temperature;
        builder.settings.max_tokens = config.max_tokens;
        builder.settings.max_rounds = config.max_rounds;
        let ttl = config.cache_ttl.unwrap_or_default();
        builder.prices = Arc::new(rein_llm::PriceBook::new(
            config
                .pricing
                .iter()
                .map(|(model, entry)| (model.clone(), entry.price())),
            ttl,
        ));
        builder.limits = crate::agent::SpendLimits {
            max_cost: config.max_cost,
            max_tokens: config.max_session_tokens,
        };
        builder.context = ContextSettings {
            window_tokens: config.context_window_tokens,
            auto_compact: config.auto_compact,
            compact_threshold: config.compact_threshold,
        };
        builder.tool_config.output_budget_chars = config.tool_output_budget_chars;
        builder.tool_config.offload_max_bytes = config.tool_output_file_max_bytes;
        builder.tool_config.bash_default_timeout = config.bash_default_timeout;
        builder.tool_config.home_dir = home_dir.map(Path::to_path_buf);
        builder.tool_config.vision = config
            .vision
            .unwrap_or_else(|| rein_llm::model_takes_images(&config.model));
        builder.rein_home = Some(config.rein_home.clone());
        builder.checkpoints = Some(config.checkpoints());
        // Outside any session (`rein sandbox -- CMD`): under rein's home, never in the
        // person's workspace.
        builder.tool_config.offload_dir = config.rein_home.join("tool-output");
        builder.is_git_repo = config.is_git_repo;
        builder.rules = rule_set(&config.rules, home_dir, &mut builder.warnings);
        builder.sandbox = SandboxPlan::from_config(config, env);
        let left_out = config.sandbox.left_out.iter().chain(&config.repl.left_out);
        builder.warnings.extend(left_out.map(LeftOut::warning));
        builder
            .warnings
            .extend(config.claude_ignored.iter().cloned());
        // A settings file's `env` (a project's only once it is trusted: withheld otherwise).
        builder.tool_config.env_set = (config.env.iter())
            .map(|entry| (entry.name.clone(), entry.value.clone()))
            .collect();
        builder.plan_mcp(config, env);
        // Commands and hooks inherit rein's own environment: its secrets are what to keep
        // from them.
        builder = builder.environment(process_vars());
        builder.find_project_instructions(config, cwd, home_dir);
        let thinking_budget_tokens = match (config.thinking_budget_tokens, config.provider) {
            (Some(budget), ProviderKind::Anthropic) => Some(budget),
            (Some(_), ProviderKind::OpenAi | ProviderKind::OpenAiResponses) => {
                builder.warnings.push(format!(
                    "thinking_budget (from {}) applies to the Anthropic API only; it is not \
                     sent to this OpenAI-compatible endpoint",
                    config.source("thinking_budget")
                ));
                None
            }
            (None, _) => None,
        };
        builder.plan_hooks(config);
        let dirs = agent_dirs(&config.project_root, Some(&config.rein_home));
        let (types, skipped) = crate::tools::subagent::types::load(&dirs);
        builder.agent_types = types;
        builder.warnings.extend(skipped);
        let (skills, skipped) =
            load_skills(&skill_dirs(&config.project_root, Some(&config.rein_home)));
        builder.warnings.extend(skipped);
        builder.skill_window_tokens = config
            .context_window_tokens
            .or_else(|| rein_llm::context_window_for(&config.model))
            .unwrap_or(crate::context::UNKNOWN_WINDOW_TOKENS);
        builder = builder.skills(skills);
        builder.provider_config = Some(provider_config(config, env, thinking_budget_tokens, ttl));
        builder
    }

    /// The MCP servers that may start, their sandboxes, and the secrets they are given.
    fn plan_mcp(&mut self, config: &Config, env: &dyn Fn(&str) -> Option<String>) {
        let mcp = crate::mcp::plan(config, env);
        self.warnings.extend(mcp.warnings.iter().cloned());
        self.mcp_warnings = mcp.warnings;
        self.mcp_awaiting_trust = mcp.awaiting_trust;
        self.mcp_skipped = mcp.skipped;
        self.tool_search_budget = crate::agent::ToolSearchBudget::from(&config.tool_search);
        self.mcp_sandboxed = sandboxed_servers(&mcp.servers);
        self.mcp_plan = mcp.servers;
        self.mcp_log_dir = Some(config.rein_home.join(crate::mcp::MCP_LOG_DIR));
        self.mcp_auth_dir = Some(config.rein_home.join(crate::mcp::MCP_AUTH_DIR));
        self.secret_sources = secret_sources(config, &mcp.secrets);
    }

    /// The project's instructions (AGENTS.md and the like) and the nested ones; a problem
    /// reading them is a warning.
    fn find_project_instructions(&mut self, config: &Config, cwd: &Path, home_dir: Option<&Path>) {
        match prompt::find_project_instructions(
            &config.project_root,
            cwd,
            home_dir,
            PROJECT_INSTRUCTIONS_LIMIT_BYTES,
        ) {
            Ok(found) => {
                let files = found.as_ref().map(|f| f.files.clone()).unwrap_or_default();
                if let Some(found) = &found {
                    self.warnings.extend(found.warnings.iter().cloned());
                }
                self.nested_instructions = Some(std::sync::Arc::new(
                    crate::agent::NestedInstructions::new(&config.project_root, files),
                ));
                self.project_instructions = found.map(|i| i.text);
            }
            Err(e) => self
                .warnings
                .push(format!("project instructions skipped: {e}")),
        }
    }

    /// Keeps the configured hooks that may run: the user's, and the project's once the
    /// project is trusted (a warning says how, when they are skipped).
    pub(super) fn plan_hooks(&mut self, config: &Config) {
        if !config.untrusted_ignored.is_empty() || !config.untrusted_dotenv.is_empty() {
            self.warnings.push(untrusted_warning(config));
        }
        if let Some(note) = &config.keyless_endpoint {
            self.warnings.push(note.clone());
        }
        let trust = config.trust_store();
        let (hooks, skipped) =
            crate::hooks::runnable_hooks(&config.hooks, &config.project_root, &trust);
        self.warnings.extend(skipped);
        if hooks.is_empty() {
            return;
        }
        self.hook_plan = Some(HookPlan {
            hooks,
            project_dir: config.project_root.clone(),
        });
    }
}

/// Says what an untrusted project's config file and `.env` set that rein ignored, and how
/// to trust it.
pub fn untrusted_warning(config: &Config) -> String {
    untrusted_warning_of(config, config.untrusted_ignored.clone())
}

/// The warning of [`untrusted_warning`] without the table keys, which `rein config --show`
/// marks beside their key; `None` when nothing else is ignored.
pub fn untrusted_warning_besides_tables(config: &Config) -> Option<String> {
    let items: Vec<String> = (config.untrusted_ignored.iter())
        .filter(|item| !config.untrusted_tables.iter().any(|t| &t.written == *item))
        .cloned()
        .collect();
    (!items.is_empty() || !config.untrusted_dotenv.is_empty())
        .then(|| untrusted_warning_of(config, items))
}

fn untrusted_warning_of(config: &Config, items: Vec<String>) -> String {
    let mut ignored = Vec::new();
    if !items.is_empty() {
        ignored.push(format!(
            "{} in {}",
            items.join(", "),
            config
                .project_root
                .join(".rein")
                .join("config.toml")
                .display()
        ));
    }
    ignored.extend(config.untrusted_dotenv.iter().cloned());
    format!(
        "{} ignored: this project is not trusted (or its config or .env changed since it \
         was), so rein uses your own settings. If you trust them, run `rein trust` in {}",
        ignored.join("; "),
        config.project_root.display()
    )
}

/// rein's environment; a variable that is not UTF-8 cannot be masked as text and is passed
/// over.
pub(super) fn process_vars() -> impl Iterator<Item = (String, String)> {
    std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
}

/// The configured rules, parsed with the home directory for `~/` (they were checked when the
/// configuration was read; one that fails now is left out with a warning).
pub(super) fn rule_set(
    lists: &RuleLists,
    home: Option<&Path>,
    warnings: &mut Vec<String>,
) -> RuleSet {
    let mut parse = |rules: &[ConfiguredRule]| -> Vec<SourcedRule> {
        rules
            .iter()
            .filter_map(|configured| match Rule::parse(&configured.text, home) {
                Ok(rule) => Some(SourcedRule {
                    rule,
                    origin: RuleOrigin::Configured(configured.source.to_string()),
                }),
                Err(e) => {
                    warnings.push(format!("rule left out ({}): {e}", configured.source));
                    None
                }
            })
            .collect()
    };
    RuleSet {
        allow: parse(&lists.allow),
        ask: parse(&lists.ask),
        deny: parse(&lists.deny),
    }
}

/// The names of the stdio servers configured to run in the OS sandbox.
fn sandboxed_servers(servers: &[rein_mcp::ServerConfig]) -> Vec<String> {
    servers
        .iter()
        .filter(|s| {
            matches!(
                s.transport,
                rein_mcp::TransportConfig::Stdio {
                    sandboxed: true,
                    ..
                }
            )
        })
        .map(|s| s.name.clone())
        .collect()
}

/// What to mask in outputs: the `.env` file's secrets and the MCP servers' configured
/// credentials, the API key (sent or not), and what `pass_env` lets through.
fn secret_sources(config: &Config, mcp_secrets: &[(String, String)]) -> SecretSources {
    SecretSources {
        // The servers' configured credentials are masked like the `.env` file's.
        dotenv: SecretValues::of(
            config
                .dotenv_secrets
                .iter()
                .chain(mcp_secrets.iter().map(|(k, v)| (k.as_str(), v.as_str()))),
        ),
        api_key: config
            .api_key()
            .zip(config.api_key_variable())
            .map(|(key, var)| (var.to_owned(), key.to_owned()))
            .or_else(|| {
                // A key not sent is masked all the same.
                config
                    .withheld_api_key
                    .as_ref()
                    .map(|(var, key)| (var.clone(), key.expose().to_owned()))
            }),
        pass_env: config.pass_env.clone(),
    }
}

/// The model endpoint as `config` describes it, with the proxy variables of `env`.
fn provider_config(
    config: &Config,
    env: &dyn Fn(&str) -> Option<String>,
    thinking_budget_tokens: Option<u32>,
    cache_ttl: rein_llm::CacheTtl,
) -> ProviderConfig {
    ProviderConfig {
        kind: config.provider,
        base_url: Some(config.base_url.clone()),
        api_key: config.api_key().map(str::to_owned),
        api_key_origin: config.api_key_origin(),
        network: NetworkConfig {
            // The configured file (`ca_file`), or SSL_CERT_FILE, which the config's
            // environment layer already read, with `.env` files.
            ca_file: config.ca_file.clone(),
            connect_timeout: config.connect_timeout,
            first_byte_timeout: config.first_byte_timeout,
            stream_idle_timeout: config.stream_idle_timeout,
            request_timeout: config.request_timeout,
            ..NetworkConfig::from_env_vars(env)
        },
        retry: RetryPolicy {
            max_retries: config.retries,
            ..RetryPolicy::default()
        },
        thinking_budget_tokens,
        cache_ttl,
        tool_format: config.tool_format,
        ollama_num_ctx: config.ollama_num_ctx,
    }
}
