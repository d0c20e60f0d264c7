//! The stored value's frame at the edges of its limits (`scripts/mutants.sh redis-frame`): a
//! frame of exactly the bound is written and read back, one byte more is not; a frame cut in its
//! check digest is truncated, not "trailing bytes". The layout is the one `frame`'s docs give:
//! magic 6, version 1, expiry 8, key digest 8, length 4, payload, check 8.

use mcp_sansio_redis::frame::{decode, encode, FrameError, FRAME_OVERHEAD};

/// 6 + 1 + 8 + 8 + 4 + 8 bytes around the payload, by the documented layout.
const OVERHEAD: usize = 35;

#[test]
fn the_overhead_is_the_documented_layout() {
    assert_eq!(FRAME_OVERHEAD, OVERHEAD);
    let f = encode(b"k", b"", u64::MAX, 1 << 10).expect("an empty payload frames");
    assert_eq!(f.len(), OVERHEAD);
    assert_eq!(decode(b"k", &f, 0, 1 << 10), Ok(&b""[..]));
}

/// `encode` writes a frame of exactly `max` bytes; a payload one byte longer is refused.
#[test]
fn a_frame_of_exactly_the_bound_is_written_one_byte_more_is_not() {
    for max in [OVERHEAD, OVERHEAD + 1, 4096] {
        let fits = vec![b'x'; max - OVERHEAD];
        let f = encode(b"key", &fits, u64::MAX, max).expect("a frame of exactly the bound");
        assert_eq!(f.len(), max);
        let over = vec![b'x'; max - OVERHEAD + 1];
        assert_eq!(encode(b"key", &over, u64::MAX, max), None, "max {max}");
    }
    // A bound below the overhead frames nothing, not even an empty payload.
    assert_eq!(encode(b"key", b"", u64::MAX, OVERHEAD - 1), None);
}

/// `decode` reads a frame of exactly `max` bytes; under a bound one byte smaller the same frame
/// is oversize, with its length and the bound named.
#[test]
fn a_frame_of_exactly_the_bound_is_read_one_byte_over_is_oversize() {
    let payload = vec![7u8; 100];
    let f = encode(b"key", &payload, u64::MAX, 1 << 20).unwrap();
    let len = f.len();
    assert_eq!(len, OVERHEAD + 100);
    assert_eq!(decode(b"key", &f, 0, len), Ok(&payload[..]));
    assert_eq!(
        decode(b"key", &f, 0, len - 1),
        Err(FrameError::Oversize { len, max: len - 1 })
    );
}

/// A frame whose check digest is cut (1 to 8 of its bytes missing) is truncated; one with bytes
/// after its check digest has trailing bytes; whole, it reads.
#[test]
fn a_frame_cut_in_its_check_digest_is_truncated() {
    let f = encode(b"key", b"payload", u64::MAX, 1 << 10).unwrap();
    for missing in 1..=8 {
        assert_eq!(
            decode(b"key", &f[..f.len() - missing], 0, 1 << 10),
            Err(FrameError::Truncated),
            "{missing} bytes of the check missing"
        );
    }
    let mut longer = f.clone();
    longer.extend_from_slice(&[0; 8]);
    assert_eq!(
        decode(b"key", &longer, 0, 1 << 10),
        Err(FrameError::TrailingBytes)
    );
    assert_eq!(decode(b"key", &f, 0, 1 << 10), Ok(&b"payload"[..]));
}

/// The expiry is exclusive: fresh one millisecond before it, expired at it.
#[test]
fn a_frame_is_fresh_until_the_millisecond_of_its_expiry() {
    let f = encode(b"key", b"v", 5000, 1 << 10).unwrap();
    assert_eq!(decode(b"key", &f, 4999, 1 << 10), Ok(&b"v"[..]));
    assert_eq!(decode(b"key", &f, 5000, 1 << 10), Err(FrameError::Expired));
}
