//! The `[sandbox]` table: the level, the network, the writable roots both ways, the tool
//! caches, the credential stores hidden both ways and the ssh-agent, whether hooks and stdio
//! MCP servers run sandboxed, and a way to see the no-Landlock fallback.
//!
//! A user file sets what it likes. A project's file is the project's, not the person's: it
//! may only tighten (a stricter level, the network off, more read-only paths, writable
//! paths inside the project); what would loosen is left out with a warning.

use std::path::{Path, PathBuf};

use rein_tools::sandbox::{Network, SandboxLevel};
use serde::{Deserialize, Deserializer};
use toml::Value;

use super::{Source, de};

/// The `[sandbox]` settings of every layer, stacked; a file's table reads into one (its
/// keys are the `serde` names), and [`SandboxSettings::apply_projects`] decides what a
/// project's may set.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxSettings {
    /// `mode`: the level, when configured (default `workspace-write`).
    #[serde(rename = "mode", deserialize_with = "level")]
    pub level: Option<SandboxLevel>,
    /// `network`: `off`, `on` or `proxy` (`true` / `false` read as `on` / `off`; default: off
    /// in the auto permission mode and for `read-only`, on otherwise).
    #[serde(deserialize_with = "network")]
    pub network: Option<Network>,
    /// `network` in a project's file: it applies only where it keeps more away than the
    /// person's setting (or the mode's default) would.
    #[serde(skip)]
    pub project_network: Option<Network>,
    /// `allow_domains`: the hosts rein's proxy lets commands reach with `network = "proxy"`
    /// (`*.example.com` also names its subdomains). Only the person's own config sets them.
    #[serde(deserialize_with = "domains")]
    pub allow_domains: Vec<String>,
    /// `writable`: more writable trees (`~/` is the home directory).
    #[serde(deserialize_with = "de::strings")]
    pub writable: Vec<String>,
    /// `read_only`: trees taken away from the writable ones.
    #[serde(deserialize_with = "de::strings")]
    pub read_only: Vec<String>,
    /// `caches`: the tool caches under the home directory, replacing rein's list.
    #[serde(deserialize_with = "de::strings")]
    pub caches: Option<Vec<String>>,
    /// `hooks`: hooks run in the sandbox too (default off: they are the person's own code).
    #[serde(deserialize_with = "de::switch")]
    pub hooks: bool,
    /// `mcp`: stdio MCP servers run in the sandbox too, unless a server says `sandbox =
    /// false` (default off: they are the person's own code).
    #[serde(deserialize_with = "de::switch")]
    pub mcp: bool,
    /// `landlock = false`: behave as if the kernel had no Landlock (to see the fallback).
    #[serde(rename = "landlock", deserialize_with = "no_landlock")]
    pub assume_no_landlock: bool,
    /// `hide`: more credential stores commands see as empty (`~/` is the home directory).
    #[serde(deserialize_with = "de::strings")]
    pub hide: Vec<String>,
    /// `expose`: paths commands still see, though rein's list (or `hide`) hides them.
    #[serde(deserialize_with = "de::strings")]
    pub expose: Vec<String>,
    /// `ssh_agent`: whether commands may reach the ssh-agent (default off).
    #[serde(deserialize_with = "de::switch")]
    pub ssh_agent: Option<bool>,
    /// What a project file tried to loosen, key by key (warnings, `rein config --show`).
    #[serde(skip)]
    pub left_out: Vec<super::LeftOut>,
    /// The project file this layer was read from, when it was one: its level may only
    /// tighten the levels below it, which are known when the layers are stacked.
    #[serde(skip)]
    project_file: Option<Source>,
}

/// Reads a `[sandbox]` table of a file given by `source` on top of `settings`.
pub(crate) fn read(
    settings: &mut SandboxSettings,
    table: &toml::Table,
    source: &Source,
) -> Result<(), de::TableError> {
    let read: SandboxSettings =
        de::read_keys(&Value::Table(table.clone()), "sandbox", "[sandbox]")?;
    match source {
        Source::ProjectFile(file) => {
            settings.project_file = Some(source.clone());
            // The project's directory: the file is its `.rein/config.toml`.
            let dir = file.parent().and_then(Path::parent);
            settings.apply_projects(read, table, source, dir);
        }
        // The person's own table: everything applies.
        _ => settings.stack(read),
    }
    Ok(())
}

impl SandboxSettings {
    /// A project's table (`read` from `table`): only what tightens applies; the rest is left
    /// out with a warning.
    fn apply_projects(
        &mut self,
        read: SandboxSettings,
        table: &toml::Table,
        source: &Source,
        dir: Option<&Path>,
    ) {
        let mut left_out = |what: &str, why: &str| {
            let key = what.split([' ', '=']).next().unwrap_or(what);
            self.left_out.push(super::LeftOut {
                key: format!("sandbox.{key}"),
                written: what.to_owned(),
                source: source.clone(),
                reason: why.to_owned(),
                whole: key != "writable",
            });
        };
        if let Some(level) = read.level {
            if level.strictness() < self.level.unwrap_or_default().strictness() {
                left_out(
                    &format!("mode = \"{level}\""),
                    "a project may only make the sandbox stricter",
                );
            } else {
                self.level = Some(level);
            }
        }
        match read.network {
            Some(Network::Allowed) => left_out(
                "network = \"on\"",
                "a project may only keep more of the network away",
            ),
            Some(network) => self.project_network = stricter(self.project_network, network),
            None => {}
        }
        if table.contains_key("allow_domains") {
            left_out(
                "allow_domains",
                "only the person's own config lets commands reach hosts",
            );
        }
        for path in read.writable {
            // A project's paths are relative to it and stay inside it, links followed
            // (`homelink -> ~` would grant the home).
            let inside = !path.starts_with('~')
                && PathBuf::from(&path)
                    .components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)))
                && dir.is_none_or(|dir| resolves_inside(dir, &path));
            if inside {
                self.writable.push(path);
            } else {
                left_out(
                    &format!("writable \"{path}\""),
                    "a project may only make paths inside itself writable",
                );
            }
        }
        self.read_only.extend(read.read_only);
        if read.caches.is_some() {
            left_out("caches", "only the person's own config chooses the caches");
        }
        // Hooks and MCP servers: a project may put them in the sandbox, never take them out.
        self.hooks |= read.hooks;
        self.mcp |= read.mcp;
        if read.assume_no_landlock {
            left_out("landlock = false", "a project may not turn the sandbox off");
        }
        self.hide.extend(read.hide);
        if table.contains_key("expose") {
            left_out(
                "expose",
                "only the person's own config shows commands a credential store",
            );
        }
        match read.ssh_agent {
            Some(true) => left_out(
                "ssh_agent = true",
                "a project may only keep the ssh-agent hidden",
            ),
            Some(false) => self.ssh_agent = Some(false),
            None => {}
        }
    }

    /// Adds what `above` sets on top of this layer's settings (lists accumulate).
    pub(crate) fn stack(&mut self, above: SandboxSettings) {
        if let Some(level) = above.level {
            let below = self.level.unwrap_or_default();
            match &above.project_file {
                Some(file) if level.strictness() < below.strictness() => {
                    let reason = format!(
                        "a project may only make the sandbox stricter (the person's config \
                         says \"{below}\")"
                    );
                    let written = format!("mode = \"{level}\"");
                    self.left_out.push(super::LeftOut {
                        key: "sandbox.mode".to_owned(),
                        written,
                        source: file.clone(),
                        reason,
                        whole: true,
                    });
                }
                _ => self.level = Some(level),
            }
        }
        if above.network.is_some() {
            self.network = above.network;
        }
        if let Some(network) = above.project_network {
            self.project_network = stricter(self.project_network, network);
        }
        self.allow_domains.extend(above.allow_domains);
        self.writable.extend(above.writable);
        self.read_only.extend(above.read_only);
        if above.caches.is_some() {
            self.caches = above.caches;
        }
        self.hooks |= above.hooks;
        self.mcp |= above.mcp;
        self.assume_no_landlock |= above.assume_no_landlock;
        self.hide.extend(above.hide);
        self.expose.extend(above.expose);
        if above.ssh_agent.is_some() {
            self.ssh_agent = above.ssh_agent;
        }
        self.left_out.extend(above.left_out);
    }
}

/// Whether `path` (relative) names a place inside `dir` once links are followed; a path
/// that does not exist yet is judged by its deepest existing ancestor.
fn resolves_inside(dir: &Path, path: &str) -> bool {
    let Ok(root) = std::fs::canonicalize(dir) else {
        return true;
    };
    let target = dir.join(path);
    let existing = target.ancestors().find(|a| a.symlink_metadata().is_ok());
    existing
        .and_then(|a| std::fs::canonicalize(a).ok())
        .is_none_or(|real| real.starts_with(&root))
}

/// The stricter of a setting and another.
pub(crate) fn stricter(setting: Option<Network>, other: Network) -> Option<Network> {
    Some(match setting {
        Some(current) if current.strictness() >= other.strictness() => current,
        _ => other,
    })
}

/// `landlock`: `false` is to behave as if the kernel had none.
fn no_landlock<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    de::switch(d).map(|on: bool| !on)
}

fn level<'de, D: Deserializer<'de>>(d: D) -> Result<Option<SandboxLevel>, D::Error> {
    de::with(d, |v| {
        let text = de::text(v)?;
        SandboxLevel::parse(text).map(Some).ok_or_else(|| {
            format!(" \"{text}\" is not a level; the levels are read-only, workspace-write, off")
        })
    })
}

/// A `network` value: `"off"`, `"on"`, `"proxy"`, or `true` / `false` (older files).
fn network<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Network>, D::Error> {
    de::with(d, |v| match v {
        Value::Boolean(true) => Ok(Some(Network::Allowed)),
        Value::Boolean(false) => Ok(Some(Network::Blocked)),
        Value::String(text) => Network::parse(text).map(Some).ok_or_else(|| {
            format!(" \"{text}\" is not a setting; the settings are off, on, proxy")
        }),
        _ => Err(": expected \"off\", \"on\" or \"proxy\" (or true / false)".to_owned()),
    })
}

/// `allow_domains`: host names, or `*.` and one (never a URL, a port or a path).
fn domains<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    de::with(d, |v| {
        let domains = de::list(v)?;
        for domain in &domains {
            let host = domain.strip_prefix("*.").unwrap_or(domain);
            let valid = !host.is_empty()
                && host.split('.').all(|label| {
                    !label.is_empty()
                        && label
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
                });
            if !valid {
                return Err(format!(
                    ": \"{domain}\" is not a host name (write \"pypi.org\" or \
                     \"*.pythonhosted.org\": no scheme, port or path)"
                ));
            }
        }
        Ok(domains)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Table {
        text.parse().unwrap_or_default()
    }

    #[test]
    fn a_user_file_sets_everything() {
        let mut settings = SandboxSettings::default();
        let user = Source::UserFile(PathBuf::from("/h/.rein/config.toml"));
        let read_result = read(
            &mut settings,
            &table(
                "mode = \"off\"\nnetwork = false\nwritable = [\"~/x\"]\nread_only = [\"/tmp\"]\n\
                 caches = [\".m2\"]\nhooks = true\nmcp = true\nlandlock = false",
            ),
            &user,
        );
        assert_eq!(read_result, Ok(()));
        assert_eq!(settings.level, Some(SandboxLevel::Off));
        assert_eq!(settings.network, Some(Network::Blocked));
        assert_eq!(settings.writable, ["~/x"]);
        assert_eq!(settings.read_only, ["/tmp"]);
        assert_eq!(settings.caches, Some(vec![".m2".to_owned()]));
        assert!(settings.hooks && settings.mcp && settings.assume_no_landlock);
    }

    #[test]
    fn a_project_file_may_only_tighten() {
        let mut settings = SandboxSettings::default();
        let project = Source::ProjectFile(PathBuf::from("/src/app/.rein/config.toml"));
        let read_result = read(
            &mut settings,
            &table(
                "mode = \"off\"\nnetwork = true\nwritable = [\"~/.ssh\", \"../x\", \"build\"]\n\
                 landlock = false",
            ),
            &project,
        );
        assert_eq!(read_result, Ok(()));
        assert_eq!(settings.level, None);
        assert_eq!(settings.network, None);
        assert_eq!(settings.writable, ["build"]);
        assert!(!settings.assume_no_landlock);
        assert_eq!(settings.left_out.len(), 5, "{:?}", settings.left_out);
        let stricter = read(
            &mut settings,
            &table("mode = \"read-only\"\nnetwork = false"),
            &project,
        );
        assert_eq!(stricter, Ok(()));
        assert_eq!(settings.level, Some(SandboxLevel::ReadOnly));
        assert_eq!(settings.network, None);
        assert_eq!(settings.project_network, Some(Network::Blocked));
        // Never loosened again by a later project file.
        assert_eq!(
            read(&mut settings, &table("network = \"proxy\""), &project),
            Ok(())
        );
        assert_eq!(settings.project_network, Some(Network::Blocked));
        // Hooks and MCP servers: a project may put them in the sandbox, never take them out.
        settings.mcp = true;
        assert_eq!(read(&mut settings, &table("mcp = false"), &project), Ok(()));
        assert!(settings.mcp);
        settings.mcp = false;
        assert_eq!(read(&mut settings, &table("mcp = true"), &project), Ok(()));
        assert!(settings.mcp);
    }

    #[test]
    fn a_project_cannot_loosen_the_person_s_level_when_layers_stack() {
        let user = Source::UserFile(PathBuf::from("/h/.rein/config.toml"));
        let project = Source::ProjectFile(PathBuf::from("/src/app/.rein/config.toml"));
        let mut below = SandboxSettings::default();
        assert_eq!(
            read(&mut below, &table("mode = \"read-only\""), &user),
            Ok(())
        );
        let mut above = SandboxSettings::default();
        assert_eq!(
            read(&mut above, &table("mode = \"workspace-write\""), &project),
            Ok(())
        );
        below.stack(above);
        assert_eq!(below.level, Some(SandboxLevel::ReadOnly));
        assert!(
            below
                .left_out
                .iter()
                .any(|w| w.warning().contains("left out")),
            "{:?}",
            below.left_out
        );
        // Tighter still is taken; a user layer above may loosen.
        let mut above = SandboxSettings::default();
        let _ = read(&mut above, &table("mode = \"read-only\""), &project);
        below.stack(above);
        assert_eq!(below.level, Some(SandboxLevel::ReadOnly));
        let mut user_above = SandboxSettings::default();
        let _ = read(&mut user_above, &table("mode = \"off\""), &user);
        below.stack(user_above);
        assert_eq!(below.level, Some(SandboxLevel::Off));
    }

    #[test]
    fn a_project_s_writable_path_that_links_outside_it_is_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let project_dir = base.join("app");
        let home = base.join("home");
        std::fs::create_dir_all(project_dir.join("build")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::os::unix::fs::symlink(&home, project_dir.join("homelink")).unwrap();
        std::os::unix::fs::symlink(&home, project_dir.join("build/out")).unwrap();
        let project = Source::ProjectFile(project_dir.join(".rein/config.toml"));
        let mut settings = SandboxSettings::default();
        let read_result = read(
            &mut settings,
            &table("writable = [\"homelink\", \"build/out/x\", \"build\", \"new\"]"),
            &project,
        );
        assert_eq!(read_result, Ok(()));
        assert_eq!(settings.writable, ["build", "new"]);
        assert_eq!(settings.left_out.len(), 2, "{:?}", settings.left_out);
        assert!(settings.left_out[0].warning().contains("left out"));
    }

    #[test]
    fn network_takes_off_on_proxy_and_booleans_and_domains_are_host_names() {
        let user = Source::UserFile(PathBuf::from("/h/.rein/config.toml"));
        let mut settings = SandboxSettings::default();
        for (text, network) in [
            ("network = \"off\"", Network::Blocked),
            ("network = \"on\"", Network::Allowed),
            ("network = \"proxy\"", Network::Proxy),
            ("network = true", Network::Allowed),
            ("network = false", Network::Blocked),
        ] {
            assert_eq!(read(&mut settings, &table(text), &user), Ok(()), "{text}");
            assert_eq!(settings.network, Some(network), "{text}");
        }
        let err = read(&mut settings, &table("network = \"filtered\""), &user)
            .unwrap_err()
            .message;
        assert!(err.contains("off, on, proxy"), "{err}");
        let err = read(&mut settings, &table("network = 1"), &user)
            .unwrap_err()
            .message;
        assert!(err.contains("expected"), "{err}");
        let domains = "allow_domains = [\"pypi.org\", \"*.pythonhosted.org\", \"localhost\"]";
        assert_eq!(read(&mut settings, &table(domains), &user), Ok(()));
        assert_eq!(
            settings.allow_domains,
            ["pypi.org", "*.pythonhosted.org", "localhost"]
        );
        for bad in [
            "https://pypi.org",
            "pypi.org:443",
            "pypi.org/simple",
            "",
            "*.",
        ] {
            let text = format!("allow_domains = [\"{bad}\"]");
            let err = read(&mut settings, &table(&text), &user)
                .unwrap_err()
                .message;
            assert!(err.contains("not a host name"), "{bad}: {err}");
        }
        // A project may not add hosts.
        let project = Source::ProjectFile(PathBuf::from("/src/app/.rein/config.toml"));
        let mut settings = SandboxSettings::default();
        assert_eq!(
            read(
                &mut settings,
                &table("allow_domains = [\"evil.com\"]"),
                &project
            ),
            Ok(())
        );
        assert!(settings.allow_domains.is_empty());
        assert!(
            settings.left_out[0].warning().contains("left out"),
            "{:?}",
            settings.left_out
        );
    }

    #[test]
    fn mistakes_are_explained() {
        let mut settings = SandboxSettings::default();
        let user = Source::UserFile(PathBuf::from("/h/.rein/config.toml"));
        let err = read(&mut settings, &table("mode = \"full\""), &user)
            .unwrap_err()
            .message;
        assert!(err.contains("read-only, workspace-write, off"), "{err}");
        let err = read(&mut settings, &table("net = true"), &user)
            .unwrap_err()
            .message;
        assert!(err.contains("known keys"), "{err}");
    }

    #[test]
    fn credentials_hide_from_anyone_expose_and_the_agent_only_from_the_person() {
        let user = Source::UserFile(PathBuf::from("/h/.rein/config.toml"));
        let project = Source::ProjectFile(PathBuf::from("/src/app/.rein/config.toml"));
        let mut settings = SandboxSettings::default();
        let read_result = read(
            &mut settings,
            &table("hide = [\"~/.vault\"]\nexpose = [\"~/.aws\"]\nssh_agent = true"),
            &user,
        );
        assert_eq!(read_result, Ok(()));
        assert_eq!(settings.hide, ["~/.vault"]);
        assert_eq!(settings.expose, ["~/.aws"]);
        assert_eq!(settings.ssh_agent, Some(true));
        let mut from_project = SandboxSettings::default();
        let read_result = read(
            &mut from_project,
            &table("hide = [\"secrets\"]\nexpose = [\"~/.ssh\"]\nssh_agent = true"),
            &project,
        );
        assert_eq!(read_result, Ok(()));
        assert_eq!(from_project.hide, ["secrets"]);
        assert!(from_project.expose.is_empty());
        assert_eq!(from_project.ssh_agent, None);
        assert_eq!(
            from_project.left_out.len(),
            2,
            "{:?}",
            from_project.left_out
        );
        assert_eq!(
            read(&mut from_project, &table("ssh_agent = false"), &project),
            Ok(())
        );
        settings.stack(from_project);
        assert_eq!(settings.hide, ["~/.vault", "secrets"]);
        assert_eq!(settings.ssh_agent, Some(false));
        let err = read(&mut settings, &table("ssh_agent = \"yes\""), &user)
            .unwrap_err()
            .message;
        assert!(err.contains("true or false"), "{err}");
        let err = read(&mut settings, &table("hide = \"~/.ssh\""), &user)
            .unwrap_err()
            .message;
        assert!(err.contains("list of strings"), "{err}");
    }
}
