//! The errors of the HTTP/1.1 response decoder.

use crate::budget::BudgetExceeded;

/// Why an HTTP/1.x response was refused by the [`ResponseDecoder`](super::ResponseDecoder).
///
/// Every error is final for the response and its connection: the decoder keeps returning it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Http1Error {
    /// A budget was exceeded: the connection's byte ledger (`response_bytes`), one header block
    /// (`header_block_bytes`), the header count (`header_count`), one chunk-size line
    /// (`chunk_line_bytes`) or the number of 1xx responses (`informational_responses`).
    #[error(transparent)]
    Budget(#[from] BudgetExceeded),
    /// The bytes are not a well-formed HTTP/1.x response; `what` names the part.
    #[error("malformed HTTP/1 response: {what}")]
    Malformed {
        /// The part of the response that is malformed.
        what: &'static str,
    },
    /// The status line names a version other than HTTP/1.1 or HTTP/1.0.
    #[error(
        "unsupported HTTP version in the status line (only HTTP/1.1 and HTTP/1.0 are accepted)"
    )]
    UnsupportedVersion,
    /// The server answered 101 Switching Protocols, which this client never asks for.
    #[error("the server switched protocols (101), which was not requested")]
    SwitchingProtocols,
    /// The response has both `Content-Length` and `Transfer-Encoding`.
    #[error("conflicting response framing: both Content-Length and Transfer-Encoding")]
    ConflictingFraming,
    /// The response has `Content-Length` values that differ.
    #[error("conflicting Content-Length values")]
    ConflictingContentLength,
    /// A `Content-Length` value is not a decimal number (or does not fit in 64 bits).
    #[error("invalid Content-Length value")]
    InvalidContentLength,
    /// `Transfer-Encoding` is anything but exactly `chunked` (or is used in an HTTP/1.0
    /// response).
    #[error("unsupported Transfer-Encoding (only a single `chunked` coding is accepted)")]
    UnsupportedTransferEncoding,
    /// A chunk-size line has no hexadecimal size, a non-hexadecimal size, or a size beyond 64
    /// bits.
    #[error("invalid chunk size")]
    InvalidChunkSize,
    /// The announced `Content-Length` is larger than what the connection's byte budget has left.
    #[error("Content-Length {length} exceeds the remaining byte budget ({remaining})")]
    ContentLengthExceedsBudget {
        /// The announced length.
        length: u64,
        /// Bytes left in the ledger when the head was decoded.
        remaining: u64,
    },
    /// The peer closed the connection before the response was complete; `stage` says where.
    #[error("unexpected end of stream in {stage}")]
    UnexpectedEof {
        /// Where the stream ended: `before response`, `response head`, `body`,
        /// `chunk size line`, `chunk data` or `trailers`.
        stage: &'static str,
    },
}
