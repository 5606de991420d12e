//! Colours for a terminal, none for pipes or when NO_COLOR is set.
//!
//! Every method wraps text that is already safe to show: foreign text (from the model, a
//! file or a command) goes through [`super::neutralize`] first, so the only escape
//! sequences in the output are these.

use std::io::IsTerminal;
use std::sync::OnceLock;

/// `--color`: whether to colour output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum ColorChoice {
    /// On a terminal, unless NO_COLOR is set.
    #[default]
    Auto,
    /// Always, even into a pipe.
    Always,
    /// Never.
    Never,
}

/// The choice of this run, set once by `main` from the command line.
static CHOICE: OnceLock<ColorChoice> = OnceLock::new();

/// Sets the colour choice for the run (the first call wins).
pub(crate) fn set_color_choice(choice: ColorChoice) {
    let _ = CHOICE.set(choice);
}

/// Whether and how to colour output.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Style {
    color: bool,
    /// Bold and underline without colour: a terminal under NO_COLOR, which forbids colour,
    /// not emphasis.
    emphasis: bool,
}

impl Style {
    /// Colours when stderr is a terminal and NO_COLOR is unset (or `--color` says).
    pub(crate) fn for_stderr() -> Self {
        Style::for_terminal(std::io::stderr().is_terminal())
    }

    /// Colours when stdout is a terminal and NO_COLOR is unset (or `--color` says).
    pub(crate) fn for_stdout() -> Self {
        Style::for_terminal(std::io::stdout().is_terminal())
    }

    fn for_terminal(is_terminal: bool) -> Self {
        let (color, emphasis) = match CHOICE.get().copied().unwrap_or_default() {
            ColorChoice::Always => (true, true),
            ColorChoice::Never => (false, false),
            ColorChoice::Auto => {
                let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
                (!no_color && is_terminal, is_terminal)
            }
        };
        Style { color, emphasis }
    }

    /// Whether bold and underline are written (with colour, or on a terminal under NO_COLOR).
    pub(crate) fn has_emphasis(self) -> bool {
        self.emphasis
    }

    /// Whether colour codes are written.
    pub(crate) fn is_colored(self) -> bool {
        self.color
    }

    /// No colour at all.
    #[cfg(test)]
    pub(crate) fn plain() -> Self {
        Style {
            color: false,
            emphasis: false,
        }
    }

    /// A terminal under NO_COLOR: emphasis without colour.
    #[cfg(test)]
    pub(crate) fn emphasis_only() -> Self {
        Style {
            color: false,
            emphasis: true,
        }
    }

    /// Colour whatever the output is.
    #[cfg(test)]
    pub(crate) fn colored() -> Self {
        Style {
            color: true,
            emphasis: true,
        }
    }

    fn paint(self, code: &str, text: &str) -> String {
        if self.color && !text.is_empty() {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    /// Tool names and headings.
    pub(crate) fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }

    /// Secondary text: results, narration.
    pub(crate) fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }

    /// Italic: the person's own words echoed back.
    pub(crate) fn italic(self, text: &str) -> String {
        self.paint("3", text)
    }

    /// The prompt and other marks of rein's own.
    pub(crate) fn accent(self, text: &str) -> String {
        self.paint("36", text)
    }

    /// Failures.
    pub(crate) fn error(self, text: &str) -> String {
        self.paint("31", text)
    }

    /// Retries and warnings.
    pub(crate) fn warn(self, text: &str) -> String {
        self.paint("33", text)
    }

    /// Added lines of a diff.
    pub(crate) fn added(self, text: &str) -> String {
        self.paint("32", text)
    }

    /// Removed lines of a diff.
    pub(crate) fn removed(self, text: &str) -> String {
        self.paint("31", text)
    }
}
