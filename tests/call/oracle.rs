// The reference reading of a `tools/call` answer, for the property test in `tests/call.rs`.
//
// Written from the rules, not from the crate: JSON-RPC 2.0 for the envelope; the MCP schema
// (2025-11-25 and 2026-07-28, `/work/shared/reference/spec.md` §4 and §5) for the result, its
// content blocks and `input_required`; and the crate's documented choices where the schema leaves
// room (`CallResult`, `docs/guarantees.md` "Decided behaviours"):
//
// - an object the client reads is read by member name, escapes decoded (`"t\u0079pe"` is
//   `type`); a member it reads may appear once, and must have the type the schema gives it or be
//   `null`, which is the same as absent; members it does not read are ignored, whatever they
//   hold (numbers beyond `f64`, lone surrogates, any depth);
// - a key that is no Unicode text (a lone surrogate escape) makes its object unreadable;
// - a content block is an object whose `type` is a string: one of the five types of the schema
//   with the members it requires (base64 in the standard alphabet, padding optional) is kept,
//   any other type is dropped as unknown, anything else is dropped as malformed; every member a
//   block may have (`text`, `data`, `mimeType`, `uri`, `name`, `resource`) is checked whatever
//   the block's type;
// - a result whose blocks are all dropped is unusable; an empty `content` is a result;
// - `input_required` needs a non-empty `inputRequests` object or a `requestState` string; an
//   empty map is the same as none (load shedding).
//
// It parses with its own JSON reader (`json_tree` of the test-support crate) and shares no code with the crate: only
// the public result types.
#![allow(dead_code)]

pub use mcp_sansio_test_support::json_tree;

use json_tree::{Json, Member, Node, Str};
use mcp_sansio::{ContentBlock, ResourceContents};

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
    /// The result was unusable: the rule it broke (see [`reason`]).
    Invalid(String),
    /// The message was not a JSON-RPC 2.0 response as read.
    Malformed,
    /// A batch.
    Batch,
    /// A response to another request, or a request from the server.
    WrongId,
    /// A JSON-RPC error (its code).
    Rpc(i64),
}

/// The reason of an unusable result that is not one of the rules named by the crate's own
/// reasons: the result does not have the shape the schema gives it (a member of the wrong type,
/// given twice, a result that is not an object, ...).
pub const SHAPE: &str = "the result does not have the schema's shape";

/// The reasons the crate gives for the rules it names; any other reason of an unusable result
/// is a parser's message about its shape, which the reference calls [`SHAPE`].
pub fn reason(crate_reason: &str) -> String {
    const NAMED: &[&str] = &[
        "unexpected resultType ",
        "every content block was dropped (",
        "input_required with neither inputRequests nor requestState",
        "inputRequests is not a JSON object",
        "requestState is not a string",
        "content is missing or not an array",
    ];
    if NAMED.iter().any(|n| crate_reason.starts_with(n)) {
        crate_reason.to_owned()
    } else {
        SHAPE.to_owned()
    }
}

/// The members of an object by name, for a reader that knows `known`: `Err` if the object
/// cannot be read (a key that is no text, or a known member given twice).
fn members<'n>(members: &'n [Member], known: &[&str]) -> Result<Vec<(&'n str, &'n Node)>, ()> {
    let mut out: Vec<(&str, &Node)> = Vec::new();
    for m in members {
        let Some(key) = m.key.0.as_deref() else {
            return Err(());
        };
        if known.contains(&key) {
            if out.iter().any(|(k, _)| *k == key) {
                return Err(());
            }
            out.push((key, &m.value));
        }
    }
    Ok(out)
}

fn get<'n>(members: &[(&str, &'n Node)], key: &str) -> Option<&'n Node> {
    members
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| *v)
        .filter(|v| !v.is_null())
}

/// A member that must be a string (or null/absent): `Err` if it is something else or no text.
fn string(members: &[(&str, &Node)], key: &str) -> Result<Option<String>, ()> {
    match get(members, key).map(|n| &n.value) {
        None => Ok(None),
        Some(Json::String(Str(Some(s)))) => Ok(Some(s.clone())),
        Some(_) => Err(()),
    }
}

/// RFC 4648 base64, standard alphabet; the padding may be left out, but if given it is
/// complete; the unused bits of the last character are zero.
pub fn base64(s: &str) -> Option<Vec<u8>> {
    let body = s.trim_end_matches('=');
    let padding = s.len() - body.len();
    if padding > 0 && (s.len() % 4 != 0 || padding > 2) {
        return None;
    }
    let mut bits = 0u32;
    let mut nbits = 0;
    let mut out = Vec::new();
    for c in body.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(v);
        nbits += 6;
        if nbits >= 8 {
            nbits -= 8;
            out.push((bits >> nbits) as u8);
            bits &= (1 << nbits) - 1;
        }
    }
    // A last group of one character is no byte; leftover bits must be zero.
    if body.len() % 4 == 1 || bits != 0 {
        return None;
    }
    Some(out)
}

/// One content block: `Some(Ok(block))` kept, `Some(Err(()))` malformed, `None` unknown type.
fn block(node: &Node) -> Option<Result<ContentBlock, ()>> {
    let Json::Object(ms) = &node.value else {
        return Some(Err(()));
    };
    const KNOWN: &[&str] = &[
        "type", "text", "data", "mimeType", "uri", "name", "resource",
    ];
    let Ok(m) = members(ms, KNOWN) else {
        return Some(Err(()));
    };
    let strings = ["type", "text", "data", "mimeType", "uri", "name"].map(|k| string(&m, k));
    if strings.iter().any(Result::is_err) {
        return Some(Err(()));
    }
    let [ty, text, data, mime_type, uri, name] = strings.map(Result::unwrap);
    let resource = match get(&m, "resource") {
        None => None,
        Some(r) => match resource(r) {
            Ok(r) => Some(r),
            Err(()) => return Some(Err(())),
        },
    };
    let Some(ty) = ty else {
        return Some(Err(()));
    };
    let kept = match ty.as_str() {
        "text" => text.map(|text| ContentBlock::Text { text }),
        "image" | "audio" => match (data.as_deref().and_then(base64), mime_type) {
            (Some(data), Some(mime_type)) if ty == "image" => {
                Some(ContentBlock::Image { data, mime_type })
            }
            (Some(data), Some(mime_type)) => Some(ContentBlock::Audio { data, mime_type }),
            _ => None,
        },
        "resource_link" => match (uri, name) {
            (Some(uri), Some(name)) => Some(ContentBlock::ResourceLink {
                uri,
                name,
                mime_type,
            }),
            _ => None,
        },
        "resource" => resource.and_then(|(uri, mime_type, contents)| {
            Some(ContentBlock::Resource {
                uri,
                mime_type,
                contents: contents?,
            })
        }),
        _ => return None,
    };
    Some(kept.ok_or(()))
}

/// An embedded resource: `Err` if malformed as a member (not an object, no `uri`, a member of
/// the wrong type); its contents `None` unless exactly one of `text` and `blob` (valid base64).
#[allow(clippy::type_complexity)]
fn resource(node: &Node) -> Result<(String, Option<String>, Option<ResourceContents>), ()> {
    let Json::Object(ms) = &node.value else {
        return Err(());
    };
    let m = members(ms, &["uri", "mimeType", "text", "blob"])?;
    let uri = string(&m, "uri")?.ok_or(())?;
    let mime_type = string(&m, "mimeType")?;
    let contents = match (string(&m, "text")?, string(&m, "blob")?) {
        (Some(t), None) => Some(ResourceContents::Text(t)),
        (None, Some(b)) => base64(&b).map(ResourceContents::Blob),
        _ => None,
    };
    Ok((uri, mime_type, contents))
}

/// The result of a `tools/call` (`input` is the whole message, for raw texts).
fn call_result(node: &Node, input: &str) -> Answer {
    let invalid = |r: &str| Answer::Invalid(r.to_owned());
    let Json::Object(ms) = &node.value else {
        return invalid(SHAPE);
    };
    const KNOWN: &[&str] = &[
        "content",
        "structuredContent",
        "isError",
        "resultType",
        "inputRequests",
        "requestState",
    ];
    let Ok(m) = members(ms, KNOWN) else {
        return invalid(SHAPE);
    };
    // Every member read has its type, whatever the result turns out to be.
    let content = match get(&m, "content") {
        None => None,
        Some(Node {
            value: Json::Array(items),
            ..
        }) => Some(items),
        Some(_) => return invalid(SHAPE),
    };
    let is_error = match get(&m, "isError").map(|n| &n.value) {
        None => false,
        Some(Json::Bool(b)) => *b,
        Some(_) => return invalid(SHAPE),
    };
    let Ok(result_type) = string(&m, "resultType") else {
        return invalid(SHAPE);
    };
    match result_type.as_deref() {
        None | Some("complete") => {}
        Some("input_required") => {
            let requests = get(&m, "inputRequests");
            let requests = match requests.map(|n| &n.value) {
                None => None,
                Some(Json::Object(ms)) if ms.is_empty() => None,
                Some(Json::Object(_)) => requests,
                Some(_) => return invalid("inputRequests is not a JSON object"),
            };
            let state = match get(&m, "requestState").map(|n| &n.value) {
                None => false,
                Some(Json::String(_)) => true,
                Some(_) => return invalid("requestState is not a string"),
            };
            return match (requests, state) {
                (Some(r), _) => Answer::InputRequired(r.text(input).to_owned()),
                (None, true) => Answer::Shed,
                (None, false) => {
                    invalid("input_required with neither inputRequests nor requestState")
                }
            };
        }
        Some(other) => {
            let mut shown = format!("{other:?}");
            if other.len() > 64 {
                shown = format!("{:?}", other.chars().take(64).collect::<String>());
            }
            return Answer::Invalid(format!("unexpected resultType {shown}"));
        }
    }
    let Some(items) = content else {
        return invalid("content is missing or not an array");
    };
    let (mut content, mut unknown, mut malformed) = (Vec::new(), 0, 0);
    for item in items {
        match block(item) {
            Some(Ok(b)) => content.push(b),
            Some(Err(())) => malformed += 1,
            None => unknown += 1,
        }
    }
    if content.is_empty() && !items.is_empty() {
        return Answer::Invalid(format!(
            "every content block was dropped ({unknown} of unknown type, {malformed} malformed)"
        ));
    }
    Answer::Complete {
        content,
        dropped: (unknown, malformed),
        // Present is kept whatever its value: `structuredContent` may be any JSON value
        // (2026-07-28 schema), and `null` is one, distinct from an absent member.
        structured: m
            .iter()
            .find(|(k, _)| *k == "structuredContent")
            .map(|(_, n)| n.text(input).to_owned()),
        is_error,
    }
}

/// The JSON-RPC 2.0 message `body`, classified: `Ok((id, result))` for a response with a
/// result, else the answer it is.
fn message(root: &Node) -> Result<(&Node, &Node), Answer> {
    let Json::Object(ms) = &root.value else {
        return Err(Answer::Malformed);
    };
    const KNOWN: &[&str] = &["jsonrpc", "id", "method", "params", "result", "error"];
    let m = members(ms, KNOWN).map_err(|()| Answer::Malformed)?;
    match m
        .iter()
        .find(|(k, _)| *k == "jsonrpc")
        .map(|(_, v)| &v.value)
    {
        Some(Json::String(Str(Some(v)))) if v == "2.0" => {}
        _ => return Err(Answer::Malformed),
    }
    let method = string(&m, "method").map_err(|()| Answer::Malformed)?;
    let id = get(&m, "id");
    let error = match get(&m, "error") {
        None => None,
        Some(e) => {
            let Json::Object(ems) = &e.value else {
                return Err(Answer::Malformed);
            };
            let em = members(ems, &["code", "message", "data"]).map_err(|()| Answer::Malformed)?;
            let code = match em.iter().find(|(k, _)| *k == "code").map(|(_, v)| &v.value) {
                Some(Json::Number(n)) => n.parse::<i64>().map_err(|_| Answer::Malformed)?,
                _ => return Err(Answer::Malformed),
            };
            string(&em, "message").map_err(|()| Answer::Malformed)?;
            Some(code)
        }
    };
    match (method, get(&m, "result"), error) {
        (Some(_), None, None) if id.is_some() => Err(Answer::WrongId),
        (None, Some(result), None) => match id {
            Some(id) => Ok((id, result)),
            None => Err(Answer::Malformed),
        },
        (None, None, Some(code)) => Err(Answer::Rpc(code)),
        _ => Err(Answer::Malformed),
    }
}

/// Whether `id` is the number `expected`.
fn is_id(id: &Node, expected: u64) -> bool {
    matches!(&id.value, Json::Number(n) if n.parse::<u64>() == Ok(expected))
}

/// The reference reading of `body`, the answer to the request `expected`.
pub fn read(body: &[u8], expected: u64) -> Answer {
    if body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
        return Answer::Batch;
    }
    let Ok(input) = std::str::from_utf8(body) else {
        return Answer::Malformed;
    };
    let Ok(root) = json_tree::parse(input) else {
        return Answer::Malformed;
    };
    // An error response without an id (`null`) is the server's error all the same.
    let (id, result) = match message(&root) {
        Ok(m) => m,
        Err(Answer::Rpc(code)) => {
            let Json::Object(ms) = &root.value else {
                unreachable!()
            };
            let m = members(ms, &["id"]).unwrap_or_default();
            return match get(&m, "id") {
                Some(id) if !is_id(id, expected) => Answer::WrongId,
                _ => Answer::Rpc(code),
            };
        }
        Err(other) => return other,
    };
    if !is_id(id, expected) {
        return Answer::WrongId;
    }
    call_result(result, input)
}

/// Whether `body` is a request or notification from the server (which an event stream carries
/// without ending the call).
pub fn from_server(body: &[u8]) -> bool {
    let Ok(input) = std::str::from_utf8(body) else {
        return false;
    };
    let Ok(root) = json_tree::parse(input) else {
        return false;
    };
    let Json::Object(ms) = &root.value else {
        return false;
    };
    let Ok(m) = members(
        ms,
        &["jsonrpc", "id", "method", "params", "result", "error"],
    ) else {
        return false;
    };
    matches!(
        m.iter().find(|(k, _)| *k == "jsonrpc").map(|(_, v)| &v.value),
        Some(Json::String(Str(Some(v)))) if v == "2.0"
    ) && matches!(string(&m, "method"), Ok(Some(_)))
        && get(&m, "result").is_none()
        && get(&m, "error").is_none()
}

/// `body` with every key of its `result` object written with an escape (the same JSON): the
/// crate's one pass leaves such a result to its serde reading. `None` if `body` is no JSON
/// object with a `result` object.
pub fn with_escaped_result_keys(body: &str) -> Option<String> {
    let root = json_tree::parse(body).ok()?;
    let Json::Object(ms) = &root.value else {
        return None;
    };
    let result = ms.iter().rfind(|m| m.key.0.as_deref() == Some("result"))?;
    let Json::Object(rms) = &result.value.value else {
        return None;
    };
    // The key's first character, escaped: keys start after their quote, right after the
    // previous value's comma or the brace, past whitespace. Found from the value backwards.
    let mut out = body.to_owned();
    let mut starts = Vec::new();
    for m in rms {
        let before = &body[..m.value.start];
        let colon = before.rfind(':')?;
        let key_end = before[..colon].rfind('"')?;
        let key_start = before[..key_end].rfind(['{', ','])?;
        let quote = key_start + before[key_start..].find('"')?;
        if quote + 1 < key_end && body.as_bytes()[quote + 1].is_ascii_alphanumeric() {
            starts.push(quote + 1);
        }
    }
    if starts.is_empty() {
        return None;
    }
    for at in starts.into_iter().rev() {
        let c = body.as_bytes()[at];
        out.replace_range(at..at + 1, &format!("\\u{:04x}", c));
    }
    Some(out)
}
