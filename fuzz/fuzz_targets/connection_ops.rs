//! Fuzzes a whole `Connection` with an arbitrary sequence of operations and network inputs.
//!
//! The input is an era hint choice and a list of ops: starting operations, feeding bytes (raw or
//! wrapped in a well-formed HTTP response that echoes the request's JSON-RPC id), EOFs, transport
//! errors and clock advances. After every op all outputs are drained. Checked: no panic, the byte
//! ledger stays within its budget, every budget error names the configured limit, a bounded
//! number of transmits and events per op, termination within bounded virtual time once the
//! caller stops answering, and identical events when every feed is split into single bytes
//! (borrowed, `Http1Socket::handle_bytes`) as when fed in two pieces (given away,
//! `Http1Socket::handle_owned_bytes`).
#![no_main]

use std::time::Duration;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use mcp_sansio::socket::Http1Socket;
use mcp_sansio::{
    Budget, Budgets, Config, Connection, Era, EraHint, Event, ExchangeId, Instant, Transmit,
};
use mcp_sansio::{TransportError, TransportErrorKind};

const MAX_TRANSMITS_PER_OP: usize = 64;
const MAX_EVENTS_PER_OP: usize = 512;
const MAX_TIMEOUT_STEPS: usize = 1000;
const MAX_BUSY_AFTER_OPS: Duration = Duration::from_secs(3600);

#[derive(Arbitrary, Debug, Clone)]
enum Op {
    Connect,
    List,
    Call {
        args: Vec<u8>,
    },
    Close,
    /// Raw bytes for one live exchange, fed in two pieces cut at `split`.
    Feed {
        which: u8,
        bytes: Vec<u8>,
        split: u8,
    },
    /// A well-formed response: status, content type and framing chosen; `$ID` in the body is
    /// replaced by the request's JSON-RPC id.
    Respond {
        which: u8,
        status: u8,
        ctype: u8,
        chunked: bool,
        extra_header: u8,
        body: Vec<u8>,
        split: u8,
    },
    /// A plausible protocol answer (discovery, handshake, listing page, call result, errors,
    /// progress over SSE) for the request's id, with `tail` appended inside the JSON.
    Reply {
        which: u8,
        kind: u8,
        sse: bool,
        chunked: bool,
        extra_header: u8,
        tail: Vec<u8>,
        split: u8,
    },
    Eof {
        which: u8,
    },
    TransportError {
        which: u8,
    },
    Advance {
        ms: u32,
    },
    AdvanceToTimeout,
}

#[derive(Arbitrary, Debug)]
struct Input {
    hint: u8,
    ops: Vec<Op>,
}

fn budgets() -> Budgets {
    let mut b = Budgets::default();
    b.response_bytes = 64 * 1024;
    b.header_block_bytes = 4 * 1024;
    b.sse_event_bytes = 8 * 1024;
    b.pages = 5;
    b
}

/// An exchange the connection transmitted and has not finished or abandoned, nor we closed.
struct Live {
    id: ExchangeId,
    rpc_id: Option<String>,
}

/// The JSON-RPC id in a request body, textually (`"id":` up to the next `,` or `}`).
fn rpc_id(t: &Transmit) -> Option<String> {
    let body = std::str::from_utf8(&t.request.body).ok()?;
    let at = body.find("\"id\":")? + 5;
    let rest = &body[at..];
    let end = rest.find([',', '}'])?;
    Some(rest[..end].trim().to_owned())
}

const DISCOVER_OK: &str = r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"srv","version":"9"}}}"#;

/// The body and SSE framing of a `Reply`.
fn reply_body(kind: u8, sse: bool, tail: &[u8]) -> (u8, Vec<u8>) {
    let tail = String::from_utf8_lossy(tail);
    let (status, msg) = match kind % 12 {
        0 => (
            0,
            format!(r#"{{"jsonrpc":"2.0","id":$ID,"result":{DISCOVER_OK}{tail}}}"#),
        ),
        1 => (
            0,
            format!(
                r#"{{"jsonrpc":"2.0","id":$ID,"result":{{"protocolVersion":"2025-11-25","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"l","version":"1"}}}}{tail}}}"#
            ),
        ),
        2 => (
            0,
            format!(
                r#"{{"jsonrpc":"2.0","id":$ID,"result":{{"protocolVersion":"2024-11-05","capabilities":{{}}}}{tail}}}"#
            ),
        ),
        3 => (
            0,
            format!(
                r#"{{"jsonrpc":"2.0","id":$ID,"result":{{"tools":[{{"name":"echo","inputSchema":{{"type":"object"}}}}],"nextCursor":"c{}"}}{tail}}}"#,
                tail.len() % 3
            ),
        ),
        4 => (
            0,
            format!(
                r#"{{"jsonrpc":"2.0","id":$ID,"result":{{"tools":[{{"name":"t{}","inputSchema":{{"type":"object"}}}}]}}{tail}}}"#,
                tail.len()
            ),
        ),
        5 => (
            0,
            format!(
                r#"{{"jsonrpc":"2.0","id":$ID,"result":{{"content":[{{"type":"text","text":"hi"}}],"isError":false}}{tail}}}"#
            ),
        ),
        6 => (
            4,
            format!(
                r#"{{"jsonrpc":"2.0","id":$ID,"error":{{"code":-32022,"message":"v","data":{{"supported":["2026-07-28"]}}}}{tail}}}"#
            ),
        ),
        7 => (
            4,
            format!(
                r#"{{"jsonrpc":"2.0","id":$ID,"error":{{"code":-32601,"message":"no"}}{tail}}}"#
            ),
        ),
        8 => (
            7,
            format!(
                r#"{{"jsonrpc":"2.0","id":$ID,"error":{{"code":-32603,"message":"x"{tail}}}}}"#
            ),
        ),
        9 => (
            0,
            format!(
                r#"{{"jsonrpc":"2.0","id":"srv1","method":"sampling/createMessage","params":{{}}{tail}}}"#
            ),
        ),
        10 => (
            0,
            format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":1,"progress":0.5,"total":1,"message":"m"}}{tail}}}"#
            ),
        ),
        _ => (3, String::new()),
    };
    if sse && !msg.is_empty() {
        let ev = format!("id: e{}\nretry: 10\ndata: {msg}\n\n", tail.len());
        (status.max(0) + 100, ev.into_bytes())
    } else {
        (status, msg.into_bytes())
    }
}

fn response(op: &Op, rpc_id: Option<&str>) -> Vec<u8> {
    let (status, ctype, chunked, extra_header, body) = match op {
        Op::Respond {
            status,
            ctype,
            chunked,
            extra_header,
            body,
            ..
        } => (*status, *ctype, *chunked, *extra_header, body.clone()),
        Op::Reply {
            kind,
            sse,
            chunked,
            extra_header,
            tail,
            ..
        } => {
            let (status, body) = reply_body(*kind, *sse, tail);
            let ctype = if status >= 100 { 1 } else { 0 };
            (status % 100, ctype, *chunked, *extra_header, body)
        }
        _ => unreachable!(),
    };
    let status = match status % 8 {
        0..=2 => 200,
        3 => 202,
        4 => 400,
        5 => 404,
        6 => 401,
        _ => 500,
    };
    let ctype = match ctype % 4 {
        0 => "application/json",
        1 => "text/event-stream",
        2 => "text/plain",
        _ => "application/json; charset=utf-8",
    };
    let id = rpc_id.unwrap_or("0");
    let body = &body[..];
    let mut body_s = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        if body[i..].starts_with(b"$ID") {
            body_s.extend_from_slice(id.as_bytes());
            i += 3;
        } else {
            body_s.push(body[i]);
            i += 1;
        }
    }
    let extra = match extra_header % 6 {
        0 => "",
        1 => "Mcp-Session-Id: s1\r\n",
        2 => "Connection: close\r\n",
        3 => "Retry-After: 1\r\n",
        4 => "WWW-Authenticate: Bearer realm=\"x\"\r\n",
        _ => "Mcp-Session-Id: \r\n",
    };
    let mut out = format!("HTTP/1.1 {status} X\r\nContent-Type: {ctype}\r\n{extra}").into_bytes();
    if chunked {
        out.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
        for piece in body_s.chunks(7) {
            out.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
            out.extend_from_slice(piece);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"0\r\n\r\n");
    } else {
        out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body_s.len()).as_bytes());
        out.extend_from_slice(&body_s);
    }
    out
}

struct Driver {
    conn: Connection,
    socket: Http1Socket,
    budgets: Budgets,
    now: Instant,
    live: Vec<Live>,
    /// Every event, in order.
    log: Vec<String>,
    /// Every transmit, in order (kept apart: one input may yield both, and the drain order
    /// between the two queues depends on where the input was cut).
    sent: Vec<String>,
    bytewise: bool,
}

impl Driver {
    fn new(hint: Option<EraHint>, bytewise: bool) -> Driver {
        let budgets = budgets();
        let config = Config::new("http://127.0.0.1:9/mcp")
            .unwrap()
            .with_budgets(budgets.clone())
            .with_era_hint(hint);
        Driver {
            conn: Connection::new(config).expect("valid config"),
            socket: Http1Socket::new(),
            budgets,
            now: Instant::ZERO,
            live: Vec::new(),
            log: Vec::new(),
            sent: Vec::new(),
            bytewise,
        }
    }

    fn drain(&mut self) {
        let mut transmits = 0;
        while let Some(t) = self.conn.poll_transmit() {
            transmits += 1;
            assert!(
                transmits < MAX_TRANSMITS_PER_OP,
                "too many transmits for one input"
            );
            assert!(
                !self.live.iter().any(|l| l.id == t.exchange),
                "exchange id {:?} reused",
                t.exchange
            );
            self.sent.push(format!(
                "transmit {:?} fresh={} {}",
                t.exchange,
                t.fresh_socket,
                String::from_utf8_lossy(&Http1Socket::encode(&t).expect("a checked request"))
            ));
            self.live.push(Live {
                id: t.exchange,
                rpc_id: rpc_id(&t),
            });
        }
        let mut events = 0;
        while let Some(ev) = self.conn.poll_event() {
            events += 1;
            assert!(events < MAX_EVENTS_PER_OP, "too many events for one input");
            match &ev {
                Event::ExchangeFinished { exchange, .. }
                | Event::ExchangeAbandoned { exchange } => {
                    self.live.retain(|l| l.id != *exchange);
                }
                Event::Failed { error, .. } => {
                    if let Some(b) = error.budget() {
                        let limit = self.budgets.limit(b.budget);
                        assert_eq!(b.limit, limit, "budget error names a wrong limit: {b:?}");
                        if b.budget == Budget::ResponseBytes {
                            assert!(self.conn.bytes_read() <= self.budgets.response_bytes);
                        }
                    }
                }
                _ => {}
            }
            self.log.push(format!("{ev:?}"));
        }
        assert!(
            self.conn.bytes_read() <= self.budgets.response_bytes,
            "bytes_read {} over the budget",
            self.conn.bytes_read()
        );
    }

    fn pick(&self, which: u8) -> Option<usize> {
        if self.live.is_empty() {
            None
        } else {
            Some(which as usize % self.live.len())
        }
    }

    fn feed(&mut self, id: ExchangeId, bytes: &[u8], split: u8) {
        if self.bytewise {
            for b in bytes.chunks(1) {
                // Stop once the exchange is over: no more bytes may be fed for it.
                if !self.live.iter().any(|l| l.id == id) {
                    return;
                }
                self.socket.handle_bytes(&mut self.conn, self.now, id, b);
                self.drain();
            }
        } else {
            let cut = if bytes.is_empty() {
                0
            } else {
                split as usize % (bytes.len() + 1)
            };
            let (a, b) = bytes.split_at(cut);
            for piece in [a, b] {
                if piece.is_empty() || !self.live.iter().any(|l| l.id == id) {
                    continue;
                }
                // Given away: a body that arrives whole in a piece is kept there.
                self.socket
                    .handle_owned_bytes(&mut self.conn, self.now, id, piece.to_vec());
                self.drain();
            }
        }
    }

    fn timeout_due(&mut self) {
        if let Some(t) = self.conn.poll_timeout() {
            if t <= self.now {
                self.conn.handle_timeout(self.now);
            }
        }
    }

    fn apply(&mut self, op: &Op) {
        match op {
            Op::Connect => self.conn.connect(self.now),
            Op::List => self.conn.list_tools(self.now),
            Op::Call { args } => self.conn.call_tool(self.now, "echo", args),
            Op::Close => self.conn.close(self.now),
            Op::Feed {
                which,
                bytes,
                split,
            } => {
                if let Some(i) = self.pick(*which) {
                    let id = self.live[i].id;
                    self.feed(id, bytes, *split);
                }
            }
            Op::Respond { which, split, .. } | Op::Reply { which, split, .. } => {
                if let Some(i) = self.pick(*which) {
                    let id = self.live[i].id;
                    let bytes = response(op, self.live[i].rpc_id.as_deref());
                    self.feed(id, &bytes, *split);
                }
            }
            Op::Eof { which } => {
                if let Some(i) = self.pick(*which) {
                    let id = self.live.remove(i).id;
                    self.socket.handle_eof(&mut self.conn, self.now, id);
                }
            }
            Op::TransportError { which } => {
                if let Some(i) = self.pick(*which) {
                    let id = self.live.remove(i).id;
                    let error = TransportError {
                        kind: TransportErrorKind::Io,
                        message: "reset".into(),
                    };
                    self.conn.handle(
                        self.now,
                        mcp_sansio::Input::TransportError {
                            exchange: id,
                            error,
                        },
                    );
                }
            }
            Op::Advance { ms } => {
                self.now = self.now + Duration::from_millis(*ms as u64);
                self.timeout_due();
            }
            Op::AdvanceToTimeout => {
                if let Some(t) = self.conn.poll_timeout() {
                    self.now = self.now.max(t);
                    self.conn.handle_timeout(self.now);
                }
            }
        }
        self.drain();
    }

    /// Stops answering and lets the clock run: every operation must end in bounded virtual time.
    fn finish(&mut self) {
        let start = self.now;
        for _ in 0..MAX_TIMEOUT_STEPS {
            let Some(t) = self.conn.poll_timeout() else {
                break;
            };
            self.now = self.now.max(t);
            if self.conn.is_busy() {
                assert!(
                    self.now.saturating_since(start) <= MAX_BUSY_AFTER_OPS,
                    "still busy {:?} after the last input",
                    self.now.saturating_since(start)
                );
            }
            self.conn.handle_timeout(self.now);
            self.drain();
        }
        assert!(
            self.conn.poll_timeout().is_none() || !self.conn.is_busy(),
            "timers keep firing while an operation is still running"
        );
        assert!(!self.conn.is_busy(), "an operation never ended");
        self.log.push(format!("end busy={}", self.conn.is_busy()));
    }
}

fn run(input: &Input, bytewise: bool) -> (Vec<String>, Vec<String>) {
    let hint = match input.hint % 4 {
        0 | 1 => None,
        2 => Some(EraHint {
            era: Era::Modern,
            version: mcp_sansio::MODERN_VERSION.into(),
        }),
        _ => Some(EraHint {
            era: Era::Legacy,
            version: mcp_sansio::LEGACY_VERSIONS[0].into(),
        }),
    };
    let mut d = Driver::new(hint, bytewise);
    d.drain();
    for op in input.ops.iter().take(64) {
        d.apply(op);
    }
    d.finish();
    (d.log, d.sent)
}

fn compare(what: &str, whole: &[String], bytewise: &[String]) {
    if whole != bytewise {
        let n = whole
            .iter()
            .zip(bytewise)
            .take_while(|(a, b)| a == b)
            .count();
        panic!(
            "feeding in single bytes changed the {what} at entry {n}:\n split: {:?}\n bytes: {:?}",
            whole.get(n),
            bytewise.get(n)
        );
    }
}

fuzz_target!(|input: Input| {
    let (events, sent) = run(&input, false);
    let (events_b, sent_b) = run(&input, true);
    compare("events", &events, &events_b);
    compare("transmits", &sent, &sent_b);
});
