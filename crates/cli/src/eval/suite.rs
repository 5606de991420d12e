//! A suite file: `[defaults]` and one `[[task]]` table per task, checked whole before anything
//! runs, so a typo costs a second, not a night of runs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use super::suggest::did_you_mean;

/// The file looked for when SUITE is a directory.
pub(crate) const SUITE_FILE: &str = "suite.toml";

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
const DEFAULT_SETUP_TIMEOUT: Duration = Duration::from_secs(300);
const DEFAULT_VALIDATE_TIMEOUT: Duration = Duration::from_secs(300);

/// Keys both `[defaults]` and a task may give.
const SETTING_KEYS: [&str; 9] = [
    "model",
    "provider",
    "permission_mode",
    "max_rounds",
    "max_cost",
    "timeout_secs",
    "setup_timeout_secs",
    "validate_timeout_secs",
    "env",
];
/// Keys only a task gives.
const TASK_KEYS: [&str; 5] = ["id", "prompt", "files", "setup", "validate"];
const TOP_KEYS: [&str; 2] = ["defaults", "task"];
const PERMISSION_MODES: [&str; 5] = ["default", "accept-edits", "plan", "auto", "yolo"];
const PROVIDERS: [&str; 3] = ["openai", "openai-responses", "anthropic"];

/// A suite, checked: every task complete, every path present.
#[derive(Debug, Clone)]
pub(crate) struct Suite {
    /// The suite file.
    pub(crate) file: PathBuf,
    /// The directory paths in the suite are relative to.
    pub(crate) dir: PathBuf,
    /// The tasks, in the file's order.
    pub(crate) tasks: Vec<Task>,
}

/// One task, with `[defaults]` applied.
#[derive(Debug, Clone)]
pub(crate) struct Task {
    pub(crate) id: String,
    pub(crate) prompt: String,
    /// A directory copied into the fresh workspace.
    pub(crate) files: Option<PathBuf>,
    pub(crate) setup: Option<Script>,
    pub(crate) validate: Script,
    pub(crate) settings: Settings,
}

/// A setup or validation step: shell text, or a script file of the suite's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Script {
    /// Run with `bash -c`.
    Inline(String),
    /// Run with `bash FILE`.
    File(PathBuf),
}

/// The settings `[defaults]` and a task may give.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub(crate) struct Settings {
    pub(crate) model: Option<String>,
    pub(crate) provider: Option<String>,
    pub(crate) permission_mode: Option<String>,
    pub(crate) max_rounds: Option<u32>,
    pub(crate) max_cost: Option<f64>,
    pub(crate) timeout_secs: Option<u64>,
    pub(crate) setup_timeout_secs: Option<u64>,
    pub(crate) validate_timeout_secs: Option<u64>,
    pub(crate) env: Option<BTreeMap<String, String>>,
}

impl Settings {
    /// These settings, with `under`'s filling the gaps (`env` tables merge, these winning).
    fn over(self, under: &Settings) -> Settings {
        let env = match (self.env, &under.env) {
            (Some(mine), Some(theirs)) => {
                let mut env = theirs.clone();
                env.extend(mine);
                Some(env)
            }
            (mine, theirs) => mine.or_else(|| theirs.clone()),
        };
        Settings {
            model: self.model.or_else(|| under.model.clone()),
            provider: self.provider.or_else(|| under.provider.clone()),
            permission_mode: self
                .permission_mode
                .or_else(|| under.permission_mode.clone()),
            max_rounds: self.max_rounds.or(under.max_rounds),
            max_cost: self.max_cost.or(under.max_cost),
            timeout_secs: self.timeout_secs.or(under.timeout_secs),
            setup_timeout_secs: self.setup_timeout_secs.or(under.setup_timeout_secs),
            validate_timeout_secs: self.validate_timeout_secs.or(under.validate_timeout_secs),
            env,
        }
    }

    /// How long the agent may take.
    pub(crate) fn timeout(&self) -> Duration {
        self.timeout_secs
            .map_or(DEFAULT_TIMEOUT, Duration::from_secs)
    }

    /// How long the setup may take.
    pub(crate) fn setup_timeout(&self) -> Duration {
        self.setup_timeout_secs
            .map_or(DEFAULT_SETUP_TIMEOUT, Duration::from_secs)
    }

    /// How long the validation may take.
    pub(crate) fn validate_timeout(&self) -> Duration {
        self.validate_timeout_secs
            .map_or(DEFAULT_VALIDATE_TIMEOUT, Duration::from_secs)
    }

    fn check(&self, place: &str) -> Result<(), String> {
        if let Some(mode) = &self.permission_mode {
            one_of(place, "permission_mode", mode, &PERMISSION_MODES)?;
        }
        if let Some(provider) = &self.provider {
            one_of(place, "provider", provider, &PROVIDERS)?;
        }
        if self.max_rounds == Some(0) {
            return Err(format!("{place}: max_rounds must be at least 1"));
        }
        if let Some(cost) = self.max_cost
            && !(cost.is_finite() && cost > 0.0)
        {
            return Err(format!(
                "{place}: max_cost must be a number of US dollars above 0 (got {cost})"
            ));
        }
        for (key, value) in [
            ("timeout_secs", self.timeout_secs),
            ("setup_timeout_secs", self.setup_timeout_secs),
            ("validate_timeout_secs", self.validate_timeout_secs),
        ] {
            if value == Some(0) {
                return Err(format!("{place}: {key} must be at least 1"));
            }
        }
        for name in self.env.iter().flat_map(BTreeMap::keys) {
            let valid = !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                return Err(format!(
                    "{place}: env: \"{name}\" is not a valid environment variable name"
                ));
            }
        }
        Ok(())
    }
}

fn one_of(place: &str, key: &str, value: &str, known: &[&str]) -> Result<(), String> {
    if known.contains(&value) {
        return Ok(());
    }
    Err(format!(
        "{place}: {key} \"{value}\" is not one of {}{}",
        known.join(", "),
        did_you_mean(value, known.iter().copied())
    ))
}

/// A task as written, before `[defaults]` and checks.
#[derive(Debug, Deserialize)]
struct TaskTable {
    id: Option<String>,
    prompt: Option<String>,
    files: Option<PathBuf>,
    setup: Option<String>,
    validate: Option<String>,
    #[serde(flatten)]
    settings: Settings,
}

/// Where SUITE points: the file itself, or `suite.toml` in a directory.
pub(crate) fn locate(suite: &Path) -> Result<PathBuf, String> {
    if suite.is_dir() {
        let file = suite.join(SUITE_FILE);
        if file.is_file() {
            return Ok(file);
        }
        return Err(format!(
            "{} holds no {SUITE_FILE} (a suite is a TOML file, or a directory holding {SUITE_FILE})",
            suite.display()
        ));
    }
    if suite.is_file() {
        return Ok(suite.to_path_buf());
    }
    Err(format!(
        "no suite at {} (a suite is a TOML file, or a directory holding {SUITE_FILE})",
        suite.display()
    ))
}

/// Reads and checks the suite at `path` (a file or a directory).
pub(crate) fn load(path: &Path) -> Result<Suite, String> {
    let file = locate(path)?;
    let file = std::path::absolute(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let text = std::fs::read_to_string(&file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
    parse(&text, &file, &dir)
}

/// Checks a suite's text; `file` names it in messages, `dir` anchors its paths.
pub(crate) fn parse(text: &str, file: &Path, dir: &Path) -> Result<Suite, String> {
    let shown = file.display();
    let table: toml::Table = toml::from_str(text).map_err(|e| format!("{shown}: {e}"))?;
    check_keys(&format!("{shown}"), &table, TOP_KEYS.iter().copied())?;
    let defaults = match table.get("defaults") {
        None => Settings::default(),
        Some(value) => {
            let place = format!("{shown}: [defaults]");
            let Some(inner) = value.as_table() else {
                return Err(format!("{place} must be a table"));
            };
            check_keys(&place, inner, SETTING_KEYS.iter().copied())?;
            let settings: Settings = value
                .clone()
                .try_into()
                .map_err(|e| format!("{place}: {}", plain(&e)))?;
            settings.check(&place)?;
            settings
        }
    };
    let raw_tasks = match table.get("task") {
        None => Vec::new(),
        Some(toml::Value::Array(tasks)) => tasks.clone(),
        Some(_) => {
            return Err(format!(
                "{shown}: `task` must be an array of tables, written [[task]]"
            ));
        }
    };
    if raw_tasks.is_empty() {
        return Err(format!("{shown}: no tasks (add a [[task]] table)"));
    }
    let mut seen = BTreeSet::new();
    let mut tasks = Vec::with_capacity(raw_tasks.len());
    for (index, value) in raw_tasks.into_iter().enumerate() {
        let task = task(
            &format!("{shown}: task {}", index + 1),
            value,
            &defaults,
            dir,
        )?;
        if !seen.insert(task.id.clone()) {
            return Err(format!(
                "{shown}: task {}: the id \"{}\" is used twice",
                index + 1,
                task.id
            ));
        }
        tasks.push(task);
    }
    Ok(Suite {
        file: file.to_path_buf(),
        dir: dir.to_path_buf(),
        tasks,
    })
}

fn task(place: &str, value: toml::Value, defaults: &Settings, dir: &Path) -> Result<Task, String> {
    let Some(inner) = value.as_table() else {
        return Err(format!("{place} must be a table"));
    };
    check_keys(
        place,
        inner,
        TASK_KEYS.iter().chain(SETTING_KEYS.iter()).copied(),
    )?;
    let raw: TaskTable = value
        .try_into()
        .map_err(|e| format!("{place}: {}", plain(&e)))?;
    let id = raw
        .id
        .filter(|id| !id.trim().is_empty())
        .ok_or_else(|| format!("{place} has no id"))?;
    let place = format!("{place} (\"{id}\")");
    if !id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        || id.starts_with('.')
    {
        return Err(format!(
            "{place}: an id may hold letters, digits, '-', '_' and '.' only (it names files)"
        ));
    }
    let prompt = raw
        .prompt
        .filter(|p| !p.trim().is_empty())
        .ok_or_else(|| format!("{place} has no prompt"))?;
    let files = match raw.files {
        None => None,
        Some(files) => {
            let path = dir.join(&files);
            if !path.is_dir() {
                return Err(format!(
                    "{place}: files: {} is not a directory",
                    path.display()
                ));
            }
            Some(path)
        }
    };
    let setup = raw
        .setup
        .map(|text: String| script(&place, "setup", &text, dir))
        .transpose()?;
    let validate = match raw.validate {
        Some(text) => script(&place, "validate", text.as_str(), dir)?,
        None => {
            return Err(format!(
                "{place} has no validate (shell text or a script whose exit status 0 means pass)"
            ));
        }
    };
    let settings = raw.settings.over(defaults);
    settings.check(&place)?;
    Ok(Task {
        id,
        prompt,
        files,
        setup,
        validate,
        settings,
    })
}

/// Shell text, or a script of the suite's when the value names a file beside it; a value that
/// looks like a path but names nothing is a mistake, not a command.
fn script(place: &str, key: &str, text: &str, dir: &Path) -> Result<Script, String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(format!("{place}: {key} is empty"));
    }
    let looks_like_path = !trimmed.contains(char::is_whitespace)
        && (trimmed.contains('/') || trimmed.ends_with(".sh"));
    let candidate = dir.join(trimmed);
    if !trimmed.contains(char::is_whitespace) && candidate.is_file() {
        return Ok(Script::File(candidate));
    }
    if looks_like_path {
        return Err(format!(
            "{place}: {key} names a script, {}, that does not exist",
            candidate.display()
        ));
    }
    Ok(Script::Inline(text.to_owned()))
}

fn check_keys<'a>(
    place: &str,
    table: &toml::Table,
    known: impl Iterator<Item = &'a str> + Clone,
) -> Result<(), String> {
    for key in table.keys() {
        if !known.clone().any(|k| k == key) {
            return Err(format!(
                "{place}: unknown key \"{key}\"{}",
                did_you_mean(key, known.clone())
            ));
        }
    }
    Ok(())
}

/// A deserialisation error without toml's snippet (the place is said before it).
fn plain(error: &toml::de::Error) -> String {
    error.message().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_in(dir: &Path, text: &str) -> Result<Suite, String> {
        parse(text, &dir.join("suite.toml"), dir)
    }

    #[test]
    fn defaults_fill_the_gaps_and_env_tables_merge() {
        let dir = tempfile::tempdir().unwrap();
        let suite = parse_in(
            dir.path(),
            r#"
            [defaults]
            model = "m1"
            max_rounds = 5
            env = { A = "1", B = "2" }

            [[task]]
            id = "t1"
            prompt = "do it"
            validate = "test -f done"
            model = "m2"
            env = { B = "3" }
            "#,
        )
        .unwrap();
        let task = &suite.tasks[0];
        assert_eq!(task.settings.model.as_deref(), Some("m2"));
        assert_eq!(task.settings.max_rounds, Some(5));
        let env = task.settings.env.clone().unwrap();
        assert_eq!(env["A"], "1");
        assert_eq!(env["B"], "3");
        assert_eq!(task.validate, Script::Inline("test -f done".into()));
        assert_eq!(task.settings.timeout(), DEFAULT_TIMEOUT);
    }

    #[test]
    fn unknown_keys_say_what_was_meant() {
        let dir = tempfile::tempdir().unwrap();
        let err = parse_in(
            dir.path(),
            "[[task]]\nid = \"a\"\npromt = \"x\"\nvalidate = \"true\"\n",
        )
        .unwrap_err();
        assert!(err.contains("unknown key \"promt\""), "{err}");
        assert!(err.contains("did you mean \"prompt\"?"), "{err}");
        let err = parse_in(
            dir.path(),
            "[defaults]\ntimeout = 3\n[[task]]\nid=\"a\"\nprompt=\"p\"\nvalidate=\"true\"\n",
        )
        .unwrap_err();
        assert!(err.contains("[defaults]: unknown key \"timeout\""), "{err}");
    }

    #[test]
    fn missing_parts_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let err = parse_in(dir.path(), "[[task]]\nid = \"a\"\nvalidate = \"true\"\n").unwrap_err();
        assert!(err.contains("task 1 (\"a\") has no prompt"), "{err}");
        let err = parse_in(dir.path(), "[[task]]\nid = \"a\"\nprompt = \"p\"\n").unwrap_err();
        assert!(err.contains("has no validate"), "{err}");
        let err = parse_in(dir.path(), "").unwrap_err();
        assert!(err.contains("no tasks"), "{err}");
        let err = parse_in(
            dir.path(),
            "[[task]]\nid = \"a\"\nprompt = \"p\"\nvalidate = \"true\"\n[[task]]\nid = \"a\"\nprompt = \"p\"\nvalidate = \"true\"\n",
        )
        .unwrap_err();
        assert!(err.contains("used twice"), "{err}");
    }

    #[test]
    fn scripts_are_files_when_they_exist_and_errors_when_they_only_look_like_paths() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("check.sh"), "exit 0\n").unwrap();
        let suite = parse_in(
            dir.path(),
            "[[task]]\nid = \"a\"\nprompt = \"p\"\nvalidate = \"check.sh\"\nsetup = \"echo hi > x\"\n",
        )
        .unwrap();
        assert_eq!(
            suite.tasks[0].validate,
            Script::File(dir.path().join("check.sh"))
        );
        assert_eq!(
            suite.tasks[0].setup,
            Some(Script::Inline("echo hi > x".into()))
        );
        let err = parse_in(
            dir.path(),
            "[[task]]\nid = \"a\"\nprompt = \"p\"\nvalidate = \"tests/missing.sh\"\n",
        )
        .unwrap_err();
        assert!(err.contains("names a script"), "{err}");
        assert!(err.contains("missing.sh"), "{err}");
    }

    #[test]
    fn bad_values_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        for (line, expected) in [
            ("permission_mode = \"yollo\"", "did you mean \"yolo\"?"),
            ("timeout_secs = 0", "timeout_secs must be at least 1"),
            ("max_cost = -1.0", "max_cost must be"),
            ("max_cost = 0.0", "above 0"),
            ("files = \"nope\"", "is not a directory"),
            (
                "env = { \"1X\" = \"a\" }",
                "not a valid environment variable name",
            ),
            ("id2 = 3", "did you mean \"id\"?"),
        ] {
            let text =
                format!("[[task]]\nid = \"a\"\nprompt = \"p\"\nvalidate = \"true\"\n{line}\n");
            let err = parse_in(dir.path(), &text).unwrap_err();
            assert!(err.contains(expected), "{line}: {err}");
        }
    }
}
