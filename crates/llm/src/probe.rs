//! Asking an OpenAI-compatible server which context window it runs the model with: local
//! servers load a model with a window of their own (`llama-server -c 8192`, Ollama's
//! `num_ctx`), often far below what the model was trained for, and only they know it.
//!
//! A server on this machine or the local network is asked its model list first, which every
//! server rein knows has: it settles the window for vLLM (`max_model_len`) and gateways, and
//! its `owned_by` names llama.cpp and LM Studio. Then only the named server's own endpoint is
//! asked (llama.cpp `/props`, LM Studio's `/api/v0/models`, Ollama's `/api/ps`, then
//! `/api/show` for a model it has not loaded), or all of them at once when the list names
//! none; a server without a list is none of these and is asked nothing more. A remote server
//! is asked only `/models`, and only for a model rein's table does not know. Nothing here
//! fails: a server that does not answer in time, or answers something else, says nothing.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::target::Target;
use crate::window::{ServerWindow, context_window_for};

/// How long the server has to answer each question (they are asked together).
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);
/// The largest answer read (a gateway's model list runs to a few megabytes).
const PROBE_BODY_MAX_BYTES: usize = 16 * 1024 * 1024;
/// What LM Studio and Ollama load a model with unless told otherwise (their smallest
/// default): a guess until the model is loaded.
const LOCAL_DEFAULT_WINDOW_TOKENS: u64 = 4096;

/// What the server at `base` (up to `/v1`) says of `model`'s window.
pub(crate) async fn probe(target: &Target, model: &str) -> Option<ServerWindow> {
    let base = target.endpoint.base_url.as_str();
    let ask = |url: String, body: Option<Value>| {
        let headers = target.headers.clone();
        async move {
            let answer = (target.http).fetch_json(&url, headers, body, PROBE_BODY_MAX_BYTES);
            tokio::time::timeout(PROBE_TIMEOUT, answer)
                .await
                .ok()
                .flatten()
        }
    };
    if !is_local(base) {
        if context_window_for(model).is_some() {
            return None;
        }
        let models = target.model_list().await?;
        return Answers {
            models: Some(models),
            ..Answers::default()
        }
        .window(model);
    }
    let root = base.strip_suffix("/v1").unwrap_or(base);
    let models = target.model_list().await?;
    let listed = Answers {
        models: Some(Arc::clone(&models)),
        ..Answers::default()
    };
    if let Some(window) = listed.window(model) {
        return Some(window);
    }
    let named = LocalServer::named_in(&models, model);
    let asks = |server: LocalServer| named.is_none_or(|named| named == server);
    let lm_studio = lm_studio_url(root, model);
    let (props, lm_studio, ollama_ps) = tokio::join!(
        async {
            if asks(LocalServer::LlamaCpp) {
                ask(format!("{root}/props"), None).await
            } else {
                None
            }
        },
        async {
            match (asks(LocalServer::LmStudio), lm_studio) {
                (true, Some(url)) => ask(url, None).await,
                _ => None,
            }
        },
        async {
            if asks(LocalServer::Ollama) {
                ask(format!("{root}/api/ps"), None).await
            } else {
                None
            }
        },
    );
    // Only Ollama answers /api/ps; the model's own settings matter when it is not loaded.
    let loaded = ollama_ps.as_ref().and_then(|ps| ollama_loaded(ps, model));
    let ollama_show = match (&ollama_ps, loaded) {
        (Some(_), None) => {
            let body = serde_json::json!({ "model": model });
            ask(format!("{root}/api/show"), Some(body)).await
        }
        (Some(_), Some(_)) | (None, _) => None,
    };
    Answers {
        props,
        models: Some(models),
        lm_studio,
        ollama_ps,
        ollama_show,
    }
    .window(model)
}

/// A local server that a model list's `owned_by` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LocalServer {
    LlamaCpp,
    LmStudio,
    Ollama,
}

impl LocalServer {
    /// The server a model list names for `model`: its entry's `owned_by`, or, when the list
    /// does not name the model (a typo, a llama.cpp serving several), the one every entry
    /// names.
    fn named_in(list: &Value, model: &str) -> Option<Self> {
        if let Some(entry) = model_entry(list, model) {
            return Self::named_by(entry);
        }
        let mut named = list.get("data")?.as_array()?.iter().map(Self::named_by);
        let first = named.next()??;
        named.all(|server| server == Some(first)).then_some(first)
    }

    /// The server that lists `entry`, when its `owned_by` says (Ollama's is the model's
    /// namespace, `library` for its own models).
    fn named_by(entry: &Value) -> Option<Self> {
        match entry.get("owned_by")?.as_str()? {
            "llamacpp" => Some(Self::LlamaCpp),
            "organization_owner" => Some(Self::LmStudio),
            "library" | "ollama" => Some(Self::Ollama),
            _ => None,
        }
    }
}

/// `{root}/api/v0/models/{model}`, the model's name escaped as a path segment.
fn lm_studio_url(root: &str, model: &str) -> Option<String> {
    let mut url = reqwest::Url::parse(root).ok()?;
    url.path_segments_mut()
        .ok()?
        .pop_if_empty()
        .extend(["api", "v0", "models", model]);
    Some(url.to_string())
}

/// What each question got.
#[derive(Debug, Default)]
struct Answers {
    props: Option<Value>,
    models: Option<Arc<Value>>,
    lm_studio: Option<Value>,
    ollama_ps: Option<Value>,
    ollama_show: Option<Value>,
}

impl Answers {
    /// The most certain answer: a loaded window before a configured one before a guess.
    fn window(&self, model: &str) -> Option<ServerWindow> {
        let settled = |tokens: Option<u64>, source: &'static str| {
            tokens.filter(|&t| t > 0).map(|tokens| ServerWindow {
                tokens,
                source,
                settled: true,
                ollama_loaded: false,
            })
        };
        let listed = self.models.as_ref().and_then(|m| model_entry(m, model));
        let lm_studio = self.lm_studio.as_ref();
        let show = self.ollama_show.as_ref();
        settled(
            self.props.as_ref().and_then(|p| {
                number(p.pointer("/default_generation_settings/n_ctx"))
                    .or_else(|| number(p.get("n_ctx")))
            }),
            "llama.cpp /props n_ctx",
        )
        .or_else(|| {
            settled(
                listed.and_then(|e| number(e.get("max_model_len"))),
                "vLLM /v1/models max_model_len",
            )
        })
        .or_else(|| {
            settled(
                lm_studio.and_then(|m| number(m.get("loaded_context_length"))),
                "LM Studio loaded_context_length",
            )
        })
        .or_else(|| {
            settled(
                self.ollama_ps
                    .as_ref()
                    .and_then(|ps| ollama_loaded(ps, model))
                    .and_then(|e| number(e.get("context_length"))),
                "Ollama /api/ps context_length",
            )
            .map(|window| ServerWindow {
                ollama_loaded: true,
                ..window
            })
        })
        .or_else(|| {
            settled(
                show.and_then(|s| s.get("parameters"))
                    .and_then(Value::as_str)
                    .and_then(num_ctx_parameter),
                "Ollama num_ctx",
            )
        })
        .or_else(|| {
            settled(
                listed.and_then(|e| number(e.get("max_input_tokens"))),
                "LiteLLM /v1/models max_input_tokens",
            )
        })
        .or_else(|| {
            settled(
                listed.and_then(|e| number(e.get("context_length"))),
                "/models context_length",
            )
        })
        .or_else(|| {
            // Not loaded yet: LM Studio loads it with its default unless told otherwise.
            lm_studio
                .and_then(|m| number(m.get("max_context_length")))
                .map(|max| ServerWindow {
                    tokens: max.min(LOCAL_DEFAULT_WINDOW_TOKENS),
                    source: "LM Studio's default for a model not loaded yet",
                    settled: false,
                    ollama_loaded: false,
                })
        })
        .or_else(|| {
            show.map(|_| ServerWindow {
                tokens: LOCAL_DEFAULT_WINDOW_TOKENS,
                source: "Ollama's default for a model not loaded yet",
                settled: false,
                ollama_loaded: false,
            })
        })
    }
}

/// The entry of `model` in an OpenAI-style model list (`{"data": [{"id": ...}]}`), or the only
/// entry when there is one.
fn model_entry<'a>(list: &'a Value, model: &str) -> Option<&'a Value> {
    let entries = list.get("data")?.as_array()?;
    entries
        .iter()
        .find(|e| crate::listing::lists_as(e, model))
        .or(match entries.as_slice() {
            [only] => Some(only),
            _ => None,
        })
}

/// Ollama's entry for `model` among the loaded ones (`qwen2.5-coder` is
/// `qwen2.5-coder:latest`).
fn ollama_loaded<'a>(ps: &'a Value, model: &str) -> Option<&'a Value> {
    let tagged = |name: &str| {
        if name.contains(':') {
            name.to_owned()
        } else {
            format!("{name}:latest")
        }
    };
    let wanted = tagged(model);
    ps.get("models")?.as_array()?.iter().find(|entry| {
        ["name", "model"].iter().any(|key| {
            entry
                .get(key)
                .and_then(Value::as_str)
                .is_some_and(|name| tagged(name) == wanted)
        })
    })
}

/// `num_ctx` in Ollama's `parameters` text (`num_ctx 8192` on a line of its own).
fn num_ctx_parameter(parameters: &str) -> Option<u64> {
    parameters.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        (words.next() == Some("num_ctx"))
            .then(|| words.next()?.parse().ok())
            .flatten()
    })
}

fn number(value: Option<&Value>) -> Option<u64> {
    value.and_then(Value::as_u64)
}

/// Whether `url` is on this machine or the local network (a private address, or a host name
/// without a domain or under `.local`, `.lan`, `.internal`): where servers run a model with a
/// window of their own choosing.
fn is_local(url: &str) -> bool {
    let Some(host) = crate::url_host(url) else {
        return false;
    };
    match host.parse::<IpAddr>() {
        Ok(IpAddr::V4(ip)) => ip.is_loopback() || ip.is_private() || ip.is_link_local(),
        Ok(IpAddr::V6(ip)) => {
            ip.to_canonical().is_loopback()
                || matches!(ip.to_canonical(), IpAddr::V4(v4) if v4.is_private())
                || ip.is_unique_local()
                || ip.is_unicast_link_local()
        }
        Err(_) => {
            !host.contains('.')
                || [".localhost", ".local", ".lan", ".internal", ".home.arpa"]
                    .iter()
                    .any(|suffix| host.ends_with(suffix))
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn window(answers: &Answers, model: &str) -> Option<(u64, bool)> {
        answers.window(model).map(|w| (w.tokens, w.settled))
    }

    #[test]
    fn each_servers_answer_is_read() {
        let llama = Answers {
            props: Some(json!({"default_generation_settings": {"n_ctx": 8192}, "total_slots": 1})),
            models: Some(Arc::new(
                json!({"data": [{"id": "m", "meta": {"n_ctx_train": 131072}}]}),
            )),
            ..Answers::default()
        };
        assert_eq!(window(&llama, "m"), Some((8192, true)));
        let vllm = Answers {
            models: Some(Arc::new(
                json!({"data": [{"id": "a", "max_model_len": 4096}, {"id": "Qwen/Qwen3-8B", "max_model_len": 32768}]}),
            )),
            ..Answers::default()
        };
        assert_eq!(window(&vllm, "Qwen/Qwen3-8B"), Some((32768, true)));
        let lm_loaded = Answers {
            lm_studio: Some(
                json!({"id": "m", "state": "loaded", "max_context_length": 131072, "loaded_context_length": 16384}),
            ),
            ..Answers::default()
        };
        assert_eq!(window(&lm_loaded, "m"), Some((16384, true)));
        let lm_cold = Answers {
            lm_studio: Some(
                json!({"id": "m", "state": "not-loaded", "max_context_length": 131072}),
            ),
            ..Answers::default()
        };
        assert_eq!(window(&lm_cold, "m"), Some((4096, false)));
        let ollama_loaded = Answers {
            ollama_ps: Some(
                json!({"models": [{"name": "qwen2.5-coder:latest", "context_length": 32768}]}),
            ),
            ollama_show: Some(json!({"parameters": "stop \"<|im_end|>\""})),
            ..Answers::default()
        };
        assert_eq!(window(&ollama_loaded, "qwen2.5-coder"), Some((32768, true)));
        let ollama_configured = Answers {
            ollama_ps: Some(json!({"models": []})),
            ollama_show: Some(json!({"parameters": "temperature 0.2\nnum_ctx 16384"})),
            ..Answers::default()
        };
        assert_eq!(window(&ollama_configured, "x"), Some((16384, true)));
        let ollama_cold = Answers {
            ollama_ps: Some(json!({"models": []})),
            ollama_show: Some(json!({"model_info": {"qwen2.context_length": 32768}})),
            ..Answers::default()
        };
        assert_eq!(window(&ollama_cold, "x"), Some((4096, false)));
        let gateway = Answers {
            models: Some(Arc::new(
                json!({"data": [{"id": "vendor/model", "context_length": 65536}]}),
            )),
            ..Answers::default()
        };
        assert_eq!(window(&gateway, "vendor/model"), Some((65536, true)));
        assert_eq!(window(&Answers::default(), "m"), None);
        let unrelated = Answers {
            models: Some(Arc::new(
                json!({"data": [{"id": "a"}, {"id": "b", "max_model_len": 1}]}),
            )),
            ..Answers::default()
        };
        assert_eq!(window(&unrelated, "c"), None);
    }

    #[test]
    fn local_means_this_machine_or_the_local_network() {
        for local in [
            "http://127.0.0.1:8080/v1",
            "http://localhost:11434/v1",
            "http://192.168.1.20:8000/v1",
            "http://10.0.0.5/v1",
            "http://[::1]:1234/v1",
            "http://gpu-box:8000/v1",
            "http://studio.local:1234/v1",
        ] {
            assert!(is_local(local), "{local}");
        }
        for remote in [
            "https://api.openai.com/v1",
            "https://openrouter.ai/api/v1",
            "http://8.8.8.8/v1",
        ] {
            assert!(!is_local(remote), "{remote}");
        }
    }

    #[test]
    fn lm_studio_urls_escape_the_model() {
        assert_eq!(
            lm_studio_url("http://127.0.0.1:1234", "org/model 7b").as_deref(),
            Some("http://127.0.0.1:1234/api/v0/models/org%2Fmodel%207b")
        );
    }
}
