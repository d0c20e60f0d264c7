//! The wire-neutral exchange boundary: what the connection's state machine says to a wire codec
//! and hears back, whatever the HTTP version.
//!
//! Down goes a [`Request`] (method, authority, path, headers, body); up come the
//! [`ResponseEvent`]s of one response, from a per-exchange [`ResponseDecoder`]: a
//! [`Head`](ResponseEvent::Head), [`Body`](ResponseEvent::Body) bytes and an
//! [`End`](ResponseEvent::End), each carrying the raw bytes it cost. Every raw byte a decoder
//! reads (framing, header blocks, bodies) is charged to the [`ByteLedger`] it is given, so the
//! budgets hold whatever the wire.
//!
//! [`Codec`] names the wire an exchange runs on and is the one place that chooses between
//! implementations: HTTP/1.1 ([`crate::http1`]) decodes its bytes here; over HTTP/2
//! ([`crate::h2`]) the socket's connection decodes the frames of every stream and hands each
//! exchange its events, with their raw cost, which its [`ResponseDecoder`] only observes
//! ([`ResponseDecoder::observe`]). Nothing above this boundary tells the two apart.

use crate::prelude::*;

use crate::budget::ByteLedger;
use crate::h2::H2Error;
use crate::http1::{self, Framing, Http1Error, RequestError, ResponseLimits};

/// The request methods this client sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// `GET`.
    Get,
    /// `POST`.
    Post,
    /// `DELETE`.
    Delete,
}

impl Method {
    /// The method as written on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Delete => "DELETE",
        }
    }
}

/// A protocol-neutral HTTP request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The method.
    pub method: Method,
    /// The authority (`host[:port]`), HTTP/1.1's `Host`.
    pub authority: String,
    /// The path and query, e.g. `/mcp?x=1`.
    pub path: String,
    /// Header fields in order; never `Host`, `Content-Length` or `Transfer-Encoding` (the codec
    /// writes what its wire needs).
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

/// The head of a final (non-1xx) response, whatever the wire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResponseHead {
    /// The status code, `200..=599`.
    pub status: u16,
    /// The header fields in order: names as received, values as raw bytes (without surrounding
    /// whitespace).
    pub headers: Vec<(String, Vec<u8>)>,
    /// The body length the response announced, if it did.
    pub content_length: Option<u64>,
}

impl ResponseHead {
    /// The first value of header `name` (compared case-insensitively).
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        header(&self.headers, name)
    }

    /// The media type of `Content-Type` without parameters, lowercased (`text/event-stream` for
    /// `Text/Event-Stream; charset=utf-8`); `None` when absent or not of the form `type/subtype`.
    pub fn content_type(&self) -> Option<String> {
        content_type(&self.headers)
    }
}

/// The first value of header `name` in `headers` (compared case-insensitively).
pub(crate) fn header<'h>(headers: &'h [(String, Vec<u8>)], name: &str) -> Option<&'h [u8]> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_slice())
}

/// The first value of header `name` if it is valid UTF-8, trimmed of spaces and tabs.
pub(crate) fn header_str<'h>(headers: &'h [(String, Vec<u8>)], name: &str) -> Option<&'h str> {
    let v = core::str::from_utf8(header(headers, name)?).ok()?;
    Some(v.trim_matches(is_ows_char))
}

/// The media type of `Content-Type` without parameters, lowercased.
pub(crate) fn content_type(headers: &[(String, Vec<u8>)]) -> Option<String> {
    let v = header_str(headers, "content-type")?;
    let essence = v.split(';').next()?.trim_matches(is_ows_char);
    let (ty, sub) = essence.split_once('/')?;
    if http1::request::is_token(ty) && http1::request::is_token(sub) {
        Some(essence.to_ascii_lowercase())
    } else {
        None
    }
}

/// Optional whitespace: a space or a tab.
pub(crate) fn is_ows_char(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// One step of a response, with the raw bytes it cost: every byte consumed since the previous
/// event (framing, skipped 1xx responses and the header block for the head; chunk framing and
/// data for body bytes; the last framing for the end).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResponseEvent<'a> {
    /// The head of the final response; exactly once.
    Head {
        /// The head.
        head: ResponseHead,
        /// Raw bytes it cost.
        raw: u64,
    },
    /// Body bytes borrowed from the input, framing removed; never empty.
    Body {
        /// The bytes.
        bytes: &'a [u8],
        /// Raw bytes they cost.
        raw: u64,
    },
    /// The response is complete; exactly once.
    End {
        /// Whether the socket (or stream) may carry another exchange.
        reusable: bool,
        /// Raw bytes the end cost.
        raw: u64,
    },
}

/// What one call to [`ResponseDecoder::decode`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded<'a> {
    /// Input bytes consumed (and charged to the ledger).
    pub consumed: usize,
    /// The event completed, if any.
    pub event: Option<ResponseEvent<'a>>,
}

/// Why a response was refused by its wire codec.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WireError {
    /// HTTP/1.1.
    #[error(transparent)]
    Http1(#[from] Http1Error),
    /// HTTP/2: the stream (or the connection it ran on) failed.
    #[error("HTTP/2: {0}")]
    Http2(#[from] H2Error),
}

impl WireError {
    /// The budget this error names, if it is an exceeded budget.
    pub fn budget(&self) -> Option<crate::budget::BudgetExceeded> {
        match self {
            WireError::Http1(Http1Error::Budget(b)) => Some(*b),
            WireError::Http1(_) => None,
            WireError::Http2(e) => e.budget(),
        }
    }
}

/// The wire an exchange runs on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Codec {
    /// HTTP/1.1: one request per socket at a time; [`Transmit`](crate::Transmit) bytes are the
    /// encoded request.
    #[default]
    Http1,
    /// HTTP/2: every exchange is a stream of a shared connection; [`Transmit`](crate::Transmit)
    /// carries the neutral [`Request`] (its `bytes` stay empty) and the response comes back as
    /// [`ResponseEvent`]s through
    /// [`Connection::handle_response_event`](crate::Connection::handle_response_event).
    Http2,
}

impl Codec {
    /// Encodes `request` for this wire, appending to `out`; nothing is appended on error.
    pub fn encode_into(self, request: &Request, out: &mut Vec<u8>) -> Result<(), RequestError> {
        match self {
            Codec::Http1 => http1::encode_into(request, out),
            // Frames are written by the socket's HTTP/2 connection, which owns the HPACK state;
            // the request is only checked here, by the same rules (no CR, LF or NUL, …).
            Codec::Http2 => http1::request::check(request),
        }
    }

    /// A decoder for one response on this wire, under `limits`.
    pub fn decoder(self, limits: ResponseLimits) -> ResponseDecoder {
        match self {
            Codec::Http1 => ResponseDecoder {
                inner: Inner::Http1(http1::ResponseDecoder::new(limits)),
                since_event: 0,
            },
            Codec::Http2 => ResponseDecoder {
                inner: Inner::Http2(StreamState::default()),
                since_event: 0,
            },
        }
    }
}

/// The decoder of one exchange's response, for whichever wire it runs on.
#[derive(Clone, Debug)]
pub struct ResponseDecoder {
    inner: Inner,
    /// Raw bytes consumed since the last event.
    since_event: u64,
}

#[derive(Clone, Debug)]
enum Inner {
    Http1(http1::ResponseDecoder),
    Http2(StreamState),
}

/// What an HTTP/2 exchange's response has shown so far: its events arrive decoded (by the
/// socket's [`crate::h2::ClientConnection`]) and are only observed here.
#[derive(Clone, Debug, Default)]
struct StreamState {
    status: Option<u16>,
    ended: bool,
}

impl ResponseDecoder {
    /// Consumes a prefix of `input`, charging every consumed byte to `ledger`, and returns at
    /// most one event. The contract is [`http1::ResponseDecoder::decode`]'s: while the response
    /// has not ended, a non-empty `input` yields progress; an `End` due without further bytes is
    /// returned by the next call, even with an empty `input`; after `End` nothing is consumed;
    /// errors are sticky.
    pub fn decode<'a>(
        &mut self,
        input: &'a [u8],
        ledger: &mut ByteLedger,
    ) -> Result<Decoded<'a>, WireError> {
        match &mut self.inner {
            Inner::Http1(d) => {
                let decoded = d.decode(input, ledger)?;
                self.since_event = self
                    .since_event
                    .saturating_add(u64::try_from(decoded.consumed).unwrap_or(u64::MAX));
                let event = decoded.event.map(|e| {
                    let raw = core::mem::take(&mut self.since_event);
                    match e {
                        http1::ResponseEvent::Head(h) => ResponseEvent::Head {
                            head: neutral_head(h),
                            raw,
                        },
                        http1::ResponseEvent::Body(bytes) => ResponseEvent::Body { bytes, raw },
                        http1::ResponseEvent::End { reusable } => {
                            ResponseEvent::End { reusable, raw }
                        }
                    }
                });
                Ok(Decoded {
                    consumed: decoded.consumed,
                    event,
                })
            }
            // An HTTP/2 stream has no bytes of its own: its events come through `observe`.
            Inner::Http2(_) => Ok(Decoded {
                consumed: 0,
                event: None,
            }),
        }
    }

    /// HTTP/2: records `event` of the exchange's stream (its status, its end). An event out of
    /// order (a second head, anything after the end, body or end before the head) is refused.
    pub fn observe(&mut self, event: &ResponseEvent<'_>) -> Result<(), WireError> {
        let Inner::Http2(st) = &mut self.inner else {
            return Ok(());
        };
        let malformed = |what| Err(WireError::Http2(H2Error::Malformed { what }));
        if st.ended {
            return malformed("an event after the end of the response");
        }
        match event {
            ResponseEvent::Head { head, .. } => {
                if st.status.is_some() {
                    return malformed("a second response head");
                }
                st.status = Some(head.status);
            }
            ResponseEvent::Body { .. } if st.status.is_none() => {
                return malformed("body before the response head")
            }
            ResponseEvent::End { .. } if st.status.is_none() => {
                return malformed("the stream ended before the response head")
            }
            ResponseEvent::Body { .. } => {}
            ResponseEvent::End { .. } => st.ended = true,
        }
        Ok(())
    }

    /// The peer ended the stream: the `End` of a response whose end that is (or was due), `None`
    /// if the response had already ended, an error anywhere else.
    pub fn finish(&mut self) -> Result<Option<ResponseEvent<'static>>, WireError> {
        match &mut self.inner {
            Inner::Http1(d) => Ok(d.finish()?.map(|e| {
                let raw = core::mem::take(&mut self.since_event);
                match e {
                    http1::ResponseEvent::End { reusable } => ResponseEvent::End { reusable, raw },
                    // `finish` yields nothing else; an end that cannot be reused covers it.
                    _ => ResponseEvent::End {
                        reusable: false,
                        raw,
                    },
                }
            })),
            Inner::Http2(st) if st.ended => Ok(None),
            Inner::Http2(_) => Err(WireError::Http2(H2Error::Closed {
                what: "the stream ended before the response did",
            })),
        }
    }

    /// The status of the final response, once its head was returned.
    pub fn status(&self) -> Option<u16> {
        match &self.inner {
            Inner::Http1(d) => d.status(),
            Inner::Http2(st) => st.status,
        }
    }

    /// Whether `End` was returned.
    pub fn is_ended(&self) -> bool {
        match &self.inner {
            Inner::Http1(d) => d.is_ended(),
            Inner::Http2(st) => st.ended,
        }
    }

    /// Whether the end of the response can be recognised without the peer closing (a framed
    /// body, or a stream that signals its end), so that reading the rest may leave a reusable
    /// socket. `false` before the head.
    pub fn end_is_delimited(&self) -> bool {
        match &self.inner {
            Inner::Http1(d) => d
                .head()
                .is_some_and(|h| h.framing != Framing::CloseDelimited),
            // END_STREAM always marks the end.
            Inner::Http2(st) => st.status.is_some(),
        }
    }
}

/// The wire-neutral view of an HTTP/1.x head: its fields are moved, not copied.
fn neutral_head(h: http1::ResponseHead) -> ResponseHead {
    let content_length = match h.framing {
        Framing::ContentLength(n) => Some(n),
        Framing::NoBody => Some(0),
        Framing::Chunked | Framing::CloseDelimited => None,
    };
    ResponseHead {
        status: h.status,
        headers: h.headers,
        content_length,
    }
}
