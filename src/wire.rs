//! The wire-neutral exchange boundary: what the connection's state machine says to a socket
//! and hears back, whatever the HTTP version.
//!
//! Down goes a [`Request`] (method, authority, path, headers, body); up come the
//! [`ResponseEvent`]s of one response: a [`Head`](ResponseEvent::Head),
//! [`Body`](ResponseEvent::Body) bytes and an [`End`](ResponseEvent::End), each carrying the raw
//! bytes it cost, which the connection charges to its byte budget. The connection holds no
//! codec: a socket type above it encodes its requests and decodes each exchange's response into
//! these events. Over HTTP/1.1 that is [`Http1Socket`](crate::socket::Http1Socket), which runs
//! one HTTP/1.1 decoder per exchange against the connection's remaining allowance (so the
//! byte budget fails at the exact byte); over HTTP/2 it is
//! [`H2Socket`](crate::mux::H2Socket), whose [`crate::h2`] connection decodes the frames of
//! every stream. Nothing above this boundary tells the two apart; only [`WireError`] names the
//! wire whose codec refused a response.

use crate::prelude::*;

use bytes::Bytes;

use crate::h2::H2Error;
use crate::http1::{self, Http1Error, RequestError};

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
///
/// Its `Debug` output redacts the credentials of its header fields (`Authorization`,
/// `Proxy-Authorization`, `DPoP`, `Cookie`, [`redact::header`](crate::auth::redact::header)) and
/// secret parameters of its path's query, and shows the body's length only.
#[derive(Clone, PartialEq, Eq)]
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

impl core::fmt::Debug for Request {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        use crate::auth::redact;
        f.debug_struct("Request")
            .field("method", &self.method)
            .field("authority", &self.authority)
            .field("path", &redact::url(&self.path))
            .field("headers", &redact::debug_headers(&self.headers))
            .field("body_len", &self.body.len())
            .finish()
    }
}

impl Request {
    /// Checks the request by the rules every wire shares (no CR, LF or NUL in a field, a valid
    /// authority and path, names that are tokens): a request that passes can be encoded on
    /// either wire.
    pub fn check(&self) -> Result<(), RequestError> {
        http1::request::check(self)
    }
}

/// The head of a final (non-1xx) response, whatever the wire.
///
/// Its `Debug` output redacts secret header values (`Set-Cookie`…,
/// [`redact::header`](crate::auth::redact::header)).
#[derive(Clone, PartialEq, Eq)]
pub struct ResponseHead {
    /// The status code, `200..=599`.
    pub status: u16,
    /// The header fields in order: names as received, values as raw bytes (without surrounding
    /// whitespace).
    pub headers: Vec<(String, Vec<u8>)>,
    /// The body length the response announced, if it did.
    pub content_length: Option<u64>,
    /// Whether the body ends only when the peer closes the socket (HTTP/1.1 without
    /// `Content-Length` or chunked framing): such a response never leaves a reusable socket.
    /// Never over HTTP/2, where the end of a stream marks the end.
    pub close_delimited: bool,
}

impl core::fmt::Debug for ResponseHead {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ResponseHead")
            .field("status", &self.status)
            .field(
                "headers",
                &crate::auth::redact::debug_headers(&self.headers),
            )
            .field("content_length", &self.content_length)
            .field("close_delimited", &self.close_delimited)
            .finish()
    }
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
        /// The buffer the bytes lie in, when its owner gives it away
        /// ([`Http1Socket::handle_owned_bytes`](crate::socket::Http1Socket::handle_owned_bytes)):
        /// a JSON body that arrives whole in one event is then kept as a slice of it rather
        /// than copied. `None` otherwise.
        owner: Option<&'a Bytes>,
    },
    /// The response is complete; exactly once.
    End {
        /// Whether the socket (or stream) may carry another exchange.
        reusable: bool,
        /// Raw bytes the end cost.
        raw: u64,
    },
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
    /// The socket type handed the connection a response's events out of order (a second head,
    /// anything after the end, body or end before the head): no codec refused anything, so
    /// this names no wire; `what` names the event.
    #[error("response events out of order: {what}")]
    OutOfOrder {
        /// The event that came out of order.
        what: &'static str,
    },
}

impl WireError {
    /// Whether the error means the connection's byte budget
    /// ([`Budget::ResponseBytes`](crate::Budget::ResponseBytes)) ran out but does not name it
    /// itself: a `Content-Length` announcing more than it had left (nothing of the body is
    /// read), or an HTTP/2 stream's allowance (what the budget had left when it opened) used
    /// up. The connection reports these as its own budget, with the configured limit.
    pub fn is_byte_budget_overrun(&self) -> bool {
        use crate::budget::Budget;
        match self {
            WireError::Http1(Http1Error::ContentLengthExceedsBudget { .. }) => true,
            WireError::Http1(_) => false,
            WireError::Http2(H2Error::Budget(b)) => b.budget == Budget::ResponseBytes,
            WireError::Http2(_) | WireError::OutOfOrder { .. } => false,
        }
    }

    /// Whether the server is known never to have processed the request
    /// ([`H2Error::never_processed`]: REFUSED_STREAM, or a GOAWAY below its stream), so that
    /// it may be sent once more, even a tool call.
    pub fn never_processed(&self) -> bool {
        matches!(self, WireError::Http2(e) if e.never_processed())
    }

    /// Whether the response stream was cut off before the response was complete, whatever
    /// the wire: over HTTP/1.1 the socket ended early (before the head, inside it, or a short
    /// body); over HTTP/2 the server reset the stream (RST_STREAM, any code), its GOAWAY left
    /// the stream out, or the connection carrying it was lost. The server may or may not have
    /// processed the request; nothing of the answer is malformed. Budgets are never a cut.
    pub fn is_cut_off(&self) -> bool {
        match self {
            WireError::Http1(e) => matches!(e, Http1Error::UnexpectedEof { .. }),
            WireError::Http2(e) => matches!(
                e,
                H2Error::Reset { .. } | H2Error::GoAway { .. } | H2Error::Closed { .. }
            ),
            WireError::OutOfOrder { .. } => false,
        }
    }

    /// Whether the response stream broke after its head, whatever the wire: it was cut off
    /// ([`is_cut_off`](Self::is_cut_off)), or the framing that carries its body broke (over
    /// HTTP/1.1 a bad chunk-size line or chunk, as a transport failure would break it). A budget
    /// is never a break: it fails the operation; nor are events out of order. The connection
    /// re-issues (2026-07-28) or resumes (a legacy event stream) a stream broken after a `2xx`
    /// head.
    pub fn is_broken_stream(&self) -> bool {
        self.is_cut_off() || self.is_broken_framing()
    }

    /// Whether the framing of the body broke: over HTTP/1.1 an invalid chunk-size line or a
    /// malformed chunk (the only errors of the body but a cut-off and the budgets); over HTTP/2
    /// frames are the connection's, whose failure cuts the stream off instead.
    fn is_broken_framing(&self) -> bool {
        matches!(
            self,
            WireError::Http1(Http1Error::InvalidChunkSize | Http1Error::Malformed { .. })
        )
    }

    /// The budget this error names, if it is an exceeded budget.
    pub fn budget(&self) -> Option<crate::budget::BudgetExceeded> {
        match self {
            WireError::Http1(Http1Error::Budget(b)) => Some(*b),
            WireError::Http1(_) => None,
            WireError::Http2(e) => e.budget(),
            WireError::OutOfOrder { .. } => None,
        }
    }
}

/// What an exchange's response has shown so far, from the events it was given, whatever the
/// wire: the connection's view of a response.
#[derive(Clone, Debug, Default)]
pub(crate) struct ResponseState {
    status: Option<u16>,
    delimited: bool,
    ended: bool,
}

impl ResponseState {
    /// Records `event` (its status, its end). An event out of order (a second head, anything
    /// after the end, body or end before the head) is refused.
    pub(crate) fn observe(&mut self, event: &ResponseEvent<'_>) -> Result<(), WireError> {
        let malformed = |what| Err(WireError::OutOfOrder { what });
        if self.ended {
            return malformed("an event after the end of the response");
        }
        match event {
            ResponseEvent::Head { head, .. } => {
                if self.status.is_some() {
                    return malformed("a second response head");
                }
                self.status = Some(head.status);
                self.delimited = !head.close_delimited;
            }
            ResponseEvent::Body { .. } if self.status.is_none() => {
                return malformed("body before the response head")
            }
            ResponseEvent::End { .. } if self.status.is_none() => {
                return malformed("the stream ended before the response head")
            }
            ResponseEvent::Body { .. } => {}
            ResponseEvent::End { .. } => self.ended = true,
        }
        Ok(())
    }

    /// The status of the final response, once its head was seen.
    pub(crate) fn status(&self) -> Option<u16> {
        self.status
    }

    /// Whether the end was seen.
    pub(crate) fn is_ended(&self) -> bool {
        self.ended
    }

    /// Whether the end of the response can be recognised without the peer closing (a framed
    /// body, or a stream that signals its end), so that reading the rest may leave a reusable
    /// socket. `false` before the head.
    pub(crate) fn end_is_delimited(&self) -> bool {
        self.status.is_some() && self.delimited
    }
}
