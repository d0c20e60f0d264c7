//! Escapes: how the text format writes arbitrary bytes on lines of text.

use std::fmt::Write as _;

use crate::parse::ParseErrorKind;

/// Writes `bytes` as escaped text: printable ASCII and valid non-control UTF-8 as is, `\\` for a
/// backslash, `\r`, `\n`, `\t`, and `\xHH` for every other byte.
pub fn escape(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 8);
    let mut rest = bytes;
    while !rest.is_empty() {
        let (valid, bad) = match std::str::from_utf8(rest) {
            Ok(s) => (s, 0),
            Err(e) => {
                let (v, r) = rest.split_at(e.valid_up_to());
                let n = e.error_len().unwrap_or(r.len());
                (std::str::from_utf8(v).unwrap_or(""), n)
            }
        };
        for c in valid.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\r' => out.push_str("\\r"),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                c if c.is_control() => {
                    let mut buf = [0u8; 4];
                    for b in c.encode_utf8(&mut buf).bytes() {
                        let _ = write!(out, "\\x{b:02x}");
                    }
                }
                c => out.push(c),
            }
        }
        let consumed = valid.len();
        for b in &rest[consumed..consumed + bad] {
            let _ = write!(out, "\\x{b:02x}");
        }
        rest = &rest[consumed + bad..];
    }
    out
}

/// Reverses [`escape`].
pub fn unescape(text: &str) -> Result<Vec<u8>, ParseErrorKind> {
    let mut out = Vec::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        match b.get(i + 1) {
            Some(b'\\') => out.push(b'\\'),
            Some(b'r') => out.push(b'\r'),
            Some(b'n') => out.push(b'\n'),
            Some(b't') => out.push(b'\t'),
            Some(b'x') => {
                let hex = text.get(i + 2..i + 4).ok_or(ParseErrorKind::BadEscape)?;
                let v = u8::from_str_radix(hex, 16).map_err(|_| ParseErrorKind::BadEscape)?;
                out.push(v);
                i += 4;
                continue;
            }
            _ => return Err(ParseErrorKind::BadEscape),
        }
        i += 2;
    }
    Ok(out)
}

/// Writes escaped bytes as lines prefixed with `prefix`, breaking after every `\n` byte.
pub(crate) fn write_block(out: &mut String, prefix: &str, bytes: &[u8]) {
    for line in bytes.split_inclusive(|b| *b == b'\n') {
        out.push_str(prefix);
        out.push_str(&escape(line));
        out.push('\n');
    }
}
