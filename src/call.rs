//! `tools/call`: arguments and results.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::error::truncated;

/// The result of a tool call. A tool that ran and failed on its own terms is a result with
/// `is_error` set, not an error.
#[derive(Clone, Debug)]
pub struct CallResult {
    /// The raw JSON array of content blocks.
    pub content: Box<RawValue>,
    /// The raw JSON of `structuredContent`, if any.
    pub structured_content: Option<Box<RawValue>>,
    /// Whether the tool reported an error.
    pub is_error: bool,
}

/// What a `tools/call` answer asks for.
#[derive(Debug)]
pub(crate) enum CallAnswer {
    /// The call finished.
    Complete(CallResult),
    /// The server needs more before it can finish (a multi round-trip request).
    InputRequired {
        /// The raw `inputRequests` object, if present and not empty.
        requests: Option<Box<RawValue>>,
        /// The raw JSON string literal of `requestState`, echoed byte for byte.
        state: Option<Box<RawValue>>,
    },
}

#[derive(Deserialize)]
struct CallWire<'a> {
    #[serde(default, borrow)]
    content: Option<&'a RawValue>,
    #[serde(rename = "structuredContent", default, borrow)]
    structured_content: Option<&'a RawValue>,
    #[serde(rename = "isError", default)]
    is_error: Option<bool>,
    #[serde(rename = "resultType", default, borrow)]
    result_type: Option<&'a str>,
    #[serde(rename = "inputRequests", default, borrow)]
    input_requests: Option<&'a RawValue>,
    #[serde(rename = "requestState", default, borrow)]
    request_state: Option<&'a RawValue>,
}

fn not_null(raw: Option<&RawValue>) -> Option<&RawValue> {
    raw.filter(|r| r.get() != "null")
}

fn is_empty_object(raw: &RawValue) -> bool {
    serde_json::from_str::<std::collections::BTreeMap<&str, serde::de::IgnoredAny>>(raw.get())
        .is_ok_and(|m| m.is_empty())
}

/// Parses a `tools/call` result.
pub(crate) fn parse_call_result(result: &RawValue) -> Result<CallAnswer, String> {
    let wire: CallWire<'_> = serde_json::from_str(result.get()).map_err(|e| e.to_string())?;
    match wire.result_type {
        None | Some("complete") => {}
        Some("input_required") => {
            let requests = not_null(wire.input_requests);
            if requests.is_some_and(|r| !r.get().starts_with('{')) {
                return Err("inputRequests is not a JSON object".into());
            }
            let state = not_null(wire.request_state);
            if state.is_some_and(|s| !s.get().starts_with('"')) {
                return Err("requestState is not a string".into());
            }
            // An empty map asks for nothing: like an absent one (load shedding).
            let requests = requests.filter(|r| !is_empty_object(r));
            if requests.is_none() && state.is_none() {
                return Err("input_required with neither inputRequests nor requestState".into());
            }
            return Ok(CallAnswer::InputRequired {
                requests: requests.map(|r| r.to_owned()),
                state: state.map(|s| s.to_owned()),
            });
        }
        Some(other) => return Err(format!("unexpected resultType {:?}", truncated(other, 64))),
    }
    let content = wire.content.ok_or("content is missing")?;
    if !content.get().starts_with('[') {
        return Err("content is not an array".into());
    }
    Ok(CallAnswer::Complete(CallResult {
        content: content.to_owned(),
        structured_content: not_null(wire.structured_content).map(|v| v.to_owned()),
        is_error: wire.is_error.unwrap_or(false),
    }))
}

/// Checks that caller-supplied JSON is one object; empty input means `{}`.
pub(crate) fn check_arguments(arguments: &[u8]) -> Result<&[u8], String> {
    if arguments.iter().all(u8::is_ascii_whitespace) {
        return Ok(b"{}");
    }
    let raw: &RawValue =
        serde_json::from_slice(arguments).map_err(|e| truncated(&e.to_string(), 200))?;
    if !raw.get().starts_with('{') {
        return Err("not a JSON object".into());
    }
    Ok(raw.get().as_bytes())
}
