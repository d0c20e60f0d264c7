//! The HTTP/1.1 codec at the edges of its limits and decisions, through its public API: each
//! test here kills a mutant of `src/http1/` that the codec's other tests let live
//! (docs/mutants.md, `scripts/mutants.sh http1`).

use std::cell::Cell;

use mcp_sansio::http1::{encode, encode_into, ResponseDecoder, ResponseEvent, ResponseLimits};
use mcp_sansio::wire::{Method, Request};
use mcp_sansio::{Budget, BudgetExceeded, ByteLedger, Http1Error};

// The bytes each thread holds, counted by the test crate's allocator (the system allocator with
// every change in the bytes held told to `count`): a test measures what the code it runs keeps.
thread_local! {
    static HELD: Cell<i64> = const { Cell::new(0) };
    static PEAK: Cell<i64> = const { Cell::new(0) };
}

fn count(delta: i64) {
    let _ = HELD.try_with(|h| {
        let now = h.get() + delta;
        h.set(now);
        let _ = PEAK.try_with(|p| p.set(p.get().max(now)));
    });
}

include!("../checks/support/src/hostile/forward_alloc.rs");

#[global_allocator]
static ALLOC: Counting = Counting;

/// What `f` left held on this thread when it returned (its allocations less its frees), and the
/// most it held at once while it ran, both counted from what was held before it.
fn held_by<T>(f: impl FnOnce() -> T) -> (T, i64, i64) {
    let start = HELD.with(Cell::get);
    PEAK.with(|p| p.set(start));
    let t = f();
    let end = HELD.with(Cell::get);
    let peak = PEAK.with(Cell::get);
    (t, end - start, peak - start)
}

/// A response head of exactly `len` bytes (`len` at least 60): a `Content-Length: 2` and one
/// field padded with spaces, which the head does not keep (a value's surrounding whitespace is
/// not part of it).
fn padded_head(len: usize) -> Vec<u8> {
    let mut head = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Pad: ".to_vec();
    let pad = len - head.len() - b"x\r\n\r\n".len();
    head.extend(std::iter::repeat_n(b' ', pad));
    head.extend_from_slice(b"x\r\n\r\n");
    assert_eq!(head.len(), len);
    head
}

/// A request whose every part is long enough that a wrong size estimate shows: a 300-byte body,
/// a 60-byte path, a 40-byte authority, three headers of some 50 bytes each.
fn sizable(method: Method, body: usize) -> Request {
    Request {
        method,
        path: format!("/mcp/{}", "p".repeat(55)),
        authority: format!("{}.example:8443", "h".repeat(27)),
        headers: (0..3)
            .map(|i| (format!("X-Header-{i}"), "v".repeat(40 + i)))
            .collect(),
        body: vec![b'b'; body],
    }
}

/// The encoder writes a request in one allocation of its own size: the buffer `encode` returns
/// (and the one `encode_into` grows from empty) holds the request and at most 16 bytes more, so
/// a request costs neither a second allocation (a buffer that had to grow doubles) nor an
/// oversized one.
#[test]
fn a_request_is_encoded_into_one_buffer_of_its_size() {
    let cases = [
        sizable(Method::Post, 300),
        sizable(Method::Post, 0),
        sizable(Method::Get, 0),
        sizable(Method::Delete, 1000),
        Request {
            method: Method::Post,
            path: "/".into(),
            authority: "h".into(),
            headers: vec![],
            body: vec![b'x'; 12345],
        },
    ];
    for r in &cases {
        let v = encode(r).unwrap();
        assert!(v.ends_with(&r.body));
        assert!(
            v.capacity() >= v.len() && v.capacity() - v.len() <= 16,
            "{:?} {} bytes in a buffer of {}",
            r.method,
            v.len(),
            v.capacity()
        );
        let mut out = Vec::new();
        encode_into(r, &mut out).unwrap();
        assert_eq!(out, v);
        assert!(out.capacity() - out.len() <= 16, "{}", out.capacity());
    }
}

/// A decoder keeps the buffer of a parsed block of up to 8 KiB for the next block (a chunk-size
/// line, trailers), and releases a larger one: between blocks it holds at most 8 KiB that it no
/// longer needs. A head of exactly 8 KiB (in one piece: a buffer of 8 KiB) is kept, one of a
/// byte more is not.
#[test]
fn a_parsed_block_of_8_kib_is_kept_one_byte_more_is_released() {
    for (len, kept) in [(8192, true), (8193, false), (1000, true), (20_000, false)] {
        let head = padded_head(len);
        let mut dec = ResponseDecoder::new(ResponseLimits::default());
        let mut ledger = ByteLedger::new(1 << 20);
        let (consumed, held, _) = held_by(|| {
            let d = dec.decode(&head, &mut ledger).unwrap();
            assert!(matches!(d.event, Some(ResponseEvent::Head(_))), "{len}");
            d.consumed
        });
        assert_eq!(consumed, len);
        // The head the decoder keeps is a few short strings: well under 1 KiB.
        if kept {
            assert!(
                held >= len as i64,
                "a head of {len} bytes: {held} bytes held"
            );
            assert!(
                held < len as i64 + 1024,
                "a head of {len} bytes: {held} bytes held"
            );
        } else {
            assert!(held < 1024, "a head of {len} bytes: {held} bytes held");
        }
        // The body and the end still come.
        let d = dec.decode(b"ok", &mut ledger).unwrap();
        assert_eq!(d.event, Some(ResponseEvent::Body(b"ok")));
    }
}

/// The buffer of a block that arrives in pieces grows geometrically but never past the limit
/// it serves: a 40 000-byte header-block limit, a block of 39 500 bytes in pieces of 1000, 30 000,
/// 8000 and 500 bytes, and never more than 40 000 bytes of buffer held (doubling the 31 000 of
/// the first two pieces would give 62 000).
#[test]
fn a_growing_block_buffer_never_passes_its_limit() {
    let limits = ResponseLimits {
        header_block_bytes: 40_000,
        ..ResponseLimits::default()
    };
    let mut input = b"HTTP/1.1 200 OK\r\nX-Pad: ".to_vec();
    input.resize(39_500, b' ');
    let mut dec = ResponseDecoder::new(limits);
    let mut ledger = ByteLedger::new(1 << 20);
    let (_, held, peak) = held_by(|| {
        let (a, rest) = input.split_at(1000);
        let (b, rest) = rest.split_at(30_000);
        let (c, d) = rest.split_at(8000);
        for piece in [a, b, c, d] {
            let d = dec.decode(piece, &mut ledger).unwrap();
            assert_eq!((d.consumed, d.event), (piece.len(), None));
        }
    });
    assert_eq!(dec.buffered_len(), 39_500);
    assert!(held >= 39_500, "{held}");
    assert!(peak <= 40_000, "peak {peak}");
    // The limit itself holds: 500 bytes more fit, the next one does not.
    let pad = vec![b' '; 500];
    assert_eq!(dec.decode(&pad, &mut ledger).unwrap().consumed, 500);
    assert_eq!(
        dec.decode(b" ", &mut ledger),
        Err(Http1Error::Budget(BudgetExceeded::new(
            Budget::HeaderBlock,
            40_000
        )))
    );
}

/// A configured header-count limit far above what a block could hold costs nothing: the
/// parser's field slots are bounded by the block (a field takes at least 3 bytes, `a:\n`), so a
/// 3000-byte head under a limit of a million fields holds some 32 bytes a slot for at most
/// 1001 slots, not a million, and not 3 per byte.
#[test]
fn a_huge_header_count_limit_allocates_by_the_block_not_by_the_limit() {
    let limits = ResponseLimits {
        header_count: 1_000_000,
        ..ResponseLimits::default()
    };
    let head = padded_head(3000);
    let mut dec = ResponseDecoder::new(limits);
    let mut ledger = ByteLedger::new(1 << 20);
    let (_, _, peak) = held_by(|| {
        let d = dec.decode(&head, &mut ledger).unwrap();
        assert!(matches!(d.event, Some(ResponseEvent::Head(_))));
    });
    // The block (3000), its slots (1001 × 32) and the head: under 20 bytes per block byte.
    assert!(peak < 20 * 3000, "peak {peak}");
}

/// A piece that fills the header block to exactly its limit, without its end, is taken (and
/// buffered); the next byte fails with the limit; a stream that ends there ended in the head.
#[test]
fn a_piece_filling_the_block_to_its_limit_is_taken_the_next_byte_is_not() {
    let limits = ResponseLimits {
        header_block_bytes: 64,
        ..ResponseLimits::default()
    };
    let mut input = b"HTTP/1.1 200 OK\r\nX: ".to_vec();
    input.resize(64, b'a');
    let mut dec = ResponseDecoder::new(limits);
    let mut ledger = ByteLedger::new(1 << 20);
    let d = dec.decode(&input, &mut ledger).unwrap();
    assert_eq!((d.consumed, d.event), (64, None));
    assert_eq!(dec.buffered_len(), 64);
    assert_eq!(ledger.used(), 64);
    let mut ended = dec.clone();
    assert_eq!(
        ended.finish(),
        Err(Http1Error::UnexpectedEof {
            stage: "response head"
        })
    );
    assert_eq!(
        dec.decode(b"\n", &mut ledger),
        Err(Http1Error::Budget(BudgetExceeded::new(
            Budget::HeaderBlock,
            64
        )))
    );
    assert_eq!(ledger.used(), 64);
    // The same for a chunk-size line and its own limit.
    let limits = ResponseLimits {
        chunk_line_bytes: 8,
        ..ResponseLimits::default()
    };
    let head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    let mut dec = ResponseDecoder::new(limits);
    let mut ledger = ByteLedger::new(1 << 20);
    let d = dec.decode(head, &mut ledger).unwrap();
    assert!(matches!(d.event, Some(ResponseEvent::Head(_))));
    let d = dec.decode(b"5;a=bcde", &mut ledger).unwrap();
    assert_eq!((d.consumed, d.event), (8, None));
    assert_eq!(dec.buffered_len(), 8);
    assert_eq!(
        dec.decode(b"\r", &mut ledger),
        Err(Http1Error::Budget(BudgetExceeded::new(
            Budget::ChunkLine,
            8
        )))
    );
}

/// `Request::check` refuses exactly what the encoder refuses, for the same reason: a request
/// that passes can be encoded.
#[test]
fn check_refuses_what_the_encoder_refuses() {
    let good = Request {
        method: Method::Post,
        path: "/mcp".into(),
        authority: "h:1".into(),
        headers: vec![("Accept".into(), "application/json".into())],
        body: b"{}".to_vec(),
    };
    assert_eq!(good.check(), Ok(()));
    let mut cases = Vec::new();
    for (name, value) in [
        ("X A", "v"),
        ("", "v"),
        ("Host", "h"),
        ("Content-Length", "2"),
        ("X", "a\r\nb"),
        ("X", "a\0b"),
    ] {
        let mut r = good.clone();
        r.headers.push((name.into(), value.into()));
        cases.push(r);
    }
    for path in ["", "mcp", "/a b"] {
        let mut r = good.clone();
        r.path = path.into();
        cases.push(r);
    }
    for authority in ["", "h x", "h\r\n"] {
        let mut r = good.clone();
        r.authority = authority.into();
        cases.push(r);
    }
    for r in &cases {
        let refused = encode(r).expect_err("the encoder refuses it");
        assert_eq!(r.check(), Err(refused), "{r:?}");
    }
}

/// Decodes `input` whole under the default limits and a ledger of `ledger_limit` bytes: the
/// head, the body bytes delivered, the error if any, and the bytes the ledger was charged.
fn decode_whole(
    input: &[u8],
    ledger_limit: u64,
) -> (
    Option<mcp_sansio::http1::ResponseHead>,
    Vec<u8>,
    Option<bool>,
    Option<Http1Error>,
    u64,
) {
    let mut dec = ResponseDecoder::new(ResponseLimits::default());
    let mut ledger = ByteLedger::new(ledger_limit);
    let (mut head, mut body, mut end, mut error) = (None, Vec::new(), None, None);
    let mut rest = input;
    loop {
        match dec.decode(rest, &mut ledger) {
            Ok(d) => {
                rest = &rest[d.consumed..];
                match d.event {
                    Some(ResponseEvent::Head(h)) => head = Some(h),
                    Some(ResponseEvent::Body(b)) => body.extend_from_slice(b),
                    Some(ResponseEvent::End { reusable }) => {
                        end = Some(reusable);
                        break;
                    }
                    None if d.consumed == 0 => break,
                    None => {}
                }
            }
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    (head, body, end, error, ledger.used())
}

/// RFC 9112 §7.1.1: `chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )`,
/// BWS being spaces and tabs: a tab in an extension is accepted, a control character is not.
#[test]
fn a_tab_in_a_chunk_extension_is_accepted_a_control_character_is_not() {
    let head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    let mut input = head.to_vec();
    input.extend_from_slice(b"5;\tname\t=\tv\r\nhello\r\n0\r\n\r\n");
    let (_, body, end, error, _) = decode_whole(&input, 1 << 20);
    assert_eq!(
        (body.as_slice(), end, error),
        (&b"hello"[..], Some(true), None)
    );
    let mut input = head.to_vec();
    input.extend_from_slice(b"5;name=\x0bv\r\nhello\r\n0\r\n\r\n");
    let (_, body, _, error, _) = decode_whole(&input, 1 << 20);
    assert!(body.is_empty());
    assert_eq!(
        error,
        Some(Http1Error::Malformed {
            what: "chunk extension"
        })
    );
}

/// A chunk of exactly what the ledger has left after its size line is read and delivered; the
/// CRLF after it is then one byte over. A chunk one byte larger fails at its size line, before
/// any of its bytes.
#[test]
fn a_chunk_of_exactly_the_bytes_left_is_delivered_one_byte_more_is_not() {
    let mut input = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n".to_vec();
    let limit = input.len() as u64 + 5;
    input.extend_from_slice(b"hello\r\n0\r\n\r\n");
    let (head, body, end, error, used) = decode_whole(&input, limit);
    assert!(head.is_some());
    assert_eq!(body, b"hello");
    assert_eq!(end, None);
    assert_eq!(
        error,
        Some(Http1Error::Budget(BudgetExceeded::new(
            Budget::ResponseBytes,
            limit
        )))
    );
    assert_eq!(used, limit);
    let (head, body, _, error, used) = decode_whole(&input, limit - 1);
    assert!(head.is_some());
    assert!(body.is_empty());
    assert_eq!(
        error,
        Some(Http1Error::Budget(BudgetExceeded::new(
            Budget::ResponseBytes,
            limit - 1
        )))
    );
    assert_eq!(used, limit - 5);
}

/// The head's accessors: the first value of a field whatever the case of its name, as bytes or
/// as trimmed UTF-8 (none when it is not UTF-8), and the media type of `Content-Type`.
#[test]
fn the_head_answers_for_its_fields() {
    let input = b"HTTP/1.1 200 OK\r\nX-Twice: first \r\nx-twice: second\r\n\
        X-Bin: \xff\xfe\r\nContent-Type: Text/Event-Stream; charset=utf-8\r\n\
        Content-Length: 0\r\n\r\n";
    let (head, _, end, error, _) = decode_whole(input, 1 << 20);
    assert_eq!((end, error), (Some(true), None));
    let head = head.unwrap();
    assert_eq!(head.header("x-TWICE"), Some(&b"first"[..]));
    assert_eq!(head.header_str("X-Twice"), Some("first"));
    assert_eq!(head.header("X-Bin"), Some(&b"\xff\xfe"[..]));
    assert_eq!(head.header_str("X-Bin"), None);
    assert_eq!(head.header("X-None"), None);
    assert_eq!(head.header_str("X-None"), None);
    assert_eq!(head.content_type().as_deref(), Some("text/event-stream"));
}
