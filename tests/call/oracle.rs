// The reading of a `tools/call` answer before the one-pass decoder, kept verbatim as the oracle
// of the property test in `tests/call.rs`: serde_json splits the JSON-RPC envelope (after the
// scanner's fast path), then reads the `result` in one typed serde pass, or in two steps (raw
// blocks, then each block) where that pass is not sure. Only the plumbing is new: the crate's
// private helpers it used are restated here, and the public types come from the crate.
#![allow(dead_code, unused_imports, clippy::all)]

use std::borrow::Cow;

use mcp_sansio::{CallResult, ContentBlock, ResourceContents};

fn truncated(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_owned()
}

/// The envelope's error, as `ProtocolError` carried it.
#[derive(Debug, PartialEq)]
pub enum ProtocolError {
    Batch,
    MalformedMessage { reason: String },
}

// ---- src/jsonrpc.rs (envelope) ----
// JSON-RPC 2.0 messages: writing requests, and classifying what a server sends.
//
// Incoming messages are classified without building a `serde_json::Value` tree: `params`,
// `result`, `error.data` and `id` are kept as borrowed [`RawValue`]s, so the layer above parses
// only what it needs, once.

use serde::Deserialize;
use serde_json::value::RawValue;

/// Longest JSON-RPC error message kept.
pub const MAX_ERROR_MESSAGE: usize = 1024;
/// Longest raw JSON of an error's `data` kept.
pub const MAX_ERROR_DATA: usize = 4096;

/// A request id. This client only ever sends integer ids.
pub type RequestId = u64;

#[derive(Deserialize)]
struct Wire<'a> {
    jsonrpc: Option<&'a str>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<WireError<'a>>,
}

#[derive(Deserialize)]
struct WireError<'a> {
    code: i64,
    #[serde(borrow, default)]
    message: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    data: Option<&'a RawValue>,
}

/// The raw JSON text of one value of a message, borrowed from it, already checked to be JSON
/// (the grammar and UTF-8) by [`parse_message`]. Numbers are not evaluated: `1e400` is kept as
/// written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawJson<'a>(&'a str);

impl<'a> RawJson<'a> {
    /// The JSON text.
    pub fn get(self) -> &'a str {
        self.0
    }
}

impl<'a> From<&'a RawValue> for RawJson<'a> {
    fn from(raw: &'a RawValue) -> Self {
        RawJson(raw.get())
    }
}

/// A JSON-RPC error object, borrowed from the message.
#[derive(Debug)]
pub struct ErrorObject<'a> {
    /// The error code.
    pub code: i64,
    /// The message, if any.
    pub message: std::borrow::Cow<'a, str>,
    /// The raw `data`, if any.
    pub data: Option<&'a RawValue>,
}

/// One message from the server, classified.
#[derive(Debug)]
pub enum Message<'a> {
    /// A response carrying a result.
    Result {
        /// The raw id.
        id: &'a RawValue,
        /// The raw result.
        result: RawJson<'a>,
    },
    /// A response carrying an error. The id may be absent (`null`) when the server could not read
    /// the request.
    Error {
        /// The raw id, if not null/absent.
        id: Option<&'a RawValue>,
        /// The error object.
        error: ErrorObject<'a>,
    },
    /// A notification.
    Notification {
        /// The method.
        method: std::borrow::Cow<'a, str>,
        /// The raw params, if any.
        params: Option<&'a RawValue>,
    },
    /// A request from the server.
    Request {
        /// The raw id.
        id: &'a RawValue,
        /// The method.
        method: std::borrow::Cow<'a, str>,
    },
}

fn is_null(v: &RawValue) -> bool {
    v.get().trim() == "null"
}

/// Classifies one JSON-RPC message. A batch, a message that is not JSON-RPC 2.0, or one with both
/// `result` and `error` is a [`ProtocolError`].
///
/// The usual response (a result, plain keys, each member once) is read in one pass of the JSON
/// scanner, which checks the `result` without evaluating it; anything else is read by serde_json,
/// which decides and gives the reason.
pub fn parse_message(bytes: &[u8]) -> Result<Message<'_>, ProtocolError> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'[') {
        return Err(ProtocolError::Batch);
    }
    let wire: Wire<'_> =
        serde_json::from_slice(bytes).map_err(|e| ProtocolError::MalformedMessage {
            reason: truncated(&e.to_string(), 256),
        })?;
    let malformed = |reason: &str| ProtocolError::MalformedMessage {
        reason: reason.to_owned(),
    };
    if wire.jsonrpc != Some("2.0") {
        return Err(malformed("missing or wrong \"jsonrpc\" member"));
    }
    let id = wire.id.filter(|v| !is_null(v));
    match (wire.method, wire.result, wire.error) {
        (Some(method), None, None) => Ok(match id {
            Some(id) => Message::Request { id, method },
            None => Message::Notification {
                method,
                params: wire.params,
            },
        }),
        (None, Some(result), None) => match id {
            Some(id) => Ok(Message::Result {
                id,
                result: result.into(),
            }),
            None => Err(malformed("a result without an id")),
        },
        (None, None, Some(e)) => Ok(Message::Error {
            id,
            error: ErrorObject {
                code: e.code,
                message: e.message.unwrap_or_default(),
                data: e.data,
            },
        }),
        (None, Some(_), Some(_)) => Err(malformed("both \"result\" and \"error\"")),
        (Some(_), _, _) => Err(malformed("both \"method\" and a response member")),
        (None, None, None) => Err(malformed(
            "neither a request, a notification nor a response",
        )),
    }
}

// ---- src/call.rs (result) ----
// `tools/call`: arguments and results.

/// What a `tools/call` answer asks for.
#[derive(Debug)]
pub enum CallAnswer {
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
    serde_json::from_str::<std::collections::BTreeMap<&str, serde::de::IgnoredAny>>(raw.get())
        .is_ok_and(|m| m.is_empty())
}

/// The content blocks of a result, read in one typed pass (see [`fast`]).
struct Blocks {
    content: Vec<ContentBlock>,
    dropped_unknown: usize,
    dropped_invalid: usize,
    total: usize,
}

#[derive(Deserialize)]
struct FastCallWire<'a> {
    #[serde(default)]
    content: Option<fast::FastBlocks>,
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

/// Parses a `tools/call` result. The blocks are read in one typed pass; whatever that pass is
/// not certain to read exactly as [`BlockWire`] would (it then fails) is read again the
/// two-step way, which decides.
pub fn parse_call_result(result: RawJson<'_>) -> Result<CallAnswer, String> {
    if let Ok(wire) = serde_json::from_str::<FastCallWire<'_>>(result.get()) {
        let blocks = wire.content.map(|b| b.0);
        return answer(
            wire.result_type,
            wire.input_requests,
            wire.request_state,
            wire.structured_content,
            wire.is_error,
            blocks,
        );
    }
    parse_call_result_two_step(result)
}

/// Reads the result into raw blocks, then each block into [`BlockWire`].
fn parse_call_result_two_step(result: RawJson<'_>) -> Result<CallAnswer, String> {
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

/// The one-pass reading of content blocks. It reads a block to the same [`BlockWire`] serde's
/// derived reading would, or marks it malformed where that reading fails; where it cannot be
/// sure (a block or resource written as an array, a string serde_json refuses to decode, a
/// number beyond 64 bits) it fails the whole pass, and the caller reads the result the
/// two-step way.
mod fast {
    use core::fmt;

    use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
    use serde::Deserialize;

    use super::{block_of, Block, BlockWire, Blocks, ResourceWire};

    /// `content`, read in one pass.
    pub struct FastBlocks(pub Blocks);

    impl<'de> Deserialize<'de> for FastBlocks {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = FastBlocks;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("an array of content blocks")
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<FastBlocks, A::Error> {
                    let mut b = Blocks {
                        content: Vec::new(),
                        dropped_unknown: 0,
                        dropped_invalid: 0,
                        total: 0,
                    };
                    while let Some(FastBlock(block)) = seq.next_element()? {
                        b.total += 1;
                        match block {
                            Block::Ok(c) => b.content.push(c),
                            Block::Unknown => b.dropped_unknown += 1,
                            Block::Invalid => b.dropped_invalid += 1,
                        }
                    }
                    Ok(FastBlocks(b))
                }
            }
            d.deserialize_seq(V)
        }
    }

    /// A string field: absent or `null` (`None`), a string, or any other value (malformed).
    enum Str {
        Null,
        Val(String),
        Bad,
    }

    /// Consumes the rest of a map or array and calls it malformed.
    fn drain_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(())
    }

    fn drain_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }

    impl<'de> Deserialize<'de> for Str {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Str;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a string or null")
                }
                fn visit_str<E: de::Error>(self, v: &str) -> Result<Str, E> {
                    Ok(Str::Val(v.to_owned()))
                }
                fn visit_string<E: de::Error>(self, v: String) -> Result<Str, E> {
                    Ok(Str::Val(v))
                }
                fn visit_unit<E: de::Error>(self) -> Result<Str, E> {
                    Ok(Str::Null)
                }
                fn visit_none<E: de::Error>(self) -> Result<Str, E> {
                    Ok(Str::Null)
                }
                fn visit_bool<E: de::Error>(self, _: bool) -> Result<Str, E> {
                    Ok(Str::Bad)
                }
                fn visit_i64<E: de::Error>(self, _: i64) -> Result<Str, E> {
                    Ok(Str::Bad)
                }
                fn visit_u64<E: de::Error>(self, _: u64) -> Result<Str, E> {
                    Ok(Str::Bad)
                }
                fn visit_f64<E: de::Error>(self, _: f64) -> Result<Str, E> {
                    Ok(Str::Bad)
                }
                fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Str, A::Error> {
                    drain_seq(seq).map(|()| Str::Bad)
                }
                fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Str, A::Error> {
                    drain_map(map).map(|()| Str::Bad)
                }
            }
            d.deserialize_any(V)
        }
    }

    /// Sets `slot` from a string field; `false` if the field is repeated or not a string/null.
    fn set(slot: &mut Option<Option<String>>, value: Str) -> bool {
        if slot.is_some() {
            return false;
        }
        match value {
            Str::Null => *slot = Some(None),
            Str::Val(v) => *slot = Some(Some(v)),
            Str::Bad => return false,
        }
        true
    }

    fn unsure<E: de::Error>() -> E {
        E::custom("read the two-step way")
    }

    /// `resource`: absent or `null`, a valid resource, or malformed.
    enum Res {
        Null,
        Val(ResourceWire),
        Bad,
    }

    impl<'de> Deserialize<'de> for Res {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Res;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a resource")
                }
                fn visit_str<E: de::Error>(self, _: &str) -> Result<Res, E> {
                    Ok(Res::Bad)
                }
                fn visit_unit<E: de::Error>(self) -> Result<Res, E> {
                    Ok(Res::Null)
                }
                fn visit_none<E: de::Error>(self) -> Result<Res, E> {
                    Ok(Res::Null)
                }
                fn visit_bool<E: de::Error>(self, _: bool) -> Result<Res, E> {
                    Ok(Res::Bad)
                }
                fn visit_i64<E: de::Error>(self, _: i64) -> Result<Res, E> {
                    Ok(Res::Bad)
                }
                fn visit_u64<E: de::Error>(self, _: u64) -> Result<Res, E> {
                    Ok(Res::Bad)
                }
                fn visit_f64<E: de::Error>(self, _: f64) -> Result<Res, E> {
                    Ok(Res::Bad)
                }
                fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Res, A::Error> {
                    Err(unsure())
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Res, A::Error> {
                    let (mut uri, mut mime_type, mut text, mut blob) = (None, None, None, None);
                    let mut ok = true;
                    while let Some(key) = map.next_key::<String>()? {
                        let slot = match key.as_str() {
                            "uri" => &mut uri,
                            "mimeType" => &mut mime_type,
                            "text" => &mut text,
                            "blob" => &mut blob,
                            _ => {
                                map.next_value::<IgnoredAny>()?;
                                continue;
                            }
                        };
                        let value = map.next_value::<Str>()?;
                        if ok {
                            ok = set(slot, value);
                        }
                    }
                    // `uri` is required and may not be null.
                    let uri = match uri {
                        Some(Some(u)) if ok => u,
                        _ => return Ok(Res::Bad),
                    };
                    Ok(Res::Val(ResourceWire {
                        uri,
                        mime_type: mime_type.flatten(),
                        text: text.flatten(),
                        blob: blob.flatten(),
                    }))
                }
            }
            d.deserialize_any(V)
        }
    }

    /// One content block, read in one pass.
    struct FastBlock(Block);

    impl<'de> Deserialize<'de> for FastBlock {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = FastBlock;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a content block")
                }
                fn visit_str<E: de::Error>(self, _: &str) -> Result<FastBlock, E> {
                    Ok(FastBlock(Block::Invalid))
                }
                fn visit_unit<E: de::Error>(self) -> Result<FastBlock, E> {
                    Ok(FastBlock(Block::Invalid))
                }
                fn visit_bool<E: de::Error>(self, _: bool) -> Result<FastBlock, E> {
                    Ok(FastBlock(Block::Invalid))
                }
                fn visit_i64<E: de::Error>(self, _: i64) -> Result<FastBlock, E> {
                    Ok(FastBlock(Block::Invalid))
                }
                fn visit_u64<E: de::Error>(self, _: u64) -> Result<FastBlock, E> {
                    Ok(FastBlock(Block::Invalid))
                }
                fn visit_f64<E: de::Error>(self, _: f64) -> Result<FastBlock, E> {
                    Ok(FastBlock(Block::Invalid))
                }
                fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<FastBlock, A::Error> {
                    Err(unsure())
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FastBlock, A::Error> {
                    let mut ty = None;
                    let (mut text, mut data, mut mime_type, mut uri, mut name) =
                        (None, None, None, None, None);
                    let mut resource: Option<Option<ResourceWire>> = None;
                    let mut ok = true;
                    while let Some(key) = map.next_key::<String>()? {
                        let slot = match key.as_str() {
                            "type" => &mut ty,
                            "text" => &mut text,
                            "data" => &mut data,
                            "mimeType" => &mut mime_type,
                            "uri" => &mut uri,
                            "name" => &mut name,
                            "resource" => {
                                let value = map.next_value::<Res>()?;
                                if ok && resource.is_none() {
                                    match value {
                                        Res::Null => resource = Some(None),
                                        Res::Val(r) => resource = Some(Some(r)),
                                        Res::Bad => ok = false,
                                    }
                                } else {
                                    ok = false;
                                }
                                continue;
                            }
                            _ => {
                                map.next_value::<IgnoredAny>()?;
                                continue;
                            }
                        };
                        let value = map.next_value::<Str>()?;
                        if ok {
                            ok = set(slot, value);
                        }
                    }
                    // `type` is required and may not be null.
                    let ty = match ty {
                        Some(Some(t)) if ok => t,
                        _ => return Ok(FastBlock(Block::Invalid)),
                    };
                    Ok(FastBlock(block_of(BlockWire {
                        ty,
                        text: text.flatten(),
                        data: data.flatten(),
                        mime_type: mime_type.flatten(),
                        uri: uri.flatten(),
                        name: name.flatten(),
                        resource: resource.flatten(),
                    })))
                }
            }
            d.deserialize_any(V)
        }
    }
}

// ---- the plumbing: what a `Connection` made of the answer, as the serde reading decides ----

/// What an answer to a `tools/call` came to.
#[derive(Debug, PartialEq)]
pub enum Answer {
    /// The call finished: blocks, dropped (unknown, malformed), structured content, `isError`.
    Complete {
        content: Vec<ContentBlock>,
        dropped: (usize, usize),
        structured: Option<String>,
        is_error: bool,
    },
    /// `input_required` with input requests (their raw JSON).
    InputRequired(String),
    /// `input_required` with only a state: the call is retried (load shedding).
    Shed,
    /// The result was unusable (its reason, as the connection truncates it).
    Invalid(String),
    /// The message was not JSON-RPC as read (its reason).
    Malformed(String),
    /// A batch.
    Batch,
    /// A response to another request, or a request from the server.
    WrongId,
    /// A JSON-RPC error (its code).
    Rpc(i64),
}

/// The serde reading of `body`, the answer to the request `expected`.
pub fn read(body: &[u8], expected: u64) -> Answer {
    let id_is = |raw: &RawValue| raw.get().trim().parse::<u64>().ok() == Some(expected);
    let message = match parse_message(body) {
        Ok(m) => m,
        Err(ProtocolError::Batch) => return Answer::Batch,
        Err(ProtocolError::MalformedMessage { reason }) => return Answer::Malformed(reason),
    };
    match message {
        Message::Request { .. } => Answer::WrongId,
        Message::Result { id, .. } | Message::Error { id: Some(id), .. } if !id_is(id) => {
            Answer::WrongId
        }
        Message::Error { error, .. } => Answer::Rpc(error.code),
        Message::Notification { .. } => {
            Answer::Malformed("a notification where a response was expected".into())
        }
        Message::Result { result, .. } => match parse_call_result(result) {
            Ok(CallAnswer::Complete(r)) => Answer::Complete {
                content: r.content,
                dropped: (r.dropped_unknown, r.dropped_invalid),
                structured: r.structured_content.map(|s| s.get().to_owned()),
                is_error: r.is_error,
            },
            Ok(CallAnswer::InputRequired { requests, .. }) => match requests {
                Some(r) => Answer::InputRequired(r.get().to_owned()),
                None => Answer::Shed,
            },
            Err(reason) => Answer::Invalid(truncated(&reason, 512)),
        },
    }
}

/// Whether `body` is a request or notification from the server (which an event stream carries
/// without ending the call).
pub fn from_server(body: &[u8]) -> bool {
    matches!(
        parse_message(body),
        Ok(Message::Request { .. } | Message::Notification { .. })
    )
}
