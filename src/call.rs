//! `tools/call`: arguments and results.

use serde::Deserialize;
use serde_json::value::RawValue;

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
}

/// Parses a `tools/call` result.
pub(crate) fn parse_call_result(result: &RawValue) -> Result<CallResult, String> {
    let wire: CallWire<'_> = serde_json::from_str(result.get()).map_err(|e| e.to_string())?;
    match wire.result_type {
        None | Some("complete") => {}
        Some("input_required") => {
            return Err("an input_required result this client cannot fulfil".into())
        }
        Some(other) => {
            return Err(format!(
                "unexpected resultType {:?}",
                crate::error::truncated(other, 64)
            ))
        }
    }
    let content = wire.content.ok_or("content is missing")?;
    if !content.get().starts_with('[') {
        return Err("content is not an array".into());
    }
    Ok(CallResult {
        content: content.to_owned(),
        structured_content: wire
            .structured_content
            .filter(|v| v.get() != "null")
            .map(|v| v.to_owned()),
        is_error: wire.is_error.unwrap_or(false),
    })
}

/// Checks that caller-supplied arguments are one JSON object; empty arguments mean `{}`.
pub(crate) fn check_arguments(arguments: &[u8]) -> Result<&[u8], String> {
    if arguments.iter().all(u8::is_ascii_whitespace) {
        return Ok(b"{}");
    }
    let raw: &RawValue = serde_json::from_slice(arguments)
        .map_err(|e| crate::error::truncated(&e.to_string(), 200))?;
    if !raw.get().starts_with('{') {
        return Err("not a JSON object".into());
    }
    Ok(raw.get().as_bytes())
}
