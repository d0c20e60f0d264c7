//! HTTP/2 sessions in transcripts: the socket-level record of one work item on one or more
//! [`H2Socket`]s, its redaction, its recorder and the comparison of what the core wrote.
//!
//! An HTTP/2 session is recorded at the socket level, as the core saw it: every socket opened
//! (numbered 1, 2, …), every piece of bytes the core wrote ([`H2Socket::poll_transmit`]) and read
//! (one `handle_bytes` call each, with its instant), end of stream, transport failures,
//! timeouts, the operations started and the events drained. `docs/transcripts.md` describes the
//! text form; [`replay()`](crate::replay()) replays it through a fresh [`H2Socket`].
//!
//! # How to hook it into a driver
//!
//! A driver that runs one work item on an [`H2Socket`] (and moves it to a fresh socket when
//! [`H2Socket::poll_fresh`] asks for one) holds an [`H2Recorder`] next to the socket and makes
//! these calls, each with the very instant it gives the core:
//!
//! ```text
//! let h2 = H2Config::from_budgets(&config.budgets);
//! let mut rec = H2Recorder::new(&config, &h2, scheme, now);   // before Connection::with_codec
//! let mut socket = H2Socket::new(now, h2.clone(), scheme);
//! rec.socket_opened(now);                                     // right after H2Socket::new
//! rec.operation(now, RecordedOperation::Connect);            // next to conn.connect(now), etc.
//! // every Some(bytes) from socket.poll_transmit(now):       rec.wrote(now, &bytes);
//! //   (also the bytes a driver drops while a fresh socket is dialled: the core wrote them)
//! // every read of the socket fed to socket.handle_bytes:    rec.read(now, &buf[..n]);
//! // socket.handle_eof after the server closed it:           rec.eof(now);
//! // the socket failed (the driver then calls handle_eof):   rec.failure(now, &error);
//! // socket.handle_timeout(now):                             rec.timeout(now);
//! // every (work, event) from socket.poll_event(now):        rec.event(&event);
//! // a fresh socket is open and the work item moved to it
//! //   (H2Socket::new, remove, add, resend):                 rec.socket_opened(now);
//! // the fresh socket could not be opened (each pending
//! //   request failed with handle_transport_error):          rec.dial_error(now, &error);
//! let text = rec.take_text();                                 // or rec.finish().to_text()
//! ```
//!
//! After every input the driver drains the socket's outputs (`poll_transmit`, `poll_fresh`,
//! `poll_event`) until none is left, as a replay does; `adapters/net`'s `pump_h2` does exactly
//! that. The recorder is pure and `Send`: a vector that grows, and a redactor per socket.
//!
//! # Redaction
//!
//! `Authorization` travels inside an HPACK block: the core's encoder never indexes and never
//! Huffman-codes, and sends it as a never-indexed literal. The recorder rewrites every header
//! block the client wrote ([`H2WriteRedactor`]): the value of `authorization`, of any literal
//! marked never-indexed, and of any field whose name is Huffman-coded becomes `Bearer <redacted>`
//! (a bearer credential) or `<redacted>`; the query of `:path` is redacted like an HTTP/1.1
//! request target ([`redact_url`]). The block is then framed again (one HEADERS frame, followed
//! by CONTINUATION frames if it is longer than 16384 octets, with the same END_STREAM flag and
//! no padding or priority), so the recorded frames stay valid HTTP/2 whose lengths are those of
//! the redacted block. A replay redacts what its own core wrote with the same rule before it
//! compares, so the comparison is exact on every byte except the secret values.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use mcp_sansio::internals::h2::client::PREFACE;
use mcp_sansio::internals::h2::frame::{flag, kind, Reason};
use mcp_sansio::internals::h2::hpack::{DecodeLimits, Decoder};
use mcp_sansio::internals::h2::H2Config;
#[cfg(doc)]
use mcp_sansio::internals::h2::H2Socket;
use mcp_sansio::{Budgets, Config, Event, Instant, TransportError};

use crate::model::{Record, RecordedOperation, Transcript};
use crate::recorder::Recorder;
use crate::redact::redact_url;
use crate::REDACTED;

/// How an HTTP/2 session was set up: the `:scheme` of its requests and its socket limits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct H2Setup {
    /// `https` (ALPN `h2`), or `http` for HTTP/2 with prior knowledge.
    pub scheme: String,
    /// The limits of every socket of the session.
    pub config: H2Config,
}

impl H2Setup {
    /// The setup of a session whose sockets are made with `config` and `scheme`.
    pub fn new(scheme: &str, config: &H2Config) -> H2Setup {
        H2Setup {
            scheme: scheme.to_owned(),
            config: config.clone(),
        }
    }
}

/// (name, get, set) of an [`H2Config`] field in `config h2 NAME VALUE` lines.
pub(crate) type H2Field = (&'static str, fn(&H2Config) -> u64, fn(&mut H2Config, u64));

fn sat32(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

fn satz(v: u64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

/// Every field of [`H2Config`], by its transcript name.
pub(crate) const H2_FIELDS: [H2Field; 14] = [
    (
        "socket_bytes",
        |c| c.socket_bytes,
        |c, v| c.socket_bytes = v,
    ),
    (
        "control_output_bytes",
        |c| c.control_output_bytes as u64,
        |c, v| c.control_output_bytes = satz(v),
    ),
    (
        "max_streams",
        |c| u64::from(c.max_streams),
        |c, v| c.max_streams = sat32(v),
    ),
    (
        "connection_window",
        |c| u64::from(c.connection_window),
        |c, v| c.connection_window = sat32(v),
    ),
    (
        "max_stream_window",
        |c| u64::from(c.max_stream_window),
        |c, v| c.max_stream_window = sat32(v),
    ),
    (
        "header_block_bytes",
        |c| c.header_block_bytes as u64,
        |c, v| c.header_block_bytes = satz(v),
    ),
    (
        "max_continuations",
        |c| u64::from(c.max_continuations),
        |c, v| c.max_continuations = sat32(v),
    ),
    (
        "header_list_bytes",
        |c| c.header_list.max_list_bytes as u64,
        |c, v| c.header_list.max_list_bytes = satz(v),
    ),
    (
        "header_list_fields",
        |c| c.header_list.max_fields as u64,
        |c, v| c.header_list.max_fields = satz(v),
    ),
    (
        "empty_data_frames",
        |c| u64::from(c.empty_data_frames),
        |c, v| c.empty_data_frames = sat32(v),
    ),
    (
        "priority_frames",
        |c| u64::from(c.priority_frames),
        |c, v| c.priority_frames = sat32(v),
    ),
    (
        "unknown_frames",
        |c| u64::from(c.unknown_frames),
        |c, v| c.unknown_frames = sat32(v),
    ),
    (
        "informational_responses",
        |c| u64::from(c.informational_responses),
        |c, v| c.informational_responses = sat32(v),
    ),
    (
        "settings_timeout_ms",
        |c| u64::try_from(c.settings_timeout.as_millis()).unwrap_or(u64::MAX),
        |c, v| c.settings_timeout = Duration::from_millis(v),
    ),
];

/// The `config h2` lines of `setup`: the fields that differ from
/// [`H2Config::from_budgets`]`(budgets)`.
pub(crate) fn h2_overrides(setup: &H2Setup, budgets: &Budgets) -> Vec<(&'static str, u64)> {
    let base = H2Config::from_budgets(budgets);
    H2_FIELDS
        .iter()
        .filter(|(_, get, _)| get(&setup.config) != get(&base))
        .map(|(name, get, _)| (*name, get(&setup.config)))
        .collect()
}

// ----- the frame layout, read without the core's decoder (which refuses what it must) -----

/// A frame header: (type, flags, stream id, payload length).
fn header(b: &[u8]) -> Option<(u8, u8, u32, usize)> {
    if b.len() < 9 {
        return None;
    }
    let len = (usize::from(b[0]) << 16) | (usize::from(b[1]) << 8) | usize::from(b[2]);
    let sid = u32::from_be_bytes([b[5], b[6], b[7], b[8]]) & 0x7fff_ffff;
    Some((b[3], b[4], sid, len))
}

fn push_header(out: &mut Vec<u8>, ty: u8, flags: u8, sid: u32, len: usize) {
    let len = len as u32;
    out.extend_from_slice(&len.to_be_bytes()[1..]);
    out.push(ty);
    out.push(flags);
    out.extend_from_slice(&sid.to_be_bytes());
}

/// The header block fragment of a HEADERS or CONTINUATION payload (padding and priority
/// removed), or `None` if they do not fit.
fn fragment(ty: u8, flags: u8, payload: &[u8]) -> Option<&[u8]> {
    if ty != kind::HEADERS {
        return Some(payload);
    }
    let mut p = payload;
    let mut pad = 0;
    if flags & flag::PADDED != 0 {
        pad = usize::from(*p.first()?);
        p = &p[1..];
    }
    if flags & flag::PRIORITY != 0 {
        p = p.get(5..)?;
    }
    p.get(..p.len().checked_sub(pad)?)
}

/// An HPACK integer with an `n`-bit prefix at the start of `b`: (value, octets), at most 5
/// octets after the first.
fn read_int(b: &[u8], n: u8) -> Option<(u64, usize)> {
    let max = (1u64 << n) - 1;
    let mut v = u64::from(*b.first()?) & max;
    if v < max {
        return Some((v, 1));
    }
    for i in 1..=5 {
        let byte = *b.get(i)?;
        v += u64::from(byte & 0x7f) << (7 * (i - 1));
        if byte & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

fn write_int(out: &mut Vec<u8>, first: u8, n: u8, mut v: u64) {
    let max = (1u64 << n) - 1;
    if v < max {
        out.push(first | v as u8);
        return;
    }
    out.push(first | max as u8);
    v -= max;
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// An HPACK string at the start of `b`: (Huffman-coded, raw octets, octets taken).
fn read_str(b: &[u8]) -> Option<(bool, &[u8], usize)> {
    let huffman = *b.first()? & 0x80 != 0;
    let (len, n) = read_int(b, 7)?;
    let end = n.checked_add(usize::try_from(len).ok()?)?;
    Some((huffman, b.get(n..end)?, end))
}

fn write_str(out: &mut Vec<u8>, s: &[u8]) {
    write_int(out, 0, 7, s.len() as u64);
    out.extend_from_slice(s);
}

/// Static table indexes whose name matters here: `:path` (4, 5) and `authorization` (23).
const PATH_INDEXES: [u64; 2] = [4, 5];
const AUTHORIZATION_INDEX: u64 = 23;

/// A header block with its secrets redacted (see the [module](self) docs). Representations
/// are copied octet for octet; only the values of secret fields change. A block that cannot be
/// walked is cut where the walk stopped, so nothing after it can leak.
pub fn redact_header_block(block: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(block.len());
    let mut i = 0;
    while i < block.len() {
        let b = &block[i..];
        let first = b[0];
        if first & 0x80 != 0 || first & 0xe0 == 0x20 {
            // Indexed field, or dynamic table size update: no literal value.
            let prefix = if first & 0x80 != 0 { 7 } else { 5 };
            let Some((_, n)) = read_int(b, prefix) else {
                break;
            };
            out.extend_from_slice(&b[..n]);
            i += n;
            continue;
        }
        let (prefix, never) = if first & 0xc0 == 0x40 {
            (6, false)
        } else {
            (4, first & 0x10 != 0)
        };
        let Some((index, mut n)) = read_int(b, prefix) else {
            break;
        };
        let (secret, path) = if index == 0 {
            let Some((huffman, name, taken)) = read_str(&b[n..]) else {
                break;
            };
            n += taken;
            (
                never || huffman || name.eq_ignore_ascii_case(b"authorization"),
                !huffman && name == b":path",
            )
        } else {
            (
                never || index == AUTHORIZATION_INDEX,
                PATH_INDEXES.contains(&index),
            )
        };
        let Some((huffman, value, taken)) = read_str(&b[n..]) else {
            break;
        };
        out.extend_from_slice(&b[..n]);
        if secret {
            let bearer =
                !huffman && value.len() >= 7 && value[..7].eq_ignore_ascii_case(b"bearer ");
            let mut v = Vec::new();
            if bearer {
                v.extend_from_slice(&value[..7]);
            }
            v.extend_from_slice(REDACTED.as_bytes());
            write_str(&mut out, &v);
        } else if path && !huffman {
            let v = redact_url(&String::from_utf8_lossy(value));
            write_str(&mut out, v.as_bytes());
        } else {
            out.extend_from_slice(&b[n..n + taken]);
        }
        i += n + taken;
    }
    out
}

/// Redacts what a client wrote on one HTTP/2 socket, as it goes: the connection preface and
/// every frame are kept, except header blocks (HEADERS and their CONTINUATIONs), which are
/// redacted ([`redact_header_block`]) and framed again. Bytes of a frame or header block not
/// yet complete are held until the next [`push`](Self::push) ([`H2Socket`] writes whole frames,
/// so nothing is held for it).
///
/// [`H2Socket`]: mcp_sansio::internals::h2::H2Socket
#[derive(Clone, Debug)]
pub struct H2WriteRedactor {
    preface_left: usize,
    held: Vec<u8>,
}

impl Default for H2WriteRedactor {
    fn default() -> Self {
        H2WriteRedactor {
            preface_left: PREFACE.len(),
            held: Vec::new(),
        }
    }
}

impl H2WriteRedactor {
    /// A redactor for a new socket (whose first octets are the connection preface).
    pub fn new() -> Self {
        H2WriteRedactor::default()
    }

    /// Octets held, waiting for the rest of their frame or header block.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// The redacted form of everything complete so far.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<u8> {
        self.held.extend_from_slice(bytes);
        let held = std::mem::take(&mut self.held);
        let mut out = Vec::with_capacity(held.len());
        let mut i = 0;
        if self.preface_left > 0 {
            let n = self.preface_left.min(held.len());
            out.extend_from_slice(&held[..n]);
            self.preface_left -= n;
            i = n;
        }
        while let Some((ty, flags, sid, len)) = header(&held[i..]) {
            let end = i + 9 + len;
            if end > held.len() {
                break;
            }
            if ty != kind::HEADERS {
                out.extend_from_slice(&held[i..end]);
                i = end;
                continue;
            }
            // The block: this HEADERS and the CONTINUATIONs up to END_HEADERS.
            let mut block = fragment(ty, flags, &held[i + 9..end])
                .unwrap_or_default()
                .to_vec();
            let mut j = end;
            let mut ended = flags & flag::END_HEADERS != 0;
            while !ended {
                match header(&held[j..]) {
                    Some((kind::CONTINUATION, f, s, l)) if s == sid => {
                        if j + 9 + l > held.len() {
                            break;
                        }
                        block.extend_from_slice(&held[j + 9..j + 9 + l]);
                        ended = f & flag::END_HEADERS != 0;
                        j += 9 + l;
                    }
                    // Another frame inside a block (the core never writes one): the block ends.
                    Some(_) => ended = true,
                    None => break,
                }
            }
            if !ended {
                break; // the rest of the block comes with the next write
            }
            frame_block(
                &mut out,
                sid,
                flags & flag::END_STREAM,
                &redact_header_block(&block),
            );
            i = j;
        }
        self.held = held[i..].to_vec();
        out
    }
}

/// Writes a header block as HEADERS (+ CONTINUATION) frames of at most 16384 octets.
fn frame_block(out: &mut Vec<u8>, sid: u32, end_stream: u8, block: &[u8]) {
    const MAX: usize = 16384;
    let mut pieces = block.chunks(MAX).peekable();
    let first = pieces.next().unwrap_or(&[]);
    let last = pieces.peek().is_none();
    let end_headers = if last { flag::END_HEADERS } else { 0 };
    push_header(
        out,
        kind::HEADERS,
        end_stream | end_headers,
        sid,
        first.len(),
    );
    out.extend_from_slice(first);
    while let Some(p) = pieces.next() {
        let end_headers = if pieces.peek().is_none() {
            flag::END_HEADERS
        } else {
            0
        };
        push_header(out, kind::CONTINUATION, end_headers, sid, p.len());
        out.extend_from_slice(p);
    }
}

/// What a client wrote on one socket, as compared: the octets before the first frame (the
/// preface), every complete frame grouped by stream in order (stream 0 being the
/// connection's), and the octets of an incomplete last frame.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct H2Writes {
    /// The connection preface (or whatever came before the first frame).
    pub preface: Vec<u8>,
    /// Each stream's frames, raw (header and payload), in the order written.
    pub streams: BTreeMap<u32, Vec<Vec<u8>>>,
    /// Octets of an incomplete frame at the end.
    pub trailing: Vec<u8>,
}

impl H2Writes {
    /// Splits what was written on a socket (redacted, concatenated).
    pub fn split(bytes: &[u8]) -> H2Writes {
        let n = PREFACE.len().min(bytes.len());
        let mut w = H2Writes {
            preface: bytes[..n].to_vec(),
            ..H2Writes::default()
        };
        let mut i = n;
        while let Some((_, _, sid, len)) = header(&bytes[i..]) {
            if i + 9 + len > bytes.len() {
                break;
            }
            w.streams
                .entry(sid)
                .or_default()
                .push(bytes[i..i + 9 + len].to_vec());
            i += 9 + len;
        }
        w.trailing = bytes[i..].to_vec();
        w
    }
}

// ----- the recorder -----

/// Records an HTTP/2 session: one work item on one or more sockets. Pure, `Send`, never fails;
/// see the [module](self) docs for the calls a driver makes.
#[derive(Clone, Debug)]
pub struct H2Recorder {
    inner: Recorder,
    socket: u64,
    redactor: H2WriteRedactor,
}

impl H2Recorder {
    /// A recorder for a session made with `config` whose sockets are made with `h2` and
    /// `scheme`, with its timeline starting at `start`. Call
    /// [`socket_opened`](Self::socket_opened) for its first socket.
    pub fn new(config: &Config, h2: &H2Config, scheme: &str, start: Instant) -> H2Recorder {
        let mut inner = Recorder::new(config, start);
        inner.transcript.config.http2 = Some(H2Setup::new(scheme, h2));
        H2Recorder {
            inner,
            socket: 0,
            redactor: H2WriteRedactor::new(),
        }
    }

    /// Adds a comment line to the transcript.
    pub fn comment(&mut self, text: &str) {
        self.inner.comment(text);
    }

    /// The number of the socket in use (0 before the first is opened).
    pub fn socket(&self) -> u64 {
        self.socket
    }

    /// A socket was opened at `now` and the work item is now on it (the first socket, or a
    /// fresh one that replaces the previous). Returns its number.
    pub fn socket_opened(&mut self, now: Instant) -> u64 {
        self.socket += 1;
        self.redactor = H2WriteRedactor::new();
        self.inner.push(
            Some(now),
            Record::H2Open {
                socket: self.socket,
            },
        );
        self.socket
    }

    /// An operation was started at `now`.
    pub fn operation(&mut self, now: Instant, operation: RecordedOperation) {
        self.inner.operation(now, operation);
    }

    /// The core wrote `bytes` on the current socket at `now` (recorded redacted).
    pub fn wrote(&mut self, now: Instant, bytes: &[u8]) {
        let bytes = self.redactor.push(bytes);
        if !bytes.is_empty() {
            let socket = self.socket;
            self.inner
                .push(Some(now), Record::H2Write { socket, bytes });
        }
    }

    /// `bytes` read from the current socket were fed to it at `now`, in one call.
    pub fn read(&mut self, now: Instant, bytes: &[u8]) {
        let socket = self.socket;
        let bytes = bytes.to_vec();
        self.inner.push(Some(now), Record::H2Read { socket, bytes });
    }

    /// The server closed the current socket at `now`.
    pub fn eof(&mut self, now: Instant) {
        let socket = self.socket;
        self.inner.push(Some(now), Record::H2Eof { socket });
    }

    /// The current socket failed at `now`.
    pub fn failure(&mut self, now: Instant, error: &TransportError) {
        let record = Record::H2Failure {
            socket: self.socket,
            kind: error.kind,
            message: error.message.clone(),
        };
        self.inner.push(Some(now), record);
    }

    /// The fresh socket asked for could not be opened (found out at `now`).
    pub fn dial_error(&mut self, now: Instant, error: &TransportError) {
        let record = Record::H2DialError {
            kind: error.kind,
            message: error.message.clone(),
        };
        self.inner.push(Some(now), record);
    }

    /// `handle_timeout` was called at `now`.
    pub fn timeout(&mut self, now: Instant) {
        self.inner.timeout(now);
    }

    /// An event was drained.
    pub fn event(&mut self, event: &Event) {
        self.inner.event(event);
    }

    /// The transcript so far.
    pub fn transcript(&self) -> &Transcript {
        self.inner.transcript()
    }

    /// The text recorded since the last call, as [`Recorder::take_text`].
    pub fn take_text(&mut self) -> String {
        self.inner.take_text()
    }

    /// Ends the recording.
    pub fn finish(self) -> Transcript {
        self.inner.finish()
    }
}

// ----- annotations: a comment per frame in the text form -----

/// Writes `# …` lines describing the frames of the `write` and `read` blocks of a transcript.
/// Keeps, per socket and direction, where the next frame starts and the HPACK state, so frames
/// split across entries are described once, where their header completes.
#[derive(Clone, Debug, Default)]
pub(crate) struct Annotator {
    walks: BTreeMap<(u64, bool), Walk>,
}

#[derive(Clone, Debug)]
struct Walk {
    preface_left: usize,
    head: Vec<u8>,
    /// (type, flags, stream, payload octets left) of the frame being read.
    frame: Option<(u8, u8, u32, usize)>,
    payload: Vec<u8>,
    block: Vec<u8>,
    hpack: Decoder,
}

/// One piece of a block: bytes starting a new line, or a comment.
pub(crate) enum Piece<'a> {
    Bytes(&'a [u8]),
    Note(String),
}

impl Annotator {
    /// A socket was opened: its walks start again.
    pub(crate) fn opened(&mut self, socket: u64) {
        self.walks.remove(&(socket, true));
        self.walks.remove(&(socket, false));
    }

    /// Cuts `bytes` at frame starts and adds a note for every frame whose header completes.
    pub(crate) fn pieces<'a>(
        &mut self,
        socket: u64,
        wrote: bool,
        bytes: &'a [u8],
    ) -> Vec<Piece<'a>> {
        let walk = self.walks.entry((socket, wrote)).or_insert_with(|| Walk {
            preface_left: if wrote { PREFACE.len() } else { 0 },
            head: Vec::new(),
            frame: None,
            payload: Vec::new(),
            block: Vec::new(),
            hpack: Decoder::new(DecodeLimits {
                max_list_bytes: 1 << 20,
                max_fields: 4096,
            }),
        });
        let mut out = Vec::new();
        let mut i = 0;
        let mut start = 0;
        if walk.preface_left > 0 {
            let n = walk.preface_left.min(bytes.len());
            walk.preface_left -= n;
            out.push(Piece::Note("preface".into()));
            out.push(Piece::Bytes(&bytes[..n]));
            i = n;
            start = n;
        }
        while i < bytes.len() {
            if walk.frame.is_none() {
                if walk.head.is_empty() && i > start {
                    out.push(Piece::Bytes(&bytes[start..i]));
                    start = i;
                }
                let take = (9 - walk.head.len()).min(bytes.len() - i);
                walk.head.extend_from_slice(&bytes[i..i + take]);
                i += take;
                if let Some((ty, flags, sid, len)) = header(&walk.head) {
                    walk.head.clear();
                    out.push(Piece::Note(describe(ty, flags, sid, len)));
                    walk.frame = Some((ty, flags, sid, len));
                    walk.payload.clear();
                }
            }
            if let Some((ty, flags, sid, left)) = walk.frame {
                let take = left.min(bytes.len() - i);
                if walk.payload.len() < 1 << 16 {
                    walk.payload.extend_from_slice(&bytes[i..i + take]);
                }
                i += take;
                walk.frame = Some((ty, flags, sid, left - take));
                if left == take {
                    walk.frame = None;
                    if i > start {
                        out.push(Piece::Bytes(&bytes[start..i]));
                        start = i;
                    }
                    let payload = std::mem::take(&mut walk.payload);
                    for note in walk.finish(ty, flags, &payload) {
                        out.push(Piece::Note(note));
                    }
                }
            }
        }
        if i > start {
            out.push(Piece::Bytes(&bytes[start..i]));
        }
        out
    }
}

impl Walk {
    /// Notes after a complete frame: its settings, increment, error code, or header fields.
    fn finish(&mut self, ty: u8, flags: u8, payload: &[u8]) -> Vec<String> {
        let mut notes = Vec::new();
        match ty {
            kind::SETTINGS if flags & flag::ACK == 0 => {
                if payload.is_empty() {
                    return notes;
                }
                let mut s = String::from("  settings:");
                for c in payload.chunks_exact(6) {
                    let id = u16::from_be_bytes([c[0], c[1]]);
                    let v = u32::from_be_bytes([c[2], c[3], c[4], c[5]]);
                    let _ = write!(s, " {}={v}", setting_name(id));
                }
                notes.push(s);
            }
            kind::WINDOW_UPDATE if payload.len() == 4 => {
                let v = u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]);
                notes.push(format!("  increment {}", v & 0x7fff_ffff));
            }
            kind::RST_STREAM if payload.len() == 4 => {
                let v = u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]);
                notes.push(format!("  {}", Reason(v)));
            }
            kind::GOAWAY if payload.len() >= 8 => {
                let last = u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]);
                let v = u32::from_be_bytes([payload[4], payload[5], payload[6], payload[7]]);
                notes.push(format!(
                    "  last stream {}, {}",
                    last & 0x7fff_ffff,
                    Reason(v)
                ));
            }
            kind::HEADERS | kind::CONTINUATION => {
                if ty == kind::HEADERS {
                    self.block.clear();
                }
                if let Some(f) = fragment(ty, flags, payload) {
                    if self.block.len() < 1 << 20 {
                        self.block.extend_from_slice(f);
                    }
                }
                if flags & flag::END_HEADERS != 0 {
                    let block = std::mem::take(&mut self.block);
                    match self.hpack.decode_block(&block) {
                        Ok(fields) => {
                            for h in fields {
                                notes.push(format!(
                                    "  {}: {}",
                                    String::from_utf8_lossy(&h.name),
                                    String::from_utf8_lossy(&h.value)
                                ));
                            }
                        }
                        Err(e) => notes.push(format!("  (HPACK: {e})")),
                    }
                }
            }
            _ => {}
        }
        notes
    }
}

fn setting_name(id: u16) -> String {
    match id {
        1 => "HEADER_TABLE_SIZE".into(),
        2 => "ENABLE_PUSH".into(),
        3 => "MAX_CONCURRENT_STREAMS".into(),
        4 => "INITIAL_WINDOW_SIZE".into(),
        5 => "MAX_FRAME_SIZE".into(),
        6 => "MAX_HEADER_LIST_SIZE".into(),
        other => format!("0x{other:x}"),
    }
}

/// `TYPE stream S [FLAGS] length L`.
fn describe(ty: u8, flags: u8, sid: u32, len: usize) -> String {
    let name = match ty {
        kind::DATA => "DATA".to_owned(),
        kind::HEADERS => "HEADERS".into(),
        kind::PRIORITY => "PRIORITY".into(),
        kind::RST_STREAM => "RST_STREAM".into(),
        kind::SETTINGS => "SETTINGS".into(),
        kind::PUSH_PROMISE => "PUSH_PROMISE".into(),
        kind::PING => "PING".into(),
        kind::GOAWAY => "GOAWAY".into(),
        kind::WINDOW_UPDATE => "WINDOW_UPDATE".into(),
        kind::CONTINUATION => "CONTINUATION".into(),
        other => format!("type 0x{other:02x}"),
    };
    let mut names = Vec::new();
    let named: &[(u8, &str)] = match ty {
        kind::DATA => &[(flag::END_STREAM, "END_STREAM"), (flag::PADDED, "PADDED")],
        kind::HEADERS => &[
            (flag::END_STREAM, "END_STREAM"),
            (flag::END_HEADERS, "END_HEADERS"),
            (flag::PADDED, "PADDED"),
            (flag::PRIORITY, "PRIORITY"),
        ],
        kind::SETTINGS | kind::PING => &[(flag::ACK, "ACK")],
        kind::CONTINUATION | kind::PUSH_PROMISE => &[(flag::END_HEADERS, "END_HEADERS")],
        _ => &[],
    };
    let mut rest = flags;
    for (bit, n) in named {
        if flags & bit != 0 {
            names.push((*n).to_owned());
            rest &= !bit;
        }
    }
    if rest != 0 {
        names.push(format!("0x{rest:02x}"));
    }
    let flags = if names.is_empty() {
        String::new()
    } else {
        format!(" {}", names.join("|"))
    };
    format!("{name} stream {sid}{flags} length {len}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_sansio::internals::h2::hpack::Encoder;

    fn block(fields: &[(&str, &str)]) -> Vec<u8> {
        let mut out = Vec::new();
        Encoder::new().encode(
            fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())),
            &mut out,
        );
        out
    }

    fn decoded(block: &[u8]) -> Vec<(String, String)> {
        Decoder::new(DecodeLimits::default())
            .decode_block(block)
            .unwrap()
            .into_iter()
            .map(|h| {
                (
                    String::from_utf8(h.name).unwrap(),
                    String::from_utf8(h.value).unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn authorization_and_secret_query_values_are_redacted_in_a_block() {
        let b = block(&[
            (":method", "POST"),
            (":path", "/mcp?api_key=k123&x=1"),
            ("authorization", "Bearer s3cr3t-token"),
            ("content-type", "application/json"),
        ]);
        let r = redact_header_block(&b);
        assert!(!r.windows(6).any(|w| w == b"s3cr3t"));
        assert!(!r.windows(4).any(|w| w == b"k123"));
        assert_eq!(
            decoded(&r),
            [
                (":method".to_owned(), "POST".to_owned()),
                (":path".into(), "/mcp?api_key=<redacted>&x=1".into()),
                ("authorization".into(), "Bearer <redacted>".into()),
                ("content-type".into(), "application/json".into()),
            ]
        );
        // A block without secrets is kept octet for octet.
        let plain = block(&[(":method", "GET"), ("accept", "text/event-stream")]);
        assert_eq!(redact_header_block(&plain), plain);
        // A non-bearer credential loses its scheme too.
        let basic = redact_header_block(&block(&[("authorization", "Basic dXNlcjpwYXNz")]));
        assert_eq!(decoded(&basic)[0].1, "<redacted>");
    }

    #[test]
    fn a_literal_authorization_name_and_a_truncated_block_do_not_leak() {
        // Literal name (index 0), without indexing.
        let mut b = vec![0x00];
        write_str(&mut b, b"Authorization");
        write_str(&mut b, b"Bearer abcdef");
        let r = redact_header_block(&b);
        assert!(!r.windows(6).any(|w| w == b"abcdef"));
        // A value cut short: the walk stops and nothing after the name is kept.
        let mut cut = vec![0x1f, 0x08];
        cut.push(40);
        cut.extend_from_slice(b"Bearer xyz");
        let r = redact_header_block(&cut);
        assert!(!r.windows(3).any(|w| w == b"xyz"));
    }

    fn headers_frame(sid: u32, end_stream: bool, block: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let f = flag::END_HEADERS | if end_stream { flag::END_STREAM } else { 0 };
        push_header(&mut out, kind::HEADERS, f, sid, block.len());
        out.extend_from_slice(block);
        out
    }

    #[test]
    fn the_write_redactor_reframes_and_holds_partial_frames_in_any_split() {
        let b = block(&[(":path", "/mcp"), ("authorization", "Bearer tok-123456")]);
        let mut wire = PREFACE.to_vec();
        push_header(&mut wire, kind::SETTINGS, 0, 0, 0);
        wire.extend(headers_frame(1, false, &b));
        push_header(&mut wire, kind::DATA, flag::END_STREAM, 1, 2);
        wire.extend_from_slice(b"{}");
        let whole = H2WriteRedactor::new().push(&wire);
        assert!(!whole.windows(6).any(|w| w == b"123456"));
        let w = H2Writes::split(&whole);
        assert_eq!(w.preface, PREFACE);
        assert!(w.trailing.is_empty());
        assert_eq!(w.streams[&0].len(), 1);
        assert_eq!(w.streams[&1].len(), 2);
        // The redacted HEADERS is a valid frame whose length is its block's.
        let h = &w.streams[&1][0];
        let (ty, flags, sid, len) = header(h).unwrap();
        assert_eq!((ty, sid, len + 9), (kind::HEADERS, 1, h.len()));
        assert_eq!(flags, flag::END_HEADERS);
        assert_eq!(decoded(&h[9..])[1].1, "Bearer <redacted>");
        for size in [1, 2, 3, 7, 64] {
            let mut r = H2WriteRedactor::new();
            let mut got = Vec::new();
            for piece in wire.chunks(size) {
                got.extend(r.push(piece));
            }
            assert_eq!(got, whole, "pieces of {size}");
            assert_eq!(r.held(), 0);
        }
    }

    #[test]
    fn a_block_split_over_continuations_is_redacted_whole() {
        let b = block(&[("authorization", "Bearer abcdefghijkl")]);
        let (a, rest) = b.split_at(5);
        let mut wire = PREFACE.to_vec();
        push_header(&mut wire, kind::HEADERS, flag::END_STREAM, 3, a.len());
        wire.extend_from_slice(a);
        push_header(
            &mut wire,
            kind::CONTINUATION,
            flag::END_HEADERS,
            3,
            rest.len(),
        );
        wire.extend_from_slice(rest);
        let mut r = H2WriteRedactor::new();
        let first = r.push(&wire[..wire.len() - 3]);
        assert_eq!(first, PREFACE, "the block waits for its end");
        let out = [first, r.push(&wire[wire.len() - 3..])].concat();
        assert!(!out.windows(6).any(|w| w == b"efghij"));
        let w = H2Writes::split(&out);
        let frames = &w.streams[&3];
        assert_eq!(frames.len(), 1, "framed again as one HEADERS");
        assert_eq!(frames[0][4], flag::END_STREAM | flag::END_HEADERS);
    }

    #[test]
    fn annotations_describe_frames_split_across_entries() {
        let mut wire = Vec::new();
        push_header(&mut wire, kind::SETTINGS, 0, 0, 6);
        wire.extend_from_slice(&[0, 3, 0, 0, 0, 4]);
        wire.extend(headers_frame(1, true, &block(&[(":status", "200")])));
        push_header(&mut wire, kind::RST_STREAM, 0, 1, 4);
        wire.extend_from_slice(&8u32.to_be_bytes());
        for size in [1, 3, 4, 7, wire.len()] {
            let mut a = Annotator::default();
            let mut notes = Vec::new();
            let mut bytes = Vec::new();
            for piece in wire.chunks(size) {
                for p in a.pieces(1, false, piece) {
                    match p {
                        Piece::Note(n) => notes.push(n),
                        Piece::Bytes(b) => bytes.extend_from_slice(b),
                    }
                }
            }
            assert_eq!(bytes, wire, "every byte is written once, in order");
            assert_eq!(
                notes,
                [
                    "SETTINGS stream 0 length 6",
                    "  settings: MAX_CONCURRENT_STREAMS=4",
                    "HEADERS stream 1 END_STREAM|END_HEADERS length 2",
                    "  :status: 200",
                    "RST_STREAM stream 1 length 4",
                    "  CANCEL (0x8)",
                ],
                "pieces of {size}"
            );
        }
    }
}
