//! What a server's model list (`GET /v1/models`) says of one model: whether it is served at
//! all (a typo gets the closest names), and, from gateways that list them, its prices
//! (LiteLLM's `input_cost_per_token`, OpenRouter's `pricing.prompt`). The window the same
//! lists give (`max_input_tokens`, `context_length`) is read with the other windows, in
//! `probe`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::Price;
use crate::target::Target;

/// How long the server has to answer.
const LISTING_TIMEOUT: Duration = Duration::from_secs(3);
/// The largest answer read (OpenRouter's list runs to a few megabytes).
const LISTING_BODY_MAX_BYTES: usize = 16 * 1024 * 1024;
/// How many close names a warning offers.
const CLOSEST_NAMES: usize = 3;
/// How long one answer of the list serves (no answer in time counts as one): the questions
/// asked together at the first turn's start, the model check and the window probe, share
/// it; one asked later (a window asked again) gets a fresh answer, and `/model` builds a new
/// provider, which has none yet.
const LIST_REUSE: Duration = Duration::from_secs(10);

impl Target {
    /// `{base}/models` (base up to `/v1`), asked now unless a recent answer is at hand; a
    /// second question asked meanwhile waits for the first one's answer.
    pub(crate) async fn model_list(&self) -> Option<Arc<Value>> {
        let mut last = self.models.last.lock().await;
        if let Some((at, list)) = &*last
            && at.elapsed() < LIST_REUSE
        {
            return list.clone();
        }
        let url = format!("{}/models", self.endpoint.base_url);
        let answer =
            (self.http).fetch_json(&url, self.headers.clone(), None, LISTING_BODY_MAX_BYTES);
        let list = tokio::time::timeout(LISTING_TIMEOUT, answer)
            .await
            .ok()
            .flatten()
            .map(Arc::new);
        *last = Some((Instant::now(), list.clone()));
        list
    }
}

/// What the model list says of one model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelListing {
    /// Whether the list names the model.
    pub listed: bool,
    /// When it does not, the listed names closest to it, closest first.
    pub closest: Vec<String>,
    /// The prices the list gives for it, when it gives any.
    pub price: Option<Price>,
}

impl ModelListing {
    /// The warning for a model the list does not name: `the server does not list gpt-4p
    /// (did you mean gpt-4o?)`; `None` when it does.
    pub fn warning(&self, model: &str) -> Option<String> {
        if self.listed {
            return None;
        }
        let hint = match self.closest.as_slice() {
            [] => String::new(),
            names => format!(" (did you mean {}?)", names.join(", ")),
        };
        Some(format!(
            "the server's model list does not name {model}{hint}; requests may be refused"
        ))
    }
}

/// Asks the server's model list about `model`; `None` when the server has no list, or an
/// empty one.
pub(crate) async fn fetch(target: &Target, model: &str) -> Option<ModelListing> {
    read(&*target.model_list().await?, model)
}

/// Reads an OpenAI-style list (`{"data": [{"id": ...}, ...]}`).
pub(crate) fn read(list: &Value, model: &str) -> Option<ModelListing> {
    let entries = list.get("data")?.as_array()?;
    let ids: Vec<&str> = entries
        .iter()
        .filter_map(|e| e.get("id").and_then(Value::as_str))
        .collect();
    if ids.is_empty() {
        return None;
    }
    let entry = entries.iter().find(|e| lists_as(e, model));
    // llama.cpp's server answers with the one model it loaded, whatever name it is asked for.
    let serves_any_name = matches!(entries.as_slice(),
        [only] if only.get("owned_by").and_then(Value::as_str) == Some("llamacpp"));
    Some(ModelListing {
        listed: entry.is_some() || serves_any_name,
        closest: if entry.is_some() || serves_any_name {
            Vec::new()
        } else {
            closest(model, &ids)
        },
        price: entry.and_then(listed_price),
    })
}

/// Whether a model list's `entry` is `model`: by its id, or as Ollama lists a model asked
/// for without a tag (`qwen2.5-coder` is `qwen2.5-coder:latest`).
pub(crate) fn lists_as(entry: &Value, model: &str) -> bool {
    (entry.get("id").and_then(Value::as_str)).is_some_and(|id| as_asked(id, model) == model)
}

/// A listed `id` as `model` would name it: Ollama's `NAME:latest` is `NAME` to a model asked
/// for without a tag.
fn as_asked<'a>(id: &'a str, model: &str) -> &'a str {
    match id.strip_suffix(":latest") {
        Some(name) if !model.contains(':') => name,
        _ => id,
    }
}

/// The prices an entry gives, per token (LiteLLM) or as per-token strings (OpenRouter),
/// turned into USD per million tokens.
pub(crate) fn listed_price(entry: &Value) -> Option<Price> {
    let per_token = |value: Option<&Value>| -> Option<f64> {
        let value = value?;
        let number = value
            .as_f64()
            .or_else(|| value.as_str().and_then(|s| s.trim().parse().ok()))?;
        (number.is_finite() && number >= 0.0).then_some(number * 1e6)
    };
    let field = |litellm: &str, openrouter: &str| {
        per_token(entry.get(litellm)).or_else(|| per_token(entry.pointer(openrouter)))
    };
    let input = field("input_cost_per_token", "/pricing/prompt")?;
    let output = field("output_cost_per_token", "/pricing/completion")?;
    Some(Price {
        input_per_mtok: input,
        output_per_mtok: output,
        cached_input_per_mtok: field("cache_read_input_token_cost", "/pricing/input_cache_read")
            .unwrap_or(input),
        cache_write_per_mtok: field(
            "cache_creation_input_token_cost",
            "/pricing/input_cache_write",
        ),
    })
}

/// The names closest to `model`: those within a few edits, else those that contain it or
/// that it contains, closest first.
fn closest(model: &str, ids: &[&str]) -> Vec<String> {
    let wanted = model.to_ascii_lowercase();
    let untagged = |id: &str| as_asked(&id.to_ascii_lowercase(), &wanted).to_owned();
    let tail = |id: &str| untagged(id.rsplit('/').next().unwrap_or(id));
    let mut scored: Vec<(usize, &str)> = ids
        .iter()
        .map(|id| {
            let distance =
                edit_distance(&wanted, &untagged(id)).min(edit_distance(&wanted, &tail(id)));
            (distance, *id)
        })
        .filter(|(distance, id)| {
            *distance <= (wanted.len() / 3).max(2)
                || id.to_ascii_lowercase().contains(&wanted)
                || (wanted.len() >= 3 && wanted.contains(&tail(id)))
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored
        .into_iter()
        .take(CLOSEST_NAMES)
        .map(|(_, id)| id.to_owned())
        .collect()
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(above + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_typo_gets_the_closest_names() {
        let list = json!({"data": [
            {"id": "gpt-4o"}, {"id": "gpt-4o-mini"}, {"id": "o3"}, {"id": "text-embedding-3-small"}
        ]});
        let listing = read(&list, "gpt-4p").unwrap();
        assert!(!listing.listed);
        assert_eq!(listing.closest[0], "gpt-4o");
        assert_eq!(
            listing.warning("gpt-4p").unwrap(),
            "the server's model list does not name gpt-4p (did you mean gpt-4o?); \
             requests may be refused"
        );
        let listed = read(&list, "gpt-4o").unwrap();
        assert!(listed.listed && listed.warning("gpt-4o").is_none());
        assert!(read(&json!({"data": []}), "x").is_none());
        assert!(read(&json!({"object": "list"}), "x").is_none());
        assert!(read(&list, "nonexistent-x").unwrap().closest.is_empty());
    }

    #[test]
    fn llama_cpp_and_ollama_serve_names_their_lists_spell_otherwise() {
        // llama.cpp answers with the one model it loaded, whatever it is asked for.
        let llama = json!({"data": [{"id": "/models/qwen3-8b.gguf", "owned_by": "llamacpp"}]});
        assert_eq!(read(&llama, "gpt-4o").unwrap().warning("gpt-4o"), None);
        // Ollama lists tags; a name without one is its `latest`.
        let ollama = json!({"data": [
            {"id": "qwen2.5-coder:latest", "owned_by": "library"},
            {"id": "llama3.2:3b", "owned_by": "library"}
        ]});
        assert!(read(&ollama, "qwen2.5-coder").unwrap().listed);
        assert!(read(&ollama, "qwen2.5-coder:latest").unwrap().listed);
        let other = read(&ollama, "llama3.2").unwrap();
        assert!(!other.listed, "llama3.2 is not llama3.2:3b");
        assert_eq!(other.closest[0], "llama3.2:3b");
        // A typo of a name listed with its tag is still close to it.
        let typo = read(&ollama, "qwen2.5-codr").unwrap();
        assert_eq!(
            typo.warning("qwen2.5-codr").unwrap(),
            "the server's model list does not name qwen2.5-codr (did you mean \
             qwen2.5-coder:latest?); requests may be refused"
        );
        // Any other server's one model is named exactly.
        let vllm = json!({"data": [{"id": "Qwen/Qwen3-8B", "owned_by": "vllm"}]});
        assert!(!read(&vllm, "gpt-4o").unwrap().listed);
    }

    #[test]
    fn gateway_prices_are_read_per_million() {
        let litellm = json!({"id": "team-claude", "max_input_tokens": 128000,
            "input_cost_per_token": 3e-6, "output_cost_per_token": 1.5e-5,
            "cache_read_input_token_cost": 3e-7, "cache_creation_input_token_cost": 3.75e-6});
        let price = listed_price(&litellm).unwrap();
        assert!((price.input_per_mtok - 3.0).abs() < 1e-9);
        assert!((price.output_per_mtok - 15.0).abs() < 1e-9);
        assert!((price.cached_input_per_mtok - 0.3).abs() < 1e-9);
        assert!((price.cache_write_per_mtok.unwrap() - 3.75).abs() < 1e-9);
        let openrouter = json!({"id": "openai/gpt-4o", "context_length": 128000,
            "pricing": {"prompt": "0.0000025", "completion": "0.00001", "input_cache_read": "0.00000125"}});
        let price = listed_price(&openrouter).unwrap();
        assert!((price.input_per_mtok - 2.5).abs() < 1e-9);
        assert!((price.cached_input_per_mtok - 1.25).abs() < 1e-9);
        assert_eq!(price.cache_write_per_mtok, None);
        assert!(listed_price(&json!({"id": "m"})).is_none());
        assert!(listed_price(&json!({"pricing": {"prompt": "-1", "completion": "0"}})).is_none());
    }
}
