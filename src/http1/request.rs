//! HTTP/1.1 request encoding.
use crate::prelude::*;

use crate::wire::{Method, Request};

/// Why a [`Request`] could not be encoded for its wire. Nothing is written when encoding fails.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// A header name is empty or not an RFC 9110 token.
    #[error("invalid request header name {name:?}")]
    InvalidHeaderName {
        /// The offending name.
        name: String,
    },
    /// A header value (or the `Host` value, the authority) contains CR, LF, NUL or another
    /// control character. The value is not part of the message: it may be a secret.
    #[error("invalid value for request header {name:?} (it contains a control character)")]
    InvalidHeaderValue {
        /// The name of the header whose value is invalid (`Host` for the authority).
        name: String,
    },
    /// The request target is empty, does not start with `/`, or contains whitespace, control or
    /// non-ASCII characters.
    #[error("invalid request target (it must start with '/' and contain only visible ASCII)")]
    InvalidTarget,
    /// `Host`, `Content-Length` or `Transfer-Encoding` was passed in the extra headers; the
    /// encoder writes the first two itself and never uses the third.
    #[error("request header {name:?} is reserved to the encoder")]
    ReservedHeader {
        /// The reserved name, as passed.
        name: String,
    },
}

const RESERVED: [&str; 3] = ["host", "content-length", "transfer-encoding"];

/// Appends `request` encoded as HTTP/1.1 to `out`:
/// `METHOD SP path SP HTTP/1.1 CRLF`, `Host: authority CRLF`, the headers in order,
/// `Content-Length: N CRLF` (when the body is non-empty or the method is `POST`), `CRLF`, the
/// body.
///
/// Validates first: header names are RFC 9110 tokens, header values and the authority contain
/// no control characters other than HTAB (the authority no whitespace at all), the path (the
/// origin-form target) is non-empty, starts with `/` and is visible ASCII, and no reserved header
/// (`Host`, `Content-Length`, `Transfer-Encoding`) is passed. On error nothing is appended.
pub fn encode_into(request: &Request, out: &mut Vec<u8>) -> Result<(), RequestError> {
    encode_parts(
        request.method,
        &request.path,
        &request.authority,
        &request.headers,
        &request.body,
        out,
    )
}

/// Checks `request` by the rules [`encode_into`] applies (no CR, LF or NUL anywhere, tokens as
/// names, an origin-form path, no reserved header) without encoding it.
pub(crate) fn check(request: &Request) -> Result<(), RequestError> {
    validate(&request.path, &request.authority, &request.headers)
}

/// Encodes `request` as HTTP/1.1 into a new buffer; see [`encode_into`].
pub fn encode(request: &Request) -> Result<Vec<u8>, RequestError> {
    let mut out = Vec::new();
    encode_into(request, &mut out)?;
    Ok(out)
}

/// Validates and encodes a request given by its parts (see [`encode_into`]).
pub(crate) fn encode_parts(
    method: Method,
    target: &str,
    authority: &str,
    headers: &[(String, String)],
    body: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), RequestError> {
    validate(target, authority, headers)?;
    let content_length = if !body.is_empty() || method == Method::Post {
        Some(body.len().to_string())
    } else {
        None
    };

    let mut size = method.as_str().len() + target.len() + authority.len() + body.len() + 32;
    for (name, value) in headers {
        size = size.saturating_add(name.len() + value.len() + 4);
    }
    if let Some(cl) = &content_length {
        size = size.saturating_add(cl.len() + 18);
    }
    out.reserve(size);

    out.extend_from_slice(method.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(target.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\nHost: ");
    out.extend_from_slice(authority.as_bytes());
    out.extend_from_slice(b"\r\n");
    for (name, value) in headers {
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if let Some(cl) = &content_length {
        out.extend_from_slice(b"Content-Length: ");
        out.extend_from_slice(cl.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
    Ok(())
}

fn validate(
    target: &str,
    authority: &str,
    headers: &[(String, String)],
) -> Result<(), RequestError> {
    if !is_valid_target(target) {
        return Err(RequestError::InvalidTarget);
    }
    if authority.is_empty() || !authority.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(RequestError::InvalidHeaderValue {
            name: "Host".to_owned(),
        });
    }
    for (name, value) in headers {
        if !is_token(name) {
            return Err(RequestError::InvalidHeaderName { name: name.clone() });
        }
        if RESERVED.iter().any(|r| name.eq_ignore_ascii_case(r)) {
            return Err(RequestError::ReservedHeader { name: name.clone() });
        }
        if !is_valid_value(value) {
            return Err(RequestError::InvalidHeaderValue { name: name.clone() });
        }
    }
    Ok(())
}

/// `token = 1*tchar` (RFC 9110 §5.6.2).
pub(crate) fn is_token(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(is_tchar)
}

/// `tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`" / "|" /
/// "~" / DIGIT / ALPHA`.
pub(crate) fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'!' | b'#'
                | b'$'
                | b'%'
                | b'&'
                | b'\''
                | b'*'
                | b'+'
                | b'-'
                | b'.'
                | b'^'
                | b'_'
                | b'`'
                | b'|'
                | b'~'
        )
}

/// No control characters except HTAB (so no CR, LF, NUL or DEL).
fn is_valid_value(v: &str) -> bool {
    v.bytes().all(|b| b == b'\t' || !b.is_ascii_control())
}

/// Non-empty, starts with `/`, visible ASCII only.
fn is_valid_target(t: &str) -> bool {
    t.starts_with('/') && t.bytes().all(|b| b.is_ascii_graphic())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post(headers: &[(&str, &str)]) -> Request {
        Request {
            method: Method::Post,
            path: "/mcp".into(),
            authority: "h:1".into(),
            headers: headers
                .iter()
                .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
                .collect(),
            body: b"{}".to_vec(),
        }
    }

    #[test]
    fn get_without_body_has_no_content_length() {
        let r = Request {
            method: Method::Get,
            path: "/".into(),
            authority: "h".into(),
            headers: vec![],
            body: vec![],
        };
        assert_eq!(encode(&r).unwrap(), b"GET / HTTP/1.1\r\nHost: h\r\n\r\n");
    }

    #[test]
    fn post_with_empty_body_has_content_length_zero() {
        let mut r = post(&[]);
        r.body.clear();
        assert_eq!(
            encode(&r).unwrap(),
            b"POST /mcp HTTP/1.1\r\nHost: h:1\r\nContent-Length: 0\r\n\r\n"
        );
    }

    #[test]
    fn delete_with_body_has_content_length() {
        let mut r = post(&[]);
        r.method = Method::Delete;
        assert_eq!(
            encode(&r).unwrap(),
            b"DELETE /mcp HTTP/1.1\r\nHost: h:1\r\nContent-Length: 2\r\n\r\n{}"
        );
    }

    #[test]
    fn htab_and_obs_text_values_are_allowed() {
        let r = post(&[("X-A", "a\tb"), ("X-B", "é")]);
        assert!(encode(&r).is_ok());
    }

    #[test]
    fn invalid_names() {
        for name in ["", "X A", "X:A", "X\r\nA", "Ä", "(x)"] {
            let r = post(&[(name, "v")]);
            assert_eq!(
                encode(&r),
                Err(RequestError::InvalidHeaderName { name: name.into() }),
                "{name:?}"
            );
        }
    }

    #[test]
    fn invalid_values() {
        for value in ["a\rb", "a\nb", "a\0b", "a\x7fb", "a\x01b"] {
            let r = post(&[("X", value)]);
            assert_eq!(
                encode(&r),
                Err(RequestError::InvalidHeaderValue { name: "X".into() })
            );
        }
    }

    #[test]
    fn invalid_targets() {
        for target in ["", "mcp", "*", "/a b", "/a\r\n", "/é", "http://h/"] {
            let mut r = post(&[]);
            r.path = target.into();
            assert_eq!(encode(&r), Err(RequestError::InvalidTarget), "{target:?}");
        }
    }

    #[test]
    fn invalid_authority_is_reported_as_host_value() {
        for authority in ["", "h\r\nX: y", "h x"] {
            let mut r = post(&[]);
            r.authority = authority.into();
            assert_eq!(
                encode(&r),
                Err(RequestError::InvalidHeaderValue {
                    name: "Host".into()
                })
            );
        }
    }

    #[test]
    fn reserved_headers() {
        for name in ["Host", "content-length", "Transfer-Encoding", "HOST"] {
            let r = post(&[(name, "1")]);
            assert_eq!(
                encode(&r),
                Err(RequestError::ReservedHeader { name: name.into() })
            );
        }
    }

    #[test]
    fn error_appends_nothing() {
        let r = post(&[("Ok", "v"), ("Bad", "x\ny")]);
        let mut out = b"prefix".to_vec();
        assert!(encode_into(&r, &mut out).is_err());
        assert_eq!(out, b"prefix");
    }
}
