//! Body framing of a response: `Content-Length` and close-delimited body slices, chunk-size
//! lines, and the trailer section of a chunked body.
use crate::prelude::*;

use crate::budget::{Budget, ByteLedger};

use super::super::error::Http1Error;
use super::super::head::{header_count_exceeded, header_slots, trim_ows};
use super::{ResponseDecoder, ResponseEvent};

impl ResponseDecoder {
    /// Reads a chunk-size line up to and including its LF into `buf`, failing as soon as it
    /// crosses `chunk_line_bytes`.
    pub(super) fn read_chunk_line(
        &mut self,
        rest: &[u8],
        ledger: &mut ByteLedger,
    ) -> Result<(usize, bool), Http1Error> {
        if rest.is_empty() {
            return Ok((0, false));
        }
        let cap = self.limits.chunk_line_bytes;
        let room = cap.saturating_sub(self.buf.len());
        let window = rest.get(..room).unwrap_or(rest);
        let end = memchr::memchr(b'\n', window);
        let exceeded = self.limits.exceeded(Budget::ChunkLine);
        self.take_line(rest, end, room, exceeded, ledger)
    }

    /// Validates the trailer section in `buf` (its fields are ignored).
    pub(super) fn check_trailers(&self) -> Result<(), Http1Error> {
        let mut headers = vec![httparse::EMPTY_HEADER; header_slots(&self.buf, &self.limits)];
        match httparse::parse_headers(&self.buf, &mut headers) {
            Ok(httparse::Status::Complete((n, _))) if n == self.buf.len() => Ok(()),
            Ok(_) => Err(Http1Error::Malformed {
                what: "trailer section",
            }),
            Err(httparse::Error::TooManyHeaders) => Err(header_count_exceeded(&self.limits)),
            Err(_) => Err(Http1Error::Malformed {
                what: "trailer field",
            }),
        }
    }
}

/// How many body bytes to take from `rest`: at most `limit` and what the ledger has left, and
/// charges them. A non-empty `rest` with an exhausted ledger fails.
pub(super) fn body_take(
    rest: &[u8],
    limit: u64,
    ledger: &mut ByteLedger,
) -> Result<usize, Http1Error> {
    let cap = limit.min(ledger.remaining());
    let take = rest.len().min(usize::try_from(cap).unwrap_or(usize::MAX));
    if take == 0 && !rest.is_empty() {
        // Only reachable with an exhausted ledger: charge the byte that does not fit.
        ledger.charge(1)?;
    }
    ledger.charge(take)?;
    Ok(take)
}

/// The `Body` event for the first `take` bytes of `rest` and the bytes it consumes; no event
/// when `take` is zero.
pub(super) fn body_event(rest: &[u8], take: usize) -> (usize, Option<ResponseEvent<'_>>) {
    match rest.get(..take) {
        Some(body) if !body.is_empty() => (take, Some(ResponseEvent::Body(body))),
        _ => (0, None),
    }
}

/// Parses a complete chunk-size line (with its line end): `1*HEXDIG [ BWS ";" ext ] CRLF`.
/// Extensions are ignored but must not contain control characters other than HTAB.
pub(super) fn parse_chunk_line(line: &[u8]) -> Result<u64, Http1Error> {
    let line = line
        .strip_suffix(b"\n")
        .and_then(|l| l.strip_suffix(b"\r"))
        .ok_or(Http1Error::Malformed {
            what: "chunk-size line not ended by CRLF",
        })?;
    let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    if digits == 0 {
        return Err(Http1Error::InvalidChunkSize);
    }
    let (hex, rest) = line.split_at(digits);
    let mut size: u64 = 0;
    for &b in hex {
        let d = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => return Err(Http1Error::InvalidChunkSize),
        };
        size = size
            .checked_mul(16)
            .and_then(|s| s.checked_add(u64::from(d)))
            .ok_or(Http1Error::InvalidChunkSize)?;
    }
    let rest = trim_ows(rest);
    match rest.first() {
        None => Ok(size),
        Some(b';') => {
            if rest.iter().all(|&b| b == b'\t' || !b.is_ascii_control()) {
                Ok(size)
            } else {
                Err(Http1Error::Malformed {
                    what: "chunk extension",
                })
            }
        }
        Some(_) => Err(Http1Error::InvalidChunkSize),
    }
}
