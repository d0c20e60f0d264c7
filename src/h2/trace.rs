//! Reading recorded HTTP/2 octets: what a transcript needs to annotate or redact the bytes a
//! socket carried, and nothing more.
//!
//! The frame codec and HPACK stay private to the core; this module gives the constants that
//! name frames (RFC 9113 §4.1, §6), the client preface (RFC 9113 §3.4), and a bounded HPACK
//! reader of whole header blocks ([`HeaderBlockReader`], RFC 7541). A frame header is 9 octets:
//! a 24-bit length, the type ([`kind`]), the flags ([`flag`]) and a 31-bit stream id.
//!
//! ```
//! use mcp_sansio::h2::trace::{kind, HeaderBlockReader, PREFACE};
//!
//! assert!(PREFACE.starts_with(b"PRI * HTTP/2.0"));
//! assert_eq!(kind::HEADERS, 0x1);
//! // RFC 7541 §C.3.1's first request: `:method: GET` is index 2 of the static table, …
//! let mut reader = HeaderBlockReader::new(1 << 16, 128);
//! let fields = reader.read(&[0x82, 0x86, 0x84, 0x41, 0x0f, b'w', b'w', b'w', b'.',
//!     b'e', b'x', b'a', b'm', b'p', b'l', b'e', b'.', b'c', b'o', b'm'])?;
//! assert_eq!(fields[0].name, b":method");
//! assert_eq!(fields[0].value, b"GET");
//! assert_eq!(fields[3].value, b"www.example.com");
//! // The same block, four fields, is refused by a reader bounded at three.
//! let block = [0x82, 0x86, 0x84, 0x41, 0x0f, b'w', b'w', b'w', b'.',
//!     b'e', b'x', b'a', b'm', b'p', b'l', b'e', b'.', b'c', b'o', b'm'];
//! assert!(HeaderBlockReader::new(1 << 16, 3).read(&block).is_err());
//! # Ok::<(), mcp_sansio::h2::HpackError>(())
//! ```

use super::hpack::{DecodeLimits, Decoder};
use super::HpackError;
use crate::prelude::*;

pub use super::client::PREFACE;
pub use super::frame::{flag, kind};
pub use super::hpack::Header;

/// An HPACK decoder of whole header blocks, one per direction of a connection (the dynamic
/// table carries over from block to block), bounded like the core's own.
#[derive(Clone, Debug)]
pub struct HeaderBlockReader {
    decoder: Decoder,
}

impl HeaderBlockReader {
    /// A reader whose decoded lists are at most `max_list_bytes` octets (name + value + 32 per
    /// field) and `max_fields` fields; a larger list is an error, checked before it is copied.
    pub fn new(max_list_bytes: usize, max_fields: usize) -> Self {
        HeaderBlockReader {
            decoder: Decoder::new(DecodeLimits {
                max_list_bytes,
                max_fields,
            }),
        }
    }

    /// Decodes one whole header block (the fragments of a HEADERS frame and its CONTINUATIONs,
    /// joined).
    pub fn read(&mut self, block: &[u8]) -> Result<Vec<Header>, HpackError> {
        self.decoder.decode_block(block)
    }
}
