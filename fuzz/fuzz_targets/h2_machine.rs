//! Fuzzes the whole machine over HTTP/2: several work items (`Connection`s built for HTTP/2)
//! share one `H2Socket`, and the server's frames are chosen by the fuzzer.
//!
//! The input (derived with `arbitrary`) is: one to four work items (era hint none, modern or
//! legacy; operations after connect: list, call, close), a piece size, and a script of server
//! actions: SETTINGS (with any parameters) and its acknowledgement, PING, WINDOW_UPDATE, HEADERS,
//! DATA (a fitting answer to the request on the stream, an answer over an event stream, a
//! JSON-RPC error or raw bytes), whole responses, RST_STREAM and GOAWAY with any code and stream,
//! CONTINUATION, unknown frames, garbage bytes, EOF, waits of virtual time, and a switch to
//! another socket. Streams are named by the requests the server has seen (the k-th one), or
//! raw. A request the socket cannot carry (REFUSED_STREAM, above a GOAWAY's last stream id, a
//! failed socket) moves its work item to a fresh socket, as an embedder does. Once the script
//! is done the server stays silent and time runs until every operation has ended.
//!
//! Checked, for the script fed with each action's bytes in one piece and in pieces of the chosen
//! size: no panic; every operation ends with a result or a typed error, within its time budget
//! and a bounded number of steps; every budget error names its configured limit; no work item
//! reads more than its byte budget; the client's memory (a counting allocator) stays within a
//! bound of the budgets; and both runs report the same events at the same instants.
#![no_main]

use mcp_sansio_test_support::h2server;
use mcp_sansio_test_support::hostile::counting;

/// Allocations counted per thread while the target meters them.
#[global_allocator]
static ALLOC: counting::Counting = counting::Counting;

use std::time::Duration;

use arbitrary::Arbitrary;
use h2server::{data, frame, result, summarize, H2Peer, SeenRequest};
use libfuzzer_sys::fuzz_target;
use mcp_sansio::internals::h2::frame::{Frame, Reason};
use mcp_sansio::h2::H2Config;
use mcp_sansio::mux::{H2Socket, WorkId};
use mcp_sansio::{Budgets, Config, Connection, Era, EraHint, Event, Instant, Operation};

/// Loop turns (inputs fed, timeouts) after which a run counts as not terminating.
const MAX_STEPS: u64 = 100_000;
const TOOLS: &str = r#"{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}"#;
const CALL_OK: &str = r#"{"content":[{"type":"text","text":"hi"}]}"#;

fn budgets() -> Budgets {
    let mut b = Budgets::default();
    b.response_bytes = 16 * 1024;
    b.header_block_bytes = 2 * 1024;
    b.header_count = 32;
    b.sse_event_bytes = 4 * 1024;
    b.pages = 4;
    b.responses_per_request = 4;
    b.informational_responses = 4;
    b.h2_socket_bytes = 16 * 1024;
    b.request_time = Duration::from_secs(10);
    b.list_time = Duration::from_secs(30);
    b.call_time = Duration::from_secs(30);
    b.close_time = Duration::from_secs(5);
    b
}

/// Client memory the run may hold at its peak: per work item six times its byte budget (the rule
/// of docs/guarantees.md for a work item that keeps its catalog: a body buffer, a decoded copy,
/// growth, the catalog), per socket its ledger, and 256 KiB of fixed structures.
fn memory_bound(b: &Budgets, items: usize, sockets: usize) -> i64 {
    items as i64 * 6 * b.response_bytes as i64
        + sockets as i64 * b.h2_socket_bytes as i64
        + 256 * 1024
}

#[derive(Arbitrary, Debug, Clone, Copy)]
struct Item {
    /// 0 none (discovery), 1 modern, 2 legacy.
    era: u8,
    /// bit 0 list, bit 1 call, bit 2 close.
    ops: u8,
}

/// A stream, as the server names it.
#[derive(Arbitrary, Debug, Clone, Copy)]
enum Sel {
    /// The stream of the k-th request the server has seen on this socket (modulo their number).
    Request(u8),
    /// The stream of the latest request.
    Latest,
    /// Any stream id.
    Raw(u32),
}

#[derive(Arbitrary, Debug, Clone)]
enum Body {
    /// The answer the request asks for (discovery, initialize, a page, a call result).
    Answer,
    /// A JSON-RPC error for the request's id.
    RpcError,
    /// The answer as an event stream, after a progress notification.
    Sse,
    /// Raw bytes.
    Raw(Vec<u8>),
}

#[derive(Arbitrary, Debug, Clone)]
enum Action {
    /// The server's SETTINGS (empty) and the acknowledgement of ours.
    Hello,
    Settings {
        ack: bool,
        params: Vec<(u16, u32)>,
    },
    Ping {
        ack: bool,
        data: u64,
    },
    WindowUpdate {
        stream: Sel,
        increment: u32,
    },
    /// A HEADERS frame: status (0 → 200), content type by number, END_STREAM.
    Head {
        stream: Sel,
        status: u16,
        ctype: u8,
        end_stream: bool,
    },
    /// A HEADERS frame with a raw fragment.
    RawHead {
        stream: Sel,
        end_stream: bool,
        end_headers: bool,
        fragment: Vec<u8>,
    },
    Continuation {
        stream: Sel,
        end_headers: bool,
        fragment: Vec<u8>,
    },
    Data {
        stream: Sel,
        body: Body,
        end_stream: bool,
        pad: Option<u8>,
    },
    /// A whole response (HEADERS, DATA).
    Respond {
        stream: Sel,
        body: Body,
    },
    Rst {
        stream: Sel,
        code: u32,
    },
    GoAway {
        last: Sel,
        code: u32,
    },
    Unknown {
        kind: u8,
        flags: u8,
        stream: Sel,
        payload: Vec<u8>,
    },
    Garbage(Vec<u8>),
    Eof,
    /// Virtual time passes (0–63 s), deadlines firing on the way.
    Wait(u8),
    /// Later actions go to this socket (modulo the sockets made).
    Socket(u8),
}

#[derive(Arbitrary, Debug)]
struct Input {
    items: Vec<Item>,
    piece: u8,
    actions: Vec<Action>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Connect,
    List,
    Call,
    Close,
}

impl Op {
    fn limit(self, b: &Budgets) -> Duration {
        match self {
            // A connect may run discovery, then the legacy handshake (two exchanges and a
            // notification).
            Op::Connect => b.request_time * 4,
            Op::List => b.list_time,
            Op::Call => b.call_time,
            Op::Close => b.close_time,
        }
    }
}

struct Work {
    socket: usize,
    id: WorkId,
    ops: Vec<Op>,
    next: usize,
    /// The running operation and when it started.
    running: Option<(Op, Instant)>,
}

struct Sock {
    s: H2Socket,
    peer: H2Peer,
    /// Which work item each slot held last (a slot's events may come after it was removed).
    slots: Vec<usize>,
    closed_by_eof: bool,
}

struct Run {
    b: Budgets,
    h2: H2Config,
    socks: Vec<Sock>,
    work: Vec<Work>,
    now: Instant,
    current: usize,
    piece: usize,
    steps: u64,
    log: Vec<String>,
}

fn metered<T>(f: impl FnOnce() -> T) -> T {
    counting::counted(f)
}

impl Run {
    fn new_socket(&mut self) -> usize {
        let now = self.now;
        let h2 = self.h2.clone();
        let s = metered(|| H2Socket::new(now, h2, "https"));
        self.socks.push(Sock {
            s,
            peer: H2Peer::default(),
            slots: Vec::new(),
            closed_by_eof: false,
        });
        self.socks.len() - 1
    }

    fn add(&mut self, sock: usize, conn: Connection, item: usize) -> WorkId {
        let s = &mut self.socks[sock];
        let id = metered(|| s.s.add(conn));
        if s.slots.len() <= id.0 {
            s.slots.resize(id.0 + 1, usize::MAX);
        }
        s.slots[id.0] = item;
        id
    }

    fn conn(&mut self, item: usize) -> &mut Connection {
        let w = &self.work[item];
        self.socks[w.socket]
            .s
            .connection_mut(w.id)
            .expect("a work item is on its socket")
    }

    /// Starts the item's next operation, if any.
    fn start_next(&mut self, item: usize) {
        let w = &mut self.work[item];
        let Some(&op) = w.ops.get(w.next) else { return };
        w.next += 1;
        w.running = Some((op, self.now));
        self.log.push(format!("{} {item}: start {op:?}", self.now));
        let now = self.now;
        let c = self.conn(item);
        metered(|| match op {
            Op::Connect => c.connect(now),
            Op::List => c.list_tools(now),
            Op::Call => c.call_tool(now, "t", br#"{"x":1}"#),
            Op::Close => c.close(now),
        });
    }

    /// Drains every socket until nothing moves: bytes to the server, moves to fresh sockets,
    /// events (checked, logged; a terminal one starts the item's next operation).
    fn drain(&mut self) {
        loop {
            let mut moved = false;
            let now = self.now;
            let mut fresh = Vec::new();
            for k in 0..self.socks.len() {
                let sock = &mut self.socks[k];
                while let Some(bytes) = metered(|| sock.s.poll_transmit(now)) {
                    moved = true;
                    // The server's view: requests completed (answered by later actions).
                    sock.peer.read(&bytes);
                    // What the client allocated and the caller frees is freed while counted.
                    metered(move || drop(bytes));
                }
                while let Some(f) = sock.s.poll_fresh() {
                    fresh.push((k, f));
                }
                let mut events = Vec::new();
                while let Some(e) = metered(|| sock.s.poll_event(now)) {
                    events.push(e);
                }
                for (w, e) in events {
                    moved = true;
                    let item = self.socks[k].slots[w.0];
                    self.event(item, e);
                }
            }
            if !fresh.is_empty() {
                moved = true;
                // Every request that cannot go on its socket goes on one new socket.
                let target = self.new_socket();
                for (k, (w, t)) in fresh {
                    let item = self.socks[k].slots[w.0];
                    let on_target = self.work[item].socket == target;
                    if !on_target {
                        let conn = metered(|| self.socks[k].s.remove(now, w))
                            .expect("a fresh request's work item is on its socket");
                        let id = self.add(target, conn, item);
                        self.work[item].socket = target;
                        self.work[item].id = id;
                    }
                    self.log.push(format!("{now} {item}: to socket {target}"));
                    let id = self.work[item].id;
                    metered(|| self.socks[target].s.resend(id, t));
                }
            }
            self.check_memory();
            if !moved {
                return;
            }
            self.step();
        }
    }

    fn event(&mut self, item: usize, e: Event) {
        let running = self.work[item].running.map(|(op, _)| op);
        // The operation an event ends, if it ends one.
        let ends = match &e {
            Event::Failed { operation, error } => {
                if let Some(x) = error.budget() {
                    assert_eq!(x.limit, self.b.limit(x.budget), "wrong limit: {x:?}");
                }
                Some(match operation {
                    Operation::Connect => Op::Connect,
                    Operation::ListTools => Op::List,
                    Operation::CallTool => Op::Call,
                    Operation::Close => Op::Close,
                })
            }
            // A hint that proves wrong is re-negotiated once, during another operation, and
            // reported again: that `Connected` ends nothing.
            Event::Connected { .. } if running != Some(Op::Connect) => None,
            Event::Connected { .. } => Some(Op::Connect),
            Event::ToolsListed(_) => Some(Op::List),
            Event::CallFinished(_) => Some(Op::Call),
            Event::Closed => Some(Op::Close),
            Event::InputRequired { .. } => panic!("no input hook was configured"),
            _ => None,
        };
        let terminal = ends.is_some();
        if let Some(op) = ends {
            assert_eq!(
                Some(op),
                running,
                "item {item}: an end of an operation not running: {e:?}\n{}",
                self.log.join("\n")
            );
        }
        self.log
            .push(format!("{} {item}: {}", self.now, summarize(&e)));
        let w = &self.work[item];
        let conn = self.socks[w.socket].s.connection(w.id);
        // Events of an item are only drained from the socket it is on, or from one it just left.
        if let Some(c) = conn {
            assert!(
                c.bytes_read() <= self.b.response_bytes,
                "read past the byte budget"
            );
        }
        if terminal {
            let (op, started) = self.work[item].running.take().unwrap_or_else(|| {
                panic!(
                    "item {item}: a second end of one operation: {e:?}\n{}",
                    self.log.join("\n")
                )
            });
            assert!(
                self.now.saturating_since(started) <= op.limit(&self.b),
                "{op:?} outlived its time budget"
            );
            self.start_next(item);
        }
        metered(move || drop(e));
    }

    fn check_memory(&self) {
        let bound = memory_bound(&self.b, self.work.len(), self.socks.len());
        assert!(
            counting::peak() <= bound,
            "peak memory {} over {bound}",
            counting::peak()
        );
    }

    fn step(&mut self) {
        self.steps += 1;
        assert!(self.steps < MAX_STEPS, "no end after {MAX_STEPS} steps");
    }

    fn stream(&self, sock: usize, sel: Sel) -> u32 {
        let seen = &self.socks[sock].peer.requests;
        match sel {
            Sel::Raw(id) => id & 0x7fff_ffff,
            Sel::Request(k) if !seen.is_empty() => seen[usize::from(k) % seen.len()].stream,
            Sel::Latest if !seen.is_empty() => seen[seen.len() - 1].stream,
            _ => 1,
        }
    }

    fn request(&self, sock: usize, stream: u32) -> SeenRequest {
        let seen = &self.socks[sock].peer.requests;
        seen.iter()
            .rev()
            .find(|r| r.stream == stream)
            .cloned()
            .unwrap_or_default()
    }

    /// The server's bytes for an action on socket `sock`.
    fn bytes(&mut self, sock: usize, a: &Action) -> Vec<u8> {
        match a {
            Action::Hello => h2server::hello(),
            Action::Settings { ack, params } => frame(Frame::Settings {
                ack: *ack,
                settings: params.iter().take(8).copied().collect(),
            }),
            Action::Ping { ack, data } => frame(Frame::Ping {
                ack: *ack,
                data: data.to_be_bytes(),
            }),
            Action::WindowUpdate { stream, increment } => {
                let sid = match stream {
                    Sel::Raw(0) => 0,
                    s => self.stream(sock, *s),
                };
                frame(Frame::WindowUpdate {
                    stream_id: sid,
                    increment: increment & 0x7fff_ffff,
                })
            }
            Action::Head {
                stream,
                status,
                ctype,
                end_stream,
            } => {
                let sid = self.stream(sock, *stream);
                let status = if *status == 0 { 200 } else { *status % 1000 }.to_string();
                let ct = content_type(*ctype);
                let mut fields = vec![(":status", status.as_str())];
                if !ct.is_empty() {
                    fields.push(("content-type", ct));
                }
                self.socks[sock].peer.headers(sid, &fields, *end_stream)
            }
            Action::RawHead {
                stream,
                end_stream,
                end_headers,
                fragment,
            } => frame(Frame::Headers {
                stream_id: self.stream(sock, *stream),
                end_stream: *end_stream,
                end_headers: *end_headers,
                priority: None,
                fragment: cap(fragment),
                pad_len: None,
            }),
            Action::Continuation {
                stream,
                end_headers,
                fragment,
            } => frame(Frame::Continuation {
                stream_id: self.stream(sock, *stream),
                end_headers: *end_headers,
                fragment: cap(fragment),
            }),
            Action::Data {
                stream,
                body,
                end_stream,
                pad,
            } => {
                let sid = self.stream(sock, *stream);
                let r = self.request(sock, sid);
                frame(Frame::Data {
                    stream_id: sid,
                    end_stream: *end_stream,
                    data: body_bytes(body, &r),
                    pad_len: *pad,
                })
            }
            Action::Respond { stream, body } => {
                let sid = self.stream(sock, *stream);
                let r = self.request(sock, sid);
                let peer = &mut self.socks[sock].peer;
                let method = r.rpc_method();
                let ct = if matches!(body, Body::Sse) {
                    "text/event-stream"
                } else {
                    "application/json"
                };
                if method.starts_with("notifications/") && matches!(body, Body::Answer) {
                    return peer.response(sid, 202, "", b"");
                }
                if method == "DELETE" && matches!(body, Body::Answer) {
                    return peer.response(sid, 204, "", b"");
                }
                let mut fields = vec![(":status", "200"), ("content-type", ct)];
                if method == "initialize" {
                    fields.push(("mcp-session-id", "s1"));
                }
                let mut out = peer.headers(sid, &fields, false);
                out.extend(data(sid, &body_bytes(body, &r), true));
                out
            }
            Action::Rst { stream, code } => frame(Frame::RstStream {
                stream_id: self.stream(sock, *stream),
                reason: Reason(*code),
            }),
            Action::GoAway { last, code } => frame(Frame::GoAway {
                last_stream_id: match last {
                    Sel::Raw(0) => 0,
                    s => self.stream(sock, *s),
                },
                reason: Reason(*code),
                debug: Vec::new(),
            }),
            Action::Unknown {
                kind,
                flags,
                stream,
                payload,
            } => frame(Frame::Unknown {
                kind: *kind | 0x10,
                flags: *flags,
                stream_id: self.stream(sock, *stream),
                payload: cap(payload),
            }),
            Action::Garbage(g) => cap(g),
            Action::Eof | Action::Wait(_) | Action::Socket(_) => Vec::new(),
        }
    }

    /// Advances virtual time to `until`, firing every deadline on the way.
    fn wait(&mut self, until: Instant) {
        loop {
            let next = self.socks.iter().filter_map(|s| s.s.poll_timeout()).min();
            match next {
                Some(t) if t <= until => {
                    self.now = t.max(self.now);
                    self.fire();
                }
                _ => break,
            }
        }
        self.now = until.max(self.now);
    }

    fn fire(&mut self) {
        self.step();
        self.check_deadlines();
        let now = self.now;
        for sock in &mut self.socks {
            metered(|| sock.s.handle_timeout(now));
        }
        self.drain();
    }

    fn check_deadlines(&self) {
        for (i, w) in self.work.iter().enumerate() {
            if let Some((op, started)) = w.running {
                assert!(
                    self.now.saturating_since(started) <= op.limit(&self.b),
                    "item {i}: {op:?} outlived its time budget"
                );
            }
        }
    }

    fn act(&mut self, a: &Action) {
        self.step();
        match a {
            Action::Socket(k) => {
                self.current = usize::from(*k) % self.socks.len();
                return;
            }
            Action::Wait(secs) => {
                let until = self.now + Duration::from_secs(u64::from(*secs % 64));
                self.wait(until);
                return;
            }
            _ => {}
        }
        let k = self.current;
        if self.socks[k].s.is_closed() || self.socks[k].closed_by_eof {
            return;
        }
        let now = self.now;
        if let Action::Eof = a {
            self.socks[k].closed_by_eof = true;
            self.log.push(format!("{now} socket {k}: eof"));
            metered(|| self.socks[k].s.handle_eof(now));
        } else {
            let bytes = self.bytes(k, a);
            let piece = self.piece;
            let sock = &mut self.socks[k];
            for p in bytes.chunks(piece.max(1)) {
                if let Err(e) = metered(|| sock.s.handle_bytes(now, p)) {
                    self.log.push(format!("{now} socket {k}: {e}"));
                    break;
                }
            }
        }
        self.drain();
    }
}

fn cap(v: &[u8]) -> Vec<u8> {
    v[..v.len().min(4096)].to_vec()
}

fn content_type(n: u8) -> &'static str {
    match n % 5 {
        0 => "application/json",
        1 => "text/event-stream",
        2 => "",
        3 => "text/html",
        _ => "application/json; charset=utf-8",
    }
}

/// The body `b` as an answer to request `r`.
fn body_bytes(b: &Body, r: &SeenRequest) -> Vec<u8> {
    let id = r.rpc_id();
    let answer = || -> String {
        match r.rpc_method().as_str() {
            "server/discover" => result(
                id,
                r#"{"supportedVersions":["2025-11-25","2026-07-28"],"capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"0"}}"#,
            ),
            "initialize" => result(
                id,
                r#"{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"0"}}"#,
            ),
            "tools/list" => result(id, TOOLS),
            _ => result(id, CALL_OK),
        }
    };
    match b {
        Body::Answer => answer().into_bytes(),
        Body::RpcError => {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32600,"message":"no"}}}}"#)
                .into_bytes()
        }
        Body::Sse => {
            let token = r.json()["params"]["_meta"]["progressToken"].clone();
            format!(
                "id: 1\ndata: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progressToken\":{token},\"progress\":1}}}}\n\nid: 2\ndata: {}\n\n",
                answer()
            )
            .into_bytes()
        }
        Body::Raw(v) => cap(v),
    }
}

fn run(input: &Input, whole: bool) -> Vec<String> {
    let b = budgets();
    let mut r = Run {
        b: b.clone(),
        h2: H2Config::from_budgets(&b),
        socks: Vec::new(),
        work: Vec::new(),
        now: Instant::ZERO,
        current: 0,
        piece: if whole {
            usize::MAX
        } else {
            usize::from(input.piece % 16) + 1
        },
        steps: 0,
        log: Vec::new(),
    };
    counting::reset();
    let first = r.new_socket();
    for (i, item) in input.items.iter().take(4).enumerate() {
        let mut config = Config::new("https://mcp.example.com/mcp").unwrap();
        config.budgets = b.clone();
        config.era_hint = match item.era % 3 {
            1 => Some(EraHint {
                era: Era::Modern,
                version: mcp_sansio::MODERN_VERSION.into(),
            }),
            2 => Some(EraHint {
                era: Era::Legacy,
                version: mcp_sansio::LEGACY_VERSIONS[0].into(),
            }),
            _ => None,
        };
        let conn = metered(|| Connection::new(config).unwrap());
        let id = r.add(first, conn, i);
        let mut ops = vec![Op::Connect];
        if item.ops & 1 != 0 {
            ops.push(Op::List);
        }
        if item.ops & 2 != 0 {
            ops.push(Op::Call);
        }
        if item.ops & 4 != 0 {
            ops.push(Op::Close);
        }
        r.work.push(Work {
            socket: first,
            id,
            ops,
            next: 0,
            running: None,
        });
    }
    for i in 0..r.work.len() {
        r.start_next(i);
    }
    r.drain();
    for a in input.actions.iter().take(64) {
        r.act(a);
    }
    // The server is silent from now on: every operation ends by its deadline.
    while r.work.iter().any(|w| w.running.is_some()) {
        let next = r
            .socks
            .iter()
            .filter_map(|s| s.s.poll_timeout())
            .min()
            .expect("an operation waits on nothing: it would never end");
        r.now = next.max(r.now);
        r.fire();
    }
    for (i, w) in r.work.iter().enumerate() {
        assert_eq!(w.next, w.ops.len(), "item {i}: operations left unstarted");
        let c = r.socks[w.socket].s.connection(w.id).unwrap();
        assert!(
            !c.is_busy(),
            "item {i}: every operation ended but it is busy"
        );
    }
    if std::env::var_os("H2_MACHINE_LOG").is_some() {
        eprintln!("peak {} over {} sockets", counting::peak(), r.socks.len());
    }
    r.log
}

fuzz_target!(|input: Input| {
    if input.items.is_empty() {
        return;
    }
    let whole = run(&input, true);
    let split = run(&input, false);
    if std::env::var_os("H2_MACHINE_LOG").is_some() {
        eprintln!("{input:#?}\n{}", whole.join("\n"));
    }
    assert_eq!(whole, split, "the split changed the outcome");
});
