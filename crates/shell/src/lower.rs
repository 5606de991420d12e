//! brush-parser's syntax tree turned into the analysis's [`Script`].

use brush_parser::ast;

use super::lower_words::{lower_one, lower_word};
use super::tree::{Assignment, Body, Command, Compound, Function, Item, Pipeline, Script, Simple};
use super::words::{HereDoc, Part, Redirect, RedirectKind, Word};

/// Lowers a parsed program.
pub(crate) fn program(program: &ast::Program) -> Script {
    Script {
        items: program
            .complete_commands
            .iter()
            .flat_map(|list| list.0.iter().map(item))
            .collect(),
    }
}

fn list(list: &ast::CompoundList) -> Script {
    Script {
        items: list.0.iter().map(item).collect(),
    }
}

fn item(item: &ast::CompoundListItem) -> Item {
    let ast::CompoundListItem(and_or, separator) = item;
    let mut pipelines = vec![pipeline(&and_or.first)];
    for next in &and_or.additional {
        match next {
            ast::AndOr::And(p) | ast::AndOr::Or(p) => pipelines.push(pipeline(p)),
        }
    }
    Item {
        pipelines,
        background: matches!(separator, ast::SeparatorOperator::Async),
    }
}

fn pipeline(pipeline: &ast::Pipeline) -> Pipeline {
    Pipeline {
        commands: pipeline.seq.iter().map(command).collect(),
    }
}

fn command(command: &ast::Command) -> Command {
    match command {
        ast::Command::Simple(simple_command) => Command::Simple(simple(simple_command)),
        ast::Command::Compound(compound_command, redirects) => {
            Command::Compound(compound(compound_command, redirects.as_ref()))
        }
        ast::Command::Function(definition) => {
            let ast::FunctionBody(body, redirects) = &definition.body;
            Command::Function(Function {
                name: lower_one(&definition.fname.value)
                    .literal()
                    .unwrap_or_else(|| definition.fname.value.clone()),
                body: Box::new(compound(body, redirects.as_ref())),
            })
        }
        ast::Command::ExtendedTest(test) => Command::Compound(Compound {
            body: Body::Test(test_words(&test.expr)),
            redirects: Vec::new(),
        }),
    }
}

fn simple(command: &ast::SimpleCommand) -> Simple {
    let mut out = Simple::default();
    let prefix = command.prefix.iter().flat_map(|p| &p.0);
    for item in prefix {
        match item {
            ast::CommandPrefixOrSuffixItem::AssignmentWord(assignment_ast, raw) => {
                out.assignments.push(assignment(assignment_ast, &raw.value));
            }
            other => prefix_or_suffix(&mut out, other),
        }
    }
    if let Some(name) = &command.word_or_name {
        out.words.extend(lower_word(&name.value));
        out.written.push(name.value.clone());
    }
    for item in command.suffix.iter().flat_map(|s| &s.0) {
        prefix_or_suffix(&mut out, item);
    }
    out
}

fn prefix_or_suffix(out: &mut Simple, item: &ast::CommandPrefixOrSuffixItem) {
    match item {
        ast::CommandPrefixOrSuffixItem::IoRedirect(r) => out.redirects.push(redirect(r)),
        // After the command name, `NAME=value` is an argument (`export A=b`, `env A=b cmd`).
        ast::CommandPrefixOrSuffixItem::Word(word) => {
            out.words.extend(lower_word(&word.value));
            out.written.push(word.value.clone());
        }
        ast::CommandPrefixOrSuffixItem::AssignmentWord(assignment_ast, word) => {
            out.words.extend(lower_word(&word.value));
            out.written.push(word.value.clone());
            out.arg_assignments
                .push(assignment(assignment_ast, &word.value));
        }
        ast::CommandPrefixOrSuffixItem::ProcessSubstitution(kind, subshell) => {
            let word = process_substitution(kind, subshell);
            out.written.push(word.raw.clone());
            out.words.push(word);
        }
    }
}

fn assignment(assignment: &ast::Assignment, raw: &str) -> Assignment {
    let mut indexes = Vec::new();
    let (name, element) = match &assignment.name {
        ast::AssignmentName::VariableName(name) => (name.clone(), false),
        ast::AssignmentName::ArrayElementName(name, index) => {
            indexes.push(lower_one(index));
            (name.clone(), true)
        }
    };
    let (values, array) = match &assignment.value {
        ast::AssignmentValue::Scalar(word) => (vec![lower_one(&word.value)], element),
        ast::AssignmentValue::Array(elements) => {
            let mut values = Vec::new();
            for (key, value) in elements {
                indexes.extend(key.iter().map(|k| lower_one(&k.value)));
                values.extend(lower_word(&value.value));
            }
            (values, true)
        }
    };
    Assignment {
        name,
        values,
        array: array || assignment.append,
        indexes,
        raw: raw.to_owned(),
    }
}

fn process_substitution(
    kind: &ast::ProcessSubstitutionKind,
    subshell: &ast::SubshellCommand,
) -> Word {
    let script = list(&subshell.list);
    let sign = match kind {
        ast::ProcessSubstitutionKind::Read => '<',
        ast::ProcessSubstitutionKind::Write => '>',
    };
    Word {
        // brush writes the list back as `( ls a )`.
        raw: format!("{sign}{subshell}"),
        parts: vec![Part::ProcSubst(Box::new(script))],
    }
}

fn compound(command: &ast::CompoundCommand, redirects: Option<&ast::RedirectList>) -> Compound {
    let body = match command {
        ast::CompoundCommand::Arithmetic(arithmetic) => {
            Body::Arithmetic(arithmetic.expr.value.clone())
        }
        ast::CompoundCommand::ArithmeticForClause(for_clause) => Body::ArithFor {
            exprs: [
                &for_clause.initializer,
                &for_clause.condition,
                &for_clause.updater,
            ]
            .into_iter()
            .flatten()
            .map(|e| e.value.clone())
            .collect(),
            body: list(&for_clause.body.list),
        },
        ast::CompoundCommand::BraceGroup(group) => Body::Group(list(&group.list)),
        ast::CompoundCommand::Subshell(subshell) => Body::Subshell(list(&subshell.list)),
        ast::CompoundCommand::ForClause(for_clause) => Body::For {
            var: for_clause.variable_name.clone(),
            values: for_clause
                .values
                .as_ref()
                .map(|words| words.iter().flat_map(|w| lower_word(&w.value)).collect()),
            body: list(&for_clause.body.list),
        },
        ast::CompoundCommand::CaseClause(case) => Body::Case {
            subject: lower_one(&case.value.value),
            arms: case
                .cases
                .iter()
                .map(|arm| {
                    let patterns = arm.patterns.iter().map(|p| lower_one(&p.value)).collect();
                    (patterns, arm.cmd.as_ref().map(list).unwrap_or_default())
                })
                .collect(),
        },
        ast::CompoundCommand::IfClause(if_clause) => {
            let mut parts = vec![list(&if_clause.condition), list(&if_clause.then)];
            for clause in if_clause.elses.iter().flatten() {
                parts.extend(clause.condition.as_ref().map(list));
                parts.push(list(&clause.body));
            }
            Body::If(parts)
        }
        ast::CompoundCommand::WhileClause(clause) | ast::CompoundCommand::UntilClause(clause) => {
            let ast::WhileOrUntilClauseCommand(condition, body, _) = clause;
            Body::Loop {
                condition: list(condition),
                body: list(&body.list),
            }
        }
    };
    Compound {
        body,
        redirects: redirects
            .map(|r| r.0.iter().map(redirect).collect())
            .unwrap_or_default(),
    }
}

/// The operand words of `[[ ... ]]`, walked without recursion (a long `&&` chain nests
/// deeply).
fn test_words(expr: &ast::ExtendedTestExpr) -> Vec<Word> {
    let mut words = Vec::new();
    let mut stack = vec![expr];
    while let Some(expr) = stack.pop() {
        match expr {
            ast::ExtendedTestExpr::And(a, b) | ast::ExtendedTestExpr::Or(a, b) => {
                stack.push(b);
                stack.push(a);
            }
            ast::ExtendedTestExpr::Not(e) | ast::ExtendedTestExpr::Parenthesized(e) => {
                stack.push(e);
            }
            ast::ExtendedTestExpr::UnaryTest(_, word) => words.push(lower_one(&word.value)),
            ast::ExtendedTestExpr::BinaryTest(_, left, right) => {
                words.push(lower_one(&left.value));
                words.push(lower_one(&right.value));
            }
        }
    }
    words
}

fn redirect(redirect: &ast::IoRedirect) -> Redirect {
    match redirect {
        ast::IoRedirect::File(fd, kind, target) => {
            let mut kind = match kind {
                ast::IoFileRedirectKind::Read => RedirectKind::Read,
                ast::IoFileRedirectKind::Write | ast::IoFileRedirectKind::Clobber => {
                    RedirectKind::Write
                }
                ast::IoFileRedirectKind::Append => RedirectKind::Append,
                ast::IoFileRedirectKind::ReadAndWrite => RedirectKind::ReadWrite,
                ast::IoFileRedirectKind::DuplicateInput => RedirectKind::DupRead,
                ast::IoFileRedirectKind::DuplicateOutput => RedirectKind::DupWrite,
            };
            let target = match target {
                ast::IoFileRedirectTarget::Filename(word)
                | ast::IoFileRedirectTarget::Duplicate(word) => lower_one(&word.value),
                ast::IoFileRedirectTarget::Fd(fd) => Word::literal_word(&fd.to_string()),
                ast::IoFileRedirectTarget::ProcessSubstitution(k, subshell) => {
                    process_substitution(k, subshell)
                }
            };
            // `>&file` (not a descriptor number or `-`) sends stdout and stderr to the file.
            let names_fd = target.literal().is_some_and(|t| {
                t == "-" || (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
            });
            if kind == RedirectKind::DupWrite && !names_fd {
                kind = RedirectKind::WriteBoth;
            }
            Redirect {
                fd: *fd,
                kind,
                target,
                body: None,
            }
        }
        ast::IoRedirect::HereDocument(fd, doc) => Redirect {
            fd: *fd,
            kind: RedirectKind::HereDoc,
            target: lower_one(&doc.here_end.value),
            body: Some(HereDoc {
                text: doc.doc.value.clone(),
                expands: doc.requires_expansion,
            }),
        },
        ast::IoRedirect::HereString(fd, word) => Redirect {
            fd: *fd,
            kind: RedirectKind::HereString,
            target: lower_one(&word.value),
            body: None,
        },
        ast::IoRedirect::OutputAndError(word, _append) => Redirect {
            fd: None,
            kind: RedirectKind::WriteBoth,
            target: lower_one(&word.value),
            body: None,
        },
    }
}
