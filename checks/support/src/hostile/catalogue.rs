//! The scenarios: hostile servers, by category.

use std::time::Duration;

use mcp_sansio::{Budget, Budgets, ErrorKind};

use super::script::{Pieces, Rule, Step, Times, When};
use super::{test_budgets, Cause, Expect, Input, Op, Scenario, Setup, TaskCause};

const CF: ErrorKind = ErrorKind::ConnectionFailed;
const SA: ErrorKind = ErrorKind::ServerAnswered;
const AF: ErrorKind = ErrorKind::AuthenticationFailed;
/// Until the client goes away.
const FOREVER: u64 = u64::MAX;

// ---------------------------------------------------------------------------------------------
// Builders

fn once(when: When, steps: Vec<Step>) -> Rule {
    Rule {
        when,
        times: Times::Once,
        steps,
    }
}

fn always(when: When, steps: Vec<Step>) -> Rule {
    Rule {
        when,
        times: Times::Always,
        steps,
    }
}

fn send(b: impl AsRef<[u8]>) -> Step {
    Step::Send(b.as_ref().to_vec())
}

fn chunk(b: impl AsRef<[u8]>) -> Step {
    Step::Chunk(b.as_ref().to_vec())
}

fn repeat(b: impl AsRef<[u8]>, times: u64) -> Step {
    Step::Repeat {
        bytes: b.as_ref().to_vec(),
        times,
    }
}

fn trickle(b: impl AsRef<[u8]>, piece: usize, every_ms: u64) -> Step {
    Step::Trickle {
        bytes: b.as_ref().to_vec(),
        piece,
        every: Duration::from_millis(every_ms),
    }
}

fn respond(status: u16, headers: &[(&str, &str)], body: impl AsRef<[u8]>) -> Step {
    Step::Respond {
        status,
        headers: headers
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect(),
        body: body.as_ref().to_vec(),
    }
}

fn json(status: u16, body: impl AsRef<[u8]>) -> Step {
    respond(status, &[("content-type", "application/json")], body)
}

fn result(r: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":$ID,"result":{r}}}"#)
}

fn rpc_error(code: i64, data: Option<&str>) -> String {
    match data {
        Some(d) => format!(
            r#"{{"jsonrpc":"2.0","id":$ID,"error":{{"code":{code},"message":"no","data":{d}}}}}"#
        ),
        None => format!(r#"{{"jsonrpc":"2.0","id":$ID,"error":{{"code":{code},"message":"no"}}}}"#),
    }
}

fn ok(r: &str) -> Step {
    json(200, result(r))
}

const SSE_HEAD: &str =
    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
const JSON_HEAD_CL: &str = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n";
const END_CHUNKS: &str = "0\r\n\r\n";

fn sse_event(data: &str) -> String {
    format!("event: message\ndata: {data}\n\n")
}

fn progress() -> String {
    r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#
        .to_owned()
}

const DISCOVER_OK: &str =
    r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}"#;
const CALL_OK: &str = r#"{"content":[{"type":"text","text":"hi"}],"isError":false}"#;

/// A call result of `count` text blocks, each `bytes` long as written, with an escaped quote
/// and a newline every 40 bytes: each is longer than the call reader looks ahead for a string's
/// end, so each is given the rest of the answer as room, then gives back what it did not use.
fn long_texts(count: usize, bytes: usize) -> String {
    let line = format!("{}\\\"q\\\"\\n", "x".repeat(32));
    let text = line.repeat(bytes / line.len() + 1);
    let block = format!(r#"{{"type":"text","text":"{text}"}}"#);
    format!(
        r#"{{"content":[{}],"isError":false}}"#,
        vec![block; count].join(",")
    )
}

fn tool(name: &str) -> String {
    format!(r#"{{"name":"{name}","inputSchema":{{"type":"object"}}}}"#)
}

fn page(tools: &[String], next: Option<&str>) -> String {
    match next {
        Some(c) => format!(r#"{{"tools":[{}],"nextCursor":"{c}"}}"#, tools.join(",")),
        None => format!(r#"{{"tools":[{}]}}"#, tools.join(",")),
    }
}

/// The rules of a legacy handshake from a hint: `initialize` then `notifications/initialized`
/// (answered 202 by the default rule).
fn legacy_handshake() -> Vec<Rule> {
    vec![once(
        When::Rpc("initialize"),
        vec![respond(
            200,
            &[
                ("content-type", "application/json"),
                ("mcp-session-id", "sess-1"),
            ],
            result(
                r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"legacy","version":"1"}}"#,
            ),
        )],
    )]
}

fn sc(
    name: &'static str,
    category: &'static str,
    setup: Setup,
    op: Op,
    rules: Vec<Rule>,
    expect: Expect,
) -> Scenario {
    let rules = if setup == Setup::Legacy {
        let mut r = legacy_handshake();
        r.extend(rules);
        r
    } else {
        rules
    };
    Scenario {
        name,
        category,
        setup,
        op,
        budgets: test_budgets(),
        input: Input::NoHook,
        rules,
        expect,
        tasks: false,
        at_least: Duration::ZERO,
        max_requests: None,
        pieces: None,
        over_http2: false,
        http2_expect: None,
    }
}

/// A scenario against `connect`: every request gets `steps`.
fn connect(name: &'static str, cat: &'static str, steps: Vec<Step>, expect: Expect) -> Scenario {
    sc(
        name,
        cat,
        Setup::Fresh,
        Op::Connect,
        vec![always(When::Any, steps)],
        expect,
    )
}

/// A scenario against a modern `tools/call`: every call request gets `steps`.
fn call(name: &'static str, cat: &'static str, steps: Vec<Step>, expect: Expect) -> Scenario {
    sc(
        name,
        cat,
        Setup::Modern,
        Op::Call("{}"),
        vec![always(When::Rpc("tools/call"), steps)],
        expect,
    )
}

/// A scenario against a modern `tools/list`.
fn list(name: &'static str, cat: &'static str, rules: Vec<Rule>, expect: Expect) -> Scenario {
    sc(name, cat, Setup::Modern, Op::List, rules, expect)
}

fn fail(kind: ErrorKind, cause: Cause) -> Expect {
    Expect::Fail(kind, cause)
}

fn budget(b: Budget) -> Expect {
    Expect::Fail(CF, Cause::Budget(b))
}

fn with_budgets(mut s: Scenario, f: impl FnOnce(&mut Budgets)) -> Scenario {
    f(&mut s.budgets);
    s
}

fn with_input(mut s: Scenario, input: Input) -> Scenario {
    s.input = input;
    s
}

fn kib(n: usize, c: u8) -> Vec<u8> {
    vec![c; n * 1024]
}

// ---------------------------------------------------------------------------------------------
// The catalogue

/// Every scenario.
pub fn all() -> Vec<Scenario> {
    let mut v = Vec::new();
    v.extend(headers());
    v.extend(bodies());
    v.extend(chunked());
    v.extend(informational());
    v.extend(slow());
    v.extend(sse());
    v.extend(json_abuse());
    v.extend(pagination());
    v.extend(catalog());
    v.extend(content());
    v.extend(tiny_blocks());
    v.extend(input_required());
    v.extend(negotiation());
    v.extend(statuses());
    v.extend(closing());
    v.extend(tasks());
    v
}

fn closing() -> Vec<Scenario> {
    let c = "close";
    let legacy_close = |name, rules, expect| sc(name, c, Setup::Legacy, Op::Close, rules, expect);
    vec![
        legacy_close(
            "delete_never_answered",
            vec![always(When::Http("DELETE"), vec![Step::Hang])],
            Expect::Closed,
        ),
        legacy_close(
            "delete_answered_with_endless_body",
            vec![always(
                When::Http("DELETE"),
                vec![
                    send(format!("{JSON_HEAD_CL}\r\n")),
                    repeat(kib(4, b' '), FOREVER),
                ],
            )],
            Expect::Closed,
        ),
        legacy_close(
            "delete_refused",
            vec![always(When::Http("DELETE"), vec![respond(405, &[], "")])],
            Expect::Closed,
        ),
        sc(
            "modern_close_sends_nothing",
            c,
            Setup::Modern,
            Op::Close,
            vec![always(When::Any, vec![Step::Hang])],
            Expect::Closed,
        ),
    ]
}

fn headers() -> Vec<Scenario> {
    let c = "header";
    vec![
        connect(
            "one_endless_header_value",
            c,
            vec![
                send("HTTP/1.1 200 OK\r\nx-pad: "),
                repeat(kib(1, b'a'), FOREVER),
            ],
            budget(Budget::HeaderBlock),
        ),
        connect(
            "header_padding_many_lines",
            c,
            vec![
                send("HTTP/1.1 200 OK\r\n"),
                repeat(format!("x-pad: {}\r\n", "p".repeat(1000)), FOREVER),
            ],
            budget(Budget::HeaderBlock),
        ),
        connect(
            "header_count_flood",
            c,
            vec![
                send("HTTP/1.1 200 OK\r\n"),
                repeat("x-a: b\r\n", 100),
                send("content-length: 0\r\n\r\n"),
            ],
            budget(Budget::HeaderCount),
        ),
        connect(
            "endless_short_header_lines",
            c,
            vec![send("HTTP/1.1 200 OK\r\n"), repeat("x-a: b\r\n", FOREVER)],
            budget(Budget::HeaderBlock),
        ),
        connect(
            "endless_status_line",
            c,
            vec![send("HTTP/1.1 200 "), repeat(kib(1, b'O'), FOREVER)],
            budget(Budget::HeaderBlock),
        ),
        connect(
            "close_mid_status_line",
            c,
            vec![send("HTTP/1.1 20"), Step::Close],
            fail(CF, Cause::Http),
        ),
        connect(
            "close_mid_header",
            c,
            vec![send("HTTP/1.1 200 OK\r\ncontent-type: appl"), Step::Close],
            fail(CF, Cause::Http),
        ),
        connect(
            "not_http_at_all",
            c,
            vec![send("SSH-2.0-OpenSSH_9.6\r\n\r\n")],
            fail(CF, Cause::Http),
        ),
        connect(
            "http2_status_line",
            c,
            vec![send("HTTP/2 200\r\ncontent-length: 0\r\n\r\n")],
            fail(CF, Cause::Http),
        ),
        connect(
            "switching_protocols",
            c,
            vec![send(
                "HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\n\r\n",
            )],
            fail(CF, Cause::Http),
        ),
        connect(
            "nul_in_header",
            c,
            vec![send(
                "HTTP/1.1 200 OK\r\nx-a: b\0c\r\ncontent-length: 0\r\n\r\n",
            )],
            fail(CF, Cause::Http),
        ),
    ]
}

fn bodies() -> Vec<Scenario> {
    let c = "body";
    vec![
        connect(
            "content_length_beyond_budget",
            c,
            vec![send(format!("{JSON_HEAD_CL}content-length: 1000000000000\r\n\r\n{{")), Step::Hang],
            budget(Budget::ResponseBytes),
        ),
        connect(
            "content_length_u64_overflow",
            c,
            vec![send(format!("{JSON_HEAD_CL}content-length: 99999999999999999999999\r\n\r\n"))],
            fail(CF, Cause::Http),
        ),
        connect(
            "content_length_lies_short_then_close",
            c,
            vec![send(format!("{JSON_HEAD_CL}content-length: 500\r\n\r\n{{\"jsonrpc\":")), Step::Close],
            fail(CF, Cause::Http),
        ),
        connect(
            "content_length_lies_short_then_hang",
            c,
            vec![send(format!("{JSON_HEAD_CL}content-length: 500\r\n\r\n{{\"jsonrpc\":")), Step::Hang],
            budget(Budget::RequestTime),
        ),
        connect(
            "content_length_lies_long_truncates_json",
            c,
            vec![send(format!(
                "{JSON_HEAD_CL}content-length: 20\r\n\r\n{}",
                result(DISCOVER_OK)
            ))],
            fail(CF, Cause::Malformed),
        ),
        connect(
            "conflicting_content_lengths",
            c,
            vec![send(format!("{JSON_HEAD_CL}content-length: 2\r\ncontent-length: 3\r\n\r\n{{}}"))],
            fail(CF, Cause::Http),
        ),
        connect(
            "content_length_and_chunked",
            c,
            vec![send(format!(
                "{JSON_HEAD_CL}content-length: 2\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{{}}\r\n0\r\n\r\n"
            ))],
            fail(CF, Cause::Http),
        ),
        connect(
            "content_length_not_a_number",
            c,
            vec![send(format!("{JSON_HEAD_CL}content-length: 1e3\r\n\r\n"))],
            fail(CF, Cause::Http),
        ),
        connect(
            "endless_close_delimited_body",
            c,
            vec![send(format!("{JSON_HEAD_CL}\r\n")), repeat(kib(4, b' '), FOREVER)],
            budget(Budget::ResponseBytes),
        ),
        list(
            "byte_budget_is_cumulative_across_exchanges",
            c,
            vec![always(When::Rpc("tools/list"), vec![ok(&format!(r#"{{"tools":[],"nextCursor":"c$SEQ","pad":"{}"}}"#, "p".repeat(300_000)))])],
            budget(Budget::ResponseBytes),
        ),
        connect(
            "accept_and_close",
            c,
            vec![Step::Close],
            fail(CF, Cause::Eof),
        ),
        connect(
            "accept_and_never_answer",
            c,
            vec![Step::Hang],
            budget(Budget::RequestTime),
        ),
        connect(
            "unexpected_content_type",
            c,
            vec![respond(200, &[("content-type", "text/html")], "<html></html>")],
            fail(CF, Cause::ContentType),
        ),
    ]
}

fn chunked() -> Vec<Scenario> {
    let c = "chunked";
    let head =
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n";
    vec![
        connect(
            "chunk_size_beyond_budget",
            c,
            vec![send(format!("{head}fffffffffff\r\n{{")), Step::Hang],
            budget(Budget::ResponseBytes),
        ),
        connect(
            "chunk_size_overflows_u64",
            c,
            vec![send(format!("{head}1ffffffffffffffff\r\n"))],
            fail(CF, Cause::Http),
        ),
        connect(
            "chunk_size_bad_hex",
            c,
            vec![send(format!("{head}zz\r\n"))],
            fail(CF, Cause::Http),
        ),
        connect(
            "chunk_size_negative",
            c,
            vec![send(format!("{head}-1\r\n"))],
            fail(CF, Cause::Http),
        ),
        connect(
            "endless_chunk_extension",
            c,
            vec![send(format!("{head}5;ext=")), repeat(kib(1, b'e'), FOREVER)],
            budget(Budget::ChunkLine),
        ),
        connect(
            "endless_leading_zeros",
            c,
            vec![send(head), repeat(kib(1, b'0'), FOREVER)],
            budget(Budget::ChunkLine),
        ),
        connect(
            "endless_trailers",
            c,
            vec![send(format!("{head}0\r\n")), repeat(format!("x-t: {}\r\n", "t".repeat(500)), FOREVER)],
            budget(Budget::HeaderBlock),
        ),
        connect(
            "trailer_count_flood",
            c,
            vec![send(format!("{head}0\r\n")), repeat("x-t: 1\r\n", 100), send("\r\n")],
            budget(Budget::HeaderCount),
        ),
        connect(
            "endless_small_chunks",
            c,
            vec![send(head), repeat("1\r\n \r\n", FOREVER)],
            budget(Budget::ResponseBytes),
        ),
        connect(
            "endless_big_chunks",
            c,
            vec![send(head), repeat(format!("1000\r\n{}\r\n", " ".repeat(4096)), FOREVER)],
            budget(Budget::ResponseBytes),
        ),
        connect(
            "close_mid_chunk",
            c,
            vec![send(format!("{head}100\r\n{{\"jsonrpc\"")), Step::Close],
            fail(CF, Cause::Http),
        ),
        connect(
            "close_mid_chunk_size_line",
            c,
            vec![send(format!("{head}1")), Step::Close],
            fail(CF, Cause::Http),
        ),
        connect(
            "chunk_data_without_crlf",
            c,
            vec![send(format!("{head}2\r\n{{}}XX0\r\n\r\n"))],
            fail(CF, Cause::Http),
        ),
        connect(
            "transfer_encoding_gzip",
            c,
            vec![send("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: gzip, chunked\r\n\r\n0\r\n\r\n")],
            fail(CF, Cause::Http),
        ),
    ]
}

fn informational() -> Vec<Scenario> {
    let c = "1xx";
    vec![
        connect(
            "continue_flood",
            c,
            vec![repeat("HTTP/1.1 100 Continue\r\n\r\n", FOREVER)],
            budget(Budget::InformationalResponses),
        ),
        connect(
            "early_hints_with_endless_headers",
            c,
            vec![
                send("HTTP/1.1 103 Early Hints\r\n"),
                repeat(format!("link: <{}>\r\n", "l".repeat(200)), FOREVER),
            ],
            budget(Budget::HeaderBlock),
        ),
        connect(
            "informational_then_valid_answer",
            c,
            vec![
                send(
                    "HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n",
                ),
                ok(DISCOVER_OK),
            ],
            Expect::Connected,
        ),
    ]
}

fn slow() -> Vec<Scenario> {
    let c = "slow";
    let answer = format!(
        "{JSON_HEAD_CL}content-length: {}\r\n\r\n{}",
        result(DISCOVER_OK).len(),
        result(DISCOVER_OK)
    )
    .replace("$ID", "1");
    vec![
        connect(
            "slow_loris_status_line",
            c,
            vec![trickle("HTTP/1.1 200 OK\r\n", 1, 5_000)],
            budget(Budget::RequestTime),
        ),
        connect(
            "slow_loris_headers",
            c,
            vec![
                send("HTTP/1.1 200 OK\r\n"),
                trickle("x-a: b\r\n".repeat(100), 1, 1_000),
            ],
            budget(Budget::RequestTime),
        ),
        connect(
            "slow_loris_body",
            c,
            vec![trickle(answer.as_bytes(), 1, 500)],
            budget(Budget::RequestTime),
        ),
        connect(
            "wait_past_request_time_then_answer",
            c,
            vec![Step::Wait(Duration::from_secs(31)), ok(DISCOVER_OK)],
            budget(Budget::RequestTime),
        ),
        list(
            "slow_loris_listing_pages",
            c,
            vec![always(
                When::Rpc("tools/list"),
                vec![
                    Step::Wait(Duration::from_secs(25)),
                    ok(&page(&[tool("a")], Some("c$SEQ"))),
                ],
            )],
            budget(Budget::ListTime),
        ),
        call(
            "slow_loris_call_sse_keepalive",
            c,
            vec![
                send(SSE_HEAD),
                trickle(
                    chunk(": keepalive\n").render_bytes().repeat(1000),
                    100,
                    10_000,
                ),
            ],
            budget(Budget::CallTime),
        ),
        call(
            "call_never_answered",
            c,
            vec![Step::Hang],
            budget(Budget::CallTime),
        ),
    ]
}

trait RenderBytes {
    fn render_bytes(&self) -> Vec<u8>;
}

impl RenderBytes for Step {
    fn render_bytes(&self) -> Vec<u8> {
        super::script::render(self).unwrap_or_default()
    }
}

fn sse() -> Vec<Scenario> {
    let c = "sse";
    let legacy_call =
        |name, rules, expect| sc(name, c, Setup::Legacy, Op::Call("{}"), rules, expect);
    vec![
        call(
            "endless_data_line",
            c,
            vec![send(SSE_HEAD), chunk("data: "), repeat(chunk(kib(4, b'a')).render_bytes(), FOREVER)],
            budget(Budget::SseEvent),
        ),
        call(
            "endless_field_name",
            c,
            vec![send(SSE_HEAD), repeat(chunk(kib(4, b'x')).render_bytes(), FOREVER)],
            budget(Budget::SseEvent),
        ),
        call(
            "endless_events_before_the_result",
            c,
            vec![send(SSE_HEAD), repeat(chunk(sse_event(&progress())).render_bytes(), FOREVER)],
            budget(Budget::ResponseBytes),
        ),
        call(
            "endless_comments",
            c,
            vec![send(SSE_HEAD), repeat(chunk(format!(": {}\n", "c".repeat(1000))).render_bytes(), FOREVER)],
            budget(Budget::ResponseBytes),
        ),
        call(
            "endless_empty_events",
            c,
            vec![send(SSE_HEAD), repeat(chunk("\n\n\n\n\n\n\n\n").render_bytes(), FOREVER)],
            budget(Budget::ResponseBytes),
        ),
        call(
            "modern_stream_ends_without_result",
            c,
            vec![send(SSE_HEAD), chunk(sse_event(&progress())), send(END_CHUNKS)],
            budget(Budget::ResponsesPerRequest),
        ),
        call(
            "modern_close_mid_event",
            c,
            vec![send(SSE_HEAD), chunk("data: {\"jsonrpc\":\"2.0\",\"id\":$ID,"), Step::Close],
            budget(Budget::ResponsesPerRequest),
        ),
        legacy_call(
            "legacy_advancing_id_reconnect_loop",
            vec![
                always(When::Rpc("tools/call"), vec![send(SSE_HEAD), chunk("id: e$SEQ\nretry: 0\ndata: \n\n"), send(END_CHUNKS)]),
                always(When::Http("GET"), vec![send(SSE_HEAD), chunk(format!("id: e$SEQ\nretry: 0\n{}", sse_event(&progress()))), send(END_CHUNKS)]),
            ],
            budget(Budget::ResponsesPerRequest),
        ),
        legacy_call(
            "legacy_reconnect_same_id",
            vec![
                always(When::Rpc("tools/call"), vec![send(SSE_HEAD), chunk("id: e1\nretry: 0\ndata: \n\n"), send(END_CHUNKS)]),
                always(When::Http("GET"), vec![send(SSE_HEAD), chunk("id: e1\nretry: 0\n\n"), send(END_CHUNKS)]),
            ],
            budget(Budget::StalledResumptions),
        ),
        legacy_call(
            "legacy_stream_ends_without_ids",
            vec![always(When::Rpc("tools/call"), vec![send(SSE_HEAD), chunk(sse_event(&progress())), send(END_CHUNKS)])],
            fail(CF, Cause::StreamEnded),
        ),
        legacy_call(
            "legacy_huge_retry_is_capped",
            vec![
                always(When::Rpc("tools/call"), vec![send(SSE_HEAD), chunk("id: e1\nretry: 99999999999999\ndata: \n\n"), send(END_CHUNKS)]),
                once(When::Http("GET"), vec![send(SSE_HEAD), chunk(sse_event(&result(CALL_OK))), send(END_CHUNKS)]),
            ],
            Expect::Called { blocks: 1, unknown: 0, invalid: 0 },
        ),
        legacy_call(
            "legacy_retry_not_a_number",
            vec![
                always(When::Rpc("tools/call"), vec![send(SSE_HEAD), chunk("id: e1\nretry: soon\nretry: -5\ndata: \n\n"), send(END_CHUNKS)]),
                once(When::Http("GET"), vec![send(SSE_HEAD), chunk(sse_event(&result(CALL_OK))), send(END_CHUNKS)]),
            ],
            Expect::Called { blocks: 1, unknown: 0, invalid: 0 },
        ),
        legacy_call(
            "legacy_resumption_answered_with_json_error",
            vec![
                always(When::Rpc("tools/call"), vec![send(SSE_HEAD), chunk("id: e1\nretry: 0\ndata: \n\n"), send(END_CHUNKS)]),
                always(When::Http("GET"), vec![respond(405, &[], "")]),
            ],
            fail(CF, Cause::Status(405)),
        ),
        call(
            "many_texts_longer_than_the_look_ahead",
            c,
            vec![ok(&long_texts(120, 6 * 1024))],
            Expect::Called { blocks: 120, unknown: 0, invalid: 0 },
        ),
        call(
            "bom_then_result",
            c,
            vec![send(SSE_HEAD), chunk(format!("\u{feff}{}", sse_event(&result(CALL_OK)))), send(END_CHUNKS)],
            Expect::Called { blocks: 1, unknown: 0, invalid: 0 },
        ),
        call(
            "mixed_line_endings",
            c,
            vec![
                send(SSE_HEAD),
                chunk(format!(": c\r\nevent: message\rdata: {}\r\n\r\ndata: {}\r\r", progress(), result(CALL_OK))),
                send(END_CHUNKS),
            ],
            Expect::Called { blocks: 1, unknown: 0, invalid: 0 },
        ),
        call(
            "result_split_over_data_lines",
            c,
            vec![send(SSE_HEAD), chunk("data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":$ID,\"result\":\ndata: {\"content\":[]}}\n\n"), send(END_CHUNKS)],
            Expect::Called { blocks: 0, unknown: 0, invalid: 0 },
        ),
        call(
            "server_requests_before_the_result",
            c,
            vec![
                send(SSE_HEAD),
                repeat(chunk(sse_event(r#"{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{}}"#)).render_bytes(), 50),
                chunk(sse_event(&result(CALL_OK))),
                send(END_CHUNKS),
            ],
            Expect::Called { blocks: 1, unknown: 0, invalid: 0 },
        ),
    ]
}

fn json_abuse() -> Vec<Scenario> {
    let c = "json";
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let mut many_versions: Vec<String> = (0..20_000)
        .map(|i| format!("\"1999-01-{:02}\"", i % 28))
        .collect();
    many_versions.push("\"2026-07-28\"".into());
    vec![
        call(
            "deep_nesting",
            c,
            vec![ok(&format!(
                r#"{{"content":[],"structuredContent":{deep}}}"#
            ))],
            Expect::Called {
                blocks: 0,
                unknown: 0,
                invalid: 0,
            },
        ),
        call(
            "number_beyond_f64_in_structured_content",
            c,
            vec![ok(
                r#"{"content":[{"type":"text","text":"x"}],"structuredContent":{"n":1e400}}"#,
            )],
            Expect::Called {
                blocks: 1,
                unknown: 0,
                invalid: 0,
            },
        ),
        list(
            "number_beyond_f64_in_schema",
            c,
            vec![always(
                When::Rpc("tools/list"),
                vec![ok(
                    r#"{"tools":[{"name":"a","inputSchema":{"type":"object","maximum":1e400}},{"name":"b","inputSchema":{"type":"object"}}]}"#,
                )],
            )],
            // The schema is kept byte for byte: numbers are delimited, never evaluated.
            Expect::Listed {
                tools: 2,
                refused: 0,
            },
        ),
        call(
            "long_integer_in_structured_content",
            c,
            vec![ok(&format!(
                r#"{{"content":[{{"type":"text","text":"x"}}],"structuredContent":{{"n":{}}}}}"#,
                "9".repeat(400)
            ))],
            Expect::Called {
                blocks: 1,
                unknown: 0,
                invalid: 0,
            },
        ),
        call(
            "huge_string_within_budget",
            c,
            vec![ok(&format!(
                r#"{{"content":[{{"type":"text","text":"{}"}}]}}"#,
                "s".repeat(900_000)
            ))],
            Expect::Called {
                blocks: 1,
                unknown: 0,
                invalid: 0,
            },
        ),
        call(
            "duplicate_result_keys",
            c,
            vec![json(
                200,
                format!(r#"{{"jsonrpc":"2.0","id":$ID,"result":{CALL_OK},"result":{CALL_OK}}}"#),
            )],
            fail(CF, Cause::Malformed),
        ),
        call(
            "duplicate_id_keys",
            c,
            vec![json(
                200,
                format!(r#"{{"jsonrpc":"2.0","id":$ID,"id":99,"result":{CALL_OK}}}"#),
            )],
            fail(CF, Cause::Malformed),
        ),
        call(
            "invalid_utf8",
            c,
            vec![json(
                200,
                [
                    result(r#"{"content":[{"type":"text","text":""#).as_bytes(),
                    b"\xff\xfe",
                    br#""}]}}"#,
                ]
                .concat(),
            )],
            fail(CF, Cause::Malformed),
        ),
        call(
            "wrong_id",
            c,
            vec![json(
                200,
                format!(r#"{{"jsonrpc":"2.0","id":424242,"result":{CALL_OK}}}"#),
            )],
            fail(CF, Cause::WrongId),
        ),
        call(
            "id_as_string",
            c,
            vec![json(
                200,
                format!(r#"{{"jsonrpc":"2.0","id":"$ID","result":{CALL_OK}}}"#),
            )],
            fail(CF, Cause::WrongId),
        ),
        call(
            "batch_answer",
            c,
            vec![json(200, format!("[{}]", result(CALL_OK)))],
            fail(CF, Cause::Batch),
        ),
        call(
            "notification_instead_of_response",
            c,
            vec![json(200, progress())],
            fail(CF, Cause::Malformed),
        ),
        call(
            "result_and_error_both",
            c,
            vec![json(
                200,
                format!(
                    r#"{{"jsonrpc":"2.0","id":$ID,"result":{CALL_OK},"error":{{"code":1,"message":"x"}}}}"#
                ),
            )],
            fail(CF, Cause::Malformed),
        ),
        call(
            "not_json",
            c,
            vec![json(200, "<html>oops</html>")],
            fail(CF, Cause::Malformed),
        ),
        call(
            "empty_json_body",
            c,
            vec![json(200, "")],
            fail(CF, Cause::Malformed),
        ),
        call(
            "rpc_error_with_huge_message",
            c,
            vec![json(
                200,
                format!(
                    r#"{{"jsonrpc":"2.0","id":$ID,"error":{{"code":-32000,"message":"{}","data":"{}"}}}}"#,
                    "m".repeat(300_000),
                    "d".repeat(300_000)
                ),
            )],
            fail(SA, Cause::Rpc(-32000)),
        ),
        sc(
            "mutual_version_beyond_the_first_64",
            c,
            Setup::Fresh,
            Op::Connect,
            vec![always(
                When::Any,
                vec![json(
                    400,
                    rpc_error(
                        -32022,
                        Some(&format!(r#"{{"supported":[{}]}}"#, many_versions.join(","))),
                    ),
                )],
            )],
            fail(CF, Cause::NoMutualVersion),
        ),
    ]
}

fn pagination() -> Vec<Scenario> {
    let c = "pagination";
    vec![
        list(
            "same_cursor_forever",
            c,
            vec![always(
                When::Rpc("tools/list"),
                vec![ok(&page(&[tool("a")], Some("c")))],
            )],
            fail(CF, Cause::PaginationLoop),
        ),
        list(
            "cursor_cycle_a_b_a",
            c,
            vec![
                once(
                    When::Rpc("tools/list"),
                    vec![ok(&page(&[tool("a")], Some("A")))],
                ),
                once(
                    When::Rpc("tools/list"),
                    vec![ok(&page(&[tool("b")], Some("B")))],
                ),
                always(
                    When::Rpc("tools/list"),
                    vec![ok(&page(&[tool("c")], Some("A")))],
                ),
            ],
            fail(CF, Cause::PaginationLoop),
        ),
        list(
            "endless_unique_cursors",
            c,
            vec![always(
                When::Rpc("tools/list"),
                vec![ok(&page(&[tool("t$SEQ")], Some("c$SEQ")))],
            )],
            budget(Budget::Pages),
        ),
        list(
            "empty_string_cursor",
            c,
            vec![always(
                When::Rpc("tools/list"),
                vec![ok(&page(&[tool("a")], Some("")))],
            )],
            fail(CF, Cause::PaginationLoop),
        ),
        list(
            "empty_string_cursor_once",
            c,
            vec![
                once(
                    When::Rpc("tools/list"),
                    vec![ok(&page(&[tool("a")], Some("")))],
                ),
                once(When::Rpc("tools/list"), vec![ok(&page(&[tool("b")], None))]),
            ],
            Expect::Listed {
                tools: 2,
                refused: 0,
            },
        ),
        list(
            "huge_cursors",
            c,
            vec![always(
                When::Rpc("tools/list"),
                vec![ok(&page(
                    &[],
                    Some(&format!("$SEQ{}", "c".repeat(200_000))),
                ))],
            )],
            budget(Budget::ResponseBytes),
        ),
        list(
            "cursor_not_a_string",
            c,
            vec![always(
                When::Rpc("tools/list"),
                vec![ok(r#"{"tools":[],"nextCursor":7}"#)],
            )],
            fail(SA, Cause::InvalidAnswer),
        ),
        list(
            "pages_of_nothing_forever",
            c,
            vec![always(
                When::Rpc("tools/list"),
                vec![ok(&page(&[], Some("p$SEQ")))],
            )],
            budget(Budget::Pages),
        ),
    ]
}

fn catalog() -> Vec<Scenario> {
    let c = "catalog";
    let entries = [
        tool("good"),
        r#"{"inputSchema":{"type":"object"}}"#.to_owned(),
        r#"{"name":7,"inputSchema":{"type":"object"}}"#.to_owned(),
        r#"{"name":"","inputSchema":{"type":"object"}}"#.to_owned(),
        tool("bad name!"),
        tool(&"n".repeat(129)),
        r#"{"name":"noschema"}"#.to_owned(),
        r#"{"name":"arrayschema","inputSchema":{"type":"array"}}"#.to_owned(),
        r#"{"name":"schemanotobject","inputSchema":"object"}"#.to_owned(),
        r#"{"name":"desc","description":7,"inputSchema":{"type":"object"}}"#.to_owned(),
        tool("good"),
        "17".to_owned(),
        "null".to_owned(),
    ];
    let many_params = format!(
        r#"{{"name":"many","inputSchema":{{"type":"object","properties":{{{}}}}}}}"#,
        (0..20_000)
            .map(|i| format!(r#""p{i}":{{"type":"string","x-mcp-header":"P{i}"}}"#))
            .collect::<Vec<_>>()
            .join(",")
    );
    let tiny: Vec<String> = (0..100_000)
        .map(|i| format!(r#"{{"name":"t{i}","inputSchema":{{"type":"object"}}}}"#))
        .collect();
    let tiny_meta: Vec<String> = (0..100_000)
        .map(|i| format!(r#"{{"name":"t{i}","inputSchema":{{"type":"object"}},"_meta":{{}}}}"#))
        .collect();
    let icons = vec![r#"{"src":"a:"}"#; 40].join(",");
    let dropped_icons: Vec<String> = (0..5_000)
        .map(|i| {
            format!(
                r#"{{"name":"t{i}","inputSchema":{{"type":"object"}},"title":"\u0074","icons":[{icons}]}}"#
            )
        })
        .collect();
    vec![
        list(
            "every_refusal_reason",
            c,
            vec![always(
                When::Rpc("tools/list"),
                vec![ok(&page(&entries, None))],
            )],
            Expect::Listed {
                tools: 1,
                refused: 12,
            },
        ),
        list(
            // An escaped member name sends the page to the serde reading, which must not keep
            // a list of the entries either.
            "three_hundred_thousand_empty_entries_read_the_serde_way",
            c,
            vec![always(
                When::Rpc("tools/list"),
                vec![ok(&format!(
                    r#"{{"tool\u0073":[{}]}}"#,
                    vec!["{}"; 300_000].join(",")
                ))],
            )],
            Expect::Listed {
                tools: 0,
                refused: 300_000,
            },
        ),
        list(
            "three_hundred_thousand_empty_entries",
            c,
            vec![always(
                When::Rpc("tools/list"),
                vec![ok(&page(&vec!["{}".to_owned(); 300_000], None))],
            )],
            Expect::Listed {
                tools: 0,
                refused: 300_000,
            },
        ),
        with_budgets(
            list(
                "hundred_thousand_tiny_tools",
                c,
                vec![always(
                    When::Rpc("tools/list"),
                    vec![ok(&page(&tiny, None))],
                )],
                Expect::Listed {
                    tools: 100_000,
                    refused: 0,
                },
            ),
            |b| b.response_bytes = Budgets::default().response_bytes,
        ),
        with_budgets(
            list(
                // The smallest tools that carry the rest of a definition: each costs an
                // allocation beside its span, counted by the same memory rule.
                "hundred_thousand_tiny_tools_with_meta",
                c,
                vec![always(
                    When::Rpc("tools/list"),
                    vec![ok(&page(&tiny_meta, None))],
                )],
                Expect::Listed {
                    tools: 100_000,
                    refused: 0,
                },
            ),
            |b| b.response_bytes = Budgets::default().response_bytes,
        ),
        with_budgets(
            list(
                // Icons with other schemes are dropped, each with a note: a tool keeps the
                // first `MAX_NOTES_KEPT` and counts the rest.
                "tiny_tools_with_many_dropped_icons",
                c,
                vec![always(
                    When::Rpc("tools/list"),
                    vec![ok(&page(&dropped_icons, None))],
                )],
                Expect::Listed {
                    tools: 5_000,
                    refused: 0,
                },
            ),
            |b| b.response_bytes = Budgets::default().response_bytes,
        ),
        list(
            // Each parameter is a header on every call: a tool with more than
            // `MAX_HEADER_PARAMS` is refused, and none of them is kept.
            "a_tool_with_twenty_thousand_header_parameters",
            c,
            vec![always(
                When::Rpc("tools/list"),
                vec![ok(&page(&[many_params.clone(), tool("ok")], None))],
            )],
            Expect::Listed {
                tools: 1,
                refused: 1,
            },
        ),
        list(
            "deeply_nested_schema",
            c,
            vec![always(
                When::Rpc("tools/list"),
                vec![ok(&format!(
                    r#"{{"tools":[{{"name":"deep","inputSchema":{{"type":"object","properties":{{"a":{}1{}}}}}}},{}]}}"#,
                    "[".repeat(50_000),
                    "]".repeat(50_000),
                    tool("ok")
                ))],
            )],
            Expect::Listed {
                tools: 1,
                refused: 1,
            },
        ),
        list(
            "tools_not_an_array",
            c,
            vec![always(
                When::Rpc("tools/list"),
                vec![ok(r#"{"tools":{"a":1}}"#)],
            )],
            fail(SA, Cause::InvalidAnswer),
        ),
        list(
            "unexpected_result_type",
            c,
            vec![always(
                When::Rpc("tools/list"),
                vec![ok(r#"{"tools":[],"resultType":"input_required"}"#)],
            )],
            fail(SA, Cause::InvalidAnswer),
        ),
        list(
            "result_not_an_object",
            c,
            vec![always(When::Rpc("tools/list"), vec![ok("[]")])],
            fail(SA, Cause::InvalidAnswer),
        ),
    ]
}

/// A call result of `count` copies of `block` (after `first`, if given), its `content` member
/// named `key` as written.
fn blocks(key: &str, first: Option<&str>, block: &str, count: usize) -> String {
    let mut all: Vec<&str> = first.into_iter().collect();
    all.extend(std::iter::repeat_n(block, count));
    format!(r#"{{"{key}":[{}],"isError":false}}"#, all.join(","))
}

/// The smallest blocks of each kind a result keeps, and ones it only counts, in answers near the
/// 1 MiB test byte budget: a block holds far more than its bytes on the wire, so a result keeps
/// at most one per `CONTENT_BLOCK_BYTES` of the byte budget (4 096 here).
fn tiny_blocks() -> Vec<Scenario> {
    let c = "content";
    let cap = test_budgets().content_blocks() as usize;
    const EMPTY_TEXT: &str = r#"{"type":"text","text":""}"#;
    vec![
        call(
            "forty_thousand_empty_text_blocks",
            c,
            vec![ok(&blocks("content", None, EMPTY_TEXT, 40_000))],
            budget(Budget::ContentBlocks),
        ),
        call(
            // An escaped member name sends the result to the serde reading, which must keep no
            // list of the blocks either.
            "forty_thousand_empty_text_blocks_read_the_serde_way",
            c,
            vec![ok(&blocks(r"con\u0074ent", None, EMPTY_TEXT, 40_000))],
            budget(Budget::ContentBlocks),
        ),
        call(
            "empty_text_blocks_up_to_the_cap",
            c,
            vec![ok(&blocks("content", None, EMPTY_TEXT, cap))],
            Expect::Called {
                blocks: cap,
                unknown: 0,
                invalid: 0,
            },
        ),
        call(
            "twenty_five_thousand_empty_image_blocks",
            c,
            vec![ok(&blocks(
                "content",
                None,
                r#"{"type":"image","data":"","mimeType":""}"#,
                25_000,
            ))],
            budget(Budget::ContentBlocks),
        ),
        call(
            "eighteen_thousand_tiny_resource_blocks",
            c,
            vec![ok(&blocks(
                "content",
                None,
                r#"{"type":"resource","resource":{"uri":"u","text":"t"}}"#,
                18_000,
            ))],
            budget(Budget::ContentBlocks),
        ),
        call(
            "sixteen_thousand_tiny_resource_links",
            c,
            vec![ok(&blocks(
                "content",
                None,
                r#"{"type":"resource_link","uri":"u","name":"n","mimeType":"m"}"#,
                16_000,
            ))],
            budget(Budget::ContentBlocks),
        ),
        call(
            // Dropped blocks are counted, not kept: any number of them is fine.
            "seventy_thousand_unknown_blocks_read_the_serde_way",
            c,
            vec![ok(&blocks(
                r"con\u0074ent",
                Some(r#"{"type":"text","text":"kept"}"#),
                r#"{"type":"x"}"#,
                70_000,
            ))],
            Expect::Called {
                blocks: 1,
                unknown: 70_000,
                invalid: 0,
            },
        ),
        call(
            "sixty_thousand_malformed_blocks",
            c,
            vec![ok(&blocks(
                "content",
                Some(r#"{"type":"text","text":"kept"}"#),
                r#"{"type":"text"}"#,
                60_000,
            ))],
            Expect::Called {
                blocks: 1,
                unknown: 0,
                invalid: 60_000,
            },
        ),
        call(
            // `_meta` and annotations are skipped, never kept.
            "a_block_with_eighty_thousand_meta_keys",
            c,
            vec![ok(&format!(
                r#"{{"content":[{{"type":"text","text":"kept","annotations":{{"priority":1}},"_meta":{{{}}}}}]}}"#,
                (0..80_000)
                    .map(|i| format!(r#""k{i}":0"#))
                    .collect::<Vec<_>>()
                    .join(",")
            ))],
            Expect::Called {
                blocks: 1,
                unknown: 0,
                invalid: 0,
            },
        ),
    ]
}

fn content() -> Vec<Scenario> {
    let c = "content";
    vec![
        call(
            "invalid_base64_only",
            c,
            vec![ok(
                r#"{"content":[{"type":"image","data":"!!!not base64","mimeType":"image/png"}]}"#,
            )],
            fail(SA, Cause::InvalidAnswer),
        ),
        call(
            "invalid_base64_next_to_text",
            c,
            vec![ok(
                r#"{"content":[{"type":"text","text":"t"},{"type":"audio","data":"@@","mimeType":"audio/wav"}]}"#,
            )],
            Expect::Called {
                blocks: 1,
                unknown: 0,
                invalid: 1,
            },
        ),
        call(
            "unknown_types_only",
            c,
            vec![ok(
                r#"{"content":[{"type":"hologram"},{"type":"smell","x":1}]}"#,
            )],
            fail(SA, Cause::InvalidAnswer),
        ),
        call(
            "giant_text_within_budget",
            c,
            vec![ok(&format!(
                r#"{{"content":[{{"type":"text","text":"{}"}},{{"type":"text","text":"{}"}}]}}"#,
                "g".repeat(400_000),
                "h".repeat(400_000)
            ))],
            Expect::Called {
                blocks: 2,
                unknown: 0,
                invalid: 0,
            },
        ),
        call(
            "giant_text_beyond_budget",
            c,
            vec![ok(&format!(
                r#"{{"content":[{{"type":"text","text":"{}"}}]}}"#,
                "g".repeat(1_100_000)
            ))],
            budget(Budget::ResponseBytes),
        ),
        call(
            "content_missing",
            c,
            vec![ok(r#"{"isError":false}"#)],
            fail(SA, Cause::InvalidAnswer),
        ),
        call(
            "text_block_without_text",
            c,
            vec![ok(
                r#"{"content":[{"type":"text"},{"type":"text","text":"ok"}]}"#,
            )],
            Expect::Called {
                blocks: 1,
                unknown: 0,
                invalid: 1,
            },
        ),
        call(
            "tool_error_is_a_result",
            c,
            vec![ok(
                r#"{"content":[{"type":"text","text":"boom"}],"isError":true}"#,
            )],
            Expect::Called {
                blocks: 1,
                unknown: 0,
                invalid: 0,
            },
        ),
    ]
}

fn input_required() -> Vec<Scenario> {
    let c = "input_required";
    let requests = r#"{"ask":{"method":"elicitation/create","params":{"message":"?","requestedSchema":{"type":"object"}}}}"#;
    vec![
        call(
            "endless_load_shedding",
            c,
            vec![ok(r#"{"resultType":"input_required","requestState":"busy"}"#)],
            budget(Budget::ResponsesPerRequest),
        ),
        call(
            "state_not_a_string",
            c,
            vec![ok(r#"{"resultType":"input_required","requestState":{"s":1}}"#)],
            fail(SA, Cause::InvalidAnswer),
        ),
        call(
            "neither_requests_nor_state",
            c,
            vec![ok(r#"{"resultType":"input_required"}"#)],
            fail(SA, Cause::InvalidAnswer),
        ),
        call(
            "empty_requests_without_state",
            c,
            vec![ok(r#"{"resultType":"input_required","inputRequests":{}}"#)],
            fail(SA, Cause::InvalidAnswer),
        ),
        call(
            "requests_without_hook",
            c,
            vec![ok(&format!(r#"{{"resultType":"input_required","inputRequests":{requests}}}"#))],
            fail(SA, Cause::InvalidAnswer),
        ),
        with_input(
            call(
                "requests_without_state_answered_forever",
                c,
                vec![ok(&format!(r#"{{"resultType":"input_required","inputRequests":{requests}}}"#))],
                budget(Budget::ResponsesPerRequest),
            ),
            Input::Answer(r#"{"ask":{"action":"decline"}}"#),
        ),
        with_input(
            call(
                "requests_not_an_object",
                c,
                vec![ok(r#"{"resultType":"input_required","inputRequests":["a"]}"#)],
                fail(SA, Cause::InvalidAnswer),
            ),
            Input::Answer("{}"),
        ),
        with_input(
            call(
                "input_round_then_result",
                c,
                vec![],
                Expect::Called { blocks: 1, unknown: 0, invalid: 0 },
            ),
            Input::Answer(r#"{"ask":{"action":"accept","content":{}}}"#),
        )
        .with_rules(vec![
            once(When::Rpc("tools/call"), vec![ok(&format!(r#"{{"resultType":"input_required","inputRequests":{requests},"requestState":"s1"}}"#))]),
            once(When::Rpc("tools/call"), vec![ok(CALL_OK)]),
        ]),
    ]
}

impl Scenario {
    fn with_rules(mut self, rules: Vec<Rule>) -> Scenario {
        self.rules = rules;
        self
    }
}

fn negotiation() -> Vec<Scenario> {
    let c = "negotiation";
    let huge: Vec<String> = (0..50_000)
        .map(|i| format!("\"2099-{:02}-{:02}\"", i % 12 + 1, i % 28 + 1))
        .collect();
    let legacy_list = |name, rules, expect| sc(name, c, Setup::Legacy, Op::List, rules, expect);
    vec![
        connect(
            "unsupported_version_no_mutual",
            c,
            vec![json(
                400,
                rpc_error(
                    -32022,
                    Some(r#"{"supported":["2099-01-01"],"requested":"2026-07-28"}"#),
                ),
            )],
            fail(CF, Cause::NoMutualVersion),
        ),
        connect(
            "unsupported_version_enormous_list_no_mutual",
            c,
            vec![json(
                400,
                rpc_error(
                    -32022,
                    Some(&format!(r#"{{"supported":[{}]}}"#, huge.join(","))),
                ),
            )],
            fail(CF, Cause::NoMutualVersion),
        ),
        connect(
            "unsupported_version_list_of_numbers",
            c,
            vec![json(
                400,
                rpc_error(
                    -32022,
                    Some(&format!(
                        r#"{{"supported":[{}"2099-01-01"]}}"#,
                        "0,".repeat(400_000)
                    )),
                ),
            )],
            fail(CF, Cause::NoMutualVersion),
        ),
        connect(
            "discover_enormous_supported_versions",
            c,
            vec![ok(&format!(
                r#"{{"supportedVersions":[{}],"capabilities":{{}}}}"#,
                huge.join(",")
            ))],
            fail(CF, Cause::NoMutualVersion),
        ),
        connect(
            "unsupported_version_without_data",
            c,
            vec![json(400, rpc_error(-32022, None))],
            fail(CF, Cause::NoMutualVersion),
        ),
        sc(
            "discover_answered_with_legacy_initialize_shape",
            c,
            Setup::Fresh,
            Op::Connect,
            vec![always(
                When::Rpc("server/discover"),
                vec![ok(
                    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"x","version":"1"}}"#,
                )],
            )],
            fail(SA, Cause::InvalidAnswer),
        ),
        sc(
            "initialize_counter_offers_unknown_version",
            c,
            Setup::Fresh,
            Op::Connect,
            vec![
                always(When::Rpc("server/discover"), vec![respond(404, &[], "")]),
                always(
                    When::Rpc("initialize"),
                    vec![ok(
                        r#"{"protocolVersion":"2099-12-31","capabilities":{},"serverInfo":{"name":"x","version":"1"}}"#,
                    )],
                ),
            ],
            fail(CF, Cause::NoMutualVersion),
        ),
        sc(
            "initialize_answers_modern_version",
            c,
            Setup::Fresh,
            Op::Connect,
            vec![
                always(When::Rpc("server/discover"), vec![respond(404, &[], "")]),
                always(
                    When::Rpc("initialize"),
                    vec![ok(r#"{"protocolVersion":"2026-07-28","capabilities":{}}"#)],
                ),
            ],
            fail(CF, Cause::NoMutualVersion),
        ),
        sc(
            "session_id_with_control_characters",
            c,
            Setup::Fresh,
            Op::Connect,
            vec![
                always(When::Rpc("server/discover"), vec![respond(404, &[], "")]),
                always(
                    When::Rpc("initialize"),
                    vec![respond(
                        200,
                        &[
                            ("content-type", "application/json"),
                            ("mcp-session-id", "a\u{1}b"),
                        ],
                        result(r#"{"protocolVersion":"2025-11-25","capabilities":{}}"#),
                    )],
                ),
            ],
            fail(CF, Cause::Http),
        ),
        sc(
            "session_id_too_long",
            c,
            Setup::Fresh,
            Op::Connect,
            vec![
                always(When::Rpc("server/discover"), vec![respond(404, &[], "")]),
                always(
                    When::Rpc("initialize"),
                    vec![Step::Respond {
                        status: 200,
                        headers: vec![
                            ("content-type".into(), "application/json".into()),
                            ("mcp-session-id".into(), "s".repeat(2000)),
                        ],
                        body: result(r#"{"protocolVersion":"2025-11-25","capabilities":{}}"#)
                            .into_bytes(),
                    }],
                ),
            ],
            fail(CF, Cause::InvalidSession),
        ),
        legacy_list(
            "session_id_changes_mid_connection",
            vec![always(
                When::Rpc("tools/list"),
                vec![respond(
                    200,
                    &[
                        ("content-type", "application/json"),
                        ("mcp-session-id", "sess-2"),
                    ],
                    result(&page(&[tool("a")], None)),
                )],
            )],
            fail(CF, Cause::InvalidSession),
        ),
        // The server ends every session it starts: the client starts one new session for the
        // listing (a second `initialize`, answered with `sess-2`), then fails on the next 404.
        legacy_list(
            "session_expired",
            vec![
                always(When::Rpc("tools/list"), vec![respond(404, &[], "")]),
                always(
                    When::Rpc("initialize"),
                    vec![respond(
                        200,
                        &[
                            ("content-type", "application/json"),
                            ("mcp-session-id", "sess-2"),
                        ],
                        result(
                            r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"legacy","version":"1"}}"#,
                        ),
                    )],
                ),
            ],
            fail(CF, Cause::SessionExpired),
        ),
        sc(
            "discover_rpc_error_means_legacy_then_hang",
            c,
            Setup::Fresh,
            Op::Connect,
            vec![
                always(
                    When::Rpc("server/discover"),
                    vec![json(400, rpc_error(-32601, None))],
                ),
                always(When::Rpc("initialize"), vec![Step::Hang]),
            ],
            budget(Budget::RequestTime),
        ),
    ]
}

fn statuses() -> Vec<Scenario> {
    let c = "status";
    // Every request gets the status: a 4xx on a hinted connection re-probes once first.
    let on_list = |name, steps, expect| list(name, c, vec![always(When::Any, steps)], expect);
    vec![
        on_list(
            "redirect_to_loopback",
            vec![respond(302, &[("location", "http://127.0.0.1:22/")], "")],
            fail(CF, Cause::Redirect),
        ),
        on_list(
            "redirect_to_metadata",
            vec![respond(
                307,
                &[("location", "http://169.254.169.254/latest/meta-data/")],
                "",
            )],
            fail(CF, Cause::Redirect),
        ),
        connect(
            "redirect_on_discover",
            c,
            vec![respond(308, &[("location", "http://[::1]/mcp")], "")],
            fail(CF, Cause::Redirect),
        ),
        on_list(
            "unauthorized",
            vec![respond(
                401,
                &[("www-authenticate", "Bearer realm=\"x\"")],
                "",
            )],
            fail(AF, Cause::Auth(401)),
        ),
        on_list(
            "forbidden",
            vec![respond(403, &[], "")],
            fail(AF, Cause::Auth(403)),
        ),
        connect(
            "unauthorized_on_discover",
            c,
            vec![respond(401, &[], "")],
            fail(AF, Cause::Auth(401)),
        ),
        on_list(
            "proxy_authentication_required",
            vec![respond(407, &[("proxy-authenticate", "Basic")], "")],
            fail(CF, Cause::Status(407)),
        ),
        on_list(
            "internal_error",
            vec![respond(500, &[], "oops")],
            fail(CF, Cause::Status(500)),
        ),
        on_list(
            "unavailable_with_retry_after",
            vec![respond(503, &[("retry-after", "99999")], "")],
            fail(CF, Cause::Status(503)),
        ),
        on_list(
            "json_rpc_error_on_500",
            vec![json(500, rpc_error(-32603, None))],
            fail(SA, Cause::Rpc(-32603)),
        ),
    ]
}

// ---------------------------------------------------------------------------------------------
// Tasks (SEP-2663)

/// The budgets of the task scenarios: the catalogue's, with a task time of one minute (the
/// default hour would leave the bound on a task call's time meaningless).
fn task_budgets() -> Budgets {
    let mut b = test_budgets();
    b.task_time = Duration::from_secs(60);
    b
}

/// A `CreateTaskResult` for task `t1` with these members after the id (`pollIntervalMs: 0`, held
/// at the floor, unless they say otherwise: the floor is a budget and scales with the others,
/// a poll interval the server writes does not).
fn created(rest: &str) -> String {
    format!(r#"{{"resultType":"task","taskId":"t1",{rest}}}"#)
}

const WORKING: &str = r#""status":"working","ttlMs":null,"pollIntervalMs":0"#;

/// A `tasks/get` answer about task `t1` with these members after the id.
fn report(rest: &str) -> Step {
    ok(&format!(
        r#"{{"resultType":"complete","taskId":"t1",{rest}}}"#
    ))
}

fn completed(rest: &str) -> Step {
    report(&format!(
        r#""status":"completed",{rest},"result":{CALL_OK}"#
    ))
}

fn asking(keys: &str) -> Step {
    report(&format!(
        r#""status":"input_required","ttlMs":null,"pollIntervalMs":0,"inputRequests":{{{keys}}}"#
    ))
}

fn elicit(key: &str) -> String {
    format!(r#""{key}":{{"method":"elicitation/create","params":{{}}}}"#)
}

/// A scenario against a modern `tools/call` with tasks on, answered with `creation`; the task's
/// requests (`tasks/get`, `tasks/update`) get `rules`. At most `max_requests` reach the server.
fn task(
    name: &'static str,
    creation: &str,
    rules: Vec<Rule>,
    expect: Expect,
    max_requests: u64,
) -> Scenario {
    let mut all = vec![once(When::Rpc("tools/call"), vec![ok(creation)])];
    all.extend(rules);
    let mut s = sc(name, "task", Setup::Modern, Op::Call("{}"), all, expect);
    s.budgets = task_budgets();
    s.tasks = true;
    s.max_requests = Some(max_requests);
    s
}

fn at_least(mut s: Scenario, d: Duration) -> Scenario {
    s.at_least = d;
    s
}

/// The scenario, then its twin named `split` whose server writes every answer in `bytes`-long
/// pieces a millisecond apart.
fn whole_and_split(s: Scenario, split: &'static str, bytes: usize) -> [Scenario; 2] {
    let mut twin = s.clone();
    twin.name = split;
    twin.pieces = Some(Pieces {
        bytes,
        every: Duration::from_millis(1),
    });
    [s, twin]
}

/// The hostile task servers of `tests/tasks_hostile.rs` (which runs them against the core with
/// the checks of each, whole, one byte at a time and in 7-byte chunks), as catalogue scenarios so
/// that they run through every adapter too, each whole and written in small pieces. Every one
/// runs on sockets: a task's waits are the poll interval's floor and ceiling and its budgets,
/// all scaled with the others; a `ttlMs` the server writes is not (the shrinking `ttlMs` ends at
/// its 2.5 s on sockets, at the first poll past it in virtual time).
fn tasks() -> Vec<Scenario> {
    let floor = Budgets::default().task_poll_floor;
    let ceiling = Budgets::default().task_poll_ceiling;
    let working = created(WORKING);
    let id = 1 << 20;
    let big_result = vec![
        send("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"),
        chunk(result(
            r#"{"resultType":"complete","taskId":"t1","status":"completed","ttlMs":null,"result":{"content":[{"type":"text","text":""#,
        ).trim_end_matches("}")),
        repeat(chunk(kib(64, b'g')).render_bytes(), 17),
        chunk(r#""}]}}}"#),
        send(END_CHUNKS),
    ];
    let sa = |t| fail(SA, Cause::Task(t));
    let list_answered_with_a_task = {
        let mut s = list(
            "task_in_answer_to_tools_list",
            "task",
            vec![always(When::Rpc("tools/list"), vec![ok(&working)])],
            sa(TaskCause::UnsupportedRequest("tools/list")),
        );
        s.budgets = task_budgets();
        s.tasks = true;
        s.max_requests = Some(1);
        s
    };
    let without_the_extension = {
        let mut s = task(
            "task_without_the_extension_declared",
            &working,
            vec![always(
                When::Rpc("tasks/get"),
                vec![completed(r#""ttlMs":null"#)],
            )],
            sa(TaskCause::NotDeclared),
            1,
        );
        s.tasks = false;
        s
    };
    let v: Vec<[Scenario; 2]> = vec![
        // `pollIntervalMs: 0`: held at the floor, polls bounded by `task_polls`.
        whole_and_split(
            at_least(
                with_budgets(
                    task(
                        "task_zero_poll_interval_flood",
                        &working,
                        vec![always(When::Rpc("tasks/get"), vec![report(WORKING)])],
                        budget(Budget::TaskPolls),
                        21,
                    ),
                    |b| b.task_polls = 20,
                ),
                floor * 20,
            ),
            "task_zero_poll_interval_flood_in_pieces",
            7,
        ),
        // A huge `pollIntervalMs`: held at the ceiling, then the result.
        whole_and_split(
            at_least(
                task(
                    "task_huge_poll_interval_held_at_the_ceiling",
                    &created(
                        r#""status":"working","ttlMs":null,"pollIntervalMs":18446744073709551615"#,
                    ),
                    vec![always(
                        When::Rpc("tasks/get"),
                        vec![completed(r#""ttlMs":null"#)],
                    )],
                    Expect::Called {
                        blocks: 1,
                        unknown: 0,
                        invalid: 0,
                    },
                    2,
                ),
                ceiling,
            ),
            "task_huge_poll_interval_held_at_the_ceiling_in_pieces",
            7,
        ),
        whole_and_split(
            with_budgets(
                task(
                    "task_never_ends",
                    &working,
                    vec![always(When::Rpc("tasks/get"), vec![report(WORKING)])],
                    budget(Budget::TaskTime),
                    11,
                ),
                |b| b.task_time = Duration::from_secs(10),
            ),
            "task_never_ends_in_pieces",
            7,
        ),
        // A `ttlMs` past any clock does not overflow.
        whole_and_split(
            task(
                "task_huge_ttl",
                &created(r#""status":"working","ttlMs":18446744073709551615,"pollIntervalMs":0"#),
                vec![
                    once(
                        When::Rpc("tasks/get"),
                        vec![report(r#""status":"working","ttlMs":18446744073709551615"#)],
                    ),
                    once(
                        When::Rpc("tasks/get"),
                        vec![report(r#""status":"working","ttlMs":18446744073709551615"#)],
                    ),
                    always(
                        When::Rpc("tasks/get"),
                        vec![completed(r#""ttlMs":18446744073709551615"#)],
                    ),
                ],
                Expect::Called {
                    blocks: 1,
                    unknown: 0,
                    invalid: 0,
                },
                4,
            ),
            "task_huge_ttl_in_pieces",
            7,
        ),
        // "This value MAY change": a `ttlMs` that shrinks below the task's age is the backstop.
        whole_and_split(
            task(
                "task_ttl_shrinks_below_its_age",
                &created(r#""status":"working","ttlMs":60000,"pollIntervalMs":0"#),
                vec![
                    once(
                        When::Rpc("tasks/get"),
                        vec![report(
                            r#""status":"working","ttlMs":60000,"pollIntervalMs":0"#,
                        )],
                    ),
                    once(
                        When::Rpc("tasks/get"),
                        vec![report(
                            r#""status":"working","ttlMs":60000,"pollIntervalMs":0"#,
                        )],
                    ),
                    always(
                        When::Rpc("tasks/get"),
                        vec![report(
                            r#""status":"working","ttlMs":2500,"pollIntervalMs":0"#,
                        )],
                    ),
                ],
                fail(CF, Cause::Task(TaskCause::Expired(2500))),
                // The floor scaled on sockets: about 2.5 s of polls a tenth of a second apart.
                40,
            ),
            "task_ttl_shrinks_below_its_age_in_pieces",
            7,
        ),
        // A terminal status ("`completed`, `failed`, or `cancelled`") that flips back.
        whole_and_split(
            task(
                "task_terminal_status_flips_back",
                &created(r#""status":"cancelled","ttlMs":null,"pollIntervalMs":0"#),
                vec![always(When::Rpc("tasks/get"), vec![report(WORKING)])],
                sa(TaskCause::TerminalChanged),
                2,
            ),
            "task_terminal_status_flips_back_in_pieces",
            7,
        ),
        whole_and_split(
            task(
                "task_report_of_another_task",
                &working,
                vec![always(
                    When::Rpc("tasks/get"),
                    vec![ok(
                        r#"{"resultType":"complete","taskId":"t2","status":"working","ttlMs":null}"#,
                    )],
                )],
                sa(TaskCause::OtherTask),
                2,
            ),
            "task_report_of_another_task_in_pieces",
            7,
        ),
        // A 1 MiB id: refused at `task_id_bytes` (the byte budget made room for it).
        whole_and_split(
            with_budgets(
                task(
                    "task_id_of_a_mebibyte",
                    &format!(
                        r#"{{"resultType":"task","taskId":"{}",{WORKING}}}"#,
                        "a".repeat(id)
                    ),
                    vec![],
                    budget(Budget::TaskIdBytes),
                    1,
                ),
                |b| b.response_bytes = 2 * id as u64,
            ),
            "task_id_of_a_mebibyte_in_pieces",
            4096,
        ),
        whole_and_split(
            task(
                "task_id_with_control_characters",
                &format!(r#"{{"resultType":"task","taskId":"t\u0000\u001b[2J",{WORKING}}}"#),
                vec![],
                sa(TaskCause::InvalidId),
                1,
            ),
            "task_id_with_control_characters_in_pieces",
            7,
        ),
        // A huge result, its length undeclared (chunked): the byte budget, which counts every
        // poll's bytes, ends the reading. Over HTTP/2 too: the client's flow-control windows
        // always let through the frame that crosses the byte budget left (one octet past it,
        // never less than a whole frame), so a server that keeps to them, writing whole frames,
        // sends it.
        whole_and_split(
            task(
                "task_result_beyond_the_byte_budget",
                &working,
                vec![
                    once(When::Rpc("tasks/get"), vec![report(WORKING)]),
                    always(When::Rpc("tasks/get"), big_result),
                ],
                budget(Budget::ResponseBytes),
                3,
            ),
            "task_result_beyond_the_byte_budget_in_pieces",
            4096,
        ),
        // `input_required` forever with new keys, each answered: bounded by the update rounds.
        whole_and_split(
            with_input(
                with_budgets(
                    task(
                        "task_input_required_forever",
                        &working,
                        vec![
                            always(When::Rpc("tasks/get"), vec![asking(&elicit("k$SEQ"))]),
                            always(
                                When::Rpc("tasks/update"),
                                vec![ok(r#"{"resultType":"complete"}"#)],
                            ),
                        ],
                        budget(Budget::TaskUpdateRounds),
                        8,
                    ),
                    |b| b.task_update_rounds = 3,
                ),
                Input::DeclineEach,
            ),
            "task_input_required_forever_in_pieces",
            7,
        ),
        // The same key asked forever is presented once (an answer to it again would not be
        // outstanding); the polls stay bounded.
        whole_and_split(
            with_input(
                with_budgets(
                    task(
                        "task_same_key_asked_forever",
                        &working,
                        vec![
                            always(When::Rpc("tasks/get"), vec![asking(&elicit("k"))]),
                            always(When::Rpc("tasks/update"), vec![ok("{}")]),
                        ],
                        budget(Budget::TaskPolls),
                        10,
                    ),
                    |b| b.task_polls = 8,
                ),
                Input::Answer(r#"{"k":{"action":"decline"}}"#),
            ),
            "task_same_key_asked_forever_in_pieces",
            7,
        ),
        // "Each key MUST correspond to a currently-outstanding inputRequest key": refused, and
        // no `tasks/update` is sent.
        whole_and_split(
            with_input(
                task(
                    "task_answer_to_a_key_never_asked",
                    &working,
                    vec![always(When::Rpc("tasks/get"), vec![asking(&elicit("k"))])],
                    sa(TaskCause::NotOutstanding),
                    2,
                ),
                Input::Answer(r#"{"other":{"action":"accept"}}"#),
            ),
            "task_answer_to_a_key_never_asked_in_pieces",
            7,
        ),
        whole_and_split(
            with_input(
                task(
                    "task_answer_naming_a_key_twice",
                    &working,
                    vec![always(When::Rpc("tasks/get"), vec![asking(&elicit("k"))])],
                    sa(TaskCause::NotOutstanding),
                    2,
                ),
                Input::Answer(r#"{"k":{"action":"accept"},"k":{"action":"decline"}}"#),
            ),
            "task_answer_naming_a_key_twice_in_pieces",
            7,
        ),
        whole_and_split(
            task(
                "task_unknown_status",
                &working,
                vec![always(
                    When::Rpc("tasks/get"),
                    vec![report(r#""status":"paused","ttlMs":null"#)],
                )],
                sa(TaskCause::UnknownStatus("paused")),
                2,
            ),
            "task_unknown_status_in_pieces",
            7,
        ),
        // "A client that receives `CreateTaskResult` in response to an unsupported request type
        // MUST interpret this as an invalid response".
        whole_and_split(
            list_answered_with_a_task,
            "task_in_answer_to_tools_list_in_pieces",
            7,
        ),
        // "A server MUST NOT return `CreateTaskResult` to a client that did not include the
        // extension capability on its request": refused, nothing polled.
        whole_and_split(
            without_the_extension,
            "task_without_the_extension_declared_in_pieces",
            7,
        ),
    ];
    v.into_iter().flatten().collect()
}
