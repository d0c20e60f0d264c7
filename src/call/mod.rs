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
    /// The raw JSON of `structuredContent`, kept byte for byte whenever the member is present:
    /// `null` included, which is a value distinct from an absent member (in 2026-07-28
    /// `structuredContent` may be any JSON value). `None` only when the result has no such member.
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

/// Why a `tools/call` answer gives no [`CallAnswer`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum AnswerError {
    /// The answer is not a usable result: the reason.
    Invalid(String),
    /// Its result keeps more content blocks than the limit it was read with
    /// ([`crate::Budget::ContentBlocks`]).
    TooManyBlocks,
}

impl From<String> for AnswerError {
    fn from(reason: String) -> Self {
        AnswerError::Invalid(reason)
    }
}

impl From<&str> for AnswerError {
    fn from(reason: &str) -> Self {
        AnswerError::Invalid(reason.into())
    }
}

/// What reading a `tools/call` answer gives.
pub(crate) type Answer = Result<CallAnswer, AnswerError>;

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
    #[serde(default, deserialize_with = "object")]
    resource: Option<ResourceWire>,
}

/// An optional member that must be a JSON object: serde's derived reading of a struct would
/// also take an array, its members by position, which no MCP schema allows.
fn object<'de, D: serde::Deserializer<'de>, T: serde::de::DeserializeOwned>(
    deserializer: D,
) -> Result<Option<T>, D::Error> {
    use serde::de::Error as _;
    match Option::<Box<RawValue>>::deserialize(deserializer)? {
        None => Ok(None),
        Some(raw) if raw.get().starts_with('{') => serde_json::from_str(raw.get())
            .map(Some)
            .map_err(D::Error::custom),
        Some(_) => Err(D::Error::custom("not a JSON object")),
    }
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
    // A block is a JSON object, never read by position from an array.
    if !raw.get().starts_with('{') {
        return Block::Invalid;
    }
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
    content: Option<Elements<'a>>,
    /// Present (even `null`) or absent: `Option`'s own reading would take `null` for absent.
    #[serde(
        rename = "structuredContent",
        default,
        borrow,
        deserialize_with = "present"
    )]
    structured_content: Option<&'a RawValue>,
    #[serde(rename = "isError", default)]
    is_error: Option<bool>,
    /// Borrowed unless written with escapes (`"compl\u0065te"` is `complete` too).
    #[serde(rename = "resultType", default, borrow)]
    result_type: Option<alloc::borrow::Cow<'a, str>>,
    #[serde(rename = "inputRequests", default, borrow)]
    input_requests: Option<&'a RawValue>,
    #[serde(rename = "requestState", default, borrow)]
    request_state: Option<&'a RawValue>,
}

/// A member that is present, whatever its value (`null` included).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
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
    /// More blocks were usable than the result may keep: the others were not read.
    over: bool,
}

impl Blocks {
    fn new() -> Self {
        Blocks {
            content: Vec::new(),
            dropped_unknown: 0,
            dropped_invalid: 0,
            total: 0,
            over: false,
        }
    }

    /// Counts `block`, keeping it if usable; `false` once it is a usable block beyond the
    /// first `max_blocks` (it is not kept, and the result will be refused).
    fn add(&mut self, block: Block, max_blocks: usize) -> bool {
        self.total += 1;
        match block {
            Block::Ok(_) if self.content.len() >= max_blocks => {
                self.over = true;
                return false;
            }
            Block::Ok(c) => self.content.push(c),
            Block::Unknown => self.dropped_unknown += 1,
            Block::Invalid => self.dropped_invalid += 1,
        }
        true
    }
}

/// The elements of `content` as serde reads an array of raw values (the same errors as a
/// `Vec<&RawValue>`), but without keeping them: their number and the text from the first to the
/// end of the last, from which they are read one at a time afterwards.
struct Elements<'a> {
    count: usize,
    first: Option<&'a str>,
    last: Option<&'a str>,
}

impl<'de: 'a, 'a> Deserialize<'de> for Elements<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Elements<'de>;
            fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str("a sequence")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Elements<'de>, A::Error> {
                let mut e = Elements {
                    count: 0,
                    first: None,
                    last: None,
                };
                while let Some(raw) = seq.next_element::<&'de RawValue>()? {
                    e.count += 1;
                    e.first.get_or_insert(raw.get());
                    e.last = Some(raw.get());
                }
                Ok(e)
            }
        }
        deserializer.deserialize_seq(Visit)
    }
}

/// Where `part`, a slice of `whole`, starts in it.
fn offset_in(whole: &str, part: &str) -> Option<usize> {
    (part.as_ptr() as usize)
        .checked_sub(whole.as_ptr() as usize)
        .filter(|&at| at + part.len() <= whole.len())
}

/// Reads the elements of `content` (in `text`, the result they were read from) one at a time
/// into blocks, keeping at most `max_blocks` usable ones.
fn read_elements(text: &str, e: &Elements<'_>, max_blocks: usize) -> Result<Blocks, AnswerError> {
    let mut blocks = Blocks::new();
    let (Some(first), Some(last)) = (e.first, e.last) else {
        return Ok(blocks);
    };
    let lost = || AnswerError::Invalid("content blocks could not be read again".into());
    let start = offset_in(text, first).ok_or_else(lost)?;
    let end = offset_in(text, last).ok_or_else(lost)? + last.len();
    let b = text.as_bytes();
    let mut i = start;
    for n in 0..e.count {
        // serde has read each element as a raw value: the scanner that ignores values as it
        // does delimits them exactly.
        let stop = crate::json::skip(b, i)
            .filter(|&stop| stop <= end)
            .ok_or_else(lost)?;
        let raw: &RawValue =
            serde_json::from_str(text.get(i..stop).ok_or_else(lost)?).map_err(|_| lost())?;
        if !blocks.add(parse_block(raw), max_blocks) {
            break;
        }
        if n + 1 < e.count {
            i = crate::json::ws(b, stop);
            if b.get(i) != Some(&b',') {
                return Err(lost());
            }
            i = crate::json::ws(b, i + 1);
        }
    }
    Ok(blocks)
}

/// Parses a `tools/call` result the checking way: serde reads the result, then each block into
/// [`BlockWire`]; at most `max_blocks` usable blocks are kept. The decision whenever the one
/// pass ([`pass::read_at`]) is not sure, and the reference it follows.
pub(crate) fn parse_call_result(result: crate::jsonrpc::RawJson<'_>, max_blocks: usize) -> Answer {
    parse_call_result_two_step(result, max_blocks)
}

/// Reads the result, then each block into [`BlockWire`].
fn parse_call_result_two_step(result: crate::jsonrpc::RawJson<'_>, max_blocks: usize) -> Answer {
    let text = result.get();
    // A result is a JSON object, never read by position from an array.
    if !text.trim_start().starts_with('{') {
        return Err("the result is not a JSON object".into());
    }
    let wire: CallWire<'_> = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let blocks = match &wire.content {
        Some(e) => Some(read_elements(text, e, max_blocks)?),
        None => None,
    };
    answer(
        wire.result_type.as_deref(),
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
) -> Answer {
    // Past the limit nothing else counts: the reading stopped there.
    if blocks.as_ref().is_some_and(|b| b.over) {
        return Err(AnswerError::TooManyBlocks);
    }
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
        Some(other) => {
            return Err(format!("unexpected resultType {:?}", truncated(other, 64)).into())
        }
    }
    let Blocks {
        content,
        dropped_unknown,
        dropped_invalid,
        total,
        ..
    } = blocks.ok_or("content is missing or not an array")?;
    if content.is_empty() && total > 0 {
        return Err(format!(
            "every content block was dropped ({dropped_unknown} of unknown type, {dropped_invalid} malformed)"
        )
        .into());
    }
    Ok(CallAnswer::Complete(CallResult {
        content,
        dropped_unknown,
        dropped_invalid,
        structured_content: structured_content.map(|v| v.to_owned()),
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
        same_with(result, usize::MAX)
    }

    /// [`same`] keeping at most `max_blocks` usable blocks.
    fn same_with(result: &str, max_blocks: usize) -> bool {
        let raw: Box<RawValue> = serde_json::from_str(result).expect("valid JSON");
        let two = format!(
            "{:?}",
            parse_call_result_two_step((&*raw).into(), max_blocks)
        );
        match pass::read(raw.get(), max_blocks) {
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
            r#"{"type":"resource","resource":{"uri":"u","text":"a"},"resource":{"uri":"v","text":"b"}}"#,
            r#"{"type":"resource","resource":{"uri":"u","mimeType":"text/plain","text":"t"}}"#,
            r#"{"type":"resource","resource":{"uri":"u","mimeType":null,"text":"t"}}"#,
            r#"{"type":"resource","resource":{"uri":"u","text":"t","mimeType":5}}"#,
            r#"{"type":"resource","resource":{"uri":"u","text":"a","text":"b"}}"#,
            r#"{"type":"text","text":"a","resource":null}"#,
            r#"{"type":"text","text":"a","uri":null,"name":null,"mimeType":null,"data":null}"#,
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

    /// The two-step reading of `result`, as text.
    fn two_step(result: &str) -> String {
        let raw: Box<RawValue> = serde_json::from_str(result).expect("valid JSON");
        format!(
            "{:?}",
            parse_call_result_two_step((&*raw).into(), usize::MAX)
        )
    }

    #[test]
    fn blocks_resources_and_results_written_as_arrays_are_not_read_positionally() {
        // A content block, an embedded resource and a result are JSON objects (MCP schema);
        // serde's derived reading would take `["text","x"]` as a text block `x`.
        let r = two_step(r#"{"content":[{"type":"text","text":"ok"},["text","positional"]]}"#);
        assert!(
            r.contains("dropped_invalid: 1") && !r.contains("positional"),
            "{r}"
        );
        let r = two_step(
            r#"{"content":[{"type":"text","text":"ok"},{"type":"resource","resource":["u",null,"t"]}]}"#,
        );
        assert!(r.contains("dropped_invalid: 1"), "{r}");
        let r = two_step(r#"{"content":[["text","positional"]]}"#);
        assert!(r.contains("every content block was dropped"), "{r}");
        let r = two_step(r#"[[{"type":"text","text":"ok"}]]"#);
        assert!(r.starts_with("Err(Invalid("), "{r}");
    }

    #[test]
    fn an_escaped_result_type_is_read_as_the_string_it_spells() {
        // `"compl\u0065te"` is the JSON string `complete`.
        let r = two_step(r#"{"resultType":"compl\u0065te","content":[]}"#);
        assert!(r.starts_with("Ok(Complete("), "{r}");
        let r = two_step(r#"{"resultType":"input_requir\u0065d","requestState":"s"}"#);
        assert!(r.starts_with("Ok(InputRequired {"), "{r}");
        let r = two_step(r#"{"resultType":"oth\u0065r","content":[]}"#);
        assert!(r.contains(r#"unexpected resultType \"other\""#), "{r}");
    }

    #[test]
    fn both_readings_keep_at_most_the_blocks_allowed_and_refuse_the_result_past_them() {
        let text = r#"{"type":"text","text":"a"}"#;
        let unknown = r#"{"type":"x"}"#;
        let with =
            |blocks: &[&str], tail: &str| format!(r#"{{"content":[{}]{tail}}}"#, blocks.join(","));
        let over = |r: &str, max: usize| {
            let raw: Box<RawValue> = serde_json::from_str(r).unwrap();
            matches!(
                parse_call_result_two_step((&*raw).into(), max),
                Err(AnswerError::TooManyBlocks)
            )
        };
        // Three usable blocks and any number of dropped ones fit a limit of three.
        let three = with(&[text, unknown, text, "7", text, unknown], "");
        assert!(same_with(&three, 3) && !over(&three, 3));
        // A fourth is refused, whatever follows it or comes after `content`.
        let lone = r#"{"type":"text","text":"\ud800"}"#;
        for tail in ["", r#","resultType":"bogus""#, r#","isError":true"#] {
            let four = with(&[text, text, text, text, "[1,2]", lone], tail);
            assert!(same_with(&four, 3), "{four}");
            assert!(over(&four, 3), "{four}");
        }
        // The serde reading decides where the one pass is unsure, and refuses the same.
        let escaped = format!(r#"{{"con\u0074ent":[{}]}}"#, [text; 4].join(","));
        assert!(!same_with(&escaped, 3));
        assert!(over(&escaped, 3));
        assert!(!over(&escaped, 4));
        // What serde refuses before `content` is read is refused as before.
        let first = format!(r#"{{"isError":"yes","content":[{}]}}"#, [text; 4].join(","));
        assert!(!over(&first, 3));
    }

    #[test]
    fn one_pass_reads_results_as_the_two_step_reading() {
        for result in [
            r#"{"content":[]}"#,
            r#"{"content":null}"#,
            r#"{}"#,
            r#"{"content":[{"type":"mystery"}]}"#,
            r#"{"content":[{"type":"text"}],"isError":true}"#,
            r#"{"content":[{"type":"text","text":"a"}],"isError":false}"#,
            r#"{"resultType":null,"content":[{"type":"text","text":"a"}]}"#,
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
