//! `tools/call`: arguments and results.
use crate::prelude::*;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::error::truncated;

pub(crate) mod pass;

/// One content block of a tool result.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContentBlock {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-decoded.
    Image {
        /// The image bytes.
        data: Vec<u8>,
        /// Its media type.
        mime_type: String,
    },
    /// Audio, base64-decoded.
    Audio {
        /// The audio bytes.
        data: Vec<u8>,
        /// Its media type.
        mime_type: String,
    },
    /// An embedded resource.
    Resource {
        /// Its URI.
        uri: String,
        /// Its media type, if given.
        mime_type: Option<String>,
        /// Its contents.
        contents: ResourceContents,
    },
    /// A link to a resource.
    ResourceLink {
        /// Its URI.
        uri: String,
        /// Its name.
        name: String,
        /// Its media type, if given.
        mime_type: Option<String>,
    },
}

/// The contents of an embedded resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResourceContents {
    /// Text contents.
    Text(String),
    /// Binary contents, base64-decoded.
    Blob(Vec<u8>),
}

/// The result of a tool call. A tool that ran and failed on its own terms is a result with
/// `is_error` set, not an error.
#[derive(Clone, Debug)]
pub struct CallResult {
    /// The usable content blocks, in server order.
    pub content: Vec<ContentBlock>,
    /// Blocks of other types (`tool_use`, `tool_result`, unknown) that were dropped.
    pub dropped_unknown: usize,
    /// Blocks dropped because they were malformed (invalid base64, missing fields).
    pub dropped_invalid: usize,
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
struct BlockWire {
    #[serde(rename = "type")]
    ty: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    data: Option<String>,
    #[serde(rename = "mimeType", default)]
    mime_type: Option<String>,
    #[serde(default)]
    uri: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    resource: Option<ResourceWire>,
}

#[derive(Deserialize)]
struct ResourceWire {
    uri: String,
    #[serde(rename = "mimeType", default)]
    mime_type: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    blob: Option<String>,
}

/// Base64 as servers send it: the standard alphabet, padding optional.
const BASE64: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    base64::engine::GeneralPurposeConfig::new()
        .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
);

enum Block {
    Ok(ContentBlock),
    Unknown,
    Invalid,
}

fn decode_b64(s: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    BASE64.decode(s.as_bytes()).ok()
}

fn parse_block(raw: &RawValue) -> Block {
    let Ok(w) = serde_json::from_str::<BlockWire>(raw.get()) else {
        return Block::Invalid;
    };
    block_of(w)
}

fn block_of(w: BlockWire) -> Block {
    let block = match w.ty.as_str() {
        "text" => w.text.map(|text| ContentBlock::Text { text }),
        "image" | "audio" => match (w.data.as_deref().and_then(decode_b64), w.mime_type) {
            (Some(data), Some(mime_type)) if w.ty == "image" => {
                Some(ContentBlock::Image { data, mime_type })
            }
            (Some(data), Some(mime_type)) => Some(ContentBlock::Audio { data, mime_type }),
            _ => None,
        },
        "resource_link" => match (w.uri, w.name) {
            (Some(uri), Some(name)) => Some(ContentBlock::ResourceLink {
                uri,
                name,
                mime_type: w.mime_type,
            }),
            _ => None,
        },
        "resource" => w.resource.and_then(|r| {
            let contents = match (r.text, r.blob) {
                (Some(t), None) => ResourceContents::Text(t),
                (None, Some(b)) => ResourceContents::Blob(decode_b64(&b)?),
                _ => return None,
            };
            Some(ContentBlock::Resource {
                uri: r.uri,
                mime_type: r.mime_type,
                contents,
            })
        }),
        _ => return Block::Unknown,
    };
    block.map_or(Block::Invalid, Block::Ok)
}

#[derive(Deserialize)]
struct CallWire<'a> {
    #[serde(default, borrow)]
    content: Option<Vec<&'a RawValue>>,
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
    serde_json::from_str::<alloc::collections::BTreeMap<&str, serde::de::IgnoredAny>>(raw.get())
        .is_ok_and(|m| m.is_empty())
}

/// The content blocks of a result, as read.
struct Blocks {
    content: Vec<ContentBlock>,
    dropped_unknown: usize,
    dropped_invalid: usize,
    total: usize,
}

/// Parses a `tools/call` result the checking way: serde reads the result into raw blocks, then
/// each block into [`BlockWire`]. The decision whenever the one pass ([`pass::read`]) is not sure,
/// and the reference it follows.
pub(crate) fn parse_call_result(result: crate::jsonrpc::RawJson<'_>) -> Result<CallAnswer, String> {
    parse_call_result_two_step(result)
}

/// Reads the result into raw blocks, then each block into [`BlockWire`].
fn parse_call_result_two_step(result: crate::jsonrpc::RawJson<'_>) -> Result<CallAnswer, String> {
    let wire: CallWire<'_> = serde_json::from_str(result.get()).map_err(|e| e.to_string())?;
    let blocks = wire.content.map(|raw_blocks| {
        let mut b = Blocks {
            content: Vec::new(),
            dropped_unknown: 0,
            dropped_invalid: 0,
            total: raw_blocks.len(),
        };
        for raw in &raw_blocks {
            match parse_block(raw) {
                Block::Ok(c) => b.content.push(c),
                Block::Unknown => b.dropped_unknown += 1,
                Block::Invalid => b.dropped_invalid += 1,
            }
        }
        b
    });
    answer(
        wire.result_type,
        wire.input_requests,
        wire.request_state,
        wire.structured_content,
        wire.is_error,
        blocks,
    )
}

fn answer(
    result_type: Option<&str>,
    input_requests: Option<&RawValue>,
    request_state: Option<&RawValue>,
    structured_content: Option<&RawValue>,
    is_error: Option<bool>,
    blocks: Option<Blocks>,
) -> Result<CallAnswer, String> {
    match result_type {
        None | Some("complete") => {}
        Some("input_required") => {
            let requests = not_null(input_requests);
            if requests.is_some_and(|r| !r.get().starts_with('{')) {
                return Err("inputRequests is not a JSON object".into());
            }
            let state = not_null(request_state);
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
    let Blocks {
        content,
        dropped_unknown,
        dropped_invalid,
        total,
    } = blocks.ok_or("content is missing or not an array")?;
    if content.is_empty() && total > 0 {
        return Err(format!(
            "every content block was dropped ({dropped_unknown} of unknown type, {dropped_invalid} malformed)"
        ));
    }
    Ok(CallAnswer::Complete(CallResult {
        content,
        dropped_unknown,
        dropped_invalid,
        structured_content: not_null(structured_content).map(|v| v.to_owned()),
        is_error: is_error.unwrap_or(false),
    }))
}

/// Checks that caller-supplied JSON is one object (any number spelling, even beyond `f64`);
/// empty input means `{}`. Returns the object's bytes without surrounding whitespace.
pub(crate) fn check_arguments(arguments: &[u8]) -> Result<&[u8], String> {
    use serde::Deserialize as _;
    let start = arguments.iter().position(|b| !b.is_ascii_whitespace());
    let end = arguments.iter().rposition(|b| !b.is_ascii_whitespace());
    let (Some(start), Some(end)) = (start, end) else {
        return Ok(b"{}");
    };
    let trimmed = &arguments[start..=end];
    if trimmed.first() != Some(&b'{') {
        return Err("not a JSON object".into());
    }
    let mut de = serde_json::Deserializer::from_slice(trimmed);
    serde::de::IgnoredAny::deserialize(&mut de)
        .and_then(|_| de.end())
        .map_err(|e| truncated(&e.to_string(), 200))?;
    Ok(trimmed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the one pass is sure of `result`, asserting that it then reads it as the
    /// two-step reading does.
    fn same(result: &str) -> bool {
        let raw: Box<RawValue> = serde_json::from_str(result).expect("valid JSON");
        let two = format!("{:?}", parse_call_result_two_step((&*raw).into()));
        match pass::read(raw.get()) {
            Ok(one) => {
                assert_eq!(format!("{one:?}"), two, "{result}");
                true
            }
            Err(pass::Unsure) => false,
        }
    }

    fn with_block(block: &str) -> String {
        format!(r#"{{"content":[{{"type":"text","text":"ok"}},{block}]}}"#)
    }

    #[test]
    fn one_pass_reads_blocks_as_the_two_step_reading() {
        let sure = [
            r#"{"type":"text","text":"hi","extra":{"a":[1,2]}}"#,
            r#"{"type":"text","text":null}"#,
            r#"{"type":null,"text":"x"}"#,
            r#"{"type":7,"text":"x"}"#,
            r#"{"text":"no type"}"#,
            r#"{"type":"text","text":"a","text":"b"}"#,
            r#"{"type":"text","type":"text","text":"a"}"#,
            r#"{"type":"text","text":{"nested":"object"}}"#,
            r#"{"type":"text","text":["array"]}"#,
            r#"{"type":"text","text":true}"#,
            r#"{"type":"text","text":1.5}"#,
            r#"{"type":"text","text":"esc\n\u00e9\ud83d\ude00"}"#,
            r#"{"type":"image","data":"aGk=","mimeType":"image/png"}"#,
            r#"{"type":"image","data":"aGk","mimeType":"image/png"}"#,
            r#"{"type":"image","data":"!!","mimeType":"image/png"}"#,
            r#"{"type":"audio","data":"aGk=","mimeType":null}"#,
            r#"{"type":"resource_link","uri":"u","name":"n","mimeType":"m"}"#,
            r#"{"type":"resource_link","uri":"u"}"#,
            r#"{"type":"resource","resource":{"uri":"u","text":"t"}}"#,
            r#"{"type":"resource","resource":{"uri":"u","blob":"aGk="}}"#,
            r#"{"type":"resource","resource":{"uri":"u","text":"t","blob":"aGk="}}"#,
            r#"{"type":"resource","resource":{"uri":null,"text":"t"}}"#,
            r#"{"type":"resource","resource":{"text":"t"}}"#,
            r#"{"type":"resource","resource":{"uri":"u","uri":"v","text":"t"}}"#,
            r#"{"type":"resource","resource":{"uri":"u","text":5}}"#,
            r#"{"type":"resource","resource":"u"}"#,
            r#"{"type":"resource","resource":null}"#,
            r#"{"type":"resource","resource":{"uri":"u"},"resource":{"uri":"u"}}"#,
            r#"{"type":"tool_use","id":"x"}"#,
            r#"{"type":"mystery"}"#,
            r#""a string""#,
            "null",
            "42",
            "-1",
            "1e10",
            "{}",
        ];
        for block in sure {
            assert!(same(&with_block(block)), "read in one pass: {block}");
        }
        // Where the one pass is not sure, the two-step reading decides.
        let unsure = [
            r#"{"type":"text","text":"lone \ud800 surrogate"}"#,
            r#"{"t\u0079pe":"text","te\u0078t":"escaped keys"}"#,
            r#"["text","positional"]"#,
            "[]",
            r#"{"type":"resource","resource":["u",null,"t"]}"#,
        ];
        for block in unsure {
            assert!(!same(&with_block(block)), "read in two steps: {block}");
        }
    }

    #[test]
    fn one_pass_reads_results_as_the_two_step_reading() {
        for result in [
            r#"{"content":[]}"#,
            r#"{"content":null}"#,
            r#"{}"#,
            r#"{"content":[{"type":"mystery"}]}"#,
            r#"{"content":[{"type":"text"}],"isError":true}"#,
            r#"{"content":[{"type":"text","text":"a"}],"structuredContent":{"k":1}}"#,
            r#"{"content":[{"type":"text","text":"a"}],"structuredContent":null}"#,
            r#"{"resultType":"other","content":[]}"#,
            r#"{"resultType":"complete","content":[{"type":"text","text":"a"}],"_meta":{"n":1e400}}"#,
            r#" { "content" : [ { "type" : "text" , "text" : "a\tb\"" } ] , "isError" : null } "#,
        ] {
            assert!(same(result), "{result}");
        }
        // `input_required`, and whatever serde refuses at the result's level, are left to it.
        for result in [
            r#"{"resultType":"input_required","inputRequests":{"a":{}},"content":[{"type":"x"}]}"#,
            r#"{"resultType":"input_required","requestState":"s"}"#,
            r#"{"resultType":"input_required","inputRequests":{}}"#,
            r#"{"resultType":"compl\u0065te","content":[]}"#,
            r#"{"content":[],"inputRequests":{},"inputRequests":{}}"#,
            r#"["positional"]"#,
            r#"{"content":"not an array"}"#,
            r#"{"content":[],"content":[]}"#,
            r#"{"content":[],"isError":"yes"}"#,
        ] {
            assert!(!same(result), "{result}");
        }
    }
}
