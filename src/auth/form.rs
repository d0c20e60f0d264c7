//! `application/x-www-form-urlencoded` encoding and decoding (bodies of token and
//! registration-free requests, authorization request queries, callback queries).
use crate::prelude::*;

use core::fmt::Write;

/// The most parameters read from one query or form.
pub const MAX_QUERY_PARAMS: usize = 64;
/// The most bytes of a query read.
pub const MAX_QUERY_BYTES: usize = 16 * 1024;

/// Why a query was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum QueryError {
    /// Longer than [`MAX_QUERY_BYTES`].
    #[error("the query is longer than {limit} bytes")]
    TooLong {
        /// The limit.
        limit: usize,
    },
    /// More than [`MAX_QUERY_PARAMS`] parameters.
    #[error("the query has more than {limit} parameters")]
    TooManyParams {
        /// The limit.
        limit: usize,
    },
    /// A `%` not followed by two hexadecimal digits.
    #[error("the query has a malformed percent-escape")]
    BadEscape,
    /// A decoded name or value is not UTF-8.
    #[error("the query has a name or value that is not UTF-8")]
    NotUtf8,
    /// The same parameter twice (ambiguous in an authorization response).
    #[error("the query has parameter {name:?} twice")]
    Duplicate {
        /// The parameter name.
        name: String,
    },
}

/// Appends `s` percent-encoded: every byte except ALPHA, DIGIT, `-`, `.`, `_`, `~` becomes
/// `%HH`, so the result is safe in a query, a form body and a `Basic` credential.
pub fn encode_into(out: &mut String, s: &str) {
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
}

/// `s` percent-encoded as [`encode_into`] does.
pub fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    encode_into(&mut out, s);
    out
}

/// `name=value` pairs, each percent-encoded, joined by `&`.
pub fn encode_pairs<'a, I>(pairs: I) -> String
where
    I: IntoIterator<Item = (&'a str, &'a str)>,
{
    let mut out = String::new();
    for (n, v) in pairs {
        if !out.is_empty() {
            out.push('&');
        }
        encode_into(&mut out, n);
        out.push('=');
        encode_into(&mut out, v);
    }
    out
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Decodes one form component: `+` is a space, `%HH` a byte; the result must be UTF-8.
pub fn decode(s: &str) -> Result<String, QueryError> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        match c {
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b'%' => {
                let h = b.get(i + 1).copied().and_then(hex);
                let l = b.get(i + 2).copied().and_then(hex);
                match (h, l) {
                    (Some(h), Some(l)) => out.push(h << 4 | l),
                    _ => return Err(QueryError::BadEscape),
                }
                i += 3;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| QueryError::NotUtf8)
}

/// Parses a query (a leading `?` is ignored) into decoded pairs, refusing duplicates.
pub fn parse_query(query: &str) -> Result<Vec<(String, String)>, QueryError> {
    let query = query.strip_prefix('?').unwrap_or(query);
    if query.len() > MAX_QUERY_BYTES {
        return Err(QueryError::TooLong {
            limit: MAX_QUERY_BYTES,
        });
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for part in query.split('&').filter(|p| !p.is_empty()) {
        if out.len() >= MAX_QUERY_PARAMS {
            return Err(QueryError::TooManyParams {
                limit: MAX_QUERY_PARAMS,
            });
        }
        let (n, v) = part.split_once('=').unwrap_or((part, ""));
        let name = decode(n)?;
        if out.iter().any(|(o, _)| *o == name) {
            return Err(QueryError::Duplicate { name });
        }
        out.push((name, decode(v)?));
    }
    Ok(out)
}
