//! What this client answers on its own: sample arguments for a tool, and responses to the input
//! requests of a multi-round-trip call.

use serde_json::{json, Map, Value};

/// Arguments for a tool the scenario gives none for: a value for every `required` property,
/// shaped by its declared `type` (or its `default`/first `enum` value when it has one).
pub fn sample_arguments(input_schema: &str) -> Vec<u8> {
    let schema: Value = serde_json::from_str(input_schema).unwrap_or(Value::Null);
    let mut args = Map::new();
    let props = schema.get("properties").and_then(Value::as_object);
    if let (Some(required), Some(props)) = (schema.get("required").and_then(Value::as_array), props)
    {
        for name in required.iter().filter_map(Value::as_str) {
            if let Some(p) = props.get(name) {
                args.insert(name.to_owned(), sample_value(p));
            }
        }
    }
    serde_json::to_vec(&Value::Object(args)).unwrap_or_else(|_| b"{}".to_vec())
}

/// A value that fits property schema `p`.
fn sample_value(p: &Value) -> Value {
    if let Some(d) = p.get("default") {
        return d.clone();
    }
    if let Some(first) = p
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    match p.get("type").and_then(Value::as_str) {
        Some("string") => json!("conformance"),
        Some("integer") => json!(1),
        Some("number") => json!(1.5),
        Some("boolean") => json!(true),
        Some("array") => json!([]),
        Some("null") => Value::Null,
        _ => json!({}),
    }
}

/// Responses to a call's input requests (`{key: {method, params}}`), keyed like the requests:
/// elicitations are accepted with every field at its default (or a value of its type),
/// sampling gets a fixed assistant text, `roots/list` gets no roots. `None` when a request is
/// malformed or of an unknown method: the call is then declined.
pub fn input_responses(requests: &str) -> Option<Vec<u8>> {
    let requests: Map<String, Value> = serde_json::from_str(requests).ok()?;
    let mut out = Map::new();
    for (key, request) in requests {
        let method = request.get("method")?.as_str()?;
        let params = request.get("params").cloned().unwrap_or(Value::Null);
        let response = match method {
            "elicitation/create" => elicitation_accept(&params),
            "sampling/createMessage" => json!({
                "role": "assistant",
                "content": {"type": "text", "text": "conformance"},
                "model": "mcp-conformance-client",
                "stopReason": "endTurn"
            }),
            "roots/list" => json!({"roots": []}),
            _ => return None,
        };
        out.insert(key, response);
    }
    serde_json::to_vec(&Value::Object(out)).ok()
}

/// The result of a legacy server's own request: an elicitation accepted with every default of
/// its requested schema (`mcp_sansio::elicitation_defaults`), the fixed sampling answer, no
/// roots. `None` (a refusal) for another method or an elicitation without a schema object.
pub fn server_request(method: &str, params: Option<&str>) -> Option<Vec<u8>> {
    let params: Value = params.map_or(Ok(Value::Null), serde_json::from_str).ok()?;
    let result = match method {
        "elicitation/create" => {
            let schema = params.get("requestedSchema")?.to_string();
            let content: Value =
                serde_json::from_str(&mcp_sansio::elicitation_defaults(&schema)?).ok()?;
            json!({"action": "accept", "content": content})
        }
        "sampling/createMessage" => json!({
            "role": "assistant",
            "content": {"type": "text", "text": "conformance"},
            "model": "mcp-conformance-client",
            "stopReason": "endTurn"
        }),
        "roots/list" => json!({"roots": []}),
        _ => return None,
    };
    serde_json::to_vec(&result).ok()
}

/// Accepts a form elicitation, filling every requested field.
fn elicitation_accept(params: &Value) -> Value {
    let mut content = Map::new();
    if let Some(props) = params
        .pointer("/requestedSchema/properties")
        .and_then(Value::as_object)
    {
        for (name, p) in props {
            content.insert(name.clone(), sample_value(p));
        }
    }
    json!({"action": "accept", "content": content})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(b: &[u8]) -> Value {
        serde_json::from_slice(b).unwrap()
    }

    #[test]
    fn required_properties_get_values_of_their_type() {
        let schema = r#"{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"integer"},
            "s":{"type":"string","default":"x"},"e":{"type":"string","enum":["p","q"]},
            "opt":{"type":"string"}},"required":["a","b","s","e"]}"#;
        let args = parse(&sample_arguments(schema));
        assert!(args["a"].is_f64());
        assert!(args["b"].is_u64());
        assert_eq!(args["s"], "x");
        assert_eq!(args["e"], "p");
        assert!(args.get("opt").is_none());
    }

    /// SEP-1034: a legacy server's `elicitation/create` is accepted with each default of its
    /// requested schema; an unknown method is refused.
    #[test]
    fn a_legacy_elicitation_is_accepted_with_its_defaults() {
        let params = r#"{"message":"m","requestedSchema":{"type":"object","properties":{
            "name":{"type":"string","default":"John Doe"},"n":{"type":"integer","default":30}}}}"#;
        let answer = parse(&server_request("elicitation/create", Some(params)).unwrap());
        assert_eq!(
            answer,
            json!({"action":"accept","content":{"name":"John Doe","n":30}})
        );
        assert_eq!(
            parse(&server_request("roots/list", None).unwrap()),
            json!({"roots": []})
        );
        assert!(server_request("tools/call", Some("{}")).is_none());
    }

    #[test]
    fn schemas_without_required_give_an_empty_object() {
        assert_eq!(parse(&sample_arguments(r#"{"type":"object"}"#)), json!({}));
        assert_eq!(parse(&sample_arguments("not json")), json!({}));
    }

    #[test]
    fn elicitations_are_accepted_with_defaults() {
        let req = r#"{"confirm":{"method":"elicitation/create","params":{"message":"ok?",
            "requestedSchema":{"type":"object","properties":{"confirmed":{"type":"boolean"},
            "name":{"type":"string","default":"John"}}}}},
            "roots":{"method":"roots/list"}}"#;
        let out = parse(&input_responses(req).unwrap());
        assert_eq!(out["confirm"]["action"], "accept");
        assert_eq!(out["confirm"]["content"]["confirmed"], true);
        assert_eq!(out["confirm"]["content"]["name"], "John");
        assert_eq!(out["roots"], json!({"roots": []}));
    }

    #[test]
    fn unknown_methods_decline() {
        assert!(input_responses(r#"{"k":{"method":"tasks/get"}}"#).is_none());
        assert!(input_responses("[]").is_none());
    }
}
