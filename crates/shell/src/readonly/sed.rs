//! `sed` that only prints: no `-i`, no script from a file, and a script made of commands
//! that do not write files or run programs (no `w`, `W`, `e`, and no `s///w` or `s///e`).
//! The script is read command by command; anything this reader does not know is refused.

use super::Arg;
use super::programs::{could_be_option, raw};

/// Short options that take no value.
const FLAGS: &str = "nErsuzb";
/// Long options that take no value.
const LONG_FLAGS: [&str; 11] = [
    "--quiet",
    "--silent",
    "--regexp-extended",
    "--separate",
    "--unbuffered",
    "--null-data",
    "--posix",
    "--debug",
    "--sandbox",
    "--binary",
    "--follow-symlinks",
];

/// Whether `sed ARGS` only prints; `Err` says why not.
pub(super) fn check(args: &[Arg]) -> Result<(), String> {
    let mut scripts = Vec::new();
    let mut operands = Vec::new();
    let mut options_done = false;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        let text = match arg {
            Arg::Known(text) => text.as_str(),
            Arg::Operand(raw) => {
                operands.push(raw.clone());
                continue;
            }
            Arg::Unknown(raw) => return Err(could_be_option("sed", raw)),
        };
        if options_done || !text.starts_with('-') || text == "-" {
            operands.push(text.to_owned());
            continue;
        }
        if text == "--" {
            options_done = true;
        } else if let Some(long) = text.strip_prefix("--") {
            let (name, value) = long
                .split_once('=')
                .map_or((long, None), |(n, v)| (n, Some(v)));
            match (name, value) {
                ("expression", Some(script)) => scripts.push(script.to_owned()),
                ("expression", None) => scripts.push(next_script(args, &mut i)?),
                ("line-length", Some(_)) => {}
                ("line-length", None) => i += 1,
                _ if LONG_FLAGS.contains(&text) => {}
                _ => {
                    return Err(format!(
                        "`sed {text}` may write files (or is not an option rein knows)"
                    ));
                }
            }
        } else {
            let letters: Vec<char> = text[1..].chars().collect();
            for (k, &letter) in letters.iter().enumerate() {
                match letter {
                    c if FLAGS.contains(c) => {}
                    'e' | 'l' => {
                        let attached: String = letters[k + 1..].iter().collect();
                        let value = if attached.is_empty() {
                            next_script(args, &mut i)?
                        } else {
                            attached
                        };
                        if letter == 'e' {
                            scripts.push(value);
                        }
                        break;
                    }
                    'i' | 'I' => return Err(format!("`sed {text}` edits files in place")),
                    'f' => {
                        return Err(
                            "`sed -f` reads its script from a file rein cannot see".to_owned()
                        );
                    }
                    other => {
                        return Err(format!(
                            "`sed -{other}` is not an option rein knows to be read-only"
                        ));
                    }
                }
            }
        }
    }
    if scripts.is_empty() {
        if operands.is_empty() {
            return Err("`sed` without a script".to_owned());
        }
        scripts.push(operands.remove(0));
    }
    scripts.iter().try_for_each(|s| script(s))
}

fn next_script(args: &[Arg], i: &mut usize) -> Result<String, String> {
    let arg = args.get(*i).ok_or("`sed -e` without a script")?;
    *i += 1;
    match arg {
        Arg::Known(text) => Ok(text.clone()),
        Arg::Operand(_) | Arg::Unknown(_) => Err(format!(
            "the sed script `{}` is known only when it runs",
            raw(arg)
        )),
    }
}

/// Whether a sed script is made only of commands that print, without writing or running.
pub(super) fn script(src: &str) -> Result<(), String> {
    let chars: Vec<char> = src.chars().collect();
    let mut reader = Reader {
        chars: &chars,
        at: 0,
    };
    reader
        .commands()
        .map_err(|why| format!("the sed script `{src}` {why}"))
}

struct Reader<'a> {
    chars: &'a [char],
    at: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek();
        self.at += usize::from(c.is_some());
        c
    }

    fn skip_blanks(&mut self) {
        while self.peek().is_some_and(|c| c == ' ' || c == '\t') {
            self.at += 1;
        }
    }

    fn skip_line(&mut self) {
        while self.peek().is_some_and(|c| c != '\n') {
            self.at += 1;
        }
    }

    /// To the end of a label: `;` or a newline.
    fn skip_label(&mut self) {
        while self
            .peek()
            .is_some_and(|c| c != '\n' && c != ';' && c != '}')
        {
            self.at += 1;
        }
    }

    fn commands(&mut self) -> Result<(), &'static str> {
        loop {
            while self.peek().is_some_and(|c| c.is_whitespace() || c == ';') {
                self.at += 1;
            }
            let Some(c) = self.peek() else { return Ok(()) };
            if c == '#' {
                self.skip_line();
                continue;
            }
            self.address()?;
            if self.peek() == Some(',') {
                self.at += 1;
                self.skip_blanks();
                if matches!(self.peek(), Some('+' | '~')) {
                    self.at += 1;
                }
                self.address()?;
            }
            self.skip_blanks();
            while self.peek() == Some('!') {
                self.at += 1;
                self.skip_blanks();
            }
            self.command()?;
        }
    }

    fn address(&mut self) -> Result<(), &'static str> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                while self.peek().is_some_and(|c| c.is_ascii_digit() || c == '~') {
                    self.at += 1;
                }
            }
            Some('$') => self.at += 1,
            Some('/') => {
                self.at += 1;
                self.delimited('/')?;
                self.regex_flags();
            }
            Some('\\') => {
                self.at += 1;
                let delimiter = self.bump().ok_or("ends inside an address")?;
                self.delimited(delimiter)?;
                self.regex_flags();
            }
            _ => {}
        }
        Ok(())
    }

    fn regex_flags(&mut self) {
        while matches!(self.peek(), Some('I' | 'M')) {
            self.at += 1;
        }
    }

    /// Reads up to an unescaped `delimiter` (consumed).
    fn delimited(&mut self, delimiter: char) -> Result<(), &'static str> {
        while let Some(c) = self.bump() {
            if c == '\\' {
                self.bump();
            } else if c == delimiter {
                return Ok(());
            }
        }
        Err("is not complete")
    }

    fn command(&mut self) -> Result<(), &'static str> {
        let Some(c) = self.bump() else {
            return Err("ends without a command");
        };
        match c {
            '{' | '}' | 'p' | 'P' | 'd' | 'D' | 'n' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x' | '='
            | 'z' | 'F' => Ok(()),
            'l' | 'q' | 'Q' | 'L' => {
                self.skip_blanks();
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.at += 1;
                }
                Ok(())
            }
            'b' | 't' | 'T' | ':' | 'v' => {
                self.skip_label();
                Ok(())
            }
            // Files read into the output: names no permission rule has seen.
            'r' | 'R' => Err("reads another file into the output (`r`, `R`)"),
            // Text to print: nothing is written.
            'a' | 'i' | 'c' => {
                while let Some(c) = self.bump() {
                    if c == '\\' {
                        self.bump();
                    } else if c == '\n' {
                        break;
                    }
                }
                Ok(())
            }
            'y' => {
                let delimiter = self.bump().ok_or("is not complete")?;
                self.delimited(delimiter)?;
                self.delimited(delimiter)
            }
            's' => {
                let delimiter = self.bump().ok_or("is not complete")?;
                if delimiter == '\n' || delimiter == '\\' {
                    return Err("has a substitution rein cannot read");
                }
                self.delimited(delimiter)?;
                self.delimited(delimiter)?;
                while let Some(flag) = self.peek() {
                    match flag {
                        'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' => self.at += 1,
                        'w' | 'W' => return Err("writes to a file (`s///w`)"),
                        'e' => return Err("runs the pattern space as a command (`s///e`)"),
                        _ => break,
                    }
                }
                Ok(())
            }
            'w' | 'W' => Err("writes to a file (`w`)"),
            'e' => Err("runs a command (`e`)"),
            _ => Err("has a command rein does not know to be read-only"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sed(args: &[&str]) -> Result<(), String> {
        let args: Vec<Arg> = args.iter().map(|a| Arg::Known((*a).to_owned())).collect();
        check(&args)
    }

    #[test]
    fn printing_scripts_pass() {
        for args in [
            &["-n", "1,20p", "f"][..],
            &["-n", "/^fn /p", "src/lib.rs"],
            &["s/a/b/g", "f"],
            &["-E", "s#x([0-9]+)#\\1#gp"],
            &["-ne", "/start/,/end/{p;=}"],
            &["-e", "1d", "-e", "$a\\\ndone"],
            &["-n", "$p"],
            &["y/abc/xyz/"],
            &["--quiet", "--expression=2q"],
            &["-n", "\\,x,p"],
        ] {
            assert_eq!(sed(args), Ok(()), "{args:?}");
        }
    }

    #[test]
    fn writing_or_running_scripts_fail() {
        for args in [
            &["-i", "s/a/b/", "f"][..],
            &["-ni", "p", "f"],
            &["-i.bak", "s/a/b/", "f"],
            &["--in-place", "s/a/b/", "f"],
            &["-n", "w out", "f"],
            &["s/a/b/w out", "f"],
            &["s/x/rm -rf y/e"],
            &["1e rm -rf x"],
            &["-f", "script.sed"],
            &["-n", "p;W out"],
            &["-n", "/x/ w out"],
            &["-n", "r /etc/shadow", "f"],
            &["1R .env", "f"],
        ] {
            assert!(sed(args).is_err(), "{args:?}");
        }
    }
}
