//! A shared HTTP/2 socket lives as long as its server behaves: one `H2Socket` carries 100,000
//! tool calls of sessions that come and go, from a server that sends the ordinary control
//! chatter of a long-lived connection (PINGs, connection and late stream WINDOW_UPDATEs, a
//! SETTINGS now and then, the odd PRIORITY, empty DATA and unknown-type frame), in virtual time.
//!
//! The server here is written for speed (one pre-encoded header block, no history kept), so the
//! run stays a few seconds in a debug build.

use mcp_sansio::h2::H2Config;
use mcp_sansio::internals::h2::client::PREFACE;
use mcp_sansio::internals::h2::frame::{Decoded, Frame, FrameDecoder, Priority};
use mcp_sansio::internals::h2::hpack::Encoder;
use mcp_sansio::mux::{H2Socket, WorkId};
use mcp_sansio::{Config, Connection, Era, EraHint, Event, Instant};
use std::collections::HashMap;
use std::time::Duration;

const CALLS: usize = 100_000;
const SESSIONS_AT_ONCE: usize = 8;
const CALLS_PER_SESSION: usize = 100;

fn enc(f: Frame, out: &mut Vec<u8>) {
    f.encode(out);
}

/// A well-behaved server that chats: answers every call, and around the answers sends what
/// long-lived servers send.
struct Chatty {
    reader: FrameDecoder,
    preface_seen: usize,
    head: Vec<u8>,
    /// Request body octets per open stream.
    open: HashMap<u32, Vec<u8>>,
    answered: usize,
    /// Stream-less octets sent (stream 0 and frames for streams already closed).
    streamless: u64,
    /// PRIORITY, empty DATA and unknown-type frames sent.
    odd_frames: [u32; 3],
}

impl Chatty {
    fn new() -> Self {
        let mut head = Vec::new();
        Encoder::new().encode(
            [
                (&b":status"[..], &b"200"[..]),
                (b"content-type", b"application/json"),
            ],
            &mut head,
        );
        Chatty {
            reader: FrameDecoder::new(),
            preface_seen: 0,
            head,
            open: HashMap::new(),
            answered: 0,
            streamless: 0,
            odd_frames: [0; 3],
        }
    }

    /// The server's SETTINGS and its acknowledgement of ours.
    fn hello(&self) -> Vec<u8> {
        let mut out = Vec::new();
        enc(
            Frame::Settings {
                ack: false,
                settings: vec![(3, 100)],
            },
            &mut out,
        );
        enc(
            Frame::Settings {
                ack: true,
                settings: Vec::new(),
            },
            &mut out,
        );
        out
    }

    /// Reads what the client wrote; appends the answers (and the chatter) to `out`.
    fn read(&mut self, mut bytes: &[u8], out: &mut Vec<u8>) {
        if self.preface_seen < PREFACE.len() {
            let n = (PREFACE.len() - self.preface_seen).min(bytes.len());
            self.preface_seen += n;
            bytes = &bytes[n..];
        }
        while let Some(Decoded { frame, .. }) = self.reader.decode(&mut bytes).unwrap() {
            let (sid, end, body) = match frame {
                Frame::Headers {
                    stream_id,
                    end_stream,
                    ..
                } => (stream_id, end_stream, None),
                Frame::Data {
                    stream_id,
                    end_stream,
                    data,
                    ..
                } => (stream_id, end_stream, Some(data)),
                _ => continue,
            };
            let buf = self.open.entry(sid).or_default();
            if let Some(d) = body {
                buf.extend_from_slice(&d);
            }
            if end {
                let body = self.open.remove(&sid).unwrap_or_default();
                self.answer(sid, &body, out);
            }
        }
    }

    fn answer(&mut self, sid: u32, body: &[u8], out: &mut Vec<u8>) {
        let n = self.answered;
        self.answered += 1;
        let id = rpc_id(body);
        enc(
            Frame::Headers {
                stream_id: sid,
                end_stream: false,
                end_headers: true,
                priority: None,
                fragment: self.head.clone(),
                pad_len: None,
            },
            out,
        );
        if n % 500 == 250 {
            // An empty DATA frame before the body (a flush).
            enc(
                Frame::Data {
                    stream_id: sid,
                    end_stream: false,
                    data: Vec::new(),
                    pad_len: None,
                },
                out,
            );
            self.odd_frames[1] += 1;
        }
        let result = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"hi"}}]}}}}"#
        );
        enc(
            Frame::Data {
                stream_id: sid,
                end_stream: true,
                data: result.into_bytes(),
                pad_len: None,
            },
            out,
        );
        let before = out.len();
        // The window the request body used, given back late: on the stream (closed by now) and
        // on the connection.
        let used = body.len().max(1) as u32;
        enc(
            Frame::WindowUpdate {
                stream_id: sid,
                increment: used,
            },
            out,
        );
        enc(
            Frame::WindowUpdate {
                stream_id: 0,
                increment: used,
            },
            out,
        );
        // A keep-alive / round-trip PING with every answer.
        enc(
            Frame::Ping {
                ack: false,
                data: (n as u64).to_be_bytes(),
            },
            out,
        );
        if n % 1000 == 999 {
            enc(
                Frame::Settings {
                    ack: false,
                    settings: vec![(3, 100)],
                },
                out,
            );
        }
        if n % 500 == 100 {
            enc(
                Frame::Priority {
                    stream_id: sid,
                    priority: Priority {
                        exclusive: false,
                        dependency: 0,
                        weight: 16,
                    },
                },
                out,
            );
            self.odd_frames[0] += 1;
        }
        if n % 500 == 400 {
            // A reserved ("GREASE") frame type, to be ignored.
            enc(
                Frame::Unknown {
                    kind: 0x0b,
                    flags: 0,
                    stream_id: 0,
                    payload: vec![0; 4],
                },
                out,
            );
            self.odd_frames[2] += 1;
        }
        self.streamless += (out.len() - before) as u64;
    }
}

/// The JSON-RPC id of a request body (a number).
fn rpc_id(body: &[u8]) -> u64 {
    let at = body
        .windows(5)
        .position(|w| w == br#""id":"#)
        .expect("a request id")
        + 5;
    body[at..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .fold(0, |acc, &d| acc * 10 + u64::from(d - b'0'))
}

fn session_config() -> Config {
    let mut c = Config::new("https://mcp.example.com/mcp").unwrap();
    c.era_hint = Some(EraHint {
        era: Era::Modern,
        version: "2026-07-28".into(),
    });
    c
}

/// A session on the socket: its work item and the calls it has left.
struct Session {
    work: WorkId,
    left: usize,
}

fn join(socket: &mut H2Socket, now: Instant) -> Session {
    let mut conn = Connection::new(session_config()).unwrap();
    conn.connect(now);
    let work = socket.add(conn);
    let s = Session {
        work,
        left: CALLS_PER_SESSION,
    };
    call(socket, &s, now);
    s
}

fn call(socket: &mut H2Socket, s: &Session, now: Instant) {
    socket
        .connection_mut(s.work)
        .unwrap()
        .call_tool(now, "echo", br#"{"x":1}"#);
}

#[test]
fn a_hundred_thousand_calls_over_one_socket_with_ordinary_chatter() {
    let mut now = Instant::ZERO;
    let mut socket = H2Socket::new(now, H2Config::default(), "https");
    let mut server = Chatty::new();
    let mut to_client = server.hello();
    let mut sessions: Vec<Session> = Vec::new();
    let mut started = 0;
    let mut finished = 0;
    let mut joined = 0;
    let mut most_slots = 0;
    while finished < CALLS {
        // Sessions come and go: SESSIONS_AT_ONCE at a time, each making its calls in turn.
        while sessions.len() < SESSIONS_AT_ONCE && started < CALLS {
            sessions.push(join(&mut socket, now));
            joined += 1;
            started += 1;
        }
        while let Some(bytes) = socket.poll_transmit(now) {
            server.read(&bytes, &mut to_client);
        }
        assert!(socket.poll_fresh().is_none(), "no request left the socket");
        while let Some((w, event)) = socket.poll_event(now) {
            match event {
                Event::CallFinished(r) => {
                    assert!(!r.is_error);
                    finished += 1;
                    let i = sessions.iter().position(|s| s.work == w).unwrap();
                    sessions[i].left -= 1;
                    if sessions[i].left == 0 || started >= CALLS {
                        let s = sessions.swap_remove(i);
                        assert!(socket.remove(now, s.work).is_some());
                    } else {
                        call(&mut socket, &sessions[i], now);
                        started += 1;
                    }
                }
                Event::Failed { operation, error } => {
                    panic!("call {finished}: {operation:?} failed: {error}")
                }
                _ => {}
            }
        }
        most_slots = most_slots.max(socket.work_slots());
        if !to_client.is_empty() {
            let bytes = std::mem::take(&mut to_client);
            if let Err(e) = socket.handle_bytes(now, &bytes) {
                panic!("after {finished} calls: {e}");
            }
        }
        now = now + Duration::from_millis(1);
    }
    assert_eq!(finished, CALLS);
    assert_eq!(server.answered, CALLS);
    assert_eq!(joined, CALLS / CALLS_PER_SESSION);
    assert!(!socket.is_closed());
    assert_eq!(socket.client().error(), None);
    assert_eq!(socket.client().goaway(), None);
    // The chatter was well past the per-socket figures taken as lifetime totals.
    assert!(server.streamless > 4 * H2Config::default().socket_bytes);
    assert!(server.odd_frames.iter().all(|&n| n >= 200));
    // Sessions that left leave no slot behind: the socket holds as many as were ever at once.
    assert!(most_slots <= SESSIONS_AT_ONCE, "{most_slots} slots");
}
