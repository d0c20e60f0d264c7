//! The HTTP/1.1 catalogue's scenarios answered over HTTP/2: the same [`Server`] answers each
//! request, and what its steps write as an HTTP/1.1 response goes back as HEADERS and DATA frames
//! on the request's stream ([`answer`]), within the client's flow-control windows ([`Windows`]).
//! [`serve`] plays a scenario on a real stream (h2c, prior knowledge) for the adapters' runs;
//! `tests/hostile_h2.rs` uses [`answer`] and [`Windows`] in virtual time.
//!
//! Only responses an HTTP/1.1 parser can read whole translate: a status line, headers, and a body
//! delimited by `content-length` or chunked (decoded; the DATA carries the octets, a
//! `content-length` is kept). A script's [`Step::Wait`] waits, [`Step::Hang`] leaves the stream
//! open and silent, [`Step::Close`] ends the connection. Written in [`Pieces`] (a
//! [`Step::Trickle`] of the server's), the body goes in DATA frames of that many octets with the
//! pause before each; whole, in frames of at most 16,384 octets (the default
//! SETTINGS_MAX_FRAME_SIZE). HTTP/1.1 framing abuse (endless lines, a `Repeat` without end) has no
//! HTTP/2 meaning: the HTTP/2 catalogue (`h2.rs`) covers HTTP/2's own. The task scenarios are
//! played this way.
//!
//! [`Pieces`]: super::script::Pieces
#![allow(dead_code)]

use std::collections::{HashMap, VecDeque};
use std::io::{Read, Write};
use std::sync::Mutex;
use std::time::Duration;

use mcp_sansio::internals::h2::frame::{setting, Frame, Reason};

use super::script::{read_rpc, render, Request, Server, Step};
use crate::h2server::{data, frame, hello, H2Peer, SeenRequest};

/// The largest DATA payload written (the client's SETTINGS_MAX_FRAME_SIZE is at least this).
const MAX_DATA: usize = 16_384;
/// HTTP/2's initial flow-control window.
const DEFAULT_WINDOW: i64 = 65_535;

/// A response read back from what a script writes as HTTP/1.1.
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

/// Parses one whole HTTP/1.1 response (no informational one before it): `None` if `raw` is not
/// one.
fn parse_response(raw: &[u8]) -> Option<Response> {
    let end = super::script::head_end(raw)?;
    let head = std::str::from_utf8(&raw[..end]).ok()?;
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let mut headers = Vec::new();
    let mut chunked = false;
    let mut length = None;
    for line in lines.filter(|l| !l.is_empty()) {
        let (n, v) = line.split_once(':')?;
        let (n, v) = (n.trim().to_ascii_lowercase(), v.trim().to_owned());
        match n.as_str() {
            "transfer-encoding" => chunked = v.eq_ignore_ascii_case("chunked"),
            "connection" | "keep-alive" => {}
            _ => {
                if n == "content-length" {
                    length = Some(v.parse::<usize>().ok()?);
                }
                headers.push((n, v));
            }
        }
    }
    let rest = &raw[end..];
    let body = if chunked {
        let mut body = Vec::new();
        let mut at = rest;
        loop {
            let line_end = at.windows(2).position(|w| w == b"\r\n")?;
            let size =
                usize::from_str_radix(std::str::from_utf8(&at[..line_end]).ok()?, 16).ok()?;
            at = &at[line_end + 2..];
            if size == 0 {
                break;
            }
            body.extend_from_slice(at.get(..size)?);
            at = at.get(size + 2..)?;
        }
        body
    } else {
        rest.get(..length.unwrap_or(rest.len()))?.to_vec()
    };
    Some(Response {
        status,
        headers,
        body,
    })
}

/// The client's flow-control windows as its frames set them (SETTINGS_INITIAL_WINDOW_SIZE,
/// WINDOW_UPDATE), for a server that keeps to them.
#[derive(Debug)]
pub struct Windows {
    initial: i64,
    connection: i64,
    streams: HashMap<u32, i64>,
    seen: usize,
}

impl Default for Windows {
    fn default() -> Self {
        Windows {
            initial: DEFAULT_WINDOW,
            connection: DEFAULT_WINDOW,
            streams: HashMap::new(),
            seen: 0,
        }
    }
}

impl Windows {
    /// Takes in the client's frames not seen yet (`frames` is every frame it sent, in order).
    pub fn observe(&mut self, frames: &[Frame]) {
        for f in frames.get(self.seen..).unwrap_or_default() {
            match f {
                Frame::Settings {
                    ack: false,
                    settings,
                } => {
                    for &(id, v) in settings {
                        if id == setting::INITIAL_WINDOW_SIZE {
                            let delta = i64::from(v) - self.initial;
                            self.initial = i64::from(v);
                            self.streams.values_mut().for_each(|w| *w += delta);
                        }
                    }
                }
                Frame::WindowUpdate {
                    stream_id: 0,
                    increment,
                } => self.connection += i64::from(*increment),
                Frame::WindowUpdate {
                    stream_id,
                    increment,
                } => {
                    *self.streams.entry(*stream_id).or_insert(self.initial) += i64::from(*increment)
                }
                _ => {}
            }
        }
        self.seen = frames.len();
    }

    /// The octets stream `sid` may carry now.
    pub fn room(&mut self, sid: u32) -> i64 {
        let stream = *self.streams.entry(sid).or_insert(self.initial);
        self.connection.min(stream)
    }

    /// Counts `n` octets sent on `sid`.
    pub fn take(&mut self, sid: u32, n: usize) {
        let n = n as i64;
        self.connection -= n;
        *self.streams.entry(sid).or_insert(self.initial) -= n;
    }
}

/// What follows an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Then {
    /// The stream is done (ended, or left open and silent); serve the next request.
    Next,
    /// The script closes the connection.
    Close,
}

/// A request's answer as HTTP/2: the frames that go at once (HEADERS, or RST_STREAM), the body
/// to send as DATA within the windows, and how.
#[derive(Debug)]
pub struct H2Answer {
    /// The stream.
    pub sid: u32,
    /// A wait before anything is written (the script's [`Step::Wait`]s).
    pub wait: Duration,
    /// Frames written at once.
    pub head: Vec<u8>,
    /// The body, for DATA frames (END_STREAM on the last).
    pub body: Vec<u8>,
    /// Octets per DATA frame.
    pub piece: usize,
    /// Pause before each DATA frame.
    pub every: Duration,
    /// What follows.
    pub then: Then,
}

impl H2Answer {
    /// The DATA frame of the body's `i`-th piece, if there is one.
    pub fn data_frame(&self, i: usize) -> Option<Vec<u8>> {
        let count = self.body.len().div_ceil(self.piece);
        let piece = self.body.chunks(self.piece).nth(i)?;
        Some(data(self.sid, piece, i + 1 == count))
    }
}

/// The answer of `server` to `seen` (a request read by `peer`) as HTTP/2 frames.
pub fn answer(server: &mut Server, peer: &mut H2Peer, seen: &SeenRequest) -> H2Answer {
    let mut req = Request {
        http_method: seen.header(":method").unwrap_or("POST").to_owned(),
        headers: seen
            .headers
            .iter()
            .filter(|(n, _)| !n.starts_with(':'))
            .cloned()
            .collect(),
        body: seen.body.clone(),
        ..Request::default()
    };
    read_rpc(&mut req);
    let steps = server.answer(&req);
    let sid = seen.stream;
    let mut out = H2Answer {
        sid,
        wait: Duration::ZERO,
        head: Vec::new(),
        body: Vec::new(),
        piece: MAX_DATA,
        every: Duration::ZERO,
        then: Then::Next,
    };
    let mut raw = Vec::new();
    for step in &steps {
        match step {
            Step::Wait(d) => out.wait += *d,
            Step::Repeat { bytes, times } if *times < 1 << 20 => {
                for _ in 0..*times {
                    raw.extend_from_slice(bytes);
                }
            }
            Step::Trickle {
                bytes,
                piece,
                every,
            } => {
                raw.extend_from_slice(bytes);
                (out.piece, out.every) = ((*piece).clamp(1, MAX_DATA), *every);
            }
            Step::Close => {
                out.then = Then::Close;
                break;
            }
            // Hang, or a Repeat without end: what came before is answered, then silence.
            Step::Hang | Step::Repeat { .. } => break,
            other => raw.extend(render(other).unwrap_or_default()),
        }
    }
    if raw.is_empty() {
        return out;
    }
    let Some(r) = parse_response(&raw) else {
        // Not an HTTP/1.1 response: no HTTP/2 meaning; the stream is reset.
        out.head = frame(Frame::RstStream {
            stream_id: sid,
            reason: Reason::INTERNAL_ERROR,
        });
        return out;
    };
    let status = r.status.to_string();
    let mut fields: Vec<(&str, &str)> = vec![(":status", &status)];
    fields.extend(r.headers.iter().map(|(n, v)| (n.as_str(), v.as_str())));
    out.head = peer.headers(sid, &fields, r.body.is_empty());
    out.body = r.body;
    out
}

/// One connection's state: the peer (frames in, HPACK), the client's flow-control windows and
/// the requests read but not answered yet.
struct Conn<S> {
    stream: S,
    peer: H2Peer,
    windows: Windows,
    queued: VecDeque<SeenRequest>,
}

impl<S: Read + Write> Conn<S> {
    /// Reads once from the client; `false` when it went away (or wrote what no HTTP/2 peer
    /// would).
    fn read_more(&mut self, buf: &mut [u8]) -> bool {
        let n = match self.stream.read(buf) {
            Ok(0) | Err(_) => return false,
            Ok(n) => n,
        };
        let peer = &mut self.peer;
        let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| peer.read(&buf[..n])));
        let Ok(done) = read else { return false };
        self.queued.extend(done);
        self.windows.observe(&self.peer.frames);
        true
    }

    fn write(&mut self, bytes: &[u8]) -> bool {
        self.stream
            .write_all(bytes)
            .and_then(|_| self.stream.flush())
            .is_ok()
    }

    /// Answers `seen` with the server's steps for it: `false` when the connection ends.
    fn answer(&mut self, server: &Mutex<Server>, seen: SeenRequest, buf: &mut [u8]) -> bool {
        let a = {
            let mut server = server.lock().unwrap_or_else(|e| e.into_inner());
            answer(&mut server, &mut self.peer, &seen)
        };
        if !a.wait.is_zero() {
            std::thread::sleep(a.wait);
        }
        if !a.head.is_empty() && !self.write(&a.head) {
            return false;
        }
        let mut i = 0;
        while let Some(data) = a.data_frame(i) {
            let need = data.len() - FRAME_HEADER;
            while self.windows.room(a.sid) < need as i64 {
                if !self.read_more(buf) {
                    return false;
                }
            }
            self.windows.take(a.sid, need);
            if !a.every.is_zero() {
                std::thread::sleep(a.every);
            }
            if !self.write(&data) {
                return false;
            }
            i += 1;
        }
        a.then == Then::Next
    }
}

/// The length of a frame's header.
pub const FRAME_HEADER: usize = 9;

/// Serves requests on `stream` (HTTP/2 with prior knowledge) until the client closes it or a
/// script closes it: the server's SETTINGS first, then each request answered by the next
/// matching rule of `server`, shared by every stream of a scenario.
pub fn serve<S: Read + Write>(server: &Mutex<Server>, stream: S) {
    let mut c = Conn {
        stream,
        peer: H2Peer::default(),
        windows: Windows::default(),
        queued: VecDeque::new(),
    };
    if !c.write(&hello()) {
        return;
    }
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        while let Some(seen) = c.queued.pop_front() {
            if !c.answer(server, seen, &mut buf) {
                return;
            }
        }
        if !c.read_more(&mut buf) {
            return;
        }
    }
}
