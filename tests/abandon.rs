//! The caller abandons the running operation ([`Connection::abandon`], what an adapter does when
//! the operation's future is dropped) or closes the connection under it: the request is
//! cancelled as its era says, over HTTP/1.1 (the exchange abandoned, so its socket is closed and
//! never pooled) and HTTP/2 (RST_STREAM(CANCEL) on the wire), whole and byte by byte.
//!
//! The rules, from the specification (`basic/patterns/cancellation.mdx` of 2026-07-28 and
//! `basic/utilities/cancellation.mdx` of the earlier revisions):
//!
//! - 2026-07-28 over HTTP: "closing the SSE response stream **is** the cancel signal, and the
//!   server MUST treat a disconnect as cancellation"; no notification is expected.
//! - Up to 2025-11-25 over HTTP: "the client POSTs the notification (202). A disconnect is
//!   **not** a cancel." `notifications/cancelled` params are `{requestId, reason?}`. "The client
//!   must not cancel `initialize`."

mod support;

use std::time::Duration;

use mcp_sansio::h2::H2Config;
use mcp_sansio::internals::h2::frame::{Frame, Reason};
use mcp_sansio::mux::{H2Socket, WorkId};
use mcp_sansio::{Config, Connection, ConnectionState, Era, EraHint, Error, Event, Instant};
use mcp_sansio_test_support::h2server::{self, drive, hello, H2Peer, SeenRequest};
use support::*;

/// The head and one progress event of a call's event stream that never ends, for request `id`.
fn open_stream(id: u64) -> Vec<u8> {
    let progress = format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{id},"progress":1}}}}"#
    );
    sse_response(
        &[("mcp-session-id", "sess-1")],
        &format!("data: {progress}\n\n"),
        true,
    )
}

/// A 2025-06-18 session whose call of `slow` has begun its answer ([`open_stream`]); gives the
/// harness and the call's request.
fn legacy_call_under_way(split: Split) -> (Harness, SentRequest) {
    let mut h = legacy(split, "2025-06-18");
    h.call("slow", "{}");
    let call = h.next();
    h.feed(call.exchange, &open_stream(call.rpc_id()));
    (h, call)
}

/// The one `Failed` event among `events`, with its operation.
fn failed(events: &[Event]) -> (mcp_sansio::Operation, Error) {
    let failed: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::Failed { operation, error } => Some((*operation, error.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(failed.len(), 1, "{events:?}");
    failed.into_iter().next().unwrap()
}

#[test]
fn an_abandoned_modern_call_abandons_its_exchange_and_sends_nothing() {
    for split in SPLITS {
        let mut h = modern(split);
        h.call("slow", "{}");
        let call = h.next();
        assert_eq!(call.rpc_method(), "tools/call");
        h.feed(call.exchange, &open_stream(call.rpc_id()));
        let sent = h.sent.len();
        h.conn.abandon(h.now);
        h.drain();
        let events = h.take_events();
        assert_eq!(
            failed(&events),
            (mcp_sansio::Operation::CallTool, Error::Abandoned),
            "{split:?}"
        );
        // Closing the stream is the modern cancellation: the exchange is abandoned (its socket
        // closed), never finished (its socket never pooled), and no request is sent.
        assert_eq!(h.abandoned, vec![call.exchange], "{split:?}");
        assert!(h.finished.iter().all(|(x, _)| *x != call.exchange));
        assert_eq!(h.sent.len(), sent, "{split:?}");
        assert!(!h.conn.has_exchange(call.exchange));
        assert_eq!(h.conn.state(), ConnectionState::Ready);
        assert_eq!(h.conn.poll_timeout(), None, "nothing is left waiting");
        // The connection stays usable: the next call runs.
        h.call("echo", "{}");
        let r = h.next();
        assert_ne!(r.exchange, call.exchange);
        h.answer_call_ok(&r);
    }
}

#[test]
fn an_abandoned_legacy_call_sends_one_cancelled_naming_its_request() {
    for split in SPLITS {
        let (mut h, call) = legacy_call_under_way(split);
        let sent = h.sent.len();
        h.conn.abandon(h.now);
        h.drain();
        assert_eq!(failed(&h.take_events()).1, Error::Abandoned, "{split:?}");
        assert_eq!(h.abandoned, vec![call.exchange], "{split:?}");
        assert_eq!(h.sent.len(), sent + 1, "one request: {split:?}");
        let cancel = h.sent.last().unwrap().clone();
        assert_eq!(cancel.method, "POST");
        assert_eq!(cancel.rpc_method(), "notifications/cancelled");
        let params = &cancel.json()["params"];
        assert_eq!(params["requestId"].as_u64(), Some(call.rpc_id()));
        assert_eq!(params["reason"], "abandoned");
        assert!(cancel.json().get("id").is_none(), "a notification");
        assert_eq!(cancel.header("mcp-session-id"), Some("sess-1"));
        assert_eq!(h.conn.state(), ConnectionState::Ready);
        // Bounded: the notification's exchange is given up after the close budget.
        let grace = h.conn.config().budgets.close_time;
        assert!(h.advance_to_timeout());
        assert!(h.now <= Instant::ZERO + grace, "{:?}", h.now);
        assert_eq!(h.abandoned, vec![call.exchange, cancel.exchange]);
        assert_eq!(h.conn.poll_timeout(), None);
        // Abandoning again, with nothing running, sends nothing more.
        h.conn.abandon(h.now);
        h.drain();
        assert_eq!(h.sent.len(), sent + 1);
        assert!(h.take_events().is_empty());
    }
}

#[test]
fn a_server_that_accepts_the_cancellation_finishes_its_exchange() {
    let mut h = legacy(Split::Whole, "2025-11-25");
    h.list();
    let page = h.next();
    h.conn.abandon(h.now);
    h.drain();
    assert_eq!(
        failed(&h.take_events()),
        (mcp_sansio::Operation::ListTools, Error::Abandoned)
    );
    let cancel = h.next();
    assert_eq!(cancel.rpc_method(), "notifications/cancelled");
    assert_eq!(
        cancel.json()["params"]["requestId"].as_u64(),
        Some(page.rpc_id())
    );
    h.feed(cancel.exchange, &empty_response(202));
    assert_eq!(h.finished.last(), Some(&(cancel.exchange, true)));
    assert_eq!(h.abandoned, vec![page.exchange]);
    assert!(h.finished.iter().all(|(x, _)| *x != page.exchange));
    assert!(h.take_events().is_empty(), "its answer is discarded");
}

#[test]
fn an_abandoned_initialize_is_not_cancelled() {
    for split in SPLITS {
        let mut h = Harness::for_url("http://127.0.0.1:9/mcp", split);
        h.connect();
        let probe = h.next();
        h.feed(probe.exchange, &empty_response(404));
        let init = h.next();
        assert_eq!(init.rpc_method(), "initialize");
        let sent = h.sent.len();
        h.conn.abandon(h.now);
        h.drain();
        assert_eq!(
            failed(&h.take_events()),
            (mcp_sansio::Operation::Connect, Error::Abandoned)
        );
        assert_eq!(h.abandoned, vec![init.exchange]);
        assert_eq!(
            h.sent.len(),
            sent,
            "initialize is never cancelled: {split:?}"
        );
        assert_eq!(h.conn.state(), ConnectionState::Unconnected);
    }
}

#[test]
fn closing_mid_call_cancels_the_legacy_request_before_its_delete() {
    for split in SPLITS {
        let (mut h, call) = legacy_call_under_way(split);
        h.close();
        assert_eq!(failed(&h.take_events()).1, Error::Closed);
        assert_eq!(h.abandoned, vec![call.exchange]);
        let cancel = h.next();
        assert_eq!(cancel.rpc_method(), "notifications/cancelled");
        let params = &cancel.json()["params"];
        assert_eq!(params["requestId"].as_u64(), Some(call.rpc_id()));
        assert_eq!(params["reason"], "closed");
        let delete = h.next();
        assert_eq!(delete.method, "DELETE");
        h.feed(cancel.exchange, &empty_response(202));
        h.feed(delete.exchange, &empty_response(200));
        assert!(matches!(h.single_event(), Event::Closed));
        assert_eq!(h.conn.state(), ConnectionState::Closed);
    }
}

/// Up to 2025-11-25 over HTTP "the client POSTs the notification (202). A disconnect is **not**
/// a cancel": a cancellation the connection queued (here after a call's timeout) must reach
/// the server even when `close` follows at once and the server answers the `DELETE` first.
/// Reaching Closed abandons every exchange still open (the caller closes their sockets), so the
/// connection stays Closing until the cancellation's exchange ends: its answer, or (the
/// opposite case, a server that never answers it) the end of its grace, the close budget
/// from when it was sent.
#[test]
fn a_close_right_after_a_legacy_timeout_keeps_the_cancellation_until_it_ends() {
    for answers in [true, false] {
        for split in SPLITS {
            let (mut h, call) = legacy_call_under_way(split);
            assert!(h.advance_to_timeout());
            let timed_out = h.now;
            assert_eq!(failed(&h.take_events()).0, mcp_sansio::Operation::CallTool);
            let cancel = h.next();
            assert_eq!(cancel.rpc_method(), "notifications/cancelled");
            assert_eq!(cancel.json()["params"]["reason"], "timeout");
            assert_eq!(
                cancel.json()["params"]["requestId"].as_u64(),
                Some(call.rpc_id())
            );
            h.close();
            let delete = h.next();
            assert_eq!(delete.method, "DELETE");
            // The DELETE is answered before the cancellation was sent or answered.
            h.feed(delete.exchange, &empty_response(200));
            assert!(h.take_events().is_empty(), "{split:?}");
            assert_eq!(h.conn.state(), ConnectionState::Closing, "{split:?}");
            assert!(
                !h.abandoned.contains(&cancel.exchange),
                "the cancellation is not dropped: {split:?}"
            );
            assert!(h.conn.has_exchange(cancel.exchange));
            if answers {
                h.feed(cancel.exchange, &empty_response(202));
                assert!(h.finished.iter().any(|(x, _)| *x == cancel.exchange));
            } else {
                assert!(h.advance_to_timeout());
                let close_time = Config::new("http://127.0.0.1:9/mcp")
                    .unwrap()
                    .budgets
                    .close_time;
                assert_eq!(h.now, timed_out + close_time, "the grace bounds the wait");
                assert!(h.abandoned.contains(&cancel.exchange));
            }
            assert!(matches!(h.single_event(), Event::Closed), "{split:?}");
            assert_eq!(h.conn.state(), ConnectionState::Closed);
            assert!(!h.has_outstanding());
        }
    }
}

/// A legacy session the server gave no id closes at once ("nothing more will be sent"): no
/// notification is left queued for an exchange already abandoned.
#[test]
fn closing_mid_call_of_a_legacy_session_without_an_id_sends_nothing() {
    let mut h = Harness::for_url("http://127.0.0.1:9/mcp", Split::Whole);
    h.connect();
    let r = h.next();
    h.feed(r.exchange, &empty_response(404));
    let r = h.next();
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), &initialize_ok("2025-06-18"))),
    );
    let r = h.next();
    h.feed(r.exchange, &empty_response(202));
    assert_eq!(h.conn.session_id(), None);
    h.call("slow", "{}");
    let call = h.next();
    let sent = h.sent.len();
    h.close();
    assert_eq!(h.sent.len(), sent, "{:?}", h.sent.last());
    assert_eq!(h.abandoned, vec![call.exchange]);
    assert_eq!(h.conn.state(), ConnectionState::Closed);
}

#[test]
fn closing_mid_call_of_a_modern_connection_sends_nothing_but_abandons_it() {
    let mut h = modern(Split::Bytes);
    h.call("slow", "{}");
    let call = h.next();
    let sent = h.sent.len();
    h.close();
    assert_eq!(h.abandoned, vec![call.exchange]);
    assert_eq!(h.sent.len(), sent);
}

#[test]
fn an_abandoned_close_ends_at_once() {
    let mut h = legacy(Split::Whole, "2025-06-18");
    h.close();
    let delete = h.next();
    assert_eq!(delete.method, "DELETE");
    h.conn.abandon(h.now);
    h.drain();
    assert!(matches!(h.single_event(), Event::Closed));
    assert_eq!(h.abandoned, vec![delete.exchange]);
    assert_eq!(h.conn.state(), ConnectionState::Closed);
}

// ---------------------------------------------------------------------------------------------
// HTTP/2

const URL: &str = "https://mcp.example.com:8443/mcp";

fn h2_session(era: Era, version: &str) -> (H2Socket, WorkId) {
    let mut c = Config::new(URL).unwrap();
    c.era_hint = Some(EraHint {
        era,
        version: version.into(),
    });
    let mut s = H2Socket::new(Instant::ZERO, H2Config::default(), "https");
    let w = s.add(Connection::new(c).unwrap());
    (s, w)
}

/// A server that answers the legacy handshake and notifications, and never a call.
fn never_answers(peer: &mut H2Peer, r: &SeenRequest) -> Vec<u8> {
    match r.rpc_method().as_str() {
        "initialize" => {
            let body = h2server::result(
                r.rpc_id(),
                r#"{"protocolVersion":"2025-06-18","capabilities":{}}"#,
            );
            peer.with_session(r.stream, "application/json", "sess-1", body.as_bytes())
        }
        "tools/call" => Vec::new(),
        _ => peer.response(r.stream, 202, "", b""),
    }
}

/// Drives the socket against [`never_answers`] with no time passing.
fn drive_never_answered(
    s: &mut H2Socket,
    peer: &mut H2Peer,
    now: &mut Instant,
    split: h2server::Split,
    prelude: Vec<u8>,
) -> h2server::Run {
    drive(s, peer, now, split, prelude, Duration::ZERO, never_answers)
}

/// Connects `w`, starts a call the server never answers, abandons it; gives the peer and the
/// call's stream.
fn abandon_h2_call(s: &mut H2Socket, w: WorkId, split: h2server::Split) -> (H2Peer, u32) {
    let mut peer = H2Peer::default();
    let mut now = Instant::ZERO;
    s.connection_mut(w).unwrap().connect(now);
    drive_never_answered(s, &mut peer, &mut now, split, hello());
    s.connection_mut(w).unwrap().call_tool(now, "slow", b"{}");
    drive_never_answered(s, &mut peer, &mut now, split, Vec::new());
    let call = peer
        .requests
        .iter()
        .find(|r| r.rpc_method() == "tools/call")
        .expect("the call is on the wire")
        .stream;
    assert!(
        !peer
            .frames
            .iter()
            .any(|f| matches!(f, Frame::RstStream { .. })),
        "nothing reset before the call is abandoned"
    );
    s.connection_mut(w).unwrap().abandon(now);
    let run = drive_never_answered(s, &mut peer, &mut now, split, Vec::new());
    let failed: Vec<_> = run
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::Failed { error, .. } => Some(error.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(failed, vec![Error::Abandoned]);
    (peer, call)
}

#[test]
fn an_abandoned_http2_call_resets_its_stream_with_cancel() {
    for split in [h2server::Split::Whole, h2server::Split::Chunks(1)] {
        let (mut s, w) = h2_session(Era::Modern, "2026-07-28");
        let (peer, call) = abandon_h2_call(&mut s, w, split);
        let resets: Vec<_> = peer
            .frames
            .iter()
            .filter(|f| matches!(f, Frame::RstStream { .. }))
            .collect();
        assert_eq!(
            resets,
            vec![&Frame::RstStream {
                stream_id: call,
                reason: Reason::CANCEL
            }],
            "{split:?}"
        );
        // No notification in the modern era, and the socket stays open for the others.
        assert_eq!(peer.requests.last().unwrap().stream, call);
        assert!(!s.is_closed());
        assert_eq!(s.open_streams(), 0);
    }
}

#[test]
fn an_abandoned_legacy_http2_call_resets_its_stream_then_sends_cancelled() {
    for split in [h2server::Split::Whole, h2server::Split::Chunks(3)] {
        let (mut s, w) = h2_session(Era::Legacy, "2025-06-18");
        let (peer, call) = abandon_h2_call(&mut s, w, split);
        assert!(peer.frames.iter().any(|f| matches!(
            f,
            Frame::RstStream { stream_id, reason } if *stream_id == call && *reason == Reason::CANCEL
        )));
        let call_id = peer
            .requests
            .iter()
            .find(|r| r.stream == call)
            .unwrap()
            .rpc_id();
        let cancels: Vec<_> = peer
            .requests
            .iter()
            .filter(|r| r.rpc_method() == "notifications/cancelled")
            .collect();
        assert_eq!(cancels.len(), 1, "{split:?}");
        assert!(cancels[0].stream > call);
        assert_eq!(cancels[0].header("mcp-session-id"), Some("sess-1"));
        let body: serde_json::Value = serde_json::from_slice(&cancels[0].body).unwrap();
        assert_eq!(body["params"]["requestId"].as_u64(), Some(call_id));
        assert!(!s.is_closed());
    }
}
