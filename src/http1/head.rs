//! Parsing of a complete HTTP/1.x header block: the status line and fields (with `httparse`),
//! and what they say about the body's framing and the connection's reuse.
use crate::prelude::*;

use crate::budget::Budget;

use super::error::Http1Error;
use super::response::{Framing, ResponseLimits};

pub(super) fn header_count_exceeded(limits: &ResponseLimits) -> Http1Error {
    limits.exceeded(Budget::HeaderCount).into()
}

/// Header slots for parsing `block`: the limit, but never more than the block could hold (a
/// field takes at least 3 bytes, `a:\n`), so a large configured limit allocates nothing extra.
pub(super) fn header_slots(block: &[u8], limits: &ResponseLimits) -> usize {
    limits.header_count.min(block.len() / 3 + 1)
}

/// A parsed status line and header block.
pub(super) struct ParsedHead {
    /// Minor version: 0 or 1.
    pub(super) minor: u8,
    pub(super) status: u16,
    pub(super) reason: String,
    pub(super) headers: Vec<(String, Vec<u8>)>,
}

pub(super) fn parse_head(block: &[u8], limits: &ResponseLimits) -> Result<ParsedHead, Http1Error> {
    let mut slots = vec![httparse::EMPTY_HEADER; header_slots(block, limits)];
    let mut resp = httparse::Response::new(&mut slots);
    let n = match resp.parse(block) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => {
            return Err(Http1Error::Malformed {
                what: "header block",
            })
        }
        Err(e) => return Err(map_httparse_error(e, limits)),
    };
    if n != block.len() {
        return Err(Http1Error::Malformed {
            what: "header block",
        });
    }
    let minor = match resp.version {
        Some(v @ (0 | 1)) => v,
        _ => return Err(Http1Error::UnsupportedVersion),
    };
    let status = match resp.code {
        Some(c @ 100..=599) => c,
        _ => {
            return Err(Http1Error::Malformed {
                what: "status code",
            })
        }
    };
    // httparse drops a reason phrase with obs-text; take it from the status line, lossily.
    // The line is `HTTP/1.x NNN[ reason]` + (CR)LF.
    let line_end = memchr::memchr(b'\n', block).unwrap_or(block.len());
    let line = block.get(..line_end).unwrap_or_default();
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let reason = String::from_utf8_lossy(line.get(13..).unwrap_or_default()).into_owned();
    let headers = resp
        .headers
        .iter()
        .map(|h| (h.name.to_owned(), h.value.to_vec()))
        .collect();
    Ok(ParsedHead {
        minor,
        status,
        reason,
        headers,
    })
}

pub(super) fn map_httparse_error(e: httparse::Error, limits: &ResponseLimits) -> Http1Error {
    match e {
        httparse::Error::TooManyHeaders => header_count_exceeded(limits),
        httparse::Error::Version => Http1Error::UnsupportedVersion,
        httparse::Error::Status => Http1Error::Malformed {
            what: "status line",
        },
        httparse::Error::HeaderName => Http1Error::Malformed {
            what: "header name",
        },
        httparse::Error::HeaderValue => Http1Error::Malformed {
            what: "header value",
        },
        httparse::Error::NewLine => Http1Error::Malformed {
            what: "line ending",
        },
        httparse::Error::Token => Http1Error::Malformed { what: "token" },
    }
}

/// The comma-separated, trimmed, non-empty elements of every field named `name`.
pub(super) fn list_elements<'h>(
    head: &'h ParsedHead,
    name: &'h str,
) -> impl Iterator<Item = &'h [u8]> + 'h {
    head.headers
        .iter()
        .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
        .flat_map(|(_, v)| v.split(|&b| b == b','))
        .map(trim_ows)
}

pub(super) fn trim_ows(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

pub(super) fn has_header(head: &ParsedHead, name: &str) -> bool {
    head.headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case(name))
}

/// The framing of a final response, and whether its framing headers allow reuse.
pub(super) fn framing(head: &ParsedHead) -> Result<(Framing, bool), Http1Error> {
    let has_te = has_header(head, "transfer-encoding");
    let has_cl = has_header(head, "content-length");
    if head.status == 204 || head.status == 304 {
        // No body whatever the headers say; a server that announces one anyway is not trusted
        // with another request on this connection.
        let announces_body = has_te || !matches!(content_length(head), Ok(None | Some(0)));
        return Ok((Framing::NoBody, !announces_body));
    }
    if has_te && has_cl {
        return Err(Http1Error::ConflictingFraming);
    }
    if has_te {
        if head.minor == 0 {
            return Err(Http1Error::UnsupportedTransferEncoding);
        }
        let mut codings = list_elements(head, "transfer-encoding").filter(|c| !c.is_empty());
        return match (codings.next(), codings.next()) {
            (Some(c), None) if c.eq_ignore_ascii_case(b"chunked") => Ok((Framing::Chunked, true)),
            _ => Err(Http1Error::UnsupportedTransferEncoding),
        };
    }
    match content_length(head)? {
        Some(n) => Ok((Framing::ContentLength(n), true)),
        None => Ok((Framing::CloseDelimited, false)),
    }
}

/// The `Content-Length`, if any: every element of every field must be the same decimal number.
pub(super) fn content_length(head: &ParsedHead) -> Result<Option<u64>, Http1Error> {
    let mut value: Option<u64> = None;
    for element in list_elements(head, "content-length") {
        let n = parse_decimal(element).ok_or(Http1Error::InvalidContentLength)?;
        match value {
            Some(v) if v != n => return Err(Http1Error::ConflictingContentLength),
            _ => value = Some(n),
        }
    }
    Ok(value)
}

pub(super) fn parse_decimal(s: &[u8]) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    s.iter().try_fold(0u64, |acc, &b| {
        if !b.is_ascii_digit() {
            return None;
        }
        acc.checked_mul(10)?.checked_add(u64::from(b - b'0'))
    })
}

/// Whether the server lets the connection stay open after this response.
pub(super) fn keep_alive(head: &ParsedHead) -> bool {
    let mut close = false;
    let mut keep = false;
    for token in list_elements(head, "connection") {
        close |= token.eq_ignore_ascii_case(b"close");
        keep |= token.eq_ignore_ascii_case(b"keep-alive");
    }
    !close && (head.minor == 1 || keep)
}
