//! The events of the session driver's `tracing` spans (feature `tracing`), over an in-memory
//! [`Io`]: a call made from a modern era hint meets a legacy server, which refuses it with a 400;
//! the driver's span of the call then holds the re-negotiation, the call sent again (a retry),
//! and the refusal of the request the server sent in the call's event stream, and never the
//! call's arguments or result.

mod support;

use mcp_sansio::{Completion, Config};
use mcp_sansio_net::{ClientBuilder, NoObserver, Report, SessionDriver, Start, Wait};
use mcp_sansio_test_support::adapter_tests::tracing::{install, install_here, Capture};
use support::{response, TestClient, Waiting};

const ARGUMENT: &str = "argument-never-traced-51d0";
const RESULT: &str = "result-never-traced-a7e2";

/// A modern server when `modern`; otherwise a legacy one that refuses modern calls with a 400
/// and answers a call with an event stream holding a request of its own, then the result.
fn answer(method: &str, id: u64, modern: bool, calls: &mut u32) -> Vec<u8> {
    let result = |r: &str| format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{r}}}"#);
    let json = |status, headers, body: &str| response(status, "application/json", headers, body);
    match (method, modern) {
        ("server/discover", true) => json(
            200,
            "",
            &result(r#"{"supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":60000}"#),
        ),
        ("server/discover", false) => json(404, "", ""),
        ("initialize", _) => json(
            200,
            "mcp-session-id: s\r\n",
            &result(r#"{"protocolVersion":"2025-06-18","capabilities":{}}"#),
        ),
        ("tools/call", false) => {
            *calls += 1;
            if *calls == 1 {
                return json(400, "", "");
            }
            let request =
                r#"{"jsonrpc":"2.0","id":"srv-1","method":"sampling/createMessage","params":{}}"#;
            let done = result(&format!(
                r#"{{"content":[{{"type":"text","text":"{RESULT}"}}],"isError":false}}"#
            ));
            let stream = format!("data: {request}\n\ndata: {done}\n\n");
            response(200, "text/event-stream", "", &stream)
        }
        _ => json(202, "", ""),
    }
}

fn run(d: &mut SessionDriver, op: Start<'_>, modern: bool) -> Completion {
    let mut io = Waiting::default();
    let mut calls = 0;
    d.start(op);
    loop {
        if let Some(r) = d.pump(&mut io, &mut NoObserver) {
            return r.unwrap();
        }
        let (id, method, rpc_id) = io.0.remove(0);
        d.feed(
            id,
            Report::Bytes(answer(&method, rpc_id, modern, &mut calls)),
        );
    }
}

#[test]
fn a_call_that_re_negotiates_reports_it_the_retry_and_the_refusal_in_its_span() {
    let capture = install();
    let client = ClientBuilder::<TestClient>::new().build();
    let url = "http://127.0.0.1:9/mcp?key=query-never-traced";
    // A modern server teaches the client a modern era hint.
    let mut d = SessionDriver::new(&client.0, Config::new(url).unwrap()).unwrap();
    run(&mut d, Start::Connect, true);
    // The next session connects from the hint; the server is legacy now.
    let mut d = SessionDriver::new(&client.0, Config::new(url).unwrap()).unwrap();
    run(&mut d, Start::Connect, false);
    let arguments = format!(r#"{{"q":"{ARGUMENT}"}}"#);
    let called = run(&mut d, Start::call("t", arguments.as_bytes()), false);
    assert!(matches!(called, Completion::Called(r) if !r.is_error));

    let c = capture.0.lock().unwrap();
    let dump = format!("{:#?}\n{:#?}", c.spans, c.events);
    let call = c
        .spans
        .iter()
        .position(|s| s.name == "call")
        .expect("a call span");
    let fields = &c.spans[call].fields;
    assert_eq!(fields["tool"], "t", "{dump}");
    assert_eq!(fields["outcome"], "ok", "{dump}");
    assert_eq!(fields["era"], "legacy", "{dump}");
    assert_eq!(fields["protocol_version"], "2025-06-18", "{dump}");
    assert_eq!(fields["origin"], "http://127.0.0.1:9", "{dump}");
    // Its exchanges, in order: the refused call, the new negotiation, the call again, the refusal
    // of the server's request.
    let rpcs: Vec<&str> = c
        .spans
        .iter()
        .filter(|s| s.parent == Some(call) && s.name == "exchange")
        .map(|s| s.fields.get("rpc").map_or("-", String::as_str))
        .collect();
    assert_eq!(
        rpcs,
        [
            "tools/call",
            "server/discover",
            "initialize",
            "notifications/initialized",
            "tools/call",
            "refusal"
        ],
        "{dump}"
    );
    // Its events.
    let events: Vec<&str> = c
        .events
        .iter()
        .filter(|e| e.span == Some(call))
        .map(|e| e.fields["message"].as_str())
        .collect();
    assert_eq!(
        events,
        ["re-negotiation", "retry", "server request refused"],
        "{dump}"
    );
    let renegotiation = c
        .events
        .iter()
        .find(|e| e.fields["message"] == "re-negotiation");
    assert_eq!(renegotiation.unwrap().fields["from"], "Calling", "{dump}");
    let retry = c.events.iter().find(|e| e.fields["message"] == "retry");
    assert_eq!(retry.unwrap().fields["attempt"], "2", "{dump}");
    for secret in [ARGUMENT, RESULT, "query-never-traced", "/mcp"] {
        assert!(!dump.contains(secret), "{secret} in\n{dump}");
    }
}

/// What the scripted server does with one request.
enum Reply {
    /// Answer with these bytes.
    Bytes(Vec<u8>),
    /// Answer with these bytes, then close the socket.
    ThenEof(Vec<u8>),
}

/// Runs `op` to its end against `server`, which sees (HTTP method, JSON-RPC method, id) and
/// replies; the adapter's clock is slept on when the core waits on time.
fn run_scripted(
    d: &mut SessionDriver,
    op: Start<'_>,
    server: &mut dyn FnMut(&str, &str, u64) -> Reply,
) -> Completion {
    let mut io = Waiting::default();
    d.start(op);
    for _ in 0..1000 {
        if let Some(r) = d.pump(&mut io, &mut NoObserver) {
            return r.unwrap();
        }
        if io.0.is_empty() {
            match d.wait() {
                Wait::Until(due) => {
                    std::thread::sleep(due.saturating_duration_since(std::time::Instant::now()));
                    d.timeout();
                }
                Wait::Report | Wait::Nothing => panic!("the driver waits on nothing"),
            }
            continue;
        }
        let (id, method, rpc_id) = io.0.remove(0);
        let http = if method == "GET" { "GET" } else { "POST" };
        match server(http, &method, rpc_id) {
            Reply::Bytes(b) => d.feed(id, Report::Bytes(b)),
            Reply::ThenEof(b) => {
                d.feed(id, Report::Bytes(b));
                d.feed(id, Report::Eof);
            }
        }
    }
    panic!("the operation did not end");
}

/// The messages of the events whose span is the first span named `name`.
fn events_of(c: &Capture, name: &str) -> Vec<String> {
    let span = c.spans.iter().position(|s| s.name == name);
    c.events
        .iter()
        .filter(|e| span.is_some() && e.span == span)
        .map(|e| e.fields["message"].clone())
        .collect()
}

/// Transports (2025-11-25): a client that loses a stream "MAY attempt to resume it by issuing an
/// HTTP GET … [with] the `Last-Event-ID` header"; MRTR (2026-07-28): an `input_required` result
/// without requests asks the client to retry, and the client backs off; a `-32020` header
/// mismatch makes the client list the tools again. Each of these is an event of the operation
/// that met it: the resumption of a legacy call, the backoff and the relisting of modern calls.
#[test]
fn resumption_backoff_and_relisting_are_events_of_the_call_that_met_them() {
    let (capture, _here) = install_here();
    let client = ClientBuilder::<TestClient>::new().build();
    let ok = |id: u64, r: &str| {
        response(
            200,
            "application/json",
            "",
            &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{r}}}"#),
        )
    };
    let done = format!(r#"{{"content":[{{"type":"text","text":"{RESULT}"}}],"isError":false}}"#);

    // A legacy server whose call stream breaks after an event id: the call resumes with a GET.
    let mut legacy_call_id = 0;
    let mut legacy = |http: &str, method: &str, id: u64| match (http, method) {
        ("POST", "server/discover") => Reply::Bytes(response(404, "application/json", "", "")),
        ("POST", "initialize") => Reply::Bytes(response(
            200,
            "application/json",
            "mcp-session-id: s\r\n",
            &format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"protocolVersion":"2025-11-25","capabilities":{{}}}}}}"#
            ),
        )),
        ("POST", "tools/call") => {
            legacy_call_id = id;
            Reply::ThenEof(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\nid: ev-1\nretry: 5\ndata:\n\n"
                    .as_bytes()
                    .to_vec(),
            )
        }
        ("GET", _) => {
            let result = format!(r#"{{"jsonrpc":"2.0","id":{legacy_call_id},"result":{done}}}"#);
            Reply::Bytes(response(
                200,
                "text/event-stream",
                "",
                &format!("id: ev-2\ndata: {result}\n\n"),
            ))
        }
        _ => Reply::Bytes(response(202, "application/json", "", "")),
    };
    let url = "http://127.0.0.1:9/mcp";
    let mut d = SessionDriver::new(&client.0, Config::new(url).unwrap()).unwrap();
    run_scripted(&mut d, Start::Connect, &mut legacy);
    let arguments = format!(r#"{{"q":"{ARGUMENT}"}}"#);
    let called = run_scripted(&mut d, Start::call("t", arguments.as_bytes()), &mut legacy);
    assert!(matches!(called, Completion::Called(r) if !r.is_error));
    {
        let c = capture.0.lock().unwrap();
        let dump = format!("{:#?}\n{:#?}", c.spans, c.events);
        assert_eq!(
            events_of(&c, "call"),
            ["resumption of the event stream"],
            "{dump}"
        );
    }

    // A modern server: the first call of `h` meets a header mismatch (relisting), the call of
    // `b` twice an `input_required` without requests (the second waits: backoff).
    capture.0.lock().unwrap().spans.clear();
    capture.0.lock().unwrap().events.clear();
    let mut calls = 0;
    let mut modern = |_: &str, method: &str, id: u64| match method {
        "server/discover" => Reply::Bytes(ok(
            id,
            r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"private"}"#,
        )),
        "tools/list" => Reply::Bytes(ok(
            id,
            r#"{"resultType":"complete","tools":[{"name":"h","inputSchema":{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region"}}}},{"name":"b","inputSchema":{"type":"object"}}],"ttlMs":0,"cacheScope":"private"}"#,
        )),
        "tools/call" => {
            calls += 1;
            match calls {
                1 => Reply::Bytes(response(
                    400,
                    "application/json",
                    "",
                    &format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32020,"message":"Header mismatch"}}}}"#
                    ),
                )),
                3 | 4 => Reply::Bytes(ok(
                    id,
                    r#"{"resultType":"input_required","requestState":"again"}"#,
                )),
                _ => Reply::Bytes(ok(
                    id,
                    &format!(
                        r#"{{"resultType":"complete","content":[{{"type":"text","text":"{RESULT}"}}],"isError":false}}"#
                    ),
                )),
            }
        }
        _ => Reply::Bytes(response(202, "application/json", "", "")),
    };
    let mut d =
        SessionDriver::new(&client.0, Config::new("http://127.0.0.2:9/mcp").unwrap()).unwrap();
    run_scripted(&mut d, Start::Connect, &mut modern);
    let called = run_scripted(&mut d, Start::call("h", br#"{"r":"eu"}"#), &mut modern);
    assert!(matches!(called, Completion::Called(r) if !r.is_error));
    {
        let c = capture.0.lock().unwrap();
        let dump = format!("{:#?}\n{:#?}", c.spans, c.events);
        assert_eq!(
            events_of(&c, "call"),
            ["relisting: the tool's headers did not match", "retry"],
            "{dump}"
        );
    }
    capture.0.lock().unwrap().spans.clear();
    capture.0.lock().unwrap().events.clear();
    let called = run_scripted(&mut d, Start::call("b", b"{}"), &mut modern);
    assert!(matches!(called, Completion::Called(r) if !r.is_error));
    assert_eq!(calls, 5);
    let c = capture.0.lock().unwrap();
    let dump = format!("{:#?}\n{:#?}", c.spans, c.events);
    assert_eq!(
        events_of(&c, "call"),
        ["retry", "backoff before the next round", "retry"],
        "{dump}"
    );
    for secret in [ARGUMENT, RESULT, "\"eu\""] {
        assert!(!dump.contains(secret), "{secret} in\n{dump}");
    }
}
