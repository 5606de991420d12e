//! A server's input schema as providers take it. Schemas pass through, less the keywords
//! some providers refuse: meta keywords (`$schema`, `$id`, `$comment`, ...) anywhere but in
//! data (`default`, `enum`, `const`, `examples`) and unless a `$ref` points at them, and
//! combinators at the root, which OpenAI rejects ("must be type object"): the properties of
//! `oneOf`/`anyOf`/`allOf` branches are merged into the root instead, and a root `$ref` into
//! `$defs` is inlined. The root is always an object with `properties`, as both wire formats
//! require.

use std::collections::HashSet;

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
/// Keywords whose value is data, not schema: nothing in it is a keyword.
const DATA_KEYWORDS: [&str; 4] = ["default", "enum", "const", "examples"];

/// `schema`, cleaned for the request.
pub fn clean_schema(schema: &Map<String, Value>) -> Value {
    let mut root = schema.clone();
    inline_root_ref(&mut root);
    merge_root_branches(&mut root);
    for key in ROOT_REJECTED {
        root.remove(key);
    }
    root.insert("type".to_owned(), Value::String("object".to_owned()));
    root.entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    let mut root = Value::Object(root);
    let mut refs = HashSet::new();
    collect_refs(&root, &mut refs);
    strip_meta(&mut root, &refs);
    root
}

/// The schema a local `$ref` (`#/$defs/X`, `#/definitions/X`) of `root` points at.
fn local_ref<'a>(root: &'a Map<String, Value>, reference: &str) -> Option<&'a Map<String, Value>> {
    let (table, name) = reference
        .strip_prefix("#/$defs/")
        .map(|name| ("$defs", name))
        .or_else(|| {
            reference
                .strip_prefix("#/definitions/")
                .map(|name| ("definitions", name))
        })?;
    // JSON Pointer escapes.
    let name = name.replace("~1", "/").replace("~0", "~");
    root.get(table)?.get(&name)?.as_object()
}

/// A root that is only a `$ref` into its own `$defs` (as some schema generators write it)
/// gets the referenced schema's keywords; its own keywords win.
fn inline_root_ref(root: &mut Map<String, Value>) {
    let Some(Value::String(reference)) = root.get("$ref") else {
        return;
    };
    let Some(target) = local_ref(root, reference).cloned() else {
        return;
    };
    root.remove("$ref");
    for (key, value) in target {
        root.entry(key).or_insert(value);
    }
}

/// Merges the `properties` of the root's `oneOf`/`anyOf`/`allOf` branches into the root
/// (a branch's own `$ref` followed): the model sees every parameter any branch takes.
/// Required are those every `allOf` branch requires, and those every `oneOf`/`anyOf` branch
/// requires (the intersection), beside the root's own.
fn merge_root_branches(root: &mut Map<String, Value>) {
    let mut properties = match root.get("properties") {
        Some(Value::Object(properties)) => properties.clone(),
        _ => Map::new(),
    };
    let mut required: Vec<String> = strings(root.get("required"));
    let mut merged_any = false;
    for (combinator, all_must_hold) in [("allOf", true), ("anyOf", false), ("oneOf", false)] {
        let Some(Value::Array(branches)) = root.get(combinator) else {
            continue;
        };
        let mut common: Option<Vec<String>> = None;
        for branch in branches {
            let Some(mut branch) = branch.as_object() else {
                continue;
            };
            if let Some(Value::String(reference)) = branch.get("$ref")
                && let Some(target) = local_ref(root, reference)
            {
                branch = target;
            }
            if let Some(Value::Object(props)) = branch.get("properties") {
                for (name, schema) in props {
                    properties.entry(name.clone()).or_insert(schema.clone());
                }
                merged_any = true;
            }
            let needed = strings(branch.get("required"));
            if all_must_hold {
                for name in needed {
                    if !required.contains(&name) {
                        required.push(name);
                    }
                }
            } else {
                common = Some(match common {
                    None => needed,
                    Some(common) => common.into_iter().filter(|n| needed.contains(n)).collect(),
                });
            }
        }
        for name in common.unwrap_or_default() {
            if !required.contains(&name) {
                required.push(name);
            }
        }
    }
    if merged_any {
        root.insert("properties".to_owned(), Value::Object(properties));
    }
    if !required.is_empty() {
        root.insert(
            "required".to_owned(),
            Value::Array(required.into_iter().map(Value::String).collect()),
        );
    }
}

fn strings(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|i| i.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

/// Every `$ref` and `$dynamicRef` in `schema` (outside data).
fn collect_refs(schema: &Value, refs: &mut HashSet<String>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("$ref" | "$dynamicRef", Value::String(reference)) => {
                        refs.insert(reference.clone());
                    }
                    (key, _) if DATA_KEYWORDS.contains(&key) => {}
                    (key, Value::Object(named)) if NAMED_SCHEMAS.contains(&key) => {
                        named.values().for_each(|v| collect_refs(v, refs));
                    }
                    _ => collect_refs(value, refs),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, refs)),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}

/// Whether meta keyword `key` with `value` is the target of one of `refs`.
fn referenced(key: &str, value: &Value, refs: &HashSet<String>) -> bool {
    let Value::String(value) = value else {
        return false;
    };
    match key {
        "$anchor" | "$dynamicAnchor" => {
            refs.contains(&format!("#{value}"))
                || refs.iter().any(|r| r.ends_with(&format!("#{value}")))
        }
        "$id" => refs.iter().any(|r| r.starts_with(value.as_str())),
        _ => false,
    }
}

/// Removes [`META_KEYWORDS`] from `schema` and every schema inside it, but for those a
/// reference points at; data is left as it is.
fn strip_meta(schema: &mut Value, refs: &HashSet<String>) {
    match schema {
        Value::Object(map) => {
            for key in META_KEYWORDS {
                if map.get(key).is_some_and(|v| !referenced(key, v, refs)) {
                    map.remove(key);
                }
            }
            for (key, value) in map.iter_mut() {
                if DATA_KEYWORDS.contains(&key.as_str()) {
                    continue;
                }
                if NAMED_SCHEMAS.contains(&key.as_str()) {
                    // The keys here are property names, which may be anything.
                    if let Value::Object(named) = value {
                        named.values_mut().for_each(|v| strip_meta(v, refs));
                    }
                } else {
                    strip_meta(value, refs);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| strip_meta(v, refs)),
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
        let cleaned = clean(json!({"not": {"required": ["a"]}, "properties": {"a": {}}}));
        assert_eq!(cleaned, json!({"type": "object", "properties": {"a": {}}}));
    }

    #[test]
    fn root_branches_are_merged_not_dropped() {
        let cleaned = clean(json!({
            "oneOf": [
                {"properties": {"id": {"type": "integer"}, "verbose": {"type": "boolean"}},
                 "required": ["id", "verbose"]},
                {"properties": {"name": {"type": "string"}, "verbose": {"type": "boolean"}},
                 "required": ["name", "verbose"]}
            ]
        }));
        assert_eq!(
            cleaned,
            json!({
                "type": "object",
                "properties": {
                    "id": {"type": "integer"},
                    "verbose": {"type": "boolean"},
                    "name": {"type": "string"}
                },
                "required": ["verbose"]
            })
        );
        let cleaned = clean(json!({
            "allOf": [
                {"properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"$ref": "#/$defs/B"}
            ],
            "$defs": {"B": {"properties": {"b": {"type": "number"}}, "required": ["b"]}}
        }));
        assert_eq!(
            cleaned["properties"],
            json!({"a": {"type": "string"}, "b": {"type": "number"}})
        );
        assert_eq!(cleaned["required"], json!(["a", "b"]));
        assert!(cleaned.get("allOf").is_none());
    }

    #[test]
    fn a_root_ref_into_defs_is_inlined() {
        let cleaned = clean(json!({
            "$ref": "#/$defs/Args",
            "$defs": {
                "Args": {
                    "type": "object",
                    "properties": {"path": {"$ref": "#/$defs/Path"}},
                    "required": ["path"]
                },
                "Path": {"type": "string"}
            }
        }));
        assert!(cleaned.get("$ref").is_none(), "{cleaned}");
        assert_eq!(
            cleaned["properties"]["path"],
            json!({"$ref": "#/$defs/Path"})
        );
        assert_eq!(cleaned["required"], json!(["path"]));
        assert_eq!(cleaned["$defs"]["Path"], json!({"type": "string"}));
        let cleaned = clean(json!({
            "$ref": "#/definitions/A",
            "definitions": {"A": {"properties": {"x": {}}}}
        }));
        assert_eq!(cleaned["properties"], json!({"x": {}}));
    }

    #[test]
    fn data_keeps_its_keys_and_referenced_anchors_stay() {
        let value = json!({"$id": "kept", "$schema": "kept too"});
        let cleaned = clean(json!({
            "type": "object",
            "properties": {
                "doc": {
                    "type": "object",
                    "default": value,
                    "examples": [value],
                    "const": value,
                    "enum": [value]
                },
                "node": {"$ref": "#node"},
                "other": {"$anchor": "unused", "type": "string"}
            },
            "$defs": {"Node": {"$anchor": "node", "type": "object"}}
        }));
        let doc = &cleaned["properties"]["doc"];
        assert_eq!(doc["default"], value);
        assert_eq!(doc["examples"][0], value);
        assert_eq!(doc["const"], value);
        assert_eq!(doc["enum"][0], value);
        assert_eq!(cleaned["$defs"]["Node"]["$anchor"], "node");
        assert!(cleaned["properties"]["other"].get("$anchor").is_none());
    }
}
