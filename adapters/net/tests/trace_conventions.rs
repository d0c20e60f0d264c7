//! The MCP client spans by OpenTelemetry's semantic conventions for MCP
//! (open-telemetry/semantic-conventions, `docs/gen-ai/mcp.md`, "Client"), checked with a
//! recording `tracing` layer on the session driver over an in-memory [`Io`]. Every name below is
//! written from the conventions' text, not from the crate's code:
//!
//! - "**Span name** SHOULD follow the format `{mcp.method.name} {target}` where target SHOULD
//!   match `{gen_ai.tool.name}` … If there is no low-cardinality `target` available, the Span
//!   name SHOULD be `{mcp.method.name}`." (`otel.name`, the field `tracing-opentelemetry` turns
//!   into the span's name);
//! - "**Span kind** SHOULD be `CLIENT`." (`otel.kind`);
//! - attributes: `mcp.method.name` (Required), `gen_ai.tool.name` ("When operation is related to
//!   a specific tool"), `jsonrpc.request.id` ("When the client executes a request"; "SHOULD NOT
//!   capture this attribute when the `id` is `null` or omitted"), `gen_ai.operation.name`
//!   ("SHOULD be set to `execute_tool` when the operation describes a tool call and SHOULD NOT
//!   be set otherwise"), `mcp.protocol.version`, `mcp.session.id` ("When the MCP request or
//!   notification is part of a session"), `network.transport` ("SHOULD be set to `tcp` or
//!   `quic` if the transport protocol is HTTP"), `network.protocol.name` (`http`),
//!   `network.protocol.version` (`1.1`; `2`), `server.address`, `server.port`;
//! - `error.type`: "SHOULD be set to the string representation of the JSON-RPC error code, if
//!   one is returned … When CallToolResult is returned with `isError` set to `true`, this
//!   attribute SHOULD be set to `tool_error`"; "**Span status** SHOULD be set to `ERROR` when
//!   `error.type` attribute is present" (`otel.status_code`).
//!
//! Nothing secret: neither the call's arguments nor its result nor the URL's path or query.

mod support;

use std::collections::BTreeMap;

use mcp_sansio::{Completion, Config};
use mcp_sansio_net::{ClientBuilder, NoObserver, Report, SessionDriver, Start};
use mcp_sansio_test_support::adapter_tests::tracing::{install_here, SpanRec};
use support::{json, TestClient, Waiting};

const ARGUMENT: &str = "argument-never-traced-c41e";
const RESULT: &str = "result-never-traced-9b07";
const SESSION: &str = "sess-conventions-1";

/// A legacy server (2025-06-18) with a session; its tool answers `isError: true`, and the ids of
/// the `tools/call` requests it saw are kept in `calls`.
fn legacy(method: &str, id: u64, calls: &mut Vec<u64>) -> Vec<u8> {
    let result = |r: &str| format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{r}}}"#);
    let session = format!("mcp-session-id: {SESSION}\r\n");
    match method {
        "server/discover" => json(404, "", ""),
        "initialize" => json(
            200,
            &session,
            &result(r#"{"protocolVersion":"2025-06-18","capabilities":{"tools":{}}}"#),
        ),
        "tools/call" => {
            calls.push(id);
            json(
                200,
                "",
                &result(&format!(
                    r#"{{"content":[{{"type":"text","text":"{RESULT}"}}],"isError":true}}"#
                )),
            )
        }
        "tools/list" => json(
            200,
            "",
            &result(r#"{"tools":[{"name":"get-weather","inputSchema":{"type":"object"}}]}"#),
        ),
        _ => json(202, "", ""),
    }
}

/// A modern server whose tool call fails with JSON-RPC error `-32602`.
fn modern(method: &str, id: u64, _: &mut Vec<u64>) -> Vec<u8> {
    match method {
        "server/discover" => json(
            200,
            "",
            &format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"supportedVersions":["2026-07-28"],"capabilities":{{"tools":{{}}}},"ttlMs":0}}}}"#
            ),
        ),
        _ => json(
            200,
            "",
            &format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32602,"message":"bad"}}}}"#),
        ),
    }
}

type Server = fn(&str, u64, &mut Vec<u64>) -> Vec<u8>;

fn run(
    d: &mut SessionDriver,
    op: Start<'_>,
    server: Server,
    calls: &mut Vec<u64>,
) -> Result<Completion, mcp_sansio::Error> {
    let mut io = Waiting::default();
    d.start(op);
    for _ in 0..100 {
        if let Some(r) = d.pump(&mut io, &mut NoObserver) {
            return r;
        }
        let (id, method, rpc_id) = io.0.remove(0);
        d.feed(id, Report::Bytes(server(&method, rpc_id, calls)));
    }
    panic!("the operation did not end");
}

fn named<'a>(spans: &'a [SpanRec], otel_name: &str) -> Vec<(usize, &'a BTreeMap<String, String>)> {
    spans
        .iter()
        .enumerate()
        .filter(|(_, s)| s.fields.get("otel.name").map(String::as_str) == Some(otel_name))
        .map(|(i, s)| (i, &s.fields))
        .collect()
}

#[test]
fn each_request_has_a_client_span_named_and_attributed_by_the_conventions() {
    let (capture, _here) = install_here();
    let client = ClientBuilder::<TestClient>::new().build();
    let url = "http://127.0.0.1:9/mcp/secret-path?key=query-never-traced";
    let mut d = SessionDriver::new(&client.0, Config::new(url).unwrap()).unwrap();
    let mut calls = Vec::new();
    run(&mut d, Start::Connect, legacy, &mut calls).unwrap();
    let arguments = format!(r#"{{"q":"{ARGUMENT}"}}"#);
    let called = run(
        &mut d,
        Start::call("get-weather", arguments.as_bytes()),
        legacy,
        &mut calls,
    );
    assert!(matches!(called, Ok(Completion::Called(r)) if r.is_error));

    let c = capture.0.lock().unwrap();
    let dump = format!("{:#?}", c.spans);
    // The connect's requests, in order, each under the `connect` span.
    let connect = c.spans.iter().position(|s| s.name == "connect").unwrap();
    let under_connect: Vec<&str> = c
        .spans
        .iter()
        .filter(|s| s.parent == Some(connect) && s.fields.contains_key("otel.name"))
        .map(|s| s.fields["otel.name"].as_str())
        .collect();
    assert_eq!(
        under_connect,
        ["server/discover", "initialize", "notifications/initialized"],
        "{dump}"
    );
    let (_, init) = named(&c.spans, "initialize")[0];
    assert_eq!(init["mcp.method.name"], "initialize", "{dump}");
    assert_eq!(init["otel.kind"], "client", "{dump}");
    assert_eq!(
        init["mcp.protocol.version"], "2025-11-25",
        "the offered version: {dump}"
    );
    assert!(init.contains_key("jsonrpc.request.id"), "{dump}");
    assert!(!init.contains_key("gen_ai.operation.name"), "{dump}");
    assert!(!init.contains_key("error.type"), "{dump}");
    let (_, notified) = named(&c.spans, "notifications/initialized")[0];
    assert!(
        !notified.contains_key("jsonrpc.request.id"),
        "a notification: {dump}"
    );
    assert_eq!(notified["mcp.session.id"], SESSION, "{dump}");

    // The call: one span, under the `call` span.
    let call = c.spans.iter().position(|s| s.name == "call").unwrap();
    let spans = named(&c.spans, "tools/call get-weather");
    assert_eq!(spans.len(), 1, "{dump}");
    let (i, f) = spans[0];
    assert_eq!(c.spans[i].parent, Some(call), "{dump}");
    let expected = [
        ("otel.kind", "client"),
        ("mcp.method.name", "tools/call"),
        ("gen_ai.tool.name", "get-weather"),
        ("gen_ai.operation.name", "execute_tool"),
        ("mcp.protocol.version", "2025-06-18"),
        ("mcp.session.id", SESSION),
        ("network.transport", "tcp"),
        ("network.protocol.name", "http"),
        ("network.protocol.version", "1.1"),
        ("server.address", "127.0.0.1"),
        ("server.port", "9"),
        ("error.type", "tool_error"),
        ("otel.status_code", "ERROR"),
    ];
    for (key, value) in expected {
        assert_eq!(f.get(key).map(String::as_str), Some(value), "{key}: {dump}");
    }
    assert_eq!(f["jsonrpc.request.id"], calls[0].to_string(), "{dump}");
    for secret in [ARGUMENT, RESULT, "query-never-traced", "secret-path"] {
        assert!(!dump.contains(secret), "{secret} in\n{dump}");
    }
}

#[test]
fn a_json_rpc_error_is_the_error_type_of_the_request_that_met_it() {
    let (capture, _here) = install_here();
    let client = ClientBuilder::<TestClient>::new().build();
    let mut d =
        SessionDriver::new(&client.0, Config::new("http://127.0.0.1:9/mcp").unwrap()).unwrap();
    let mut calls = Vec::new();
    run(&mut d, Start::Connect, modern, &mut calls).unwrap();
    let failed = run(
        &mut d,
        Start::call("get-weather", b"{}"),
        modern,
        &mut calls,
    );
    assert!(failed.is_err());
    let c = capture.0.lock().unwrap();
    let dump = format!("{:#?}", c.spans);
    let (_, discover) = named(&c.spans, "server/discover")[0];
    assert_eq!(discover["mcp.protocol.version"], "2026-07-28", "{dump}");
    assert!(
        !discover.contains_key("mcp.session.id"),
        "no legacy session: {dump}"
    );
    let (_, f) = named(&c.spans, "tools/call get-weather")[0];
    assert_eq!(f["error.type"], "-32602", "{dump}");
    assert_eq!(f["otel.status_code"], "ERROR", "{dump}");
}

/// A modern server whose first tool call answers `-32020` (header mismatch: the client lists the
/// tools and calls again) and whose second answers `-32602`; `calls` counts the calls.
fn mismatch_then_invalid(method: &str, id: u64, calls: &mut Vec<u64>) -> Vec<u8> {
    let error = |code: i64| {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":"no"}}}}"#)
    };
    match method {
        "tools/call" => {
            calls.push(id);
            if calls.len() == 1 {
                json(400, "", &error(-32020))
            } else {
                json(200, "", &error(-32602))
            }
        }
        "tools/list" => json(
            200,
            "",
            &format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{{"name":"get-weather","inputSchema":{{"type":"object"}}}}]}}}}"#
            ),
        ),
        _ => modern(method, id, calls),
    }
}

/// A legacy server with a session whose first tool call answers 404 without a body (the session
/// expired: the client initializes again and calls once more), the second a result.
fn expiring(method: &str, id: u64, calls: &mut Vec<u64>) -> Vec<u8> {
    if method == "tools/call" {
        calls.push(id);
        if calls.len() == 1 {
            return json(404, "", "");
        }
        return json(
            200,
            "",
            &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[],"isError":false}}}}"#),
        );
    }
    legacy(method, id, calls)
}

/// `error.type` names the error of the request that met it, on that request's own span, also
/// when the operation goes on (a `-32020` answered by a relisting and a second call, a 404 that
/// ends a legacy session answered by a new `initialize` and a second call, a 2025 server's 404
/// to `server/discover`): "`error.type` SHOULD be set to the string representation of the
/// JSON-RPC error code" — or, with no JSON-RPC error, the HTTP status (OpenTelemetry's HTTP
/// conventions: "the `error.type` SHOULD be set to the status code number (represented as a
/// string)"). A request answered with a result records none, even when its operation fails.
#[test]
fn each_failed_request_records_its_own_error_type_and_an_answered_one_none() {
    let (capture, _here) = install_here();
    let client = ClientBuilder::<TestClient>::new().build();
    let mut d =
        SessionDriver::new(&client.0, Config::new("http://127.0.0.1:9/mcp").unwrap()).unwrap();
    let mut calls = Vec::new();
    run(&mut d, Start::Connect, mismatch_then_invalid, &mut calls).unwrap();
    let failed = run(
        &mut d,
        Start::call("get-weather", b"{}"),
        mismatch_then_invalid,
        &mut calls,
    );
    assert!(
        matches!(&failed, Err(mcp_sansio::Error::Rpc(e)) if e.code == -32602),
        "{failed:?}"
    );
    assert_eq!(calls.len(), 2, "a call, a relisting, a call");

    let mut d =
        SessionDriver::new(&client.0, Config::new("http://127.0.0.1:8/mcp").unwrap()).unwrap();
    let mut legacy_calls = Vec::new();
    run(&mut d, Start::Connect, expiring, &mut legacy_calls).unwrap();
    let called = run(
        &mut d,
        Start::call("get-weather", b"{}"),
        expiring,
        &mut legacy_calls,
    );
    assert!(called.is_ok(), "{called:?}");
    assert_eq!(legacy_calls.len(), 2, "a call, a new session, a call");

    let c = capture.0.lock().unwrap();
    let dump = format!("{:#?}", c.spans);
    let port = |f: &BTreeMap<String, String>| f["server.port"].clone();
    let error_types = |name: &str, port_: &str| -> Vec<Option<String>> {
        named(&c.spans, name)
            .into_iter()
            .filter(|(_, f)| port(f) == port_)
            .map(|(_, f)| {
                let status = f.get("otel.status_code").cloned();
                let t = f.get("error.type").cloned();
                assert_eq!(
                    status.is_some(),
                    t.is_some(),
                    "status ERROR exactly when error.type: {dump}"
                );
                t
            })
            .collect()
    };
    let some = |s: &str| Some(s.to_owned());
    // Modern: the discover answered; the first call -32020, the listing answered, the second
    // call -32602.
    assert_eq!(error_types("server/discover", "9"), [None], "{dump}");
    assert_eq!(
        error_types("tools/call get-weather", "9"),
        [some("-32020"), some("-32602")],
        "{dump}"
    );
    assert_eq!(error_types("tools/list", "9"), [None], "{dump}");
    // Legacy: the discover 404, two negotiations answered, the first call 404, the second
    // answered.
    assert_eq!(error_types("server/discover", "8"), [some("404")], "{dump}");
    assert_eq!(error_types("initialize", "8"), [None, None], "{dump}");
    assert_eq!(
        error_types("tools/call get-weather", "8"),
        [some("404"), None],
        "{dump}"
    );
}
