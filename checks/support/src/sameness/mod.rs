//! The sameness table: scenarios run through every adapter (tokio, blocking, smol) over
//! 127.0.0.1, each checked against the requests its server must see and the outcome its
//! operations must come to, and (where several adapters run in one test) against each other's
//! transcripts, timing aside.
//!
//! An adapter's test uses this module and supplies a [`Runner`] (the blocking adapter's is
//! `run_blocking`, the tokio adapter's `run_tokio`, the smol adapter's `run_smol`).
//!
//! Only `std`, `serde_json`, `mcp_sansio` and `mcp_sansio_transcript`: both adapters have them.
#![allow(dead_code)]

#[cfg(feature = "net")]
pub mod run_async;
#[cfg(feature = "blocking")]
pub mod run_blocking;
#[cfg(feature = "smol")]
pub mod run_smol;
#[cfg(feature = "tokio")]
pub mod run_tokio;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use mcp_sansio::{Budgets, Config, Era, EraHint, Error};
use mcp_sansio_transcript::{replay, Split, Transcript, TranscriptSink};

// ---------------------------------------------------------------------------------------------
// The server

/// A request the server received.
#[derive(Clone, Debug)]
pub struct Req {
    /// The accepted connection it came on, from 0.
    pub conn: usize,
    /// Its place among the requests of that connection, from 0.
    pub on_conn: usize,
    /// The HTTP method.
    pub method: String,
    /// The body.
    pub body: Vec<u8>,
    /// The header lines, lower-cased names.
    pub headers: Vec<(String, String)>,
}

impl Req {
    /// The JSON-RPC method, or the HTTP method of a body-less request.
    pub fn rpc(&self) -> String {
        if self.body.is_empty() {
            return self.method.clone();
        }
        let v: serde_json::Value = serde_json::from_slice(&self.body).unwrap_or_default();
        v["method"].as_str().unwrap_or("?").to_owned()
    }

    /// The JSON-RPC id (0 without one).
    pub fn id(&self) -> u64 {
        let v: serde_json::Value = serde_json::from_slice(&self.body).unwrap_or_default();
        v["id"].as_u64().unwrap_or(0)
    }

    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What the server does with a request.
#[derive(Clone, Debug)]
pub enum Reply {
    /// Writes the bytes and keeps the connection for the next request.
    Send(Vec<u8>),
    /// Writes the bytes and closes the connection.
    SendClose(Vec<u8>),
    /// Closes the connection without answering.
    Close,
    /// Never answers; the connection stays open until the client closes it or the server stops.
    Hang,
}

/// A server on 127.0.0.1 that answers with a scenario's handler, records every request, and
/// stops (closing every socket, joining every thread) on drop.
pub struct Server {
    /// Where it listens.
    pub addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
    requests: Arc<Mutex<Vec<Req>>>,
    stop: Arc<AtomicBool>,
    sockets: Arc<Mutex<Vec<TcpStream>>>,
    threads: Arc<Mutex<Vec<JoinHandle<()>>>>,
    acceptor: Option<JoinHandle<()>>,
}

impl Server {
    /// Starts a server answering with `handler`.
    pub fn start(handler: fn(&Req) -> Reply) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let addr = listener.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let sockets = Arc::new(Mutex::new(Vec::new()));
        let threads = Arc::new(Mutex::new(Vec::new()));
        let acceptor = {
            let (accepted, requests, stop, sockets, threads) = (
                accepted.clone(),
                requests.clone(),
                stop.clone(),
                sockets.clone(),
                threads.clone(),
            );
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    let Ok(stream) = stream else { continue };
                    let conn = accepted.fetch_add(1, Ordering::SeqCst);
                    if let Ok(clone) = stream.try_clone() {
                        sockets.lock().unwrap().push(clone);
                    }
                    let requests = requests.clone();
                    let t = std::thread::spawn(move || serve(stream, conn, handler, &requests));
                    threads.lock().unwrap().push(t);
                }
            })
        };
        Server {
            addr,
            accepted,
            requests,
            stop,
            sockets,
            threads,
            acceptor: Some(acceptor),
        }
    }

    /// The endpoint URL.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    /// Every request so far as `(connection, JSON-RPC or HTTP method)`.
    pub fn wire(&self) -> Vec<(usize, String)> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .map(|r| (r.conn, r.rpc()))
            .collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
        if let Some(a) = self.acceptor.take() {
            let _ = a.join();
        }
        for s in self.sockets.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
        for t in self.threads.lock().unwrap().drain(..) {
            let _ = t.join();
        }
    }
}

fn serve(mut stream: TcpStream, conn: usize, handler: fn(&Req) -> Reply, log: &Mutex<Vec<Req>>) {
    let mut buf = Vec::new();
    let mut on_conn = 0;
    loop {
        let Some(req) = read_request(&mut stream, &mut buf, conn, on_conn) else {
            return;
        };
        on_conn += 1;
        log.lock().unwrap().push(req.clone());
        match handler(&req) {
            Reply::Send(bytes) => {
                if stream.write_all(&bytes).is_err() {
                    return;
                }
            }
            Reply::SendClose(bytes) => {
                let _ = stream.write_all(&bytes);
                let _ = stream.shutdown(Shutdown::Both);
                return;
            }
            Reply::Close => {
                let _ = stream.shutdown(Shutdown::Both);
                return;
            }
            Reply::Hang => {
                // Wait for the client to go away (or the server to stop).
                let mut sink = [0u8; 1024];
                while matches!(stream.read(&mut sink), Ok(n) if n > 0) {}
                return;
            }
        }
    }
}

fn read_request(s: &mut TcpStream, buf: &mut Vec<u8>, conn: usize, on_conn: usize) -> Option<Req> {
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
        let n = s.read(&mut chunk).ok().filter(|&n| n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let method = lines.next()?.split(' ').next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + len {
        let n = s.read(&mut chunk).ok().filter(|&n| n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = buf[head_end..head_end + len].to_vec();
    buf.drain(..head_end + len);
    Some(Req {
        conn,
        on_conn,
        method,
        body,
        headers,
    })
}

// ---------------------------------------------------------------------------------------------
// Canned answers

fn json_with(status: u16, headers: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\n{headers}content-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn json(status: u16, body: &str) -> Vec<u8> {
    json_with(status, "", body)
}

fn empty(status: u16, headers: &str) -> Vec<u8> {
    format!("HTTP/1.1 {status} X\r\n{headers}content-length: 0\r\n\r\n").into_bytes()
}

fn result(id: u64, result: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)
}

const DISCOVER: &str = r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":3600000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"same","version":"1"}}}"#;
const INITIALIZE: &str = r#"{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"old","version":"1"}}"#;
const TOOLS: &str = r#"{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"add","inputSchema":{"type":"object"}}]}"#;
const CALLED: &str = r#"{"content":[{"type":"text","text":"hi"}],"isError":false}"#;

/// A modern server with tools `echo` and `add`.
fn modern(req: &Req) -> Reply {
    let id = req.id();
    Reply::Send(match req.rpc().as_str() {
        "server/discover" => json(200, &result(id, DISCOVER)),
        "tools/list" => json(200, &result(id, TOOLS)),
        "tools/call" => json(200, &result(id, CALLED)),
        _ => empty(202, ""),
    })
}

/// A legacy (2025-06-18) server with session `s-1`; without the session a request gets 400.
fn legacy(req: &Req) -> Reply {
    let id = req.id();
    let rpc = req.rpc();
    let in_session = req.header("mcp-session-id") == Some("s-1");
    Reply::Send(match rpc.as_str() {
        "server/discover" => empty(404, ""),
        "initialize" => json_with(200, "mcp-session-id: s-1\r\n", &result(id, INITIALIZE)),
        _ if !in_session => empty(400, ""),
        "tools/list" => json(200, &result(id, TOOLS)),
        "tools/call" => json(200, &result(id, CALLED)),
        "DELETE" => empty(200, ""),
        _ => empty(202, ""),
    })
}

/// Modern, but the second request on the first connection finds it closed.
fn stale(req: &Req) -> Reply {
    if req.conn == 0 && req.on_conn == 1 {
        return Reply::Close;
    }
    modern(req)
}

/// The id of the last `tools/list` the resuming server received, for the `GET` that resumes it.
static LAST_LIST_ID: AtomicU64 = AtomicU64::new(0);

/// Legacy, whose listing comes as an event stream that breaks after its first event; the `GET`
/// resuming it gets the response.
fn resuming(req: &Req) -> Reply {
    let stream_head =
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
    match req.rpc().as_str() {
        "tools/list" if req.header("mcp-session-id") == Some("s-1") => {
            LAST_LIST_ID.store(req.id(), Ordering::SeqCst);
            let part = "id: e1\nretry: 20\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n";
            // The stream breaks after its first event: the connection closes mid-body.
            Reply::SendClose(format!("{stream_head}{:x}\r\n{part}\r\n", part.len()).into_bytes())
        }
        "GET" if req.header("last-event-id") == Some("e1") => {
            let id = LAST_LIST_ID.load(Ordering::SeqCst);
            let events = format!("id: e2\ndata: {}\n\n", result(id, TOOLS));
            Reply::Send(
                format!("{stream_head}{:x}\r\n{events}\r\n0\r\n\r\n", events.len()).into_bytes(),
            )
        }
        _ => legacy(req),
    }
}

/// Modern; the listing never answers.
fn silent_listing(req: &Req) -> Reply {
    match req.rpc().as_str() {
        "tools/list" => Reply::Hang,
        _ => modern(req),
    }
}

/// Legacy; the `DELETE` that ends the session never answers.
fn silent_delete(req: &Req) -> Reply {
    match req.rpc().as_str() {
        "DELETE" => Reply::Hang,
        _ => legacy(req),
    }
}

/// Every request is refused with 401.
fn unauthorized(_: &Req) -> Reply {
    Reply::Send(empty(
        401,
        "www-authenticate: Bearer resource_metadata=\"http://127.0.0.1/.well-known/x\"\r\n",
    ))
}

/// Every request is redirected elsewhere.
fn redirecting(_: &Req) -> Reply {
    Reply::Send(empty(307, "location: http://169.254.169.254/mcp\r\n"))
}

// ---------------------------------------------------------------------------------------------
// The table

/// One thing a scenario does through an adapter's public API.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Act {
    /// `Client::connect` (a session is kept if it succeeds).
    Connect,
    /// `Session::list_tools`.
    List,
    /// `Session::call_tool("echo", {"text":"hi"})`.
    Call,
    /// `Session::close`.
    Close,
}

/// The client a scenario uses.
#[derive(Clone, Debug)]
pub struct ClientSpec {
    /// Whether the address policy admits loopback (the servers are on 127.0.0.1).
    pub loopback: bool,
}

/// One row of the table.
pub struct Scenario {
    /// Its name.
    pub name: &'static str,
    /// The server's behaviour.
    pub server: fn(&Req) -> Reply,
    /// The client.
    pub client: ClientSpec,
    /// The configuration of every connect, for the server's URL.
    pub config: fn(&str) -> Config,
    /// What the client does, in order (an act after a failed connect is skipped).
    pub acts: &'static [Act],
    /// The requests the server must see: `(connection, JSON-RPC or HTTP method)`.
    pub wire: &'static [(usize, &'static str)],
    /// The outcome of each act, as [`describe`] spells it (`PORT` for the server's port).
    pub outcome: &'static [&'static str],
}

fn plain(url: &str) -> Config {
    Config::new(url).unwrap()
}

fn modern_hint(url: &str) -> Config {
    Config::new(url).unwrap().with_era_hint(Some(EraHint {
        era: Era::Modern,
        version: mcp_sansio::MODERN_VERSION.into(),
    }))
}

fn short(limit: Duration) -> Budgets {
    let mut b = Budgets::default();
    b.request_time = limit;
    b.list_time = limit;
    b.call_time = limit;
    b.close_time = limit;
    b
}

fn short_list(url: &str) -> Config {
    Config::new(url)
        .unwrap()
        .with_budgets(short(Duration::from_millis(300)))
}

const LOOPBACK: ClientSpec = ClientSpec { loopback: true };

/// The scenarios.
pub fn table() -> Vec<Scenario> {
    use Act::*;
    vec![
        Scenario {
            name: "modern",
            server: modern,
            client: LOOPBACK,
            config: plain,
            // The second connect takes the era learnt by the first: no request.
            acts: &[Connect, List, Call, Close, Connect, List, Close],
            wire: &[
                (0, "server/discover"),
                (0, "tools/list"),
                (0, "tools/call"),
                (0, "tools/list"),
            ],
            outcome: &[
                "connected modern 2026-07-28 same",
                "listed echo,add",
                "called false hi",
                "closed",
                "connected modern 2026-07-28 -",
                "listed echo,add",
                "closed",
            ],
        },
        Scenario {
            name: "legacy",
            server: legacy,
            client: LOOPBACK,
            config: plain,
            acts: &[Connect, List, Call, Close],
            wire: &[
                (0, "server/discover"),
                (0, "initialize"),
                (0, "notifications/initialized"),
                (0, "tools/list"),
                (0, "tools/call"),
                (0, "DELETE"),
            ],
            outcome: &[
                "connected legacy 2025-06-18 old",
                "listed echo,add",
                "called false hi",
                "closed",
            ],
        },
        Scenario {
            name: "hint wrong",
            server: legacy,
            client: LOOPBACK,
            config: modern_hint,
            acts: &[Connect, List, Close],
            wire: &[
                (0, "tools/list"),
                (0, "server/discover"),
                (0, "initialize"),
                (0, "notifications/initialized"),
                (0, "tools/list"),
                (0, "DELETE"),
            ],
            outcome: &[
                "connected modern 2026-07-28 -",
                "listed echo,add",
                "closed",
            ],
        },
        Scenario {
            name: "pooled stale socket",
            server: stale,
            client: LOOPBACK,
            config: plain,
            acts: &[Connect, List, Close],
            wire: &[(0, "server/discover"), (0, "tools/list"), (1, "tools/list")],
            outcome: &[
                "connected modern 2026-07-28 same",
                "listed echo,add",
                "closed",
            ],
        },
        Scenario {
            name: "resumption",
            server: resuming,
            client: LOOPBACK,
            config: plain,
            acts: &[Connect, List, Close],
            wire: &[
                (0, "server/discover"),
                (0, "initialize"),
                (0, "notifications/initialized"),
                (0, "tools/list"),
                (1, "GET"),
                (1, "DELETE"),
            ],
            outcome: &[
                "connected legacy 2025-06-18 old",
                "listed echo,add",
                "closed",
            ],
        },
        Scenario {
            name: "deadline",
            server: silent_listing,
            client: LOOPBACK,
            config: short_list,
            acts: &[Connect, List, Close],
            wire: &[(0, "server/discover"), (0, "tools/list")],
            outcome: &[
                "connected modern 2026-07-28 same",
                "error ConnectionFailed: budget exceeded: list_time_ms (limit 300)",
                "closed",
            ],
        },
        Scenario {
            name: "close mid-operation: the DELETE never answers",
            server: silent_delete,
            client: LOOPBACK,
            config: short_list,
            acts: &[Connect, Close],
            wire: &[
                (0, "server/discover"),
                (0, "initialize"),
                (0, "notifications/initialized"),
                (0, "DELETE"),
            ],
            outcome: &["connected legacy 2025-06-18 old", "closed"],
        },
        Scenario {
            name: "401",
            server: unauthorized,
            client: LOOPBACK,
            config: plain,
            acts: &[Connect],
            wire: &[(0, "server/discover")],
            outcome: &["error AuthenticationFailed: authentication failed: HTTP 401"],
        },
        Scenario {
            name: "redirect",
            server: redirecting,
            client: LOOPBACK,
            config: plain,
            acts: &[Connect],
            wire: &[(0, "server/discover")],
            outcome: &["error ConnectionFailed: HTTP 307 redirect (to Some(\"http://169.254.169.254/mcp\")); redirects are never followed"],
        },
        Scenario {
            name: "refused address",
            server: modern,
            client: ClientSpec { loopback: false },
            config: plain,
            acts: &[Connect],
            wire: &[],
            outcome: &["error ConnectionFailed: transport: address refused by policy: 127.0.0.1 (loopback)"],
        },
    ]
}

// ---------------------------------------------------------------------------------------------
// Running and checking

/// What an act came to, in one line.
pub enum Done<'a> {
    /// Connected: era, version, server name.
    Connected(Era, &'a str, Option<&'a str>),
    /// Listed these tools.
    Listed(Vec<String>),
    /// Called: `isError` and the first text block.
    Called(bool, String),
    /// Closed.
    Closed,
    /// Failed.
    Failed(&'a Error),
}

/// The outcome line of a listing.
pub fn listed(c: &mcp_sansio::Catalog) -> Done<'static> {
    Done::Listed(c.tools.iter().map(|t| t.name().to_owned()).collect())
}

/// The outcome line of a call.
pub fn called(r: &mcp_sansio::CallResult) -> Done<'static> {
    let text = match r.content.first() {
        Some(mcp_sansio::ContentBlock::Text { text }) => text.clone(),
        _ => String::new(),
    };
    Done::Called(r.is_error, text)
}

/// The address policy of `spec`.
pub fn policy(spec: &ClientSpec) -> mcp_sansio_net::AddressPolicy {
    mcp_sansio_net::AddressPolicy::strict().allow_loopback(spec.loopback)
}

/// The one-line description of `done`, with `port` spelled `PORT`.
pub fn describe(done: Done<'_>, port: u16) -> String {
    let line = match done {
        Done::Connected(era, version, name) => {
            let era = match era {
                Era::Modern => "modern",
                Era::Legacy => "legacy",
            };
            format!("connected {era} {version} {}", name.unwrap_or("-"))
        }
        Done::Listed(names) => format!("listed {}", names.join(",")),
        Done::Called(is_error, text) => format!("called {is_error} {text}"),
        Done::Closed => "closed".to_owned(),
        Done::Failed(e) => format!("error {:?}: {e}", e.kind()),
    };
    line.replace(&port.to_string(), "PORT")
}

/// How an adapter runs a scenario: the acts in order, through its public API, with a client
/// that records to `sink`; one [`describe`]d line per act run.
pub trait Runner {
    /// The adapter's name.
    fn name(&self) -> &'static str;
    /// Runs the acts of `s` against `url`.
    fn run(&self, s: &Scenario, url: &str, port: u16, sink: Arc<Memory>) -> Vec<String>;
}

/// Keeps each recorded session's text.
#[derive(Default)]
pub struct Memory {
    texts: Mutex<BTreeMap<u64, (String, bool)>>,
}

impl TranscriptSink for Memory {
    fn write(&self, session: u64, text: &str) {
        let mut t = self.texts.lock().unwrap();
        t.entry(session).or_default().0.push_str(text);
    }
    fn finish(&self, session: u64) {
        self.texts.lock().unwrap().entry(session).or_default().1 = true;
    }
}

/// What one run of a scenario produced.
pub struct Run {
    /// The outcome lines.
    pub outcome: Vec<String>,
    /// The requests the server saw.
    pub wire: Vec<(usize, String)>,
    /// Connections the server accepted.
    pub accepted: usize,
    /// Each session's transcript, parsed after the server's port was replaced by 65535.
    pub transcripts: Vec<Transcript>,
}

fn matches_expected(got: &str, want: &str) -> bool {
    match want.strip_suffix('?') {
        Some(prefix) => got.starts_with(prefix),
        None => got == want,
    }
}

/// Runs `s` with `runner` and checks it against the table: the outcome of every act, the
/// requests on the wire, and that every transcript replays against the core exactly.
pub fn run_checked(runner: &dyn Runner, s: &Scenario) -> Run {
    let server = Server::start(s.server);
    let port = server.addr.port();
    let sink = Arc::new(Memory::default());
    let outcome = runner.run(s, &server.url(), port, sink.clone());
    let who = format!("{} through {}", s.name, runner.name());
    assert_eq!(outcome.len(), s.outcome.len(), "{who}: {outcome:?}");
    for (got, want) in outcome.iter().zip(s.outcome) {
        assert!(matches_expected(got, want), "{who}: {got:?}, want {want:?}");
    }
    // Sockets closing after the last act may still deliver a request being written: give them a
    // moment, then read the log.
    std::thread::sleep(Duration::from_millis(50));
    let wire = server.wire();
    let want: Vec<(usize, String)> = s.wire.iter().map(|(c, m)| (*c, m.to_string())).collect();
    assert_eq!(wire, want, "{who}: requests on the wire");
    let accepted = server.accepted();
    if s.wire.is_empty() {
        assert_eq!(accepted, 0, "{who}: no connection may be opened");
    }
    drop(server);
    let texts = sink.texts.lock().unwrap().clone();
    let mut transcripts = Vec::new();
    for (_, (text, finished)) in texts {
        assert!(finished, "{who}: every session's transcript is finished");
        // Another valid port, so that the transcript's configuration still parses.
        let text = text.replace(&format!(":{port}"), ":65535");
        let t = Transcript::parse(&text).unwrap_or_else(|e| panic!("{who}: {e}\n{text}"));
        let r = replay(&t, Split::Recorded).unwrap_or_else(|e| panic!("{who}: {e:?}"));
        r.check(&t).unwrap_or_else(|e| panic!("{who}: {e:?}"));
        transcripts.push(t);
    }
    Run {
        outcome,
        wire,
        accepted,
        transcripts,
    }
}

/// Asserts that two runs of `s` are the same: outcome, requests and connections on the wire, and
/// transcripts (the requests sent, the events reported and the operations' outcome; timing and
/// the cut of the bytes aside).
pub fn assert_same(s: &Scenario, a: &Run, b: &Run) {
    let name = s.name;
    assert_eq!(a.outcome, b.outcome, "{name}: outcome");
    assert_eq!(a.wire, b.wire, "{name}: wire");
    assert_eq!(a.accepted, b.accepted, "{name}: connections");
    assert_eq!(a.transcripts.len(), b.transcripts.len(), "{name}: sessions");
    for (x, y) in a.transcripts.iter().zip(&b.transcripts) {
        assert_eq!(x.sends(), y.sends(), "{name}: transcript requests");
        assert_eq!(x.events(), y.events(), "{name}: transcript events");
        assert_eq!(x.outcome(), y.outcome(), "{name}: transcript outcome");
    }
}
