//! A call's final error, told with what the person needs to act on it: where the API key came
//! from, which URL was tried.

use crate::{LlmError, ProviderKind, redact_credentials};

/// What an error message may say about the endpoint a provider talks to.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    pub(crate) kind: ProviderKind,
    /// The base URL as configured (checked, without a trailing slash).
    pub(crate) base_url: String,
    /// The URL requests are POSTed to.
    pub(crate) url: String,
    /// Whether a key is sent with each request.
    pub(crate) key_sent: bool,
    /// Where the key came from, if the caller said.
    pub(crate) key_origin: Option<String>,
    /// The key sent, to mask where a server's message quotes it.
    pub(crate) key: Option<String>,
}

impl Endpoint {
    /// `error`, with the facts that help fix it added to its message.
    pub(crate) fn explain(&self, error: LlmError) -> LlmError {
        // A server that quotes the key it refused ("Incorrect API key provided: sk-...")
        // must not put it on the person's terminal.
        let error = match self.key.as_deref().filter(|key| !key.is_empty()) {
            Some(key) => error.map_messages(|message| message.replace(key, "[REDACTED:api_key]")),
            None => error,
        };
        match error {
            LlmError::Auth(message) => LlmError::Auth(format!("{message} ({})", self.key_note())),
            LlmError::BadRequest {
                status: 404,
                message,
            } => LlmError::BadRequest {
                status: 404,
                message: format!(
                    "{message} (POST {}{})",
                    redact_credentials(&self.url),
                    self.version_hint()
                ),
            },
            LlmError::Connection(message) => LlmError::Connection(format!(
                "{message} (check the base URL {} and the network or proxy settings)",
                redact_credentials(&self.base_url)
            )),
            other => other,
        }
    }

    fn key_note(&self) -> String {
        match (&self.key_origin, self.key_sent) {
            (Some(origin), true) => format!("the API key came from {origin}"),
            (None, true) => "check the API key".to_owned(),
            (_, false) => "no API key was sent".to_owned(),
        }
    }

    /// A suggestion when an OpenAI-compatible base URL names no API version: most servers
    /// serve under `/v1`, and a base URL without it gets 404 for every request.
    fn version_hint(&self) -> String {
        if self.kind != ProviderKind::OpenAi || names_a_version(&self.base_url) {
            return String::new();
        }
        format!(
            "; OpenAI-compatible servers usually serve under /v1: try the base URL {}/v1",
            redact_credentials(&self.base_url)
        )
    }
}

/// Whether a URL's path has a version segment (`v1`, `v4`, `v1beta`).
fn names_a_version(url: &str) -> bool {
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return true;
    };
    parsed.path_segments().into_iter().flatten().any(|segment| {
        segment
            .strip_prefix('v')
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(kind: ProviderKind, base_url: &str) -> Endpoint {
        Endpoint {
            kind,
            base_url: base_url.to_owned(),
            url: format!("{base_url}/chat/completions"),
            key_sent: true,
            key_origin: Some("the environment variable OPENAI_API_KEY".to_owned()),
            key: Some("sk-quoted-key-123".to_owned()),
        }
    }

    #[test]
    fn a_server_that_quotes_the_key_gets_it_masked() {
        let endpoint = endpoint(ProviderKind::OpenAi, "https://api.openai.com/v1");
        let told = endpoint
            .explain(LlmError::Auth(
                "Incorrect API key provided: sk-quoted-key-123.".into(),
            ))
            .to_string();
        assert!(!told.contains("sk-quoted-key-123"), "{told}");
        assert!(told.contains("[REDACTED:api_key]"), "{told}");
    }

    fn not_found() -> LlmError {
        LlmError::BadRequest {
            status: 404,
            message: "404 page not found".into(),
        }
    }

    #[test]
    fn a_404_names_the_url_and_suggests_v1_where_it_is_missing() {
        let e = endpoint(ProviderKind::OpenAi, "http://127.0.0.1:8080");
        assert_eq!(
            e.explain(not_found()).to_string(),
            "bad request (404): 404 page not found (POST http://127.0.0.1:8080/chat/completions; \
             OpenAI-compatible servers usually serve under /v1: try the base URL \
             http://127.0.0.1:8080/v1)"
        );
        for versioned in [
            "https://api.example.com/v1",
            "https://open.bigmodel.cn/api/paas/v4",
            "https://generativelanguage.googleapis.com/v1beta/openai",
        ] {
            let message = endpoint(ProviderKind::OpenAi, versioned)
                .explain(not_found())
                .to_string();
            assert!(message.contains(versioned), "{message}");
            assert!(!message.contains("try the base URL"), "{message}");
        }
    }

    #[test]
    fn an_auth_error_says_where_the_key_came_from() {
        let mut e = endpoint(ProviderKind::OpenAi, "https://api.example.com/v1");
        let auth = || LlmError::Auth("Incorrect API key provided".into());
        assert_eq!(
            e.explain(auth()).to_string(),
            "authentication failed: Incorrect API key provided (the API key came from the \
             environment variable OPENAI_API_KEY)"
        );
        e.key_sent = false;
        assert!(
            e.explain(auth())
                .to_string()
                .ends_with("(no API key was sent)")
        );
        let lost = e.explain(LlmError::Connection(
            "could not connect to x:443: dns error".into(),
        ));
        assert_eq!(
            lost.to_string(),
            "connection failed: could not connect to x:443: dns error (check the base URL \
             https://api.example.com/v1 and the network or proxy settings)"
        );
        // Other errors pass through.
        assert_eq!(
            e.explain(LlmError::Timeout("x".into())),
            LlmError::Timeout("x".into())
        );
    }
}
