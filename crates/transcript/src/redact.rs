//! Redaction of recorded HTTP/1.1 requests: secrets never reach a transcript.
//!
//! What is a secret is the core's one policy, [`mcp_sansio::auth::redact`]: this module only
//! finds the request line and the header values of a request's bytes and hands them to it. The
//! value of every `Authorization` request header keeps only its scheme, and the value of every
//! secret query parameter is `<redacted>`, in the request line of every request and in the
//! configured URL ([`redact::url`]).

use mcp_sansio::auth::redact;

/// Replaces the credentials of every `Authorization` header of an HTTP/1.1 request
/// ([`redact::authorization`]: `Bearer <redacted>`, `Basic <redacted>` or `<redacted>`), and the
/// value of every secret query parameter of the request target by `<redacted>`
/// ([`redact::query`]). Every other byte of the request line, the other headers and the body are
/// kept.
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
        // `DPoP` carries a proof bound to the token (RFC 9449): kept out like a credential.
        let is_auth = name_end.is_some_and(|i| {
            line[..i].eq_ignore_ascii_case(b"authorization")
                || line[..i].eq_ignore_ascii_case(b"dpop")
        });
        match (is_auth, name_end) {
            (true, Some(i)) => {
                let ending: &[u8] = if line.ends_with(b"\r\n") {
                    b"\r\n"
                } else if line.ends_with(b"\n") {
                    b"\n"
                } else {
                    b""
                };
                let value = line[i + 1..line.len() - ending.len()].trim_ascii();
                out.extend_from_slice(&line[..=i]);
                out.push(b' ');
                out.extend_from_slice(&redact::authorization_bytes(value));
                out.extend_from_slice(ending);
            }
            _ => out.extend_from_slice(line),
        }
    }
    out.extend_from_slice(body);
    out
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
    out.extend_from_slice(&redact::query(&query[..query_end]));
    if let Some(fragment) = query.get(query_end + 1..) {
        out.push(b'#');
        out.extend_from_slice(&redact::query(fragment));
    }
    out.extend_from_slice(tail);
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn split_inclusive(bytes: &[u8], sep: u8) -> impl Iterator<Item = &[u8]> {
    bytes.split_inclusive(move |b| *b == sep)
}
