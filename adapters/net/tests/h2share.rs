//! The shared HTTP/2 connection ([`SharedH2`]) without sockets: a recording socket I/O and the
//! scripted HTTP/2 server of the core's tests play both ends, so every routing decision is
//! checked byte for byte: one dial for every session after GOAWAY, the move once the old socket
//! drained, per-session inboxes and wake-ups, an idle socket kept for the next session and closed
//! with GOAWAY(NO_ERROR) past its idle timeout.

#[path = "../../../tests/support/h2server.rs"]
mod h2server;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use h2server::{frame, hello, result, H2Peer};
use mcp_sansio::internals::h2::client::PREFACE;
use mcp_sansio::internals::h2::frame::{Decoded, Frame, FrameDecoder, Reason};
use mcp_sansio::{Budgets, Config, Era, EraHint, Event};
use mcp_sansio_net::{H2Io, Member, Report, SharedH2, Waker};

const TOOLS: &str = r#"{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}"#;

/// A socket I/O that records what the connection asks of it.
#[derive(Default)]
struct Recorder {
    writes: Mutex<Vec<(u64, Vec<u8>)>>,
    closes: Mutex<Vec<u64>>,
    dials: Mutex<Vec<u64>>,
}

impl H2Io for Recorder {
    fn write(&self, generation: u64, bytes: Vec<u8>) {
        self.writes.lock().unwrap().push((generation, bytes));
    }
    fn close(&self, generation: u64) {
        self.closes.lock().unwrap().push(generation);
    }
    fn dial(&self, _conn: Arc<SharedH2>, generation: u64) {
        self.dials.lock().unwrap().push(generation);
    }
}

impl Recorder {
    /// The bytes written to socket `generation` since the last call.
    fn take(&self, generation: u64) -> Vec<u8> {
        let mut writes = self.writes.lock().unwrap();
        let mut out = Vec::new();
        writes.retain(|(g, b)| {
            if *g == generation {
                out.extend_from_slice(b);
                false
            } else {
                true
            }
        });
        out
    }
}

fn config() -> Config {
    let mut c = Config::new("https://mcp.example.com/mcp").unwrap();
    c.era_hint = Some(EraHint {
        era: Era::Modern,
        version: "2026-07-28".into(),
    });
    c
}

fn counter() -> (Arc<AtomicUsize>, Waker) {
    let n = Arc::new(AtomicUsize::new(0));
    let m = n.clone();
    (
        n,
        Arc::new(move || {
            m.fetch_add(1, Ordering::SeqCst);
        }),
    )
}

/// Joins a session and connects it (the modern hint needs no request).
fn session(conn: &Arc<SharedH2>) -> (Member, Arc<AtomicUsize>) {
    let (woken, wake) = counter();
    let m = conn.join(config(), wake).unwrap().unwrap();
    let now = conn.now();
    conn.with(m, |c| c.connect(now)).unwrap();
    let events = conn.take_events(m);
    assert!(
        matches!(events[..], [Event::Connected { .. }]),
        "{events:?}"
    );
    (m, woken)
}

fn list(conn: &Arc<SharedH2>, m: Member) {
    let now = conn.now();
    conn.with(m, |c| c.list_tools(now)).unwrap();
}

/// The server answers every request its peer completed in `bytes` (a `tools/list`).
fn answer(peer: &mut H2Peer, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for req in peer.read(bytes) {
        out.extend(peer.json(req.stream, &result(req.rpc_id(), TOOLS)));
    }
    out
}

fn listed(events: &[Event]) -> bool {
    events
        .iter()
        .any(|e| matches!(e, Event::ToolsListed(c) if c.tools.len() == 1))
}

#[test]
fn goaway_moves_every_session_to_one_fresh_socket_and_an_idle_socket_past_its_timeout_closes_with_goaway(
) {
    let io = Arc::new(Recorder::default());
    let conn = SharedH2::new("https", &Budgets::default(), io.clone());
    let (a, woken_a) = session(&conn);
    let (b, woken_b) = session(&conn);

    // Socket 0: the preface, SETTINGS, then a's listing on stream 1.
    list(&conn, a);
    let mut server = H2Peer::default();
    let sent = io.take(0);
    assert!(sent.starts_with(PREFACE));
    let mut reply = hello();
    reply.extend(answer(&mut server, &sent));
    reply.extend(frame(Frame::GoAway {
        last_stream_id: 1,
        reason: Reason::NO_ERROR,
        debug: Vec::new(),
    }));
    let before_a = woken_a.load(Ordering::SeqCst);
    let before_b = woken_b.load(Ordering::SeqCst);
    conn.feed(0, Report::Bytes(reply));
    assert_eq!(
        woken_a.load(Ordering::SeqCst),
        before_a + 1,
        "a's inbox got its listing"
    );
    assert_eq!(
        woken_b.load(Ordering::SeqCst),
        before_b,
        "b has nothing to hear"
    );
    assert!(listed(&conn.take_events(a)));

    // Both list again: the socket is going away, so one dial serves both.
    list(&conn, b);
    list(&conn, a);
    assert_eq!(*io.dials.lock().unwrap(), [1]);
    assert!(
        server.read(&io.take(0)).is_empty(),
        "no request after GOAWAY"
    );

    // The fresh socket opens; the old one has no stream left: everyone moves.
    conn.dialled(1, Ok(()));
    assert_eq!(conn.generation(), 1);
    assert!(io.closes.lock().unwrap().contains(&0));
    let mut fresh = H2Peer::default();
    let sent = io.take(1);
    assert!(sent.starts_with(PREFACE));
    // One stream until the server's SETTINGS arrive.
    let mut reply = hello();
    reply.extend(answer(&mut fresh, &sent));
    assert_eq!(fresh.requests.len(), 1);
    conn.feed(1, Report::Bytes(reply));
    let reply = answer(&mut fresh, &io.take(1));
    assert_eq!(
        fresh.requests.len(),
        2,
        "the second request once SETTINGS came"
    );
    conn.feed(1, Report::Bytes(reply));
    assert!(listed(&conn.take_events(a)));
    assert!(listed(&conn.take_events(b)));
    assert!(woken_b.load(Ordering::SeqCst) > before_b);
    assert_eq!(*io.dials.lock().unwrap(), [1], "still one dial");

    // Leaving: a first, then b: nothing closes, the healthy socket stays idle for the next
    // session; closing it writes GOAWAY(NO_ERROR), then closes.
    conn.leave(a);
    assert!(!conn.is_shut());
    assert!(!io.closes.lock().unwrap().contains(&1));
    conn.leave(b);
    assert!(!conn.is_shut() && conn.is_idle());
    assert!(!io.closes.lock().unwrap().contains(&1));
    assert!(conn.reusable(Duration::from_secs(30)));
    assert!(
        !conn.reusable(Duration::ZERO),
        "an idle connection past the idle timeout is not reused"
    );
    assert!(conn.is_shut(), "and it is closed");
    let tail = io.take(1);
    let mut decoder = FrameDecoder::new();
    let mut rest = &tail[..];
    let mut frames = Vec::new();
    while let Some(Decoded { frame, .. }) = decoder.decode(&mut rest).unwrap() {
        frames.push(frame);
    }
    assert!(
        matches!(frames.last(), Some(Frame::GoAway { reason, .. }) if *reason == Reason::NO_ERROR),
        "{frames:?}"
    );
    assert_eq!(io.closes.lock().unwrap().last(), Some(&1));
    // A shut connection takes no one.
    let (_, wake) = counter();
    assert!(conn.join(config(), wake).unwrap().is_none());
}

#[test]
fn a_session_leaving_mid_listing_resets_only_its_stream() {
    let io = Arc::new(Recorder::default());
    let conn = SharedH2::new("http", &Budgets::default(), io.clone());
    let (a, _) = session(&conn);
    let (b, _) = session(&conn);
    let mut server = H2Peer::default();
    conn.feed(0, Report::Bytes(hello()));
    list(&conn, a);
    list(&conn, b);
    let seen = server.read(&io.take(0));
    assert_eq!(seen.len(), 2);
    assert_eq!(conn.open_streams(), 2);
    conn.leave(a);
    assert_eq!(conn.open_streams(), 1);
    let _ = server.read(&io.take(0));
    let resets: Vec<u32> = server
        .frames
        .iter()
        .filter_map(|f| match f {
            Frame::RstStream { stream_id, reason } if *reason == Reason::CANCEL => Some(*stream_id),
            _ => None,
        })
        .collect();
    assert_eq!(resets, [seen[0].stream], "only a's stream is reset");
    // b's answer still arrives.
    let reply = server.json(seen[1].stream, &result(seen[1].rpc_id(), TOOLS));
    conn.feed(0, Report::Bytes(reply));
    assert!(listed(&conn.take_events(b)));
    assert!(!conn.is_shut());
}

#[test]
fn a_failed_dial_fails_the_waiting_requests_of_every_session() {
    let io = Arc::new(Recorder::default());
    let conn = SharedH2::new("https", &Budgets::default(), io.clone());
    let (a, _) = session(&conn);
    let (b, _) = session(&conn);
    conn.feed(0, Report::Eof);
    list(&conn, a);
    list(&conn, b);
    assert_eq!(*io.dials.lock().unwrap(), [1]);
    let e = mcp_sansio::TransportError {
        kind: mcp_sansio::TransportErrorKind::Connect,
        message: "refused".into(),
    };
    conn.dialled(1, Err(e));
    for m in [a, b] {
        let events = conn.take_events(m);
        assert!(
            events.iter().any(|e| matches!(e, Event::Failed { .. })),
            "{events:?}"
        );
    }
}
