//! Trace context in `params._meta` (MCP 2026-07-28, SEP-414, `basic/index.mdx`): "`_meta` keys
//! `traceparent`, `tracestate`, `baggage` are reserved for OpenTelemetry propagation; values MUST
//! follow W3C Trace Context and W3C Baggage". OpenTelemetry's conventions for MCP
//! (`docs/gen-ai/mcp.md`, "Context propagation"): "inject `traceparent` and `tracestate` to the
//! MCP message `params._meta` when creating request or notification", and "`baggage` should be
//! propagated in the same `params._meta` property bag".
//!
//! Checked on every request a modern and a legacy session send (discover, list, call, tasks;
//! initialize, list, call), with the value set in the configuration and changed between
//! operations, and the validators against the W3C grammars by a proptest with an oracle written
//! here from the grammars' text.

mod support;

use mcp_sansio::task::{request_body, TaskId, TaskMethod};
use mcp_sansio::{Config, ConfigError, Event, TraceContext, TraceContextError};
use proptest::prelude::*;
use serde_json::Value;
use support::*;

/// W3C Trace Context §3.2.2.1's example.
const TP: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const TP2: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00";
const STATE: &str = "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE";
const BAGGAGE: &str = "userId=alice,serverNode=DF%2028,isProduction=false";

fn trace(tp: &str, state: Option<&str>, baggage: Option<&str>) -> TraceContext {
    TraceContext::new(tp, state, baggage).unwrap()
}

fn meta(r: &SentRequest) -> Value {
    r.json()["params"]["_meta"].clone()
}

fn assert_carries(r: &SentRequest, tp: &str, state: Option<&str>, baggage: Option<&str>) {
    let m = meta(r);
    assert_eq!(m["traceparent"], tp, "{}: {m}", r.rpc_method());
    match state {
        Some(s) => assert_eq!(m["tracestate"], s),
        None => assert!(m.get("tracestate").is_none(), "{m}"),
    }
    match baggage {
        Some(b) => assert_eq!(m["baggage"], b),
        None => assert!(m.get("baggage").is_none(), "{m}"),
    }
}

#[test]
fn every_modern_request_carries_the_trace_context_next_to_the_mcp_members() {
    for split in SPLITS {
        let config = Config::new("http://127.0.0.1:9/mcp")
            .unwrap()
            .with_trace_context(Some(trace(TP, Some(STATE), Some(BAGGAGE))));
        let mut h = Harness::new(config, split);
        h.connect();
        let r = h.next();
        assert_eq!(r.rpc_method(), "server/discover");
        assert_carries(&r, TP, Some(STATE), Some(BAGGAGE));
        assert_eq!(
            meta(&r)["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        h.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), DISCOVER_OK)),
        );
        assert!(matches!(h.single_event(), Event::Connected { .. }));

        h.list();
        let r = h.next();
        assert_eq!(r.rpc_method(), "tools/list");
        assert_carries(&r, TP, Some(STATE), Some(BAGGAGE));
        h.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), &tools_page(&["echo"], None))),
        );
        h.take_events();

        // The embedder's context for the next operation replaces it; absent members go.
        h.conn.set_trace_context(Some(trace(TP2, None, None)));
        h.call("echo", r#"{"x":1}"#);
        let r = h.next();
        assert_eq!(r.rpc_method(), "tools/call");
        assert_carries(&r, TP2, None, None);
        let m = meta(&r);
        assert_eq!(m["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
        assert!(m.get("progressToken").is_some(), "{m}");
        h.answer_call_ok(&r);

        h.conn.set_trace_context(None);
        h.call("echo", r#"{"x":2}"#);
        let r = h.next();
        let m = meta(&r);
        assert!(m.get("traceparent").is_none(), "{m}");
        assert_eq!(m["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
    }
}

#[test]
fn every_legacy_request_carries_it_and_nothing_is_added_without_one() {
    let config = Config::new("http://127.0.0.1:9/mcp")
        .unwrap()
        .with_trace_context(Some(trace(TP, Some(STATE), None)));
    let mut h = Harness::new(config, Split::Whole);
    h.connect();
    let r = h.next();
    h.feed(r.exchange, &empty_response(404));
    let r = h.next();
    assert_eq!(r.rpc_method(), "initialize");
    assert_carries(&r, TP, Some(STATE), None);
    h.feed(
        r.exchange,
        &json_response_with(
            200,
            &[("mcp-session-id", "s")],
            &result_msg(r.rpc_id(), &initialize_ok("2025-11-25")),
        ),
    );
    let r = h.next();
    assert_eq!(r.rpc_method(), "notifications/initialized");
    h.feed(r.exchange, &empty_response(202));
    assert!(matches!(h.single_event(), Event::Connected { .. }));
    h.list();
    let r = h.next();
    assert_carries(&r, TP, Some(STATE), None);
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), &tools_page(&["echo"], None))),
    );
    h.take_events();
    h.call("echo", "{}");
    let r = h.next();
    assert_carries(&r, TP, Some(STATE), None);
    assert!(meta(&r).get("progressToken").is_some());
    assert!(meta(&r)
        .get("io.modelcontextprotocol/protocolVersion")
        .is_none());

    // Without a trace context a legacy listing has no `_meta` at all, as before.
    let mut h = legacy(Split::Whole, "2025-11-25");
    h.list();
    let r = h.next();
    assert!(r.json()["params"].get("_meta").is_none(), "{}", r.json());
}

#[test]
fn task_requests_carry_it_through_the_same_writer() {
    let config = Config::new("http://127.0.0.1:9/mcp")
        .unwrap()
        .with_tasks(true)
        .with_trace_context(Some(trace(TP, None, Some(BAGGAGE))));
    let id = TaskId::parse("t-1", 64).unwrap();
    let body = request_body(&config, "2026-07-28", TaskMethod::Get, 5, &id, None);
    let v: Value = serde_json::from_slice(&body).unwrap();
    let m = &v["params"]["_meta"];
    assert_eq!(m["traceparent"], TP);
    assert_eq!(m["baggage"], BAGGAGE);
    assert_eq!(m["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
}

/// Checks where `t` says its `traceparent` is ([`Transmit::traceparent_at`]) against serde's
/// reading of its body: the 55 bytes there, replaced by another `traceparent`, change
/// `params._meta.traceparent` and nothing else. `None` only for a body without one.
///
/// [`Transmit::traceparent_at`]: mcp_sansio::Transmit::traceparent_at
fn check_traceparent_at(t: &mcp_sansio::Transmit) {
    let sent: Value = serde_json::from_slice(&t.request.body).unwrap();
    let Some(at) = t.traceparent_at() else {
        assert!(
            sent["params"]["_meta"].get("traceparent").is_none(),
            "{sent}"
        );
        return;
    };
    let mut body = t.request.body.clone();
    body[at..at + TP2.len()].copy_from_slice(TP2.as_bytes());
    let mut changed: Value = serde_json::from_slice(&body)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&body)));
    assert_eq!(changed["params"]["_meta"]["traceparent"], TP2, "{changed}");
    changed["params"]["_meta"]["traceparent"] = TP.into();
    assert_eq!(changed, sent, "only _meta's traceparent changed");
}

/// The connection's next request, its `traceparent_at` checked.
fn next_checked(h: &mut Harness) -> SentRequest {
    let t = h.conn.poll_transmit().expect("a request");
    check_traceparent_at(&t);
    parse_request(&t)
}

/// Hands the connection `bytes` as the response of `exchange`, leaving its requests to
/// [`next_checked`] (the harness's `feed` takes them).
fn answer(h: &mut Harness, exchange: mcp_sansio::ExchangeId, bytes: &[u8]) {
    h.socket.handle_bytes(&mut h.conn, h.now, exchange, bytes);
}

/// Every request tells where its `params._meta.traceparent` is (what an adapter rewrites to
/// name its own span), in both eras, and it is never a tool argument's member of the same name
/// and value, written before `_meta`: discover, initialize, the notification (none), the calls.
#[test]
fn each_request_tells_where_its_traceparent_is_and_no_argument_is_taken_for_it() {
    let args = format!(r#"{{"traceparent":"{TP}","x":{{"_meta":{{"traceparent":"{TP}"}}}}}}"#);
    let config = Config::new("http://127.0.0.1:9/mcp")
        .unwrap()
        .with_trace_context(Some(trace(TP, Some(STATE), None)));

    // The 2026-07-28 era.
    let mut h = Harness::new(config.clone(), Split::Whole);
    h.conn.connect(h.now);
    let r = next_checked(&mut h);
    assert_eq!(r.rpc_method(), "server/discover");
    answer(
        &mut h,
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), DISCOVER_OK)),
    );
    h.conn.call_tool(h.now, "echo", args.as_bytes());
    let r = next_checked(&mut h);
    assert_eq!(r.rpc_method(), "tools/call");
    assert_eq!(r.json()["params"]["arguments"]["traceparent"], TP);

    // A legacy session.
    let mut h = Harness::new(config, Split::Whole);
    h.conn.connect(h.now);
    let r = next_checked(&mut h);
    answer(&mut h, r.exchange, &empty_response(404));
    let r = next_checked(&mut h);
    assert_eq!(r.rpc_method(), "initialize");
    answer(
        &mut h,
        r.exchange,
        &json_response_with(
            200,
            &[("mcp-session-id", "s")],
            &result_msg(r.rpc_id(), &initialize_ok("2025-11-25")),
        ),
    );
    let r = next_checked(&mut h);
    assert_eq!(r.rpc_method(), "notifications/initialized");
    answer(&mut h, r.exchange, &empty_response(202));
    h.conn.call_tool(h.now, "echo", args.as_bytes());
    let r = next_checked(&mut h);
    assert_eq!(r.rpc_method(), "tools/call");
    assert_eq!(r.json()["params"]["arguments"]["traceparent"], TP);
}

#[test]
fn a_malformed_value_is_refused_before_anything_is_sent() {
    let e = TraceContext::new(
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
        None,
        None,
    )
    .unwrap_err();
    assert!(matches!(e, TraceContextError::Traceparent { .. }));
    let as_config: ConfigError = e.into();
    assert!(matches!(as_config, ConfigError::TraceContext(_)));
    assert!(TraceContext::new(TP, Some("Rojo=1"), None).is_err());
    assert!(TraceContext::new(TP, None, Some("k=v w")).is_err());
}

/// The oracle: W3C Trace Context §3.2.2 written as a regular expression, independently of the
/// code's hand-written checks: `00-` 32 `HEXDIGLC` `-` 16 `HEXDIGLC` `-` 2 `HEXDIGLC`, ids not
/// all zero.
fn oracle_traceparent(s: &str) -> bool {
    let re = regex::Regex::new(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$").unwrap();
    match re.captures(s) {
        Some(c) => c[1].chars().any(|c| c != '0') && c[2].chars().any(|c| c != '0'),
        None => false,
    }
}

/// The oracle for one `tracestate` list member (W3C Trace Context §3.3.1.3), as regular
/// expressions of the grammar's ABNF.
fn oracle_tracestate(s: &str) -> bool {
    let member = regex::Regex::new(
        r"^(?:[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$",
    )
    .unwrap();
    if s.len() > 512 {
        return false;
    }
    let members: Vec<&str> = s
        .split(',')
        .map(|m| m.trim_matches([' ', '\t']))
        .filter(|m| !m.is_empty())
        .collect();
    let mut keys: Vec<&str> = members
        .iter()
        .map(|m| m.split('=').next().unwrap())
        .collect();
    let n = keys.len();
    keys.sort_unstable();
    keys.dedup();
    n <= 32 && keys.len() == n && members.iter().all(|m| member.is_match(m))
}

proptest! {
    #[test]
    fn traceparent_validation_agrees_with_the_grammar(
        s in prop_oneof![
            "00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}",
            "0[0f]-[0-9a-fA-F]{31,33}-[0-9a-f]{15,17}-[0-9a-g]{2}",
            "00-0{32}-[0-9a-f]{16}-01",
            "00-[0-9a-f]{32}-0{16}-01",
            ".{0,60}",
        ]
    ) {
        prop_assert_eq!(TraceContext::new(&s, None, None).is_ok(), oracle_traceparent(&s), "{:?}", s);
    }

    #[test]
    fn tracestate_validation_agrees_with_the_grammar(
        members in prop::collection::vec(
            (
                prop_oneof![3 => "[a-c][a-c0-9]?", 1 => "[a-z0-9]{1,3}@[a-z]{1,2}", 1 => "[a-z0-9@A-Z_*/-]{1,6}"],
                prop_oneof![3 => "[!-+]{1,4}", 1 => "[ -~]{0,6}"],
            ),
            0..36,
        ),
        sep in prop_oneof![Just(","), Just(" , "), Just(",\t")],
    ) {
        let s: Vec<String> = members.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let s = s.join(sep);
        let empty_ok = s.is_empty();
        prop_assert_eq!(
            TraceContext::new(TP, Some(&s), None).is_ok(),
            empty_ok || oracle_tracestate(&s),
            "{:?}", s
        );
    }

    #[test]
    fn baggage_validation_never_panics_and_accepts_what_it_should(
        s in "[ -~]{0,80}",
        good in prop::collection::vec(("[A-Za-z0-9!#$&'*+.^_`|~-]{1,8}", "[!#-+\\--:<-\\[\\]-~]{0,8}"), 1..65),
    ) {
        let _ = TraceContext::new(TP, None, Some(&s));
        let list: Vec<String> = good.iter().map(|(k, v)| format!("{k}={v}")).collect();
        prop_assert!(TraceContext::new(TP, None, Some(&list.join(","))).is_ok());
        let mut over = list.clone();
        over.resize(65, "k=v".to_owned());
        prop_assert!(TraceContext::new(TP, None, Some(&over.join(","))).is_err());
    }
}

/// How each request was answered (`Connection::take_answered`, what a tracer records as the
/// `error.type` of that request's span): its JSON-RPC id and, for an error, the JSON-RPC code or,
/// without a JSON-RPC body, the HTTP status, as each answer is handled, also when the operation
/// goes on (a `-32020` relists and calls again); only once (taken), and nothing before an answer.
#[test]
fn each_answer_is_reported_with_its_request_id_and_error() {
    use mcp_sansio::{AnswerError, Answered};
    for split in SPLITS {
        let mut h = modern(split);
        assert_eq!(
            h.conn.take_answered().map(|a| a.error),
            Some(None),
            "the discover answered"
        );
        h.call("echo", "{}");
        let call = h.next();
        assert_eq!(h.conn.take_answered(), None, "nothing answered yet");
        h.feed(
            call.exchange,
            &json_response(400, &error_msg(call.rpc_id(), -32020, "mismatch", None)),
        );
        assert_eq!(
            h.conn.take_answered(),
            Some(Answered {
                id: call.rpc_id(),
                error: Some(AnswerError::Rpc(-32020)),
            })
        );
        assert_eq!(h.conn.take_answered(), None, "taken");
        let list = h.next();
        assert_eq!(list.rpc_method(), "tools/list");
        h.feed(
            list.exchange,
            &json_response(
                200,
                &result_msg(list.rpc_id(), &tools_page(&["echo"], None)),
            ),
        );
        assert_eq!(
            h.conn.take_answered(),
            Some(Answered {
                id: list.rpc_id(),
                error: None,
            })
        );
        let again = h.next();
        assert_eq!(again.rpc_method(), "tools/call");
        assert_ne!(again.rpc_id(), call.rpc_id());
        h.feed(again.exchange, &empty_response(503));
        assert_eq!(
            h.conn.take_answered(),
            Some(Answered {
                id: again.rpc_id(),
                error: Some(AnswerError::HttpStatus(503)),
            })
        );
    }
}
