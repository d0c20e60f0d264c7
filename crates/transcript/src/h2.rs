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
//! let mut rec = H2Recorder::new(&config, &h2, scheme, now);   // before Connection::new
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
//! //   request failed with Input::TransportError):          rec.dial_error(now, &error);
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
//! request target ([`redact::url`](mcp_sansio::auth::redact::url)). The block is then framed again (one HEADERS frame, followed
//! by CONTINUATION frames if it is longer than 16384 octets, with the same END_STREAM flag and
//! no padding or priority), so the recorded frames stay valid HTTP/2 whose lengths are those of
//! the redacted block. A replay redacts what its own core wrote with the same rule before it
//! compares, so the comparison is exact on every byte except the secret values.

mod annotate;
mod redact;

use std::collections::BTreeMap;
use std::time::Duration;

use mcp_sansio::h2::trace::PREFACE;
use mcp_sansio::h2::H2Config;
#[cfg(doc)]
use mcp_sansio::mux::H2Socket;
use mcp_sansio::{Budgets, Config, Event, Instant, TransportError};

use crate::model::{Record, RecordedOperation, Transcript};
use crate::recorder::Recorder;
use redact::header;

pub(crate) use annotate::{Annotator, Piece};
pub use redact::{redact_header_block, H2WriteRedactor};

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
pub(crate) const H2_FIELDS: [H2Field; 15] = [
    (
        "socket_bytes",
        |c| c.socket_bytes,
        |c, v| c.socket_bytes = v,
    ),
    (
        "socket_refill",
        |c| c.socket_refill,
        |c, v| c.socket_refill = v,
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
