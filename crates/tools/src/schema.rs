//! The JSON Schema of a tool's parameters, cut down to what providers accept and models need:
//! `{"type":"object","properties":{...},"required":[...]}`, with no `$schema`, titles,
//! `$defs`/`$ref`, number formats or `null` alternatives for optional parameters.

use std::any::TypeId;
use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// The cleaned schema of `A`, the parameters object of a tool: derived once per process
/// (some 40,000 instructions each), however many agents, sub-agents and rebuilds ask.
pub fn parameters_schema<A: JsonSchema + 'static>() -> Arc<Value> {
    static DERIVED: Mutex<Vec<(TypeId, Arc<Value>)>> = Mutex::new(Vec::new());
    let key = TypeId::of::<A>();
    let known = |derived: &[(TypeId, Arc<Value>)]| {
        derived
            .iter()
            .find(|(id, _)| *id == key)
            .map(|(_, schema)| Arc::clone(schema))
    };
    if let Some(schema) = known(&DERIVED.lock().unwrap_or_else(|e| e.into_inner())) {
        return schema;
    }
    let schema = Arc::new(derive::<A>());
    let mut derived = DERIVED.lock().unwrap_or_else(|e| e.into_inner());
    match known(&derived) {
        Some(first) => first,
        None => {
            derived.push((key, Arc::clone(&schema)));
            schema
        }
    }
}

fn derive<A: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
        .for_deserialize()
        .into_generator();
    let mut schema = generator.into_root_schema_for::<A>().to_value();
    clean(&mut schema);
    if let Value::Object(root) = &mut schema {
        // The tool's own description says what the parameters are for.
        root.remove("description");
        root.entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        root.entry("required")
            .or_insert_with(|| Value::Array(Vec::new()));
    }
    schema
}

fn clean(value: &mut Value) {
    match value {
        Value::Object(map) => {
            clean_object(map);
            for child in map.values_mut() {
                clean(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(clean),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}

/// The keys [`clean_object`] acts on.
const RULED: [&str; 11] = [
    "$schema",
    "title",
    "$defs",
    "definitions",
    "additionalProperties",
    "type",
    "anyOf",
    "enum",
    "default",
    "oneOf",
    "format",
];

/// Which of [`RULED`] an object holds.
#[derive(Default)]
struct Present([bool; RULED.len()]);

impl Present {
    fn mark(&mut self, key: &str) {
        if let Some(i) = RULED.iter().position(|ruled| *ruled == key) {
            self.0[i] = true;
        }
    }

    fn has(&self, key: &str) -> bool {
        RULED
            .iter()
            .position(|ruled| *ruled == key)
            .is_some_and(|i| self.0[i])
    }
}

fn clean_object(map: &mut Map<String, Value>) {
    // Most objects are a `type` and a `description`: one look at the keys spares them a
    // hashed lookup for every rule below (a process derives each tool's schema before its
    // first request).
    let mut present = Present::default();
    for key in map.keys() {
        present.mark(key);
    }
    for noise in ["$schema", "title", "$defs", "definitions"] {
        if present.has(noise) {
            map.remove(noise);
        }
    }
    // Optional parameters are simply left out by the model; `null` alternatives only add bytes.
    if present.has("type")
        && let Some(Value::Array(types)) = map.get_mut("type")
    {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            map.insert("type".to_owned(), only);
        }
    }
    if present.has("anyOf")
        && let Some(Value::Array(branches)) = map.get("anyOf")
    {
        let non_null: Vec<&Value> = branches.iter().filter(|b| !is_null_schema(b)).collect();
        if let [only] = non_null.as_slice()
            && let Value::Object(inner) = (*only).clone()
        {
            map.remove("anyOf");
            for (key, value) in inner {
                present.mark(&key);
                map.entry(key).or_insert(value);
            }
        }
    }
    if present.has("enum")
        && let Some(Value::Array(options)) = map.get_mut("enum")
    {
        options.retain(|o| !o.is_null());
    }
    // Defaults are in the descriptions where they matter; `false` for a flag goes without saying.
    if present.has("default")
        && map
            .get("default")
            .is_some_and(|d| d.is_null() || d == false)
    {
        map.remove("default");
    }
    // Unknown parameters are refused with a message naming the accepted ones, which teaches
    // the model more than the schema keyword would, for fewer bytes.
    if present.has("additionalProperties") {
        map.remove("additionalProperties");
    }
    if present.has("oneOf") {
        one_of_constants_to_enum(map);
    }
    // `"format": "uint"` with `"minimum": 0` says "non-negative integer"; the description
    // carries the meaning, and a real lower bound set by hand is kept.
    if present.has("format") {
        let unsigned = map
            .get("format")
            .and_then(Value::as_str)
            .is_some_and(|f| f.starts_with("uint"));
        if unsigned && map.get("minimum").and_then(Value::as_u64) == Some(0) {
            map.remove("minimum");
        }
        map.remove("format");
    }
}

/// schemars renders an enum with documented variants as `oneOf` of `const`s; providers and
/// models know `enum` best.
fn one_of_constants_to_enum(map: &mut Map<String, Value>) {
    let Some(Value::Array(branches)) = map.get("oneOf") else {
        return;
    };
    let mut constants = Vec::new();
    for branch in branches {
        match (branch.get("const"), branch.get("enum")) {
            (Some(Value::String(c)), _) => constants.push(Value::String(c.clone())),
            (None, Some(Value::Array(values))) if values.iter().all(Value::is_string) => {
                constants.extend(values.iter().cloned());
            }
            _ => return,
        }
    }
    map.remove("oneOf");
    map.insert("type".to_owned(), Value::String("string".to_owned()));
    map.insert("enum".to_owned(), Value::Array(constants));
}

fn is_null_schema(value: &Value) -> bool {
    value.get("type").and_then(Value::as_str) == Some("null")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[expect(dead_code, reason = "only the schema is used")]
    /// Root docs are dropped.
    struct Args {
        /// The path.
        path: String,
        /// How many.
        limit: Option<u32>,
        /// Which mode.
        mode: Option<Mode>,
        /// A flag.
        #[serde(default)]
        flag: bool,
    }

    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    enum Mode {
        /// Documented variants make schemars write `oneOf`.
        Fast,
        /// The other one.
        Slow,
    }

    #[test]
    fn schema_is_plain_and_inlined() {
        let schema = Value::clone(&parameters_schema::<Args>());
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "The path."},
                    "limit": {"type": "integer", "description": "How many."},
                    "mode": {"type": "string", "enum": ["fast", "slow"], "description": "Which mode."},
                    "flag": {"type": "boolean", "description": "A flag."},
                },
                "required": ["path"],
            })
        );
    }

    #[test]
    fn empty_arguments_still_give_properties_and_required() {
        #[derive(Deserialize, JsonSchema)]
        struct NoArgs {}
        let schema = parameters_schema::<NoArgs>();
        assert_eq!(schema["properties"], json!({}));
        assert_eq!(schema["required"], json!([]));
        assert_eq!(schema["type"], "object");
    }
}
