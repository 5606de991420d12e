//! The permission modes of DESIGN.md, decided honestly per call.

use rein_tools::ToolKind;

use super::{CallView, Decision};

/// What rein may do without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, strum::IntoStaticStr, strum::Display)]
#[strum(serialize_all = "kebab-case")]
pub enum PermissionMode {
    /// Read-only tools run; edits and commands ask.
    #[default]
    Default,
    /// Read-only tools and edits inside the workspace run; commands ask.
    AcceptEdits,
    /// Only read-only tools: nothing is changed, nothing is run.
    Plan,
    /// Inside the workspace everything runs without asking, commands in the OS sandbox;
    /// only leaving it asks (an edit outside the workspace, a command the sandbox refused,
    /// an ask rule). Needs an enforced sandbox.
    Auto,
    /// Everything runs without asking, but the hard deny list.
    Yolo,
}

impl PermissionMode {
    /// Every mode, from the strictest.
    pub const ALL: [PermissionMode; 5] = [
        PermissionMode::Plan,
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Auto,
        PermissionMode::Yolo,
    ];

    /// The mode named `name` (as on the command line).
    pub fn parse(name: &str) -> Option<PermissionMode> {
        Self::ALL
            .into_iter()
            .find(|mode| <&str>::from(mode) == name)
    }

    /// Whether tools of `kind` are offered to the model at all.
    pub fn offers(self, kind: ToolKind) -> bool {
        match self {
            PermissionMode::Plan => kind == ToolKind::ReadOnly,
            PermissionMode::Default
            | PermissionMode::AcceptEdits
            | PermissionMode::Auto
            | PermissionMode::Yolo => true,
        }
    }

    pub(super) fn decide(self, call: &CallView<'_>) -> Decision {
        let inside = call.path.is_none_or(|p| !p.outside);
        match (self, call.kind) {
            (PermissionMode::Yolo, _) => Decision::Allow,
            // A fetch leaves the machine: the person is asked about each new host, but in
            // the modes that let rein work on its own.
            (PermissionMode::Auto, _) if call.tool == "web_fetch" => Decision::Allow,
            (_, _) if call.tool == "web_fetch" => Decision::ask(format!(
                "web_fetch reaches {} on the internet",
                super::rule::url_host(call.arguments).unwrap_or_else(|| "a host".to_owned())
            )),
            (_, ToolKind::ReadOnly) if inside => Decision::Allow,
            (_, ToolKind::ReadOnly) => Decision::ask("the file is outside the workspace"),
            (PermissionMode::Plan, ToolKind::Edit | ToolKind::Execute) => Decision::deny(format!(
                "plan mode only reads: `{}` would change files or run a program",
                call.tool
            )),
            (PermissionMode::AcceptEdits | PermissionMode::Auto, ToolKind::Edit) if inside => {
                Decision::Allow
            }
            (PermissionMode::AcceptEdits | PermissionMode::Auto, ToolKind::Edit) => {
                Decision::firm_ask("the edit is outside the workspace")
            }
            (PermissionMode::Default, ToolKind::Edit) => {
                Decision::ask("edits need approval in the default mode")
            }
            // The sandbox keeps the command to the workspace; what it refuses asks after.
            (PermissionMode::Auto, ToolKind::Execute) if call.confined => Decision::Allow,
            // An MCP server's tool runs in its server: no sandbox holds it back unless the
            // server runs in one.
            (PermissionMode::Auto, ToolKind::Execute) => Decision::ask(format!(
                "`{}` runs in its MCP server, outside the OS sandbox, and may change \
                     anything the server can reach",
                call.tool
            )),
            (PermissionMode::Default | PermissionMode::AcceptEdits, ToolKind::Execute) => {
                match call.shell.map(|s| &s.read_only) {
                    Some(Ok(())) => Decision::Allow,
                    Some(Err(why)) => {
                        Decision::ask(format!("commands that change things need approval ({why})"))
                    }
                    None => Decision::ask("commands need approval"),
                }
            }
        }
    }

    pub(super) fn how_to_allow(self, call: &CallView<'_>) -> String {
        if call.kind == ToolKind::Execute && !call.confined {
            return format!(
                "allow it with `--allow '{}'` (or the whole server's tools with \
                 `--allow 'mcp__SERVER__*'`), or run rein with `--permission-mode yolo`",
                call.tool
            );
        }
        // A mode that already lets this kind of call through inside the workspace is not
        // offered again: what was refused is leaving it.
        use PermissionMode::{AcceptEdits, Auto, Yolo};
        let auto_helps = !matches!(self, Auto | Yolo);
        let accept_edits_helps = !matches!(self, AcceptEdits | Auto | Yolo);
        if call.tool == "web_fetch" {
            let modes = if auto_helps {
                "`--permission-mode auto` or `yolo`"
            } else {
                "`--permission-mode yolo`"
            };
            return format!(
                "allow the host with `--allow 'web_fetch(domain:HOST)'`, or run rein with {modes}"
            );
        }
        match call.kind {
            ToolKind::Edit if accept_edits_helps => {
                "run rein with `--permission-mode accept-edits` (edits inside the workspace) or \
                 `--permission-mode yolo`"
                    .to_owned()
            }
            ToolKind::Execute if auto_helps => {
                "run rein with `--permission-mode auto` (commands run without asking, inside \
                 the OS sandbox) or `--permission-mode yolo` (the hard deny list holds in both)"
                    .to_owned()
            }
            ToolKind::Execute => {
                "run rein with `--permission-mode yolo` (the hard deny list still holds)".to_owned()
            }
            ToolKind::Edit | ToolKind::ReadOnly => {
                "run rein with `--permission-mode yolo`".to_owned()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use serde_json::json;

    use super::super::PathTarget;
    use super::*;

    fn decide(mode: PermissionMode, kind: ToolKind, inside: bool) -> Decision {
        let target = PathTarget {
            absolute: PathBuf::from("/w/a.rs"),
            in_workspace: inside.then(|| PathBuf::from("a.rs")),
            outside: !inside,
            write: false,
        };
        let args = json!({});
        mode.decide(&CallView {
            tool: "t",
            kind,
            arguments: &args,
            path: Some(&target),
            shell: None,
            confined: true,
        })
    }

    #[test]
    fn each_mode_decides_as_documented() {
        use PermissionMode::*;
        use ToolKind::*;
        let allow = |d: Decision| d == Decision::Allow;
        let ask = |d: Decision| matches!(d, Decision::Ask { .. });
        let deny = |d: Decision| matches!(d, Decision::Deny { .. });
        for mode in [Default, AcceptEdits, Plan, Auto, Yolo] {
            assert!(allow(decide(mode, ReadOnly, true)), "{mode}: reads run");
        }
        assert!(deny(decide(Plan, Edit, true)) && deny(decide(Plan, Execute, true)));
        assert!(ask(decide(Default, Edit, true)) && ask(decide(Default, Execute, true)));
        assert!(allow(decide(AcceptEdits, Edit, true)));
        assert!(
            ask(decide(AcceptEdits, Edit, false)),
            "outside the workspace asks"
        );
        assert!(ask(decide(AcceptEdits, Execute, true)));
        for mode in [Default, AcceptEdits, Plan] {
            assert!(
                ask(decide(mode, ReadOnly, false)),
                "{mode}: a read outside the workspace asks"
            );
        }
        assert!(allow(decide(Yolo, Edit, false)) && allow(decide(Yolo, Execute, true)));
        assert!(allow(decide(Auto, Edit, true)) && allow(decide(Auto, Execute, true)));
        assert!(ask(decide(Auto, Edit, false)), "auto: an edit outside asks");
        let args = json!({});
        let unconfined = CallView {
            tool: "mcp__github__delete_repo",
            kind: Execute,
            arguments: &args,
            path: None,
            shell: None,
            confined: false,
        };
        assert!(
            ask(Auto.decide(&unconfined)),
            "auto: a tool the sandbox does not hold asks"
        );
        assert!(
            Auto.how_to_allow(&unconfined)
                .contains("--allow 'mcp__github__delete_repo'")
        );
        assert!(allow(Yolo.decide(&unconfined)));
        assert!(
            ask(decide(Auto, ReadOnly, false)),
            "auto: a read outside asks"
        );
    }

    #[test]
    fn the_way_out_never_names_the_mode_rein_is_already_in() {
        use PermissionMode::{AcceptEdits, Auto, Default};
        use ToolKind::{Edit, Execute};
        let args = json!({"command": "echo hi > /etc/x"});
        let view = |tool, kind| CallView {
            tool,
            kind,
            arguments: &args,
            path: None,
            shell: None,
            confined: true,
        };
        let bash = view("bash", Execute);
        assert!(
            Default
                .how_to_allow(&bash)
                .contains("`--permission-mode auto`")
        );
        let from_auto = Auto.how_to_allow(&bash);
        assert!(
            !from_auto.contains("mode auto") && from_auto.contains("yolo"),
            "{from_auto}"
        );
        let edit = view("edit_file", Edit);
        assert!(Default.how_to_allow(&edit).contains("accept-edits"));
        for mode in [AcceptEdits, Auto] {
            let text = mode.how_to_allow(&edit);
            assert!(
                !text.contains("accept-edits") && text.contains("yolo"),
                "{mode:?}: {text}"
            );
        }
        let fetch = view("web_fetch", Execute);
        assert!(
            Default
                .how_to_allow(&fetch)
                .contains("`--permission-mode auto`")
        );
        let text = Auto.how_to_allow(&fetch);
        assert!(
            !text.contains("mode auto") && text.contains("web_fetch(domain:HOST)"),
            "{text}"
        );
    }
}
