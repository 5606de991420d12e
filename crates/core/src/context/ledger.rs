//! What the next request costs, kept up to date as messages come: each message is estimated
//! once, when it is added, and the provider's count of the last request replaces the
//! estimates of everything it covered. Deciding whether to compact is then a few
//! comparisons: O(new messages) per round, never a rescan of the history.

use rein_llm::{Message, Part, Role};

use super::estimate;
use super::summary::is_summary;

/// Results longer than this many characters may be pruned once they are old.
pub const PRUNE_MIN_CHARS: usize = 1500;
/// Results of the last this many rounds are never pruned.
pub const PRUNE_KEEP_ROUNDS: usize = 3;
/// About what a pruned result still costs (its first and last lines and the marker).
pub(crate) const PRUNED_RESULT_TOKENS: u64 = 250;

/// What a message of the context is, for the decisions that care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Typed by the person (or said for them: a hook's continuation).
    Person,
    /// rein's summary of earlier turns.
    Summary,
    /// The model's.
    Assistant,
    /// Tool results.
    ToolResults,
}

impl Kind {
    fn of(message: &Message) -> Kind {
        match message.role {
            Role::User if is_summary(message) => Kind::Summary,
            Role::User => Kind::Person,
            Role::Assistant => Kind::Assistant,
            Role::Tool => Kind::ToolResults,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    tokens: u64,
    kind: Kind,
    /// What pruning its long results would save.
    prunable: u64,
}

impl Entry {
    fn of(message: &Message) -> Entry {
        let kind = Kind::of(message);
        let (tokens, prunable) = match kind {
            // Each result estimated once, for the total and for what pruning it would save.
            Kind::ToolResults => message.parts.iter().fold(
                (estimate::MESSAGE_OVERHEAD_TOKENS, 0),
                |(tokens, prunable), part| match part {
                    Part::ToolResult(result) => {
                        let cost = estimate::text_tokens(&result.content);
                        let saving = if is_long(&result.content) {
                            cost.saturating_sub(PRUNED_RESULT_TOKENS)
                        } else {
                            0
                        };
                        (
                            tokens + estimate::TOOL_RESULT_OVERHEAD_TOKENS + cost,
                            prunable + saving,
                        )
                    }
                    other => (tokens + estimate::part_tokens(other), prunable),
                },
            ),
            Kind::Person | Kind::Summary | Kind::Assistant => {
                (estimate::message_tokens(message), 0)
            }
        };
        Entry {
            tokens,
            kind,
            prunable,
        }
    }
}

/// Whether a result is long enough to prune.
pub(crate) fn is_long(content: &str) -> bool {
    // A character is one to four bytes: only lengths in between need counting.
    content.len() > 4 * PRUNE_MIN_CHARS
        || (content.len() > PRUNE_MIN_CHARS && content.chars().count() > PRUNE_MIN_CHARS)
}

/// The provider's count of a request: `prompt_tokens` for the first `messages` messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptAnchor {
    /// What the provider counted.
    pub prompt_tokens: u64,
    /// How many messages of the context that request held.
    pub messages: usize,
}

/// The cost of the context, message by message.
#[derive(Debug, Clone)]
pub struct Ledger {
    system_tokens: u64,
    tools_tokens: u64,
    entries: Vec<Entry>,
    /// `token_prefix[i]`: the estimates of the first `i` messages, summed.
    token_prefix: Vec<u64>,
    /// `prunable_prefix[i]`: what pruning the first `i` messages would save.
    prunable_prefix: Vec<u64>,
    tool_results_tokens: u64,
    /// Where each model response is: rounds start there.
    responses: Vec<usize>,
    anchor: Option<PromptAnchor>,
}

impl Ledger {
    /// The ledger of a request with this system prompt, these tools' estimated cost and
    /// these messages.
    pub fn new(system: &str, tools_tokens: u64, messages: &[Message]) -> Self {
        let mut ledger = Ledger {
            system_tokens: estimate::text_tokens(system) + estimate::MESSAGE_OVERHEAD_TOKENS,
            tools_tokens,
            entries: Vec::with_capacity(messages.len()),
            token_prefix: vec![0],
            prunable_prefix: vec![0],
            tool_results_tokens: 0,
            responses: Vec::new(),
            anchor: None,
        };
        for message in messages {
            ledger.push(message);
        }
        ledger
    }

    /// Accounts for a message added at the end.
    pub fn push(&mut self, message: &Message) {
        self.push_entry(Entry::of(message));
    }

    fn push_entry(&mut self, entry: Entry) {
        let index = self.entries.len();
        let tokens = self.token_prefix[index] + entry.tokens;
        let prunable = self.prunable_prefix[index] + entry.prunable;
        self.token_prefix.push(tokens);
        self.prunable_prefix.push(prunable);
        match entry.kind {
            Kind::Assistant => self.responses.push(index),
            Kind::ToolResults => self.tool_results_tokens += entry.tokens,
            Kind::Person | Kind::Summary => {}
        }
        self.entries.push(entry);
    }

    /// Takes the provider's count of the request that held the first `messages` messages.
    /// A count of zero (a server that does not count) is ignored.
    pub fn observe(&mut self, anchor: PromptAnchor) {
        if anchor.prompt_tokens > 0 && anchor.messages <= self.entries.len() {
            self.anchor = Some(anchor);
        }
    }

    /// The provider's count the current figure starts from, if it still applies.
    pub fn anchor(&self) -> Option<PromptAnchor> {
        self.anchor
    }

    /// The tokens the next request takes: the provider's count of the last one plus the
    /// estimates of the messages added since; all estimated when the provider has not
    /// counted this context (a compaction changed it since).
    pub fn used(&self) -> u64 {
        let messages = self.messages_tokens();
        match self.anchor {
            Some(anchor) => anchor.prompt_tokens + (messages - self.token_prefix[anchor.messages]),
            None => self.system_tokens + self.tools_tokens + messages,
        }
    }

    /// Whether [`Ledger::used`] rests on a count by the provider.
    pub fn is_measured(&self) -> bool {
        self.anchor.is_some()
    }

    /// The estimate of every message.
    pub fn messages_tokens(&self) -> u64 {
        self.token_prefix[self.entries.len()]
    }

    /// The estimate of the tool results among them.
    pub fn tool_results_tokens(&self) -> u64 {
        self.tool_results_tokens
    }

    /// The estimate of the system prompt.
    pub fn system_tokens(&self) -> u64 {
        self.system_tokens
    }

    /// The estimate of the tool descriptions.
    pub fn tools_tokens(&self) -> u64 {
        self.tools_tokens
    }

    /// The tools changed (an MCP server joined): their estimated cost from now on.
    pub fn set_tools_tokens(&mut self, tokens: u64) {
        self.tools_tokens = tokens;
    }

    /// How many messages the context holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the model has answered in this context yet.
    pub fn has_responses(&self) -> bool {
        !self.responses.is_empty()
    }

    /// Whether the context holds no message.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Where the results old enough to prune end: before the last
    /// [`PRUNE_KEEP_ROUNDS`] model responses.
    pub fn prune_boundary(&self) -> usize {
        self.responses
            .len()
            .checked_sub(PRUNE_KEEP_ROUNDS)
            .map_or(0, |i| self.responses[i])
    }

    /// What pruning every result old enough would save.
    pub fn prunable_tokens(&self) -> u64 {
        self.prunable_prefix[self.prune_boundary()]
    }

    /// Whether message `index` has results pruning would shorten.
    pub(crate) fn is_prunable(&self, index: usize) -> bool {
        self.entries.get(index).is_some_and(|e| e.prunable > 0)
    }

    /// What message `index` is.
    pub(crate) fn kind(&self, index: usize) -> Option<Kind> {
        self.entries.get(index).map(|e| e.kind)
    }

    /// The estimate of messages `range`.
    pub(crate) fn tokens_of(&self, range: std::ops::Range<usize>) -> u64 {
        self.token_prefix[range.end] - self.token_prefix[range.start]
    }

    /// Accounts for a compaction of `messages` (the context as it is now): everything is
    /// estimated again until the provider counts it. Messages that did not change keep their
    /// estimates; `changed` lists those that did (after the change), and `replaced` how many
    /// at the start gave way to `with`.
    pub(crate) fn rebuild(
        &mut self,
        messages: &[Message],
        replaced: usize,
        with: usize,
        changed: &[usize],
    ) {
        let old: Vec<Entry> = std::mem::take(&mut self.entries);
        self.token_prefix.truncate(1);
        self.prunable_prefix.truncate(1);
        self.tool_results_tokens = 0;
        self.responses.clear();
        self.anchor = None;
        let kept = old.into_iter().skip(replaced);
        let entries: Vec<Entry> = messages[..with].iter().map(Entry::of).chain(kept).collect();
        for (index, mut entry) in entries.into_iter().enumerate() {
            if changed.contains(&index) {
                entry = Entry::of(&messages[index]);
            }
            self.push_entry(entry);
        }
    }
}

#[cfg(test)]
mod tests {
    use rein_llm::{ToolArguments, ToolCall, ToolResult};

    use super::*;

    fn text(role: Role, text: &str) -> Message {
        Message {
            role,
            parts: vec![Part::Text { text: text.into() }],
        }
    }

    fn round(id: &str, output: &str) -> [Message; 2] {
        [
            Message {
                role: Role::Assistant,
                parts: vec![Part::ToolCall(ToolCall {
                    id: id.into(),
                    name: "bash".into(),
                    arguments: ToolArguments::Json {
                        value: serde_json::json!({"command": "ls"}),
                    },
                })],
            },
            Message {
                role: Role::Tool,
                parts: vec![Part::ToolResult(ToolResult {
                    call_id: id.into(),
                    content: output.into(),
                    is_error: false,
                    images: Vec::new(),
                })],
            },
        ]
    }

    #[test]
    fn the_providers_count_replaces_the_estimates_it_covers() {
        let mut ledger = Ledger::new("system", 100, &[text(Role::User, "hello")]);
        let estimated = ledger.used();
        assert!(!ledger.is_measured());
        ledger.observe(PromptAnchor {
            prompt_tokens: 5000,
            messages: 1,
        });
        assert_eq!(ledger.used(), 5000);
        let [call, result] = round("a", "some output");
        ledger.push(&call);
        ledger.push(&result);
        let added = estimate::message_tokens(&call) + estimate::message_tokens(&result);
        assert_eq!(ledger.used(), 5000 + added);
        // A server that counts nothing changes nothing.
        ledger.observe(PromptAnchor {
            prompt_tokens: 0,
            messages: 3,
        });
        assert_eq!(ledger.used(), 5000 + added);
        assert!(estimated < 5000);
    }

    #[test]
    fn only_long_results_older_than_three_rounds_are_prunable() {
        let long = "line of output\n".repeat(200);
        let mut messages = vec![text(Role::User, "go")];
        for i in 0..5 {
            messages.extend(round(&i.to_string(), &long));
        }
        messages.extend(round("short", "ok"));
        let ledger = Ledger::new("s", 0, &messages);
        // Responses at 1, 3, 5, 7, 9, 11: the last three start at 7.
        assert_eq!(ledger.prune_boundary(), 7);
        let one = estimate::text_tokens(&long) - PRUNED_RESULT_TOKENS;
        assert_eq!(ledger.prunable_tokens(), 3 * one);
        assert!(ledger.is_prunable(2) && !ledger.is_prunable(1));
    }

    #[test]
    fn a_rebuild_keeps_the_estimates_of_what_stayed() {
        let mut messages = vec![text(Role::User, "go")];
        messages.extend(round("a", "x"));
        messages.extend(round("b", "y"));
        let mut ledger = Ledger::new("s", 0, &messages);
        ledger.observe(PromptAnchor {
            prompt_tokens: 900,
            messages: 5,
        });
        let tail = ledger.tokens_of(3..5);
        let mut compacted = vec![text(Role::User, "a summary")];
        compacted.extend(messages[3..].iter().cloned());
        ledger.rebuild(&compacted, 3, 1, &[]);
        assert_eq!(ledger.len(), 3);
        assert!(!ledger.is_measured());
        assert_eq!(ledger.tokens_of(1..3), tail);
        assert_eq!(
            ledger.messages_tokens(),
            estimate::message_tokens(&compacted[0]) + tail
        );
    }
}
