//! The person's say about hosts a sandboxed command wants to reach through rein's proxy
//! (`[sandbox] network = "proxy"`) that `allow_domains` does not list: asked through the
//! [`Interaction`], once per host and port for the session (rein-tools remembers the answer).
//! A run with no one to ask gets no gate: those hosts are refused, and the command's result
//! says so (a headless run lists it in `permission_denials`).

use std::sync::Arc;

use rein_tools::sandbox::{HostAnswer, HostGate};
use rein_tools::{Preview, async_trait};
use serde_json::json;

use crate::interaction::{AnswerScope, Approval, ApprovalRequest, Interaction};
use crate::secrets::Secrets;

/// The name approvals of hosts carry as their tool.
pub const NETWORK_QUESTION: &str = "network";

/// Asks the person about each unlisted host.
pub(crate) struct AskingGate {
    pub(crate) interaction: Arc<dyn Interaction>,
    /// What the question must not show: a host name may be made of a secret.
    pub(crate) secrets: Arc<Secrets>,
}

impl std::fmt::Debug for AskingGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AskingGate")
    }
}

#[async_trait]
impl HostGate for AskingGate {
    async fn allow(&self, host: &str, port: u16) -> HostAnswer {
        if !self.interaction.attended() {
            return HostAnswer::Refused;
        }
        let arguments = json!({ "host": host, "port": port });
        let mut request = ApprovalRequest {
            call_id: format!("network:{host}:{port}"),
            tool: NETWORK_QUESTION.to_owned(),
            arguments,
            // Shown as `host:port`: the arguments' JSON says nothing more.
            preview: Some(Preview::Connection {
                host: host.to_owned(),
                port,
            }),
            reason: format!(
                "a sandboxed command wants to reach {host} (port {port}) through rein's network \
                 proxy, and {host} is not in [sandbox] allow_domains; your answer holds for \
                 the rest of the session"
            ),
            // rein-tools' proxy remembers either answer for the session.
            scope: AnswerScope::Session {
                after_no: format!(
                    "{host} (port {port}) is refused for the rest of the session; to allow it, \
                     add it to [sandbox] allow_domains"
                ),
            },
            agent: None,
        };
        // A host name may be made of a secret: the terminal, the JSON stream and a permission
        // prompt show the question masked, as every other.
        crate::secrets::mask_request(&self.secrets, &mut request);
        match self.interaction.approve(request).await {
            Approval::Yes | Approval::YesForSession | Approval::YesForLine => HostAnswer::Allowed,
            Approval::No => HostAnswer::Refused,
            Approval::NoBecause(reason) => HostAnswer::RefusedBecause(reason),
            // Ctrl+C is no answer: the next command to reach the host asks again.
            Approval::Cancelled => HostAnswer::Unanswered,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interaction::{ScriptedInteraction, Unattended};

    #[tokio::test]
    async fn the_person_is_asked_about_a_host_and_no_one_means_no() {
        let interaction = Arc::new(ScriptedInteraction::new([
            Approval::Yes,
            Approval::No,
            Approval::Cancelled,
            Approval::NoBecause("use the mirror".into()),
        ]));
        let gate = AskingGate {
            interaction: interaction.clone(),
            secrets: Arc::default(),
        };
        assert_eq!(gate.allow("pypi.org", 443).await, HostAnswer::Allowed);
        assert_eq!(
            gate.allow("evil.example.com", 443).await,
            HostAnswer::Refused
        );
        assert_eq!(
            gate.allow("evil.example.com", 443).await,
            HostAnswer::Unanswered
        );
        // A reason goes with the no, for the model.
        assert_eq!(
            gate.allow("pypi.org", 80).await,
            HostAnswer::RefusedBecause("use the mirror".into())
        );
        let asked = interaction.asked();
        assert_eq!(asked.len(), 4);
        assert_eq!(asked[0].tool, NETWORK_QUESTION);
        assert_eq!(asked[0].arguments, json!({"host": "pypi.org", "port": 443}));
        // Shown as `host:port`, not as the arguments' JSON.
        assert_eq!(
            asked[0].preview,
            Some(Preview::Connection {
                host: "pypi.org".into(),
                port: 443
            })
        );
        assert!(
            asked[1].reason.contains("evil.example.com"),
            "{}",
            asked[1].reason
        );
        // A host made of a secret is masked in every text of the question.
        let interaction = Arc::new(ScriptedInteraction::new([Approval::No]));
        let gate = AskingGate {
            interaction: interaction.clone(),
            secrets: Arc::new(Secrets::gather(
                [("DEPLOY_TOKEN", "dt5up3rs3cr3tv4lue")],
                &crate::secrets::SecretValues::default(),
                None,
                &[],
            )),
        };
        assert_eq!(
            gate.allow("dt5up3rs3cr3tv4lue.localhost", 8080).await,
            HostAnswer::Refused
        );
        let asked = &interaction.asked()[0];
        let shown = serde_json::to_string(asked).unwrap();
        assert!(!shown.contains("dt5up3rs3cr3tv4lue"), "{shown}");
        assert!(
            shown.contains("[REDACTED:DEPLOY_TOKEN].localhost"),
            "{shown}"
        );
        let AnswerScope::Session { after_no } = &asked.scope else {
            panic!("{asked:?}")
        };
        assert!(after_no.starts_with("[REDACTED:DEPLOY_TOKEN].localhost (port 8080)"));
        let nobody = AskingGate {
            interaction: Arc::new(Unattended),
            secrets: Arc::default(),
        };
        assert_eq!(nobody.allow("pypi.org", 443).await, HostAnswer::Refused);
    }
}
