//! The tables' keys as `rein config --show` lists them: each with the value in effect and the
//! file it comes from, and beside it what a file set for it that does not apply, with why.
//!
//! A key's value is the last file's that applies, except where the layers add up (lists of
//! paths, hosts, rules and variables: every file's that applies) or where a project may only
//! tighten (`network`, `hooks`, `mcp`, `landlock`: the value the stacked settings hold, from
//! the file that set it).

use toml::Value;

use super::{Config, LeftOut, Source};

/// A key of a table as `rein config --show` lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct ShownTableKey {
    /// The key's path: `sandbox.mode`, `pricing."my-model"`.
    pub key: String,
    /// The value in effect (TOML); `None` when no file's applies (rein's default does).
    pub value: Option<String>,
    /// The files it comes from (several for lists that add up).
    pub sources: Vec<Source>,
    /// What files set for it that does not apply.
    pub left_out: Vec<LeftOut>,
}

/// Keys whose lists add up over the layers.
const ADDING_UP: [&str; 6] = [
    "sandbox.allow_domains",
    "sandbox.writable",
    "sandbox.read_only",
    "sandbox.hide",
    "sandbox.expose",
    "secrets.pass_env",
];

impl Config {
    /// Every table key a file set, in the order files first set them, with the value in
    /// effect, its files and what does not apply.
    pub fn table_keys(&self) -> Vec<ShownTableKey> {
        let left_out: Vec<&LeftOut> = (self.sandbox.left_out.iter())
            .chain(&self.repl.left_out)
            .chain(&self.untrusted_tables)
            .collect();
        let mut shown: Vec<ShownTableKey> = Vec::new();
        for set in &self.table_values {
            let at = slot(&mut shown, &set.key);
            let whole = |l: &&LeftOut| l.whole && l.key == set.key && l.source == set.source;
            if left_out.iter().any(whole) {
                continue;
            }
            let key = &mut shown[at];
            if !ADDING_UP.contains(&key.key.as_str()) {
                key.sources.clear();
            }
            key.value = Some(set.value.clone());
            key.sources.push(set.source.clone());
        }
        for left in left_out {
            let at = slot(&mut shown, &left.key);
            shown[at].left_out.push(left.clone());
        }
        // Allow rules are listed with the rules; here only when a file's are left out.
        if let Some(key) = shown.iter_mut().find(|s| s.key == "permissions.allow") {
            let rules = &self.rules.allow;
            let texts = rules.iter().map(|r| Value::from(r.text.clone())).collect();
            key.value = (!rules.is_empty()).then(|| Value::Array(texts).to_string());
            key.sources = rules.iter().map(|r| r.source.clone()).collect();
        }
        for key in &mut shown {
            if key.value.is_some()
                && let Some(stacked) = self.stacked_value(&key.key)
            {
                let stacked = stacked.to_string();
                // Held by an earlier file than the last that set it: that file is the source.
                let held_below = !ADDING_UP.contains(&key.key.as_str())
                    && key.value.as_deref() != Some(stacked.as_str());
                let holder = (self.table_values.iter().rev())
                    .find(|set| set.key == key.key && set.value == stacked);
                if held_below && let Some(set) = holder {
                    key.sources = vec![set.source.clone()];
                }
                key.value = Some(stacked);
            }
            key.sources.dedup();
        }
        shown
    }

    /// The value the stacked settings hold for a key whose value is not simply the last
    /// file's.
    fn stacked_value(&self, key: &str) -> Option<Value> {
        let list =
            |items: &[String]| Value::Array(items.iter().cloned().map(Value::from).collect());
        let sandbox = &self.sandbox;
        Some(match key {
            "sandbox.allow_domains" => list(&sandbox.allow_domains),
            "sandbox.writable" => list(&sandbox.writable),
            "sandbox.read_only" => list(&sandbox.read_only),
            "sandbox.hide" => list(&sandbox.hide),
            "sandbox.expose" => list(&sandbox.expose),
            "secrets.pass_env" => list(&self.pass_env),
            "sandbox.hooks" => Value::Boolean(sandbox.hooks),
            "sandbox.mcp" => Value::Boolean(sandbox.mcp),
            "sandbox.landlock" => Value::Boolean(!sandbox.assume_no_landlock),
            "sandbox.network" => {
                let network = match (sandbox.network, sandbox.project_network) {
                    (Some(own), Some(project)) => super::sandbox::stricter(Some(own), project),
                    (own, project) => own.or(project),
                };
                Value::from(<&str>::from(network?))
            }
            _ => return None,
        })
    }
}

/// The place of `key` in `shown`, added at the end when it is not there yet.
fn slot(shown: &mut Vec<ShownTableKey>, key: &str) -> usize {
    if let Some(at) = shown.iter().position(|s| s.key == key) {
        return at;
    }
    shown.push(ShownTableKey {
        key: key.to_owned(),
        value: None,
        sources: Vec::new(),
        left_out: Vec::new(),
    });
    shown.len() - 1
}
