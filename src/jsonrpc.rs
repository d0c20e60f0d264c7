//! JSON-RPC 2.0 messages: writing requests, and classifying what a server sends.
//!
//! Incoming messages are classified without building a `serde_json::Value` tree: `params`,
//! `result`, `error.data` and `id` are kept as borrowed [`RawValue`]s, so the layer above parses
//! only what it needs, once.
use crate::prelude::*;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::error::{truncated, ProtocolError, RpcError};

/// Longest JSON-RPC error message kept.
pub const MAX_ERROR_MESSAGE: usize = 1024;
/// Longest raw JSON of an error's `data` kept.
pub const MAX_ERROR_DATA: usize = 4096;

/// A request id. This client only ever sends integer ids.
pub(crate) type RequestId = u64;

#[derive(Deserialize)]
struct Wire<'a> {
    jsonrpc: Option<&'a str>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<alloc::borrow::Cow<'a, str>>,
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
    message: Option<alloc::borrow::Cow<'a, str>>,
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
pub(crate) struct ErrorObject<'a> {
    /// The error code.
    pub code: i64,
    /// The message, if any.
    pub message: alloc::borrow::Cow<'a, str>,
    /// The raw `data`, if any.
    pub data: Option<&'a RawValue>,
}

impl ErrorObject<'_> {
    /// The typed error this answer is: [`Error::MissingClientCapability`] for `-32021`,
    /// [`Error::Rpc`] otherwise.
    pub(crate) fn to_error(&self, status: u16) -> crate::error::Error {
        let rpc = self.to_owned_error(status);
        if self.code == -32021 {
            crate::error::missing_capability(self.data, rpc)
        } else {
            crate::error::Error::Rpc(rpc)
        }
    }

    /// A bounded, owned copy that records the HTTP status it came with.
    pub(crate) fn to_owned_error(&self, status: u16) -> RpcError {
        RpcError {
            status,
            code: self.code,
            message: truncated(&self.message, MAX_ERROR_MESSAGE),
            data: self.data.map(|d| truncated(d.get(), MAX_ERROR_DATA)),
        }
    }
}

/// One message from the server, classified.
#[derive(Debug)]
pub(crate) enum Message<'a> {
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
        method: alloc::borrow::Cow<'a, str>,
        /// The raw params, if any.
        params: Option<&'a RawValue>,
    },
    /// A request from the server.
    Request {
        /// The raw id.
        id: &'a RawValue,
        /// The method.
        method: alloc::borrow::Cow<'a, str>,
        /// The raw params, if any.
        params: Option<&'a RawValue>,
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
pub(crate) fn parse_message(bytes: &[u8]) -> Result<Message<'_>, ProtocolError> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'[') {
        return Err(ProtocolError::Batch);
    }
    if let Some(message) = fast_response(bytes, false) {
        return Ok(message);
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
            Some(id) => Message::Request {
                id,
                method,
                params: wire.params,
            },
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

/// [`parse_message`] for the answer to a `tools/list` request `expected`: the same outcome, but
/// a result answering `expected` is only delimited here (as the last member: up to the closing
/// brace; else by counting brackets), and the listing's page pass, which reads every byte of it
/// anyway, checks it and must find it ends exactly there (`list::add_page` falls back to
/// [`parse_message`], for the result and for the reason, when the pass is not sure). Whatever
/// else the message is, it is read by [`parse_message`] in full.
pub(crate) fn parse_message_for_page(
    bytes: &[u8],
    expected: RequestId,
) -> Result<Message<'_>, ProtocolError> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first != Some(&b'[') {
        if let Some(m @ Message::Result { id, .. }) = fast_response(bytes, true) {
            if id_matches(id, expected) {
                return Ok(m);
            }
        }
    }
    parse_message(bytes)
}

/// [`parse_message`] for the answer to a `tools/call` request `expected`, with the answer
/// decoded in the same pass when it can be: the envelope is read by the JSON scanner as in
/// [`parse_message`], and its `result` by the call's one pass (`call::pass::read_at`), which
/// checks every byte of it and says where it ends. When both are sure, the message is the
/// JSON-RPC response [`parse_message`] would give, and the decoded answer comes with it (if the
/// id is `expected`); otherwise the message is read by [`parse_message`] in full, and the answer
/// is left to `call::parse_call_result`.
pub(crate) fn parse_message_for_call(
    bytes: &[u8],
    expected: RequestId,
    max_blocks: usize,
) -> Result<(Message<'_>, Option<crate::call::Answer>), ProtocolError> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first != Some(&b'[') {
        let mut answer = None;
        let fast = fast_response_with(bytes, &mut |text, at| {
            let (decoded, end) = crate::call::pass::read_at(text, at, max_blocks).ok()?;
            answer = Some(decoded);
            Some(end)
        });
        if let Some(m @ Message::Result { id, .. }) = fast {
            return Ok((m, answer.filter(|_| id_matches(id, expected))));
        }
    }
    parse_message(bytes).map(|m| (m, None))
}

/// Where the value starting at `at` ends if it is the message's last member: just before the
/// closing brace that ends the message (whitespace aside). Not checked: the page pass reads the
/// value and must find it ends exactly there.
fn last_member_end(b: &[u8], at: usize) -> Option<usize> {
    let close = b.iter().rposition(|c| !crate::json::is_ws(*c))?;
    if b.get(close) != Some(&b'}') {
        return None;
    }
    let end = b
        .get(..close)?
        .iter()
        .rposition(|c| !crate::json::is_ws(*c))?
        + 1;
    (end > at).then_some(end)
}

/// A response with a result, read by the JSON scanner: `None` unless it is an object whose keys
/// have no escapes, with `"jsonrpc":"2.0"`, a non-null `id` and a `result`, each once, and no
/// `method` or `error` (other members are skipped as serde_json ignores them).
///
/// With `defer`, the `result` is only delimited, not checked: see [`parse_message_for_page`].
fn fast_response(bytes: &[u8], defer: bool) -> Option<Message<'_>> {
    if defer {
        fast_response_with(bytes, &mut |t, at| {
            let b = t.as_bytes();
            last_member_end(b, at).map_or_else(|| crate::json::delimit(b, at), Some)
        })
    } else {
        fast_response_with(bytes, &mut |t, at| crate::json::skip(t.as_bytes(), at))
    }
}

/// [`fast_response`] with the `result` read by `read_result`, which is given the message and where the
/// value starts, and returns where it ends (`None`: not sure, the message is left to serde).
fn fast_response_with<'a>(
    bytes: &'a [u8],
    read_result: &mut dyn FnMut(&'a str, usize) -> Option<usize>,
) -> Option<Message<'a>> {
    use crate::json::{skip, string, ws};
    let text = core::str::from_utf8(bytes).ok()?;
    let b = text.as_bytes();
    let mut i = ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i = ws(b, i + 1);
    let (mut version, mut id, mut result) = (false, None, None);
    loop {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let (end, escaped) = string(b, i, false)?;
        if escaped {
            return None;
        }
        let key = b.get(i + 1..end - 1)?;
        i = ws(b, end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        let at = ws(b, i + 1);
        let after = if key == b"result" {
            read_result(text, at)?
        } else {
            skip(b, at)?
        };
        let value = text.get(at..after)?;
        match key {
            b"jsonrpc" if !version && value == "\"2.0\"" => version = true,
            b"id" if id.is_none() => id = Some(value),
            b"result" if result.is_none() => result = Some(value),
            b"jsonrpc" | b"id" | b"result" | b"method" | b"params" | b"error" => return None,
            _ => {}
        }
        i = ws(b, after);
        match b.get(i) {
            Some(b',') => i = ws(b, i + 1),
            Some(b'}') => break,
            _ => return None,
        }
    }
    if ws(b, i + 1) != b.len() || !version {
        return None;
    }
    let (id, result) = (id?, result?);
    if id == "null" {
        return None;
    }
    // The id is small: serde_json delimits it again to give the `RawValue` callers compare.
    let id: &RawValue = serde_json::from_str(id).ok()?;
    Some(Message::Result {
        id,
        result: RawJson(result),
    })
}

/// Whether a raw id equals the integer id this client sent.
pub(crate) fn id_matches(raw: &RawValue, expected: RequestId) -> bool {
    raw.get().trim().parse::<u64>().ok() == Some(expected)
}

/// Writes a JSON object member by member into a byte buffer. Values are raw JSON the caller
/// vouches for (already serialized or taken verbatim from the caller's arguments).
pub(crate) struct ObjectWriter<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
}

impl<'a> ObjectWriter<'a> {
    pub(crate) fn new(out: &'a mut Vec<u8>) -> Self {
        out.push(b'{');
        ObjectWriter { out, first: true }
    }

    fn key(&mut self, key: &str) {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        write_str(self.out, key);
        self.out.push(b':');
    }

    /// A member whose value is raw JSON.
    pub(crate) fn raw(&mut self, key: &str, raw_json: &[u8]) -> &mut Self {
        self.key(key);
        self.out.extend_from_slice(raw_json);
        self
    }

    /// A member whose value is a JSON string.
    pub(crate) fn string(&mut self, key: &str, value: &str) -> &mut Self {
        self.key(key);
        write_str(self.out, value);
        self
    }

    /// A member whose value is a JSON string, like [`string`](Self::string); returns the
    /// offset, in the buffer written into, of the value's first character (after its opening
    /// quote).
    pub(crate) fn string_at(&mut self, key: &str, value: &str) -> usize {
        self.key(key);
        let at = self.out.len() + 1;
        write_str(self.out, value);
        at
    }

    /// A member whose value is an unsigned integer.
    pub(crate) fn uint(&mut self, key: &str, value: u64) -> &mut Self {
        self.key(key);
        self.out.extend_from_slice(value.to_string().as_bytes());
        self
    }

    /// A member whose value is an object written by `f`.
    pub(crate) fn object(&mut self, key: &str, f: impl FnOnce(&mut ObjectWriter<'_>)) -> &mut Self {
        self.key(key);
        let mut inner = ObjectWriter::new(self.out);
        f(&mut inner);
        inner.finish();
        self
    }

    pub(crate) fn finish(self) {
        self.out.push(b'}');
    }
}

/// Writes the `_meta` object of a request under `config`: the one writer of every request's
/// `_meta`. In the 2026-07-28 era (`version` set) the `io.modelcontextprotocol/…` members
/// (protocol version, client capabilities, client info); in every era the trace context
/// ([`Config::trace_context`](crate::Config::trace_context)) and `progress_token` when given.
/// Nothing at all (no `_meta` member) when none of them applies. Returns where the value of
/// its `traceparent` is in the buffer written into ([`Transmit::traceparent_at`]), if it has one.
///
/// [`Transmit::traceparent_at`]: crate::Transmit::traceparent_at
pub(crate) fn write_request_meta(
    config: &crate::Config,
    version: Option<&str>,
    progress_token: Option<u64>,
    out: &mut ObjectWriter<'_>,
) -> Option<usize> {
    let trace = config.trace_context.as_ref();
    if version.is_none() && trace.is_none() && progress_token.is_none() {
        return None;
    }
    let mut traceparent_at = None;
    out.object("_meta", |m| {
        if let Some(version) = version {
            let info = &config.client_info;
            m.string("io.modelcontextprotocol/protocolVersion", version)
                .raw(
                    "io.modelcontextprotocol/clientCapabilities",
                    crate::task::client_capabilities(config, crate::Era::Modern).as_bytes(),
                )
                .object("io.modelcontextprotocol/clientInfo", |i| {
                    i.string("name", &info.name)
                        .string("version", &info.version);
                });
        }
        traceparent_at = crate::trace_context::write_meta(trace, m);
        if let Some(t) = progress_token {
            m.uint("progressToken", t);
        }
    });
    traceparent_at
}

/// Writes `s` as a JSON string.
pub(crate) fn write_str(out: &mut Vec<u8>, s: &str) {
    // serde_json's string escaping cannot fail. (`to_vec` rather than `to_writer`, which needs
    // `std`: the same bytes in both configurations.)
    match serde_json::to_vec(s) {
        Ok(json) => out.extend_from_slice(&json),
        Err(_) => out.extend_from_slice(b"\"\""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_messages() {
        assert!(matches!(
            parse_message(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            Ok(Message::Result { .. })
        ));
        assert!(matches!(
            parse_message(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"x"}}"#),
            Ok(Message::Error { id: None, .. })
        ));
        assert!(matches!(
            parse_message(br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#),
            Ok(Message::Notification { .. })
        ));
        assert!(matches!(
            parse_message(br#"{"jsonrpc":"2.0","id":"s1","method":"ping"}"#),
            Ok(Message::Request { .. })
        ));
        assert_eq!(
            parse_message(br#" [{"jsonrpc":"2.0","id":1,"result":{}}]"#).unwrap_err(),
            ProtocolError::Batch
        );
        assert!(
            parse_message(br#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1}}"#).is_err()
        );
        assert!(parse_message(br#"{"jsonrpc":"1.0","id":1,"result":{}}"#).is_err());
        assert!(
            parse_message(br#"{"jsonrpc":"2.0","id":1,"id":2,"result":{}}"#).is_err(),
            "duplicate keys"
        );
        assert!(
            parse_message(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"\xff\"}").is_err(),
            "invalid UTF-8"
        );
        assert!(parse_message(br#"{"jsonrpc":"2.0","result":{}}"#).is_err());
    }

    /// The serde reading of a response, for comparison with the scanner's.
    fn by_serde(bytes: &[u8]) -> Option<(String, String)> {
        let wire: Wire<'_> = serde_json::from_slice(bytes).ok()?;
        if wire.jsonrpc != Some("2.0") || wire.method.is_some() || wire.error.is_some() {
            return None;
        }
        let id = wire.id.filter(|v| !is_null(v))?;
        Some((id.get().to_owned(), wire.result?.get().to_owned()))
    }

    fn as_pair(msg: Message<'_>) -> Option<(String, String)> {
        match msg {
            Message::Result { id, result } => Some((id.get().to_owned(), result.get().to_owned())),
            _ => None,
        }
    }

    #[test]
    fn the_scanner_reads_responses_as_serde_json() {
        for m in [
            r#"{"jsonrpc":"2.0","id":1,"result":{"a":[1,2,{"b":"c"}]}}"#,
            r#" {"result":{},"id":"x","jsonrpc":"2.0"} "#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"n":1e400},"extra":[1e400,"\ud800"]}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":"a\u00e9\n"}"#,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"\u{e9}\"}",
            r#"{"jsonrpc":"2.0","id":1,"result":{},"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
            r#"{"jsonrpc":"2.0","result":{}}"#,
            r#"{"j\u0073onrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{},"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"a":01}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"a":"\x"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}} x"#,
            r#"{"jsonrpc":"2.0","id":1,"result":[1,]}"#,
            r#"{"jsonrpc":"1.0","id":1,"result":{}}"#,
        ] {
            if let Some(fast) = fast_response(m.as_bytes(), false).and_then(as_pair) {
                assert_eq!(Some(fast), by_serde(m.as_bytes()), "{m}");
            }
            // Whatever the scanner leaves, `parse_message` reads as serde_json does.
            let whole = parse_message(m.as_bytes()).ok().and_then(as_pair);
            assert_eq!(whole, by_serde(m.as_bytes()), "{m}");
        }
        // Invalid UTF-8 in a member serde_json ignores: left to serde_json, which accepts it.
        let m = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"x\":\"\xff\",\"result\":{}}";
        assert!(fast_response(m, false).is_none());
        assert!(parse_message(m).is_ok());
    }

    #[test]
    fn a_call_answer_is_decoded_with_its_message_only_when_sure() {
        let decoded = |m: &str| match parse_message_for_call(m.as_bytes(), 1, usize::MAX) {
            Ok((Message::Result { result, .. }, d)) => Some((result.get().to_owned(), d.is_some())),
            _ => None,
        };
        let block = r#"{"content":[{"type":"text","text":"a\tb"}]}"#;
        // The usual shapes: decoded in the same pass.
        for m in [
            format!(r#"{{"jsonrpc":"2.0","id":1,"result":{block}}}"#),
            format!(r#" {{ "jsonrpc" : "2.0" , "id" : 1 , "result" : {block} }} "#),
            format!(r#"{{"result":{block},"id":1,"jsonrpc":"2.0"}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":1,"result":{block},"x":[1e400]}}"#),
        ] {
            assert_eq!(decoded(&m), Some((block.to_owned(), true)), "{m}");
        }
        // A message that is not a response as read, another id, or a shape the pass leaves to
        // serde: the message is read the checking way, with the same outcome as before.
        for m in [
            format!(r#"{{"jsonrpc":"2.0","id":1,"result":{block},"method":"m"}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":1,"result":{block},"result":{{}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":1,"result":{block}}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":2,"result":{block}}}"#),
            r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"s"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[1,]}}"#.to_owned(),
        ] {
            let whole = parse_message(m.as_bytes()).ok().and_then(as_pair).map(|(_, r)| r);
            let now = decoded(&m);
            assert_eq!(now.as_ref().map(|(r, _)| r.clone()), whole, "{m}");
            assert!(!now.is_some_and(|(_, sure)| sure), "{m}");
        }
    }

    #[test]
    fn ids_compare_as_integers_only() {
        let m = parse_message(br#"{"jsonrpc":"2.0","id":7,"result":{}}"#).unwrap();
        let Message::Result { id, .. } = m else {
            panic!()
        };
        assert!(id_matches(id, 7));
        assert!(!id_matches(id, 8));
        let m = parse_message(br#"{"jsonrpc":"2.0","id":"7","result":{}}"#).unwrap();
        let Message::Result { id, .. } = m else {
            panic!()
        };
        assert!(!id_matches(id, 7));
    }

    #[test]
    fn error_copies_are_bounded() {
        let big = "x".repeat(10_000);
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":-1,"message":"{big}","data":"{big}"}}}}"#
        );
        let Message::Error { error, .. } = parse_message(body.as_bytes()).unwrap() else {
            panic!()
        };
        let owned = error.to_owned_error(400);
        assert_eq!(owned.message.len(), MAX_ERROR_MESSAGE);
        assert_eq!(owned.data.unwrap().len(), MAX_ERROR_DATA);
    }

    #[test]
    fn object_writer_escapes() {
        let mut out = Vec::new();
        let mut w = ObjectWriter::new(&mut out);
        w.string("a\"", "b\n")
            .uint("n", 3)
            .raw("r", b"[1]")
            .object("o", |o| {
                o.string("k", "v");
            });
        w.finish();
        assert_eq!(out, br#"{"a\"":"b\n","n":3,"r":[1],"o":{"k":"v"}}"#);
    }
}
