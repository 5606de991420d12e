//! The real binary in a pseudo-terminal, its screen read through a vt100 parser. Tests wait
//! for what the screen shows (with a deadline), never for a fixed time.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};

use crate::support::Env;

/// How long a test waits for the screen to show something.
pub(crate) const SCREEN_WAIT: Duration = Duration::from_secs(30);

/// rein running in a terminal.
pub(crate) struct Pty {
    child: Box<dyn Child + Send + Sync>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    parser: Arc<Mutex<vt100::Parser>>,
    /// Everything written, escape sequences removed, for text that scrolled away.
    transcript: Arc<Mutex<String>>,
    master: Box<dyn MasterPty + Send>,
}

impl Pty {
    /// `rein ARGS` in `env`'s workspace, pointed at `base_url`, in a terminal of this size,
    /// with the first-start question about the auto mode answered (the default mode kept).
    pub(crate) fn start(env: &Env, base_url: &str, args: &[&str], cols: u16) -> Pty {
        Pty::start_with(env, base_url, args, cols, &[])
    }

    /// `rein --permission-mode auto` as [`Pty::start`], 200 columns wide, once it shows its
    /// prompt.
    pub(crate) fn auto_ready(env: &Env, base_url: &str) -> Pty {
        let pty = Pty::start(env, base_url, &["--permission-mode", "auto"], 200);
        pty.wait_ready();
        pty
    }

    /// `rein ARGS` as [`Pty::start`], with these environment variables besides.
    pub(crate) fn start_with(
        env: &Env,
        base_url: &str,
        args: &[&str],
        cols: u16,
        vars: &[(&str, &str)],
    ) -> Pty {
        let config = env.rein_home.join("config.toml");
        let text = std::fs::read_to_string(&config).unwrap_or_default();
        if !text.contains("[repl]") {
            std::fs::create_dir_all(&env.rein_home).unwrap();
            std::fs::write(
                &config,
                format!("{text}\n[repl]\npermission_mode = \"default\"\n"),
            )
            .unwrap();
        }
        Pty::spawn(env, base_url, args, cols, vars)
    }

    /// `rein ARGS` as [`Pty::start`], with rein's config as the test left it.
    pub(crate) fn first_start(env: &Env, base_url: &str, args: &[&str], cols: u16) -> Pty {
        Pty::spawn(env, base_url, args, cols, &[])
    }

    fn spawn(env: &Env, base_url: &str, args: &[&str], cols: u16, vars: &[(&str, &str)]) -> Pty {
        let rows = 60;
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_rein"));
        cmd.env_clear();
        cmd.env("PATH", std::env::var_os("PATH").unwrap_or_default());
        cmd.env("HOME", &env.home);
        cmd.env("REIN_HOME", &env.rein_home);
        cmd.env("TMPDIR", env.home.parent().unwrap());
        cmd.env("TERM", "xterm-256color");
        cmd.env("OPENAI_API_KEY", "sk-test");
        cmd.env("REIN_BASE_URL", base_url);
        cmd.env("REIN_MODEL", "gpt-4o");
        for (name, value) in vars {
            cmd.env(name, value);
        }
        cmd.cwd(&env.work);
        cmd.args(args);
        let child = pair.slave.spawn_command(cmd).unwrap();
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().unwrap();
        let writer: Arc<Mutex<Box<dyn Write + Send>>> =
            Arc::new(Mutex::new(pair.master.take_writer().unwrap()));
        let parser = Arc::new(Mutex::new(vt100::Parser::new(
            std::num::NonZeroU16::new(rows).unwrap(),
            std::num::NonZeroU16::new(cols).unwrap(),
            2000,
        )));
        let transcript = Arc::new(Mutex::new(String::new()));
        {
            let parser = Arc::clone(&parser);
            let transcript = Arc::clone(&transcript);
            let writer = Arc::clone(&writer);
            std::thread::spawn(move || {
                let mut buffer = [0u8; 8192];
                loop {
                    let n = match reader.read(&mut buffer) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    let bytes = &buffer[..n];
                    let mut parser = parser.lock().unwrap();
                    parser.process(bytes);
                    // rustyline asks where the cursor is; a terminal answers.
                    if bytes.windows(4).any(|w| w == b"\x1b[6n") {
                        let (row, col) = parser.screen().cursor_position();
                        let answer = format!("\x1b[{};{}R", row + 1, col + 1);
                        let _ = writer.lock().unwrap().write_all(answer.as_bytes());
                    }
                    drop(parser);
                    transcript
                        .lock()
                        .unwrap()
                        .push_str(&strip_escapes(&String::from_utf8_lossy(bytes)));
                }
            });
        }
        Pty {
            child,
            writer,
            parser,
            transcript,
            master: pair.master,
        }
    }

    /// rein's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.process_id().unwrap()
    }

    /// Types `text` (bytes as a terminal sends them: `\r` for Enter, `\x03` for Ctrl+C).
    pub(crate) fn send(&self, text: &str) {
        let mut writer = self.writer.lock().unwrap();
        writer.write_all(text.as_bytes()).unwrap();
        writer.flush().unwrap();
    }

    /// What the screen shows now.
    pub(crate) fn screen(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    /// The screen's rows as shown, one string each (a row the terminal wrapped is not joined
    /// to the next).
    pub(crate) fn rows(&self) -> Vec<String> {
        let parser = self.parser.lock().unwrap();
        let (_, cols) = parser.screen().size();
        parser.screen().rows(0, cols.get()).collect()
    }

    /// Every row the terminal holds, the scrollback's first: what a person can scroll
    /// through.
    pub(crate) fn history(&self) -> Vec<String> {
        let mut parser = self.parser.lock().unwrap();
        let (_, cols) = parser.screen().size();
        parser.screen_mut().set_scrollback(usize::MAX);
        let mut lines = Vec::new();
        // Scrolled back by k rows, the top row is the k-th from the scrollback's end.
        for offset in (1..=parser.screen().scrollback()).rev() {
            parser.screen_mut().set_scrollback(offset);
            lines.extend(parser.screen().rows(0, cols.get()).next());
        }
        parser.screen_mut().set_scrollback(0);
        lines.extend(parser.screen().rows(0, cols.get()));
        lines
    }

    /// Resizes the terminal to `cols` columns (rein gets SIGWINCH).
    pub(crate) fn resize(&self, cols: u16) {
        let mut parser = self.parser.lock().unwrap();
        let (rows, _) = parser.screen().size();
        parser.set_size(rows, std::num::NonZeroU16::new(cols).unwrap());
        self.master
            .resize(PtySize {
                rows: rows.get(),
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
    }

    /// Whether the first cell showing `text` on the screen is (bold, underlined).
    pub(crate) fn emphasis_of(&self, text: &str) -> Option<(bool, bool)> {
        let parser = self.parser.lock().unwrap();
        let screen = parser.screen();
        let (_, cols) = screen.size();
        let (row, line) = screen
            .rows(0, cols.get())
            .enumerate()
            .find(|(_, line)| line.contains(text))?;
        let col = line[..line.find(text)?].chars().count();
        let cell = screen.cell(u16::try_from(row).ok()?, u16::try_from(col).ok()?)?;
        Some((cell.bold(), cell.underline()))
    }

    /// The cursor's (row, column) on the screen.
    pub(crate) fn cursor(&self) -> (u16, u16) {
        self.parser.lock().unwrap().screen().cursor_position()
    }

    /// Everything written so far, without escape sequences.
    pub(crate) fn transcript(&self) -> String {
        self.transcript.lock().unwrap().clone()
    }

    /// The end of the transcript, for a failure's message.
    fn tail(&self) -> String {
        let text = self.transcript();
        let start = text.len().saturating_sub(3000);
        let start = (start..text.len())
            .find(|i| text.is_char_boundary(*i))
            .unwrap_or(0);
        text[start..].to_owned()
    }

    /// Waits until the output holds the prompt, ready for keys.
    pub(crate) fn wait_ready(&self) {
        self.wait_for("› ");
    }

    /// Waits until everything written so far holds `text` `times` times.
    pub(crate) fn wait_for_count(&self, text: &str, times: usize) {
        let deadline = Instant::now() + SCREEN_WAIT;
        while self.transcript().matches(text).count() < times {
            assert!(
                Instant::now() < deadline,
                "never saw {text:?} {times} times; screen:\n{}\ntranscript's end:\n{}",
                self.screen(),
                self.tail()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until the output holds `text`.
    pub(crate) fn wait_for(&self, text: &str) {
        self.wait_for_count(text, 1);
    }

    /// Waits until the screen itself shows `text`.
    pub(crate) fn wait_for_screen(&self, text: &str) {
        let deadline = Instant::now() + SCREEN_WAIT;
        while !self.screen().contains(text) {
            assert!(
                Instant::now() < deadline,
                "the screen never showed {text:?}:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits for rein to exit; its status.
    pub(crate) fn wait_exit(&mut self) -> u32 {
        let deadline = Instant::now() + SCREEN_WAIT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.exit_code();
            }
            assert!(
                Instant::now() < deadline,
                "rein did not exit; screen:\n{}\ntranscript's end:\n{}",
                self.screen(),
                self.tail()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

/// `text` without CSI and OSC escape sequences or carriage returns.
pub(crate) fn strip_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => match chars.next() {
                Some('[') => {
                    for c in chars.by_ref() {
                        if c.is_ascii_alphabetic() || c == '~' {
                            break;
                        }
                    }
                }
                Some(']') => {
                    for c in chars.by_ref() {
                        if c == '\x07' {
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}
