//! The frame of every value [`RedisStore`](crate::store::RedisStore) writes, read back strictly.
//!
//! Layout (all integers big-endian):
//!
//! | bytes | field |
//! |---|---|
//! | 6 | magic `mcpsr\0` |
//! | 1 | format version ([`FRAME_VERSION`]) |
//! | 8 | expiry, milliseconds since the Unix epoch (wall clock) |
//! | 8 | the first 8 bytes of SHA-256 of the key the value was written under |
//! | 4 | payload length |
//! | n | payload (the bytes the cache, the hints or a task handle gave) |
//! | 8 | the first 8 bytes of SHA-256 of everything before |
//!
//! A frame binds its payload to its key: a value copied (or written by mistake) under another
//! key, in particular under another authorization context's key, does not read back there. The
//! check digest is no authentication (whoever writes Redis can compute it): Redis is trusted
//! for integrity; the digest catches truncation and corruption, and the payload's own reader
//! (`Catalog::from_pages`, the era hint's reader, `TaskHandle::from_bytes`) still checks it.

use sha2::{Digest as _, Sha256};

/// The format version this crate writes and reads; a frame of another version is a miss.
pub const FRAME_VERSION: u8 = 1;

const MAGIC: &[u8; 6] = b"mcpsr\0";
const CHECK: usize = 8;

/// The bytes a frame adds to its payload.
pub const FRAME_OVERHEAD: usize = MAGIC.len() + 1 + 8 + 8 + 4 + CHECK;

/// Why a stored value was refused (each a miss; the entry is removed).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// More bytes than the store's bound.
    #[error("a stored value of {len} bytes, more than {max}")]
    Oversize {
        /// The bytes found.
        len: usize,
        /// The bound.
        max: usize,
    },
    /// The bytes do not start as a frame does.
    #[error("not a stored value of this crate")]
    NotAFrame,
    /// A frame of another format version.
    #[error("a stored value of format version {found}; this crate reads {FRAME_VERSION}")]
    ForeignVersion {
        /// The version found.
        found: u8,
    },
    /// The bytes end before the frame does.
    #[error("the stored value is truncated")]
    Truncated,
    /// Bytes after the frame's end.
    #[error("bytes after the end of the stored value")]
    TrailingBytes,
    /// The check digest does not match.
    #[error("the stored value is corrupt (its check digest does not match)")]
    Corrupt,
    /// The frame was written under another key.
    #[error("the stored value belongs to another key")]
    OtherKey,
    /// The frame's expiry has passed.
    #[error("the stored value has expired")]
    Expired,
}

fn key_digest(key: &[u8]) -> [u8; 8] {
    let d = Sha256::digest(key);
    let mut out = [0u8; 8];
    out.copy_from_slice(&d[..8]);
    out
}

/// The frame of `payload` under `key`, fresh until `expires_unix_ms`; `None` if the frame would
/// be longer than `max` bytes.
pub fn encode(key: &[u8], payload: &[u8], expires_unix_ms: u64, max: usize) -> Option<Vec<u8>> {
    let len = u32::try_from(payload.len()).ok()?;
    if payload.len().checked_add(FRAME_OVERHEAD)? > max {
        return None;
    }
    let mut out = Vec::with_capacity(payload.len() + FRAME_OVERHEAD);
    out.extend_from_slice(MAGIC);
    out.push(FRAME_VERSION);
    out.extend_from_slice(&expires_unix_ms.to_be_bytes());
    out.extend_from_slice(&key_digest(key));
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(payload);
    let check = Sha256::digest(&out);
    out.extend_from_slice(&check[..CHECK]);
    Some(out)
}

/// The payload of `frame` read under `key` at `now_unix_ms`, if the frame is at most `max`
/// bytes, of this version, whole, uncorrupted, written under `key` and not expired. Never
/// panics, whatever the bytes.
pub fn decode<'a>(
    key: &[u8],
    frame: &'a [u8],
    now_unix_ms: u64,
    max: usize,
) -> Result<&'a [u8], FrameError> {
    if frame.len() > max {
        return Err(FrameError::Oversize {
            len: frame.len(),
            max,
        });
    }
    let head = frame.len().min(MAGIC.len());
    if frame[..head] != MAGIC[..head] {
        return Err(FrameError::NotAFrame);
    }
    let rest = frame.get(MAGIC.len()..).ok_or(FrameError::Truncated)?;
    let (&version, rest) = rest.split_first().ok_or(FrameError::Truncated)?;
    if version != FRAME_VERSION {
        return Err(FrameError::ForeignVersion { found: version });
    }
    let (expires, rest) = rest.split_first_chunk::<8>().ok_or(FrameError::Truncated)?;
    let (digest, rest) = rest.split_first_chunk::<8>().ok_or(FrameError::Truncated)?;
    let (len, rest) = rest.split_first_chunk::<4>().ok_or(FrameError::Truncated)?;
    let len = usize::try_from(u32::from_be_bytes(*len)).map_err(|_| FrameError::Truncated)?;
    let payload = rest.get(..len).ok_or(FrameError::Truncated)?;
    let rest = rest.get(len..).ok_or(FrameError::Truncated)?;
    let check = match rest.len() {
        n if n < CHECK => return Err(FrameError::Truncated),
        CHECK => rest,
        _ => return Err(FrameError::TrailingBytes),
    };
    let body = &frame[..frame.len() - CHECK];
    if Sha256::digest(body)[..CHECK] != *check {
        return Err(FrameError::Corrupt);
    }
    if *digest != key_digest(key) {
        return Err(FrameError::OtherKey);
    }
    if u64::from_be_bytes(*expires) <= now_unix_ms {
        return Err(FrameError::Expired);
    }
    Ok(payload)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame reads back under its key before its expiry; every other reading is refused with
    /// the cause named.
    #[test]
    fn a_frame_reads_back_only_whole_fresh_and_under_its_key() {
        let f = encode(b"k", b"payload", 1000, 1 << 10).unwrap();
        assert_eq!(f.len(), FRAME_OVERHEAD + 7);
        assert_eq!(decode(b"k", &f, 999, 1 << 10), Ok(&b"payload"[..]));
        assert_eq!(decode(b"k", &f, 1000, 1 << 10), Err(FrameError::Expired));
        assert_eq!(decode(b"j", &f, 0, 1 << 10), Err(FrameError::OtherKey));
        assert_eq!(
            decode(b"k", &f, 0, 10),
            Err(FrameError::Oversize {
                len: f.len(),
                max: 10
            })
        );
        for cut in 0..f.len() {
            assert!(decode(b"k", &f[..cut], 0, 1 << 10).is_err(), "cut at {cut}");
        }
        let mut longer = f.clone();
        longer.push(0);
        assert_eq!(
            decode(b"k", &longer, 0, 1 << 10),
            Err(FrameError::TrailingBytes)
        );
        let mut flipped = f.clone();
        flipped[FRAME_OVERHEAD - CHECK + 2] ^= 1;
        assert_eq!(decode(b"k", &flipped, 0, 1 << 10), Err(FrameError::Corrupt));
        let mut foreign = f.clone();
        foreign[6] = 2;
        assert_eq!(
            decode(b"k", &foreign, 0, 1 << 10),
            Err(FrameError::ForeignVersion { found: 2 })
        );
        assert_eq!(encode(b"k", &[0; 100], 1000, 100), None);
    }
}
