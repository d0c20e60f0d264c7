//! Authorization exchanges over TLS on the async runtimes' sockets
//! ([`async_auth::send`] on tokio and on smol): the response is read through the runtime's TLS,
//! and every raw byte the socket reads, record framing included, counts against the exchange's
//! limit before rustls sees it.

use mcp_sansio::auth::AuthResponse;
use mcp_sansio::TransportError;
use mcp_sansio_net::auth::async_auth;
use mcp_sansio_net::runtime::smol::SmolThreads;
use mcp_sansio_test_support::tls;
use mcp_sansio_tokio::Tokio;

/// The exchange on tokio, then on smol (the blocking adapter's runtime), each on a server of its
/// own.
fn on_both(
    answer: &[u8],
    per_record: bool,
    max_response_bytes: usize,
) -> [Result<AuthResponse, TransportError>; 2] {
    let (port, tls) = tls::answer_once(answer.to_vec(), per_record);
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async_auth::send::<Tokio>(
            &tls::auth_http(tls),
            &tls::metadata_get(port, max_response_bytes),
        ));
    let (port, tls) = tls::answer_once(answer.to_vec(), per_record);
    let smol = mcp_sansio_net::runtime::smol::block_on(async_auth::send::<SmolThreads>(
        &tls::auth_http(tls),
        &tls::metadata_get(port, max_response_bytes),
    ));
    [tokio, smol]
}

/// A body without length over TLS ends where the server closes the socket (here without
/// close_notify): RFC 9112 §6.3, "the message body length is determined by the number of octets
/// received prior to the server closing the connection".
#[test]
fn a_tls_response_without_length_ends_at_the_close() {
    let answer = b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n{\"a\":1}";
    for (i, r) in on_both(answer, false, 100).into_iter().enumerate() {
        let response = r.unwrap_or_else(|e| panic!("runtime {i}: {e:?}"));
        assert_eq!(response.status, 200, "runtime {i}");
        assert_eq!(response.body, b"{\"a\":1}", "runtime {i}");
    }
}

/// A head of 12 KB sent one byte per TLS record reads about 23 raw bytes per byte of plaintext:
/// within the plaintext limit (the body limit, one byte and the 64 KB head allowance), past the
/// raw one (that, a sixteenth more and the 64 KB handshake allowance: about 135 KB). Every raw
/// byte counts below TLS, so the exchange is cut off at the raw limit; the same answer in few
/// records is read whole (the control).
#[test]
fn tls_framing_counts_against_the_exchange_limit() {
    let mut answer = format!("HTTP/1.1 200 OK\r\nx-pad: {}\r\n", "a".repeat(12_000)).into_bytes();
    answer.extend_from_slice(b"content-length: 2\r\n\r\n{}");
    for (i, r) in on_both(&answer, false, 1).into_iter().enumerate() {
        let response = r.unwrap_or_else(|e| panic!("runtime {i}: {e:?}"));
        assert_eq!(response.body, b"{}", "runtime {i}: the control");
    }
    for (i, r) in on_both(&answer, true, 1).into_iter().enumerate() {
        let e = r.map(|r| r.status).unwrap_err();
        assert!(e.message.contains("limit of"), "runtime {i}: {e:?}");
    }
}
