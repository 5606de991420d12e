//! Commands that take a protected place away without `rm -r`: `mv ~ /tmp/x` moves the home
//! directory out of reach, `rsync --delete empty/ ~/` empties it, `tar --remove-files`
//! deletes what it archives.

use super::expand::Expanded;
use super::paths::{Contents, Scope, protection, resolve as resolve_path};
use super::printed::display_word;
use super::walker::{Walker, refuse};
use super::words::Word;
use super::{Danger, DangerKind};

/// rsync options that take their value in the next word.
const RSYNC_WITH_VALUE: [&str; 22] = [
    "-e",
    "--rsh",
    "-f",
    "--filter",
    "--exclude",
    "--include",
    "--exclude-from",
    "--include-from",
    "--files-from",
    "-T",
    "--temp-dir",
    "--partial-dir",
    "--backup-dir",
    "--suffix",
    "--compare-dest",
    "--copy-dest",
    "--link-dest",
    "--log-file",
    "--password-file",
    "--chmod",
    "--chown",
    "--max-delete",
];

/// tar's short options that take a value (in the next word, in order, when clustered).
const TAR_SHORT_WITH_VALUE: &str = "fCTXbHKLNgVI";
/// tar's long options that take a value in the next word when it is not attached.
const TAR_LONG_WITH_VALUE: [&str; 12] = [
    "--file",
    "--directory",
    "--files-from",
    "--exclude-from",
    "--exclude",
    "--blocking-factor",
    "--format",
    "--newer",
    "--listed-incremental",
    "--label",
    "--use-compress-program",
    "--transform",
];

impl Walker {
    /// `mv SOURCE... DEST` or `mv -t DEST SOURCE...`: a protected source is refused.
    pub(super) fn check_move(&self, args: &[Word]) -> Result<(), Danger> {
        let args = self.split_fields(args);
        let mut operands = Vec::new();
        let mut target_given = false;
        let mut options_done = false;
        let mut i = 0;
        while let Some(word) = args.get(i) {
            i += 1;
            let text = match self.expand(word) {
                Expanded::Known(text) if !options_done && text.starts_with('-') => text,
                Expanded::Known(_) | Expanded::Maybe { .. } | Expanded::Unknown => {
                    operands.push(word);
                    continue;
                }
            };
            match text.as_str() {
                "--" => options_done = true,
                "-t" | "--target-directory" => {
                    target_given = true;
                    i += 1;
                }
                "-S" | "--suffix" => i += 1,
                t => target_given |= t.starts_with("--target-directory=") || t.starts_with("-t"),
            }
        }
        if !target_given {
            operands.pop();
        }
        for source in operands {
            self.refuse_protected(source, &format!("mv {}", shown(&args)), "move away")?;
        }
        Ok(())
    }

    /// `rsync --delete SRC DEST` empties what DEST has beyond SRC; `--remove-source-files`
    /// deletes the sources.
    pub(super) fn check_rsync(&self, args: &[Word]) -> Result<(), Danger> {
        let args = self.split_fields(args);
        let mut deletes_in_dest = false;
        let mut deletes_sources = false;
        let mut operands = Vec::new();
        let mut i = 0;
        while let Some(word) = args.get(i) {
            i += 1;
            let Expanded::Known(text) = self.expand(word) else {
                operands.push(word);
                continue;
            };
            if !text.starts_with('-') || text == "-" {
                operands.push(word);
                continue;
            }
            deletes_in_dest |= text.starts_with("--del");
            deletes_sources |= text.starts_with("--remove-so") || text.starts_with("--remove-se");
            i += usize::from(RSYNC_WITH_VALUE.contains(&text.as_str()));
        }
        let shown = format!("rsync {}", shown(&args));
        if let Some((dest, sources)) = operands.split_last() {
            if deletes_in_dest {
                self.refuse_protected(dest, &shown, "delete files in")?;
            }
            if deletes_sources {
                for source in sources {
                    self.refuse_protected(source, &shown, "delete the files of")?;
                }
            }
        }
        Ok(())
    }

    /// `tar --remove-files -cf x DIR` deletes DIR once archived.
    pub(super) fn check_tar(&self, args: &[Word]) -> Result<(), Danger> {
        let args = self.split_fields(args);
        let removes = args.iter().filter_map(Word::literal).any(|t| {
            t.strip_prefix("--")
                .is_some_and(|long| long.len() >= 3 && "remove-files".starts_with(long))
        });
        if !removes {
            return Ok(());
        }
        let mut operands = Vec::new();
        let mut i = 0;
        while let Some(word) = args.get(i) {
            i += 1;
            let Some(text) = word.literal() else {
                operands.push(word);
                continue;
            };
            if let Some(long) = text.strip_prefix("--") {
                i += usize::from(
                    !long.contains('=') && TAR_LONG_WITH_VALUE.contains(&text.as_str()),
                );
            } else if let Some(letters) =
                text.strip_prefix('-').or((i == 1).then_some(text.as_str()))
            {
                // `-cf x`, or the old style without a dash as the first word (`tar cf x`).
                i += letters
                    .chars()
                    .filter(|c| TAR_SHORT_WITH_VALUE.contains(*c))
                    .count();
            } else {
                operands.push(word);
            }
        }
        let shown = format!("tar {}", shown(&args));
        for operand in operands {
            self.refuse_protected(operand, &shown, "delete")?;
        }
        Ok(())
    }

    /// Refuses `shown` when `word` names a protected place (or everything in one).
    fn refuse_protected(&self, word: &Word, shown: &str, verb: &str) -> Result<(), Danger> {
        for expanded in self.expand_each(word) {
            let text = match expanded {
                Expanded::Known(text) | Expanded::Maybe { text, .. } => text,
                Expanded::Unknown => continue,
            };
            let Some(path) = resolve_path(&text, self.cwd.as_ref()).filter(|_| !text.is_empty())
            else {
                continue;
            };
            let Some((place, contents)) = protection(
                &path,
                self.home.as_ref(),
                self.workspace.as_ref(),
                Scope::Delete,
            ) else {
                continue;
            };
            let what = match contents {
                Contents::Itself => place.describe(),
                Contents::Everything => format!("everything in {}", place.describe()),
            };
            return refuse(
                DangerKind::RecursiveDelete,
                format!("`{shown}` would {verb} {what}"),
            );
        }
        Ok(())
    }
}

/// The arguments as written, for messages.
fn shown(args: &[Word]) -> String {
    args.iter().map(display_word).collect::<Vec<_>>().join(" ")
}
