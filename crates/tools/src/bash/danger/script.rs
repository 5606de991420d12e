//! Groups tokens into what bash runs: simple commands, pipelines and function definitions.
//!
//! Compound commands (`if`, `while`, `{ }`, subshells) are flattened: their keywords stay as
//! leading words of the commands inside, which the checker skips. For spotting dangerous
//! commands, what runs matters, not when.

use std::collections::VecDeque;

use super::lexer::tokenize;
use super::words::{Op, Redirect, Token, Word};

/// A simple command: words and redirections.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Command {
    /// The words, command name first (possibly after assignments and keywords).
    pub(crate) words: Vec<Word>,
    /// The redirections, in order.
    pub(crate) redirects: Vec<Redirect>,
}

/// Commands joined by `|`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Pipeline {
    /// The commands, left to right.
    pub(crate) commands: Vec<Command>,
    /// Whether the pipeline is run in the background (`&`).
    pub(crate) background: bool,
}

/// A function definition: `name() { ...; }` or `function name { ...; }`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Function {
    /// The function's name.
    pub(crate) name: String,
    /// Its body.
    pub(crate) body: Script,
}

/// A parsed command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Script {
    /// Pipelines in source order.
    pub(crate) pipelines: Vec<Pipeline>,
    /// Function definitions.
    pub(crate) functions: Vec<Function>,
}

/// Parses a command line.
pub(crate) fn parse(src: &str) -> Script {
    from_tokens(tokenize(src).into())
}

fn from_tokens(mut tokens: VecDeque<Token>) -> Script {
    let mut builder = Builder::default();
    while let Some(token) = tokens.pop_front() {
        match token {
            Token::Word(word) => {
                if builder.command.words.is_empty()
                    && builder.command.redirects.is_empty()
                    && let Some(function) = function_definition(&word, &mut tokens)
                {
                    builder.script.functions.push(function);
                    continue;
                }
                builder.command.words.push(word);
            }
            Token::Redirect(redirect) => builder.command.redirects.push(redirect),
            Token::Op(Op::Pipe) => builder.end_command(),
            Token::Op(Op::Amp) => builder.end_pipeline(true),
            Token::Op(Op::And | Op::Or | Op::Semi | Op::Newline | Op::Open | Op::Close) => {
                builder.end_pipeline(false);
            }
        }
    }
    builder.end_pipeline(false);
    builder.script
}

#[derive(Default)]
struct Builder {
    script: Script,
    pipeline: Pipeline,
    command: Command,
}

impl Builder {
    fn end_command(&mut self) {
        let command = std::mem::take(&mut self.command);
        if !command.words.is_empty() || !command.redirects.is_empty() {
            self.pipeline.commands.push(command);
        }
    }

    fn end_pipeline(&mut self, background: bool) {
        self.end_command();
        let mut pipeline = std::mem::take(&mut self.pipeline);
        if !pipeline.commands.is_empty() {
            pipeline.background = background;
            self.script.pipelines.push(pipeline);
        }
    }
}

fn is_op(token: Option<&Token>, op: Op) -> bool {
    matches!(token, Some(Token::Op(o)) if *o == op)
}

fn is_word(token: Option<&Token>, text: &str) -> bool {
    matches!(token, Some(Token::Word(w)) if w.literal().as_deref() == Some(text))
}

/// When `first` starts a function definition, consumes it and returns the function.
fn function_definition(first: &Word, tokens: &mut VecDeque<Token>) -> Option<Function> {
    let text = first.literal()?;
    let name = if text == "function" {
        let Some(Token::Word(name)) = tokens.front() else {
            return None;
        };
        let name = name.literal()?;
        tokens.pop_front();
        if is_op(tokens.front(), Op::Open) && is_op(tokens.get(1), Op::Close) {
            tokens.drain(..2);
        }
        name
    } else if is_op(tokens.front(), Op::Open) && is_op(tokens.get(1), Op::Close) {
        tokens.drain(..2);
        text
    } else {
        return None;
    };
    while is_op(tokens.front(), Op::Newline) {
        tokens.pop_front();
    }
    let body = if is_word(tokens.front(), "{") {
        take_group(tokens, |t| is_word(Some(t), "{"), |t| is_word(Some(t), "}"))
    } else if is_op(tokens.front(), Op::Open) {
        take_group(
            tokens,
            |t| is_op(Some(t), Op::Open),
            |t| is_op(Some(t), Op::Close),
        )
    } else {
        // Some other compound command: it is parsed as ordinary commands.
        VecDeque::new()
    };
    Some(Function {
        name,
        body: from_tokens(body),
    })
}

/// Takes a group from its opening token to the matching closing one; returns what is inside.
fn take_group(
    tokens: &mut VecDeque<Token>,
    opens: impl Fn(&Token) -> bool,
    closes: impl Fn(&Token) -> bool,
) -> VecDeque<Token> {
    tokens.pop_front();
    let mut depth = 1usize;
    let mut inside = VecDeque::new();
    while let Some(token) = tokens.pop_front() {
        if opens(&token) {
            depth += 1;
        } else if closes(&token) {
            depth -= 1;
            if depth == 0 {
                break;
            }
        }
        inside.push_back(token);
    }
    inside
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(script: &Script) -> Vec<Vec<String>> {
        script
            .pipelines
            .iter()
            .map(|p| {
                p.commands
                    .iter()
                    .map(|c| c.words[0].literal().unwrap_or_default())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn pipelines_and_lists() {
        let script = parse("a | b && c; d & (e)");
        assert_eq!(
            names(&script),
            [vec!["a", "b"], vec!["c"], vec!["d"], vec!["e"]]
        );
        assert!(script.pipelines[2].background);
        assert!(!script.pipelines[0].background);
    }

    #[test]
    fn function_definitions_have_bodies() {
        let script = parse(":(){ :|:& };:");
        assert_eq!(script.functions.len(), 1);
        assert_eq!(script.functions[0].name, ":");
        assert_eq!(names(&script.functions[0].body), [vec![":", ":"]]);
        assert!(script.functions[0].body.pipelines[0].background);
        assert_eq!(names(&script), [vec![":"]]);

        let script = parse("function boom { boom | boom & }\nboom");
        assert_eq!(script.functions[0].name, "boom");
        assert_eq!(names(&script.functions[0].body), [vec!["boom", "boom"]]);
    }
}
