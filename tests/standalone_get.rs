//! The standalone `GET` stream of a legacy session (2025-11-25 transports, "Listening for
//! Messages from the Server"), opened only with the input hook on.

mod support;

use std::time::Duration;

use mcp_sansio::h2::H2Config;
use mcp_sansio::mux::H2Socket;
use mcp_sansio::{Connection, Instant};
use mcp_sansio_test_support::h2server::{self, drive, hello, H2Peer, SeenRequest};

use mcp_sansio::limits::MAX_REFUSALS_PER_REQUEST;
use mcp_sansio::{Config, Era, EraHint, Event};
use support::*;

const ELICIT: &str = r#"{"message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string","default":"Ada"}}}}"#;

/// A legacy session (initialize, notifications/initialized) with the input hook on or off.
fn legacy(hook: bool, split: Split) -> Harness {
    legacy_with(hook, split, |_| {})
}

/// [`legacy`], with `tweak` applied to the configuration.
fn legacy_with(hook: bool, split: Split, tweak: impl FnOnce(&mut Config)) -> Harness {
    let mut config = Config::new("http://127.0.0.1:9/mcp").unwrap();
    config.input_hook = hook;
    tweak(&mut config);
    config.era_hint = Some(EraHint {
        era: Era::Legacy,
        version: "2025-11-25".into(),
    });
    let mut h = Harness::new(config, split);
    h.connect();
    let r = h.next();
    assert_eq!(r.rpc_method(), "initialize");
    h.feed(
        r.exchange,
        &json_response_with(
            200,
            &[("mcp-session-id", "sess-1")],
            &result_msg(r.rpc_id(), &initialize_ok("2025-11-25")),
        ),
    );
    let r = h.next();
    assert_eq!(r.rpc_method(), "notifications/initialized");
    h.feed(r.exchange, &empty_response(202));
    assert!(matches!(h.single_event(), Event::Connected { .. }));
    h
}

/// One server request event of the standalone stream.
fn request_event(id: &str, method: &str, params: &str) -> String {
    format!(
        "id: g-{id}\ndata: {{\"jsonrpc\":\"2.0\",\"id\":\"{id}\",\"method\":\"{method}\",\"params\":{params}}}\n\n"
    )
}

/// The server requests handed to the embedder so far: (id, method).
fn handed(h: &mut Harness) -> Vec<(String, String)> {
    h.take_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::ServerRequest { id, method, .. } => Some((id.get().to_owned(), method)),
            _ => None,
        })
        .collect()
}

/// An event stream chunk of an already open response (HTTP/1.1 chunked framing).
fn chunk(data: &str) -> Vec<u8> {
    format!("{:x}\r\n{data}\r\n", data.len()).into_bytes()
}

/// 2025-11-25 transports, "Listening for Messages from the Server": "The client MAY issue an
/// HTTP GET to the MCP endpoint. This can be used to open an SSE stream, allowing the server to
/// communicate to the client, without the client first sending data via HTTP POST." and "The
/// client MUST include an Accept header, listing text/event-stream as a supported content type."
/// With the input hook on, a legacy session opens it once confirmed, carrying its session id;
/// an `elicitation/create` the server sends there while a call runs reaches the hook, and the
/// embedder's answer is POSTed back as the JSON-RPC response. The call finishes beside it.
#[test]
fn a_hooked_legacy_session_listens_and_answers_what_the_get_stream_brings() {
    for split in SPLITS {
        let mut h = legacy(true, split);
        let get = h.next();
        assert_eq!(get.method, "GET", "{split:?}");
        assert_eq!(get.header("accept"), Some("text/event-stream"));
        assert_eq!(get.header("mcp-session-id"), Some("sess-1"));
        assert_eq!(get.header("mcp-protocol-version"), Some("2025-11-25"));
        assert!(get.body.is_empty());
        assert_eq!(h.conn.gets_sent(), 1);
        // The server opens the stream (a priming event first), and nothing else yet.
        h.feed(get.exchange, &sse_response(&[], "id: g-0\ndata:\n\n", true));
        h.call("ask", "{}");
        let call = h.next();
        assert_eq!(call.rpc_method(), "tools/call");
        assert_eq!(
            h.conn.gets_sent(),
            1,
            "an open stream is kept, not opened again"
        );
        // While the call waits, the elicitation arrives on the GET stream.
        h.feed(
            get.exchange,
            &chunk(&request_event("e-1", "elicitation/create", ELICIT)),
        );
        assert_eq!(
            handed(&mut h),
            [("\"e-1\"".to_owned(), "elicitation/create".to_owned())],
            "{split:?}"
        );
        let id = serde_json::value::RawValue::from_string("\"e-1\"".into()).unwrap();
        let answer = br#"{"action":"accept","content":{"name":"Ada"}}"#;
        h.conn
            .answer_server_request(h.now, &id, Some(answer))
            .unwrap();
        h.drain();
        let post = h.next();
        assert_eq!(post.method, "POST");
        assert_eq!(post.header("mcp-session-id"), Some("sess-1"));
        let body = post.json();
        assert_eq!(body["id"], "e-1");
        assert_eq!(
            body["result"],
            serde_json::json!({"action":"accept","content":{"name":"Ada"}})
        );
        assert!(body.get("method").is_none(), "a response: {body}");
        h.feed(post.exchange, &empty_response(202));
        h.feed(
            call.exchange,
            &json_response(200, &result_msg(call.rpc_id(), CALL_OK)),
        );
        let evs = h.take_events();
        assert!(
            matches!(evs.as_slice(), [Event::CallFinished(_)]),
            "{split:?}: {evs:?}"
        );
        assert!(
            !h.abandoned.contains(&get.exchange),
            "the stream outlives the call"
        );
        // Closing the session ends the stream before its DELETE.
        h.close();
        assert!(h.abandoned.contains(&get.exchange), "{split:?}");
        let delete = h.next();
        assert_eq!(delete.method, "DELETE");
    }
}

/// 2025-11-25 transports: "The server MUST either return Content-Type: text/event-stream in
/// response to this HTTP GET, or else return HTTP 405 Method Not Allowed, indicating that the
/// server does not offer an SSE stream at this endpoint." A 405 (or any answer that is not an
/// event stream) is no stream and no error: the session goes on, and never asks again.
#[test]
fn a_405_to_the_get_is_no_stream_and_no_error() {
    for answer in [
        empty_response(405),
        json_response(
            400,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"no"}}"#,
        ),
        json_response(200, "{}"),
    ] {
        for split in SPLITS {
            let mut h = legacy(true, split);
            let get = h.next();
            assert_eq!(get.method, "GET");
            h.feed(get.exchange, &answer);
            assert!(h.take_events().is_empty(), "no event, no failure");
            assert!(h.finished.iter().any(|(x, _)| *x == get.exchange));
            h.list();
            let r = h.next();
            assert_eq!(r.rpc_method(), "tools/list", "{split:?}");
            h.feed(
                r.exchange,
                &json_response(200, &result_msg(r.rpc_id(), &tools_page(&["echo"], None))),
            );
            assert!(matches!(h.single_event(), Event::ToolsListed(_)));
            h.call("echo", "{}");
            let r = h.next();
            h.feed(
                r.exchange,
                &json_response(200, &result_msg(r.rpc_id(), CALL_OK)),
            );
            assert!(matches!(h.single_event(), Event::CallFinished(_)));
            assert_eq!(h.gets(), 1, "{split:?}: no second GET after the refusal");
        }
    }
}

/// The opposite case: the GET is opened only for the input hook. A legacy session without it,
/// and a modern one with it (2026-07-28 removed the standalone stream), send no GET.
#[test]
fn without_the_hook_or_in_the_modern_era_no_get_is_sent() {
    for split in SPLITS {
        let mut h = legacy(false, split);
        h.call("echo", "{}");
        let r = h.next();
        assert_eq!(r.rpc_method(), "tools/call");
        h.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), CALL_OK)),
        );
        assert!(matches!(h.single_event(), Event::CallFinished(_)));
        assert!(!h.has_outstanding());
        assert_eq!((h.gets(), h.conn.gets_sent()), (0, 0), "{split:?}");

        let mut config = Config::new("http://127.0.0.1:9/mcp").unwrap();
        config.input_hook = true;
        let mut h = modern_with(config, split);
        h.call("echo", "{}");
        let r = h.next();
        h.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), CALL_OK)),
        );
        assert!(matches!(h.single_event(), Event::CallFinished(_)));
        assert_eq!(h.gets(), 0, "{split:?}");
    }
}

/// Hostile: a GET stream that floods requests, breaks its event framing, or ends and is
/// reopened without end. At most `MAX_REFUSALS_PER_REQUEST` requests per stream are handed on
/// or refused; a malformed stream ends the stream but not the operation; a stream that ended is
/// opened again at the next operation, at most `responses_per_request` times per session; and
/// the stream is dropped at its deadline.
#[test]
fn the_get_stream_is_bounded() {
    for split in SPLITS {
        // A flood: ten requests, a hooked one and a refused one alternating.
        let mut h = legacy(true, split);
        let get = h.next();
        let mut stream = String::new();
        for i in 0..10 {
            let method = if i % 2 == 0 {
                "roots/list"
            } else {
                "tools/list"
            };
            stream.push_str(&request_event(&format!("r{i}"), method, "{}"));
        }
        h.feed(get.exchange, &sse_response(&[], &stream, true));
        let hooked = handed(&mut h);
        let refusals: Vec<_> =
            std::iter::from_fn(|| h.has_outstanding().then(|| h.next())).collect();
        assert_eq!(
            hooked.len() + refusals.len(),
            MAX_REFUSALS_PER_REQUEST as usize,
            "{split:?}"
        );
        assert!(refusals.iter().all(|r| r.method == "POST"));

        // An event past the event cap ends the stream, not the running call.
        let mut h = legacy_with(true, split, |c| c.budgets.sse_event_bytes = 64);
        let get = h.next();
        h.call("echo", "{}");
        let call = h.next();
        let pad = "x".repeat(200);
        let big = request_event("big", "roots/list", &format!("{{\"pad\":\"{pad}\"}}"));
        h.feed(get.exchange, &sse_response(&[], &big, true));
        assert!(h.abandoned.contains(&get.exchange), "{split:?}");
        assert!(
            h.take_events().is_empty(),
            "{split:?}: no failure, nothing handed on"
        );
        h.feed(
            call.exchange,
            &json_response(200, &result_msg(call.rpc_id(), CALL_OK)),
        );
        assert!(
            matches!(h.single_event(), Event::CallFinished(_)),
            "{split:?}"
        );
        h.list();
        let again = h.next();
        assert_eq!(again.method, "GET", "reopened as the next operation starts");

        // A message that is not JSON ends the stream only; the next operation opens another.
        let mut h = legacy(true, split);
        let get = h.next();
        h.feed(get.exchange, &sse_response(&[], "data: not json\n\n", true));
        assert!(h.abandoned.contains(&get.exchange), "{split:?}");
        assert!(h.take_events().is_empty(), "no failure");
        h.list();
        let again = h.next();
        assert_eq!(again.method, "GET", "reopened as the listing starts");
        let r = h.next();
        assert_eq!(r.rpc_method(), "tools/list");
        h.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), &tools_page(&[], None))),
        );
        assert!(matches!(h.single_event(), Event::ToolsListed(_)));
    }

    // A server that ends every stream at once: reopened per operation up to the budget.
    let mut h = legacy(true, Split::Whole);
    let limit = h.conn.config().budgets.responses_per_request as usize;
    for _ in 0..limit + 3 {
        while let Some(r) = h.outstanding.pop_front() {
            if r.method == "GET" {
                h.feed(r.exchange, &sse_response(&[], "", false));
            }
        }
        h.call("echo", "{}");
        let r = h
            .outstanding
            .iter()
            .find(|r| r.method == "POST")
            .cloned()
            .unwrap();
        h.outstanding.retain(|x| x.exchange != r.exchange);
        h.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), CALL_OK)),
        );
        assert!(matches!(h.single_event(), Event::CallFinished(_)));
    }
    assert_eq!(
        h.gets(),
        limit,
        "at most responses_per_request GETs per session"
    );

    // An open stream that the server never ends is dropped at its deadline.
    let mut h = legacy(true, Split::Whole);
    let get = h.next();
    h.feed(get.exchange, &sse_response(&[], "", true));
    let budgets = h.conn.config().budgets.clone();
    let due = h.conn.poll_timeout().expect("the stream has a deadline");
    assert!(due <= h.now + budgets.request_time.max(budgets.call_time) + Duration::from_millis(1));
    h.advance_to(due);
    assert!(h.abandoned.contains(&get.exchange));
    assert!(h.conn.poll_timeout().is_none(), "nothing waits any more");
}

/// A new legacy session (the server ended the last one: 404 to a request carrying its id)
/// abandons the old session's stream and opens one for the new session after its
/// `notifications/initialized`.
#[test]
fn a_new_session_gets_its_own_stream() {
    let mut h = legacy(true, Split::Whole);
    let get = h.next();
    h.feed(get.exchange, &sse_response(&[], "", true));
    h.call("echo", "{}");
    let r = h.next();
    h.feed(r.exchange, &empty_response(404));
    assert!(
        h.abandoned.contains(&get.exchange),
        "the old session's stream ends"
    );
    let r = h.next();
    assert_eq!(r.rpc_method(), "initialize");
    h.feed(
        r.exchange,
        &json_response_with(
            200,
            &[("mcp-session-id", "sess-2")],
            &result_msg(r.rpc_id(), &initialize_ok("2025-11-25")),
        ),
    );
    let r = h.next();
    h.feed(r.exchange, &empty_response(202));
    let get2 = h.next();
    assert_eq!(get2.method, "GET");
    assert_eq!(get2.header("mcp-session-id"), Some("sess-2"));
    let r = h.next();
    assert_eq!(
        r.rpc_method(),
        "tools/call",
        "the call restarts after the GET is sent"
    );
}

/// The same over HTTP/2: the standalone stream is another stream of the session's socket, its
/// event stream arrives in DATA frames that stay open, and the answer is POSTed on a third
/// stream. Whole and in 1- and 3-byte pieces of the socket's bytes, with the same events.
#[test]
fn over_http2_the_get_is_another_stream_of_the_socket() {
    let mut seen = Vec::new();
    for split in [
        h2server::Split::Whole,
        h2server::Split::Chunks(1),
        h2server::Split::Chunks(3),
    ] {
        let mut config = Config::new("https://mcp.example.com:8443/mcp").unwrap();
        config.input_hook = true;
        let mut s = H2Socket::new(Instant::ZERO, H2Config::default(), "https");
        let w = s.add(Connection::new(config).unwrap());
        let mut peer = H2Peer::default();
        let mut now = Instant::ZERO;
        let server = |peer: &mut H2Peer, r: &SeenRequest| -> Vec<u8> {
            let sid = r.stream;
            match r.rpc_method().as_str() {
                "server/discover" => peer.response(sid, 404, "", b""),
                "initialize" => {
                    let body = h2server::result(r.rpc_id(), &initialize_ok("2025-11-25"));
                    peer.with_session(sid, "application/json", "sess-1", body.as_bytes())
                }
                "GET" => {
                    assert_eq!(r.header("accept"), Some("text/event-stream"));
                    assert_eq!(r.header("mcp-session-id"), Some("sess-1"));
                    let fields = [(":status", "200"), ("content-type", "text/event-stream")];
                    let mut out = peer.headers(sid, &fields, false);
                    let event = request_event("g-1", "elicitation/create", ELICIT);
                    out.extend(h2server::data(sid, event.as_bytes(), false));
                    out
                }
                "tools/call" => peer.json(sid, &h2server::result(r.rpc_id(), CALL_OK)),
                _ => peer.response(sid, 202, "", b""),
            }
        };
        s.connection_mut(w).unwrap().connect(now);
        // Short runs: the stream stays open between them (its lifetime is not what is tested).
        let long = Duration::from_secs(1);
        let mut run = drive(&mut s, &mut peer, &mut now, split, hello(), long, server);
        s.connection_mut(w).unwrap().call_tool(now, "ask", b"{}");
        let more = drive(&mut s, &mut peer, &mut now, split, Vec::new(), long, server);
        run.events.extend(more.events);
        let id = serde_json::value::RawValue::from_string("\"g-1\"".into()).unwrap();
        let answer = br#"{"action":"accept","content":{"name":"Ada"}}"#;
        s.connection_mut(w)
            .unwrap()
            .answer_server_request(now, &id, Some(answer))
            .unwrap();
        drive(&mut s, &mut peer, &mut now, split, Vec::new(), long, server);
        let methods: Vec<String> = peer.requests.iter().map(|r| r.rpc_method()).collect();
        assert_eq!(
            methods,
            [
                "server/discover",
                "initialize",
                "notifications/initialized",
                "GET",
                "tools/call",
                ""
            ],
            "{split:?}"
        );
        let streams: std::collections::BTreeSet<u32> =
            peer.requests.iter().map(|r| r.stream).collect();
        assert_eq!(streams.len(), peer.requests.len(), "one stream each");
        let posted = peer.requests.last().unwrap().json();
        assert_eq!(posted["id"], "g-1");
        assert_eq!(posted["result"]["content"]["name"], "Ada");
        let events: Vec<String> = run
            .summary()
            .into_iter()
            .filter(|l| !l.contains(":Finished ") && !l.contains(":Abandoned "))
            .collect();
        seen.push(events);
    }
    assert!(
        seen[0].iter().any(|l| l.contains("ServerRequest")),
        "{:?}",
        seen[0]
    );
    assert!(seen.iter().all(|s| *s == seen[0]), "{seen:#?}");
}

/// Hostile: a GET stream that sends without end (SSE comments, which carry no event). Its bytes
/// count against the connection's byte budget (`response_bytes`): the stream is abandoned where
/// the budget would be passed, nothing is read past it, and an operation whose answer no longer
/// fits fails on that budget.
#[test]
fn the_get_streams_bytes_count_against_the_byte_budget() {
    const BUDGET: u64 = 8 * 1024;
    for split in SPLITS {
        let mut h = legacy_with(true, split, |c| c.budgets.response_bytes = BUDGET);
        let comments = ": keep-alive\n".repeat(64);
        let mut outcome = None;
        // Each operation reopens a stream the flood ended, while bytes are left.
        for _ in 0..4 {
            while let Some(r) = h.outstanding.iter().find(|r| r.method == "GET").cloned() {
                h.outstanding.retain(|x| x.exchange != r.exchange);
                h.feed(r.exchange, &sse_response(&[], "", true));
                for _ in 0..16 {
                    h.feed(r.exchange, &chunk(&comments));
                }
                assert!(h.abandoned.contains(&r.exchange), "{split:?}");
            }
            assert!(h.conn.bytes_read() <= BUDGET, "{}", h.conn.bytes_read());
            h.call("echo", "{}");
            let Some(r) = h.outstanding.iter().find(|r| r.method == "POST").cloned() else {
                break;
            };
            h.outstanding.retain(|x| x.exchange != r.exchange);
            let pad = "x".repeat(2048);
            let result = format!(r#"{{"content":[{{"type":"text","text":"{pad}"}}]}}"#);
            h.feed(
                r.exchange,
                &json_response(200, &result_msg(r.rpc_id(), &result)),
            );
            let events: Vec<Event> = h
                .take_events()
                .into_iter()
                .filter(|e| matches!(e, Event::Failed { .. } | Event::CallFinished(_)))
                .collect();
            if let [Event::Failed { error, .. }] = events.as_slice() {
                outcome = Some(error.budget().map(|b| b.budget));
                break;
            }
        }
        assert!(h.conn.bytes_read() <= BUDGET, "{}", h.conn.bytes_read());
        assert_eq!(
            outcome,
            Some(Some(mcp_sansio::Budget::ResponseBytes)),
            "{split:?}: the floods spend the budget the calls need"
        );
    }
}
