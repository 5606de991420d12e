//! The environment hooks run with: rein's own, minus the variables whose names look secret,
//! unless the person passed them on (`[secrets] pass_env`).

use std::ffi::OsString;

/// Whether a variable's name looks like it holds a secret (`*_KEY`, `*_TOKEN`, `*_SECRET`,
/// `*PASSWORD*`, `*_CREDENTIALS`), whatever its case.
pub fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["_KEY", "_TOKEN", "_SECRET", "_CREDENTIALS"]
        .iter()
        .any(|end| upper.ends_with(end))
        || upper.contains("PASSWORD")
}

/// Of the variables `names`, those hooks must not get: the secret-looking ones not listed in
/// `pass_env`.
pub fn hidden_variables(
    names: impl IntoIterator<Item = OsString>,
    pass_env: &[String],
) -> Vec<String> {
    names
        .into_iter()
        // A name that is not UTF-8 is no name rein's patterns (or the person) can mean.
        .filter_map(|name| name.into_string().ok())
        .filter(|name| looks_secret(name) && !pass_env.contains(name))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_looking_names_are_hidden_unless_passed() {
        let names = [
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "aws_secret",
            "DB_PASSWORD_FILE",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "NPM_TOKEN",
            "PATH",
            "HOME",
            "KEYBOARD",
            "TOKENIZER",
        ]
        .map(OsString::from);
        assert_eq!(
            hidden_variables(names, &["NPM_TOKEN".to_owned()]),
            [
                "OPENAI_API_KEY",
                "GITHUB_TOKEN",
                "aws_secret",
                "DB_PASSWORD_FILE",
                "GOOGLE_APPLICATION_CREDENTIALS"
            ]
        );
    }
}
