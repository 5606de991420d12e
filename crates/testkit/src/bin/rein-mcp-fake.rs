//! `rein-mcp-fake`: the fake MCP server of rein's tests, over stdio.
//!
//! `--start-delay-ms N` waits before answering anything (a slow start); `--exit-at-start`
//! exits at once (a server that cannot start); `--pid-file PATH` records its pid and its
//! helper child's; `--extra-tools N` lists N numbered tools more (a server with many).

use std::io::Write;
use std::time::Duration;

use clap::Parser;
use rein_testkit::mcp::FakeServer;

#[derive(Debug, Parser)]
#[command(name = "rein-mcp-fake")]
struct Args {
    /// Milliseconds to wait before serving.
    #[arg(long, default_value_t = 0)]
    start_delay_ms: u64,
    /// Exit with status 2 before serving.
    #[arg(long)]
    exit_at_start: bool,
    /// Where to write the pids.
    #[arg(long)]
    pid_file: Option<std::path::PathBuf>,
    /// List this many numbered tools besides its own (`tool_000`, ...).
    #[arg(long, default_value_t = 0)]
    extra_tools: usize,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if args.exit_at_start {
        let _ = writeln!(std::io::stderr(), "fake: exiting at start on purpose");
        std::process::exit(2);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    // Before the slow start: a server still starting is one rein must stop too.
    if let Some(path) = &args.pid_file {
        rein_testkit::mcp::write_pid_file(path)?;
    }
    runtime.block_on(async {
        tokio::time::sleep(Duration::from_millis(args.start_delay_ms)).await;
        rein_testkit::mcp::serve_stdio(FakeServer::new().with_extra_tools(args.extra_tools)).await
    })
}
