//! The read-only programs and, for each, the options that would make it write a file or
//! run another program.

use super::{Arg, awk, git, sed};

/// A read-only program and what to refuse in its arguments.
struct Program {
    /// Its names.
    names: &'static [&'static str],
    /// Long options that write or run something (abbreviations count too).
    long: &'static [&'static str],
    /// Short option letters that write or run something, alone or in a cluster.
    short: &'static str,
}

impl Program {
    /// Whether no argument at all could make it write or run something.
    fn harmless_with_any_arguments(&self) -> bool {
        self.long.is_empty() && self.short.is_empty()
    }
}

const fn program(names: &'static [&'static str]) -> Program {
    Program {
        names,
        long: &[],
        short: "",
    }
}

/// Programs that read and print, with the options that would change that.
const PROGRAMS: [Program; 19] = [
    // Viewers, filters and comparisons: no option writes a file or runs a program.
    program(&[
        "cat", "head", "tail", "wc", "nl", "cut", "tr", "paste", "rev", "tac", "fold", "fmt",
        "column", "expand", "unexpand", "join", "comm", "cmp", "diff", "grep", "egrep", "fgrep",
        "jq", "od", "hexdump", "strings", "base32", "base64", "zcat", "seq", "echo",
    ]),
    program(&[
        "md5sum",
        "sha1sum",
        "sha224sum",
        "sha256sum",
        "sha384sum",
        "sha512sum",
        "b2sum",
        "cksum",
        "sum",
    ]),
    // Information about files and the system.
    program(&[
        "ls", "stat", "du", "df", "realpath", "readlink", "basename", "dirname", "which",
        "whereis", "type", "whoami", "id", "groups", "uname", "arch", "nproc", "uptime", "free",
        "ps", "pgrep", "tty", "locale", "getconf", "lscpu", "lsblk", "printenv", "pwd",
    ]),
    // Shell builtins that change nothing outside the shell.
    program(&[
        "true", "false", ":", "test", "[", "cd", "pushd", "popd", "dirs", "set", "exit", "sleep",
        "wait",
    ]),
    Program {
        names: &["sort"],
        long: &["--output", "--compress-program"],
        short: "o",
    },
    Program {
        names: &["rg"],
        // `--pre-glob` only narrows `--pre`, but a `--pre` may come from a config file
        // (`RIPGREP_CONFIG_PATH`): asked either way.
        long: &["--pre", "--pre-glob", "--hostname-bin"],
        short: "",
    },
    Program {
        names: &["fd", "fdfind"],
        long: &["--exec", "--exec-batch"],
        short: "xX",
    },
    Program {
        names: &["tree"],
        long: &["--output"],
        short: "oR",
    },
    Program {
        names: &["file"],
        long: &["--compile"],
        short: "C",
    },
    // Checked by their own functions below; the entries say that they are known.
    program(&["find"]),
    program(&["git"]),
    program(&["sed"]),
    program(&["awk", "gawk", "mawk", "nawk"]),
    program(&["date"]),
    program(&["printf"]),
    program(&["uniq"]),
    program(&["xxd"]),
    program(&["hostname"]),
    program(&["env"]),
];

/// Tools whose `--version` only prints their version.
const VERSION_PROBES: [&str; 26] = [
    "cargo", "rustc", "rustup", "node", "npm", "npx", "pnpm", "yarn", "deno", "bun", "python",
    "python3", "pip", "pip3", "go", "java", "javac", "gcc", "g++", "clang", "make", "cmake",
    "ruby", "perl", "docker", "tsc",
];

/// Whether running `name` with `args` is read-only; `Err` says why not.
pub(super) fn check(name: &str, args: &[Arg]) -> Result<(), String> {
    if VERSION_PROBES.contains(&name) && matches!(args, [Arg::Known(a)] if a == "--version") {
        return Ok(());
    }
    let Some(program) = PROGRAMS.iter().find(|p| p.names.contains(&name)) else {
        return Err(format!(
            "`{name}` is not on rein's list of read-only programs, so it may change files"
        ));
    };
    match name {
        "find" => find(args),
        "git" => git::check(args),
        "sed" => sed::check(args),
        "awk" | "gawk" | "mawk" | "nawk" => awk::check(name, args),
        "date" => date(args),
        "printf" => printf(args),
        "uniq" | "xxd" => at_most_one_operand(name, args),
        "hostname" => hostname(args),
        _ => options(name, program, args),
    }
}

/// Refuses the options `program` lists, and arguments that could be one of them.
fn options(name: &str, program: &Program, args: &[Arg]) -> Result<(), String> {
    if program.harmless_with_any_arguments() {
        return Ok(());
    }
    for arg in args {
        let text = match arg {
            Arg::Known(text) => text,
            Arg::Operand(_) => continue,
            Arg::Unknown(raw) => return Err(could_be_option(name, raw)),
        };
        if text == "--" {
            return Ok(());
        }
        if denied(text, program.long, program.short) {
            return Err(format!(
                "`{name} {text}` writes a file or runs another program"
            ));
        }
    }
    Ok(())
}

/// Whether the option `text` is one of `long` (or an abbreviation of one) or a short
/// cluster holding one of the `short` letters.
pub(super) fn denied(text: &str, long: &[&str], short: &str) -> bool {
    if let Some(name) = text.strip_prefix("--") {
        let name = name.split_once('=').map_or(name, |(n, _)| n);
        return !name.is_empty()
            && long
                .iter()
                .any(|l| l.strip_prefix("--").is_some_and(|l| l.starts_with(name)));
    }
    text.strip_prefix('-')
        .is_some_and(|letters| letters.chars().any(|c| short.contains(c)))
}

pub(super) fn could_be_option(name: &str, raw: &str) -> String {
    format!(
        "`{name}` gets `{raw}`, known only when it runs, which could be an option that writes a \
         file or runs a program"
    )
}

/// `find` without actions that delete, write files or run commands.
fn find(args: &[Arg]) -> Result<(), String> {
    const ACTIONS: [&str; 9] = [
        "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls",
    ];
    for arg in args {
        match arg {
            Arg::Known(text) if ACTIONS.contains(&text.as_str()) => {
                return Err(format!("`find {text}` changes files or runs commands"));
            }
            Arg::Known(_) | Arg::Operand(_) => {}
            Arg::Unknown(raw) => return Err(could_be_option("find", raw)),
        }
    }
    Ok(())
}

/// `date` that prints (`+FORMAT`, `-d DATE`), not one that sets the clock (`-s`, or an
/// operand such as `0101` that is not a format).
fn date(args: &[Arg]) -> Result<(), String> {
    const WITH_VALUE: [&str; 6] = ["-d", "--date", "-f", "--file", "-r", "--reference"];
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        let Arg::Known(text) = arg else {
            return Err(could_be_option("date", &raw(arg)));
        };
        if WITH_VALUE.contains(&text.as_str()) {
            i += 1;
            continue;
        }
        let sets = if text.starts_with("--") {
            denied(text, &["--set"], "")
        } else if let Some(letters) = text.strip_prefix('-') {
            // `-d` and friends take the rest of a cluster as their value.
            let value_at = letters.find(['d', 'f', 'r']).unwrap_or(letters.len());
            if value_at + 1 == letters.len() {
                i += 1;
            }
            letters[..value_at].contains('s')
        } else {
            !text.starts_with('+')
        };
        if sets {
            return Err(format!("`date {text}` sets the system clock"));
        }
    }
    Ok(())
}

/// `printf` that prints, not `printf -v NAME` (which assigns a shell variable).
fn printf(args: &[Arg]) -> Result<(), String> {
    match args.first() {
        Some(Arg::Known(first)) if first.starts_with("-v") => {
            Err(format!("`printf {first}` assigns a shell variable"))
        }
        Some(Arg::Unknown(raw)) => Err(could_be_option("printf", raw)),
        Some(Arg::Known(_) | Arg::Operand(_)) | None => Ok(()),
    }
}

/// `uniq IN OUT` and `xxd IN OUT` write OUT: at most one operand.
fn at_most_one_operand(name: &str, args: &[Arg]) -> Result<(), String> {
    let mut operands = 0;
    let mut options_done = false;
    for arg in args {
        match arg {
            Arg::Known(text) if text == "--" && !options_done => options_done = true,
            Arg::Known(text) if text.starts_with('-') && text.len() > 1 && !options_done => {}
            Arg::Known(_) => operands += 1,
            // Unquoted, it could become several words, the second one an output file.
            Arg::Operand(raw) | Arg::Unknown(raw) => return Err(could_be_option(name, raw)),
        }
    }
    if operands > 1 {
        return Err(format!(
            "`{name}` with a second file writes its output to it"
        ));
    }
    Ok(())
}

/// `hostname` with display options only (an operand or `-F` sets the name).
fn hostname(args: &[Arg]) -> Result<(), String> {
    const SHOWS: [&str; 16] = [
        "-s",
        "--short",
        "-f",
        "--fqdn",
        "--long",
        "-i",
        "--ip-address",
        "-I",
        "--all-ip-addresses",
        "-d",
        "--domain",
        "-a",
        "--alias",
        "-A",
        "--all-fqdns",
        "-y",
    ];
    match args
        .iter()
        .find(|a| !a.known().is_some_and(|t| SHOWS.contains(&t)))
    {
        Some(arg) => Err(format!("`hostname {}` may set the host name", raw(arg))),
        None => Ok(()),
    }
}

/// An argument as written.
pub(super) fn raw(arg: &Arg) -> String {
    match arg {
        Arg::Known(text) | Arg::Operand(text) | Arg::Unknown(text) => text.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(args: &[&str]) -> Vec<Arg> {
        args.iter().map(|a| Arg::Known((*a).to_owned())).collect()
    }

    #[test]
    fn options_that_write_are_refused() {
        assert!(check("sort", &known(&["-u", "f"])).is_ok());
        assert!(check("sort", &known(&["-o", "f"])).is_err());
        assert!(check("sort", &known(&["-uo", "f"])).is_err());
        assert!(check("sort", &known(&["--out=f"])).is_err());
        assert!(check("sort", &known(&["--compress-program=sh"])).is_err());
        assert!(check("sort", &known(&["--", "-o"])).is_ok());
        assert!(check("rg", &known(&["--pre-glob", "*.gz", "x"])).is_err());
        assert!(check("rg", &known(&["--pre=sh", "x"])).is_err());
        assert!(check("uniq", &known(&["a"])).is_ok());
        assert!(check("uniq", &known(&["a", "b"])).is_err());
        assert!(check("date", &known(&["+%s"])).is_ok());
        assert!(check("date", &known(&["-s", "now"])).is_err());
        assert!(check("date", &known(&["0101"])).is_err());
        assert!(check("date", &known(&["-d", "yesterday", "+%F"])).is_ok());
        assert!(check("date", &known(&["-ud", "now"])).is_ok());
        assert!(check("date", &known(&["--set=now"])).is_err());
        assert!(check("printf", &known(&["-v", "x", "y"])).is_err());
        assert!(check("find", &known(&[".", "-name", "*.rs"])).is_ok());
        assert!(check("find", &known(&[".", "-fprint", "x"])).is_err());
        assert!(check("cargo", &known(&["--version"])).is_ok());
        assert!(check("cargo", &known(&["test"])).is_err());
    }

    #[test]
    fn run_time_arguments_only_where_no_option_is_dangerous() {
        let unknown = [Arg::Unknown("$X".to_owned())];
        assert!(check("cat", &unknown).is_ok());
        assert!(check("grep", &unknown).is_ok());
        assert!(check("sort", &unknown).is_err());
        assert!(check("find", &unknown).is_err());
        assert!(check("sort", &[Arg::Operand("./$f".to_owned())]).is_ok());
    }
}
