//! The `[repl]` table: the permission mode the interactive REPL starts in when
//! `--permission-mode` is not given (what the first-start question records).

use serde::{Deserialize, Deserializer};

use super::{Source, de};
use crate::permissions::PermissionMode;

/// The `[repl]` settings of every layer, stacked; a file's table reads into one.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReplSettings {
    /// `permission_mode`: the REPL's mode without `--permission-mode`.
    #[serde(deserialize_with = "mode")]
    pub permission_mode: Option<PermissionMode>,
    /// What a project file tried to loosen, key by key (warnings, `rein config --show`).
    #[serde(skip)]
    pub left_out: Vec<super::LeftOut>,
}

/// Modes a project may choose for the person: the ones that ask at least as much as the
/// default one.
const PROJECT_MAY_CHOOSE: [PermissionMode; 2] = [PermissionMode::Plan, PermissionMode::Default];

/// Reads a `[repl]` table of a file given by `source` on top of `settings`.
pub(crate) fn read(
    settings: &mut ReplSettings,
    table: &toml::Table,
    source: &Source,
) -> Result<(), de::TableError> {
    let read: ReplSettings = de::read_keys(&toml::Value::Table(table.clone()), "repl", "[repl]")?;
    if let Some(mode) = read.permission_mode {
        if matches!(source, Source::ProjectFile(_)) && !PROJECT_MAY_CHOOSE.contains(&mode) {
            let reason = "a project may only choose a mode that asks (default, plan)";
            let written = format!("permission_mode = \"{mode}\"");
            settings.left_out.push(super::LeftOut {
                key: "repl.permission_mode".to_owned(),
                written,
                source: source.clone(),
                reason: reason.to_owned(),
                whole: true,
            });
        } else {
            settings.permission_mode = Some(mode);
        }
    }
    Ok(())
}

fn mode<'de, D: Deserializer<'de>>(d: D) -> Result<Option<PermissionMode>, D::Error> {
    de::with(d, |v| {
        let text = de::text(v)?;
        PermissionMode::parse(text).map(Some).ok_or_else(|| {
            format!(
                " \"{text}\" is not a mode; the modes are {}",
                PermissionMode::ALL.map(<&str>::from).join(", ")
            )
        })
    })
}

impl ReplSettings {
    /// Adds what `above` sets on top of this layer's settings.
    pub(crate) fn stack(&mut self, above: ReplSettings) {
        if above.permission_mode.is_some() {
            self.permission_mode = above.permission_mode;
        }
        self.left_out.extend(above.left_out);
    }
}

/// Whether a config file's text already has a `[repl]` table (then rein does not append
/// one: a second would make the file invalid).
pub fn has_repl_table(text: &str) -> bool {
    text.parse::<toml::Table>()
        .map(|table| table.contains_key("repl"))
        .unwrap_or(true)
}

/// `text` with a `[repl]` table setting `mode` appended (`text` has none).
pub fn with_repl_mode(text: &str, mode: PermissionMode) -> String {
    let mut out = text.to_owned();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(&format!(
        "# The REPL's permission mode when --permission-mode is not given (your answer to \
         rein's first-start question; change it here).\n[repl]\npermission_mode = \"{mode}\"\n"
    ));
    out
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn table(text: &str) -> toml::Table {
        text.parse().unwrap_or_default()
    }

    #[test]
    fn a_user_file_chooses_any_mode_and_a_project_only_one_that_asks() {
        let user = Source::UserFile(PathBuf::from("/h/.rein/config.toml"));
        let project = Source::ProjectFile(PathBuf::from("/src/.rein/config.toml"));
        let mut settings = ReplSettings::default();
        assert_eq!(
            read(&mut settings, &table("permission_mode = \"auto\""), &user),
            Ok(())
        );
        assert_eq!(settings.permission_mode, Some(PermissionMode::Auto));
        let mut from_project = ReplSettings::default();
        assert_eq!(
            read(
                &mut from_project,
                &table("permission_mode = \"yolo\""),
                &project
            ),
            Ok(())
        );
        assert_eq!(from_project.permission_mode, None);
        assert_eq!(
            from_project.left_out.len(),
            1,
            "{:?}",
            from_project.left_out
        );
        assert_eq!(
            read(
                &mut from_project,
                &table("permission_mode = \"plan\""),
                &project
            ),
            Ok(())
        );
        assert_eq!(from_project.permission_mode, Some(PermissionMode::Plan));
    }

    #[test]
    fn bad_values_and_keys_are_named() {
        let user = Source::UserFile(PathBuf::from("/h/.rein/config.toml"));
        let mut settings = ReplSettings::default();
        let bad = read(
            &mut settings,
            &table("permission_mode = \"careful\""),
            &user,
        );
        assert!(bad.is_err_and(|e| e.message.contains("\"careful\" is not a mode")));
        let unknown = read(&mut settings, &table("mode = \"auto\""), &user);
        assert!(unknown.is_err_and(|e| e.message.contains("known keys: permission_mode")));
    }

    #[test]
    fn the_recorded_answer_is_valid_toml_after_what_the_file_held() {
        for before in [
            "",
            "model = \"gpt-4o\"",
            "model = \"x\"\n\n[sandbox]\nnetwork = false\n",
        ] {
            let after = with_repl_mode(before, PermissionMode::Auto);
            let parsed: toml::Table = after.parse().unwrap();
            assert_eq!(parsed["repl"]["permission_mode"].as_str(), Some("auto"));
            assert!(has_repl_table(&after));
            assert!(!has_repl_table(before));
        }
    }
}
