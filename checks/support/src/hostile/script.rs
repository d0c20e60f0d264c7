//! Hostile server behaviour as data: what a server does with each request it receives.
//!
//! Only `std`: the same scripts drive the in-memory core runner (`tests/hostile.rs`) and a socket
//! server ([`super::socket::serve`]) that writes them on a real `TcpStream`.
#![allow(dead_code)]

use std::time::Duration;

/// One thing the server does on the exchange it is answering.
///
/// In every byte string, `$ID` is replaced by the request's JSON-RPC id (for a request without
/// one, such as a `GET` resuming a stream, the id of the latest request that had one) and `$SEQ`
/// by the 1-based number of the request among all the server received. A [`Step::Repeat`] unit
/// is substituted once, so it should hold no placeholder whose length varies.
#[derive(Clone, Debug)]
pub enum Step {
    /// Write these bytes.
    Send(Vec<u8>),
    /// Write a complete response with this status and headers and a `Content-Length` computed
    /// after substitution.
    Respond {
        /// HTTP status.
        status: u16,
        /// Header lines, in order.
        headers: Vec<(String, String)>,
        /// The body.
        body: Vec<u8>,
    },
    /// Write one chunk of a chunked body: `<hex length>\r\n<bytes>\r\n`, length after
    /// substitution.
    Chunk(Vec<u8>),
    /// Write `bytes` `times` times in a row (`u64::MAX`: until the client goes away).
    Repeat {
        /// The unit written each time.
        bytes: Vec<u8>,
        /// How many times.
        times: u64,
    },
    /// Write `bytes` `piece` bytes at a time, waiting `every` before each piece.
    Trickle {
        /// All the bytes.
        bytes: Vec<u8>,
        /// Bytes per write.
        piece: usize,
        /// Pause before each write.
        every: Duration,
    },
    /// Do nothing for this long.
    Wait(Duration),
    /// Close the connection (end of stream); the script ends.
    Close,
    /// Keep the connection open and never write again; the script ends.
    Hang,
}

/// Which requests a [`Rule`] answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum When {
    /// Every request.
    Any,
    /// A request whose JSON-RPC `method` is this.
    Rpc(&'static str),
    /// A request whose HTTP method is this (`GET`, `DELETE`).
    Http(&'static str),
}

/// How often a [`Rule`] applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Times {
    /// Once, then it is used up.
    Once,
    /// For every matching request.
    Always,
}

/// One behaviour of the server: for matching requests, run `steps`.
#[derive(Clone, Debug)]
pub struct Rule {
    /// Which requests.
    pub when: When,
    /// How often.
    pub times: Times,
    /// What to do.
    pub steps: Vec<Step>,
}

/// A request as the server sees it (parsed with `std` only).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Request {
    /// HTTP method.
    pub http_method: String,
    /// JSON-RPC method, if the body has one.
    pub rpc_method: Option<String>,
    /// JSON-RPC id, raw JSON text, if the body has one.
    pub rpc_id: Option<String>,
    /// Header lines (name, value).
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Request {
    /// The value of header `name`, case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Where the head of a request ends (after its blank line), if it is complete.
pub fn head_end(bytes: &[u8]) -> Option<usize> {
    bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|p| p + 4)
}

/// Parses a request head; returns it and the `Content-Length` of its body.
pub fn parse_head(head: &[u8]) -> Option<(Request, usize)> {
    let text = std::str::from_utf8(head).ok()?;
    let mut lines = text.split("\r\n");
    let http_method = lines.next()?.split(' ').next()?.to_owned();
    let mut headers = Vec::new();
    for line in lines.filter(|l| !l.is_empty()) {
        let (n, v) = line.split_once(':')?;
        headers.push((n.trim().to_owned(), v.trim().to_owned()));
    }
    let req = Request {
        http_method,
        headers,
        ..Request::default()
    };
    let len = match req.header("content-length") {
        Some(v) => v.parse().ok()?,
        None => 0,
    };
    Some((req, len))
}

/// Fills in the JSON-RPC method and id of `req` from its body (textually: the core writes
/// compact JSON with `"id":` and `"method":"…"`).
pub fn read_rpc(req: &mut Request) {
    let Ok(body) = std::str::from_utf8(&req.body) else {
        return;
    };
    if let Some(at) = body.find("\"method\":\"") {
        let rest = &body[at + 10..];
        if let Some(end) = rest.find('"') {
            req.rpc_method = Some(rest[..end].to_owned());
        }
    }
    if let Some(at) = body.find("\"id\":") {
        let rest = &body[at + 5..];
        if let Some(end) = rest.find([',', '}']) {
            req.rpc_id = Some(rest[..end].trim().to_owned());
        }
    }
}

/// Parses one whole request (head and body), if `bytes` hold it.
pub fn parse_request(bytes: &[u8]) -> Option<Request> {
    let end = head_end(bytes)?;
    let (mut req, len) = parse_head(&bytes[..end])?;
    req.body = bytes.get(end..end + len)?.to_vec();
    read_rpc(&mut req);
    Some(req)
}

/// How a server cuts what it writes into pieces: each write of a [`Step::Send`],
/// [`Step::Respond`] or [`Step::Chunk`] (after substitution) becomes a [`Step::Trickle`] of
/// `bytes`-long pieces, each written after `every`. On a socket the client then reads the answer
/// in pieces that small (the pause keeps the pieces apart); in the core's runner the pieces come
/// `every` apart in virtual time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pieces {
    /// Bytes per write.
    pub bytes: usize,
    /// Pause before each write.
    pub every: Duration,
}

/// The server's rule book and the state it keeps across requests and connections.
#[derive(Clone, Debug)]
pub struct Server {
    rules: Vec<Rule>,
    used: Vec<bool>,
    /// Requests received so far.
    pub requests: u64,
    last_id: Option<String>,
    pieces: Option<Pieces>,
}

impl Server {
    /// A server following `rules`: for each request, the first matching rule not used up.
    pub fn new(rules: Vec<Rule>) -> Server {
        let used = vec![false; rules.len()];
        Server {
            rules,
            used,
            requests: 0,
            last_id: None,
            pieces: None,
        }
    }

    /// The same server writing its answers in [`Pieces`] (`None`: as the steps say).
    pub fn in_pieces(mut self, pieces: Option<Pieces>) -> Server {
        self.pieces = pieces;
        self
    }

    /// The steps answering `req`, substitutions applied. A request no rule matches is answered
    /// `202 Accepted` if it is not a JSON-RPC request (a notification, a response, a `GET` or
    /// `DELETE`), and never otherwise.
    pub fn answer(&mut self, req: &Request) -> Vec<Step> {
        self.requests += 1;
        if req.rpc_id.is_some() {
            self.last_id = req.rpc_id.clone();
        }
        let id = self.last_id.clone().unwrap_or_else(|| "null".to_owned());
        let seq = self.requests.to_string();
        let found = self.rules.iter().enumerate().position(|(i, r)| {
            !self.used[i]
                && match &r.when {
                    When::Any => true,
                    When::Rpc(m) => req.rpc_method.as_deref() == Some(*m),
                    When::Http(m) => req.http_method == *m,
                }
        });
        let Some(i) = found else {
            if req.rpc_id.is_none() || req.rpc_method.is_none() {
                return vec![Step::Send(
                    b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n".to_vec(),
                )];
            }
            return vec![Step::Hang];
        };
        if self.rules[i].times == Times::Once {
            self.used[i] = true;
        }
        let pieces = self.pieces;
        self.rules[i]
            .steps
            .iter()
            .map(|s| {
                let step = substitute(s, &id, &seq);
                match (pieces, render(&step)) {
                    (Some(p), Some(bytes)) => Step::Trickle {
                        bytes,
                        piece: p.bytes,
                        every: p.every,
                    },
                    _ => step,
                }
            })
            .collect()
    }
}

fn replace(bytes: &[u8], id: &str, seq: &str) -> Vec<u8> {
    if !bytes.contains(&b'$') {
        return bytes.to_vec();
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(b"$ID") {
            out.extend_from_slice(id.as_bytes());
            i += 3;
        } else if bytes[i..].starts_with(b"$SEQ") {
            out.extend_from_slice(seq.as_bytes());
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

fn substitute(step: &Step, id: &str, seq: &str) -> Step {
    match step {
        Step::Send(b) => Step::Send(replace(b, id, seq)),
        Step::Respond {
            status,
            headers,
            body,
        } => Step::Respond {
            status: *status,
            headers: headers
                .iter()
                .map(|(n, v)| {
                    let v = replace(v.as_bytes(), id, seq);
                    (n.clone(), String::from_utf8_lossy(&v).into_owned())
                })
                .collect(),
            body: replace(body, id, seq),
        },
        Step::Chunk(b) => Step::Chunk(replace(b, id, seq)),
        Step::Repeat { bytes, times } => Step::Repeat {
            bytes: replace(bytes, id, seq),
            times: *times,
        },
        Step::Trickle {
            bytes,
            piece,
            every,
        } => Step::Trickle {
            bytes: replace(bytes, id, seq),
            piece: *piece,
            every: *every,
        },
        other => other.clone(),
    }
}

/// The bytes a [`Step::Respond`] or [`Step::Chunk`] writes; other steps write their bytes as is.
pub fn render(step: &Step) -> Option<Vec<u8>> {
    match step {
        Step::Send(b) => Some(b.clone()),
        Step::Respond {
            status,
            headers,
            body,
        } => {
            let mut out = format!("HTTP/1.1 {status} X\r\n");
            for (n, v) in headers {
                out.push_str(&format!("{n}: {v}\r\n"));
            }
            out.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
            let mut out = out.into_bytes();
            out.extend_from_slice(body);
            Some(out)
        }
        Step::Chunk(b) => {
            let mut out = format!("{:x}\r\n", b.len()).into_bytes();
            out.extend_from_slice(b);
            out.extend_from_slice(b"\r\n");
            Some(out)
        }
        _ => None,
    }
}
