//! web_fetch: a web page for the model, as Markdown.
//!
//! - http and https only; no credentials ever leave with a request: no cookies, no
//!   authorization header, no proxy, a URL with a user name refused;
//! - redirects followed by hand, at most [`MAX_REDIRECTS`], each judged afresh: another
//!   host goes through the permission rules as a call of its own would (what would ask is
//!   handed back to the model to fetch, so the person is asked), and no hop reaches a private
//!   address unless a rule names its host (see `address`);
//! - the body is cut at [`page::MAX_BODY_BYTES`]; what the model's budget does not hold is
//!   saved to a file like any tool's output.

mod address;
mod page;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rein_tools::{Display, Tool, ToolContext, ToolError, ToolKind, ToolOutput, async_trait};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use url::Url;

use crate::permissions::{CallView, Decision, Policy};
use address::{CheckedResolver, HostNamed, Refused, private_kind, refusal};

/// The tool's name.
pub const WEB_FETCH_TOOL: &str = "web_fetch";
/// How long a fetch may take when the model names no timeout.
pub const WEB_FETCH_DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest timeout the model may ask for, in seconds.
const MAX_TIMEOUT_SECS: u64 = 120;
/// Redirects followed at most.
pub const MAX_REDIRECTS: usize = 5;

/// Arguments of web_fetch.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebFetchArgs {
    /// The http(s) URL to fetch.
    pub url: String,
    /// Seconds before giving up (default 30, max 120).
    pub timeout: Option<u64>,
}

/// The web_fetch tool.
pub struct WebFetchTool {
    policy: Arc<dyn Policy>,
    client: OnceLock<Result<reqwest::Client, String>>,
}

impl std::fmt::Debug for WebFetchTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WebFetchTool")
    }
}

impl WebFetchTool {
    /// The tool, judging redirects to other hosts (and private addresses) by `policy`.
    pub fn new(policy: Arc<dyn Policy>) -> Self {
        WebFetchTool {
            policy,
            client: OnceLock::new(),
        }
    }

    fn named(&self) -> HostNamed {
        let policy = Arc::clone(&self.policy);
        Arc::new(move |host: &str| policy.names_host(WEB_FETCH_TOOL, &host.to_ascii_lowercase()))
    }

    /// The HTTP client, built on first use: no proxy (the check of addresses happens where
    /// rein connects), no cookie store, redirects left to [`WebFetchTool::fetch`].
    fn client(&self) -> Result<&reqwest::Client, ToolError> {
        let built = self.client.get_or_init(|| {
            rein_llm::install_crypto_provider();
            let tls = rein_llm::tls_client_config(None).map_err(|e| e.to_string())?;
            reqwest::Client::builder()
                .no_proxy()
                .tls_backend_preconfigured(tls)
                .redirect(reqwest::redirect::Policy::none())
                .dns_resolver(Arc::new(CheckedResolver {
                    named: self.named(),
                }))
                .connect_timeout(Duration::from_secs(10))
                .user_agent(concat!("rein/", env!("CARGO_PKG_VERSION"), " (web_fetch)"))
                .build()
                .map_err(|e| e.to_string())
        });
        built
            .as_ref()
            .map_err(|e| ToolError::Internal(format!("web_fetch could not set up HTTP: {e}")))
    }

    /// What the permission rules say of reaching `url` as a call of its own.
    fn judge(&self, url: &Url) -> Decision {
        let arguments = json!({ "url": url.as_str() });
        self.policy.decide(&CallView {
            tool: WEB_FETCH_TOOL,
            kind: ToolKind::ReadOnly,
            arguments: &arguments,
            path: None,
            shell: None,
            confined: true,
        })
    }

    async fn fetch(&self, start: Url) -> Result<ToolOutput, ToolError> {
        let client = self.client()?;
        let named = self.named();
        let mut url = start.clone();
        let mut hops: Vec<Url> = Vec::new();
        loop {
            check_address_literal(&url, &named)?;
            let response = client
                .get(url.clone())
                .header(reqwest::header::ACCEPT, ACCEPT)
                .send()
                .await
                .map_err(|e| send_error(&url, &e))?;
            let status = response.status();
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok());
            let Some(location) = location.filter(|_| status.is_redirection()) else {
                return read_page(response, &start, &url, &hops).await;
            };
            let next = url.join(location).map_err(|e| {
                ToolError::model(format!(
                    "{url} redirects to \"{location}\", which is not a URL: {e}."
                ))
            })?;
            if hops.len() == MAX_REDIRECTS {
                return Err(ToolError::model(format!(
                    "{start} redirects more than {MAX_REDIRECTS} times (the last to {next}); \
                     web_fetch stopped following."
                )));
            }
            check_url(&next).map_err(|why| {
                ToolError::model(format!(
                    "{url} redirects to {next}, which web_fetch refuses: {why}."
                ))
            })?;
            if next.host_str() != url.host_str() {
                match self.judge(&next) {
                    Decision::Allow => {}
                    Decision::Deny { reason } => {
                        return Err(ToolError::model(format!(
                            "{url} redirects to {next}, which rein refuses: {reason}."
                        )));
                    }
                    Decision::Ask { .. } => {
                        return Ok(ToolOutput::success(format!(
                            "{url} redirects to another host: {next}\nIt was not followed: \
                             the person decides about new hosts. To read it, call web_fetch \
                             with that URL."
                        )));
                    }
                }
            }
            hops.push(next.clone());
            url = next;
        }
    }
}

/// What rein tells servers it reads best.
const ACCEPT: &str =
    "text/html, text/markdown;q=0.9, text/plain;q=0.9, application/json;q=0.8, */*;q=0.5";

#[async_trait]
impl Tool for WebFetchTool {
    type Args = WebFetchArgs;

    fn name(&self) -> &'static str {
        WEB_FETCH_TOOL
    }

    fn description(&self) -> &'static str {
        "Fetch a web page (http/https) and read it as Markdown (HTML converted; other text as \
         it is). Follows up to 5 redirects; a redirect to another host may be handed back to \
         you to fetch. Big pages are cut, with the whole saved to a file you can read."
    }

    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }

    async fn doomed(&self, args: &WebFetchArgs, _ctx: &ToolContext) -> Option<String> {
        parse_url(&args.url).err().map(|e| e.to_string())
    }

    async fn run(&self, args: WebFetchArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let url = parse_url(&args.url)?;
        let secs = args.timeout.unwrap_or(WEB_FETCH_DEFAULT_TIMEOUT.as_secs());
        if secs == 0 || secs > MAX_TIMEOUT_SECS {
            return Err(ToolError::model(format!(
                "timeout must be between 1 and {MAX_TIMEOUT_SECS} seconds."
            )));
        }
        let cancel = ctx.cancel_token();
        tokio::select! {
            () = cancel.cancelled() => Err(ToolError::Cancelled {
                partial: format!("(fetching {url} was cancelled)"),
            }),
            fetched = tokio::time::timeout(Duration::from_secs(secs), self.fetch(url.clone())) => {
                fetched.unwrap_or_else(|_| Err(ToolError::model(format!(
                    "{url} did not finish answering within {secs} s (web_fetch's timeout; \
                     `timeout` may ask for up to {MAX_TIMEOUT_SECS})."
                ))))
            }
        }
    }
}

/// The URL the model gave, checked: absolute, http or https, no credentials in it.
fn parse_url(raw: &str) -> Result<Url, ToolError> {
    let url = Url::parse(raw.trim()).map_err(|e| {
        ToolError::model(format!("\"{raw}\" is not a URL web_fetch can fetch: {e}."))
    })?;
    check_url(&url).map_err(|why| ToolError::model(format!("web_fetch refuses {raw}: {why}.")))?;
    Ok(url)
}

/// Why web_fetch will not request `url`, if it will not.
fn check_url(url: &Url) -> Result<(), String> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "only http and https URLs are fetched, not {}:",
            url.scheme()
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(
            "the URL carries a user name or password, and web_fetch sends no credentials"
                .to_owned(),
        );
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("it names no host".to_owned());
    }
    Ok(())
}

/// A URL naming an address, not a host: checked here, as no resolver sees it.
fn check_address_literal(url: &Url, named: &HostNamed) -> Result<(), ToolError> {
    let ip = match url.host() {
        Some(url::Host::Ipv4(ip)) => std::net::IpAddr::V4(ip),
        Some(url::Host::Ipv6(ip)) => std::net::IpAddr::V6(ip),
        Some(url::Host::Domain(_)) | None => return Ok(()),
    };
    let host = url.host_str().unwrap_or_default();
    match private_kind(ip) {
        Some(kind) if !named(host) => Err(ToolError::model(format!(
            "web_fetch refuses {url}: {}.",
            refusal(host, ip, kind)
        ))),
        _ => Ok(()),
    }
}

/// The model's message for a request that failed: a refused address says why.
fn send_error(url: &Url, err: &reqwest::Error) -> ToolError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    let mut chain = Vec::new();
    while let Some(cause) = source {
        if let Some(refused) = cause.downcast_ref::<Refused>() {
            return ToolError::model(format!("web_fetch refuses {url}: {refused}."));
        }
        let text = cause.to_string();
        if chain.last() != Some(&text) {
            chain.push(text);
        }
        source = cause.source();
    }
    ToolError::model(format!("Fetching {url} failed: {}.", chain.join(": ")))
}

/// The body of the final response, as text for the model.
async fn read_page(
    mut response: reqwest::Response,
    start: &Url,
    url: &Url,
    hops: &[Url],
) -> Result<ToolOutput, ToolError> {
    let status = response.status();
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let mut body = Vec::new();
    let mut truncated = false;
    while let Some(chunk) = response.chunk().await.map_err(|e| send_error(url, &e))? {
        let room = page::MAX_BODY_BYTES - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            truncated = true;
            break;
        }
        body.extend_from_slice(&chunk);
    }
    let kind = page::kind(content_type.as_deref(), &body);
    let shown_type = content_type
        .clone()
        .unwrap_or_else(|| "unknown type".to_owned());
    if kind == page::Kind::Binary {
        return Err(ToolError::model(format!(
            "{url} is {shown_type}, not text: web_fetch reads pages only."
        )));
    }
    let text = page::decode(&body, content_type.as_deref());
    let bytes = body.len() as u64;
    let text = match kind {
        page::Kind::Html => tokio::task::spawn_blocking(move || page::to_markdown(&text))
            .await
            .map_err(|e| ToolError::Internal(format!("converting a page failed: {e}")))?
            .map_err(ToolError::Model)?,
        page::Kind::Text | page::Kind::Binary => text,
    };
    let mut out = format!("URL: {url}\n");
    if !hops.is_empty() {
        out.push_str(&format!(
            "(redirected from {start}, {} redirect{})\n",
            hops.len(),
            if hops.len() == 1 { "" } else { "s" }
        ));
    }
    out.push_str(&format!("Status: {status}\nContent-Type: {shown_type}\n"));
    if truncated {
        out.push_str(&format!(
            "(the page is bigger than {} MiB: only its start was downloaded)\n",
            page::MAX_BODY_BYTES / (1024 * 1024)
        ));
    }
    out.push('\n');
    out.push_str(&text);
    let display = Display::WebPage {
        url: url.to_string(),
        status: status.as_u16(),
        content_type: shown_type,
        bytes,
        truncated,
    };
    let output = if status.is_client_error() || status.is_server_error() {
        ToolOutput::error(out)
    } else {
        ToolOutput::success(out)
    };
    Ok(output.with_display(display))
}
