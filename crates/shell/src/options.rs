//! The parser's options, shared by the command parser and the word and brace parsers, so
//! that each reads the text the same way.

use std::sync::LazyLock;

use brush_parser::ParserOptions;

/// bash's defaults, with extended globs on (as `shopt -s extglob` allows).
pub(crate) static OPTIONS: LazyLock<ParserOptions> = LazyLock::new(ParserOptions::default);
