//! A scripted server and a virtual clock for driving a `Connection` without sockets.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::time::Duration;

use mcp_sansio::socket::Http1Socket;
use mcp_sansio::{Config, Connection, Event, ExchangeId, Instant, Transmit};

pub mod table;
pub mod tasks;

/// How response bytes are fed to the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// In one piece.
    Whole,
    /// One byte at a time.
    Bytes,
    /// In pieces of this many bytes.
    Chunks(usize),
}

/// A request the connection sent, parsed back.
#[derive(Clone, Debug)]
pub struct SentRequest {
    pub exchange: ExchangeId,
    pub fresh: bool,
    pub method: String,
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl SentRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("request body is JSON")
    }

    /// The JSON-RPC method, or the HTTP method for body-less requests.
    pub fn rpc_method(&self) -> String {
        if self.body.is_empty() {
            return self.method.clone();
        }
        self.json()["method"].as_str().unwrap_or("").to_owned()
    }

    pub fn rpc_id(&self) -> u64 {
        self.json()["id"].as_u64().expect("integer id")
    }
}

pub fn parse_request(t: &Transmit) -> SentRequest {
    let bytes = Http1Socket::encode(t).expect("a checked request encodes");
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut headers);
    let n = match req.parse(&bytes).expect("the request parses") {
        httparse::Status::Complete(n) => n,
        httparse::Status::Partial => panic!("partial request"),
    };
    let headers: Vec<(String, String)> = req
        .headers
        .iter()
        .map(|h| {
            (
                h.name.to_owned(),
                String::from_utf8(h.value.to_vec()).unwrap(),
            )
        })
        .collect();
    let body = bytes[n..].to_vec();
    let cl = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .map(|(_, v)| v.parse::<usize>().unwrap());
    if let Some(cl) = cl {
        assert_eq!(cl, body.len(), "Content-Length matches the body");
    } else {
        assert!(body.is_empty());
    }
    SentRequest {
        exchange: t.exchange,
        fresh: t.fresh_socket,
        method: req.method.unwrap().to_owned(),
        target: req.path.unwrap().to_owned(),
        headers,
        body,
    }
}

pub struct Harness {
    pub conn: Connection,
    /// Decodes each exchange's HTTP/1.1 response into the connection's events.
    pub socket: Http1Socket,
    pub now: Instant,
    pub split: Split,
    pub outstanding: VecDeque<SentRequest>,
    pub sent: Vec<SentRequest>,
    pub events: Vec<Event>,
    pub abandoned: Vec<ExchangeId>,
    pub finished: Vec<(ExchangeId, bool)>,
    /// Every state change is checked against the transition table as the outputs are drained.
    pub table: table::TableCheck,
}

impl Harness {
    pub fn new(config: Config, split: Split) -> Harness {
        Harness {
            conn: Connection::new(config).expect("valid config"),
            socket: Http1Socket::new(),
            now: Instant::ZERO,
            split,
            outstanding: VecDeque::new(),
            sent: Vec::new(),
            events: Vec::new(),
            abandoned: Vec::new(),
            finished: Vec::new(),
            table: table::TableCheck::default(),
        }
    }

    pub fn for_url(url: &str, split: Split) -> Harness {
        Harness::new(Config::new(url).unwrap(), split)
    }

    /// Drains every output.
    pub fn drain(&mut self) {
        self.table.observe(&self.conn);
        while let Some(t) = self.conn.poll_transmit() {
            let r = parse_request(&t);
            self.sent.push(r.clone());
            self.outstanding.push_back(r);
        }
        while let Some(e) = self.conn.poll_event() {
            match &e {
                Event::ExchangeAbandoned { exchange } => {
                    self.abandoned.push(*exchange);
                    self.outstanding.retain(|r| r.exchange != *exchange);
                }
                Event::ExchangeFinished { exchange, reusable } => {
                    self.finished.push((*exchange, *reusable));
                    self.outstanding.retain(|r| r.exchange != *exchange);
                }
                _ => self.events.push(e),
            }
        }
    }

    pub fn connect(&mut self) {
        self.conn.connect(self.now);
        self.drain();
    }

    pub fn list(&mut self) {
        self.conn.list_tools(self.now);
        self.drain();
    }

    pub fn call(&mut self, name: &str, args: &str) {
        self.conn.call_tool(self.now, name, args.as_bytes());
        self.drain();
    }

    pub fn close(&mut self) {
        self.conn.close(self.now);
        self.drain();
    }

    /// The oldest request still waiting for an answer.
    pub fn next(&mut self) -> SentRequest {
        self.outstanding
            .pop_front()
            .expect("a request is outstanding")
    }

    pub fn has_outstanding(&self) -> bool {
        !self.outstanding.is_empty()
    }

    /// Feeds `bytes` as the response of `exchange`, split as configured.
    pub fn feed(&mut self, exchange: ExchangeId, bytes: &[u8]) {
        let size = match self.split {
            Split::Whole => bytes.len().max(1),
            Split::Bytes => 1,
            Split::Chunks(n) => n.max(1),
        };
        for piece in bytes.chunks(size) {
            self.socket
                .handle_bytes(&mut self.conn, self.now, exchange, piece);
        }
        self.drain();
    }

    /// Answers the call `r` with [`CALL_OK`] and expects it to finish.
    pub fn answer_call_ok(&mut self, r: &SentRequest) {
        self.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), CALL_OK)),
        );
        assert!(matches!(self.single_event(), Event::CallFinished(_)));
    }

    /// Feeds a response and then the end of stream.
    pub fn respond_and_close(&mut self, exchange: ExchangeId, bytes: &[u8]) {
        self.feed(exchange, bytes);
        self.socket.handle_eof(&mut self.conn, self.now, exchange);
        self.drain();
    }

    pub fn eof(&mut self, exchange: ExchangeId) {
        self.socket.handle_eof(&mut self.conn, self.now, exchange);
        self.drain();
    }

    /// Moves the clock to `t` and lets the connection act.
    pub fn advance_to(&mut self, t: Instant) {
        assert!(t >= self.now);
        self.now = t;
        self.conn.handle_timeout(t);
        self.drain();
    }

    pub fn advance(&mut self, d: Duration) {
        let t = self.now + d;
        self.advance_to(t);
    }

    /// Jumps to the next deadline the connection asked for, if any.
    pub fn advance_to_timeout(&mut self) -> bool {
        match self.conn.poll_timeout() {
            Some(t) => {
                let t = t.max(self.now);
                self.advance_to(t);
                true
            }
            None => false,
        }
    }

    pub fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    /// The only event that is not progress, asserting there is exactly one.
    pub fn single_event(&mut self) -> Event {
        let evs: Vec<Event> = self
            .take_events()
            .into_iter()
            .filter(|e| !matches!(e, Event::Progress { .. }))
            .collect();
        assert_eq!(evs.len(), 1, "exactly one event: {evs:?}");
        evs.into_iter().next().unwrap()
    }

    pub fn gets(&self) -> usize {
        self.sent.iter().filter(|r| r.method == "GET").count()
    }
}

// ---------------------------------------------------------------------------------------------
// Response builders

pub fn json_response(status: u16, body: &str) -> Vec<u8> {
    json_response_with(status, &[], body)
}

pub fn json_response_with(status: u16, headers: &[(&str, &str)], body: &str) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status} X\r\ncontent-type: application/json\r\n");
    for (k, v) in headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str(&format!("content-length: {}\r\n\r\n{body}", body.len()));
    out.into_bytes()
}

pub fn empty_response(status: u16) -> Vec<u8> {
    format!("HTTP/1.1 {status} X\r\ncontent-length: 0\r\n\r\n").into_bytes()
}

/// An SSE response, chunked, with the given raw event-stream body. Not terminated if `open`.
pub fn sse_response(headers: &[(&str, &str)], stream: &str, open: bool) -> Vec<u8> {
    let mut out = String::from(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n",
    );
    for (k, v) in headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    if !stream.is_empty() {
        out.push_str(&format!("{:x}\r\n{stream}\r\n", stream.len()));
    }
    if !open {
        out.push_str("0\r\n\r\n");
    }
    out.into_bytes()
}

pub fn result_msg(id: u64, result: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)
}

pub fn error_msg(id: u64, code: i64, message: &str, data: Option<&str>) -> String {
    match data {
        Some(d) => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":"{message}","data":{d}}}}}"#
        ),
        None => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":"{message}"}}}}"#
        ),
    }
}

pub const DISCOVER_OK: &str = r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"srv","version":"9"}}}"#;

pub fn initialize_ok(version: &str) -> String {
    format!(
        r#"{{"protocolVersion":"{version}","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"legacy","version":"1"}}}}"#
    )
}

pub fn tools_page(names: &[&str], next: Option<&str>) -> String {
    let tools: Vec<String> = names
        .iter()
        .map(|n| format!(r#"{{"name":"{n}","inputSchema":{{"type":"object"}}}}"#))
        .collect();
    match next {
        Some(c) => format!(r#"{{"tools":[{}],"nextCursor":"{c}"}}"#, tools.join(",")),
        None => format!(r#"{{"tools":[{}]}}"#, tools.join(",")),
    }
}

pub const CALL_OK: &str = r#"{"content":[{"type":"text","text":"hi"}],"isError":false}"#;

/// A connection that completed the modern probe.
pub fn modern(split: Split) -> Harness {
    modern_with(Config::new("http://127.0.0.1:9/mcp").unwrap(), split)
}

/// A connection that took a modern era hint (connected without a request).
pub fn modern_hinted(split: Split) -> Harness {
    let config = Config::new("http://127.0.0.1:9/mcp")
        .unwrap()
        .with_era_hint(Some(mcp_sansio::EraHint {
            era: mcp_sansio::Era::Modern,
            version: "2026-07-28".into(),
        }));
    let mut h = Harness::new(config, split);
    h.connect();
    h.take_events();
    h
}

/// A connection with `config` that completed the modern probe.
pub fn modern_with(config: Config, split: Split) -> Harness {
    let mut h = Harness::new(config, split);
    h.connect();
    let r = h.next();
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), DISCOVER_OK)),
    );
    assert!(matches!(h.single_event(), Event::Connected { .. }));
    h
}

/// A connection that completed a legacy handshake with session id `sess-1`.
pub fn legacy(split: Split, version: &str) -> Harness {
    let mut h = Harness::for_url("http://127.0.0.1:9/mcp", split);
    h.connect();
    let r = h.next();
    h.feed(r.exchange, &empty_response(404));
    let r = h.next();
    assert_eq!(r.rpc_method(), "initialize");
    h.feed(
        r.exchange,
        &json_response_with(
            200,
            &[("mcp-session-id", "sess-1")],
            &result_msg(r.rpc_id(), &initialize_ok(version)),
        ),
    );
    let r = h.next();
    assert_eq!(r.rpc_method(), "notifications/initialized");
    h.feed(r.exchange, &empty_response(202));
    assert!(matches!(h.single_event(), Event::Connected { .. }));
    h
}

pub const SPLITS: [Split; 3] = [Split::Whole, Split::Bytes, Split::Chunks(7)];
