//! The redaction of what a client writes on an HTTP/2 socket (header blocks), and the frame
//! layout read without the core's decoder (which refuses what it must).

use mcp_sansio::h2::trace::{flag, kind, PREFACE};

use mcp_sansio::auth::redact::{self, REDACTED};

/// A frame header: (type, flags, stream id, payload length).
pub(super) fn header(b: &[u8]) -> Option<(u8, u8, u32, usize)> {
    if b.len() < 9 {
        return None;
    }
    let len = (usize::from(b[0]) << 16) | (usize::from(b[1]) << 8) | usize::from(b[2]);
    let sid = u32::from_be_bytes([b[5], b[6], b[7], b[8]]) & 0x7fff_ffff;
    Some((b[3], b[4], sid, len))
}

pub(super) fn push_header(out: &mut Vec<u8>, ty: u8, flags: u8, sid: u32, len: usize) {
    let len = len as u32;
    out.extend_from_slice(&len.to_be_bytes()[1..]);
    out.push(ty);
    out.push(flags);
    out.extend_from_slice(&sid.to_be_bytes());
}

/// The header block fragment of a HEADERS or CONTINUATION payload (padding and priority
/// removed), or `None` if they do not fit.
pub(super) fn fragment(ty: u8, flags: u8, payload: &[u8]) -> Option<&[u8]> {
    if ty != kind::HEADERS {
        return Some(payload);
    }
    let mut p = payload;
    let mut pad = 0;
    if flags & flag::PADDED != 0 {
        pad = usize::from(*p.first()?);
        p = &p[1..];
    }
    if flags & flag::PRIORITY != 0 {
        p = p.get(5..)?;
    }
    p.get(..p.len().checked_sub(pad)?)
}

/// An HPACK integer with an `n`-bit prefix at the start of `b`: (value, octets), at most 5
/// octets after the first.
fn read_int(b: &[u8], n: u8) -> Option<(u64, usize)> {
    let max = (1u64 << n) - 1;
    let mut v = u64::from(*b.first()?) & max;
    if v < max {
        return Some((v, 1));
    }
    for i in 1..=5 {
        let byte = *b.get(i)?;
        v += u64::from(byte & 0x7f) << (7 * (i - 1));
        if byte & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

fn write_int(out: &mut Vec<u8>, first: u8, n: u8, mut v: u64) {
    let max = (1u64 << n) - 1;
    if v < max {
        out.push(first | v as u8);
        return;
    }
    out.push(first | max as u8);
    v -= max;
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// An HPACK string at the start of `b`: (Huffman-coded, raw octets, octets taken).
fn read_str(b: &[u8]) -> Option<(bool, &[u8], usize)> {
    let huffman = *b.first()? & 0x80 != 0;
    let (len, n) = read_int(b, 7)?;
    let end = n.checked_add(usize::try_from(len).ok()?)?;
    Some((huffman, b.get(n..end)?, end))
}

fn write_str(out: &mut Vec<u8>, s: &[u8]) {
    write_int(out, 0, 7, s.len() as u64);
    out.extend_from_slice(s);
}

/// Static table indexes whose name matters here: `:path` (4, 5) and `authorization` (23).
const PATH_INDEXES: [u64; 2] = [4, 5];
const AUTHORIZATION_INDEX: u64 = 23;

/// A header block with its secrets redacted (see the [`h2`](crate::h2) module docs). Representations
/// are copied octet for octet; only the values of secret fields change. A block that cannot be
/// walked is cut where the walk stopped, so nothing after it can leak.
pub fn redact_header_block(block: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(block.len());
    let mut i = 0;
    while i < block.len() {
        let b = &block[i..];
        let first = b[0];
        if first & 0x80 != 0 || first & 0xe0 == 0x20 {
            // Indexed field, or dynamic table size update: no literal value.
            let prefix = if first & 0x80 != 0 { 7 } else { 5 };
            let Some((_, n)) = read_int(b, prefix) else {
                break;
            };
            out.extend_from_slice(&b[..n]);
            i += n;
            continue;
        }
        let (prefix, never) = if first & 0xc0 == 0x40 {
            (6, false)
        } else {
            (4, first & 0x10 != 0)
        };
        let Some((index, mut n)) = read_int(b, prefix) else {
            break;
        };
        let (secret, path) = if index == 0 {
            let Some((huffman, name, taken)) = read_str(&b[n..]) else {
                break;
            };
            n += taken;
            (
                never
                    || huffman
                    || name.eq_ignore_ascii_case(b"authorization")
                    || name.eq_ignore_ascii_case(b"dpop"),
                !huffman && name == b":path",
            )
        } else {
            (
                never || index == AUTHORIZATION_INDEX,
                PATH_INDEXES.contains(&index),
            )
        };
        let Some((huffman, value, taken)) = read_str(&b[n..]) else {
            break;
        };
        out.extend_from_slice(&b[..n]);
        if secret {
            let v = if huffman {
                REDACTED.as_bytes().to_vec()
            } else {
                redact::authorization_bytes(value)
            };
            write_str(&mut out, &v);
        } else if path && !huffman {
            let v = redact::url(&String::from_utf8_lossy(value));
            write_str(&mut out, v.as_bytes());
        } else {
            out.extend_from_slice(&b[n..n + taken]);
        }
        i += n + taken;
    }
    out
}

/// Redacts what a client wrote on one HTTP/2 socket, as it goes: the connection preface and
/// every frame are kept, except header blocks (HEADERS and their CONTINUATIONs), which are
/// redacted ([`redact_header_block`]) and framed again. Bytes of a frame or header block not
/// yet complete are held until the next [`push`](Self::push) ([`H2Socket`] writes whole frames,
/// so nothing is held for it).
///
/// Its `Debug` output shows how many octets it holds, never them (they are not yet redacted).
///
/// [`H2Socket`]: mcp_sansio::mux::H2Socket
#[derive(Clone)]
pub struct H2WriteRedactor {
    preface_left: usize,
    held: Vec<u8>,
}

impl std::fmt::Debug for H2WriteRedactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("H2WriteRedactor")
            .field("preface_left", &self.preface_left)
            .field("held_len", &self.held.len())
            .finish()
    }
}

impl Default for H2WriteRedactor {
    fn default() -> Self {
        H2WriteRedactor {
            preface_left: PREFACE.len(),
            held: Vec::new(),
        }
    }
}

impl H2WriteRedactor {
    /// A redactor for a new socket (whose first octets are the connection preface).
    pub fn new() -> Self {
        H2WriteRedactor::default()
    }

    /// Octets held, waiting for the rest of their frame or header block.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// The redacted form of everything complete so far.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<u8> {
        self.held.extend_from_slice(bytes);
        let held = std::mem::take(&mut self.held);
        let mut out = Vec::with_capacity(held.len());
        let mut i = 0;
        if self.preface_left > 0 {
            let n = self.preface_left.min(held.len());
            out.extend_from_slice(&held[..n]);
            self.preface_left -= n;
            i = n;
        }
        while let Some((ty, flags, sid, len)) = header(&held[i..]) {
            let end = i + 9 + len;
            if end > held.len() {
                break;
            }
            if ty != kind::HEADERS {
                out.extend_from_slice(&held[i..end]);
                i = end;
                continue;
            }
            // The block: this HEADERS and the CONTINUATIONs up to END_HEADERS.
            let mut block = fragment(ty, flags, &held[i + 9..end])
                .unwrap_or_default()
                .to_vec();
            let mut j = end;
            let mut ended = flags & flag::END_HEADERS != 0;
            while !ended {
                match header(&held[j..]) {
                    Some((kind::CONTINUATION, f, s, l)) if s == sid => {
                        if j + 9 + l > held.len() {
                            break;
                        }
                        block.extend_from_slice(&held[j + 9..j + 9 + l]);
                        ended = f & flag::END_HEADERS != 0;
                        j += 9 + l;
                    }
                    // Another frame inside a block (the core never writes one): the block ends.
                    Some(_) => ended = true,
                    None => break,
                }
            }
            if !ended {
                break; // the rest of the block comes with the next write
            }
            frame_block(
                &mut out,
                sid,
                flags & flag::END_STREAM,
                &redact_header_block(&block),
            );
            i = j;
        }
        self.held = held[i..].to_vec();
        out
    }
}

/// Writes a header block as HEADERS (+ CONTINUATION) frames of at most 16384 octets.
fn frame_block(out: &mut Vec<u8>, sid: u32, end_stream: u8, block: &[u8]) {
    const MAX: usize = 16384;
    let mut pieces = block.chunks(MAX).peekable();
    let first = pieces.next().unwrap_or(&[]);
    let last = pieces.peek().is_none();
    let end_headers = if last { flag::END_HEADERS } else { 0 };
    push_header(
        out,
        kind::HEADERS,
        end_stream | end_headers,
        sid,
        first.len(),
    );
    out.extend_from_slice(first);
    while let Some(p) = pieces.next() {
        let end_headers = if pieces.peek().is_none() {
            flag::END_HEADERS
        } else {
            0
        };
        push_header(out, kind::CONTINUATION, end_headers, sid, p.len());
        out.extend_from_slice(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::h2::H2Writes;

    /// The octets of an incomplete header block are held as written, not yet redacted: the
    /// redactor's Debug shows their count, never them (not even as a list of numbers).
    #[test]
    fn held_octets_are_not_shown_by_debug() {
        let token = "Bearer held-SECRET-token";
        let fragment = block(&[("authorization", token)]);
        let mut frame = Vec::new();
        mcp_sansio::internals::h2::frame::Frame::Headers {
            stream_id: 1,
            end_stream: false,
            end_headers: true,
            priority: None,
            fragment,
            pad_len: None,
        }
        .encode(&mut frame);
        let mut r = H2WriteRedactor::new();
        r.push(PREFACE);
        // All but the last octet: the frame is incomplete, so held.
        assert!(r.push(&frame[..frame.len() - 1]).is_empty());
        // The octets of the token's start, which the held part holds in full.
        let octets = format!("{:?}", &b"held-SECRET"[..]);
        let octets = octets.trim_start_matches('[').trim_end_matches(']');
        for text in [format!("{r:?}"), format!("{r:#?}")] {
            assert!(text.contains("H2WriteRedactor"), "{text}");
            assert!(!text.contains("held-SECRET-token"), "{text}");
            assert!(!text.contains(octets), "{text}");
        }
    }
    use mcp_sansio::h2::trace::HeaderBlockReader;
    use mcp_sansio::internals::h2::hpack::Encoder;

    fn block(fields: &[(&str, &str)]) -> Vec<u8> {
        let mut out = Vec::new();
        Encoder::new().encode(
            fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())),
            &mut out,
        );
        out
    }

    fn decoded(block: &[u8]) -> Vec<(String, String)> {
        HeaderBlockReader::new(65536, 128)
            .read(block)
            .unwrap()
            .into_iter()
            .map(|h| {
                (
                    String::from_utf8(h.name).unwrap(),
                    String::from_utf8(h.value).unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn authorization_and_secret_query_values_are_redacted_in_a_block() {
        let b = block(&[
            (":method", "POST"),
            (":path", "/mcp?api_key=k123&x=1"),
            ("authorization", "Bearer s3cr3t-token"),
            ("content-type", "application/json"),
        ]);
        let r = redact_header_block(&b);
        assert!(!r.windows(6).any(|w| w == b"s3cr3t"));
        assert!(!r.windows(4).any(|w| w == b"k123"));
        assert_eq!(
            decoded(&r),
            [
                (":method".to_owned(), "POST".to_owned()),
                (":path".into(), "/mcp?api_key=<redacted>&x=1".into()),
                ("authorization".into(), "Bearer <redacted>".into()),
                ("content-type".into(), "application/json".into()),
            ]
        );
        // A block without secrets is kept octet for octet.
        let plain = block(&[(":method", "GET"), ("accept", "text/event-stream")]);
        assert_eq!(redact_header_block(&plain), plain);
        // A basic credential keeps its scheme, as everywhere (the core's policy); another
        // scheme is hidden whole.
        let basic = redact_header_block(&block(&[("authorization", "Basic dXNlcjpwYXNz")]));
        assert_eq!(decoded(&basic)[0].1, "Basic <redacted>");
        let other = redact_header_block(&block(&[("authorization", "Digest a=b")]));
        assert_eq!(decoded(&other)[0].1, "<redacted>");
    }

    #[test]
    fn a_literal_authorization_name_and_a_truncated_block_do_not_leak() {
        // Literal name (index 0), without indexing.
        let mut b = vec![0x00];
        write_str(&mut b, b"Authorization");
        write_str(&mut b, b"Bearer abcdef");
        let r = redact_header_block(&b);
        assert!(!r.windows(6).any(|w| w == b"abcdef"));
        // A value cut short: the walk stops and nothing after the name is kept.
        let mut cut = vec![0x1f, 0x08];
        cut.push(40);
        cut.extend_from_slice(b"Bearer xyz");
        let r = redact_header_block(&cut);
        assert!(!r.windows(3).any(|w| w == b"xyz"));
    }

    fn headers_frame(sid: u32, end_stream: bool, block: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let f = flag::END_HEADERS | if end_stream { flag::END_STREAM } else { 0 };
        push_header(&mut out, kind::HEADERS, f, sid, block.len());
        out.extend_from_slice(block);
        out
    }

    #[test]
    fn the_write_redactor_reframes_and_holds_partial_frames_in_any_split() {
        let b = block(&[(":path", "/mcp"), ("authorization", "Bearer tok-123456")]);
        let mut wire = PREFACE.to_vec();
        push_header(&mut wire, kind::SETTINGS, 0, 0, 0);
        wire.extend(headers_frame(1, false, &b));
        push_header(&mut wire, kind::DATA, flag::END_STREAM, 1, 2);
        wire.extend_from_slice(b"{}");
        let whole = H2WriteRedactor::new().push(&wire);
        assert!(!whole.windows(6).any(|w| w == b"123456"));
        let w = H2Writes::split(&whole);
        assert_eq!(w.preface, PREFACE);
        assert!(w.trailing.is_empty());
        assert_eq!(w.streams[&0].len(), 1);
        assert_eq!(w.streams[&1].len(), 2);
        // The redacted HEADERS is a valid frame whose length is its block's.
        let h = &w.streams[&1][0];
        let (ty, flags, sid, len) = header(h).unwrap();
        assert_eq!((ty, sid, len + 9), (kind::HEADERS, 1, h.len()));
        assert_eq!(flags, flag::END_HEADERS);
        assert_eq!(decoded(&h[9..])[1].1, "Bearer <redacted>");
        for size in [1, 2, 3, 7, 64] {
            let mut r = H2WriteRedactor::new();
            let mut got = Vec::new();
            for piece in wire.chunks(size) {
                got.extend(r.push(piece));
            }
            assert_eq!(got, whole, "pieces of {size}");
            assert_eq!(r.held(), 0);
        }
    }

    #[test]
    fn a_block_split_over_continuations_is_redacted_whole() {
        let b = block(&[("authorization", "Bearer abcdefghijkl")]);
        let (a, rest) = b.split_at(5);
        let mut wire = PREFACE.to_vec();
        push_header(&mut wire, kind::HEADERS, flag::END_STREAM, 3, a.len());
        wire.extend_from_slice(a);
        push_header(
            &mut wire,
            kind::CONTINUATION,
            flag::END_HEADERS,
            3,
            rest.len(),
        );
        wire.extend_from_slice(rest);
        let mut r = H2WriteRedactor::new();
        let first = r.push(&wire[..wire.len() - 3]);
        assert_eq!(first, PREFACE, "the block waits for its end");
        let out = [first, r.push(&wire[wire.len() - 3..])].concat();
        assert!(!out.windows(6).any(|w| w == b"efghij"));
        let w = H2Writes::split(&out);
        let frames = &w.streams[&3];
        assert_eq!(frames.len(), 1, "framed again as one HEADERS");
        assert_eq!(frames[0][4], flag::END_STREAM | flag::END_HEADERS);
    }
}
