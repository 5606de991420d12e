//! What the wire decoders write into: events appended, adjacent pieces of one kind merged
//! (one event per chunk instead of one per SSE event).

use crate::StreamEvent;

/// Appends events, merging a piece into the previous event when they continue each other.
#[derive(Debug)]
pub(crate) struct Emit<'a> {
    events: &'a mut Vec<StreamEvent>,
}

impl<'a> Emit<'a> {
    /// Appends to `events`.
    pub(crate) fn new(events: &'a mut Vec<StreamEvent>) -> Self {
        Emit { events }
    }

    pub(crate) fn text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        if let Some(StreamEvent::TextDelta { text: last }) = self.events.last_mut() {
            last.push_str(text);
        } else {
            self.events
                .push(StreamEvent::TextDelta { text: text.into() });
        }
    }

    pub(crate) fn reasoning(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        if let Some(StreamEvent::ReasoningDelta { text: last }) = self.events.last_mut() {
            last.push_str(text);
        } else {
            self.events
                .push(StreamEvent::ReasoningDelta { text: text.into() });
        }
    }

    pub(crate) fn tool_fragment(
        &mut self,
        index: usize,
        id: Option<&str>,
        name: Option<&str>,
        fragment: &str,
    ) {
        if id.is_none()
            && name.is_none()
            && let Some(StreamEvent::ToolCallDelta {
                index: last_index,
                arguments_fragment,
                ..
            }) = self.events.last_mut()
            && *last_index == index
        {
            arguments_fragment.push_str(fragment);
            return;
        }
        self.events.push(StreamEvent::ToolCallDelta {
            index,
            id: id.map(str::to_owned),
            name: name.map(str::to_owned),
            arguments_fragment: fragment.into(),
        });
    }

    pub(crate) fn push(&mut self, event: StreamEvent) {
        self.events.push(event);
    }

    /// A piece of thinking and, when it closes a block, the block's signature.
    pub(crate) fn thinking(&mut self, text: Option<&str>, signature: Option<&str>) {
        self.reasoning(text.unwrap_or_default());
        if let Some(signature) = signature.filter(|s| !s.is_empty()) {
            let signature = signature.to_owned();
            self.push(StreamEvent::ReasoningSignature { signature });
        }
    }

    /// A redacted thinking block, whole.
    pub(crate) fn redacted(&mut self, data: Option<&str>) {
        let data = data.unwrap_or_default().to_owned();
        self.push(StreamEvent::RedactedReasoning { data });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_adjacent_pieces_of_the_same_kind() {
        let mut events = Vec::new();
        let mut emit = Emit::new(&mut events);
        emit.text("He");
        emit.text("llo");
        emit.reasoning("hm");
        emit.tool_fragment(2, Some("c"), Some("f"), "{\"a\"");
        emit.tool_fragment(2, None, None, ":1}");
        emit.tool_fragment(3, None, None, "{}");
        assert_eq!(
            events,
            vec![
                StreamEvent::TextDelta {
                    text: "Hello".into()
                },
                StreamEvent::ReasoningDelta { text: "hm".into() },
                StreamEvent::ToolCallDelta {
                    index: 2,
                    id: Some("c".into()),
                    name: Some("f".into()),
                    arguments_fragment: "{\"a\":1}".into()
                },
                StreamEvent::ToolCallDelta {
                    index: 3,
                    id: None,
                    name: None,
                    arguments_fragment: "{}".into()
                },
            ]
        );
    }
}
