//! git's global options, the ones before the subcommand (`git -C dir -c k=v push`): which
//! take a value, and which leave what git reads and runs unchanged.

/// Global options that take their value in the next word when it is not attached with `=`.
const WITH_VALUE: [&str; 7] = [
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
    "--attr-source",
];

/// Global options that change neither the repository, the configuration nor the programs
/// git runs: a command with only these is the same command as without them.
const HARMLESS: [&str; 12] = [
    "-P",
    "--no-pager",
    "-p",
    "--paginate",
    "--no-replace-objects",
    "--no-lazy-fetch",
    "--no-optional-locks",
    "--no-advice",
    "--literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
];

/// How many words the global option `text` takes (itself and its value), when `text` is
/// an option; `None` for the subcommand. An unknown option counts as one word.
pub(crate) fn option_words(text: &str) -> Option<usize> {
    if !text.starts_with('-') {
        return None;
    }
    Some(if WITH_VALUE.contains(&text) { 2 } else { 1 })
}

/// Whether the global option `text` leaves what git reads and runs as it was. `-C`,
/// `--git-dir`, `--work-tree`, `--bare`, `-c`, `--config-env`, `--exec-path` and the rest
/// point git at a repository (and its configuration, hooks, pager, textconv and diff
/// programs) or at programs rein has not seen.
pub(crate) fn is_harmless(text: &str) -> bool {
    HARMLESS.contains(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_skipped_with_their_option() {
        assert_eq!(option_words("-C"), Some(2));
        assert_eq!(option_words("--git-dir"), Some(2));
        assert_eq!(option_words("--git-dir=x"), Some(1));
        assert_eq!(option_words("--no-pager"), Some(1));
        assert_eq!(option_words("push"), None);
        assert!(is_harmless("-P"));
        assert!(!is_harmless("-C"));
        assert!(!is_harmless("--bare"));
        assert!(!is_harmless("--exec-path"));
    }
}
