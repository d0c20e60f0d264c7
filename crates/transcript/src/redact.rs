//! Redaction: secrets never reach a transcript.
//!
//! Two kinds of secret are redacted: the value of every `Authorization` request header, and the
//! value of every query parameter whose name marks it as a secret ([`is_secret_param`]), both in
//! the request line of every request and in the configured URL.

use crate::REDACTED;

/// Parts of a query parameter's name that mark its value as a secret, compared without regard to
/// ASCII case: `access_token`, `api_key`, `apiKey`, `client_secret`, `password`, `sig`,
/// `X-Amz-Credential`, `code`, `session_id`… are all redacted. A harmless parameter that happens
/// to match (`country_code`) loses its value in the transcript, never the reverse.
pub const SECRET_PARAM_MARKERS: [&str; 9] = [
    "token",
    "key",
    "secret",
    "pass",
    "auth",
    "sig",
    "credential",
    "code",
    "session",
];

/// Replaces the value of every `Authorization` header of an HTTP/1.1 request by
/// `Bearer <redacted>` (when it was a bearer credential) or `<redacted>`, and the value of every
/// secret query parameter of the request target by `<redacted>` (see [`redact_query`]). Every
/// other byte of the request line, the other headers and the body are kept.
pub fn redact_request(request: &[u8]) -> Vec<u8> {
    let head_end = find(request, b"\r\n\r\n").map_or(request.len(), |i| i + 4);
    let (head, body) = request.split_at(head_end);
    let mut out = Vec::with_capacity(request.len());
    for (n, line) in split_inclusive(head, b'\n').enumerate() {
        if n == 0 {
            redact_request_line(line, &mut out);
            continue;
        }
        let name_end = line.iter().position(|b| *b == b':');
        let is_auth = name_end.is_some_and(|i| line[..i].eq_ignore_ascii_case(b"authorization"));
        match (is_auth, name_end) {
            (true, Some(i)) => {
                let value = line[i + 1..].trim_ascii_start();
                out.extend_from_slice(&line[..=i]);
                out.push(b' ');
                let bearer = value.len() >= 7 && value[..7].eq_ignore_ascii_case(b"bearer ");
                if bearer {
                    out.extend_from_slice(&value[..7]);
                }
                out.extend_from_slice(REDACTED.as_bytes());
                let ending: &[u8] = if line.ends_with(b"\r\n") {
                    b"\r\n"
                } else if line.ends_with(b"\n") {
                    b"\n"
                } else {
                    b""
                };
                out.extend_from_slice(ending);
            }
            _ => out.extend_from_slice(line),
        }
    }
    out.extend_from_slice(body);
    out
}

/// Whether a query parameter of this name holds a secret: its name contains one of
/// [`SECRET_PARAM_MARKERS`], ignoring ASCII case.
pub fn is_secret_param(name: &[u8]) -> bool {
    SECRET_PARAM_MARKERS.iter().any(|m| {
        name.windows(m.len())
            .any(|w| w.eq_ignore_ascii_case(m.as_bytes()))
    })
}

/// Replaces the value of every secret parameter ([`is_secret_param`]) of a query string (the
/// part after `?`, without a fragment) by `<redacted>`. Parameters are separated by `&`; a
/// parameter without `=` has no value and is kept, as is every other byte.
pub fn redact_query(query: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(query.len());
    for (i, param) in query.split(|b| *b == b'&').enumerate() {
        if i > 0 {
            out.push(b'&');
        }
        match param.iter().position(|b| *b == b'=') {
            Some(eq) if is_secret_param(&param[..eq]) => {
                out.extend_from_slice(&param[..=eq]);
                out.extend_from_slice(REDACTED.as_bytes());
            }
            _ => out.extend_from_slice(param),
        }
    }
    out
}

/// A URL (or origin-form request target) with the values of its secret query parameters
/// replaced by `<redacted>` ([`redact_query`]); everything before the `?` and any fragment are
/// kept.
pub fn redact_url(url: &str) -> String {
    let Some((before, after)) = url.split_once('?') else {
        return url.to_owned();
    };
    let (query, fragment) = after.split_at(after.find('#').unwrap_or(after.len()));
    // The query is split at ASCII bytes only, so it stays valid UTF-8.
    let query = String::from_utf8_lossy(&redact_query(query.as_bytes())).into_owned();
    format!("{before}?{query}{fragment}")
}

/// The request line `METHOD SP target SP version`, with the target's query redacted.
fn redact_request_line(line: &[u8], out: &mut Vec<u8>) {
    let Some(sp) = line.iter().position(|b| *b == b' ') else {
        out.extend_from_slice(line);
        return;
    };
    let (method, rest) = line.split_at(sp + 1);
    let end = rest
        .iter()
        .position(|b| matches!(b, b' ' | b'\r' | b'\n'))
        .unwrap_or(rest.len());
    let (target, tail) = rest.split_at(end);
    let Some(q) = target.iter().position(|b| *b == b'?') else {
        out.extend_from_slice(line);
        return;
    };
    out.extend_from_slice(method);
    out.extend_from_slice(&target[..=q]);
    let query = &target[q + 1..];
    let query_end = query.iter().position(|b| *b == b'#').unwrap_or(query.len());
    out.extend_from_slice(&redact_query(&query[..query_end]));
    out.extend_from_slice(&query[query_end..]);
    out.extend_from_slice(tail);
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn split_inclusive(bytes: &[u8], sep: u8) -> impl Iterator<Item = &[u8]> {
    bytes.split_inclusive(move |b| *b == sep)
}
