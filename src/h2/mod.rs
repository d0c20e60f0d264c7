//! HTTP/2 (RFC 9113) for the core: the frame codec, HPACK, and a sans-IO client connection.
//!
//! Nothing here does I/O or reads a clock: bytes go in ([`ClientConnection::handle_bytes`]),
//! bytes come out ([`ClientConnection::poll_transmit`]), time is an argument, and the response
//! of each stream comes up as [`StreamEvent`]s, each carrying the raw octets it cost.
//!
//! [`mux::H2Socket`](crate::mux::H2Socket) puts it to work, one layer up: it owns one socket's
//! [`ClientConnection`] and runs the exchanges of several [`Connection`](crate::Connection)s
//! (work items) as its streams. Nothing in this module knows the connection.
//!
//! The frame codec and HPACK under the client connection are private. What is public here is
//! the client connection ([`ClientConnection`], [`H2Config`], [`StreamEvent`], [`StreamId`],
//! [`OpenError`]), its errors ([`H2Error`] and the causes it carries, [`Reason`] among them),
//! [`trace`] to read recorded octets, and [`goaway`] for an adapter that closes a socket.
//!
//! # What is bounded, and how
//!
//! Per socket (one [`ClientConnection`]), with the defaults of [`H2Config`]:
//! - every octet the server sends is charged: frames of a stream to that stream's allowance
//!   (the work item's byte budget, passed to [`ClientConnection::open_stream`]), and stream-0
//!   frames and frames for streams already closed or reset to a per-socket ledger of 1 MiB
//!   ([`Budget::H2SocketBytes`](crate::budget::Budget::H2SocketBytes)); its exhaustion sends
//!   GOAWAY(ENHANCE_YOUR_CALM) and fails every stream;
//! - the per-socket ledger and frame counts are rates, not lifetime totals: each is an
//!   allowance that starts full and gets a share back whenever a stream's response completes
//!   (END_STREAM received): the ledger `socket_refill` octets (1/256 of it, 4 KiB) plus the
//!   WINDOW_UPDATE octets it paid for — at most 32 per DATA frame of the request body, and in
//!   all never more than the octets of the WINDOW_UPDATE frames charged to the ledger — each
//!   frame count one frame; never above its figure. So a server's stream-less octets other
//!   than WINDOW_UPDATEs stay within `socket_bytes` + `socket_refill` per stream it completed
//!   (granting tiny windows, which makes us send many DATA frames, earns nothing more), a
//!   server that completes nothing ends at the figure, and one whose chatter stays within the
//!   shares keeps the socket for as long as it serves;
//! - at most one frame is held (9 + 16384 octets; a larger frame is refused from its header);
//! - one header block: raw octets at most `header_block_bytes` (64 KiB), at most 8 CONTINUATION
//!   frames, no other frame in between; decoded list at most 65536 octets and 128 fields, checked
//!   before copying (HPACK);
//! - control output we owe the server (SETTINGS and PING acknowledgements, WINDOW_UPDATE,
//!   RST_STREAM) at most 64 KiB queued and not yet taken by the caller;
//! - at most 32 settings per SETTINGS frame; 100 empty DATA frames, 100 PRIORITY frames and 100
//!   frames of unknown type per socket, each count refilled by one per completed stream;
//! - receive windows: per stream min(256 KiB, what the stream's allowance has left + 1 octet, but
//!   never less than one 16 KiB frame), per connection 2 MiB; windows are reopened only as the
//!   caller takes DATA out ([`ClientConnection::poll_event`]), so undelivered data is bounded by
//!   the windows. The octet past the allowance, and a whole frame, are what let a too-large
//!   response from a server that keeps to the windows (whether it writes what fits or waits for
//!   room for a whole frame) reach the frame that crosses the allowance, refused as
//!   `response_bytes`, instead of waiting for a window until a time budget ends it; at most the
//!   allowance and one frame of DATA is so let through;
//! - streams: at most 1 until the server's SETTINGS arrive, then min(`max_streams`, its
//!   MAX_CONCURRENT_STREAMS), `max_streams` 100 by default (the least RFC 9113 §6.5.2
//!   recommends a server allow);
//! - our SETTINGS must be acknowledged within 10 s of caller time;
//! - streams we reset are remembered, so that the frames the server sent before it saw the
//!   reset are ignored (RFC 9113 §5.1), for 30 s of caller time after the reset and at most the
//!   last 1024 of them (24 KiB); a frame on a stream reset earlier, or on one forgotten at the
//!   cap, is a connection error (STREAM_CLOSED). Ignored frames are still charged to the
//!   per-socket ledger, their header blocks still go through HPACK, and their DATA still counts
//!   against the connection window.

// The codecs are not public API: only the client connection's types, its configuration and
// errors are exported below, and [`trace`] for reading recorded octets. This repository's tests,
// fuzz targets and benchmarks reach the codecs through `internals` (`unstable-internals`).
#[cfg_attr(not(feature = "unstable-internals"), allow(dead_code, unreachable_pub))]
pub(crate) mod client;
#[cfg_attr(not(feature = "unstable-internals"), allow(dead_code, unreachable_pub))]
pub(crate) mod frame;
#[cfg_attr(not(feature = "unstable-internals"), allow(dead_code, unreachable_pub))]
pub(crate) mod hpack;
pub mod trace;

pub use client::{ClientConnection, H2Config, OpenError, StreamEvent, StreamId};
pub use frame::{FrameError, Reason};
pub use hpack::HpackError;

/// The octets of a GOAWAY frame (RFC 9113 §6.8) with no debug data, for an adapter that
/// closes a socket itself: GOAWAY([`Reason::NO_ERROR`]) with last stream id 0 announces a
/// graceful shutdown of a client connection (the client accepts no server-initiated streams).
///
/// ```
/// use mcp_sansio::h2::{goaway, Reason};
///
/// // Length 8, type 0x7, no flags, stream 0; last stream id 0, error code 0.
/// let frame = goaway(0, Reason::NO_ERROR);
/// assert_eq!(frame, [0, 0, 8, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
/// ```
pub fn goaway(last_stream_id: u32, reason: Reason) -> Vec<u8> {
    let mut out = Vec::new();
    frame::Frame::GoAway {
        last_stream_id,
        reason,
        debug: Vec::new(),
    }
    .encode(&mut out);
    out
}

use crate::budget::BudgetExceeded;
use crate::prelude::*;

/// A per-socket count of frames this client caps, named in [`H2Error::Limit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum H2Limit {
    /// Control frames queued for the server and not yet taken by the caller, in octets.
    ControlOutput,
    /// DATA frames with no payload and no END_STREAM.
    EmptyDataFrames,
    /// PRIORITY frames.
    PriorityFrames,
    /// Frames of unknown type.
    UnknownFrames,
    /// CONTINUATION frames in one header block.
    ContinuationFrames,
}

impl H2Limit {
    /// A stable, snake_case name.
    pub const fn name(self) -> &'static str {
        match self {
            H2Limit::ControlOutput => "h2_control_output_bytes",
            H2Limit::EmptyDataFrames => "h2_empty_data_frames",
            H2Limit::PriorityFrames => "h2_priority_frames",
            H2Limit::UnknownFrames => "h2_unknown_frames",
            H2Limit::ContinuationFrames => "h2_continuation_frames",
        }
    }
}

impl core::fmt::Display for H2Limit {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why an HTTP/2 stream or connection failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum H2Error {
    /// A frame could not be decoded.
    #[error("HTTP/2 frame: {0}")]
    Frame(#[from] FrameError),
    /// A header block could not be decoded.
    #[error("HPACK: {0}")]
    Hpack(#[from] HpackError),
    /// A budget was exceeded (the stream's bytes, the socket ledger, a header block, 1xx count).
    #[error(transparent)]
    Budget(#[from] BudgetExceeded),
    /// A per-socket frame cap was reached.
    #[error("HTTP/2 limit exceeded: {limit} (limit {max})")]
    Limit {
        /// Which cap.
        limit: H2Limit,
        /// Its value.
        max: u64,
    },
    /// The server broke the protocol.
    #[error("HTTP/2 protocol error ({reason}): {what}")]
    Protocol {
        /// The error code sent in GOAWAY or RST_STREAM.
        reason: Reason,
        /// What it did.
        what: &'static str,
    },
    /// A response header block is malformed (RFC 9113 §8.1.1).
    #[error("malformed HTTP/2 response: {what}")]
    Malformed {
        /// What is wrong.
        what: &'static str,
    },
    /// The body's length differs from its content-length.
    #[error("content-length {declared} but {received} octets of body")]
    ContentLength {
        /// The declared length.
        declared: u64,
        /// The octets received (so far, when too many).
        received: u64,
    },
    /// The server reset the stream.
    #[error("the server reset the stream: {reason}")]
    Reset {
        /// Its error code.
        reason: Reason,
    },
    /// The server's GOAWAY shows it never processed the stream.
    #[error("the server is going away ({reason}); stream above its last stream {last_stream_id}")]
    GoAway {
        /// The GOAWAY's error code.
        reason: Reason,
        /// The last stream it may have processed.
        last_stream_id: u32,
    },
    /// Our SETTINGS were not acknowledged in time.
    #[error("the server did not acknowledge our SETTINGS within {ms} ms")]
    SettingsTimeout {
        /// The limit, in milliseconds.
        ms: u64,
    },
    /// The connection ended (the server closed it, or it failed earlier) before the stream did.
    #[error("the HTTP/2 connection closed: {what}")]
    Closed {
        /// When.
        what: &'static str,
    },
}

impl H2Error {
    /// The error code to send for it, as a connection or stream error.
    pub fn reason(&self) -> Reason {
        match self {
            H2Error::Frame(e) => e.reason(),
            H2Error::Hpack(e) if e.is_connection_error() => Reason::COMPRESSION_ERROR,
            H2Error::Hpack(_) | H2Error::Budget(_) | H2Error::Limit { .. } => {
                Reason::ENHANCE_YOUR_CALM
            }
            H2Error::Protocol { reason, .. } => *reason,
            H2Error::Malformed { .. } | H2Error::ContentLength { .. } => Reason::PROTOCOL_ERROR,
            H2Error::Reset { reason } | H2Error::GoAway { reason, .. } => *reason,
            H2Error::SettingsTimeout { .. } => Reason::SETTINGS_TIMEOUT,
            H2Error::Closed { .. } => Reason::CANCEL,
        }
    }

    /// Whether the server certainly did not process the request (REFUSED_STREAM, or a GOAWAY
    /// whose last stream id is below it), so it may be retried on a fresh connection.
    pub fn never_processed(&self) -> bool {
        matches!(
            self,
            H2Error::Reset {
                reason: Reason::REFUSED_STREAM
            } | H2Error::GoAway { .. }
        )
    }

    /// The budget this error names, if any.
    pub fn budget(&self) -> Option<BudgetExceeded> {
        match self {
            H2Error::Budget(b) => Some(*b),
            H2Error::Hpack(HpackError::Budget(b)) => Some(*b),
            _ => None,
        }
    }
}
