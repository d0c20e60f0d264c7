//! MCP over HTTP/2 in virtual time: the flows of the HTTP/1.1 tests as streams of one shared
//! socket ([`H2Socket`]), against a scripted server written with the crate's own frame codec and
//! HPACK, whole and in 1- and 3-byte pieces.

use mcp_sansio_test_support::h2server;
use mcp_sansio_test_support::hostile::h2_play::Windows;

use std::collections::VecDeque;
use std::time::Duration;

use h2server::{drive, hello, result, rst, summarize, H2Peer, Run, SeenRequest, Split};
use mcp_sansio::h2::{H2Config, H2Error};
use mcp_sansio::internals::h2::frame::{Frame, Reason};
use mcp_sansio::mux::{H2Socket, WorkId};
use mcp_sansio::{Budget, Config, Connection, Era, EraHint, Error, Event, Instant};

const SPLITS: [Split; 3] = [Split::Whole, Split::Chunks(1), Split::Chunks(3)];
const URL: &str = "https://mcp.example.com:8443/mcp";
const TOOLS: &str = r#"{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}"#;
const CALL_OK: &str = r#"{"content":[{"type":"text","text":"hi"}]}"#;
const LONG: Duration = Duration::from_secs(600);

fn modern_config() -> Config {
    let mut c = Config::new(URL).unwrap();
    c.era_hint = Some(EraHint {
        era: Era::Modern,
        version: "2026-07-28".into(),
    });
    c
}

fn socket_with(configs: Vec<Config>) -> (H2Socket, Vec<WorkId>) {
    let mut s = H2Socket::new(Instant::ZERO, H2Config::default(), "https");
    let works = configs
        .into_iter()
        .map(|c| s.add(Connection::new(c).unwrap()))
        .collect();
    (s, works)
}

/// A socket whose one work item, made with `config`, connects at time zero, with a fresh peer
/// and the clock at zero.
fn connected(config: Config) -> (H2Socket, Vec<WorkId>, H2Peer, Instant) {
    let (mut s, w) = socket_with(vec![config]);
    let now = Instant::ZERO;
    s.connection_mut(w[0]).unwrap().connect(now);
    (s, w, H2Peer::default(), now)
}

/// As [`connected`], and the work item calls `echo` with `{}` at time zero too.
fn calling_echo(config: Config) -> (H2Socket, Vec<WorkId>, H2Peer, Instant) {
    let (mut s, w, peer, now) = connected(config);
    s.connection_mut(w[0])
        .unwrap()
        .call_tool(now, "echo", b"{}");
    (s, w, peer, now)
}

/// Moves work item `old` from `s` to a fresh socket, with the request `s` could not send.
fn onto_a_fresh_socket(
    s: &mut H2Socket,
    now: Instant,
    old: WorkId,
    transmit: mcp_sansio::Transmit,
) -> H2Socket {
    let conn = s.remove(now, old).unwrap();
    let mut fresh = H2Socket::new(now, H2Config::default(), "https");
    let work = fresh.add(conn);
    fresh.resend(work, transmit);
    fresh
}
/// Drives the socket from the server's preface, whole, for up to [`LONG`].
fn drive_whole(
    socket: &mut H2Socket,
    peer: &mut H2Peer,
    now: &mut Instant,
    respond: impl FnMut(&mut H2Peer, &SeenRequest) -> Vec<u8>,
) -> Run {
    drive(socket, peer, now, Split::Whole, hello(), LONG, respond)
}

/// A modern server: lists one tool, answers every call.
fn modern(peer: &mut H2Peer, r: &SeenRequest) -> Vec<u8> {
    match r.rpc_method().as_str() {
        "tools/list" => peer.json(r.stream, &result(r.rpc_id(), TOOLS)),
        "tools/call" => peer.json(r.stream, &result(r.rpc_id(), CALL_OK)),
        _ => peer.response(r.stream, 404, "", b""),
    }
}

fn ops(run: &Run) -> Vec<String> {
    run.summary()
        .into_iter()
        .filter(|l| !l.contains(":Finished ") && !l.contains(":Abandoned "))
        .collect()
}

/// The error of the first `Failed` event of a run.
fn first_failure(run: &Run) -> Option<Error> {
    run.events.iter().find_map(|(_, e)| match e {
        Event::Failed { error, .. } => Some(error.clone()),
        _ => None,
    })
}

#[test]
fn modern_list_and_call_as_streams_whatever_the_split() {
    let mut seen = Vec::new();
    for split in SPLITS {
        let (mut s, w) = socket_with(vec![modern_config()]);
        let mut peer = H2Peer::default();
        let mut now = Instant::ZERO;
        let c = s.connection_mut(w[0]).unwrap();
        c.connect(now);
        c.list_tools(now);
        let mut run = drive(&mut s, &mut peer, &mut now, split, hello(), LONG, modern);
        s.connection_mut(w[0])
            .unwrap()
            .call_tool(now, "echo", b"{}");
        let second = drive(&mut s, &mut peer, &mut now, split, Vec::new(), LONG, modern);
        run.events.extend(second.events);
        assert!(run.socket_errors.is_empty() && second.socket_errors.is_empty());
        // One stream per request, odd ids, on the one socket, which stays open.
        let streams: Vec<u32> = peer.requests.iter().map(|r| r.stream).collect();
        assert_eq!(streams, vec![1, 3], "{split:?}");
        assert!(!s.is_closed());
        // `:authority` instead of Host; lowercase names; the era header.
        for r in &peer.requests {
            assert_eq!(r.header(":authority"), Some("mcp.example.com:8443"));
            assert_eq!(r.header(":scheme"), Some("https"));
            assert_eq!(r.header(":path"), Some("/mcp"));
            assert_eq!(r.header(":method"), Some("POST"));
            assert!(r.header("host").is_none());
            assert!(r.headers.iter().all(|(n, _)| *n == n.to_ascii_lowercase()));
            assert_eq!(r.header("mcp-protocol-version"), Some("2026-07-28"));
        }
        // The work item was charged every octet of its streams.
        assert!(s.connection(w[0]).unwrap().bytes_read() > 0);
        seen.push(ops(&run));
    }
    assert_eq!(
        seen[0],
        vec![
            "0:Connected Modern 2026-07-28".to_owned(),
            "0:ToolsListed [\"echo\"]".into(),
            "0:CallFinished error=false".into()
        ]
    );
    assert!(seen.iter().all(|s| *s == seen[0]), "{seen:#?}");
}

/// A 2025-06-18 server's answers to discovery (404) and to the handshake, whose `initialize`
/// result is `init` under session `sess-1`; `None` for any other method.
fn legacy_handshake(peer: &mut H2Peer, r: &SeenRequest, init: &str) -> Option<Vec<u8>> {
    let sid = r.stream;
    match r.rpc_method().as_str() {
        "server/discover" => Some(peer.response(sid, 404, "", b"")),
        "initialize" => {
            let body = result(r.rpc_id(), init);
            Some(peer.with_session(sid, "application/json", "sess-1", body.as_bytes()))
        }
        "notifications/initialized" => Some(peer.response(sid, 202, "", b"")),
        _ => None,
    }
}

#[test]
fn legacy_session_over_http2_keeps_its_session_id() {
    let mut seen = Vec::new();
    for split in SPLITS {
        let (mut s, w, mut peer, mut now) = connected(Config::new(URL).unwrap());
        let legacy = |peer: &mut H2Peer, r: &SeenRequest| -> Vec<u8> {
            let init = r#"{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}"#;
            if let Some(out) = legacy_handshake(peer, r, init) {
                return out;
            }
            match r.rpc_method().as_str() {
                "tools/list" => {
                    assert_eq!(r.header("mcp-session-id"), Some("sess-1"));
                    peer.json(r.stream, &result(r.rpc_id(), TOOLS))
                }
                _ => peer.response(r.stream, 400, "", b""),
            }
        };
        let mut run = drive(&mut s, &mut peer, &mut now, split, hello(), LONG, legacy);
        s.connection_mut(w[0]).unwrap().list_tools(now);
        run.events
            .extend(drive(&mut s, &mut peer, &mut now, split, Vec::new(), LONG, legacy).events);
        assert_eq!(s.connection(w[0]).unwrap().session_id(), Some("sess-1"));
        let methods: Vec<String> = peer.requests.iter().map(|r| r.rpc_method()).collect();
        assert_eq!(
            methods,
            [
                "server/discover",
                "initialize",
                "notifications/initialized",
                "tools/list"
            ]
        );
        seen.push(ops(&run));
    }
    assert_eq!(seen[0].len(), 2, "{:?}", seen[0]);
    assert!(seen[0][0].starts_with("0:Connected Legacy 2025-06-18"));
    assert!(seen.iter().all(|s| *s == seen[0]), "{seen:#?}");
}

#[test]
fn an_event_stream_on_a_stream_delivers_progress_then_the_result() {
    let mut seen = Vec::new();
    for split in SPLITS {
        let (mut s, _, mut peer, mut now) = calling_echo(modern_config());
        let run = drive(
            &mut s,
            &mut peer,
            &mut now,
            split,
            hello(),
            LONG,
            |peer, r| peer.progress_then_result(r, CALL_OK),
        );
        assert!(run.socket_errors.is_empty());
        seen.push(ops(&run));
    }
    assert_eq!(seen[0].len(), 3, "{:?}", seen[0]);
    assert!(seen[0][1].contains("Progress"), "{:?}", seen[0]);
    assert_eq!(seen[0][2], "0:CallFinished error=false");
    assert!(seen.iter().all(|s| *s == seen[0]), "{seen:#?}");
}

#[test]
fn a_timed_out_legacy_call_resets_its_stream_sends_cancelled_and_keeps_the_socket() {
    let mut config = Config::new(URL).unwrap();
    config.era_hint = Some(EraHint {
        era: Era::Legacy,
        version: "2025-06-18".into(),
    });
    config.budgets.call_time = Duration::from_secs(5);
    let (mut s, w, mut peer, mut now) = connected(config);
    let mut call_stream = 0;
    let run = drive(
        &mut s,
        &mut peer,
        &mut now,
        Split::Chunks(3),
        hello(),
        LONG,
        |peer, r| {
            let sid = r.stream;
            match r.rpc_method().as_str() {
                "initialize" => peer.legacy_initialize(r),
                "notifications/initialized" | "notifications/cancelled" => {
                    peer.response(sid, 202, "", b"")
                }
                _ => Vec::new(),
            }
        },
    );
    assert!(ops(&run)[0].starts_with("0:Connected Legacy"));
    s.connection_mut(w[0])
        .unwrap()
        .call_tool(now, "slow", b"{}");
    let run = drive(
        &mut s,
        &mut peer,
        &mut now,
        Split::Chunks(3),
        Vec::new(),
        LONG,
        |peer, r| {
            let sid = r.stream;
            match r.rpc_method().as_str() {
                "tools/call" => {
                    call_stream = sid;
                    Vec::new() // never answered
                }
                _ => peer.response(sid, 202, "", b""),
            }
        },
    );
    let failed = first_failure(&run).expect("the call fails");
    assert_eq!(
        failed.budget().map(|b| (b.budget, b.limit)),
        Some((Budget::CallTime, 5000))
    );
    assert_eq!(run.ended, Instant::from_millis(5000));
    // RST_STREAM(CANCEL) for the call's stream, then `notifications/cancelled` on a new stream
    // of the same socket, which stays open.
    assert!(peer.frames.iter().any(|f| matches!(
        f,
        Frame::RstStream { stream_id, reason } if *stream_id == call_stream && *reason == Reason::CANCEL
    )));
    let last = peer.requests.last().unwrap();
    assert_eq!(last.rpc_method(), "notifications/cancelled");
    assert!(last.stream > call_stream);
    assert!(!s.is_closed());
    assert!(run.fresh.is_empty());
}

/// A `tools/call` refused with REFUSED_STREAM goes once more, on a fresh socket, under a new
/// JSON-RPC id, counted in `responses_per_request`. Refused again there, the stream is broken
/// and, in the 2026-07-28 era, the request lost (MCP 2026-07-28, Streamable HTTP: "A broken
/// response stream loses the in-flight request; clients MUST re-issue it as a new request with a
/// new request ID"): it is re-issued on that socket, a new id each time, until
/// `responses_per_request` sendings, and then fails with that budget.
#[test]
fn refused_stream_retries_a_call_once_on_a_fresh_socket() {
    for refuse_twice in [false, true] {
        let (mut s, _, mut peer, mut now) = calling_echo(modern_config());
        let run = drive(
            &mut s,
            &mut peer,
            &mut now,
            Split::Chunks(3),
            hello(),
            LONG,
            |_, r| rst(r.stream, Reason::REFUSED_STREAM),
        );
        assert_eq!(run.fresh.len(), 1, "the retry asks for a fresh socket");
        assert!(!s.is_closed(), "a refused stream leaves the socket usable");
        let (old, transmit) = run.fresh.into_iter().next().unwrap();
        assert!(transmit.fresh_socket);
        let mut s2 = onto_a_fresh_socket(&mut s, now, old, transmit);
        let mut peer2 = H2Peer::default();
        let run2 = drive(
            &mut s2,
            &mut peer2,
            &mut now,
            Split::Chunks(3),
            hello(),
            LONG,
            |p, r| {
                if refuse_twice {
                    rst(r.stream, Reason::REFUSED_STREAM)
                } else {
                    modern(p, r)
                }
            },
        );
        let mut ids: Vec<u64> = peer.requests.iter().map(SeenRequest::rpc_id).collect();
        ids.extend(peer2.requests.iter().map(SeenRequest::rpc_id));
        let unique: std::collections::BTreeSet<u64> = ids.iter().copied().collect();
        assert_eq!(unique.len(), ids.len(), "never one id twice: {ids:?}");
        assert!(peer2
            .requests
            .iter()
            .all(|r| r.rpc_method() == "tools/call"));
        let last = ops(&run2).pop().unwrap();
        if refuse_twice {
            assert!(run2.fresh.is_empty(), "never a second fresh socket");
            let limit = mcp_sansio::Budgets::default().responses_per_request;
            assert_eq!(ids.len(), limit as usize, "every sending counted");
            let error = first_failure(&run2).unwrap();
            assert_eq!(
                error.budget().map(|b| b.budget),
                Some(Budget::ResponsesPerRequest)
            );
        } else {
            assert_eq!(peer2.requests.len(), 1);
            assert_eq!(last, "0:CallFinished error=false");
        }
    }
}

/// A GOAWAY whose last stream id is below the call's stream shows it was never processed: the
/// call goes once more on a fresh socket.
#[test]
fn goaway_below_the_stream_retries_the_call_once() {
    let (mut s, _, mut peer, mut now) = calling_echo(modern_config());
    let run = drive_whole(&mut s, &mut peer, &mut now, |_, _| {
        h2server::frame(Frame::GoAway {
            last_stream_id: 0,
            reason: Reason::NO_ERROR,
            debug: Vec::new(),
        })
    });
    assert_eq!(run.fresh.len(), 1, "{:?}", run.summary());
    assert!(run.fresh[0].1.fresh_socket);
    assert_ne!(
        body_id(&run.fresh[0].1),
        peer.requests[0].rpc_id(),
        "the call goes once more under a new id"
    );
}

/// A server that answers its first request with `first` and every later one as [`modern`].
fn first_then_modern(
    mut first: impl FnMut(&mut H2Peer, &SeenRequest) -> Vec<u8>,
) -> impl FnMut(&mut H2Peer, &SeenRequest) -> Vec<u8> {
    let mut calls = 0;
    move |p, r| {
        calls += 1;
        if calls > 1 {
            modern(p, r)
        } else {
            first(p, r)
        }
    }
}

/// The head of an event-stream answer on `stream` and a keep-alive comment: an answer under way.
fn answer_under_way(peer: &mut H2Peer, stream: u32) -> Vec<u8> {
    let fields = [(":status", "200"), ("content-type", "text/event-stream")];
    let mut out = peer.headers(stream, &fields, false);
    out.extend(h2server::data(stream, b": working\n\n", false));
    out
}

/// The JSON-RPC id of a request still to be sent.
fn body_id(t: &mcp_sansio::Transmit) -> u64 {
    let v: serde_json::Value = serde_json::from_slice(&t.request.body).unwrap();
    v["id"].as_u64().unwrap()
}

/// MCP 2026-07-28, Streamable HTTP (changelog item 9, SEP-2575): "A broken response stream
/// loses the in-flight request; clients MUST re-issue it as a new request with a new request
/// ID."
///
/// The server begins the call's answer (its head and a keep-alive comment on an event stream),
/// then resets the stream with `reason`: the call is re-issued on the same socket with a new
/// id, and finishes with the second answer. Whole and in 1- and 3-byte pieces.
#[test]
fn a_stream_reset_mid_answer_is_reissued_with_a_new_id() {
    for reason in [Reason::INTERNAL_ERROR, Reason::CANCEL, Reason::NO_ERROR] {
        let mut seen = Vec::new();
        for split in SPLITS {
            let (mut s, _, mut peer, mut now) = calling_echo(modern_config());
            let server = first_then_modern(|p, r| {
                let mut out = answer_under_way(p, r.stream);
                out.extend(rst(r.stream, reason));
                out
            });
            let run = drive(&mut s, &mut peer, &mut now, split, hello(), LONG, server);
            assert!(run.socket_errors.is_empty() && run.fresh.is_empty());
            assert!(!s.is_closed(), "a reset stream leaves the socket usable");
            let calls: Vec<&SeenRequest> = peer.requests.iter().collect();
            assert_eq!(calls.len(), 2, "{reason:?} {split:?}");
            assert!(calls.iter().all(|r| r.rpc_method() == "tools/call"));
            assert_ne!(calls[0].rpc_id(), calls[1].rpc_id(), "a new id");
            assert_eq!(calls[1].json()["params"]["name"], "echo");
            seen.push(ops(&run));
        }
        assert_eq!(
            seen[0],
            [
                "0:Connected Modern 2026-07-28",
                "0:CallFinished error=false"
            ],
            "{reason:?}"
        );
        assert!(seen.iter().all(|s| *s == seen[0]), "{seen:#?}");
    }
}

/// MCP 2026-07-28, Streamable HTTP: "A broken response stream loses the in-flight request;
/// clients MUST re-issue it as a new request with a new request ID." A stream reset before its
/// head (not REFUSED_STREAM: the server may have processed it) is re-issued with a new id in
/// this era. A legacy session's call, which the server may have run and which has no event id
/// to resume from, fails with the reset and is not sent again.
#[test]
fn a_stream_reset_before_its_head_is_reissued_in_the_modern_era_only() {
    for split in SPLITS {
        let (mut s, _, mut peer, mut now) = calling_echo(modern_config());
        let server = first_then_modern(|_, r| rst(r.stream, Reason::INTERNAL_ERROR));
        let run = drive(&mut s, &mut peer, &mut now, split, hello(), LONG, server);
        assert!(run.fresh.is_empty(), "{split:?}: the same socket");
        assert_eq!(peer.requests.len(), 2, "{split:?}");
        assert_ne!(peer.requests[0].rpc_id(), peer.requests[1].rpc_id());
        assert_eq!(
            ops(&run),
            [
                "0:Connected Modern 2026-07-28",
                "0:CallFinished error=false"
            ],
            "{split:?}"
        );

        // A legacy session.
        let (mut s, w, mut peer, mut now) = connected(Config::new(URL).unwrap());
        let legacy = |peer: &mut H2Peer, r: &SeenRequest| -> Vec<u8> {
            let init = r#"{"protocolVersion":"2025-06-18","capabilities":{}}"#;
            legacy_handshake(peer, r, init).unwrap_or_else(|| rst(r.stream, Reason::INTERNAL_ERROR))
        };
        drive(&mut s, &mut peer, &mut now, split, hello(), LONG, legacy);
        s.connection_mut(w[0])
            .unwrap()
            .call_tool(now, "echo", b"{}");
        let run = drive(&mut s, &mut peer, &mut now, split, Vec::new(), LONG, legacy);
        let calls = peer
            .requests
            .iter()
            .filter(|r| r.rpc_method() == "tools/call")
            .count();
        assert_eq!(calls, 1, "{split:?}: not sent again");
        let error = first_failure(&run).expect("the call fails");
        assert_eq!(
            error,
            Error::from(H2Error::Reset {
                reason: Reason::INTERNAL_ERROR
            })
        );
    }
}

/// MCP 2026-07-28, Streamable HTTP: "A broken response stream loses the in-flight request;
/// clients MUST re-issue it as a new request with a new request ID." The connection carrying
/// the call's stream is lost mid-answer (the server closes the socket), or the server's GOAWAY
/// leaves the stream out after its head: the call is re-issued with a new id, on a fresh socket
/// since this one can carry nothing more, and finishes there. Whole and in pieces.
#[test]
fn a_connection_lost_or_going_away_mid_answer_reissues_the_call_on_a_fresh_socket() {
    for goaway in [false, true] {
        for split in SPLITS {
            let (mut s, _, mut peer, mut now) = calling_echo(modern_config());
            // A short run: the answer stays under way (the call's deadline is far).
            let short = Duration::from_secs(1);
            let run = drive(
                &mut s,
                &mut peer,
                &mut now,
                split,
                hello(),
                short,
                |p, r| {
                    let mut out = answer_under_way(p, r.stream);
                    if goaway {
                        out.extend(h2server::frame(Frame::GoAway {
                            last_stream_id: 0,
                            reason: Reason::NO_ERROR,
                            debug: Vec::new(),
                        }));
                    }
                    out
                },
            );
            let mut fresh = run.fresh;
            if !goaway {
                assert!(fresh.is_empty(), "{split:?}: the answer is under way");
                s.handle_eof(now);
                let run = drive(&mut s, &mut peer, &mut now, split, Vec::new(), LONG, modern);
                fresh = run.fresh;
            }
            assert_eq!(fresh.len(), 1, "{goaway} {split:?}: the call goes again");
            let (old, transmit) = fresh.pop().unwrap();
            assert_ne!(body_id(&transmit), peer.requests[0].rpc_id(), "a new id");
            let mut s2 = onto_a_fresh_socket(&mut s, now, old, transmit);
            let mut peer2 = H2Peer::default();
            let run2 = drive(&mut s2, &mut peer2, &mut now, split, hello(), LONG, modern);
            assert_eq!(peer2.requests.len(), 1);
            assert_eq!(peer2.requests[0].rpc_method(), "tools/call");
            assert_eq!(
                ops(&run2),
                ["0:CallFinished error=false"],
                "{goaway} {split:?}"
            );
        }
    }
}

/// Re-issues are bounded: a server that resets every answer mid-way sees
/// `responses_per_request` sendings of the call, each with its own id, and the call then fails
/// with that budget.
#[test]
fn stream_resets_are_reissued_within_responses_per_request() {
    let (mut s, _, mut peer, mut now) = calling_echo(modern_config());
    let run = drive_whole(&mut s, &mut peer, &mut now, |p, r| {
        let mut out = p.headers(
            r.stream,
            &[(":status", "200"), ("content-type", "text/event-stream")],
            false,
        );
        out.extend(rst(r.stream, Reason::INTERNAL_ERROR));
        out
    });
    let limit = mcp_sansio::Budgets::default().responses_per_request as usize;
    assert_eq!(peer.requests.len(), limit);
    let ids: std::collections::BTreeSet<u64> =
        peer.requests.iter().map(SeenRequest::rpc_id).collect();
    assert_eq!(ids.len(), limit, "never one id twice");
    let error = first_failure(&run).expect("the call fails");
    assert_eq!(
        error.budget().map(|b| b.budget),
        Some(Budget::ResponsesPerRequest)
    );
}

/// A modern configuration whose answers may take 600 bytes at the most.
fn small_byte_budget() -> Config {
    let mut config = modern_config();
    config.budgets.response_bytes = 600;
    config
}

/// Every work item connects and lists tools at `now`.
fn connect_and_list_all(socket: &mut H2Socket, work: &[WorkId], now: Instant) {
    for &x in work {
        let c = socket.connection_mut(x).unwrap();
        c.connect(now);
        c.list_tools(now);
    }
}

/// Two work items on one socket, each with its own byte budget: the one whose answer is too
/// large fails on its budget (with its configured limit), the other finishes, and the socket
/// serves both and stays open.
#[test]
fn two_work_items_multiplexed_keep_separate_budgets() {
    let (mut s, w) = socket_with(vec![small_byte_budget(), modern_config()]);
    let mut peer = H2Peer::default();
    let mut now = Instant::ZERO;
    connect_and_list_all(&mut s, &w, now);
    let big = format!(
        r#"{{"tools":[{{"name":"echo","description":"{}","inputSchema":{{"type":"object"}}}}]}}"#,
        "x".repeat(2000)
    );
    let mut seen = Vec::new();
    for split in SPLITS {
        let (mut s2, w2) = socket_with(vec![small_byte_budget(), modern_config()]);
        connect_and_list_all(&mut s2, &w2, now);
        let mut p2 = H2Peer::default();
        let run = drive(&mut s2, &mut p2, &mut now, split, hello(), LONG, |p, r| {
            p.json(r.stream, &result(r.rpc_id(), &big))
        });
        assert!(run.socket_errors.is_empty());
        assert!(!s2.is_closed());
        // Both streams went on the one socket, and each was charged to its own item.
        assert_eq!(p2.requests.len(), 2);
        assert!(s2.connection(w2[0]).unwrap().bytes_read() <= 600);
        assert!(s2.connection(w2[1]).unwrap().bytes_read() > 2000);
        let failed = run
            .events
            .iter()
            .find_map(|(x, e)| match e {
                Event::Failed { error, .. } => Some((*x, error.clone())),
                _ => None,
            })
            .expect("the small item fails");
        assert_eq!(failed.0, w2[0]);
        assert_eq!(
            failed.1.budget().map(|b| (b.budget, b.limit)),
            Some((Budget::ResponseBytes, 600))
        );
        assert!(run
            .events
            .iter()
            .any(|(x, e)| *x == w2[1] && matches!(e, Event::ToolsListed(_))));
        seen.push(ops(&run));
    }
    assert!(seen.iter().all(|x| *x == seen[0]), "{seen:#?}");
    // The first socket, driven too, lists for the large item.
    let run = drive_whole(&mut s, &mut peer, &mut now, modern);
    assert_eq!(
        ops(&run)
            .iter()
            .filter(|l| l.contains("ToolsListed"))
            .count(),
        2
    );
}

/// An event stream answer on `sid` that carries the session id `sess-1`.
fn sse(peer: &mut H2Peer, sid: u32, text: &str) -> Vec<u8> {
    peer.with_session(sid, "text/event-stream", "sess-1", text.as_bytes())
}

/// What [`legacy_resume`] leaves: the socket, its one work item and peer, the events of both
/// drives, the second drive's socket errors and the moment the listing was asked for.
struct LegacyResume {
    socket: H2Socket,
    work: WorkId,
    peer: H2Peer,
    run: Run,
    second_errors: Vec<H2Error>,
    listed_at: Instant,
    now: Instant,
}

/// A 2025-11-25 session over HTTP/2 in `split`: the handshake on event streams of session
/// `sess-1`, then a listing whose stream `list_stream` answers; the `GET` that resumes it is
/// checked by `check_get` and answered with the listing's result under event id `ev-2`.
fn legacy_resume(
    split: Split,
    list_stream: impl Fn(&mut H2Peer, u32) -> Vec<u8>,
    check_get: impl Fn(&SeenRequest),
) -> LegacyResume {
    let mut config = Config::new(URL).unwrap();
    config.era_hint = Some(EraHint {
        era: Era::Legacy,
        version: "2025-11-25".into(),
    });
    let (mut s, w, mut peer, mut now) = connected(config);
    let list_id = std::cell::Cell::new(0);
    let server = |peer: &mut H2Peer, r: &SeenRequest| -> Vec<u8> {
        let sid = r.stream;
        match r.rpc_method().as_str() {
            "initialize" => {
                let init = r#"{"protocolVersion":"2025-11-25","capabilities":{}}"#;
                sse(
                    peer,
                    sid,
                    &format!("data: {}\n\n", result(r.rpc_id(), init)),
                )
            }
            "notifications/initialized" => peer.response(sid, 202, "", b""),
            "tools/list" => {
                list_id.set(r.rpc_id());
                list_stream(peer, sid)
            }
            "GET" => {
                check_get(r);
                let done = result(list_id.get(), TOOLS);
                sse(peer, sid, &format!("id: ev-2\ndata: {done}\n\n"))
            }
            _ => peer.response(sid, 400, "", b""),
        }
    };
    let mut run = drive(&mut s, &mut peer, &mut now, split, hello(), LONG, server);
    let listed_at = now;
    s.connection_mut(w[0]).unwrap().list_tools(now);
    let second = drive(&mut s, &mut peer, &mut now, split, Vec::new(), LONG, server);
    run.events.extend(second.events);
    LegacyResume {
        socket: s,
        work: w[0],
        peer,
        run,
        second_errors: second.socket_errors,
        listed_at,
        now,
    }
}

/// The methods of the requests the peer saw, in order.
fn methods(peer: &H2Peer) -> Vec<String> {
    peer.requests.iter().map(|r| r.rpc_method()).collect()
}

/// Every split ended with the same events, the last of them the listing of `echo`.
fn assert_every_split_listed_echo(seen: &[Vec<String>]) {
    assert_eq!(seen[0].last().unwrap(), "0:ToolsListed [\"echo\"]");
    assert!(seen.iter().all(|x| *x == seen[0]), "{seen:#?}");
}

/// A legacy event stream that ends after an event id is resumed with `GET` and
/// `Last-Event-ID` on a new stream of the same socket, after the server's `retry:`.
#[test]
fn a_legacy_stream_is_resumed_on_a_new_stream_after_its_retry() {
    let mut seen = Vec::new();
    for split in SPLITS {
        let LegacyResume {
            socket: s,
            work,
            peer,
            run,
            second_errors,
            listed_at,
            now,
        } = legacy_resume(
            split,
            |peer, sid| sse(peer, sid, "id: ev-1\nretry: 2500\ndata:\n\n"),
            |r| {
                assert_eq!(r.header("last-event-id"), Some("ev-1"));
                assert_eq!(r.header("accept"), Some("text/event-stream"));
                assert_eq!(r.header("mcp-session-id"), Some("sess-1"));
            },
        );
        assert!(second_errors.is_empty());
        assert_eq!(
            methods(&peer),
            [
                "initialize",
                "notifications/initialized",
                "tools/list",
                "GET"
            ]
        );
        assert!(
            now >= listed_at + Duration::from_millis(2500),
            "waits the retry"
        );
        assert_eq!(s.connection(work).unwrap().gets_sent(), 1);
        assert!(!s.is_closed());
        seen.push(ops(&run));
    }
    assert_every_split_listed_echo(&seen);
}

/// MCP 2025-11-25, Streamable HTTP, resumability: a client resumes a broken stream with `GET`
/// and `Last-Event-ID` (re-issuing with a new id is the 2026-07-28 rule only). A legacy event
/// stream the server resets (RST_STREAM) after an event id is resumed from that id on a new
/// stream of the same socket, and the listing is not sent again. Whole and in pieces.
#[test]
fn a_legacy_stream_reset_after_an_event_id_is_resumed_not_reissued() {
    let mut seen = Vec::new();
    for split in SPLITS {
        let resumed = legacy_resume(
            split,
            |peer, sid| {
                let fields = [
                    (":status", "200"),
                    ("content-type", "text/event-stream"),
                    ("mcp-session-id", "sess-1"),
                ];
                let mut out = peer.headers(sid, &fields, false);
                out.extend(h2server::data(sid, b"id: ev-1\ndata:\n\n", false));
                out.extend(rst(sid, Reason::INTERNAL_ERROR));
                out
            },
            |r| assert_eq!(r.header("last-event-id"), Some("ev-1")),
        );
        assert_eq!(
            methods(&resumed.peer),
            [
                "initialize",
                "notifications/initialized",
                "tools/list",
                "GET"
            ],
            "{split:?}"
        );
        assert!(!resumed.socket.is_closed());
        seen.push(ops(&resumed.run));
    }
    assert_every_split_listed_echo(&seen);
}

/// The retry after REFUSED_STREAM is one more response of the request: with
/// `responses_per_request` at 1 there is none, and the budget is the cause.
#[test]
fn the_refused_stream_retry_counts_in_responses_per_request() {
    let mut config = modern_config();
    config.budgets.responses_per_request = 1;
    let (mut s, _, mut peer, mut now) = calling_echo(config);
    let run = drive_whole(&mut s, &mut peer, &mut now, |_, r| {
        rst(r.stream, Reason::REFUSED_STREAM)
    });
    assert!(run.fresh.is_empty());
    let error = first_failure(&run).expect("the call fails");
    assert_eq!(
        error.budget().map(|b| (b.budget, b.limit)),
        Some((Budget::ResponsesPerRequest, 1))
    );
}

/// The server closes an idle socket between two calls: the second call is not failed with the
/// closed socket, its request asks for a fresh one, and on it the call finishes.
#[test]
fn a_call_after_the_server_closed_the_idle_socket_goes_on_a_fresh_socket() {
    let (mut s, w, mut peer, mut now) = calling_echo(modern_config());
    let run = drive_whole(&mut s, &mut peer, &mut now, modern);
    assert_eq!(ops(&run).pop().unwrap(), "0:CallFinished error=false");
    s.handle_eof(now);
    assert!(s.is_closed());
    s.connection_mut(w[0])
        .unwrap()
        .call_tool(now, "echo", b"{}");
    let run = drive(
        &mut s,
        &mut peer,
        &mut now,
        Split::Whole,
        Vec::new(),
        LONG,
        modern,
    );
    assert!(
        !run.events
            .iter()
            .any(|(_, e)| matches!(e, Event::Failed { .. })),
        "the call does not fail with the closed socket: {:?}",
        run.events
    );
    assert_eq!(run.fresh.len(), 1, "the call asks for a fresh socket");
    let (old, transmit) = run.fresh.into_iter().next().unwrap();
    let mut s2 = onto_a_fresh_socket(&mut s, now, old, transmit);
    let mut peer2 = H2Peer::default();
    let run2 = drive_whole(&mut s2, &mut peer2, &mut now, modern);
    assert_eq!(peer2.requests.len(), 1);
    assert_eq!(ops(&run2).pop().unwrap(), "0:CallFinished error=false");
}

// ---------------------------------------------------------------------------------------------
// A too-large answer from a server that keeps to the flow-control windows

/// How a server that keeps to the client's windows writes a body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Writes {
    /// In DATA frames of this many octets (the last one shorter), each written only once the
    /// windows have room for all of it.
    WholeFrames(usize),
    /// In DATA frames of at most this many octets, each as large as the windows allow now.
    WhatFits(usize),
}

/// What a windowed run saw, at a clock that never moves.
struct Windowed {
    events: Vec<Event>,
    /// Octets the server wrote on the streams (HEADERS and DATA frames, headers included).
    stream_octets: u64,
    /// Whether the server still had body octets to write when nothing moved any more.
    stalled: bool,
}

/// Drives `socket` against a server that answers each request with a 200 `application/json`
/// HEADERS frame and `answer`'s body as DATA, written as `writes` says within the windows the
/// client's frames open ([`Windows`]), and stops writing on a stream the client reset. The
/// clock stays at `now`: no deadline can end anything, so an operation that has not ended when
/// nothing moves any more has stalled.
fn drive_windowed(
    socket: &mut H2Socket,
    now: Instant,
    split: Split,
    writes: Writes,
    answer: impl Fn(&SeenRequest) -> String,
) -> Windowed {
    let mut peer = H2Peer::default();
    let mut windows = Windows::default();
    let mut out = hello();
    // Stream, body, octets of it written.
    let mut sending: VecDeque<(u32, Vec<u8>, usize)> = VecDeque::new();
    let mut run = Windowed {
        events: Vec::new(),
        stream_octets: 0,
        stalled: false,
    };
    for _ in 0..1_000_000 {
        let mut moved = false;
        while let Some(bytes) = socket.poll_transmit(now) {
            moved = true;
            for req in peer.read(&bytes) {
                let head = peer.headers(
                    req.stream,
                    &[(":status", "200"), ("content-type", "application/json")],
                    false,
                );
                run.stream_octets += head.len() as u64;
                out.extend(head);
                sending.push_back((req.stream, answer(&req).into_bytes(), 0));
            }
            windows.observe(&peer.frames);
        }
        assert!(socket.poll_fresh().is_none());
        while let Some((_, e)) = socket.poll_event(now) {
            moved = true;
            run.events.push(e);
        }
        let reset: Vec<u32> = peer
            .frames
            .iter()
            .filter_map(|f| match f {
                Frame::RstStream { stream_id, .. } => Some(*stream_id),
                _ => None,
            })
            .collect();
        sending.retain(|(sid, body, at)| *at < body.len() && !reset.contains(sid));
        for (sid, body, at) in &mut sending {
            loop {
                let left = body.len() - *at;
                let room = windows.room(*sid).max(0) as usize;
                let n = match writes {
                    Writes::WholeFrames(f) if left.min(f) <= room => left.min(f),
                    Writes::WholeFrames(_) => 0,
                    Writes::WhatFits(f) => left.min(f).min(room),
                };
                if n == 0 {
                    break;
                }
                let end = *at + n == body.len();
                let frame = h2server::data(*sid, &body[*at..*at + n], end);
                run.stream_octets += frame.len() as u64;
                out.extend(frame);
                windows.take(*sid, n);
                *at += n;
                if end {
                    break;
                }
            }
        }
        if !out.is_empty() && !socket.is_closed() {
            let bytes = std::mem::take(&mut out);
            let n = match split {
                Split::Whole => bytes.len(),
                Split::Chunks(n) => n,
            };
            for piece in bytes.chunks(n) {
                if socket.handle_bytes(now, piece).is_err() {
                    break;
                }
            }
            continue;
        }
        if !moved {
            run.stalled = sending.iter().any(|(_, body, at)| *at < body.len());
            return run;
        }
    }
    panic!("the windowed run does not end");
}

/// A modern work item with a byte budget of `bytes` on a fresh socket, connected at time zero.
fn with_byte_budget(bytes: u64) -> (H2Socket, WorkId) {
    let mut config = modern_config();
    config.budgets.response_bytes = bytes;
    let (mut s, w) = socket_with(vec![config]);
    s.connection_mut(w[0]).unwrap().connect(Instant::ZERO);
    (s, w[0])
}

/// A `tools/call` result whose one text block holds `n` octets.
fn call_result_of(id: u64, n: usize) -> String {
    result(
        id,
        &format!(
            r#"{{"content":[{{"type":"text","text":"{}"}}]}}"#,
            "t".repeat(n)
        ),
    )
}

/// A `tools/list` page whose one tool's description holds `n` octets.
fn list_page_of(id: u64, n: usize) -> String {
    result(
        id,
        &format!(
            r#"{{"tools":[{{"name":"echo","description":"{}","inputSchema":{{"type":"object"}}}}]}}"#,
            "d".repeat(n)
        ),
    )
}

/// The one outcome of a windowed run: its operation's failure, or its result.
fn windowed_outcome(run: &Windowed) -> String {
    let ends: Vec<String> = run
        .events
        .iter()
        .filter(|e| {
            matches!(
                e,
                Event::Failed { .. } | Event::CallFinished(_) | Event::ToolsListed(_)
            )
        })
        .map(summarize)
        .collect();
    assert!(ends.len() <= 1, "{ends:?}");
    ends.into_iter().next().unwrap_or_default()
}

/// A call, and a listing page, whose answer is larger than the byte budget, from a server that
/// writes only what the client's flow-control windows allow (whole frames that must fit, or as
/// much as fits) and waits for WINDOW_UPDATE before writing more: the operation ends on
/// `response_bytes` with its configured limit, with the clock never moving (no deadline is
/// involved), having read exactly its budget, whole and split alike. Budgets below, at and
/// above the largest stream window (256 KiB), answers twice the budget.
#[test]
fn a_too_large_answer_within_the_windows_ends_on_the_byte_budget_not_a_timeout() {
    let writes = [
        Writes::WholeFrames(16_384),
        Writes::WholeFrames(4096),
        Writes::WholeFrames(1000),
        Writes::WhatFits(16_384),
    ];
    for budget in [70_000u64, 100_000, 300_000, 1 << 20] {
        for w in writes {
            for list in [false, true] {
                let mut seen = Vec::new();
                for split in [Split::Whole, Split::Chunks(7)] {
                    let (mut s, work) = with_byte_budget(budget);
                    let c = s.connection_mut(work).unwrap();
                    if list {
                        c.list_tools(Instant::ZERO);
                    } else {
                        c.call_tool(Instant::ZERO, "echo", b"{}");
                    }
                    let n = 2 * budget as usize;
                    let run = drive_windowed(&mut s, Instant::ZERO, split, w, |r| {
                        if list {
                            list_page_of(r.rpc_id(), n)
                        } else {
                            call_result_of(r.rpc_id(), n)
                        }
                    });
                    let case = format!("budget {budget}, {w:?}, list {list}, {split:?}");
                    let error = run
                        .events
                        .iter()
                        .find_map(|e| match e {
                            Event::Failed { error, .. } => Some(error.clone()),
                            _ => None,
                        })
                        .unwrap_or_else(|| panic!("{case}: no failure (stalled: {})", run.stalled));
                    assert_eq!(
                        error.budget().map(|b| (b.budget, b.limit)),
                        Some((Budget::ResponseBytes, budget)),
                        "{case}: {error}"
                    );
                    assert_eq!(s.connection(work).unwrap().bytes_read(), budget, "{case}");
                    assert!(!s.is_closed(), "{case}");
                    seen.push(windowed_outcome(&run));
                }
                assert_eq!(seen[0], seen[1], "whole and split differ");
            }
        }
    }
}

/// The octets a call's answer takes on its stream when its result text holds `n` octets and
/// the server writes it in whole frames of `frame` octets: the HEADERS frame and every DATA
/// frame, headers included (from the frames themselves, not from the client's accounting).
fn answer_octets(n: usize, frame: usize) -> u64 {
    let mut peer = H2Peer::default();
    let head = peer.headers(
        1,
        &[(":status", "200"), ("content-type", "application/json")],
        false,
    );
    let body = call_result_of(2, n).len();
    (head.len() + body + 9 * body.div_ceil(frame)) as u64
}

/// The edges of the byte budget over HTTP/2, through windows the client opens, the clock never
/// moving: an answer whose octets (every frame of its stream) are exactly the budget is read
/// whole and the call finishes; an answer one octet longer ends the call on `response_bytes`
/// with its limit, having read exactly the budget. Whole and in 1-octet pieces, with budgets
/// below and above the largest stream window, the server writing whole frames (of a size known
/// in advance, so that the answer's octets are too).
#[test]
fn an_answer_of_exactly_the_byte_budget_is_read_and_one_octet_more_is_refused() {
    for text in [50_000usize, 400_000] {
        for frame in [16_384, 4096] {
            let w = Writes::WholeFrames(frame);
            let budget = answer_octets(text, frame);
            // One octet longer in the same number of frames.
            assert_eq!(answer_octets(text + 1, frame), budget + 1);
            for (n, fits) in [(text, true), (text + 1, false)] {
                let mut seen = Vec::new();
                for split in [Split::Whole, Split::Chunks(1)] {
                    let (mut s, work) = with_byte_budget(budget);
                    s.connection_mut(work)
                        .unwrap()
                        .call_tool(Instant::ZERO, "echo", b"{}");
                    let run = drive_windowed(&mut s, Instant::ZERO, split, w, |r| {
                        call_result_of(r.rpc_id(), n)
                    });
                    let case = format!("text {n}, budget {budget}, {w:?}, {split:?}");
                    let outcome = windowed_outcome(&run);
                    let read = s.connection(work).unwrap().bytes_read();
                    if fits {
                        assert_eq!(outcome, "CallFinished error=false", "{case}");
                        assert_eq!(run.stream_octets, budget, "{case}");
                    } else {
                        assert!(
                            outcome.contains("response_bytes")
                                && outcome.contains(&format!("limit {budget}")),
                            "{case}: {outcome:?} (stalled: {})",
                            run.stalled
                        );
                    }
                    assert_eq!(read, budget, "{case}");
                    seen.push(outcome);
                }
                assert_eq!(seen[0], seen[1], "whole and split differ");
            }
        }
    }
}
