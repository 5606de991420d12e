//! Checking a model's JSON arguments by deserialising them into the tool's argument type, with
//! messages that name the parameter and say what was expected.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// Deserialises `args` into `A`; the error is the whole message for the model.
pub(crate) fn parse_args<A: DeserializeOwned>(tool: &str, args: &Value) -> Result<A, String> {
    serde_path_to_error::deserialize(args).map_err(|err| {
        let path = err.path().to_string();
        let message = describe(&path, &err.inner().to_string());
        format!("Invalid arguments for {tool}: {message}")
    })
}

fn describe(path: &str, message: &str) -> String {
    let at_root = path.is_empty() || path == ".";
    if at_root {
        if let Some(name) = message.strip_prefix("missing field ") {
            return format!("missing parameter {name}");
        }
        if let Some(rest) = message.strip_prefix("unknown field ") {
            return describe_unknown(rest);
        }
        if message.starts_with("invalid type") && expected_object(message) {
            let got = message
                .strip_prefix("invalid type: ")
                .and_then(|m| m.split(", expected").next())
                .unwrap_or("something else");
            return format!("the arguments must be a JSON object of parameters, not {got}");
        }
        return humanize_expected(message);
    }
    // serde_path_to_error puts an unknown key into the path; name it as the parameter.
    if let Some(rest) = message.strip_prefix("unknown field ") {
        let parent = path.rsplit_once('.').map(|(parent, _)| parent);
        return match parent {
            Some(parent) => format!("`{parent}`: {}", describe_unknown(rest)),
            None => describe_unknown(rest),
        };
    }
    if let Some(name) = message.strip_prefix("missing field ") {
        return format!("`{path}`: missing field {name}");
    }
    format!("`{path}`: {}", humanize_expected(message))
}

/// `rest` is what follows "unknown field ": "`x`, expected one of `a`, `b`", "`x`, expected
/// `a`" or "`x`, there are no fields".
fn describe_unknown(rest: &str) -> String {
    let (name, tail) = rest.split_once(", ").unwrap_or((rest, ""));
    let accepted = tail
        .strip_prefix("expected one of ")
        .or_else(|| tail.strip_prefix("expected "))
        .unwrap_or("none");
    format!("unknown parameter {name}; accepted parameters: {accepted}")
}

fn expected_object(message: &str) -> bool {
    message.contains("expected struct") || message.contains("expected a map")
}

/// Rewrites Rust type names in "expected ..." into words a model understands.
fn humanize_expected(message: &str) -> String {
    let Some((head, expected)) = message.rsplit_once(", expected ") else {
        return message.to_owned();
    };
    let words = match expected {
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => "a non-negative integer",
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "an integer",
        "f32" | "f64" => "a number",
        "a sequence" => "an array",
        "a map" => "an object",
        other if other.starts_with("struct ") => "an object",
        other => other,
    };
    format!("{head}, expected {words}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[expect(dead_code, reason = "fields are only deserialised")]
    struct Args {
        file_path: String,
        limit: Option<u32>,
        flag: Option<bool>,
        items: Option<Vec<Item>>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[expect(dead_code, reason = "fields are only deserialised")]
    struct Item {
        content: String,
    }

    fn message(args: Value) -> String {
        parse_args::<Args>("t", &args).unwrap_err()
    }

    #[test]
    fn missing_parameter_is_named() {
        assert_eq!(
            message(serde_json::json!({})),
            "Invalid arguments for t: missing parameter `file_path`"
        );
    }

    #[test]
    fn wrong_type_names_the_parameter_and_says_integer() {
        let msg = message(serde_json::json!({"file_path": "a", "limit": "10"}));
        assert_eq!(
            msg,
            "Invalid arguments for t: `limit`: invalid type: string \"10\", expected a non-negative integer"
        );
    }

    #[test]
    fn negative_number_for_unsigned_is_explained() {
        let msg = message(serde_json::json!({"file_path": "a", "limit": -1}));
        assert!(
            msg.contains("`limit`") && msg.contains("non-negative integer"),
            "{msg}"
        );
    }

    #[test]
    fn unknown_parameter_lists_accepted_ones() {
        let msg = message(serde_json::json!({"path": "a"}));
        assert_eq!(
            msg,
            "Invalid arguments for t: unknown parameter `path`; accepted parameters: `file_path`, `limit`, `flag`, `items`"
        );
    }

    #[test]
    fn nested_errors_keep_their_path() {
        let msg = message(serde_json::json!({"file_path": "a", "items": [{"content": 1}]}));
        assert!(
            msg.contains("`items[0].content`: invalid type: integer `1`, expected a string"),
            "{msg}"
        );
        let msg =
            message(serde_json::json!({"file_path": "a", "items": [{"content": "x", "extra": 1}]}));
        assert!(
            msg.contains("`items[0]`: unknown parameter `extra`"),
            "{msg}"
        );
    }

    #[test]
    fn non_object_arguments_are_explained() {
        let msg = message(serde_json::json!("read a.txt"));
        assert!(msg.contains("must be a JSON object"), "{msg}");
        let msg = message(serde_json::json!(null));
        assert!(msg.contains("must be a JSON object"), "{msg}");
    }

    #[test]
    fn null_for_optional_parameters_is_accepted() {
        let parsed = parse_args::<Args>("t", &serde_json::json!({"file_path": "a", "limit": null}));
        assert!(parsed.is_ok());
    }
}
