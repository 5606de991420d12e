//! The text the model gets for a finished command: its output, then rein's notices, then the
//! exit status on the last line.
//!
//! An output too big for the budget is shown as its start and its end around a notice that
//! names the file holding all of it ([`super::spool`]), with the line to read on from, so the
//! model can read_file or grep the rest. The result then fits the budget on its own, and the
//! registry's budget leaves it alone: nothing is saved twice.

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::Duration;

use super::output::CappedOutput;
use super::process::{Leftovers, RunOutcome, Stop};
use super::spool::Spooled;
use crate::budget::{Cut, NOTICE_RESERVE_CHARS, fits, long_lines_hint};
use crate::read_file::READ_MAX_LINE_CHARS;
use crate::{Display, ToolError, ToolOutput};

/// Lines of the output's end the display payload carries.
const GLANCE_LINES: usize = 5;
/// Characters of each of those lines.
const GLANCE_LINE_CHARS: usize = 200;

/// The result of a finished command, within `budget_chars` where the output was saved.
pub(crate) fn finish(
    command: &str,
    outcome: RunOutcome,
    mut notices: Vec<String>,
    sandbox_refusal: Option<String>,
    timeout: Duration,
    budget_chars: usize,
    ran_for: Duration,
) -> Result<ToolOutput, ToolError> {
    let RunOutcome {
        output,
        mut spooled,
        stop,
        status,
        leftovers,
        net,
        lines,
    } = outcome;
    match leftovers {
        Leftovers::None => {}
        Leftovers::Running { pgid } => notices.push(format!(
            "background processes are still running (started by this command, process group \
             {pgid}): what they print from now on is not shown, so send their output to a file to \
             read it later; they are stopped when the turn is cancelled or the session ends"
        )),
    }
    match stop {
        Stop::Exited => {}
        Stop::TimedOut => notices.push(format!(
            "timed out after {}: the command and every process it started were stopped",
            format_secs(timeout)
        )),
        Stop::Cancelled => notices
            .push("cancelled: the command and every process it started were stopped".to_owned()),
    }
    if spooled.path().is_none()
        && let Some(why) = &spooled.error
    {
        notices.push(format!("rein could not save the whole output: {why}"));
    }
    if let Some(refused) = &sandbox_refusal {
        notices.push(format!(
            "{refused}: commands here run in an OS sandbox that keeps them to the workspace. \
             Do not retry or work around it; tell the person what the command needs, and they \
             can let it run outside the sandbox"
        ));
    }
    let mut trailer = String::new();
    for notice in &notices {
        trailer.push_str(&format!("({notice})\n"));
    }
    trailer.push_str(&status_line(status));

    let mut text = render_output(&output, &mut spooled, budget_chars, &trailer);
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&trailer);
    let display = Display::Command {
        command: command.to_owned(),
        exit_code: status.and_then(|s| s.code()),
        duration: ran_for,
        timed_out: stop == Stop::TimedOut,
        output_tail: output.last_lines(GLANCE_LINES, GLANCE_LINE_CHARS),
        output_lines: lines,
        output: if spooled.path().is_some() {
            String::new()
        } else {
            output.render()
        },
        saved_to: spooled.path().map(|p| p.display().to_string()),
        sandbox_refusal,
        hosts_refused: net.refused_by_person(),
    };
    match stop {
        Stop::Cancelled => Err(ToolError::Cancelled { partial: text }),
        Stop::Exited | Stop::TimedOut => {
            let success = stop == Stop::Exited && status.is_some_and(|s| s.success());
            let output = if success {
                ToolOutput::success(text)
            } else {
                ToolOutput::error(text)
            };
            Ok(output.with_display(display))
        }
    }
}

/// The output part of the result: whole when it fits, else its two ends and the notice.
fn render_output(
    output: &CappedOutput,
    spooled: &mut Spooled,
    budget_chars: usize,
    trailer: &str,
) -> String {
    if output.is_empty() {
        return "(no output)".to_owned();
    }
    if spooled.path().is_none() {
        return output.render();
    }
    let whole = (!output.has_gap()).then(|| output.render());
    if let Some(whole) = &whole
        && fits(&format!("{whole}\n{trailer}"), budget_chars)
    {
        // Many bytes, few characters: no file needed after all.
        spooled.discard();
        return whole.clone();
    }
    // The notice names the file: a long offload path must not push the result over.
    let path_chars = spooled
        .path()
        .map_or(0, |p| p.as_os_str().to_string_lossy().chars().count());
    let reserve = trailer.chars().count() + NOTICE_RESERVE_CHARS + path_chars;
    let keep = budget_chars.saturating_sub(reserve) / 2;
    let (start, end) = output.ends();
    let cut = match &whole {
        Some(whole) => Cut::of_text(whole, keep),
        None => Cut::of_ends(
            &start,
            &end,
            keep,
            spooled.stats.newlines,
            spooled.stats.ends_with_newline,
        ),
    };
    let notice = spool_notice(&cut, spooled);
    cut.assemble(&notice)
}

/// Where the whole output is and how to read the part left out.
fn spool_notice(cut: &Cut<'_>, spooled: &Spooled) -> String {
    let Cut {
        first_line,
        last_line,
        total_lines,
        ..
    } = *cut;
    let shown = (cut.head.chars().count() + cut.tail.chars().count()) as u64;
    let cut_chars = spooled.stats.chars.saturating_sub(shown);
    let path = spooled
        .path()
        .map_or_else(String::new, |p| p.display().to_string());
    let read = format!("read_file, file_path=\"{path}\", offset={first_line}");
    let long = if spooled.stats.longest_line_bytes > READ_MAX_LINE_CHARS as u64 {
        long_lines_hint()
    } else {
        String::new()
    };
    let saved_lines = spooled.saved_newlines + 1;
    let how = match (&spooled.error, spooled.capped_at) {
        (None, None) => format!(
            "The command's whole output is saved: read the cut part with {read}, or search it \
             with grep{long}"
        ),
        (None, Some(cap)) => format!(
            "The command's output is saved up to rein's {} limit (about its first {saved_lines} \
             lines; the rest of the cut part is lost): read it with {read}, or search it with \
             grep{long}",
            crate::offload::size(cap)
        ),
        (Some(why), _) => format!(
            "Only the first {} bytes of the output are saved ({why}): read them with {read}",
            spooled.saved_bytes
        ),
    };
    format!(
        "[... {cut_chars} characters cut (lines {first_line}-{last_line} of {total_lines}). {how} ...]"
    )
}

/// `exit code: N`, or `killed by signal N (SIGNAME)`.
pub(crate) fn status_line(status: Option<ExitStatus>) -> String {
    let Some(status) = status else {
        return "exit code: unknown (bash could not be reaped)".to_owned();
    };
    if let Some(code) = status.code() {
        return format!("exit code: {code}");
    }
    match status.signal() {
        Some(signal) => match signal_name(signal) {
            Some(name) => format!("killed by signal {signal} ({name})"),
            None => format!("killed by signal {signal}"),
        },
        None => "exit code: unknown".to_owned(),
    }
}

fn signal_name(signal: i32) -> Option<&'static str> {
    Some(match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        _ => return None,
    })
}

fn format_secs(duration: Duration) -> String {
    if duration.subsec_millis() == 0 {
        format!("{} s", duration.as_secs())
    } else {
        format!("{:.1} s", duration.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lines() {
        assert_eq!(
            status_line(Some(ExitStatus::from_raw(3 << 8))),
            "exit code: 3"
        );
        assert_eq!(
            status_line(Some(ExitStatus::from_raw(9))),
            "killed by signal 9 (SIGKILL)"
        );
        assert_eq!(format_secs(Duration::from_millis(1500)), "1.5 s");
    }
}
