//! Colours for a terminal, none for pipes or when NO_COLOR is set.
//!
//! Every method wraps text that is already safe to show: foreign text (from the model, a
//! file or a command) goes through [`super::neutralize`] first, so the only escape
//! sequences in the output are these.

use std::io::IsTerminal;

/// Whether and how to colour output.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Style {
    color: bool,
}

impl Style {
    /// Colours when stderr is a terminal and NO_COLOR is unset.
    pub(crate) fn for_stderr() -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Style {
            color: !no_color && std::io::stderr().is_terminal(),
        }
    }

    /// No colour at all.
    #[cfg(test)]
    pub(crate) fn plain() -> Self {
        Style { color: false }
    }

    /// Colour whatever the output is.
    #[cfg(test)]
    pub(crate) fn colored() -> Self {
        Style { color: true }
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
