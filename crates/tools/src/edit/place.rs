//! What a rung found: a place in the file, what each part of old_string stands for there (so
//! restated lines keep the file's bytes), and what had to be ignored to find it.

use std::ops::Range;

use super::lookalike::Kinds;

/// How a place's replacement is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PlaceKind {
    /// Found byte for byte (line endings aside): new_string is written as given.
    Exact,
    /// Found as a piece of text with look-alikes folded: restated lines keep the file's text.
    Text,
    /// Found as whole lines: restated lines keep the file's text, changed ones are re-indented.
    Lines,
}

/// The file text one token of old_string (a line, or a run of blank lines) stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Segment {
    /// Its bytes, without the last line's ending.
    pub range: Range<usize>,
    /// How many lines it spans (a blank run the file lacks spans none).
    pub lines: usize,
}

/// One place old_string was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Place {
    /// The bytes of the file replaced.
    pub range: Range<usize>,
    pub kind: PlaceKind,
    /// One per token of old_string (empty for [`PlaceKind::Exact`]).
    pub segments: Vec<Segment>,
    /// What differed between old_string and the file here.
    pub ignored: Ignored,
}

/// The differences a match ignored, for telling the model how its text was found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Ignored {
    pub line_endings: bool,
    pub trailing_whitespace: bool,
    pub indentation: bool,
    pub look_alikes: Kinds,
    pub blank_lines: bool,
    pub cut_last_line: bool,
}

impl Ignored {
    /// Both sets together.
    pub(crate) fn union(self, other: Ignored) -> Ignored {
        Ignored {
            line_endings: self.line_endings || other.line_endings,
            trailing_whitespace: self.trailing_whitespace || other.trailing_whitespace,
            indentation: self.indentation || other.indentation,
            look_alikes: self.look_alikes.union(other.look_alikes),
            blank_lines: self.blank_lines || other.blank_lines,
            cut_last_line: self.cut_last_line || other.cut_last_line,
        }
    }
}
