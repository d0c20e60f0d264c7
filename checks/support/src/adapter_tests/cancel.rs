//! A dropped operation cancels its request, on every async runtime: the tests declared with
//! [`crate::cancel_tests!`], against servers that observe the cancellation: an HTTP/1.1 server
//! ([`Http1Server`]) that logs every request and every connection the client closes, and the
//! HTTP/2 server of the HTTP/2 tests ([`crate::h2_server`]) in clear text, which logs every
//! frame.
//!
//! The blocking adapter has no such test: its operations are calls, not futures, and cannot be
//! dropped while they run.
//!
//! What cancelling is, from the specification (`basic/patterns/cancellation.mdx` of 2026-07-28
//! and `basic/utilities/cancellation.mdx` of the earlier revisions):
//!
//! - 2026-07-28 over HTTP: "closing the SSE response stream **is** the cancel signal, and the
//!   server MUST treat a disconnect as cancellation".
//! - Up to 2025-11-25 over HTTP: "the client POSTs the notification (202). A disconnect is
//!   **not** a cancel"; `notifications/cancelled` carries `{requestId, reason?}`.
#![allow(dead_code)]

use std::future::Future;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use mcp_sansio::{Config, Era, EraHint};

use super::canned::{empty_response, json_response, json_response_with, result_msg};

/// What the HTTP/1.1 server saw, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum Seen {
    /// A request on connection `conn` (numbered from 1): its HTTP method, its headers (names in
    /// lower case) and its body as JSON (`null` when it had none).
    Request {
        /// The connection.
        conn: usize,
        /// `POST`, `DELETE`, …
        method: String,
        /// The headers.
        headers: Vec<(String, String)>,
        /// The body.
        body: serde_json::Value,
    },
    /// The client closed connection `conn`.
    Closed {
        /// The connection.
        conn: usize,
    },
}

impl Seen {
    /// The JSON-RPC method of a request, if it is one.
    pub fn rpc_method(&self) -> Option<&str> {
        match self {
            Seen::Request { body, .. } => body["method"].as_str(),
            Seen::Closed { .. } => None,
        }
    }
}

/// An HTTP/1.1 server on 127.0.0.1, modern (`legacy` off) or a legacy 2025-06-18 server with
/// session `sess-1`: it answers every request at once, except a call of the tool `hang`, which
/// it never answers; it logs every request and every connection the client closes.
pub struct Http1Server {
    /// Its port.
    pub port: u16,
    /// What it saw.
    pub log: Arc<Mutex<Vec<Seen>>>,
}

impl Http1Server {
    /// A server, legacy or modern.
    pub fn start(legacy: bool) -> Http1Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let log = Arc::new(Mutex::new(Vec::new()));
        let l = log.clone();
        std::thread::spawn(move || {
            for (n, tcp) in listener.incoming().enumerate() {
                let Ok(tcp) = tcp else { return };
                let l = l.clone();
                std::thread::spawn(move || serve(tcp, n + 1, legacy, &l));
            }
        });
        Http1Server { port, log }
    }

    /// The endpoint's URL.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// What it saw so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.log.lock().unwrap().clone()
    }

    /// The requests of JSON-RPC method `method` seen so far.
    pub fn requests(&self, method: &str) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|s| s.rpc_method() == Some(method))
            .collect()
    }

    /// Waits (at most 5 s) until `cond` holds; whether it did.
    pub fn wait_for(&self, cond: impl Fn(&[Seen]) -> bool) -> bool {
        wait_until(|| cond(&self.seen()))
    }
}

/// Waits (at most 5 s) until `cond` holds; whether it did.
pub fn wait_until(cond: impl Fn() -> bool) -> bool {
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    cond()
}

/// A configuration for `url` with an era hint (no negotiation request for a modern one).
pub fn hinted(url: &str, legacy: bool) -> Config {
    let mut c = Config::new(url).unwrap();
    c.era_hint = Some(match legacy {
        true => EraHint {
            era: Era::Legacy,
            version: "2025-06-18".into(),
        },
        false => EraHint {
            era: Era::Modern,
            version: "2026-07-28".into(),
        },
    });
    c
}

fn serve(mut tcp: TcpStream, conn: usize, legacy: bool, log: &Mutex<Vec<Seen>>) {
    let mut buf = Vec::new();
    loop {
        let Some((method, headers, body)) = read_request(&mut tcp, &mut buf) else {
            log.lock().unwrap().push(Seen::Closed { conn });
            return;
        };
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        let rpc = body["method"].as_str().unwrap_or_default().to_owned();
        let id = body["id"].as_u64().unwrap_or(0);
        let hang = rpc == "tools/call" && body["params"]["name"] == "hang";
        log.lock().unwrap().push(Seen::Request {
            conn,
            method: method.clone(),
            headers,
            body,
        });
        let answer = match (method.as_str(), rpc.as_str()) {
            _ if hang => continue,
            ("DELETE", _) => empty_response(200),
            (_, "initialize") if legacy => {
                let result = r#"{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"legacy","version":"1"}}"#;
                json_response_with(
                    200,
                    &[("mcp-session-id", "sess-1")],
                    &result_msg(id, result),
                )
            }
            (_, "tools/call") => json_response(
                200,
                &result_msg(id, r#"{"content":[{"type":"text","text":"hi"}]}"#),
            ),
            (_, "tools/list") => json_response(
                200,
                &result_msg(
                    id,
                    r#"{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}"#,
                ),
            ),
            _ => empty_response(202),
        };
        if tcp.write_all(&answer).is_err() {
            log.lock().unwrap().push(Seen::Closed { conn });
            return;
        }
    }
}

/// The next request on `tcp` (method, headers, body), `None` once the client closed it.
#[allow(clippy::type_complexity)]
fn read_request(
    tcp: &mut TcpStream,
    buf: &mut Vec<u8>,
) -> Option<(String, Vec<(String, String)>, Vec<u8>)> {
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match tcp.read(&mut chunk) {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let method = lines.next()?.split(' ').next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let len = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    while buf.len() < end + len {
        match tcp.read(&mut chunk) {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let body = buf[end..end + len].to_vec();
    buf.drain(..end + len);
    Some((method, headers, body))
}

/// `future`, dropped unfinished once `cond` holds (checked every few milliseconds from a thread
/// of its own, for at most 5 s): `None` then, its output if it finished first. What a caller's
/// timeout does to an operation, on any runtime.
pub fn drop_once<'a, F>(
    future: F,
    cond: impl Fn() -> bool + Send + 'static,
) -> Pin<Box<dyn Future<Output = Option<F::Output>> + Send + 'a>>
where
    F: Future + Send + 'a,
{
    let fired = Arc::new(AtomicBool::new(false));
    let waker: Arc<Mutex<Option<Waker>>> = Arc::new(Mutex::new(None));
    let (f, w) = (fired.clone(), waker.clone());
    std::thread::spawn(move || {
        wait_until(&cond);
        f.store(true, Ordering::SeqCst);
        if let Some(w) = w.lock().unwrap().take() {
            w.wake();
        }
    });
    Box::pin(DropOnce {
        future: Some(Box::pin(future)),
        fired,
        waker,
    })
}

struct DropOnce<F: Future> {
    future: Option<Pin<Box<F>>>,
    fired: Arc<AtomicBool>,
    waker: Arc<Mutex<Option<Waker>>>,
}

impl<F: Future> Future for DropOnce<F> {
    type Output = Option<F::Output>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        *self.waker.lock().unwrap() = Some(cx.waker().clone());
        if self.fired.load(Ordering::SeqCst) {
            // Dropped here, before its output: what a timeout does.
            self.future = None;
            return Poll::Ready(None);
        }
        let Some(f) = self.future.as_mut() else {
            return Poll::Ready(None);
        };
        match f.as_mut().poll(cx) {
            Poll::Ready(out) => {
                self.future = None;
                Poll::Ready(Some(out))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

/// Declares the cancellation tests of an async adapter whose `Client` is in scope: `#[$test]` is
/// its test attribute and `[$($wait)*]` what waits for an operation (`.await`, or `.block()`).
#[macro_export]
macro_rules! cancel_tests {
    (#[$test:meta] $($async:ident)? [$($wait:tt)*]) => {
        use $crate::adapter_tests::cancel::{drop_once, hinted, Http1Server, Seen};

        fn loopback() -> mcp_sansio_net::ClientBuilder<Client> {
            mcp_sansio_net::ClientBuilder::<Client>::new()
                .policy(mcp_sansio_net::AddressPolicy::strict().allow_loopback(true))
        }

        /// The connection of the hanging call's request.
        fn hang_conn(seen: &[Seen]) -> Option<usize> {
            seen.iter().find_map(|s| match s {
                Seen::Request { conn, body, .. }
                    if body["method"] == "tools/call" && body["params"]["name"] == "hang" =>
                {
                    Some(*conn)
                }
                _ => None,
            })
        }

        /// 2026-07-28 (`basic/patterns/cancellation.mdx`): "closing the SSE response stream
        /// **is** the cancel signal, and the server MUST treat a disconnect as cancellation".
        /// A call's future dropped while the server holds the call: its HTTP/1.1 connection is
        /// closed at once (never pooled), and the session goes on.
        #[$test]
        $($async)? fn a_dropped_call_closes_its_http1_connection() {
            let server = Http1Server::start(false);
            let client = loopback().http1_only(true).build();
            let mut session = client.connect(hinted(&server.url(), false))$($wait)*.unwrap();
            let log = server.log.clone();
            let sees_call = move || hang_conn(&log.lock().unwrap()).is_some();
            let out = drop_once(session.call_tool("hang", b"{}"), sees_call)$($wait)*;
            assert!(out.is_none(), "the call never ends: {out:?}");
            let conn = hang_conn(&server.seen()).unwrap();
            assert!(
                server.wait_for(|s| s.contains(&Seen::Closed { conn })),
                "the hanging call's connection is closed: {:?}",
                server.seen()
            );
            assert_eq!(client.idle_sockets(), 0, "its socket is not pooled");
            // The session goes on, on another connection.
            let r = session.call_tool("echo", b"{}")$($wait)*.unwrap();
            assert_eq!(r.content.len(), 1);
            let calls = server.requests("tools/call");
            assert!(matches!(calls.last(), Some(Seen::Request { conn: c, .. }) if *c != conn));
            session.close()$($wait)*.unwrap();
        }

        /// Up to 2025-11-25 (`basic/utilities/cancellation.mdx`): over HTTP "the client POSTs
        /// the notification (202). A disconnect is **not** a cancel"; its params are
        /// `{requestId, reason?}`. A legacy call's future dropped: one `notifications/cancelled`
        /// naming the call's request id reaches the server, in the session.
        #[$test]
        $($async)? fn a_dropped_legacy_call_posts_cancelled() {
            let server = Http1Server::start(true);
            let client = loopback().http1_only(true).build();
            let mut session = client.connect(hinted(&server.url(), true))$($wait)*.unwrap();
            assert_eq!(session.session_id(), Some("sess-1"));
            let log = server.log.clone();
            let sees_call = move || hang_conn(&log.lock().unwrap()).is_some();
            let out = drop_once(session.call_tool("hang", b"{}"), sees_call)$($wait)*;
            assert!(out.is_none(), "the call never ends: {out:?}");
            assert!(
                server.wait_for(|s| s.iter().any(|r| r.rpc_method() == Some("notifications/cancelled"))),
                "a notifications/cancelled is posted: {:?}",
                server.seen()
            );
            let call_id = server.requests("tools/call").iter().find_map(|s| match s {
                Seen::Request { body, .. } => body["id"].as_u64(),
                _ => None,
            });
            let cancels = server.requests("notifications/cancelled");
            assert_eq!(cancels.len(), 1, "{cancels:?}");
            let Seen::Request { method, headers, body, .. } = &cancels[0] else { unreachable!() };
            assert_eq!(method, "POST");
            assert_eq!(body["params"]["requestId"].as_u64(), call_id);
            assert!(call_id.is_some());
            assert!(headers.contains(&("mcp-session-id".to_owned(), "sess-1".to_owned())));
            let conn = hang_conn(&server.seen()).unwrap();
            assert!(server.wait_for(|s| s.contains(&Seen::Closed { conn })));
            let r = session.call_tool("echo", b"{}")$($wait)*.unwrap();
            assert_eq!(r.content.len(), 1);
            session.close()$($wait)*.unwrap();
            assert_eq!(server.requests("notifications/cancelled").len(), 1);
        }

        /// A recorded legacy session whose call was dropped: the transcript names the abandon
        /// (`op abandon`) and replays as recorded, whole and one byte at a time.
        #[$test]
        $($async)? fn a_recorded_dropped_call_replays() {
            use $crate::adapter_tests::recording::{recording_http1_client, replays, Memory};
            let server = Http1Server::start(true);
            let sink = std::sync::Arc::new(Memory::default());
            let client: Client = recording_http1_client(sink.clone());
            let mut session = client.connect(hinted(&server.url(), true))$($wait)*.unwrap();
            let log = server.log.clone();
            let sees_call = move || hang_conn(&log.lock().unwrap()).is_some();
            let out = drop_once(session.call_tool("hang", b"{}"), sees_call)$($wait)*;
            assert!(out.is_none());
            assert!(server.wait_for(|s| s.iter().any(|r| r.rpc_method() == Some("notifications/cancelled"))));
            let r = session.call_tool("echo", b"{}")$($wait)*.unwrap();
            assert_eq!(r.content.len(), 1);
            session.close()$($wait)*.unwrap();
            let (text, _) = replays(&sink);
            assert_eq!(text.matches(" op abandon").count(), 1, "{text}");
            assert!(text.contains("notifications/cancelled"), "{text}");
        }

        /// The same over HTTP/2 (h2c): the dropped call's stream gets RST_STREAM(CANCEL) and
        /// the socket stays open for the session's next call.
        #[$test]
        $($async)? fn a_dropped_call_resets_its_http2_stream_with_cancel() {
            use $crate::h2_server::{config, is_cancel, is_goaway, Server};
            let server = Server::start(None);
            let client = loopback().h2_prior_knowledge(true).build();
            let url = format!("http://127.0.0.1:{}/mcp", server.port);
            let mut session = client.connect(config(&url))$($wait)*.unwrap();
            assert_eq!(session.http_version(), "HTTP/2");
            let requests = server.requests.clone();
            let sees_call = move || {
                requests.lock().unwrap().iter().any(|r| r.rpc_method() == "tools/call")
            };
            let out = drop_once(session.call_tool("hang", b"{}"), sees_call)$($wait)*;
            assert!(out.is_none(), "the call never ends: {out:?}");
            let hung = server.requests.lock().unwrap()[0].stream;
            assert!(
                server.wait_for(|s| !s.frames_on(1, is_cancel).is_empty()),
                "the dropped call's stream is reset"
            );
            let resets = server.frames_on(1, is_cancel);
            assert_eq!(
                resets,
                vec![mcp_sansio::internals::h2::frame::Frame::RstStream {
                    stream_id: hung,
                    reason: mcp_sansio::internals::h2::frame::Reason::CANCEL
                }]
            );
            let r = session.call_tool("echo", b"{}")$($wait)*.unwrap();
            assert_eq!(r.content.len(), 1);
            assert!(server.frames_on(1, is_goaway).is_empty(), "the socket stays open");
            assert_eq!(server.accepted.load(std::sync::atomic::Ordering::SeqCst), 1);
            session.close()$($wait)*.unwrap();
        }
    };
}
