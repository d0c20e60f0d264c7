//! HTTP/2 sessions of the core, recorded against the scripted HTTP/2 peer in virtual time with
//! `H2Recorder` (as a driver records a live session), written under `tests/transcripts/h2-*`,
//! and replayed through a fresh `H2Socket` in every split.
//!
//! The fixtures are the recordings themselves: each test records its session again and requires
//! the same text as the file (run with `MCP_TRANSCRIPT_BLESS=1` to write the files after a
//! change of the core or of the format, then review the diff).

use mcp_sansio_test_support::h2server;
mod support {
    pub mod h2session;
}

use std::path::PathBuf;
use std::time::Duration;

use h2server::{result, rst, H2Peer, SeenRequest};
use mcp_sansio::internals::h2::frame::{Frame, Reason};
use mcp_sansio::{Config, Era, EraHint, TransportError, TransportErrorKind};
use mcp_sansio_transcript::{
    replay, H2Writes, Mismatch, Record, RecordedOperation, Split, Transcript, REDACTED,
};
use support::h2session::Session;

const URL: &str = "https://mcp.example.com:8443/mcp";
const TOKEN: &str = "h2-s3cr3t-bearer-token";
const DISCOVER: &str = r#"{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"h2-peer","version":"1.0"}}}"#;
const CALL_OK: &str = r#"{"content":[{"type":"text","text":"hi"}]}"#;

fn modern() -> Config {
    let mut c = Config::new(URL).unwrap();
    c.era_hint = Some(EraHint {
        era: Era::Modern,
        version: "2026-07-28".into(),
    });
    c
}

fn tool(name: &str) -> String {
    format!(r#"{{"name":"{name}","inputSchema":{{"type":"object"}}}}"#)
}

/// A modern server: discovery, a listing of three pages, calls answered as JSON.
fn modern_server(peer: &mut H2Peer, r: &SeenRequest, _socket: u64) -> Vec<u8> {
    let id = r.rpc_id();
    match r.rpc_method().as_str() {
        "server/discover" => peer.json(r.stream, &result(id, DISCOVER)),
        "tools/list" => {
            let page = match r.json()["params"]["cursor"].as_str() {
                None => format!(r#"{{"tools":[{}],"nextCursor":"p2"}}"#, tool("echo")),
                Some("p2") => format!(r#"{{"tools":[{}],"nextCursor":"p3"}}"#, tool("add")),
                Some(_) => format!(r#"{{"tools":[{}]}}"#, tool("time")),
            };
            peer.json(r.stream, &result(id, &page))
        }
        "tools/call" => peer.json(r.stream, &result(id, CALL_OK)),
        _ => peer.response(r.stream, 404, "", b""),
    }
}

fn call(name: &str, args: &str) -> RecordedOperation {
    RecordedOperation::CallTool {
        name: name.into(),
        arguments: args.as_bytes().to_vec(),
    }
}

/// Each scenario: its file name, and the recorded session.
fn scenarios() -> Vec<(&'static str, Transcript)> {
    let mut out = Vec::new();

    // Modern: connect, a listing of three pages, a call, close; with a bearer token.
    let mut s = Session::new(
        modern().with_bearer_token(TOKEN),
        "HTTP/2, modern: connect, list three pages, call a tool, close (bearer token redacted)",
        Box::new(modern_server),
    );
    for op in [
        RecordedOperation::Connect,
        RecordedOperation::ListTools,
        call("echo", r#"{"text":"hi"}"#),
        RecordedOperation::Close,
    ] {
        s.op(op);
    }
    out.push(("h2-modern.list-call", s.finish()));

    // Modern: a call answered with an event stream (progress, then the result), read in
    // small pieces.
    let mut s = Session::new(
        modern(),
        "HTTP/2, modern: a call answered by an event stream on its stream, progress then result",
        Box::new(|peer: &mut H2Peer, r: &SeenRequest, socket| {
            if r.rpc_method() != "tools/call" {
                return modern_server(peer, r, socket);
            }
            peer.progress_then_result(r, CALL_OK)
        }),
    );
    s.read_size = 64;
    s.op(RecordedOperation::Connect);
    s.op(call("slow", "{}"));
    out.push(("h2-modern.sse", s.finish()));

    // Legacy: discovery refused, initialize with a session id, the listing, close with DELETE.
    let mut s = Session::new(
        Config::new(URL).unwrap(),
        "HTTP/2, legacy: discovery refused, initialize (session id), list, close with DELETE",
        Box::new(|peer: &mut H2Peer, r: &SeenRequest, _| {
            let sid = r.stream;
            match r.rpc_method().as_str() {
                "server/discover" => peer.response(sid, 404, "", b""),
                "initialize" => {
                    let body = result(
                        r.rpc_id(),
                        r#"{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"h2-legacy","version":"1"}}"#,
                    );
                    peer.with_session(sid, "application/json", "sess-h2-1", body.as_bytes())
                }
                "notifications/initialized" => peer.response(sid, 202, "", b""),
                "tools/list" => {
                    let tools = format!(r#"{{"tools":[{},{}]}}"#, tool("echo"), tool("add"));
                    peer.json(sid, &result(r.rpc_id(), &tools))
                }
                "DELETE" => peer.response(sid, 200, "", b""),
                _ => peer.response(sid, 400, "", b""),
            }
        }),
    );
    for op in [
        RecordedOperation::Connect,
        RecordedOperation::ListTools,
        RecordedOperation::Close,
    ] {
        s.op(op);
    }
    out.push(("h2-legacy.session", s.finish()));

    // A call refused with REFUSED_STREAM on the first socket, sent once more on a fresh one.
    let mut s = Session::new(
        modern(),
        "HTTP/2, modern: a call refused (REFUSED_STREAM) is sent again on a fresh socket",
        Box::new(|peer: &mut H2Peer, r: &SeenRequest, socket| {
            if r.rpc_method() == "tools/call" && socket == 1 {
                return rst(r.stream, Reason::REFUSED_STREAM);
            }
            modern_server(peer, r, socket)
        }),
    );
    s.op(RecordedOperation::Connect);
    s.op(call("echo", "{}"));
    out.push(("h2-modern.refused-stream", s.finish()));

    // The same, but the fresh socket cannot be opened.
    let mut s = Session::new(
        modern(),
        "HTTP/2, modern: a refused call waits for a fresh socket that cannot be opened",
        Box::new(|_: &mut H2Peer, r: &SeenRequest, _| rst(r.stream, Reason::REFUSED_STREAM)),
    );
    s.dial_fails = Some(TransportError {
        kind: TransportErrorKind::Connect,
        message: "connection refused".into(),
    });
    s.op(RecordedOperation::Connect);
    s.op(call("echo", "{}"));
    out.push(("h2-modern.dial-error", s.finish()));

    // A listing larger than the work item's byte budget: every frame is charged.
    let mut small = modern();
    small.budgets.response_bytes = 600;
    let mut s = Session::new(
        small,
        "HTTP/2, modern: a listing over the 600-byte response budget fails on it",
        Box::new(|peer: &mut H2Peer, r: &SeenRequest, _| {
            let big = format!(
                r#"{{"tools":[{{"name":"echo","description":"{}","inputSchema":{{"type":"object"}}}}]}}"#,
                "x".repeat(2000)
            );
            peer.json(r.stream, &result(r.rpc_id(), &big))
        }),
    );
    s.op(RecordedOperation::Connect);
    s.op(RecordedOperation::ListTools);
    out.push(("h2-modern.budget", s.finish()));

    // Modern: the server follows each answer with a PING in the same read; the core
    // acknowledges it before or after it opens the next stream, depending on the split.
    let mut s = Session::new(
        modern(),
        "HTTP/2, modern: a listing of three pages, each answer followed by a PING",
        Box::new(|peer: &mut H2Peer, r: &SeenRequest, socket| {
            let mut out = modern_server(peer, r, socket);
            out.extend(h2server::frame(Frame::Ping {
                ack: false,
                data: *b"pingpong",
            }));
            out
        }),
    );
    s.op(RecordedOperation::Connect);
    s.op(RecordedOperation::ListTools);
    out.push(("h2-modern.ping", s.finish()));

    // The server closes the socket while a call waits: the broken stream loses the call, which
    // is re-issued with a new id on a fresh socket, and answered there.
    let slow_unanswered = |peer: &mut H2Peer, r: &SeenRequest, socket| {
        if r.json()["params"]["name"] == "slow" && socket == 1 {
            return Vec::new(); // never answered on the first socket
        }
        modern_server(peer, r, socket)
    };
    let mut s = Session::new(
        modern(),
        "HTTP/2, modern: the server closes the socket while a call waits; the call is re-issued on a fresh socket",
        Box::new(slow_unanswered),
    );
    s.op(RecordedOperation::Connect);
    s.start(call("slow", "{}"));
    s.run_to(s.now + Duration::from_millis(50));
    s.lose_socket(None);
    s.run();
    out.push(("h2-modern.eof", s.finish()));

    // The socket fails (a reset) while a call waits: the call is re-issued on a fresh socket.
    let mut s = Session::new(
        modern(),
        "HTTP/2, modern: the socket is reset while a call waits; the call is re-issued on a fresh socket",
        Box::new(slow_unanswered),
    );
    s.op(RecordedOperation::Connect);
    s.start(call("slow", "{}"));
    s.run_to(s.now + Duration::from_millis(50));
    s.lose_socket(Some(TransportError {
        kind: TransportErrorKind::Io,
        message: "connection reset by peer".into(),
    }));
    s.run();
    out.push(("h2-modern.reset", s.finish()));

    // Legacy: a call never answered runs out of its 5 s budget: its stream is reset (CANCEL),
    // `notifications/cancelled` goes on a new stream of the same socket.
    let mut config = Config::new(URL).unwrap();
    config.era_hint = Some(EraHint {
        era: Era::Legacy,
        version: "2025-06-18".into(),
    });
    config.budgets.call_time = Duration::from_secs(5);
    let mut s = Session::new(
        config,
        "HTTP/2, legacy: a call over its 5 s budget is reset and cancelled; the socket stays",
        Box::new(|peer: &mut H2Peer, r: &SeenRequest, _| {
            let sid = r.stream;
            match r.rpc_method().as_str() {
                "initialize" => peer.legacy_initialize(r),
                "tools/call" => Vec::new(),
                _ => peer.response(sid, 202, "", b""),
            }
        }),
    );
    s.op(RecordedOperation::Connect);
    s.op(call("slow", "{}"));
    out.push(("h2-legacy.deadline", s.finish()));
    out
}

fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/transcripts/{name}.transcript"))
}

/// Each scenario recorded now gives the fixture's text (or writes it, when blessing).
#[test]
fn recordings_match_the_fixtures() {
    let bless = std::env::var_os("MCP_TRANSCRIPT_BLESS").is_some();
    let mut stale = Vec::new();
    for (name, t) in scenarios() {
        let text = t.to_text();
        let p = path(name);
        if bless {
            std::fs::write(&p, &text).unwrap();
            continue;
        }
        let file = std::fs::read_to_string(&p).unwrap_or_default();
        if file != text {
            stale.push(name);
            continue;
        }
        // parse -> write gives the file back, annotations included.
        let parsed = Transcript::parse(&file).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(parsed.to_text(), file, "{name}");
    }
    assert!(
        stale.is_empty(),
        "recorded sessions differ from their fixtures (MCP_TRANSCRIPT_BLESS=1 rewrites them): {stale:?}"
    );
}

/// A session recorded, then replayed through a fresh socket in every split, gives the same
/// writes (after redaction) and the same events; the text form gives back the transcript.
#[test]
fn recorded_sessions_replay_in_every_split() {
    for (name, t) in scenarios() {
        let back = Transcript::parse(&t.to_text()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(back, t, "{name}: text round trip");
        for split in std::iter::once(Split::Recorded).chain(Split::OTHERS) {
            let got = replay(&t, split).unwrap();
            got.check(&t)
                .unwrap_or_else(|e| panic!("{name} ({split:?}): {e}"));
            if split == Split::Recorded {
                // As recorded, the very same writes, in the same pieces.
                assert_eq!(got.writes, t.h2_writes(), "{name}");
                assert_eq!(got.recording.entries, t.entries, "{name}");
            }
        }
    }
}

/// Frames of different streams may interleave differently in another split (here a PING
/// acknowledgement and the next request's HEADERS), which the comparison allows: each stream's
/// frames, in order, are the same.
#[test]
fn interleaving_across_streams_may_differ_by_split_and_is_allowed() {
    let (_, t) = scenarios()
        .into_iter()
        .find(|(n, _)| *n == "h2-modern.ping")
        .unwrap();
    let joined = |w: Vec<(u64, Vec<u8>)>| w.into_iter().flat_map(|(_, b)| b).collect::<Vec<u8>>();
    let whole = replay(&t, Split::Recorded).unwrap();
    let bytes = replay(&t, Split::BYTE_BY_BYTE).unwrap();
    assert_eq!(joined(whole.writes.clone()), joined(t.h2_writes()));
    assert_ne!(
        joined(bytes.writes.clone()),
        joined(t.h2_writes()),
        "one byte at a time, the core interleaves its frames otherwise"
    );
    bytes.check(&t).unwrap();
    let per_stream = |w: Vec<(u64, Vec<u8>)>| H2Writes::split(&joined(w));
    assert_eq!(per_stream(bytes.writes), per_stream(t.h2_writes()));
    // Three PINGs, three acknowledgements on stream 0.
    let acks = per_stream(t.h2_writes()).streams[&0]
        .iter()
        .filter(|f| f[3] == 6 && f[4] == 1)
        .count();
    assert_eq!(acks, 3);
}

/// What each scenario shows, checked on its outcome and its records.
#[test]
fn the_scenarios_show_what_they_promise() {
    let all = scenarios();
    let get = |n: &str| &all.iter().find(|(m, _)| *m == n).unwrap().1;
    let outcome = |n: &str| serde_json::Value::Array(get(n).outcome()).to_string();
    let sockets = |n: &str| {
        get(n)
            .entries
            .iter()
            .filter(|e| matches!(e.record, Record::H2Open { .. }))
            .count()
    };
    let written = |n: &str| {
        get(n)
            .h2_writes()
            .into_iter()
            .flat_map(|(_, b)| b)
            .collect::<Vec<u8>>()
    };
    let has = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).any(|w| w == needle);

    let o = outcome("h2-modern.list-call");
    assert!(
        o.contains(r#""pages":3"#) && o.contains(r#"["echo","add","time"]"#),
        "{o}"
    );
    assert!(o.contains(r#"{"text":"hi"}"#), "{o}");
    assert!(outcome("h2-modern.sse").contains(r#""progress":1.0"#));
    let o = outcome("h2-legacy.session");
    assert!(
        o.contains(r#""era":"legacy""#) && o.contains("closed"),
        "{o}"
    );
    let w = written("h2-legacy.session");
    assert!(
        has(&w, b"sess-h2-1") && has(&w, b"DELETE"),
        "the session id and DELETE"
    );
    assert_eq!(sockets("h2-modern.refused-stream"), 2);
    assert!(outcome("h2-modern.refused-stream").contains("call_finished"));
    for lost in ["h2-modern.eof", "h2-modern.reset"] {
        assert_eq!(sockets(lost), 2, "{lost}: re-issued on a fresh socket");
        let o = outcome(lost);
        assert!(
            o.contains("call_finished") && !o.contains("failed"),
            "{lost}: {o}"
        );
    }
    let o = outcome("h2-modern.dial-error");
    assert!(o.contains("connection refused"), "{o}");
    let o = outcome("h2-modern.budget");
    assert!(o.contains("response_bytes") || o.contains("600"), "{o}");
    let o = outcome("h2-legacy.deadline");
    assert!(o.contains("call_time") || o.contains("5000"), "{o}");
    assert!(get("h2-legacy.deadline")
        .entries
        .iter()
        .any(|e| matches!(e.record, Record::Timeout)));
    assert!(has(
        &written("h2-legacy.deadline"),
        b"notifications/cancelled"
    ));
}

/// The bearer token never reaches the text: the header block carries `Bearer <redacted>`, and
/// the replay (configured with another token) writes the same redacted frames.
#[test]
fn the_bearer_token_is_redacted_in_header_blocks() {
    let (_, t) = scenarios().into_iter().next().unwrap();
    let text = t.to_text();
    assert!(!text.contains(TOKEN));
    assert!(!text.contains("s3cr3t"));
    assert!(text.contains("config bearer-token <redacted>"));
    // The annotation shows the redacted field; the bytes hold it as HPACK writes it.
    assert!(
        text.contains("#   authorization: Bearer <redacted>"),
        "{text}"
    );
    let needle = format!("Bearer {REDACTED}");
    let writes: Vec<u8> = t.h2_writes().into_iter().flat_map(|(_, b)| b).collect();
    assert!(writes.windows(needle.len()).any(|w| w == needle.as_bytes()));
    assert!(!writes.windows(TOKEN.len()).any(|w| w == TOKEN.as_bytes()));
    replay(&t, Split::BYTE_BY_BYTE).unwrap().check(&t).unwrap();
}

/// A replay whose core writes something else is caught, with the socket and stream named.
#[test]
fn a_different_write_is_reported() {
    let (_, mut t) = scenarios().into_iter().next().unwrap();
    t.config.client_info.version = "9.9.9".into();
    let err = replay(&t, Split::Recorded).unwrap().check(&t).unwrap_err();
    match &err {
        Mismatch::Write { socket, place, .. } => {
            assert_eq!(*socket, 1);
            assert!(place.starts_with("stream "), "{place}");
        }
        other => panic!("{other}"),
    }
    assert!(err.to_string().contains("written differs"), "{err}");
}

/// A secret query parameter of the endpoint is redacted in `:path` as in the `config url` line,
/// and the replay (which gives it another value) writes the same redacted frames.
#[test]
fn a_secret_query_value_is_redacted_in_the_path() {
    let mut config = Config::new("https://mcp.example.com/mcp?api_key=k-9f8e7d&region=eu").unwrap();
    config.era_hint = modern().era_hint;
    let mut s = Session::new(config, "a secret in the query", Box::new(modern_server));
    s.op(RecordedOperation::Connect);
    s.op(RecordedOperation::ListTools);
    let t = s.finish();
    let text = t.to_text();
    assert!(!text.contains("k-9f8e7d"), "{text}");
    assert!(
        text.contains("#   :path: /mcp?api_key=<redacted>&region=eu"),
        "{text}"
    );
    assert!(text.contains("config url https://mcp.example.com/mcp?api_key=<redacted>&region=eu"));
    let t = Transcript::parse(&text).unwrap();
    for split in [Split::Recorded, Split::BYTE_BY_BYTE] {
        replay(&t, split).unwrap().check(&t).unwrap();
    }
}
