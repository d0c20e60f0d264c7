//! Elicitation helpers for an embedder's input hook.

use crate::prelude::*;

/// The `content` of an elicitation answer that takes every default: given an
/// `elicitation/create` request's `requestedSchema` (raw JSON), a JSON object with each property
/// of `properties` that has a `default`, mapped to that default (keys sorted). `None` if
/// the schema is not a JSON object. Properties without a default are left out (a required one
/// then has no value: the embedder must ask or decline).
pub fn elicitation_defaults(requested_schema: &str) -> Option<String> {
    let schema: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(requested_schema).ok()?;
    let mut content = serde_json::Map::new();
    if let Some(serde_json::Value::Object(props)) = schema.get("properties") {
        for (name, prop) in props {
            if let Some(default) = prop.get("default") {
                content.insert(name.clone(), default.clone());
            }
        }
    }
    serde_json::to_string(&content).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SEP-1034 (2025-11-25 elicitation): primitive schemas may carry a `default`, which "clients
    /// SHOULD use ... to pre-populate form fields".
    #[test]
    fn takes_each_default_and_leaves_the_others_out() {
        let schema = r#"{"type":"object","properties":{
            "name":{"type":"string","default":"John Doe"},"age":{"type":"integer","default":30},
            "score":{"type":"number","default":95.5},"status":{"type":"string","enum":["a","b"],"default":"b"},
            "verified":{"type":"boolean","default":true},"free":{"type":"string"}},"required":["name"]}"#;
        assert_eq!(
            elicitation_defaults(schema).as_deref(),
            Some(r#"{"age":30,"name":"John Doe","score":95.5,"status":"b","verified":true}"#)
        );
        assert_eq!(elicitation_defaults("{}").as_deref(), Some("{}"));
        assert_eq!(elicitation_defaults("[1]"), None);
    }
}
