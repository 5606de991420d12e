//! A server's input schema as providers take it. Schemas pass through, less the keywords
//! some providers refuse: meta keywords (`$schema`, `$id`, `$comment`, ...) anywhere, and
//! combinators at the root, which OpenAI rejects ("must be type object"). The root is always
//! an object with `properties`, as both wire formats require.

use serde_json::{Map, Value};

/// Keywords that describe the schema document rather than the data; some providers reject
/// them (Gemini-backed gateways, older vLLM) and none needs them.
const META_KEYWORDS: [&str; 6] = [
    "$schema",
    "$id",
    "$comment",
    "$anchor",
    "$dynamicAnchor",
    "$vocabulary",
];
/// Keywords OpenAI refuses at the root of a function's parameters.
const ROOT_REJECTED: [&str; 5] = ["oneOf", "anyOf", "allOf", "not", "enum"];
/// Keywords whose value maps names to schemas (not keywords to values).
const NAMED_SCHEMAS: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// `schema`, cleaned for the request.
pub fn clean_schema(schema: &Map<String, Value>) -> Value {
    let mut root = schema.clone();
    for key in ROOT_REJECTED {
        root.remove(key);
    }
    root.insert("type".to_owned(), Value::String("object".to_owned()));
    root.entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    let mut root = Value::Object(root);
    strip_meta(&mut root);
    root
}

/// Removes [`META_KEYWORDS`] from `schema` and every schema inside it.
fn strip_meta(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            for key in META_KEYWORDS {
                map.remove(key);
            }
            for (key, value) in map.iter_mut() {
                if NAMED_SCHEMAS.contains(&key.as_str()) {
                    // The keys here are property names, which may be anything.
                    if let Value::Object(named) = value {
                        named.values_mut().for_each(strip_meta);
                    }
                } else {
                    strip_meta(value);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_meta),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn clean(value: Value) -> Value {
        clean_schema(value.as_object().unwrap())
    }

    #[test]
    fn meta_keywords_go_everywhere_but_property_names_stay() {
        let cleaned = clean(json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "$id": {"type": "string", "$comment": "a property named $id"},
                "items": {"type": "array", "items": {"$id": "x", "type": "number"}}
            },
            "required": ["$id"]
        }));
        assert_eq!(
            cleaned,
            json!({
                "type": "object",
                "properties": {
                    "$id": {"type": "string"},
                    "items": {"type": "array", "items": {"type": "number"}}
                },
                "required": ["$id"]
            })
        );
    }

    #[test]
    fn the_root_is_an_object_with_properties() {
        assert_eq!(
            clean(json!({})),
            json!({"type": "object", "properties": {}})
        );
        let cleaned = clean(json!({"anyOf": [{"required": ["a"]}], "properties": {"a": {}}}));
        assert_eq!(cleaned, json!({"type": "object", "properties": {"a": {}}}));
    }
}
