//! The HTTP/1.1 codec at the edges of its limits and decisions, through its public API: each
//! test here kills a mutant of `src/http1/` that the codec's other tests let live
//! (docs/mutants.md, `scripts/mutants.sh http1`).

use mcp_sansio::http1::{encode, encode_into};
use mcp_sansio::wire::{Method, Request};

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
