//! Redaction: secrets never reach a transcript.

use crate::REDACTED;

/// Replaces the value of every `Authorization` header of an HTTP/1.1 request by
/// `Bearer <redacted>` (when it was a bearer credential) or `<redacted>`. The request line, other
/// headers and the body are kept byte for byte.
pub fn redact_request(request: &[u8]) -> Vec<u8> {
    let head_end = find(request, b"\r\n\r\n").map_or(request.len(), |i| i + 4);
    let (head, body) = request.split_at(head_end);
    let mut out = Vec::with_capacity(request.len());
    for line in split_inclusive(head, b'\n') {
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

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn split_inclusive(bytes: &[u8], sep: u8) -> impl Iterator<Item = &[u8]> {
    bytes.split_inclusive(move |b| *b == sep)
}
