//! The in-test HTTP/2 server of both adapters' HTTP/2 tests, on 127.0.0.1 sockets (TLS with ALPN,
//! or h2c), written with the core's frame codec and HPACK (the scripted peer, [`h2server`]).
#![allow(dead_code)]

pub use crate::h2server;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use h2server::{frame, hello, result, H2Peer, SeenRequest};
use mcp_sansio::internals::h2::frame::{Frame, Reason};
use mcp_sansio::{Config, Era, EraHint};

/// The tools the server lists.
pub const TOOLS: &str = r#"{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}"#;
/// What every answered call returns.
pub const CALLED: &str = r#"{"content":[{"type":"text","text":"hi"}]}"#;

/// A modern configuration whose era hint spares the negotiation: every request is a tool
/// request.
pub fn config(url: &str) -> Config {
    let mut c = Config::new(url).unwrap();
    c.era_hint = Some(EraHint {
        era: Era::Modern,
        version: "2026-07-28".into(),
    });
    c
}

/// How the server behaves.
#[derive(Clone, Copy, Debug, Default)]
pub struct Behaviour {
    /// Close each connection once it answered a request.
    pub close_after_answer: bool,
    /// On the first connection, send GOAWAY(NO_ERROR) right after the first answer (its last
    /// stream is the one answered); later connections serve normally.
    pub goaway_first: bool,
    /// The `ttlMs` its `tools/list` answers declare (`cacheScope: private`); 0: none declared.
    pub list_ttl_ms: u64,
    /// Answer the first request of each connection `401` with a `DPoP` challenge
    /// `use_dpop_nonce` and the nonce [`DPOP_NONCE`] (RFC 9449 §9).
    pub dpop_nonce: bool,
    /// On the first connection, begin the answer of the first `tools/call` (its head and an
    /// event-stream comment) and then reset its stream with RST_STREAM(INTERNAL_ERROR).
    pub reset_first_call: bool,
    /// On the first connection, begin the answer of the first `tools/call` (its head and an
    /// event-stream comment) and then close the connection.
    pub drop_first_call: bool,
    /// The SETTINGS_MAX_CONCURRENT_STREAMS its SETTINGS declare; `None`: none (no limit).
    pub max_concurrent_streams: Option<u32>,
}

/// The nonce a server with [`Behaviour::dpop_nonce`] gives.
pub const DPOP_NONCE: &str = "h2-nonce-1";

/// A server answering `tools/list` and `tools/call` over HTTP/2 on every accepted connection;
/// a call of the tool `hang` is never answered, the first call of the tool `again` on a
/// connection asks for another round.
pub struct Server {
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// Connections accepted (each with its own TLS handshake over TLS).
    pub accepted: Arc<AtomicUsize>,
    /// Requests completed, in order.
    pub requests: Arc<Mutex<Vec<SeenRequest>>>,
    /// Every frame the client sent, with the number of its connection (from 1).
    pub frames: Arc<Mutex<Vec<(usize, Frame)>>>,
    /// The kind of every TLS handshake finished (full or resumed), in the order they finished.
    pub handshakes: Arc<Mutex<Vec<rustls::HandshakeKind>>>,
}

impl Server {
    /// A server with the default behaviour.
    pub fn start(tls: Option<Arc<rustls::ServerConfig>>) -> Server {
        Server::start_with(tls, Behaviour::default())
    }

    /// A server behaving as `b`.
    pub fn start_with(tls: Option<Arc<rustls::ServerConfig>>, b: Behaviour) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let frames = Arc::new(Mutex::new(Vec::new()));
        let handshakes = Arc::new(Mutex::new(Vec::new()));
        let (a, r, f, h) = (
            accepted.clone(),
            requests.clone(),
            frames.clone(),
            handshakes.clone(),
        );
        std::thread::spawn(move || {
            for tcp in listener.incoming() {
                let Ok(tcp) = tcp else { return };
                let n = a.fetch_add(1, Ordering::SeqCst) + 1;
                let (tls, r, f, h) = (tls.clone(), r.clone(), f.clone(), h.clone());
                let b = Behaviour {
                    goaway_first: b.goaway_first && n == 1,
                    reset_first_call: b.reset_first_call && n == 1,
                    drop_first_call: b.drop_first_call && n == 1,
                    ..b
                };
                std::thread::spawn(move || match tls {
                    Some(config) => {
                        let Ok(mut conn) = rustls::ServerConnection::new(config) else {
                            return;
                        };
                        let mut tcp = tcp;
                        while conn.is_handshaking() {
                            if conn.complete_io(&mut tcp).is_err() {
                                return;
                            }
                        }
                        h.lock().unwrap().extend(conn.handshake_kind());
                        serve(rustls::StreamOwned::new(conn, tcp), n, &r, &f, b);
                    }
                    None => serve(tcp, n, &r, &f, b),
                });
            }
        });
        Server {
            port,
            accepted,
            requests,
            frames,
            handshakes,
        }
    }

    /// The JSON-RPC methods of the requests completed, in order.
    pub fn methods(&self) -> Vec<String> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .map(SeenRequest::rpc_method)
            .collect()
    }

    /// The frames the client sent on connection `n` that `pick` keeps.
    pub fn frames_on(&self, n: usize, pick: impl Fn(&Frame) -> bool) -> Vec<Frame> {
        self.frames
            .lock()
            .unwrap()
            .iter()
            .filter(|(c, f)| *c == n && pick(f))
            .map(|(_, f)| f.clone())
            .collect()
    }

    /// Waits (at most 5 s) until `cond` holds; returns whether it did.
    pub fn wait_for(&self, cond: impl Fn(&Server) -> bool) -> bool {
        let until = Instant::now() + Duration::from_secs(5);
        while Instant::now() < until {
            if cond(self) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        cond(self)
    }
}

/// Whether `f` is a GOAWAY.
pub fn is_goaway(f: &Frame) -> bool {
    matches!(f, Frame::GoAway { .. })
}

/// Whether `f` is a RST_STREAM(CANCEL).
pub fn is_cancel(f: &Frame) -> bool {
    matches!(f, Frame::RstStream { reason, .. } if *reason == Reason::CANCEL)
}

fn serve(
    mut stream: impl Read + Write,
    n: usize,
    seen: &Mutex<Vec<SeenRequest>>,
    frames: &Mutex<Vec<(usize, Frame)>>,
    b: Behaviour,
) {
    let mut peer = H2Peer::default();
    let hello = match b.max_concurrent_streams {
        // SETTINGS_MAX_CONCURRENT_STREAMS (RFC 9113 §6.5.2), then the ACK of the client's.
        Some(n) => {
            let mut out = frame(Frame::Settings {
                ack: false,
                settings: vec![(3, n)],
            });
            out.extend(frame(Frame::Settings {
                ack: true,
                settings: Vec::new(),
            }));
            out
        }
        None => hello(),
    };
    if stream.write_all(&hello).is_err() {
        return;
    }
    let mut buf = vec![0u8; 16 * 1024];
    let mut recorded = 0;
    let mut gone = false;
    let mut rounds = 0;
    let mut broken = false;
    loop {
        let got = match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(got) => got,
        };
        let done = peer.read(&buf[..got]);
        frames
            .lock()
            .unwrap()
            .extend(peer.frames[recorded..].iter().map(|f| (n, f.clone())));
        recorded = peer.frames.len();
        for req in done {
            let method = req.rpc_method();
            let tool = req.json()["params"]["name"].clone();
            let hang = method == "tools/call" && tool == "hang";
            // `again` asks for one more round (an `input_required` without requests) on its
            // first call of each connection.
            let again = method == "tools/call" && tool == "again" && {
                rounds += 1;
                rounds == 1
            };
            let body = match method.as_str() {
                "tools/list" if b.list_ttl_ms > 0 => {
                    let tools = TOOLS.trim_end_matches('}');
                    let page = format!(
                        r#"{tools},"ttlMs":{},"cacheScope":"private"}}"#,
                        b.list_ttl_ms
                    );
                    result(req.rpc_id(), &page)
                }
                "tools/list" => result(req.rpc_id(), TOOLS),
                "tools/call" if again => result(
                    req.rpc_id(),
                    r#"{"resultType":"input_required","requestState":"round-2"}"#,
                ),
                "tools/call" => result(req.rpc_id(), CALLED),
                _ => result(req.rpc_id(), "{}"),
            };
            let ask_nonce = b.dpop_nonce && {
                rounds += 1;
                rounds == 1
            };
            let mut answer = if ask_nonce {
                peer.headers(
                    req.stream,
                    &[
                        (":status", "401"),
                        ("www-authenticate", r#"DPoP error="use_dpop_nonce""#),
                        ("dpop-nonce", DPOP_NONCE),
                    ],
                    true,
                )
            } else if hang || gone {
                Vec::new()
            } else if method == "tools/call" && (b.reset_first_call || b.drop_first_call) && !broken
            {
                broken = true;
                let fields = [(":status", "200"), ("content-type", "text/event-stream")];
                let mut out = peer.headers(req.stream, &fields, false);
                out.extend(h2server::data(req.stream, b": working\n\n", false));
                if b.reset_first_call {
                    out.extend(h2server::rst(req.stream, Reason::INTERNAL_ERROR));
                }
                if b.drop_first_call {
                    seen.lock().unwrap().push(req);
                    let _ = stream.write_all(&out).and_then(|()| stream.flush());
                    return;
                }
                out
            } else {
                peer.json(req.stream, &body)
            };
            if b.goaway_first && !gone && !hang {
                gone = true;
                answer.extend(frame(Frame::GoAway {
                    last_stream_id: req.stream,
                    reason: Reason::NO_ERROR,
                    debug: Vec::new(),
                }));
            }
            seen.lock().unwrap().push(req);
            if stream
                .write_all(&answer)
                .and_then(|()| stream.flush())
                .is_err()
                || b.close_after_answer
            {
                return;
            }
        }
    }
}
