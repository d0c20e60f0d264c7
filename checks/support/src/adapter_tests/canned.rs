//! Canned HTTP answers of the adapters' in-test servers, shared by both adapters' `support`
//! modules (each re-exports this module): the bytes a well-behaved modern or legacy
//! server sends, and the pieces they are made of.
#![allow(dead_code)]

/// The `server/discover` result of a 2026-07-28 server named `srv` 9, fresh for an hour (so a
/// client keeps its era hint that long).
pub const DISCOVER_OK: &str = r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":3600000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"srv","version":"9"}}}"#;

/// A `tools/call` result with one text block, `hi`.
pub const CALL_OK: &str = r#"{"content":[{"type":"text","text":"hi"}],"isError":false}"#;

/// A JSON response with extra `headers`.
pub fn json_response_with(status: u16, headers: &[(&str, &str)], body: &str) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status} X\r\ncontent-type: application/json\r\n");
    for (k, v) in headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str(&format!("content-length: {}\r\n\r\n{body}", body.len()));
    out.into_bytes()
}

/// A JSON response.
pub fn json_response(status: u16, body: &str) -> Vec<u8> {
    json_response_with(status, &[], body)
}

/// A response with no body.
pub fn empty_response(status: u16) -> Vec<u8> {
    format!("HTTP/1.1 {status} X\r\ncontent-length: 0\r\n\r\n").into_bytes()
}

/// A complete SSE response (chunked) carrying `stream`.
pub fn sse_response(stream: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{stream}\r\n0\r\n\r\n",
        stream.len()
    )
    .into_bytes()
}

/// A JSON-RPC result message.
pub fn result_msg(id: u64, result: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)
}

/// The `initialize` result of a legacy server named `legacy` speaking `version`.
pub fn initialize_ok(version: &str) -> String {
    format!(
        r#"{{"protocolVersion":"{version}","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"legacy","version":"1"}}}}"#
    )
}

/// A `tools/list` result naming `names`, each with an object schema.
pub fn tools_page(names: &[&str]) -> String {
    let tools: Vec<String> = names
        .iter()
        .map(|n| format!(r#"{{"name":"{n}","inputSchema":{{"type":"object"}}}}"#))
        .collect();
    format!(r#"{{"tools":[{}]}}"#, tools.join(","))
}

/// What a modern server answers to `method` (JSON-RPC id `id`): discover, tools `echo` and
/// `add`, every call `hi`.
pub fn modern_answer(method: &str, id: u64) -> Vec<u8> {
    match method {
        "server/discover" => json_response(200, &result_msg(id, DISCOVER_OK)),
        "tools/list" => json_response(200, &result_msg(id, &tools_page(&["echo", "add"]))),
        "tools/call" => json_response(200, &result_msg(id, CALL_OK)),
        _ => empty_response(202),
    }
}

/// What a legacy server of `version` answers to `method`: `server/discover` is a 404, the
/// session id `sess-1`, tool `old`, every call `hi`, `DELETE` a 200.
pub fn legacy_answer(version: &str, method: &str, id: u64) -> Vec<u8> {
    let session = [("mcp-session-id", "sess-1")];
    match method {
        "server/discover" => empty_response(404),
        "initialize" => json_response_with(200, &session, &result_msg(id, &initialize_ok(version))),
        "tools/list" => json_response_with(200, &session, &result_msg(id, &tools_page(&["old"]))),
        "tools/call" => json_response(200, &result_msg(id, CALL_OK)),
        "DELETE" => empty_response(200),
        _ => empty_response(202),
    }
}
