//! Approvals asked of the person through the editor: `session/request_permission` with
//! allow once / allow always / reject, answered into rein's [`Approval`].

use std::sync::OnceLock;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    SessionId, ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};
use rein_core::face::{Approval, ApprovalRequest, Interaction, Preview, async_trait};

use super::updates::{kind_of, title};

const ALLOW_ONCE: &str = "allow";
const ALLOW_ALWAYS: &str = "allow_session";
const REJECT: &str = "reject";

/// Asks the editor's person.
#[derive(Debug)]
pub(crate) struct EditorApprovals {
    cx: ConnectionTo<Client>,
    /// Set once the session exists (its agent asks nothing before).
    session: OnceLock<SessionId>,
}

impl EditorApprovals {
    /// Approvals asked over `cx`, for the session [`Self::name`] gives.
    pub(crate) fn new(cx: ConnectionTo<Client>) -> Self {
        EditorApprovals {
            cx,
            session: OnceLock::new(),
        }
    }

    /// The session they are asked for.
    pub(crate) fn name(&self, session: SessionId) {
        let _ = self.session.set(session);
    }
}

#[async_trait]
impl Interaction for EditorApprovals {
    async fn approve(&self, request: ApprovalRequest) -> Approval {
        let mut content = vec![ToolCallContent::from(request.reason.clone())];
        if let Some(Preview::Diff { diff, .. } | Preview::Command { command: diff, .. }) =
            &request.preview
        {
            content.push(ToolCallContent::from(diff.clone()));
        }
        let call = ToolCallUpdate::new(
            request.call_id.clone(),
            ToolCallUpdateFields::new()
                .title(title(&request.tool, &request.arguments))
                .kind(kind_of(&request.tool))
                .status(ToolCallStatus::Pending)
                .raw_input(request.arguments.clone())
                .content(content),
        );
        let options = vec![
            PermissionOption::new(ALLOW_ONCE, "Allow once", PermissionOptionKind::AllowOnce),
            PermissionOption::new(
                ALLOW_ALWAYS,
                format!("Allow always in this session: {}", request.session_rule),
                PermissionOptionKind::AllowAlways,
            ),
            PermissionOption::new(REJECT, "Reject", PermissionOptionKind::RejectOnce),
        ];
        let asked = RequestPermissionRequest::new(
            self.session
                .get()
                .cloned()
                .unwrap_or_else(|| SessionId::new("")),
            call,
            options,
        );
        match self.cx.send_request(asked).block_task().await {
            Ok(response) => match response.outcome {
                RequestPermissionOutcome::Selected(selected) => match &*selected.option_id.0 {
                    ALLOW_ONCE => Approval::Yes,
                    ALLOW_ALWAYS => Approval::YesForSession,
                    _ => Approval::NoBecause("the person rejected it in the editor".into()),
                },
                RequestPermissionOutcome::Cancelled => Approval::Cancelled,
                // A newer outcome this rein does not know: not a yes.
                // The protocol's enum is non-exhaustive.
                _ => Approval::No,
            },
            Err(e) => {
                tracing::warn!("permission request failed: {}", e.message);
                Approval::No
            }
        }
    }
}
