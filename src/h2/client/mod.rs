//! The HTTP/2 client connection: one per socket, many streams, every received octet charged.
//!
//! # The run loop
//!
//! [`ClientConnection::new`] queues the preface, our SETTINGS and the connection window's
//! WINDOW_UPDATE. Then, as with the rest of the core: drain [`ClientConnection::poll_transmit`]
//! (bytes to write) and [`ClientConnection::poll_event`] (per-stream response events), feed what
//! the socket brings to [`ClientConnection::handle_bytes`], its end to
//! [`ClientConnection::handle_eof`], and call [`ClientConnection::handle_timeout`] at
//! [`ClientConnection::poll_timeout`]. A stream starts with [`ClientConnection::open_stream`] when
//! [`ClientConnection::can_open`] says a slot is free, and is cancelled with
//! [`ClientConnection::cancel`] (RST_STREAM(CANCEL); the socket stays open).
//!
//! # Errors
//!
//! A stream error fails one stream ([`StreamEvent::Failed`], RST_STREAM sent); a connection
//! error fails every stream, sends GOAWAY, and is returned by the input that caused it and by
//! [`ClientConnection::error`]. Either names its cause or budget ([`H2Error`]).
use crate::prelude::*;

use alloc::collections::VecDeque;
use core::time::Duration;

use super::frame::{setting, Decoded, Frame, FrameDecoder, Reason, MAX_FRAME_SIZE};
use super::hpack::{DecodeLimits, Decoder, Encoder, Header};
use super::{H2Error, H2Limit};
use crate::budget::{Budget, BudgetExceeded, Budgets, ByteLedger};
use crate::endpoint::Scheme;
use crate::time::Instant;
use crate::wire::Request;

mod config;
mod frames;
mod life;
use self::frames::*;
use self::life::Life;

pub use self::config::H2Config;

/// The client connection preface (RFC 9113 §3.4).
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// The initial flow-control window of every stream and of the connection (RFC 9113 §6.9.2).
pub const DEFAULT_WINDOW: u32 = 65_535;
const MAX_WINDOW: i64 = (1 << 31) - 1;
/// How long, in caller time, a stream we reset is remembered so that its late frames are
/// ignored: 30 s.
///
/// RFC 9113 §5.1 ("closed"): after sending RST_STREAM an endpoint MUST ignore the frames it then
/// receives on that stream, which the peer may have sent before the reset reached it; it MAY
/// limit the period over which it ignores them and treat later frames as an error. The period is
/// a matter of time, not of how many streams were reset since. A late frame was written before
/// our RST_STREAM reached the server, so it comes within about one round trip plus what was
/// queued ahead of it on the socket. The connection measures no round trip; the longest it
/// tolerates by default is the SETTINGS acknowledgement's, 10 s ([`H2Config::settings_timeout`]),
/// and this is three times that. A frame on a stream reset longer ago is a connection error
/// (STREAM_CLOSED), as for any closed stream.
///
/// The age of a reset counts from the first instant the connection is given at or after it
/// ([`ClientConnection::handle_bytes`], [`ClientConnection::handle_timeout`]): the reset itself
/// may come with no time ([`ClientConnection::cancel`]), and so no stream is forgotten sooner
/// than this after its reset, only possibly later.
pub const RESET_GRACE: Duration = Duration::from_secs(30);
/// How many reset streams are remembered at most: 1024 (24 octets each, 24 KiB in all). At the
/// cap the oldest is forgotten, before its [`RESET_GRACE`] ends: a late frame on it is then a
/// connection error (STREAM_CLOSED), as for any closed stream. Only streams we opened and reset
/// enter the memory, so a server fills it no faster than we open streams.
pub const RESET_MEMORY: usize = 1024;
/// Octets of the socket's allowance a completed stream may give back per DATA frame of its
/// request body, for the WINDOW_UPDATEs (13 octets each, stream and connection) a server sends
/// for that frame: at most this, and never more than the WINDOW_UPDATE octets the socket's
/// allowance was actually charged and not yet given back (see [`H2Config::socket_refill`]).
pub const WINDOW_UPDATE_CREDIT: u64 = 32;
/// The share of `socket_bytes` a completed stream gives back by default (1/256: 4 KiB of 1 MiB).
pub const SOCKET_REFILL_SHARE: u64 = 256;

/// A stream of this connection (an odd id, chosen here).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StreamId(pub u32);

/// What a stream's response brought, in order. `raw` is the octets of every frame charged to the
/// stream since its previous event (frame headers, padding, HPACK blocks, WINDOW_UPDATE…).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamEvent {
    /// A 1xx response (not 101, which is refused).
    Informational {
        /// The stream.
        stream: StreamId,
        /// The status.
        status: u16,
        /// Raw octets charged.
        raw: u64,
    },
    /// The final response head.
    Head {
        /// The stream.
        stream: StreamId,
        /// The status.
        status: u16,
        /// The regular header fields.
        headers: Vec<Header>,
        /// Raw octets charged.
        raw: u64,
    },
    /// Body octets.
    Data {
        /// The stream.
        stream: StreamId,
        /// The octets (padding removed).
        data: Vec<u8>,
        /// Raw octets charged.
        raw: u64,
    },
    /// The response ended (END_STREAM), with its trailers if any.
    End {
        /// The stream.
        stream: StreamId,
        /// Trailer fields.
        trailers: Vec<Header>,
        /// Raw octets charged.
        raw: u64,
    },
    /// The stream failed; no more events come for it.
    Failed {
        /// The stream.
        stream: StreamId,
        /// Why.
        error: H2Error,
        /// Raw octets charged.
        raw: u64,
    },
}

impl StreamEvent {
    /// The stream the event belongs to.
    pub fn stream(&self) -> StreamId {
        event_stream(self)
    }

    /// The raw octets charged to the stream since its previous event.
    pub fn raw(&self) -> u64 {
        match self {
            StreamEvent::Informational { raw, .. }
            | StreamEvent::Head { raw, .. }
            | StreamEvent::Data { raw, .. }
            | StreamEvent::End { raw, .. }
            | StreamEvent::Failed { raw, .. } => *raw,
        }
    }
}

/// Why a stream could not be opened.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// Every stream slot is taken (see [`ClientConnection::can_open`]).
    #[error("no HTTP/2 stream slot is free ({max} in use)")]
    NoSlot {
        /// The current limit.
        max: u32,
    },
    /// The connection is going away or failed: open a new one.
    #[error("the HTTP/2 connection accepts no new streams")]
    NotAccepting,
    /// A header name is uppercase, empty, a pseudo-header, or connection-specific, or a value
    /// holds CR, LF or NUL.
    #[error("request header {name:?} cannot be sent over HTTP/2")]
    InvalidHeader {
        /// The name.
        name: String,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    AwaitingHead,
    Body,
}

#[derive(Debug)]
struct Stream {
    id: u32,
    ledger: ByteLedger,
    raw: u64,
    phase: Phase,
    informational: u32,
    content_length: Option<u64>,
    no_body_expected: bool,
    received: u64,
    // Receive flow control: credit the server has, and the octets delivered but not re-granted.
    recv_window: i64,
    undelivered: usize,
    // Send flow control.
    send_window: i64,
    body: Vec<u8>,
    body_sent: usize,
    /// DATA frames of the request body written.
    data_frames_sent: u64,
    local_closed: bool,
}

impl Stream {
    /// The receive window this stream should have (the DATA octets the server may still send,
    /// with those received and not yet taken): what its allowance has left plus one octet, but
    /// never less than one whole frame ([`MAX_FRAME_SIZE`]), and at most `max`.
    ///
    /// The allowance counts every raw octet (frame headers, HEADERS, padding), the window only
    /// DATA payload. One octet past the allowance lets the octet that exceeds it arrive, to be
    /// refused as [`Budget::ResponseBytes`]: a window of exactly what is left would let a server
    /// spend the allowance to the octet and then wait for a window that never opens. One whole
    /// frame lets a server that writes a DATA frame only once the window has room for all of it
    /// write its next frame, which exceeds an allowance of less than a frame: a smaller window
    /// would leave it waiting. Either way the response ends on the allowance, at the frame that
    /// crosses it, never on a deadline. The windows so let through at most the allowance and one
    /// frame (16 KiB) of DATA in all, the octets of a frame the decoder holds anyway.
    fn target_window(&self, max: u32) -> i64 {
        let want = self
            .ledger
            .remaining()
            .saturating_add(1)
            .max(MAX_FRAME_SIZE as u64);
        want.min(u64::from(max)) as i64
    }
}

/// A stream we reset (RST_STREAM sent), remembered for [`RESET_GRACE`] so that its late frames
/// are ignored.
#[derive(Clone, Copy, Debug)]
struct Reset {
    id: u32,
    /// The first instant the connection was given at or after the reset; `None` until then.
    since: Option<Instant>,
}

/// The header block being assembled.
#[derive(Debug)]
struct Assembly {
    stream_id: u32,
    continuations: u32,
    raw: usize,
    end_stream: bool,
    /// Part of a PUSH_PROMISE (refused when complete… or at once: see `on_frame`).
    target: Target,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    /// An active stream.
    Stream,
    /// A stream whose frames are ignored (closed, reset): decoded to keep HPACK in step.
    Ignored,
}

/// A per-socket allowance that refills with useful work: it starts full at `capacity`, each
/// charge takes from it, each completed stream gives some back (never above `capacity`). A
/// charge larger than what is left fails and leaves it empty.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Allowance {
    capacity: u64,
    left: u64,
}

impl Allowance {
    const fn full(capacity: u64) -> Self {
        Allowance {
            capacity,
            left: capacity,
        }
    }

    fn take(&mut self, n: u64) -> bool {
        match self.left.checked_sub(n) {
            Some(left) => {
                self.left = left;
                true
            }
            None => {
                self.left = 0;
                false
            }
        }
    }

    fn refill(&mut self, n: u64) {
        self.left = self.left.saturating_add(n).min(self.capacity);
    }
}

/// A sans-IO HTTP/2 client connection. See the module docs.
///
/// Its `Debug` output shows its state and allowances, never the octets queued for the server
/// (HPACK literals of `authorization`, request bodies) nor the header tables.
pub struct ClientConnection {
    config: H2Config,
    frames: FrameDecoder,
    decoder: Decoder,
    encoder: Encoder,
    out: Vec<u8>,
    control_queued: usize,
    events: VecDeque<StreamEvent>,
    /// The open streams, in the order they opened; boxed, so that a stream ending among a hundred
    /// moves the pointers after it, not the streams.
    #[allow(clippy::vec_box)] // Boxed on purpose: see above.
    streams: Vec<Box<Stream>>,
    next_stream_id: u32,
    /// Streams we reset, oldest first: at most [`RESET_MEMORY`], none older than [`RESET_GRACE`]
    /// (as of the last instant given).
    reset: VecDeque<Reset>,
    /// Octets no stream owns: what is left of the socket's allowance, and all ever charged.
    socket: Allowance,
    socket_charged: u64,
    /// Octets of WINDOW_UPDATE frames charged to `socket` and not yet given back by a
    /// completed stream's window credit: the most that credit may give back.
    window_updates_owed: u64,
    assembly: Option<Assembly>,
    life: Life,
    // Server settings.
    peer_max_streams: u32,
    peer_initial_window: i64,
    peer_max_frame: usize,
    // Our SETTINGS awaiting their ACK.
    settings_deadline: Option<Instant>,
    // Connection flow control.
    conn_recv_window: i64,
    conn_send_window: i64,
    /// DATA octets queued in events, not yet taken by the caller.
    conn_undelivered: usize,
    // Frame allowances.
    empty_data: Allowance,
    priority_frames: Allowance,
    unknown_frames: Allowance,
}

impl core::fmt::Debug for ClientConnection {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ClientConnection")
            .field("config", &self.config)
            .field("streams", &self.streams.len())
            .field("next_stream_id", &self.next_stream_id)
            .field("reset_remembered", &self.reset.len())
            .field("out_len", &self.out.len())
            .field("events", &self.events.len())
            .field("socket", &self.socket)
            .field("socket_charged", &self.socket_charged)
            .field("window_updates_owed", &self.window_updates_owed)
            .field("life", &self.life)
            .field("peer_max_streams", &self.peer_max_streams)
            .field("peer_initial_window", &self.peer_initial_window)
            .field("conn_recv_window", &self.conn_recv_window)
            .field("conn_send_window", &self.conn_send_window)
            .finish_non_exhaustive()
    }
}

impl ClientConnection {
    /// A new connection at `now`: the preface, our SETTINGS (ENABLE_PUSH=0,
    /// MAX_HEADER_LIST_SIZE) and the connection window's WINDOW_UPDATE are queued for writing.
    pub fn new(now: Instant, config: H2Config) -> Self {
        let mut out = PREFACE.to_vec();
        Frame::Settings {
            ack: false,
            settings: vec![
                (setting::ENABLE_PUSH, 0),
                (
                    setting::MAX_HEADER_LIST_SIZE,
                    u32::try_from(config.header_list.max_list_bytes).unwrap_or(u32::MAX),
                ),
            ],
        }
        .encode(&mut out);
        let conn_window = i64::from(
            config
                .connection_window
                .clamp(DEFAULT_WINDOW, MAX_WINDOW as u32),
        );
        if conn_window > i64::from(DEFAULT_WINDOW) {
            Frame::WindowUpdate {
                stream_id: 0,
                increment: (conn_window - i64::from(DEFAULT_WINDOW)) as u32,
            }
            .encode(&mut out);
        }
        ClientConnection {
            decoder: Decoder::new(config.header_list),
            settings_deadline: Some(now + config.settings_timeout),
            socket: Allowance::full(config.socket_bytes),
            socket_charged: 0,
            window_updates_owed: 0,
            empty_data: Allowance::full(config.empty_data_frames.into()),
            priority_frames: Allowance::full(config.priority_frames.into()),
            unknown_frames: Allowance::full(config.unknown_frames.into()),
            config,
            frames: FrameDecoder::new(),
            encoder: Encoder::new(),
            out,
            control_queued: 0,
            events: VecDeque::new(),
            streams: Vec::new(),
            next_stream_id: 1,
            reset: VecDeque::new(),
            assembly: None,
            life: Life::Handshake,
            peer_max_streams: u32::MAX,
            peer_initial_window: i64::from(DEFAULT_WINDOW),
            peer_max_frame: MAX_FRAME_SIZE,
            conn_recv_window: conn_window,
            conn_send_window: i64::from(DEFAULT_WINDOW),
            conn_undelivered: 0,
        }
    }

    /// Streams allowed at once now: 1 until the server's SETTINGS arrive, then
    /// min(`max_streams`, its MAX_CONCURRENT_STREAMS).
    pub fn max_streams(&self) -> u32 {
        if self.life.settled() {
            self.config.max_streams.min(self.peer_max_streams)
        } else {
            1
        }
    }

    /// Streams open now.
    pub fn open_streams(&self) -> usize {
        self.streams.len()
    }

    /// Whether [`open_stream`](Self::open_stream) would succeed now (slot free, not going away).
    pub fn can_open(&self) -> bool {
        self.accepting() && (self.streams.len() as u64) < u64::from(self.max_streams())
    }

    fn accepting(&self) -> bool {
        matches!(self.life, Life::Handshake | Life::Open) && self.next_stream_id < (1 << 31)
    }

    /// The connection error, once there is one: no stream can be opened after it.
    pub fn error(&self) -> Option<&H2Error> {
        self.life.error()
    }

    /// The server's GOAWAY, if one arrived: (last stream id, error code).
    pub fn goaway(&self) -> Option<(u32, Reason)> {
        self.life.goaway()
    }

    /// Raw octets charged to the per-socket ledger so far, in all (refills do not lower it).
    pub fn socket_bytes_used(&self) -> u64 {
        self.socket_charged
    }

    /// What the per-socket ledger has left now: at most `socket_bytes`, lowered by every octet
    /// no stream owns, raised by every stream that completes.
    pub fn socket_bytes_left(&self) -> u64 {
        self.socket.left
    }

    /// Opens a stream for the wire-neutral `request`, with `:scheme` `scheme` (`https`, or `http`
    /// for HTTP/2 with prior knowledge). Header names are sent lowercased, as HTTP/2 requires.
    /// `allowance` is what the work item's byte budget has left: every frame of the stream is
    /// charged against it, and its receive window is sized from it: what it has left plus one
    /// octet, never less than one whole frame (16 KiB), at most `max_stream_window`. A response
    /// larger than the allowance so always reaches the frame that crosses it, and the stream
    /// fails with [`Budget::ResponseBytes`], even from a server that waits for room for a whole
    /// frame.
    pub fn open_stream(
        &mut self,
        scheme: Scheme,
        request: &Request,
        allowance: u64,
    ) -> Result<StreamId, OpenError> {
        if !self.accepting() {
            return Err(OpenError::NotAccepting);
        }
        if !self.can_open() {
            return Err(OpenError::NoSlot {
                max: self.max_streams(),
            });
        }
        let headers: Vec<(String, &str)> = request
            .headers
            .iter()
            .map(|(n, v)| (n.to_ascii_lowercase(), v.as_str()))
            .collect();
        for (name, value) in &headers {
            let bad_name = name.is_empty()
                || name.starts_with(':')
                || name.bytes().any(|b| !is_token_lower(b))
                || is_connection_specific(name.as_bytes(), value.as_bytes());
            let bad_value = value.bytes().any(|b| matches!(b, b'\r' | b'\n' | 0));
            if bad_name || bad_value {
                return Err(OpenError::InvalidHeader { name: name.clone() });
            }
        }
        for (name, v) in [(":authority", &request.authority), (":path", &request.path)] {
            if v.is_empty() || v.bytes().any(|b| b <= b' ' || b == 0x7f) {
                return Err(OpenError::InvalidHeader { name: name.into() });
            }
        }
        let id = self.next_stream_id;
        self.next_stream_id += 2;
        let mut block = Vec::new();
        let pseudo = [
            (&b":method"[..], request.method.as_str().as_bytes()),
            (b":scheme", scheme.as_str().as_bytes()),
            (b":authority", request.authority.as_bytes()),
            (b":path", request.path.as_bytes()),
        ];
        let regular = headers.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes()));
        self.encoder
            .encode(pseudo.into_iter().chain(regular), &mut block);
        let end_stream = request.body.is_empty();
        let mut chunks = block
            .chunks(self.peer_max_frame.min(MAX_FRAME_SIZE))
            .peekable();
        let first = chunks.next().unwrap_or(&[]);
        Frame::Headers {
            stream_id: id,
            end_stream,
            end_headers: chunks.peek().is_none(),
            priority: None,
            fragment: first.to_vec(),
            pad_len: None,
        }
        .encode(&mut self.out);
        while let Some(c) = chunks.next() {
            Frame::Continuation {
                stream_id: id,
                end_headers: chunks.peek().is_none(),
                fragment: c.to_vec(),
            }
            .encode(&mut self.out);
        }
        let mut stream = Stream {
            id,
            ledger: ByteLedger::new(allowance),
            raw: 0,
            phase: Phase::AwaitingHead,
            informational: 0,
            content_length: None,
            no_body_expected: false,
            received: 0,
            recv_window: i64::from(DEFAULT_WINDOW),
            undelivered: 0,
            send_window: self.peer_initial_window,
            body: request.body.clone(),
            body_sent: 0,
            data_frames_sent: 0,
            local_closed: end_stream,
        };
        let target = stream.target_window(self.config.max_stream_window);
        if target > stream.recv_window {
            Frame::WindowUpdate {
                stream_id: id,
                increment: (target - stream.recv_window) as u32,
            }
            .encode(&mut self.out);
            stream.recv_window = target;
        }
        self.streams.push(Box::new(stream));
        self.flush_bodies();
        Ok(StreamId(id))
    }

    /// Cancels a stream: RST_STREAM(CANCEL) is sent and no more events come for it. The
    /// connection stays open, and the frames the server sent before it saw the reset are
    /// ignored when they come (see [`handle_bytes`](Self::handle_bytes)): the reset is dated
    /// by the next instant the connection is given. Unknown or finished streams are ignored.
    pub fn cancel(&mut self, stream: StreamId) {
        if let Some(i) = self.find(stream.0) {
            let s = self.streams.remove(i);
            self.remember_reset(s.id);
            if !self.life.failed() {
                Frame::RstStream {
                    stream_id: s.id,
                    reason: Reason::CANCEL,
                }
                .encode(&mut self.out);
            }
            let mut dropped = 0;
            self.events.retain(|e| match e {
                StreamEvent::Data {
                    stream: s, data, ..
                } if *s == stream => {
                    dropped += data.len();
                    false
                }
                e => event_stream(e) != stream,
            });
            self.conn_undelivered -= dropped;
            self.release(None);
        }
    }

    /// Bytes to write to the socket, if any. Taking them frees the control-output allowance.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        self.control_queued = 0;
        if self.out.is_empty() {
            None
        } else {
            Some(core::mem::take(&mut self.out))
        }
    }

    /// The next stream event. Taking a [`StreamEvent::Data`] reopens the windows it used.
    pub fn poll_event(&mut self) -> Option<StreamEvent> {
        let ev = self.events.pop_front()?;
        if let StreamEvent::Data { stream, data, .. } = &ev {
            self.conn_undelivered -= data.len();
            if let Some(i) = self.find(stream.0) {
                self.streams[i].undelivered -= data.len();
            }
            self.release(Some(stream.0));
        }
        Some(ev)
    }

    /// When [`handle_timeout`](Self::handle_timeout) must be called next, if ever.
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.life.failed() {
            None
        } else {
            self.settings_deadline
        }
    }

    /// Time passed: fails the connection if our SETTINGS are still unacknowledged. Streams reset
    /// more than 30 s before `now` are forgotten (see [`handle_bytes`](Self::handle_bytes)).
    pub fn handle_timeout(&mut self, now: Instant) -> Result<(), H2Error> {
        if let Some(e) = self.life.error() {
            return Err(e.clone());
        }
        self.age_resets(now);
        match self.settings_deadline {
            Some(d) if now >= d => {
                let ms = self.config.settings_timeout.as_millis() as u64;
                Err(self.fail(H2Error::SettingsTimeout { ms }))
            }
            _ => Ok(()),
        }
    }

    /// The server closed the socket: every open stream fails.
    pub fn handle_eof(&mut self) {
        let what = if self.frames.buffered() > 0 || self.assembly.is_some() {
            "the socket ended inside a frame"
        } else {
            "the server closed the socket"
        };
        let err = H2Error::Closed { what };
        self.fail_all(&err);
        self.life.fail(err);
    }

    /// Bytes from the socket, in any split, at `now`. On a connection error, GOAWAY is queued,
    /// every stream fails, and the error is returned (now and for every later input).
    ///
    /// Frames on a stream we reset (cancelled, failed, or answered before its request body
    /// was sent) are ignored for 30 s of caller time after the reset (`RESET_GRACE`, RFC 9113
    /// §5.1), for the last 1024 resets at most (`RESET_MEMORY`): a header block still goes
    /// through HPACK, DATA still counts against the connection window (reopened with
    /// WINDOW_UPDATE, RFC 9113 §6.9), and every octet is charged to the socket's allowance.
    /// Later, or for an older reset, such a frame is a connection error (STREAM_CLOSED).
    pub fn handle_bytes(&mut self, now: Instant, mut bytes: &[u8]) -> Result<(), H2Error> {
        if let Some(e) = self.life.error() {
            return Err(e.clone());
        }
        self.age_resets(now);
        while !bytes.is_empty() {
            let decoded = match self.frames.decode(&mut bytes) {
                Ok(Some(d)) => d,
                Ok(None) => break,
                Err(e) => return Err(self.fail(e.into())),
            };
            if let Err(e) = self.on_frame(decoded) {
                return Err(self.fail(e));
            }
        }
        Ok(())
    }

    // ----- internals -----

    fn find(&self, id: u32) -> Option<usize> {
        self.streams.iter().position(|s| s.id == id)
    }

    /// Remembers a stream we reset; at [`RESET_MEMORY`] the oldest is forgotten. Its age starts
    /// at the next instant the connection is given ([`age_resets`](Self::age_resets)).
    fn remember_reset(&mut self, id: u32) {
        if self.reset.len() >= RESET_MEMORY {
            self.reset.pop_front();
        }
        self.reset.push_back(Reset { id, since: None });
    }

    /// The connection is given `now`: resets not yet dated get it, and those more than
    /// [`RESET_GRACE`] before it are forgotten. Dates go in order of reset, so with the caller's
    /// time moving forward the oldest are at the front.
    fn age_resets(&mut self, now: Instant) {
        for r in self.reset.iter_mut().rev() {
            if r.since.is_some() {
                break;
            }
            r.since = Some(now);
        }
        while let Some(Reset { since: Some(t), .. }) = self.reset.front() {
            if now.saturating_since(*t) <= RESET_GRACE {
                break;
            }
            self.reset.pop_front();
        }
    }

    /// Whether `id` is a stream we reset and still remember.
    fn was_reset(&self, id: u32) -> bool {
        self.reset.iter().any(|r| r.id == id)
    }

    /// A connection error: GOAWAY, every stream failed, the error kept.
    fn fail(&mut self, err: H2Error) -> H2Error {
        if !self.life.failed() {
            Frame::GoAway {
                last_stream_id: 0,
                reason: err.reason(),
                debug: Vec::new(),
            }
            .encode(&mut self.out);
            self.fail_all(&err);
            self.life.fail(err.clone());
        }
        err
    }

    fn fail_all(&mut self, err: &H2Error) {
        for s in core::mem::take(&mut self.streams) {
            self.events.push_back(StreamEvent::Failed {
                stream: StreamId(s.id),
                error: err.clone(),
                raw: s.raw,
            });
        }
    }

    /// A stream error: RST_STREAM sent, the stream failed.
    fn fail_stream(&mut self, i: usize, err: H2Error, reason: Reason) -> Result<(), H2Error> {
        let s = self.streams.remove(i);
        self.remember_reset(s.id);
        self.queue_control(Frame::RstStream {
            stream_id: s.id,
            reason,
        })?;
        self.events.push_back(StreamEvent::Failed {
            stream: StreamId(s.id),
            error: err,
            raw: s.raw,
        });
        Ok(())
    }

    fn queue_control(&mut self, frame: Frame) -> Result<(), H2Error> {
        let before = self.out.len();
        frame.encode(&mut self.out);
        self.control_queued += self.out.len() - before;
        if self.control_queued > self.config.control_output_bytes {
            return Err(H2Error::Limit {
                limit: H2Limit::ControlOutput,
                max: self.config.control_output_bytes as u64,
            });
        }
        Ok(())
    }

    fn charge_socket(&mut self, n: usize) -> Result<(), H2Error> {
        let before = self.socket.left;
        if self.socket.take(n as u64) {
            self.socket_charged = self.socket_charged.saturating_add(n as u64);
            Ok(())
        } else {
            // The charge that crosses empties the allowance: what it had left counts as used.
            self.socket_charged = self.socket_charged.saturating_add(before);
            Err(H2Error::Budget(self.config.exceeded(Budget::H2SocketBytes)))
        }
    }

    /// A stream completed (its response ended): the socket's allowances get their share back.
    fn refill(&mut self, data_frames_sent: u64) {
        // The window credit gives back WINDOW_UPDATE octets the allowance paid, no more: it
        // cannot grow the allowance beyond what the server spent (whatever its windows).
        let credit = data_frames_sent
            .saturating_mul(WINDOW_UPDATE_CREDIT)
            .min(self.window_updates_owed);
        self.window_updates_owed -= credit;
        self.socket
            .refill(self.config.socket_refill.saturating_add(credit));
        self.empty_data.refill(1);
        self.priority_frames.refill(1);
        self.unknown_frames.refill(1);
    }

    /// Charges a frame to stream `i`: `Ok(false)` if its allowance is spent (the stream failed).
    fn charge_stream(&mut self, i: usize, n: usize) -> Result<bool, H2Error> {
        let s = &mut self.streams[i];
        match s.ledger.charge(n) {
            Ok(()) => {
                s.raw += n as u64;
                Ok(true)
            }
            Err(b) => {
                s.raw += n as u64;
                self.fail_stream(i, H2Error::Budget(b), Reason::CANCEL)?;
                Ok(false)
            }
        }
    }

    fn count(allowance: &mut Allowance, limit: H2Limit) -> Result<(), H2Error> {
        if allowance.take(1) {
            Ok(())
        } else {
            Err(H2Error::Limit {
                limit,
                max: allowance.capacity,
            })
        }
    }

    fn protocol(what: &'static str) -> H2Error {
        H2Error::Protocol {
            reason: Reason::PROTOCOL_ERROR,
            what,
        }
    }

    /// Whether `id` names a stream we opened (odd, below the next id).
    fn is_ours(&self, id: u32) -> bool {
        id % 2 == 1 && id < self.next_stream_id
    }

    /// Reopens the windows for octets the caller took (or that were discarded: padding, frames
    /// of failed streams). Octets still queued in events are not re-granted, so what waits for
    /// the caller stays within the windows. A window is reopened once half of it is free, and a
    /// stream's window also whenever it is below one whole frame and may grow.
    fn release(&mut self, stream: Option<u32>) {
        if self.life.failed() {
            return;
        }
        let conn_target = i64::from(
            self.config
                .connection_window
                .clamp(DEFAULT_WINDOW, MAX_WINDOW as u32),
        );
        let inc = conn_target - self.conn_recv_window - self.conn_undelivered as i64;
        if inc > 0 && inc >= conn_target / 2 {
            self.conn_recv_window += inc;
            // Window updates replace octets the caller took: they are not server-driven, so they
            // are not counted against the control-output allowance.
            Frame::WindowUpdate {
                stream_id: 0,
                increment: inc as u32,
            }
            .encode(&mut self.out);
        }
        let max = self.config.max_stream_window;
        if let Some(i) = stream.and_then(|id| self.find(id)) {
            let s = &mut self.streams[i];
            let target = s.target_window(max);
            let inc = target - s.recv_window - s.undelivered as i64;
            // Also reopened, however little, while the window is below one whole frame: a
            // server waiting for room for a whole frame must get it (see `target_window`).
            if inc > 0 && (inc >= target / 2 || s.recv_window < MAX_FRAME_SIZE as i64) {
                s.recv_window += inc;
                Frame::WindowUpdate {
                    stream_id: s.id,
                    increment: inc as u32,
                }
                .encode(&mut self.out);
            }
        }
    }

    /// Sends request body octets as far as the windows allow.
    fn flush_bodies(&mut self) {
        if self.life.failed() {
            return;
        }
        let max_frame = self.peer_max_frame.min(MAX_FRAME_SIZE);
        for s in &mut self.streams {
            while !s.local_closed {
                let left = s.body.len() - s.body_sent;
                let room = s.send_window.min(self.conn_send_window).max(0) as usize;
                let n = left.min(room).min(max_frame);
                if n == 0 && left > 0 {
                    break;
                }
                let end = n == left;
                Frame::Data {
                    stream_id: s.id,
                    end_stream: end,
                    data: s.body[s.body_sent..s.body_sent + n].to_vec(),
                    pad_len: None,
                }
                .encode(&mut self.out);
                s.body_sent += n;
                s.data_frames_sent += 1;
                s.send_window -= n as i64;
                self.conn_send_window -= n as i64;
                if end {
                    s.local_closed = true;
                    s.body = Vec::new();
                }
            }
        }
    }
}
