//! HTTP/1.1 beneath the MCP layer: request encoding and incremental response decoding.
//!
//! This is the first wire codec below the wire-neutral boundary of [`crate::wire`]: the connection
//! hands it a [`wire::Request`](crate::wire::Request) and hears [`wire::ResponseEvent`](crate::wire::ResponseEvent)s back.
//!
//! - [`encode`] and [`encode_into`] write a [`wire::Request`](crate::wire::Request) (method,
//!   origin-form target, `Host`, extra headers,
//!   `Content-Length`, body) after validating every part that could inject bytes.
//! - [`ResponseDecoder`] decodes one response from pieces of any size: 1xx responses skipped and
//!   counted, then [`ResponseEvent::Head`], [`ResponseEvent::Body`] slices borrowed from the input
//!   (Content-Length, chunked or close-delimited framing removed) and [`ResponseEvent::End`],
//!   charging every raw byte to the connection's [`ByteLedger`](crate::budget::ByteLedger).

mod error;
mod head;
pub(crate) mod request;
mod response;

pub use error::Http1Error;
pub use request::{encode, encode_into, RequestError};
pub use response::{
    Decoded, Framing, ResponseDecoder, ResponseEvent, ResponseHead, ResponseLimits,
};
