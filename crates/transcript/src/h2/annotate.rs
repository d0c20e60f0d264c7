//! Annotations: a `# ` comment per frame in the `write` and `read` blocks of the text form,
//! derived from the bytes (the reader skips them).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use mcp_sansio::h2::trace::{flag, kind, HeaderBlockReader, PREFACE};
use mcp_sansio::h2::Reason;

use super::redact::{fragment, header};

/// Writes `# …` lines describing the frames of the `write` and `read` blocks of a transcript.
/// Keeps, per socket and direction, where the next frame starts and the HPACK state, so frames
/// split across entries are described once, where their header completes.
#[derive(Clone, Debug, Default)]
pub(crate) struct Annotator {
    walks: BTreeMap<(u64, bool), Walk>,
}

#[derive(Clone, Debug)]
struct Walk {
    preface_left: usize,
    head: Vec<u8>,
    /// (type, flags, stream, payload octets left) of the frame being read.
    frame: Option<(u8, u8, u32, usize)>,
    payload: Vec<u8>,
    block: Vec<u8>,
    hpack: HeaderBlockReader,
}

/// One piece of a block: bytes starting a new line, or a comment.
pub(crate) enum Piece<'a> {
    Bytes(&'a [u8]),
    Note(String),
}

impl Annotator {
    /// A socket was opened: its walks start again.
    pub(crate) fn opened(&mut self, socket: u64) {
        self.walks.remove(&(socket, true));
        self.walks.remove(&(socket, false));
    }

    /// Cuts `bytes` at frame starts and adds a note for every frame whose header completes.
    pub(crate) fn pieces<'a>(
        &mut self,
        socket: u64,
        wrote: bool,
        bytes: &'a [u8],
    ) -> Vec<Piece<'a>> {
        let walk = self.walks.entry((socket, wrote)).or_insert_with(|| Walk {
            preface_left: if wrote { PREFACE.len() } else { 0 },
            head: Vec::new(),
            frame: None,
            payload: Vec::new(),
            block: Vec::new(),
            hpack: HeaderBlockReader::new(1 << 20, 4096),
        });
        let mut out = Vec::new();
        let mut i = 0;
        let mut start = 0;
        if walk.preface_left > 0 {
            let n = walk.preface_left.min(bytes.len());
            walk.preface_left -= n;
            out.push(Piece::Note("preface".into()));
            out.push(Piece::Bytes(&bytes[..n]));
            i = n;
            start = n;
        }
        while i < bytes.len() {
            if walk.frame.is_none() {
                if walk.head.is_empty() && i > start {
                    out.push(Piece::Bytes(&bytes[start..i]));
                    start = i;
                }
                let take = (9 - walk.head.len()).min(bytes.len() - i);
                walk.head.extend_from_slice(&bytes[i..i + take]);
                i += take;
                if let Some((ty, flags, sid, len)) = header(&walk.head) {
                    walk.head.clear();
                    out.push(Piece::Note(describe(ty, flags, sid, len)));
                    walk.frame = Some((ty, flags, sid, len));
                    walk.payload.clear();
                }
            }
            if let Some((ty, flags, sid, left)) = walk.frame {
                let take = left.min(bytes.len() - i);
                if walk.payload.len() < 1 << 16 {
                    walk.payload.extend_from_slice(&bytes[i..i + take]);
                }
                i += take;
                walk.frame = Some((ty, flags, sid, left - take));
                if left == take {
                    walk.frame = None;
                    if i > start {
                        out.push(Piece::Bytes(&bytes[start..i]));
                        start = i;
                    }
                    let payload = std::mem::take(&mut walk.payload);
                    for note in walk.finish(ty, flags, &payload) {
                        out.push(Piece::Note(note));
                    }
                }
            }
        }
        if i > start {
            out.push(Piece::Bytes(&bytes[start..i]));
        }
        out
    }
}

impl Walk {
    /// Notes after a complete frame: its settings, increment, error code, or header fields.
    fn finish(&mut self, ty: u8, flags: u8, payload: &[u8]) -> Vec<String> {
        let mut notes = Vec::new();
        match ty {
            kind::SETTINGS if flags & flag::ACK == 0 => {
                if payload.is_empty() {
                    return notes;
                }
                let mut s = String::from("  settings:");
                for c in payload.chunks_exact(6) {
                    let id = u16::from_be_bytes([c[0], c[1]]);
                    let v = u32::from_be_bytes([c[2], c[3], c[4], c[5]]);
                    let _ = write!(s, " {}={v}", setting_name(id));
                }
                notes.push(s);
            }
            kind::WINDOW_UPDATE if payload.len() == 4 => {
                let v = u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]);
                notes.push(format!("  increment {}", v & 0x7fff_ffff));
            }
            kind::RST_STREAM if payload.len() == 4 => {
                let v = u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]);
                notes.push(format!("  {}", Reason(v)));
            }
            kind::GOAWAY if payload.len() >= 8 => {
                let last = u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]);
                let v = u32::from_be_bytes([payload[4], payload[5], payload[6], payload[7]]);
                notes.push(format!(
                    "  last stream {}, {}",
                    last & 0x7fff_ffff,
                    Reason(v)
                ));
            }
            kind::HEADERS | kind::CONTINUATION => {
                if ty == kind::HEADERS {
                    self.block.clear();
                }
                if let Some(f) = fragment(ty, flags, payload) {
                    if self.block.len() < 1 << 20 {
                        self.block.extend_from_slice(f);
                    }
                }
                if flags & flag::END_HEADERS != 0 {
                    let block = std::mem::take(&mut self.block);
                    match self.hpack.read(&block) {
                        Ok(fields) => {
                            for h in fields {
                                notes.push(format!(
                                    "  {}: {}",
                                    String::from_utf8_lossy(&h.name),
                                    String::from_utf8_lossy(&h.value)
                                ));
                            }
                        }
                        Err(e) => notes.push(format!("  (HPACK: {e})")),
                    }
                }
            }
            _ => {}
        }
        notes
    }
}

fn setting_name(id: u16) -> String {
    match id {
        1 => "HEADER_TABLE_SIZE".into(),
        2 => "ENABLE_PUSH".into(),
        3 => "MAX_CONCURRENT_STREAMS".into(),
        4 => "INITIAL_WINDOW_SIZE".into(),
        5 => "MAX_FRAME_SIZE".into(),
        6 => "MAX_HEADER_LIST_SIZE".into(),
        other => format!("0x{other:x}"),
    }
}

/// `TYPE stream S [FLAGS] length L`.
fn describe(ty: u8, flags: u8, sid: u32, len: usize) -> String {
    let name = match ty {
        kind::DATA => "DATA".to_owned(),
        kind::HEADERS => "HEADERS".into(),
        kind::PRIORITY => "PRIORITY".into(),
        kind::RST_STREAM => "RST_STREAM".into(),
        kind::SETTINGS => "SETTINGS".into(),
        kind::PUSH_PROMISE => "PUSH_PROMISE".into(),
        kind::PING => "PING".into(),
        kind::GOAWAY => "GOAWAY".into(),
        kind::WINDOW_UPDATE => "WINDOW_UPDATE".into(),
        kind::CONTINUATION => "CONTINUATION".into(),
        other => format!("type 0x{other:02x}"),
    };
    let mut names = Vec::new();
    let named: &[(u8, &str)] = match ty {
        kind::DATA => &[(flag::END_STREAM, "END_STREAM"), (flag::PADDED, "PADDED")],
        kind::HEADERS => &[
            (flag::END_STREAM, "END_STREAM"),
            (flag::END_HEADERS, "END_HEADERS"),
            (flag::PADDED, "PADDED"),
            (flag::PRIORITY, "PRIORITY"),
        ],
        kind::SETTINGS | kind::PING => &[(flag::ACK, "ACK")],
        kind::CONTINUATION | kind::PUSH_PROMISE => &[(flag::END_HEADERS, "END_HEADERS")],
        _ => &[],
    };
    let mut rest = flags;
    for (bit, n) in named {
        if flags & bit != 0 {
            names.push((*n).to_owned());
            rest &= !bit;
        }
    }
    if rest != 0 {
        names.push(format!("0x{rest:02x}"));
    }
    let flags = if names.is_empty() {
        String::new()
    } else {
        format!(" {}", names.join("|"))
    };
    format!("{name} stream {sid}{flags} length {len}")
}

#[cfg(test)]
mod tests {
    use super::super::redact::push_header;
    use super::*;
    use mcp_sansio::internals::h2::hpack::Encoder;

    #[test]
    fn annotations_describe_frames_split_across_entries() {
        let mut wire = Vec::new();
        push_header(&mut wire, kind::SETTINGS, 0, 0, 6);
        wire.extend_from_slice(&[0, 3, 0, 0, 0, 4]);
        let mut status = Vec::new();
        Encoder::new().encode([(&b":status"[..], &b"200"[..])], &mut status);
        let flags = flag::END_HEADERS | flag::END_STREAM;
        push_header(&mut wire, kind::HEADERS, flags, 1, status.len());
        wire.extend_from_slice(&status);
        push_header(&mut wire, kind::RST_STREAM, 0, 1, 4);
        wire.extend_from_slice(&8u32.to_be_bytes());
        for size in [1, 3, 4, 7, wire.len()] {
            let mut a = Annotator::default();
            let mut notes = Vec::new();
            let mut bytes = Vec::new();
            for piece in wire.chunks(size) {
                for p in a.pieces(1, false, piece) {
                    match p {
                        Piece::Note(n) => notes.push(n),
                        Piece::Bytes(b) => bytes.extend_from_slice(b),
                    }
                }
            }
            assert_eq!(bytes, wire, "every byte is written once, in order");
            assert_eq!(
                notes,
                [
                    "SETTINGS stream 0 length 6",
                    "  settings: MAX_CONCURRENT_STREAMS=4",
                    "HEADERS stream 1 END_STREAM|END_HEADERS length 2",
                    "  :status: 200",
                    "RST_STREAM stream 1 length 4",
                    "  CANCEL (0x8)",
                ],
                "pieces of {size}"
            );
        }
    }
}
