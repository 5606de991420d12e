//! The settings the tools get, through the builder the command line uses.

use std::time::Duration;

use rein_core::build::AgentBuilder;
use rein_core::config::{Config, Source};
use rein_tools::ToolConfig;

use super::Fixture;

/// A server on this machine needs no API key, so an agent builds without one.
const LOCAL_SERVER: &str = "base_url = \"http://127.0.0.1:9/v1\"\n";

/// The tool settings of the agent `config` describes.
fn tool_config_of(config: &Config, fx: &Fixture) -> ToolConfig {
    let agent = AgentBuilder::from_config(config, &fx.cwd, Some(&fx.home), &|_| None)
        .build()
        .unwrap();
    agent.tool_context().config().clone()
}

#[test]
fn a_projects_tool_limits_reach_the_tools_of_the_agent_built_from_it() {
    let fx = Fixture::new();
    let file = fx.project_file(&format!(
        "{LOCAL_SERVER}tool_output_file_max_bytes = 2097152\ntool_output_budget_chars = 1234\n\
         bash_timeout_secs = 7\n"
    ));
    let config = fx.load();
    assert_eq!(config.tool_output_file_max_bytes, 2 * 1024 * 1024);
    assert_eq!(
        config.source("tool_output_file_max_bytes"),
        &Source::ProjectFile(file)
    );

    let tools = tool_config_of(&config, &fx);
    assert_eq!(tools.offload_max_bytes, 2 * 1024 * 1024);
    assert_eq!(tools.output_budget_chars, 1234);
    assert_eq!(tools.bash_default_timeout, Duration::from_secs(7));
}

#[test]
fn unset_tool_limits_are_the_tools_own_defaults() {
    let fx = Fixture::new();
    fx.project_file(LOCAL_SERVER);
    let config = fx.load();
    assert_eq!(
        config.source("tool_output_file_max_bytes"),
        &Source::Default
    );
    let tools = tool_config_of(&config, &fx);
    let defaults = ToolConfig::new(&fx.cwd, fx.cwd.join("out"));
    assert_eq!(tools.offload_max_bytes, 64 * 1024 * 1024);
    assert_eq!(tools.offload_max_bytes, defaults.offload_max_bytes);
    assert_eq!(tools.output_budget_chars, defaults.output_budget_chars);
    assert_eq!(tools.bash_default_timeout, defaults.bash_default_timeout);
}

#[test]
fn a_cap_below_one_mebibyte_is_refused() {
    let fx = Fixture::new();
    let file = fx.user_file("tool_output_file_max_bytes = 65536\n");
    assert_eq!(
        fx.error(),
        format!(
            "invalid value for \"tool_output_file_max_bytes\" in {} (line 1): 65536 is less \
             than 1048576 bytes (1 MiB), the smallest file size rein accepts",
            file.display()
        )
    );
}
