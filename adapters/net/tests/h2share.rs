//! The shared HTTP/2 connection ([`SharedH2`]) without sockets: a recording socket I/O and the
//! scripted HTTP/2 server of the core's tests play both ends, so every routing decision is
//! checked byte for byte: one dial for every session after GOAWAY, the move once the old socket
//! drained, per-session inboxes and wake-ups, an idle socket kept for the next session and closed
//! with GOAWAY(NO_ERROR) past its idle timeout.

mod support;

use mcp_sansio_test_support::adapter_tests::recording;
use mcp_sansio_test_support::h2server;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use h2server::{frame, hello, result, H2Peer};
use mcp_sansio::internals::h2::client::PREFACE;
use mcp_sansio::internals::h2::frame::{Decoded, Frame, FrameDecoder, Reason};
use mcp_sansio::{Budgets, Config, Connection, Era, EraHint, Event, Instant};
use mcp_sansio_net::{H2Io, Member, Outbox, Report, SharedH2, Waker};
use support::TestClient;

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

/// A session as the session driver runs it: it owns its connection, hands the shared
/// connection its requests and ended exchanges, and hands its connection the inputs of its
/// inbox.
struct Sess {
    shared: Arc<SharedH2>,
    m: Member,
    conn: Connection,
    events: Vec<Event>,
    /// The exchanges of the requests it handed over, in order.
    sent: Vec<mcp_sansio::ExchangeId>,
}

impl Sess {
    fn join(shared: &Arc<SharedH2>, config: Config, wake: Waker) -> Option<Sess> {
        let conn = Connection::new(config).unwrap();
        let m = shared.join(conn.config(), conn.bytes_left(), wake)?;
        Some(Sess {
            shared: shared.clone(),
            m,
            conn,
            events: Vec::new(),
            sent: Vec::new(),
        })
    }

    /// Hands the shared connection `out` and the connection its inbox. Whether it had inputs.
    fn sync(&mut self, mut out: Outbox) -> bool {
        out.bytes_left = self.conn.bytes_left();
        out.bytes_read = self.conn.bytes_read();
        let inbox = self.shared.sync(self.m, out);
        for r in &inbox {
            self.conn.handle(r.at(), r.input());
        }
        !inbox.is_empty()
    }

    /// Until nothing moves: the inbox in, the requests and ended exchanges out, the events kept.
    fn pump(&mut self) {
        let mut out = Outbox::default();
        loop {
            let mut any = self.sync(std::mem::take(&mut out));
            while let Some(t) = self.conn.poll_transmit() {
                any = true;
                self.sent.push(t.exchange);
                out.requests.push(t);
            }
            while let Some(e) = self.conn.poll_event() {
                any = true;
                match &e {
                    Event::ExchangeFinished { exchange, .. } => out.ended.push((*exchange, false)),
                    Event::ExchangeAbandoned { exchange } => out.ended.push((*exchange, true)),
                    _ => {}
                }
                self.shared.record_event(&e);
                self.events.push(e);
            }
            if !any {
                return;
            }
        }
    }

    /// Starts an operation with `f` at `now` (the inbox handed in first), then pumps.
    fn start_at(&mut self, now: Instant, f: impl FnOnce(&mut Connection, Instant)) {
        self.sync(Outbox::default());
        f(&mut self.conn, now);
        self.pump();
    }

    fn take_events(&mut self) -> Vec<Event> {
        self.pump();
        std::mem::take(&mut self.events)
    }

    fn leave(self) {
        self.shared.leave(self.m);
    }
}

/// Joins a session and connects it (the modern hint needs no request).
fn session(conn: &Arc<SharedH2>) -> (Sess, Arc<AtomicUsize>) {
    let (woken, wake) = counter();
    let mut s = Sess::join(conn, config(), wake).unwrap();
    s.start_at(conn.now(), |c, now| c.connect(now));
    let events = s.take_events();
    assert!(
        matches!(events[..], [Event::Connected { .. }]),
        "{events:?}"
    );
    (s, woken)
}

fn list(s: &mut Sess) {
    s.start_at(s.shared.now(), |c, now| c.list_tools(now));
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
    let (mut a, woken_a) = session(&conn);
    let (mut b, woken_b) = session(&conn);

    // Socket 0: the preface, SETTINGS, then a's listing on stream 1.
    list(&mut a);
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
    assert!(listed(&a.take_events()));

    // Both list again: the socket is going away, so one dial serves both.
    list(&mut b);
    list(&mut a);
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
    assert!(listed(&a.take_events()));
    assert!(listed(&b.take_events()));
    assert!(woken_b.load(Ordering::SeqCst) > before_b);
    assert_eq!(*io.dials.lock().unwrap(), [1], "still one dial");

    // Leaving: a first, then b: nothing closes, the healthy socket stays idle for the next
    // session; closing it writes GOAWAY(NO_ERROR), then closes.
    a.leave();
    assert!(!conn.is_shut());
    assert!(!io.closes.lock().unwrap().contains(&1));
    b.leave();
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
    assert!(conn.join(&config(), 0, wake).is_none());
}

#[test]
fn a_session_leaving_mid_listing_resets_only_its_stream() {
    let io = Arc::new(Recorder::default());
    let conn = SharedH2::new("http", &Budgets::default(), io.clone());
    let (mut a, _) = session(&conn);
    let (mut b, _) = session(&conn);
    let mut server = H2Peer::default();
    conn.feed(0, Report::Bytes(hello()));
    list(&mut a);
    list(&mut b);
    let seen = server.read(&io.take(0));
    assert_eq!(seen.len(), 2);
    assert_eq!(conn.open_streams(), 2);
    a.leave();
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
    assert!(listed(&b.take_events()));
    assert!(!conn.is_shut());
}

#[test]
fn a_failed_dial_fails_the_waiting_requests_of_every_session() {
    let io = Arc::new(Recorder::default());
    let conn = SharedH2::new("https", &Budgets::default(), io.clone());
    let (mut a, _) = session(&conn);
    let (mut b, _) = session(&conn);
    conn.feed(0, Report::Eof);
    list(&mut a);
    list(&mut b);
    assert_eq!(*io.dials.lock().unwrap(), [1]);
    let e = mcp_sansio::TransportError {
        kind: mcp_sansio::TransportErrorKind::Connect,
        message: "refused".into(),
    };
    conn.dialled(1, Err(e));
    for m in [&mut a, &mut b] {
        let events = m.take_events();
        assert!(
            events.iter().any(|e| matches!(e, Event::Failed { .. })),
            "{events:?}"
        );
    }
}

/// A transcript sink keeping the text of each session and whether it was finished.
#[derive(Default)]
struct Texts(Mutex<std::collections::BTreeMap<u64, (String, bool)>>);

impl mcp_sansio_transcript::TranscriptSink for Texts {
    fn write(&self, session: u64, text: &str) {
        let mut t = self.0.lock().unwrap();
        let entry = t.entry(session).or_default();
        assert!(!entry.1, "text after finish");
        entry.0.push_str(text);
    }
    fn finish(&self, session: u64) {
        self.0.lock().unwrap().entry(session).or_default().1 = true;
    }
}

impl Texts {
    /// The finished transcript of session `n`, parsed, after checking that it replays with the
    /// same events and writes as recorded, byte by byte and in 5-byte pieces.
    fn replayed(&self, n: u64) -> (String, mcp_sansio_transcript::Transcript) {
        use mcp_sansio_transcript::{replay, Split, Transcript};
        let (text, finished) = self.0.lock().unwrap().get(&n).cloned().unwrap();
        assert!(finished, "the session's transcript is finished");
        let t = Transcript::parse(&text).unwrap();
        for split in [Split::Recorded, Split::BYTE_BY_BYTE, Split::Pieces(5)] {
            let r = replay(&t, split).unwrap();
            assert_eq!(r.events, t.events(), "{split:?}\n{text}");
            r.check(&t).unwrap();
        }
        (text, t)
    }
}

/// Starts `op` on a recorded connection, as the session driver does: the inbox is handed in,
/// then the operation recorded and started at the instant recorded.
fn start(s: &mut Sess, op: mcp_sansio_transcript::RecordedOperation) {
    s.sync(Outbox::default());
    let now = s.shared.record_operation(op.clone());
    s.start_at(now, |c, now| op.apply(c, now));
}

/// The frames of `bytes` (whole frames, after the preface if any).
fn frames_of(bytes: &[u8]) -> Vec<Frame> {
    let mut rest = bytes.strip_prefix(PREFACE).unwrap_or(bytes);
    let mut decoder = FrameDecoder::new();
    let mut frames = Vec::new();
    while let Some(Decoded { frame, .. }) = decoder.decode(&mut rest).unwrap() {
        frames.push(frame);
    }
    assert!(rest.is_empty(), "whole frames");
    frames
}

/// Whether `bytes` (whole frames, after the preface if any) hold a GOAWAY frame.
fn has_goaway(bytes: &[u8]) -> bool {
    frames_of(bytes)
        .iter()
        .any(|f| matches!(f, Frame::GoAway { .. }))
}

#[test]
fn a_recorded_connection_records_its_one_session_across_a_fresh_socket() {
    use mcp_sansio_transcript::RecordedOperation;
    let io = Arc::new(Recorder::default());
    let sink = Arc::new(Texts::default());
    let conn = SharedH2::new_recorded("https", &Budgets::default(), io.clone(), sink.clone(), 7);
    assert!(conn.is_recorded());
    let (_, wake) = counter();
    let cfg = config().with_bearer_token("tok-s3cr3t");
    let mut m = Sess::join(&conn, cfg, wake).unwrap();
    let (_, wake) = counter();
    assert!(
        Sess::join(&conn, config(), wake).is_none(),
        "a recorded connection takes one session"
    );
    start(&mut m, RecordedOperation::Connect);
    start(&mut m, RecordedOperation::ListTools);
    let mut server = H2Peer::default();
    let mut reply = hello();
    reply.extend(answer(&mut server, &io.take(0)));
    reply.extend(frame(Frame::GoAway {
        last_stream_id: 1,
        reason: Reason::NO_ERROR,
        debug: Vec::new(),
    }));
    // Two reads, as a socket may deliver them.
    let (first, second) = reply.split_at(reply.len() / 2);
    conn.feed(0, Report::Bytes(first.to_vec()));
    conn.feed(0, Report::Bytes(second.to_vec()));
    assert!(listed(&m.take_events()));

    // The next listing waits for a fresh socket; once it is open the session moves at once.
    start(&mut m, RecordedOperation::ListTools);
    assert_eq!(*io.dials.lock().unwrap(), [1]);
    conn.dialled(1, Ok(()));
    assert_eq!(conn.generation(), 1);
    let mut fresh = H2Peer::default();
    let mut reply = hello();
    reply.extend(answer(&mut fresh, &io.take(1)));
    conn.feed(1, Report::Bytes(reply));
    assert!(listed(&m.take_events()));
    // A read of the replaced socket is not the session's any more.
    conn.feed(0, Report::Eof);
    start(&mut m, RecordedOperation::Close);
    let _ = m.take_events();
    m.leave();
    assert!(conn.is_shut());
    assert!(has_goaway(&io.take(1)), "leaving wrote GOAWAY(NO_ERROR)");

    let (text, t) = sink.replayed(7);
    assert!(text.contains("config http 2 https\n"), "{text}");
    assert!(!text.contains("tok-s3cr3t"));
    assert!(text.contains("Bearer <redacted>"));
    recording::check_two_sockets(&text, &t);
    assert!(!text.contains(" eof 1"), "the replaced socket is not read");
    let writes = t.h2_writes();
    let on_second: Vec<u8> = writes
        .iter()
        .filter(|(s, _)| *s == 2)
        .flat_map(|(_, b)| b.clone())
        .collect();
    assert!(
        frames_of(&on_second)
            .iter()
            .any(|f| matches!(f, Frame::Headers { .. })),
        "the second listing's request"
    );
    assert!(
        !has_goaway(&on_second),
        "what leaving writes is the connection's, not the session's"
    );
}

#[test]
fn a_recorded_connection_records_a_failed_dial() {
    use mcp_sansio_transcript::RecordedOperation;
    let io = Arc::new(Recorder::default());
    let sink = Arc::new(Texts::default());
    let conn = SharedH2::new_recorded("http", &Budgets::default(), io.clone(), sink.clone(), 1);
    let (_, wake) = counter();
    let mut m = Sess::join(&conn, config(), wake).unwrap();
    start(&mut m, RecordedOperation::Connect);
    conn.feed(0, Report::Bytes(hello()));
    conn.feed(0, Report::Eof);
    start(&mut m, RecordedOperation::ListTools);
    assert_eq!(*io.dials.lock().unwrap(), [1]);
    let e = mcp_sansio::TransportError {
        kind: mcp_sansio::TransportErrorKind::Connect,
        message: "refused".into(),
    };
    conn.dialled(1, Err(e));
    let events = m.take_events();
    assert!(
        events.iter().any(|e| matches!(e, Event::Failed { .. })),
        "{events:?}"
    );
    conn.end_recording();
    let (text, t) = sink.replayed(1);
    assert!(text.contains("config http 2 http\n"), "{text}");
    assert!(text.contains("dial-error"), "{text}");
    assert!(text.contains("eof"), "{text}");
    assert!(t.outcome().iter().any(|e| e.get("failed").is_some()));
    drop(conn);
}

/// Sessions of a client come and go for a long time over one socket whose server chats as
/// long-lived servers do: every answer is followed by two PINGs and the window the request used,
/// given back late on its (closed) stream and on the connection (77 octets). The socket's
/// per-socket bounds refill as the listings complete, so 20,000 sessions (half again what the
/// 1 MiB ledger would allow as a lifetime total) go through with no failure, no dial and no
/// socket closed.
#[test]
fn twenty_thousand_sessions_come_and_go_over_one_socket_with_a_chatty_server() {
    const SESSIONS: usize = 20_000;
    let io = Arc::new(Recorder::default());
    let conn = SharedH2::new("https", &Budgets::default(), io.clone());
    let mut server = H2Peer::default();
    let mut first = true;
    let mut chatter = 0u64;
    let mut previous: Option<Sess> = None;
    for n in 0..SESSIONS {
        let (mut m, _) = session(&conn);
        // The session before leaves only now: two overlap, as sessions of a busy client do.
        if let Some(p) = previous.take() {
            p.leave();
        }
        list(&mut m);
        let sent = io.take(0);
        let mut reply = if first { hello() } else { Vec::new() };
        first = false;
        for req in server.read(&sent) {
            reply.extend(server.json(req.stream, &result(req.rpc_id(), TOOLS)));
            let used = req.body.len().max(1) as u32;
            let before = reply.len();
            for stream_id in [req.stream, 0] {
                reply.extend(frame(Frame::WindowUpdate {
                    stream_id,
                    increment: used,
                }));
            }
            for k in 0..2u64 {
                reply.extend(frame(Frame::Ping {
                    ack: false,
                    data: (2 * n as u64 + k).to_be_bytes(),
                }));
            }
            chatter += (reply.len() - before) as u64;
        }
        conn.feed(0, Report::Bytes(reply));
        let events = m.take_events();
        assert!(listed(&events), "session {n}: {events:?}");
        previous = Some(m);
        // The peer's history is not needed: keep the run's memory flat.
        server.frames.clear();
        server.requests.clear();
    }
    assert!(chatter > 1 << 20, "{chatter} octets of chatter");
    assert_eq!(conn.generation(), 0);
    assert!(io.dials.lock().unwrap().is_empty());
    assert!(io.closes.lock().unwrap().is_empty());
    assert!(!conn.is_shut());
}

/// A stream opened while inputs of its work item wait in the item's inbox is allowed what the
/// item's byte budget will have left once they are handed in: the connection charges each
/// input's raw bytes when it is handed them ("every byte the socket read for it … charged to the
/// connection's byte budget first", `Input::Response`), so the answer waiting in the inbox is
/// already spent when the next stream opens.
#[test]
fn a_stream_opened_while_an_answer_waits_in_the_inbox_is_allowed_what_the_budget_will_have_left() {
    const BUDGET: u64 = 4096;
    let io = Arc::new(Recorder::default());
    let conn = SharedH2::new("http", &Budgets::default(), io.clone());
    let mut cfg = config();
    cfg.budgets.response_bytes = BUDGET;
    let (_, wake) = counter();
    let mut a = Sess::join(&conn, cfg.clone(), wake).unwrap();
    a.start_at(conn.now(), |c, now| c.connect(now));
    let _ = a.take_events();
    let mut server = H2Peer::default();
    conn.feed(0, Report::Bytes(hello()));
    list(&mut a);
    let seen = server.read(&io.take(0));
    assert_eq!(seen.len(), 1);
    // The listing's answer, about 3,000 raw octets, lands in a's inbox; a does not take it yet.
    let tools = |n: usize| {
        format!(
            r#"{{"tools":[{{"name":"echo","description":"{}","inputSchema":{{"type":"object"}}}}]}}"#,
            "x".repeat(n)
        )
    };
    let first = server.json(seen[0].stream, &result(seen[0].rpc_id(), &tools(2900)));
    let spent = first.len() as u64;
    assert!(spent > 2900 && spent < BUDGET);
    conn.feed(0, Report::Bytes(first));
    // A second request of a's work item (made by a twin of its connection), handed over with
    // what a's connection reports as left: the answer in the inbox is not handed in yet.
    let mut twin = Connection::new(cfg).unwrap();
    let now = conn.now();
    twin.connect(now);
    twin.list_tools(now);
    let t = twin.poll_transmit().unwrap();
    let out = Outbox {
        requests: vec![t],
        bytes_left: a.conn.bytes_left(),
        ..Outbox::default()
    };
    assert_eq!(out.bytes_left, BUDGET, "nothing handed in yet");
    let inbox = a.shared.sync(a.m, out);
    assert!(!inbox.is_empty(), "the first answer");
    let seen = server.read(&io.take(0));
    assert_eq!(seen.len(), 1, "the second request opened a stream");
    // Its answer costs more than the budget has left once the first is handed in, and less
    // than the whole budget.
    let second = server.json(seen[0].stream, &result(seen[0].rpc_id(), &tools(1500)));
    let cost = second.len() as u64;
    assert!(cost > BUDGET - spent && cost < BUDGET, "{cost}");
    conn.feed(0, Report::Bytes(second));
    let inbox = a.shared.sync(
        a.m,
        Outbox {
            bytes_left: BUDGET - spent,
            ..Outbox::default()
        },
    );
    let inputs: Vec<String> = inbox.iter().map(|r| format!("{:?}", r.input())).collect();
    assert!(
        inputs
            .iter()
            .any(|i| i.starts_with("WireError") && i.contains("Budget")),
        "the second stream fails on its allowance: {inputs:?}"
    );
}

/// The I/O of an HTTP/2 session: it has no socket of its own, so nothing is asked of it.
struct NoSockets;

impl mcp_sansio_net::Io for NoSockets {
    fn start(
        &mut self,
        _: mcp_sansio::Transmit,
        _: Vec<u8>,
    ) -> Result<(), mcp_sansio::TransportError> {
        panic!("an HTTP/2 session starts no socket")
    }
    fn read_on(&mut self, _: mcp_sansio::ExchangeId) {}
    fn finish(&mut self, _: mcp_sansio::ExchangeId, _: bool) {}
    fn abandon(&mut self, _: mcp_sansio::ExchangeId) {}
}

/// An answer read before the listing's deadline completes the listing even when the session
/// wakes only at the deadline: the driver hands its connection the inputs waiting in its inbox,
/// at the instant each was read, before the deadline (as the recorded session replays: the read
/// comes before the timeout).
#[test]
fn an_answer_read_before_the_deadline_completes_the_listing_when_the_session_wakes_at_the_deadline()
{
    use mcp_sansio_net::{ClientBuilder, NoObserver, SessionDriver, Start, Wait};
    let io = Arc::new(Recorder::default());
    let conn = SharedH2::new("http", &Budgets::default(), io.clone());
    let client = ClientBuilder::<TestClient>::new().build();
    let mut cfg = config();
    cfg.budgets.list_time = Duration::from_millis(300);
    cfg.budgets.request_time = Duration::from_millis(300);
    let (_, wake) = counter();
    let mut d = SessionDriver::join_h2(&client.0, cfg, conn.clone(), wake)
        .unwrap()
        .unwrap();
    d.start(Start::Connect);
    assert!(matches!(
        d.pump(&mut NoSockets, &mut NoObserver),
        Some(Ok(_))
    ));
    conn.feed(0, Report::Bytes(hello()));
    d.start(Start::ListTools);
    assert!(d.pump(&mut NoSockets, &mut NoObserver).is_none());
    let mut server = H2Peer::default();
    let seen = server.read(&io.take(0));
    assert_eq!(seen.len(), 1);
    conn.feed(
        0,
        Report::Bytes(server.json(seen[0].stream, &result(seen[0].rpc_id(), TOOLS))),
    );
    // The session sleeps through the wake-up, until its deadline.
    let Wait::Until(due) = d.wait() else {
        panic!("the listing waits on its deadline")
    };
    std::thread::sleep(due.saturating_duration_since(std::time::Instant::now()));
    std::thread::sleep(Duration::from_millis(20));
    d.timeout();
    let r = d.pump(&mut NoSockets, &mut NoObserver);
    assert!(
        matches!(&r, Some(Ok(mcp_sansio::Completion::Listed(c))) if c.tools.len() == 1),
        "{r:?}"
    );
}

/// Many sessions list at once over one socket that opens at most 8 streams
/// ([`SharedH2::with_max_streams`]; the server sets no lower MAX_CONCURRENT_STREAMS): the rest
/// wait in the queue.
/// The queue serves them first come first served (the 8 streams answered free slots for the
/// next 8 sessions in the order they listed), a session that leaves while it waits leaves the
/// queue (the next one takes its turn), a freed slot wakes no session still waiting (only the
/// sessions whose answer came), and the queue's work per request is bounded, whatever the
/// queue's length: `queue_steps` grows by at most a constant per request served, so 400 waiting
/// sessions cost 400 times one (a queue scanned per event, or every session's allowance updated
/// per routed input, costs about 400 / 8 times more per request).
#[test]
fn waiting_sessions_are_served_in_order_each_at_a_bounded_cost_however_many_wait() {
    const SESSIONS: usize = 400;
    const SLOTS: usize = 8;
    const GONE: usize = 100;
    let io = Arc::new(Recorder::default());
    let conn = SharedH2::with_max_streams("http", &Budgets::default(), SLOTS as u32, io.clone());
    let mut server = H2Peer::default();
    conn.feed(0, Report::Bytes(hello()));
    let mut sessions: Vec<Option<(Sess, Arc<AtomicUsize>)>> =
        (0..SESSIONS).map(|_| Some(session(&conn))).collect();
    let before = conn.queue_steps();
    for s in sessions.iter_mut().flatten() {
        list(&mut s.0);
    }
    assert_eq!(conn.open_streams(), SLOTS);
    assert_eq!(conn.waiting_requests(), SESSIONS - SLOTS);
    // A session far down the queue leaves while it waits: its request leaves the queue.
    if let Some((s, _)) = sessions[GONE].take() {
        s.leave();
    }
    assert_eq!(conn.waiting_requests(), SESSIONS - SLOTS - 1);
    // In the order they listed, skipping the one that left.
    let order: Vec<usize> = (0..SESSIONS).filter(|&i| i != GONE).collect();
    let mut served = 0;
    while served < order.len() {
        let requests = server.read(&io.take(0));
        let round = requests.len();
        assert!(
            (1..=SLOTS).contains(&round),
            "{round} requests at once after {served}"
        );
        let woken: Vec<usize> = order[served..]
            .iter()
            .map(|&i| sessions[i].as_ref().unwrap().1.load(Ordering::SeqCst))
            .collect();
        let mut reply = Vec::new();
        for req in &requests {
            reply.extend(server.json(req.stream, &result(req.rpc_id(), TOOLS)));
            // The connection window the request body used, given back.
            reply.extend(frame(Frame::WindowUpdate {
                stream_id: 0,
                increment: req.body.len().max(1) as u32,
            }));
        }
        conn.feed(0, Report::Bytes(reply));
        for (k, &i) in order[served..].iter().enumerate() {
            let (s, w) = sessions[i].as_mut().unwrap();
            let now = w.load(Ordering::SeqCst);
            if k < round {
                assert_eq!(now, woken[k] + 1, "session {i} woken once by its answer");
                assert!(listed(&s.take_events()), "session {i} served in its turn");
            } else {
                assert_eq!(now, woken[k], "session {i} still waits: not woken");
            }
        }
        served += round;
        server.frames.clear();
        server.requests.clear();
    }
    assert_eq!(conn.waiting_requests(), 0);
    let steps = conn.queue_steps() - before;
    assert!(
        steps <= 16 * SESSIONS as u64,
        "{steps} queue steps for {SESSIONS} requests"
    );
}

/// Thousands of requests wait for a fresh socket (the server's GOAWAY came while they waited for
/// a stream slot), and their exchanges end, or their sessions leave, in an order of their own,
/// neither first nor last: each leaves the waiting list at once, the others keep their place, and
/// the list costs a bounded amount per request whatever its length (`fresh_steps`; a list
/// scanned for each exchange that ends costs about N / 2 per request). Once the fresh socket is
/// open and the old one has drained, exactly the requests still waiting move to it.
#[test]
fn thousands_of_requests_waiting_for_a_fresh_socket_leave_it_in_any_order_at_a_bounded_cost() {
    const SESSIONS: usize = 2_000;
    const SLOTS: usize = 8;
    let io = Arc::new(Recorder::default());
    let conn = SharedH2::with_max_streams("http", &Budgets::default(), SLOTS as u32, io.clone());
    conn.feed(0, Report::Bytes(hello()));
    let mut sessions: Vec<Option<Sess>> = (0..SESSIONS).map(|_| Some(session(&conn).0)).collect();
    for s in sessions.iter_mut().flatten() {
        list(s);
    }
    assert_eq!(conn.open_streams(), SLOTS);
    // GOAWAY: the open streams (1, 3, …, 15) are served, every waiting request needs a fresh
    // socket.
    let mut server = H2Peer::default();
    let first = server.read(&io.take(0));
    assert_eq!(first.len(), SLOTS);
    conn.feed(
        0,
        Report::Bytes(frame(Frame::GoAway {
            last_stream_id: 2 * SLOTS as u32 - 1,
            reason: Reason::NO_ERROR,
            debug: Vec::new(),
        })),
    );
    assert_eq!(conn.fresh_requests(), SESSIONS - SLOTS);
    assert_eq!(*io.dials.lock().unwrap(), [1]);
    let before = conn.fresh_steps();
    // In a scattered order (7 is prime to 2,000): a third of the waiting sessions end their
    // exchange, a third leave, a third wait on.
    let order: Vec<usize> = (0..SESSIONS).map(|k| (k * 7 + 3) % SESSIONS).collect();
    let mut gone = std::collections::BTreeSet::new();
    for (n, &i) in order.iter().filter(|&&i| i >= SLOTS).enumerate() {
        let s = sessions[i].as_mut().unwrap();
        match n % 3 {
            0 => {
                let exchange = *s.sent.last().unwrap();
                let out = Outbox {
                    ended: vec![(exchange, true)],
                    bytes_left: s.conn.bytes_left(),
                    ..Outbox::default()
                };
                let _ = s.shared.sync(s.m, out);
            }
            1 => sessions[i].take().unwrap().leave(),
            _ => continue,
        }
        gone.insert(i);
        assert_eq!(conn.fresh_requests(), SESSIONS - SLOTS - gone.len());
    }
    let steps = conn.fresh_steps() - before;
    assert!(
        steps <= 4 * SESSIONS as u64,
        "{steps} steps for {} requests dropped from {}",
        gone.len(),
        SESSIONS - SLOTS
    );
    let staying = SESSIONS - SLOTS - gone.len();
    // The fresh socket opens; the old one drains (its 8 answers): the requests still waiting
    // move, the first 8 on streams, the rest in the fresh socket's queue.
    conn.dialled(1, Ok(()));
    let mut reply = Vec::new();
    for req in &first {
        reply.extend(server.json(req.stream, &result(req.rpc_id(), TOOLS)));
    }
    conn.feed(0, Report::Bytes(reply));
    assert_eq!(conn.generation(), 1);
    assert_eq!(conn.fresh_requests(), 0);
    conn.feed(1, Report::Bytes(hello()));
    assert_eq!(conn.open_streams(), SLOTS);
    assert_eq!(conn.waiting_requests(), staying - SLOTS);
    let mut fresh = H2Peer::default();
    let sent = io.take(1);
    assert!(sent.starts_with(PREFACE));
    assert_eq!(fresh.read(&sent).len(), SLOTS);
    assert!(conn.fresh_steps() - before <= 6 * SESSIONS as u64);
}
