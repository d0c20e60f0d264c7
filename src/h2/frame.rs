//! HTTP/2 frames (RFC 9113 §4, §6): an incremental decoder and the serializer.
//!
//! # What is bounded, and how
//!
//! A frame's length is read from its 9-octet header and checked against the maximum frame size
//! (16384, the default of `SETTINGS_MAX_FRAME_SIZE`, which this client never raises) before any
//! of its payload is kept: the decoder holds at most one frame, 9 + 16384 octets. Lengths fixed
//! by the frame type (PING 8, WINDOW_UPDATE 4, RST_STREAM 4, PRIORITY 5, SETTINGS a multiple of
//! 6, GOAWAY at least 8), padding, and stream ids that must or must not be 0 are checked as the
//! frame completes; a SETTINGS frame holding more than [`MAX_SETTINGS_PER_FRAME`] settings is
//! refused. Every decoded frame reports its raw size (9 + payload, padding included) so the
//! layer above can charge it. Input may be split anywhere: one octet at a time gives the same
//! frames as the whole.
use crate::prelude::*;

/// The length of a frame header.
pub const HEADER_LEN: usize = 9;
/// The largest frame payload accepted (and sent).
pub const MAX_FRAME_SIZE: usize = 16384;
/// The most settings one SETTINGS frame may carry.
pub const MAX_SETTINGS_PER_FRAME: usize = 32;

/// An HTTP/2 error code (RFC 9113 §7); unknown codes are kept as they are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reason(pub u32);

impl Reason {
    /// Graceful shutdown.
    pub const NO_ERROR: Reason = Reason(0x0);
    /// Protocol error detected.
    pub const PROTOCOL_ERROR: Reason = Reason(0x1);
    /// Implementation fault.
    pub const INTERNAL_ERROR: Reason = Reason(0x2);
    /// Flow-control limits exceeded.
    pub const FLOW_CONTROL_ERROR: Reason = Reason(0x3);
    /// Settings not acknowledged.
    pub const SETTINGS_TIMEOUT: Reason = Reason(0x4);
    /// Frame received for closed stream.
    pub const STREAM_CLOSED: Reason = Reason(0x5);
    /// Frame size incorrect.
    pub const FRAME_SIZE_ERROR: Reason = Reason(0x6);
    /// Stream not processed.
    pub const REFUSED_STREAM: Reason = Reason(0x7);
    /// Stream cancelled.
    pub const CANCEL: Reason = Reason(0x8);
    /// Compression state not updated.
    pub const COMPRESSION_ERROR: Reason = Reason(0x9);
    /// TCP connection error for CONNECT method.
    pub const CONNECT_ERROR: Reason = Reason(0xa);
    /// Processing capacity exceeded.
    pub const ENHANCE_YOUR_CALM: Reason = Reason(0xb);
    /// Negotiated TLS parameters not acceptable.
    pub const INADEQUATE_SECURITY: Reason = Reason(0xc);
    /// Use HTTP/1.1 for the request.
    pub const HTTP_1_1_REQUIRED: Reason = Reason(0xd);

    /// The RFC's name of the code, or `"UNKNOWN"`.
    pub const fn name(self) -> &'static str {
        match self.0 {
            0x0 => "NO_ERROR",
            0x1 => "PROTOCOL_ERROR",
            0x2 => "INTERNAL_ERROR",
            0x3 => "FLOW_CONTROL_ERROR",
            0x4 => "SETTINGS_TIMEOUT",
            0x5 => "STREAM_CLOSED",
            0x6 => "FRAME_SIZE_ERROR",
            0x7 => "REFUSED_STREAM",
            0x8 => "CANCEL",
            0x9 => "COMPRESSION_ERROR",
            0xa => "CONNECT_ERROR",
            0xb => "ENHANCE_YOUR_CALM",
            0xc => "INADEQUATE_SECURITY",
            0xd => "HTTP_1_1_REQUIRED",
            _ => "UNKNOWN",
        }
    }
}

impl core::fmt::Display for Reason {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{} (0x{:x})", self.name(), self.0)
    }
}

/// Frame type codes.
pub mod kind {
    /// DATA.
    pub const DATA: u8 = 0x0;
    /// HEADERS.
    pub const HEADERS: u8 = 0x1;
    /// PRIORITY.
    pub const PRIORITY: u8 = 0x2;
    /// RST_STREAM.
    pub const RST_STREAM: u8 = 0x3;
    /// SETTINGS.
    pub const SETTINGS: u8 = 0x4;
    /// PUSH_PROMISE.
    pub const PUSH_PROMISE: u8 = 0x5;
    /// PING.
    pub const PING: u8 = 0x6;
    /// GOAWAY.
    pub const GOAWAY: u8 = 0x7;
    /// WINDOW_UPDATE.
    pub const WINDOW_UPDATE: u8 = 0x8;
    /// CONTINUATION.
    pub const CONTINUATION: u8 = 0x9;
}

/// Frame flags.
pub mod flag {
    /// END_STREAM (DATA, HEADERS).
    pub const END_STREAM: u8 = 0x1;
    /// ACK (SETTINGS, PING).
    pub const ACK: u8 = 0x1;
    /// END_HEADERS (HEADERS, PUSH_PROMISE, CONTINUATION).
    pub const END_HEADERS: u8 = 0x4;
    /// PADDED (DATA, HEADERS, PUSH_PROMISE).
    pub const PADDED: u8 = 0x8;
    /// PRIORITY (HEADERS).
    pub const PRIORITY: u8 = 0x20;
}

/// Setting identifiers.
pub mod setting {
    /// SETTINGS_HEADER_TABLE_SIZE.
    pub const HEADER_TABLE_SIZE: u16 = 0x1;
    /// SETTINGS_ENABLE_PUSH.
    pub const ENABLE_PUSH: u16 = 0x2;
    /// SETTINGS_MAX_CONCURRENT_STREAMS.
    pub const MAX_CONCURRENT_STREAMS: u16 = 0x3;
    /// SETTINGS_INITIAL_WINDOW_SIZE.
    pub const INITIAL_WINDOW_SIZE: u16 = 0x4;
    /// SETTINGS_MAX_FRAME_SIZE.
    pub const MAX_FRAME_SIZE: u16 = 0x5;
    /// SETTINGS_MAX_HEADER_LIST_SIZE.
    pub const MAX_HEADER_LIST_SIZE: u16 = 0x6;
}

/// Stream dependency and weight of a HEADERS or PRIORITY frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Priority {
    /// Whether the dependency is exclusive.
    pub exclusive: bool,
    /// The stream depended on.
    pub dependency: u32,
    /// The weight, minus one.
    pub weight: u8,
}

/// One frame.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Frame {
    /// DATA.
    Data {
        /// The stream.
        stream_id: u32,
        /// END_STREAM.
        end_stream: bool,
        /// The data, padding removed.
        data: Vec<u8>,
        /// The Pad Length field, if PADDED was set.
        pad_len: Option<u8>,
    },
    /// HEADERS.
    Headers {
        /// The stream.
        stream_id: u32,
        /// END_STREAM.
        end_stream: bool,
        /// END_HEADERS.
        end_headers: bool,
        /// The priority fields, if PRIORITY was set.
        priority: Option<Priority>,
        /// The header block fragment, padding removed.
        fragment: Vec<u8>,
        /// The Pad Length field, if PADDED was set.
        pad_len: Option<u8>,
    },
    /// PRIORITY.
    Priority {
        /// The stream.
        stream_id: u32,
        /// Its priority.
        priority: Priority,
    },
    /// RST_STREAM.
    RstStream {
        /// The stream.
        stream_id: u32,
        /// Why.
        reason: Reason,
    },
    /// SETTINGS.
    Settings {
        /// ACK.
        ack: bool,
        /// The settings, in order.
        settings: Vec<(u16, u32)>,
    },
    /// PUSH_PROMISE.
    PushPromise {
        /// The stream it is associated with.
        stream_id: u32,
        /// END_HEADERS.
        end_headers: bool,
        /// The promised stream.
        promised_stream_id: u32,
        /// The header block fragment, padding removed.
        fragment: Vec<u8>,
        /// The Pad Length field, if PADDED was set.
        pad_len: Option<u8>,
    },
    /// PING.
    Ping {
        /// ACK.
        ack: bool,
        /// The opaque data.
        data: [u8; 8],
    },
    /// GOAWAY.
    GoAway {
        /// The last stream the sender may have processed.
        last_stream_id: u32,
        /// Why.
        reason: Reason,
        /// Additional debug data.
        debug: Vec<u8>,
    },
    /// WINDOW_UPDATE.
    WindowUpdate {
        /// The stream (0 for the connection).
        stream_id: u32,
        /// The increment (may be 0: the layer above refuses it).
        increment: u32,
    },
    /// CONTINUATION.
    Continuation {
        /// The stream.
        stream_id: u32,
        /// END_HEADERS.
        end_headers: bool,
        /// The header block fragment.
        fragment: Vec<u8>,
    },
    /// A frame of a type this client does not know (ignored above, but charged).
    Unknown {
        /// The type code.
        kind: u8,
        /// The flags.
        flags: u8,
        /// The stream.
        stream_id: u32,
        /// The payload.
        payload: Vec<u8>,
    },
}

/// An octet string a `Debug` output shows by its length only.
struct Octets(usize);

impl core::fmt::Debug for Octets {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "<{} octets>", self.0)
    }
}

/// Payloads that may carry a credential — a header block fragment (HPACK literals such as
/// `authorization`), DATA (a request body), GOAWAY's debug data — are shown by their length
/// only; every other field as it is.
impl core::fmt::Debug for Frame {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Frame::Data {
                stream_id,
                end_stream,
                data,
                pad_len,
            } => f
                .debug_struct("Data")
                .field("stream_id", stream_id)
                .field("end_stream", end_stream)
                .field("data", &Octets(data.len()))
                .field("pad_len", pad_len)
                .finish(),
            Frame::Headers {
                stream_id,
                end_stream,
                end_headers,
                priority,
                fragment,
                pad_len,
            } => f
                .debug_struct("Headers")
                .field("stream_id", stream_id)
                .field("end_stream", end_stream)
                .field("end_headers", end_headers)
                .field("priority", priority)
                .field("fragment", &Octets(fragment.len()))
                .field("pad_len", pad_len)
                .finish(),
            Frame::Priority {
                stream_id,
                priority,
            } => f
                .debug_struct("Priority")
                .field("stream_id", stream_id)
                .field("priority", priority)
                .finish(),
            Frame::RstStream { stream_id, reason } => f
                .debug_struct("RstStream")
                .field("stream_id", stream_id)
                .field("reason", reason)
                .finish(),
            Frame::Settings { ack, settings } => f
                .debug_struct("Settings")
                .field("ack", ack)
                .field("settings", settings)
                .finish(),
            Frame::PushPromise {
                stream_id,
                end_headers,
                promised_stream_id,
                fragment,
                pad_len,
            } => f
                .debug_struct("PushPromise")
                .field("stream_id", stream_id)
                .field("end_headers", end_headers)
                .field("promised_stream_id", promised_stream_id)
                .field("fragment", &Octets(fragment.len()))
                .field("pad_len", pad_len)
                .finish(),
            Frame::Ping { ack, data } => f
                .debug_struct("Ping")
                .field("ack", ack)
                .field("data", data)
                .finish(),
            Frame::GoAway {
                last_stream_id,
                reason,
                debug,
            } => f
                .debug_struct("GoAway")
                .field("last_stream_id", last_stream_id)
                .field("reason", reason)
                .field("debug", &Octets(debug.len()))
                .finish(),
            Frame::WindowUpdate {
                stream_id,
                increment,
            } => f
                .debug_struct("WindowUpdate")
                .field("stream_id", stream_id)
                .field("increment", increment)
                .finish(),
            Frame::Continuation {
                stream_id,
                end_headers,
                fragment,
            } => f
                .debug_struct("Continuation")
                .field("stream_id", stream_id)
                .field("end_headers", end_headers)
                .field("fragment", &Octets(fragment.len()))
                .finish(),
            Frame::Unknown {
                kind,
                flags,
                stream_id,
                payload,
            } => f
                .debug_struct("Unknown")
                .field("kind", kind)
                .field("flags", flags)
                .field("stream_id", stream_id)
                .field("payload", &Octets(payload.len()))
                .finish(),
        }
    }
}

impl Frame {
    /// The stream the frame belongs to (0 for the connection).
    pub fn stream_id(&self) -> u32 {
        match self {
            Frame::Data { stream_id, .. }
            | Frame::Headers { stream_id, .. }
            | Frame::Priority { stream_id, .. }
            | Frame::RstStream { stream_id, .. }
            | Frame::PushPromise { stream_id, .. }
            | Frame::WindowUpdate { stream_id, .. }
            | Frame::Continuation { stream_id, .. }
            | Frame::Unknown { stream_id, .. } => *stream_id,
            Frame::Settings { .. } | Frame::Ping { .. } | Frame::GoAway { .. } => 0,
        }
    }

    /// Serializes the frame onto `out`. Payloads larger than [`MAX_FRAME_SIZE`] are the caller's
    /// to avoid (the client never builds one).
    pub fn encode(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&[0; HEADER_LEN]);
        let (ty, flags, sid) = match self {
            Frame::Data {
                stream_id,
                end_stream,
                data,
                pad_len,
            } => {
                let mut f = if *end_stream { flag::END_STREAM } else { 0 };
                if let Some(p) = pad_len {
                    f |= flag::PADDED;
                    out.push(*p);
                }
                out.extend_from_slice(data);
                out.resize(out.len() + usize::from(pad_len.unwrap_or(0)), 0);
                (kind::DATA, f, *stream_id)
            }
            Frame::Headers {
                stream_id,
                end_stream,
                end_headers,
                priority,
                fragment,
                pad_len,
            } => {
                let mut f = 0;
                if *end_stream {
                    f |= flag::END_STREAM;
                }
                if *end_headers {
                    f |= flag::END_HEADERS;
                }
                if let Some(p) = pad_len {
                    f |= flag::PADDED;
                    out.push(*p);
                }
                if let Some(p) = priority {
                    f |= flag::PRIORITY;
                    put_priority(out, p);
                }
                out.extend_from_slice(fragment);
                out.resize(out.len() + usize::from(pad_len.unwrap_or(0)), 0);
                (kind::HEADERS, f, *stream_id)
            }
            Frame::Priority {
                stream_id,
                priority,
            } => {
                put_priority(out, priority);
                (kind::PRIORITY, 0, *stream_id)
            }
            Frame::RstStream { stream_id, reason } => {
                out.extend_from_slice(&reason.0.to_be_bytes());
                (kind::RST_STREAM, 0, *stream_id)
            }
            Frame::Settings { ack, settings } => {
                for (id, v) in settings {
                    out.extend_from_slice(&id.to_be_bytes());
                    out.extend_from_slice(&v.to_be_bytes());
                }
                (kind::SETTINGS, if *ack { flag::ACK } else { 0 }, 0)
            }
            Frame::PushPromise {
                stream_id,
                end_headers,
                promised_stream_id,
                fragment,
                pad_len,
            } => {
                let mut f = if *end_headers { flag::END_HEADERS } else { 0 };
                if let Some(p) = pad_len {
                    f |= flag::PADDED;
                    out.push(*p);
                }
                out.extend_from_slice(&(promised_stream_id & 0x7fff_ffff).to_be_bytes());
                out.extend_from_slice(fragment);
                out.resize(out.len() + usize::from(pad_len.unwrap_or(0)), 0);
                (kind::PUSH_PROMISE, f, *stream_id)
            }
            Frame::Ping { ack, data } => {
                out.extend_from_slice(data);
                (kind::PING, if *ack { flag::ACK } else { 0 }, 0)
            }
            Frame::GoAway {
                last_stream_id,
                reason,
                debug,
            } => {
                out.extend_from_slice(&(last_stream_id & 0x7fff_ffff).to_be_bytes());
                out.extend_from_slice(&reason.0.to_be_bytes());
                out.extend_from_slice(debug);
                (kind::GOAWAY, 0, 0)
            }
            Frame::WindowUpdate {
                stream_id,
                increment,
            } => {
                out.extend_from_slice(&(increment & 0x7fff_ffff).to_be_bytes());
                (kind::WINDOW_UPDATE, 0, *stream_id)
            }
            Frame::Continuation {
                stream_id,
                end_headers,
                fragment,
            } => {
                out.extend_from_slice(fragment);
                (
                    kind::CONTINUATION,
                    if *end_headers { flag::END_HEADERS } else { 0 },
                    *stream_id,
                )
            }
            Frame::Unknown {
                kind,
                flags,
                stream_id,
                payload,
            } => {
                out.extend_from_slice(payload);
                (*kind, *flags, *stream_id)
            }
        };
        let len = (out.len() - start - HEADER_LEN) as u32;
        let h = &mut out[start..start + HEADER_LEN];
        h[..3].copy_from_slice(&len.to_be_bytes()[1..]);
        h[3] = ty;
        h[4] = flags;
        h[5..].copy_from_slice(&(sid & 0x7fff_ffff).to_be_bytes());
    }
}

fn put_priority(out: &mut Vec<u8>, p: &Priority) {
    let dep = (p.dependency & 0x7fff_ffff) | if p.exclusive { 0x8000_0000 } else { 0 };
    out.extend_from_slice(&dep.to_be_bytes());
    out.push(p.weight);
}

/// Why the frame layer refused the input. Each is a connection error with [`FrameError::reason`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// A frame longer than the maximum frame size.
    #[error("frame of {len} octets exceeds the maximum frame size {max}")]
    TooLarge {
        /// Its declared payload length.
        len: u32,
        /// The maximum.
        max: u32,
    },
    /// A frame whose length is wrong for its type.
    #[error("{frame} frame with an invalid length {len}")]
    BadLength {
        /// The frame type.
        frame: &'static str,
        /// The payload length.
        len: u32,
    },
    /// Padding at least as long as the payload.
    #[error("{frame} frame padding exceeds its payload")]
    BadPadding {
        /// The frame type.
        frame: &'static str,
    },
    /// A frame on stream 0 that needs a stream, or on a stream that must be on 0.
    #[error("{frame} frame on stream {stream_id}, which it may not use")]
    BadStreamId {
        /// The frame type.
        frame: &'static str,
        /// The stream id.
        stream_id: u32,
    },
    /// A SETTINGS frame with more settings than allowed.
    #[error("SETTINGS frame with {count} settings (at most {MAX_SETTINGS_PER_FRAME})")]
    TooManySettings {
        /// How many it held.
        count: usize,
    },
}

impl FrameError {
    /// The error code a GOAWAY should carry for it.
    pub fn reason(&self) -> Reason {
        match self {
            FrameError::TooLarge { .. } | FrameError::BadLength { .. } => Reason::FRAME_SIZE_ERROR,
            FrameError::TooManySettings { .. } => Reason::ENHANCE_YOUR_CALM,
            _ => Reason::PROTOCOL_ERROR,
        }
    }
}

/// A decoded frame and the raw octets it took on the wire (9 + payload).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded {
    /// The frame.
    pub frame: Frame,
    /// Its raw size.
    pub raw_len: usize,
}

/// An incremental frame decoder: holds at most one frame (9 + 16384 octets).
#[derive(Clone, Debug, Default)]
pub struct FrameDecoder {
    buf: Vec<u8>,
}

impl FrameDecoder {
    /// A new decoder.
    pub fn new() -> Self {
        FrameDecoder::default()
    }

    /// Octets held of an incomplete frame.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// Takes octets from the front of `input` until one frame completes (returned) or `input`
    /// is empty (`Ok(None)`). After an error the decoder must not be used again.
    pub fn decode(&mut self, input: &mut &[u8]) -> Result<Option<Decoded>, FrameError> {
        if self.buf.len() < HEADER_LEN {
            let take = (HEADER_LEN - self.buf.len()).min(input.len());
            self.buf.extend_from_slice(&input[..take]);
            *input = &input[take..];
            if self.buf.len() < HEADER_LEN {
                return Ok(None);
            }
        }
        let len = u32::from_be_bytes([0, self.buf[0], self.buf[1], self.buf[2]]);
        if len as usize > MAX_FRAME_SIZE {
            return Err(FrameError::TooLarge {
                len,
                max: MAX_FRAME_SIZE as u32,
            });
        }
        let total = HEADER_LEN + len as usize;
        let take = (total - self.buf.len()).min(input.len());
        self.buf.extend_from_slice(&input[..take]);
        *input = &input[take..];
        if self.buf.len() < total {
            return Ok(None);
        }
        let raw = core::mem::take(&mut self.buf);
        let frame = parse(raw[3], raw[4], stream_of(&raw[5..9]), &raw[HEADER_LEN..])?;
        Ok(Some(Decoded {
            frame,
            raw_len: total,
        }))
    }
}

fn stream_of(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]]) & 0x7fff_ffff
}

/// Removes padding: (pad length field, the payload without padding and pad length octet).
fn unpad<'a>(
    frame: &'static str,
    flags: u8,
    p: &'a [u8],
) -> Result<(Option<u8>, &'a [u8]), FrameError> {
    if flags & flag::PADDED == 0 {
        return Ok((None, p));
    }
    let Some((&pad, rest)) = p.split_first() else {
        return Err(FrameError::BadLength { frame, len: 0 });
    };
    if usize::from(pad) > rest.len() {
        return Err(FrameError::BadPadding { frame });
    }
    Ok((Some(pad), &rest[..rest.len() - usize::from(pad)]))
}

fn priority_of(p: &[u8]) -> Priority {
    let dep = u32::from_be_bytes([p[0], p[1], p[2], p[3]]);
    Priority {
        exclusive: dep & 0x8000_0000 != 0,
        dependency: dep & 0x7fff_ffff,
        weight: p[4],
    }
}

fn need_stream(frame: &'static str, stream_id: u32) -> Result<(), FrameError> {
    if stream_id == 0 {
        Err(FrameError::BadStreamId { frame, stream_id })
    } else {
        Ok(())
    }
}

fn need_zero(frame: &'static str, stream_id: u32) -> Result<(), FrameError> {
    if stream_id != 0 {
        Err(FrameError::BadStreamId { frame, stream_id })
    } else {
        Ok(())
    }
}

/// Parses one complete frame.
pub fn parse(ty: u8, flags: u8, stream_id: u32, p: &[u8]) -> Result<Frame, FrameError> {
    let len = p.len() as u32;
    let bad_len = |frame| FrameError::BadLength { frame, len };
    Ok(match ty {
        kind::DATA => {
            need_stream("DATA", stream_id)?;
            let (pad_len, data) = unpad("DATA", flags, p)?;
            Frame::Data {
                stream_id,
                end_stream: flags & flag::END_STREAM != 0,
                data: data.to_vec(),
                pad_len,
            }
        }
        kind::HEADERS => {
            need_stream("HEADERS", stream_id)?;
            let (pad_len, mut rest) = unpad("HEADERS", flags, p)?;
            let mut priority = None;
            if flags & flag::PRIORITY != 0 {
                if rest.len() < 5 {
                    return Err(bad_len("HEADERS"));
                }
                priority = Some(priority_of(rest));
                rest = &rest[5..];
            }
            Frame::Headers {
                stream_id,
                end_stream: flags & flag::END_STREAM != 0,
                end_headers: flags & flag::END_HEADERS != 0,
                priority,
                fragment: rest.to_vec(),
                pad_len,
            }
        }
        kind::PRIORITY => {
            need_stream("PRIORITY", stream_id)?;
            if p.len() != 5 {
                return Err(bad_len("PRIORITY"));
            }
            Frame::Priority {
                stream_id,
                priority: priority_of(p),
            }
        }
        kind::RST_STREAM => {
            need_stream("RST_STREAM", stream_id)?;
            if p.len() != 4 {
                return Err(bad_len("RST_STREAM"));
            }
            Frame::RstStream {
                stream_id,
                reason: Reason(u32::from_be_bytes([p[0], p[1], p[2], p[3]])),
            }
        }
        kind::SETTINGS => {
            need_zero("SETTINGS", stream_id)?;
            let ack = flags & flag::ACK != 0;
            if p.len() % 6 != 0 || (ack && !p.is_empty()) {
                return Err(bad_len("SETTINGS"));
            }
            let count = p.len() / 6;
            if count > MAX_SETTINGS_PER_FRAME {
                return Err(FrameError::TooManySettings { count });
            }
            Frame::Settings {
                ack,
                settings: p
                    .chunks_exact(6)
                    .map(|c| {
                        (
                            u16::from_be_bytes([c[0], c[1]]),
                            u32::from_be_bytes([c[2], c[3], c[4], c[5]]),
                        )
                    })
                    .collect(),
            }
        }
        kind::PUSH_PROMISE => {
            need_stream("PUSH_PROMISE", stream_id)?;
            let (pad_len, rest) = unpad("PUSH_PROMISE", flags, p)?;
            if rest.len() < 4 {
                return Err(bad_len("PUSH_PROMISE"));
            }
            Frame::PushPromise {
                stream_id,
                end_headers: flags & flag::END_HEADERS != 0,
                promised_stream_id: stream_of(&rest[..4]),
                fragment: rest[4..].to_vec(),
                pad_len,
            }
        }
        kind::PING => {
            need_zero("PING", stream_id)?;
            let data: [u8; 8] = p.try_into().map_err(|_| bad_len("PING"))?;
            Frame::Ping {
                ack: flags & flag::ACK != 0,
                data,
            }
        }
        kind::GOAWAY => {
            need_zero("GOAWAY", stream_id)?;
            if p.len() < 8 {
                return Err(bad_len("GOAWAY"));
            }
            Frame::GoAway {
                last_stream_id: stream_of(&p[..4]),
                reason: Reason(u32::from_be_bytes([p[4], p[5], p[6], p[7]])),
                debug: p[8..].to_vec(),
            }
        }
        kind::WINDOW_UPDATE => {
            if p.len() != 4 {
                return Err(bad_len("WINDOW_UPDATE"));
            }
            Frame::WindowUpdate {
                stream_id,
                increment: stream_of(p),
            }
        }
        kind::CONTINUATION => {
            need_stream("CONTINUATION", stream_id)?;
            Frame::Continuation {
                stream_id,
                end_headers: flags & flag::END_HEADERS != 0,
                fragment: p.to_vec(),
            }
        }
        _ => Frame::Unknown {
            kind: ty,
            flags,
            stream_id,
            payload: p.to_vec(),
        },
    })
}
