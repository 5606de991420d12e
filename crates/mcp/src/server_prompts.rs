//! A server's prompts: listed when it connects (only when its capabilities include prompts),
//! listed again after it says they changed, and fetched (`prompts/get`) through the live
//! connection within the call timeout.

use std::sync::atomic::Ordering;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{GetPromptRequestParams, GetPromptResult, JsonObject, Prompt};
use rmcp::service::{Peer, ServiceError};
use tokio_util::sync::CancellationToken;

use super::Server;
use crate::connect;
use crate::prompts::{PROMPT_LIST_LIMIT, PromptSignal};

/// The prompts of a server just connected: none when it does not offer prompts; a list that
/// fails or takes too long is taken as none (its tools still work), and noted.
pub(super) async fn first_list(peer: &Peer<RoleClient>) -> Result<Vec<Prompt>, String> {
    let offers = peer
        .peer_info()
        .is_some_and(|info| info.capabilities.prompts.is_some());
    if !offers {
        return Ok(Vec::new());
    }
    list(peer, PROMPT_LIST_LIMIT).await
}

async fn list(peer: &Peer<RoleClient>, limit: Duration) -> Result<Vec<Prompt>, String> {
    match tokio::time::timeout(limit, peer.list_all_prompts()).await {
        Ok(Ok(prompts)) => Ok(prompts),
        Ok(Err(e)) => Err(format!(
            "listing its prompts failed: {}",
            connect::without_transport_name(e.to_string())
        )),
        Err(_) => Err(format!(
            "listing its prompts took more than {} s",
            limit.as_secs_f64()
        )),
    }
}

impl Server {
    /// Its prompts as last listed.
    pub(crate) fn prompts(&self) -> Vec<Prompt> {
        self.lock().prompts.clone()
    }

    /// Where changes of its prompt list are signalled.
    pub(crate) fn prompt_signal(&self) -> &PromptSignal {
        &self.listener.prompts
    }

    /// Lists its prompts again when it said they changed.
    pub(crate) async fn refresh_prompts(&self, limit: Duration) {
        if !self.listener.prompts.stale.swap(false, Ordering::SeqCst) {
            return;
        }
        let Some(peer) = self.peer() else {
            return;
        };
        let listed = list(&peer, limit).await;
        let mut inner = self.lock();
        match listed {
            Ok(prompts) => {
                inner.prompts = prompts;
                drop(inner);
                self.listener.prompts.note_listed();
            }
            Err(error) => inner.last_error = Some(error),
        }
    }

    /// `prompts/get` for `prompt` with `arguments`; the error is for the person.
    pub(crate) async fn get_prompt(
        &self,
        prompt: &str,
        arguments: JsonObject,
        cancel: &CancellationToken,
    ) -> Result<GetPromptResult, String> {
        let name = &self.config.name;
        let peer = self.peer_for_request(cancel).await?;
        let mut params = GetPromptRequestParams::new(prompt.to_owned());
        if !arguments.is_empty() {
            params.arguments = Some(arguments);
        }
        let limit = self.config.call_timeout;
        let got = tokio::select! {
            () = cancel.cancelled() => return Err("cancelled".to_owned()),
            got = tokio::time::timeout(limit, peer.get_prompt(params)) => got,
        };
        match got {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(ServiceError::McpError(error))) => Err(format!(
                "MCP server `{name}` refused prompt `{prompt}`: {}",
                error.message
            )),
            Ok(Err(error)) => Err(format!(
                "getting prompt `{prompt}` from MCP server `{name}` failed: {}",
                connect::without_transport_name(error.to_string())
            )),
            Err(_) => Err(format!(
                "MCP server `{name}` did not give prompt `{prompt}` within {} s (its \
                 `call_timeout`)",
                limit.as_secs_f64()
            )),
        }
    }
}
