//! `rein-mock`: serves a mock model script from a JSON file, for benchmarks and manual runs.
//!
//! Prints its base URL on the first line of stdout, then serves until killed. With `--log`,
//! writes one JSON line per request once its response has been written:
//! `{"index", "method", "path", "metadata", "body_bytes", "received_unix_nanos",
//! "responded_unix_nanos"}`; `metadata` is true for the questions that are not model calls
//! (`GET /v1/models`, llama.cpp's `/props`, ...), whose `index` counts apart.
//! With `--bodies DIR`, saves each model call's body as `DIR/NNNNN.json` (bench/cost.py bills
//! them as each provider would).

use std::{
    fs::File,
    io::{BufWriter, Write},
    path::PathBuf,
    sync::Arc,
};

use anyhow::Context as _;
use clap::Parser;
use parking_lot::Mutex;
use rein_testkit::{Capture, MockOptions, MockServer, Script};

/// Serve a scripted mock model (OpenAI and Anthropic wire formats) on 127.0.0.1.
#[derive(Debug, Parser)]
#[command(name = "rein-mock", version)]
struct Args {
    /// The script: a JSON object `{"replies": [...], "repeat": bool}` or an array of replies.
    #[arg(long)]
    script: PathBuf,
    /// The port to listen on (default: a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Append one JSON line per request to this file.
    #[arg(long)]
    log: Option<PathBuf>,
    /// Save each model call's request body in this directory, as NNNNN.json.
    #[arg(long)]
    bodies: Option<PathBuf>,
    /// Serve the script again from the start when it runs out, forever.
    #[arg(long)]
    repeat: bool,
    /// Say the model runs with a window of this many tokens, as llama.cpp's `GET /props` does.
    #[arg(long)]
    context_window: Option<u64>,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let text = std::fs::read_to_string(&args.script)
        .with_context(|| format!("cannot read the script {}", args.script.display()))?;
    let mut script = Script::from_json(&text)
        .with_context(|| format!("cannot use the script {}", args.script.display()))?;
    if args.repeat {
        script = script.repeating();
    }

    // A long benchmark must not grow in memory: the log file is the record.
    let mut options = MockOptions::new()
        .port(args.port)
        .capture(Capture::CountOnly);
    if let Some(tokens) = args.context_window {
        options = options.context_window(tokens);
    }
    let bodies = args.bodies.clone();
    if let Some(dir) = &bodies {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let save_body = move |request: &rein_testkit::CapturedRequest| {
        if let Some(dir) = &bodies {
            // A full disk must not stop the server mid-benchmark; the body is lost.
            let _ = std::fs::write(
                dir.join(format!("{:05}.json", request.index)),
                &request.raw_body,
            );
        }
    };
    if args.log.is_none() {
        options = options.on_response(save_body.clone());
    }
    if let Some(path) = &args.log {
        let file = File::create(path)
            .with_context(|| format!("cannot create the log {}", path.display()))?;
        let log = Arc::new(Mutex::new(BufWriter::new(file)));
        let write_line = move |request: &rein_testkit::CapturedRequest, metadata: bool| {
            let line = serde_json::json!({
                "index": request.index,
                "method": request.method,
                "path": request.path,
                "metadata": metadata,
                "body_bytes": request.raw_body.len(),
                "received_unix_nanos": request.received_unix_nanos,
                "responded_unix_nanos": request.responded_unix_nanos,
            });
            let mut log = log.lock();
            // A full disk must not stop the server mid-benchmark; the line is lost.
            let _ = writeln!(log, "{line}").and_then(|()| log.flush());
        };
        let write_metadata = write_line.clone();
        options = options
            .on_response(move |request| {
                save_body(request);
                write_line(request, false);
            })
            .on_metadata(move |request| write_metadata(request, true));
    }
    let server = MockServer::try_start_with(script, options)?;

    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{}", server.base_url())?;
    stdout.flush()?;
    drop(stdout);

    // Serve until killed; the server runs on its own thread.
    loop {
        std::thread::park();
    }
}
