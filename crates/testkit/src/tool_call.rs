//! A scripted tool call and how its arguments are cut into streamed fragments.

use serde::{Deserialize, Serialize};

/// A tool call in a scripted turn, with its arguments streamed whole or in fragments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MockToolCall {
    id: String,
    name: String,
    arguments: String,
    #[serde(default)]
    split: ArgumentSplit,
}

impl MockToolCall {
    /// A call of tool `name` with id `id` and the raw JSON `arguments` (sent as given, so
    /// invalid JSON is possible on purpose), streamed in one fragment.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
            split: ArgumentSplit::Whole,
        }
    }

    /// Streams the arguments in fragments of `chars` characters (0 means whole).
    pub fn split_every(mut self, chars: usize) -> Self {
        self.split = ArgumentSplit::Every(chars);
        self
    }

    /// Streams the arguments as exactly these fragments (they replace the arguments).
    pub fn chunks<I, S>(mut self, fragments: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let fragments: Vec<String> = fragments.into_iter().map(Into::into).collect();
        self.arguments = fragments.concat();
        self.split = ArgumentSplit::Fragments(fragments);
        self
    }

    /// The call's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The whole arguments text.
    pub fn arguments(&self) -> &str {
        &self.arguments
    }

    /// The argument fragments in the order they are streamed; never empty.
    pub fn fragments(&self) -> Vec<String> {
        match &self.split {
            ArgumentSplit::Whole | ArgumentSplit::Every(0) => vec![self.arguments.clone()],
            ArgumentSplit::Every(size) => {
                let chars: Vec<char> = self.arguments.chars().collect();
                let pieces: Vec<String> = chars
                    .chunks(*size)
                    .map(|piece| piece.iter().collect())
                    .collect();
                if pieces.is_empty() {
                    vec![String::new()]
                } else {
                    pieces
                }
            }
            ArgumentSplit::Fragments(fragments) if fragments.is_empty() => vec![String::new()],
            ArgumentSplit::Fragments(fragments) => fragments.clone(),
        }
    }
}

/// How a tool call's arguments are cut into streamed fragments.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArgumentSplit {
    /// One fragment with all the arguments.
    #[default]
    Whole,
    /// Fragments of this many characters (0 means whole).
    Every(usize),
    /// Exactly these fragments.
    Fragments(Vec<String>),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_every_cuts_by_characters_not_bytes() {
        let call = MockToolCall::new("c", "t", "héllo wörld").split_every(4);
        assert_eq!(call.fragments(), ["héll", "o wö", "rld"]);
    }

    #[test]
    fn empty_or_zero_splits_still_send_one_fragment() {
        assert_eq!(
            MockToolCall::new("c", "t", "").split_every(3).fragments(),
            [""]
        );
        assert_eq!(
            MockToolCall::new("c", "t", "{}").split_every(0).fragments(),
            ["{}"]
        );
        let none: [&str; 0] = [];
        assert_eq!(
            MockToolCall::new("c", "t", "x").chunks(none).fragments(),
            [""]
        );
    }

    #[test]
    fn explicit_fragments_replace_the_arguments() {
        let call = MockToolCall::new("c", "t", "ignored").chunks([r#"{"a""#, ":1}"]);
        assert_eq!(call.arguments(), r#"{"a":1}"#);
        assert_eq!(call.fragments(), [r#"{"a""#, ":1}"]);
    }
}
