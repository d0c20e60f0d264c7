//! Authorization exchanges over TLS on [`AuthHttp::send`]'s socket ([`StdNet`]): the response
//! is read through TLS, and every raw byte the socket reads, record framing included, counts
//! against the exchange's limit before rustls sees it.
//!
//! [`StdNet`]: mcp_sansio_net::runtime::StdNet

use mcp_sansio_test_support::tls;

/// A body without length over TLS ends where the server closes the socket (here without
/// close_notify): RFC 9112 §6.3, "the message body length is determined by the number of octets
/// received prior to the server closing the connection".
#[test]
fn a_tls_response_without_length_ends_at_the_close() {
    let answer = b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n{\"a\":1}";
    let (port, tls) = tls::answer_once(answer.to_vec(), false);
    let response = tls::auth_http(tls)
        .send(&tls::metadata_get(port, 100))
        .unwrap();
    assert_eq!(response.status, 200);
    assert_eq!(response.body, b"{\"a\":1}");
}

/// A head of 12 KB sent one byte per TLS record reads about 23 raw bytes per byte of plaintext:
/// within the plaintext limit (the body limit, one byte and the 64 KB head allowance), past the
/// raw one (that, a sixteenth more and the 64 KB handshake allowance: about 135 KB). Every raw
/// byte counts, so the exchange is cut off at the raw limit; the same answer in few records is
/// read whole (the control).
#[test]
fn tls_framing_counts_against_the_exchange_limit() {
    let mut answer = format!("HTTP/1.1 200 OK\r\nx-pad: {}\r\n", "a".repeat(12_000)).into_bytes();
    answer.extend_from_slice(b"content-length: 2\r\n\r\n{}");
    let (port, tls) = tls::answer_once(answer.clone(), false);
    let response = tls::auth_http(tls)
        .send(&tls::metadata_get(port, 1))
        .unwrap();
    assert_eq!(
        response.body, b"{}",
        "the control: the answer is within the limits"
    );
    let (port, tls) = tls::answer_once(answer, true);
    let e = tls::auth_http(tls)
        .send(&tls::metadata_get(port, 1))
        .map(|r| r.status)
        .unwrap_err();
    assert!(e.message.contains("limit of"), "{e:?}");
}
