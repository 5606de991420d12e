//! Approvals asked of the person through the editor: `session/request_permission` with
//! the options that mean something for the question (allow once / allow always / reject,
//! with allow this line always for a command's prefix rule;
//! allow once / reject when nothing can be remembered; allow / reject for the session when
//! either answer is), answered into rein's [`Approval`].

use std::sync::OnceLock;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    SessionId, ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};
use rein_core::face::{AnswerScope, Approval, ApprovalRequest, Interaction, Preview, async_trait};

use super::updates::{kind_of, title};

const ALLOW_ONCE: &str = "allow";
const ALLOW_ALWAYS: &str = "allow_session";
const ALLOW_LINE: &str = "allow_line";
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
        let call = asked_about(&request);
        let options = options(&request.scope);
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
                RequestPermissionOutcome::Selected(selected) => {
                    answer(&request.scope, &selected.option_id.0)
                }
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

/// The call a question is about, as the editor shows it: its title, the reason, and what
/// it would do (a diff, a command; a connection is its `host:port` in the title).
fn asked_about(request: &ApprovalRequest) -> ToolCallUpdate {
    let mut content = vec![ToolCallContent::from(request.reason.clone())];
    let mut fields = ToolCallUpdateFields::new()
        .kind(kind_of(&request.tool))
        .status(ToolCallStatus::Pending);
    match &request.preview {
        Some(Preview::Diff { diff, .. } | Preview::Command { command: diff, .. }) => {
            content.push(ToolCallContent::from(diff.clone()));
        }
        // Not a tool's call: no raw input, the host and port in plain words.
        Some(Preview::Connection { host, port }) => {
            fields = fields.title(format!("{}: {host}:{port}", request.tool));
        }
        None => {}
    }
    if !matches!(request.preview, Some(Preview::Connection { .. })) {
        fields = fields
            .title(title(&request.tool, &request.arguments))
            .raw_input(request.arguments.clone());
    }
    ToolCallUpdate::new(request.call_id.clone(), fields.content(content))
}

/// The options a question of `scope` offers.
fn options(scope: &AnswerScope) -> Vec<PermissionOption> {
    match scope {
        AnswerScope::Call {
            session_rule,
            line_rule,
        } => {
            let mut options = vec![PermissionOption::new(
                ALLOW_ONCE,
                "Allow once",
                PermissionOptionKind::AllowOnce,
            )];
            // The narrow choice first: this exact command line, as the REPL's `l`.
            if let Some(line_rule) = line_rule {
                options.push(PermissionOption::new(
                    ALLOW_LINE,
                    format!("Allow this line always in this session: {line_rule}"),
                    PermissionOptionKind::AllowAlways,
                ));
            }
            options.push(PermissionOption::new(
                ALLOW_ALWAYS,
                format!("Allow always in this session: {session_rule}"),
                PermissionOptionKind::AllowAlways,
            ));
            options.push(PermissionOption::new(
                REJECT,
                "Reject",
                PermissionOptionKind::RejectOnce,
            ));
            options
        }
        AnswerScope::Once => vec![
            PermissionOption::new(ALLOW_ONCE, "Allow once", PermissionOptionKind::AllowOnce),
            PermissionOption::new(REJECT, "Reject", PermissionOptionKind::RejectOnce),
        ],
        AnswerScope::Session { .. } => vec![
            PermissionOption::new(
                ALLOW_ALWAYS,
                "Allow for this session",
                PermissionOptionKind::AllowAlways,
            ),
            PermissionOption::new(
                REJECT,
                "Reject for this session",
                PermissionOptionKind::RejectAlways,
            ),
        ],
    }
}

/// The answer the option `id` gives to a question of `scope`; an option it does not offer
/// is not a yes.
fn answer(scope: &AnswerScope, id: &str) -> Approval {
    let offered = options(scope)
        .iter()
        .any(|option| *option.option_id.0 == *id);
    match id {
        ALLOW_ONCE if offered => Approval::Yes,
        ALLOW_ALWAYS if offered => Approval::YesForSession,
        ALLOW_LINE if offered => Approval::YesForLine,
        _ => Approval::NoBecause("the person rejected it in the editor".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(scope: &AnswerScope) -> Vec<String> {
        options(scope)
            .iter()
            .map(|option| option.option_id.0.to_string())
            .collect()
    }

    #[test]
    fn each_question_offers_only_what_its_answer_can_mean() {
        let rule = rein_core::permissions::Rule::parse("bash(npm test:*)", None).unwrap();
        let call = AnswerScope::Call {
            session_rule: rule,
            line_rule: None,
        };
        assert_eq!(ids(&call), [ALLOW_ONCE, ALLOW_ALWAYS, REJECT]);
        assert_eq!(answer(&call, ALLOW_ALWAYS), Approval::YesForSession);
        assert!(matches!(answer(&call, ALLOW_LINE), Approval::NoBecause(_)));
        // A command's prefix rule comes with the exact line, the narrower yes.
        let command = AnswerScope::Call {
            session_rule: rein_core::permissions::Rule::parse("bash(touch:*)", None).unwrap(),
            line_rule: Some(
                rein_core::permissions::Rule::parse("bash(touch a.txt)", None).unwrap(),
            ),
        };
        assert_eq!(
            ids(&command),
            [ALLOW_ONCE, ALLOW_LINE, ALLOW_ALWAYS, REJECT]
        );
        assert_eq!(answer(&command, ALLOW_LINE), Approval::YesForLine);
        // Leaving the sandbox: once or not at all.
        assert_eq!(ids(&AnswerScope::Once), [ALLOW_ONCE, REJECT]);
        assert_eq!(answer(&AnswerScope::Once, ALLOW_ONCE), Approval::Yes);
        assert!(matches!(
            answer(&AnswerScope::Once, ALLOW_ALWAYS),
            Approval::NoBecause(_)
        ));
        let host = AnswerScope::Session {
            after_no: "refused".into(),
        };
        assert_eq!(ids(&host), [ALLOW_ALWAYS, REJECT]);
        assert_eq!(answer(&host, ALLOW_ALWAYS), Approval::YesForSession);
        assert!(matches!(answer(&host, REJECT), Approval::NoBecause(_)));
    }

    /// A host question names its subject `host:port` in the title, not as JSON; the reason
    /// stays the content. Another question keeps its title and raw input.
    #[test]
    fn a_host_question_shows_host_and_port_in_plain_words() {
        let request = ApprovalRequest {
            call_id: "network:pypi.org:443".into(),
            tool: "network".into(),
            arguments: serde_json::json!({"host": "pypi.org", "port": 443}),
            preview: Some(Preview::Connection {
                host: "pypi.org".into(),
                port: 443,
            }),
            reason: "a sandboxed command wants to reach pypi.org (port 443)".into(),
            scope: AnswerScope::Session {
                after_no: "refused".into(),
            },
            agent: None,
        };
        let shown = serde_json::to_value(asked_about(&request)).unwrap();
        assert_eq!(shown["title"], "network: pypi.org:443", "{shown}");
        assert!(shown.get("rawInput").is_none(), "{shown}");
        let text = shown.to_string();
        assert!(!text.contains("\"host\""), "{text}");
        assert!(
            text.contains("wants to reach pypi.org (port 443)"),
            "{text}"
        );
        let mut command = request;
        command.tool = "bash".into();
        command.arguments = serde_json::json!({"command": "ls"});
        command.preview = None;
        let shown = serde_json::to_value(asked_about(&command)).unwrap();
        assert_eq!(shown["title"], "bash: ls", "{shown}");
        assert_eq!(shown["rawInput"]["command"], "ls", "{shown}");
    }
}
