//! Fuzzes a whole connection against an arbitrary server: the input is the server's behaviour.
//!
//! The client runs a fixed work item (connect, then list and/or call, then close) and the input
//! scripts the server's reply to each request in arrival order. Input layout:
//!
//! - byte 0: era hint (0 none, 1 modern, 2 legacy, others none);
//! - byte 1: operations after connect (bit 0 list, bit 1 call; bit 2 an input hook);
//! - byte 2: piece size of the split run, minus one;
//! - the rest: replies separated by `NUL R`. In a reply, `$ID` is the request's JSON-RPC id (or
//!   the latest one, for a `GET`; padded with spaces to three bytes), `NUL W` waits 7 s of virtual time, `NUL C` closes the
//!   exchange, `NUL A` abandons the running operation (the embedder dropped it); a reply that neither closes nor completes leaves the exchange open and silent.
//!   Requests beyond the last reply get no answer at all.
//!
//! Checked, for the whole input fed in one piece and in pieces of the chosen size: no panic;
//! every operation ends, by result or error, within a bounded number of steps and within its
//! time budget in virtual time; the bytes read never pass the byte budget; the client's memory
//! (a counting allocator, counting only the client's own work) stays within a bound of the
//! budgets ([`memory_bound`]); every budget error
//! names its configured limit; and both runs report the same events at the same instants (the
//! `reusable` flag of a finished exchange aside: see `drain`).
#![no_main]

use mcp_sansio_test_support::hostile::counting;

/// Allocations counted per thread while the target meters them.
#[global_allocator]
static ALLOC: counting::Counting = counting::Counting;

use std::time::Duration;

use counting::counted;
use libfuzzer_sys::fuzz_target;
use mcp_sansio::socket::Http1Socket;
use mcp_sansio::{
    Budgets, Config, Connection, Era, EraHint, Event, ExchangeId, Instant, Operation,
};

const MAX_STEPS: u64 = 200_000;
const WAIT: Duration = Duration::from_secs(7);

fn budgets() -> Budgets {
    let mut b = Budgets::default();
    b.response_bytes = 64 * 1024;
    b.header_block_bytes = 4 * 1024;
    b.header_count = 32;
    b.chunk_line_bytes = 256;
    b.sse_event_bytes = 8 * 1024;
    b.pages = 5;
    b.responses_per_request = 4;
    b
}

/// Client memory a run may hold at its peak: the rule of docs/guarantees.md for a work item that
/// keeps its catalog (the listing is retained for the call), six times the byte budget, and
/// 256 KiB of fixed structures.
fn memory_bound(b: &Budgets) -> i64 {
    6 * b.response_bytes as i64 + 256 * 1024
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Part<'a> {
    Bytes(&'a [u8]),
    Wait,
    Close,
    /// The embedder gives the running operation up ([`Connection::abandon`]).
    Abandon,
}

/// Splits `data` on `NUL R` into replies, and each reply on `NUL W` / `NUL C` / `NUL A` into
/// parts.
fn replies(data: &[u8]) -> Vec<Vec<Part<'_>>> {
    let mut out = vec![Vec::new()];
    let mut start = 0;
    let mut i = 0;
    while i < data.len() {
        if data[i] == 0 && i + 1 < data.len() && matches!(data[i + 1], b'R' | b'W' | b'C' | b'A') {
            let cur = out.last_mut().unwrap();
            if i > start {
                cur.push(Part::Bytes(&data[start..i]));
            }
            match data[i + 1] {
                b'R' => out.push(Vec::new()),
                b'W' => cur.push(Part::Wait),
                b'A' => cur.push(Part::Abandon),
                _ => cur.push(Part::Close),
            }
            i += 2;
            start = i;
        } else {
            i += 1;
        }
    }
    if start < data.len() {
        out.last_mut().unwrap().push(Part::Bytes(&data[start..]));
    }
    out
}

fn substitute(bytes: &[u8], id: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(b"$ID") {
            // Padded to the placeholder's length, so a Content-Length stays right.
            out.extend_from_slice(id.as_bytes());
            out.extend(std::iter::repeat_n(b' ', 3usize.saturating_sub(id.len())));
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

/// The JSON-RPC id of a request, textually.
fn rpc_id(request: &[u8]) -> Option<String> {
    let at = request.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let body = std::str::from_utf8(&request[at..]).ok()?;
    let from = body.find("\"id\":")? + 5;
    let rest = &body[from..];
    let end = rest.find([',', '}'])?;
    Some(rest[..end].to_owned())
}

struct Task<'a> {
    exchange: ExchangeId,
    parts: Vec<Part<'a>>,
    next: usize,
    id: String,
    ready_at: Instant,
}

struct Run<'a> {
    conn: Connection,
    socket: Http1Socket,
    budgets: Budgets,
    replies: Vec<Vec<Part<'a>>>,
    served: usize,
    last_id: String,
    tasks: Vec<Task<'a>>,
    now: Instant,
    piece: usize,
    steps: u64,
    log: Vec<String>,
    input_hook: bool,
    /// The operation started last, whose end [`Run::until_done`] waits for.
    op: Operation,
}

impl<'a> Run<'a> {
    /// Drains outputs; returns whether a terminal event for the running operation came.
    fn drain(&mut self) -> bool {
        let mut terminal = false;
        while let Some(t) = counted(|| self.conn.poll_transmit()) {
            if let Some(id) = rpc_id(&Http1Socket::encode(&t).expect("a checked request")) {
                self.last_id = id;
            }
            let parts = self.replies.get(self.served).cloned().unwrap_or_default();
            self.served += 1;
            self.log.push(format!("{} tx {:?}", self.now, t.exchange));
            self.tasks.push(Task {
                exchange: t.exchange,
                parts,
                next: 0,
                id: self.last_id.clone(),
                ready_at: self.now,
            });
            // What the client allocated and the caller frees is freed while counted.
            counted(move || drop(t));
        }
        while let Some(e) = counted(|| self.conn.poll_event()) {
            match &e {
                Event::ExchangeFinished { exchange, .. }
                | Event::ExchangeAbandoned { exchange } => {
                    let x = *exchange;
                    self.tasks.retain(|t| t.exchange != x);
                }
                Event::InputRequired { .. } => {
                    let answer: &[u8] = br#"{"a":{"action":"decline"}}"#;
                    let now = self.now;
                    let hook = self.input_hook;
                    counted(|| self.conn.provide_input(now, hook.then_some(answer)));
                }
                Event::Failed { error, .. } => {
                    if let Some(b) = error.budget() {
                        let limit = self.budgets.limit(b.budget);
                        assert_eq!(b.limit, limit, "wrong limit: {b:?}");
                    }
                }
                _ => {}
            }
            // Only the running operation's own end: a `Connected` after a re-negotiation (a new
            // legacy session, a -32022) comes in the middle of a listing or call, which goes on.
            if e.completes(self.op) {
                terminal = true;
            }
            assert!(self.conn.bytes_read() <= self.budgets.response_bytes);
            match &e {
                // `reusable` is what the core knows when the response ends: bytes that arrive
                // after it, in a later read, are for the adapter to see when it parks the socket
                // (both adapters drop an idle socket that holds unread bytes). So only the
                // exchange is compared across splits.
                Event::ExchangeFinished { exchange, .. } => {
                    self.log
                        .push(format!("{} finished {:?}", self.now, exchange));
                }
                _ => self.log.push(format!("{} {:?}", self.now, e)),
            }
            counted(move || drop(e));
            let bound = memory_bound(&self.budgets);
            assert!(
                counting::peak() <= bound,
                "peak memory {} over {bound}",
                counting::peak()
            );
        }
        terminal
    }

    /// Runs until the operation just started ends.
    fn until_done(&mut self, limit: Duration) {
        let started = self.now;
        loop {
            if self.drain() {
                return;
            }
            self.steps += 1;
            assert!(self.steps < MAX_STEPS, "no end after {MAX_STEPS} steps");
            let now = self.now;
            if let Some(i) = self
                .tasks
                .iter()
                .position(|t| t.ready_at <= now && t.next < t.parts.len())
            {
                let task = &mut self.tasks[i];
                let part = task.parts[task.next];
                task.next += 1;
                let exchange = task.exchange;
                match part {
                    Part::Wait => task.ready_at = now + WAIT,
                    Part::Close => {
                        counted(|| self.socket.handle_eof(&mut self.conn, now, exchange))
                    }
                    Part::Abandon => counted(|| self.conn.abandon(now)),
                    Part::Bytes(b) => {
                        let bytes = substitute(b, &task.id);
                        for p in bytes.chunks(self.piece) {
                            counted(|| self.socket.handle_bytes(&mut self.conn, now, exchange, p));
                        }
                    }
                }
                continue;
            }
            let next_task = self
                .tasks
                .iter()
                .filter(|t| t.next < t.parts.len())
                .map(|t| t.ready_at)
                .min();
            let next = [next_task, self.conn.poll_timeout()]
                .into_iter()
                .flatten()
                .min()
                .expect("an operation waits on nothing: it would never end");
            self.now = next.max(now);
            assert!(
                self.now.saturating_since(started) <= limit,
                "the operation outlived its time budget"
            );
            let now = self.now;
            counted(|| self.conn.handle_timeout(now));
        }
    }
}

fn run(data: &[u8], whole: bool) -> Vec<String> {
    let (hint, ops, piece) = (data[0], data[1], usize::from(data[2]) + 1);
    let mut config = Config::new("http://127.0.0.1:9/mcp").unwrap();
    config.budgets = budgets();
    config.era_hint = match hint {
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
    let input_hook = ops & 4 != 0;
    if input_hook {
        config.input_hook = true;
        config.client_capabilities = r#"{"elicitation":{}}"#.into();
    }
    let b = config.budgets.clone();
    counting::reset();
    let mut r = Run {
        conn: counted(|| Connection::new(config).unwrap()),
        socket: Http1Socket::new(),
        budgets: b.clone(),
        replies: replies(&data[3..]),
        served: 0,
        last_id: "null".into(),
        tasks: Vec::new(),
        now: Instant::ZERO,
        piece: if whole { usize::MAX } else { piece },
        steps: 0,
        log: Vec::new(),
        input_hook,
        op: Operation::Connect,
    };
    let now = r.now;
    counted(|| r.conn.connect(now));
    r.until_done(b.request_time * 4);
    if ops & 1 != 0 {
        let now = r.now;
        r.op = Operation::ListTools;
        counted(|| r.conn.list_tools(now));
        r.until_done(b.list_time);
    }
    if ops & 2 != 0 {
        let now = r.now;
        r.op = Operation::CallTool;
        counted(|| r.conn.call_tool(now, "t", br#"{"x":1}"#));
        r.until_done(b.call_time);
    }
    let now = r.now;
    r.op = Operation::Close;
    counted(|| r.conn.close(now));
    r.until_done(b.close_time);
    assert!(!r.conn.is_busy(), "closed but still busy");
    r.log
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let whole = run(data, true);
    let split = run(data, false);
    assert_eq!(whole, split, "the split changed the outcome");
});
